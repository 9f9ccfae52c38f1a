/*
 * group.c -- groups of tasks: the slot map with open-task counts and generation counters of
 * Jendersie et al., §III-D.
 *
 * A group lives in a slot. The slot's state word packs the generation (high 32 bits) and the
 * number of open tasks (low 32 bits): a waiter holding {slot, gen} is done when the generation
 * has moved on or the open count is 0, and one acquire load tells it both. When the count
 * reaches 0 the generation advances (skipping 0) and the slot goes on the free list, so a later
 * group may reuse it without an old handle ever mistaking the new group for its own. A group
 * that lost tasks to a cancelling shutdown keeps its slot and generation until crew_destroy, so
 * its waiters keep seeing CREW_ECANCELED.
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
            crew__atomic_init(&c[i].state, (uint64_t)1 << 32); /* generation 1, no open task */
            crew__atomic_init(&c[i].cancelled_gen, 0u);
            crew__atomic_init(&c[i].lost_gen, 0u);
            crew__atomic_init(&c[i].dropped_gen, 0u);
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

static void push_free(crew__slotmap *m, uint32_t s);

/* Free slot s: into the caller's cache if it has room, else onto the shared stack. */
static void release_slot(crew__slotmap *m, uint32_t s, crew__slot_cache *cache) {
    /* Relaxed: this thread's own store, the group's end, was the last to its state. */
    crew__assert(crew__open_of(crew__load_relaxed(&crew__slot_at(m, s)->state)) == 0);
    if (cache && cache->n < CREW__SLOT_CACHE)
        cache->slot[cache->n++] = s;
    else
        push_free(m, s);
}

static void push_free(crew__slotmap *m, uint32_t s) {
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
    crew__assert(crew__open_of(crew__load_relaxed(&sl->state)) == 0); /* a free slot: no task */
    /* Relaxed: only the slot's owner writes it; see crew__slot. UINT32_MAX (wrapped) stays. */
    if (gen > crew__load_relaxed(&sl->issued_gen))
        crew__store_relaxed(&sl->issued_gen, gen);
    crew__assert(gen != 0 && crew__gen_issued(sl, gen)); /* the handle names an issued one */
    /* Release, not relaxed: a waiter holding the previous group's handle may read this value
     * and return; the release (after our acquire of the slot from the free list, which the
     * finisher released) keeps that waiter ordered after the previous group's tasks, and later
     * adds and decrements, being read-modify-writes, continue this release sequence. Pairs with
     * crew__group_status. */
    crew__store_release(&sl->state, (uint64_t)gen << 32 | n);
    h->slot = s | m->tag << CREW__SLOT_BITS; /* as handed out: see crew__handle_public */
    h->gen = gen;
    return CREW_OK;
}

int crew__group_add(crew__slotmap *m, crew_handle h, uint32_t n) {
    crew__slot *sl = crew__slot_at(m, crew__slot_index(h.slot));
    /* Acquire (the load, and the CAS on failure: acq_rel is the variant that acquires on
     * failure; the add itself publishes nothing, and a waiter that sees the larger count just
     * waits): a caller that finds the group finished and opens a new group in its place
     * (submit.c) must happen-after its tasks, and read the marks they left (crew__slot). The
     * CAS keeps the add atomic against concurrent decrements, and refuses a group that
     * finished (its generation moved on, or its count is 0). */
    uint64_t st = crew__load_acquire(&sl->state);
    do {
        if (crew__gen_of(st) != h.gen)
            return CREW_ESTALE;
        if (crew__slot_cancelled(sl, h.gen))
            return CREW_ECANCELED;
        if (crew__open_of(st) == 0)
            return CREW_ESTALE;
        if ((uint64_t)crew__open_of(st) + n > UINT32_MAX)
            return CREW_ERANGE;
    } while (!crew__cas_acq_rel(&sl->state, &st, st + n));
    return CREW_OK;
}

void crew__group_inherit(crew__slotmap *m, crew_handle h, int status) {
    if (status != CREW_ECANCELED && status != CREW_EEXPIRED)
        return;
    crew__slot *sl = crew__slot_at(m, crew__slot_index(h.slot));
    /* Relaxed: the group is new and its tasks are not queued yet. Every thread that reads the
     * marks (a task's finisher in end_group, a waiter through crew__slot_status) does so after
     * taking one of its tasks from a queue, or after getting its handle, both of which happen
     * after these stores. */
    if (status == CREW_ECANCELED)
        crew__store_relaxed(&sl->dropped_gen, h.gen);
    crew__store_relaxed(&sl->lost_gen, h.gen);
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
    if (gen != UINT32_MAX && crew__load_relaxed(&sl->issued_gen) == gen)
        crew__store_relaxed(&sl->issued_gen, gen - 1u);
    /* Marks crew__group_inherit left go too, or the next group of this generation would
     * inherit them. Relaxed: published by the release below and the free list's. */
    if (crew__load_relaxed(&sl->lost_gen) == gen) {
        crew__store_relaxed(&sl->lost_gen, 0u);
        crew__store_relaxed(&sl->dropped_gen, 0u);
    }
    crew__store_release(&sl->state, st & ~(uint64_t)UINT32_MAX);
    release_slot(m, slot, cache);
}

