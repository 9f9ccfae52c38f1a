/*
 * deque.h -- the Chase-Lev work-stealing deque (deque.c), for STEAL's workers and external slots.
 */
#ifndef CREW_DEQUE_H
#define CREW_DEQUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "base.h"
#include "crew.h"
#include "debug.h"

/* One place of a deque. A task given by its address (fn NULL, arg the crew_task), or held here
 * by value (fn, arg, and aux: its group slot in the low 32 bits and its priority in the high
 * ones), so that crew_submit's tasks need no node. Relaxed fields: published through bottom,
 * and a thief's reads come before its claim on top, which the owner's reuse of the place
 * waits for (deque.c). */
typedef struct crew__deque_entry {
    _Atomic(crew_fn) fn;
    void *_Atomic arg;
    _Atomic uint64_t aux;
} crew__deque_entry;

typedef struct crew__deque_array {
    size_t mask;                       /* slots - 1; slots is a power of two */
    struct crew__deque_array *older;   /* the array this one replaced (freed with the deque) */
    crew__deque_entry slot[];
} crew__deque_array;

typedef struct crew__deque {
    /* The next task to steal; thieves advance it with seq_cst CAS (deque.c). */
    _Alignas(64) _Atomic int64_t top;
    /* One past the newest task; written only by the owner, with release stores (deque.c). */
    _Alignas(64) _Atomic int64_t bottom;
    /* The current array; release-published by the owner when it grows, acquired by thieves. */
    crew__deque_array *_Atomic array;
    /* The owner's last look at top (its own: a worker's, or under an external slot's lock).
     * Top only grows, so the room it shows is at most the real room: a push that fits by it
     * needs no read of top, a line the thieves write on every steal (push refreshes it). */
    int64_t top_seen;
} crew__deque;

/* A task held by value, as a take returns it: copied into the taker's buffer, flagged
 * CREW__TASK_COPY (base.h). A task given by address is returned as it is. */
static inline crew_task *crew__deque_task(crew_fn fn, void *arg, uint64_t aux, crew_task *buf) {
    if (!fn)
        return arg;
    buf->fn = fn;
    buf->arg = arg;
    buf->priority = (uint32_t)(aux >> 32);
    buf->crew_flags_ = CREW__TASK_COPY;
    buf->crew_private_.slot = (uint32_t)aux;
    return buf;
}
static inline uint64_t crew__deque_aux(uint32_t slot, uint32_t priority) {
    return (uint64_t)priority << 32 | slot;
}

int crew__deque_init(crew__deque *d);
void crew__deque_free(crew__deque *d);
/* Owner: push t[0..n) by address (all or nothing: CREW_OK or CREW_ENOMEM). */
int crew__deque_push(crew__deque *d, crew_task *t, size_t n);
/* Owner: push t[0..n) by value (each task's fn, which must not be NULL, arg and priority, all
 * in group slot), all or nothing (CREW_OK or CREW_ENOMEM), with one release store of bottom:
 * the caller's tasks are not referred to once it returns. */
int crew__deque_push_values(crew__deque *d, const crew_task *t, size_t n, uint32_t slot);
/* Owner: push one entry when the array is full (the general push grows it). */
int crew__deque_push_slow(crew__deque *d, crew_fn fn, void *arg, uint64_t aux);
/* Owner: push one task by value (fn, arg, aux as in crew__deque_entry) at b, the bottom the
 * owner just read (crew__deque_push_value reads it; a join's offer also keeps it as its mark);
 * inlined, since it is on every crew_submit's path. The array looks full by top_seen only when
 * the deque has held this many tasks since the owner last read top: then the general push reads
 * top again and grows the array if it is really full. The memory orders are push's in deque.c
 * (relaxed bottom and array: the owner's own; top_seen came from an acquire of top, so the
 * places thieves had freed by then are ours; release bottom: publishes the entry). Its two
 * halves: crew__deque_room_at, the current array if place b is free by top_seen (else NULL),
 * and crew__deque_put_at, the push into it. */
