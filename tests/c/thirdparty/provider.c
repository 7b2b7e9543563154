/*
 * A minimal third-party DAT 1.2 provider library, for testing libdat's provider-library path
 * (dat.conf entry -> dlopen -> dat_provider_init -> dat_registry_add_provider -> ia_open_func,
 * and handle dispatch through the first word of every object).
 *
 * Self-contained on purpose: it declares the DAT 1.2 provider ABI it needs (DAT_PROVIDER table
 * layout: 70 pointer slots, 560 bytes on LP64; DAT_PROVIDER_INFO: 268 bytes) instead of
 * including <dat/dat_registry.h>, so it looks to libdat exactly like a provider built against
 * any DAT 1.2 header set.
 *
 * Build: cc -shared -fPIC -o libdattp.so provider.c
 *        cc -shared -fPIC -DTP_DAT2 -o libdattp2.so provider.c    (a DAT 2.0 provider)
 *
 * With TP_DAT2 it is a DAT 2.0 provider: the 81-slot table (648 bytes, DAT_EXTENSIONS), DAT 2.0
 * error numbering, pz_query reporting its IA through dats_get_ia_handle as OFED's 2.0 providers
 * do, and a handle_extendedop_func that reads one int from the va_list and succeeds when it is
 * the operation code plus one.
 *
 * instance_data (dat.conf ia_params) switches behaviours for error-path tests:
 *   "no-register"  dat_provider_init does not register the provider
 *   "fail-open"    ia_open_func fails with DAT_INSUFFICIENT_RESOURCES
 * Counters for tests: tp_init_calls, tp_fini_calls, tp_open_ias, tp_live_pzs, tp_instance_data.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint32_t DAT_RETURN;
typedef int32_t DAT_COUNT;
typedef uint32_t DAT_UINT32;
typedef uint32_t DAT_BOOLEAN;
typedef uint64_t DAT_UINT64;
typedef void *DAT_HANDLE;

#define DAT_SUCCESS 0u
#define DAT_CLASS_ERROR 0x80000000u
#define DAT_ERROR(t, s) (DAT_CLASS_ERROR | (t) | (s))
#define DAT_INSUFFICIENT_RESOURCES 0x30000u
#define DAT_INVALID_HANDLE 0x50000u
#define DAT_INVALID_PARAMETER 0x60000u
#define DAT_INVALID_STATE 0x70000u
#define DAT_RESOURCE_MEMORY 0x2u
#define DAT_INVALID_HANDLE_IA 0xbu
#define DAT_INVALID_HANDLE_PZ 0xfu
#ifdef TP_DAT2
#define DAT_INVALID_STATE_IA_IN_USE 0x50u
#define DAT_INVALID_ARG1 0x25u
#define DAT_INVALID_ARG2 0x26u
#define DAT_INVALID_ARG3 0x27u
#else
#define DAT_INVALID_STATE_IA_IN_USE 0x4fu
#define DAT_INVALID_ARG1 0x24u
#define DAT_INVALID_ARG2 0x25u
#define DAT_INVALID_ARG3 0x26u
#endif

typedef struct {
    char ia_name[256];
    DAT_UINT32 dapl_version_major;
    DAT_UINT32 dapl_version_minor;
    DAT_BOOLEAN is_thread_safe;
} DAT_PROVIDER_INFO;

typedef void (*DAT_SLOT)(void);

typedef struct dat_provider {
    const char *device_name;                                                    /*   0 */
    void *extension;                                                            /*   8 */
    DAT_RETURN (*ia_open_func)(const char *, DAT_COUNT, DAT_HANDLE *, DAT_HANDLE *); /* 16 */
    DAT_RETURN (*ia_query_func)(DAT_HANDLE, DAT_HANDLE *, DAT_UINT64, void *, DAT_UINT64, void *);
    DAT_RETURN (*ia_close_func)(DAT_HANDLE, int);                               /*  32 */
    DAT_SLOT set_consumer_context_to_rsp_free[47];                              /* 40..408 */
    DAT_RETURN (*pz_create_func)(DAT_HANDLE, DAT_HANDLE *);                     /* 416 */
    DAT_RETURN (*pz_query_func)(DAT_HANDLE, DAT_UINT64, void *);                /* 424 */
    DAT_RETURN (*pz_free_func)(DAT_HANDLE);                                     /* 432 */
    DAT_SLOT psp_create_any_to_srq_set_lw[15];                                  /* 440..552 */
