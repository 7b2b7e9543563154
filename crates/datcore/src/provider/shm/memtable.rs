//! The process-wide table of memory regions and memory windows, looked up by key without locks.
//!
//! The table is private: every decision this process makes about a key (the SGE checks of its
//! posts, the rkey checks of the requests it executes for peers) reads it. A copy of it is
//! published ([`super::area`]) so that connected peers can check keys themselves before they
//! copy to or from our memory; nothing here reads the copy back, so whatever its bytes say
//! grants nothing.
//!
//! A key is `generation << INDEX_BITS | index`. Each slot is a tiny seqlock: writers (register,
//! bind, deregister; rare) clear the key, update the fields, then publish the new key; readers
//! (every post and every remote access; hot) read key, fields, key again and accept the snapshot
//! only if the key is unchanged and equal to the one they look for. A slot's generation moves
//! on at every reuse, so stale keys never match a new registration. Writers update the private
//! table and the published copy alike.

use super::super::Access;
use super::ring::Segment;
use super::shared::Share;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

const INDEX_BITS: u32 = 17;
const SLOTS: usize = 1 << INDEX_BITS;
/// Keys in the table: LMRs and RMRs of the process together.
pub const KEYS: u32 = SLOTS as u32;
const GEN_MASK: u32 = (1 << (32 - INDEX_BITS)) - 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Region,
    Window,
}

/// A consistent view of one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    pub pd: u32,
    pub addr: u64,
    pub len: u64,
    pub access: Access,
    /// How a peer maps this memory itself, if it can ([`super::shared`]).
    pub share: Option<Share>,
}

impl Entry {
    /// The end of the entry's range; None for one past the end of the address space (no
    /// registration of ours: a peer's table can say anything).
    pub fn end(&self) -> Option<u64> {
        self.addr.checked_add(self.len)
    }

    /// True when `[addr, addr+len)` lies inside this entry.
    pub fn covers(&self, addr: u64, len: u64) -> bool {
        addr >= self.addr && addr.checked_add(len).zip(self.end()).is_some_and(|(end, limit)| end <= limit)
    }
}

/// One slot; all-zero is a free slot (the area is a fresh memfd).
#[repr(C)]
pub struct Slot {
    key: AtomicU32,
    /// Generation of the last key published here (also while the slot is free).
    gen: AtomicU32,
    pd: AtomicU32,
    meta: AtomicU32,
    addr: AtomicU64,
    len: AtomicU64,
    /// [`Share`], encoded: kind (0: none), descriptor or shmid, device, inode, offset.
    share_kind: AtomicU32,
    share_id: AtomicU32,
    share_dev: AtomicU64,
    share_ino: AtomicU64,
    share_offset: AtomicU64,
}

/// Bytes of a table (ours, its published copy, a peer's).
pub const TABLE_BYTES: usize = SLOTS * std::mem::size_of::<Slot>();

struct Table {
    /// The table this process decides on.
    slots: &'static [Slot],
    /// The copy peers read (none without a published area: then peers cannot check keys and
    /// every RDMA goes through the target).
    published: Option<&'static [Slot]>,
    free: Mutex<Vec<u32>>,
}

impl Table {
    /// Slot `index` of the table and of its published copy.
    fn copies(&self, index: u32) -> impl Iterator<Item = &'static Slot> {
        let i = index as usize;
        std::iter::once(&self.slots[i]).chain(self.published.map(|p| &p[i]))
    }

    /// Clears the key of slot `index` everywhere; returns the key it held.
    fn clear(&self, index: u32) -> u32 {
        let old = self.slots[index as usize].key.swap(0, Ordering::SeqCst);
        if let Some(p) = self.published {
            p[index as usize].key.store(0, Ordering::SeqCst);
        }
        old
    }
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let private: &'static mut [u64] = Box::leak(vec![0u64; TABLE_BYTES / 8].into_boxed_slice());
        // SAFETY: private and the published area's table are TABLE_BYTES zero-filled, 8-aligned
        // bytes that live for the process; an all-zero Slot (atomics) is valid.
        let slots = unsafe { peer_slots(private.as_ptr() as *const u8) };
        // SAFETY: as above.
        let published = super::area::table_ptr().map(|p| unsafe { peer_slots(p) });
        Table { slots, published, free: Mutex::new((0..SLOTS as u32).rev().collect()) }
    })
}

