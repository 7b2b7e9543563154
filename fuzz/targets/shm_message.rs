//! shm: a datagram a peer sends on a connection's socket (connect request, accept, reject,
//! ready-to-use, disconnect, doorbell) or to a UD endpoint.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    datcore::provider::shm::fuzz::socket_message(data);
});
