//! [`MemberMeta`]: what a consumer member sent about itself, as the group
//! keeps it between records.
//!
//! The record's value (`ConsumerMemberMetadataValue`) spends eight words of
//! strings and options on every member, most of them empty (instance id,
//! rack, regex, assignor, classic protocols) and the rest the same from one
//! member to the next (client id and host of one application, the topics it
//! subscribes to). Kept as records carry it, it was half of a settled
//! member's memory. Here the common fields are shared (`Arc`) with the member
//! replayed before, as Kafka's `ConsumerGroupMember` shares its subscribed
//! topic names, and the rare ones sit behind one pointer that is null when
//! all are empty. The record's value is rebuilt from it when one is written.

use std::sync::Arc;

use group_offsets::{ClassicMemberMetadata, ConsumerMemberMetadataValue};

/// A consumer member's metadata: equal to the record value it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct MemberMeta {
    /// The client id.
    pub(crate) client_id: Arc<str>,
    /// The client host.
    pub(crate) client_host: Arc<str>,
    /// Topics subscribed by name, as the record holds them.
    pub(crate) subscribed_topic_names: Arc<[String]>,
    /// The revocation deadline.
    pub(crate) rebalance_timeout_ms: i32,
    /// `None` when every rare field is empty.
    rare: Option<Box<Rare>>,
}

/// The fields most members leave empty.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Rare {
    instance_id: Option<String>,
    rack_id: Option<String>,
    subscribed_topic_regex: Option<String>,
    server_assignor: Option<String>,
    classic: Option<ClassicMemberMetadata>,
}

impl MemberMeta {
    /// The metadata of record value `v`, sharing every common field equal to
    /// `like`'s or `group`'s (the member's metadata before, the group's last).
    pub(crate) fn new(v: &ConsumerMemberMetadataValue, like: &MemberMeta, group: &MemberMeta) -> MemberMeta {
        let names = &v.subscribed_topic_names;
        let subscribed_topic_names = [like, group]
            .into_iter()
            .map(|m| &m.subscribed_topic_names)
            .find(|n| ***n == **names)
            .cloned()
            .unwrap_or_else(|| Arc::from(names.as_slice()));
        let empty = v.instance_id.is_none()
            && v.rack_id.is_none()
            && v.subscribed_topic_regex.is_none()
            && v.server_assignor.is_none()
            && v.classic.is_none();
        MemberMeta {
            client_id: shared(&v.client_id, like, group, |m| &m.client_id),
            client_host: shared(&v.client_host, like, group, |m| &m.client_host),
            subscribed_topic_names,
            rebalance_timeout_ms: v.rebalance_timeout_ms,
            rare: (!empty).then(|| {
                Box::new(Rare {
                    instance_id: v.instance_id.clone(),
                    rack_id: v.rack_id.clone(),
                    subscribed_topic_regex: v.subscribed_topic_regex.clone(),
                    server_assignor: v.server_assignor.clone(),
                    classic: v.classic.clone(),
                })
            }),
        }
    }

    /// The record value it stands for.
    pub(crate) fn to_value(&self) -> ConsumerMemberMetadataValue {
        let rare = self.rare.as_deref().cloned().unwrap_or_default();
        ConsumerMemberMetadataValue {
            instance_id: rare.instance_id,
            rack_id: rare.rack_id,
            client_id: self.client_id.to_string(),
            client_host: self.client_host.to_string(),
            subscribed_topic_names: self.subscribed_topic_names.to_vec(),
            subscribed_topic_regex: rare.subscribed_topic_regex,
            rebalance_timeout_ms: self.rebalance_timeout_ms,
            server_assignor: rare.server_assignor,
            classic: rare.classic,
        }
    }

    /// Its common fields only (shared, not copied): what the next member's
    /// metadata is compared with.
    pub(crate) fn common(&self) -> MemberMeta {
        MemberMeta {
            client_id: self.client_id.clone(),
            client_host: self.client_host.clone(),
            subscribed_topic_names: self.subscribed_topic_names.clone(),
            rebalance_timeout_ms: self.rebalance_timeout_ms,
            rare: None,
        }
    }

    /// The static instance id.
    pub(crate) fn instance_id(&self) -> Option<&str> {
        self.rare.as_ref()?.instance_id.as_deref()
    }

    /// The rack.
    pub(crate) fn rack_id(&self) -> Option<&str> {
        self.rare.as_ref()?.rack_id.as_deref()
    }

    /// The regex as recorded (`Some("")` is possible; callers filter).
    pub(crate) fn subscribed_topic_regex(&self) -> Option<&str> {
        self.rare.as_ref()?.subscribed_topic_regex.as_deref()
    }

    /// The server assignor the member prefers.
    pub(crate) fn server_assignor(&self) -> Option<&str> {
        self.rare.as_ref()?.server_assignor.as_deref()
    }

    /// Present for members that use the classic protocol.
    pub(crate) fn classic(&self) -> Option<&ClassicMemberMetadata> {
        self.rare.as_ref()?.classic.as_ref()
    }
}

/// `value` as an `Arc`: `like`'s or `group`'s field when equal, else a new one.
fn shared(
    value: &str,
    like: &MemberMeta,
    group: &MemberMeta,
    field: impl Fn(&MemberMeta) -> &Arc<str>,
) -> Arc<str> {
    [like, group].into_iter().map(field).find(|s| ***s == *value).cloned().unwrap_or_else(|| Arc::from(value))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn value() -> impl Strategy<Value = ConsumerMemberMetadataValue> {
        let s = || {
            proptest::option::of(prop_oneof![Just(String::new()), Just("a".to_owned()), Just("b".to_owned())])
        };
        let name = prop_oneof![Just("c"), Just("d")].prop_map(str::to_owned);
        (
            (s(), s(), s(), s()),
            (name.clone(), name.clone(), proptest::collection::vec(name, 0..3)),
            any::<i32>(),
            proptest::option::of(0..3i32),
        )
            .prop_map(
                |(
                    (instance_id, rack_id, regex, assignor),
                    (client_id, client_host, names),
                    timeout,
                    classic,
                )| {
                    ConsumerMemberMetadataValue {
                        instance_id,
                        rack_id,
                        client_id,
                        client_host,
                        subscribed_topic_names: names,
                        subscribed_topic_regex: regex,
                        rebalance_timeout_ms: timeout,
                        server_assignor: assignor,
                        classic: classic.map(|t| ClassicMemberMetadata {
                            session_timeout_ms: t,
                            supported_protocols: Vec::new(),
                        }),
                    }
                },
            )
    }

    proptest! {
        /// Whatever it shares with, the metadata gives back exactly the
        /// record value it was made from, and two are equal exactly when
        /// their values are.
        #[test]
        fn stands_for_its_record_value(a in value(), b in value(), c in value()) {
            let like = MemberMeta::new(&b, &MemberMeta::default(), &MemberMeta::default());
            let group = MemberMeta::new(&c, &like, &MemberMeta::default());
            let meta = MemberMeta::new(&a, &like, &group);
            prop_assert_eq!(meta.to_value(), a.clone());
            prop_assert_eq!(meta == like, a == b);
            prop_assert_eq!(meta.instance_id(), a.instance_id.as_deref());
            prop_assert_eq!(meta.classic(), a.classic.as_ref());
            if a.client_host == b.client_host {
                prop_assert!(Arc::ptr_eq(&meta.client_host, &like.client_host), "shared, not copied");
            }
        }
    }
}
