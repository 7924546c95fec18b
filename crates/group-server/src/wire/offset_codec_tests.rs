//! The offset codec against `kafka-protocol` where both know a version (v8, v9: the same
//! bytes both ways), against Kafka's JSON layout at v10 (v9's bytes with the topic name
//! swapped for its id), and against bodies that end early.
