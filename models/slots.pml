/*
 * slots.pml -- crew's group slot map (src/group.c, crew__slot_status in src/internal.h,
 * crew_wait in src/wait.c), as a Promela model.
 *
 * A slot's state word packs (generation, open count) in one 64-bit atomic; here it is one int,
 * GEN << 8 | OPEN, and every read-modify-write of it is one atomic step, as in the code. Two
 * groups are opened by two openers; each group starts with NT tasks and its opener then tries to
 * add one more (crew__group_add, which may meet CREW_ESTALE). Every task finishes (or, with
 * CANCEL, may be dropped by a cancelling shutdown) through crew__group_done; the last one bumps
 * the generation and frees the slot, which the other opener may then reuse. One waiter per
 * group holds the group's handle {slot, gen} and runs crew_wait's loop.
 *
 * Properties, checked as assertions and as Spin's invalid-end-state check:
 *   - a waiter keeps waiting only while its own group is unfinished: it never takes a later
 *     generation's open count for its own (assert in `waiter`);
 *   - a waiter returns only once its group has finished, and with the right answer (CREW_OK,
 *     or CREW_ECANCELED exactly when the group lost a task);
 *   - a waiter whose group finished always returns: a waiter blocked forever is an invalid end
 *     state (its blocking statement carries no end label);
 *   - crew__group_add never adds to a finished group; a freed slot has no open task.
 *
 * Sequential consistency: the code uses acquire/release on the state word (group.c explains
 * each); this model checks the protocol's logic over interleavings. The wake-up of a sleeping
 * waiter is models/sleep.pml's pattern (slot->waiters) and is idealised here as "block until the
 * state word changes".
 *
 * Variants (spin -D...):
 *   (none)        must verify.
 *   CANCEL        tasks may also be dropped (crew__task_dropped). Spin finds a spurious
 *                 CREW_ECANCELED: crew__slot_status reads `cancelled` in a second load; between
 *                 the two loads the group can finish, the slot be reused by a new group and that
 *                 group lose a task, so the old handle's wait reports the new group's
 *                 cancellation. Kept as a known failure (models/check.sh) until src/ is fixed.
 *   CANCEL + CANCEL_GEN  the slot as of commit 029ad83 (crew_cancel): the slot records the
 *                 cancelled generation and a cancelled group's slot is reused. Spin finds a
 *                 waiter of a group that lost a task answering CREW_OK, once the slot was reused
 *                 by another group that lost one too before the waiter looked. Known failure.
 *   CANCEL + FIX_RECHECK  the proposed fix (re-load the state word after the flag and answer
 *                 CREW_OK if the generation moved): must verify.
 *   BROKEN_GEN    the waiter ignores the generation (keeps waiting while OPEN != 0): must fail.
 *   BROKEN_NOBUMP crew__group_done frees the slot without a new generation: must fail.
 */

#ifndef NT
#define NT 1 /* tasks a group opens with */
#endif
#define G 2      /* groups (and openers, and waiters) */
#define NSLOTS 3 /* slot 0 is never issued; 1 and 2 can be */

#define GEN(st) ((st) >> 8)
#define OPEN(st) ((st) & 255)

int state[NSLOTS];      /* crew__slot.state: gen << 32 | open in the code */
bool cancelled[NSLOTS]; /* crew__slot.cancelled (commit 1d4ef7a) */
byte cancelled_gen[NSLOTS]; /* crew__slot.cancelled_gen (commit 029ad83, CANCEL_GEN) */
byte freestk[NSLOTS];   /* the free stack (Treiber stack with an ABA tag: one atomic step) */
byte nfree = 0;
byte issued = 1;        /* crew__slotmap.issued: slot 0 is never issued */

/* Ghost state (not in the code): what really happened to each group. */
bool published[G]; /* the opener returned the handle */
byte hslot[G];
byte hgen[G];
bool finished[G];  /* its open count reached 0 */
bool dropped[G];   /* it lost a task */

