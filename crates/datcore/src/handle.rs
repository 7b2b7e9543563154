//! The handle registry: every DAT handle a C caller holds is a value from here.
//!
//! A handle never points at memory. It encodes a slot index, the slot's generation and the
//! object type, under a tag that makes it a non-canonical x86_64 address (top 12 bits `0xDA7`),
//! so no real pointer is ever mistaken for one of ours:
//!
//! ```text
//!  63      52 51   48 47                  20 19          0
//! [  0xDA7   | type  |     generation (28)  | index (20)   ]
//! ```
//!
//! Lookup ([`get`]) is lock-free and touches one word of one slot: it checks the value's tag and
//! type, adds one to the slot's use count and compares the word it read with the value (tag,
//! type and generation: a live slot's word holds them where the handle does), in one atomic
//! `fetch_add`. The slots are one array reserved at load and committed by the kernel page by page
//! as it is touched, so a slot's address is the array's plus index times the slot's size. No lock, no allocation, no `Arc` reference count: the [`Ref`] it
//! returns borrows the object from the slot, and dropping the `Ref` gives the use back. A freed
//! handle fails because its slot's generation moved on (or the slot is no longer live); a
//! wrong-type handle fails on the type; garbage fails on the tag or the index. The caller picks
//! the `DAT_INVALID_HANDLE_*` subtype, so the same lookup serves every function.
//!
//! ## Why the type in the word is enough
//!
//! Each object type names its handle type as [`Kind<N>`] (N its 4-bit type number) and
//! `Kind<N>` names the object type back ([`ObjectKind`]); the compiler accepts one
//! `impl ObjectKind for Kind<N>` per N (write both with [`dat_object!`]). So one handle type is one
//! Rust type, and a slot whose word says type N holds a `<Kind<N> as ObjectKind>::Object`: a
//! lookup that checked the word casts the object without comparing a `TypeId`.
//!
//! ## Why a concurrent free never frees memory a lookup uses
//!
//! Each slot's `state` word holds `tag | type | generation | DYING | uses`, the tag (`LIVE`)
//! set only while the slot is live. The invariant: **the slot's object stays in the slot while
//! `uses > 0`, and only a slot with its tag set hands it out.** [`remove`] clears the tag (and
//! sets `DYING`) in one compare-and-swap, so every later lookup fails at once; whoever then
//! brings `uses` to zero on a `DYING` slot (the remover itself, or the last `Ref` to be dropped,
//! possibly in another thread) moves the word to the next generation with neither set, in one
//! compare-and-swap that only one thread can win, and only that thread takes the object out and
//! returns the index to the free list. A lookup that raced with the free and lost (it saw a
//! word without the tag or of another generation) never reads the object: it just gives its use back. [`insert`] writes the object before it
//! publishes the tag with release ordering, and a lookup's `fetch_add` acquires, so a lookup that
//! sees the tag sees the object. A free therefore never waits for users (a thread may sit in
//! `dat_evd_wait` on an EVD another thread frees): the object is dropped when the last use ends,
//! as an `Arc` would be.

