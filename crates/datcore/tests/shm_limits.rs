//! The shm device's limits are the ones it enforces: creating up to each reported maximum
//! succeeds, the next create is refused with DAT_INSUFFICIENT_RESOURCES, and freeing one
//! gives its place back. The limits are per process, so this binary holds this one test.

mod shm_common;

use datcore::codes::*;
use datcore::provider::*;
use datcore::DatResult;
use shm_common::*;
use std::sync::Arc;

/// Creates with `make` until it fails: the objects made, and the error that ended it.
fn fill<T>(limit: u32, mut make: impl FnMut() -> DatResult<T>) -> (Vec<T>, datcore::DatError) {
    let mut made = Vec::new();
    // Past the limit by a margin, so that a limit not enforced shows as too many made.
    for _ in 0..=limit as usize + 16 {
        match make() {
            Ok(o) => made.push(o),
            Err(e) => return (made, e),
        }
    }
    panic!("{} made, the reported limit is {limit}", made.len());
}

fn refused_at_limit<T>(what: &str, limit: u32, mut make: impl FnMut() -> DatResult<T>) {
    let (mut made, err) = fill(limit, &mut make);
    assert_eq!(made.len(), limit as usize, "{what}: made before the first refusal");
    assert_eq!(err.ty(), DAT_INSUFFICIENT_RESOURCES, "{what}: refusal {err:?}");
    made.pop();
    assert!(make().is_ok(), "{what}: a freed one's place is given back");
}

#[test]
fn each_reported_limit_is_enforced() {
    let dev = open();
    let attr = dev.attr().clone();
    let pd = dev.alloc_pd().unwrap();
    let cq = Cq::new(&dev);

    refused_at_limit("protection domains", attr.max_pd - 1, || dev.alloc_pd());
    refused_at_limit("completion queues", attr.max_cq - 1, || dev.create_cq(1, cq.w.clone()));

    let qp = || {
        dev.create_qp(QpInit {
            pd: pd.clone(),
            send_cq: Some(cq.cq.clone()),
            recv_cq: Some(cq.cq.clone()),
            srq: None,
            caps: QpCaps { max_send_wr: 256, max_recv_wr: 256, max_send_sge: 8, max_recv_sge: 8, ..QpCaps::default() },
            context: CONTEXT,
            events: Arc::new(ConnQ(Q::new(), Q::new())),
            datagram: false,
        })
    };
    refused_at_limit("queue pairs", attr.max_qp, qp);

    let page = vec![0u8; 4096];
    let addr = page.as_ptr() as u64;
    refused_at_limit("memory regions", attr.max_mr, || pd.reg_mr(addr, 4096, ALL));
    refused_at_limit("memory windows", attr.max_mw, || pd.alloc_mw());
    refused_at_limit("shared receive queues", attr.max_srq, || pd.create_srq(16, 1));
}