/* crew__group_done(slot, 1, dropped), called when a task of group g finishes or is dropped. */
proctype task(byte g; byte s) {
    int prev;
    byte ngen;
#ifdef CANCEL
    /* crew__task_dropped (a cancelling shutdown), or the task runs. Local choice and the flag's
     * store in one step: nothing else can observe the choice. */
    atomic {
        if
        :: cancelled[s] = true; dropped[g] = true;
           cancelled_gen[s] = GEN(state[s]) /* crew__group_done(dropped): the open group's gen */
        :: skip
        fi
    }
#endif
    /* crew__fetch_sub_acq_rel(&sl->state, 1) */
    atomic {
        prev = state[s];
        assert(OPEN(prev) > 0);
        state[s] = prev - 1;
        if
        :: OPEN(prev) == 1 -> finished[g] = true
        :: else -> skip
        fi
    }
    if
#ifdef CANCEL_GEN
    :: OPEN(prev) == 1 -> /* 029ad83: a cancelled group's slot is reused too */
#else
    :: OPEN(prev) == 1 && !cancelled[s] ->
#endif
        /* The last task: new generation (skipping 0), then the slot goes back (release_slot /
         * push_free). A cancelled group keeps its slot and generation. */
        atomic { /* computing ngen is local: one step with the store */
#ifndef BROKEN_NOBUMP
            ngen = GEN(prev) + 1;
            if
            :: ngen == 0 -> ngen = 1
            :: else -> skip
            fi;
#else
            ngen = GEN(prev);
#endif
            state[s] = ngen << 8 /* store_release */
        }
        atomic { freestk[nfree] = s; nfree++ }
    :: else -> skip
    fi
}

/* crew_enqueue_tasks(..., &h) with h = CREW_HANDLE_NONE: crew__group_open, then queue NT tasks,
 * then a later submission to the same handle (crew__group_add). */
proctype opener(byte g) {
    byte s;
    byte gen;
    byte k;
    int st;
    bool added;
    /* crew__group_open: pop_free, else new_slot under grow_lock */
    atomic {
        if
        :: nfree > 0 -> nfree--; s = freestk[nfree]
        :: else -> s = issued; issued++
        fi;
        assert(s > 0 && s < NSLOTS);
        gen = GEN(state[s]); /* relaxed: the slot is ours, nobody else writes it now */
        assert(OPEN(state[s]) == 0)
    }
    cancelled[s] = false;
    state[s] = (gen << 8) | NT; /* store_release */
    atomic { hslot[g] = s; hgen[g] = gen; published[g] = true } /* *group = h */
    k = 0;
    do
    :: k < NT -> run task(g, s); k++ /* crew__sched_push: the tasks may run from here on */
    :: else -> break
    od;
    /* crew__group_add(h, 1): the CAS loop, one atomic step */
    atomic {
        st = state[s];
        if
        :: GEN(st) == gen && OPEN(st) != 0 ->
            assert(!finished[g]);
            state[s] = st + 1;
            added = true
        :: else -> added = false /* CREW_ESTALE */
        fi
    }
    if
    :: added -> run task(g, s)
    :: else -> skip
    fi
}

/* crew_wait(p, h): loop on crew__slot_status until it is not 1. */
proctype waiter(byte g) {
    byte s;
    byte gen;
    int st;
    bool canc;
    bool keep;
    atomic { published[g] -> s = hslot[g]; gen = hgen[g] } /* the handle, as its opener left it */
    do
    :: /* crew__slot_status: one load_acquire of the state word. The ghost check rides in the
        * same atomic step, so it judges the value at the moment it was read. */
        atomic {
            st = state[s];
#ifdef BROKEN_GEN
            keep = (OPEN(st) != 0);
#else
            keep = (GEN(st) == gen && OPEN(st) != 0);
#endif
            /* Status 1: keep waiting. The open count it saw must be its own group's. */
            assert(!keep || !finished[g])
        }
        if
        :: keep -> (state[s] != st) /* sleep until the word changes (sleep.pml): no end label */
        :: else -> break
        fi
    od;
    assert(finished[g]);
    if
#ifdef CANCEL_GEN
    :: GEN(st) != gen -> canc = (cancelled_gen[s] == gen) /* 029ad83: consulted either way */
#else
    :: GEN(st) != gen -> canc = false /* the generation moved on: CREW_OK */
#endif
    :: else ->
#ifdef CANCEL_GEN
        canc = (cancelled_gen[s] == gen) /* 029ad83: crew__slot_status */
#else
        canc = cancelled[s] /* a second, relaxed load, as in crew__slot_status */
#endif
#ifdef FIX_RECHECK
        /* Proposed fix: load the state word again; the same generation means the slot was not
         * reused between the two loads, so the flag was this group's. */
        if
        :: GEN(state[s]) != gen -> canc = false
        :: else -> skip
        fi
#endif
    fi;
    /* CREW_ECANCELED exactly for a group that lost a task. */
    assert(canc == dropped[g])
}

init {
    byte k;
    atomic {
        k = 1;
        do
        :: k < NSLOTS -> state[k] = 1 << 8; k++ /* new_slot: generation 1, no open task */
        :: else -> break
        od;
        k = 0;
        do
        :: k < G -> run opener(k); run waiter(k); k++
        :: else -> break
        od
    }
}
