//! A small file system to fill, for the disk-full tests: this crate's and the
//! coordinator's (which includes this file with `#[path]`).
//!
//! Mounting needs root (or `CAP_SYS_ADMIN`); where it fails, the tests say so and
//! run their scenario with the sled store's injected flush faults instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of 4 MiB (a few sled segments) mounted for a test, unmounted when
/// dropped (also when the test fails: the guard outlives the store).
pub(crate) struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts it on `dir`, or says why it could not.
    pub(crate) fn mount(dir: &Path) -> Result<Tmpfs, String> {
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if out.status.success() {
            Ok(Tmpfs(dir.to_owned()))
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmounted = Command::new("umount").arg(&self.0).status().is_ok_and(|s| s.success());
        if !unmounted {
            // Something still holds a file open: detach it anyway.
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// Fills the file system holding `path` with a file there.
pub(crate) fn fill(path: &Path) -> std::io::Result<()> {
    let mut file = std::fs::File::create(path)?;
    let chunk = vec![0xa5u8; 64 * 1024];
    loop {
        if let Err(e) = file.write_all(&chunk).and_then(|()| file.sync_all()) {
            // Whatever fits of a smaller write, so not a page is left.
            if e.raw_os_error() == Some(28) {
                let mut small = [0u8; 512];
                while file.write_all(&small).is_ok() {
                    small[0] = small[0].wrapping_add(1);
                }
                return Ok(());
            }
            return Err(e);
        }
    }
}
