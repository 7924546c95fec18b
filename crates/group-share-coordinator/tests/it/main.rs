//! Integration tests of the share coordinator, as one binary.
