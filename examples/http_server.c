/*
 * http_server.c -- a small HTTP/1.1 server whose requests are handled by a crew pool (the server
 * workload of Xu & Bode and of Palaniappan et al.).
 *
 *   http_server [-p port] [-t threads] [-r file] [-m pool|thread] [-n max_requests]
 *               [-i idle_timeout_ms] [-B] [-h|--help]
 *
 * Endpoints:
 *   GET /           an index page that lists the endpoints
 *   GET /static     the file given with -r (default: a built-in page)
 *   GET /cpu?n=N    CPU-heavy: N rounds of a 64-bit LCG (default 100000)
 *   GET /slow?ms=M  I/O-waiting: sleeps M milliseconds (default 50, at most 5000), as a
 *                   request that waits for a database or a disk would
 *   anything else   404; a malformed request 400; a request head over 8 KiB 413; a method other
 *                   than GET 405.
 *
 * Design (-m pool, the default): sockets are non-blocking; the main thread waits in epoll for
 * connections that have data, and each readable connection becomes one crew task that reads
 * what has arrived, answers every complete request, and hands the connection back to epoll
 * (keep-alive, or a request head still incomplete) or closes it. A worker therefore never waits
 * for a client: a slow or silent client costs no thread, and the main thread closes connections
 * parked longer than the idle time-out. A request that blocks (/slow) is not served on a
 * worker: the task hands its connection to a CREW_TASK_BLOCKING task, which runs on the pool's
 * blocking threads (crew_config.max_blocking), so sleeping requests never hold up the workers
 * and the short requests behind them; -B serves them on the workers instead, to show the
 * difference (bench/http.sh runs both). -m thread is the same server with a thread per
 * connection and blocking reads, for comparison.
 *
 * Prints "listening on 127.0.0.1:PORT" when ready; stops after -n requests (0 = never) or on
 * SIGINT/SIGTERM.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "crew.h"

#define MAX_HEAD 8192       /* larger request heads get 413 */
/* A connection idle (or a request unfinished) this long is closed (-i). */
static long idle_timeout_ms = 5000;

static const char *static_body = "<!doctype html><title>crew</title><p>served by a crew pool</p>\n";
static size_t static_len;
static char *static_file;
/* GET /: the first address a browser or a load generator is pointed at lists the endpoints. */
static const char index_body[] =
    "<!doctype html><title>crew http_server</title>\n"
    "<h1>crew http_server</h1>\n"
    "<ul>\n"
    "<li><a href=\"/static\">/static</a>: a fixed page (-r file, or a built-in one)\n"
    "<li><a href=\"/cpu?n=100000\">/cpu?n=N</a>: N rounds of a 64-bit LCG (CPU-heavy)\n"
    "<li><a href=\"/slow?ms=50\">/slow?ms=M</a>: sleeps M ms, at most 5000 (I/O-waiting)\n"
    "</ul>\n";

static atomic_long served;   /* responses sent */
static long max_requests;    /* stop after this many (0 = never) */
static atomic_int stop; /* set by signals, by -n, read by every thread (lock-free atomic) */
static int epfd;

typedef struct conn {
    int fd;
    int parked;           /* registry lock: waiting in epoll (not being served) */
    long deadline_ms;     /* registry lock: when parked, close it after this time */
    struct conn *prev, *next; /* registry lock: every open connection */
    size_t have;          /* bytes buffered */
    char buf[MAX_HEAD + 1];
} conn;

/* Every open connection, so idle ones can be closed and all freed at exit. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static conn *registry;
static int nonblocking_mode; /* pool mode: sockets are non-blocking */
static int blocking_on_workers; /* -B: serve /slow on the workers, not on blocking tasks */
static crew_pool *pool;         /* pool mode */

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static int send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { /* a slow reader: wait a bit */
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            if (poll(&pfd, 1, idle_timeout_ms) == 1)
                continue;
            return -1;
        }
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int respond(int fd, int status, const char *reason, const char *body, size_t len,
                   int keep_alive) {
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nContent-Type: text/html\r\n"
                     "Connection: %s\r\n\r\n",
                     status, reason, len, keep_alive ? "keep-alive" : "close");
    if (send_all(fd, head, (size_t)n) != 0 || send_all(fd, body, len) != 0)
        return -1;
    long s = atomic_fetch_add(&served, 1) + 1;
    if (max_requests && s >= max_requests)
        stop = 1;
    return 0;
}

