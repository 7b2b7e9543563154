//! Single-producer single-consumer byte rings in a shared segment, and the segment layout.
//!
//! A record is an 8-byte header `{len: u32, kind: u16, flags: u16}` followed by its payload,
//! padded to 8 bytes. Records never wrap: a producer that does not fit before the end writes a
//! pad record there. Each side keeps its own index in private memory, starting at 0 (a
//! segment the peer made is refused unless every index in it is 0), and only *reads* the
//! other's index from the segment, validating it; record headers are validated as well. So a
//! misbehaving peer can at worst make a ring look malformed (which breaks that connection) but
//! never make us read or write outside the ring, nor loop.
//!
//! The header itself says a record is there, so a consumer touches one cache line per small
//! record (not the producer's tail index and then the record). Invariant: **the header word at
//! the consumer's position is either zero or the header of a completely written record.** The
//! producer keeps it by writing a zero header just past each record before it publishes the
//! record's own header (a release store; the consumer's load acquires); a valid header is
//! never zero (`len >= 8`), and a fresh ring is all zero. So a consumer never mistakes the
//! bytes of an older lap for a record. The tail index is still published (nobody reads it).
//!
//! A producer that finds the ring full sets `waiting` and the consumer rings the doorbell when
//! it frees space. The consumer looks at `waiting` (a full fence, which would stall it on its
//! own head store, a line the producer reads) only when its head enters a new eighth of the
//! ring, not at every record. That is enough: the producer sets `waiting`, fences, and reads
//! the head again; if the ring is still full then, more than `cap - need` bytes are
//! unconsumed (`need`: what the record needs, at most [`MAX_NEED`], below `7/8 cap`), so the
//! consumer's head enters a new eighth at some consume after that read; by the two fences
//! (Dekker), that consume sees `waiting` set. The doorbell may so come up to an eighth of the
//! ring after the space the producer needed; meanwhile the producer's own polls retry, and so
//! does its progress thread's periodic look.
//!
//! The index and header protocol ([`Producer`]'s room and publication, [`Consumer`]'s reading,
//! validation and release) is generic over [`RingMem`], where the ring's words live, so that the
//! provider runs it on the segment's `std` atomics ([`ShmRing`]) and the model checker
//! (`loom`, `make check-loom`) runs the very same code on its own atomics (the `loom_model`
//! tests below). On `std`'s atomics they compile to the same instructions as the ring's code
//! written for them alone (the accessors of [`RingMem`] are inlined away). Only the copying of
//! payload bytes is the provider's alone.

use super::sys::Mapping;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Ring capacities: powers of two (offsets are positions masked by `cap - 1`).
pub const REQ_CAP: u64 = 512 * 1024;
pub const RESP_CAP: u64 = 128 * 1024;
const _: () = assert!(REQ_CAP.is_power_of_two() && RESP_CAP.is_power_of_two());
pub const HDR: usize = 8;
/// Largest record payload the data path writes (an operation header and one inline chunk).
pub const MAX_PAYLOAD: usize = 32 * 1024 + 64;
/// Longest record (header and padded payload) a producer writes.
const MAX_RECORD: u64 = ((HDR + MAX_PAYLOAD + 7) & !7) as u64;
/// Most bytes one push needs free: a pad as long as a record, the record, the zero header.
const MAX_NEED: u64 = 2 * (HDR + MAX_PAYLOAD) as u64 + HDR as u64;
const _: () = assert!(MAX_NEED <= RESP_CAP - RESP_CAP / LOOKS_PER_LAP && RESP_CAP <= REQ_CAP);
/// How often per lap of the ring the consumer looks at the producer's `waiting` flag.
const LOOKS_PER_LAP: u64 = 8;
/// The kind of a pad record, which fills the ring from a record that did not fit to its end.
pub const PAD: u16 = 0;
const MAGIC: u64 = 0x6461_742d_7368_6d31; // "dat-shm1"

/// Per-ring control block, each index on its own cache line.
#[repr(C, align(64))]
struct Line<T>(T);

#[repr(C)]
struct RingCtl {
    head: Line<AtomicU64>,
    tail: Line<AtomicU64>,
    /// Set by a producer that found the ring full; the consumer rings the doorbell after
    /// freeing space.
    waiting: Line<AtomicU32>,
}