#ifdef TP_DAT2
    DAT_SLOT csp_create_to_ia_ha_related[10];                                   /* 560..632 */
    DAT_RETURN (*handle_extendedop_func)(DAT_HANDLE, int, va_list);             /* 640 */
#endif
} DAT_PROVIDER;

#ifdef TP_DAT2
_Static_assert(sizeof(DAT_PROVIDER) == 81 * sizeof(void *), "DAT 2.0 DAT_PROVIDER has 81 slots");
_Static_assert(offsetof(DAT_PROVIDER, handle_extendedop_func) == 640, "handle_extendedop_func slot");
#else
_Static_assert(sizeof(DAT_PROVIDER) == 70 * sizeof(void *), "DAT_PROVIDER has 70 slots");
#endif
_Static_assert(offsetof(DAT_PROVIDER, pz_create_func) == 52 * sizeof(void *), "pz_create_func slot");
_Static_assert(offsetof(DAT_PROVIDER, pz_free_func) == 54 * sizeof(void *), "pz_free_func slot");
_Static_assert(sizeof(DAT_PROVIDER_INFO) == 268, "DAT_PROVIDER_INFO size");

/* Exported by libdat (resolved from the global scope: libdat dlopen()s us RTLD_GLOBAL). */
extern DAT_RETURN dat_registry_add_provider(const DAT_PROVIDER *, const DAT_PROVIDER_INFO *);
extern DAT_RETURN dat_registry_remove_provider(const DAT_PROVIDER *, const DAT_PROVIDER_INFO *);
#ifdef TP_DAT2
extern DAT_RETURN dats_get_ia_handle(DAT_HANDLE, DAT_HANDLE *);
#endif

#define TP_IA_MAGIC 0x7a1a7a1au
#define TP_PZ_MAGIC 0x7a1b7a1bu

/* Every object starts with the provider pointer (DAT_HANDLE_TO_PROVIDER). */
struct tp_ia {
    DAT_PROVIDER *provider;
    uint32_t magic;
    int pzs;
};

struct tp_pz {
    DAT_PROVIDER *provider;
    uint32_t magic;
    struct tp_ia *ia;
};

/* Exported for tests, but bound locally (protected): libdat loads providers RTLD_GLOBAL, so with
 * default visibility two loaded copies of this library would share the first copy's counters. */
#define TP_EXPORT __attribute__((visibility("protected")))
TP_EXPORT int tp_init_calls;
TP_EXPORT int tp_fini_calls;
TP_EXPORT int tp_open_ias;
TP_EXPORT int tp_live_pzs;
TP_EXPORT int tp_register_status = -1;
TP_EXPORT char tp_instance_data[256];

static DAT_PROVIDER tp_provider;
static DAT_PROVIDER_INFO tp_info;
static int tp_fail_open;

static DAT_RETURN tp_ia_open(const char *name, DAT_COUNT qlen, DAT_HANDLE *async_evd, DAT_HANDLE *ia_out)
{
    (void)qlen;
    (void)async_evd;
    if (ia_out == NULL)
        return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
    if (name == NULL || strncmp(name, tp_info.ia_name, sizeof tp_info.ia_name) != 0)
        return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
    if (tp_fail_open)
        return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
    struct tp_ia *ia = calloc(1, sizeof *ia);
    if (ia == NULL)
        return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
    ia->provider = &tp_provider;
    ia->magic = TP_IA_MAGIC;
    *ia_out = ia;
    tp_open_ias++;
    return DAT_SUCCESS;
}

static struct tp_ia *as_ia(DAT_HANDLE h)
{
    struct tp_ia *ia = h;
    return (ia != NULL && ia->magic == TP_IA_MAGIC) ? ia : NULL;
}

