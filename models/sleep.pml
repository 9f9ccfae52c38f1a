/*
 * sleep.pml -- crew's sleep/wake protocol: the eventcount of src/ec.h, as the workers use it
 * (src/worker.c: sleep_for_work, crew__wake_work, crew__wake_locked), as a Promela model. The
 * eventcount's two entry points are inlines named after them (ec_wait for crew__ec_wait, the
 * sleeper's whole wait; ec_notify_locked and ec_sleepers for crew__ec_notify's halves), built
 * from the steps of src/ec.c (prepare, unlist, the commit inside ec_wait); the worker and
 * submitter processes call them in the order the C code does.
 *
 * Property: no lost wake-up. Submitters push tasks while every worker may be on its way to
 * sleep; once nothing in the system can move any more (Spin's `timeout`), every task must have
 * run. A lost wake-up is exactly a state where all workers sleep in their OS wait while a task
 * sits in the queue, so it ends in the assertion of `monitor` below.
 *
 * The OS wait (ec.h, THE OS WAIT) is the futex of the Linux build: the sleeper releases the
 * lock, then FUTEX_WAITs while its word is 0 (the kernel's compare and sleep is one atomic
 * step), then takes the lock again; a notifier sets the chosen sleeper's word under the lock and,
 * a worker's word being in its record (it outlives the wait), makes its FUTEX_WAKE after
 * releasing it (crew__wake: crew__ec_choose_locked, then crew__ec_wake_chosen). That wake can
 * arrive late, when its sleeper has already returned and is asleep again (on the same word,
 * reset to 0): a spurious wake-up, after which crew__ec_wait looks again and may sleep again,
 * as modelled. -DCONDVAR models the portable build instead: a
 * condition variable released atomically with the lock and signalled under it.
 *
 * Memory model. Spin interleaves statements: every run is sequentially consistent. That is what
 * the code guarantees for the pattern modelled here (Dekker's: each side writes one variable,
 * then reads the other's): the waker makes work visible, then crew__ec_sleepers (src/ec.h) =
 * seq_cst fence + load of the count; crew__ec_wait (its prepare step) increments the count with a
 * seq_cst read-modify-write, then a seq_cst fence, then it looks for work. With a
 * seq_cst fence between each side's write and read, C11 forbids the outcome where both reads
 * miss the other's write (the store-buffering litmus test), so the SC interleavings below are all
 * the outcomes there are. The NO_FENCE variant shows why the waker's fence is needed: it models
 * the waker's store sitting in a store buffer past its read of the count.
 *
 * The eventcount's list of nodes (crew__ec.head) is modelled by counted[]: a node is listed
 * exactly while it is counted (both change together, under the lock, in prepare and unlist), and
 * crew__ec_notify_locked visits the listed nodes: here every worker whose node is counted, in
 * index order (the list's order is free: any order is one of the interleavings checked).
 *
 * The lookers (src/pool.h, crew_pool.lookers): a worker counts itself in from a look that found
 * nothing until it finds a task or sleeps, and a woken worker is counted in by its waker; a
 * submitter that sees a looker wakes nobody. A worker that stops looking as the last looker,
 * with tasks queued and workers asleep, wakes one (worker.c, stop_looking). The model checks
 * that this skipped wake-up is never a lost one: the looker leaves the count before the
 * eventcount's fence and its last look. (A worker that leaves without a last look hands on too:
 * leaving is not modelled, see below.)
 *
 * Not modelled (covered elsewhere): spinning before sleep (crew_config.spin = 0 is a valid
 * configuration, and spinning only delays the same steps); shutdown and must_leave (the tests
 * test_shutdown and tests/soak.c); waiters in crew_wait (same pattern on slot->waiters and
 * the quiet and room eventcounts, see models/slots.pml for the handle side); the scheduler's internals (one
 * atomic take stands for crew__sched_take, whose own correctness is tested in test_prioq and
 * test_stress).
 *
 * Variants (spin -D...):
 *   (none)          the protocol as in the code (futex): must verify.
 *   CONDVAR         the portable build's OS wait (condition variables): must verify.
 *   BROKEN_FUTEX    the sleeper sleeps without comparing its word (a FUTEX_WAIT whose compare
 *                   is not atomic with the sleep, or a plain sleep after unlocking): a
 *                   notifier that chose it between its unlock and its sleep woke nobody, and
 *                   it sleeps on: must fail.
 *   BROKEN_SLEEPER  crew__ec_wait without the last look after counting the sleeper (look()
 *                   not called): Spin must find a lost wake-up.
 *   BROKEN_WAKER    crew__wake_work asking crew__ec_sleepers before the task is visible: must
 *                   fail.
 *   NO_FENCE        the waker's seq_cst fence dropped (its store to the queue can be delayed
 *                   past its load of the count): must fail.
 *   BROKEN_LOOKER   the worker leaves the lookers after its last look instead of before it: a
 *                   submitter that saw it looking wakes nobody, and the task is stranded: must
 *                   fail.
 *   W, S, TASKS     workers, submitters, tasks per submitter (default 2, 2, 2).
 */

