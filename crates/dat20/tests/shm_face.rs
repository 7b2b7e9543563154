//! The DAT 2.0 face over shm, called as a C consumer calls it: two IAs of this process opened
//! for DAT 2.0, an EP connected between them, send/recv and RDMA write/read with 16-byte
//! triplets, events as DAT 2.0 lays them out (operation, 32-bit length), and return codes in
//! DAT 2.0 numbering.

use dat20::abi::*;
use dat20::cm::*;
use dat20::ep::*;
use dat20::evd::*;
use dat20::face_specific::*;
use dat20::ia::*;
use dat20::memory::*;
use dat20::srq::*;
use std::ffi::CStr;
use std::ptr::{null, null_mut};

const WAIT_US: DAT_TIMEOUT = 10_000_000;
const LEN: usize = 8192;

fn err(ty: DAT_RETURN, sub: DAT_RETURN) -> DAT_RETURN {
    DAT_CLASS_ERROR | ty | sub
}

fn ok(r: DAT_RETURN, what: &str) {
    assert_eq!(r, DAT_SUCCESS, "{what}: {r:#010x}");
}

struct Side {
    ia: DAT_IA_HANDLE,
    pz: DAT_PZ_HANDLE,
    req_evd: DAT_EVD_HANDLE,
    recv_evd: DAT_EVD_HANDLE,
    conn_evd: DAT_EVD_HANDLE,
    cr_evd: DAT_EVD_HANDLE,
    ep: DAT_EP_HANDLE,
    lmr: DAT_LMR_HANDLE,
    lmr_context: DAT_LMR_CONTEXT,
    rmr_context: DAT_RMR_CONTEXT,
    buf: Vec<u8>,
}

fn open_ia(major: u32, minor: u32) -> Result<DAT_IA_HANDLE, DAT_RETURN> {
    let mut ia = null_mut();
    let mut async_evd = null_mut();
    let mut name = *b"shm\0";
    // SAFETY: valid name and out-pointers.
    let r = unsafe { dat_ia_openv(name.as_mut_ptr().cast(), 8, &mut async_evd, &mut ia, major, minor, DAT_FALSE) };
    if r == DAT_SUCCESS {
        Ok(ia)
    } else {
        Err(r)
    }
}

fn evd(ia: DAT_IA_HANDLE, flags: DAT_EVD_FLAGS) -> DAT_EVD_HANDLE {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { dat_evd_create(ia, 16, null_mut(), flags, &mut e) }, "dat_evd_create");
    e
}

impl Side {
    fn open() -> Side {
        let ia = open_ia(2, 0).expect("dat_ia_openv(shm, 2, 0)");
        let mut pz = null_mut();
        // SAFETY: valid out-pointer.
        ok(unsafe { dat_pz_create(ia, &mut pz) }, "dat_pz_create");
        let (req_evd, recv_evd) = (evd(ia, DAT_EVD_DTO_FLAG), evd(ia, DAT_EVD_DTO_FLAG));
        let (conn_evd, cr_evd) = (evd(ia, DAT_EVD_CONNECTION_FLAG), evd(ia, DAT_EVD_CR_FLAG));
        let mut ep = null_mut();
        // SAFETY: valid handles; NULL attributes are the defaults.
        ok(unsafe { dat_ep_create(ia, pz, recv_evd, req_evd, conn_evd, null(), &mut ep) }, "dat_ep_create");
        let mut buf = vec![0u8; LEN];
        let (mut lmr, mut lmr_context, mut rmr_context, mut reg_len, mut reg_addr) = (null_mut(), 0, 0, 0, 0);
        let region = DAT_REGION_DESCRIPTION { for_va: buf.as_mut_ptr().cast() };
        // SAFETY: the buffer outlives the LMR (freed in close).
        let r = unsafe {
            dat_lmr_create(
                ia,
                DAT_MEM_TYPE_VIRTUAL,
                region,
                LEN as DAT_VLEN,
                pz,
                DAT_MEM_PRIV_ALL_FLAG,
                DAT_VA_TYPE_VA,
                &mut lmr,
                &mut lmr_context,
                &mut rmr_context,
                &mut reg_len,
                &mut reg_addr,
            )
        };
        ok(r, "dat_lmr_create");
        Side { ia, pz, req_evd, recv_evd, conn_evd, cr_evd, ep, lmr, lmr_context, rmr_context, buf }
    }

    fn iov(&mut self, off: usize, len: usize) -> DAT_LMR_TRIPLET {
        DAT_LMR_TRIPLET {
            virtual_address: self.buf[off..].as_mut_ptr() as DAT_VADDR,
            segment_length: len as DAT_SEG_LENGTH,
            lmr_context: self.lmr_context,
        }
    }

