/*
 * A minimal third-party DAT provider library, for testing libdat's provider-library path
 * (dat.conf entry -> dlopen -> dat_provider_init -> dat_registry_add_provider -> ia_open_func,
 * and handle dispatch through the first word of every object).
 *
 * One source for both faces: TP_DAT_MAJOR (1 by default, or 2) selects the provider ABI.
 *   1: DAT 1.2: the DAT_PROVIDER table has 70 pointer slots (560 bytes on LP64).
 *   2: DAT 2.0 with DAT_EXTENSIONS: 81 slots (648 bytes), the 2.0 function types of
 *      lmr_create (va_type), rmr_bind (lmr_handle, va_type) and cr_reject (private data), a
 *      handle_extendedop_func that reads its va_list as OFED's providers do, the 2.0 error
 *      subtypes, and pz_query filling the IA handle through dats_get_ia_handle (as OFED's
 *      providers fill every query's ia_handle).
 * Self-contained on purpose: it declares the provider ABI it needs instead of including the
 * DAT headers, so it looks to libdat exactly like a provider built against any header set.
 *
 * Build: cc -shared -fPIC [-DTP_DAT_MAJOR=2] -o libdattp.so provider.c
 *
 * instance_data (dat.conf ia_params) switches behaviours for error-path tests:
 *   "no-register"  dat_provider_init does not register the provider
 *   "fail-open"    ia_open_func fails with DAT_INSUFFICIENT_RESOURCES
 * Counters for tests: tp_init_calls, tp_fini_calls, tp_open_ias, tp_live_pzs, tp_instance_data.
 * DAT 2.0 only: tp_object() makes an object of this provider (any handle type, for the calls
 * below), and the 2.0-specific slots write the arguments they received into tp_last_call.
 */
#ifndef TP_DAT_MAJOR
#define TP_DAT_MAJOR 1
#endif
#if TP_DAT_MAJOR != 1 && TP_DAT_MAJOR != 2
#error "TP_DAT_MAJOR is 1 or 2"
#endif

#include <stdarg.h>
#include <stdio.h>
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
/* DAT 2.0 renumbered the subtypes from DAT_INVALID_HANDLE1 on (one higher here). */
#define DAT_INVALID_STATE_IA_IN_USE (0x4fu + (TP_DAT_MAJOR - 1))
#define DAT_INVALID_ARG1 (0x24u + (TP_DAT_MAJOR - 1))
#define DAT_INVALID_ARG2 (0x25u + (TP_DAT_MAJOR - 1))
#define DAT_INVALID_ARG3 (0x26u + (TP_DAT_MAJOR - 1))

typedef struct {
    char ia_name[256];
    DAT_UINT32 dapl_version_major;
    DAT_UINT32 dapl_version_minor;
    DAT_BOOLEAN is_thread_safe;
} DAT_PROVIDER_INFO;

typedef void (*DAT_SLOT)(void);

#if TP_DAT_MAJOR == 2
typedef struct { DAT_UINT64 virtual_address; DAT_UINT32 segment_length; DAT_UINT32 lmr_context; } DAT_LMR_TRIPLET;
/* 16 bytes, passed by value in two registers: the shared-memory member has two pointers. */
typedef union {
    void *for_va;
    DAT_HANDLE for_lmr_handle;
    struct { void *virtual_address; char (*shared_memory_id)[40]; } for_shared_memory;
} DAT_REGION_DESCRIPTION;
typedef DAT_RETURN (*CR_REJECT)(DAT_HANDLE, DAT_COUNT, const void *);
typedef DAT_RETURN (*LMR_CREATE)(DAT_HANDLE, int, DAT_REGION_DESCRIPTION, DAT_UINT64, DAT_HANDLE, int, int, DAT_HANDLE *,
                                 DAT_UINT32 *, DAT_UINT32 *, DAT_UINT64 *, DAT_UINT64 *);
typedef DAT_RETURN (*RMR_BIND)(DAT_HANDLE, DAT_HANDLE, const DAT_LMR_TRIPLET *, int, int, DAT_HANDLE, DAT_UINT64,
                               DAT_UINT32, DAT_UINT32 *);
typedef DAT_RETURN (*EXTENDEDOP)(DAT_HANDLE, int, va_list);
#else /* the DAT 1.2 versions of these slots are not used by this provider */
typedef DAT_SLOT CR_REJECT, LMR_CREATE, RMR_BIND;
#endif

