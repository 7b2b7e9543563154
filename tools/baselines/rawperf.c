/*
 * rawperf - what this host can do without DAT: the floors datperf's shm figures are held to.
 *
 *   rawperf spin  [-n iters]            two processes ping-pong an 8-byte value through shared
 *                                       memory, one cache line each direction, both spinning;
 *                                       one-way latency = round trip / 2
 *   rawperf memcpy [-s bytes] [-n iters]         memcpy bandwidth in one process
 *   rawperf cma_write [-s bytes] [-n iters]      process_vm_writev into a child, one call per op
 *   rawperf cma_read  [-s bytes] [-n iters]      process_vm_readv from a child, one call per op
 *   rawperf reg_mr [-s bytes] [-n iters] [-d device]
 *                                       ibv_reg_mr + ibv_dereg_mr of one buffer in a loop, on
 *                                       the named verbs device (default the first), access
 *                                       local write, remote write and remote read: the floor
 *                                       of datperf -t lmr_reg on a verbs IA. libibverbs is
 *                                       loaded at run time (dlopen), so rawperf builds and its
 *                                       other tests run where it is not installed.
 *
 * Output: one "rawperf test=... key=value ..." line, the same keys as datperf -m.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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

/* The libibverbs entry points reg_mr uses; its objects are opaque here. */
struct verbs {
    void **(*get_device_list)(int *);
    void (*free_device_list)(void **);
    const char *(*get_device_name)(void *);
    void *(*open_device)(void *);
    int (*close_device)(void *);
    void *(*alloc_pd)(void *);
    int (*dealloc_pd)(void *);
    void *(*reg_mr)(void *, void *, size_t, int);
    int (*dereg_mr)(void *);
};

static void *verbs_sym(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr, "rawperf: libibverbs has no %s\n", name);
        exit(1);
    }
    return f;
}

static struct verbs load_verbs(void)
{
    void *lib = dlopen("libibverbs.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "rawperf: %s\n", dlerror());
        exit(1);
    }
    struct verbs v;
    *(void **)&v.get_device_list = verbs_sym(lib, "ibv_get_device_list");
    *(void **)&v.free_device_list = verbs_sym(lib, "ibv_free_device_list");
    *(void **)&v.get_device_name = verbs_sym(lib, "ibv_get_device_name");
    *(void **)&v.open_device = verbs_sym(lib, "ibv_open_device");
    *(void **)&v.close_device = verbs_sym(lib, "ibv_close_device");
    *(void **)&v.alloc_pd = verbs_sym(lib, "ibv_alloc_pd");
    *(void **)&v.dealloc_pd = verbs_sym(lib, "ibv_dealloc_pd");
    *(void **)&v.reg_mr = verbs_sym(lib, "ibv_reg_mr");
    *(void **)&v.dereg_mr = verbs_sym(lib, "ibv_dereg_mr");
    return v;
}

/* IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ */
#define REG_MR_ACCESS (1 | 2 | 4)

static int reg_mr(size_t size, long iters, const char *device)
{
    struct verbs v = load_verbs();
    int n = 0;
    void **list = v.get_device_list(&n);
    void *dev = NULL;
    for (int i = 0; list && i < n && !dev; i++)
        if (!device || strcmp(v.get_device_name(list[i]), device) == 0)
            dev = list[i];
    if (!dev) {
        fprintf(stderr, "rawperf: no verbs device%s%s\n", device ? " named " : "", device ? device : "");
        exit(1);
    }
    void *ctx = v.open_device(dev);
    void *pd = ctx ? v.alloc_pd(ctx) : NULL;
    if (!pd)
        die("ibv_open_device/ibv_alloc_pd");
    char *buf = alloc_buffer(size, 1);
    long warmup = iters / 10 < 100 ? iters / 10 : 100;
    double t0 = 0;
    for (long i = -warmup; i < iters; i++) {
        if (i == 0)
            t0 = now();
        void *mr = v.reg_mr(pd, buf, size, REG_MR_ACCESS);
        if (!mr)
            die("ibv_reg_mr");
        if (v.dereg_mr(mr) != 0)
            die("ibv_dereg_mr");
    }
    double secs = now() - t0;
    printf("rawperf test=reg_mr device=%s size=%zu iters=%ld reg_per_s=%.1f reg_us=%.3f\n", v.get_device_name(dev),
           size, iters, (double)iters / secs, secs * 1e6 / (double)iters);
    free(buf);
    v.dealloc_pd(pd);
    v.close_device(ctx);
    v.free_device_list(list);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: rawperf spin|memcpy|cma_write|cma_read|reg_mr [-s bytes] [-n iters] [-d device]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    const char *test = argv[1];
    size_t size = 1 << 20;
    long iters = 0;
    const char *device = NULL;
    int opt;
    optind = 2;
    while ((opt = getopt(argc, argv, "s:n:d:")) != -1) {
        switch (opt) {
        case 's': size = strtoul(optarg, NULL, 0); break;
        case 'n': iters = strtol(optarg, NULL, 0); break;
        case 'd': device = optarg; break;
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
    if (strcmp(test, "reg_mr") == 0)
        return reg_mr(size, iters ? iters : 5000, device);
    usage();
    return 2;
}