#ifndef W
#define W 2
#endif
#ifndef S
#define S 2
#endif
#ifndef TASKS
#define TASKS 2
#endif
#define TOTAL (S * TASKS)

byte work = 0;             /* tasks visible in the scheduler's queues (crew__sched_push/take) */
byte ran = 0;              /* tasks run (crew__run) */
byte count = 0;            /* p->work.count (crew__ec): atomic, sleepers between prepare and wake */
bool counted[W];           /* w->sleeper.node[0].counted (crew__ec_node): listed on p->work, under
                            * p->lock */
bool waiting[W];           /* w is asleep in its OS wait: FUTEX_WAIT on w->sleeper.word, or
                            * (CONDVAR) pthread_cond_wait(&w->cv, &p->lock) */
bit word[W];               /* w->sleeper.word: set by the notifier that chose w, under the lock */
bit lock = 0;              /* p->lock (pthread mutex) */
byte lookers = 0;          /* p->lookers: atomic (seq_cst), workers looking for a task */
#ifdef NO_FENCE
byte buffered[S];          /* a submitter's pushes not yet visible to other threads */
#endif

inline lock_acquire() { atomic { lock == 0 -> lock = 1 } }
inline lock_release() { lock = 0 }

/* FUTEX_WAKE(&word[w]) or pthread_cond_signal(&w->cv): wakes w if it sleeps; a wake-up to
 * nobody is lost, as in the kernel and in POSIX. */
inline os_wake(w) { waiting[w] = false }

/* crew__sched_take: one atomic step (a CAS on a deque or a locked queue pop). */
inline take(got) {
    atomic {
        if
        :: work > 0 -> work--; got = true
        :: else -> got = false
        fi
    }
}

/* ---- The eventcount (src/ec.h, src/ec.c). ---- */

/* prepare (ec.c), lock held: listed and counted = true; count++ (seq_cst RMW); then
 * crew__ec_wait's crew__ec_fence_() (seq_cst fence: a no-op under SC interleaving). */
inline prepare(me) { counted[me] = true; count++ }

/* unlist (ec.c), lock held: off the list and the count unless a notifier took it off already. */
inline unlist(me) {
    if
    :: counted[me] -> counted[me] = false; count--
    :: else -> skip
    fi
}

/* crew__ec_wait(&w->sleeper, &p->lock, last_look, ...), lock held: unchosen (word 0),
 * prepare, the last look (last_look in worker.c: one take), then FOUND without sleeping, or the
 * OS wait (os_wait in ec.c) and, with the lock again, WOKEN if a notifier chose it (the word;
 * the notifier took it off the list and the count), else (a late wake-up meant for an earlier
 * wait: spurious) the last look again. The lookers' bug of BROKEN_LOOKER sits in the worker's
 * look, after the take. */
inline ec_wait(me, got, woken) {
    woken = false;
    word[me] = 0;
    prepare(me);
    do
    :: true ->
#ifndef BROKEN_SLEEPER
        take(got); /* look(): the last look, after counting itself */
#else
        got = false;
#endif
#ifdef BROKEN_LOOKER
        if /* leaving the lookers only now, after the last look: the bug */
        :: looking -> looking = false; lookers--
        :: else -> skip
        fi;
#endif
        if
        :: got -> unlist(me); break /* FOUND: returned to the worker loop, which runs it */
        :: else ->
#ifdef CONDVAR
            atomic { waiting[me] = true; lock = 0 }; /* pthread_cond_wait */
#elif defined(BROKEN_FUTEX)
            lock_release();
            waiting[me] = true;                      /* sleeps whatever the word says */
#else
            lock_release();
            atomic {                                 /* FUTEX_WAIT(&word, 0): the kernel */
                if                                   /* compares and sleeps in one step */
                :: word[me] == 0 -> waiting[me] = true
                :: else -> skip                      /* EAGAIN: chosen in between */
                fi
            };
#endif
end_wait:
            (!waiting[me]);
            lock_acquire();
            if
            :: word[me] -> woken = true; break       /* chosen: off the list already */
            :: else -> skip                          /* spurious: still counted, look again */
            fi
        fi
    od
}

/* crew__ec_sleepers(&p->work), crew__ec_notify's first half: crew__ec_fence_() (seq_cst fence) +
 * load of count. */
inline ec_sleepers(result) { result = (count != 0) }

/* crew__ec_choose_locked(&p->work, wake_match, {n}, later) (crew__wake), lock held: visit the
 * listed nodes; wake_match accepts up to n workers and counts each among the lookers
 * (worker.c); each accepted node leaves the list and the count and its sleeper's word is set
 * (choose in ec.c). The wake-up itself: with CONDVAR signalled here, under the lock; with the
 * futex left for crew__ec_wake_chosen (chosen: the worker, or W for none; n is 1 here). */
