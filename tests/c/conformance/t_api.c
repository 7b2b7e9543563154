/* t_api.c - registry, dat_strerror, IA open/close/query, handle type, consumer context */
#include "dct.h"

/* ---------------- dat_strerror ---------------- */

static tres strerror_codes(void)
{
    static const struct {
        DAT_RETURN code;
        const char *maj, *min;
    } tab[] = {
        {DAT_SUCCESS, "DAT_SUCCESS", NULL},
        {MKERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP), "DAT_INVALID_HANDLE", "DAT_INVALID_HANDLE_EP"},
        {MKERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA), "DAT_INVALID_HANDLE", "DAT_INVALID_HANDLE_IA"},
        {MKERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3), "DAT_INVALID_PARAMETER", "DAT_INVALID_ARG3"},
        {MKERR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED), "DAT_INVALID_STATE",
         "DAT_INVALID_STATE_EP_UNCONNECTED"},
        {MKERR(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED), "DAT_PROVIDER_NOT_FOUND",
         "DAT_NAME_NOT_REGISTERED"},
        {MKERR(DAT_QUEUE_EMPTY, 0), "DAT_QUEUE_EMPTY", NULL},
        {MKERR(DAT_TIMEOUT_EXPIRED, 0), "DAT_TIMEOUT_EXPIRED", NULL},
        {MKERR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY), "DAT_INSUFFICIENT_RESOURCES",
         "DAT_RESOURCE_MEMORY"},
        {MKERR(DAT_LENGTH_ERROR, 0), "DAT_LENGTH_ERROR", NULL},
        {MKERR(DAT_PROTECTION_VIOLATION, 0), "DAT_PROTECTION_VIOLATION", NULL},
        {MKERR(DAT_PRIVILEGES_VIOLATION, 0), "DAT_PRIVILEGES_VIOLATION", NULL},
        {MKERR(DAT_CONN_QUAL_IN_USE, 0), "DAT_CONN_QUAL_IN_USE", NULL},
        {MKERR(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNREACHABLE), "DAT_INVALID_ADDRESS",
         "DAT_INVALID_ADDRESS_UNREACHABLE"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        const char *maj = NULL, *min = NULL;
        DAT_RETURN r = dat_strerror(tab[i].code, &maj, &min);
        CHECK(r == DAT_SUCCESS, "dat_strerror(0x%08x) returned 0x%08x", (unsigned)tab[i].code,
              (unsigned)r);
        CHECK(maj && strcmp(maj, tab[i].maj) == 0, "dat_strerror(0x%08x) major \"%s\", expected \"%s\"",
              (unsigned)tab[i].code, maj ? maj : "(null)", tab[i].maj);
        CHECK(min != NULL, "dat_strerror(0x%08x) left minor NULL", (unsigned)tab[i].code);
        if (tab[i].min)
            CHECK(strcmp(min, tab[i].min) == 0, "dat_strerror(0x%08x) minor \"%s\", expected \"%s\"",
                  (unsigned)tab[i].code, min, tab[i].min);
    }
    return T_PASS;
}

/* A NULL minor pointer asks for the major message only (as in OFED's library, and programs pass
 * it): DAT_SUCCESS when the type is known, whatever the subtype; DAT_INVALID_PARAMETER (with the
 * placeholder major) when the type is unknown. */
static tres strerror_null_minor(void)
{
    static const struct {
        DAT_RETURN code;
        DAT_RETURN ret;
        const char *maj;
    } tab[] = {
        {DAT_SUCCESS, DAT_SUCCESS, "DAT_SUCCESS"},
        {MKERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ), DAT_SUCCESS, "DAT_INVALID_HANDLE"},
        {MKERR(DAT_INVALID_HANDLE, 0x7777), DAT_SUCCESS, "DAT_INVALID_HANDLE"},
        {MKERR(DCT_UNKNOWN_TYPE, 0), DAT_INVALID_PARAMETER, NULL},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        const char *maj = NULL;
        DAT_RETURN r = dat_strerror(tab[i].code, &maj, NULL);
        CHECK(r == tab[i].ret, "dat_strerror(0x%08x, &maj, NULL) -> 0x%08x, expected 0x%08x",
              (unsigned)tab[i].code, (unsigned)r, (unsigned)tab[i].ret);
        CHECK(maj && *maj, "dat_strerror(0x%08x, &maj, NULL) left the major unset or empty",
              (unsigned)tab[i].code);
        if (tab[i].maj)
            CHECK(strcmp(maj, tab[i].maj) == 0, "dat_strerror(0x%08x, &maj, NULL) major \"%s\", expected \"%s\"",
                  (unsigned)tab[i].code, maj, tab[i].maj);
    }
    return T_PASS;
}

