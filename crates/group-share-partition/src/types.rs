//! The vocabulary of a share partition: record states, acknowledge types, acquire
//! modes, what a fetch hands in and what an acquire hands back.

use crate::error::ShareError;

/// The delivery state of a record (Kafka's `RecordState`), with Kafka's numbers:
/// they are what the share coordinator stores in a state batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecordState {
    /// 0: may be acquired by a consumer.
    Available,
    /// 1: acquired by a member, under an acquisition lock.
    Acquired,
    /// 2: accepted by the member that held it; terminal.
    Acknowledged,
    /// 4: rejected, past the delivery limit, or below the start offset; terminal.
    Archived,
}

impl RecordState {
    /// Kafka's number for the state (`RecordState.id`).
    pub const fn id(self) -> u8 {
        match self {
            RecordState::Available => 0,
            RecordState::Acquired => 1,
            RecordState::Acknowledged => 2,
            RecordState::Archived => 4,
        }
    }

    /// The state for Kafka's number (`RecordState.forId`).
    pub const fn from_id(id: u8) -> Result<RecordState, ShareError> {
        match id {
            0 => Ok(RecordState::Available),
            1 => Ok(RecordState::Acquired),
            2 => Ok(RecordState::Acknowledged),
            4 => Ok(RecordState::Archived),
            other => Err(ShareError::UnknownRecordState(other)),
        }
    }

    /// Whether the state is terminal (acknowledged or archived): such a record is never
    /// delivered again.
    pub const fn is_terminal(self) -> bool {
        matches!(self, RecordState::Acknowledged | RecordState::Archived)
    }

    /// Kafka's `RecordState.validateTransition`: available may only become acquired,
    /// acquired may become anything else, terminal states never change.
    pub(crate) fn can_become(self, next: RecordState) -> bool {
        if self == next || self.is_terminal() {
            return false;
        }
        self != RecordState::Available || next == RecordState::Acquired
    }
}

/// How a consumer acknowledges a record (Kafka's `AcknowledgeType`, KIP-932 and
/// KIP-1222's renew), with Kafka's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AcknowledgeType {
    /// 1: processed; the record is acknowledged.
    Accept,
    /// 2: not processed; the record is available for another delivery.
    Release,
    /// 3: unprocessable; the record is archived.
    Reject,
    /// 4: still processing; the acquisition lock starts again (KIP-1222).
    Renew,
}

impl AcknowledgeType {
    /// Kafka's number for the type.
    pub const fn id(self) -> u8 {
        match self {
            AcknowledgeType::Accept => 1,
            AcknowledgeType::Release => 2,
            AcknowledgeType::Reject => 3,
            AcknowledgeType::Renew => 4,
        }
    }

    /// The type for Kafka's number, or `None` (0 is a gap in an acknowledgement,
    /// not a type).
    pub const fn from_id(id: u8) -> Option<AcknowledgeType> {
        match id {
            1 => Some(AcknowledgeType::Accept),
            2 => Some(AcknowledgeType::Release),
            3 => Some(AcknowledgeType::Reject),
            4 => Some(AcknowledgeType::Renew),
            _ => None,
        }
    }
}

/// The acknowledge-type byte a client sends for an offset it found no record at
/// (compaction, transaction markers): the record is archived.
pub const GAP_ACKNOWLEDGE_TYPE: u8 = 0;

/// How a share fetch acquires records (Kafka's `ShareAcquireMode`, the
/// `share.acquire.mode` consumer setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AcquireMode {
    /// 0: whole fetched batches, split into acquired batches of about `batch_size`;
    /// `max_fetch_records` is a soft limit.
    #[default]
    BatchOptimized,
    /// 1: never more than `max_fetch_records` records; a batch is acquired in part
    /// and the rest stays available.
    RecordLimit,
}

/// The producer id of a batch written without one (Kafka's `RecordBatch.NO_PRODUCER_ID`).
pub const NO_PRODUCER_ID: i64 = -1;

/// The type of a control batch's first record (Kafka's `ControlRecordType`), as far as
/// a share partition cares: a transaction's end marker, or anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ControlRecordType {
    /// 0: the end marker of an aborted transaction (`ControlRecordType.ABORT`).
    Abort,
    /// 1: the end marker of a committed transaction (`ControlRecordType.COMMIT`).
    Commit,
    /// Any other control record (leader change, snapshot, KRaft records, an unknown
    /// type), or a control batch without records.
    Other,
}

