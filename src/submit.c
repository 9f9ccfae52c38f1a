/*
 * submit.c -- accepting tasks: crew_submit, crew_enqueue_task(s), and the recycled task nodes
 * that crew_submit uses so it does not allocate per task.
 *
 * Submission is all-or-nothing: a call that fails (closed pool, bad or finished handle, no
 * memory for the queue or the slot map) leaves no task queued and no group opened or changed;
 * see enqueue_locked for how.
 */
#include <stdlib.h>

#include "atomic.h"
#include "internal.h"

#define NODES_PER_CHUNK 255
#define NODE_CACHE_MAX 256u /* a worker keeps at most this many free nodes of its own */
#define NODE_BATCH 64u      /* nodes moved between a worker's cache and the pool at a time */

struct node_chunk {
    struct node_chunk *next;           /* all chunks of the pool, for crew_destroy */
    crew_task nodes[NODES_PER_CHUNK];  /* free ones are linked by crew_private_.gnext */
};

/* A free node from the pool's list, allocating a chunk if it is empty. node_lock held. */
static crew_task *pool_node_locked(crew_pool *p) {
    if (!p->free_nodes) {
        struct node_chunk *c = malloc(sizeof *c);
        if (!c)
            return NULL;
        c->next = p->node_chunks;
        p->node_chunks = c;
        for (size_t i = 0; i < NODES_PER_CHUNK; i++) {
            c->nodes[i].crew_private_.gnext = p->free_nodes;
            p->free_nodes = &c->nodes[i];
        }
    }
    crew_task *t = p->free_nodes;
    p->free_nodes = t->crew_private_.gnext;
    return t;
}

/* The calling thread's worker record if it is a worker of p. */
static inline crew__worker *own_worker(crew_pool *p) {
    crew__worker *w = crew__tls_worker;
    return w && w->pool == p ? w : NULL;
}

crew_task *crew__node_get(crew_pool *p) {
    crew__worker *w = own_worker(p);
    crew_task *t;
    if (w && w->nodes) { /* a worker's own cache: no lock */
        t = w->nodes;
        w->nodes = t->crew_private_.gnext;
        w->nnodes--;
        return t;
    }
    crew__lock_acquire(&p->node_lock);
    t = pool_node_locked(p);
    if (w && t) /* refill the cache while we hold the lock */
        for (crew_task *u; w->nnodes < NODE_BATCH && (u = pool_node_locked(p)) != NULL;) {
            u->crew_private_.gnext = w->nodes;
            w->nodes = u;
            w->nnodes++;
        }
    crew__lock_release(&p->node_lock);
    return t;
}

void crew__node_release(crew_pool *p, crew_task *t) {
    crew__worker *w = own_worker(p);
    if (w) {
        t->crew_private_.gnext = w->nodes;
        w->nodes = t;
        if (++w->nnodes <= NODE_CACHE_MAX)
            return;
        /* Too many: give a batch back, so nodes flow from the workers that run tasks to the
         * threads that submit them. */
        crew__lock_acquire(&p->node_lock);
        while (w->nnodes > NODE_CACHE_MAX - NODE_BATCH) {
            crew_task *u = w->nodes;
            w->nodes = u->crew_private_.gnext;
            w->nnodes--;
            u->crew_private_.gnext = p->free_nodes;
            p->free_nodes = u;
        }
        crew__lock_release(&p->node_lock);
        return;
    }
    crew__lock_acquire(&p->node_lock);
    t->crew_private_.gnext = p->free_nodes;
    p->free_nodes = t;
    crew__lock_release(&p->node_lock);
}

void crew__nodes_free(crew_pool *p) {
    struct node_chunk *c = p->node_chunks;
    while (c) {
        struct node_chunk *next = c->next;
        free(c);
        c = next;
    }
    p->node_chunks = NULL;
    p->free_nodes = NULL;
}

/* Monitoring or autosize: mark n tasks about to be queued as timed (CREW__TASK_STAMPED) with
 * their submission time and response time. Out of line, so that a pool that times nothing pays
 * only the test of p->timing. Returns the acceptance time. */
static __attribute__((noinline, cold)) uint64_t stamp_tasks(crew_pool *p, crew_task *t, size_t n,
                                                            uint64_t submitted) {
    uint64_t accepted = crew__now_ns();
    uint32_t response =
        accepted - submitted > UINT32_MAX ? UINT32_MAX : (uint32_t)(accepted - submitted);
    /* Relaxed: see struct crew_pool. */
    bool counted = crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR;
    uint32_t flags = CREW__TASK_STAMPED | (counted ? CREW__TASK_COUNTED : 0u);
    for (size_t i = 0; i < n; i++) {
        t[i].crew_flags_ |= flags;
        t[i].crew_private_.reserved = submitted;
        t[i].crew_private_.spare = response;
    }
    return accepted;
}

