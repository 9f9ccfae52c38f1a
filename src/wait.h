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

/* wait_own.c: crew_wait's first steps on this thread (self: its worker record for p, or NULL;
 * mark: its deque mark, crew__sched_take_group's), for group (sl its slot), called without the
 * wait's hold on sl: the tasks of group this thread queued run here, newest first, and end in
 * the group together. Returns the group's answer (CREW_OK, CREW_ECANCELED, CREW_EEXPIRED) if
 * their end ended the group, holding nothing; else 1, with the wait's hold on sl taken
 * (crew__slot_hold): the caller looks at the state, and goes on, as a wait that took its hold
 * before its first look. */
int crew__wait_first(crew_pool *p, crew__worker *self, crew_handle group, crew__slot *sl,
                     int64_t mark);

#endif /* CREW_WAIT_H */
