/*
 * timer.h -- time (timer.c): delayed tasks (crew_submit_after, crew_submit_at*) and periodic
 * timers (crew_timer_start / crew_timer_stop), kept in one 4-ary min-heap per pool (heap.h)
 * until they are due, and the pool's timer thread that sleeps until the nearest one and hands
 * what is due to the scheduler through the ordinary push (submit.c's crew__fire).
 *
 * Locking: timers.lock guards everything below that says "lock". Lock order: timers.lock
 * before every lock the push takes (the queues' locks, pool->lock through the wake-ups); no
 * code takes timers.lock while it holds pool->lock or a queue lock.
 */
#ifndef CREW_TIMER_H
#define CREW_TIMER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "ec.h"
#include "heap.h"
#include "thread.h"

struct crew_timer;

typedef struct crew__timers {
    pthread_mutex_t lock;
    crew__theap heap;     /* lock: what waits for its time (heap.h) */
    size_t delayed;       /* lock: delayed tasks in the heap (the others are timers) */
    size_t timers;        /* lock: live periodic timers (each may need one entry) */
    uint32_t *per_slot;   /* lock: [slot]: the delayed tasks of group slot in the heap */
    size_t per_slot_n;    /* lock: per_slot's length (slots past it have none) */
    struct crew_timer *live; /* lock: every timer not freed yet (crew_timer_stop frees them) */
    crew__ec changed;     /* the timer thread sleeps here: an earlier entry, or exit */
    int closing;          /* lock: 0 open, 1 a draining shutdown began, 2 a cancelling one */
    bool exit;            /* lock: the timer thread must return */
    crew__lone thread;    /* lock: the timer thread, made at the first entry */
    uint64_t fired;       /* lock: entries handed to the scheduler so far (crew_diagnose) */
} crew__timers;

int crew__timers_init(crew_pool *p); /* p->timers, empty: CREW_OK or CREW_ENOMEM */
void crew__timers_free(crew_pool *p); /* it, the heap, the timers never stopped (crew_destroy) */

/* A delayed task, counted in its group and in pending, waits in the heap until when (ns,
 * crew_now_ns's clock). CREW_OK, CREW_ENOMEM, CREW_EAGAIN (no timer thread could be created)
 * or CREW_ESHUTDOWN (a cancelling shutdown began): then nothing changed. */
int crew__timers_add(crew_pool *p, crew_task *t, uint64_t when);
/* crew_cancel: drop the delayed tasks of group {slot, gen} still waiting in the heap (each
 * handed to on_drop). Returns how many. */
size_t crew__timers_cancel_group(crew_pool *p, uint32_t slot, uint32_t gen);
/* crew_shutdown, before the pool's state changes to closing: no timer's run is queued from
 * now on (a due one goes idle), and a cancelling shutdown refuses new delayed tasks. */
void crew__timers_closing(crew_pool *p, int how);
/* crew_shutdown, once the pool is closing: no periodic timer runs again; how CREW_CANCEL also
 * drops the delayed tasks (reported as a shutdown's drops), CREW_DRAIN leaves them to run at
 * their time. */
void crew__timers_close(crew_pool *p, int how);
/* crew_shutdown, once pending is 0 (the heap is empty): the timer thread returns, joined. */
void crew__timers_stop(crew_pool *p);

/* The function of a periodic timer's runs (arg: the timer): the timer kind's row (kind.h,
 * timer.c) recognises runs by it, which are dropped and named as their timer. */
void crew__timer_run(void *arg);

/* crew_diagnose: what waits in the heap. */
typedef struct crew__timers_view {
    size_t delayed, timers, armed;  /* delayed tasks waiting, live timers, timers armed */
    uint64_t fired;                 /* entries handed to the scheduler so far */
    uint64_t next_when;             /* the nearest due time (0: none) */
    crew_fn next_fn;                /* its function */
} crew__timers_view;
void crew__timers_view_get(crew_pool *p, crew__timers_view *v);
/* One live periodic timer, as crew__timers_list copies it. */
typedef struct crew__timer_info {
    crew_fn fn;          /* the timer's function */
    uint64_t period_ns;  /* 0: one-shot */
    uint64_t when;       /* its next due time if armed, else 0 */
    const char *state;   /* "armed", "queued", "running", "idle" */
} crew__timer_info;
/* Copy up to max live periodic timers into out (under the lock, so that the caller prints
 * without it); returns how many exist. */
size_t crew__timers_list(crew_pool *p, crew__timer_info *out, size_t max);

#endif /* CREW_TIMER_H */
