//! shm: an entry of the memory table a peer publishes, looked up by key and checked against a
//! range. Input: key (4 bytes), range address and length (8 + 8), the slot's bytes.
#![no_main]

use datcore::provider::shm::fuzz::{table_entry, SLOT_BYTES};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() < 20 + SLOT_BYTES {
        return;
    }
    let word = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().unwrap_or_default());
    let key = u32::from_le_bytes(data[..4].try_into().unwrap_or_default());
    let slot: &[u8; SLOT_BYTES] = data[20..20 + SLOT_BYTES].try_into().unwrap_or(&[0; SLOT_BYTES]);
    table_entry(key, slot, word(4), word(12));
});
