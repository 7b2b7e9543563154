//! The handle registry: every DAT handle a C caller holds is a value from here.
//!
//! A handle is the address of a slot in one array the library reserves when it is loaded (in
//! `.bss`: the kernel commits a page when it is first touched, and the array is never
//! unmapped). The slot's first word is the face's `DAT_PROVIDER` table, which is what
//! `dat_redirection.h` says a handle is: a `DAT_<CALL>` macro reads `*(DAT_PROVIDER **)handle`
//! and calls the slot of that table, which is the face's own export. So binaries that call
//! through the macros (Intel MPI 2018 does, after `dats_get_ia_handle`) reach the same code as
//! the `dat_*` functions.
//!
//! ```text
//!  slot (32 bytes, aligned to 32)
//!  word 0   provider   the face's DAT_PROVIDER table; set when first used, never cleared
//!  word 1   state      type (4 bits) | LIVE | DYING | uses (31 bits)
//!  word 2   object     the Arc'd object's address, while LIVE or DYING
//!  word 3   context    the consumer context (dat_set_consumer_context)
//! ```
//!
//! Lookup ([`get`]) is lock-free and reads no memory outside the array: it first checks that the
//! value is the address of a slot (one subtraction and one mask: inside the array and aligned to
//! a slot, so NULL, small integers, pointers into the caller's memory and a pointer one word into
//! a real handle all fail here); then it adds one to the slot's use count and checks the word it
//! read (LIVE and the expected type), in one atomic `fetch_add`. No lock, no allocation, no `Arc`
//! reference count: the [`Ref`] it returns borrows the object from the slot, and dropping the
//! `Ref` gives the use back. A wrong-type handle fails on the type, a freed one on LIVE. The
//! caller picks the `DAT_INVALID_HANDLE_*` subtype, so the same lookup serves every function.
//!
//! ## Freed handles stay refused
//!
//! A handle carries no generation (it is a plain address), so a freed slot is not used again
//! until [`QUARANTINE`] (2^20) other objects have been created since it was freed: freed slots
//! wait in a first-in first-out queue stamped with the creation count, and a new object takes the
//! oldest one only when its stamp is old enough, else a never-used slot. Until then a freed
//! handle is refused by every call, and a `DAT_<CALL>` macro on it still finds the face's table
//! (word 0 is never cleared) and gets `DAT_INVALID_HANDLE`. The array has room for 2^21 slots:
//! 2^20 in quarantine and at least 2^20 live objects; past that `insert` fails with
//! `DAT_INSUFFICIENT_RESOURCES`. A program that creates and frees objects in a loop touches at most
//! (2^20 + its live objects) slots, 32 bytes each, before slots are reused, and the retired
//! queue's 8 bytes per quarantined slot: its RSS grows by about 41 MiB over its first two million
//! or so objects and then stays flat (the cost of refusing freed handles without a generation).
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
//! Each slot's `state` word holds `type | LIVE | DYING | uses`. The invariant: **the slot's object
//! stays in the slot while `uses > 0`, and only a slot with `LIVE` set hands it out.** [`remove`]
//! clears `LIVE` (and sets `DYING`) in one compare-and-swap, so every later lookup fails at once;
//! whoever then brings `uses` to zero on a `DYING` slot (the remover itself, or the last `Ref` to
//! be dropped, possibly in another thread) clears the word's flags and type in one
//! compare-and-swap that only one thread can win, and only that thread takes the object out and
//! queues the slot for reuse. A lookup that raced with the free and lost (it saw a word without
//! `LIVE` or of another type) never reads the object: it just gives its use back. [`insert`]
//! writes the object before it publishes `LIVE` with release ordering, and a lookup's `fetch_add`
//! acquires, so a lookup that sees `LIVE` sees the object. A free therefore never waits for users
//! (a thread may sit in `dat_evd_wait` on an EVD another thread frees): the object is dropped when
//! the last use ends, as an `Arc` would be.

use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::any::Any;
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

mod slot_word;
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

/// A handle value, as a C caller holds it (`DAT_HANDLE` is `void *`): for our own handles, the
/// address of a slot (module comment).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Handle(pub u64);

/// How many slots there are.
const SLOTS: usize = 1 << 21;
/// A slot's size: a power of two, so the range and alignment check is one mask.
const SLOT_BYTES: usize = 32;
const ARRAY_BYTES: usize = SLOTS * SLOT_BYTES;
/// The bits of `handle - array` that are zero exactly for a slot's address: those at or above
/// the array's size and those below a slot's alignment.
const NOT_A_SLOT: u64 = !(ARRAY_BYTES as u64 - 1) | (SLOT_BYTES as u64 - 1);
/// How many objects must be created after a free before its slot (its handle value) is used
/// again.
pub const QUARANTINE: u32 = 1 << 20;