typedef struct dat_provider {
    const char *device_name;                                                    /*  0 */
    void *extension;                                                            /*  1 */
    DAT_RETURN (*ia_open_func)(const char *, DAT_COUNT, DAT_HANDLE *, DAT_HANDLE *); /* 2 */
    DAT_RETURN (*ia_query_func)(DAT_HANDLE, DAT_HANDLE *, DAT_UINT64, void *, DAT_UINT64, void *);
    DAT_RETURN (*ia_close_func)(DAT_HANDLE, int);                               /*  4 */
    DAT_SLOT set_consumer_context_to_cr_accept[10];                             /*  5..14 */
    CR_REJECT cr_reject_func;                                                   /* 15 */
    DAT_SLOT cr_handoff_to_ep_free[23];                                         /* 16..38 */
    LMR_CREATE lmr_create_func;                                                 /* 39 */
    DAT_SLOT lmr_query_to_rmr_query[4];                                         /* 40..43 */
    RMR_BIND rmr_bind_func;                                                     /* 44 */
    DAT_SLOT rmr_free_to_rsp_free[7];                                           /* 45..51 */
    DAT_RETURN (*pz_create_func)(DAT_HANDLE, DAT_HANDLE *);                     /* 52 */
    DAT_RETURN (*pz_query_func)(DAT_HANDLE, DAT_UINT64, void *);                /* 53 */
    DAT_RETURN (*pz_free_func)(DAT_HANDLE);                                     /* 54 */
    DAT_SLOT psp_create_any_to_srq_set_lw[15];                                  /* 55..69 */
#if TP_DAT_MAJOR == 2
    DAT_SLOT csp_create_to_ia_ha_related[10];                                   /* 70..79 */
    EXTENDEDOP handle_extendedop_func;                                          /* 80 */
#endif
} DAT_PROVIDER;

#define SLOT(n) ((n) * sizeof(void *))
_Static_assert(sizeof(DAT_PROVIDER) == SLOT(TP_DAT_MAJOR == 2 ? 81 : 70), "DAT_PROVIDER: 70 slots (1.2), 81 (2.0)");
_Static_assert(offsetof(DAT_PROVIDER, cr_reject_func) == SLOT(15), "cr_reject_func slot");
_Static_assert(offsetof(DAT_PROVIDER, lmr_create_func) == SLOT(39), "lmr_create_func slot");
_Static_assert(offsetof(DAT_PROVIDER, rmr_bind_func) == SLOT(44), "rmr_bind_func slot");
_Static_assert(offsetof(DAT_PROVIDER, pz_create_func) == SLOT(52), "pz_create_func slot");
_Static_assert(offsetof(DAT_PROVIDER, pz_free_func) == SLOT(54), "pz_free_func slot");
#if TP_DAT_MAJOR == 2
_Static_assert(offsetof(DAT_PROVIDER, handle_extendedop_func) == 640, "handle_extendedop_func slot");
#endif
_Static_assert(sizeof(DAT_PROVIDER_INFO) == 268, "DAT_PROVIDER_INFO size");
#if TP_DAT_MAJOR == 2
_Static_assert(sizeof(DAT_REGION_DESCRIPTION) == 16, "DAT_REGION_DESCRIPTION size");
_Static_assert(sizeof(DAT_LMR_TRIPLET) == 16, "DAT 2.0 triplet size");
#endif

/* Exported by libdat (resolved from the global scope: libdat dlopen()s us RTLD_GLOBAL). */
extern DAT_RETURN dat_registry_add_provider(const DAT_PROVIDER *, const DAT_PROVIDER_INFO *);
extern DAT_RETURN dat_registry_remove_provider(const DAT_PROVIDER *, const DAT_PROVIDER_INFO *);
#if TP_DAT_MAJOR == 2
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

#if TP_DAT_MAJOR == 2
TP_EXPORT char tp_last_call[512];

#define TP_OBJ_MAGIC 0x7a1c7a1cu
struct tp_obj {
    DAT_PROVIDER *provider;
    uint32_t magic;
};
static struct tp_obj tp_obj;

/* An object of this provider that any slot below accepts (a CR, an RMR, an EP ...). */
TP_EXPORT DAT_HANDLE tp_object(void)
{
    tp_obj.provider = &tp_provider;
    tp_obj.magic = TP_OBJ_MAGIC;
    return &tp_obj;
}

