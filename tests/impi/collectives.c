/* tests/impi/collectives.c: MPI_Bcast, MPI_Allreduce and MPI_Alltoall with checked results, at
 * several message sizes (small ones go eagerly, large ones through the fabric's rendezvous path),
 * on any number of ranks. Every rank checks every element it receives; a mismatch is reported
 * with the operation, size, rank and index, and the exit status is 0 only if all matched.
 *
 * Output: each rank's libdat2.so.2 and provider library (dat_library.h), then from rank 0 one
 * line per operation and size, then a summary:
 *   collectives op=allreduce count=262144 ranks=4 iters=5 result=ok
 *   collectives passed: ranks=4 checked_elements=...
 *
 * usage: collectives [-i ITERS]
 */
#define _GNU_SOURCE /* dl_iterate_phdr (dat_library.h) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dat_library.h"

static int me, nranks;
static unsigned long long checked; /* elements this rank compared */

/* The value element i of a buffer holds when `origin` produced it for `dest` in iteration `it`
 * of operation `op`: distinct across all of them. */
static int32_t value(int op, int it, int origin, int dest, long i)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)origin * 40503u ^ (uint32_t)dest * 9973u ^
                 (uint32_t)it * 7919u ^ (uint32_t)op * 104729u;
    return (int32_t)(x & 0x00ffffff); /* small enough that a sum over ranks cannot overflow */
}

static long report(const char *op, long count, long bad, long first_bad, int32_t got, int32_t want)
{
    if (bad)
        fprintf(stderr, "collectives: rank %d: %s count %ld: %ld elements wrong, first at %ld: %d, want %d\n", me,
                op, count, bad, first_bad, got, want);
    return bad;
}

static long check_bcast(int it, long count, int32_t *buf)
{
    long bad = 0;
    for (int root = 0; root < nranks; root++) {
        for (long i = 0; i < count; i++)
            buf[i] = me == root ? value(1, it, root, 0, i) : -1;
        MPI_Bcast(buf, (int)count, MPI_INT32_T, root, MPI_COMM_WORLD);
        long nbad = 0, first = 0;
        int32_t got = 0, want = 0;
        for (long i = 0; i < count; i++) {
            int32_t w = value(1, it, root, 0, i);
            if (buf[i] != w && nbad++ == 0)
                first = i, got = buf[i], want = w;
        }
        checked += (unsigned long long)count;
        bad += report("bcast", count, nbad, first, got, want);
    }
    return bad;
}

static long check_allreduce(int it, long count, int32_t *in, int32_t *out)
{
    long bad = 0;
    struct {
        MPI_Op op;
        const char *name;
    } ops[] = {{MPI_SUM, "allreduce-sum"}, {MPI_MAX, "allreduce-max"}};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        for (long i = 0; i < count; i++) {
            in[i] = value(2 + (int)o, it, me, 0, i);
            out[i] = -1;
        }
        MPI_Allreduce(in, out, (int)count, MPI_INT32_T, ops[o].op, MPI_COMM_WORLD);
        long nbad = 0, first = 0;
        int32_t got = 0, want = 0;
        for (long i = 0; i < count; i++) {
            int32_t w = o == 0 ? 0 : INT32_MIN;
            for (int r = 0; r < nranks; r++) {
                int32_t v = value(2 + (int)o, it, r, 0, i);
                w = o == 0 ? w + v : (v > w ? v : w);
            }
            if (out[i] != w && nbad++ == 0)
                first = i, got = out[i], want = w;
        }
        checked += (unsigned long long)count;
        bad += report(ops[o].name, count, nbad, first, got, want);
    }
    return bad;
}

/* count: elements per destination */
static long check_alltoall(int it, long count, int32_t *in, int32_t *out)
{
    for (int d = 0; d < nranks; d++)
        for (long i = 0; i < count; i++) {
            in[d * count + i] = value(4, it, me, d, i);
            out[d * count + i] = -1;
        }
    MPI_Alltoall(in, (int)count, MPI_INT32_T, out, (int)count, MPI_INT32_T, MPI_COMM_WORLD);
    long nbad = 0, first = 0;
    int32_t got = 0, want = 0;
    for (int s = 0; s < nranks; s++)
        for (long i = 0; i < count; i++) {
            int32_t w = value(4, it, s, me, i);
            if (out[s * count + i] != w && nbad++ == 0)
                first = s * count + i, got = out[s * count + i], want = w;
        }
    checked += (unsigned long long)count * (unsigned long long)nranks;
    return report("alltoall", count, nbad, first, got, want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    print_dat_library("collectives", me);
    int iters = 5;
    if (argc == 3 && !strcmp(argv[1], "-i") && atoi(argv[2]) > 0) {
        iters = atoi(argv[2]);
    } else if (argc != 1) {
        if (me == 0)
            fprintf(stderr, "usage: collectives [-i ITERS]\n");
        MPI_Finalize();
        return 2;
    }
    /* elements (int32): 4 B, 4 KiB, 256 KiB, 1 MiB */
    const long counts[] = {1, 1024, 65536, 262144};
    long max = counts[sizeof counts / sizeof counts[0] - 1] * nranks;
    int32_t *in = malloc((size_t)max * sizeof *in), *out = malloc((size_t)max * sizeof *out);
    if (!in || !out) {
        fprintf(stderr, "collectives: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bad_total = 0;
    const char *names[] = {"bcast", "allreduce", "alltoall"};
    for (int op = 0; op < 3; op++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            long bad = 0;
            for (int it = 0; it < iters; it++) {
                if (op == 0)
                    bad += check_bcast(it, counts[c], in);
                else if (op == 1)
                    bad += check_allreduce(it, counts[c], in, out);
                else
                    bad += check_alltoall(it, counts[c], in, out);
            }
            long bad_all = 0;
            MPI_Allreduce(&bad, &bad_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
            if (me == 0) {
                printf("collectives op=%s count=%ld ranks=%d iters=%d result=%s\n", names[op], counts[c], nranks,
                       iters, bad_all ? "FAILED" : "ok");
                fflush(stdout);
            }
            bad_total += bad_all;
        }
    unsigned long long checked_all = 0;
    MPI_Reduce(&checked, &checked_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("collectives %s: ranks=%d checked_elements=%llu wrong_elements=%ld\n", bad_total ? "FAILED" : "passed",
               nranks, checked_all, bad_total);
    free(in);
    free(out);
    MPI_Finalize();
    return bad_total ? 1 : 0;
}
