/*
 * submit.c -- accepting tasks: the general form's one core (crew_submit_with, crew_enqueue_with)
 * and the shorthands that are hot paths, each one call of it: crew_submit, crew_lane_submit,
 * crew_enqueue_task(s) (the other shorthands and the options' checks are options.c's; the
 * bounded queue's admission is bounded.c's, the task nodes crew_submit uses are nodes.c's).
 *
 * Submission is all-or-nothing: a call that fails (closed pool, bad handle, cancelled group, no
 * memory for the queue or the slot map) leaves no task queued and no group opened or changed;
 * see enqueue for how. A bounded queue (crew_config.queue_capacity) admits tasks first, by its
 * full-queue policy.
 */
#include <stdlib.h>

#include "array.h"
#include "atomic.h"
#include "blocking.h"
#include "debug.h"
#include "lane.h"
#include "nodes.h"
#include "options.h"
#include "pending.h"
#include "pool.h"
#include "sched_calls.h"
#include "stats.h"
#include "submit.h"
#include "timer.h"
#include "wake.h"
#include "worker.h"

/* The calling thread's slot cache for p (group.c): its worker's, or its producer cache. */
static inline crew__slot_cache *own_slots(crew_pool *p) {
    return crew__slots_to_open(p, crew__self(p));
}

typedef crew__admit_how admit_how; /* bounded.h */

static const admit_how admit_default = {false, false, {0, 0}};
static const admit_how admit_try = {true, false, {0, 0}}; /* never wait for room */

/* How the options o wait for room in a full bounded queue (timed: storage for a time limit). */
static inline const admit_how *admit_of(const crew_submit_options *o, admit_how *timed) {
    if (o->flags & CREW_SUBMIT_NO_WAIT)
        return &admit_try;
    if (!o->room_by_ns)
        return &admit_default;
    *timed = (admit_how){false, true, crew__timespec_of(o->room_by_ns)};
    return timed;
}

/* *group has finished (crew__group_add said CREW_ESTALE): a submission into it opens a new
 * group in its place, stored in *group once the tasks are queued (crew.h), so a loop of single
 * submissions into one handle variable never loses a task, however fast the earlier ones end.
 * Every task of the finished group happens-before this (crew__group_reopen's acquire), so a
 * crew_wait on the new handle covers every task submitted through the variable, and the new
 * group carries on the finished one's loss until a wait has reported it (then it starts
 * clean). A cancelled group whose cancel no wait has reported takes nothing more
 * (CREW_ECANCELED). A handle of a generation never issued is refused (CREW_EINVAL) rather than
 * taken as finished. OUT: *h. */
static __attribute__((cold, noinline)) int reopen(crew_pool *p, crew_handle *h, uint32_t n) {
    if (!crew__gen_issued(crew__slot_at(&p->groups, crew__slot_index(h->slot)), h->gen))
        return CREW_EINVAL;
    return crew__group_reopen(&p->groups, h, n, own_slots(p));
}

/* A submission through *group opened a new group in place of the finished group old (reopen),
 * and the new handle is about to be stored: if old kept a loss, the new group carries it
 * (crew__group_reopen), so old counts as reported (crew__group_report, which does nothing for
 * a group without an unreported loss). Its slot then joins the kept losses instead of staying
 * linked, and a handle variable that lost a task once does not keep every later group. */
static __attribute__((cold, noinline)) void handed_over(crew_pool *p, crew_handle old) {
    (void)crew__group_report(&p->groups, crew__handle_local(old), CREW_ECANCELED);
}

/* Store the handle of the group a submission opened (open_new), h, in *group; if *group named
 * a finished group (reopen), that one is handed over first. */
static inline void hand_out(crew_pool *p, bool open_new, crew_handle *group, crew_handle h) {
    if (!open_new)
        return;
    if (__builtin_expect(group->slot != 0, 0))
        handed_over(p, *group); /* reopened: the new group answers for the old one */
    *group = h;
}