/* The IA handle of a PZ, filled the way OFED's providers fill every query's ia_handle. */
static DAT_RETURN tp_pz_query(DAT_HANDLE h, DAT_UINT64 mask, void *param)
{
    struct tp_pz *pz = h;
    (void)mask;
    if (pz == NULL || pz->magic != TP_PZ_MAGIC)
        return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
    if (param == NULL)
        return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
    return dats_get_ia_handle(pz->ia, (DAT_HANDLE *)param);
}

static DAT_RETURN tp_cr_reject(DAT_HANDLE cr, DAT_COUNT size, const void *data)
{
    snprintf(tp_last_call, sizeof tp_last_call, "cr_reject %p %d %.*s", cr, size, data ? (int)size : 0,
             data ? (const char *)data : "");
    return DAT_SUCCESS;
}

static DAT_RETURN tp_lmr_create(DAT_HANDLE ia, int mem_type, DAT_REGION_DESCRIPTION region, DAT_UINT64 length, DAT_HANDLE pz,
                                int privileges, int va_type, DAT_HANDLE *lmr, DAT_UINT32 *lmr_context,
                                DAT_UINT32 *rmr_context, DAT_UINT64 *registered_length,
                                DAT_UINT64 *registered_address)
{
    snprintf(tp_last_call, sizeof tp_last_call, "lmr_create %p %d %p %llu %p %d %d", ia, mem_type, region.for_va,
             (unsigned long long)length, pz, privileges, va_type);
    *lmr = tp_object();
    *lmr_context = 0x1111;
    *rmr_context = 0x2222;
    *registered_length = length;
    *registered_address = (DAT_UINT64)(uintptr_t)region.for_va;
    return DAT_SUCCESS;
}

static DAT_RETURN tp_rmr_bind(DAT_HANDLE rmr, DAT_HANDLE lmr, const DAT_LMR_TRIPLET *t, int privileges, int va_type,
                              DAT_HANDLE ep, DAT_UINT64 cookie, DAT_UINT32 flags, DAT_UINT32 *rmr_context)
{
    snprintf(tp_last_call, sizeof tp_last_call, "rmr_bind %p %p %llu/%u/%u %d %d %p %llu %u", rmr, lmr,
             (unsigned long long)t->virtual_address, t->segment_length, t->lmr_context, privileges, va_type, ep,
             (unsigned long long)cookie, flags);
    *rmr_context = 0x3333;
    return DAT_SUCCESS;
}

/* Reads the arguments of two operations of <dat2/dat_ib_extensions.h> from the va_list, as
 * OFED's providers do: DAT_IB_FETCH_AND_ADD_OP (0) and DAT_IB_QUERY_COUNTERS_OP (0x0b). */
static DAT_RETURN tp_extendedop(DAT_HANDLE h, int op, va_list args)
{
    if (op == 0) {
        DAT_UINT64 add = va_arg(args, DAT_UINT64);
        const DAT_LMR_TRIPLET *local = va_arg(args, const DAT_LMR_TRIPLET *);
        DAT_UINT64 cookie = va_arg(args, DAT_UINT64);
        const void *remote = va_arg(args, const void *);
        DAT_UINT32 flags = va_arg(args, DAT_UINT32);
        snprintf(tp_last_call, sizeof tp_last_call, "fetch_and_add %p %llu %llu %llu %p %u", h,
                 (unsigned long long)add, (unsigned long long)local->virtual_address, (unsigned long long)cookie,
                 remote, flags);
        return DAT_SUCCESS;
    }
    if (op == 0x0b) {
        int counter = va_arg(args, int);
        DAT_UINT64 *out = va_arg(args, DAT_UINT64 *);
        int reset = va_arg(args, int);
        out[0] = 42;
        snprintf(tp_last_call, sizeof tp_last_call, "query_counters %p %d %d", h, counter, reset);
        return DAT_SUCCESS;
    }
    return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
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
    tp_provider.pz_free_func = tp_pz_free;
#if TP_DAT_MAJOR == 2
    tp_provider.pz_query_func = tp_pz_query;
    tp_provider.cr_reject_func = tp_cr_reject;
    tp_provider.lmr_create_func = tp_lmr_create;
    tp_provider.rmr_bind_func = tp_rmr_bind;
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