#[repr(C)]
struct SegHeader {
    magic: u64,
    /// `sleeping[side]`: that side's progress thread is about to block in poll(2) and must be
    /// woken through the socket (only for ring space freed under a waiting producer).
    sleeping: [Line<AtomicU32>; 2],
    /// `in_flight[side]`: 1 + the slot of the peer's memory table that side is copying to or
    /// from right now (0: none); see [`super::memtable::quiesce`].
    in_flight: [Line<AtomicU32>; 2],
    rings: [RingCtl; 4],
}

/// Which ring: `side` is the producer (0 = active side, 1 = passive side).
fn ring_index(side: usize, response: bool) -> usize {
    side * 2 + response as usize
}

fn ring_cap(i: usize) -> u64 {
    if i.is_multiple_of(2) {
        REQ_CAP
    } else {
        RESP_CAP
    }
}

const DATA_OFF: u64 = 4096;

pub fn segment_len() -> usize {
    (DATA_OFF + 2 * REQ_CAP + 2 * RESP_CAP) as usize
}

fn ring_data_off(i: usize) -> u64 {
    DATA_OFF + (0..i).map(ring_cap).sum::<u64>()
}

/// A mapped connection segment, and the words about the connection this process keeps to
/// itself (in its own memory: the peer must not write them).
pub struct Segment {
    map: Mapping,
    /// 1 + the slot of our own table a thread of ours copies through while it executes a
    /// request of the peer (target-executed RDMA, an atomic), else 0; see
    /// [`super::memtable::quiesce`].
    target_busy: AtomicU32,
    /// A deregistration gave up waiting for the peer's in-flight mark: the connection is to be
    /// broken.
    condemned: AtomicBool,
}

impl Segment {
    /// Wraps a mapping of at least [`segment_len`] bytes; `init` writes a fresh header, else
    /// (a segment the peer made) it must be a fresh connection's: the magic, every ring index 0.
    pub fn new(map: Mapping, init: bool) -> Option<Segment> {
        const _: () = assert!(std::mem::size_of::<SegHeader>() as u64 <= DATA_OFF);
        if map.len < segment_len() {
            return None;
        }
        let s = Segment { map, target_busy: AtomicU32::new(0), condemned: AtomicBool::new(false) };
        if init {
            // SAFETY: the mapping is at least DATA_OFF bytes, page aligned, and zero-filled
            // (fresh memfd), which is a valid SegHeader; we only set the magic.
            unsafe { std::ptr::write_volatile(s.map.ptr as *mut u64, MAGIC) };
        } else {
            // SAFETY: as above; reading the first 8 bytes.
            if unsafe { std::ptr::read_volatile(s.map.ptr as *const u64) } != MAGIC {
                return None;
            }
            let fresh = |r: &RingCtl| r.head.0.load(Ordering::Acquire) == 0 && r.tail.0.load(Ordering::Acquire) == 0;
            if !s.header().rings.iter().all(fresh) {
                return None;
            }
        }
        Some(s)
    }

    fn header(&self) -> &SegHeader {
        // SAFETY: the mapping is page aligned, large enough, and all fields are atomics or
        // a u64 only written before the segment is shared.
        unsafe { &*(self.map.ptr as *const SegHeader) }
    }

    pub fn sleeping(&self, side: usize) -> &AtomicU32 {
        &self.header().sleeping[side].0
    }

    pub fn in_flight(&self, side: usize) -> &AtomicU32 {
        &self.header().in_flight[side].0
    }

    /// Our threads' mark while they execute a request of the peer (private).
    pub fn target_busy(&self) -> &AtomicU32 {
        &self.target_busy
    }

    /// Asks for the connection to be broken (the peer held a mark too long).
    pub fn condemn(&self) {
        self.condemned.store(true, Ordering::SeqCst);
    }

    pub fn condemned(&self) -> bool {
        self.condemned.load(Ordering::Relaxed)
    }

    /// The first byte and the capacity of the ring `side` produces into.
    pub fn ring_data(&self, side: usize, response: bool) -> (*mut u8, u64) {
        let i = ring_index(side, response);
        // SAFETY: ring_data_off(i) + cap lies inside the mapping (checked in new()).
        (unsafe { self.map.ptr.add(ring_data_off(i) as usize) }, ring_cap(i))
    }

