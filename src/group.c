/*
 * group.c -- groups of tasks: the slot map with open-task counts and generation counters of
 * Jendersie et al., §III-D, and what a group's end means for its slot.
 *
 * A group lives in a slot. The slot's state word packs the generation (high 28 bits), the
 * group's marks (4 bits) and the number of open tasks (low 32 bits, group.h): a waiter holding
 * {slot, gen} is done when the generation has moved on or the open count is 0, and one
 * acquire load tells it both, and the answer. When the count reaches 0 the generation advances (skipping 0) and
 * the slot goes on the free list, so a later group may reuse it without an old handle ever
 * mistaking the new group for its own.
 *
 * The generation wraps after CREW__GEN_MAX = 2^28 - 1 groups of one slot (the open count keeps
 * its full 32 bits: crew.h's CREW_ERANGE limit). A stale handle could then match a later group
 * only if it is used when its slot has served an exact multiple of 2^28 - 1 groups since, and
 * that group is still open (or keeps a loss). Opening and ending a group costs at least about
 * 100 ns, so one slot serves at most about 10^7 groups a second: the first possible match is
 * 2^28 / 10^7 = 27 s after the handle's group ended, and then only during that one group's
 * life (about 1 part in 2^28 of the slot's time). A handle is a value crew cannot track; the
 * 32-bit generation of before only stretched this to 430 s. Other slot maps accept the same
 * kind of limit: the Rust slotmap crate's 32-bit versions repeat after about 2^31 reuses of a
 * slot, EnTT's default 32-bit entity keeps 12 bits of version (4096 reuses). No bit is free
 * elsewhere in the word: the open count's 32 bits are crew.h's limit, and the four marks are
 * set by fetch_or on a live group (CANCEL, DROPPED, EXPIRED in any combination, then REPORTED
 * on an ended one): packing them in 3 bits would need a compare-and-swap loop per mark.
 * Handles of a generation above CREW__GEN_MAX were never issued and are refused as forged
 * (crew__gen_issued).
 *
 * Losses and cancels, all on the state word:
 *   - A task that is dropped (crew_cancel, a cancelling shutdown, a full queue) or expires
 *     sets DROPPED or EXPIRED by fetch_or before its decrement, while the group is open.
 *   - crew_cancel sets CANCEL by compare-and-swap, only from a state of the handle's generation
 *     with an open task. The finisher's last decrement is a read-modify-write of the same word,
 *     so the two are ordered: either the cancel came first (the decrement returns CANCEL and the
 *     group keeps its answer) or the decrement did (the cancel finds the count at 0, or the
 *     generation moved on, and answers CREW_ESTALE). There is no moment between a check and a
 *     mark in which the group can end: a cancel takes effect or answers CREW_ESTALE, never
 *     both.
 *   - A group that ends with a mark keeps its slot at (gen, marks, 0 open), its answer for
 *     waiters however late. A wait that returns the loss reports it (crew__group_report): the
 *     reporter sets REPORTED by compare-and-swap (one reporter per group) and appends the slot
 *     to the list of kept losses (keep_reported, under a mutex: only losses come here). Beyond
 *     CREW__LOSSES_KEPT, the oldest slot that no wait in progress holds (crew__slot.holds) is
 *     freed with the next generation. So memory holds only unreported losses, a fixed number
 *     of reported ones and those waits hold; a second wait, another thread's wait at the same
 *     moment, and any wait that began before the slot was let go get the answer.
 *   - A submission through a handle variable whose group has finished opens a new group
 *     (crew__group_reopen). If the finished group's loss is unreported, the new group carries
 *     its marks, and once the new handle is stored the old group counts as reported (it joins
 *     the kept list like any reported loss): a wait on the variable still sees the loss, and
 *     nothing links groups, so memory stays bounded however many groups the variable goes
 *     through. If the loss was reported, the new group starts clean.
 * The protocol is modelled in models/slots.pml (variant FIX_CANCEL_BIT with REPORT: one waiter
 * per group, a reported slot freed at once; the holds, the kept list and reopen are not).
 *
 * Slots sit in chunks that double in size (64, 128, 256, ... slots) and never move: the chunk
 * table is fixed, so a reader finds a slot without the lock while writers add chunks. There is no
 * fixed maximum number of groups.
 *
 * No lock on the way: opening pops a free slot from a tagged Treiber stack, adding and finishing
 * are read-modify-writes on the state word, and the thread whose decrement reaches 0 advances
 * the generation and pushes the slot back. Workers keep up to 64 free slots of their own, so
 * spawn-and-wait on a worker touches no shared line for its groups. Only making new slots takes
 * grow_lock.
 */
