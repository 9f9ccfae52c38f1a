/*
 * options.c -- the general form's options (crew_submit_options, crew.h): their checks, the
 * detail of a submission's failure, and the shorthands that are no hot path, each one call of
 * the general form (crew__submit_with).
 *
 * crew_submit_with and crew_enqueue_with (submit.c) check a caller's options here first
 * (crew__options_check), then submit through submit.c's one core. The shorthands build their
 * options themselves, valid by construction but for what their own arguments may get wrong
 * (flags, a start-by time before the due time), which the core checks under the shorthand's
 * name. crew_submit, crew_lane_submit and crew_enqueue_task(s) stay in submit.c, where the
 * core is inlined into them (the hot paths).
 */
#include "clock.h"
#include "group.h"
#include "lane.h"
#include "options.h"
#include "pool.h"

/* A size larger than this is taken as garbage rather than as a later crew's options. */
#define SIZE_MAX_PLAUSIBLE 4096u

int crew__options_check(crew_pool *p, const crew_submit_options *o, bool array,
                        const char *who) {
    if (o->size != sizeof *o) {
        if (o->size < sizeof *o || o->size > SIZE_MAX_PLAUSIBLE)
            return crew__fail(CREW_EINVAL,
                              "%s: opts->size is %zu, not sizeof(crew_submit_options) (%zu); "
                              "start from CREW_SUBMIT_OPTIONS_INIT",
                              who, o->size, sizeof *o);
        /* A later crew.h's options: its members this crew does not know must be 0. */
        const unsigned char *rest = (const unsigned char *)o + sizeof *o;
        for (size_t i = 0; i < o->size - sizeof *o; i++)
            if (rest[i])
                return crew__fail(CREW_EINVAL,
                                  "%s: opts->size is %zu and opts sets a member past the %zu "
                                  "bytes this crew's crew_submit_options knows (built "
                                  "against a later crew.h?)",
                                  who, o->size, sizeof *o);
    }
    if (o->flags & ~CREW__SUBMIT_FLAGS)
        return crew__fail(CREW_EINVAL,
                          "%s: opts->flags is %#x; the flags are CREW_TASK_BLOCKING (%#x), "
                          "CREW_SUBMIT_NO_WAIT (%#x) and CREW_SUBMIT_BARRIER (%#x)",
                          who, o->flags, CREW_TASK_BLOCKING, CREW_SUBMIT_NO_WAIT,
                          CREW_SUBMIT_BARRIER);
    if ((o->flags & CREW_SUBMIT_NO_WAIT) && o->room_by_ns)
        return crew__fail(CREW_EINVAL,
                          "%s: opts->room_by_ns is %llu with CREW_SUBMIT_NO_WAIT: a call that "
                          "never waits for room has no time to wait until; give one or the "
                          "other",
                          who, (unsigned long long)o->room_by_ns);
    if (array) {
        const char *single = o->priority      ? "opts->priority"
                             : o->when_ns     ? "opts->when_ns"
                             : o->start_by_ns ? "opts->start_by_ns"
                             : o->lane        ? "opts->lane"
                             : (o->flags & CREW_SUBMIT_BARRIER) ? "CREW_SUBMIT_BARRIER"
                                                                : NULL;
        if (single)
            return crew__fail(CREW_EINVAL,
                              "%s: %s is set, but it applies to a single task only (an array's "
                              "tasks carry their own priority in crew_task.priority); submit "
                              "such tasks one by one with crew_submit_with",
                              who, single);
        return CREW_OK;
    }
    if (!o->lane) {
        if (o->flags & CREW_SUBMIT_BARRIER)
            return crew__fail(CREW_EINVAL,
                              "%s: CREW_SUBMIT_BARRIER without opts->lane: a barrier is a "
                              "lane's (crew_lane_barrier)",
                              who);
        return CREW_OK;
    }
    if (p && crew__lane_pool(o->lane) != p)
        return crew__fail(CREW_EINVAL,
                          "%s: opts->lane belongs to another pool (%p), not to p (%p)", who,
                          (void *)crew__lane_pool(o->lane), (void *)p);
    const char *not_lane = o->priority      ? "opts->priority"
                           : o->when_ns     ? "opts->when_ns"
                           : o->start_by_ns ? "opts->start_by_ns"
                           : (o->flags & CREW_TASK_BLOCKING) ? "CREW_TASK_BLOCKING"
                                                             : NULL;
    if (not_lane)
        return crew__fail(CREW_EINVAL,
                          "%s: %s is set with opts->lane; a lane's task has none (the lane "
                          "starts its tasks in their order, on the workers, when it has room)",
                          who, not_lane);
    return CREW_OK;
}

