/*
 * group.h -- the slot map of groups (group.c). A slot holds a generation counter, the
 * number of open (accepted, unfinished) tasks and the group's marks (cancelled, lost a task,
 * loss reported), packed in one 64-bit word so one atomic load tells a waiter all of them.
 * Slots live in chunks of doubling size that never move, so a reader can find a slot without
 * the lock; slot 0 is never issued (it is CREW_HANDLE_NONE).
 */
#ifndef CREW_GROUP_H
#define CREW_GROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "atomic.h"
#include "crew.h"
#include "ec.h"

#define CREW__SLOT_CHUNK0 64u /* slots in chunk 0; chunk k holds CREW__SLOT_CHUNK0 << k */
#define CREW__SLOT_CHUNKS 27u /* enough chunks for 2^32 slots */

typedef struct crew__slot {
    /* gen << 36 | marks << 32 | open (CREW__ST_*, crew__open_of below), changed with atomic
     * read-modify-writes; see group.c for the protocol and the orders. One word, so that
     * whether a crew_cancel took effect, whether the group lost a task and whether it has
     * ended are decided together: a finisher's last decrement returns the marks, a canceller's
     * compare-and-swap sees the end. */
    _Atomic uint64_t state;
    /* Waits (crew_wait, crew_wait_timed) in progress on this slot, whatever their generation:
     * a slot kept for a reported loss is not freed while one is (group.c, keep_reported), so
     * a wait that began while its group was open gets the group's answer. Seq_cst, taken
     * before the wait's first look at state (or, on a worker's own deque or a thread's own
     * external slot, while the wait holds one of the group's tasks, so the slot is on no kept
     * list: wait_own.c) and dropped after its answer; a wait whose own tasks end the group
     * takes none. A freer that reads 0 here comes, in the single total order, before the
     * wait's increment, so the wait began after the slot was let go. */
    _Atomic uint32_t holds;
    /* Central queue's lock: newest task of the group queued there, linked by
     * crew_private_.gnext (schedule.c). */
    crew_task *queued;
    /* The newest generation handed out for this slot (crew__group_open), CREW__GEN_MAX once the
     * generation has wrapped: a handle of a later generation was never issued (forged), and
     * is refused as such (crew__gen_issued). Written by the slot's owner (the opener, or the
     * finisher at a wrap); read relaxed: a caller holding a handle got it, through its own
     * synchronisation, after the open that stored its generation here. */
    _Atomic uint32_t issued_gen;
    /* Free list link (relaxed: ordered by the free list head's CAS, group.c), and the kept
     * losses' list link (under kept_lock) while the slot is on that list. */
    _Atomic uint32_t next_free;
    /* Threads asleep in a wait for this group (ec.h); notified when it finishes or gets work. */
    crew__ec waiters;
    /* Tasks of the group queued in queues that keep no group lists (PER_WORKER, the MultiQueue);
     * relaxed, changed under those queues' locks (schedule.c). */
    atomic_uint scattered;
    /* Completion callbacks (crew_notify) of the open group, a stack of crew_submit nodes linked
     * by crew_private_.gnext, every one of them for the generation in state. Pushed by
     * compare-and-swap under the slot map's notify_lock (one registrant at a time), taken
     * whole by exchange (the finisher in crew__group_done, or a registrant that finds the
     * group finished). Seq_cst: a registrant pushes then reads state, the finisher decrements
     * state then reads this (Dekker's pattern): one of them sees the other (notify.c). */
    crew_task *_Atomic notify;
} crew__slot;

