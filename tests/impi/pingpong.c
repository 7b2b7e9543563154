/* tests/impi/pingpong.c: a data-checked two-rank MPI ping-pong.
 *
 * Rank 0 sends a message of each size to rank 1, which sends one back; every message carries a
 * pattern that depends on the size, the iteration and the direction, and the receiver checks
 * every byte of it before answering. Filling and checking are timed on each rank and taken out
 * of the round-trip times (rank 1 sends its per-iteration times to rank 0 at the end), so the
 * figures are the transfer's: one-way latency = corrected round trip / 2, bandwidth = size /
 * one-way latency (MB = 10^6 bytes).
 *
 * Output: each rank's libdat2.so.2 and provider library (dat_library.h), then one line per size
 * from rank 0 (the first word is the program's name, then key=value fields):
 *   pingpong size=8 iters=1000 lat_us=1.234 lat_avg_us=1.300 bw_MBps=6.48 checked_bytes=16160 bad_bytes=0
 * lat_us is the median of the iterations, lat_avg_us their mean; bw_MBps is from the median.
 * Exit status 0 only if every byte of every message matched.
 *
 * usage: pingpong [-n ITERS_8B] [-N ITERS_64K] [-M ITERS_1M] [-w WARMUP]
 */
#define _GNU_SOURCE /* dl_iterate_phdr (dat_library.h), clock_gettime */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dat_library.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The byte at offset i of message `iter` of `size` bytes sent by `sender`: no two iterations,
 * directions or sizes carry the same bytes, so a stale or foreign buffer does not pass. */
static unsigned char pattern_byte(size_t i, long iter, int sender, size_t size)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + (uint64_t)iter * 0xBF58476D1CE4E5B9ull +
                 (uint64_t)sender * 0x94D049BB133111EBull + (uint64_t)size;
    return (unsigned char)(x >> 56 ^ x >> 24 ^ x);
}

static void fill(unsigned char *buf, size_t size, long iter, int sender)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = pattern_byte(i, iter, sender, size);
}

