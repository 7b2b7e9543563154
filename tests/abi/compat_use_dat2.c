/*
 * compat_use_dat2.c - source compatibility of the DAT 2.0 headers: the way a
 * DAT 2.0 consumer of OFED's <dat2/udat.h> (dtest, dtestx, MPI libraries)
 * uses the API, compiled, never linked (run.sh compiles it with -c as C99,
 * C11 and C++11 under -Werror, against our include/dat2 and, when they are
 * installed, as C11 against OFED's headers too: their DAT_PROVIDER_ATTR has
 * a const member that C++ cannot default-construct).
 *
 * It calls every function of dat20-functions.md with arguments of exactly
 * the listed types, so a missing or differing prototype fails to compile
 * (a wrong pointer type, a missing or extra argument; C++ also rejects
 * wrong enum types).  It also uses the 2.0 data structures the way
 * consumers do (16-byte triplets, DTO completion data, the IB extension
 * event data) and the dat_ib_* extension macros.
 *
 * With -DOFED_HEADERS (run.sh, against OFED's own headers) it leaves out
 * what OFED's headers themselves cannot compile: the dat_ib_* macros that
 * name undefined identifiers there (start/stop_counter, set/read_clock,
 * alltoallv) and dats_get_ia_handle, which they do not declare.
 */
#include <netinet/in.h>     /* OFED's headers need it first; ours do not */
#include <dat2/udat.h>
#include <dat2/dat_registry.h>
#include <dat2/dat_ib_extensions.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int compat_dat2_connect(char *ia_name, struct sockaddr *peer, DAT_CONN_QUAL qual);
int compat_dat2_data(DAT_IA_HANDLE ia, DAT_EP_HANDLE ep, DAT_PZ_HANDLE pz, DAT_EVD_HANDLE evd);
int compat_dat2_objects(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, DAT_EVD_HANDLE evd);
int compat_dat2_extensions(DAT_IA_HANDLE ia, DAT_EP_HANDLE ep, DAT_EVD_HANDLE evd, DAT_PZ_HANDLE pz);
int compat_dat2_registry(const DAT_PROVIDER *provider, const DAT_PROVIDER_INFO *info);