/* A NULL major pointer is DAT_INVALID_PARAMETER; the minor is still written so that a consumer
 * ignoring the result prints text. */
static tres strerror_null_major(void)
{
    const char *min = NULL;
    DAT_RETURN r = dat_strerror(MKERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ), NULL, &min);
    CHECK(DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER, "dat_strerror(.., NULL major, ..) -> 0x%08x",
          (unsigned)r);
    CHECK(min && strcmp(min, "DAT_INVALID_HANDLE_PZ") == 0, "minor \"%s\"", min ? min : "(null)");
    r = dat_strerror(DAT_SUCCESS, NULL, NULL);
    CHECK(DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER, "dat_strerror(.., NULL, NULL) -> 0x%08x", (unsigned)r);
    return T_PASS;
}

/* Unknown codes are refused with DAT_INVALID_PARAMETER (the reference's 0x00060000, without the
 * class bit), and both messages are still set: consumers print them without checking. */
static tres strerror_unknown(void)
{
    static const DAT_RETURN unknown[] = {0x12345678, MKERR(DAT_INVALID_HANDLE, 0x7777),
                                         MKERR(DCT_UNKNOWN_TYPE, 0),
                                         MKERR(DAT_INVALID_PARAMETER, DAT_THREAD_SAFETY_NOT_FOUND + 1)};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *maj = NULL, *min = NULL;
        DAT_RETURN r = dat_strerror(unknown[i], &maj, &min);
        CHECK(r == DAT_INVALID_PARAMETER, "dat_strerror(0x%08x) -> 0x%08x, expected 0x%08x",
              (unsigned)unknown[i], (unsigned)r, (unsigned)DAT_INVALID_PARAMETER);
        CHECK(maj && *maj && min, "dat_strerror(0x%08x) left a message unset (or the major empty)",
              (unsigned)unknown[i]);
        vlog("0x%08x: %s / %s", (unsigned)unknown[i], maj, min);
    }
    return T_PASS;
}

/* Every code this library returns has its names, DAT_NOT_IMPLEMENTED included (the reference
 * refuses it: its type bits are outside DAT_TYPE_MASK). */
static tres strerror_library_codes(void)
{
    static const struct {
        DAT_RETURN code;
        const char *maj, *min;
    } tab[] = {
        {DAT_NOT_IMPLEMENTED, "DAT_NOT_IMPLEMENTED", ""},
        {DAT_CLASS_WARNING | DAT_QUEUE_EMPTY, "DAT_QUEUE_EMPTY", ""},
        {MKERR(DAT_INTERNAL_ERROR, 0), "DAT_INTERNAL_ERROR", ""},
        {MKERR(DAT_MODEL_NOT_SUPPORTED, 0), "DAT_MODEL_NOT_SUPPORTED", ""},
        {MKERR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_EVD_RECV), "DAT_INVALID_STATE",
         "DAT_INVALID_STATE_EP_EVD_RCV"},
        {MKERR(DAT_INVALID_STATE, DAT_INVALID_STATE_SRQ_IN_USE), "DAT_INVALID_STATE",
         "DAT_INVALID_STATE_SRQ_IN_USE"},
        {MKERR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_SRQ), "DAT_INSUFFICIENT_RESOURCES",
         "DAT_RESOURCE_SRQ"},
        {MKERR(DAT_PROVIDER_NOT_FOUND, DAT_THREAD_SAFETY_NOT_FOUND), "DAT_PROVIDER_NOT_FOUND",
         "DAT_THREAD_SAFETY_NOT_FOUND"},
        {MKERR(DAT_CONN_QUAL_UNAVAILABLE, 0), "DAT_CONN_QUAL_UNAVAILABLE", ""},
        {MKERR(DAT_PROTECTION_VIOLATION, DAT_PROTECTION_RDMA_WRITE), "DAT_PROTECTION_VIOLATION",
         "DAT_PROTECTION_RDMA_WRITE"},
        {MKERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG10), "DAT_INVALID_PARAMETER", "DAT_INVALID_ARG10"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        const char *maj = NULL, *min = NULL;
        DAT_RETURN r = dat_strerror(tab[i].code, &maj, &min);
        CHECK(r == DAT_SUCCESS, "dat_strerror(0x%08x) returned 0x%08x", (unsigned)tab[i].code,
              (unsigned)r);
        CHECK(maj && min, "dat_strerror(0x%08x) left a message unset", (unsigned)tab[i].code);
        /* print them as a consumer would */
        char line[256];
        snprintf(line, sizeof line, "%s %s", maj, min);
        vlog("0x%08x: %s", (unsigned)tab[i].code, line);
        CHECK(strcmp(maj, tab[i].maj) == 0 && strcmp(min, tab[i].min) == 0,
              "dat_strerror(0x%08x) = \"%s\" / \"%s\", expected \"%s\" / \"%s\"", (unsigned)tab[i].code,
              maj, min, tab[i].maj, tab[i].min);
    }
    return T_PASS;
}

