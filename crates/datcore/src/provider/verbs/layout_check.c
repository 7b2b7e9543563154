#include <stdio.h>
#include <stddef.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#define O(t,f) printf("%s.%s off=%zu\n", #t, #f, offsetof(struct t, f))
#define S(t) printf("sizeof %s = %zu\n", #t, sizeof(struct t))
int main(){
S(ibv_context); O(ibv_context,device); O(ibv_context,ops); 
printf("ops.alloc_mw %zu bind_mw %zu dealloc_mw %zu poll_cq %zu req_notify %zu post_srq_recv %zu post_send %zu post_recv %zu\n",
 offsetof(struct ibv_context_ops, alloc_mw), offsetof(struct ibv_context_ops, bind_mw), offsetof(struct ibv_context_ops, dealloc_mw),
 offsetof(struct ibv_context_ops, poll_cq), offsetof(struct ibv_context_ops, req_notify_cq), offsetof(struct ibv_context_ops, post_srq_recv),
 offsetof(struct ibv_context_ops, post_send), offsetof(struct ibv_context_ops, post_recv));
S(ibv_device); O(ibv_device,node_type); O(ibv_device,transport_type); O(ibv_device,name);
S(ibv_wc); O(ibv_wc,wr_id);O(ibv_wc,status);O(ibv_wc,opcode);O(ibv_wc,vendor_err);O(ibv_wc,byte_len);O(ibv_wc,imm_data);O(ibv_wc,qp_num);O(ibv_wc,src_qp);O(ibv_wc,wc_flags);O(ibv_wc,pkey_index);O(ibv_wc,slid);O(ibv_wc,sl);O(ibv_wc,dlid_path_bits);
S(ibv_sge); S(ibv_send_wr); O(ibv_send_wr,wr_id);O(ibv_send_wr,next);O(ibv_send_wr,sg_list);O(ibv_send_wr,num_sge);O(ibv_send_wr,opcode);O(ibv_send_wr,send_flags);O(ibv_send_wr,imm_data);O(ibv_send_wr,wr);O(ibv_send_wr,qp_type);O(ibv_send_wr,bind_mw);
S(ibv_recv_wr); S(ibv_mw_bind); O(ibv_mw_bind,wr_id);O(ibv_mw_bind,send_flags);O(ibv_mw_bind,bind_info);
S(ibv_mw_bind_info); O(ibv_mw_bind_info,mr);O(ibv_mw_bind_info,addr);O(ibv_mw_bind_info,length);O(ibv_mw_bind_info,mw_access_flags);
S(ibv_mw); O(ibv_mw,rkey); O(ibv_mw,type);
S(ibv_mr); O(ibv_mr,addr);O(ibv_mr,length);O(ibv_mr,lkey);O(ibv_mr,rkey);
S(ibv_qp); O(ibv_qp,qp_num); O(ibv_qp,state); O(ibv_qp,qp_type); O(ibv_qp,srq);
S(ibv_cq); O(ibv_cq,cq_context); O(ibv_cq,cqe);
S(ibv_srq); S(ibv_srq_attr); S(ibv_srq_init_attr);
S(ibv_qp_init_attr); O(ibv_qp_init_attr,send_cq);O(ibv_qp_init_attr,recv_cq);O(ibv_qp_init_attr,srq);O(ibv_qp_init_attr,cap);O(ibv_qp_init_attr,qp_type);O(ibv_qp_init_attr,sq_sig_all);
S(ibv_qp_cap);
S(ibv_qp_attr); O(ibv_qp_attr,qp_state); O(ibv_qp_attr,cap);
S(ibv_device_attr); O(ibv_device_attr,fw_ver);O(ibv_device_attr,node_guid);O(ibv_device_attr,max_mr_size);O(ibv_device_attr,page_size_cap);O(ibv_device_attr,vendor_id);O(ibv_device_attr,vendor_part_id);O(ibv_device_attr,hw_ver);O(ibv_device_attr,max_qp);O(ibv_device_attr,max_qp_wr);O(ibv_device_attr,device_cap_flags);O(ibv_device_attr,max_sge);O(ibv_device_attr,max_cq);O(ibv_device_attr,max_cqe);O(ibv_device_attr,max_mr);O(ibv_device_attr,max_pd);O(ibv_device_attr,max_qp_rd_atom);O(ibv_device_attr,max_qp_init_rd_atom);O(ibv_device_attr,max_mw);O(ibv_device_attr,max_srq);O(ibv_device_attr,max_srq_wr);O(ibv_device_attr,max_srq_sge);O(ibv_device_attr,phys_port_cnt);
S(ibv_port_attr); O(ibv_port_attr,state);O(ibv_port_attr,max_mtu);O(ibv_port_attr,active_mtu);O(ibv_port_attr,link_layer);O(ibv_port_attr,max_msg_sz);
S(ibv_async_event);
S(rdma_cm_id); O(rdma_cm_id,verbs);O(rdma_cm_id,channel);O(rdma_cm_id,context);O(rdma_cm_id,qp);O(rdma_cm_id,route);O(rdma_cm_id,ps);O(rdma_cm_id,port_num);O(rdma_cm_id,event);O(rdma_cm_id,pd);O(rdma_cm_id,qp_type);
S(rdma_route); O(rdma_route,addr); S(rdma_addr); 
printf("addr.src %zu dst %zu\n", offsetof(struct rdma_addr, src_addr), offsetof(struct rdma_addr, dst_addr));
S(rdma_cm_event); O(rdma_cm_event,id);O(rdma_cm_event,listen_id);O(rdma_cm_event,event);O(rdma_cm_event,status);O(rdma_cm_event,param);
S(rdma_conn_param); O(rdma_conn_param,private_data);O(rdma_conn_param,private_data_len);O(rdma_conn_param,responder_resources);O(rdma_conn_param,initiator_depth);O(rdma_conn_param,flow_control);O(rdma_conn_param,retry_count);O(rdma_conn_param,rnr_retry_count);O(rdma_conn_param,srq);O(rdma_conn_param,qp_num);
S(rdma_event_channel);
printf("IBV_WR_SEND=%d RDMA_WRITE=%d RDMA_READ=%d BIND_MW=%d; SIGNALED=%d SOLICITED=%d FENCE=%d INLINE=%d\n", IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_BIND_MW, IBV_SEND_SIGNALED, IBV_SEND_SOLICITED, IBV_SEND_FENCE, IBV_SEND_INLINE);
printf("WC: SEND %d RW %d RR %d BIND %d RECV %d; status LOC_LEN %d LOC_QP_OP %d LOC_PROT %d WR_FLUSH %d MW_BIND %d BAD_RESP %d LOC_ACCESS %d REM_INV_REQ %d REM_ACCESS %d REM_OP %d RETRY_EXC %d RNR_RETRY %d\n",
 IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_BIND_MW, IBV_WC_RECV, IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_PROT_ERR, IBV_WC_WR_FLUSH_ERR, IBV_WC_MW_BIND_ERR, IBV_WC_BAD_RESP_ERR, IBV_WC_LOC_ACCESS_ERR, IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_OP_ERR, IBV_WC_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
printf("ACCESS LW %d RW %d RR %d MW_BIND %d ZB %d; QPS ERR %d; QP_STATE mask %d; SRQ_LIMIT %d SRQ_MAX_WR %d\n", IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_READ, IBV_ACCESS_MW_BIND, IBV_ACCESS_ZERO_BASED, IBV_QPS_ERR, IBV_QP_STATE, IBV_SRQ_LIMIT, IBV_SRQ_MAX_WR);
printf("CM events: ADDR_RES %d ADDR_ERR %d ROUTE_RES %d ROUTE_ERR %d CONN_REQ %d CONN_RESP %d CONN_ERR %d UNREACH %d REJ %d EST %d DISC %d DEVREM %d MC_JOIN %d MC_ERR %d ADDR_CH %d TW_EXIT %d\n", RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ADDR_ERROR, RDMA_CM_EVENT_ROUTE_RESOLVED, RDMA_CM_EVENT_ROUTE_ERROR, RDMA_CM_EVENT_CONNECT_REQUEST, RDMA_CM_EVENT_CONNECT_RESPONSE, RDMA_CM_EVENT_CONNECT_ERROR, RDMA_CM_EVENT_UNREACHABLE, RDMA_CM_EVENT_REJECTED, RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_DISCONNECTED, RDMA_CM_EVENT_DEVICE_REMOVAL, RDMA_CM_EVENT_MULTICAST_JOIN, RDMA_CM_EVENT_MULTICAST_ERROR, RDMA_CM_EVENT_ADDR_CHANGE, RDMA_CM_EVENT_TIMEWAIT_EXIT);
printf("RDMA_PS_TCP %d IBV_QPT_RC %d IBV_MW_TYPE_1 %d TYPE_2 %d DEVCAP MEM_WINDOW %d TYPE_2A %d TYPE_2B %d; ASYNC: QP_FATAL %d CQ_ERR %d SRQ_LIMIT %d DEV_FATAL %d\n", RDMA_PS_TCP, IBV_QPT_RC, IBV_MW_TYPE_1, IBV_MW_TYPE_2, IBV_DEVICE_MEM_WINDOW, IBV_DEVICE_MEM_WINDOW_TYPE_2A, IBV_DEVICE_MEM_WINDOW_TYPE_2B, IBV_EVENT_QP_FATAL, IBV_EVENT_CQ_ERR, IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_DEVICE_FATAL);
}