/* Open a new group (*open_new: *group is CREW_HANDLE_NONE) or join *group (already checked
 * with crew__handle_valid) with n tasks; a finished *group is replaced by a new one (reopen),
 * which sets *open_new. OUT: *h, the group as handed out ({0, 0}: none). CREW_OK, or the error
 * (CREW_ENOMEM, CREW_EINVAL, CREW_ECANCELED, CREW_ERANGE) with nothing changed. */
static inline int join(crew_pool *p, crew_handle *group, bool *open_new, uint32_t n,
                       crew_handle *h) {
    if (*open_new)
        return crew__group_open(&p->groups, n, h, own_slots(p));
    *h = group ? *group : (crew_handle){0, 0};
    if (!group)
        return CREW_OK;
    int rc = crew__group_add(&p->groups, *h, n);
    if (__builtin_expect(rc == CREW_ESTALE, 0) && (rc = reopen(p, h, n)) == CREW_OK)
        *open_new = true;
    return rc;
}

/* Undo join, and the count in pending, for n tasks that were not queued after all. */
static void unjoin(crew_pool *p, bool open_new, crew_handle h, size_t n) {
    if (open_new) /* then its tasks end in pending only */
        crew__group_abandon(&p->groups, crew__slot_index(h.slot), own_slots(p));
    crew__tasks_finished(p, open_new ? 0 : crew__slot_index(h.slot), n, CREW__RAN);
}

/* The group whose waiters a submission into h may have to wake: none for a group this call
 * opened, since nobody has its handle yet (a waiter of the slot's previous group was woken when
 * that group finished, and wants nothing of these tasks). */
static inline uint32_t notify_slot(bool open_new, crew_handle h) {
    return open_new ? 0 : crew__slot_index(h.slot);
}

/* The first checks of a submission of n tasks into *group (enqueue, enqueue_short): CREW_OK,
 * with *open_new set (a new group), or the refusal (how: for its count), reported. */
static inline int first_checks(crew_pool *p, size_t n, crew_handle *group, bool *open_new,
                               const admit_how *how, const char *who) {
    *open_new = group && group->slot == 0 && group->gen == 0;
    if (n > CREW__OPEN_MAX) /* the open count of a group (group.h) */
        return crew__submit_fail(who, p, CREW_ERANGE, n, CREW_HANDLE_NONE, how);
    if (group && !*open_new && !crew__handle_valid(&p->groups, *group))
        return crew__submit_fail(who, p, CREW_EINVAL, n, *group, how);
    /* Seq_cst: an early answer for a closed pool; the check that counts is below. */
    int state = crew__load_seq_cst(&p->state);
    if (state != CREW__OPEN)
        return crew__submit_fail(who, p, state == CREW__FORKED ? CREW_EFORKED : CREW_ESHUTDOWN, n,
                                 CREW_HANDLE_NONE, how);
    return CREW_OK;
}

/* Queue n tasks (their fn already checked) into *group. All or nothing: room in a bounded
 * queue is taken first, then the group is opened or joined (those can fail without side
 * effects, or are given back), the tasks are counted in pending, and the pool's state is
 * checked after that count (crew_shutdown sets the state, then waits for pending to reach 0:
 * one of the two sees the other); then the tasks are pushed, and if that fails (memory) the
 * count, the group and the room are taken back before anyone could have seen the tasks.
 * lane: a lane's task (crew_lane_submit, n is 1): it joins the lane instead of a queue, and
 * takes no place in the bounded queue (it waits in its lane; its runner is what the pool
 * queues). when: a delayed task's due time (timer.h; n is 1, submitted 0: it is stamped when
 * it is due), 0 for none: it waits in the timer heap instead of a queue, and takes no place in
 * the bounded queue either. */
