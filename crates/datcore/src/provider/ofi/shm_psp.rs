//! PSP names over libfabric's shm (`ofi-shm`).
//!
//! libfabric's shm (1.17) keeps the name and region of every endpoint a process makes in a list
//! it never prunes, and finds an in-process peer by the first entry of its name: a second
//! endpoint of one name in a process (a PSP made again on a qualifier after the first was
//! freed, in the same or another IA) would be reached through the first one's unmapped region,
//! and an address insert or send crashes or spins. So a PSP's endpoint is named once ever
//! (`dat-ofi-psp-<qualifier>-<pid>-<start>-<n>`, see `super::shm_names`), and the qualifier's own name, `dat-ofi-psp-<qualifier>`
//! in /dev/shm, is a small file holding the owner's pid and that endpoint name: made
//! exclusively (the qualifier is in use while it exists and its owner lives), read by a
//! requester, removed when the PSP goes.

use crate::codes::*;
use crate::error::{DatError, DatResult};
use std::path::PathBuf;

const DIR: &str = "/dev/shm";

/// The qualifier's file.
fn path_of(port: u16) -> PathBuf {
    PathBuf::from(DIR).join(format!("dat-ofi-psp-{port}"))
}

/// A claimed qualifier: the endpoint name to listen at; the claim ends at drop.
pub(crate) struct Claim {
    path: PathBuf,
    /// The endpoint's name, NUL-terminated (`FI_ADDR_STR`).
    pub name: Vec<u8>,
}

impl Claim {
    /// Claims `port`: DAT_CONN_QUAL_IN_USE while a live process holds it.
    pub fn take(port: u16) -> DatResult<Claim> {
        let pid = std::process::id();
        let name = super::shm_names::unique(&format!("psp-{port}"));
        let path = path_of(port);
        // Written whole under a name of its own, then linked to the qualifier's (which fails
        // if it exists): a requester never reads a half-written claim.
        let tmp = PathBuf::from(DIR).join(format!("{name}.claim"));
        let io = |e: std::io::Error| {
            tracing::warn!("ofi: claiming shm qualifier {port}: {e}");
            DatError::insufficient(DAT_RESOURCE_MEMORY)
        };
        std::fs::write(&tmp, format!("{pid}\n{name}\n")).map_err(io)?;
        let mut linked = std::fs::hard_link(&tmp, &path);
        if matches!(&linked, Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists) && owner(port).is_none() {
            // Left by a process that is gone.
            let _ = std::fs::remove_file(&path);
            linked = std::fs::hard_link(&tmp, &path);
        }
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => {
                let mut name = name.into_bytes();
                name.push(0);
                Ok(Claim { path, name })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(DatError::new(DAT_CONN_QUAL_IN_USE, 0)),
            Err(e) => Err(io(e)),
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The endpoint name (NUL-terminated) of the PSP a live process holds on `port`, if any.
pub(crate) fn owner(port: u16) -> Option<Vec<u8>> {
    let text = std::fs::read_to_string(path_of(port)).ok()?;
    let mut lines = text.lines();
    let pid: u32 = lines.next()?.parse().ok()?;
    let name = lines.next()?;
    if !PathBuf::from(format!("/proc/{pid}")).exists() {
        return None;
    }
    let mut name = name.as_bytes().to_vec();
    name.push(0);
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_qualifier_is_held_once_and_every_claim_names_a_new_endpoint() {
        let port = 40_000 + (std::process::id() % 20_000) as u16;
        let a = Claim::take(port).unwrap();
        assert_eq!(owner(port).as_deref(), Some(&a.name[..]));
        assert_eq!(Claim::take(port).err(), Some(DatError::new(DAT_CONN_QUAL_IN_USE, 0)));
        let first = a.name.clone();
        drop(a);
        assert_eq!(owner(port), None);
        let b = Claim::take(port).unwrap();
        assert_ne!(b.name, first, "a name shm already knew in this process");
    }
}
