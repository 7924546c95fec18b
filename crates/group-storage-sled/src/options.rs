//! `SledOptions`: how many coordinator partitions a store has, and what its
//! writes wait for.

use std::time::Duration;

use group_offsets::{DEFAULT_COORDINATOR_PARTITIONS, StorageError};

use crate::{Durability, FlushFaults};

/// How to open a [`SledMetadataStore`](crate::SledMetadataStore), for
/// [`open_with_options`](crate::SledMetadataStore::open_with_options).
///
/// ```
/// use group_storage_sled::{Durability, SledOptions};
///
/// let options = SledOptions::new().partitions(64).durability(Durability::SledFlush);
/// assert_eq!((options.partition_count(), options.durability_mode()), (64, Durability::SledFlush));
/// assert_eq!(SledOptions::default().partition_count(), 50);
/// ```
#[derive(Debug, Clone)]
pub struct SledOptions {
    partitions: u32,
    durability: Durability,
    faults: Option<FlushFaults>,
    lock_wait: Duration,
}

impl Default for SledOptions {
    fn default() -> SledOptions {
        SledOptions {
            partitions: DEFAULT_COORDINATOR_PARTITIONS,
            durability: Durability::default(),
            faults: None,
            lock_wait: crate::SledMetadataStore::LOCK_WAIT,
        }
    }
}

impl SledOptions {
    /// The most coordinator partitions a store may have. Kafka's own default
    /// is 50 and deployments rarely go past a few hundred; the store keeps a
    /// small lock per partition, so the bound keeps that memory small.
    pub const MAX_PARTITIONS: u32 = 100_000;

    /// The defaults: [`DEFAULT_COORDINATOR_PARTITIONS`] partitions,
    /// [`Durability::Fsync`], no injected faults.
    pub fn new() -> SledOptions {
        SledOptions::default()
    }

    /// The number of coordinator partitions (1 to [`MAX_PARTITIONS`](Self::MAX_PARTITIONS)).
    /// It is recorded in the store when the store is created (or migrated from
    /// layout v1); opening it later with another number is refused.
    pub fn partitions(mut self, partitions: u32) -> SledOptions {
        self.partitions = partitions;
        self
    }

    /// What a write waits for before it is acknowledged.
    pub fn durability(mut self, durability: Durability) -> SledOptions {
        self.durability = durability;
        self
    }

    /// Flush failures to inject, for tests of how the store and the code above
    /// it handle storage failures (see [`FlushFaults`]).
    pub fn flush_faults(mut self, faults: FlushFaults) -> SledOptions {
        self.faults = Some(faults);
        self
    }

    /// How long opening waits for the directory's lock while another handle holds
    /// it ([`LOCK_WAIT`](crate::SledMetadataStore::LOCK_WAIT) by default: a handle
    /// of this process that is closing lets go within moments). A server that owns
    /// its directory sets zero, so that a directory another process holds is
    /// reported at once.
    pub fn lock_wait(mut self, wait: Duration) -> SledOptions {
        self.lock_wait = wait;
        self
    }

    /// How long opening waits for a held lock (see [`lock_wait`](Self::lock_wait)).
    pub fn lock_wait_time(&self) -> Duration {
        self.lock_wait
    }

    /// The number of coordinator partitions these options ask for.
    pub fn partition_count(&self) -> u32 {
        self.partitions
    }

    /// The durability these options ask for.
    pub fn durability_mode(&self) -> Durability {
        self.durability
    }

    pub(crate) fn faults(&self) -> Option<&FlushFaults> {
        self.faults.as_ref()
    }

    /// Refuses a partition count the store cannot have.
    pub(crate) fn check(&self) -> Result<(), StorageError> {
        if (1..=SledOptions::MAX_PARTITIONS).contains(&self.partitions) {
            Ok(())
        } else {
            Err(StorageError::InvalidInput {
                message: format!(
                    "a store has 1 to {} coordinator partitions, not {}",
                    SledOptions::MAX_PARTITIONS,
                    self.partitions
                ),
            })
        }
    }
}