static inline crew__deque_array *crew__deque_room_at(crew__deque *d, int64_t b) {
    crew__deque_array *a = crew__load_relaxed(&d->array);
    crew__assert(d->top_seen <= b); /* top never passes bottom between the owner's operations */
    return __builtin_expect((size_t)(b - d->top_seen) > a->mask, 0) ? NULL : a;
}
static inline void crew__deque_put_at(crew__deque *d, crew__deque_array *a, int64_t b,
                                      crew_fn fn, void *arg, uint64_t aux) {
    crew__deque_entry *e = &a->slot[(size_t)b & a->mask];
    crew__store_relaxed(&e->fn, fn);
    crew__store_relaxed(&e->arg, arg);
    crew__store_relaxed(&e->aux, aux);
    crew__store_release(&d->bottom, b + 1);
}
static inline int crew__deque_push_value_at(crew__deque *d, int64_t b, crew_fn fn, void *arg,
                                            uint64_t aux) {
    crew__deque_array *a = crew__deque_room_at(d, b);
    if (__builtin_expect(!a, 0))
        return crew__deque_push_slow(d, fn, arg, aux);
    crew__deque_put_at(d, a, b, fn, arg, aux);
    return CREW_OK;
}
static inline int crew__deque_push_value(crew__deque *d, crew_fn fn, void *arg, uint64_t aux) {
    /* Relaxed: the owner's own bottom. */
    return crew__deque_push_value_at(d, crew__load_relaxed(&d->bottom), fn, arg, aux);
}
/* Owner: push one task: by value if it is a copy a take made (CREW__TASK_COPY), else by
 * address. */
static inline int crew__deque_push1(crew__deque *d, crew_task *t) {
    if (t->crew_flags_ & CREW__TASK_COPY)
        return crew__deque_push_value(d, t->fn, t->arg,
                                      crew__deque_aux(t->crew_private_.slot, t->priority));
    return crew__deque_push_value(d, NULL, t, 0);
}
int crew__deque_push_ptrs(crew__deque *d, crew_task *const *v, size_t n); /* *v[0..n) */
/* Owner: make room for n more tasks now, so a later push of at most n cannot fail. */
int crew__deque_reserve(crew__deque *d, size_t n);
/* Owner: the claim of every owner's take on its newest task, at place b (bottom - 1, read
 * relaxed by the owner): true if the task is the owner's now (bottom is b), false (bottom is
 * b + 1 again) if the deque was empty, a thief won its last task, or, with claimers non-NULL,
 * a batch claim runs (see crew__deque_steal_batch). The release store of bottom, then a full
 * fence: the claim on place b must be globally ordered before top is read, or a thief and the
 * owner could both take the last task (the paper's seq_cst fence). Inline: a join's take-back
 * (crew__deque_take_back) and crew__deque_take share it. */
static inline bool crew__deque_claim_newest(crew__deque *d, int64_t b, atomic_uint *claimers) {
#ifdef CREW__TSAN /* the same order without a fence, which TSan does not model (atomic.h) */
    crew__exchange_seq_cst(&d->bottom, b);
    bool busy = claimers && crew__load_seq_cst(claimers) != 0;
    int64_t t = crew__load_seq_cst(&d->top);
#else
    crew__store_release(&d->bottom, b);
    crew__fence_seq_cst();
    /* After the fence (the owner's half of the batch protocol, crew__deque_steal_batch);
     * acquire: a count a claimer left shows its claim to the read of top below. */
    bool busy = claimers && crew__load_acquire(claimers) != 0;
    int64_t t = crew__load_relaxed(&d->top); /* relaxed: ordered by the fence */
#endif
    /* Top never passes the bottom before this take: the place taken, b, is in [t, b + 1). */
    crew__assert_msg(t <= b + 1, "top %lld, bottom %lld", (long long)t, (long long)b + 1);
    if (t > b || busy) {                        /* empty, or a batch claim runs: undo */
        crew__store_release(&d->bottom, b + 1); /* release: see deque.c's file comment */
        return false;
    }
    if (t == b) {
        /* The last task: race the thieves for it. Seq_cst on success (the paper's order);
         * relaxed on failure, since we then return nothing. */
        bool won = crew__cas_seq_cst(&d->top, &t, t + 1);
        crew__store_release(&d->bottom, b + 1); /* release: see deque.c's file comment */
        return won;
    }
    return true;
}
/* Owner: crew__deque_claim_newest for the task at place b if it is the newest (bottom is
 * b + 1), for a deque without batch claims (a worker's own): 1, the task is the owner's now; 0,
 * a thief won it (bottom is b + 1 again); -1, bottom is not b + 1 (nothing changed). The check
 * and the store of bottom are one seq_cst compare-and-swap (only the owner writes bottom, so it
 * fails only on a bottom that is not b + 1), which orders the claim before the read of top as
 * claim_newest's store and fence do, with the check in the same instruction on x86 (lock
 * cmpxchg). */
