/*
 * dct.h - shared declarations of the conformance suite (dat_conformance for DAT 1.2,
 * dat2_conformance for DAT 2.0; dct_compat.h says what differs).
 *
 * Every test case is a function returning T_PASS / T_FAIL / T_SKIP; on FAIL or SKIP it
 * leaves a one-line reason in t_reason (set through t_fail()/t_skip()).  Cases run in a
 * forked child by default (see main.c) so that a crash or a hang in the library is
 * reported as a failure of that one case.
 */
#ifndef DCT_H
#define DCT_H

#define _GNU_SOURCE 1
#include "dct_compat.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/inet.h>

typedef enum { T_PASS = 0, T_FAIL = 1, T_SKIP = 2 } tres;

typedef tres (*test_fn)(void);

struct tcase {
    const char *name;
    test_fn fn;
    unsigned timeout; /* watchdog seconds, 0 = default */
};

/* globals set by main.c */
extern char *g_ia_name;
extern int g_verbose;
extern unsigned g_tscale;        /* watchdog multiplier (env DAT_CONFORMANCE_TIMEOUT_SCALE) */
extern char *t_reason;          /* points into a shared page, 1024 bytes */
#define T_REASON_MAX 1024

/* Two-host mode (--role server|client, --peer ADDR): each e2e pair case runs only its own
 * side; qualifiers come from the case's index in e2e_cases (30000 + 10 * index + k). */
#define ROLE_NONE 0
#define ROLE_SERVER 1
#define ROLE_CLIENT 2
extern int g_role;
extern struct in_addr g_peer_addr; /* client: the server host */
extern int g_case_index;           /* index of the running case in e2e_cases (role mode) */

tres t_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
tres t_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "0x%08x (MAJOR/MINOR)" via dat_strerror, from a small rotating set of static buffers */
const char *rs(DAT_RETURN r);
const char *subname(unsigned sub);

#define MKERR(t, s) ((DAT_RETURN)(DAT_CLASS_ERROR | (DAT_UINT32)(t) | (DAT_UINT32)(s)))
#define ANYSUB 0x10000u  /* wildcard in subtype lists */
#define ENDSUB 0x20000u  /* list terminator */

int is_not_impl(DAT_RETURN r);
/* r is an error of type t whose subtype is one of subs[] (terminated by ENDSUB) */
int match_err(DAT_RETURN r, DAT_UINT32 t, const unsigned *subs);
const char *subs_str(const unsigned *subs);

/* Run CALL; it must succeed.  DAT_NOT_IMPLEMENTED turns the case into a SKIP. */
#define OK(call)                                                                        \
    do {                                                                                \
        DAT_RETURN ok_r_ = (call);                                                      \
        if (ok_r_ != DAT_SUCCESS) {                                                     \
            if (is_not_impl(ok_r_))                                                     \
                return t_skip("not implemented: %s", #call);                            \
            return t_fail("%s:%d: %s -> %s", __FILE__, __LINE__, #call, rs(ok_r_));     \
        }                                                                               \
    } while (0)

/* Propagate a non-PASS result of a helper returning tres. */
#define TRY(expr)                                                                       \
    do {                                                                                \
        tres try_r_ = (expr);                                                           \
        if (try_r_ != T_PASS)                                                           \
            return try_r_;                                                              \
    } while (0)

#define CHECK(cond, ...)                                                                \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            char chk_b_[600];                                                           \
            snprintf(chk_b_, sizeof chk_b_, __VA_ARGS__);                               \
            return t_fail("%s:%d: %s", __FILE__, __LINE__, chk_b_);                     \
        }                                                                               \
    } while (0)