    /// The consumer's head and the producer's tail of the ring `side` produces into.
    pub fn indices(&self, side: usize, response: bool) -> (&AtomicU64, &AtomicU64) {
        let ctl = &self.header().rings[ring_index(side, response)];
        (&ctl.head.0, &ctl.tail.0)
    }

    /// The producing end of the ring `side` produces into, at a fresh ring's start (the
    /// segment's index words are the peer's to write: never taken as they are).
    pub fn producer(&self, side: usize, response: bool) -> Producer {
        let (data, cap) = self.ring_data(side, response);
        Producer {
            mem: ShmRing { ctl: &self.header().rings[ring_index(side, response)], data },
            cap,
            tail: 0,
            head_seen: 0,
        }
    }

    /// The consuming end of the ring `side` produces into, at a fresh ring's start.
    pub fn consumer(&self, side: usize, response: bool) -> Consumer {
        let (data, cap) = self.ring_data(side, response);
        Consumer {
            mem: ShmRing { ctl: &self.header().rings[ring_index(side, response)], data },
            cap,
            head: 0,
            looked: 0,
        }
    }

    /// The consuming end of the ring `side` produces into, at record position `head` (the
    /// fuzz targets start anywhere in a lap).
    #[cfg(feature = "fuzzing")]
    pub fn consumer_at(&self, side: usize, response: bool, head: u64) -> Consumer {
        let c = self.consumer(side, response);
        let head = head & !7;
        Consumer { head, looked: head & !(c.cap / ShmRing::LOOKS_PER_LAP - 1), ..c }
    }
}