static int enqueue(crew_pool *p, crew_task *t, size_t n, crew_handle *group, uint32_t flags,
                   uint64_t submitted, unsigned user_flags, const admit_how *how, const char *who,
                   crew_lane *lane, uint64_t when) {
    crew__assert(!lane || n == 1); /* crew__lane_push below takes one task */
    crew__assert(!when || (n == 1 && !submitted && !lane));
    bool open_new;
    int rc = first_checks(p, n, group, &open_new, how, who);
    if (rc != CREW_OK)
        return rc;
    bool blocking = user_flags & CREW_TASK_BLOCKING, caller_runs = false, bounded = false;
    bool start_runner = false;
    if (p->bounded.capacity && !blocking && !lane && !when) {
        if ((rc = crew__bounded_admit(p, n, how, &caller_runs)) != CREW_OK)
            return crew__submit_fail(who, p, rc, n, CREW_HANDLE_NONE, how);
        bounded = !caller_runs;
    }
    crew_handle h;
    if ((rc = join(p, group, &open_new, (uint32_t)n, &h)) != CREW_OK) {
        for (size_t i = 0; bounded && i < n; i++)
            crew__bounded_release(p);
        return crew__submit_join_fail(who, p, rc, n, h, how);
    }
    for (size_t i = 0; i < n; i++) {
        t[i].crew_flags_ =
            flags | (bounded ? CREW__TASK_BOUNDED : 0u) | (blocking ? CREW__TASK_BLOCKING : 0u);
        t[i].crew_private_.slot = crew__slot_index(h.slot);
    }
    uint64_t accepted = submitted ? crew__stats_stamp(p, t, n, submitted) : 0;
    /* Read now: once pushed, a task may run and its memory be freed or reused (crew.h). */
    bool counted = submitted && (t[0].crew_flags_ & CREW__TASK_COUNTED);
    /* Count them (a worker uses its credit; any thread's count is in pending before the state
     * is read: a worker's credit was added to pending earlier), then the seq_cst load of the
     * state: see above. */
    crew__pending_add(p, crew__self(p), n);
    if (crew__load_seq_cst(&p->state) != CREW__OPEN)
        rc = CREW_ESHUTDOWN;
    else if (caller_runs)
        rc = CREW_OK;
    else if (__builtin_expect(lane != NULL, 0))
        start_runner = crew__lane_push(lane, t); /* cannot fail */
    else if (__builtin_expect(when != 0, 0))
        rc = crew__timers_add(p, t, when); /* crew__fire queues it when it is due */
    else
        rc = blocking ? crew__blocking_push(p, t, n) : crew__sched_push(p, t, n);
    if (rc != CREW_OK) {
        unjoin(p, open_new, h, n);
        for (size_t i = 0; bounded && i < n; i++)
            crew__bounded_release(p);
        return crew__submit_fail(who, p, rc, n, h, how);
    }
    hand_out(p, open_new, group, h);
    if (counted)
        crew__stats_submitted(p, n, submitted, accepted);
    if (caller_runs) { /* back-pressure: the producer does the work it adds */
        for (size_t i = 0; i < n; i++)
            crew__run(p, &t[i]);
        return CREW_OK;
    }
    if (when)
        return CREW_OK;
    if (lane) { /* its runner, if it needs a new one, is what the pool queues */
        if (start_runner)
            crew__lane_start(lane);
        return CREW_OK;
    }
    if (!blocking)
        crew__wake_work(p, n, notify_slot(open_new, h));
    return CREW_OK;
}

/* enqueue for an array (fn checked; prio: the priorities or-ed), not timed, bounded or blocking,
 * apart so that enqueue's other paths keep their registers. A long one (array.h) goes as the m
 * runners of a record (array.c): pending counts the tasks and the runners, the group the tasks.
 * Else the strategy queues the tasks by value where it can (crew__sched_push_values), with no
 * write to t, else by address as enqueue does. One pending add, push and wake-up check each. */
