/*
 * wait.c -- waiting with the caller's help (seed 000 §III-C, §III-D).
 *
 * A waiting thread runs queued tasks itself: first the awaited group's own tasks, newest first
 * (the tasks it just spawned, so nested spawn-and-wait recurses like a depth-first call tree),
 * then any queued task, highest priority and oldest first, but only while fewer than
 * CREW__HELP_DEPTH_MAX task frames are on its stack: a waiter that took arbitrary work without a
 * bound would nest unrelated tasks inside each other until the stack overflowed.
 *
 * Why a waiter that sleeps cannot deadlock, for spawn-and-wait programs (a task waits only for
 * groups it created): it sleeps only when its group has no queued task, so every unfinished task
 * of the group has started on some thread. Such a task is either on top of its thread's stack
 * (running, or waiting and itself helping), or below a task that its thread took while waiting,
 * which started later. Following "waits for" from top frame to top frame visits tasks that
 * started strictly later each time, so the chain ends at a task that makes progress.
 */
#include "atomic.h"
#include "internal.h"

/* May this thread take a task that is not of the group it waits for? */
static bool may_help_generally(const crew_pool *p) {
    unsigned depth = crew__tls_frame ? crew__tls_frame->depth : 0;
    if (depth >= CREW__HELP_DEPTH_MAX)
        return false;
    /* A worker that resize marked starts no new general task. Relaxed: read under the lock. */
    const crew__worker *w = crew__tls_worker;
    return !(w && w->pool == p && crew__load_relaxed(&w->state) == CREW__W_MARKED);
}

int crew_wait(crew_pool *p, crew_handle group) {
    if (!p || group.slot == 0 || !crew__slot_valid(&p->groups, group.slot))
        return CREW_EINVAL;
    int st = crew__group_status(&p->groups, group);
    if (st != 1)
        return st; /* finished: no lock needed */
    if (crew__in_group(p, group))
        return CREW_EDEADLK; /* the group cannot finish while this task waits inside it */

    crew__slot *sl = crew__slot_at(&p->groups, group.slot);
    crew__debug_yield(); /* between the lock-free check and the locked one */
    pthread_mutex_lock(&p->lock);
    while ((st = crew__group_status(&p->groups, group)) == 1) {
        bool general = may_help_generally(p);
        /* The group is open, so the slot still belongs to it and its list is its own. */
        crew_task *t = crew__queue_take_group_locked(p, group.slot);
        if (!t && general)
            t = crew__queue_take_locked(p);
        if (t) {
            crew__run_locked(p, t);
            continue;
        }
        sl->waiters++;
        p->sleeping_helpers += general;
        pthread_cond_wait(&p->wait_cv, &p->lock);
        p->sleeping_helpers -= general;
        sl->waiters--;
    }
    pthread_mutex_unlock(&p->lock);
    return st;
}

/* Run queued tasks until no accepted task is unfinished; lock held (released while tasks run
 * and while sleeping). crew_wait_all sleeps on wait_cv and is woken by new work as well; a closing
 * crew_shutdown sleeps on quiet_cv, since no new work can arrive once the pool is closing. */
void crew__help_until_quiet_locked(crew_pool *p, bool closing) {
    while (p->pending != 0) {
        bool general = may_help_generally(p);
        crew_task *t = general ? crew__queue_take_locked(p) : NULL;
        if (t) {
            crew__run_locked(p, t);
            continue;
        }
        if (closing) {
            p->closers++;
            pthread_cond_wait(&p->quiet_cv, &p->lock);
            p->closers--;
        } else {
            p->sleeping_all++;
            p->sleeping_helpers += general;
            pthread_cond_wait(&p->wait_cv, &p->lock);
            p->sleeping_helpers -= general;
            p->sleeping_all--;
        }
    }
}

int crew_wait_all(crew_pool *p) {
    if (!p)
        return CREW_EINVAL;
    if (crew__in_task_of(p))
        return CREW_EDEADLK;
    pthread_mutex_lock(&p->lock);
    crew__help_until_quiet_locked(p, false);
    int rc = p->cancelled_any ? CREW_ECANCELED : CREW_OK;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

int crew_enqueue_tasks_wait(crew_pool *p, crew_task *t, size_t n) {
    crew_handle h = CREW_HANDLE_NONE;
    int rc = crew_enqueue_tasks(p, t, n, &h);
    if (rc != CREW_OK)
        return rc;
    return crew_wait(p, h);
}