static inline int crew__deque_claim_at(crew__deque *d, int64_t b) {
    int64_t end = b + 1;
    /* Seq_cst: the claim on b before the read of top in the one total order (the paper's
     * fence); ThreadSanitizer models it, unlike a fence. */
    if (!crew__cas_seq_cst(&d->bottom, &end, b))
        return -1;
    int64_t t = crew__load_seq_cst(&d->top); /* seq_cst: after the claim, as above */
    /* Top never passes the bottom before this take: the place taken, b, is in [t, b + 1). */
    crew__assert_msg(t <= b + 1, "top %lld, bottom %lld", (long long)t, (long long)b + 1);
    if (t < b)
        return 1;
    if (t == b) {
        /* The last task: race the thieves for it, as claim_newest does (seq_cst on success,
         * relaxed on failure). */
        bool won = crew__cas_seq_cst(&d->top, &t, t + 1);
        crew__store_release(&d->bottom, b + 1); /* release: see deque.c's file comment */
        return won;
    }
    crew__store_release(&d->bottom, b + 1); /* a thief took it: undo (release: as above) */
    return 0;
}
/* Owner: crew__deque_put_at for a join's offer at place b, in the array a that
 * crew__deque_room_at gave, and then a look at top: true if no older task lay below the offer
 * when it landed (top had reached b), so a worker that went to sleep may have seen none of
 * them, and the caller must make the wake-up check (crew__wake_work). The store of bottom
 * and the load of top are seq_cst, the order the check needs: a thief whose claim on top the
 * load missed claimed after the offer landed, and its next look (after its fence, as every
 * steal and every sleep makes one) finds the offer; a worker that counted itself a sleeper
 * before its last look missed the offer has its count seen by the check. */
static inline bool crew__deque_offer_at(crew__deque *d, crew__deque_array *a, int64_t b,
                                        crew_fn fn, void *arg, uint64_t aux) {
    crew__deque_entry *e = &a->slot[(size_t)b & a->mask];
    crew__store_relaxed(&e->fn, fn); /* relaxed: published by the store of bottom */
    crew__store_relaxed(&e->arg, arg);
    crew__store_relaxed(&e->aux, aux);
    /* Seq_cst (so also release: publishes the entry): before the load of top below in the one
     * total order, as the sleepers' fence of crew__wake_work orders a submission's push. */
    crew__store_seq_cst(&d->bottom, b + 1);
    return crew__load_seq_cst(&d->top) >= b; /* seq_cst: after the store, as above */
}
/* Owner: is bottom b (the newest task, if any, at place b - 1)? Relaxed: the owner's own. */
static inline bool crew__deque_bottom_is(crew__deque *d, int64_t b) {
    return crew__load_relaxed(&d->bottom) == b;
}
/* Owner: the argument held at place b (relaxed: the owner's own writes), for checks. */
static inline void *crew__deque_arg_at(crew__deque *d, int64_t b) {
    crew__deque_array *a = crew__load_relaxed(&d->array); /* relaxed: the owner's own */
    return crew__load_relaxed(&a->slot[(size_t)b & a->mask].arg);
}
/* crew__deque_take's claim (deque.c), and crew__deque_take_unless's with claimers: the
 * owner's take of its newest task through crew__deque_claim_newest, the task read from its
 * place once it is the owner's (no thief reads a place at or past top, and only the owner
 * writes places). Inline for a worker's take from its own deque (sched_steal.c), once per
 * task it runs from there. */