use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::any::Any;
use std::cell::UnsafeCell;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Object types, numbered as `DAT_HANDLE_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum HandleType {
    Cr = 0,
    Ep = 1,
    Evd = 2,
    Ia = 3,
    Lmr = 4,
    Psp = 5,
    Pz = 6,
    Rmr = 7,
    Rsp = 8,
    Cno = 9,
    Srq = 10,
    /// An IB extensions address handle (`DAT_IB_HANDLE_TYPE_EXT`).
    Ah = 12,
}

impl HandleType {
    fn from_bits(b: u64) -> Option<Self> {
        use HandleType::*;
        Some(match b {
            0 => Cr,
            1 => Ep,
            2 => Evd,
            3 => Ia,
            4 => Lmr,
            5 => Psp,
            6 => Pz,
            7 => Rmr,
            8 => Rsp,
            9 => Cno,
            10 => Srq,
            12 => Ah,
            _ => return None,
        })
    }
}

/// An encoded handle value, as a C caller holds it (`DAT_HANDLE` is `void *`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Handle(pub u64);

const TAG: u64 = 0xDA7;
const TAG_SHIFT: u32 = 52;
const TYPE_SHIFT: u32 = 48;
const GEN_SHIFT: u32 = 20;
const GEN_MASK: u64 = (1 << 28) - 1;
const INDEX_BITS: u32 = 20;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;
/// How many slots there are (index 0 is never handed out).
const SLOTS: usize = 1 << INDEX_BITS;

impl Handle {
    pub const NULL: Handle = Handle(0);

    fn encode(kind: u64, gen: u32, index: u32) -> Handle {
        Handle(TAG << TAG_SHIFT | kind << TYPE_SHIFT | (gen as u64 & GEN_MASK) << GEN_SHIFT | index as u64)
    }

    /// True if the value carries our tag (it may still be stale).
    pub fn is_ours(self) -> bool {
        self.0 >> TAG_SHIFT == TAG
    }

    pub fn is_null(self) -> bool {
        self.0 == 0
    }

    /// The type the value claims, if it is one of ours.
    pub fn claimed_type(self) -> Option<HandleType> {
        if !self.is_ours() {
            return None;
        }
        HandleType::from_bits(self.kind())
    }

    /// The 4-bit type number the value carries (meaningful only if it [`is_ours`](Self::is_ours)).
    fn kind(self) -> u64 {
        (self.0 >> TYPE_SHIFT) & 0xf
    }

    /// True if the value carries our tag and `T`'s type number (it may still be stale): one
    /// compare.
    #[inline(always)]
    pub fn claims<T: DatObject>(self) -> bool {
        self.is_ours_of_kind(kind_of::<T>())
    }

    /// True if the value carries our tag and type number `kind`: one compare.
    #[inline]
    fn is_ours_of_kind(self, kind: u64) -> bool {
        self.0 >> TYPE_SHIFT == TAG << (TAG_SHIFT - TYPE_SHIFT) | kind
    }

    fn index(self) -> usize {
        (self.0 & INDEX_MASK) as usize
    }

    pub fn as_ptr(self) -> *mut libc::c_void {
        self.0 as usize as *mut libc::c_void
    }

    pub fn from_ptr(p: *const libc::c_void) -> Handle {
        Handle(p as usize as u64)
    }
}

/// A DAT object stored in the registry: the one Rust type of its handle type (see the module
/// comment, "Why the type in the word is enough"). Implement it with [`dat_object!`].
pub trait DatObject: Any + Send + Sync {
    /// `Kind<N>`, N this object's handle type number.
    type Kind: ObjectKind<Object = Self>;
}

/// Handle type number `N` as a type (`N` below 16: the handle and the slot word have 4 bits).
pub struct Kind<const N: u32>;

/// The object type registered under a handle type number: implemented once per `Kind<N>`.
pub trait ObjectKind: sealed::Number {
    type Object;
}

mod sealed {
    /// The number of a `Kind<N>`; implemented for `Kind<N>` only, so every [`super::ObjectKind`]
    /// is a `Kind<N>` and its number is `N`.
    pub trait Number {
        const NUMBER: u64;
    }
    impl<const N: u32> Number for super::Kind<N> {
        const NUMBER: u64 = {
            assert!(N < 16, "a handle type number has 4 bits");
            N as u64
        };
    }
}

/// The type number of `T`'s handles.
#[inline(always)]
fn kind_of<T: DatObject>() -> u64 {
    <T::Kind as sealed::Number>::NUMBER
}

/// Registers `$object` as the DAT object of handle type `HandleType::$ty`: its `DatObject` and
/// the `ObjectKind` that makes it the only one (a second object type of the same handle type
/// does not compile).
macro_rules! dat_object {
    ($object:ty, $ty:ident) => {
        impl $crate::handle::DatObject for $object {
            type Kind = $crate::handle::Kind<{ $crate::handle::HandleType::$ty as u32 }>;
        }
        impl $crate::handle::ObjectKind for $crate::handle::Kind<{ $crate::handle::HandleType::$ty as u32 }> {
            type Object = $object;
        }
    };
}
pub(crate) use dat_object;

// The slot state word (see the module comment): a live slot's word is its handle with the
// index bits holding the use count, so a lookup compares the two above the index bits.
//  63    52 51  48 47               20  19     18      0
// [  tag   | type |   generation (28)  | DYING |  uses   ]
/// The tag bits: set (to [`TAG`]) while the slot is live, clear otherwise.
const LIVE_MASK: u64 = 0xfff << TAG_SHIFT;
const DYING: u64 = 1 << 19;
/// The use count: at most 2^19 - 1 lookups and `Ref`s of one slot at a time.
const USES_MASK: u64 = DYING - 1;

/// True if `word` is the state of the live slot `h` names: tag, type and generation agree.
#[inline(always)]
fn is_live_word_of(word: u64, h: Handle) -> bool {
    (word ^ h.0) >> INDEX_BITS == 0
}

/// What a live slot holds: the object's address (of the type its slot word's type number
/// names), which is also the owning `Arc`'s pointer, and how to give that `Arc` back.
struct Entry {
    data: NonNull<()>,
    /// Drops the `Arc` whose pointer is `data` (the object's own type's `Arc::from_raw`).
    release: unsafe fn(NonNull<()>),
}

/// Gives back the `Arc<T>` behind `data`.
///
/// # Safety
/// `data` must come from `Arc::into_raw` of an `Arc<T>` not given back yet.
unsafe fn release_arc<T>(data: NonNull<()>) {
    // SAFETY: the caller's contract.
    drop(unsafe { Arc::from_raw(data.cast::<T>().as_ptr().cast_const()) });
}

struct Slot {
    /// `tag | type | generation | DYING | uses`; every lookup and free goes through it.
    state: AtomicU64,
    /// DAT consumer context (`dat_set_consumer_context`).
    context: AtomicU64,
    /// Written only by the thread that owns the slot while it is neither live nor `DYING`
    /// (the inserter before publishing the tag, the reclaimer after its winning CAS); read only
    /// by holders of a use taken while the tag was set.
    entry: UnsafeCell<Option<Entry>>,
}

// SAFETY: `entry` is accessed only under the protocol above (exclusive writers while the slot is
// unpublished, shared readers while they hold a use), and the object in it is `Send + Sync`.
unsafe impl Sync for Slot {}

/// The slots, all zero (free, generation 0, no object) until first used. In `.bss`: the kernel
/// commits a page of it when it is first touched, so untouched slots cost no memory.
static SLOT_ARRAY: [Slot; SLOTS] =
    [const { Slot { state: AtomicU64::new(0), context: AtomicU64::new(0), entry: UnsafeCell::new(None) } }; SLOTS];

/// The slot of `index` (below [`SLOTS`]).
#[inline(always)]
fn slot(index: usize) -> &'static Slot {
    &SLOT_ARRAY[index & (SLOTS - 1)]
}

impl Slot {
    /// This slot's index in [`SLOT_ARRAY`].
    fn index(&'static self) -> u32 {
        ((self as *const Slot as usize - SLOT_ARRAY.as_ptr() as usize) / std::mem::size_of::<Slot>()) as u32
    }

    /// Takes a use and checks the word it read against `h` (tag, type, generation). On a
    /// mismatch the use is given back and None returned.
    #[inline(always)]
    fn enter(&'static self, h: Handle) -> Option<Use> {
        let used = Use(self);
        let word = self.state.fetch_add(1, Ordering::Acquire);
        is_live_word_of(word, h).then_some(used)
    }

    /// Gives a use back; the last use of a freed (`DYING`) slot reclaims it.
    #[inline(always)]
    fn leave(&'static self) {
        let before = self.state.fetch_sub(1, Ordering::Release);
        if before & (DYING | USES_MASK) == DYING | 1 {
            self.reclaim();
        }
    }

    /// Moves a `DYING` slot without uses to the next generation, drops its object and returns
    /// the index to the free list. Only the thread whose compare-and-swap wins does anything.
    #[cold]
    #[inline(never)]
    fn reclaim(&'static self) {
        let mut word = self.state.load(Ordering::Acquire);
        loop {
            if word & DYING == 0 || word & USES_MASK != 0 {
                return; // someone else reclaims (or a racing lookup will, when it leaves)
            }
            let next_gen = ((word >> GEN_SHIFT) + 1) & GEN_MASK;
            match self.state.compare_exchange_weak(word, next_gen << GEN_SHIFT, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => word = now,
            }
        }
        // SAFETY: the winning CAS made the slot neither live nor DYING and its index is not on
        // the free list yet: no lookup reads `entry` and no insert writes it; we own it.
        let entry = unsafe { (*self.entry.get()).take() };
        self.context.store(0, Ordering::Relaxed);
        free_list().lock().free.push(self.index());
        if let Some(e) = entry {
            // SAFETY: `data` is the `Arc` insert stored, given back once, here; the object's own
            // drop runs outside every registry lock.
            unsafe { (e.release)(e.data) };
        }
    }
}

/// One use of a slot: while it exists the slot's object stays put. Dropping it gives it back.
struct Use(&'static Slot);

impl Drop for Use {
    #[inline(always)]
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// A borrowed DAT object, from [`get`]. The object stays valid while the `Ref` lives, even if
/// another thread frees the handle meanwhile (the handle stops resolving at once; the object is
/// dropped when the last `Ref` and `Arc` to it are gone).
pub struct Ref<T: DatObject> {
    object: NonNull<T>,
    _use: Use,
}

impl<T: DatObject> Ref<T> {
    /// An owning reference, for callers that keep the object beyond this call.
    pub fn arc(&self) -> Arc<T> {
        let p = self.object.as_ptr().cast_const();
        // SAFETY: `p` is `Arc::as_ptr` of the `Arc<T>` the slot holds, alive while our use is.
        unsafe {
            Arc::increment_strong_count(p);
            Arc::from_raw(p)
        }
    }
}

impl<T: DatObject> Deref for Ref<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the slot keeps the object alive while our use exists (module invariant).
        unsafe { self.object.as_ref() }
    }
}

impl<T: DatObject + std::fmt::Debug> std::fmt::Debug for Ref<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

struct FreeList {
    free: Vec<u32>,
    next: u32,
}

fn free_list() -> &'static Mutex<FreeList> {
    // Index 0 is never handed out, so no handle's low bits are all zero by accident.
    static FREE: Mutex<FreeList> = parking_lot::const_mutex(FreeList { free: Vec::new(), next: 1 });
    &FREE
}

/// Registers `object` and returns its new handle. Fails with
/// `DAT_INSUFFICIENT_RESOURCES` when all 2^20 slots are in use.
pub fn insert<T: DatObject>(object: Arc<T>) -> DatResult<Handle> {
    let index = {
        let mut fl = free_list().lock();
        match fl.free.pop() {
            Some(i) => i,
            None if (fl.next as usize) < SLOTS => {
                fl.next += 1;
                fl.next - 1
            }
            None => return Err(DatError::insufficient(crate::codes::DAT_RESOURCE_MEMORY)),
        }
    };
    let s = slot(index as usize);
    let data = NonNull::new(Arc::into_raw(object).cast_mut()).expect("an Arc is never NULL").cast::<()>();
    // SAFETY: the index came off the free list, so the slot is neither live nor DYING and no one
    // else reads or writes `entry` until the store below publishes it.
    unsafe { *s.entry.get() = Some(Entry { data, release: release_arc::<T> }) };
    s.context.store(0, Ordering::Relaxed);
    let word = s.state.fetch_or(TAG << TAG_SHIFT | kind_of::<T>() << TYPE_SHIFT, Ordering::Release);
    Ok(Handle::encode(kind_of::<T>(), ((word >> GEN_SHIFT) & GEN_MASK) as u32, index))
}

/// Takes a use of `h`'s slot if `h` is a live handle of type number `kind`.
#[inline(always)]
fn enter(h: Handle, kind: u64) -> Option<Use> {
    if !h.is_ours_of_kind(kind) {
        return None;
    }
    slot(h.index()).enter(h)
}

/// Looks up a live handle of type `T`. `invalid` is the DAT_INVALID_HANDLE subtype to report.
#[inline]
pub fn get<T: DatObject>(h: Handle, invalid: u32) -> DatResult<Ref<T>> {
    let Some(used) = enter(h, kind_of::<T>()) else {
        return Err(DatError::invalid_handle(invalid));
    };
    // SAFETY: our use was taken on a live slot, so `entry` is set (insert writes it before
    // publishing the tag) and stays put while the use lasts (module invariant).
    let entry = unsafe { (*used.0.entry.get()).as_ref().unwrap_unchecked() };
    // The slot's word has `T`'s type number, and only `T` is registered under it: the object is a
    // `T` (module comment).
    Ok(Ref { object: entry.data.cast::<T>(), _use: used })
}

/// Like [`get`] but for a raw C pointer value.
#[inline]
pub fn get_ptr<T: DatObject>(p: *const libc::c_void, invalid: u32) -> DatResult<Ref<T>> {
    get(Handle::from_ptr(p), invalid)
}

/// Removes a handle; later lookups of it fail at once. Returns the object if it was live (and
/// this call, not a concurrent one, removed it). Lookups in flight keep their object.
pub fn remove<T: DatObject>(h: Handle) -> Option<Arc<T>> {
    let found = get::<T>(h, 0).ok()?;
    let state = &found._use.0.state;
    let mut word = state.load(Ordering::Relaxed);
    loop {
        // Our use pins the generation, so only a concurrent remove can have cleared the tag.
        if word & LIVE_MASK == 0 {
            return None;
        }
        match state.compare_exchange_weak(word, word & !LIVE_MASK | DYING, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => break,
            Err(now) => word = now,
        }
    }
    Some(found.arc()) // dropping `found` gives our use back; the last use reclaims the slot
}

/// How many uses of a live handle are held at this moment (lookups whose `Ref` is alive), or
/// None if the handle is not live. A read-modify-write of the slot's word with release
/// ordering: whatever the caller stored before it is seen by every lookup it does not count
/// (such a lookup's `fetch_add` comes later in the word's modification order and acquires).
pub fn uses(h: Handle) -> Option<u32> {
    if !h.is_ours() {
        return None;
    }
    let word = slot(h.index()).state.fetch_add(0, Ordering::AcqRel);
    is_live_word_of(word, h).then_some((word & USES_MASK) as u32)
}

/// A use of any live handle of ours, whatever its type.
fn enter_any(h: Handle) -> Option<Use> {
    enter(h, h.kind())
}

/// The type of any live handle of ours.
pub fn type_of(h: Handle) -> Option<HandleType> {
    enter_any(h).and_then(|_| h.claimed_type())
}

/// Sets the consumer context of any live handle. False if the handle is not live.
pub fn set_context(h: Handle, context: u64) -> bool {
    enter_any(h).map(|used| used.0.context.store(context, Ordering::Relaxed)).is_some()
}

/// The consumer context of any live handle.
pub fn context(h: Handle) -> Option<u64> {
    enter_any(h).map(|used| used.0.context.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Test objects take type numbers no DAT object has (11, 13, 14): each number has one type.
    #[derive(Debug)]
    pub struct Thing(u32);
    impl DatObject for Thing {
        type Kind = Kind<11>;
    }
    impl ObjectKind for Kind<11> {
        type Object = Thing;
    }
    #[derive(Debug)]
    pub struct Other;
    impl DatObject for Other {
        type Kind = Kind<13>;
    }
    impl ObjectKind for Kind<13> {
        type Object = Other;
    }

    #[test]
    fn lifecycle_and_validation() {
        let h = insert(Arc::new(Thing(7))).unwrap();
        assert!(h.is_ours());
        assert_eq!(get::<Thing>(h, 0xf).unwrap().0, 7);
        assert_eq!(uses(h), Some(0), "live, and the Ref above gave its use back");
        assert_eq!(type_of(h), None, "type number 11 is no DAT handle type");
        // wrong type
        assert_eq!(get::<Other>(h, 0xc).unwrap_err(), DatError::invalid_handle(0xc));
        // garbage
        assert!(get::<Thing>(Handle(0x1234), 0xf).is_err());
        assert!(get::<Thing>(Handle(u64::MAX), 0xf).is_err());
        assert!(get::<Thing>(Handle::NULL, 0xf).is_err());
        // context
        assert!(set_context(h, 99));
        assert_eq!(context(h), Some(99));
        // freed
        assert!(remove::<Thing>(h).is_some());
        assert!(get::<Thing>(h, 0xf).is_err());
        assert!(remove::<Thing>(h).is_none());
        assert_eq!(uses(h), None);
        assert_eq!(context(h), None);
        // slot reuse gives a different handle value
        let h2 = insert(Arc::new(Thing(8))).unwrap();
        assert_ne!(h, h2);
        assert!(get::<Thing>(h, 0xf).is_err());
        assert_eq!(get::<Thing>(h2, 0xf).unwrap().0, 8);
    }

    /// Values with our tag that no insert made: every one fails without a slot being read past
    /// its word (a slot never used, another generation, another type number).
    #[test]
    fn forged_handles_fail() {
        let h = insert(Arc::new(Thing(1))).unwrap();
        let far_index = Handle(h.0 | INDEX_MASK); // the last slot: never handed out in a test
        assert_eq!(slot(far_index.index()).state.load(Ordering::Relaxed), 0);
        assert_eq!(get::<Thing>(far_index, 0x3).unwrap_err(), DatError::invalid_handle(0x3));
        let next_gen = Handle(h.0 ^ 1 << GEN_SHIFT);
        assert_eq!(get::<Thing>(next_gen, 0x3).unwrap_err(), DatError::invalid_handle(0x3));
        for kind in 0..16u64 {
            let other_kind = Handle(h.0 & !(0xf << TYPE_SHIFT) | kind << TYPE_SHIFT);
            assert_eq!(get::<Thing>(other_kind, 0x3).is_ok(), kind == 11, "type number {kind}");
            assert_eq!(get::<Other>(other_kind, 0x4).unwrap_err(), DatError::invalid_handle(0x4));
        }
        let untagged = Handle(h.0 & !(0xfff << TAG_SHIFT));
        assert_eq!(get::<Thing>(untagged, 0x3).unwrap_err(), DatError::invalid_handle(0x3));
        assert!(remove::<Thing>(h).is_some());
        assert_eq!(get::<Thing>(h, 0x3).unwrap_err(), DatError::invalid_handle(0x3));
    }

    /// An object whose drop is recorded outside its own memory, so a reader can tell, without
    /// touching freed memory, whether the object it holds was dropped under it.
    pub struct Tracked(usize);
    static DROPPED: [std::sync::atomic::AtomicBool; 4096] = [const { std::sync::atomic::AtomicBool::new(false) }; 4096];
    impl Drop for Tracked {
        fn drop(&mut self) {
            DROPPED[self.0].store(true, Ordering::SeqCst);
        }
    }
    impl DatObject for Tracked {
        type Kind = Kind<14>;
    }
    impl ObjectKind for Kind<14> {
        type Object = Tracked;
    }

    #[test]
    fn a_freed_object_outlives_its_last_ref() {
        let h = insert(Arc::new(Tracked(0))).unwrap();
        let held = get::<Tracked>(h, 0).unwrap();
        let removed = remove::<Tracked>(h).expect("live");
        assert!(get::<Tracked>(h, 0).is_err(), "a removed handle stops resolving at once");
        assert!(remove::<Tracked>(h).is_none(), "only one remove wins");
        drop(removed);
        assert!(!DROPPED[0].load(Ordering::SeqCst), "a Ref keeps the object");
        assert_eq!(held.0, 0);
        drop(held);
        assert!(DROPPED[0].load(Ordering::SeqCst), "the last use drops it");
    }

    /// Readers look handles up and check their object while writers free and re-insert them
    /// (reusing slots, so stale handles hit newer generations): every lookup either fails or
    /// yields the object of exactly that handle, never one that has been dropped.
    #[test]
    fn concurrent_lookup_and_free() {
        use std::sync::atomic::AtomicBool;
        const LIVE_SET: usize = 8;
        const ROUNDS: usize = 400;
        let handles: Arc<Vec<AtomicU64>> = Arc::new((0..LIVE_SET).map(|_| AtomicU64::new(0)).collect());
        let ids: Arc<Mutex<std::collections::HashMap<u64, usize>>> = Default::default();
        let stop = Arc::new(AtomicBool::new(false));
        // Readers that have looked up a live handle at least once: the writer starts freeing
        // only when every reader runs (on a loaded machine they may be scheduled late).
        let running = Arc::new(AtomicU64::new(0));
        let mut next_id = 1;
        let mut fresh = |ids: &Mutex<std::collections::HashMap<u64, usize>>| {
            let id = next_id;
            next_id += 1;
            let h = insert(Arc::new(Tracked(id))).unwrap();
            ids.lock().insert(h.0, id);
            h
        };
        for cell in handles.iter() {
            cell.store(fresh(&ids).0, Ordering::SeqCst);
        }
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let (handles, ids, stop, running) = (handles.clone(), ids.clone(), stop.clone(), running.clone());
                std::thread::spawn(move || {
                    let mut hits = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for cell in handles.iter() {
                            let h = Handle(cell.load(Ordering::SeqCst));
                            if let Ok(obj) = get::<Tracked>(h, 0) {
                                assert!(!DROPPED[obj.0].load(Ordering::SeqCst), "use after drop");
                                assert_eq!(ids.lock().get(&h.0), Some(&obj.0), "wrong object for handle");
                                std::hint::spin_loop();
                                assert!(!DROPPED[obj.0].load(Ordering::SeqCst), "dropped while held");
                                hits += 1;
                                if hits == 1 {
                                    running.fetch_add(1, Ordering::SeqCst);
                                }
                            }
                        }
                    }
                })
            })
            .collect();
        while running.load(Ordering::SeqCst) < 3 {
            std::thread::yield_now();
        }
        for round in 0..ROUNDS {
            let cell = &handles[round % LIVE_SET];
            let old = Handle(cell.load(Ordering::SeqCst));
            let obj = remove::<Tracked>(old).expect("only this thread removes");
            assert!(get::<Tracked>(old, 0).is_err());
            drop(obj);
            cell.store(fresh(&ids).0, Ordering::SeqCst);
            if round % 16 == 0 {
                std::thread::yield_now();
            }
        }
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().unwrap();
        }
        for cell in handles.iter() {
            remove::<Tracked>(Handle(cell.load(Ordering::SeqCst))).expect("live");
        }
        // Every object that was removed and is no longer referenced has been dropped.
        assert!((1..next_id).all(|id| DROPPED[id].load(Ordering::SeqCst)), "an object leaked");
    }
}
