//! The process-wide table of memory regions and memory windows, looked up by key without locks.
//!
//! A key is `generation << INDEX_BITS | index`. Each slot is a tiny seqlock: writers (register,
//! bind, deregister; rare) clear the key, update the fields, then publish the new key; readers
//! (every post and every remote access; hot) read key, fields, key again and accept the snapshot
//! only if the key is unchanged and equal to the one they look for. A slot's generation moves
//! on at every reuse, so stale keys never match a new registration.

use super::super::Access;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

const INDEX_BITS: u32 = 16;
const SLOTS: usize = 1 << INDEX_BITS;
const GEN_MASK: u32 = (1 << (32 - INDEX_BITS)) - 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Region,
    Window,
}

/// A consistent view of one key.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub kind: Kind,
    pub pd: u32,
    pub addr: u64,
    pub len: u64,
    pub access: Access,
}

impl Entry {
    /// True when `[addr, addr+len)` lies inside this entry.
    pub fn covers(&self, addr: u64, len: u64) -> bool {
        addr >= self.addr && addr.checked_add(len).is_some_and(|end| end <= self.addr + self.len)
    }
}

#[derive(Default)]
struct Slot {
    key: AtomicU32,
    /// Generation of the last key published here (also while the slot is free).
    gen: AtomicU32,
    pd: AtomicU32,
    meta: AtomicU32,
    addr: AtomicU64,
    len: AtomicU64,
}

struct Table {
    slots: Box<[Slot]>,
    free: Mutex<Vec<u32>>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table {
        slots: (0..SLOTS).map(|_| Slot::default()).collect(),
        free: Mutex::new((0..SLOTS as u32).rev().collect()),
    })
}

fn pack(kind: Kind, a: Access) -> u32 {
    (kind == Kind::Window) as u32
        | (a.local_read as u32) << 1
        | (a.local_write as u32) << 2
        | (a.remote_read as u32) << 3
        | (a.remote_write as u32) << 4
}

fn unpack(m: u32) -> (Kind, Access) {
    let kind = if m & 1 != 0 { Kind::Window } else { Kind::Region };
    let a =
        Access { local_read: m & 2 != 0, local_write: m & 4 != 0, remote_read: m & 8 != 0, remote_write: m & 16 != 0 };
    (kind, a)
}

/// Reserves a slot; returns its index (the slot holds no valid key yet).
pub fn alloc() -> Option<u32> {
    table().free.lock().pop()
}

/// Returns a slot: its key stops matching at once.
pub fn free(index: u32) {
    let t = table();
    t.slots[index as usize].key.store(0, Ordering::SeqCst);
    t.free.lock().push(index);
}

/// Publishes a new key for slot `index` with these contents and returns the key.
pub fn publish(index: u32, e: Entry) -> u32 {
    let s = &table().slots[index as usize];
    s.key.store(0, Ordering::SeqCst);
    let mut gen = (s.gen.load(Ordering::Relaxed) + 1) & GEN_MASK;
    if gen == 0 {
        gen = 1;
    }
    s.gen.store(gen, Ordering::Relaxed);
    s.pd.store(e.pd, Ordering::SeqCst);
    s.meta.store(pack(e.kind, e.access), Ordering::SeqCst);
    s.addr.store(e.addr, Ordering::SeqCst);
    s.len.store(e.len, Ordering::SeqCst);
    let key = gen << INDEX_BITS | index;
    s.key.store(key, Ordering::SeqCst);
    key
}

/// Invalidates the current key of slot `index` without freeing the slot.
pub fn revoke(index: u32) {
    table().slots[index as usize].key.store(0, Ordering::SeqCst);
}

/// The entry `key` names, if it is live.
pub fn lookup(key: u32) -> Option<Entry> {
    if key == 0 {
        return None;
    }
    let s = &table().slots[(key as usize) & (SLOTS - 1)];
    if s.key.load(Ordering::Acquire) != key {
        return None;
    }
    let pd = s.pd.load(Ordering::Acquire);
    let meta = s.meta.load(Ordering::Acquire);
    let addr = s.addr.load(Ordering::Acquire);
    let len = s.len.load(Ordering::Acquire);
    if s.key.load(Ordering::Acquire) != key {
        return None;
    }
    let (kind, access) = unpack(meta);
    Some(Entry { kind, pd, addr, len, access })
}
