/*
 * nodes.c -- the registry of live pools, and the task nodes crew_submit uses so that it does
 * not allocate per task.
 *
 * A crew_submit task lives in a node (a crew__node) of the pool's own, taken from a cache of
 * the calling thread: a worker's own, or a producer's (one per thread, for the pool it last
 * used, which keeps the group slots it freed too), refilled from the pool's free list
 * NODE_BATCH at a time; chunks of nodes are freed with the pool. The registry of live pools
 * lets a thread's cache outlive its pool safely, gives each live pool a distinct handle tag
 * (group.h), and marks the pools in a forked child.
 */
#include <pthread.h>
#include <stdlib.h>

#include "atomic.h"
#include "lock.h"
#include "nodes.h"
#include "pool.h"

#define NODES_PER_CHUNK 255
#define NODE_BATCH 64u      /* nodes moved between a worker's cache and the pool at a time */

/* crew_submit's nodes of one pool (pool->nodes): free ones, and every chunk for crew_destroy. */
struct crew__nodes {
    crew__lock lock;  /* guards the two below */
    crew_task *free;  /* recycled nodes, linked by crew_private_.gnext */
    void *chunks;     /* allocated chunks of nodes, freed on destroy */
};

struct node_chunk {
    struct node_chunk *next;           /* all chunks of the pool, for crew_destroy */
    crew__node nodes[NODES_PER_CHUNK]; /* free ones are linked by crew_private_.gnext */
};

/* A free node from the pool's list, allocating a chunk if it is empty. node_lock held. */
static crew_task *pool_node_locked(crew_pool *p) {
    if (!p->nodes->free) {
        struct node_chunk *c = malloc(sizeof *c);
        if (!c)
            return NULL;
        c->next = p->nodes->chunks;
        p->nodes->chunks = c;
        for (size_t i = 0; i < NODES_PER_CHUNK; i++) {
            c->nodes[i].task.crew_private_.gnext = p->nodes->free;
            p->nodes->free = &c->nodes[i].task;
        }
    }
    crew_task *t = p->nodes->free;
    p->nodes->free = t->crew_private_.gnext;
    return t;
}

/*
 * Threads that are not workers (the application's producers) keep a small cache of free nodes
 * too, for the pool they last used, so a submission takes no lock. A cache may outlive its pool:
 * it is then never touched again, only forgotten, since every use checks the pool's serial
 * number (never reused) and gives nodes back only to a pool the registry of live pools still
 * lists. The registry lock is taken only when a thread switches pools or exits, and when pools
 * are created and destroyed.
 */
typedef crew__node_cache node_cache; /* nodes.h */

CREW__TLS node_cache crew__tls_nodes;
static pthread_key_t cache_key; /* its destructor gives the nodes back when the thread exits */
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static crew_pool **registry; /* registry_lock: live pools */
static size_t nregistry, cap_registry;
static uint64_t next_serial; /* registry_lock */

/* Move nodes from l back to the pool's free list until l holds keep. */
static void spill(crew_pool *p, crew__node_list *l, unsigned keep) {
    crew__lock_acquire(&p->nodes->lock);
    while (l->n > keep) {
        crew_task *u = l->head;
        l->head = u->crew_private_.gnext;
        l->n--;
        u->crew_private_.gnext = p->nodes->free;
        p->nodes->free = u;
    }
    crew__lock_release(&p->nodes->lock);
}

/* Give c's nodes and group slots back to their pool if it is still alive; forget them
 * otherwise. */
static void cache_flush(node_cache *c) {
    if (c->nodes.n != 0 || c->slots.n != 0) {
        pthread_mutex_lock(&registry_lock);
        for (size_t i = 0; i < nregistry; i++)
            if (registry[i] == c->pool && registry[i]->serial == c->serial) {
                spill(registry[i], &c->nodes, 0);
                crew__slots_give_back(&registry[i]->groups, &c->slots);
                break;
            }
        pthread_mutex_unlock(&registry_lock);
    }
    *c = (node_cache){0};
}

static void cache_destructor(void *arg) { cache_flush(arg); }

/*
 * fork(): the child has none of the pools' threads, and any lock one of them held stays held.
 * The handlers keep the registry lock across the fork (so the child's copy is consistent), and
 * in the child mark every live pool: crew__forked() makes every call fail with CREW_EFORKED
 * before it touches a lock; the timing bit sends crew_submit off its fast path to that check,
 * and paused keeps a waiter from taking queued tasks (both tested there already, so the checks
 * cost nothing in a process that never forks). The pools leave the registry, so a cache of
 * their nodes is forgotten, never given back (their node locks may be held).
 */