/* Open, query, connect, accept/reject, disconnect, close. */
int compat_dat2_connect(char *ia_name, struct sockaddr *peer, DAT_CONN_QUAL qual)
{
    DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
    DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL;
    DAT_EVD_HANDLE conn_evd = DAT_HANDLE_NULL;
    DAT_EVD_HANDLE cr_evd = DAT_HANDLE_NULL;
    DAT_EVD_HANDLE dto_evd = DAT_HANDLE_NULL;
    DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
    DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
    DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;
    DAT_RSP_HANDLE rsp = DAT_HANDLE_NULL;
    DAT_CR_HANDLE cr = DAT_HANDLE_NULL;
    DAT_IA_ATTR ia_attr;
    DAT_PROVIDER_ATTR prov_attr;
    DAT_EP_ATTR ep_attr;
    DAT_EP_PARAM ep_param;
    DAT_CR_PARAM cr_param;
    DAT_PSP_PARAM psp_param;
    DAT_RSP_PARAM rsp_param;
    DAT_EVENT event;
    DAT_COUNT nmore = 0;
    DAT_CONN_QUAL any_qual = 0;
    DAT_EP_STATE state;
    DAT_BOOLEAN recv_idle, request_idle;
    DAT_COUNT nbufs = 0, span = 0;
    char private_data[64] = "hello";
    const char *major = NULL;
    const char *minor = NULL;
    DAT_RETURN ret;

    ret = dat_ia_open(ia_name, 8, &async_evd, &ia);
    if (ret != DAT_SUCCESS) {
        (void) dat_strerror(ret, &major, &minor);
        if (DAT_GET_TYPE(ret) == DAT_PROVIDER_NOT_FOUND && DAT_GET_SUBTYPE(ret) == DAT_NAME_NOT_REGISTERED)
            return 1;
        return DAT_IS_WARNING(ret) ? 2 : 3;
    }
    ret = dat_ia_openv(ia_name, 8, &async_evd, &ia, DAT_VERSION_MAJOR, DAT_VERSION_MINOR, DAT_THREADSAFE);
    ret = dat_ia_query(ia, &async_evd, DAT_IA_FIELD_ALL, &ia_attr, DAT_PROVIDER_FIELD_ALL, &prov_attr);
    if (ret == DAT_SUCCESS && ia_attr.extension_supported == DAT_EXTENSION_IB
        && ia_attr.extension_version >= DAT_IB_EXTENSION_VERSION && ia_attr.max_message_size > 0
        && prov_attr.rmr_scope_supported == DAT_RMR_SCOPE_ANY && prov_attr.ha_loadbalancing == DAT_HA_LB_NONE
        && prov_attr.evd_stream_merging_supported[0][0] == DAT_TRUE)
        nmore = 1;

    (void) dat_pz_create(ia, &pz);
    (void) dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn_evd);
    (void) dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd);
    (void) dat_evd_create(ia, 64, DAT_HANDLE_NULL,
                          (DAT_EVD_FLAGS) (DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG | DAT_IB_EVD_EXTENSION_FLAG),
                          &dto_evd);

    memset(&ep_attr, 0, sizeof ep_attr);
    ep_attr.service_type = DAT_SERVICE_TYPE_RC;
    ep_attr.max_message_size = 4096;            /* DAT_SEG_LENGTH in 2.0 */
    ep_attr.max_rdma_size = 1u << 20;
    ep_attr.qos = DAT_QOS_BEST_EFFORT;
    ep_attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    ep_attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    ep_attr.max_recv_dtos = 16;
    ep_attr.max_request_dtos = 16;
    ep_attr.max_recv_iov = 1;
    ep_attr.max_request_iov = 1;
    ep_attr.max_rdma_read_in = 4;
    ep_attr.max_rdma_read_out = 4;
    (void) dat_ep_create(ia, pz, dto_evd, dto_evd, conn_evd, &ep_attr, &ep);
    (void) dat_ep_query(ep, DAT_EP_FIELD_ALL, &ep_param);
    ep_param.comm.domain = AF_INET;
    (void) dat_ep_modify(ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS | DAT_EP_FIELD_COMM, &ep_param);
    (void) dat_ep_get_status(ep, &state, &recv_idle, &request_idle);
    (void) dat_ep_recv_query(ep, &nbufs, &span);
    (void) dat_ep_set_watermark(ep, DAT_HW_DEFAULT, DAT_HW_DEFAULT);

    /* active side */
    ret = dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR) peer, qual, DAT_TIMEOUT_INFINITE,
                         (DAT_COUNT) strlen(private_data) + 1, (DAT_PVOID) private_data,
                         DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG);
    (void) dat_ep_common_connect(ep, (DAT_IA_ADDRESS_PTR) peer, 1000000, 0, NULL);
    (void) dat_ep_dup_connect(ep, ep, 1000000, 0, NULL, DAT_QOS_BEST_EFFORT);
    ret = dat_evd_wait(conn_evd, DAT_TIMEOUT_INFINITE, 1, &event, &nmore);
    if (ret == DAT_SUCCESS && event.event_number == DAT_CONNECTION_EVENT_ESTABLISHED
        && event.event_data.connect_event_data.ep_handle == ep)
        nmore++;

    /* passive side */
    (void) dat_psp_create(ia, qual, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp);
    (void) dat_psp_create_any(ia, &any_qual, cr_evd, DAT_PSP_PROVIDER_FLAG, &psp);
    (void) dat_psp_query(psp, DAT_PSP_FIELD_ALL, &psp_param);
    (void) dat_rsp_create(ia, qual + 1, ep, cr_evd, &rsp);
    (void) dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &rsp_param);
    ret = dat_evd_dequeue(cr_evd, &event);
    if (ret == DAT_SUCCESS && event.event_number == DAT_CONNECTION_REQUEST_EVENT) {
        cr = event.event_data.cr_arrival_event_data.cr_handle;
        if (event.event_data.cr_arrival_event_data.truncate_flag == DAT_TRUE)
            nmore++;
        (void) dat_cr_query(cr, DAT_CR_FIELD_ALL, &cr_param);
        if (cr_param.private_data_size > 0)
            (void) dat_cr_accept(cr, ep, 0, NULL);
        else
            (void) dat_cr_reject(cr, (DAT_COUNT) sizeof private_data, (DAT_PVOID) private_data);
        (void) dat_cr_handoff(cr, qual + 2);
    }

    (void) dat_ep_disconnect(ep, DAT_CLOSE_GRACEFUL_FLAG);
    (void) dat_ep_reset(ep);
    (void) dat_ep_free(ep);
    (void) dat_rsp_free(rsp);
    (void) dat_psp_free(psp);
    (void) dat_evd_free(dto_evd);
    (void) dat_evd_free(cr_evd);
    (void) dat_evd_free(conn_evd);
    (void) dat_pz_free(pz);
    return (int) dat_ia_close(ia, DAT_CLOSE_DEFAULT) + (int) nmore;
}

