/* Prints the sizes and offsets the ofi provider's hand-written binding (sys.rs) relies on, from
 * libfabric's own headers (libfabric-dev), one "name value" line each, in the order sys.rs's
 * unit test lists its own. */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <stddef.h>
#include <stdio.h>

#define S(t) printf("%s %zu\n", #t, sizeof(struct t))
#define O(t, m) printf("%s.%s %zu\n", #t, #m, offsetof(struct t, m))

int main(void)
{
    S(fi_info);
    O(fi_info, domain_attr);
    O(fi_info, nic);
    S(fi_tx_attr);
    S(fi_rx_attr);
    S(fi_ep_attr);
    S(fi_domain_attr);
    O(fi_domain_attr, mr_mode);
    O(fi_domain_attr, mr_cnt);
    S(fi_fabric_attr);
    S(fid);
    O(fi_ops, control);
    O(fi_ops_fabric, trywait);
    O(fid_fabric, ops);
    O(fi_ops_domain, endpoint);
    O(fi_ops_domain, cntr_open);
    S(fi_cntr_attr);
    O(fid_cntr, ops);
    S(fi_av_attr);
    O(fi_ops_av, remove);
    O(fid_av, ops);
    printf("FI_ADDR_STR %d\n", (int)FI_ADDR_STR);
    O(fid_domain, mr);
    O(fid_mr, key);
    S(fi_eq_attr);
    S(fi_eq_err_entry);
    S(fi_eq_cm_entry);
    O(fi_ops_eq, strerror);
    S(fi_cq_data_entry);
    S(fi_cq_err_entry);
    O(fi_cq_err_entry, err);
    S(fi_cq_attr);
    O(fi_ops_cq, readerr);
    O(fi_ops_cq, strerror);
    O(fi_ops_cm, shutdown);
    S(fi_msg);
    O(fi_ops_msg, sendmsg);
    S(fi_rma_iov);
    S(fi_msg_rma);
    O(fi_ops_rma, writemsg);
    O(fi_ops_ep, cancel);
    O(fid_ep, ops);
    O(fid_ep, msg);
    O(fid_ep, rma);
    O(fid_pep, cm);
    return 0;
}
