/*
 * submit.h -- accepting tasks (submit.c): the nodes crew_submit uses, cached per thread.
 */
#ifndef CREW_SUBMIT_H
#define CREW_SUBMIT_H

#include "base.h"

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
