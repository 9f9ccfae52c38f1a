/*
 * slots.pml -- crew's group slot map (src/group.c, crew__slot_status in src/group.h,
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
 *   CANCEL        tasks may also be dropped (crew__task_dropped). The slot of commit 1d4ef7a: a
 *                 `cancelled` flag, read by crew__slot_status in a second load. WRONG, must fail:
 *                 between the two loads the group can finish, the slot be reused by a new group
 *                 and that group lose a task, so the old handle's wait reports the new group's
 *                 cancellation (a spurious CREW_ECANCELED).
 *   CANCEL + FIX_RECHECK  the fix proposed for that (re-load the state word after the flag and
 *                 answer CREW_OK if the generation moved): must verify.
 *   CANCEL + CANCEL_GEN  the slot of commit 029ad83 (crew_cancel): the slot records the cancelled
 *                 generation and a cancelled group's slot is released for reuse. WRONG, must
 *                 fail: a waiter of a group that lost a task answers CREW_OK once the slot went
 *                 to another group that lost one too before the waiter looked.
 *   CANCEL + CANCEL_GEN + RETIRE  the code of commit bb5c300 on: crew__group_done keeps the
 *                 slot of a group that lost tasks (cancelled_gen == its generation: state stays
 *                 (gen, 0), never released); a group that finished normally is released as
 *                 before. Must verify.
 *   ... + CANCELLER  adds a crew_cancel of group 0's handle (crew__group_cancel: a relaxed snapshot
 *                 of the state word, then, if the group looked open, a separate store of
 *                 cancelled_gen). With RETIRE this was the whole code of bb5c300; see check.sh for
 *                 what Spin says about it.
 *   ... + FIX_CANCEL_BIT  the current code (src/group.c): the "cancelled" mark is a bit of
 *                 the state word (CBIT), set with a CAS that requires the handle's generation
 *                 and an open count, so a late crew_cancel cannot mark another group, and a
 *                 dropped task sets another (DBIT) by a read-modify-write before its decrement;
 *                 the finisher and the waiter read the bits from the state word.
 *   ... + REPORT  with FIX_CANCEL_BIT: the waiter reports its group's loss (crew__group_report):
 *                 it sets RBIT by a CAS on the finished, marked state of its generation, and the
 *                 slot is then freed with the next generation (the list of kept losses at its
 *                 shortest, none kept; a second waiter, which the code's holds protect, is not
 *                 modelled), so a lossy group's slot passes to the other group too.
 *                 Must verify: a slot is freed once, never while a task is open, and every
 *                 answer holds.
 * With CANCELLER, the waiter also checks the cancel's side: a crew_cancel that answered CREW_OK
 * means CREW_ECANCELED from the group's wait, and one that answered CREW_ESTALE came after the
 * group finished (never both). The compare-and-swap on a separate mark word (FIX_CANCEL_CAS)
 * fails it: the group can end between the state read and the mark.
 *   BROKEN_GEN    the waiter ignores the generation (keeps waiting while OPEN != 0): must fail.
 *   BROKEN_NOBUMP crew__group_done frees the slot without a new generation: must fail.
 */

#ifndef NT
#define NT 1 /* tasks a group opens with */
#endif
#define G 2      /* groups (and openers, and waiters) */
#define NSLOTS 3 /* slot 0 is never issued; 1 and 2 can be */

#define GEN(st) ((st) >> 8)
#define OPEN(st) ((st) & 31)
#define CBIT 128 /* FIX_CANCEL_BIT only: "this generation was cancelled", in the state word */
#define DBIT 64  /* FIX_CANCEL_BIT only: "this generation lost a task" */
#define RBIT 32  /* REPORT only: "a wait reported this generation's loss" */

#if defined(RETIRE) || defined(CANCELLER) || defined(FIX_CANCEL_BIT)
#ifndef CANCEL_GEN
#define CANCEL_GEN
#endif
#endif
#ifdef CANCEL_GEN
#ifndef CANCEL
#define CANCEL
#endif
#endif

int state[NSLOTS];      /* crew__slot.state: gen << 32 | open in the code */
bool cancelled[NSLOTS]; /* crew__slot.cancelled (commit 1d4ef7a) */
byte cancelled_gen[NSLOTS]; /* crew__slot.cancelled_gen (commit 029ad83 on, CANCEL_GEN) */
byte freestk[NSLOTS];   /* the free stack (Treiber stack with an ABA tag: one atomic step) */
byte nfree = 0;
byte issued = 1;        /* crew__slotmap.issued: slot 0 is never issued */

