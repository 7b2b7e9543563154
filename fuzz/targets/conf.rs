//! dat.conf: the bytes of a file parsed as the registry parses it, then every IA name it
//! lists resolved and listed as `dat_ia_openv` and `dat_registry_list_providers` do.
#![no_main]

use datcore::provider::shm::ShmProvider;
use datcore::registry::conf::{parse_bytes, StaticConf, NAME_MAX};
use datcore::registry::Registry;
use std::sync::Arc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let entries = parse_bytes(data, "fuzz");
    for e in &entries {
        assert!(!e.ia_name.is_empty() && e.ia_name.len() < NAME_MAX && !e.ia_name.contains('\0'));
        assert!(!e.lib_path.is_empty());
    }
    let reg = Registry::new(StaticConf { path: None, entries }, vec![Arc::new(ShmProvider)]);
    for major in [1, 2] {
        for info in reg.list(major) {
            let _ = reg.candidates(&info.ia_name, info.major, info.minor, info.thread_safe);
        }
    }
    for e in &reg.conf.entries {
        let _ = reg.candidates(&e.ia_name, e.major, e.minor, !e.thread_safe);
    }
});
