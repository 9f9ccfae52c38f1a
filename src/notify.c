/*
 * notify.c -- completion callbacks (crew_notify): fn(arg) queued as a task of no group once a
 * group finishes, however it finishes (its tasks ran, were cancelled, or expired).
 *
 * A callback is a crew_submit node (nodes.c), counted in pending from its registration, so
 * crew_wait_all and a shutdown wait for it like for any accepted task. While its group is open
 * it waits on the group's slot (crew__slot.notify, a stack); the thread whose decrement ends the
 * group takes the whole stack in crew__group_done, before the slot can pass to a later group,
 * and queues the callbacks here, at the highest priority. A registration for a group that has
 * already finished queues its callback at once. Either way the callback runs on a thread that
 * takes tasks, never inside crew_notify, and a crew_wait it makes on the group answers at once:
 * the group's end is published before the callback is queued.
 *
 * Registration against the finish, without a lock on the finisher's side (Dekker's pattern, as
 * the eventcount in ec.h): the registrant pushes its node and then reads the group's state; the
 * finisher decrements the state and then reads the stack; all four accesses are seq_cst, so at
 * least one of the two sees the other. A registrant that sees the group still open leaves its
 * node to the finisher; one that sees it finished takes the stack itself, with an exchange as
 * the finisher does, so each node goes to exactly one of them. Registrations take the slot
 * map's notify_lock, one at a time: a registrant has seen the group open under the lock, so
 * every node on the stack then belongs to that same generation, and the stack it may take
 * holds no callback of a later group that reused the slot. The finisher never takes the lock.
 *
 * Callbacks are never dropped: crew_cancel concerns groups (a callback belongs to none), a
 * cancelling shutdown sets them aside and queues them again once it has emptied the queues
 * (schedule.c), a thread that takes one once that shutdown began runs it (crew__hold_back,
 * where it drops any other task), and a full queue that drops its oldest task runs a callback
 * it meets instead (bounded.c). They are not timed nor counted in crew_stats (no submission
 * stamps them).
 */
#include "atomic.h"
#include "notify.h"
#include "pending.h"
#include "pool.h"
#include "sched_calls.h"
#include "wake.h"
#include "worker.h"

void crew__notify_queue(void *pool, crew_task *list) {
    crew_pool *p = pool;
    /* The stack holds the newest registration first: queue the oldest first. */
    crew_task *fifo = NULL;
    while (list) {
        crew_task *next = list->crew_private_.gnext;
        list->crew_private_.gnext = fifo;
        fifo = list;
        list = next;
    }
    while (fifo) {
        crew_task *t = fifo;
        fifo = t->crew_private_.gnext;
        if (crew__sched_push(p, t, 1) == CREW_OK)
            crew__wake_work(p, 1, 0);
        else
            crew__run(p, t); /* no memory to queue it: run it here rather than lose it */
    }
}

/* Is the group of state st, generation gen, still open? */
static inline bool still_open(uint64_t st, uint32_t gen) {
    return crew__gen_of(st) == gen && crew__open_of(st) != 0;
}

int crew_notify(crew_pool *p, crew_handle group, crew_fn fn, void *arg) {
    if (!p || !crew__handle_valid(&p->groups, group))
        return crew__fail_handle(CREW_EINVAL, "crew_notify", p, group);
    if (!crew__gen_issued(crew__slot_at(&p->groups, crew__slot_index(group.slot)), group.gen))
        return crew__fail_handle(CREW_EINVAL, "crew_notify", p, group); /* a forged generation */
    if (!fn)
        return crew__fail(CREW_EINVAL, "crew_notify: fn is NULL; a callback needs a function");
    if (crew__forked(p)) /* before the node cache, whose lock may be held */
        return crew__fail(CREW_EFORKED, "crew_notify: " CREW__FORKED_DETAIL);
    /* Seq_cst: an early answer for a closed pool; the check that counts is below. */
    if (crew__load_seq_cst(&p->state) != CREW__OPEN)
        return crew__fail(CREW_ESHUTDOWN, "crew_notify: the pool is shutting down or shut down; "
                                          "it takes no more callbacks");
    crew_task *t = crew__node_of(p, fn, arg, 0, 0); /* priority 0: a completion is news */
    if (!t)
        return crew__fail(CREW_ENOMEM, "crew_notify: out of memory for the callback");
    t->crew_flags_ |= CREW__TASK_NOTIFY;
    t->crew_private_.gnext = NULL;
    /* Counted in pending, then the state read, as a submission does (submit.c's enqueue): a
     * shutdown that has begun refuses the callback; one that begins later waits for it. */
    crew__pending_add(p, crew__self(p), 1);
    if (crew__load_seq_cst(&p->state) != CREW__OPEN) { /* seq_cst: see struct crew_pool */
        crew__tasks_finished(p, 0, 1, CREW__RAN);
        crew__node_release(p, t);
        return crew__fail(CREW_ESHUTDOWN, "crew_notify: the pool is shutting down or shut down; "
                                          "it takes no more callbacks");
    }
    crew_handle h = crew__handle_local(group);
    crew__slot *sl = crew__slot_at(&p->groups, h.slot);
    crew_task *ready = t; /* to queue now: the group has finished */
    pthread_mutex_lock(&p->groups.notify_lock);
    /* Seq_cst loads of the state (the registrant's half of the protocol above); also acquire:
     * a finished answer happens-after the group's tasks, so the callback does too. */
    if (still_open(crew__load_seq_cst(&sl->state), h.gen)) {
        crew__debug_yield(); /* tests: let the group end between the look and the push */
        crew_task *head = crew__load_relaxed(&sl->notify); /* relaxed: the CAS re-checks it */
        do
            t->crew_private_.gnext = head;
        while (!crew__cas_weak_seq_cst(&sl->notify, &head, t)); /* seq_cst: see above; also
                                                                 * releases the node */
        ready = NULL;
        if (!still_open(crew__load_seq_cst(&sl->state), h.gen))
            /* Finished meanwhile, and the finisher may have read the stack before our push:
             * take what is left (ours, perhaps others'). Seq_cst: see above; also acquires the
             * nodes pushed by other registrants. */
            ready = crew__exchange_seq_cst(&sl->notify, NULL);
    }
    pthread_mutex_unlock(&p->groups.notify_lock);
    if (ready)
        crew__notify_queue(p, ready);
    return CREW_OK;
}