static void fork_prepare(void) { pthread_mutex_lock(&registry_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&registry_lock); }
static void fork_child(void) {
    for (size_t i = 0; i < nregistry; i++) {
        crew_pool *p = registry[i];
        /* Relaxed: this is the child's only thread (see crew__forked). */
        crew__store_relaxed(&p->state, CREW__FORKED);
        crew__fetch_or_relaxed(&p->timing, CREW__TIMING_FORKED);
        crew__fetch_or_relaxed(&p->halt, CREW__HALT_PAUSED);
        crew__sched_forked(p); /* a join takes its checked path (sched_calls.h) */
    }
    nregistry = 0;
    pthread_mutex_unlock(&registry_lock);
}

static void cache_key_init(void) {
    pthread_key_create(&cache_key, cache_destructor);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* A handle tag (group.h) that no live pool uses, so a handle given to the wrong pool is
 * refused; with CREW__POOL_TAGS pools alive, tags repeat (then such a handle may pass for one of
 * the other pool's finished groups). registry_lock held. */
static uint32_t free_tag(void) {
    bool used[CREW__POOL_TAGS + 1] = {false};
    for (size_t i = 0; i < nregistry; i++)
        used[registry[i]->groups.tag] = true;
    for (uint32_t t = 1; t <= CREW__POOL_TAGS; t++)
        if (!used[t])
            return t;
    return (uint32_t)(next_serial % CREW__POOL_TAGS) + 1;
}

int crew__nodes_register(crew_pool *p) {
    pthread_once(&cache_once, cache_key_init);
    pthread_mutex_lock(&registry_lock);
    if (nregistry == cap_registry) {
        size_t cap = cap_registry ? 2 * cap_registry : 16;
        crew_pool **r = realloc(registry, cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&registry_lock);
            return CREW_ENOMEM;
        }
        registry = r;
        cap_registry = cap;
    }
    p->serial = ++next_serial;
    p->groups.tag = free_tag();
    registry[nregistry++] = p;
    pthread_mutex_unlock(&registry_lock);
    return CREW_OK;
}

void crew__nodes_unregister(crew_pool *p) {
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < nregistry; i++)
        if (registry[i] == p) {
            registry[i] = registry[--nregistry];
            break;
        }
    if (nregistry == 0) { /* the last pool: leave nothing allocated behind */
        free(registry);
        registry = NULL;
        cap_registry = 0;
    }
    pthread_mutex_unlock(&registry_lock);
}

/* This thread's cache, made to belong to p (flushing another pool's nodes and slots). */
node_cache *crew__producer_cache(crew_pool *p) {
    node_cache *c = &crew__tls_nodes;
    if (!crew__producer_cache_if(p)) {
        cache_flush(c);
        c->pool = p;
        c->serial = p->serial;
        pthread_setspecific(cache_key, c); /* so that thread exit flushes it */
    }
    return c;
}

/* The calling thread's node list for p: its worker's, or its producer cache (made p's). */
static crew__node_list *node_list(crew_pool *p) {
    crew__worker *w = crew__self(p);
    return w ? &w->nodes : &crew__producer_cache(p)->nodes;
}

crew_task *crew__node_get_slow(crew_pool *p) {
    crew__node_list *l = node_list(p);
    if (!l->head) { /* refill a batch while we hold the lock */
        crew__lock_acquire(&p->nodes->lock);
        for (crew_task *u; l->n < NODE_BATCH && (u = pool_node_locked(p)) != NULL;) {
            u->crew_private_.gnext = l->head;
            l->head = u;
            l->n++;
        }
        crew__lock_release(&p->nodes->lock);
        if (!l->head)
            return NULL;
    }
    crew_task *t = l->head;
    l->head = t->crew_private_.gnext;
    l->n--;
    return t;
}

void crew__node_release_slow(crew_pool *p, crew_task *t) {
    crew__node_list *l = node_list(p);
    t->crew_private_.gnext = l->head;
    l->head = t;
    /* Too many: give a batch back, so nodes flow from the threads that run tasks to the
     * threads that submit them. */
    if (++l->n > CREW__NODE_CACHE_MAX)
        spill(p, l, CREW__NODE_CACHE_MAX - NODE_BATCH);
}

crew_task *crew__task_keep(crew_pool *p, crew_task *t) {
    if (!(t->crew_flags_ & CREW__TASK_COPY))
        return t;
    return crew__node_of(p, t->fn, t->arg, t->priority, t->crew_private_.slot);
}

int crew__nodes_init(crew_pool *p) {
    struct crew__nodes *n = calloc(1, sizeof *n);
    if (!n)
        return CREW_ENOMEM;
    if (crew__lock_init(&n->lock, true) != 0) { /* short sections: a spinlock */
        free(n);
        return CREW_ENOMEM;
    }
    p->nodes = n;
    return CREW_OK;
}

void crew__nodes_free(crew_pool *p) {
    if (!p->nodes)
        return;
    struct node_chunk *c = p->nodes->chunks;
    while (c) {
        struct node_chunk *next = c->next;
        free(c);
        c = next;
    }
    crew__lock_destroy(&p->nodes->lock);
    free(p->nodes);
    p->nodes = NULL;
}