fn pack(kind: Kind, a: Access) -> u32 {
    (kind == Kind::Window) as u32
        | (a.local_read as u32) << 1
        | (a.local_write as u32) << 2
        | (a.remote_read as u32) << 3
        | (a.remote_write as u32) << 4
        | (a.remote_atomic as u32) << 5
}

fn unpack(m: u32) -> (Kind, Access) {
    let kind = if m & 1 != 0 { Kind::Window } else { Kind::Region };
    let a = Access {
        local_read: m & 2 != 0,
        local_write: m & 4 != 0,
        remote_read: m & 8 != 0,
        remote_write: m & 16 != 0,
        remote_atomic: m & 32 != 0,
    };
    (kind, a)
}

/// How many keys of ours stopped matching (freed, revoked, or replaced by a new publish).
///
/// A receive's SGEs are checked against the table at its post ([`super::recvq::check_receive`]),
/// which reads this count first. While the count has not moved, that check still holds where
/// the data lands, so the landing skips its second look ([`super::recvq::still_valid`]).
/// Why: an entry's fields change only under a new key, and every change clears the old key
/// (a SeqCst store) and then counts (a SeqCst add). The post's lookups come after its count
/// read (an acquiring load) and found the keys live, so each of those keys is cleared, if at
/// all, after that read, and counted after its clearing. A landing that reads the same count
/// therefore comes before every such count: the key's deregistration has not returned yet,
/// a race the table never orders (the second look has the same window, between its look and
/// the copy). A `dat_lmr_free` that returned has counted, and the landing looks again.
static KEYS_CLEARED: AtomicU64 = AtomicU64::new(0);

/// The current [`KEYS_CLEARED`] count (a plain load on x86).
pub fn keys_cleared() -> u64 {
    KEYS_CLEARED.load(Ordering::SeqCst)
}

/// Counts a key cleared just now (after its clearing store, before the caller returns).
fn key_cleared() {
    KEYS_CLEARED.fetch_add(1, Ordering::SeqCst);
}

/// Reserves a slot; returns its index (the slot holds no valid key yet).
pub fn alloc() -> Option<u32> {
    table().free.lock().pop()
}

/// Returns a slot: its key stops matching at once, and no peer copies through it once this
/// returns.
pub fn free(index: u32) {
    let t = table();
    t.clear(index);
    key_cleared();
    quiesce(index);
    t.free.lock().push(index);
}

// ---- peers copying through our table ---------------------------------------------------------
//
// Invariant: once `free`, `revoke` or `publish` of a slot returns, no peer copies to or from
// memory the slot's previous key named (nor do our own threads executing a peer's request).
// An initiator stores `in_flight = 1 + slot` in the connection segment (SeqCst), then looks the
// key up in our published table, copies, and clears the mark; our threads executing a request
// do the same with the connection's private `target_busy` word and our private table. We clear
// the key in both (SeqCst), then wait while any connection's mark names the slot. By the SeqCst
// total order either the initiator's lookup sees the cleared key (and copies nothing), or its
// mark precedes our check and we wait for the copy to end. A dead peer's mark goes with its
// connection. The `in_flight` word is the peer's to write: a peer whose mark outlives
// `QUIESCE_LIMIT` (one that neither finishes nor dies, or holds it on purpose) is given up
// on, and its connection broken (logged); no lock is held while we wait, so nothing else
// waits with us.

const QUIESCE_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Segments of our live connections and the side the *peer* initiates from.
static TARGETS: Mutex<Vec<(std::sync::Weak<Segment>, usize)>> = Mutex::new(Vec::new());

/// Registers a connection whose peer (at `peer_side`) may copy through our table.
pub fn add_target(seg: &std::sync::Arc<Segment>, peer_side: usize) {
    let mut t = TARGETS.lock();
    t.retain(|(w, _)| w.strong_count() > 0);
    t.push((std::sync::Arc::downgrade(seg), peer_side));
}