static __attribute__((noinline)) int enqueue_short(crew_pool *p, crew_task *t, size_t n,
                                                   crew_handle *group, uint32_t prio,
                                                   const char *who) {
    bool open_new;
    int rc = first_checks(p, n, group, &open_new, &admit_default, who);
    if (rc != CREW_OK)
        return rc;
    size_t m = prio == 0 && n >= CREW__ARRAY_MIN ? crew__array_runners(p, n) : 0;
    crew__array *arr = m ? crew__array_new(p, t, n, m) : NULL; /* NULL: no memory, by value */
    m = arr ? m : 0;
    crew_handle h;
    if ((rc = join(p, group, &open_new, (uint32_t)n, &h)) != CREW_OK) {
        if (arr)
            crew__array_free(arr);
        return crew__submit_join_fail(who, p, rc, n, h, &admit_default);
    }
    uint32_t slot = crew__slot_index(h.slot);
    if (arr)
        crew__array_set_group(arr, crew__handle_local(h)); /* {0, 0}: no group */
    crew__worker *self = crew__self(p);
    crew__pending_add(p, self, n + m); /* then the state, as in enqueue */
    if (crew__load_seq_cst(&p->state) != CREW__OPEN)
        rc = CREW_ESHUTDOWN;
    else if (arr || (rc = crew__sched_push_values(p, self, t, n, slot, prio)) ==
                        CREW__SCHED_DECLINED) {
        for (size_t i = 0; i < n; i++) { /* by address: the array's, or the tasks */
            t[i].crew_flags_ = 0;
            t[i].crew_private_.slot = slot;
        }
        rc = arr ? crew__sched_push(p, crew__array_tasks(arr), m) : crew__sched_push(p, t, n);
    }
    if (rc != CREW_OK) {
        unjoin(p, open_new, h, n);
        if (arr) {
            crew__tasks_finished(p, 0, m, CREW__RAN); /* the runners' units of pending */
            crew__array_free(arr);
        }
        return crew__submit_fail(who, p, rc, n, h, &admit_default);
    }
    hand_out(p, open_new, group, h);
    crew__wake_work(p, arr ? m : n, notify_slot(open_new, h)); /* a thread for each queued */
    return CREW_OK;
}

/* The submission's start time if tasks are timed (monitoring or autosize), else 0. */
static inline uint64_t stamp(crew_pool *p) {
#ifdef CREW_NO_MONITORING
    (void)p; /* built without monitoring: nothing is ever timed, and nothing is tested */
    return 0;
#else
    /* Relaxed: see struct crew_pool. */
    return crew__load_relaxed(&p->timing) ? crew__now_ns() : 0;
#endif
}

/* Count a refused submission (monitoring only). */
static int rejected(crew_pool *p, int rc, size_t n) {
    /* Relaxed: see struct crew_pool. */
    if (rc != CREW_OK && rc != CREW_EFORKED && /* a forked child counts nothing */
        (crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR))
        crew__stats_rejected(p, n);
    return rc;
}

/* The general form's core for an array: n caller-owned tasks as o says (valid but for the flags
 * outside allowed, refused with who's own message); who: the public call. Inlined into each
 * caller, so that the defaults of crew_enqueue_tasks fold away. */
static inline __attribute__((always_inline)) int enqueue_tasks_with(crew_pool *p, crew_task *t,
                                                                    size_t n,
                                                                    const crew_submit_options *o,
                                                                    crew_handle *group,
                                                                    const char *who,
                                                                    unsigned allowed) {
    if (!p)
        return crew__fail(CREW_EINVAL, "%s: the pool is NULL", who);
    if (!t)
        return rejected(p, crew__fail(CREW_EINVAL, "%s: the task array is NULL", who), n);
    if (n == 0)
        return rejected(p, crew__fail(CREW_EINVAL, "%s: n is 0; give at least one task", who), n);
    unsigned flags = o->flags;
    if (flags & ~allowed)
        return rejected(p,
                        crew__fail(CREW_EINVAL,
                                   "%s: flags is %#x; the only flag is CREW_TASK_BLOCKING (%#x)",
                                   who, flags, CREW_TASK_BLOCKING),
                        n);
    uint32_t prio = 0; /* all of priority 0: a long array may go as runners (enqueue_array) */
    for (size_t i = 0; i < n; i++) {
        if (!t[i].fn)
            return rejected(p, crew__fail(CREW_EINVAL, "%s: task %zu's fn is NULL", who, i), n);
        prio |= t[i].priority;
    }
    uint64_t submitted = stamp(p);
    /* The short ways (a long array's runners, or the tasks by value) are not for timed tasks
     * (autosize reads each task's times as it starts), nor bounded ones (each takes a place and
     * a flag of its own; a full queue would drop a long array's runner, the whole array), nor
     * blocking ones (their own queue). */
    if (!submitted && !p->bounded.capacity && !(flags & CREW_TASK_BLOCKING))
        return rejected(p, enqueue_short(p, t, n, group, prio, who), n);
    admit_how timed;
    return rejected(p, enqueue(p, t, n, group, 0, submitted, flags, admit_of(o, &timed), who,
                               NULL, 0),
                    n);
}

