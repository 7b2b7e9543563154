//! Inline sends: small payloads copied into the work request at post time (`IBV_SEND_INLINE`),
//! so the device does not fetch them from registered memory afterwards. OFED's provider sends
//! what fits inline this way (it asks for 64 bytes at QP creation; `tools/bench/qp-trace.c`).
//!
//! A device copying an inline payload reads it from its virtual address and never looks at the
//! lkey, so the check the device makes on every other request (the SGE lies in an MR of the QP's
//! PD, else a local protection error) is ours: [`MrRanges`] keeps each PD's MRs by lkey, and a
//! QP's [`InlineSends`] remembers the last MR range it found a payload in, so a consumer sending
//! from one LMR pays a few compares per message. A payload not found in an MR of the PD goes
//! the ordinary way, and the device reports it as before.

use super::sys;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// The inline size asked for at QP creation (OFED's provider asks the same). A device may
/// grant more (rxe sizes inline data by its work request, 128 bytes for 8 SGEs).
pub const INLINE_REQUEST: u32 = 64;

/// A PD's MRs: lkey to `[start, end)`. `generation` changes at every deregistration, so a range
/// remembered under an older generation may be gone.
pub struct MrRanges {
    by_lkey: Mutex<HashMap<u32, (u64, u64)>>,
    generation: AtomicU64,
}

impl Default for MrRanges {
    fn default() -> Self {
        MrRanges { by_lkey: Mutex::new(HashMap::new()), generation: AtomicU64::new(1) }
    }
}

impl MrRanges {
    pub fn insert(&self, lkey: u32, start: u64, len: u64) {
        self.by_lkey.lock().insert(lkey, (start, start + len));
    }

    pub fn remove(&self, lkey: u32) {
        self.by_lkey.lock().remove(&lkey);
        self.generation.fetch_add(1, Ordering::Release);
    }

    fn get(&self, lkey: u32) -> Option<(u64, u64)> {
        self.by_lkey.lock().get(&lkey).copied()
    }
}

/// The MR range an inline payload was last found in (`span` bytes from `start`), with the
/// [`MrRanges`] generation then (0: nothing remembered).
#[derive(Clone, Copy, Default)]
struct Remembered {
    lkey: u32,
    start: u64,
    span: u64,
    generation: u64,
}

/// A QP's inline sends: the size the device granted and the range last checked (kept with the
/// QP's send queue, under its lock).
pub struct InlineSends {
    max: u32,
    last: Remembered,
}

impl InlineSends {
    /// Inline sends of at most `max` bytes (the `max_inline_data` the device granted; 0: none).
    pub fn new(max: u32) -> InlineSends {
        InlineSends { max, last: Remembered::default() }
    }

    /// `IBV_SEND_INLINE` for a request carrying `sges` (`total` bytes) as its payload, when it
    /// fits and every SGE lies in an MR of `mrs`; else 0. The usual case, every SGE in the range
    /// remembered, is a few compares here; the lookup is out of line.
    #[inline]
    pub fn flag(&mut self, mrs: &MrRanges, sges: &[sys::ibv_sge], total: u64) -> u32 {
        if total > self.max as u64 {
            return 0;
        }
        let generation = mrs.generation.load(Ordering::Acquire);
        match sges {
            [s] if self.last.covers(s, generation) => sys::IBV_SEND_INLINE,
            [] => 0,
            _ => self.flag_looked_up(mrs, sges, generation),
        }
    }

    /// [`InlineSends::flag`] for several SGEs, or one not in the range remembered: each one not
    /// in that range looked up in `mrs` (of `generation`), the range last found remembered.
    #[cold]
    #[inline(never)]
    fn flag_looked_up(&mut self, mrs: &MrRanges, sges: &[sys::ibv_sge], generation: u64) -> u32 {
        for s in sges {
            if self.last.covers(s, generation) {
                continue;
            }
            let (start, end) = (s.addr, s.addr.saturating_add(s.length as u64));
            match mrs.get(s.lkey) {
                Some((lo, hi)) if start >= lo && end <= hi => {
                    self.last = Remembered { lkey: s.lkey, start: lo, span: hi - lo, generation };
                }
                _ => return 0,
            }
        }
        sys::IBV_SEND_INLINE
    }
}