/// Waits until no peer copy started under an old key of slot `index` is still running.
pub fn quiesce(index: u32) {
    std::sync::atomic::fence(Ordering::SeqCst);
    let mark = index + 1;
    let live: Vec<_> = TARGETS.lock().iter().filter_map(|(w, side)| Some((w.upgrade()?, *side))).collect();
    let start = std::time::Instant::now();
    for (seg, side) in live {
        let busy = |seg: &Segment| {
            seg.in_flight(side).load(Ordering::SeqCst) == mark || seg.target_busy().load(Ordering::SeqCst) == mark
        };
        while busy(&seg) {
            if start.elapsed() > QUIESCE_LIMIT {
                tracing::warn!(slot = index, "shm: a copy through a freed region did not end; breaking the connection");
                seg.condemn();
                super::progress::engine().kick();
                break;
            }
            std::thread::yield_now();
        }
    }
}

/// Publishes a new key for slot `index` with these contents and returns the key.
pub fn publish(index: u32, e: Entry) -> u32 {
    let t = table();
    if t.clear(index) != 0 {
        key_cleared();
        quiesce(index);
    }
    let s = &t.slots[index as usize];
    let mut gen = (s.gen.load(Ordering::Relaxed) + 1) & GEN_MASK;
    if gen == 0 {
        gen = 1;
    }
    s.gen.store(gen, Ordering::Relaxed);
    let key = gen << INDEX_BITS | index;
    for s in t.copies(index) {
        s.fill(&e);
        s.key.store(key, Ordering::SeqCst);
    }
    key
}

impl Slot {
    /// Writes `e`'s fields (under a cleared key: readers take none of it until a key is
    /// published after it).
    fn fill(&self, e: &Entry) {
        self.pd.store(e.pd, Ordering::SeqCst);
        self.meta.store(pack(e.kind, e.access), Ordering::SeqCst);
        self.addr.store(e.addr, Ordering::SeqCst);
        self.len.store(e.len, Ordering::SeqCst);
        let (kind, id, dev, ino, offset) = Share::encode(e.share);
        self.share_kind.store(kind, Ordering::SeqCst);
        self.share_id.store(id, Ordering::SeqCst);
        self.share_dev.store(dev, Ordering::SeqCst);
        self.share_ino.store(ino, Ordering::SeqCst);
        self.share_offset.store(offset, Ordering::SeqCst);
    }
}

/// Writes `e` under `key` into the slot `key` names in `slots` (any table, a peer's mapping
/// of ours included: what [`super::raw_peer`] forges with).
pub fn write_slot(slots: &[Slot], key: u32, e: &Entry) {
    let s = &slots[slot_of(key) as usize];
    s.key.store(0, Ordering::SeqCst);
    s.fill(e);
    s.key.store(key, Ordering::SeqCst);
}

/// The key of generation `gen` (at least 1) of slot `index`.
pub fn key_of(index: u32, gen: u32) -> u32 {
    (gen & GEN_MASK) << INDEX_BITS | (index & (SLOTS as u32 - 1))
}

/// Invalidates the current key of slot `index` without freeing the slot (and waits out peer
/// copies under it).
pub fn revoke(index: u32) {
    table().clear(index);
    key_cleared();
    quiesce(index);
}

/// The entry `key` names, if it is live.
pub fn lookup(key: u32) -> Option<Entry> {
    lookup_in(table().slots, key)
}

/// A table at `base`: a peer's, mapped read-only from its published area (or any other).
///
/// # Safety
/// `base` must point to a live mapping of at least [`TABLE_BYTES`] bytes, 8-aligned, for `'a`.
pub unsafe fn peer_slots<'a>(base: *const u8) -> &'a [Slot] {
    // SAFETY: per the contract; any bit pattern is a valid Slot (plain atomics).
    unsafe { std::slice::from_raw_parts(base as *const Slot, SLOTS) }
}

/// The slot index a key names.
pub fn slot_of(key: u32) -> u32 {
    key & (SLOTS as u32 - 1)
}