int crew_enqueue_with(crew_pool *p, crew_task *t, size_t n, const crew_submit_options *opts,
                      crew_handle *group) {
    static const crew_submit_options defaults = CREW_SUBMIT_OPTIONS_INIT;
    int rc;
    if (!opts)
        opts = &defaults;
    else if (p && (rc = crew__options_check(p, opts, true, "crew_enqueue_with")) != CREW_OK)
        return rejected(p, rc, n);
    return enqueue_tasks_with(p, t, n, opts, group, "crew_enqueue_with", CREW__SUBMIT_FLAGS);
}

int crew_enqueue_tasks_ex(crew_pool *p, crew_task *t, size_t n, crew_handle *group,
                          unsigned flags) {
    crew_submit_options o = {.size = sizeof o, .flags = flags};
    return enqueue_tasks_with(p, t, n, &o, group, "crew_enqueue_tasks_ex", CREW_TASK_BLOCKING);
}

int crew__enqueue_helpers(crew_pool *p, crew_task *t, size_t n, crew_handle *group) {
    /* Not the caller's: not counted, and no detail (crew_parallel_* absorbs a failure). */
    return enqueue(p, t, n, group, 0, stamp(p), 0, &admit_try, NULL, NULL, 0);
}

int crew_enqueue_tasks(crew_pool *p, crew_task *t, size_t n, crew_handle *group) {
    crew_submit_options o = {.size = sizeof o};
    return enqueue_tasks_with(p, t, n, &o, group, "crew_enqueue_tasks", 0);
}

int crew_enqueue_task(crew_pool *p, crew_task *t, crew_handle *group) {
    crew_submit_options o = {.size = sizeof o};
    return enqueue_tasks_with(p, t, 1, &o, group, "crew_enqueue_task", 0);
}

/* One task in a node of the pool's own; flags: the caller's, of which those outside allowed are
 * refused (the shorthands with a flags argument take CREW_TASK_BLOCKING only); start_by: its
 * start-by time, 0 for none; lane: the lane it joins (NULL: none), lane_flags:
 * CREW__TASK_BARRIER for a lane's barrier, else 0; when: a delayed task's due time, 0 for none.
 * Inlined into each caller, so that those without a deadline or a delay pay nothing for them. */
static inline __attribute__((always_inline)) int submit(crew_pool *p, crew_fn fn, void *arg,
                                                        uint32_t priority, unsigned flags,
                                                        unsigned allowed, crew_handle *group,
                                                        const admit_how *how, uint64_t start_by,
                                                        const char *who, crew_lane *lane,
                                                        uint32_t lane_flags, uint64_t when) {
    if (!p)
        return crew__fail(CREW_EINVAL, "%s: the pool is NULL", who);
    if (!fn)
        return rejected(p, crew__fail(CREW_EINVAL, "%s: fn is NULL; a task needs a function",
                                      who),
                        1);
    if (flags & ~allowed)
        return rejected(p,
                        crew__fail(CREW_EINVAL,
                                   "%s: flags is %#x; the only flag is CREW_TASK_BLOCKING (%#x)",
                                   who, flags, CREW_TASK_BLOCKING),
                        1);
    /* Equal times are refused too: the task reaches a thread only after its due time, so a
     * start-by time no later than that would always expire it. */
    if (when && start_by && start_by <= when)
        return rejected(p, crew__fail(CREW_EINVAL,
                                      "%s: the start-by time %llu is not after the due time %llu: "
                                      "the task could never start in time",
                                      who, (unsigned long long)start_by,
                                      (unsigned long long)when),
                        1);
    if (crew__forked(p)) /* before the node cache, whose lock may be held */
        return crew__fail(CREW_EFORKED, "%s: " CREW__FORKED_DETAIL, who);
    uint64_t submitted = when ? 0 : stamp(p); /* a delayed task is stamped when it is due */
    crew_task *t = crew__node_get(p);
    if (!t)
        return rejected(p, crew__fail(CREW_ENOMEM, "%s: out of memory for the task", who), 1);
    t->fn = fn;
    t->arg = arg;
    t->priority = priority;
    uint32_t own = CREW__TASK_NODE | lane_flags;
    if (start_by != 0) {
        ((crew__node *)t)->start_by = start_by;
        own |= CREW__TASK_DEADLINE;
    }
    int rc = enqueue(p, t, 1, group, own, submitted, flags, how, who, lane, when);
    if (rc != CREW_OK)
        crew__node_release(p, t);
    return rejected(p, rc, 1);
}

