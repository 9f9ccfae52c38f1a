/*
 * prober.c -- an I/O-bound prober on a crew pool (Jue's study: ping N sites through a thread pool,
 * measure speedup over sequential and the share of probes that fail, per pool size).
 *
 *   prober [-f targets] [-n probes] [-s sizes] [-T timeout_ms] [-k servers] [-l latency_ms]
 *          [-h|--help]
 *
 * A probe connects to a target, sends "ping\n" and waits for a reply, all within the time-out.
 * Targets come from a file of host:port lines (-f; numeric IPv4 addresses); by default the
 * program starts -k local servers on 127.0.0.1, each answering one probe at a time after an
 * injected latency (-l ms, +-50% jitter), like a remote host with limited capacity. For each pool
 * size it runs the same n probes and prints the time, the speedup over the sequential run and
 * the share of probes that failed (time-out or refused): the two curves of Jue's study.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"

typedef struct target {
    struct sockaddr_in addr;
} target;

static target *targets;
static int ntargets;
static int timeout_ms = 200;
static atomic_int failures;     /* probes of the current run that failed */
static atomic_int finished;     /* probes of the current run that are done */
static atomic_int servers_stop; /* asks the local servers to exit */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int remaining_ms(double deadline) {
    double left = (deadline - now_s()) * 1000.0;
    return left <= 0 ? 0 : (int)left + 1;
}

/* One probe: returns 0 on a reply within the time-out, -1 otherwise. */
static int probe(const target *t) {
    double deadline = now_s() + timeout_ms / 1000.0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int ok = -1;
    if (connect(fd, (const struct sockaddr *)&t->addr, sizeof t->addr) != 0 &&
        errno != EINPROGRESS)
        goto out;
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    if (poll(&p, 1, remaining_ms(deadline)) != 1)
        goto out;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)
        goto out;
    if (send(fd, "ping\n", 5, MSG_NOSIGNAL) != 5)
        goto out;
    p.events = POLLIN;
    char buf[16];
    while (poll(&p, 1, remaining_ms(deadline)) == 1) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r > 0) {
            ok = 0;
            break;
        }
        if (r == 0 || (errno != EAGAIN && errno != EINTR))
            break;
    }
out:
    close(fd);
    return ok;
}

static void probe_task(void *arg) {
    if (probe(arg) != 0)
        atomic_fetch_add(&failures, 1);
    atomic_fetch_add(&finished, 1);
}

/* A local server: one probe at a time, each answered after the injected latency. */
typedef struct server {
    int fd;
    int latency_ms;
    unsigned seed;
    pthread_t thread;
} server;

static void *serve(void *arg) {
    server *s = arg;
    while (!atomic_load(&servers_stop)) {
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        if (poll(&p, 1, 50) != 1)
            continue;
        int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        char buf[16];
        struct timeval tv = {1, 0};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (recv(c, buf, sizeof buf, 0) > 0) {
            int jitter = s->latency_ms / 2;
            int ms = s->latency_ms - jitter;
            if (jitter)
                ms += (int)(rand_r(&s->seed) % (2u * (unsigned)jitter + 1));
            struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            (void)!send(c, "pong\n", 5, MSG_NOSIGNAL);
        }
        close(c);
    }
    return NULL;
}

static int start_servers(server *srv, int k, int latency_ms) {
    targets = calloc((size_t)k, sizeof *targets);
    if (!targets)
        return -1;
    for (int i = 0; i < k; i++) {
        srv[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        if (bind(srv[i].fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(srv[i].fd, 4096) != 0 ||
            getsockname(srv[i].fd, (struct sockaddr *)&a, &len) != 0)
            return -1;
        srv[i].latency_ms = latency_ms;
        srv[i].seed = (unsigned)i * 7919u + 1u;
        targets[i].addr = a;
        if (pthread_create(&srv[i].thread, NULL, serve, &srv[i]) != 0)
            return -1;
    }
    ntargets = k;
    return 0;
}

static int load_targets(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char line[256];
    int cap = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char host[64];
        int port;
        struct sockaddr_in a = {.sin_family = AF_INET};
        if (sscanf(line, "%63[^:]:%d", host, &port) != 2 || port < 1 || port > 65535 ||
            inet_pton(AF_INET, host, &a.sin_addr) != 1) {
            fprintf(stderr, "%s:%d: expected IPv4:port, e.g. 127.0.0.1:8080\n", path, lineno);
            fclose(f);
            return -1;
        }
        a.sin_port = htons((uint16_t)port);
        if (ntargets == cap) {
            cap = cap ? cap * 2 : 16;
            target *t = realloc(targets, (size_t)cap * sizeof *t);
            if (!t) {
                fclose(f);
                return -1;
            }
            targets = t;
        }
        targets[ntargets++].addr = a;
    }
    fclose(f);
    if (ntargets == 0) {
        fprintf(stderr, "%s: no targets\n", path);
        return -1;
    }
    return 0;
}

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s [-f targets] [-n probes] [-s 1,2,4,...] [-T timeout_ms] [-k servers]\n"
            "       [-l latency_ms]\n"
            "  -f file      probe the host:port lines of file (numeric IPv4) instead of local\n"
            "               servers\n"
            "  -n probes    probes per run, 1..1000000 (default 400)\n"
            "  -s sizes     pool sizes to run, after a sequential run (default 1,2,4,...,128)\n"
            "  -T ms        time-out of one probe (default %d)\n"
            "  -k servers   local servers, each answering one probe at a time, 1..1024\n"
            "               (default 8)\n"
            "  -l ms        their injected latency, +-50%%, 0..10000 (default 10)\n"
            "  -h, --help   this text\n",
            prog, timeout_ms);
}

