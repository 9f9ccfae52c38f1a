/* calib.h -- the calibrated compute loop: how many loop iterations make a microsecond. */
#ifndef CREW_SIM_CALIB_H
#define CREW_SIM_CALIB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Burn the CPU for `loops` iterations of a dependent multiply chain (no memory traffic). */
uint64_t calib_spin(uint64_t loops);
/* Measure loops per microsecond now (about 0.15 s; the fastest of several rounds, so a noisy
 * machine does not inflate task lengths). */
double calib_measure(void);
/* The cached figure, measuring and caching it when absent, stale (another CPU model) or when
 * recalibrate is set. note receives a line for stderr when something is worth saying ("" if
 * not): where the figure came from, or why it could not be cached. */
double calib_get(int recalibrate, char *note, size_t notecap);
/* The cache file's path (may not exist): $XDG_CACHE_HOME/crew-sim/calibration, else
 * $HOME/.cache/crew-sim/calibration. Returns -1 when neither variable is set. */
int calib_path(char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
