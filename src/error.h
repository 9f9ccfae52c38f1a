/*
 * error.h -- the per-thread detail of a failed call (error.c), behind crew_last_error;
 * crew_strerror and crew_err_name are public (crew.h).
 */
#ifndef CREW_ERROR_H
#define CREW_ERROR_H

#include <stddef.h>

#include "crew.h"

/* The detail of a failed call: formats "<public function>: <what was wrong>" into the
 * calling thread's crew_last_error() buffer (truncated at 255 characters) and returns rc, so a
 * failure reads `return crew__fail(CREW_EINVAL, "crew_resize: threads is %u; ...", n);`. Cold
 * and out of line: only failures pay for it. */
__attribute__((cold, noinline, format(printf, 2, 3))) int crew__fail(int rc, const char *fmt,
                                                                      ...);
/* The same detail under the name of the public call that made the failed inner one (keeps the
 * text after the inner call's "name: "); returns rc. */
__attribute__((cold, noinline)) int crew__fail_as(int rc, const char *who);
/* The detail of a bad pool or group handle given to who: a NULL pool, CREW_HANDLE_NONE, or a
 * handle the pool never issued; returns rc. */
__attribute__((cold, noinline)) int crew__fail_handle(int rc, const char *who, const void *pool,
                                                      crew_handle h);
/* Keep and put back the detail across an inner call whose failure the outer call absorbs (it
 * succeeds, so the detail must not change). copy: CREW__ERROR_SAVE bytes. */
#define CREW__ERROR_SAVE 256
void crew__error_save(char *copy, size_t size);
void crew__error_restore(const char *copy);
/* The text of CREW_EFORKED's detail, after "<function>: ". */
#define CREW__FORKED_DETAIL                                                                     \
    "the pool was created before fork() and belongs to the parent process; create a new pool "  \
    "in this child"

#endif /* CREW_ERROR_H */
