/*
 * rawperf - what this host can do without DAT: the floors datperf's shm figures are held to.
 *
 *   rawperf spin  [-n iters]            two processes ping-pong an 8-byte value through shared
 *                                       memory, one cache line each direction, both spinning;
 *                                       one-way latency = round trip / 2
 *   rawperf memcpy [-s bytes] [-n iters]         memcpy bandwidth in one process
 *   rawperf cma_write [-s bytes] [-n iters]      process_vm_writev into a child, one call per op
 *   rawperf cma_read  [-s bytes] [-n iters]      process_vm_readv from a child, one call per op
 *
 * Output: one "rawperf test=... key=value ..." line, the same keys as datperf -m.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One cache line per direction, so each side writes only its own line. */
struct spin_lines {
    _Alignas(64) volatile uint64_t ping;
    _Alignas(64) volatile uint64_t pong;
};

static int spin(long iters)
{
    long warmup = iters / 10 < 1000 ? iters / 10 : 1000;
    struct spin_lines *l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED)
        die("mmap");
    memset((void *)l, 0, sizeof *l);
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) { /* echo every ping back */
        for (uint64_t i = 1; i <= (uint64_t)(iters + warmup); i++) {
            while (l->ping != i)
                ;
            l->pong = i;
        }
        _exit(0);
    }
    double *rtt = calloc((size_t)iters, sizeof *rtt);
    if (!rtt)
        die("calloc");
    for (uint64_t i = 1; i <= (uint64_t)(iters + warmup); i++) {
        double t0 = now();
        l->ping = i;
        while (l->pong != i)
            ;
        double t1 = now();
        if (i > (uint64_t)warmup)
            rtt[i - 1 - warmup] = t1 - t0;
    }
    waitpid(child, NULL, 0);
    double sum = 0;
    for (long i = 0; i < iters; i++)
        sum += rtt[i];
    qsort(rtt, (size_t)iters, sizeof *rtt, cmp_double);
    printf("rawperf test=spin size=8 iters=%ld lat_min_us=%.3f lat_median_us=%.3f lat_p99_us=%.3f lat_max_us=%.3f "
           "lat_avg_us=%.3f\n",
           iters, rtt[0] * 1e6 / 2, rtt[iters / 2] * 1e6 / 2, rtt[(long)(0.99 * (double)(iters - 1) + 0.5)] * 1e6 / 2,
           rtt[iters - 1] * 1e6 / 2, sum / (double)iters * 1e6 / 2);
    free(rtt);
    return 0;
}

static void print_bw(const char *test, size_t size, long iters, double secs)
{
    printf("rawperf test=%s size=%zu iters=%ld bw_MBps=%.1f msg_rate_Mps=%.4f\n", test, size, iters,
           (double)size * (double)iters / secs / 1e6, (double)iters / secs / 1e6);
}

static char *alloc_buffer(size_t size, int fill)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, size) != 0)
        die("posix_memalign");
    memset(p, fill, size);
    return p;
}

static int memcpy_bw(size_t size, long iters)
{
    char *src = alloc_buffer(size, 1), *dst = alloc_buffer(size, 0);
    memcpy(dst, src, size); /* warm both */
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        src[i % size] = (char)i; /* keep the compiler from folding the copies */
        memcpy(dst, src, size);
    }
    double secs = now() - t0;
    if (dst[(iters - 1) % size] != (char)(iters - 1))
        fprintf(stderr, "rawperf: memcpy check failed\n");
    print_bw("memcpy", size, iters, secs);
    return 0;
}

/* Cross-memory attach between this process and a forked child holding the remote buffer
 * (the child's copy of the buffer is at the same address). */
static int cma_bw(int to_child, size_t size, long iters)
{
    char *local = alloc_buffer(size, 1), *remote = alloc_buffer(size, 2);
    int ready[2];
    if (pipe(ready) != 0)
        die("pipe");
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) { /* touch the pages so they are its own, then wait to be killed */
        memset(remote, 3, size);
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char c;
    if (read(ready[0], &c, 1) != 1)
        die("child start");
    struct iovec l = {local, size}, r = {remote, size};
    double t0 = 0;
    for (long i = -1; i < iters; i++) { /* i = -1: warm-up */
        if (i == 0)
            t0 = now();
        ssize_t n = to_child ? process_vm_writev(child, &l, 1, &r, 1, 0) : process_vm_readv(child, &l, 1, &r, 1, 0);
        if (n != (ssize_t)size)
            die(to_child ? "process_vm_writev" : "process_vm_readv");
    }
    double secs = now() - t0;
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    print_bw(to_child ? "cma_write" : "cma_read", size, iters, secs);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: rawperf spin|memcpy|cma_write|cma_read [-s bytes] [-n iters]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    const char *test = argv[1];
    size_t size = 1 << 20;
    long iters = 0;
    int opt;
    optind = 2;
    while ((opt = getopt(argc, argv, "s:n:")) != -1) {
        switch (opt) {
        case 's': size = strtoul(optarg, NULL, 0); break;
        case 'n': iters = strtol(optarg, NULL, 0); break;
        default: usage();
        }
    }
    if (size == 0 || iters < 0)
        usage();
    if (strcmp(test, "spin") == 0)
        return spin(iters ? iters : 100000);
    if (strcmp(test, "memcpy") == 0)
        return memcpy_bw(size, iters ? iters : 2000);
    if (strcmp(test, "cma_write") == 0)
        return cma_bw(1, size, iters ? iters : 2000);
    if (strcmp(test, "cma_read") == 0)
        return cma_bw(0, size, iters ? iters : 2000);
    usage();
    return 2;
}
