/*
 * modules.h -- the pool's life as one ordered list of modules (modules.c), each with the steps
 * of its life: crew_create makes them in order (and undoes what it made, in reverse, if one
 * fails), crew_shutdown walks each of its phases in reverse, crew_destroy frees in reverse.
 */
#ifndef CREW_MODULES_H
#define CREW_MODULES_H

#include "base.h"

/* crew_create: make every module's state (cfg checked; p's own fields set, its target the first
 * size). CREW_OK, or CREW_ENOMEM with its detail and p freed (crew__modules_free). */
int crew__modules_init(crew_pool *p, const crew_config *cfg);
/* crew_create, once the workers run: start what runs beside them (CREW_OK or an error). */
int crew__modules_start(crew_pool *p);
/* crew_shutdown's phases, last module first: before the pool's state changes to closing; once
 * it has; under pool->lock, once the pause is lifted (crew_resume too); once nothing is
 * pending (then only the workers' joins are left). */
void crew__modules_closing(crew_pool *p, int how);
void crew__modules_close(crew_pool *p, int how);
void crew__modules_resume_locked(crew_pool *p);
void crew__modules_stop(crew_pool *p);
/* crew_destroy, once shut down: free every module's state, last made first, then p. */
void crew__modules_free(crew_pool *p);

/* pool.c's steps in the list: the array of worker records, and every record made. */
int crew__workers_init(crew_pool *p);
void crew__workers_free(crew_pool *p);

#endif /* CREW_MODULES_H */