inline ec_choose_locked(w, n, chosen) {
    w = 0;
    chosen = W;
    do
    :: w < W && n != 0 ->
        if
        :: counted[w] -> counted[w] = false; count--; lookers++; n--; word[w] = 1;
#ifdef CONDVAR
            os_wake(w)
#else
            chosen = w
#endif
        :: else -> skip
        fi;
        w++
    :: else -> break
    od
}

/* crew__wake(p, 1, 0): crew__ec_choose_locked under the lock, choosing one worker, then (the
 * futex) crew__ec_wake_chosen's FUTEX_WAKE after the unlock, at any later moment. */
inline wake_one(w, n, did) {
    lock_acquire();
    n = 1;
    ec_choose_locked(w, n, did);
    lock_release();
    if
    :: did < W -> os_wake(did)
    :: else -> skip
    fi;
    w = 0; n = 0; did = 0 /* scratch, reset: fewer states */
}

/* stop_looking (worker.c), after a look that found a task: leave the lookers (seq_cst RMW, its
 * old value in was); the last one out, with workers asleep and tasks queued, wakes one
 * (hand_on). */
inline stop_looking(was, sl, w, n, did) {
    looking = false;
    atomic { was = lookers; lookers-- };
    ec_sleepers(sl);
    if
    :: was == 1 && sl && work > 0 -> wake_one(w, n, did)
    :: else -> skip
    fi;
    was = 0; sl = false /* scratch, reset: fewer states */
}

proctype worker(byte me) {
    bool got;
    bool woken;
    bool looking = false;
    byte was;
    bool sl;
    byte w;
    byte n;
    byte did;
    do
    :: /* crew__worker_main (worker.c): look for work (worker_take). */
       take(got);
       if
       :: got ->
           if
           :: looking -> stop_looking(was, sl, w, n, did)
           :: else -> skip
           fi;
progress_run:
           ran++ /* crew__run: a task taken once runs once */
       :: else ->
           if
           :: !looking -> looking = true; lookers++
           :: else -> skip
           fi;
#ifndef BROKEN_LOOKER
           /* worker_sleep: leave the lookers before the sleep (and its fence and last look);
            * it hands on below only if it does not sleep (leave_lookers, hand_on) */
           if
           :: looking -> looking = false; atomic { was = lookers; lookers-- }
           :: else -> was = 0
           fi;
#endif
           /* sleep_for_work (worker.c) */
           lock_acquire();
           ec_wait(me, got, woken);
           if
           :: woken -> looking = true /* wake_match counted it among the lookers */
           :: else -> skip
           fi;
           lock_release();
           if
           :: got ->
#ifndef BROKEN_LOOKER
               /* did not sleep: the last looker hands on (more of a burst may be queued) */
               ec_sleepers(sl);
               if
               :: was == 1 && sl && work > 0 -> wake_one(w, n, did)
               :: else -> skip
               fi;
               was = 0; sl = false;
#endif
progress_run2:
               ran++
           :: else -> was = 0
           fi
       fi
    od
}

proctype submitter(byte me) {
    byte i = 0;
    byte w;
    byte n;
    bool wake;
    byte did;
    do
    :: i < TASKS ->
#ifdef BROKEN_WAKER
        ec_sleepers(wake);      /* read before the push: the bug */
        work++;
#elif defined(NO_FENCE)
        buffered[me]++;         /* crew__sched_push, still in the store buffer */
        ec_sleepers(wake);      /* without the fence, the load may overtake the buffered store */
#else
        work++;                 /* crew__sched_push: the task becomes visible */
        ec_sleepers(wake);      /* crew__wake_work: crew__ec_sleepers(&p->work) */
#endif
        /* crew__wake_work: with a looker in sight, nobody is woken (seq_cst load, after the
         * fence of crew__ec_sleepers) */
        if
        :: wake && lookers == 0 -> wake_one(w, n, did)
        :: else -> skip
        fi;
        i++
    :: else -> break
    od
}

#ifdef NO_FENCE
/* The store buffer of submitter s drains at some later, arbitrary moment. */
proctype drain(byte s) {
end_drain:
    do
    :: atomic { buffered[s] > 0 -> buffered[s]--; work++ }
    od
}
#endif

/* When no process can move any more, every task must have run and none be left queued. */
proctype monitor() {
    timeout -> assert(ran == TOTAL && work == 0)
}

init {
    byte k;
    atomic {
        k = 0;
        do
        :: k < W -> run worker(k); k++
        :: else -> break
        od;
        k = 0;
        do
        :: k < S ->
            run submitter(k);
#ifdef NO_FENCE
            run drain(k);
#endif
            k++
        :: else -> break
        od;
        run monitor()
    }
}
