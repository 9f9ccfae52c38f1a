/*
 * ec.c -- the eventcount's sleeping and waking halves (ec.h says what the eventcount is and how
 * to use it), each thread's own condition variable, and the monotonic clock of every timed sleep
 * in crew.
 */
#include <errno.h>

#include "base.h"
#include "ec.h"

/* Sleeper, lock held: count and list n on its eventcount. */
static void prepare(crew__ec_node *n) {
    crew__ec *ec = n->ec;
    crew__assert(!n->counted); /* counted once: its last wait unlisted it */
    n->counted = true;
    n->prev = NULL;
    n->next = ec->head;
    if (ec->head)
        ec->head->prev = n;
    ec->head = n;
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
    if (n->prev)
        n->prev->next = n->next;
    else
        ec->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
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

enum crew__ec_end crew__ec_wait(crew__ec_sleeper *s, pthread_mutex_t *lock,
                                bool (*look)(void *ctx), void *ctx, const struct timespec *until) {
    crew__assert(s->n != 0); /* on some eventcount, or no notifier could ever wake it */
    s->woken = false;
    for (unsigned i = 0; i < s->n; i++)
        prepare(&s->node[i]);
    crew__ec_fence_();
    for (;;) {
        if (look(ctx)) {
            unlist_all(s);
            return CREW__EC_FOUND;
        }
        int rc =
            until ? pthread_cond_timedwait(s->cv, lock, until) : pthread_cond_wait(s->cv, lock);
        tls_wakeups++;
        if (s->woken) { /* a notifier took that node off; the others go now */
            unlist_all(s);
            return CREW__EC_WOKEN;
        }
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

unsigned crew__ec_notify_locked(crew__ec *ec, crew__ec_match match, void *ctx) {
    unsigned woke = 0;
    crew__ec_node *n = ec->head;
    while (n) {
        crew__ec_node *next = n->next;
        crew__assert(n->counted && n->ec == ec); /* listed exactly while counted */
        if (!match || match(ctx, n->data)) {
            unlist(n);
            n->who->woken = true;
            pthread_cond_signal(n->who->cv);
            woke++;
        }
        n = next;
    }
    return woke;
}

unsigned crew__ec_notify_slow(crew__ec *ec, pthread_mutex_t *lock, crew__ec_match match,
                              void *ctx) {
    pthread_mutex_lock(lock);
    unsigned woke = crew__ec_notify_locked(ec, match, ctx);
    pthread_mutex_unlock(lock);
    return woke;
}

void crew__ec_sleeper_init(crew__ec_sleeper *s, pthread_cond_t *cv) {
    s->cv = cv ? cv : crew__ec_thread_cv();
    s->woken = false;
    s->n = 0;
}

static bool joins_done(void *ctx) { return ((crew__joins *)ctx)->active == 0; }

void crew__join_each(crew__joins *j, pthread_mutex_t *lock, unsigned (*count)(void *ctx),
                     bool (*claim)(void *ctx, unsigned i, pthread_t *thread), void *ctx) {
    j->active++;
    for (unsigned i = 0; i < count(ctx); i++) {
        pthread_t th;
        if (!claim(ctx, i, &th))
            continue;
        pthread_mutex_unlock(lock);
        pthread_join(th, NULL);
        pthread_mutex_lock(lock);
    }
    if (--j->active == 0)
        crew__ec_notify_locked(&j->done, NULL, NULL);
    crew__ec_wait_for(&j->done, lock, joins_done, j, NULL);
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

struct timespec crew__deadline_after_ms(unsigned ms) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}
