//! DAT 2.0 `dat_extension_op`: every IB extension operation code (and any other) called
//! through the variadic export with the arguments its `dat_ib_*` macro passes, their values
//! and pointers (NULL or to buffers of the right type and size, filled from the input) taken
//! from the input, on a NULL handle, a live IA, endpoint or protection zone of the shm
//! provider, or any other value. Every call must return a DAT code.
#![no_main]

use dat20::abi::*;
use dat20::ep::dat_ep_create;
use dat20::evd::dat_evd_create;
use dat20::extension::IbAddrHandle;
use dat20::ia::{dat_ia_close, dat_ia_openv, dat_ia_query};
use dat20::memory::dat_pz_create;
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

extern "C" {
    fn dat_extension_op(handle: DAT_HANDLE, op: DAT_EXTENDED_OP, ...) -> DAT_RETURN;
}

/// The input as a stream of values (zeros once it runs out).
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        let n = N.min(self.0.len());
        b[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        b
    }
    fn u8(&mut self) -> u8 {
        self.bytes::<1>()[0]
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.bytes())
    }
    fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.bytes())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.bytes())
    }
}

/// A live IA of the shm provider with a protection zone, an EVD and an endpoint.
#[derive(Clone, Copy)]
struct Objects {
    ia: DAT_IA_HANDLE,
    pz: DAT_PZ_HANDLE,
    ep: DAT_EP_HANDLE,
}

thread_local! {
    static OBJECTS: Cell<Option<Objects>> = const { Cell::new(None) };
}

fn open_objects() -> Objects {
    let (mut ia, mut async_evd, mut pz, mut evd, mut ep) = (null_mut(), null_mut(), null_mut(), null_mut(), null_mut());
    let mut name = *b"shm\0";
    // SAFETY: valid name and out-pointers; the handles just made.
    unsafe {
        assert_eq!(dat_ia_openv(name.as_mut_ptr().cast(), 8, &mut async_evd, &mut ia, 2, 0, DAT_FALSE), DAT_SUCCESS);
        assert_eq!(dat_pz_create(ia, &mut pz), DAT_SUCCESS);
        let flags = DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG;
        assert_eq!(dat_evd_create(ia, 16, null_mut(), flags, &mut evd), DAT_SUCCESS);
        assert_eq!(dat_ep_create(ia, pz, evd, evd, evd, null(), &mut ep), DAT_SUCCESS);
    }
    Objects { ia, pz, ep }
}

/// The live objects, made again when an operation closed the IA.
fn objects() -> Objects {
    OBJECTS.with(|o| {
        let live = o.get().filter(|x| {
            // SAFETY: a query with no outputs asked.
            unsafe { dat_ia_query(x.ia, null_mut(), 0, null_mut(), 0, null_mut()) == DAT_SUCCESS }
        });
        let x = live.unwrap_or_else(open_objects);
        o.set(Some(x));
        x
    })
}

