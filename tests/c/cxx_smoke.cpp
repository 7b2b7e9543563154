// cxx_smoke.cpp - checks that <dat/udat.h> is consumable from C++ (extern "C" linkage,
// no C-only constructs in the declarations) and that the C++ program links against -ldat.
// Built with -DDCT_DAT2 it checks <dat2/udat.h> and -ldat2 the same way (cxx_smoke2).
#ifdef DCT_DAT2
#include <dat2/udat.h>
#else
#include <dat/udat.h>
#endif

#include <cstdio>
#include <cstring>

int main()
{
    const char *major = nullptr;
    const char *minor = nullptr;
    DAT_RETURN code = DAT_CLASS_ERROR | DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_EP;
    DAT_RETURN r = dat_strerror(code, &major, &minor);
    if (r != DAT_SUCCESS || major == nullptr || std::strcmp(major, "DAT_INVALID_HANDLE") != 0) {
        std::fprintf(stderr, "dat_strerror(0x%08x) failed: 0x%08x\n", (unsigned)code, (unsigned)r);
        return 1;
    }
    // types a C++ consumer commonly touches
    DAT_EVENT ev;
    std::memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_SOFTWARE_EVENT;
    DAT_LMR_TRIPLET t;
    std::memset(&t, 0, sizeof t);
    DAT_DTO_COOKIE cookie;
    cookie.as_64 = 42;
    DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
    (void)ia;
    (void)t;
    (void)cookie;
#if DAT_VERSION_MAJOR >= 2
    static_assert(sizeof(DAT_EVENT) == 120, "DAT_EVENT is 120 bytes in DAT 2.0");
    static_assert(sizeof(DAT_LMR_TRIPLET) == 16, "DAT_LMR_TRIPLET is 16 bytes in DAT 2.0");
    static_assert(sizeof(DAT_RMR_TRIPLET) == 16, "DAT_RMR_TRIPLET is 16 bytes in DAT 2.0");
    // the 2.0 face: a DTO event says which operation completed
    ev.event_data.dto_completion_event_data.operation = DAT_DTO_RDMA_READ;
#else
    static_assert(sizeof(DAT_EVENT) == 48, "DAT_EVENT is 48 bytes in DAT 1.2");
    static_assert(sizeof(DAT_LMR_TRIPLET) == 24, "DAT_LMR_TRIPLET is 24 bytes in DAT 1.2");
#endif
    std::printf("cxx_smoke (DAT %d.%d): %s / %s\n", DAT_VERSION_MAJOR, DAT_VERSION_MINOR, major, minor ? minor : "");
    return 0;
}
