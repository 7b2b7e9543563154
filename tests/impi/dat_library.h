/* tests/impi/dat_library.h: which libdat2.so.2 this process has loaded, for the harness to check
 * that the library under test (not another one on the system) carried the run. */
#ifndef IMPI_TEST_DAT_LIBRARY_H
#define IMPI_TEST_DAT_LIBRARY_H
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find_libdat2(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *slash = strrchr(info->dlpi_name, '/');
    const char *base = slash ? slash + 1 : info->dlpi_name;
    if (strncmp(base, "libdat2.so", 10) != 0)
        return 0;
    *(const char **)data = info->dlpi_name;
    return 1;
}

/* Prints "<prog> rank=<rank> libdat2=<real path>" ("none" while MPI has not loaded it). */
static void print_dat_library(const char *prog, int rank)
{
    const char *name = NULL;
    dl_iterate_phdr(find_libdat2, &name);
    char *real = name ? realpath(name, NULL) : NULL;
    printf("%s rank=%d libdat2=%s\n", prog, rank, real ? real : name ? name : "none");
    fflush(stdout);
    free(real);
}
#endif