static long query_long(const char *target, const char *key, long def, long lo, long hi) {
    const char *q = strchr(target, '?');
    size_t k = strlen(key);
    for (const char *p = q; p; p = strchr(p + 1, '&')) {
        if (strncmp(p + 1, key, k) == 0 && p[1 + k] == '=') {
            char *end;
            long v = strtol(p + 2 + k, &end, 10);
            if (end == p + 2 + k)
                return -1;
            return v < lo ? lo : v > hi ? hi : v;
        }
    }
    return def;
}

/* Answer one complete request head in c->buf[0..head_len); returns 1 to keep the connection. */
static int answer(conn *c) {
    char method[8], target[1024], version[16];
    if (sscanf(c->buf, "%7s %1023s %15s", method, target, version) != 3 ||
        strncmp(version, "HTTP/1.", 7) != 0 || target[0] != '/') {
        respond(c->fd, 400, "Bad Request", "bad request\n", 12, 0);
        return 0;
    }
    int keep = version[7] == '1' && !strcasestr(c->buf, "\r\nConnection: close");
    if (strcmp(method, "GET") != 0) {
        respond(c->fd, 405, "Method Not Allowed", "only GET\n", 9, 0);
        return 0;
    }
    char body[128];
    if (strcmp(target, "/") == 0) {
        return respond(c->fd, 200, "OK", index_body, sizeof index_body - 1, keep) == 0 && keep;
    } else if (strcmp(target, "/static") == 0) {
        return respond(c->fd, 200, "OK", static_body, static_len, keep) == 0 && keep;
    } else if (strncmp(target, "/cpu", 4) == 0 && (target[4] == 0 || target[4] == '?')) {
        long n = query_long(target, "n", 100000, 0, 100000000);
        if (n < 0)
            return respond(c->fd, 400, "Bad Request", "bad n\n", 6, 0), 0;
        uint64_t x = 1;
        for (long i = 0; i < n; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        int len = snprintf(body, sizeof body, "%llu\n", (unsigned long long)x);
        return respond(c->fd, 200, "OK", body, (size_t)len, keep) == 0 && keep;
    } else if (strncmp(target, "/slow", 5) == 0 && (target[5] == 0 || target[5] == '?')) {
        long ms = query_long(target, "ms", 50, 0, 5000);
        if (ms < 0)
            return respond(c->fd, 400, "Bad Request", "bad ms\n", 7, 0), 0;
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        int len = snprintf(body, sizeof body, "slept %ld ms\n", ms);
        return respond(c->fd, 200, "OK", body, (size_t)len, keep) == 0 && keep;
    }
    return respond(c->fd, 404, "Not Found", "not found\n", 10, keep) == 0 && keep;
}

static int handle_request(conn *c, size_t head_len) {
    char next = c->buf[head_len]; /* the first byte of a pipelined request, if any */
    c->buf[head_len] = 0;         /* the head is a string while it is parsed */
    int keep = answer(c);
    c->buf[head_len] = next;
    return keep;
}

#define HEAD_MORE (-2) /* read_head: no complete head yet, and no more data for now */

/* Read until one request head is complete. Returns its length; 0 if the client closed, failed
 * or (blocking mode) timed out; -1 after answering 413; HEAD_MORE when a non-blocking socket
 * has nothing more for now. */
static long read_head(conn *c) {
    for (;;) {
        c->buf[c->have] = 0;
        char *end = strstr(c->buf, "\r\n\r\n");
        if (end)
            return (long)(end - c->buf) + 4;
        if (c->have >= MAX_HEAD) {
            respond(c->fd, 413, "Payload Too Large", "request head too large\n", 23, 0);
            return -1;
        }
        ssize_t r = recv(c->fd, c->buf + c->have, MAX_HEAD - c->have, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && nonblocking_mode)
            return HEAD_MORE;
        if (r <= 0)
            return 0; /* closed, error, or SO_RCVTIMEO expired: a slow client */
        c->have += (size_t)r;
    }
}

/* Take c out of the registry, close and free it. registry_lock held. */
static void close_conn_locked(conn *c) {
    if (c->prev)
        c->prev->next = c->next;
    else
        registry = c->next;
    if (c->next)
        c->next->prev = c->prev;
    close(c->fd);
    free(c);
}

static void close_conn(conn *c) {
    pthread_mutex_lock(&registry_lock);
    close_conn_locked(c);
    pthread_mutex_unlock(&registry_lock);
}

/* Whether the complete request head at the start of c->buf blocks its thread (/slow). */
static int blocks(const conn *c) {
    return strncmp(c->buf, "GET /slow", 9) == 0 && (c->buf[9] == ' ' || c->buf[9] == '?');
}

enum { SERVE_CLOSE, SERVE_PARK, SERVE_HANDOFF };

/* Serve the complete requests of one connection. Returns SERVE_PARK when the connection stays
 * open and should wait for more data (keep-alive, or a head still incomplete), SERVE_CLOSE to
 * close it, and, when may_block is 0, SERVE_HANDOFF before a request that would block: the
 * caller hands the connection (its head still buffered) to a blocking task. */
static int serve_some(conn *c, int may_block) {
    for (;;) {
        long head = read_head(c);
        if (head == HEAD_MORE)
            return SERVE_PARK;
        if (head <= 0)
            return SERVE_CLOSE;
        if (!may_block && blocks(c))
            return SERVE_HANDOFF;
        int keep = handle_request(c, (size_t)head);
        memmove(c->buf, c->buf + head, c->have - (size_t)head); /* pipelined rest */
        c->have -= (size_t)head;
        if (!keep)
            return SERVE_CLOSE;
        if (c->have == 0 && !nonblocking_mode)
            continue; /* thread mode: block for the next request */
    }
}

/* Hand c back to epoll until it has data, with a deadline for the idle sweep. The re-arm is
 * done under the registry lock, so the sweep (which closes parked connections under the same
 * lock) cannot close the descriptor while it is being re-armed. */
static int park(conn *c) {
    pthread_mutex_lock(&registry_lock);
    c->parked = 1;
    c->deadline_ms = now_ms() + idle_timeout_ms;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT | EPOLLRDHUP, .data.ptr = c};
    int rc = epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
    if (rc != 0)
        c->parked = 0; /* not in epoll: the caller closes it */
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

/* Main thread: close connections parked past their deadline (silent or slow clients). */
static void sweep_idle(void) {
    long now = now_ms();
    pthread_mutex_lock(&registry_lock);
    conn *c = registry;
    while (c) {
        conn *next = c->next;
        if (c->parked && now > c->deadline_ms) {
            epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
            close_conn_locked(c);
        }
        c = next;
    }
    pthread_mutex_unlock(&registry_lock);
}

/* Main thread: a parked connection became readable; it is being served from now on. */
static void unpark(conn *c) {
    pthread_mutex_lock(&registry_lock);
    c->parked = 0;
    pthread_mutex_unlock(&registry_lock);
}

/* After serve_some: park the connection until it has data again, or close it. */
static void finish(conn *c, int served) {
    if (served != SERVE_PARK || park(c) != 0)
        close_conn(c);
}

/* Pool mode, on a blocking thread: a connection whose next request blocks. It serves that
 * request and any pipelined after it, then parks the connection as a worker would (the next
 * readable event goes back to a worker). */
static void conn_blocking_task(void *arg) {
    conn *c = arg;
    finish(c, serve_some(c, 1));
}

/* Pool mode: one task per readable connection, on a worker. */
static void conn_task(void *arg) {
    conn *c = arg;
    int served = serve_some(c, blocking_on_workers);
    if (served == SERVE_HANDOFF) {
        if (crew_submit_ex(pool, conn_blocking_task, c, 0, CREW_TASK_BLOCKING, NULL) == CREW_OK)
            return;
        served = serve_some(c, 1); /* not accepted (shutting down): serve it here */
    }
    finish(c, served);
}

/* Thread mode: one thread per connection, blocking reads with the same time-out. */
static void *conn_thread(void *arg) {
    conn *c = arg;
    while (!stop && serve_some(c, 1) == SERVE_PARK)
        ;
    close_conn(c);
    return NULL;
}

static conn *new_conn(int fd) {
    conn *c = malloc(sizeof *c);
    if (!c) {
        close(fd);
        return NULL;
    }
    c->fd = fd;
    c->have = 0;
    c->parked = nonblocking_mode; /* thread mode: the thread owns it; never swept */
    c->deadline_ms = now_ms() + idle_timeout_ms;
    struct timeval tv = {idle_timeout_ms / 1000, (idle_timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (nonblocking_mode)
        fcntl(fd, F_SETFL, O_NONBLOCK);
    pthread_mutex_lock(&registry_lock);
    c->prev = NULL;
    c->next = registry;
    if (registry)
        registry->prev = c;
    registry = c;
    pthread_mutex_unlock(&registry_lock);
    return c;
}

static int load_static(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    static_file = malloc((size_t)n + 1);
    if (!static_file || fread(static_file, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        return -1;
    }
    fclose(f);
    static_body = static_file;
    static_len = (size_t)n;
    return 0;
}

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s [-p port] [-t threads] [-r file] [-m pool|thread] [-n max_requests]\n"
            "       [-i idle_timeout_ms] [-B]\n"
            "  -p port      listen on 127.0.0.1:port (default 0: any free port, printed)\n"
            "  -t threads   pool workers (default: one per core)\n"
            "  -r file      the body of GET /static (default: a built-in page)\n"
            "  -m mode      pool (default): epoll hands readable connections to crew tasks;\n"
            "               thread: a thread per connection, for comparison\n"
            "  -n count     stop after this many responses (default 0: never)\n"
            "  -i ms        close connections idle this long (default 5000)\n"
            "  -B           serve /slow on the workers instead of on blocking tasks\n"
            "               (CREW_TASK_BLOCKING), to compare\n"
            "  -h, --help   this text\n"
            "Endpoints: GET / (the list of endpoints), GET /static, GET /cpu?n=N,\n"
            "GET /slow?ms=M.\n",
            prog);
}

int main(int argc, char **argv) {
    int port = 0, opt;
    unsigned threads = 0;
    int thread_mode = 0;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    while ((opt = getopt_long(argc, argv, "p:t:r:m:n:i:Bh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'p': port = atoi(optarg); break;
        case 't': threads = (unsigned)atoi(optarg); break;
        case 'r':
            if (load_static(optarg) != 0)
                return 1;
            break;
        case 'm': thread_mode = strcmp(optarg, "thread") == 0; break;
        case 'n': max_requests = atol(optarg); break;
        case 'i': idle_timeout_ms = atol(optarg); break;
        case 'B': blocking_on_workers = 1; break;
        case 'h': usage(stdout, argv[0]); return 0;
        default: usage(stderr, argv[0]); return 2;
        }
    }
    if (port < 0 || port > 65535 || threads > CREW_MAX_THREADS || idle_timeout_ms < 10 ||
        idle_timeout_ms > 3600000) {
        fprintf(stderr, "http_server: port must be 0..65535, threads 0..%u, -i 10..3600000\n",
                CREW_MAX_THREADS);
        return 2;
    }
    if (!static_file)
        static_len = strlen(static_body);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only */
    socklen_t alen = sizeof addr;
    if (bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(ls, 1024) != 0 ||
        getsockname(ls, (struct sockaddr *)&addr, &alen) != 0) {
        perror("http_server: bind/listen");
        return 1;
    }
    fcntl(ls, F_SETFL, O_NONBLOCK);

    nonblocking_mode = !thread_mode;
    if (!thread_mode) {
        crew_config cfg;
        crew_config_init(&cfg);
        cfg.threads = threads;
        cfg.name = "http";
        int rc = crew_create(&pool, &cfg);
        if (rc != CREW_OK) {
            fprintf(stderr, "http_server: %s\n", crew_strerror(rc));
            return 1;
        }
    }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(epfd, EPOLL_CTL_ADD, ls, &lev);
    printf("listening on 127.0.0.1:%d (%s)\n", ntohs(addr.sin_port),
           thread_mode           ? "thread per connection"
           : blocking_on_workers ? "crew pool, /slow on the workers"
                                 : "crew pool, /slow on blocking tasks");
    fflush(stdout);

    struct epoll_event evs[256];
    long last_sweep = now_ms();
    while (!stop) {
        int n = epoll_wait(epfd, evs, 256, 100);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == NULL) { /* new connections */
                int fd;
                while ((fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                    conn *c = new_conn(fd);
                    if (!c)
                        continue;
                    if (thread_mode) {
                        pthread_t t;
                        if (pthread_create(&t, NULL, conn_thread, c) != 0)
                            close_conn(c);
                        else
                            pthread_detach(t);
                        continue;
                    }
                    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT | EPOLLRDHUP,
                                             .data.ptr = c};
                    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
                        close_conn(c);
                }
                continue;
            }
            conn *c = evs[i].data.ptr; /* readable (or hung up): one task serves it */
            unpark(c);
            if (crew_submit(pool, conn_task, c, 0, NULL) != CREW_OK)
                close_conn(c);
        }
        /* Only after the events are dispatched: a connection with data waiting in this batch
         * has been unparked above, so the sweep can never free one that is about to be served. */
        if (now_ms() - last_sweep >= 100) {
            sweep_idle();
            last_sweep = now_ms();
        }
    }
    if (pool) {
        crew_destroy(pool); /* drains: requests in progress are answered */
        while (registry)    /* connections still open (parked): close them */
            close_conn(registry);
        printf("served %ld responses\n", atomic_load(&served));
    }
    close(epfd);
    close(ls);
    free(static_file);
    return 0;
}
