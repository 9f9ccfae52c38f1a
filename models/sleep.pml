/*
 * sleep.pml -- crew's sleep/wake protocol for workers (src/worker.c), as a Promela model.
 *
 * Property: no lost wake-up. Submitters push tasks while every worker may be on its way to
 * sleep; once nothing in the system can move any more (Spin's `timeout`), every task must have
 * run. A lost wake-up is exactly a state where all workers wait on their condition variables
 * while a task sits in the queue, so it ends in the assertion of `monitor` below.
 *
 * Memory model. Spin interleaves statements: every run is sequentially consistent. That is what
 * the code guarantees for the pattern modelled here (Dekker's: each side writes one variable,
 * then reads the other's): the waker makes work visible, then crew__waker_load (src/atomic.h) =
 * seq_cst fence + load of `sleepers`; the sleeper increments `sleepers` with a seq_cst
 * read-modify-write, then crew__sleeper_fence() = seq_cst fence, then looks for work. With a
 * seq_cst fence between each side's write and read, C11 forbids the outcome where both reads
 * miss the other's write (the store-buffering litmus test), so the SC interleavings below are all
 * the outcomes there are. The NO_FENCE variant shows why the waker's fence is needed: it models
 * the waker's store sitting in a store buffer past its read of `sleepers`.
 *
 * Not modelled (covered elsewhere): spinning before sleep (crew_config.spin = 0 is a valid
 * configuration, and spinning only delays the same steps); shutdown and must_leave (the tests
 * test_shutdown and tests/soak.c); waiters in crew_wait (same pattern on slot->waiters and
 * quiet_sleepers, see models/slots.pml for the handle side); the scheduler's internals (one
 * atomic take stands for crew__sched_take, whose own correctness is tested in test_prioq and
 * test_stress).
 *
 * Variants (spin -D...):
 *   (none)          the protocol as in the code: must verify.
 *   BROKEN_SLEEPER  sleep_for_work without its last look for work after counting itself: Spin
 *                   must find a lost wake-up.
 *   BROKEN_WAKER    crew__notify_work reading `sleepers` before the task is visible: must fail.
 *   NO_FENCE        the waker's seq_cst fence dropped (its store to the queue can be delayed
 *                   past its load of `sleepers`): must fail.
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
byte sleepers = 0;         /* p->sleepers: atomic, counts threads on the way to sleep */
byte sleeping_workers = 0; /* p->sleeping_workers: plain, under p->lock */
bool sleeping[W];          /* w->sleeping: plain, under p->lock */
bool waiting[W];           /* w is blocked inside pthread_cond_wait(&w->cv, &p->lock) */
bit lock = 0;              /* p->lock (pthread mutex) */
#ifdef NO_FENCE
byte buffered[S];          /* a submitter's pushes not yet visible to other threads */
#endif

inline lock_acquire() { atomic { lock == 0 -> lock = 1 } }
inline lock_release() { lock = 0 }

/* pthread_cond_signal(&w->cv): wakes w if it waits; a signal to nobody is lost, as in POSIX. */
inline cond_signal(w) { waiting[w] = false }

/* crew__sched_take: one atomic step (a CAS on a deque or a locked queue pop). */
inline take(got) {
    atomic {
        if
        :: work > 0 -> work--; got = true
        :: else -> got = false
        fi
    }
}

proctype worker(byte me) {
    bool got;
    do
    :: /* crew__worker_main (worker.c): look for work. */
       take(got);
       if
       :: got ->
progress_run:
           ran++ /* crew__run: a task taken once runs once */
       :: else ->
           /* sleep_for_work (worker.c) */
           lock_acquire();
           sleeping[me] = true;
           sleeping_workers++;
           sleepers++; /* atomic_fetch_add(&p->sleepers, 1): seq_cst RMW */
           /* crew__sleeper_fence(): seq_cst fence -- a no-op under SC interleaving */
#ifndef BROKEN_SLEEPER
           take(got); /* the last look, after counting itself */
#else
           got = false;
#endif
           if
           :: got -> skip /* returned to the worker loop, which runs it */
           :: else ->
               /* pthread_cond_wait(&w->cv, &p->lock): releases the lock atomically */
               atomic { waiting[me] = true; lock = 0 };
end_wait:      (!waiting[me]); /* signalled; no spurious wake-ups in this model */
               lock_acquire()
           fi;
           /* Not woken by wake_worker_locked (found work on the last look): take itself off
            * the counts. */
           if
           :: sleeping[me] ->
               sleeping[me] = false;
               sleeping_workers--;
               sleepers-- /* atomic_fetch_sub, seq_cst */
           :: else -> skip
           fi;
           lock_release();
           if
           :: got ->
progress_run2:
               ran++
           :: else -> skip
           fi
       fi
    od
}

proctype submitter(byte me) {
    byte i = 0;
    byte w;
    byte n;
    bool wake;
    do
    :: i < TASKS ->
#ifdef BROKEN_WAKER
        wake = (sleepers != 0); /* read before the push: the bug */
        work++;
#elif defined(NO_FENCE)
        buffered[me]++;         /* crew__sched_push, still in the store buffer */
        wake = (sleepers != 0); /* a plain load may overtake the buffered store */
#else
        work++;                 /* crew__sched_push: the task becomes visible */
        /* crew__notify_work: crew__waker_load(&p->sleepers) = seq_cst fence + load */
        wake = (sleepers != 0);
#endif
        if
        :: wake ->
            lock_acquire();
            /* crew__wake_locked(p, n = 1, slot = 0) */
            if
            :: sleeping_workers != 0 ->
                w = 0;
                n = 1;
                do
                :: w < W && n != 0 ->
                    if
                    :: sleeping[w] ->
                        /* wake_worker_locked: the waker takes w off the counts */
                        sleeping[w] = false;
                        sleeping_workers--;
                        sleepers--; /* atomic_fetch_sub, seq_cst */
                        cond_signal(w);
                        n--
                    :: else -> skip
                    fi;
                    w++
                :: else -> break
                od
            :: else -> skip
            fi;
            lock_release()
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
