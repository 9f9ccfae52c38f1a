/*
 * options.h -- the general form of a submission inside crew: the checks of a caller's
 * crew_submit_options (options.c) and the core every single-task submission is one call of
 * (submit.c).
 */
#ifndef CREW_OPTIONS_H
#define CREW_OPTIONS_H

#include <stdbool.h>

#include "base.h"
#include "bounded.h"

/* The flags crew_submit_options.flags may hold. */
#define CREW__SUBMIT_FLAGS (CREW_TASK_BLOCKING | CREW_SUBMIT_NO_WAIT | CREW_SUBMIT_BARRIER)

/* Check a caller's options o (not NULL) for who (crew_submit_with, or crew_enqueue_with with
 * array set): CREW_OK, or CREW_EINVAL with a detail that names the member at fault. p may be
 * NULL (the submission then fails on it); a lane is checked against a pool that is not. */
int crew__options_check(crew_pool *p, const crew_submit_options *o, bool array,
                        const char *who);

/* One task submitted as o says (valid but for the flags outside allowed, which are refused with
 * who's own message, and a start-by time not after the due time); who: the public call, named
 * in the detail of a failure. The shorthands of options.c are each one call of it. */
int crew__submit_with(crew_pool *p, crew_fn fn, void *arg, const crew_submit_options *o,
                      crew_handle *group, const char *who, unsigned allowed);

/* The detail of a submission's failure rc (enqueue's, in submit.c) for the public call who
 * (NULL: an internal submission, whose failure the caller absorbs: no detail); n: the tasks,
 * h: the group joined, if any; how: the submission's wait for room. Returns rc. */
__attribute__((cold, noinline)) int crew__submit_fail(const char *who, crew_pool *p, int rc,
                                                      size_t n, crew_handle h,
                                                      const crew__admit_how *how);
/* crew__submit_fail when joining or opening the group failed (nothing changed): if a shutdown
 * began since the caller's early look at the state, the pool's answer (ESHUTDOWN) comes first.
 * Seq_cst: as that early look. */
__attribute__((cold, noinline)) int crew__submit_join_fail(const char *who, crew_pool *p, int rc,
                                                           size_t n, crew_handle h,
                                                           const crew__admit_how *how);

#endif /* CREW_OPTIONS_H */