#include <stdlib.h>

#include "atomic.h"
#include "debug.h"
#include "group.h"

bool crew__slot_valid(crew__slotmap *m, uint32_t slot) {
    /* Acquire: pairs with the release in new_slot(); slot < issued implies its chunk is set. */
    return slot != 0 && slot < crew__load_acquire(&m->issued);
}

/* A slot never issued before. grow_lock held. */
static uint32_t new_slot(crew__slotmap *m) {
    /* Relaxed: issued only changes under grow_lock, which we hold. */
    uint32_t s = crew__load_relaxed(&m->issued);
    if (s > CREW__SLOT_MAX)
        return 0; /* 2^24 - 1 slots in use: report it as out of memory */
    uint64_t offset;
    unsigned k = crew__slot_chunk_of(s, &offset);
    if (crew__load_relaxed(&m->chunk[k]) == NULL) {
        size_t n = (size_t)CREW__SLOT_CHUNK0 << k;
        crew__slot *c = malloc(n * sizeof *c);
        if (!c)
            return 0;
        for (size_t i = 0; i < n; i++) {
            crew__atomic_init(&c[i].state, crew__gen_state(1)); /* generation 1, no open task */
            crew__atomic_init(&c[i].holds, 0u);
            crew__atomic_init(&c[i].issued_gen, 0u);
            c[i].queued = NULL;
            crew__atomic_init(&c[i].next_free, 0u);
            crew__ec_init(&c[i].waiters);
            crew__atomic_init(&c[i].scattered, 0u);
            crew__atomic_init(&c[i].notify, NULL);
        }
        /* Release: publish the initialised chunk; pairs with the acquire in crew__slot_at. */
        crew__store_release(&m->chunk[k], c);
    }
    /* Release: the chunk is visible before the slot counts as issued; pairs with the acquire
     * in crew__slot_valid. */
    crew__store_release(&m->issued, s + 1);
    return s;
}

/* Pop a free slot, 0 if none. */
static uint32_t pop_free(crew__slotmap *m) {
    /* Acquire (here and on a failed CAS): pairs with push_free's release, so the popped slot's
     * next_free and state are those its last finisher left. */
    uint64_t head = crew__load_acquire(&m->free_head);
    for (;;) {
        uint32_t s = (uint32_t)head;
        if (s == 0)
            return 0;
        /* Relaxed: a slot popped meanwhile makes the CAS below fail (the tag moved on). */
        uint32_t next = crew__load_relaxed(&crew__slot_at(m, s)->next_free);
        uint64_t tag = (head >> 32) + 1;
        if (crew__cas_acq_rel(&m->free_head, &head, tag << 32 | next))
            return s;
    }
}

static inline __attribute__((always_inline)) void push_free(crew__slotmap *m, uint32_t s);

/* Free slot s: into the caller's cache if it has room, else onto the shared stack. */
static void release_slot(crew__slotmap *m, uint32_t s, crew__slot_cache *cache) {
    /* Relaxed: this thread's own store, the group's end, was the last to its state. */
    crew__assert(crew__open_of(crew__load_relaxed(&crew__slot_at(m, s)->state)) == 0);
    if (cache && cache->n < CREW__SLOT_CACHE)
        cache->slot[cache->n++] = s;
    else
        push_free(m, s);
}

static inline __attribute__((always_inline)) void push_free(crew__slotmap *m, uint32_t s) {
    crew__slot *sl = crew__slot_at(m, s);
    uint64_t head = crew__load_relaxed(&m->free_head); /* relaxed: the CAS re-checks it */
    do {
        /* Relaxed: published by the release CAS below. */
        crew__store_relaxed(&sl->next_free, (uint32_t)head);
        /* Release: the slot's final state (new generation) and link reach the next popper. */
    } while (!crew__cas_weak_release(&m->free_head, &head, (head & ~(uint64_t)UINT32_MAX) | s));
}

void crew__slots_give_back(crew__slotmap *m, crew__slot_cache *cache) {
    while (cache->n != 0)
        push_free(m, cache->slot[--cache->n]);
}