/* The general form's core for one task: o (valid but for the flags outside allowed and a
 * start-by time not after the due time: submit refuses both) as submit's arguments. Every
 * single-task submission is one call of it; inlined, so that a shorthand's constant options
 * fold away. */
static inline __attribute__((always_inline)) int submit_opts(crew_pool *p, crew_fn fn, void *arg,
                                                             const crew_submit_options *o,
                                                             crew_handle *group, const char *who,
                                                             unsigned allowed) {
    admit_how timed;
    return submit(p, fn, arg, o->priority, o->flags, allowed, group, admit_of(o, &timed),
                  o->start_by_ns, who,
                  o->lane, (o->flags & CREW_SUBMIT_BARRIER) ? CREW__TASK_BARRIER : 0u,
                  o->when_ns);
}

int crew__submit_with(crew_pool *p, crew_fn fn, void *arg, const crew_submit_options *o,
                      crew_handle *group, const char *who, unsigned allowed) {
    return submit_opts(p, fn, arg, o, group, who, allowed);
}

/* The fast path after the checks: count the task, check the state, queue it (by value where
 * the strategy can: crew__sched_push_value) and wake a thread, as enqueue does; undo
 * everything if it cannot be queued. h: the group it joined ({0, 0}: none), open_new: opened
 * for it. Inlined into both cases, so that the one without a group folds the group's steps
 * away. */
static inline __attribute__((always_inline)) int submit_one(crew_pool *p, crew_fn fn, void *arg,
                                                            uint32_t priority, bool open_new,
                                                            crew_handle h, const char *who) {
    crew__worker *self = crew__self(p);
    crew__pending_add(p, self, 1); /* then the seq_cst load of the state: see enqueue */
    int rc = crew__load_seq_cst(&p->state) == CREW__OPEN
                 ? crew__sched_push_value(p, self, fn, arg, priority, crew__slot_index(h.slot))
                 : CREW_ESHUTDOWN;
    if (__builtin_expect(rc != CREW_OK, 0)) {
        unjoin(p, open_new, h, 1);
        return crew__submit_fail(who, p, rc, 1, h, &admit_default);
    }
    crew__wake_work(p, 1, notify_slot(open_new, h));
    return CREW_OK;
}

/* The fast path into a group, once the checks have passed (in rest, out of line). */
static inline __attribute__((always_inline)) int grouped(crew_pool *p, crew_fn fn, void *arg,
                                                         uint32_t priority, crew_handle *group,
                                                         const char *who) {
    bool open_new = group->slot == 0 && group->gen == 0;
    if (!open_new && __builtin_expect(!crew__handle_valid(&p->groups, *group), 0))
        return crew__submit_fail(who, p, CREW_EINVAL, 1, *group, &admit_default);
    crew_handle h;
    int rc = join(p, group, &open_new, 1, &h);
    if (__builtin_expect(rc != CREW_OK, 0))
        return crew__submit_join_fail(who, p, rc, 1, h, &admit_default);
    if ((rc = submit_one(p, fn, arg, priority, open_new, h, who)) == CREW_OK)
        hand_out(p, open_new, group, h); /* only once the task is queued (all or nothing) */
    return rc;
}