    fn close(self) {
        // SAFETY: our own live handles, each freed once.
        unsafe {
            ok(dat_ep_free(self.ep), "dat_ep_free");
            ok(dat_lmr_free(self.lmr), "dat_lmr_free");
            for e in [self.req_evd, self.recv_evd, self.conn_evd, self.cr_evd] {
                ok(dat_evd_free(e), "dat_evd_free");
            }
            ok(dat_pz_free(self.pz), "dat_pz_free");
            ok(dat_ia_close(self.ia, DAT_CLOSE_GRACEFUL_FLAG), "dat_ia_close");
        }
    }
}

fn wait(evd: DAT_EVD_HANDLE, number: DAT_EVENT_NUMBER) -> DAT_EVENT {
    // SAFETY: DAT_EVENT is plain data.
    let mut ev: DAT_EVENT = unsafe { std::mem::zeroed() };
    let mut more = 0;
    // SAFETY: valid out-pointers.
    ok(unsafe { dat_evd_wait(evd, WAIT_US, 1, &mut ev, &mut more) }, "dat_evd_wait");
    assert_eq!(ev.event_number, number, "event number");
    ev
}

/// A DTO completion: (status, operation, length).
fn dto(evd: DAT_EVD_HANDLE) -> (DAT_DTO_COMPLETION_STATUS, DAT_DTOS, DAT_SEG_LENGTH) {
    let ev = wait(evd, DAT_DTO_COMPLETION_EVENT);
    // SAFETY: a DTO completion event's data is the DTO member.
    let d = unsafe { ev.event_data.dto_completion_event_data };
    (d.status, d.operation, d.transfered_length)
}

fn cookie(v: u64) -> DAT_DTO_COOKIE {
    DAT_CONTEXT { as_64: v }
}