typedef struct crew__slotmap {
    /* Chunk k; published with release after it is initialised, read with acquire. */
    crew__slot *_Atomic chunk[CREW__SLOT_CHUNKS];
    /* The slots of groups whose loss a wait reported, oldest first (linked by next_free),
     * at most CREW__LOSSES_KEPT of them plus those held by a wait (crew__slot.holds): a
     * report beyond that frees the oldest one not held (group.c, keep_reported). Only on a
     * loss, so a mutex. */
    pthread_mutex_t kept_lock;
    uint32_t kept_head, kept_tail, kept_n; /* kept_lock */
    /* Slots issued so far plus one (slot 0). Stored with release after the chunk that holds the
     * new slot is published; loaded with acquire by validators, so slot < issued implies the
     * chunk pointer is visible. */
    _Atomic uint32_t issued;
    /* Free slots, a Treiber stack: tag << 32 | first slot (0 = none); the tag counts pops, so a
     * slot popped and pushed back between another thread's read and its CAS cannot fool it. */
    _Atomic uint64_t free_head;
    pthread_mutex_t grow_lock; /* new slots and chunks */
    /* crew_notify's registrations, one at a time, so that a slot's callback list only ever
     * holds callbacks of one generation (notify.c). Never taken by a finisher. */
    pthread_mutex_t notify_lock;
    /* Fixed after init (pool.c): what queues a finished group's callbacks, and its first
     * argument (the pool). A function pointer keeps group.c free of the pool's code. */
    void (*on_notify)(void *owner, crew_task *list);
    void *owner;
    /* Fixed: this pool's tag, 1..CREW__POOL_TAGS, in the top bits of its handles' slot field,
     * so a handle given to another pool is refused (submit.c assigns it: distinct among the
     * pools alive at once, up to CREW__POOL_TAGS of them). */
    uint32_t tag;
} crew__slotmap;

/* A handle's slot field: the pool's tag in the top 8 bits, the slot's index in the low 24. A
 * pool has at most 2^24 - 1 slots (groups open, plus those kept for a loss: see
 * crew__group_report). Inside crew, tasks, frames and the strategies use the index alone. */
#define CREW__SLOT_BITS 24u
#define CREW__SLOT_MAX ((1u << CREW__SLOT_BITS) - 1u)
#define CREW__POOL_TAGS 255u
static inline uint32_t crew__slot_index(uint32_t handle_slot) {
    return handle_slot & CREW__SLOT_MAX;
}
/* h as this pool hands it out (index and tag) / as crew uses it inside (the index alone). */
static inline crew_handle crew__handle_public(const crew__slotmap *m, crew_handle h) {
    return (crew_handle){crew__slot_index(h.slot) | m->tag << CREW__SLOT_BITS, h.gen};
}
static inline crew_handle crew__handle_local(crew_handle h) {
    return (crew_handle){crew__slot_index(h.slot), h.gen};
}

/* The state word: the generation in the top 28 bits, the marks of the generation in the 4
 * below (a new generation starts without them), the open count in the low 32 bits (a group
 * holds up to 2^32 - 1 unfinished tasks: crew.h, CREW_ERANGE). */
/* crew_cancel took effect: drop its tasks, take no more */
#define CREW__ST_CANCEL ((uint64_t)1 << 35)
#define CREW__ST_DROPPED ((uint64_t)1 << 34)  /* it lost a task other than to its start-by time */
#define CREW__ST_EXPIRED ((uint64_t)1 << 33)  /* it lost a task to its start-by time */
#define CREW__ST_REPORTED ((uint64_t)1 << 32) /* finished with a loss, and a wait has reported it */
#define CREW__ST_LOSS (CREW__ST_CANCEL | CREW__ST_DROPPED | CREW__ST_EXPIRED)
#define CREW__OPEN_MAX UINT32_MAX /* open tasks of one group (CREW_ERANGE beyond) */
#define CREW__GEN_SHIFT 36u
#define CREW__GEN_MAX ((1u << 28) - 1u) /* generations run 1..CREW__GEN_MAX, then wrap to 1 */
#define crew__gen_of(state) ((uint32_t)((state) >> CREW__GEN_SHIFT))
#define crew__gen_state(gen) ((uint64_t)(gen) << CREW__GEN_SHIFT) /* no mark, no task open */
#define crew__open_of(state) ((uint32_t)(state))
/* Reported losses whose slots are kept (crew__group_report; crew.h, crew_wait). */
#define CREW__LOSSES_KEPT 256u

