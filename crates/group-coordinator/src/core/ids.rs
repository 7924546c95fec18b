//! Deterministic member ids: `"<client_id>-<uuid-like>"` from a seedable generator.

/// SplitMix64: tiny, seedable and good enough to make ids unique within a run.
#[derive(Debug, Clone)]
pub(crate) struct MemberIdGenerator {
    state: u64,
}

impl MemberIdGenerator {
    pub(crate) fn new(seed: u64) -> MemberIdGenerator {
        MemberIdGenerator { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A fresh id with Kafka's shape: the prefix (client id, or instance id for a
    /// static member), a dash, then a version-4-looking UUID.
    pub(crate) fn generate(&mut self, prefix: &str) -> String {
        let a = self.next_u64();
        let b = self.next_u64();
        format!(
            "{prefix}-{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0x0fff,
            ((b >> 48) & 0x3fff) | 0x8000,
            b & 0xffff_ffff_ffff
        )
    }
}

impl MemberIdGenerator {
    /// A fresh Kafka `Uuid` in its string form (22 characters of URL-safe base64),
    /// as `Uuid.randomUuid().toString()` gives ConsumerGroupHeartbeat v0 members.
    pub(crate) fn generate_uuid(&mut self) -> String {
        let value = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        group_types::TopicId::from_u128(value).to_string()
    }
}
