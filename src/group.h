/*
 * group.h -- the slot map of groups (group.c). A slot holds a generation counter and the
 * number of open (accepted, unfinished) tasks, packed in one 64-bit word so one atomic load
 * tells a waiter both. Slots live in chunks of doubling size that never move, so a reader can
 * find a slot without the lock; slot 0 is never issued (it is CREW_HANDLE_NONE).
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
    /* gen << 32 | open, changed with atomic read-modify-writes; see group.c for the orders. */
    _Atomic uint64_t state;
    /* The generation of the last group of this slot that was cancelled (crew_cancel, or a
     * shutdown that dropped its tasks); 0 = none (0 is never a group's generation). Written
     * with release (crew__group_done) or compare-and-swap (crew__group_cancel, which must not
     * erase a later group's mark); set before the decrement that lets open reach 0, so a
     * waiter that acquires the group's end sees it; workers read it relaxed before running a
     * task of the group (promptly, not at the instant crew_cancel returns). Naming the
     * generation, not just "cancelled", keeps a late crew_cancel from touching a later group
     * that reuses the slot (a cancelled group's own slot is never reused: crew__group_done). */
    _Atomic uint32_t cancelled_gen;
    /* The generation of the last group of this slot that lost a task (dropped by crew_cancel,
     * a cancelling shutdown, a full queue's drop-oldest, or its start-by time): its crew_wait
     * reports CREW_ECANCELED, or CREW_EEXPIRED if every task it lost was late (dropped_gen
     * and cancelled_gen do not name it). Only the group's own dropped tasks write it, with
     * release, before their decrement; unlike cancelled_gen it drops nothing more (one task
     * lost to a full queue does not cancel the rest of its group). */
    _Atomic uint32_t lost_gen;
    /* The same, for tasks lost other than to their start-by time; written like lost_gen, just
     * before it. */
    _Atomic uint32_t dropped_gen;
    /* Central queue's lock: newest task of the group queued there, linked by
     * crew_private_.gnext (schedule.c). */
    crew_task *queued;
    /* The newest generation handed out for this slot (crew__group_open), UINT32_MAX once the
     * generation has wrapped: a handle of a later generation was never issued (forged), and
     * is refused as such (crew__gen_issued). Written by the slot's owner (the opener, or the
     * finisher at a wrap); read relaxed: a caller holding a handle got it, through its own
     * synchronisation, after the open that stored its generation here. */
    _Atomic uint32_t issued_gen;
    /* Free list link (relaxed: ordered by the free list head's CAS, group.c). */
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
 * pool has at most 2^24 - 1 slots (groups open, plus those retired by cancellation). Inside
 * crew, tasks, frames and the strategies use the index alone. */
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

#define crew__gen_of(state) ((uint32_t)((state) >> 32))
#define crew__open_of(state) ((uint32_t)(state))

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

/* Open a new group of n tasks, taking the slot from cache if it has one (cache: the calling
 * worker's, or NULL). OUT: *h. CREW_OK or CREW_ENOMEM. */
int crew__group_open(crew__slotmap *m, uint32_t n, crew_handle *h, crew__slot_cache *cache);
/* Put every slot of cache back on the slot map's free list, leaving it empty. */
void crew__slots_give_back(crew__slotmap *m, crew__slot_cache *cache);
/* Add n tasks to an open group. CREW_OK, CREW_ESTALE (it finished, or h was never issued: see
 * crew__gen_issued), CREW_ECANCELED (crew_cancel) or CREW_ERANGE. */
int crew__group_add(crew__slotmap *m, crew_handle h, uint32_t n);
/* A group just opened (h, none of its tasks queued yet) in place of a finished one whose answer
 * was status (crew__slot_status): a loss (CREW_ECANCELED, CREW_EEXPIRED) carries over, so the
 * handle variable that now names the new group keeps reporting it. */
void crew__group_inherit(crew__slotmap *m, crew_handle h, int status);
/* Undo a successful crew__group_open whose tasks could not be queued (the handle was never
 * handed out). */
void crew__group_abandon(crew__slotmap *m, uint32_t slot, crew__slot_cache *cache);
/* How tasks left their group (crew__group_done, crew__tasks_finished). */
enum crew__end {
    CREW__RAN = 0,    /* ran, or were never queued after all */
    CREW__LOST = 1,   /* dropped: crew_cancel, a cancelling shutdown, a full queue */
    CREW__EXPIRED = 2 /* dropped: their start-by time passed */
};
/* n tasks of slot ended as `how` says. Returns true if the group finished (its open count
 * reached 0); callbacks registered on it (crew_notify) are then taken off the slot, before the
 * slot can be reused, and handed to m->on_notify. */
bool crew__group_done(crew__slotmap *m, uint32_t slot, uint32_t n, enum crew__end how,
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
 * (crew__group_done), so it stays CREW_ECANCELED. */
static inline int crew__slot_status(crew__slot *sl, uint32_t gen) {
    /* Acquire: pairs with the releases in crew__group_done; a finished answer happens-after
     * every task of the group. */
    uint64_t st = crew__load_acquire(&sl->state);
    if (crew__gen_of(st) == gen && crew__open_of(st) != 0)
        return 1;
    /* Relaxed: written before the release that ended the group (see crew__slot). */
    bool cancelled = crew__load_relaxed(&sl->cancelled_gen) == gen;
    if (crew__load_relaxed(&sl->lost_gen) != gen && !cancelled)
        return CREW_OK; /* the common case first: two loads, as without deadlines */
    return cancelled || crew__load_relaxed(&sl->dropped_gen) == gen
               ? CREW_ECANCELED
               : CREW_EEXPIRED;
}
/* Is the open group of slot, generation gen, cancelled? */
static inline bool crew__slot_cancelled(crew__slot *sl, uint32_t gen) {
    return crew__load_relaxed(&sl->cancelled_gen) == gen; /* see above */
}
/* Was generation gen of slot sl ever handed out? A handle that passes crew__handle_valid but
 * names a later generation than the slot has reached is forged. Only asked once the group
 * looks finished (a handle of an open group is its own proof). */
static inline bool crew__gen_issued(crew__slot *sl, uint32_t gen) {
    return gen <= crew__load_relaxed(&sl->issued_gen); /* relaxed: see crew__slot */
}
int crew__slotmap_init(crew__slotmap *m); /* CREW_OK or CREW_ENOMEM */
void crew__slotmap_free(crew__slotmap *m);

#endif /* CREW_GROUP_H */
