/*
 * parallel.h -- the parallel primitives' engines (parallel.c): which one runs the loops, for
 * the benchmark that compares them and the tests that cover them all.
 */
#ifndef CREW_PARALLEL_H
#define CREW_PARALLEL_H

/* The engines (parallel.c's opening comment). */
enum {
    CREW__PAR_AUTO = 0,    /* OFFER where the strategy offers halves without a group, else
                              COUNTER: the default */
    CREW__PAR_COUNTER = 1, /* the counter, its runners tasks in a group */
    CREW__PAR_SPLIT = 2,   /* lazy binary splitting on crew_join (through a group per offer
                              where the strategy has no offer) */
    CREW__PAR_OFFER = 3    /* the counter, its runners offered by crew_join */
};

/* Choose the engine for every pool of the process from now on (default CREW__PAR_AUTO). Only
 * in the library the tests and the benchmarks link (CREW_TEST_HOOKS, CMakeLists.txt): the
 * installed library runs CREW__PAR_AUTO. Calls already running keep theirs. */
void crew__parallel_engine(int engine);

#endif /* CREW_PARALLEL_H */