int crew__group_open(crew__slotmap *m, uint32_t n, crew_handle *h, crew__slot_cache *cache) {
    /* A cached slot was freed by this thread (its final state is ours in program order). */
    uint32_t s = cache && cache->n ? cache->slot[--cache->n] : pop_free(m);
    if (s == 0) {
        pthread_mutex_lock(&m->grow_lock);
        s = new_slot(m);
        pthread_mutex_unlock(&m->grow_lock);
        if (s == 0)
            return CREW_ENOMEM;
    }
    crew__slot *sl = crew__slot_at(m, s);
    /* Relaxed load: the slot is ours (popped, or new) and nobody else writes its state now. */
    uint32_t gen = crew__gen_of(crew__load_relaxed(&sl->state));
    /* A free slot: no task, no mark (a new generation starts without them). */
    crew__assert(crew__load_relaxed(&sl->state) == crew__gen_state(gen));
    /* Relaxed: only the slot's owner writes it; see crew__slot. CREW__GEN_MAX (wrapped) stays. */
    if (gen > crew__load_relaxed(&sl->issued_gen))
        crew__store_relaxed(&sl->issued_gen, gen);
    crew__assert(gen != 0 && crew__gen_issued(sl, gen)); /* the handle names an issued one */
    /* Release, not relaxed: a waiter holding the previous group's handle may read this value
     * and return; the release (after our acquire of the slot from the free list, which the
     * finisher released) keeps that waiter ordered after the previous group's tasks, and later
     * adds and decrements, being read-modify-writes, continue this release sequence. Pairs with
     * crew__group_status. */
    crew__store_release(&sl->state, crew__gen_state(gen) | n);
    h->slot = s | m->tag << CREW__SLOT_BITS; /* as handed out: see crew__handle_public */
    h->gen = gen;
    return CREW_OK;
}

int crew__group_add(crew__slotmap *m, crew_handle h, uint32_t n) {
    crew__slot *sl = crew__slot_at(m, crew__slot_index(h.slot));
    /* Acquire (the load, and the CAS on failure: acq_rel is the variant that acquires on
     * failure; the add itself publishes nothing, and a waiter that sees the larger count just
     * waits): a caller that finds the group finished and opens a new group in its place
     * (crew__group_reopen) must happen-after its tasks, and read the marks they left. The
     * CAS keeps the add atomic against concurrent decrements, and refuses a group that
     * finished (its generation moved on, or its count is 0) or was cancelled (CANCEL set). */
    uint64_t st = crew__load_acquire(&sl->state);
    do {
        if (crew__gen_of(st) != h.gen || crew__open_of(st) == 0)
            return CREW_ESTALE; /* finished: crew__group_reopen decides, cancelled or not */
        if (st & CREW__ST_CANCEL)
            return CREW_ECANCELED;
        if ((uint64_t)crew__open_of(st) + n > CREW__OPEN_MAX)
            return CREW_ERANGE;
    } while (!crew__cas_acq_rel(&sl->state, &st, st + n));
    return CREW_OK;
}

int crew__group_reopen(crew__slotmap *m, crew_handle *h, uint32_t n, crew__slot_cache *cache) {
    crew_handle old = crew__handle_local(*h);
    crew__slot *sl = crew__slot_at(m, old.slot);
    /* Acquire: the finished group's tasks happen-before the new group (crew.h: a wait on the
     * new handle covers them), and their marks are read here. A finished group still at its
     * generation kept its slot for a loss (end_group); one whose generation moved on ended
     * clean, or its reported loss was let go. */
    uint64_t st = crew__load_acquire(&sl->state);
    uint64_t carry = 0;
    if (crew__gen_of(st) == old.gen && !(st & CREW__ST_REPORTED)) {
        crew__assert(crew__open_of(st) == 0); /* crew__group_add found it finished */
        if (st & CREW__ST_CANCEL)
            return CREW_ECANCELED; /* a cancelled group takes no more tasks (crew.h) */
        carry = st & (CREW__ST_DROPPED | CREW__ST_EXPIRED);
    }
    int rc = crew__group_open(m, n, h, cache);
    if (rc != CREW_OK || carry == 0)
        return rc;
    /* The loss goes on with the new group, not yet published (its tasks are not queued, its
     * handle not stored): a release read-modify-write, continuing the release sequence of
     * crew__group_open's store. The old group is reported by the caller once the new handle
     * is stored (crew.h: the wait on the variable reports the loss); until then a wait on a
     * copy of the old handle still gets it, and if such a wait reports it meanwhile, the new
     * group carries it all the same: a loss reported twice, never hidden. */
    crew__fetch_or_release(&crew__slot_at(m, crew__slot_index(h->slot))->state, carry);
    return CREW_OK;
}

