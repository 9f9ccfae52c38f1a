#define _GNU_SOURCE /* rand_r */
/* test_deque.c -- the Chase-Lev deque (src/deque.c) alone, used as an external submission slot
 * is: an owner pushes and takes under a lock, thieves steal without it, single tasks or (with
 * the owner's takes giving way to them) batches. First the order on one thread; then every task
 * must be taken exactly once while two thieves race the owner, through array growth, with tasks
 * pushed by address and by value (a copy taken must come out whole: its three words from one
 * push). And a big array's block (src/deque.c's array_new): what it asks of the allocator and
 * advises as huge pages (the test wraps posix_memalign, aligned_alloc and madvise with
 * -Wl,--wrap) is the huge pages its places need, not one more for its header. Exits non-zero
 * on failure. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "deque.h"
#include "lock.h"
#include "check.h"

#define N 200000 /* tasks pushed in the race (scaled by CREW_TEST_SCALE, at least 2000) */

static crew_task tasks[N];
static _Atomic int taken[N]; /* times each task was taken (seq_cst: counted, then checked) */
static crew__deque deque;
static crew__lock lock;
static _Atomic int done; /* the owner has pushed everything (seq_cst) */
static atomic_uint claimers; /* batch claims in progress (crew__deque_steal_batch) */
static bool batches;         /* this round: one thief claims batches, the owner gives way */
static long n_tasks = N; /* this run's share of N */

static int fail(const char *what, long i) {
    fprintf(stderr, "test_deque: %s (%ld)\n", what, i);
    return 1;
}

static _Atomic int torn; /* copies whose words came from different pushes (seq_cst) */

static void by_value(void *arg) { (void)arg; }
/* A batch ends before a task of this function that is not its first (its own body: distinct). */
static void stop_mark(void *arg) { atomic_fetch_add(&torn, arg == NULL); }
static bool stops;            /* this round: batches end before stop marks */
/* Task i's function when pushed by value: in the rounds with stop marks, every
 * seventh is the stop mark, which ends a batch before it (a join's half, in the pool). */
static crew_fn fn_of(long i) { return stops && i % 7 == 3 ? stop_mark : by_value; }
/* Task i pushed by value: its words name it three times (function, argument, slot and
 * priority), so a torn copy shows. */
static int push_value(crew__deque *d, long i) {
    return crew__deque_push_value(d, fn_of(i), &tasks[i],
                                  crew__deque_aux((uint32_t)i, (uint32_t)i ^ 0x5a5au));
}

static void took(crew_task *t) {
    if (t->crew_flags_ & CREW__TASK_COPY) {
        long i = (crew_task *)t->arg - tasks;
        if (t->fn != fn_of(i) || i < 0 || i >= N || t->crew_private_.slot != (uint32_t)i ||
            t->priority != ((uint32_t)i ^ 0x5a5au)) {
            atomic_fetch_add(&torn, 1);
            return;
        }
        atomic_fetch_add(&taken[i], 1);
        return;
    }
    atomic_fetch_add(&taken[t - tasks], 1);
}

/* The last block of at least 2 MiB asked with an alignment, and the last range advised as huge
 * pages (this thread's calls only: the test's other threads ask for none). */
#define HUGE ((size_t)2 << 20)
static size_t asked_size, asked_align, advised_len;
static void *asked_at, *advised_at;
int __real_posix_memalign(void **to, size_t align, size_t n);
int __real_madvise(void *at, size_t len, int advice);
int __wrap_posix_memalign(void **to, size_t align, size_t n) {
    int rc = __real_posix_memalign(to, align, n);
    if (n >= HUGE) {
        asked_size = n, asked_align = align;
        asked_at = rc == 0 ? *to : NULL;
    }
    return rc;
}
void *__real_aligned_alloc(size_t align, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n) {
    void *at = __real_aligned_alloc(align, n);
    if (n >= HUGE)
        asked_size = n, asked_align = align, asked_at = at;
    return at;
}
int __wrap_madvise(void *at, size_t len, int advice) {
    if (advice == MADV_HUGEPAGE)
        advised_at = at, advised_len = len;
    return __real_madvise(at, len, advice);
}

