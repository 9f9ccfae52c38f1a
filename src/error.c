/*
 * error.c -- crew_strerror and crew_err_name, generated from CREW_ERRNO_MAP in crew.h.
 */
#include "crew.h"

const char *crew_strerror(int err) {
    switch (err) {
    case CREW_OK:
        return "success";
#define CREW_STRERROR_CASE_(name, value, text)                                                   \
    case CREW_##name:                                                                            \
        return text;
        CREW_ERRNO_MAP(CREW_STRERROR_CASE_)
#undef CREW_STRERROR_CASE_
    default:
        return "unknown error";
    }
}

const char *crew_err_name(int err) {
    switch (err) {
    case CREW_OK:
        return "OK";
#define CREW_ERR_NAME_CASE_(name, value, text)                                                   \
    case CREW_##name:                                                                            \
        return #name;
        CREW_ERRNO_MAP(CREW_ERR_NAME_CASE_)
#undef CREW_ERR_NAME_CASE_
    default:
        return "UNKNOWN";
    }
}