/* The commonest submission on its own (submit_fast): priority 0, no group, from a thread outside
 * the pool, under STEAL (crew__sched.ext). submit_one's steps, the push into the thread's
 * external slot made without waiting (crew__ext_try_push_value) and the wake-up check's first
 * look (no group: sleepers on pool->work) inline, the rest out of line as tail calls, so that
 * the path calls nothing and saves no register. outside_slow: the task is counted in pending,
 * and the state was not open after the count or the push could not be made without waiting
 * (a thread's first submission, its slot's lock held, its array full): submit_one's steps from
 * the load of the state on. outside_wake: the look saw sleepers; crew__wake_work looks again. */
static __attribute__((noinline)) int outside_slow(crew_pool *p, crew_fn fn, void *arg,
                                                  const char *who) {
    int rc = crew__load_seq_cst(&p->state) == CREW__OPEN /* seq_cst: see enqueue */
                 ? crew__sched_push_value(p, NULL, fn, arg, 0, 0)
                 : CREW_ESHUTDOWN;
    if (rc != CREW_OK) {
        unjoin(p, false, (crew_handle){0, 0}, 1);
        return crew__submit_fail(who, p, rc, 1, CREW_HANDLE_NONE, &admit_default);
    }
    crew__wake_work(p, 1, 0);
    return CREW_OK;
}
static __attribute__((noinline)) int outside_wake(crew_pool *p) {
    crew__wake_work(p, 1, 0);
    return CREW_OK;
}
static inline __attribute__((always_inline)) int outside(crew_pool *p, struct crew__ext_slot *ext,
                                                         crew_fn fn, void *arg, const char *who) {
    crew__pending_add(p, NULL, 1); /* then the seq_cst load of the state: see enqueue */
    if (__builtin_expect(crew__load_seq_cst(&p->state) != CREW__OPEN, 0) ||
        __builtin_expect(!crew__ext_try_push_value(ext, fn, arg, crew__deque_aux(0, 0)), 0))
        return outside_slow(p, fn, arg, who);
    if (__builtin_expect(crew__ec_sleepers(&p->work), 0))
        return outside_wake(p);
    return CREW_OK;
}

/* The fast path into a group or none, once the checks have passed, but for outside's case. */
static __attribute__((noinline)) int rest(crew_pool *p, crew_fn fn, void *arg, uint32_t priority,
                                          crew_handle *group, const char *who) {
    return group ? grouped(p, fn, arg, priority, group, who)
                 : submit_one(p, fn, arg, priority, false, (crew_handle){0, 0}, who);
}

typedef int fast_fn(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, crew_handle *group);

/* The fast path of a plain task (priority and group only), shared by crew_submit and
 * crew_submit_with: the common cases on their own (nothing timed, no bounded queue: outside, or
 * out of line into a group or none, rest), the same steps as enqueue (see there) minus the ones
 * that do not apply; anything else goes the long way, slow (submit_opts, out of line: its
 * registers are not the fast path's). A closed pool goes the long way too (enqueue's early answer): refused submissions must not
 * touch pending, or submitters hammering a closing pool could keep it above 0 every time its
 * last worker looks, and the shutdown would wait for them (seen under valgrind). Seq_cst load
 * of the state, as in enqueue; the check that counts comes after the count. */
static inline __attribute__((always_inline)) int submit_fast(crew_pool *p, crew_fn fn, void *arg,
                                                             uint32_t priority,
                                                             crew_handle *group, fast_fn *slow,
                                                             const char *who) {
    if (__builtin_expect(!p || !fn || p->bounded.capacity, 0) ||
        crew__load_relaxed(&p->timing) != 0 || /* relaxed: see struct crew_pool */
        __builtin_expect(crew__load_seq_cst(&p->state) != CREW__OPEN, 0))
        return slow(p, fn, arg, priority, group);
    struct crew__ext_slot *ext = p->sched.ext;
    if (__builtin_expect(ext != NULL, 1) && !group && priority == 0 && !crew__self(p))
        return outside(p, ext, fn, arg, who);
    return rest(p, fn, arg, priority, group, who);
}