/* ---------------- registry ---------------- */

static tres registry_list(void)
{
    DAT_COUNT n = -1;
    DAT_RETURN r = dat_registry_list_providers(0, &n, NULL);
    /* dat-abi.md 3.4: max_to_return == 0 sets *entries_returned and returns INVALID_PARAMETER|ARG1 */
    CHECK(match_err(r, DAT_INVALID_PARAMETER, (const unsigned[]){DAT_INVALID_ARG1, ENDSUB}),
          "list_providers(0, &n, NULL) -> %s, expected DAT_INVALID_PARAMETER|DAT_INVALID_ARG1", rs(r));
    CHECK(n >= 1, "list_providers(0,...) reported %d entries; expected >= 1 (\"%s\" must be listed)",
          n, g_ia_name);
    DAT_COUNT max = n + 4;
    DAT_PROVIDER_INFO *infos = calloc((size_t)max, sizeof *infos);
    DAT_PROVIDER_INFO **ptrs = calloc((size_t)max, sizeof *ptrs);
    CHECK(infos && ptrs, "oom");
    for (int i = 0; i < max; i++)
        ptrs[i] = &infos[i];
    DAT_COUNT got = -1;
    OK(dat_registry_list_providers(max, &got, ptrs));
    CHECK(got == n, "list_providers(%d) returned %d entries, size query said %d", max, got, n);
    int found = 0;
    for (int i = 0; i < got; i++) {
        vlog("provider[%d] = \"%s\" %u.%u ts=%d", i, infos[i].ia_name,
             infos[i].dapl_version_major, infos[i].dapl_version_minor, (int)infos[i].is_thread_safe);
        CHECK(memchr(infos[i].ia_name, 0, DAT_NAME_MAX_LENGTH) != NULL,
              "entry %d ia_name not NUL-terminated", i);
        if (strcmp(infos[i].ia_name, g_ia_name) == 0) {
            found = 1;
            CHECK(infos[i].dapl_version_major == DAT_VERSION_MAJOR && infos[i].dapl_version_minor == DAT_VERSION_MINOR,
                  "\"%s\" listed with version %u.%u, expected %s", g_ia_name, infos[i].dapl_version_major,
                  infos[i].dapl_version_minor, DCT_FACE);
        }
    }
    CHECK(found, "\"%s\" is not among the %d listed providers", g_ia_name, got);
    if (n >= 1) {
        /* fewer slots than entries: returns min(max, size) */
        got = -1;
        OK(dat_registry_list_providers(1, &got, ptrs));
        CHECK(got == 1, "list_providers(1, ...) returned %d entries", got);
    }
    free(infos);
    free(ptrs);
    return T_PASS;
}

