/*
 * submit.h -- accepting tasks (submit.c): the nodes crew_submit uses, cached per thread.
 */
#ifndef CREW_SUBMIT_H
#define CREW_SUBMIT_H

#include <pthread.h>

#include "base.h"
#include "ec.h"
#include "group.h"
#include "lock.h"

/* The bounded queue (crew_config.queue_capacity) in struct crew_pool. */
typedef struct crew__bounded {
    size_t capacity; /* fixed: tasks that may wait to start; 0 = unbounded */
    unsigned policy; /* fixed: enum crew_full_policy */
    /* Queued tasks that hold a place (CREW__TASK_BOUNDED). Seq_cst read-modify-writes: a task
     * that starts frees a place, the event room's sleepers look for (ec.h). */
    _Atomic size_t admitted;
    crew__ec room;      /* submitters asleep waiting for room (ec.h), with pool->lock */
} crew__bounded;

/* crew_submit's nodes in struct crew_pool: free ones, and every chunk for crew_destroy. */
typedef struct crew__nodes {
    crew__lock lock;  /* guards the two below */
    crew_task *free;  /* recycled nodes, linked by crew_private_.gnext */
    void *chunks;     /* allocated chunks of nodes, freed on destroy */
} crew__nodes;

/* submit.c: free crew_submit nodes cached by one thread (a worker's, or a producer's). */
typedef struct crew__node_list {
    crew_task *head; /* linked by crew_private_.gnext */
    unsigned n;
} crew__node_list;

/* A producer's cache (nodes.c): free nodes and group slots of the pool it last used. */
typedef struct crew__node_cache {
    crew_pool *pool; /* the pool the nodes belong to (compared, never dereferenced, if stale) */
    uint64_t serial; /* its serial number */
    crew__node_list nodes;
    /* Group slots this thread freed (group.c), for the groups it opens next: no shared
     * compare-and-swap per group, as on a worker. */
    crew__slot_cache slots;
} crew__node_cache;
extern CREW__TLS crew__node_cache crew__tls_nodes;
#define CREW__NODE_CACHE_MAX 256u /* a thread keeps at most this many free nodes of its own */
/* crew__node_get and crew__node_release (pool.h, inlined) when their fast path does not do:
 * an empty list to refill, a full one to spill, or a producer cache of another pool. */
crew_task *crew__node_get_slow(crew_pool *p); /* NULL when out of memory */
/* The calling thread's producer cache, made p's (another pool's nodes and slots are given
 * back first). */
crew__node_cache *crew__producer_cache(crew_pool *p);
void crew__node_release_slow(crew_pool *p, crew_task *t);
/* crew_enqueue_tasks that never waits for room in a bounded queue (CREW_EFULL instead): the
 * parallel primitives' helper tasks. */
int crew__enqueue_helpers(crew_pool *p, crew_task *t, size_t n, crew_handle *group);
void crew__nodes_free(crew_pool *p);
int crew__nodes_register(crew_pool *p);  /* list p as alive (for threads' node caches) */
void crew__nodes_unregister(crew_pool *p); /* before its nodes are freed */

#endif /* CREW_SUBMIT_H */