impl ControlRecordType {
    /// The type a control record's key names (Kafka's `ControlRecordType.parse`): a
    /// version `i16` then a type `i16`, big-endian. Kafka throws for a key shorter
    /// than 4 bytes or with a negative version; such a key is [`Other`](Self::Other)
    /// here, so it is never taken for an abort marker.
    pub fn parse(key: &[u8]) -> ControlRecordType {
        let (Some(version), Some(kind)) = (key.get(0..2), key.get(2..4)) else {
            return ControlRecordType::Other;
        };
        if i16::from_be_bytes([version[0], version[1]]) < 0 {
            return ControlRecordType::Other;
        }
        match i16::from_be_bytes([kind[0], kind[1]]) {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            _ => ControlRecordType::Other,
        }
    }
}

/// One record batch of a fetch response, by its offsets and the header fields Kafka's
/// `SharePartition.acquire` reads off a `RecordBatch` (`baseOffset`, `lastOffset`,
/// `producerId`, `isTransactional`, `isControlBatch` and the control record's type):
/// the share partition never reads record bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchedBatch {
    /// The batch's base offset.
    pub base_offset: i64,
    /// The batch's last offset.
    pub last_offset: i64,
    /// The producer id (`RecordBatch.producerId`), [`NO_PRODUCER_ID`] when none.
    pub producer_id: i64,
    /// Whether the batch is part of a transaction (`RecordBatch.isTransactional`).
    pub transactional: bool,
    /// `None` for a data batch; for a control batch (`RecordBatch.isControlBatch`),
    /// the type of its first record.
    pub control: Option<ControlRecordType>,
}

impl FetchedBatch {
    /// The non-transactional data batch `base_offset..=last_offset`, without a
    /// producer id.
    pub const fn new(base_offset: i64, last_offset: i64) -> FetchedBatch {
        FetchedBatch {
            base_offset,
            last_offset,
            producer_id: NO_PRODUCER_ID,
            transactional: false,
            control: None,
        }
    }

    /// The transactional data batch `base_offset..=last_offset` of `producer_id`.
    pub const fn transactional(base_offset: i64, last_offset: i64, producer_id: i64) -> FetchedBatch {
        FetchedBatch { base_offset, last_offset, producer_id, transactional: true, control: None }
    }

    /// The transactional control batch `base_offset..=last_offset` of `producer_id`
    /// whose first record is a `control` record (a transaction marker is one record).
    pub const fn control(
        base_offset: i64,
        last_offset: i64,
        producer_id: i64,
        control: ControlRecordType,
    ) -> FetchedBatch {
        FetchedBatch { base_offset, last_offset, producer_id, transactional: true, control: Some(control) }
    }

    /// Whether the batch has a producer id (Kafka's `RecordBatch.hasProducerId`).
    pub const fn has_producer_id(&self) -> bool {
        self.producer_id > NO_PRODUCER_ID
    }

    /// Whether the batch is a control batch whose first record ends an aborted
    /// transaction (Kafka's `SharePartition.containsAbortMarker`).
    pub const fn contains_abort_marker(&self) -> bool {
        matches!(self.control, Some(ControlRecordType::Abort))
    }
}

/// Which records a share group reads (the `share.isolation.level` group config; Kafka's
/// `IsolationLevel`, with its numbers, which a share fetch maps to `FetchIsolation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum IsolationLevel {
    /// 0: every record up to the high watermark, aborted transactions included
    /// (`FetchIsolation.HIGH_WATERMARK`).
    #[default]
    ReadUncommitted,
    /// 1: records up to the last stable offset, aborted transactions archived
    /// (`FetchIsolation.TXN_COMMITTED`).
    ReadCommitted,
}

impl IsolationLevel {
    /// Kafka's number for the level (`IsolationLevel.id`).
    pub const fn id(self) -> u8 {
        match self {
            IsolationLevel::ReadUncommitted => 0,
            IsolationLevel::ReadCommitted => 1,
        }
    }
}

/// A transaction the fetched range holds records of and that was aborted (Kafka's
/// `FetchResponseData.AbortedTransaction`, the fetch's `FetchPartitionData.abortedTransactions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AbortedTransaction {
    /// The producer whose transaction was aborted.
    pub producer_id: i64,
    /// The first offset of the transaction.
    pub first_offset: i64,
}