static tres registry_list_errors(void)
{
    DAT_PROVIDER_INFO info, *p = &info;
    EXPECT_ERR(dat_registry_list_providers(1, NULL, &p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
    DAT_COUNT n;
    EXPECT_ERR(dat_registry_list_providers(1, &n, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
    EXPECT_ERR(dat_registry_list_providers(-1, &n, &p), DAT_INVALID_PARAMETER, ANYSUB);
    return T_PASS;
}

/* ---------------- dat_ia_openv / dat_ia_open ---------------- */

static tres ia_open_close(void)
{
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE aevd;
    OK(open_ia(&ia, &aevd));
    CHECK(ia != DAT_HANDLE_NULL, "NULL IA handle");
    CHECK(aevd != DAT_HANDLE_NULL && aevd != DAT_EVD_ASYNC_EXISTS,
          "async EVD not created by dat_ia_open (got %p)", aevd);
    DAT_HANDLE_TYPE t;
    OK(dat_get_handle_type(aevd, &t));
    CHECK(t == DAT_HANDLE_TYPE_EVD, "async EVD handle type %d", (int)t);
    OK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
    /* reopen twice: two IAs at once */
    DAT_IA_HANDLE ia2, ia3;
    DAT_EVD_HANDLE a2, a3;
    OK(open_ia(&ia2, &a2));
    OK(open_ia(&ia3, &a3));
    CHECK(ia2 != ia3, "two opens returned the same IA handle");
    OK(dat_ia_close(ia3, DAT_CLOSE_ABRUPT_FLAG));
    OK(dat_ia_close(ia2, DAT_CLOSE_GRACEFUL_FLAG));
    return T_PASS;
}

static tres ia_openv_explicit_version(void)
{
    DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
    DAT_EVD_HANDLE aevd = DAT_HANDLE_NULL;
    OK(dat_ia_openv(g_ia_name, 4, &aevd, &ia, DAT_VERSION_MAJOR, DAT_VERSION_MINOR, DAT_FALSE));
    OK(dat_ia_close(ia, DAT_CLOSE_DEFAULT));
    return T_PASS;
}

static tres ia_openv_unknown_name(void)
{
    DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
    DAT_EVD_HANDLE aevd = DAT_HANDLE_NULL;
    DAT_RETURN r = dat_ia_open("no-such-ia-name-xyz", 4, &aevd, &ia);
    CHECK(r == DCT_NAME_NOT_REGISTERED_CODE, "dat_ia_open(\"no-such-ia-name-xyz\") -> %s, expected 0x%08x "
          "(DAT_PROVIDER_NOT_FOUND|DAT_NAME_NOT_REGISTERED)", rs(r), DCT_NAME_NOT_REGISTERED_CODE);
    r = dat_ia_open("", 4, &aevd, &ia);
    CHECK(DAT_GET_TYPE(r) == DAT_PROVIDER_NOT_FOUND || DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER,
          "dat_ia_open(\"\") -> %s", rs(r));
    return T_PASS;
}

static tres ia_openv_wrong_version(void)
{
    static const unsigned vs[][2] = {{DCT_OTHER_MAJOR, DCT_OTHER_MINOR}, {1, 1}, {1, 3}, {0, 2}};
    static const unsigned subs[] = {DAT_NAME_NOT_REGISTERED, DAT_MAJOR_NOT_FOUND,
                                    DAT_MINOR_NOT_FOUND, ENDSUB};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
        DAT_EVD_HANDLE aevd = DAT_HANDLE_NULL;
        DAT_RETURN r = dat_ia_openv(g_ia_name, 4, &aevd, &ia, vs[i][0], vs[i][1], DAT_FALSE);
        CHECK(match_err(r, DAT_PROVIDER_NOT_FOUND, subs),
              "dat_ia_openv(\"%s\", major %u, minor %u) -> %s, expected DAT_PROVIDER_NOT_FOUND",
              g_ia_name, vs[i][0], vs[i][1], rs(r));
    }
    return T_PASS;
}

static tres ia_openv_bad_args(void)
{
    DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
    DAT_EVD_HANDLE aevd = DAT_HANDLE_NULL;
    EXPECT_ERR(dat_ia_open(NULL, 4, &aevd, &ia), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
    /* NULL out pointer for the IA: reference returns INVALID_HANDLE|IA, spec INVALID_PARAMETER */
    DAT_RETURN r = dat_ia_open(g_ia_name, 4, &aevd, NULL);
    CHECK(match_err(r, DAT_INVALID_HANDLE, (const unsigned[]){DAT_INVALID_HANDLE_IA, ENDSUB}) ||
              match_err(r, DAT_INVALID_PARAMETER, (const unsigned[]){ANYSUB, ENDSUB}),
          "dat_ia_open(.., NULL ia_handle) -> %s", rs(r));
    /* name of DAT_NAME_MAX_LENGTH characters (no room for NUL) */
    char longname[DAT_NAME_MAX_LENGTH + 8];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    EXPECT_ERR2(dat_ia_open(longname, 4, &aevd, &ia), DAT_INVALID_PARAMETER, DAT_PROVIDER_NOT_FOUND);
    return T_PASS;
}

/* ---------------- dat_ia_close ---------------- */

static tres ia_close_bad(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_IA_HANDLE stale;
    DAT_EVD_HANDLE a;
    OK(open_ia(&stale, &a));
    OK(dat_ia_close(stale, DAT_CLOSE_ABRUPT_FLAG));
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_ia_close(H, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE_IA);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_ia_close(H, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_HANDLE_IA);
    EXPECT_ERR(dat_ia_close(f.ia, (DAT_CLOSE_FLAGS)0x77), DAT_INVALID_PARAMETER, ANYSUB);
    return fx_close(&f);
}

static tres ia_close_graceful_in_use(void)
{
    struct fx f;
    TRY(fx_full(&f));
    /* graceful close with live objects must fail and leave the IA usable */
    EXPECT_ERR(dat_ia_close(f.ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE, ANYSUB);
    DAT_PZ_HANDLE pz2;
    OK(dat_pz_create(f.ia, &pz2));
    OK(dat_pz_free(pz2));
    /* free everything, then graceful close succeeds */
    OK(dat_lmr_free(f.lmr));
    OK(dat_ep_free(f.ep));
    OK(dat_evd_free(f.dto_evd));
    OK(dat_evd_free(f.conn_evd));
    OK(dat_evd_free(f.cr_evd));
    OK(dat_pz_free(f.pz));
    OK(dat_ia_close(f.ia, DAT_CLOSE_GRACEFUL_FLAG));
    /* async EVD belongs to the IA: now stale */
    EXPECT_ERR(dat_evd_free(f.async_evd), DAT_INVALID_HANDLE, SUB_EVD);
    free(f.buf);
    return T_PASS;
}

static tres ia_close_abrupt(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_CNO_HANDLE cno;
    OK(dat_cno_create(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
    DAT_PSP_HANDLE psp;
    OK(dat_psp_create(f.ia, fresh_qual(1), f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    DAT_RMR_HANDLE rmr;
    OK(dat_rmr_create(f.pz, &rmr));
    OK(dat_ia_close(f.ia, DAT_CLOSE_ABRUPT_FLAG));
    /* every child handle is now invalid */
    EXPECT_ERR(dat_ep_free(f.ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
    EXPECT_ERR(dat_lmr_free(f.lmr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
    EXPECT_ERR(dat_rmr_free(rmr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
    EXPECT_ERR(dat_pz_free(f.pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
    EXPECT_ERR(dat_psp_free(psp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
    EXPECT_ERR(dat_cno_free(cno), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
    EXPECT_ERR(dat_evd_free(f.dto_evd), DAT_INVALID_HANDLE, SUB_EVD);
    EXPECT_ERR(dat_ia_close(f.ia, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
    DAT_HANDLE_TYPE t;
    EXPECT_ERR(dat_get_handle_type(f.ep, &t), DAT_INVALID_HANDLE, SUB_GENERIC, DAT_INVALID_HANDLE_EP);
    /* the PSP's qualifier is free again */
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE a, cr;
    OK(open_ia(&ia, &a));
    OK(make_evd(ia, DAT_EVD_CR_FLAG, 4, &cr));
    OK(dat_psp_create(ia, fresh_qual(1), cr, DAT_PSP_CONSUMER_FLAG, &psp));
    OK(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
    free(f.buf);
    return T_PASS;
}

/* ---------------- dat_ia_query ---------------- */

static tres ia_query_all(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE aevd = DAT_HANDLE_NULL;
    DAT_IA_ATTR ia_attr;
    DAT_PROVIDER_ATTR pattr;
    memset(&ia_attr, 0, sizeof ia_attr);
    memset(&pattr, 0, sizeof pattr);
    OK(dat_ia_query(f.ia, &aevd, DAT_IA_ALL, &ia_attr, DAT_PROVIDER_FIELD_ALL, &pattr));
    CHECK(aevd == f.async_evd, "ia_query async EVD %p, dat_ia_open gave %p", aevd, f.async_evd);
    CHECK(memchr(ia_attr.adapter_name, 0, DAT_NAME_MAX_LENGTH) != NULL, "adapter_name unterminated");
    CHECK(ia_attr.max_eps > 0, "max_eps %d", ia_attr.max_eps);
    CHECK(ia_attr.max_evds > 0, "max_evds %d", ia_attr.max_evds);
    CHECK(ia_attr.max_pzs > 0, "max_pzs %d", ia_attr.max_pzs);
    CHECK(ia_attr.max_lmrs > 0, "max_lmrs %d", ia_attr.max_lmrs);
    CHECK(ia_attr.max_iov_segments_per_dto > 0, "max_iov_segments_per_dto %d",
          ia_attr.max_iov_segments_per_dto);
    CHECK(ia_attr.max_evd_qlen > 0, "max_evd_qlen %d", ia_attr.max_evd_qlen);
    CHECK(ia_attr.max_message_size > 0, "max_message_size 0");
    CHECK(ia_attr.ia_address_ptr != NULL, "ia_address_ptr NULL");
    CHECK(ia_attr.num_transport_attr == 0 || ia_attr.transport_attr != NULL, "transport_attr");
    CHECK(ia_attr.num_vendor_attr == 0 || ia_attr.vendor_attr != NULL, "vendor_attr");
    CHECK(memchr(pattr.provider_name, 0, DAT_NAME_MAX_LENGTH) != NULL && pattr.provider_name[0],
          "provider_name empty or unterminated");
    CHECK(pattr.dapl_version_major == DAT_VERSION_MAJOR && pattr.dapl_version_minor == DAT_VERSION_MINOR,
          "provider dapl_version %u.%u, expected %s", pattr.dapl_version_major, pattr.dapl_version_minor,
          DCT_FACE);
    CHECK(pattr.max_private_data_size >= 48, "max_private_data_size %d", pattr.max_private_data_size);
    CHECK(pattr.num_provider_specific_attr == 0 || pattr.provider_specific_attr != NULL,
          "provider_specific_attr");
    vlog("adapter \"%s\" vendor \"%s\" provider \"%s\" max_eps %d srq_supported %d",
         ia_attr.adapter_name, ia_attr.vendor_name, pattr.provider_name, ia_attr.max_eps,
         (int)pattr.srq_supported);
    return fx_close(&f);
}

static tres ia_query_masks(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_PROVIDER_ATTR pattr;
    /* exactly the call the reference dat_ia_close makes: NULL evd ptr, mask 0 + NULL ia_attr */
    OK(dat_ia_query(f.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pattr));
    DAT_IA_ATTR ia_attr;
    OK(dat_ia_query(f.ia, NULL, DAT_IA_FIELD_IA_MAX_EPS, &ia_attr, 0, NULL));
    DAT_EVD_HANDLE aevd;
    OK(dat_ia_query(f.ia, &aevd, 0, NULL, 0, NULL));
    CHECK(aevd == f.async_evd, "async EVD mismatch");
    EXPECT_ERR(dat_ia_query(f.ia, NULL, DAT_IA_ALL, NULL, 0, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_ia_query(f.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL, NULL), DAT_INVALID_PARAMETER,
               ANYSUB);
    EXPECT_QUERY_BADMASK(dat_ia_query(f.ia, NULL, (DAT_IA_ATTR_MASK)1 << 50, &ia_attr, 0, NULL));
    EXPECT_QUERY_BADMASK(dat_ia_query(f.ia, NULL, 0, NULL, (DAT_PROVIDER_ATTR_MASK)1 << 40, &pattr));
    return fx_close(&f);
}

static tres ia_query_bad_handle(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_IA_HANDLE stale;
    DAT_EVD_HANDLE a;
    OK(open_ia(&stale, &a));
    OK(dat_ia_close(stale, DAT_CLOSE_ABRUPT_FLAG));
    DAT_IA_ATTR ia_attr;
    DAT_PROVIDER_ATTR pattr;
    DAT_EVD_HANDLE aevd;
    EXPECT_BAD_HANDLES(f.ep, stale, H,
                       dat_ia_query(H, &aevd, DAT_IA_ALL, &ia_attr, DAT_PROVIDER_FIELD_ALL, &pattr),
                       DAT_INVALID_HANDLE_IA);
    return fx_close(&f);
}

/* ---------------- handle type / consumer context ---------------- */

static tres handle_type_all(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_CNO_HANDLE cno;
    OK(dat_cno_create(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
    DAT_PSP_HANDLE psp;
    OK(dat_psp_create(f.ia, fresh_qual(2), f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    DAT_RMR_HANDLE rmr;
    OK(dat_rmr_create(f.pz, &rmr));
    DAT_EP_HANDLE rep;
    OK(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, NULL, &rep));
    DAT_RSP_HANDLE rsp = DAT_HANDLE_NULL;
    DAT_RETURN rr = dat_rsp_create(f.ia, fresh_qual(3), rep, f.cr_evd, &rsp);
    DAT_SRQ_HANDLE srq = DAT_HANDLE_NULL;
    DAT_SRQ_ATTR sattr = {.max_recv_dtos = 8, .max_recv_iov = 1, .low_watermark = 0};
    DAT_RETURN sr = dat_srq_create(f.ia, f.pz, &sattr, &srq);
    struct {
        DAT_HANDLE h;
        DAT_HANDLE_TYPE t;
        const char *n;
    } tab[] = {
        {f.ia, DAT_HANDLE_TYPE_IA, "IA"},       {f.ep, DAT_HANDLE_TYPE_EP, "EP"},
        {f.dto_evd, DAT_HANDLE_TYPE_EVD, "EVD"}, {f.async_evd, DAT_HANDLE_TYPE_EVD, "async EVD"},
        {f.lmr, DAT_HANDLE_TYPE_LMR, "LMR"},    {psp, DAT_HANDLE_TYPE_PSP, "PSP"},
        {f.pz, DAT_HANDLE_TYPE_PZ, "PZ"},       {rmr, DAT_HANDLE_TYPE_RMR, "RMR"},
        {cno, DAT_HANDLE_TYPE_CNO, "CNO"},      {rsp, DAT_HANDLE_TYPE_RSP, "RSP"},
        {srq, DAT_HANDLE_TYPE_SRQ, "SRQ"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        if (tab[i].h == DAT_HANDLE_NULL)
            continue; /* RSP/SRQ not implemented */
        DAT_HANDLE_TYPE t = (DAT_HANDLE_TYPE)-1;
        DAT_RETURN r = dat_get_handle_type(tab[i].h, &t);
        CHECK(r == DAT_SUCCESS, "dat_get_handle_type(%s) -> %s", tab[i].n, rs(r));
        CHECK(t == tab[i].t, "dat_get_handle_type(%s) = %d, expected %d", tab[i].n, (int)t,
              (int)tab[i].t);
    }
    CHECK(rr == DAT_SUCCESS || is_not_impl(rr), "dat_rsp_create -> %s", rs(rr));
    CHECK(sr == DAT_SUCCESS || is_not_impl(sr), "dat_srq_create -> %s", rs(sr));
    /* CR handle type is checked in the e2e/loopback cases */
    return fx_close(&f);
}

static tres handle_type_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_PZ_HANDLE stale;
    OK(dat_pz_create(f.ia, &stale));
    OK(dat_pz_free(stale));
    DAT_HANDLE_TYPE t;
    EXPECT_BAD_HANDLES(DAT_HANDLE_NULL, stale, H, dat_get_handle_type(H, &t), SUB_GENERIC,
                       DAT_INVALID_HANDLE_PZ);
    EXPECT_ERR(dat_get_handle_type(f.ep, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_get_handle_type(f.ia, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    return fx_close(&f);
}

static tres consumer_context(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_CNO_HANDLE cno;
    OK(dat_cno_create(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
    DAT_PSP_HANDLE psp;
    OK(dat_psp_create(f.ia, fresh_qual(2), f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    DAT_RMR_HANDLE rmr;
    OK(dat_rmr_create(f.pz, &rmr));
    DAT_HANDLE hs[] = {f.ia, f.ep, f.dto_evd, f.async_evd, f.lmr, psp, f.pz, rmr, cno};
    const char *ns[] = {"IA", "EP", "EVD", "async EVD", "LMR", "PSP", "PZ", "RMR", "CNO"};
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
        DAT_CONTEXT c, g;
        c.as_64 = 0xC0FFEE0000ULL + i;
        DAT_RETURN r = dat_set_consumer_context(hs[i], c);
        CHECK(r == DAT_SUCCESS, "dat_set_consumer_context(%s) -> %s", ns[i], rs(r));
        g.as_64 = 0;
        r = dat_get_consumer_context(hs[i], &g);
        CHECK(r == DAT_SUCCESS, "dat_get_consumer_context(%s) -> %s", ns[i], rs(r));
        CHECK(g.as_64 == c.as_64, "context of %s: got 0x%llx, set 0x%llx", ns[i],
              (unsigned long long)g.as_64, (unsigned long long)c.as_64);
    }
    /* pointer-valued context round trip, overwrite */
    DAT_CONTEXT c, g;
    int marker = 0;
    c.as_ptr = &marker;
    OK(dat_set_consumer_context(f.ep, c));
    OK(dat_get_consumer_context(f.ep, &g));
    CHECK(g.as_ptr == &marker, "as_ptr context round trip failed");
    /* contexts are per object */
    OK(dat_get_consumer_context(f.pz, &g));
    CHECK(g.as_64 == 0xC0FFEE0000ULL + 6, "PZ context disturbed by EP set");
    return fx_close(&f);
}

static tres consumer_context_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EVD_HANDLE stale;
    OK(make_evd(f.ia, DAT_EVD_DTO_FLAG, 4, &stale));
    OK(dat_evd_free(stale));
    DAT_CONTEXT c;
    c.as_64 = 1;
    EXPECT_BAD_HANDLES(DAT_HANDLE_NULL, stale, H, dat_set_consumer_context(H, c), SUB_GENERIC,
                       SUB_EVD);
    EXPECT_BAD_HANDLES(DAT_HANDLE_NULL, stale, H, dat_get_consumer_context(H, &c), SUB_GENERIC,
                       SUB_EVD);
    EXPECT_ERR(dat_get_consumer_context(f.ep, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    return fx_close(&f);
}

const struct tcase api_cases[] = {
    {"strerror.codes", strerror_codes, 0},
    {"strerror.null_minor", strerror_null_minor, 0},
    {"strerror.unknown_code", strerror_unknown, 0},
    {"strerror.null_major", strerror_null_major, 0},
    {"strerror.library_codes", strerror_library_codes, 0},
    {"registry.list_providers", registry_list, 0},
    {"registry.list_providers_errors", registry_list_errors, 0},
    {"ia_open.success", ia_open_close, 0},
    {"ia_openv.explicit_version", ia_openv_explicit_version, 0},
    {"ia_openv.unknown_name", ia_openv_unknown_name, 0},
    {"ia_openv.wrong_version", ia_openv_wrong_version, 0},
    {"ia_openv.bad_args", ia_openv_bad_args, 0},
    {"ia_close.bad_handle_and_flags", ia_close_bad, 0},
    {"ia_close.graceful_in_use", ia_close_graceful_in_use, 0},
    {"ia_close.abrupt_frees_children", ia_close_abrupt, 0},
    {"ia_query.all", ia_query_all, 0},
    {"ia_query.masks_and_nulls", ia_query_masks, 0},
    {"ia_query.bad_handle", ia_query_bad_handle, 0},
    {"get_handle_type.every_type", handle_type_all, 0},
    {"get_handle_type.errors", handle_type_errors, 0},
    {"consumer_context.set_get", consumer_context, 0},
    {"consumer_context.errors", consumer_context_errors, 0},
    {NULL, NULL, 0},
};
