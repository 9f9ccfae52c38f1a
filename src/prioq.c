/*
 * prioq.c -- the shared priority queue: an implicit binary min-heap of priority *levels*, each
 * level a FIFO list of its tasks (Jendersie et al., §III-B, ask for a priority queue on an
 * implicit heap, FIFO among equal priorities).
 *
 * Why levels: programs use few distinct priorities, so the heap holds a handful of levels while
 * the tasks sit in linked lists. Push and pop are O(1) plus O(log L) only when a level appears or
 * empties (L = distinct priorities queued), and no operation walks a deep heap of scattered tasks
 * (a heap of 100,000 tasks costs a cache miss per level on every pop). A hash table finds the
 * level of a priority. Each task links into its level's list (crew_private_.qnext / qprev) and
 * knows its level, so any queued task can be removed in O(1) (a waiter taking its own group's
 * task out of the middle).
 *
 * Memory: levels are allocated when a priority first appears and recycled through a free list;
 * the heap array and the hash table grow by doubling. crew__prioq_push is the only call that can
 * fail (CREW_ENOMEM), and then nothing has changed. Not thread-safe: the caller holds the lock.
 */
#include <stdlib.h>

#include "base.h"
#include "heap.h"
#include "prioq.h"

static inline crew__level *level_of(const crew_task *t) {
    return (crew__level *)t->crew_private_.level;
}

static inline uint32_t bucket_of(const crew__prioq *q, uint32_t priority) {
    return (uint32_t)((priority * 0x9E3779B97F4A7C15ull) >> 32) & (q->nbuckets - 1);
}

static crew__level *find(const crew__prioq *q, uint32_t priority) {
    if (q->nbuckets == 0)
        return NULL;
    for (crew__level *l = q->buckets[bucket_of(q, priority)]; l; l = l->chain)
        if (l->priority == priority)
            return l;
    return NULL;
}

/* ---- the heap of levels, keyed by priority (heap.h's algorithm, binary) ---- */

static inline bool higher(const void *a, const void *b) {
    return (*(crew__level *const *)a)->priority < (*(crew__level *const *)b)->priority;
}
static inline void placed(void *e, size_t i) { (*(crew__level **)e)->index = (uint32_t)i; }
static const crew__heap_kind kind = {sizeof(crew__level *), 2, higher, placed};

/* ---- adding and dropping levels ---- */

static int grow_table(crew__prioq *q) {
    uint32_t n = q->nbuckets ? q->nbuckets * 2 : 16;
    crew__level **b = calloc(n, sizeof *b);
    if (!b)
        return CREW_ENOMEM;
    crew__level **old = q->buckets;
    q->buckets = b;
    q->nbuckets = n;
    for (uint32_t i = 0; i < q->nlevels; i++) { /* every level in use is in the heap */
        crew__level *l = q->heap[i];
        uint32_t k = bucket_of(q, l->priority);
        l->chain = b[k];
        b[k] = l;
    }
    free(old);
    return CREW_OK;
}

static crew__level *add_level(crew__prioq *q, uint32_t priority) {
    if (q->nlevels == q->heap_cap) {
        if (q->heap_cap >= (1u << 30))
            return NULL; /* a billion distinct priorities queued at once */
        uint32_t cap = q->heap_cap ? q->heap_cap * 2 : 8;
        crew__level **h = realloc(q->heap, cap * sizeof *h);
        if (!h)
            return NULL;
        q->heap = h;
        q->heap_cap = cap;
    }
    if (2 * (q->nlevels + 1) > q->nbuckets && grow_table(q) != CREW_OK)
        return NULL;
    crew__level *l = q->free;
    if (l)
        q->free = l->chain;
    else if (!(l = malloc(sizeof *l)))
        return NULL;
    l->priority = priority;
    l->head = l->tail = NULL;
    uint32_t k = bucket_of(q, priority);
    l->chain = q->buckets[k];
    q->buckets[k] = l;
    crew__heap_sift_up(&kind, q->heap, q->nlevels++, &l);
    return l;
}