/* The end of a group whose open count reached 0 (prev: the state before the last decrement):
 * advance the generation and free the slot, unless the group lost tasks. */
static inline void end_group(crew__slotmap *m, crew__slot *sl, uint32_t slot, uint64_t prev,
                             crew__slot_cache *cache) {
    /* A group that lost tasks keeps its slot, at its generation with no task open, so its
     * handle reports CREW_ECANCELED for as long as the pool lives, to waiters however late
     * (handles are plain values: there is no telling when the last one is dropped). This
     * retires one slot per cancelled group. Relaxed: ordered by our own decrement. */
    if (crew__load_relaxed(&sl->lost_gen) == crew__gen_of(prev) ||
        crew__load_relaxed(&sl->cancelled_gen) == crew__gen_of(prev))
        return;
    uint32_t gen = crew__gen_of(prev) + 1;
    if (gen == 0) {
        gen = 1; /* generation 0 would look like CREW_HANDLE_NONE */
        /* Wrapped: from now on any generation may have been issued. Relaxed: see crew__slot. */
        crew__store_relaxed(&sl->issued_gen, UINT32_MAX);
    }
    /* Release: a waiter that sees the new generation also sees the tasks' effects. */
    crew__store_release(&sl->state, (uint64_t)gen << 32);
    release_slot(m, slot, cache);
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
 * group is open (the caller holds one of its tasks), so the generation read is its own.
 * Relaxed: the release of that task's decrement orders the stores before the group's end. */
static void mark_lost(crew__slot *sl, enum crew__end how) {
    uint32_t gen = crew__gen_of(crew__load_relaxed(&sl->state));
    if (how == CREW__LOST)
        crew__store_relaxed(&sl->dropped_gen, gen);
    crew__store_relaxed(&sl->lost_gen, gen);
}

void crew__group_lost(crew__slotmap *m, uint32_t slot) {
    mark_lost(crew__slot_at(m, slot), CREW__LOST);
}

bool crew__group_done(crew__slotmap *m, uint32_t slot, uint32_t n, enum crew__end how,
                      crew__slot_cache *cache) {
    crew__slot *sl = crew__slot_at(m, slot);
    if (how != CREW__RAN)
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
    /* Seq_cst: the finisher's half of crew_notify's protocol (see crew__slot.notify). */
    if (__builtin_expect(crew__load_seq_cst(&sl->notify) != NULL, 0))
        return end_group_notify(m, sl, slot, prev, cache); /* a tail call */
    end_group(m, sl, slot, prev, cache);
    return true;
}
int crew__group_cancel(crew__slotmap *m, crew_handle h) {
    crew__slot *sl = crew__slot_at(m, crew__slot_index(h.slot));
    /* Check, then mark, with a compare-and-swap from the mark we saw: a plain store could land
     * after the group ended and its slot passed to a later group that was cancelled, and erase
     * that group's mark (its slot would then be reused, and its waiters read CREW_OK). Acquire
     * on the mark: if it is a later group's (set by a compare-and-swap like ours, after that
     * group was seen open), the state read below sees that group too, so the check fails. */
    uint32_t seen = crew__load_acquire(&sl->cancelled_gen);
    for (;;) {
        uint64_t st = crew__load_relaxed(&sl->state); /* relaxed: ordered by the acquire */
        if (crew__gen_of(st) != h.gen || crew__open_of(st) == 0)
            return CREW_ESTALE;
        if (seen == h.gen)
            return CREW_OK;
        /* Acq_rel: publishes the mark (the same order as crew__group_done's store), and on
         * failure acquires the newer mark for the next check. A mark written here for a group
         * that ended meanwhile names only that group, and only if no later group has one. */
        if (crew__cas_acq_rel(&sl->cancelled_gen, &seen, h.gen))
            return CREW_OK;
    }
}

int crew__group_status(crew__slotmap *m, crew_handle h) {
    return crew__slot_status(crew__slot_at(m, crew__slot_index(h.slot)), h.gen);
}

int crew__slotmap_init(crew__slotmap *m) {
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
    return CREW_OK;
}

void crew__slotmap_free(crew__slotmap *m) {
    pthread_mutex_destroy(&m->grow_lock);
    pthread_mutex_destroy(&m->notify_lock);
    for (unsigned k = 0; k < CREW__SLOT_CHUNKS; k++) {
        free(crew__load_relaxed(&m->chunk[k]));
        crew__store_relaxed(&m->chunk[k], NULL);
    }
}
