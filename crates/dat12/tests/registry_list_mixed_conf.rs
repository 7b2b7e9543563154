//! `dat_registry_list_providers` with a dat.conf in Debian's layout (`u2.0` `ofa-v2-*` lines
//! from libdapl2, with DAT 1.2 lines mixed in), read through `DAT_OVERRIDE`: the DAT 1.2 face
//! lists its built-ins and the `u1.2` lines, never a `u2.0` line.
//!
//! Its own test binary: the process-wide registry reads `DAT_OVERRIDE` once, on first use.

use dat12::abi::*;
use dat12::registry::{dat_registry_list_providers, info_from_c, info_to_c};
use datcore::registry::ProviderInfo;
use std::ptr::null_mut;

const MIXED_CONF: &str = r#"# DAT v2.0 and v1.2, as a Debian host with libdapl2 and compat-dapl has
ofa-v2-mlx4_0-1 u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "mlx4_0 1" ""
ofa-v2-mlx4_0-2 u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "mlx4_0 2" ""
ofa-v2-ib0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "ib0 0" ""
OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" ""
ofa-v2-mlx4_0-1u u2.0 nonthreadsafe default libdaploucm.so.2 dapl.2.0 "mlx4_0 1" ""
ofa-v2-mcm-1 u2.0 nonthreadsafe default libdaplomcm.so.2 dapl.2.0 "mlx4_0 1" ""
OpenIB-mlx4_0-1 u1.2 nonthreadsafe default libdaplscm.so.1 dapl.1.2 "mlx4_0 1" ""
ofa-v2-iwarp u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "eth2 0" ""
"#;

fn listed() -> Vec<ProviderInfo> {
    let mut n: DAT_COUNT = 0;
    // SAFETY: a size query with a writable count.
    unsafe { dat_registry_list_providers(0, &mut n, null_mut()) };
    let blank = ProviderInfo { ia_name: String::new(), major: 0, minor: 0, thread_safe: false };
    let mut a: Vec<DAT_PROVIDER_INFO> = (0..n.max(1)).map(|_| info_to_c(&blank)).collect();
    let mut ptrs: Vec<*mut DAT_PROVIDER_INFO> = a.iter_mut().map(|x| x as *mut _).collect();
    // SAFETY: `ptrs` holds `n` writable DAT_PROVIDER_INFOs.
    let r = unsafe { dat_registry_list_providers(ptrs.len() as DAT_COUNT, &mut n, ptrs.as_mut_ptr()) };
    assert_eq!(r, 0);
    a.iter().take(n as usize).map(info_from_c).collect()
}

#[test]
fn dat12_lists_no_dat20_entries() {
    let dir = std::env::temp_dir().join(format!("dat-mixed-conf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("dat.conf");
    std::fs::write(&conf, MIXED_CONF).unwrap();
    std::env::set_var("DAT_OVERRIDE", &conf);

    let all = listed();
    assert!(all.iter().all(|i| i.major == 1), "a non-1.x entry is listed: {all:?}");
    for v12 in ["OpenIB-cma", "OpenIB-mlx4_0-1"] {
        assert!(
            all.contains(&ProviderInfo { ia_name: v12.into(), major: 1, minor: 2, thread_safe: false }),
            "{v12} missing from {all:?}"
        );
    }
    // the u2.0 names are gone (a built-in verbs name for a real port may use the same name:
    // then it is listed once, as DAT 1.2, and opens)
    let from_conf: Vec<&ProviderInfo> = all.iter().filter(|i| i.ia_name.starts_with("ofa-v2-mlx4")).collect();
    assert!(from_conf.is_empty(), "{from_conf:?}");
    assert!(all.iter().any(|i| i.ia_name == "shm"), "{all:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