/* Memory registration, 16-byte triplets, posts and completions. */
int compat_dat2_data(DAT_IA_HANDLE ia, DAT_EP_HANDLE ep, DAT_PZ_HANDLE pz, DAT_EVD_HANDLE evd)
{
    static char buffer[8192];
    DAT_REGION_DESCRIPTION region;
    DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
    DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL;
    DAT_LMR_CONTEXT lmr_context = 0;
    DAT_RMR_CONTEXT rmr_context = 0;
    DAT_RMR_CONTEXT bound_context = 0;
    DAT_VLEN registered_length = 0;
    DAT_VADDR registered_address = 0;
    DAT_LMR_PARAM lmr_param;
    DAT_RMR_PARAM rmr_param;
    DAT_LMR_TRIPLET iov[2];
    DAT_RMR_TRIPLET remote;
    DAT_RMR_TRIPLET local_rmr;
    DAT_DTO_COOKIE cookie;
    DAT_RMR_COOKIE rmr_cookie;
    DAT_EVENT event;
    DAT_COUNT nmore = 0;
    int seen = 0;

    region.for_va = buffer;
    (void) dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, sizeof buffer, pz,
                          (DAT_MEM_PRIV_FLAGS) (DAT_MEM_PRIV_ALL_FLAG | DAT_IB_MEM_PRIV_REMOTE_ATOMIC),
                          DAT_VA_TYPE_VA, &lmr, &lmr_context, &rmr_context, &registered_length,
                          &registered_address);
    (void) dat_lmr_query(lmr, (DAT_LMR_PARAM_MASK) (DAT_LMR_FIELD_VA_TYPE | DAT_LMR_FIELD_LMR_CONTEXT), &lmr_param);
    if (lmr_param.va_type == DAT_VA_TYPE_ZB)
        seen++;

    /* the 2.0 triplet: address, 32-bit length, context */
    iov[0].virtual_address = (DAT_VADDR) (uintptr_t) buffer;
    iov[0].segment_length = 4096;
    iov[0].lmr_context = lmr_context;
    iov[1] = iov[0];
    iov[1].virtual_address += 4096;
    remote.virtual_address = registered_address;
    remote.segment_length = 4096;
    remote.rmr_context = rmr_context;
    local_rmr = remote;
    cookie.as_64 = 1;
    rmr_cookie.as_ptr = buffer;

    (void) dat_lmr_sync_rdma_read(ia, iov, 2);
    (void) dat_lmr_sync_rdma_write(ia, iov, 2);
    (void) dat_ep_post_recv(ep, 2, iov, cookie, DAT_COMPLETION_DEFAULT_FLAG);
    (void) dat_ep_post_send(ep, 1, iov, cookie, DAT_COMPLETION_SUPPRESS_FLAG);
    (void) dat_ep_post_send_with_invalidate(ep, 1, iov, cookie, DAT_COMPLETION_DEFAULT_FLAG, DAT_TRUE, rmr_context);
    (void) dat_ep_post_rdma_write(ep, 1, iov, cookie, &remote, DAT_COMPLETION_DEFAULT_FLAG);
    (void) dat_ep_post_rdma_read(ep, 1, iov, cookie, &remote,
                                 (DAT_COMPLETION_FLAGS) (DAT_COMPLETION_BARRIER_FENCE_FLAG
                                                         | DAT_COMPLETION_LMR_INVALIDATE_FENCE_FLAG));
    (void) dat_ep_post_rdma_read_to_rmr(ep, &local_rmr, cookie, &remote, DAT_COMPLETION_DEFAULT_FLAG);

    (void) dat_rmr_create(pz, &rmr);
    (void) dat_rmr_create_for_ep(pz, &rmr);
    (void) dat_rmr_bind(rmr, lmr, &iov[0], DAT_MEM_PRIV_REMOTE_WRITE_FLAG, DAT_VA_TYPE_VA, ep, rmr_cookie,
                        DAT_COMPLETION_DEFAULT_FLAG, &bound_context);
    (void) dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rmr_param);
    if (rmr_param.rmr_scope == DAT_RMR_SCOPE_EP && rmr_param.lmr_triplet.segment_length == 4096)
        seen++;

    while (dat_evd_wait(evd, 1000, 1, &event, &nmore) == DAT_SUCCESS) {
        const DAT_DTO_COMPLETION_EVENT_DATA *dto = &event.event_data.dto_completion_event_data;
        if (event.event_number == DAT_DTO_COMPLETION_EVENT && dto->status == DAT_DTO_SUCCESS) {
            DAT_SEG_LENGTH len = dto->transfered_length;
            if (dto->operation == DAT_DTO_RECEIVE && len > 0)
                seen++;
            if (dto->operation == DAT_DTO_RECEIVE_WITH_INVALIDATE && dto->rmr_context == rmr_context)
                seen++;
        } else if (event.event_number == DAT_RMR_BIND_COMPLETION_EVENT
                   && event.event_data.rmr_completion_event_data.status == DAT_RMR_BIND_SUCCESS) {
            seen++;
        } else if (event.event_number == (DAT_EVENT_NUMBER) DAT_IB_DTO_EVENT) {
            const DAT_IB_EXTENSION_EVENT_DATA *ext = (const DAT_IB_EXTENSION_EVENT_DATA *) event.event_extension_data;
            if (ext->type == DAT_IB_RDMA_WRITE_IMMED_DATA && ext->val.immed.data == 42)
                seen++;
            if (ext->type == DAT_IB_UD_REMOTE_AH && ext->remote_ah.qpn != 0)
                seen++;
            if (dto->operation == (DAT_DTOS) DAT_IB_DTO_RECV_IMMED || dto->operation == (DAT_DTOS) DAT_IB_DTO_CMP_SWAP)
                seen++;
        }
        if (nmore == 0)
            break;
    }

    (void) dat_rmr_free(rmr);
    (void) dat_lmr_free(lmr);
    return seen;
}

