//! Entry points for the fuzz targets (`fuzz/`, the `fuzzing` feature): the provider's own
//! decoding of what a peer sends, on given bytes. Bad bytes must come out as an error (a
//! malformed message, ring or table entry), never as a panic or an access outside the ring.

use super::cma::MAX_IOV;
use super::memtable::{self, Slot};
use super::qp::{self, Fault};
use super::ring::{Record, Segment};
use super::sys::{self, Mapping};
use super::wire::*;
use super::{ring, ud, xfer};

/// A datagram on a connection's socket (connect request, accept, reject, ready-to-use,
/// disconnect, doorbell) or a UD endpoint's, decoded as the provider decodes them. A message
/// that decodes is encoded again and must decode to the same message.
pub fn socket_message(data: &[u8]) {
    if let Ok(m) = decode(data) {
        let mut buf = [0u8; MAX_MSG];
        let n = encode(&m, &mut buf);
        let again = decode(&buf[..n]).expect("an encoded message decodes");
        assert_eq!(format!("{m:?}"), format!("{again:?}"), "a message changed on its way round");
    }
    if let Some((_, msg)) = ud::parse(data) {
        assert!(msg.len() + 8 == data.len());
    }
}

/// Most records one input is read as (a ring of small records is long).
const MAX_RECORDS: usize = 256;

thread_local! {
    /// One connection segment for every input (its rings are cleaned after each).
    static SEGMENT: Segment = {
        let fd = sys::memfd(ring::segment_len()).expect("a memfd for the fuzz segment");
        Segment::new(Mapping::map(&fd, ring::segment_len()).expect("its mapping"), true).expect("a segment")
    };
}

/// A ring the peer wrote: `data` laid into the request ring (or the response ring) from
/// position `at` on, wrapping at the ring's end, read from there as the provider reads its
/// peer's rings: record by record, each one's fixed part and iovec list taken as its kind says
/// (as the target and the initiator do), until the ring is empty or malformed.
pub fn ring_records(at: u64, response: bool, data: &[u8]) {
    SEGMENT.with(|seg| {
        let (ring, cap) = seg.ring_data(0, response);
        let data = &data[..data.len().min(cap as usize)];
        let start = (at & (cap - 1) & !7) as usize;
        let first = data.len().min(cap as usize - start);
        // SAFETY: both pieces lie inside the ring ([start, cap) and [0, rest)); nothing else
        // uses the segment meanwhile.
        let lay = |bytes: &[u8], zero: bool| unsafe {
            let (a, b) = bytes.split_at(first);
            for (off, piece) in [(start, a), (0, b)] {
                if zero {
                    std::ptr::write_bytes(ring.add(off), 0, piece.len());
                } else {
                    std::ptr::copy_nonoverlapping(piece.as_ptr(), ring.add(off), piece.len());
                }
            }
        };
        lay(data, false);
        let mut rx = seg.consumer_at(0, response, start as u64);
        for _ in 0..MAX_RECORDS {
            match rx.peek() {
                Ok(Some(rec)) => {
                    if take_record(&rec).is_err() {
                        break;
                    }
                    rx.consume(rec);
                }
                Ok(None) | Err(_) => break,
            }
        }
        lay(data, true);
    })
}

/// Reads a record's fixed part as the side that consumes it does.
fn take_record(rec: &Record) -> Result<(), Fault> {
    match rec.kind {
        R_SEND | R_WRITE | R_READ => {
            let hdr = OpHdr::read(&rec.fixed::<OP_HDR>()?);
            if rec.flags & F_INLINE == 0 {
                let mut iov = [(0u64, 0u64); MAX_IOV];
                let list = xfer::read_iovs(rec, hdr.niov, hdr.total_len, &mut iov)?;
                assert!(list.iter().map(|v| v.1).sum::<u64>() == hdr.total_len);
            }
        }
        R_ATOMIC => {
            let b = rec.fixed::<ATOMIC_REC>()?;
            let _ = (OpHdr::read(&b), atomic_swap(&b));
        }
        R_ACK => {
            let b = rec.fixed::<ACK_LEN>()?;
            let _ = qp::status_from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
        _ => {
            // SAFETY: the payload lies inside the ring until the record is consumed.
            let payload = unsafe { std::slice::from_raw_parts(rec.payload, rec.payload_len) };
            std::hint::black_box(payload.iter().fold(0u8, |a, b| a ^ b));
        }
    }
    Ok(())
}

thread_local! {
    /// A memory table as a peer publishes it (one slot written per input, cleared after).
    static TABLE: std::cell::RefCell<Vec<u64>> = std::cell::RefCell::new(vec![0u64; memtable::TABLE_BYTES / 8]);
}

/// Bytes of one table slot.
pub const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

/// A peer's memory table entry: `slot` written where `key` looks, then looked up as the
/// initiator looks up the peer's table before it copies, and the range (`addr`, `len`)
/// checked against what it found.
pub fn table_entry(key: u32, slot: &[u8; SLOT_BYTES], addr: u64, len: u64) {
    TABLE.with(|t| {
        let at = memtable::slot_of(key) as usize * SLOT_BYTES;
        let base = t.borrow_mut().as_mut_ptr() as *mut u8;
        // SAFETY: the slot lies inside the table; only this thread uses it, and the slots are
        // read below through atomics, which any bit pattern is valid for.
        unsafe { std::ptr::copy_nonoverlapping(slot.as_ptr(), base.add(at), SLOT_BYTES) };
        // SAFETY: the table is TABLE_BYTES long, 8-aligned, and lives for the thread.
        let slots = unsafe { memtable::peer_slots(base) };
        if let Some(e) = memtable::lookup_in(slots, key) {
            let inside = e.covers(addr, len);
            assert!(!inside || (addr >= e.addr && len <= e.len));
        }
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(base.add(at), 0, SLOT_BYTES) };
    })
}