/* Ghost state (not in the code): what really happened to each group. */
bool published[G]; /* the opener returned the handle */
byte hslot[G];
byte hgen[G];
bool finished[G];  /* its open count reached 0 */
bool dropped[G];   /* it lost a task */
bool cancel_ok[G]; /* crew_cancel of its handle saw it open (so may return CREW_OK) */
bool cancel_done;  /* crew_cancel has returned */

/* crew__group_done(slot, 1, dropped), called when a task of group g finishes or is dropped. */
proctype task(byte g; byte s) {
    int prev;
    byte ngen;
    bool keep;
#ifdef CANCEL
    /* The task is dropped (crew__task_dropped: a cancelling shutdown, a drop-oldest queue, or
     * crew_cancel's crew__sched_cancel_group / the worker's crew__slot_cancelled check before
     * running it), or it runs. Any task may be dropped, so this covers all of those. The local
     * choice and crew__group_done's first store are one step: nothing else observes the choice.
     * The task still holds an open count, so the generation it reads is its own group's. */
    atomic {
        if
        :: dropped[g] = true;
#if defined(FIX_CANCEL_BIT)
           state[s] = state[s] | DBIT /* crew__group_done: fetch_or(DROPPED) (we hold a count) */
#elif defined(CANCEL_GEN)
           /* crew__group_done(dropped): store_relaxed(cancelled_gen, gen_of(load_relaxed(state))) */
           cancelled_gen[s] = GEN(state[s])
#else
           cancelled[s] = true /* 1d4ef7a: the flag */
#endif
        :: skip
        fi
    }
#endif
    /* crew__group_done: crew__fetch_sub_acq_rel(&sl->state, n) */
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
    :: OPEN(prev) == 1 ->
        /* The last task. Does the slot stay with this group (retired) or go back? */
#if defined(FIX_CANCEL_BIT)
        keep = ((prev & (CBIT | DBIT)) != 0) /* the bits came with the decrement's old value */
#elif defined(RETIRE)
        keep = (cancelled_gen[s] == GEN(prev)) /* bb5c300: a separate relaxed load */
#elif defined(CANCEL_GEN)
        keep = false /* 029ad83: a cancelled group's slot is reused too */
#else
        keep = cancelled[s] /* 1d4ef7a: a cancelled group keeps its slot */
#endif
        ;
        if
        :: !keep ->
            /* New generation (skipping 0), then the slot goes back (release_slot / push_free). */
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
                state[s] = ngen << 8 /* store_release; clears the fix's bit too */
            }
            atomic { freestk[nfree] = s; nfree++ }
        :: else -> skip /* retired: (gen, 0) for good */
        fi
    :: else -> skip
    fi
}

#if defined(FIX_CANCEL_BIT)
#define NOT_CANCELLED(s, st, gen) (((st) & CBIT) == 0) /* a drop (DBIT) refuses nothing */
#elif defined(CANCEL_GEN)
#define NOT_CANCELLED(s, st, gen) (cancelled_gen[s] != (gen)) /* crew__slot_cancelled */
#else
#define NOT_CANCELLED(s, st, gen) true
#endif

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
        assert((state[s] & 255) == 0) /* a free slot: no task, no mark */
    }
#ifndef CANCEL_GEN
    cancelled[s] = false; /* 1d4ef7a: the opener clears the flag */
#endif
    state[s] = (gen << 8) | NT; /* store_release */
    atomic { hslot[g] = s; hgen[g] = gen; published[g] = true } /* *group = h */
    k = 0;
    do
    :: k < NT -> run task(g, s); k++ /* crew__sched_push: the tasks may run from here on */
    :: else -> break
    od;
    /* crew__group_add(h, 1): the CAS loop, one atomic step (the cancelled check in it is a
     * relaxed load whose answer the CAS does not depend on: folding it in only drops adds) */
    atomic {
        st = state[s];
        if
        :: GEN(st) == gen && OPEN(st) != 0 && NOT_CANCELLED(s, st, gen) ->
            assert(!finished[g]);
            state[s] = st + 1;
            added = true
        :: else -> added = false /* CREW_ESTALE (or CREW_ECANCELED) */
        fi
    }
    if
    :: added -> run task(g, s)
    :: else -> skip
    fi
}