/* Count n accepted timed tasks (monitoring only). */
static __attribute__((noinline, cold)) void count_submitted(crew_pool *p, crew_task *t, size_t n,
                                                            uint64_t submitted,
                                                            uint64_t accepted) {
    if (!(t->crew_flags_ & CREW__TASK_COUNTED))
        return;
    pthread_mutex_lock(&p->lock);
    crew__stats_submitted_locked(p, n, submitted, accepted);
    pthread_mutex_unlock(&p->lock);
}

/* Queue n tasks (their fn already checked) into *group. All or nothing: the group is opened or
 * joined first (those can fail without side effects), the tasks are counted in pending, and the
 * pool's state is checked after that count (crew_shutdown sets the state, then waits for pending
 * to reach 0: one of the two sees the other); then the tasks are pushed, and if that fails
 * (memory) the count and the group are taken back before anyone could have seen the tasks. */
static int enqueue(crew_pool *p, crew_task *t, size_t n, crew_handle *group, uint32_t flags,
                   uint64_t submitted) {
    if (n > UINT32_MAX)
        return CREW_ERANGE;
    bool open_new = group && group->slot == 0 && group->gen == 0;
    if (group && !open_new && !crew__slot_valid(&p->groups, group->slot))
        return CREW_EINVAL;
    /* Seq_cst: an early answer for a closed pool; the check that counts is below. */
    if (atomic_load(&p->state) != CREW__OPEN)
        return CREW_ESHUTDOWN;
    crew_handle h = group && !open_new ? *group : (crew_handle){0, 0};
    int rc = CREW_OK;
    if (open_new)
        rc = crew__group_open(&p->groups, (uint32_t)n, &h);
    else if (group)
        rc = crew__group_add(&p->groups, h, (uint32_t)n);
    if (rc != CREW_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        t[i].crew_flags_ = flags;
        t[i].crew_private_.slot = h.slot;
    }
    uint64_t accepted = submitted ? stamp_tasks(p, t, n, submitted) : 0;
    /* Seq_cst increment, then the seq_cst load of the state: see above. */
    atomic_fetch_add(&p->pending, n);
    rc = atomic_load(&p->state) == CREW__OPEN ? crew__sched_push(p, t, n) : CREW_ESHUTDOWN;
    if (rc != CREW_OK) {
        if (open_new) {
            crew__group_abandon(&p->groups, h.slot);
            crew__tasks_finished(p, 0, n, false);
        } else {
            crew__tasks_finished(p, h.slot, n, false);
        }
        return rc;
    }
    if (open_new)
        *group = h;
    if (submitted)
        count_submitted(p, t, n, submitted, accepted);
    crew__notify_work(p, n, h.slot);
    return CREW_OK;
}

/* The submission's start time if tasks are timed (monitoring or autosize), else 0. */
static inline uint64_t stamp(crew_pool *p) {
    /* Relaxed: see struct crew_pool. */
    return crew__load_relaxed(&p->timing) ? crew__now_ns() : 0;
}

/* Count a refused submission (monitoring only). */
static int rejected(crew_pool *p, int rc, size_t n) {
    if (rc != CREW_OK && (crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR)) {
        pthread_mutex_lock(&p->lock); /* relaxed above: see struct crew_pool */
        crew__stats_rejected_locked(p, n);
        pthread_mutex_unlock(&p->lock);
    }
    return rc;
}

int crew_enqueue_tasks(crew_pool *p, crew_task *t, size_t n, crew_handle *group) {
    if (!p)
        return CREW_EINVAL;
    if (!t || n == 0)
        return rejected(p, CREW_EINVAL, n);
    for (size_t i = 0; i < n; i++)
        if (!t[i].fn)
            return rejected(p, CREW_EINVAL, n);
    return rejected(p, enqueue(p, t, n, group, 0, stamp(p)), n);
}

int crew_enqueue_task(crew_pool *p, crew_task *t, crew_handle *group) {
    return crew_enqueue_tasks(p, t, 1, group);
}

int crew_submit(crew_pool *p, crew_fn fn, void *arg, uint32_t priority, crew_handle *group) {
    if (!p)
        return CREW_EINVAL;
    if (!fn)
        return rejected(p, CREW_EINVAL, 1);
    uint64_t submitted = stamp(p);
    crew_task *t = crew__node_get(p);
    if (!t)
        return rejected(p, CREW_ENOMEM, 1);
    t->fn = fn;
    t->arg = arg;
    t->priority = priority;
    int rc = enqueue(p, t, 1, group, CREW__TASK_NODE, submitted);
    if (rc != CREW_OK)
        crew__node_release(p, t);
    return rejected(p, rc, 1);
}