/// Looks `key` up in `slots` (a peer's published table): a consistent snapshot or None.
#[inline]
pub fn lookup_in(slots: &[Slot], key: u32) -> Option<Entry> {
    read_slot(slots, key, true)
}

/// As [`lookup`], without the share (left None, not read): what a check of local SGEs needs,
/// at every post and every receive.
pub fn lookup_unshared(key: u32) -> Option<Entry> {
    read_slot(table().slots, key, false)
}

/// The snapshot of the slot `key` names, its share included when `with_share`.
fn read_slot(slots: &[Slot], key: u32, with_share: bool) -> Option<Entry> {
    if key == 0 {
        return None;
    }
    let s = &slots[(key as usize) & (SLOTS - 1)];
    if s.key.load(Ordering::Acquire) != key {
        return None;
    }
    let pd = s.pd.load(Ordering::Acquire);
    let meta = s.meta.load(Ordering::Acquire);
    let addr = s.addr.load(Ordering::Acquire);
    let len = s.len.load(Ordering::Acquire);
    let share = if with_share {
        Share::decode(
            s.share_kind.load(Ordering::Acquire),
            s.share_id.load(Ordering::Acquire),
            s.share_dev.load(Ordering::Acquire),
            s.share_ino.load(Ordering::Acquire),
            s.share_offset.load(Ordering::Acquire),
        )
    } else {
        None
    };
    if s.key.load(Ordering::Acquire) != key {
        return None;
    }
    let (kind, access) = unpack(meta);
    Some(Entry { kind, pd, addr, len, access, share })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer's entry whose range runs past the end of the address space covers nothing
    /// (found by the shm_table fuzz target: an overflow panic where overflow is checked, as in
    /// `cargo test` and the fuzz targets; its input is in fuzz/corpus/shm_table).
    #[test]
    fn an_entry_past_the_end_of_the_address_space_covers_nothing() {
        let e = Entry { kind: Kind::Region, pd: 1, addr: u64::MAX - 8, len: 64, access: RIGHTS, share: None };
        assert!(!e.covers(u64::MAX - 8, 4));
        assert!(!e.covers(u64::MAX, 0));
        let fits = Entry { addr: u64::MAX - 64, len: 64, ..e };
        assert!(fits.covers(u64::MAX - 8, 8));
        assert!(!fits.covers(u64::MAX - 8, 9));
    }

    const RIGHTS: Access =
        Access { local_read: true, local_write: true, remote_read: true, remote_write: true, remote_atomic: true };

    /// What peers read is a copy: whatever its bytes say (a peer that could write them, or
    /// forged them some other way), the keys, bounds and rights this process decides on are
    /// its own registrations'.
    #[test]
    fn a_forged_published_copy_decides_nothing() {
        let published = super::super::area::table_ptr().expect("a published area");
        // SAFETY: the published table's mapping is TABLE_BYTES long and lives for the process.
        let copy = unsafe { peer_slots(published) };
        let mut word = [0u64; 8];
        let region = Entry {
            kind: Kind::Region,
            pd: 3,
            addr: word.as_mut_ptr() as u64,
            len: 8,
            access: Access { remote_read: true, ..Access::default() },
            share: None,
        };
        let slot = alloc().unwrap();
        let key = publish(slot, region);
        assert_eq!(lookup_in(copy, key), Some(region), "peers read the registration");
        let elsewhere = Entry { addr: 0x1000, len: 1 << 40, access: RIGHTS, ..region };
        write_slot(copy, key, &elsewhere);
        let free_slot = alloc().unwrap();
        let forged = key_of(free_slot, 9);
        write_slot(copy, forged, &elsewhere);
        assert_eq!(lookup(key), Some(region), "a forged copy changed a registration");
        assert_eq!(lookup_unshared(key).map(|e| (e.addr, e.len, e.access)), Some((region.addr, 8, region.access)));
        assert_eq!(lookup(forged), None, "a forged copy made a key");
        free(slot);
        free(free_slot);
        assert_eq!(lookup_in(copy, key), None, "a freed key stays readable to peers");
    }
}