static __attribute__((noinline)) int submit_slow(crew_pool *p, crew_fn fn, void *arg,
                                                 uint32_t priority, crew_handle *group) {
    crew_submit_options o = {.size = sizeof o, .priority = priority};
    return submit_opts(p, fn, arg, &o, group, "crew_submit", 0);
}

/* crew_submit: the general form with a priority (submit_fast is the core it shares with
 * crew_submit_with when the options are plain; submit_slow is submit_opts). */
int crew_submit(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, crew_handle *group) {
    return submit_fast(p, fn, arg, priority, group, submit_slow, "crew_submit");
}

static __attribute__((noinline)) int with_slow(crew_pool *p, crew_fn fn, void *arg,
                                               uint32_t priority, crew_handle *group) {
    crew_submit_options o = {.size = sizeof o, .priority = priority};
    return submit_opts(p, fn, arg, &o, group, "crew_submit_with", 0);
}

int crew_submit_with(crew_pool *p, crew_fn fn, void *arg, const crew_submit_options *opts,
                     crew_handle *group) {
    if (!opts)
        return submit_fast(p, fn, arg, 0, group, with_slow, "crew_submit_with");
    int rc;
    if (p && (rc = crew__options_check(p, opts, false, "crew_submit_with")) != CREW_OK)
        return rejected(p, rc, 1);
    /* Plain options (a priority at most): the fast path, as crew_submit's. */
    if (!(opts->flags | opts->when_ns | opts->start_by_ns | opts->room_by_ns) && !opts->lane)
        return submit_fast(p, fn, arg, opts->priority, group, with_slow, "crew_submit_with");
    return submit_opts(p, fn, arg, opts, group, "crew_submit_with", CREW__SUBMIT_FLAGS);
}

int crew__lane_submit(crew_lane *l, crew_fn fn, void *arg, crew_handle *group, bool barrier,
                      const char *who) {
    if (!l)
        return crew__fail(CREW_EINVAL, "%s: the lane is NULL", who);
    crew_submit_options o = {
        .size = sizeof o, .flags = barrier ? CREW_SUBMIT_BARRIER : 0u, .lane = l};
    return submit_opts(crew__lane_pool(l), fn, arg, &o, group, who, CREW_SUBMIT_BARRIER);
}

int crew_lane_submit(crew_lane *l, crew_fn fn, void *arg, crew_handle *group) {
    /* crew__lane_submit inlined by hand: one call less on a lane's every task. */
    if (!l)
        return crew__fail(CREW_EINVAL, "crew_lane_submit: the lane is NULL");
    crew_submit_options o = {.size = sizeof o, .lane = l};
    return submit_opts(crew__lane_pool(l), fn, arg, &o, group, "crew_lane_submit", 0);
}

int crew__submit_as(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, crew_handle *group,
                    const char *who) {
    crew_submit_options o = {.size = sizeof o, .priority = priority};
    return submit_opts(p, fn, arg, &o, group, who, 0);
}

int crew__fire(crew_pool *p, crew_task *t, bool count) {
    uint64_t submitted = stamp(p); /* timed from now: its delay was not time in a queue */
    if (submitted) {
        uint64_t accepted = crew__stats_stamp(p, t, 1, submitted);
        if (t->crew_flags_ & CREW__TASK_COUNTED)
            crew__stats_submitted(p, 1, submitted, accepted);
    }
    if (count) /* a timer's run: counted from now until it ends. The timer thread is no worker */
        crew__pending_add(p, NULL, 1);
    /* Read now: once pushed, the task may run and its node be reused. */
    bool blocking = t->crew_flags_ & CREW__TASK_BLOCKING;
    uint32_t slot = t->crew_private_.slot;
    int rc = blocking ? crew__blocking_push(p, t, 1) : crew__sched_push(p, t, 1);
    if (rc == CREW_OK && !blocking)
        crew__wake_work(p, 1, slot);
    return rc;
}
