/*
 * compat_use.c - source written the way DAT 1.2 consumers and providers of the OFED era write
 * it must compile against our headers (tests/abi/run.sh builds it as C99, C11 and C++11 with
 * warnings as errors; header_macros.c checks that every name exists, this file uses them).
 */
#include <dat/udat.h>
#include <dat/dat_registry.h>
#include <dat/dat_redirection.h>
#include <dat/udat_redirection.h>

/* IN / OUT / INOUT annotate parameters, as in the specification's prototypes. */
DAT_RETURN compat_open(IN DAT_NAME_PTR name, INOUT DAT_EVD_HANDLE *async_evd, OUT DAT_IA_HANDLE *ia);
DAT_RETURN compat_open(IN DAT_NAME_PTR name, INOUT DAT_EVD_HANDLE *async_evd, OUT DAT_IA_HANDLE *ia)
{
    return dat_ia_open(name, 8, async_evd, ia);
}

/* The old DAT_IA_ATTR member names read the current members. */
DAT_COUNT compat_old_ia_attr_names(IN DAT_IA_HANDLE ia);
DAT_COUNT compat_old_ia_attr_names(IN DAT_IA_HANDLE ia)
{
    DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL;
    DAT_IA_ATTR attr;
    DAT_PROVIDER_ATTR provider_attr;
    DAT_IA_ATTR_MASK mask = DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN | DAT_IA_FIELD_IA_MAX_MTU_SIZE;

    attr.max_rdma_read_per_ep_in = 3;
    attr.max_message_size = 4096;
    if (attr.max_rdma_read_per_ep != 3 || attr.max_mtu_size != 4096)
        return -1;
    if (dat_ia_query(ia, &async_evd, mask, &attr, DAT_PROVIDER_FIELD_NONE, &provider_attr) != DAT_SUCCESS)
        return -1;
    return attr.max_rdma_read_per_ep + (DAT_COUNT) attr.max_mtu_size;
}

/* DAT_RMR_BIND_COMPLETION_STATUS is a type: the status of an RMR bind completion event. */
int compat_bind_status(IN const DAT_EVENT *event);
int compat_bind_status(IN const DAT_EVENT *event)
{
    DAT_RMR_BIND_COMPLETION_STATUS status = event->event_data.rmr_completion_event_data.status;
    return status == DAT_RMR_BIND_SUCCESS ? 0 : status == DAT_RMR_BIND_FAILURE ? 1 : 2;
}

/* A provider-side dispatch through the redirection macros (what libdat does with a handle). */
DAT_RETURN compat_dispatch(IN DAT_EP_HANDLE ep, IN DAT_LMR_TRIPLET *iov, IN DAT_DTO_COOKIE cookie);
DAT_RETURN compat_dispatch(IN DAT_EP_HANDLE ep, IN DAT_LMR_TRIPLET *iov, IN DAT_DTO_COOKIE cookie)
{
    DAT_PROVIDER *provider = DAT_HANDLE_TO_PROVIDER(ep);
    if (provider == NULL || provider->ep_post_send_func == NULL)
        return DAT_INVALID_HANDLE | DAT_CLASS_ERROR;
    return DAT_EP_POST_SEND(ep, 1, iov, cookie, DAT_COMPLETION_DEFAULT_FLAG);
}

/* A provider library's entry points, declared through their name macros. */
void compat_provider_names(const char **init, const char **fini);
void compat_provider_names(const char **init, const char **fini)
{
    *init = DAT_PROVIDER_INIT_FUNC_STR;
    *fini = DAT_PROVIDER_FINI_FUNC_STR;
}
