//! `Durability`: what a write waits for before it is acknowledged.

/// What a write waits for before the store acknowledges it.
///
/// sled 0.34's `flush()` writes its log buffers with `sync_file_range` on
/// Linux: the bytes reach the disk queue, which survives a crash of the
/// process, but neither the disk's volatile cache nor the file's metadata (its
/// growing length) is synced; only sled's background thread calls `fsync`,
/// every 500 ms. [`Durability::Fsync`] adds that `fsync` to every shared
/// flush, so an acknowledged commit also survives a power cut or kernel crash.
///
/// One gap remains in sled itself: values too large for its log buffers
/// (hundreds of KiB; in practice only a huge group record) go to separate
/// blob files that sled never syncs; only a process crash is covered for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// sled's `flush()`, then `fsync` of sled's data file: survives a crash
    /// of the process and of the machine (as far as the disk honours fsync).
    /// The default of [`SledMetadataStore::open`](crate::SledMetadataStore::open).
    #[default]
    Fsync,
    /// sled's `flush()` alone: survives a crash of the process (`kill -9`),
    /// and is several times cheaper per flush, but a power cut can lose
    /// acknowledged writes of the last ~500 ms.
    SledFlush,
}