impl Handle {
    pub const NULL: Handle = Handle(0);

    /// The offset of the slot this value addresses, if it addresses one: inside the array and
    /// aligned to a slot. One subtraction and one mask; reads nothing.
    #[inline(always)]
    fn slot_offset(self) -> Option<usize> {
        let offset = self.0.wrapping_sub(SLOT_ARRAY.as_ptr() as u64);
        (offset & NOT_A_SLOT == 0).then_some(offset as usize)
    }

    /// True if the value is the address of one of our slots (it may be freed, or never used).
    /// Values that are not are never read.
    #[inline(always)]
    pub fn is_ours(self) -> bool {
        self.slot_offset().is_some()
    }

    pub fn is_null(self) -> bool {
        self.0 == 0
    }

    /// The slot this value addresses, if it addresses one.
    #[inline(always)]
    fn slot(self) -> Option<&'static Slot> {
        let offset = self.slot_offset()?;
        // SAFETY: `offset` is inside the array and a multiple of the slot size: the address of
        // one of its slots, derived from the array's own pointer.
        Some(unsafe { &*SLOT_ARRAY.as_ptr().byte_add(offset) })
    }

    /// The type of the object this handle's slot holds while it is live or being freed (a `Ref`
    /// of it is held); None for other values.
    pub fn held_type(self) -> Option<HandleType> {
        let word = self.slot()?.state.load(Ordering::Acquire);
        (word & (LIVE | DYING) != 0).then(|| HandleType::from_bits(word_kind(word))).flatten()
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

/// Handle type number `N` as a type (`N` below 16: the slot word has 4 bits for it).
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

use slot_word::{DYING, LIVE, USES_MASK};

/// The type number in a slot word.
#[inline(always)]
fn word_kind(word: u64) -> u64 {
    slot_word::kind(word)
}

#[repr(C, align(32))]
struct Slot {
    /// The face's `DAT_PROVIDER *` (the first word of a handle, module comment).
    provider: AtomicPtr<libc::c_void>,
    /// `type | LIVE | DYING | uses`; every lookup and free goes through it.
    state: AtomicU64,
    /// The object's address (of the type the slot word's type number names), which is also
    /// the owning `Arc`'s pointer. Written only by the thread that owns the slot while it is
    /// neither LIVE nor DYING (the inserter before publishing LIVE, the reclaimer after its
    /// winning CAS); read only by holders of a use taken while LIVE was set.
    object: UnsafeCell<*const ()>,
    /// DAT consumer context (`dat_set_consumer_context`).
    context: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<Slot>() == SLOT_BYTES);
const _: () = assert!(std::mem::offset_of!(Slot, provider) == 0);

// SAFETY: `object` is accessed only under the protocol above (exclusive writers while the slot
// is unpublished, shared readers while they hold a use), and the object is `Send + Sync`.
unsafe impl Sync for Slot {}

/// The slots, all zero (free, no object) until first used. In `.bss`: the kernel commits a
/// page of it when it is first touched, so untouched slots cost no memory.
static SLOT_ARRAY: [Slot; SLOTS] = [const {
    Slot {
        provider: AtomicPtr::new(std::ptr::null_mut()),
        state: AtomicU64::new(0),
        object: UnsafeCell::new(std::ptr::null()),
        context: AtomicU64::new(0),
    }
}; SLOTS];

/// The `DAT_PROVIDER` table every new handle's first word points at: the face's, set when
/// the face's library is loaded ([`set_provider_table`]).
static PROVIDER_TABLE: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Sets the table the first word of every handle made from now on points at (a face calls it
/// once, when its library is loaded, before any handle exists).
pub fn set_provider_table(table: *const libc::c_void) {
    PROVIDER_TABLE.store(table.cast_mut(), Ordering::Relaxed);
}

/// The table handles point at (NULL before a face set one: the core's own tests).
pub fn provider_table() -> *const libc::c_void {
    PROVIDER_TABLE.load(Ordering::Relaxed)
}

/// How to give back the `Arc` of an object of each type number (set by the first insert of
/// that type; a slot's type number tells which one its object needs).
static RELEASE: [AtomicUsize; 16] = [const { AtomicUsize::new(0) }; 16];

/// Gives back the `Arc<T>` behind `data`.
///
/// # Safety
/// `data` must come from `Arc::into_raw` of an `Arc<T>` not given back yet.
unsafe fn release_arc<T>(data: *const ()) {
    // SAFETY: the caller's contract.
    drop(unsafe { Arc::from_raw(data.cast::<T>()) });
}

impl Slot {
    /// This slot's handle value.
    fn handle(&'static self) -> Handle {
        Handle(self as *const Slot as u64)
    }

    /// Takes a use and checks the word it read: LIVE and type number `kind`. On a mismatch the
    /// use is given back and None returned.
    #[inline(always)]
    fn enter(&'static self, kind: u64) -> Option<Use> {
        let used = Use(self);
        slot_word::is_live_of(slot_word::enter(&self.state), kind).then_some(used)
    }

    /// Takes a use of a live slot of any type; returns the use and the type number.
    fn enter_any(&'static self) -> Option<(Use, u64)> {
        let used = Use(self);
        let word = slot_word::enter(&self.state);
        (word & LIVE != 0).then_some((used, word_kind(word)))
    }

    /// Gives a use back; the last use of a freed (`DYING`) slot reclaims it.
    #[inline(always)]
    fn leave(&'static self) {
        if slot_word::leave(&self.state) {
            self.reclaim();
        }
    }

    /// Clears a `DYING` slot without uses, drops its object and queues the slot for reuse. Only
    /// the thread whose compare-and-swap wins does anything.
    #[cold]
    #[inline(never)]
    fn reclaim(&'static self) {
        let Some(word) = slot_word::reclaim(&self.state) else { return };
        // SAFETY: the winning CAS made the slot neither live nor DYING and it is not queued for
        // reuse yet: no lookup reads `object` and no insert writes it; we own it.
        let data = unsafe { std::mem::replace(&mut *self.object.get(), std::ptr::null()) };
        self.context.store(0, Ordering::Relaxed);
        let release = RELEASE[word_kind(word) as usize].load(Ordering::Relaxed);
        free_slots().lock().retire(self);
        if !data.is_null() && release != 0 {
            // SAFETY: RELEASE[kind] holds `release_arc::<T>` for the T registered under this
            // slot's type number (stored by the insert that filled the slot, which happened
            // before the LIVE this DYING followed).
            let release: unsafe fn(*const ()) = unsafe { std::mem::transmute(release) };
            // SAFETY: `data` is the `Arc` insert stored, given back once, here; the object's own
            // drop runs outside every registry lock.
            unsafe { release(data) };
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

/// Room in the retired queue beyond the quarantine, for slots freed while fewer than
/// [`QUARANTINE`] objects were created since (up to the program's live objects).
const RETIRED_SPARE: usize = 1 << 16;

/// Where new objects' slots come from: slots freed long enough ago, else never-used ones.
struct FreeSlots {
    /// Freed slots, oldest first, each with the creation count at its free (wrapping: a slot
    /// waits fewer than 2^32 creations, module comment).
    retired: VecDeque<(u32, u32)>,
    /// Objects created so far (wrapping).
    created: u32,
    /// The first slot never used.
    next: u32,
}

impl FreeSlots {
    /// The slot for the next object, or None when every slot is live or in quarantine.
    fn take(&mut self) -> Option<u32> {
        self.created = self.created.wrapping_add(1);
        match self.retired.front() {
            Some(&(index, freed_at)) if self.created.wrapping_sub(freed_at) > QUARANTINE => {
                self.retired.pop_front();
                Some(index)
            }
            _ if (self.next as usize) < SLOTS => {
                self.next += 1;
                Some(self.next - 1)
            }
            _ => None,
        }
    }

    fn retire(&mut self, slot: &'static Slot) {
        let index = (slot as *const Slot as usize - SLOT_ARRAY.as_ptr() as usize) / SLOT_BYTES;
        if self.retired.capacity() == 0 {
            // Room for the whole quarantine at once: grown by doubling, the queue would end at
            // twice that, and its ring would touch every page of it (8 MiB more RSS).
            self.retired.reserve_exact(QUARANTINE as usize + RETIRED_SPARE);
        }
        self.retired.push_back((index as u32, self.created));
    }
}

fn free_slots() -> &'static Mutex<FreeSlots> {
    static FREE: Mutex<FreeSlots> =
        parking_lot::const_mutex(FreeSlots { retired: VecDeque::new(), created: 0, next: 0 });
    &FREE
}

/// Registers `object` and returns its new handle. Fails with `DAT_INSUFFICIENT_RESOURCES` when
/// every slot is live or in quarantine.
pub fn insert<T: DatObject>(object: Arc<T>) -> DatResult<Handle> {
    insert_numbered(object).map(|(h, _)| h)
}

/// [`insert`], also returning the object's creation number (wrapping).
fn insert_numbered<T: DatObject>(object: Arc<T>) -> DatResult<(Handle, u32)> {
    let (index, number) = {
        let mut free = free_slots().lock();
        let index = free.take().ok_or(DatError::insufficient(crate::codes::DAT_RESOURCE_MEMORY))?;
        (index, free.created)
    };
    let s = &SLOT_ARRAY[index as usize];
    RELEASE[kind_of::<T>() as usize].store(release_arc::<T> as unsafe fn(*const ()) as usize, Ordering::Relaxed);
    // SAFETY: the slot came from the free slots, so it is neither live nor DYING and no one else
    // reads or writes `object` until the store below publishes it.
    unsafe { *s.object.get() = Arc::into_raw(object).cast::<()>() };
    s.context.store(0, Ordering::Relaxed);
    s.provider.store(PROVIDER_TABLE.load(Ordering::Relaxed), Ordering::Relaxed);
    slot_word::publish(&s.state, kind_of::<T>());
    Ok((s.handle(), number))
}

/// Takes a use of `h`'s slot if `h` is a live handle of type number `kind`.
#[inline(always)]
fn enter(h: Handle, kind: u64) -> Option<Use> {
    h.slot()?.enter(kind)
}

/// Looks up a live handle of type `T`. `invalid` is the DAT_INVALID_HANDLE subtype to report.
#[inline]
pub fn get<T: DatObject>(h: Handle, invalid: u32) -> DatResult<Ref<T>> {
    let Some(used) = enter(h, kind_of::<T>()) else {
        return Err(DatError::invalid_handle(invalid));
    };
    // SAFETY: our use was taken on a live slot, so `object` is set (insert writes it before
    // publishing LIVE) and stays put while the use lasts (module invariant).
    let data = unsafe { *used.0.object.get() };
    // The slot's word has `T`'s type number, and only `T` is registered under it: the object is a
    // `T` (module comment).
    // SAFETY: insert stored an `Arc`'s pointer, never NULL.
    let object = unsafe { NonNull::new_unchecked(data.cast::<T>().cast_mut()) };
    Ok(Ref { object, _use: used })
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
    // Our use keeps the slot from being reclaimed, so only a concurrent remove can have
    // cleared LIVE.
    if !slot_word::mark_dying(&found._use.0.state) {
        return None;
    }
    Some(found.arc()) // dropping `found` gives our use back; the last use reclaims the slot
}

/// How many uses of a live handle are held at this moment (lookups whose `Ref` is alive), or
/// None if the handle is not live. A read-modify-write of the slot's word with release
/// ordering: whatever the caller stored before it is seen by every lookup it does not count
/// (such a lookup's `fetch_add` comes later in the word's modification order and acquires).
pub fn uses(h: Handle) -> Option<u32> {
    let word = h.slot()?.state.fetch_add(0, Ordering::AcqRel);
    (word & LIVE != 0).then_some((word & USES_MASK) as u32)
}

/// A use of any live handle of ours, whatever its type, and its type number.
fn enter_any(h: Handle) -> Option<(Use, u64)> {
    h.slot()?.enter_any()
}

/// The type of any live handle of ours.
pub fn type_of(h: Handle) -> Option<HandleType> {
    enter_any(h).and_then(|(_, kind)| HandleType::from_bits(kind))
}

/// Sets the consumer context of any live handle. False if the handle is not live.
pub fn set_context(h: Handle, context: u64) -> bool {
    enter_any(h).map(|(used, _)| used.0.context.store(context, Ordering::Relaxed)).is_some()
}

/// The consumer context of any live handle.
pub fn context(h: Handle) -> Option<u64> {
    enter_any(h).map(|(used, _)| used.0.context.load(Ordering::Relaxed))
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
        // context
        assert!(set_context(h, 99));
        assert_eq!(context(h), Some(99));
        // freed
        assert!(remove::<Thing>(h).is_some());
        assert!(get::<Thing>(h, 0xf).is_err());
        assert!(remove::<Thing>(h).is_none());
        assert_eq!(uses(h), None);
        assert_eq!(context(h), None);
        // a new object gets another handle value
        let h2 = insert(Arc::new(Thing(8))).unwrap();
        assert_ne!(h, h2);
        assert!(get::<Thing>(h, 0xf).is_err());
        assert_eq!(get::<Thing>(h2, 0xf).unwrap().0, 8);
        assert!(remove::<Thing>(h2).is_some());
    }

    /// A handle's first word is the provider table set at its creation, and stays so after it is
    /// freed (a `DAT_<CALL>` macro on a freed handle still reaches our table).
    #[test]
    fn first_word_is_the_provider_table() {
        let h = insert(Arc::new(Thing(3))).unwrap();
        // SAFETY: `h` is the address of a slot of the array, readable for its whole life.
        let first_word = unsafe { *(h.0 as *const *const libc::c_void) };
        assert_eq!(first_word, provider_table());
        assert!(remove::<Thing>(h).is_some());
        // SAFETY: as above; the array is never unmapped.
        let after_free = unsafe { *(h.0 as *const *const libc::c_void) };
        assert_eq!(after_free, first_word);
    }

    /// Values that are not a live handle of the type asked for fail, and none is read outside
    /// the slot array: NULL, small integers, non-canonical values, pointers into the heap, the
    /// stack and the text, a pointer one word (or one byte) into a real handle, the array's
    /// ends, a slot never used, another type number.
    #[test]
    fn garbage_and_forged_handles_fail() {
        let h = insert(Arc::new(Thing(1))).unwrap();
        let heap = Box::new([0u64; 8]);
        let stack = [0u64; 8];
        let text = garbage_and_forged_handles_fail as *const () as u64;
        let array = SLOT_ARRAY.as_ptr() as u64;
        let last_slot = array + ((SLOTS - 1) * SLOT_BYTES) as u64; // never handed out in a test
        let values = [
            0,
            1,
            2,
            4095,
            0xDA72_0000_0000_0005,
            u64::MAX,
            0xffff_8000_0000_0000,
            heap.as_ptr() as u64,
            stack.as_ptr() as u64,
            text,
            h.0 + 8,
            h.0 + 1,
            h.0 - 8,
            array - SLOT_BYTES as u64,
            array + ARRAY_BYTES as u64,
            last_slot,
        ];
        for v in values {
            let g = Handle(v);
            assert_eq!(get::<Thing>(g, 0x3).unwrap_err(), DatError::invalid_handle(0x3), "{v:#x}");
            assert_eq!(type_of(g), None, "{v:#x}");
            assert_eq!(context(g), None, "{v:#x}");
            assert!(!set_context(g, 1), "{v:#x}");
            assert!(remove::<Thing>(g).is_none(), "{v:#x}");
            assert_eq!(uses(g), None, "{v:#x}");
        }
        assert!(!Handle(h.0 + 8).is_ours());
        assert!(Handle(last_slot).is_ours(), "a slot's address, though never used");
        assert_eq!(get::<Other>(h, 0x4).unwrap_err(), DatError::invalid_handle(0x4));
        assert_eq!(get::<Thing>(h, 0x3).unwrap().0, 1, "the real handle still resolves");
        assert!(remove::<Thing>(h).is_some());
        assert_eq!(get::<Thing>(h, 0x3).unwrap_err(), DatError::invalid_handle(0x3));
    }

    /// A freed handle's slot is not used again before QUARANTINE other objects were created
    /// since its free. Other tests create objects meanwhile, so the check compares creation
    /// numbers, not this loop's count.
    #[test]
    fn a_freed_handle_is_not_reused_soon() {
        let h = insert(Arc::new(Thing(5))).unwrap();
        assert!(remove::<Thing>(h).is_some());
        let index = ((h.0 - SLOT_ARRAY.as_ptr() as u64) / SLOT_BYTES as u64) as u32;
        let freed_at = free_slots().lock().retired.iter().find(|(i, _)| *i == index).expect("retired").1;
        let mut reused = false;
        for _ in 0..QUARANTINE + 8 {
            let (g, number) = insert_numbered(Arc::new(Thing(6))).unwrap();
            assert!(remove::<Thing>(g).is_some());
            if g == h {
                assert!(number.wrapping_sub(freed_at) > QUARANTINE, "reused after {} creations", number - freed_at);
                reused = true;
                break;
            }
            assert!(get::<Thing>(h, 0x3).is_err(), "the freed handle stays refused");
        }
        assert!(reused, "the slot is used again once its quarantine is over");
        // The loop kept the quarantine full: the retired queue stayed in its first allocation.
        let capacity = free_slots().lock().retired.capacity();
        assert!(capacity <= QUARANTINE as usize + RETIRED_SPARE, "the retired queue grew to {capacity}");
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