/* The other objects: EVD control, CNO, SRQ, CSP, handle helpers. */
int compat_dat2_objects(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, DAT_EVD_HANDLE evd)
{
    DAT_OS_WAIT_PROXY_AGENT agent = DAT_OS_WAIT_PROXY_AGENT_NULL;
    DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
    DAT_CNO_PARAM cno_param;
    DAT_FD fd = -1;
    DAT_EVD_HANDLE fired = DAT_HANDLE_NULL;
    DAT_EVD_PARAM evd_param;
    DAT_EVENT event;
    DAT_SRQ_HANDLE srq = DAT_HANDLE_NULL;
    DAT_SRQ_ATTR srq_attr;
    DAT_SRQ_PARAM srq_param;
    DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
    DAT_LMR_TRIPLET iov;
    DAT_DTO_COOKIE cookie;
    DAT_CSP_HANDLE csp = DAT_HANDLE_NULL;
    DAT_CSP_PARAM csp_param;
    DAT_COMM comm;
    DAT_PZ_PARAM pz_param;
    DAT_CONTEXT context;
    DAT_HANDLE_TYPE type;
    int seen = 0;

    (void) dat_cno_create(ia, agent, &cno);
    (void) dat_cno_modify_agent(cno, agent);
    (void) dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cno_param);
    if (cno_param.proxy_type == DAT_PROXY_TYPE_FD && cno_param.proxy.fd >= 0)
        seen++;
    if (cno_param.proxy_type == DAT_PROXY_TYPE_AGENT && cno_param.proxy.agent.proxy_agent_func != NULL)
        seen++;
    (void) dat_cno_wait(cno, DAT_TIMEOUT_INFINITE, &fired);
    (void) dat_cno_free(cno);
    (void) dat_cno_fd_create(ia, &fd, &cno);
    (void) dat_cno_trigger(cno, &fired);

    (void) dat_evd_modify_cno(evd, cno);
    (void) dat_evd_query(evd, DAT_EVD_FIELD_ALL, &evd_param);
    (void) dat_evd_resize(evd, evd_param.evd_qlen * 2);
    (void) dat_evd_enable(evd);
    (void) dat_evd_disable(evd);
    (void) dat_evd_set_unwaitable(evd);
    (void) dat_evd_clear_unwaitable(evd);
    memset(&event, 0, sizeof event);
    event.event_number = DAT_SOFTWARE_EVENT;
    event.event_data.software_event_data.pointer = &seen;
    (void) dat_evd_post_se(evd, &event);

    srq_attr.max_recv_dtos = 16;
    srq_attr.max_recv_iov = 1;
    srq_attr.low_watermark = DAT_SRQ_LW_DEFAULT;
    (void) dat_srq_create(ia, pz, &srq_attr, &srq);
    (void) dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &srq_param);
    if (srq_param.srq_state == DAT_SRQ_STATE_OPERATIONAL)
        seen++;
    (void) dat_srq_resize(srq, 32);
    (void) dat_srq_set_lw(srq, 4);
    memset(&iov, 0, sizeof iov);
    cookie.as_index = 7;
    (void) dat_srq_post_recv(srq, 1, &iov, cookie);
    (void) dat_ep_create_with_srq(ia, pz, evd, evd, evd, srq, NULL, &ep);
    (void) dat_srq_free(srq);

    comm.domain = AF_INET;
    comm.type = SOCK_STREAM;
    comm.protocol = 0;
    (void) dat_csp_create(ia, &comm, NULL, evd, &csp);
    (void) dat_csp_query(csp, DAT_CSP_FIELD_ALL, &csp_param);
    (void) dat_csp_free(csp);

    (void) dat_pz_query(pz, DAT_PZ_FIELD_ALL, &pz_param);
    context.as_ptr = &seen;
    (void) dat_set_consumer_context(pz, context);
    (void) dat_get_consumer_context(pz, &context);
    if (dat_get_handle_type(csp, &type) == DAT_SUCCESS && type == DAT_HANDLE_TYPE_CSP)
        seen++;
    return seen;
}

