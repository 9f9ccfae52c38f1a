/*
 * prioq.h -- the priority queue (prioq.c), a binary min-heap of priority levels, each a FIFO
 * of tasks.
 */
#ifndef CREW_PRIOQ_H
#define CREW_PRIOQ_H

#include <stddef.h>
#include <stdint.h>

#include "crew.h"

typedef struct crew__level {
    crew_task *head;            /* oldest task of this priority */
    crew_task *tail;            /* newest task of this priority */
    struct crew__level *chain;  /* next level in the same hash bucket, or in the free list */
    uint32_t priority;          /* the key */
    uint32_t index;             /* position in crew__prioq.heap */
} crew__level;

typedef struct crew__prioq {
    crew__level **heap;    /* min-heap of the non-empty levels, by priority */
    uint32_t nlevels;      /* levels in the heap */
    uint32_t heap_cap;     /* allocated heap entries */
    crew__level **buckets; /* hash table: priority -> level */
    uint32_t nbuckets;     /* a power of two, or 0 before first use */
    crew__level *free;     /* recycled levels */
    size_t n;              /* queued tasks */
} crew__prioq;

int crew__prioq_push(crew__prioq *q, crew_task *t); /* CREW_OK, or CREW_ENOMEM and no change */
crew_task *crew__prioq_pop(crew__prioq *q);         /* highest priority, oldest; NULL if empty */
int crew__prioq_push_front(crew__prioq *q, crew_task *t); /* first of its priority */
/* The newest queued task of group slot (a search of every level), or NULL. */
crew_task *crew__prioq_find_newest(const crew__prioq *q, uint32_t slot);
uint32_t crew__prioq_top(const crew__prioq *q); /* best priority queued, UINT32_MAX if empty */
void crew__prioq_remove(crew__prioq *q, crew_task *t); /* t must be queued */
void crew__prioq_free(crew__prioq *q);
/* The earliest acceptance time (ns) of the timed tasks (CREW__TASK_STAMPED) nearest the front
 * of each level (each level is FIFO, so its first timed task is its oldest timed one; at most
 * CREW__PRIOQ_LOOK tasks are looked at per level); 0 if none was found. */
#define CREW__PRIOQ_LOOK 64u
uint64_t crew__prioq_oldest(const crew__prioq *q);

#endif /* CREW_PRIOQ_H */
