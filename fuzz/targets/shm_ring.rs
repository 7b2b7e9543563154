//! shm: the records of a ring a peer writes (requests, inline data, atomics, acknowledgements,
//! read data, pads). Input: the record position (8 bytes), which ring (1 byte), the ring's
//! bytes from there on.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let (at, rest) = data.split_at(8);
    let at = u64::from_le_bytes(at.try_into().unwrap_or_default());
    datcore::provider::shm::fuzz::ring_records(at, rest[0] & 1 != 0, &rest[1..]);
});