/* Slot number -> (chunk k, offset in it): chunk k holds slots [64 (2^k - 1), 64 (2^(k+1) - 1)). */
static inline unsigned crew__slot_chunk_of(uint32_t slot, uint64_t *offset) {
    uint64_t v = (uint64_t)slot + CREW__SLOT_CHUNK0;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned k = msb - 6u; /* log2(CREW__SLOT_CHUNK0) == 6 */
    *offset = v - ((uint64_t)CREW__SLOT_CHUNK0 << k);
    return k;
}
/* Inlined: every group operation and every task of a group looks its slot up. */
static inline crew__slot *crew__slot_at(crew__slotmap *m, uint32_t slot) {
    uint64_t offset;
    unsigned k = crew__slot_chunk_of(slot, &offset);
    /* Acquire: pairs with the release in new_slot(), so the chunk's initialisation is visible. */
    crew__slot *chunk = crew__load_acquire(&m->chunk[k]);
    return &chunk[offset];
}
/* Is slot one this map has issued? (Lock-free.) */
bool crew__slot_valid(crew__slotmap *m, uint32_t slot);
/* Could this map have issued h (a handle as handed out)? Its tag must be this pool's, its slot
 * one it issued, and its generation not 0, which no group ever gets (group.c skips it);
 * CREW_HANDLE_NONE is not a group. */
static inline bool crew__handle_valid(crew__slotmap *m, crew_handle h) {
    return h.slot >> CREW__SLOT_BITS == m->tag && h.gen != 0 &&
           crew__slot_valid(m, crew__slot_index(h.slot));
}
/* Free slots kept by one worker (no shared line touched to open and free its groups). */
#define CREW__SLOT_CACHE 64u
typedef struct crew__slot_cache {
    unsigned n;
    uint32_t slot[CREW__SLOT_CACHE];
} crew__slot_cache;

/* Open a new group of n tasks (at most CREW__OPEN_MAX), taking the slot from cache if it has
 * one (cache: the calling worker's, or NULL). OUT: *h. CREW_OK or CREW_ENOMEM. */
int crew__group_open(crew__slotmap *m, uint32_t n, crew_handle *h, crew__slot_cache *cache);
/* Put every slot of cache back on the slot map's free list, leaving it empty. */
void crew__slots_give_back(crew__slotmap *m, crew__slot_cache *cache);
/* Add n tasks to an open group. CREW_OK, CREW_ESTALE (it finished, or h was never issued: see
 * crew__gen_issued), CREW_ECANCELED (crew_cancel) or CREW_ERANGE. */
int crew__group_add(crew__slotmap *m, crew_handle h, uint32_t n);
/* A submission of n tasks through *h, whose group has finished (crew__group_add said
 * CREW_ESTALE; its generation was issued): open a new group in its place and store it in *h.
 * If the finished group lost tasks and no wait has reported it, the new group carries the loss
 * on (its marks: its wait answers CREW_ECANCELED or CREW_EEXPIRED too), and a cancelled one
 * takes no more tasks (CREW_ECANCELED); once reported, the new group starts clean. Once the
 * new handle is stored, the caller reports the old group (crew__group_report), whose loss the
 * new group now answers for: no link, no chain. CREW_OK, CREW_ECANCELED, CREW_ENOMEM or
 * CREW_ERANGE. */
int crew__group_reopen(crew__slotmap *m, crew_handle *h, uint32_t n, crew__slot_cache *cache);
/* Undo a successful crew__group_open or crew__group_reopen whose tasks could not be queued (the
 * handle was never handed out). */
void crew__group_abandon(crew__slotmap *m, uint32_t slot, crew__slot_cache *cache);
/* A wait is about to return status for group h (as crew uses it inside): if it is a loss, the
 * loss is now reported: the group keeps its slot (and its answer) only until CREW__LOSSES_KEPT
 * more losses have been reported and no wait holds it. Also called with a loss status for a
 * finished group whose loss a new group of the same handle variable carries on
 * (crew__group_reopen; submit.c, once the new group's handle is stored). Returns status. */
int crew__group_report(crew__slotmap *m, crew_handle h, int status);
/* How tasks left their group (crew__group_done, crew__tasks_finished). */
enum crew__end {
    CREW__RAN = 0,    /* ran, or were never queued after all */
    CREW__LOST = 1,   /* dropped: crew_cancel, a cancelling shutdown, a full queue */
    CREW__EXPIRED = 2 /* dropped: their start-by time passed */
};
/* n tasks of slot ended as `how` says. Returns true if the group finished (its open count
 * reached 0); callbacks registered on it (crew_notify) are then taken off the slot, before the
 * slot can be reused, and handed to m->on_notify. A group that lost tasks, or was cancelled,
 * keeps its slot until its loss is reported (crew__group_report). */