/// A malformed ring: the peer broke the protocol.
#[derive(Debug)]
pub struct Malformed(pub &'static str);

/// A 64- or 32-bit atomic word of a ring, as [`RingMem`] hands them out.
pub trait RingWord<T> {
    fn load(&self, order: Ordering) -> T;
    fn store(&self, v: T, order: Ordering);
    fn swap(&self, v: T, order: Ordering) -> T;
}

macro_rules! ring_word_for {
    ($atomic:ty, $t:ty) => {
        impl RingWord<$t> for $atomic {
            #[inline(always)]
            fn load(&self, order: Ordering) -> $t {
                <$atomic>::load(self, order)
            }
            #[inline(always)]
            fn store(&self, v: $t, order: Ordering) {
                <$atomic>::store(self, v, order)
            }
            #[inline(always)]
            fn swap(&self, v: $t, order: Ordering) -> $t {
                <$atomic>::swap(self, v, order)
            }
        }
    };
}

ring_word_for!(AtomicU64, u64);
ring_word_for!(AtomicU32, u32);
#[cfg(all(test, loom))]
ring_word_for!(loom::sync::atomic::AtomicU64, u64);
#[cfg(all(test, loom))]
ring_word_for!(loom::sync::atomic::AtomicU32, u32);

/// Where a ring's words live: the consumer's head, the producer's tail and `waiting` flag, and
/// the record header words.
pub trait RingMem {
    type U64: RingWord<u64>;
    type U32: RingWord<u32>;
    /// How often per lap of the ring the consumer looks at the producer's `waiting` flag.
    const LOOKS_PER_LAP: u64;
    fn head(&self) -> &Self::U64;
    fn tail(&self) -> &Self::U64;
    fn waiting(&self) -> &Self::U32;
    /// The header word at offset `off` of the ring.
    ///
    /// # Safety
    /// `off` is 8-aligned and below the ring's capacity.
    unsafe fn header(&self, off: u64) -> &Self::U64;
    /// `fence(SeqCst)` of the same memory model.
    fn fence_seq_cst();
}

/// A ring in a shared segment. Valid while its [`Segment`] lives (the owner keeps both).
pub struct ShmRing {
    ctl: *const RingCtl,
    data: *mut u8,
}

// SAFETY: points into a shared mapping kept alive by the owner; used under the owner's lock.
unsafe impl Send for ShmRing {}

impl ShmRing {
    fn ctl(&self) -> &RingCtl {
        // SAFETY: the segment outlives this ring's producer and consumer (both owned by the
        // same connection).
        unsafe { &*self.ctl }
    }
}

impl RingMem for ShmRing {
    type U64 = AtomicU64;
    type U32 = AtomicU32;
    const LOOKS_PER_LAP: u64 = LOOKS_PER_LAP;
    #[inline(always)]
    fn head(&self) -> &AtomicU64 {
        &self.ctl().head.0
    }
    #[inline(always)]
    fn tail(&self) -> &AtomicU64 {
        &self.ctl().tail.0
    }
    #[inline(always)]
    fn waiting(&self) -> &AtomicU32 {
        &self.ctl().waiting.0
    }
    #[inline(always)]
    unsafe fn header(&self, off: u64) -> &AtomicU64 {
        // SAFETY: per the contract.
        unsafe { header(self.data, off) }
    }
    #[inline(always)]
    fn fence_seq_cst() {
        std::sync::atomic::fence(Ordering::SeqCst)
    }
}

/// The producing end of one ring.
pub struct Producer<M = ShmRing> {
    mem: M,
    cap: u64,
    tail: u64,
    /// The consumer's head as last read: space known free without touching its cache line.
    head_seen: u64,
}

impl<M: RingMem> Producer<M> {
    /// Bytes not yet consumed, reading the consumer's head afresh.
    fn used(&mut self) -> Result<u64, Malformed> {
        let head = self.mem.head().load(Ordering::Acquire);
        let used = self.tail.wrapping_sub(head);
        if used > self.cap {
            return Err(Malformed("ring head out of range"));
        }
        self.head_seen = head;
        Ok(used)
    }

    /// The ring position after the last record written.
    pub fn position(&self) -> u64 {
        self.tail
    }

    /// The consumer's position, read afresh: every record before it was consumed.
    pub fn consumer_position(&mut self) -> Result<u64, Malformed> {
        self.used()?;
        Ok(self.head_seen)
    }

    /// Whether the consumer has taken every record we wrote.
    pub fn drained(&mut self) -> Result<bool, Malformed> {
        Ok(self.used()? == 0)
    }

    /// Whether a record with `payload` bytes fits right now (counting any pad record and the
    /// zero header after it). Reads the consumer's head only when the last value seen leaves
    /// too little space.
    pub fn fits(&mut self, payload: usize) -> Result<bool, Malformed> {
        let len = record_len(payload) as u64;
        let off = self.tail & (self.cap - 1);
        let contiguous = self.cap - off;
        let need = if len > contiguous { len + contiguous } else { len } + HDR as u64;
        if self.cap - self.tail.wrapping_sub(self.head_seen) >= need {
            return Ok(true);
        }
        Ok(self.cap - self.used()? >= need)
    }

    /// Writes one record with `payload` bytes: `fill` gets the offset of the record in the
    /// ring, and writes the payload after the record's header. Returns false, leaving the ring untouched,
    /// when it does not fit; then `waiting` is set so the consumer signals when it frees space.
    #[inline(always)]
    fn push_with(&mut self, kind: u16, flags: u16, payload: usize, fill: impl FnOnce(u64)) -> Result<bool, Malformed> {
        if !self.fits(payload)? {
            self.mem.waiting().store(1, Ordering::SeqCst);
            M::fence_seq_cst();
            // Re-check: the consumer may have freed space before seeing the flag.
            if !self.fits(payload)? {
                return Ok(false);
            }
        }
        let len = record_len(payload) as u64;
        let first = self.tail & (self.cap - 1);
        let contiguous = self.cap - first;
        let padded = len > contiguous;
        let start = if padded { self.tail.wrapping_add(contiguous) } else { self.tail };
        let end = start.wrapping_add(len);
        let off = start & (self.cap - 1);
        // SAFETY: offsets masked below the capacity, 8-aligned (records are). fits() guaranteed
        // free space for the pad, the record and the zero header after it; the consumer reads
        // none of it before the release stores below publish it.
        unsafe {
            self.mem.header(end & (self.cap - 1)).store(0, Ordering::Relaxed);
            fill(off);
            self.mem.header(off).store(header_word(len as u32, kind, flags), Ordering::Release);
            if padded {
                // Last: the consumer reaches the record through the pad.
                self.mem.header(first).store(header_word(contiguous as u32, PAD, 0), Ordering::Release);
            }
        }
        self.tail = end;
        self.mem.tail().store(end, Ordering::Release);
        Ok(true)
    }
}

/// Total bytes a record with `payload` bytes occupies.
#[inline(always)]
fn record_len(payload: usize) -> usize {
    (HDR + payload + 7) & !7
}

impl Producer {
    /// Writes one record: `fill` gets the payload buffer (exactly `payload` bytes). Returns
    /// false, leaving the ring untouched, when it does not fit; then `waiting` is set so the
    /// consumer signals when it frees space.
    pub fn push(
        &mut self,
        kind: u16,
        flags: u16,
        payload: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<bool, Malformed> {
        debug_assert!(payload <= MAX_PAYLOAD);
        let data = self.mem.data;
        self.push_with(kind, flags, payload, |off| {
            // SAFETY: `push_with` found room for the record (its header and `payload` bytes)
            // at `off`, inside the ring; the consumer reads none of it before it is published.
            fill(unsafe { std::slice::from_raw_parts_mut(data.add(off as usize + HDR), payload) })
        })
    }
}

fn header_word(len: u32, kind: u16, flags: u16) -> u64 {
    len as u64 | (kind as u64) << 32 | (flags as u64) << 48
}

/// The header word at offset `off` of the ring at `data`.
///
/// # Safety
/// `off` is 8-aligned and below the ring's capacity; the ring lives as long as the result is
/// used (its segment outlives producer and consumer).
unsafe fn header<'a>(data: *mut u8, off: u64) -> &'a AtomicU64 {
    // SAFETY: per the contract: 8-aligned (the ring starts page aligned) and inside the
    // mapping, which both processes access with atomics only at header positions.
    unsafe { AtomicU64::from_ptr(data.add(off as usize) as *mut u64) }
}

/// One record as seen by the consumer. `payload` stays valid until [`Consumer::consume`].
pub struct Record {
    pub kind: u16,
    pub flags: u16,
    pub payload: *const u8,
    pub payload_len: usize,
    len: u64,
}

impl Record {
    /// Copies the payload's first `N` bytes, or reports a short record.
    pub fn fixed<const N: usize>(&self) -> Result<[u8; N], Malformed> {
        if self.payload_len < N {
            return Err(Malformed("record too short"));
        }
        let mut out = [0u8; N];
        // SAFETY: payload_len >= N bytes are inside the ring until consume().
        unsafe { std::ptr::copy_nonoverlapping(self.payload, out.as_mut_ptr(), N) };
        Ok(out)
    }
}

/// The consuming end of one ring.
pub struct Consumer<M = ShmRing> {
    mem: M,
    cap: u64,
    head: u64,
    /// The part of the ring (its first position) where we last looked at `waiting`.
    looked: u64,
}

impl<M: RingMem> Consumer<M> {
    /// The header word at our position: zero while no record is there (module invariant).
    fn next_header(&self) -> u64 {
        // SAFETY: head is 8-aligned (records are), masked below cap.
        unsafe { self.mem.header(self.head & (self.cap - 1)) }.load(Ordering::Acquire)
    }

    /// Whether no record (not even a pad) waits.
    pub fn is_empty(&self) -> bool {
        self.next_header() == 0
    }

    /// The oldest record, skipping pad records: `found` gets the ring, the offset of its
    /// payload, its kind, flags and length, and makes what is returned.
    #[inline(always)]
    fn peek_with<R>(&mut self, found: impl FnOnce(&M, u64, u16, u16, u64) -> R) -> Result<Option<R>, Malformed> {
        loop {
            let v = self.next_header();
            if v == 0 {
                return Ok(None);
            }
            let off = self.head & (self.cap - 1);
            let len = v as u32 as u64;
            let kind = (v >> 32) as u16;
            let flags = (v >> 48) as u16;
            // A pad fills the ring from a record that did not fit to its end, so it starts past
            // the ring's start (and the record after it, at the start, is no pad); any other
            // record is one a producer writes. So a peek consumes at most one pad.
            let fits =
                if kind == PAD { off > 0 && off + len == self.cap } else { len <= MAX_RECORD && off + len <= self.cap };
            if len < HDR as u64 || !len.is_multiple_of(8) || !fits {
                return Err(Malformed("bad record length"));
            }
            if kind == PAD {
                self.advance(len);
                continue;
            }
            return Ok(Some(found(&self.mem, off + HDR as u64, kind, flags, len)));
        }
    }

    fn advance(&mut self, len: u64) {
        self.head = self.head.wrapping_add(len);
        self.mem.head().store(self.head, Ordering::Release);
    }

    /// Releases the oldest record, `len` bytes long. Returns true when the producer waits for
    /// space (doorbell it); looks only once per part of the ring (see the module's
    /// documentation).
    #[inline(always)]
    fn release(&mut self, len: u64) -> bool {
        self.advance(len);
        let part = self.head & !(self.cap / M::LOOKS_PER_LAP - 1);
        if part == self.looked {
            return false;
        }
        self.looked = part;
        M::fence_seq_cst();
        let w = self.mem.waiting();
        w.load(Ordering::Relaxed) != 0 && w.swap(0, Ordering::SeqCst) != 0
    }
}

impl Consumer {
    /// The oldest record, skipping pad records.
    pub fn peek(&mut self) -> Result<Option<Record>, Malformed> {
        self.peek_with(|mem, at, kind, flags, len| Record {
            kind,
            flags,
            // SAFETY: inside the ring, see the checks in `peek_with`.
            payload: unsafe { mem.data.add(at as usize) },
            payload_len: len as usize - HDR,
            len,
        })
    }

    /// The ring position just past `rec` (the oldest record, from `peek`).
    pub fn position_after(&self, rec: &Record) -> u64 {
        self.head.wrapping_add(rec.len)
    }

    /// Releases `rec`. Returns true when the producer waits for space (doorbell it).
    pub fn consume(&mut self, rec: Record) -> bool {
        self.release(rec.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of every small size come out whole and in order, at the positions the producer
    /// names, across the ring's end (a pad record) too.
    #[test]
    fn records_come_out_whole_at_the_positions_the_producer_names() {
        let fd = super::super::sys::memfd(segment_len()).unwrap();
        let seg = Segment::new(Mapping::map(&fd, segment_len()).unwrap(), true).unwrap();
        let (mut tx, mut rx) = (seg.producer(0, true), seg.consumer(0, true));
        for payload in (0..200usize).cycle().take(6000) {
            assert!(tx.push(7, payload as u16, payload, |b| b.fill(payload as u8)).unwrap());
            let rec = rx.peek().unwrap().expect("the record pushed");
            assert_eq!((rec.kind, rec.flags, rec.payload_len), (7, payload as u16, record_len(payload) - HDR));
            // SAFETY: the record's payload is inside the ring until consumed.
            let data = unsafe { std::slice::from_raw_parts(rec.payload, payload) };
            assert!(data.iter().all(|&b| b == payload as u8));
            assert_eq!(rx.position_after(&rec), tx.position(), "consumer and producer name the same position");
            rx.consume(rec);
            assert!(rx.peek().unwrap().is_none());
        }
        assert!(tx.position() > RESP_CAP * 2, "the ring wrapped");
    }

    /// A record header no producer writes is refused, and a peek consumes at most one pad: a
    /// pad spanning the ring, a pad at its start or short of its end, a record longer than any
    /// producer writes, an unaligned or too short length.
    #[test]
    fn malformed_record_headers_are_refused() {
        let fd = super::super::sys::memfd(segment_len()).unwrap();
        let seg = Segment::new(Mapping::map(&fd, segment_len()).unwrap(), true).unwrap();
        let (data, cap) = seg.ring_data(0, false);
        let put = |off: u64, len: u64, kind: u16| {
            // SAFETY: off is 8-aligned and below the ring's capacity.
            unsafe { header(data, off) }.store(header_word(len as u32, kind, 0), Ordering::Release)
        };
        for (len, kind) in [(cap, PAD), (64, PAD), (MAX_RECORD + 8, 7), (12, 7), (4, 7), (cap, 7)] {
            put(0, len, kind);
            let mut rx = seg.consumer(0, false);
            assert!(rx.peek().is_err(), "a record of {len} bytes, kind {kind}, at the start");
        }
        // A pad must end at the ring's end: one that does is taken, one short of it is refused.
        let mut tx = seg.producer(0, false);
        let mut rx = seg.consumer(0, false);
        let chunk = record_len(MAX_PAYLOAD) as u64;
        while cap - tx.position() > chunk {
            assert!(tx.push(7, 0, MAX_PAYLOAD, |_| {}).unwrap());
            let rec = rx.peek().unwrap().unwrap();
            rx.consume(rec);
        }
        let at = tx.position();
        put(0, 0, 0);
        put(at, cap - at - 8, PAD);
        assert!(rx.peek().is_err(), "a pad short of the ring's end");
        put(at, cap - at, PAD);
        assert!(rx.peek().unwrap().is_none(), "the pad to the ring's end, then nothing");
    }
}

/// Model checking of the ring protocol: every interleaving (loom) of one producer and one
/// consumer on a ring small enough to fill and wrap. Run by `make check-loom`
/// (`RUSTFLAGS="--cfg loom"`); not built otherwise.
#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
    use loom::sync::Arc;
    use loom::thread;

    /// A ring of 64 bytes (eight words), which the consumer looks at `waiting` in four times
    /// per lap. Its largest need (a 24-byte record after a 16-byte pad, and the zero header:
    /// 48 bytes) keeps the bound the doorbell's argument needs (`need <= cap - cap / looks`).
    const CAP: u64 = 64;

    struct Words {
        head: AtomicU64,
        tail: AtomicU64,
        waiting: AtomicU32,
        data: Vec<AtomicU64>,
    }

    #[derive(Clone)]
    struct ModelRing(Arc<Words>);

    impl ModelRing {
        fn new() -> ModelRing {
            ModelRing(Arc::new(Words {
                head: AtomicU64::new(0),
                tail: AtomicU64::new(0),
                waiting: AtomicU32::new(0),
                data: (0..CAP / 8).map(|_| AtomicU64::new(0)).collect(),
            }))
        }
    }

    impl RingMem for ModelRing {
        type U64 = AtomicU64;
        type U32 = AtomicU32;
        const LOOKS_PER_LAP: u64 = 4;
        fn head(&self) -> &AtomicU64 {
            &self.0.head
        }
        fn tail(&self) -> &AtomicU64 {
            &self.0.tail
        }
        fn waiting(&self) -> &AtomicU32 {
            &self.0.waiting
        }
        unsafe fn header(&self, off: u64) -> &AtomicU64 {
            assert!(off.is_multiple_of(8) && off < CAP, "a header outside the ring: {off}");
            &self.0.data[off as usize / 8]
        }
        fn fence_seq_cst() {
            loom::sync::atomic::fence(Ordering::SeqCst)
        }
    }

    /// The payload words of record `i` (`n` of them): a value no other record has.
    fn payload(i: u16, n: usize) -> Vec<u64> {
        (0..n as u64).map(|w| (i as u64) << 8 | w + 1).collect()
    }

    /// Payload words per record: three 16-byte records, then a 24-byte one that does not fit
    /// before the ring's end (a pad, the record at the start: the ring wraps), then one more.
    /// The third waits for the first to be consumed, the fourth for the second (full).
    const RECORDS: [usize; 5] = [1, 1, 1, 2, 1];

    /// The producer writes every record, in order (the payload as relaxed stores where the
    /// provider copies it); when one does not fit it waits for the consumer's doorbell, and
    /// only for it, so a lost doorbell shows as a hang.
    fn produce(ring: ModelRing, bell: Arc<AtomicBool>) -> Producer<ModelRing> {
        let mut tx = Producer { mem: ring, cap: CAP, tail: 0, head_seen: 0 };
        for (i, &n) in RECORDS.iter().enumerate() {
            let mem = tx.mem.clone();
            let write = |off: u64| {
                for (k, w) in payload(i as u16, n).into_iter().enumerate() {
                    // SAFETY: inside the record (the model's `header` checks the bounds).
                    unsafe { mem.header(off + 8 + 8 * k as u64) }.store(w, Ordering::Relaxed);
                }
            };
            while !tx.push_with(7, i as u16, n * 8, &write).unwrap() {
                // (A swap only once it is rung: a spinning read-modify-write would add a store
                // per turn for the model to explore.)
                while !(bell.load(Ordering::SeqCst) && bell.swap(false, Ordering::SeqCst)) {
                    thread::yield_now();
                }
            }
        }
        tx
    }

    /// The oldest record's kind, flags, length and payload words, if there is one.
    fn next(rx: &mut Consumer<ModelRing>) -> Option<(u16, u16, u64, Vec<u64>)> {
        rx.peek_with(|mem, at, kind, flags, len| {
            // SAFETY: inside the record `peek_with` validated.
            let words = (0..(len - 8) / 8).map(|k| unsafe { mem.header(at + 8 * k) }.load(Ordering::Relaxed));
            (kind, flags, len, words.collect())
        })
        .unwrap()
    }

    /// The consumer takes records as they come and checks each: in order, whole, once; it
    /// rings the doorbell when `release` says so.
    fn consume(ring: ModelRing, bell: Arc<AtomicBool>) -> Consumer<ModelRing> {
        let mut rx = Consumer { mem: ring, cap: CAP, head: 0, looked: 0 };
        for (i, &n) in RECORDS.iter().enumerate() {
            let (kind, flags, len, words) = loop {
                match next(&mut rx) {
                    Some(r) => break r,
                    None => thread::yield_now(),
                }
            };
            assert_eq!((kind, flags, len), (7, i as u16, 8 + 8 * n as u64), "record {i} out of order");
            assert_eq!(words, payload(i as u16, n), "record {i}'s payload");
            if rx.release(len) {
                bell.store(true, Ordering::SeqCst);
            }
        }
        rx
    }

    /// Every record is consumed exactly once, in order, with its contents; a full ring is
    /// signalled (the producer waits for the doorbell alone); at the end the consumer sees an
    /// empty ring and the producer a drained one. Bounded to 3 preemptions.
    #[test]
    fn records_cross_a_full_wrapping_ring_once_in_order() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.max_branches = 100_000;
        model.check(|| {
            let ring = ModelRing::new();
            let bell = Arc::new(AtomicBool::new(false));
            let producer = {
                let (ring, bell) = (ring.clone(), bell.clone());
                thread::spawn(move || produce(ring, bell))
            };
            let mut rx = consume(ring, bell);
            let mut tx = producer.join().unwrap();
            assert!(next(&mut rx).is_none(), "a record after the last one");
            assert!(tx.drained().unwrap(), "the producer does not see its ring drained");
            assert_eq!(tx.position(), rx.head, "producer and consumer name different positions");
        });
    }

    /// A producer that finds the ring full while the consumer frees it: either its re-check
    /// sees the space, or the consumer sees `waiting` and rings the doorbell (the producer
    /// waits for it alone, so a lost doorbell shows as a hang). Two 16-byte records are
    /// unconsumed when a 32-byte one is placed.
    #[test]
    fn a_full_ring_is_refused_or_signalled() {
        let mut model = loom::model::Builder::new();
        model.max_branches = 100_000;
        model.check(|| {
            let ring = ModelRing::new();
            let bell = Arc::new(AtomicBool::new(false));
            let mut tx = Producer { mem: ring.clone(), cap: CAP, tail: 0, head_seen: 0 };
            for n in [1, 1] {
                assert!(tx.push_with(7, 0, n * 8, |_| {}).unwrap(), "no room in an empty ring");
            }
            let consumer = {
                let bell = bell.clone();
                thread::spawn(move || {
                    let mut rx = Consumer { mem: ring, cap: CAP, head: 0, looked: 0 };
                    for _ in 0..2 {
                        let (_, _, len, _) = next(&mut rx).expect("the records written");
                        if rx.release(len) {
                            bell.store(true, Ordering::SeqCst);
                        }
                    }
                })
            };
            if !tx.push_with(7, 0, 3 * 8, |_| {}).unwrap() {
                while !bell.load(Ordering::SeqCst) {
                    thread::yield_now();
                }
                assert!(tx.push_with(7, 0, 3 * 8, |_| {}).unwrap(), "no room after the doorbell");
            }
            consumer.join().unwrap();
        });
    }
}
