/*
 * error.c -- crew_strerror and crew_err_name, generated from CREW_ERRNO_MAP in crew.h, and the
 * per-thread detail of the last failed call (crew_last_error, crew__fail).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "error.h"

/* Every code, CREW_OK first, with its name and text: one row per code, for both lookups. */
typedef struct code_row {
    int err;
    const char *name; /* crew_err_name's: the code's name without CREW_ */
    const char *text; /* crew_strerror's */
} code_row;

static const code_row codes[] = {
    {CREW_OK, "OK", "success"},
#define CREW_CODE_ROW_(name, value, text) {CREW_##name, #name, text},
    CREW_ERRNO_MAP(CREW_CODE_ROW_)
#undef CREW_CODE_ROW_
};

/* The row of err, or NULL if err is no crew code. */
static const code_row *row_of(int err) {
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].err == err)
            return &codes[i];
    return NULL;
}

const char *crew_strerror(int err) {
    const code_row *r = row_of(err);
    return r ? r->text : "unknown error";
}

const char *crew_err_name(int err) {
    const code_row *r = row_of(err);
    return r ? r->name : "UNKNOWN";
}

/*
 * crew_last_error: the calling thread's detail of its last failed crew call. Written only on a
 * failure (crew__fail, out of line and cold), so no success path pays for it.
 */
#define CREW__ERROR_MAX 256

static CREW__TLS char tls_error[CREW__ERROR_MAX];

const char *crew_last_error(void) { return tls_error; }

int crew__fail(int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tls_error, sizeof tls_error, fmt, ap); /* truncates, always terminated */
    va_end(ap);
    if (n < 0)
        snprintf(tls_error, sizeof tls_error, "%s", crew_strerror(rc));
    return rc;
}

int crew__fail_as(int rc, const char *who) {
    /* The detail after the inner call's "name: " prefix, copied first: it is formatted into
     * the buffer it lives in. */
    char rest[CREW__ERROR_MAX];
    const char *colon = strstr(tls_error, ": ");
    snprintf(rest, sizeof rest, "%s", colon ? colon + 2 : tls_error);
    return crew__fail(rc, "%s: %s", who, rest);
}

void crew__error_save(char *copy, size_t size) { snprintf(copy, size, "%s", tls_error); }

void crew__error_restore(const char *copy) { snprintf(tls_error, sizeof tls_error, "%s", copy); }

int crew__fail_handle(int rc, const char *who, const void *pool, crew_handle h) {
    if (!pool)
        return crew__fail(rc, "%s: the pool is NULL", who);
    if (h.slot == 0 && h.gen == 0)
        return crew__fail(rc, "%s: the handle is CREW_HANDLE_NONE, which names no group; pass the "
                              "handle a submission filled in",
                          who);
    return crew__fail(rc,
                      "%s: the handle {%u, %u} is not one this pool issued (uninitialised, "
                      "forged, or from another pool)",
                      who, h.slot, h.gen);
}