void crew__group_abandon(crew__slotmap *m, uint32_t slot, crew__slot_cache *cache) {
    crew__slot *sl = crew__slot_at(m, slot);
    /* The generation stays: {slot, gen} was never handed out. Release, not relaxed: a waiter
     * holding the previous group's handle may read this value and return, and must still
     * happen-after that group's tasks (the release sequence of crew__group_open's store). */
    uint64_t st = crew__load_relaxed(&sl->state); /* relaxed: this thread wrote it last */
    uint32_t gen = crew__gen_of(st);
    /* Relaxed, as in crew__group_open: the generation is not issued after all (unless the
     * generation has wrapped: then every one counts as issued, for good). */
    if (gen != CREW__GEN_MAX && crew__load_relaxed(&sl->issued_gen) == gen)
        crew__store_relaxed(&sl->issued_gen, gen - 1u);
    /* A loss crew__group_reopen carried on goes too (the store clears the marks): the
     * finished group it came from still keeps it, unreported (its report comes only once the
     * new handle is stored), and the caller's handle still names that group. */
    crew__store_release(&sl->state, crew__gen_state(gen));
    release_slot(m, slot, cache);
}

/* Give slot, whose group of generation gen has ended (no task open), to later groups: advance
 * the generation and free the slot. */
static inline void next_generation(crew__slotmap *m, crew__slot *sl, uint32_t slot, uint32_t gen,
                                   crew__slot_cache *cache) {
    if (++gen > CREW__GEN_MAX) {
        gen = 1; /* generation 0 would look like CREW_HANDLE_NONE */
        /* Wrapped: from now on any generation may have been issued. Relaxed: see crew__slot. */
        crew__store_relaxed(&sl->issued_gen, CREW__GEN_MAX);
    }
    /* Release: a waiter that sees the new generation also sees the tasks' effects. The marks
     * go: a new generation starts without them. */
    crew__store_release(&sl->state, crew__gen_state(gen));
    release_slot(m, slot, cache);
}

/* The end of a group whose open count reached 0 (prev: the state before the last decrement):
 * advance the generation and free the slot, unless the group has a mark. */
static inline void end_group(crew__slotmap *m, crew__slot *sl, uint32_t slot, uint64_t prev,
                             crew__slot_cache *cache) {
    /* A group that lost tasks or was cancelled keeps its slot, at its generation with its
     * marks and no task open, so its handle keeps its answer, to waiters however late, until a
     * wait reports it (crew__group_report). The marks came with our decrement: no later
     * crew_cancel can add one (it finds no task open). */
    if (prev & CREW__ST_LOSS)
        return;
    next_generation(m, sl, slot, crew__gen_of(prev), cache);
}

/* The end of a group with completion callbacks (crew_notify): take them off the slot before
 * it can pass to a later group, end the group, then hand them on. Out of line: the common
 * finish pays one load and a branch for the feature. */
static __attribute__((noinline, cold)) bool end_group_notify(crew__slotmap *m, crew__slot *sl,
                                                             uint32_t slot, uint64_t prev,
                                                             crew__slot_cache *cache) {
    /* Seq_cst: see crew__slot.notify; an exchange, because a registrant that saw the
     * decrement may be taking the list too (each callback goes to exactly one of them). */
    crew_task *list = crew__exchange_seq_cst(&sl->notify, NULL);
    end_group(m, sl, slot, prev, cache);
    if (list)
        m->on_notify(m->owner, list);
    return true;
}

/* Mark the open group of sl as having lost a task (how: CREW__LOST or CREW__EXPIRED). The
 * group is open (the caller holds one of its tasks), so the mark lands on its own generation,
 * before that task's decrement in the word's order: the decrement that ends the group returns
 * it. Relaxed: the decrement is what publishes the task's end. The mark is computed, not
 * chosen, so that crew__group_done needs no more registers for it. */
_Static_assert(CREW__ST_DROPPED == (uint64_t)(8u >> CREW__LOST) << 32 &&
                   CREW__ST_EXPIRED == (uint64_t)(8u >> CREW__EXPIRED) << 32,
               "mark_lost computes the marks from enum crew__end");