static inline crew_task *crew__deque_take_newest(crew__deque *d, crew_task *buf,
                                                 atomic_uint *claimers) {
    /* Relaxed: the owner's own bottom and array. */
    int64_t b = crew__load_relaxed(&d->bottom) - 1;
    crew__deque_array *a = crew__load_relaxed(&d->array);
    if (!crew__deque_claim_newest(d, b, claimers))
        return NULL;
    crew__deque_entry *e = &a->slot[(size_t)b & a->mask];
    /* b is in [top, bottom): its place holds a task (a function, or a task's address). */
    crew__assert(crew__load_relaxed(&e->fn) || crew__load_relaxed(&e->arg));
    return crew__deque_task(crew__load_relaxed(&e->fn), crew__load_relaxed(&e->arg),
                            crew__load_relaxed(&e->aux), buf);
}
crew_task *crew__deque_take_claim(crew__deque *d, crew_task *buf);
/* Owner: a join's take-back (crew_join). 1: the newest task above mark was (fn, arg), held by
 * value, and is claimed now (gone from the deque; the caller runs it); 0: no task lies above
 * mark, or a thief won the last one (the task was stolen); -1: another task lies on top, left
 * where it is. arg must be given to no other task while (fn, arg) may lie in the deque (a
 * join's record). The place is read before the claim: only the owner writes places, so it
 * holds what the owner last pushed there, stolen or not (a stolen one fails the claim). With
 * claimers: as crew__deque_take_unless (0 while a batch claim runs). */
static inline int crew__deque_take_back(crew__deque *d, int64_t mark, crew_fn fn, void *arg,
                                        atomic_uint *claimers) {
    int64_t b = crew__load_relaxed(&d->bottom) - 1; /* relaxed: the owner's own */
    if (b < mark)
        return 0;
    crew__deque_array *a = crew__load_relaxed(&d->array); /* relaxed: the owner's own */
    crew__deque_entry *e = &a->slot[(size_t)b & a->mask];
    /* Relaxed: the owner's own writes. The argument alone tells the offer: a join's arg is its
     * record, on its caller's stack for the whole call, which no other task is given (a record
     * of a join made in between lies deeper on that stack, or on another thread's). */
    if (crew__load_relaxed(&e->arg) != arg)
        return -1;
    crew__assert(crew__load_relaxed(&e->fn) == fn);
    return crew__deque_claim_newest(d, b, claimers) ? 1 : 0;
}
/* Owner: the newest task, or NULL (a task held by value is copied into buf, see
 * crew__deque_task). Inlined: an empty deque needs no claim and no fence. Top never decreases
 * and only the owner moves bottom, so a top at or past bottom, however stale (relaxed), proves
 * it empty; a stale lower top takes the claim. Most takes of a worker fed from outside find its
 * own deque empty. */
static inline crew_task *crew__deque_take(crew__deque *d, crew_task *buf) {
    if (crew__load_relaxed(&d->top) >= crew__load_relaxed(&d->bottom))
        return NULL;
    return crew__deque_take_claim(d, buf);
}
/* A thief's look at the ends: top in *t, bottom returned. */
static inline int64_t crew__deque_thief_look(crew__deque *d, int64_t *t) {
    /* Acquire, full fence, acquire: the paper's orders for reading top before bottom. */
#ifdef CREW__TSAN /* the same order without a fence, which TSan does not model (atomic.h) */
    *t = crew__load_seq_cst(&d->top);
    return crew__load_seq_cst(&d->bottom);
#else
    *t = crew__load_acquire(&d->top);
    crew__fence_seq_cst();
    return crew__load_acquire(&d->bottom);
#endif
}
/* Anyone: claim the oldest task, its place's fields in *fn, *arg and *aux (as in
 * crew__deque_entry: fn NULL for a task given by address, arg); false if the deque was empty
 * or a race was lost, which sets *contended. Inlined: a helping waiter fed from outside steals
 * every task it runs (crew__deque_steal, and steal_ext.h's crew__ext_steal_own). */