#[test]
fn dat20_over_shm() {
    // DAT 2.0 is asked for and answered; DAT 1.2 (libdat.so.1's) and others are not.
    for (major, minor) in [(1, 2), (3, 0)] {
        assert_eq!(open_ia(major, minor).unwrap_err(), err(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED));
    }
    assert_eq!(DAT_NAME_NOT_REGISTERED, 0x64, "DAT 2.0 numbering");
    let mut server = Side::open();
    let mut client = Side::open();

    // SAFETY: DAT_IA_ATTR / DAT_PROVIDER_ATTR are plain data.
    let (mut ia_attr, mut p_attr): (DAT_IA_ATTR, DAT_PROVIDER_ATTR) = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointers.
    let r = unsafe {
        dat_ia_query(server.ia, null_mut(), DAT_IA_FIELD_ALL, &mut ia_attr, DAT_PROVIDER_FIELD_ALL, &mut p_attr)
    };
    ok(r, "dat_ia_query");
    assert_eq!((p_attr.dapl_version_major, p_attr.dapl_version_minor), (2, 0));
    // shm carries out the IB extensions (immediate data, atomics) and says so.
    assert_eq!((ia_attr.extension_supported, ia_attr.zb_supported), (DAT_EXTENSION_IB, DAT_FALSE));
    assert_eq!(ia_attr.extension_version, 209);
    // SAFETY: the provider hands out num_provider_specific_attr entries of static C strings.
    let named: Vec<(String, String)> = unsafe {
        std::slice::from_raw_parts(p_attr.provider_specific_attr, p_attr.num_provider_specific_attr as usize)
            .iter()
            .map(|a| {
                let s = |p| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
                (s(a.name), s(a.value))
            })
            .collect()
    };
    // what dtest and dtestsrq read: RDMA read offered, the transport MTU (shm: 4096)
    assert!(named.contains(&("DAT_IB_RDMA_READ".to_string(), "TRUE".to_string())), "{named:?}");
    assert!(named.contains(&("DAT_IB_TRANSPORT_MTU".to_string(), "4096".to_string())), "{named:?}");
    for name in ["DAT_EXTENSION_INTERFACE", "DAT_IB_FETCH_AND_ADD", "DAT_IB_CMP_AND_SWAP", "DAT_IB_IMMED_DATA"] {
        assert!(named.contains(&(name.to_string(), "TRUE".to_string())), "{name} in {named:?}");
    }

    // Return codes in DAT 2.0 numbering.
    // SAFETY: bad handles are what is tested; out-pointers are valid.
    unsafe {
        let mut t = client.iov(0, 8);
        assert_eq!(
            dat_ep_post_send(null_mut(), 1, &mut t, cookie(0), 0),
            err(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP)
        );
        assert_eq!(dat_pz_free(server.pz), err(DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE));
        assert_eq!(DAT_INVALID_STATE_PZ_IN_USE, 0x53, "DAT 2.0 numbering");
        let mut h = null_mut();
        assert_eq!(
            dat_ep_create(server.ia, server.pz, null_mut(), null_mut(), null_mut(), null(), null_mut()),
            err(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7)
        );
        assert_eq!(dats_get_ia_handle(null_mut(), &mut h), err(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA));
        ok(dats_get_ia_handle(server.ia, &mut h), "dats_get_ia_handle");
        assert_eq!(h, server.ia);
        let (mut major, mut minor) = (null(), null());
        ok(dat_strerror(err(DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE), &mut major, &mut minor), "dat_strerror");
        assert_eq!(CStr::from_ptr(minor).to_str().unwrap(), "DAT_INVALID_STATE_PZ_IN_USE");
        // an SRQ reports DAT 2.0's OPERATIONAL (1)
        let mut attr = DAT_SRQ_ATTR { max_recv_dtos: 4, max_recv_iov: 1, low_watermark: 0 };
        let mut srq = null_mut();
        ok(dat_srq_create(server.ia, server.pz, &mut attr, &mut srq), "dat_srq_create");
        let mut param: DAT_SRQ_PARAM = std::mem::zeroed();
        ok(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &mut param), "dat_srq_query");
        assert_eq!(param.srq_state, DAT_SRQ_STATE_OPERATIONAL);
        assert_eq!(DAT_SRQ_STATE_OPERATIONAL, 1, "DAT 2.0 value");
        ok(dat_srq_free(srq), "dat_srq_free");
    }

    // Connect the client's EP to the server's.
    let qual: DAT_CONN_QUAL = 40_000 + (std::process::id() % 20_000) as u64;
    let mut psp = null_mut();
    // SAFETY: valid handles and out-pointers; the address outlives the connect.
    unsafe {
        ok(dat_psp_create(server.ia, qual, server.cr_evd, DAT_PSP_CONSUMER_FLAG, &mut psp), "dat_psp_create");
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
        let r = dat_ep_connect(
            client.ep,
            (&mut addr as *mut libc::sockaddr_in).cast(),
            qual,
            WAIT_US,
            0,
            null_mut(),
            DAT_QOS_BEST_EFFORT,
            DAT_CONNECT_DEFAULT_FLAG,
        );
        ok(r, "dat_ep_connect");
        let ev = wait(server.cr_evd, DAT_CONNECTION_REQUEST_EVENT);
        let arrival = ev.event_data.cr_arrival_event_data;
        assert_eq!((arrival.conn_qual, arrival.truncate_flag), (qual, DAT_FALSE));
        let mut t = server.iov(0, 64);
        ok(dat_ep_post_recv(server.ep, 1, &mut t, cookie(1), 0), "dat_ep_post_recv");
        ok(dat_cr_accept(arrival.cr_handle, server.ep, 0, null_mut()), "dat_cr_accept");
    }
    wait(server.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED);
    wait(client.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED);

    // Send/recv: the completions say what they were.
    client.buf[..32].copy_from_slice(&[0x5a; 32]);
    let mut t = client.iov(0, 32);
    // SAFETY: the triplet covers the client's registered buffer.
    ok(unsafe { dat_ep_post_send(client.ep, 1, &mut t, cookie(2), 0) }, "dat_ep_post_send");
    assert_eq!(dto(client.req_evd), (DAT_DTO_SUCCESS, DAT_DTO_SEND, 32));
    assert_eq!(dto(server.recv_evd), (DAT_DTO_SUCCESS, DAT_DTO_RECEIVE, 32));
    assert_eq!(&server.buf[..32], &[0x5a; 32]);

    // RDMA write into the server's second half, then read it back.
    let remote = DAT_RMR_TRIPLET {
        virtual_address: server.buf[LEN / 2..].as_ptr() as DAT_VADDR,
        segment_length: (LEN / 2) as DAT_SEG_LENGTH,
        rmr_context: server.rmr_context,
    };
    for (i, b) in client.buf[LEN / 2..].iter_mut().enumerate() {
        *b = (i * 13 + 1) as u8;
    }
    let mut t = client.iov(LEN / 2, LEN / 2);
    // SAFETY: local and remote triplets cover registered memory.
    ok(unsafe { dat_ep_post_rdma_write(client.ep, 1, &mut t, cookie(3), &remote, 0) }, "rdma write");
    assert_eq!(dto(client.req_evd), (DAT_DTO_SUCCESS, DAT_DTO_RDMA_WRITE, (LEN / 2) as u32));
    assert_eq!(&server.buf[LEN / 2..], &client.buf[LEN / 2..]);
    let expect = client.buf[LEN / 2..].to_vec();
    client.buf[LEN / 2..].fill(0);
    let mut t = client.iov(LEN / 2, LEN / 2);
    // SAFETY: as above.
    ok(unsafe { dat_ep_post_rdma_read(client.ep, 1, &mut t, cookie(4), &remote, 0) }, "rdma read");
    assert_eq!(dto(client.req_evd), (DAT_DTO_SUCCESS, DAT_DTO_RDMA_READ, (LEN / 2) as u32));
    assert_eq!(client.buf[LEN / 2..], expect[..]);

    // SAFETY: live handles.
    unsafe {
        ok(dat_ep_disconnect(client.ep, DAT_CLOSE_GRACEFUL_FLAG), "dat_ep_disconnect");
        ok(dat_psp_free(psp), "dat_psp_free");
    }
    wait(client.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED);
    wait(server.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED);
    client.close();
    server.close();
}