impl Remembered {
    /// Whether `s` lies in this range, remembered under MR `generation`.
    ///
    /// The offset from `start` is taken modulo 2^64 and the SGE's length added with a carry
    /// check: an SGE below `start` wraps to an offset whose sum with the length either carries
    /// or exceeds any span an MR below 2^64 has, so one add and one compare decide it.
    #[inline]
    fn covers(&self, s: &sys::ibv_sge, generation: u64) -> bool {
        self.generation == generation
            && s.lkey == self.lkey
            && matches!(s.addr.wrapping_sub(self.start).checked_add(u64::from(s.length)), Some(end) if end <= self.span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sge(addr: u64, length: u32, lkey: u32) -> sys::ibv_sge {
        sys::ibv_sge { addr, length, lkey }
    }

    #[test]
    fn only_payloads_in_a_live_mr_of_the_pd_go_inline() {
        let mrs = MrRanges::default();
        mrs.insert(7, 0x1000, 0x100);
        let mut i = InlineSends::new(64);
        let mut flag = |s: &[sys::ibv_sge]| i.flag(&mrs, s, s.iter().map(|s| s.length as u64).sum());
        assert_eq!(flag(&[sge(0x1000, 8, 7)]), sys::IBV_SEND_INLINE);
        assert_eq!(flag(&[sge(0x1000, 8, 7)]), sys::IBV_SEND_INLINE, "remembered range");
        assert_eq!(flag(&[sge(0x10f8, 16, 7)]), 0, "past the MR's end");
        assert_eq!(flag(&[sge(0xff8, 16, 7)]), 0, "before the MR's start");
        assert_eq!(flag(&[sge(0x1000, 8, 8)]), 0, "unknown lkey");
        assert_eq!(flag(&[sge(0x1000, 8, 7), sge(0x2000, 8, 9)]), 0, "one SGE outside");
        assert_eq!(flag(&[sge(0x1000, 65, 7)]), 0, "larger than the inline size");
        assert_eq!(flag(&[]), 0, "no payload");
        mrs.insert(9, 0x2000, 0x10);
        assert_eq!(flag(&[sge(0x1000, 8, 7), sge(0x2000, 8, 9)]), sys::IBV_SEND_INLINE);
        mrs.remove(7);
        assert_eq!(flag(&[sge(0x1000, 8, 7)]), 0, "deregistered");
        assert_eq!(flag(&[sge(0x2000, 8, 9)]), sys::IBV_SEND_INLINE);
        let mut none = InlineSends::new(0);
        assert_eq!(none.flag(&mrs, &[sge(0x2000, 8, 9)], 8), 0, "device without inline data");
    }

    /// The remembered range's check against a plain one (no wrapping arithmetic) at every
    /// edge: its own ends, just outside them, and SGEs below its start whose offset wraps (with
    /// lengths that carry and that do not).
    #[test]
    fn the_remembered_range_covers_exactly_its_bytes() {
        let lengths = [0u32, 1, 2, 7, 8, 16, 0x100, u32::MAX];
        for (start, span) in [(0x1000u64, 0x100u64), (0, 0x100), (u64::MAX - 0x1ff, 0x100), (1 << 63, 1 << 40)] {
            let r = Remembered { lkey: 7, start, span, generation: 3 };
            let end = start + span;
            let mut addrs = vec![0, 1, u64::MAX, u64::MAX - 7];
            for k in 0..24u64 {
                addrs.extend([start.wrapping_add(k), start.wrapping_sub(k), end.wrapping_add(k), end.wrapping_sub(k)]);
            }
            for &addr in &addrs {
                for &length in &lengths {
                    let plain = addr >= start && u128::from(addr) + u128::from(length) <= u128::from(end);
                    assert_eq!(
                        r.covers(&sge(addr, length, 7), 3),
                        plain,
                        "{addr:#x}+{length:#x} in {start:#x}+{span:#x}"
                    );
                }
            }
            assert!(r.covers(&sge(start, 1, 7), 3));
            assert!(!r.covers(&sge(start, 1, 8), 3), "other lkey");
            assert!(!r.covers(&sge(start, 1, 7), 4), "other generation");
        }
    }
}
