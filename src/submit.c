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

struct node_chunk {
    struct node_chunk *next;           /* all chunks of the pool, for crew_destroy */
    crew_task nodes[NODES_PER_CHUNK];  /* free ones are linked by crew_private_.gnext */
};

crew_task *crew__node_get_locked(crew_pool *p) {
    if (!p->free_nodes) {
        struct node_chunk *c = malloc(sizeof *c);
        if (!c)
            return NULL;
        c->next = p->node_chunks;
        p->node_chunks = c;
        for (size_t i = 0; i < NODES_PER_CHUNK; i++)
            crew__node_release_locked(p, &c->nodes[i]);
    }
    crew_task *t = p->free_nodes;
    p->free_nodes = t->crew_private_.gnext;
    return t;
}

void crew__node_release_locked(crew_pool *p, crew_task *t) {
    t->crew_private_.gnext = p->free_nodes;
    p->free_nodes = t;
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

/* Monitoring or autosize: mark n just-queued tasks as timed (CREW__TASK_STAMPED) with their
 * submission time and response time, and count them. Out of line, so that a pool that times
 * nothing pays only the test of p->timing. Lock held (no thread can take them meanwhile). */
static __attribute__((noinline, cold)) void stamp_tasks_locked(crew_pool *p, crew_task *t,
                                                               size_t n, uint64_t submitted) {
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
    if (counted)
        crew__stats_submitted_locked(p, n, submitted, accepted);
}

/* Queue n tasks (their fn already checked) into *group. Lock held. All or nothing: the group
 * is opened or joined first (those can fail without side effects), then the tasks are queued;
 * if queueing runs out of memory part-way, the queued ones are taken back and the group's open
 * or add is undone, all under the lock, so no other thread saw any of it. */
static int enqueue_locked(crew_pool *p, crew_task *t, size_t n, crew_handle *group,
                          uint32_t flags, uint64_t submitted) {
    if (p->state != CREW__OPEN)
        return CREW_ESHUTDOWN;
    if (n > UINT32_MAX)
        return CREW_ERANGE;
    bool open_new = group && group->slot == 0 && group->gen == 0;
    if (group && !open_new && !crew__slot_valid(&p->groups, group->slot))
        return CREW_EINVAL;
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
        if ((rc = crew__queue_push_locked(p, &t[i], h.slot)) != CREW_OK) {
            while (i-- > 0)
                crew__queue_remove_locked(p, &t[i]);
            if (open_new)
                crew__group_abandon(&p->groups, h.slot);
            else if (group)
                crew__group_unadd(&p->groups, h.slot, (uint32_t)n);
            return rc;
        }
    }
    if (open_new)
        *group = h;
    if (submitted) /* timed: monitoring or autosize */
        stamp_tasks_locked(p, t, n, submitted);
    p->pending += n;
    crew__wake_locked(p, n, h.slot);
    return CREW_OK;
}

/* The submission's start time if tasks are timed (monitoring or autosize), else 0. */
static inline uint64_t stamp(crew_pool *p) {
    /* Relaxed: see struct crew_pool. */
    return crew__load_relaxed(&p->timing) ? crew__now_ns() : 0;
}

/* Count a refused submission (monitoring only). Lock held. */
static int rejected_locked(crew_pool *p, int rc, size_t n, uint64_t submitted) {
    /* Relaxed: see struct crew_pool. */
    if (rc != CREW_OK && submitted && (crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR))
        crew__stats_rejected_locked(p, n);
    return rc;
}

static int rejected(crew_pool *p, int rc, size_t n) {
    if (crew__load_relaxed(&p->timing) & CREW__TIMING_MONITOR) { /* relaxed: see crew_pool */
        pthread_mutex_lock(&p->lock);
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
    uint64_t submitted = stamp(p);
    pthread_mutex_lock(&p->lock);
    int rc = rejected_locked(p, enqueue_locked(p, t, n, group, 0, submitted), n, submitted);
    pthread_mutex_unlock(&p->lock);
    return rc;
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
    pthread_mutex_lock(&p->lock);
    int rc = CREW_ENOMEM;
    crew_task *t = crew__node_get_locked(p);
    if (t) {
        t->fn = fn;
        t->arg = arg;
        t->priority = priority;
        rc = enqueue_locked(p, t, 1, group, CREW__TASK_NODE, submitted);
        if (rc != CREW_OK)
            crew__node_release_locked(p, t);
    }
    rejected_locked(p, rc, 1, submitted);
    pthread_mutex_unlock(&p->lock);
    return rc;
}
