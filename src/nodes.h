/*
 * nodes.h -- the task nodes crew_submit uses (nodes.c): a thread's cache of free nodes (a
 * worker's own, or a producer's for the pool it last used, which keeps the group slots it freed
 * too), its inlined fast path, and the registry of live pools.
 *
 * The fast path reads the pool and the worker record (the pool's serial number, the worker's own
 * lists), so this header comes after pool.h's types. The list type the worker record holds,
 * crew__node_list, is in base.h beside crew__node.
 */
#ifndef CREW_NODES_H
#define CREW_NODES_H

#include <stdint.h>

#include "base.h"
#include "group.h"
#include "pool.h"

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
/* crew__node_get and crew__node_release (below, inlined) when their fast path does not do:
 * an empty list to refill, a full one to spill, or a producer cache of another pool. */
crew_task *crew__node_get_slow(crew_pool *p); /* NULL when out of memory */
/* The calling thread's producer cache, made p's (another pool's nodes and slots are given
 * back first). */
crew__node_cache *crew__producer_cache(crew_pool *p);
void crew__node_release_slow(crew_pool *p, crew_task *t);
/* crew_submit's nodes for p: its store of free nodes and chunks (freed with the pool:
 * crew__nodes_free). CREW_OK or CREW_ENOMEM. */
int crew__nodes_init(crew_pool *p);
void crew__nodes_free(crew_pool *p);
int crew__nodes_register(crew_pool *p);  /* list p as alive (for threads' node caches) */
void crew__nodes_unregister(crew_pool *p); /* before its nodes are freed */
/* A task that may be a take's copy (CREW__TASK_COPY) as one a locked queue can hold: itself, or
 * a node with its fields; NULL when out of memory (nodes.c). */
crew_task *crew__task_keep(crew_pool *p, crew_task *t);

/* The calling thread's producer cache if it serves p, else NULL (crew__producer_cache makes it
 * p's). */
static inline crew__node_cache *crew__producer_cache_if(const crew_pool *p) {
    crew__node_cache *c = &crew__tls_nodes;
    return c->pool == p && c->serial == p->serial ? c : NULL;
}
/* The calling thread's cache of free group slots for p: its worker's (self), or its producer
 * cache, made p's if it serves another pool (opening a group). */
static inline crew__slot_cache *crew__slots_to_open(crew_pool *p, crew__worker *self) {
    if (self)
        return &self->slots;
    crew__node_cache *c = crew__producer_cache_if(p);
    return __builtin_expect(c != NULL, 1) ? &c->slots : &crew__producer_cache(p)->slots;
}
/* The same for a slot this thread frees (a group it finished), without switching pools: NULL
 * (the shared list) if the producer cache serves another pool. */
static inline crew__slot_cache *crew__slots_to_free(crew_pool *p, crew__worker *self) {
    if (self)
        return &self->slots;
    crew__node_cache *c = crew__producer_cache_if(p);
    return c ? &c->slots : NULL;
}
/* The calling thread's own list of free nodes for p, if it has one ready: its worker's, or its
 * producer cache if that serves p (else NULL: the slow path makes it p's). */
static inline crew__node_list *crew__node_list_of(crew_pool *p) {
    crew__worker *w = crew__self(p);
    if (w)
        return &w->nodes;
    crew__node_cache *c = crew__producer_cache_if(p);
    return c ? &c->nodes : NULL;
}
/* A node for a crew_submit task (NULL when out of memory), from the thread's own list. */
static inline crew_task *crew__node_get(crew_pool *p) {
    crew__node_list *l = crew__node_list_of(p);
    crew_task *t;
    if (__builtin_expect(!l || !(t = l->head), 0))
        return crew__node_get_slow(p);
    l->head = t->crew_private_.gnext;
    l->n--;
    return t;
}
/* A node back to the thread's own list (a batch goes back to the pool when it is full, so that
 * nodes flow from the threads that run tasks to those that submit them). */
static inline void crew__node_release(crew_pool *p, crew_task *t) {
    crew__node_list *l = crew__node_list_of(p);
    if (__builtin_expect(!l || l->n >= CREW__NODE_CACHE_MAX, 0)) {
        crew__node_release_slow(p, t);
        return;
    }
    t->crew_private_.gnext = l->head;
    l->head = t;
    l->n++;
}
/* A node holding a crew_submit task (no flag but CREW__TASK_NODE; group slot, 0 for none), or
 * NULL when out of memory. */
static inline crew_task *crew__node_of(crew_pool *p, crew_fn fn, void *arg, uint32_t priority,
                                       uint32_t slot) {
    crew_task *t = crew__node_get(p);
    if (t) {
        t->fn = fn;
        t->arg = arg;
        t->priority = priority;
        t->crew_flags_ = CREW__TASK_NODE;
        t->crew_private_.slot = slot;
    }
    return t;
}

#endif /* CREW_NODES_H */