#ifdef CANCELLER
/* crew_cancel(p, h) for the handle of either group, once published (src/wait.c). */
proctype canceller() {
    byte g;
    byte s;
    byte gen;
    int st;
    bool ok;
    /* Group 0's handle: either opener may run first, so group 0's slot may be the one group 1
     * reuses, or one that group 1 had before it (a choice of g would double the states). */
    g = 0;
    atomic { published[g] -> s = hslot[g]; gen = hgen[g] }
#ifdef FIX_CANCEL_BIT
    /* fix: one CAS on the state word: (gen, open > 0) -> the same with the bit set */
    atomic {
        st = state[s];
        ok = (GEN(st) == gen && OPEN(st) != 0);
        if
        :: ok -> state[s] = st | CBIT; cancel_ok[g] = true
        :: else -> assert(finished[g]) /* CREW_ESTALE: the group had ended */
        fi
    }
#elif defined(FIX_CANCEL_CAS)
    /* crew__group_cancel as fixed: seen = load_acquire(&sl->cancelled_gen); loop { st =
     * load(&sl->state); ESTALE unless gen matches and open != 0; OK if seen == gen; CAS
     * (cancelled_gen: seen -> gen), on failure seen = the newer mark, and again }. Spin runs
     * sequentially consistent; the acquire / release pair on the mark is what gives the C code
     * the same guarantee (src/group.c). */
    byte seen;
    seen = cancelled_gen[s];
    do
    :: st = state[s];
       if
       :: !(GEN(st) == gen && OPEN(st) != 0) -> break
       :: else -> skip
       fi;
       if
       :: seen == gen -> cancel_ok[g] = true; break
       :: else -> skip
       fi;
       atomic {
           if
           :: cancelled_gen[s] == seen -> cancelled_gen[s] = gen; cancel_ok[g] = true; ok = true
           :: else -> seen = cancelled_gen[s]; ok = false
           fi
       }
       if
       :: ok -> break
       :: else -> skip
       fi
    od
#else
    /* crew__group_cancel: st = load_relaxed(&sl->state); ESTALE unless gen matches, open != 0 */
    atomic {
        st = state[s];
        ok = (GEN(st) == gen && OPEN(st) != 0);
        if
        :: ok -> cancel_ok[g] = true
        :: else -> skip
        fi
    }
    /* ... then store_relaxed(&sl->cancelled_gen, h.gen), a separate step */
    if
    :: ok -> cancelled_gen[s] = gen
    :: else -> skip
    fi
#endif
    cancel_done = true;
    /* crew__sched_cancel_group then drops queued tasks: covered by task()'s choice to drop. */
}
#endif

/* crew_wait(p, h): loop on crew__slot_status until it is not 1. */
proctype waiter(byte g) {
    byte s;
    byte gen;
    int st;
    bool canc;
    bool keep;
    bool mine; /* REPORT: this waiter set RBIT */
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
#if defined(FIX_CANCEL_BIT)
    /* the answer comes from the same load: a kept slot still has our gen and the bits */
    canc = (GEN(st) == gen && (st & (CBIT | DBIT)) != 0);
#ifdef REPORT
    /* crew__group_report: CAS RBIT into the finished, marked state of our generation; the one
     * that sets it frees the slot (keep_reported with no slot kept: next_generation, push). */
    if
    :: canc ->
        atomic {
            mine = (GEN(state[s]) == gen && OPEN(state[s]) == 0 && (state[s] & RBIT) == 0);
            if
            :: mine -> state[s] = state[s] | RBIT
            :: else -> skip
            fi
        }
        if
        :: mine ->
            atomic {
                assert(OPEN(state[s]) == 0 && GEN(state[s]) == gen);
                state[s] = (gen + 1) << 8 /* next_generation: no generation wraps here */
            }
            atomic { freestk[nfree] = s; nfree++ }
        :: else -> skip
        fi
    :: else -> skip
    fi;
#endif
#elif defined(CANCEL_GEN)
    /* 029ad83 and bb5c300, crew__slot_status: the generation moved or the count is 0, then
     * cancelled_gen == gen ? CREW_ECANCELED : CREW_OK (a second, relaxed load, either way) */
    canc = (cancelled_gen[s] == gen);
#else
    if
    :: GEN(st) != gen -> canc = false /* the generation moved on: CREW_OK */
    :: else ->
        canc = cancelled[s] /* 1d4ef7a: a second, relaxed load, as in crew__slot_status */
#ifdef FIX_RECHECK
        /* Proposed fix: load the state word again; the same generation means the slot was not
         * reused between the two loads, so the flag was this group's. */
        if
        :: GEN(state[s]) != gen -> canc = false
        :: else -> skip
        fi
#endif
    fi;
#endif
    /* A group that lost a task answers CREW_ECANCELED; one that lost none answers CREW_OK,
     * unless a crew_cancel of its handle saw it open (crew.h: then CREW_ECANCELED). */
    assert(!dropped[g] || canc);
    assert(!canc || dropped[g] || cancel_ok[g]);
#ifdef CANCELLER
    /* Never both: a crew_cancel that answered CREW_OK (it has returned) took effect. */
    assert(!(cancel_done && cancel_ok[g]) || canc)
#endif
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
        od;
#ifdef CANCELLER
        run canceller()
#endif
    }
}
