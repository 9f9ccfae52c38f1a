/*
 * worker.c -- the worker loop, running a task, finishing it, and waking sleepers.
 *
 * DESIGN. Workers find work themselves (seed 000's "first come first serve"): each loops taking
 * the highest-priority, oldest task from the shared queue under pool->lock, runs it with the lock
 * released, and comes back to record the completion and take the next task in the same lock
 * hold. When the queue is empty a worker first polls the queue length a few times without the
 * lock (crew_config.spin), then sleeps on work_cv. Sleeping is counted (sleeping_workers) and
 * decided under the lock, and submitters signal under the same lock, so a task queued while every
 * worker goes to sleep is never missed: either the worker sees it before it sleeps, or the
 * submitter sees the worker counted as asleep and signals it.
 *
 * A worker leaves its loop when resize has marked it (checked under the lock before it takes a
 * task, which is what makes "after crew_resize returns, at most N workers start a task" hold), or
 * when the pool is closing and the queue is empty.
 *
 * The thread-local frame chain records which pools' tasks run on this thread and how deeply
 * they are nested, for EDEADLK checks and the helping depth bound in wait.c.
 */
#include <stdio.h>

#include "atomic.h"
#include "internal.h"

_Thread_local crew__frame *crew__tls_frame;
_Thread_local crew__worker *crew__tls_worker;

#ifdef CREW_DEBUG_YIELD
#include <sched.h>
void crew__debug_yield(void) {
    static _Thread_local uint32_t x; /* per-thread xorshift: no shared state to perturb */
    if (x == 0)
        x = (uint32_t)(uintptr_t)&x | 1u;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    if ((x & 3u) == 0)
        sched_yield();
}
#endif

bool crew__in_task_of(const crew_pool *p) {
    for (const crew__frame *f = crew__tls_frame; f; f = f->up)
        if (f->pool == p)
            return true;
    return false;
}

bool crew__in_group(const crew_pool *p, crew_handle g) {
    for (const crew__frame *f = crew__tls_frame; f; f = f->up)
        if (f->pool == p && f->group.slot == g.slot && f->group.gen == g.gen)
            return true;
    return false;
}

void crew__task_finished_locked(crew_pool *p, uint32_t slot, bool dropped) {
    if (slot != 0 && crew__group_done(&p->groups, slot, dropped) &&
        crew__slot_at(&p->groups, slot)->waiters != 0)
        pthread_cond_broadcast(&p->wait_cv);
    if (--p->pending == 0) {
        if (p->sleeping_all)
            pthread_cond_broadcast(&p->wait_cv);
        if (p->closers)
            pthread_cond_broadcast(&p->quiet_cv);
    }
}

/* What running a task needs with or without monitoring: copy what is needed from t (from here
 * on its memory belongs to its owner again), release the lock, and run the function in a new
 * frame. Lock held on entry, released on return; returns the task's group slot. */
static inline uint32_t call_unlocked(crew_pool *p, crew_task *t) {
    crew_fn fn = t->fn;
    void *arg = t->arg;
    uint32_t slot = t->crew_private_.slot;
    crew__frame frame = {p, crew__tls_frame, crew__tls_frame ? crew__tls_frame->depth + 1 : 1,
                         {slot, 0}};
    /* The group is open (this task is unfinished), so its generation is current. Relaxed: we
     * hold the lock, which orders every writer of the state. */
    if (slot != 0)
        frame.group.gen = crew__gen_of(crew__load_relaxed(&crew__slot_at(&p->groups, slot)->state));
    if (t->crew_flags_ & CREW__TASK_NODE)
        crew__node_release_locked(p, t);
    pthread_mutex_unlock(&p->lock);
    crew__debug_yield();

    crew__tls_frame = &frame;
    fn(arg);
    crew__tls_frame = frame.up;
    crew__debug_yield();
    return slot;
}

/* crew__run_locked for a timed task (monitoring or autosize): the same, between two clock
 * readings. Kept out of line so that an untimed task pays only the test of its flag. */