/* The number of bytes that differ from the pattern; the first one is reported. */
static size_t check(const unsigned char *buf, size_t size, long iter, int sender, int me)
{
    size_t bad = 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char want = pattern_byte(i, iter, sender, size);
        if (buf[i] != want) {
            if (bad == 0)
                fprintf(stderr,
                        "pingpong: rank %d: size %zu iteration %ld: byte %zu is 0x%02x, want 0x%02x\n", me,
                        size, iter, i, buf[i], want);
            bad++;
        }
    }
    return bad;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long parse_count(const char *s, const char *what)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0) {
        fprintf(stderr, "pingpong: bad %s '%s'\n", what, s);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

struct size_run {
    size_t size;
    long iters;
};

/* One size: `warmup` untimed round trips, then `iters` timed ones, every message checked.
 * Returns the number of mismatched bytes this rank saw. */
static size_t run_size(int me, const struct size_run *run, long warmup, unsigned char *sbuf,
                       unsigned char *rbuf, double *rtt, double *book, double *peer_book)
{
    size_t size = run->size, bad = 0;
    int peer = 1 - me;
    long total = warmup + run->iters;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long it = 0; it < total; it++) {
        long k = it - warmup; /* timed iteration index, < 0 while warming up */
        if (me == 0) {
            fill(sbuf, size, it, 0);
            double t0 = now();
            MPI_Send(sbuf, (int)size, MPI_BYTE, peer, (int)(it & 0x3fff), MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, (int)(it & 0x3fff), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t1 = now();
            bad += check(rbuf, size, it, 1, me);
            if (k >= 0)
                rtt[k] = t1 - t0; /* rank 0's own fill and check lie outside [t0, t1] */
        } else {
            MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, (int)(it & 0x3fff), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double b0 = now();
            bad += check(rbuf, size, it, 0, me);
            fill(sbuf, size, it, 1);
            double b1 = now();
            MPI_Send(sbuf, (int)size, MPI_BYTE, peer, (int)(it & 0x3fff), MPI_COMM_WORLD);
            if (k >= 0)
                book[k] = b1 - b0;
        }
    }
    /* rank 1's bookkeeping sat inside rank 0's round trips: rank 0 takes it out */
    if (me == 1)
        MPI_Send(book, (int)run->iters, MPI_DOUBLE, 0, 0x7fff, MPI_COMM_WORLD);
    else
        MPI_Recv(peer_book, (int)run->iters, MPI_DOUBLE, 1, 0x7fff, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    print_dat_library("pingpong", me);
    if (n != 2) {
        if (me == 0)
            fprintf(stderr, "pingpong: needs exactly 2 ranks, got %d\n", n);
        MPI_Finalize();
        return 2;
    }
    struct size_run runs[] = {{8, 1000}, {65536, 200}, {1048576, 50}};
    long warmup = 10;
    int opt_i;
    for (opt_i = 1; opt_i + 1 < argc; opt_i += 2) {
        if (!strcmp(argv[opt_i], "-n"))
            runs[0].iters = parse_count(argv[opt_i + 1], "-n");
        else if (!strcmp(argv[opt_i], "-N"))
            runs[1].iters = parse_count(argv[opt_i + 1], "-N");
        else if (!strcmp(argv[opt_i], "-M"))
            runs[2].iters = parse_count(argv[opt_i + 1], "-M");
        else if (!strcmp(argv[opt_i], "-w"))
            warmup = parse_count(argv[opt_i + 1], "-w");
        else
            break;
    }
    if (opt_i < argc) {
        if (me == 0)
            fprintf(stderr, "usage: pingpong [-n ITERS_8B] [-N ITERS_64K] [-M ITERS_1M] [-w WARMUP]\n");
        MPI_Finalize();
        return 2;
    }
    long max_iters = 1;
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++)
        if (runs[r].iters > max_iters)
            max_iters = runs[r].iters;
    size_t max_size = runs[sizeof runs / sizeof runs[0] - 1].size;
    unsigned char *sbuf = malloc(max_size), *rbuf = malloc(max_size);
    double *rtt = calloc((size_t)max_iters, sizeof(double)), *book = calloc((size_t)max_iters, sizeof(double)),
           *peer_book = calloc((size_t)max_iters, sizeof(double));
    if (!sbuf || !rbuf || !rtt || !book || !peer_book) {
        fprintf(stderr, "pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t bad_total = 0;
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        if (runs[r].iters == 0)
            continue;
        size_t bad = run_size(me, &runs[r], warmup, sbuf, rbuf, rtt, book, peer_book);
        unsigned long long bad_both = 0, bad_mine = bad;
        MPI_Reduce(&bad_mine, &bad_both, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (me == 0) {
            double sum = 0;
            for (long k = 0; k < runs[r].iters; k++) {
                rtt[k] -= peer_book[k];
                sum += rtt[k];
            }
            qsort(rtt, (size_t)runs[r].iters, sizeof(double), cmp_double);
            long it = runs[r].iters;
            double med = it % 2 ? rtt[it / 2] : (rtt[it / 2 - 1] + rtt[it / 2]) / 2;
            double lat = med / 2 * 1e6, avg = sum / (double)it / 2 * 1e6;
            printf("pingpong size=%zu iters=%ld lat_us=%.3f lat_avg_us=%.3f bw_MBps=%.2f checked_bytes=%llu "
                   "bad_bytes=%llu\n",
                   runs[r].size, it, lat, avg, (double)runs[r].size / lat,
                   (unsigned long long)(2 * (unsigned long long)(warmup + it) * runs[r].size), bad_both);
            fflush(stdout);
        }
        bad_total += bad;
    }
    unsigned long long bad_all = 0, bad_mine = bad_total;
    MPI_Allreduce(&bad_mine, &bad_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("pingpong %s: %llu mismatched bytes\n", bad_all ? "FAILED" : "passed", bad_all);
    free(sbuf);
    free(rbuf);
    free(rtt);
    free(book);
    free(peer_book);
    MPI_Finalize();
    return bad_all ? 1 : 0;
}