/* An owner pushes 2^log tasks by value into a new deque, whose last array then holds 2^log
 * places (24 bytes each, after a 16-byte header): it was asked aligned to a huge page, with
 * the huge pages the places need and at most a small page more (never a huge page for the
 * header alone), and those huge pages advised; every task comes back whole, newest first. */
static int huge_array(unsigned log) {
    size_t n = (size_t)1 << log, places = n * sizeof(crew__deque_entry);
    size_t need = (places + HUGE - 1) & ~(HUGE - 1); /* the places' huge pages */
    crew__deque d;
    crew_task buf, *t;
    if (crew__deque_init(&d) != CREW_OK)
        return fail("init", (long)log);
    asked_at = advised_at = NULL;
    asked_size = asked_align = advised_len = 0;
    for (size_t i = 0; i < n; i++)
        if (push_value(&d, (long)(i % N)) != CREW_OK)
            return fail("huge array: push", (long)i);
    crew__deque_array *a = crew__load_relaxed(&d.array);
    if (a->mask + 1 != n)
        return fail("huge array: the array has the wrong size", (long)(a->mask + 1));
    if (asked_at != (void *)a || asked_align != HUGE)
        return fail("huge array: not asked aligned to a huge page", (long)asked_align);
    if ((uintptr_t)a % HUGE != 0)
        return fail("huge array: the block is not aligned to a huge page", (long)log);
    printf("test_deque: 2^%u places (%zu bytes): asked %zu bytes, advised %zu\n", log, places,
           asked_size, advised_len);
    if (asked_size < sizeof *a + places || asked_size > need + 4096)
        return fail("huge array: the size asked is not the places' huge pages", (long)asked_size);
    if (advised_at != (void *)a || advised_len > need || advised_len < (places & ~(HUGE - 1)))
        return fail("huge array: the range advised is not the places' huge pages",
                    (long)advised_len);
    for (size_t i = n; i-- > 0;) {
        if ((t = crew__deque_take(&d, &buf)) != &buf)
            return fail("huge array: take", (long)i);
        long want = (long)(i % N);
        if (t->arg != &tasks[want] || t->crew_private_.slot != (uint32_t)want)
            return fail("huge array: a task came back wrong", (long)i);
    }
    crew__deque_free(&d);
    return 0;
}