static inline void mark_lost(crew__slot *sl, enum crew__end how) {
    crew__fetch_or_relaxed(&sl->state, (uint64_t)(8u >> how) << 32);
}

void crew__group_lost(crew__slotmap *m, uint32_t slot) {
    mark_lost(crew__slot_at(m, slot), CREW__LOST);
}

/* The group of sl ended with the decrement whose previous state was prev (crew__group_done,
 * crew__group_done_all): its callbacks, if any, and its slot; true. */
static inline __attribute__((always_inline)) bool ended(crew__slotmap *m, crew__slot *sl,
                                                        uint32_t slot, uint64_t prev,
                                                        crew__slot_cache *cache) {
    /* Seq_cst: the finisher's half of crew_notify's protocol (see crew__slot.notify). */
    if (__builtin_expect(crew__load_seq_cst(&sl->notify) != NULL, 0))
        return end_group_notify(m, sl, slot, prev, cache); /* a tail call */
    end_group(m, sl, slot, prev, cache);
    return true;
}

bool crew__group_done(crew__slotmap *m, uint32_t slot, uint32_t n, enum crew__end how,
                      crew__slot_cache *cache) {
    crew__slot *sl = crew__slot_at(m, slot);
    if (__builtin_expect(how != CREW__RAN, 0))
        mark_lost(sl, how);
    /* Release: everything the task did happens-before a waiter that acquires the count it
     * leaves; acquire: the last decrement also synchronises with all earlier ones, so the
     * generation store below carries them all. Pairs with crew__group_status. Seq_cst, not
     * just acq_rel: the decrement to 0 is the finisher's half of crew_notify's protocol (the
     * same instruction on x86-64 and AArch64). */
    uint64_t prev = crew__fetch_sub_seq_cst(&sl->state, (uint64_t)n);
    crew__assert_msg(crew__open_of(prev) >= n, "slot %u: %u tasks open, %u ended", (unsigned)slot,
                     crew__open_of(prev), (unsigned)n); /* the open count never goes below 0 */
    /* Its task ran, so the group was opened (its generation issued) before: see crew__slot. */
    crew__assert(crew__gen_issued(sl, crew__gen_of(prev)));
    if (crew__open_of(prev) != n)
        return false;
    return ended(m, sl, slot, prev, cache);
}

bool crew__group_done_all(crew__slotmap *m, uint32_t slot, uint32_t n, uint64_t *prev,
                          crew__slot_cache *cache) {
    crew__slot *sl = crew__slot_at(m, slot);
    /* Relaxed: a guess at the state; the compare-and-swap decides. */
    uint64_t st = crew__load_relaxed(&sl->state);
    if (crew__open_of(st) != n)
        return false;
    /* Seq_cst on success, for crew__group_done's reasons (the release of the tasks' effects,
     * the acquire of the earlier decrements, the finisher's half of crew_notify's protocol);
     * relaxed on failure: nothing changed, the caller ends its tasks with crew__group_done. A
     * state changed meanwhile (a task added, a mark, a cancel) fails it, so the marks the
     * group ends with are those in *prev. */
    if (!crew__cas_seq_cst(&sl->state, &st, st - n))
        return false;
    *prev = st;
    /* Its tasks ran, so the group was opened (its generation issued) before: see crew__slot. */
    crew__assert(crew__gen_issued(sl, crew__gen_of(st)));
    return ended(m, sl, slot, st, cache);
}

int crew__group_cancel(crew__slotmap *m, crew_handle h) {
    crew__slot *sl = crew__slot_at(m, crew__slot_index(h.slot));
    /* One compare-and-swap on the state word, from a state of h's generation with a task open
     * to the same with CANCEL: the check and the mark are one step, ordered against the last
     * decrement (see the top of this file). Relaxed load: the CAS re-checks it. Acq_rel on the
     * CAS: the mark is part of the release sequence a waiter acquires, and on failure the
     * newer state is re-read. */
    uint64_t st = crew__load_relaxed(&sl->state);
    do {
        if (crew__gen_of(st) != h.gen || crew__open_of(st) == 0)
            return CREW_ESTALE;
        if (st & CREW__ST_CANCEL)
            return CREW_OK; /* cancelled before, and still open */
    } while (!crew__cas_acq_rel(&sl->state, &st, st | CREW__ST_CANCEL));
    return CREW_OK;
}

int crew__group_status(crew__slotmap *m, crew_handle h) {
    return crew__slot_status(crew__slot_at(m, crew__slot_index(h.slot)), h.gen);
}