int main(int argc, char **argv) {
    const char *file = NULL;
    int n = 400, k = 8, latency = 10, opt;
    char sizes_arg[256] = "1,2,4,8,16,32,64,128";
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "f:n:s:T:k:l:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'f': file = optarg; break;
        case 'n': n = atoi(optarg); break;
        case 's': snprintf(sizes_arg, sizeof sizes_arg, "%s", optarg); break;
        case 'T': timeout_ms = atoi(optarg); break;
        case 'k': k = atoi(optarg); break;
        case 'l': latency = atoi(optarg); break;
        case 'h': usage(stdout, argv[0]); return 0;
        default: usage(stderr, argv[0]); return 2;
        }
    }
    if (n < 1 || n > 1000000 || timeout_ms < 1 || k < 1 || k > 1024 || latency < 0 ||
        latency > 10000) {
        fprintf(stderr, "prober: -n 1..1000000, -T >= 1, -k 1..1024, -l 0..10000\n");
        return 2;
    }
    server *srv = NULL;
    if (file) {
        if (load_targets(file) != 0)
            return 1;
    } else {
        srv = calloc((size_t)k, sizeof *srv);
        if (!srv || start_servers(srv, k, latency) != 0) {
            perror("prober: starting local servers");
            return 1;
        }
    }
    printf("%d probes over %d targets, time-out %d ms%s\n", n, ntargets, timeout_ms,
           file ? "" : " (local servers, one probe at a time each)");

    atomic_store(&failures, 0);
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        probe_task(&targets[i % ntargets]);
    double seq = now_s() - t0;
    printf("%10s %10s %9s %9s\n", "pool size", "seconds", "speedup", "failed");
    printf("%10s %10.3f %9.2f %8.1f%%\n", "sequential", seq, 1.0,
           100.0 * atomic_load(&failures) / n);

    for (char *s = strtok(sizes_arg, ","); s; s = strtok(NULL, ",")) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = (unsigned)atoi(s);
        crew_pool *p;
        int rc = crew_create(&p, &cfg);
        if (rc != CREW_OK) {
            fprintf(stderr, "prober: pool of %s: %s\n", s, crew_strerror(rc));
            return 1;
        }
        atomic_store(&failures, 0);
        atomic_store(&finished, 0);
        t0 = now_s();
        int submitted = 0;
        for (; submitted < n && rc == CREW_OK; submitted++)
            rc = crew_submit(p, probe_task, &targets[submitted % ntargets], 0, NULL);
        /* Wait without helping (crew_wait_all would run probes here too), so exactly `size`
         * probes are in flight at a time. */
        struct timespec ms = {0, 1000000};
        while (rc == CREW_OK && atomic_load(&finished) < n)
            nanosleep(&ms, NULL);
        double t = now_s() - t0;
        crew_destroy(p);
        if (rc != CREW_OK) {
            fprintf(stderr, "prober: submit: %s\n", crew_strerror(rc));
            return 1;
        }
        printf("%10s %10.3f %9.2f %8.1f%%\n", s, t, seq / t, 100.0 * atomic_load(&failures) / n);
        fflush(stdout);
    }
    if (srv) {
        atomic_store(&servers_stop, 1);
        for (int i = 0; i < k; i++) {
            pthread_join(srv[i].thread, NULL);
            close(srv[i].fd);
        }
        free(srv);
    }
    free(targets);
    return 0;
}