/* dat_ib_* extension macros over dat_extension_op. */
int compat_dat2_extensions(DAT_IA_HANDLE ia, DAT_EP_HANDLE ep, DAT_EVD_HANDLE evd, DAT_PZ_HANDLE pz)
{
    static DAT_UINT64 result;
    DAT_LMR_TRIPLET local;
    DAT_RMR_TRIPLET remote;
    DAT_DTO_COOKIE cookie;
    DAT_IB_ADDR_HANDLE ah;
    DAT_UINT64 counters[DCNT_IA_ALL_COUNTERS];
    DAT_IB_COLLECTIVE_MEMBER member = NULL;
    DAT_UINT32 member_size = 0;
    DAT_IB_COLLECTIVE_HANDLE group = DAT_HANDLE_NULL;
    DAT_UINT64 clock_value = 0;
    DAT_CONTEXT user_context;
    DAT_HANDLE query_ia = DAT_HANDLE_NULL;
    DAT_IA_ATTR ia_attr;
    DAT_PROVIDER_ATTR prov_attr;
    int sendbuf[4] = {1, 2, 3, 4};
    int recvbuf[16];
    DAT_COUNT sizes[4] = {4, 4, 4, 4};
    DAT_COUNT displs[4] = {0, 4, 8, 12};
    const char *text = NULL;
    DAT_RETURN ret;

    local.virtual_address = (DAT_VADDR) (uintptr_t) &result;
    local.segment_length = sizeof result;
    local.lmr_context = 1;
    remote.virtual_address = 0x1000;
    remote.segment_length = sizeof result;
    remote.rmr_context = 2;
    cookie.as_64 = 3;
    user_context.as_64 = 4 + clock_value;
    memset(&ah, 0, sizeof ah);

    ret = dat_ib_post_fetch_and_add(ep, 1, &local, cookie, &remote, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_post_cmp_and_swap(ep, 0, 1, &local, cookie, &remote, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_post_rdma_write_immed(ep, 1, &local, cookie, &remote, 42, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_post_send_ud(ep, 1, &local, &ah, cookie, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_post_recv_ud(ep, 1, &local, cookie, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_ud_cm_free(ep, user_context);
    ret |= dat_ib_ud_ah_free(ep, &ah);
    ret |= dat_ib_query_counters(ia, DCNT_IA_ALL_COUNTERS, counters, 0);
    ret |= dat_query_counters(ep, DCNT_EP_POST_SEND, counters, 1);
    ret |= dat_ib_print_counters(evd, DCNT_EVD_ALL_COUNTERS, 0);
    ret |= dat_print_counters(ia, DCNT_IA_PZ_CREATE, 0);
#ifndef OFED_HEADERS
    ret |= dat_ib_start_counter(ia, DCNT_IA_CM);
    ret |= dat_ib_stop_counter(ia, DCNT_IA_DIAG);
#endif
    ret |= dat_ib_open_query("ofa-v2-ib0", &query_ia, DAT_IA_FIELD_ALL, &ia_attr, DAT_PROVIDER_FIELD_ALL, &prov_attr);
    ret |= dat_ib_close_query(query_ia);
    ret |= dat_ib_collective_create_member(ia, NULL, &member, &member_size);
    ret |= dat_ib_collective_create_group(&member, 1, 0, 7, NULL, evd, pz, user_context);
#ifndef OFED_HEADERS
    ret |= dat_ib_collective_set_clock(group, clock_value, user_context);
    ret |= dat_ib_collective_read_clock(group, &clock_value);
#endif
    ret |= dat_ib_collective_scatter(group, sendbuf, 4, recvbuf, 4, 0, user_context, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_scatterv(group, sendbuf, sizes, displs, recvbuf, 4, 0, user_context,
                                      DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_gather(group, sendbuf, 4, recvbuf, 4, 0, user_context, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_gatherv(group, sendbuf, 4, recvbuf, sizes, displs, 0, user_context,
                                     DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_allgather(group, sendbuf, 4, recvbuf, 4, user_context, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_allgatherv(group, sendbuf, 4, recvbuf, sizes, displs, user_context,
                                        DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_alltoall(group, sendbuf, 4, recvbuf, 4, user_context, DAT_COMPLETION_DEFAULT_FLAG);
#ifndef OFED_HEADERS
    ret |= dat_ib_collective_alltoallv(group, sendbuf, sizes, displs, recvbuf, sizes, displs, user_context,
                                       DAT_COMPLETION_DEFAULT_FLAG);
#endif
    ret |= dat_ib_collective_reduce(group, sendbuf, 4, recvbuf, 4, DAT_IB_COLLECTIVE_REDUCE_OP_SUM,
                                    DAT_IB_COLLECTIVE_TYPE_INT32, 0, user_context, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_allreduce(group, sendbuf, 4, recvbuf, 4, DAT_IB_COLLECTIVE_REDUCE_OP_MAX,
                                       DAT_IB_COLLECTIVE_TYPE_INT32, user_context, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_reduce_scatter(group, sendbuf, 4, recvbuf, sizes, DAT_IB_COLLECTIVE_REDUCE_OP_MIN,
                                            DAT_IB_COLLECTIVE_TYPE_INT32, user_context,
                                            DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_scan(group, sendbuf, 4, recvbuf, 4, DAT_IB_COLLECTIVE_REDUCE_OP_PROD,
                                  DAT_IB_COLLECTIVE_TYPE_INT32, user_context, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_broadcast(group, sendbuf, 4, 0, user_context, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_barrier(group, user_context, DAT_COMPLETION_DEFAULT_FLAG);
    ret |= dat_ib_collective_free_group(group);
    ret |= dat_ib_collective_free_member(ia, member);
    ret |= dat_extension_op(ep, (DAT_EXTENDED_OP) DAT_IB_FETCH_AND_ADD_OP, (DAT_UINT64) 1, &local, cookie, &remote,
                            DAT_COMPLETION_DEFAULT_FLAG);

    (void) dat_strerror_extension((DAT_IB_RETURN) DAT_IB_ERR, &text);
    (void) dat_strerror_ext_status(DAT_IB_OP_ERR, &text);
    return (int) ret;
}

/* Provider side: registration, IA handle conversion, HA relationship. */
int compat_dat2_registry(const DAT_PROVIDER *provider, const DAT_PROVIDER_INFO *info)
{
    DAT_PROVIDER_INFO entries[4];
    DAT_PROVIDER_INFO *list[4] = {&entries[0], &entries[1], &entries[2], &entries[3]};
    DAT_COUNT returned = 0;
    DAT_IA_HANDLE ia = DAT_UL_TO_IA_HANDLE(1);
    DAT_IA_HANDLE provider_ia = DAT_HANDLE_NULL;
    DAT_HA_RELATIONSHIP related = DAT_HA_UNKNOWN;
    char name1[] = "ofa-v2-ib0";
    char name2[] = "ofa-v2-ib1";
    int seen = 0;

    (void) dat_registry_list_providers(4, &returned, list);
    (void) dat_registry_add_provider(provider, info);
    (void) dat_registry_remove_provider(provider, info);
#ifndef OFED_HEADERS
    if (dats_get_ia_handle(ia, &provider_ia) == DAT_SUCCESS && DAT_IA_HANDLE_TO_UL(provider_ia) != 1)
        seen++;
#else
    provider_ia = ia;
    seen += (int) DAT_IA_HANDLE_TO_UL(provider_ia);
#endif
    if (dat_registry_providers_related(name1, name2, &related) == DAT_SUCCESS && related == DAT_HA_TRUE)
        seen++;
    if (provider->handle_extendedop_func != NULL && provider->cno_trigger_func != NULL)
        seen++;
    return seen + (int) returned;
}