/* One thread: thieves take the oldest, the owner the newest. */
static int order(void) {
    crew__deque d;
    crew_task buf;
    bool contended = false;
    if (crew__deque_init(&d) != CREW_OK)
        return fail("init", 0);
    if (crew__deque_steal(&d, &buf, &contended) != NULL || crew__deque_take(&d, &buf) != NULL)
        return fail("an empty deque gave a task", 0);
    crew__deque_push(&d, tasks, 1000); /* grows the array */
    if (crew__deque_steal(&d, &buf, &contended) != &tasks[0] ||
        crew__deque_take(&d, &buf) != &tasks[999])
        return fail("a steal takes the oldest, a take the newest", 0);
    if (crew__deque_size(&d) != 998 || contended)
        return fail("size after a steal and a take", (long)crew__deque_size(&d));
    for (long i = 1; i < 999; i++)
        if (crew__deque_steal(&d, &buf, &contended) != &tasks[i])
            return fail("steals in FIFO order", i);
    if (crew__deque_steal(&d, &buf, &contended) != NULL)
        return fail("a drained deque gave a task", 0);
    /* One at a time, through two growths, and an empty owner take that claims nothing. */
    for (long i = 0; i < 1000; i++)
        if (crew__deque_push1(&d, &tasks[i]) != CREW_OK)
            return fail("push1", i);
    for (long i = 999; i >= 0; i--)
        if (crew__deque_take(&d, &buf) != &tasks[i])
            return fail("takes in LIFO order after one-task pushes", i);
    if (crew__deque_take(&d, &buf) != NULL || crew__deque_size(&d) != 0 ||
        crew__deque_steal(&d, &buf, &contended) != NULL)
        return fail("an emptied deque gave a task", 0);
    /* By value, mixed with by address, through a growth: copies into buf, in order, whole; a
     * copy pushed back (push1) is pushed by value again. */
    for (long i = 0; i < 600; i++)
        if ((i % 3 ? push_value(&d, i) : crew__deque_push1(&d, &tasks[i])) != CREW_OK)
            return fail("push by value", i);
    crew_task *t = crew__deque_steal(&d, &buf, &contended);
    if (t != &tasks[0])
        return fail("the oldest, pushed by address, is stolen as it is", 0);
    t = crew__deque_steal(&d, &buf, &contended);
    if (t != &buf || !(t->crew_flags_ & CREW__TASK_COPY) || t->arg != &tasks[1] ||
        t->crew_private_.slot != 1 || t->priority != (1u ^ 0x5a5au) || t->fn != by_value)
        return fail("a task pushed by value is stolen as a whole copy", 1);
    if (crew__deque_push1(&d, t) != CREW_OK)
        return fail("a copy pushed back", 1);
    t = crew__deque_take(&d, &buf);
    if (t != &buf || t->arg != &tasks[1] || t->crew_private_.slot != 1)
        return fail("a copy pushed back is taken by value", 1);
    for (long i = 599; i >= 2; i--) {
        t = crew__deque_take(&d, &buf);
        if (i % 3 ? t != &buf || t->arg != &tasks[i] || t->crew_private_.slot != (uint32_t)i
                  : t != &tasks[i])
            return fail("takes in LIFO order, by value and by address", i);
    }
    if (crew__deque_size(&d) != 0)
        return fail("a drained deque's size", (long)crew__deque_size(&d));
    /* Batches: the oldest first, whole copies, in order. */
    atomic_uint nobody = 0;
    for (long i = 0; i < 40; i++)
        if ((i % 2 ? push_value(&d, i) : crew__deque_push1(&d, &tasks[i])) != CREW_OK)
            return fail("push for a batch", i);
    crew__deque_entry e[16];
    if (crew__deque_steal_batch(&d, e, 16, NULL, &nobody, &contended) != 16 || contended ||
        crew__deque_size(&d) != 24 || atomic_load(&nobody) != 0)
        return fail("a batch claims 16 of 40 and leaves the count as it was", 0);
    for (long i = 0; i < 16; i++) {
        t = crew__deque_entry_task(&e[i], &buf);
        if (i % 2 ? t != &buf || t->arg != &tasks[i] || t->crew_private_.slot != (uint32_t)i ||
                        t->priority != ((uint32_t)i ^ 0x5a5au)
                  : t != &tasks[i])
            return fail("a batch's tasks come out oldest first, whole", i);
    }
    atomic_store(&nobody, 1); /* a claim in progress: the owner's take gives way */
    if (crew__deque_take_unless(&d, &buf, &nobody) != NULL || crew__deque_size(&d) != 24)
        return fail("an owner's take while a batch is claimed", 0);
    atomic_store(&nobody, 0);
    if (crew__deque_take_unless(&d, &buf, &nobody) != &buf || buf.arg != &tasks[39] ||
        crew__deque_steal_batch(&d, e, 16, NULL, &nobody, &contended) != 16 ||
        crew__deque_steal_batch(&d, e, 16, NULL, &nobody, &contended) != 7 || e[0].arg != &tasks[32] ||
        crew__deque_steal_batch(&d, e, 16, NULL, &nobody, &contended) != 0)
        return fail("a take, then batches to the end", 0);
    /* A task whose function is the stop mark is claimed only first: the batch ends before it. */
    for (long i = 0; i < 6; i++)
        if (crew__deque_push_value(&d, i == 2 || i == 3 ? stop_mark : by_value, &tasks[i], 0) !=
            CREW_OK)
            return fail("push for a stopped batch", i);
    if (crew__deque_steal_batch(&d, e, 16, stop_mark, &nobody, &contended) != 2 ||
        e[1].arg != &tasks[1] ||
        crew__deque_steal_batch(&d, e, 16, stop_mark, &nobody, &contended) != 1 ||
        e[0].arg != &tasks[2] ||
        crew__deque_steal_batch(&d, e, 16, stop_mark, &nobody, &contended) != 3 ||
        e[0].arg != &tasks[3] || e[2].arg != &tasks[5])
        return fail("a batch ends before a stop mark that is not its first task", 0);
    crew__deque_free(&d);
    return 0;
}