int crew__submit_fail(const char *who, crew_pool *p, int rc, size_t n, crew_handle h,
                      const crew__admit_how *how) {
    if (!who)
        return rc;
    switch (rc) {
    case CREW_EINVAL:
        return crew__fail_handle(rc, who, p, h);
    case CREW_EFORKED:
        return crew__fail(rc, "%s: " CREW__FORKED_DETAIL, who);
    case CREW_ESHUTDOWN:
        return crew__fail(rc, "%s: the pool is shutting down or shut down; it accepts no more "
                              "tasks", who);
    case CREW_ERANGE:
        if (n > CREW__OPEN_MAX)
            return crew__fail(rc, "%s: n is %zu; one call adds at most %u tasks", who, n,
                              CREW__OPEN_MAX);
        return crew__fail(rc, "%s: the group {%u, %u} would hold more than %u unfinished tasks",
                          who, h.slot, h.gen, CREW__OPEN_MAX);
    case CREW_ECANCELED:
        return crew__fail(rc, "%s: the group {%u, %u} was cancelled; it takes no more tasks",
                          who, h.slot, h.gen);
    case CREW_EFULL:
        if (n > p->bounded.capacity)
            return crew__fail(rc,
                              "%s: %zu tasks are more than the queue can ever hold "
                              "(crew_config.queue_capacity %zu)",
                              who, n, p->bounded.capacity);
        return crew__fail(rc, "%s: the queue is full (crew_config.queue_capacity %zu) and %s",
                          who, p->bounded.capacity,
                          how->try_only ? "this call never waits for room"
                                        : "the full-queue policy is CREW_FULL_FAIL");
    case CREW_ETIMEDOUT:
        return crew__fail(rc,
                          "%s: the queue (crew_config.queue_capacity %zu) had no room for %zu "
                          "tasks before the time limit",
                          who, p->bounded.capacity, n);
    case CREW_ENOMEM:
        return crew__fail(rc, "%s: out of memory for the task, the queue or the group's slot",
                          who);
    case CREW_EAGAIN:
        return crew__fail(rc, "%s: the system refused to create a thread for blocking tasks",
                          who);
    default:
        return crew__fail(rc, "%s: %s", who, crew_strerror(rc));
    }
}

int crew_submit_ex(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, unsigned flags,
                   crew_handle *group) {
    crew_submit_options o = {.size = sizeof o, .priority = priority, .flags = flags};
    return crew__submit_with(p, fn, arg, &o, group, "crew_submit_ex", CREW_TASK_BLOCKING);
}

int crew_try_submit(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, crew_handle *group) {
    crew_submit_options o = {
        .size = sizeof o, .priority = priority, .flags = CREW_SUBMIT_NO_WAIT};
    return crew__submit_with(p, fn, arg, &o, group, "crew_try_submit", CREW_SUBMIT_NO_WAIT);
}

int crew_submit_timed(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, crew_handle *group,
                      unsigned timeout_ms) {
    crew_submit_options o = {.size = sizeof o,
                             .priority = priority,
                             .room_by_ns = crew__now_ns() + (uint64_t)timeout_ms * 1000000u};
    return crew__submit_with(p, fn, arg, &o, group, "crew_submit_timed", 0);
}

int crew_submit_deadline(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, unsigned flags,
                         uint64_t start_by_ns, crew_handle *group) {
    crew_submit_options o = {
        .size = sizeof o, .priority = priority, .flags = flags, .start_by_ns = start_by_ns};
    return crew__submit_with(p, fn, arg, &o, group, "crew_submit_deadline", CREW_TASK_BLOCKING);
}

int crew_submit_after(crew_pool *p, uint64_t delay_ns, crew_fn fn, void *arg, uint32_t priority,
                      crew_handle *group) {
    uint64_t now = crew__now_ns();
    crew_submit_options o = {
        .size = sizeof o,
        .priority = priority,
        .when_ns = delay_ns > UINT64_MAX - now ? UINT64_MAX : now + delay_ns};
    return crew__submit_with(p, fn, arg, &o, group, "crew_submit_after", 0);
}

/* A due time of 0 is a time long past (due at once), not "none" as in the options. */
int crew_submit_at(crew_pool *p, uint64_t when_ns, crew_fn fn, void *arg, uint32_t priority,
                   crew_handle *group) {
    crew_submit_options o = {
        .size = sizeof o, .priority = priority, .when_ns = when_ns ? when_ns : 1};
    return crew__submit_with(p, fn, arg, &o, group, "crew_submit_at", 0);
}

int crew_submit_at_ex(crew_pool *p, uint64_t when_ns, crew_fn fn, void *arg, uint32_t priority,
                      unsigned flags, uint64_t start_by_ns, crew_handle *group) {
    crew_submit_options o = {.size = sizeof o,
                             .priority = priority,
                             .flags = flags,
                             .when_ns = when_ns ? when_ns : 1,
                             .start_by_ns = start_by_ns};
    return crew__submit_with(p, fn, arg, &o, group, "crew_submit_at_ex", CREW_TASK_BLOCKING);
}

int crew__submit_join_fail(const char *who, crew_pool *p, int rc, size_t n, crew_handle h,
                           const crew__admit_how *how) {
    if (rc == CREW_ECANCELED && crew__load_seq_cst(&p->state) == CREW__CLOSING)
        rc = CREW_ESHUTDOWN;
    return crew__submit_fail(who, p, rc, n, h, how);
}
