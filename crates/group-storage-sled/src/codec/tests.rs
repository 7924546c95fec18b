//! Tests of the value format: epochs pinned, record values in the shared
//! codec and in the legacy one, values under another key's name, and errors
//! that keep their cause.

use group_offsets::CoordinatorPartition;
use group_types::TopicPartition;

use super::*;

#[test]
fn epoch_v1_bytes_are_pinned() {
    let golden = [1, 0, 0, 0, 0, 0, 0, 1, 2];
    assert_eq!(encode_epoch(OwnerEpoch(258)), golden);
    assert_eq!(decode_epoch(&golden).ok(), Some(OwnerEpoch(258)));
    assert_eq!(decode_epoch(&encode_epoch(OwnerEpoch(u64::MAX))).ok(), Some(OwnerEpoch(u64::MAX)));
    assert_eq!(decode_epoch(&[2, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err().unknown_version(), Some(2));
    assert!(matches!(decode_epoch(&golden[..8]), Err(DecodeError::EpochLength(7))));
    assert!(matches!(decode_epoch(&[]), Err(DecodeError::EpochLength(0))));
}

fn offset_record(group: &str, topic: &str, partition: i32) -> Record {
    Record::Offset {
        group_id: Arc::from(group),
        partition: TopicPartition::new(topic, partition),
        offset: OffsetAndMetadata::new(7, 1),
    }
}

#[test]
fn new_values_are_the_shared_codecs() {
    let value = encode_value(&offset_record("g", "t", 3)).unwrap();
    assert_eq!(Some(&value), records::encode_value(&offset_record("g", "t", 3)).as_ref());
    assert_eq!(value[0], records::FORMAT_V2);
    assert_eq!(decode_offset(&value).ok(), Some(OffsetAndMetadata::new(7, 1)));
    let group = GroupMetadataRecord { group_id: "g".into(), generation_id: 4, ..Default::default() };
    let value = encode_value(&Record::Group(Box::new(group.clone()))).unwrap();
    assert_eq!(decode_group("g", &value).ok(), Some(group));
    let error = decode_group("h", &value).unwrap_err();
    assert!(matches!(error, DecodeError::Record(records::DecodeError::OtherGroup { .. })), "{error:?}");
    let value = Some(group_offsets::TargetAssignmentMetadataValue::new(4, 9));
    let record = ModernGroupRecord::TargetAssignmentMetadata { group_id: Arc::from("g"), value };
    let value = encode_value(&Record::Modern(record.clone())).unwrap();
    assert_eq!(value[0], records::FORMAT_V3, "a consumer-group value carries Kafka 4.3's fields");
    let key =
        ConsumerKey { coordinator: CoordinatorPartition(0), group_id: "g", record_type: 6, sub_key: "" };
    assert_eq!(decode_consumer(&key, Arc::from("g"), &value).ok(), Some(record));
    let tombstone = ModernGroupRecord::TargetAssignmentMetadata { group_id: Arc::from("g"), value: None };
    assert!(encode_value(&Record::Modern(tombstone)).is_none());
}

#[test]
fn legacy_values_still_read() {
    let offset = OffsetAndMetadata::new(5, 9);
    let value = legacy::encode_offset(&offset).unwrap();
    assert_eq!(value[0], 1);
    assert_eq!(decode_offset(&value).ok(), Some(offset));
    let group = GroupMetadataRecord { group_id: "g".into(), generation_id: 4, ..Default::default() };
    let value = legacy::encode_group(&group).unwrap();
    assert_eq!(decode_group("g", &value).ok(), Some(group));
    // A legacy group value names its group too.
    let error = decode_group("h", &value).unwrap_err();
    assert!(matches!(&error, DecodeError::OtherGroup(g) if g == "g"), "{error:?}");
}

#[test]
fn unknown_versions_and_bad_bytes_are_typed() {
    let error = decode_offset(&[9, 0]).unwrap_err();
    assert_eq!(error.unknown_version(), Some(9));
    let error = decode_group("g", &[1, 0xff, 0xff]).unwrap_err();
    assert!(matches!(error, DecodeError::Legacy(legacy::DecodeError::Bincode(_))), "{error:?}");
    assert_eq!(error.unknown_version(), None);
    // The description keeps the cause bincode gave.
    let described = describe(&error);
    assert!(described.starts_with("not a bincode value of its kind"), "{described}");
    // A group id that is not UTF-8.
    let error = decode_group("g", &[2, 1, 0xff]).unwrap_err();
    assert!(matches!(error, DecodeError::Record(records::DecodeError::NotUtf8(_))), "{error:?}");
    assert!(std::error::Error::source(&error).is_some(), "the UTF-8 error is kept");
}
