/*
 * dat_extension_op: the one variadic export of libdat2.so.2.
 *
 * C is the only place the variadic arguments can be read, so this shim reads
 * them, per DAT_IB_* operation of <dat2/dat_ib_extensions.h>, into a plain
 * struct ext_args and hands that to Rust (dat20_extension_call in
 * crates/dat20/src/extension.rs), where the operation is decoded and
 * dispatched.  A third-party provider's handle goes, with the va_list itself,
 * to that provider's handle_extendedop_func instead (dat20_extension_foreign).
 * dat20_handle_extendedop, the same with a va_list, fills the provider table's
 * handle_extendedop_func slot (crates/face/provider_table.rs).
 * The struct's layout is mirrored by ExtArgs in extension.rs.
 */
#include <stdarg.h>
#include <stdint.h>
#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>
#include <dat2/dat_registry.h>

struct ext_args {
    int32_t op;            /* DAT_IB_OP */
    int32_t read;          /* 1 when the operation's arguments below were read */
    uint64_t value1;       /* add_val / cmp_val */
    uint64_t value2;       /* swap_val */
    int32_t count;         /* number of local segments */
    uint32_t immed;        /* immediate data */
    const void *local;     /* DAT_LMR_TRIPLET * */
    const void *remote;    /* DAT_RMR_TRIPLET * */
    const void *ah;        /* DAT_IB_ADDR_HANDLE * */
    uint64_t cookie;       /* DAT_DTO_COOKIE / DAT_CONTEXT */
    uint32_t flags;        /* DAT_COMPLETION_FLAGS */
    int32_t counter;       /* counter number / DAT_IA_COUNTER_TYPE */
    int32_t reset;
    void *counters_out;    /* DAT_UINT64 * */
    const char *name;      /* DAT_NAME_PTR */
    void *ia_out;          /* DAT_HANDLE * */
    uint64_t ia_mask;      /* DAT_IA_ATTR_MASK */
    void *ia_attr;         /* DAT_IA_ATTR * */
    uint64_t provider_mask; /* DAT_PROVIDER_ATTR_MASK */
    void *provider_attr;   /* DAT_PROVIDER_ATTR * */
};

_Static_assert(sizeof(struct ext_args) == 136, "struct ext_args is mirrored by ExtArgs in extension.rs");

/* In Rust (extension.rs). */
DAT_RETURN dat20_extension_call(DAT_HANDLE handle, const struct ext_args *args);
int dat20_extension_foreign(DAT_HANDLE handle, DAT_HANDLE_EXTENDEDOP_FUNC *func);
DAT_RETURN dat20_extension_not_implemented(void);

static void read_args(int op, va_list ap, struct ext_args *a)
{
    a->read = 1;
    switch (op) {
    case DAT_IB_FETCH_AND_ADD_OP:
        a->value1 = va_arg(ap, DAT_UINT64);
        a->local = va_arg(ap, DAT_LMR_TRIPLET *);
        a->cookie = va_arg(ap, DAT_DTO_COOKIE).as_64;
        a->remote = va_arg(ap, DAT_RMR_TRIPLET *);
        a->flags = va_arg(ap, DAT_COMPLETION_FLAGS);
        break;
    case DAT_IB_CMP_AND_SWAP_OP:
        a->value1 = va_arg(ap, DAT_UINT64);
        a->value2 = va_arg(ap, DAT_UINT64);
        a->local = va_arg(ap, DAT_LMR_TRIPLET *);
        a->cookie = va_arg(ap, DAT_DTO_COOKIE).as_64;
        a->remote = va_arg(ap, DAT_RMR_TRIPLET *);
        a->flags = va_arg(ap, DAT_COMPLETION_FLAGS);
        break;
    case DAT_IB_RDMA_WRITE_IMMED_OP:
        a->count = va_arg(ap, DAT_COUNT);
        a->local = va_arg(ap, DAT_LMR_TRIPLET *);
        a->cookie = va_arg(ap, DAT_DTO_COOKIE).as_64;
        a->remote = va_arg(ap, DAT_RMR_TRIPLET *);
        a->immed = va_arg(ap, DAT_UINT32);
        a->flags = va_arg(ap, DAT_COMPLETION_FLAGS);
        break;
    case DAT_IB_UD_SEND_OP:
        a->count = va_arg(ap, DAT_COUNT);
        a->local = va_arg(ap, DAT_LMR_TRIPLET *);
        a->ah = va_arg(ap, DAT_IB_ADDR_HANDLE *);
        a->cookie = va_arg(ap, DAT_DTO_COOKIE).as_64;
        a->flags = va_arg(ap, DAT_COMPLETION_FLAGS);
        break;
    case DAT_IB_QUERY_COUNTERS_OP:
        a->counter = va_arg(ap, int);
        a->counters_out = va_arg(ap, DAT_UINT64 *);
        a->reset = va_arg(ap, int);
        break;
    case DAT_IB_PRINT_COUNTERS_OP:
        a->counter = va_arg(ap, int);
        a->reset = va_arg(ap, int);
        break;
    case DAT_IB_START_COUNTERS_OP:
    case DAT_IB_STOP_COUNTERS_OP:
        a->counter = (int32_t) va_arg(ap, DAT_IA_COUNTER_TYPE);
        break;
    case DAT_IB_UD_CM_FREE_OP:
        a->cookie = va_arg(ap, DAT_CONTEXT).as_64;
        break;
    case DAT_IB_UD_AH_FREE_OP:
        a->ah = va_arg(ap, DAT_IB_ADDR_HANDLE *);
        break;
    case DAT_IB_OPEN_QUERY_OP:
        a->name = va_arg(ap, DAT_NAME_PTR);
        a->ia_out = va_arg(ap, DAT_HANDLE *);
        a->ia_mask = va_arg(ap, DAT_IA_ATTR_MASK);
        a->ia_attr = va_arg(ap, DAT_IA_ATTR *);
        a->provider_mask = va_arg(ap, DAT_PROVIDER_ATTR_MASK);
        a->provider_attr = va_arg(ap, DAT_PROVIDER_ATTR *);
        break;
    case DAT_IB_CLOSE_QUERY_OP:
        break;
    default:
        /* Collectives (not offered) and unknown codes: nothing is read. */
        a->read = 0;
        break;
    }
}

/*
 * The provider table's handle_extendedop_func (the DAT_HANDLE_EXTENDEDOP macro
 * of dat_redirection.h calls it with the caller's va_list): the body of
 * dat_extension_op.
 */
DAT_RETURN dat20_handle_extendedop(DAT_HANDLE handle, DAT_EXTENDED_OP ext_op, va_list ap)
{
    DAT_HANDLE_EXTENDEDOP_FUNC provider_func = NULL;
    struct ext_args args = { 0 };

    if (dat20_extension_foreign(handle, &provider_func))
        return provider_func ? provider_func(handle, ext_op, ap) : dat20_extension_not_implemented();
    args.op = ext_op;
    read_args(ext_op, ap, &args);
    return dat20_extension_call(handle, &args);
}

DAT_RETURN dat_extension_op(DAT_HANDLE handle, DAT_EXTENDED_OP ext_op, ...)
{
    DAT_RETURN r;
    va_list ap;

    va_start(ap, ext_op);
    r = dat20_handle_extendedop(handle, ext_op, ap);
    va_end(ap);
    return r;
}