static inline bool crew__deque_steal_entry(crew__deque *d, crew_fn *fn, void **arg,
                                           uint64_t *aux, bool *contended) {
    int64_t t, b = crew__deque_thief_look(d, &t);
    if (t >= b)
        return false;
    /* Acquire (the paper's consume): the array and its slots as the owner published them. The
     * entry is read before the claim (after it, the owner may reuse the place), and handed
     * out only if the claim succeeds. */
    crew__deque_array *a = crew__load_acquire(&d->array);
    crew__deque_entry *e = &a->slot[(size_t)t & a->mask];
    crew_fn f = crew__load_relaxed(&e->fn);
    void *g = crew__load_relaxed(&e->arg);
    uint64_t x = crew__load_relaxed(&e->aux);
    /* Seq_cst on success (the paper's order); a failed race means another thread took it. */
    if (!crew__cas_seq_cst(&d->top, &t, t + 1)) {
        *contended = true;
        return false;
    }
    crew__assert(f || g); /* t is in [top, bottom): its place holds a task */
    *fn = f;
    *arg = g;
    *aux = x;
    return true;
}
/* Anyone: the oldest task, or NULL (by value: copied into buf, and only if the claim succeeds:
 * a lost race leaves buf as it was); *contended is set when a race was lost. */
static inline crew_task *crew__deque_steal(crew__deque *d, crew_task *buf, bool *contended) {
    crew_fn fn;
    void *arg;
    uint64_t aux;
    if (!crew__deque_steal_entry(d, &fn, &arg, &aux, contended))
        return NULL;
    return crew__deque_task(fn, arg, aux, buf);
}
/* Anyone: claim the oldest tasks, at most max, with one compare-and-swap, copying their places
 * into out[0..n); returns n (0: empty, or a race lost, which sets *contended). A task held by
 * value whose function is stop (non-NULL) is claimed only first: the batch ends before one at
 * a later place (a join's half must be run or handed back by its taker at once, join.h). The
 * places are read before the claim, as a steal reads its one. claimers counts the claims in
 * progress, for a deque whose owner takes with crew__deque_take_unless (and never with
 * crew__deque_take), which gives way to them: a take by the owner in the middle of a claim of
 * several could take one of them too. */
size_t crew__deque_steal_batch(crew__deque *d, crew__deque_entry *out, size_t max, crew_fn stop,
                               atomic_uint *claimers, bool *contended);
/* Owner: crew__deque_take, but NULL also while a batch claim counted in claimers runs. */
crew_task *crew__deque_take_unless(crew__deque *d, crew_task *buf, atomic_uint *claimers);
/* A place's task, as a take returns it (see crew__deque_task). */
static inline crew_task *crew__deque_entry_task(const crew__deque_entry *e, crew_task *buf) {
    return crew__deque_task(crew__load_relaxed(&e->fn), crew__load_relaxed(&e->arg),
                            crew__load_relaxed(&e->aux), buf);
}
/* An estimate (relaxed loads; callers that must not miss a task order it with a fence first);
 * inlined, since thieves test every deque with it before they try a steal. */
static inline size_t crew__deque_size(crew__deque *d) {
    int64_t b = crew__load_relaxed(&d->bottom);
    int64_t t = crew__load_relaxed(&d->top);
    return b > t ? (size_t)(b - t) : 0;
}
int64_t crew__deque_top(crew__deque *d);  /* the index of the oldest task (relaxed) */

#endif /* CREW_DEQUE_H */