/* CALL must fail with error type T and one of the subtypes given (ANYSUB = any). */
#define EXPECT_ERR(call, T, ...)                                                        \
    do {                                                                                \
        static const unsigned ee_subs_[] = {__VA_ARGS__, ENDSUB};                      \
        DAT_RETURN ee_r_ = (call);                                                      \
        if (!match_err(ee_r_, (T), ee_subs_)) {                                         \
            if (is_not_impl(ee_r_))                                                     \
                return t_skip("not implemented: %s", #call);                            \
            return t_fail("%s:%d: %s: expected %s|%s, got %s", __FILE__, __LINE__,      \
                          #call, rs(MKERR((T), 0)), subs_str(ee_subs_), rs(ee_r_));      \
        }                                                                               \
    } while (0)

/* CALL must fail with one of two error types (any subtype). */
#define EXPECT_ERR2(call, T1, T2)                                                       \
    do {                                                                                \
        DAT_RETURN ee_r_ = (call);                                                      \
        if ((ee_r_ & DAT_CLASS_ERROR) == 0 ||                                           \
            (DAT_GET_TYPE(ee_r_) != (DAT_UINT32)(T1) &&                                 \
             DAT_GET_TYPE(ee_r_) != (DAT_UINT32)(T2))) {                                \
            if (is_not_impl(ee_r_))                                                     \
                return t_skip("not implemented: %s", #call);                            \
            return t_fail("%s:%d: %s: expected %s or %s, got %s", __FILE__, __LINE__,   \
                          #call, rs(MKERR((T1), 0)), rs(MKERR((T2), 0)), rs(ee_r_));     \
        }                                                                               \
    } while (0)

/*
 * Bad handles: NULL, small garbage integer, pointer to a stack int, pointer to a heap
 * block of 0xff bytes, a non-canonical value, a pointer into the text, a handle of the wrong
 * type and a pointer one word into it, a freed (stale) handle of the right type.
 * HV is a DAT_HANDLE variable name usable inside CALL.
 */
struct badh {
    DAT_HANDLE h;
    const char *what;
};
int make_bad_handles(struct badh *out, DAT_HANDLE wrong_type, DAT_HANDLE stale, int *stack_int);

#define EXPECT_BAD_HANDLES(WRONG, STALE, HV, CALL, ...)                                 \
    do {                                                                                \
        static const unsigned bh_subs_[] = {__VA_ARGS__, ENDSUB};                      \
        int bh_si_ = 0x5a5a5a5a;                                                        \
        struct badh bh_[12];                                                            \
        int bh_n_ = make_bad_handles(bh_, (WRONG), (STALE), &bh_si_);                   \
        for (int bh_i_ = 0; bh_i_ < bh_n_; bh_i_++) {                                   \
            DAT_HANDLE HV = bh_[bh_i_].h;                                               \
            DAT_RETURN bh_r_ = (CALL);                                                  \
            if (!match_err(bh_r_, DAT_INVALID_HANDLE, bh_subs_))                       \
                return t_fail("%s:%d: %s with %s handle: expected "                     \
                              "DAT_INVALID_HANDLE|%s, got %s", __FILE__, __LINE__,      \
                              #CALL, bh_[bh_i_].what, subs_str(bh_subs_), rs(bh_r_));   \
        }                                                                               \
        (void)bh_si_;                                                                   \
    } while (0)

/* subtype lists */
#define SUB_EVD DAT_INVALID_HANDLE_EVD_REQUEST, DAT_INVALID_HANDLE_EVD_RECV, \
    DAT_INVALID_HANDLE_EVD_CONN, DAT_INVALID_HANDLE_EVD_CR, DAT_INVALID_HANDLE_EVD_ASYNC, \
    DAT_INVALID_HANDLE1
#define SUB_GENERIC DAT_INVALID_HANDLE1, DAT_NO_SUBTYPE

/* ---- fixtures (fixtures.c) ---- */
struct fx {
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd;
    DAT_PZ_HANDLE pz;
    DAT_EVD_HANDLE dto_evd;  /* DTO flag */
    DAT_EVD_HANDLE conn_evd; /* CONNECTION flag */
    DAT_EVD_HANDLE cr_evd;   /* CR flag */
    DAT_EP_HANDLE ep;        /* unconnected EP */
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lmr_ctx;
    DAT_RMR_CONTEXT rmr_ctx;
    DAT_VLEN reg_len;
    DAT_VADDR reg_addr;
    char *buf;
    DAT_VLEN buflen;
};

tres fx_open(struct fx *f);                  /* IA + async EVD only */
tres fx_full(struct fx *f);                  /* IA, PZ, EVDs, EP, LMR over buf */
tres fx_close(struct fx *f);                 /* abrupt IA close */

DAT_RETURN open_ia(DAT_IA_HANDLE *ia, DAT_EVD_HANDLE *async_evd);
DAT_RETURN make_lmr(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, void *buf, DAT_VLEN len,
                    DAT_MEM_PRIV_FLAGS priv, DAT_LMR_HANDLE *lmr, DAT_LMR_CONTEXT *lctx,
                    DAT_RMR_CONTEXT *rctx);
DAT_RETURN make_evd(DAT_IA_HANDLE ia, DAT_EVD_FLAGS flags, DAT_COUNT qlen, DAT_EVD_HANDLE *evd);

/* wait for one event (timeout in microseconds) */
DAT_RETURN wait_ev(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EVENT *ev);
const char *evname(DAT_EVENT_NUMBER n);
/* the next async event is the watermark event of h with reason (waits up to us) */
/* waits up to `us` for one event on the async EVD: `number`, naming `h`, with `reason` */
tres expect_async_event(DAT_EVD_HANDLE async_evd, DAT_TIMEOUT us, DAT_EVENT_NUMBER number, DAT_HANDLE h,
                        DAT_COUNT reason);
tres expect_watermark_event(DAT_EVD_HANDLE async_evd, DAT_TIMEOUT us, DAT_HANDLE h, DAT_COUNT reason);
const char *dtostat(DAT_DTO_COMPLETION_STATUS s);

/* in-process loopback connection: client EP and server EP in one IA */
struct conn {
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd;
    DAT_PZ_HANDLE pz;
    DAT_EVD_HANDLE cr_evd, c_dto, c_conn, s_dto, s_conn;
    DAT_PSP_HANDLE psp;
    DAT_EP_HANDLE cep, sep;
    DAT_CONN_QUAL qual;
    char *buf; /* 64 KiB, registered */
    DAT_VLEN buflen;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lctx;
    DAT_RMR_CONTEXT rctx;
};
tres conn_setup(struct conn *c);
tres conn_request(struct conn *c, unsigned k, DAT_CR_HANDLE *cr);
void set_loopback_addr(struct sockaddr_in *sin);
DAT_CONN_QUAL fresh_qual(unsigned k);
DAT_DTO_COOKIE cookie(DAT_UINT64 v);
DAT_LMR_TRIPLET trip(DAT_LMR_CONTEXT ctx, const void *addr, DAT_VLEN len);
tres expect_dto(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_UINT64 cookie,
                DAT_DTO_COMPLETION_STATUS st, DAT_VLEN len, DAT_EVENT *out);

/* test tables */
extern const struct tcase api_cases[];
extern const struct tcase obj_cases[];
extern const struct tcase dto_cases[];
extern const struct tcase e2e_cases[];
extern const struct tcase reg_cases[];
extern const struct tcase dat2_cases[]; /* DAT 2.0 only (t_dat2.c); empty in the 1.2 build */
extern const struct tcase redirect_cases[]; /* the DAT_<CALL> macros on our handles (t_redirect.c) */

#endif

/* Query with unknown mask bits: the reference implementations ignore them, so both
 * DAT_SUCCESS and DAT_INVALID_PARAMETER are accepted (a verbose note is printed). */
#define EXPECT_QUERY_BADMASK(call)                                                      \
    do {                                                                                \
        DAT_RETURN qb_r_ = (call);                                                      \
        if (qb_r_ == DAT_SUCCESS)                                                       \
            vlog("note: %s accepted unknown mask bits", #call);                         \
        else if (!((qb_r_ & DAT_CLASS_ERROR) &&                                         \
                   DAT_GET_TYPE(qb_r_) == DAT_INVALID_PARAMETER))                       \
            return t_fail("%s:%d: %s: expected DAT_SUCCESS or DAT_INVALID_PARAMETER, "  \
                          "got %s", __FILE__, __LINE__, #call, rs(qb_r_));              \
    } while (0)
