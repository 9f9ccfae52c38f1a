/*
 * ec.c -- the eventcount's sleeping and waking halves (ec.h says what the eventcount is and how
 * to use it), the OS wait under them (a futex on Linux, condition variables elsewhere), each
 * thread's own condition variable for timed sleeps on the monotonic clock.
 */
#include <errno.h>

#include "base.h"
#include "ec.h"
#include "list.h"

#if CREW__EC_FUTEX
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Sleep while *word is 0 (the kernel compares and sleeps atomically), until a FUTEX_WAKE or, if
 * until is not NULL, that CLOCK_MONOTONIC time: 0, or ETIMEDOUT, EAGAIN (*word was not 0) or
 * EINTR. */
static int futex_wait(atomic_uint *word, const struct timespec *until) {
    long rc;
    if (until) /* BITSET without FUTEX_CLOCK_REALTIME: an absolute CLOCK_MONOTONIC deadline */
        rc = syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, 0u, until, NULL,
                     FUTEX_BITSET_MATCH_ANY);
    else
        rc = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0u, NULL, NULL, 0);
    return rc == 0 ? 0 : errno;
}

/* Wake the one thread that sleeps on word, if any (none: nothing happens). */
static void futex_wake(atomic_uint *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#endif

/* Sleeper, lock held: count and list n on its eventcount. */
static void prepare(crew__ec_node *n) {
    crew__ec *ec = n->ec;
    crew__assert(!n->counted); /* counted once: its last wait unlisted it */
    n->counted = true;
    CREW__LIST_PUSH(ec->head, n);
    /* Seq_cst: the sleeper's write in Dekker's pattern; the fence in crew__ec_wait orders it
     * before the last look (pairs with the notifier's fence in crew__ec_sleepers). */
    crew__fetch_add_seq_cst(&ec->count, 1u);
}

/* Lock held: n off its eventcount's list and count, if it is still on them. */
static void unlist(crew__ec_node *n) {
    if (!n->counted)
        return;
    crew__ec *ec = n->ec;
    n->counted = false;
    CREW__LIST_UNLINK(ec->head, n);
    n->next = n->prev = NULL;
    unsigned was = crew__fetch_sub_seq_cst(&ec->count, 1u); /* seq_cst: pairs with the increment */
    crew__assert(was != 0); /* n was in it (exact: the lock) */
    crew__unused(was);
}

static void unlist_all(crew__ec_sleeper *s) {
    for (unsigned i = 0; i < s->n; i++)
        unlist(&s->node[i]);
}

static CREW__TLS unsigned long tls_wakeups;

/* Sleeper, lock held: a wait starts, no notifier has chosen s yet. */
static void unchosen(crew__ec_sleeper *s) {
#if CREW__EC_FUTEX
    crew__store_relaxed(&s->word, 0u); /* relaxed: under the lock, which notifiers take */
#else
    s->woken = false;
#endif
}

/* Lock held: did a notifier choose s? */
static bool chosen(crew__ec_sleeper *s) {
#if CREW__EC_FUTEX
    return crew__load_relaxed(&s->word) != 0; /* relaxed: under the lock, which it was set under */
#else
    return s->woken;
#endif
}

/* Notifier, lock held: choose s (one of its nodes matched): off every list, marked, and woken
 * (ec.h, THE OS WAIT). */
static void choose(crew__ec_sleeper *s, crew__ec_wakes *later) {
    unlist_all(s);
#if CREW__EC_FUTEX
    /* Relaxed: the sleeper reads it under the lock, or before its system call only to skip
     * it; the kernel's compare in FUTEX_WAIT is ordered against FUTEX_WAKE by the kernel. */
    crew__store_relaxed(&s->word, 1u);
    /* A word that outlives the wait may be woken after the unlock: if its sleeper has returned
     * meanwhile, and even sleeps again, the late wake is a spurious one, which crew__ec_wait
     * looks again after. Any other under the lock: the sleeper cannot leave crew__ec_wait
     * before it takes the lock again, so its word, often on its stack, is still there. */
    if (later && s->lasting && later->n < CREW__EC_WAKES)
        later->word[later->n++] = &s->word;
    else
        futex_wake(&s->word);
#else
    (void)later;
    s->woken = true;
    pthread_cond_signal(s->cv); /* under the lock: the cv may be gone once it is released */
#endif
}

/* The OS wait: release lock, sleep until chosen (or until, or spuriously), take lock again.
 * Returns 0, ETIMEDOUT, or another value for a return to look again after. */
static int os_wait(crew__ec_sleeper *s, pthread_mutex_t *lock, const struct timespec *until) {
    tls_wakeups++; /* counted as it goes to sleep: a wake-up that came first is one too */
    if (until && until->tv_sec < 0) /* long past (the futex call would refuse it) */
        return ETIMEDOUT;
#if CREW__EC_FUTEX
    pthread_mutex_unlock(lock);
    int rc = 0;
    /* Relaxed: spares the system call when a notifier chose s in between; the verdict is
     * chosen(), read under the lock again. */
    if (crew__load_relaxed(&s->word) == 0)
        rc = futex_wait(&s->word, until);
    pthread_mutex_lock(lock);
    return rc;
#else
    return until ? pthread_cond_timedwait(s->cv, lock, until) : pthread_cond_wait(s->cv, lock);
#endif
}

enum crew__ec_end crew__ec_wait(crew__ec_sleeper *s, pthread_mutex_t *lock,
                                bool (*look)(void *ctx), void *ctx, const struct timespec *until) {
    crew__assert(s->n != 0); /* on some eventcount, or no notifier could ever wake it */
    crew__assert(!until || (until->tv_nsec >= 0 && until->tv_nsec < 1000000000L));
    unchosen(s);
    for (unsigned i = 0; i < s->n; i++)
        prepare(&s->node[i]);
    crew__ec_fence_();
    for (;;) {
        if (look(ctx)) {
            unlist_all(s);
            return CREW__EC_FOUND;
        }
        int rc = os_wait(s, lock, until);
        if (chosen(s)) /* the notifier took it off every list */
            return CREW__EC_WOKEN;
        if (rc == ETIMEDOUT) {
            unlist_all(s);
            return CREW__EC_TIMEDOUT;
        }
        /* A spurious return: still counted everywhere, so the next look is a last look too. */
    }
}

enum crew__ec_end crew__ec_wait_for(crew__ec *ec, pthread_mutex_t *lock, bool (*look)(void *ctx),
                                    void *ctx, const struct timespec *until) {
    crew__ec_sleeper me;
    crew__ec_sleeper_init(&me, NULL);
    crew__ec_on(&me, ec, NULL);
    enum crew__ec_end end;
    while ((end = crew__ec_wait(&me, lock, look, ctx, until)) == CREW__EC_WOKEN)
        ;
    return end;
}

unsigned crew__ec_choose_locked(crew__ec *ec, crew__ec_match match, void *ctx,
                                crew__ec_wakes *later) {
    unsigned woke = 0;
    crew__ec_node *n = ec->head;
    while (n) {
        /* choose() unlists the sleeper's nodes on other eventcounts only (crew__ec_on), so the
         * next node here stays listed. */
        crew__ec_node *next = n->next;
        crew__assert(n->counted && n->ec == ec); /* listed exactly while counted */
        if (!match || match(ctx, n->data)) {
            choose(n->who, later);
            woke++;
        }
        n = next;
    }
    return woke;
}

unsigned crew__ec_notify_locked(crew__ec *ec, crew__ec_match match, void *ctx) {
    return crew__ec_choose_locked(ec, match, ctx, NULL);
}

#if CREW__EC_FUTEX
void crew__ec_wake_chosen(crew__ec_wakes *later) {
    for (unsigned i = 0; i < later->n; i++)
        futex_wake(later->word[i]);
    later->n = 0;
}
#endif

unsigned crew__ec_notify_slow(crew__ec *ec, pthread_mutex_t *lock, crew__ec_match match,
                              void *ctx) {
    crew__ec_wakes later = {.n = 0};
    pthread_mutex_lock(lock);
    unsigned woke = crew__ec_choose_locked(ec, match, ctx, &later);
    pthread_mutex_unlock(lock);
    crew__ec_wake_chosen(&later);
    return woke;
}

void crew__ec_sleeper_init(crew__ec_sleeper *s, pthread_cond_t *cv) {
#if CREW__EC_FUTEX
    (void)cv;
    crew__atomic_init(&s->word, 0u);
    s->lasting = false;
#else
    s->cv = cv ? cv : crew__ec_thread_cv();
    s->woken = false;
#endif
    s->n = 0;
}

int crew__ec_sleeper_own(crew__ec_sleeper *s) {
#if CREW__EC_FUTEX
    crew__ec_sleeper_init(s, NULL);
    s->lasting = true;
    return 0;
#else
    int rc = crew__cond_init_monotonic(&s->own);
    if (rc == 0)
        crew__ec_sleeper_init(s, &s->own);
    return rc;
#endif
}

void crew__ec_sleeper_free(crew__ec_sleeper *s) {
#if CREW__EC_FUTEX
    (void)s;
#else
    pthread_cond_destroy(&s->own);
#endif
}

static CREW__TLS pthread_cond_t tls_cv;
static CREW__TLS bool tls_cv_made;

pthread_cond_t *crew__ec_thread_cv(void) {
    /* glibc's pthread_cond_init cannot fail with valid attributes. Were it to, the zero-filled
     * cv is glibc's static initialiser, on CLOCK_REALTIME: a CLOCK_MONOTONIC deadline would
     * read as long past, and timed waits on this thread would end at once (no hang, no lost
     * wake-up: untimed waits are unaffected). */
    if (__builtin_expect(!tls_cv_made, 0)) {
        crew__cond_init_monotonic(&tls_cv);
        tls_cv_made = true;
    }
    return &tls_cv;
}

unsigned long crew__ec_thread_wakeups(void) { return tls_wakeups; }

int crew__cond_init_monotonic(pthread_cond_t *cv) {
    pthread_condattr_t ca;
    int rc = pthread_condattr_init(&ca);
    if (rc != 0)
        return rc;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    rc = pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc;
}
