// cxx_smoke.cpp - checks that <dat/udat.h> is consumable from C++ (extern "C" linkage,
// no C-only constructs in the declarations) and that the C++ program links against -ldat.
#include <dat/udat.h>

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
    static_assert(sizeof(DAT_EVENT) == 48, "DAT_EVENT is 48 bytes in DAT 1.2");
    static_assert(sizeof(DAT_LMR_TRIPLET) == 24, "DAT_LMR_TRIPLET is 24 bytes in DAT 1.2");
    std::printf("cxx_smoke: %s / %s\n", major, minor ? minor : "");
    return 0;
}
