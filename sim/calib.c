/* calib.c -- calibrate the compute loop once per machine and cache the figure. */
#include "calib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t calib_spin(uint64_t loops)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint64_t i = 0; i < loops; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        __asm__ __volatile__("" : "+r"(x)); /* keep the loop: the compiler cannot fold it */
    }
    return x;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

double calib_measure(void)
{
    const uint64_t loops = 1u << 22;
    double best = 0;
    volatile uint64_t sink = calib_spin(loops / 4); /* warm up: frequency scaling, caches */
    for (int round = 0; round < 7; round++) {
        double t0 = now_us();
        sink += calib_spin(loops);
        double dt = now_us() - t0;
        if (dt > 0 && loops / dt > best)
            best = loops / dt;
    }
    (void)sink;
    return best > 0 ? best : 1000;
}

int calib_path(char *out, size_t cap)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(out, cap, "%s/crew-sim/calibration", xdg);
    else if (home && home[0])
        n = snprintf(out, cap, "%s/.cache/crew-sim/calibration", home);
    else
        return -1;
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* The CPU model, so a cache in a home directory shared between machines is not trusted. */
static void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(out, cap, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static int mkdirs(char *path) /* mkdir -p of path's directory (path is modified and restored) */
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0755);
        int e = errno;
        *p = '/';
        if (rc != 0 && e != EEXIST)
            return -1;
    }
    return 0;
}

double calib_get(int recalibrate, char *note, size_t notecap)
{
    char path[4096], model[256];
    note[0] = '\0';
    cpu_model(model, sizeof model);
    int have_path = calib_path(path, sizeof path) == 0;
    if (have_path && !recalibrate) {
        FILE *f = fopen(path, "r");
        if (f) {
            char line[512], cached_model[512] = "";
            double v = 0;
            while (fgets(line, sizeof line, f)) {
                if (strncmp(line, "cpu=", 4) == 0) {
                    line[strcspn(line, "\n")] = '\0';
                    snprintf(cached_model, sizeof cached_model, "%s", line + 4);
                } else if (strncmp(line, "loops_per_us=", 13) == 0) {
                    v = strtod(line + 13, NULL);
                }
            }
            fclose(f);
            if (v > 0 && v < 1e6 && strcmp(cached_model, model) == 0)
                return v;
        }
    }
    double v = calib_measure();
    if (!have_path) {
        snprintf(note, notecap, "crew-sim: calibrated %.1f loops/us (not cached: neither "
                 "XDG_CACHE_HOME nor HOME is set)", v);
        return v;
    }
    /* Write a temporary file and rename it, so a concurrent run never reads half a file. */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = NULL;
    if (mkdirs(path) == 0)
        f = fopen(tmp, "w");
    int ok = f != NULL;
    if (f) {
        ok = fprintf(f, "# crew-sim calibration: iterations of the compute loop per microsecond\n"
                     "cpu=%s\nloops_per_us=%.3f\n", model, v) > 0;
        ok = (fclose(f) == 0) && ok;
        ok = ok && rename(tmp, path) == 0;
        if (!ok)
            unlink(tmp);
    }
    if (ok)
        snprintf(note, notecap, "crew-sim: calibrated %.1f loops/us, cached in %s", v, path);
    else
        snprintf(note, notecap, "crew-sim: calibrated %.1f loops/us (not cached: cannot write "
                 "%s: %s)", v, path, strerror(errno));
    return v;
}
