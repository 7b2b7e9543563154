/* tests/impi/dat_library.h: which libdat2.so.2 and which OFED provider library (libdapl*.so)
 * this process has loaded, for the harness to check that the library under test (not another
 * one on the system) carried the run. */
#ifndef IMPI_TEST_DAT_LIBRARY_H
#define IMPI_TEST_DAT_LIBRARY_H
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loaded {
    const char *libdat2, *provider;
};

static int find_dat_libraries(struct dl_phdr_info *info, size_t size, void *data)
{
    struct loaded *l = data;
    const char *slash = strrchr(info->dlpi_name, '/');
    const char *base = slash ? slash + 1 : info->dlpi_name;
    (void)size;
    if (!strncmp(base, "libdat2.so", 10))
        l->libdat2 = info->dlpi_name;
    else if (!strncmp(base, "libdapl", 7))
        l->provider = info->dlpi_name;
    return 0;
}

/* The real path of a loaded object, or "none"; free() the result. */
static char *real_or_none(const char *name)
{
    char *real = name ? realpath(name, NULL) : NULL;
    return real ? real : strdup(name ? name : "none");
}

/* Prints "<prog> rank=<rank> libdat2=<real path> provider=<real path>" ("none" for what is not
 * loaded) in one write, so that the launcher does not interleave it with other ranks' lines. */
static void print_dat_library(const char *prog, int rank)
{
    struct loaded l = {NULL, NULL};
    dl_iterate_phdr(find_dat_libraries, &l);
    char *libdat2 = real_or_none(l.libdat2), *provider = real_or_none(l.provider);
    printf("%s rank=%d libdat2=%s provider=%s\n", prog, rank, libdat2 ? libdat2 : "?", provider ? provider : "?");
    fflush(stdout);
    free(libdat2);
    free(provider);
}
#endif
