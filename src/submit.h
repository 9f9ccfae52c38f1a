/*
 * submit.h -- accepting tasks (submit.c): the nodes crew_submit uses, cached per thread.
 */
#ifndef CREW_SUBMIT_H
#define CREW_SUBMIT_H

#include <pthread.h>

#include "base.h"
#include "ec.h"
#include "lock.h"

/* The bounded queue (crew_config.queue_capacity) in struct crew_pool. */
typedef struct crew__bounded {
    size_t capacity; /* fixed: tasks that may wait to start; 0 = unbounded */
    unsigned policy; /* fixed: enum crew_full_policy */
    /* Queued tasks that hold a place (CREW__TASK_BOUNDED). Seq_cst read-modify-writes: a task
     * that starts frees a place, the event room's sleepers look for (ec.h). */
    _Atomic size_t admitted;
    crew__ec room;      /* submitters asleep waiting for room (ec.h) */
    pthread_cond_t cv;  /* they sleep here, with pool->lock (CLOCK_MONOTONIC) */
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

crew_task *crew__node_get(crew_pool *p); /* NULL when out of memory */
/* crew_enqueue_tasks that never waits for room in a bounded queue (CREW_EFULL instead): the
 * parallel primitives' helper tasks. */
int crew__enqueue_helpers(crew_pool *p, crew_task *t, size_t n, crew_handle *group);
void crew__node_release(crew_pool *p, crew_task *t);
void crew__nodes_free(crew_pool *p);
int crew__nodes_register(crew_pool *p);  /* list p as alive (for threads' node caches) */
void crew__nodes_unregister(crew_pool *p); /* before its nodes are freed */

#endif /* CREW_SUBMIT_H */