/* A deque whose top and bottom both stand at `at` (pushes and takes), so that its next places
 * wrap around the end of its first array where at is near a multiple of 256. */
static int deque_at(crew__deque *d, long at) {
    crew_task buf;
    if (crew__deque_init(d) != CREW_OK)
        return 1;
    for (long i = 0; i < at; i++)
        if (crew__deque_push_value(d, by_value, &tasks[0], 0) != CREW_OK ||
            crew__deque_take(d, &buf) != &buf)
            return 1;
    return 0;
}

/* crew__deque_steal_batch, every case near the wrap: the victim's top on either side of the end
 * of its array, every batch size, every backlog, a stop mark at every place or none. The batch
 * comes out oldest first and whole, and the victim keeps the rest, starting at the first task
 * not claimed. */
static int batch_wraps(void) {
    static const size_t maxes[] = {2, 3, 5, 8, 16};
    atomic_uint nobody = 0;
    crew_task buf;
    long cases = 0;
    for (long vt = 248; vt <= 258; vt++)
        for (size_t mi = 0; mi < sizeof maxes / sizeof maxes[0]; mi++)
            for (long len = 1; len <= 18; len++)
                for (long stop = -1; stop < len; stop++, cases++) {
                    size_t max = maxes[mi];
                    crew__deque d;
                    if (deque_at(&d, vt))
                        return fail("init at an offset", cases);
                    for (long i = 0; i < len; i++)
                        if (crew__deque_push_value(&d, i == stop ? stop_mark : by_value,
                                                   &tasks[i], 0) != CREW_OK)
                            return fail("the victim's tasks", cases);
                    long k = len < (long)max ? len : (long)max; /* the batch expected */
                    if (stop > 0 && stop < k)
                        k = stop;
                    bool contended = false;
                    crew__deque_entry e[16];
                    if (crew__deque_steal_batch(&d, e, max, stop_mark, &nobody, &contended) !=
                            (size_t)k ||
                        contended)
                        return fail("a batch near the wrap", cases);
                    for (long i = 0; i < k; i++)
                        if (crew__deque_entry_task(&e[i], &buf) != &buf || buf.arg != &tasks[i] ||
                            buf.fn != (i == stop ? stop_mark : by_value))
                            return fail("a wrapped batch comes out oldest first, whole", cases);
                    for (long i = k; i < len; i++)
                        if (crew__deque_steal(&d, &buf, &contended) != &buf ||
                            buf.arg != &tasks[i])
                            return fail("the victim keeps the rest, in order", cases);
                    if (crew__deque_steal(&d, &buf, &contended) != NULL)
                        return fail("the victim holds no more", cases);
                    crew__deque_free(&d);
                }
    return 0;
}

/* The owner: pushes runs of 1..16 tasks under the lock (all at once, or one by one), and every
 * other time takes up to 8 back, newest first (as a waiting submitter does). */
