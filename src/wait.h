/*
 * wait.h -- helping waits (wait.c).
 */
#ifndef CREW_WAIT_H
#define CREW_WAIT_H

#include "atomic.h"
#include "base.h"
#include "ec.h"

/* Run queued tasks, or sleep, until pending is 0. */
void crew__help_until_quiet(crew_pool *p);
/* The same until *flag is true, for a thread of the pool (a task or a hook) that waits for
 * something only the pool's tasks bring about (crew_lane_destroy). It sleeps on ec (with
 * pool->lock) among its other eventcounts: whoever sets the flag holds pool->lock, wakes ec's
 * sleepers (crew__ec_notify_locked), then stores the flag with release; the waiter reads it
 * with acquire. */
void crew__help_until(crew_pool *p, const atomic_bool *flag, crew__ec *ec);
/* A join's wait (join.c) on worker self, for the half it offered, which another thread took:
 * until *over (acquire), sleeping on pool->joined, whose notifier stores *over first. Takes
 * its own tasks above mark first (the strategy's take_group with slot 0), then helps as
 * crew__help_until does. */
void crew__join_wait(crew_pool *p, crew__worker *self, const atomic_bool *over, int64_t mark);

/* wait_own.c: a crew_wait's first steps on worker self, whose deque (own) holds tasks above
 * mark: those of group (sl its slot) run there, newest first, and end in the group together;
 * returns at the first task it cannot take so, or at the group's end (then wait.c's loop). */
struct crew__steal_local;
void crew__wait_own_first(crew_pool *p, crew__worker *self, struct crew__steal_local *own,
                          crew_handle group, crew__slot *sl, int64_t mark);
/* The same for any other waiter (self: its worker record, or NULL outside the pool): the tasks
 * of group that the strategy's group take finds (from outside under STEAL: the newest of the
 * thread's external slot, if of group), run there and ended together; returns when the take
 * finds none, at a task a pause holds back, or at the group's end. */
void crew__wait_group_first(crew_pool *p, crew__worker *self, crew_handle group, crew__slot *sl,
                            int64_t mark);

#endif /* CREW_WAIT_H */
