//! Integration tests of the share coordinator, as one binary.

// Kafka's recorded answers, replayed step by step.
mod oracle;
// Kafka's ShareCoordinatorShardTest.
mod shard;
// Kafka's PersisterStateBatchCombinerTest and the combination's properties.
mod combiner;
// Kafka's ShareCoordinatorServiceTest: the service's checks, split, merge and routing.
mod service;
// The load rule: replay from empty gives the live state.
mod load;
// Kafka's ShareCoordinatorOffsetsManagerTest (through the shard) and ShareCoordinatorConfigTest.
mod offsets;
// The oracle README's findings whose scripts are held back.
mod findings;