impl AbortedTransaction {
    /// `producer_id`'s transaction from `first_offset`, aborted.
    pub const fn new(producer_id: i64, first_offset: i64) -> AbortedTransaction {
        AbortedTransaction { producer_id, first_offset }
    }
}

/// What a share fetch asks to acquire (the arguments of Kafka's `SharePartition.acquire`
/// other than the member).
#[derive(Debug, Clone, Copy)]
pub struct AcquireRequest<'a> {
    /// Whole batches or an exact record limit.
    pub mode: AcquireMode,
    /// The size of the acquired batches a fetch is split into (batch-optimized mode).
    pub batch_size: i32,
    /// The most records to acquire (soft in batch-optimized mode).
    pub max_fetch_records: i32,
    /// The offset the log was read from.
    pub fetch_offset: i64,
    /// The fetched record batches, in offset order.
    pub batches: &'a [FetchedBatch],
    /// The group's `share.isolation.level` (Kafka's `isolationLevel` argument):
    /// under [`IsolationLevel::ReadCommitted`] the acquired records of aborted
    /// transactions are archived instead of delivered.
    pub isolation: IsolationLevel,
    /// The fetch's aborted transactions (Kafka's `FetchPartitionData.abortedTransactions`);
    /// read only under [`IsolationLevel::ReadCommitted`].
    pub aborted_transactions: &'a [AbortedTransaction],
}

/// A range of acquired records and how many times they have been delivered
/// (Kafka's `ShareFetchResponseData.AcquiredRecords`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquiredRecords {
    /// The first acquired offset.
    pub first_offset: i64,
    /// The last acquired offset.
    pub last_offset: i64,
    /// The delivery count of every record in the range.
    pub delivery_count: i16,
}

impl AcquiredRecords {
    /// The range `first_offset..=last_offset` at `delivery_count`.
    pub const fn new(first_offset: i64, last_offset: i64, delivery_count: i16) -> AcquiredRecords {
        AcquiredRecords { first_offset, last_offset, delivery_count }
    }
}

/// What an acquire took (Kafka's `ShareAcquiredRecords`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShareAcquiredRecords {
    /// The acquired ranges, in offset order.
    pub records: Vec<AcquiredRecords>,
    /// How many offsets they count (what the fetch's record limit is charged).
    pub count: i32,
}

/// One acknowledgement range of a ShareAcknowledge or ShareFetch request (Kafka's
/// `ShareAcknowledgementBatch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcknowledgementBatch {
    /// The first offset acknowledged.
    pub first_offset: i64,
    /// The last offset acknowledged.
    pub last_offset: i64,
    /// One type for the whole range, or one per offset; 0 marks a gap.
    pub acknowledge_types: Vec<u8>,
}

impl AcknowledgementBatch {
    /// The range `first_offset..=last_offset` acknowledged with one `ack` type.
    pub fn new(first_offset: i64, last_offset: i64, ack: AcknowledgeType) -> AcknowledgementBatch {
        AcknowledgementBatch { first_offset, last_offset, acknowledge_types: vec![ack.id()] }
    }

    /// The range acknowledged offset by offset (`types[i]` for `first_offset + i`).
    pub fn per_offset(first_offset: i64, last_offset: i64, types: Vec<u8>) -> AcknowledgementBatch {
        AcknowledgementBatch { first_offset, last_offset, acknowledge_types: types }
    }
}

/// The life of a share partition (Kafka's `SharePartitionState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PartitionState {
    /// Created, its state not read yet.
    Empty,
    /// Its state is being read from the persister.
    Initializing,
    /// Serving fetches and acknowledgements.
    Active,
    /// Reading its state failed; the partition must be created again.
    Failed,
    /// The leader moved; the partition must not be used.
    Fenced,
}

/// The limits a share partition runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharePartitionConfig {
    /// `group.share.partition.max.record.locks`: records in flight at most.
    pub max_in_flight_records: i32,
    /// `share.delivery.count.limit`: deliveries before a record is archived.
    pub max_delivery_count: i32,
    /// `share.record.lock.duration.ms`: how long an acquisition lock holds.
    pub record_lock_duration_ms: i64,
}

impl Default for SharePartitionConfig {
    /// Kafka 4.2's broker defaults: 2,000 record locks, 5 deliveries, 30 s locks.
    fn default() -> SharePartitionConfig {
        SharePartitionConfig {
            max_in_flight_records: 2000,
            max_delivery_count: 5,
            record_lock_duration_ms: 30_000,
        }
    }
}
