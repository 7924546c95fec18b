//! The metadata size limit, measured in UTF-16 code units like Java's `String.length()`.

use group_offsets::{DEFAULT_OFFSET_METADATA_MAX_BYTES, OffsetError, metadata_length, validate_metadata};
use group_types::TopicPartition;
use proptest::prelude::*;
use rstest::rstest;

#[rstest]
#[case::empty("", 0)]
#[case::ascii("offset-metadata", 15)]
#[case::two_byte_utf8("é", 1)]
#[case::three_byte_utf8("日本語", 3)]
#[case::astral_counts_two("🦀", 2)]
#[case::family_emoji("👩‍👩‍👧", 8)]
#[case::nul("\0\0", 2)]
#[case::combining("e\u{301}", 2)]
fn java_string_length(#[case] metadata: &str, #[case] length: usize) {
    assert_eq!(metadata_length(metadata), length);
}

#[rstest]
#[case::ascii_at_limit("x".repeat(4096), None)]
#[case::ascii_over("x".repeat(4097), Some(4097))]
// 8192 bytes but 4096 code units: Kafka accepts it, a byte count would not.
#[case::two_byte_at_limit("é".repeat(4096), None)]
#[case::three_byte_at_limit("語".repeat(4096), None)]
#[case::three_byte_over("語".repeat(4097), Some(4097))]
#[case::astral_at_limit("🦀".repeat(2048), None)]
#[case::astral_one_over(format!("{}x", "🦀".repeat(2048)), Some(4097))]
#[case::astral_odd("🦀".repeat(2049), Some(4098))]
#[case::empty(String::new(), None)]
fn default_limit(#[case] metadata: String, #[case] too_long: Option<usize>) {
    let tp = TopicPartition::new("orders", 7);
    let result = validate_metadata(&tp, &metadata, DEFAULT_OFFSET_METADATA_MAX_BYTES);
    match too_long {
        None => assert_eq!(result, Ok(())),
        Some(length) => {
            assert_eq!(result, Err(OffsetError::MetadataTooLarge { partition: tp, length, max: 4096 }))
        }
    }
}

#[rstest]
#[case::zero_allows_empty(0, "", true)]
#[case::zero_refuses_one(0, "a", false)]
#[case::one_refuses_astral(1, "🦀", false)]
#[case::two_allows_astral(2, "🦀", true)]
fn configured_limit(#[case] max: usize, #[case] metadata: &str, #[case] ok: bool) {
    assert_eq!(validate_metadata(&TopicPartition::new("t", 0), metadata, max).is_ok(), ok);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// The byte-length shortcut never accepts what the code-unit count refuses.
    #[test]
    fn agrees_with_counting_code_units(metadata in any::<String>(), max in 0usize..64) {
        let fits = metadata.encode_utf16().count() <= max;
        prop_assert_eq!(validate_metadata(&TopicPartition::new("t", 0), &metadata, max).is_ok(), fits);
    }
}