bool crew__group_done(crew__slotmap *m, uint32_t slot, uint32_t n, enum crew__end how,
                      crew__slot_cache *cache);
/* n tasks of slot that ran, if they are all the group's open tasks: end them and the group
 * with one compare-and-swap (as crew__group_done would, callbacks and slot included) and
 * return true, with *prev the state before (its marks are the group's answer: a waiter that
 * held those tasks knows it without looking again, crew__status_of). Else (other tasks open,
 * or the state changed meanwhile) nothing changes: false. */
bool crew__group_done_all(crew__slotmap *m, uint32_t slot, uint32_t n, uint64_t *prev,
                          crew__slot_cache *cache);
/* A task that is not one of the group's own tasks was lost on its behalf (a graph run's node
 * that never started, graph.c): mark the open group of slot as crew__group_done's CREW__LOST
 * would. The caller holds one of the group's tasks (it is open). */
void crew__group_lost(crew__slotmap *m, uint32_t slot);
/* Cancel an open group: its tasks not yet started will be dropped. CREW_OK or CREW_ESTALE. */
int crew__group_cancel(crew__slotmap *m, crew_handle h);
/* The group's status without the lock: 1 = still open, CREW_OK = finished, CREW_ECANCELED,
 * CREW_EEXPIRED. */
int crew__group_status(crew__slotmap *m, crew_handle h);
/* The same, given the slot (a waiter looks it up once). A group that lost tasks keeps its slot
 * and its marks until its loss is reported, CREW__LOSSES_KEPT more are and no wait holds it
 * (crew__group_report), so it stays CREW_ECANCELED or CREW_EEXPIRED until then; after that,
 * CREW_OK. */
/* The answer a finished group's marks give (st: its state at its end, or after). */
static inline int crew__status_of(uint64_t st) {
    if (!(st & CREW__ST_LOSS))
        return CREW_OK;
    return st & (CREW__ST_CANCEL | CREW__ST_DROPPED) ? CREW_ECANCELED : CREW_EEXPIRED;
}
static inline int crew__slot_status(crew__slot *sl, uint32_t gen) {
    /* Acquire: pairs with the releases in crew__group_done; a finished answer happens-after
     * every task of the group. The marks come in the same load. */
    uint64_t st = crew__load_acquire(&sl->state);
    if (crew__gen_of(st) != gen)
        return CREW_OK; /* the generation moved on: finished without a loss kept */
    if (crew__open_of(st) != 0)
        return 1;
    return crew__status_of(st);
}
/* Is the group of slot, generation gen, cancelled? Asked by a thread holding one of its tasks
 * (so the group is open) or about a finished group. Relaxed: promptly, not at the instant
 * crew_cancel returns (crew.h); the bit test comes first, the generation's only if it is set. */
static inline bool crew__slot_cancelled(crew__slot *sl, uint32_t gen) {
    uint64_t st = crew__load_relaxed(&sl->state);
    return (st & CREW__ST_CANCEL) && crew__gen_of(st) == gen;
}
/* Was generation gen of slot sl ever handed out? A handle that passes crew__handle_valid but
 * names a later generation than the slot has reached is forged. Only asked once the group
 * looks finished (a handle of an open group is its own proof). */
static inline bool crew__gen_issued(crew__slot *sl, uint32_t gen) {
    return gen <= crew__load_relaxed(&sl->issued_gen); /* relaxed: see crew__slot */
}
/* A wait in progress on sl (crew__slot.holds): taken before its first look at the state,
 * dropped after its answer (and its report). Seq_cst: see crew__slot.holds. */
static inline void crew__slot_hold(crew__slot *sl) { crew__fetch_add_seq_cst(&sl->holds, 1u); }
static inline void crew__slot_unhold(crew__slot *sl) { crew__fetch_sub_seq_cst(&sl->holds, 1u); }
int crew__slotmap_init(crew__slotmap *m); /* CREW_OK or CREW_ENOMEM */
void crew__slotmap_free(crew__slotmap *m);

#endif /* CREW_GROUP_H */