/// Buffers the pointer arguments point into.
struct Buffers {
    lmr: [DAT_LMR_TRIPLET; 4],
    rmr: DAT_RMR_TRIPLET,
    ah: IbAddrHandle,
    counters: [u64; 256],
    name: [u8; 16],
    ia_out: DAT_HANDLE,
    ia_attr: DAT_IA_ATTR,
    provider_attr: DAT_PROVIDER_ATTR,
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    std::env::set_var("DAT_OVERRIDE", "/dev/null");
    let mut i = Input(data);
    let x = objects();
    let handle: DAT_HANDLE = match i.u8() % 5 {
        0 => null_mut(),
        1 => x.ia,
        2 => x.ep,
        3 => x.pz,
        _ => i.u64() as usize as DAT_HANDLE,
    };
    let op = match i.u8() {
        b @ 0..=0x1d => b as i32,
        0x1e => DAT_IB_OPEN_QUERY_OP as i32,
        0x1f => DAT_IB_CLOSE_QUERY_OP as i32,
        _ => i.i32(),
    };
    // SAFETY: every field is an integer or a pointer, for which zero is valid.
    let mut b: Buffers = unsafe { std::mem::zeroed() };
    for t in &mut b.lmr {
        *t = DAT_LMR_TRIPLET { virtual_address: i.u64(), segment_length: i.u32(), lmr_context: i.u32() };
    }
    b.rmr = DAT_RMR_TRIPLET { virtual_address: i.u64(), segment_length: i.u32(), rmr_context: i.u32() };
    b.ah.ah = i.u64() as usize as *const c_void;
    b.ah.qpn = i.u32();
    b.name = i.bytes();
    b.name[15] = 0;
    let null_mask = i.u8();
    let or_null = |bit: u8, p: *mut c_void| if null_mask & 1 << bit != 0 { null_mut() } else { p };
    // A segment count that the local triplet buffer holds, or one that is not positive.
    let count = match i.u8() {
        c @ 0..=4 => c as i32,
        _ => -(i.i32() & i32::MAX),
    };
    let local = or_null(0, b.lmr.as_mut_ptr().cast()) as *const DAT_LMR_TRIPLET;
    let remote = or_null(1, (&mut b.rmr as *mut DAT_RMR_TRIPLET).cast()) as *const DAT_RMR_TRIPLET;
    let ah = or_null(2, (&mut b.ah as *mut IbAddrHandle).cast()) as *const IbAddrHandle;
    let (v1, v2, cookie, flags, immed, counter, reset) =
        (i.u64(), i.u64(), i.u64(), i.u32(), i.u32(), i.i32(), i.i32());
    let counter = if counter & 0x100 != 0 { counter } else { counter & 0x7f };
    let counters = or_null(3, b.counters.as_mut_ptr().cast()) as *mut u64;
    let name = or_null(4, b.name.as_mut_ptr().cast()) as *const u8;
    let ia_out = or_null(5, (&mut b.ia_out as *mut DAT_HANDLE).cast()) as *mut DAT_HANDLE;
    let ia_attr = or_null(6, (&mut b.ia_attr as *mut DAT_IA_ATTR).cast()) as *mut DAT_IA_ATTR;
    let provider_attr = or_null(7, (&mut b.provider_attr as *mut DAT_PROVIDER_ATTR).cast()) as *mut DAT_PROVIDER_ATTR;
    let (ia_mask, provider_mask) = (i.u64(), i.u64());
    let h = handle;
    // SAFETY: each operation gets the arguments its macro passes, pointers NULL or to buffers
    // of the right type (the local triplets: at least `count` when count is positive).
    let r = unsafe {
        match op as u32 {
            DAT_IB_FETCH_AND_ADD_OP => dat_extension_op(h, op, v1, local, cookie, remote, flags),
            DAT_IB_CMP_AND_SWAP_OP => dat_extension_op(h, op, v1, v2, local, cookie, remote, flags),
            DAT_IB_RDMA_WRITE_IMMED_OP => dat_extension_op(h, op, count, local, cookie, remote, immed, flags),
            DAT_IB_UD_SEND_OP => dat_extension_op(h, op, count, local, ah, cookie, flags),
            DAT_IB_QUERY_COUNTERS_OP => dat_extension_op(h, op, counter, counters, reset),
            // Print writes to stdout: reset only, so runs stay quiet.
            DAT_IB_PRINT_COUNTERS_OP => 0,
            DAT_IB_START_COUNTERS_OP | DAT_IB_STOP_COUNTERS_OP => dat_extension_op(h, op, counter),
            DAT_IB_UD_CM_FREE_OP => dat_extension_op(h, op, cookie),
            DAT_IB_UD_AH_FREE_OP => dat_extension_op(h, op, ah),
            DAT_IB_OPEN_QUERY_OP => {
                dat_extension_op(h, op, name, ia_out, ia_mask, ia_attr, provider_mask, provider_attr)
            }
            _ => dat_extension_op(h, op),
        }
    };
    if op as u32 == DAT_IB_OPEN_QUERY_OP && r == DAT_SUCCESS && !ia_out.is_null() {
        // SAFETY: the IA the operation opened.
        unsafe { dat_ia_close(*ia_out, DAT_CLOSE_ABRUPT_FLAG) };
    }
    assert!(r == DAT_SUCCESS || r & 0xc000_0000 != 0, "dat_extension_op returned {r:#x}, no DAT code");
});