static void *owner(void *arg) {
    (void)arg;
    unsigned seed = 1;
    for (long i = 0; i < n_tasks;) {
        long k = 1 + (long)(rand_r(&seed) % 16);
        if (k > n_tasks - i)
            k = n_tasks - i;
        crew__lock_acquire(&lock);
        /* A third of the runs one task at a time, through the inlined one-task push (which
         * hands a full array to the general push to grow), a third by value. */
        int how = (int)(rand_r(&seed) % 3); /* by address: one or all at once; by value */
        for (long j = 0; j < (how != 1 ? k : 1); j++)
            if ((how == 0   ? crew__deque_push1(&deque, &tasks[i + j])
                 : how == 1 ? crew__deque_push(&deque, &tasks[i], (size_t)k)
                            : push_value(&deque, i + j)) != CREW_OK) {
                crew__lock_release(&lock);
                fprintf(stderr, "test_deque: out of memory\n");
                exit(1);
            }
        i += k;
        crew_task buf[8], *back[8]; /* a take by value copies into its own buffer */
        int nb = 0;
        for (int want = rand_r(&seed) % 2 ? (int)(rand_r(&seed) % 9) : 0; nb < want; nb++)
            if (!(back[nb] = batches ? crew__deque_take_unless(&deque, &buf[nb], &claimers)
                                     : crew__deque_take(&deque, &buf[nb])))
                break;
        crew__lock_release(&lock);
        for (int j = 0; j < nb; j++)
            took(back[j]);
    }
    atomic_store(&done, 1);
    return NULL;
}

/* A thief: single steals, or (arg non-NULL) batches of 2..16 tasks, which end before a stop
 * mark in the rounds with stops. */
static void *thief(void *arg) {
    unsigned seed = 7;
    for (;;) {
        int finished = atomic_load(&done); /* before the look: then empty means drained */
        bool contended = false, got;
        crew_task buf, *t;
        if (arg) {
            crew__deque_entry e[16];
            size_t n = crew__deque_steal_batch(&deque, e, 2 + rand_r(&seed) % 15,
                                               stops ? stop_mark : NULL, &claimers, &contended);
            for (size_t i = 0; i < n; i++)
                took(crew__deque_entry_task(&e[i], &buf));
            got = n != 0;
        } else if ((got = (t = crew__deque_steal(&deque, &buf, &contended)) != NULL)) {
            took(t);
        }
        if (!got && finished && !contended && crew__deque_size(&deque) == 0)
            return NULL;
    }
}

static int race(bool spin) {
    for (long i = 0; i < n_tasks; i++)
        atomic_store(&taken[i], 0);
    atomic_store(&done, 0);
    if (crew__deque_init(&deque) != CREW_OK || crew__lock_init(&lock, spin) != 0)
        return fail("init", 0);
    pthread_t th[3];
    pthread_create(&th[0], NULL, owner, NULL);
    pthread_create(&th[1], NULL, thief, NULL);
    pthread_create(&th[2], NULL, thief, batches ? &batches : NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    crew__deque_free(&deque);
    crew__lock_destroy(&lock);
    if (atomic_load(&torn) != 0)
        return fail("torn copies", atomic_load(&torn));
    for (long i = 0; i < n_tasks; i++)
        if (atomic_load(&taken[i]) != 1)
            return fail(atomic_load(&taken[i]) ? "a task was taken twice" : "a task was lost", i);
    return 0;
}

int main(int argc, char **argv) {
    crewtest_help(argc, argv, "The Chase-Lev deque alone: owner pushes and takes, thieves steal, batches.");
    const char *env = getenv("CREW_TEST_SCALE"); /* valgrind runs a hundredth */
    double scale = env ? atof(env) : 1;
    if (scale > 0 && scale < 1) {
        n_tasks = (long)(N * scale);
        if (n_tasks < 2000)
            n_tasks = 2000;
    }
    if (order() || batch_wraps())
        return 1;
#if defined(__linux__) && defined(MADV_HUGEPAGE) /* where deque.c asks for huge pages */
    /* 2^17 places (3 MiB) end inside a huge page, 2^18 (6 MiB) fill three. */
    if (huge_array(17) || huge_array(18))
        return 1;
#endif
    for (int round = 0; round < 12; round++) {
        batches = round >= 4;
        stops = round >= 8;
        if (race(round % 2 == 0))
            return 1;
    }
    printf("test_deque: ok\n");
    return 0;
}
