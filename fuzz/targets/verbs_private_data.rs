//! verbs: the rdma_cm private data a peer sends (a reject of a connect, a UD exchange's SIDR
//! request or reply). Input: the event's status (4 bytes), the private data.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let status = i32::from_le_bytes(data[..4].try_into().unwrap_or_default());
    datcore::provider::verbs::fuzz::private_data(status, &data[4..]);
});
