/* t_reg.c - provider-side registry API: dat_registry_add_provider / dat_registry_remove_provider */
#include "dct.h"

#ifdef DCT_DAT2
#include <dat2/dat_registry.h>
#else
#include <dat/dat_registry.h>
#endif
#include <unistd.h>

static int g_open_calls, g_close_calls;
static DAT_RETURN g_open_result;
static struct {
    DAT_PROVIDER *provider; /* first word: the provider table, as DAT_HANDLE_TO_PROVIDER expects */
    int magic;
} g_fake_ia;
static DAT_PROVIDER g_prov;

static DAT_RETURN fake_ia_open(const DAT_NAME_PTR name, DAT_COUNT qlen, DAT_EVD_HANDLE *async_evd,
                               DAT_IA_HANDLE *ia)
{
    (void)name;
    (void)qlen;
    (void)async_evd;
    g_open_calls++;
    if (g_open_result != DAT_SUCCESS)
        return g_open_result;
    g_fake_ia.provider = &g_prov;
    g_fake_ia.magic = 0x1a1a;
    *ia = (DAT_IA_HANDLE)&g_fake_ia;
    return DAT_SUCCESS;
}

static DAT_RETURN fake_ia_query(DAT_IA_HANDLE ia, DAT_EVD_HANDLE *evd, DAT_IA_ATTR_MASK am, DAT_IA_ATTR *ia_attr,
                                DAT_PROVIDER_ATTR_MASK pm, DAT_PROVIDER_ATTR *pattr)
{
    (void)ia;
    (void)am;
    (void)pm;
    if (evd)
        *evd = DAT_HANDLE_NULL;
    if (ia_attr)
        memset(ia_attr, 0, sizeof *ia_attr);
    if (pattr) {
        memset(pattr, 0, sizeof *pattr);
        snprintf(pattr->provider_name, sizeof pattr->provider_name, "dct-fake");
        pattr->dapl_version_major = DAT_VERSION_MAJOR;
        pattr->dapl_version_minor = DAT_VERSION_MINOR;
        pattr->is_thread_safe = DAT_FALSE;
    }
    return DAT_SUCCESS;
}

static DAT_RETURN fake_ia_close(DAT_IA_HANDLE ia, DAT_CLOSE_FLAGS flags)
{
    (void)flags;
    if (ia != (DAT_IA_HANDLE)&g_fake_ia)
        return MKERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
    g_close_calls++;
    return DAT_SUCCESS;
}

static void fake_info(DAT_PROVIDER_INFO *info, const char *name)
{
    memset(info, 0, sizeof *info);
    snprintf(info->ia_name, sizeof info->ia_name, "%s", name);
    info->dapl_version_major = DAT_VERSION_MAJOR;
    info->dapl_version_minor = DAT_VERSION_MINOR;
    info->is_thread_safe = DAT_THREADSAFE;
}

static tres registry_add_remove(void)
{
    char name[64];
    snprintf(name, sizeof name, "dct-fake-%d", (int)getpid());
    memset(&g_prov, 0, sizeof g_prov);
    g_prov.device_name = name;
    g_prov.ia_open_func = fake_ia_open;
    g_prov.ia_query_func = fake_ia_query;
    g_prov.ia_close_func = fake_ia_close;
    DAT_PROVIDER_INFO info;
    fake_info(&info, name);

    EXPECT_ERR(dat_registry_add_provider(NULL, &info), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_registry_add_provider(&g_prov, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    OK(dat_registry_add_provider(&g_prov, &info));
    EXPECT_ERR(dat_registry_add_provider(&g_prov, &info), DAT_PROVIDER_ALREADY_REGISTERED, ANYSUB);

    /* dat_ia_open reaches the registered ia_open_func and passes its error through */
    DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
    DAT_EVD_HANDLE aevd = DAT_HANDLE_NULL;
    g_open_result = MKERR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_DEVICE);
    DAT_RETURN r = dat_ia_open(name, 4, &aevd, &ia);
    CHECK(g_open_calls == 1, "registered ia_open_func called %d times by dat_ia_open", g_open_calls);
    CHECK(r == g_open_result, "dat_ia_open of the fake provider -> %s, provider returned %s", rs(r),
          rs(g_open_result));
    /* same name with another version is a different registry key */
    r = dat_ia_openv(name, 4, &aevd, &ia, 1, 1, DAT_FALSE);
    CHECK(match_err(r, DAT_PROVIDER_NOT_FOUND, (const unsigned[]){ANYSUB, ENDSUB}) && g_open_calls == 1,
          "dat_ia_openv(fake, 1.1) -> %s (calls %d)", rs(r), g_open_calls);

    /* successful open and close go through the provider table */
    g_open_result = DAT_SUCCESS;
    r = dat_ia_open(name, 4, &aevd, &ia);
    CHECK(r == DAT_SUCCESS, "dat_ia_open of the fake provider (success) -> %s", rs(r));
    CHECK(ia != DAT_HANDLE_NULL, "NULL IA handle");
    r = dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
    CHECK(r == DAT_SUCCESS && g_close_calls == 1, "dat_ia_close of the fake IA -> %s (ia_close_func calls %d)",
          rs(r), g_close_calls);

    OK(dat_registry_remove_provider(&g_prov, &info));
    r = dat_registry_remove_provider(&g_prov, &info);
    CHECK((r & DAT_CLASS_ERROR) && (DAT_GET_TYPE(r) == DAT_PROVIDER_NOT_FOUND ||
                                    DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER),
          "second dat_registry_remove_provider -> %s", rs(r));
    EXPECT_ERR(dat_registry_remove_provider(NULL, &info), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_registry_remove_provider(&g_prov, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    r = dat_ia_open(name, 4, &aevd, &ia);
    CHECK(r == DCT_NAME_NOT_REGISTERED_CODE, "dat_ia_open after remove -> %s, expected 0x%08x", rs(r),
          DCT_NAME_NOT_REGISTERED_CODE);
    CHECK(g_open_calls == 2, "removed provider still called");
    return T_PASS;
}

static tres registry_cannot_remove_builtin(void)
{
    /* removing a provider that was never registered (here: a table we did not add) */
    DAT_PROVIDER p;
    memset(&p, 0, sizeof p);
    DAT_PROVIDER_INFO info;
    fake_info(&info, g_ia_name);
    DAT_RETURN r = dat_registry_remove_provider(&p, &info);
    CHECK((r & DAT_CLASS_ERROR) != 0, "dat_registry_remove_provider(foreign table, \"%s\") succeeded", g_ia_name);
    /* the IA still opens */
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE a;
    OK(open_ia(&ia, &a));
    OK(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

const struct tcase reg_cases[] = {
    {"registry.add_remove_provider", registry_add_remove, 0},
    {"registry.remove_foreign_provider", registry_cannot_remove_builtin, 0},
    {NULL, NULL, 0},
};
