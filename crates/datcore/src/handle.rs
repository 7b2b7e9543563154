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
//! Lookup decodes the value and reads one slot under that slot's own lock: no global lock,
//! no allocation. A freed handle fails because its slot's generation moved on; a wrong-type
//! handle fails on the type; garbage fails on the tag or the index. The caller picks the
//! `DAT_INVALID_HANDLE_*` subtype, so the same lookup serves every function.

use crate::error::{DatError, DatResult};
use parking_lot::{Mutex, RwLock};
use std::any::Any;
use std::sync::{Arc, OnceLock};

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
const CHUNK_BITS: u32 = 10;
const CHUNK: usize = 1 << CHUNK_BITS;
const CHUNKS: usize = 1 << (INDEX_BITS - CHUNK_BITS);

impl Handle {
    pub const NULL: Handle = Handle(0);

    fn encode(ty: HandleType, gen: u32, index: u32) -> Handle {
        Handle(TAG << TAG_SHIFT | (ty as u64) << TYPE_SHIFT | (gen as u64 & GEN_MASK) << GEN_SHIFT | index as u64)
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
        HandleType::from_bits((self.0 >> TYPE_SHIFT) & 0xf)
    }

    fn index(self) -> usize {
        (self.0 & ((1 << INDEX_BITS) - 1)) as usize
    }

    fn generation(self) -> u32 {
        ((self.0 >> GEN_SHIFT) & GEN_MASK) as u32
    }

    pub fn as_ptr(self) -> *mut libc::c_void {
        self.0 as usize as *mut libc::c_void
    }

    pub fn from_ptr(p: *const libc::c_void) -> Handle {
        Handle(p as usize as u64)
    }
}

/// A DAT object stored in the registry.
pub trait DatObject: Any + Send + Sync {
    const TYPE: HandleType;
}

struct Slot {
    generation: u32,
    ty: Option<HandleType>,
    object: Option<Arc<dyn Any + Send + Sync>>,
    /// DAT consumer context (`dat_set_consumer_context`).
    context: u64,
}

struct Table {
    chunks: Vec<OnceLock<Box<[RwLock<Slot>]>>>,
    free: Mutex<FreeList>,
}

struct FreeList {
    free: Vec<u32>,
    next: u32,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| Table {
        chunks: (0..CHUNKS).map(|_| OnceLock::new()).collect(),
        // Index 0 is never handed out, so no handle's low bits are all zero by accident.
        free: Mutex::new(FreeList { free: Vec::new(), next: 1 }),
    })
}

impl Table {
    fn slot(&self, index: usize) -> Option<&RwLock<Slot>> {
        let chunk = self.chunks.get(index >> CHUNK_BITS)?.get()?;
        chunk.get(index & (CHUNK - 1))
    }

    fn slot_or_create(&self, index: usize) -> &RwLock<Slot> {
        let chunk = self.chunks[index >> CHUNK_BITS].get_or_init(|| {
            (0..CHUNK).map(|_| RwLock::new(Slot { generation: 1, ty: None, object: None, context: 0 })).collect()
        });
        &chunk[index & (CHUNK - 1)]
    }
}

/// Registers `object` and returns its new handle. Fails with
/// `DAT_INSUFFICIENT_RESOURCES` when all 2^20 slots are in use.
pub fn insert<T: DatObject>(object: Arc<T>) -> DatResult<Handle> {
    let t = table();
    let index = {
        let mut fl = t.free.lock();
        match fl.free.pop() {
            Some(i) => i,
            None if (fl.next as usize) < CHUNK * CHUNKS => {
                fl.next += 1;
                fl.next - 1
            }
            None => return Err(DatError::insufficient(crate::codes::DAT_RESOURCE_MEMORY)),
        }
    };
    let mut slot = t.slot_or_create(index as usize).write();
    slot.ty = Some(T::TYPE);
    slot.object = Some(object);
    slot.context = 0;
    Ok(Handle::encode(T::TYPE, slot.generation, index))
}

fn with_slot<R>(h: Handle, ty: HandleType, f: impl FnOnce(&RwLock<Slot>) -> Option<R>) -> Option<R> {
    if h.claimed_type() != Some(ty) {
        return None;
    }
    f(table().slot(h.index())?)
}

fn live(slot: &Slot, h: Handle, ty: HandleType) -> bool {
    slot.ty == Some(ty) && slot.generation & GEN_MASK as u32 == h.generation()
}

/// Looks up a live handle of type `T`. `invalid` is the DAT_INVALID_HANDLE subtype to report.
pub fn get<T: DatObject>(h: Handle, invalid: u32) -> DatResult<Arc<T>> {
    with_slot(h, T::TYPE, |s| {
        let slot = s.read();
        if !live(&slot, h, T::TYPE) {
            return None;
        }
        slot.object.clone()?.downcast::<T>().ok()
    })
    .ok_or(DatError::invalid_handle(invalid))
}

/// Like [`get`] but for a raw C pointer value.
pub fn get_ptr<T: DatObject>(p: *const libc::c_void, invalid: u32) -> DatResult<Arc<T>> {
    get(Handle::from_ptr(p), invalid)
}

/// Removes a handle; later lookups of it fail. Returns the object if it was live.
pub fn remove<T: DatObject>(h: Handle) -> Option<Arc<T>> {
    with_slot(h, T::TYPE, |s| {
        let mut slot = s.write();
        if !live(&slot, h, T::TYPE) {
            return None;
        }
        slot.generation = slot.generation.wrapping_add(1) & GEN_MASK as u32;
        slot.ty = None;
        slot.context = 0;
        let obj = slot.object.take();
        drop(slot);
        table().free.lock().free.push(h.index() as u32);
        obj?.downcast::<T>().ok()
    })
}

/// The type of any live handle of ours.
pub fn type_of(h: Handle) -> Option<HandleType> {
    let ty = h.claimed_type()?;
    with_slot(h, ty, |s| live(&s.read(), h, ty).then_some(ty))
}

/// Sets the consumer context of any live handle. False if the handle is not live.
pub fn set_context(h: Handle, context: u64) -> bool {
    let Some(ty) = h.claimed_type() else { return false };
    with_slot(h, ty, |s| {
        let mut slot = s.write();
        live(&slot, h, ty).then(|| slot.context = context)
    })
    .is_some()
}

/// The consumer context of any live handle.
pub fn context(h: Handle) -> Option<u64> {
    let ty = h.claimed_type()?;
    with_slot(h, ty, |s| {
        let slot = s.read();
        live(&slot, h, ty).then_some(slot.context)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Thing(u32);
    impl DatObject for Thing {
        const TYPE: HandleType = HandleType::Pz;
    }
    #[derive(Debug)]
    struct Other;
    impl DatObject for Other {
        const TYPE: HandleType = HandleType::Ep;
    }

    #[test]
    fn lifecycle_and_validation() {
        let h = insert(Arc::new(Thing(7))).unwrap();
        assert!(h.is_ours());
        assert_eq!(get::<Thing>(h, 0xf).unwrap().0, 7);
        assert_eq!(type_of(h), Some(HandleType::Pz));
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
        assert_eq!(type_of(h), None);
        // slot reuse gives a different handle value
        let h2 = insert(Arc::new(Thing(8))).unwrap();
        assert_ne!(h, h2);
        assert!(get::<Thing>(h, 0xf).is_err());
        assert_eq!(get::<Thing>(h2, 0xf).unwrap().0, 8);
    }
}