static __attribute__((noinline, cold)) void run_timed_locked(crew_pool *p, crew_task *t) {
    uint32_t flags = t->crew_flags_;
    uint64_t submitted = t->crew_private_.reserved;
    uint64_t accepted = submitted + t->crew_private_.spare;
    uint64_t started = crew__now_ns();
    uint32_t slot = call_unlocked(p, t);
    uint64_t finished = crew__now_ns();
    pthread_mutex_lock(&p->lock);
    if (flags & CREW__TASK_COUNTED)
        crew__stats_done_locked(p, submitted, accepted, started, finished);
    if (p->autosize)
        crew__autosize_sample_locked(p, started - accepted, finished - started);
    crew__task_finished_locked(p, slot, false);
}

void crew__run_locked(crew_pool *p, crew_task *t) {
    if (__builtin_expect((t->crew_flags_ & CREW__TASK_STAMPED) != 0, 0)) {
        run_timed_locked(p, t);
        return;
    }
    uint32_t slot = call_unlocked(p, t);
    pthread_mutex_lock(&p->lock);
    crew__task_finished_locked(p, slot, false);
}

void crew__wake_locked(crew_pool *p, size_t n, uint32_t slot) {
    if (p->sleeping_workers != 0) {
        if (n >= p->sleeping_workers)
            pthread_cond_broadcast(&p->work_cv);
        else
            for (size_t i = 0; i < n; i++)
                pthread_cond_signal(&p->work_cv);
    }
    if (p->sleeping_helpers != 0 ||
        (slot != 0 && crew__slot_at(&p->groups, slot)->waiters != 0))
        pthread_cond_broadcast(&p->wait_cv);
}

/* Poll for work without the lock for a little while; lock released on entry, held on return. */
static void spin_for_work(crew_pool *p, crew__worker *w) {
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->spin; i++) {
        /* Relaxed: hints only; the caller decides under the lock. */
        if (crew__load_relaxed(&p->queued) != 0 ||
            crew__load_relaxed(&w->state) != CREW__W_RUNNING)
            break;
        for (int k = 0; k < 16; k++)
            crew__cpu_relax();
    }
    pthread_mutex_lock(&p->lock);
}

void crew__name_thread(const crew_pool *p, const char *role) {
#if defined(__linux__)
    char name[16]; /* Linux keeps 15 characters */
    if (snprintf(name, sizeof name, "%s-%u-%s", p->name, p->id, role) < 0)
        return; /* a longer name is cut short, on purpose */
    pthread_setname_np(pthread_self(), name);
#else
    crew__unused(p);
    crew__unused(role);
#endif
}

void *crew__worker_main(void *arg) {
    crew__worker *w = arg;
    crew_pool *p = w->pool;
    crew__tls_worker = w;
    char role[16];
    snprintf(role, sizeof role, "w%u", w->index);
    crew__name_thread(p, role);

    pthread_mutex_lock(&p->lock);
    bool spun = false;
    uint64_t idle_since = 0; /* monitoring: when this worker ran out of work */
    for (;;) {
        /* Relaxed: transitions happen under the lock we hold. */
        if (crew__load_relaxed(&w->state) == CREW__W_MARKED)
            break;
        crew_task *t = crew__queue_take_locked(p);
        if (t) {
            if (idle_since) {
                crew__stats_waited_locked(p, crew__now_ns() - idle_since);
                idle_since = 0;
            }
            crew__run_locked(p, t);
            spun = false;
            continue;
        }
        if (p->state != CREW__OPEN)
            break;
        /* Relaxed: see struct crew_pool. */
        if (!idle_since && (crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR))
            idle_since = crew__now_ns();
        if (!spun && p->spin != 0) {
            spin_for_work(p, w);
            spun = true;
            continue;
        }
        p->sleeping_workers++;
        crew__debug_yield(); /* lock held: lets others pile up behind the sleeper */
        pthread_cond_wait(&p->work_cv, &p->lock);
        p->sleeping_workers--;
        spun = false;
    }
    /* Relaxed: under the lock, like every transition. Crew_resize may revive a marked worker
     * only while it is still MARKED, so after this it no longer can. */
    crew__store_relaxed(&w->state, CREW__W_EXITED);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}
