//! Rendezvous: where a connection qualifier lives on this host.
//!
//! Every qualifier is a unix SOCK_SEQPACKET socket `q<port>.sock` in a private per-user
//! directory (`$XDG_RUNTIME_DIR/dat-shm` or `/tmp/dat-shm-<uid>`, mode 0700, owned by us, not a
//! symlink). Ownership of a qualifier is an exclusive `flock` on `q<port>.lock`: the kernel drops
//! it when the owner dies, so a stale socket left by a killed process is reclaimed by the next
//! listener, and two live listeners can never share a qualifier.

use super::sys;
use crate::codes::*;
use crate::error::{DatError, DatResult};
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The private rendezvous directory, created and checked once per process.
pub fn dir() -> io::Result<&'static Path> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| pick_dir().map_err(|e| e.to_string()))
        .as_ref()
        .map(|p| p.as_path())
        .map_err(|e| io::Error::other(e.clone()))
}

fn pick_dir() -> io::Result<PathBuf> {
    if let Ok(d) = std::env::var("DAT_SHM_DIR") {
        return ensure_private(PathBuf::from(d));
    }
    if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR").filter(|x| !x.is_empty()) {
        if let Ok(p) = ensure_private(PathBuf::from(x).join("dat-shm")) {
            return Ok(p);
        }
    }
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    ensure_private(PathBuf::from(format!("/tmp/dat-shm-{uid}")))
}

/// Creates `p` mode 0700 if missing, then insists it is a real directory of ours with no group
/// or other access.
fn ensure_private(p: PathBuf) -> io::Result<PathBuf> {
    match fs::DirBuilder::new().mode(0o700).create(&p) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let md = fs::symlink_metadata(&p)?;
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    if !md.file_type().is_dir() || md.uid() != uid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a directory of ours", p.display()),
        ));
    }
    if md.mode() & 0o077 != 0 {
        // Ours but too open (e.g. made by an older version or a umask): tighten it.
        fs::set_permissions(&p, fs::Permissions::from_mode(0o700))?;
    }
    Ok(p)
}

pub fn socket_path(port: u64) -> io::Result<PathBuf> {
    Ok(dir()?.join(format!("q{port}.sock")))
}

/// A bound, listening qualifier. Dropping it removes the socket and releases the lock.
pub struct Bound {
    sock: Option<OwnedFd>,
    path: PathBuf,
    _lock: fs::File,
}

impl Bound {
    /// The listening socket (once).
    pub fn take_sock(&mut self) -> Option<OwnedFd> {
        self.sock.take()
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Takes qualifier `port`: `DAT_CONN_QUAL_IN_USE` when a live listener holds it.
pub fn listen(port: u64) -> DatResult<Bound> {
    let fail = |what: &str, e: io::Error| {
        tracing::warn!(port, "shm: listen: {what}: {e}");
        DatError::insufficient(DAT_RESOURCE_DEVICE)
    };
    let d = dir().map_err(|e| fail("rendezvous directory", e))?;
    let lock = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(d.join(format!("q{port}.lock")))
        .map_err(|e| fail("lock file", e))?;
    // SAFETY: flock on a file we hold open.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(DatError::new(DAT_CONN_QUAL_IN_USE, 0));
    }
    let path = d.join(format!("q{port}.sock"));
    // Whoever held the lock before us is gone: any socket file left is stale.
    let _ = fs::remove_file(&path);
    let sock = sys::seqpacket().map_err(|e| fail("socket", e))?;
    sys::bind_listen(&sock, &path).map_err(|e| fail("bind", e))?;
    tracing::debug!(port, path = %path.display(), "shm: listening");
    Ok(Bound { sock: Some(sock), path, _lock: lock })
}