static DAT_RETURN tp_ia_query(DAT_HANDLE h, DAT_HANDLE *async_evd, DAT_UINT64 ia_mask, void *ia_attr,
                              DAT_UINT64 prov_mask, void *prov_attr)
{
    (void)ia_mask;
    (void)ia_attr;
    (void)prov_mask;
    (void)prov_attr;
    if (as_ia(h) == NULL)
        return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
    if (async_evd != NULL)
        *async_evd = NULL;
    return DAT_SUCCESS;
}

static DAT_RETURN tp_ia_close(DAT_HANDLE h, int flags)
{
    struct tp_ia *ia = as_ia(h);
    if (ia == NULL)
        return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
    if (flags == 1 /* graceful */ && ia->pzs != 0)
        return DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE);
    ia->magic = 0;
    free(ia);
    tp_open_ias--;
    return DAT_SUCCESS;
}

static DAT_RETURN tp_pz_create(DAT_HANDLE h, DAT_HANDLE *pz_out)
{
    struct tp_ia *ia = as_ia(h);
    if (ia == NULL)
        return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
    if (pz_out == NULL)
        return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
    struct tp_pz *pz = calloc(1, sizeof *pz);
    if (pz == NULL)
        return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
    pz->provider = &tp_provider;
    pz->magic = TP_PZ_MAGIC;
    pz->ia = ia;
    ia->pzs++;
    tp_live_pzs++;
    *pz_out = pz;
    return DAT_SUCCESS;
}

static DAT_RETURN tp_pz_free(DAT_HANDLE h)
{
    struct tp_pz *pz = h;
    if (pz == NULL || pz->magic != TP_PZ_MAGIC)
        return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
    pz->magic = 0;
    pz->ia->pzs--;
    tp_live_pzs--;
    free(pz);
    return DAT_SUCCESS;
}

/* DAT_PZ_PARAM: the IA handle the consumer knows, through libdat (as OFED's providers do). */
static DAT_RETURN tp_pz_query(DAT_HANDLE h, DAT_UINT64 mask, void *param)
{
    struct tp_pz *pz = h;
    (void)mask;
    if (pz == NULL || pz->magic != TP_PZ_MAGIC)
        return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
    if (param == NULL)
        return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
#ifdef TP_DAT2
    return dats_get_ia_handle(pz->ia, (DAT_HANDLE *)param);
#else
    *(DAT_HANDLE *)param = pz->ia;
    return DAT_SUCCESS;
#endif
}

#ifdef TP_DAT2
static DAT_RETURN tp_extendedop(DAT_HANDLE h, int op, va_list ap)
{
    if (as_ia(h) == NULL)
        return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
    return va_arg(ap, int) == op + 1 ? DAT_SUCCESS : DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
}
#endif

TP_EXPORT void dat_provider_init(const DAT_PROVIDER_INFO *info, const char *instance_data)
{
    tp_init_calls++;
    tp_instance_data[0] = '\0';
    if (instance_data != NULL) {
        strncpy(tp_instance_data, instance_data, sizeof tp_instance_data - 1);
        tp_instance_data[sizeof tp_instance_data - 1] = '\0';
    }
    tp_fail_open = strcmp(tp_instance_data, "fail-open") == 0;
    if (strcmp(tp_instance_data, "no-register") == 0)
        return;
    memset(&tp_provider, 0, sizeof tp_provider);
    tp_info = *info;
    tp_provider.device_name = tp_info.ia_name;
    tp_provider.extension = NULL;
    tp_provider.ia_open_func = tp_ia_open;
    tp_provider.ia_query_func = tp_ia_query;
    tp_provider.ia_close_func = tp_ia_close;
    tp_provider.pz_create_func = tp_pz_create;
    tp_provider.pz_query_func = tp_pz_query;
    tp_provider.pz_free_func = tp_pz_free;
#ifdef TP_DAT2
    tp_provider.handle_extendedop_func = tp_extendedop;
#endif
    tp_register_status = (int)dat_registry_add_provider(&tp_provider, &tp_info);
}

TP_EXPORT void dat_provider_fini(const DAT_PROVIDER_INFO *info)
{
    tp_fini_calls++;
    if (strcmp(tp_instance_data, "no-register") != 0)
        (void)dat_registry_remove_provider(&tp_provider, info);
}
