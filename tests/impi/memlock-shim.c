/* tests/impi/memlock-shim.c: LD_PRELOADed into the MPI ranks by run.sh when the harness cannot
 * raise RLIMIT_MEMLOCK itself (a container without CAP_SYS_RESOURCE). Intel MPI refuses its
 * DAPL fabric when getrlimit(RLIMIT_MEMLOCK) reports a small limit ("DAPL startup:
 * RLIMIT_MEMLOCK too small"); hosts that run it set the limit to unlimited. This answers that
 * query with RLIM_INFINITY and leaves every other resource, and the real limit, alone: memory
 * that a provider really pins still counts against the real limit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/resource.h>

typedef int getrlimit_fn(__rlimit_resource_t, struct rlimit *);

int getrlimit(__rlimit_resource_t resource, struct rlimit *limit)
{
    static getrlimit_fn *real;
    if (!real)
        real = (getrlimit_fn *)dlsym(RTLD_NEXT, "getrlimit");
    int rc = real(resource, limit);
    if (rc == 0 && resource == RLIMIT_MEMLOCK)
        limit->rlim_cur = limit->rlim_max = RLIM_INFINITY;
    return rc;
}