/* Slot s, whose group's loss was just reported by this thread, joins the list of kept
 * losses; beyond CREW__LOSSES_KEPT, the oldest one that no wait holds is freed. A held one
 * goes back to the end of the list (so the list holds at most CREW__LOSSES_KEPT plus the
 * slots held by waits in progress). */
static void keep_reported(crew__slotmap *m, uint32_t s) {
    pthread_mutex_lock(&m->kept_lock);
    /* Relaxed (next_free, here and below): the list is the lock's. */
    crew__store_relaxed(&crew__slot_at(m, s)->next_free, 0u);
    if (m->kept_tail)
        crew__store_relaxed(&crew__slot_at(m, m->kept_tail)->next_free, s);
    else
        m->kept_head = s;
    m->kept_tail = s;
    for (uint32_t tries = m->kept_n++; m->kept_n > CREW__LOSSES_KEPT && tries != 0; tries--) {
        uint32_t old = m->kept_head;
        crew__slot *sl = crew__slot_at(m, old);
        m->kept_head = crew__load_relaxed(&sl->next_free);
        /* Seq_cst: see crew__slot.holds; a wait that holds the slot gets its answer first. */
        if (crew__load_seq_cst(&sl->holds) != 0) {
            crew__store_relaxed(&sl->next_free, 0u);
            crew__store_relaxed(&crew__slot_at(m, m->kept_tail)->next_free, old);
            m->kept_tail = old;
            continue;
        }
        m->kept_n--;
        /* Relaxed: a reported slot's state is no longer written by anyone (no task open, so
         * no add, cancel or decrement) until we free it; its reporter's lock release ordered
         * its mark before us. */
        uint64_t st = crew__load_relaxed(&sl->state);
        crew__assert(crew__open_of(st) == 0 && (st & CREW__ST_REPORTED));
        next_generation(m, sl, old, crew__gen_of(st), NULL);
        break;
    }
    pthread_mutex_unlock(&m->kept_lock);
}

int crew__group_report(crew__slotmap *m, crew_handle h, int status) {
    if (status != CREW_ECANCELED && status != CREW_EEXPIRED)
        return status;
    crew__slot *sl = crew__slot_at(m, h.slot);
    /* Acquire (the load and a failed CAS): the group's end. One reporter per group: the one
     * whose CAS sets REPORTED on the finished, marked state of its generation; the others (a
     * concurrent wait, a copy of an old handle) stop here. */
    uint64_t st = crew__load_acquire(&sl->state);
    do {
        if (crew__gen_of(st) != h.gen || crew__open_of(st) != 0 || !(st & CREW__ST_LOSS) ||
            (st & CREW__ST_REPORTED))
            return status;
    } while (!crew__cas_acq_rel(&sl->state, &st, st | CREW__ST_REPORTED));
    keep_reported(m, h.slot);
    return status;
}

int crew__slotmap_init(crew__slotmap *m) {
    m->kept_head = m->kept_tail = m->kept_n = 0;
    crew__atomic_init(&m->issued, 1u); /* slot 0 is never issued */
    crew__atomic_init(&m->free_head, 0u);
    m->on_notify = NULL; /* set by the pool */
    m->owner = NULL;
    for (unsigned k = 0; k < CREW__SLOT_CHUNKS; k++)
        crew__atomic_init(&m->chunk[k], NULL);
    if (pthread_mutex_init(&m->grow_lock, NULL) != 0)
        return CREW_ENOMEM;
    if (pthread_mutex_init(&m->notify_lock, NULL) != 0) {
        pthread_mutex_destroy(&m->grow_lock);
        return CREW_ENOMEM;
    }
    if (pthread_mutex_init(&m->kept_lock, NULL) != 0) {
        pthread_mutex_destroy(&m->notify_lock);
        pthread_mutex_destroy(&m->grow_lock);
        return CREW_ENOMEM;
    }
    return CREW_OK;
}

void crew__slotmap_free(crew__slotmap *m) {
    pthread_mutex_destroy(&m->kept_lock);
    pthread_mutex_destroy(&m->grow_lock);
    pthread_mutex_destroy(&m->notify_lock);
    for (unsigned k = 0; k < CREW__SLOT_CHUNKS; k++) {
        free(crew__load_relaxed(&m->chunk[k]));
        crew__store_relaxed(&m->chunk[k], NULL);
    }
}