static void drop_level(crew__prioq *q, crew__level *l) {
    crew__level **pp = &q->buckets[bucket_of(q, l->priority)];
    while (*pp != l)
        pp = &(*pp)->chain;
    *pp = l->chain;
    crew__level *last = q->heap[--q->nlevels];
    if (last != l)
        crew__heap_fix(&kind, q->heap, q->nlevels, l->index, &last);
    l->chain = q->free;
    q->free = l;
}

/* ---- tasks ---- */

/* Count t into the level of its priority (made if needed); NULL if out of memory. */
static crew__level *enter(crew__prioq *q, crew_task *t) {
    crew__level *l = find(q, t->priority);
    if (!l && !(l = add_level(q, t->priority)))
        return NULL;
    t->crew_private_.level = l;
    q->n++;
    return l;
}

int crew__prioq_push(crew__prioq *q, crew_task *t) {
    crew__level *l = enter(q, t);
    if (!l)
        return CREW_ENOMEM;
    t->crew_private_.qnext = NULL;
    t->crew_private_.qprev = l->tail;
    if (l->tail)
        l->tail->crew_private_.qnext = t;
    else
        l->head = t;
    l->tail = t;
    return CREW_OK;
}

int crew__prioq_push_front(crew__prioq *q, crew_task *t) {
    crew__level *l = enter(q, t);
    if (!l)
        return CREW_ENOMEM;
    t->crew_private_.qprev = NULL;
    t->crew_private_.qnext = l->head;
    if (l->head)
        l->head->crew_private_.qprev = t;
    else
        l->tail = t;
    l->head = t;
    return CREW_OK;
}

crew_task *crew__prioq_find_newest(const crew__prioq *q, uint32_t slot) {
    for (uint32_t i = 0; i < q->nlevels; i++)
        for (crew_task *t = q->heap[i]->tail; t; t = t->crew_private_.qprev)
            if (t->crew_private_.slot == slot)
                return t;
    return NULL;
}

uint32_t crew__prioq_top(const crew__prioq *q) {
    return q->nlevels ? q->heap[0]->priority : UINT32_MAX;
}

void crew__prioq_remove(crew__prioq *q, crew_task *t) {
    crew__level *l = level_of(t);
    crew_task *prev = t->crew_private_.qprev, *next = t->crew_private_.qnext;
    if (prev)
        prev->crew_private_.qnext = next;
    else
        l->head = next;
    if (next)
        next->crew_private_.qprev = prev;
    else
        l->tail = prev;
    q->n--;
    if (!l->head)
        drop_level(q, l);
}

crew_task *crew__prioq_pop(crew__prioq *q) {
    if (q->nlevels == 0)
        return NULL;
    crew_task *t = q->heap[0]->head;
    crew__prioq_remove(q, t);
    return t;
}

void crew__prioq_free(crew__prioq *q) {
    for (uint32_t i = 0; i < q->nlevels; i++)
        free(q->heap[i]);
    while (q->free) {
        crew__level *next = q->free->chain;
        free(q->free);
        q->free = next;
    }
    free(q->heap);
    free(q->buckets);
    *q = (crew__prioq){0};
}

uint64_t crew__prioq_oldest(const crew__prioq *q) {
    uint64_t oldest = 0;
    for (uint32_t i = 0; i < q->nlevels; i++) {
        const crew_task *t = q->heap[i]->head;
        for (unsigned k = 0; t && k < CREW__PRIOQ_LOOK; k++, t = t->crew_private_.qnext) {
            if (!(t->crew_flags_ & CREW__TASK_STAMPED))
                continue;
            uint64_t accepted = crew__task_submitted_ns(t) + crew__task_response_ns(t);
            if (oldest == 0 || accepted < oldest)
                oldest = accepted;
            break;
        }
    }
    return oldest;
}
