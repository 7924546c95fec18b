//! Group, member and instance ids, protocol types and names: the strings by which
//! the group protocol names groups, their members and what they run, kept as the
//! bytes the front end decoded them from.
//!
//! Every request of the group APIs carries one or more of them, and the
//! coordinator keys its maps by them, so they are taken from the wire without a
//! copy and compare, hash and order exactly as `str` does: a map keyed by one of
//! them is looked up with a plain `&str`.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::convert::Infallible;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::str::FromStr;
use std::sync::Arc;

use bytes::Bytes;
use bytestring::ByteString;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes offered as an identifier that are not UTF-8 (Kafka's strings always are).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an identifier must be UTF-8: {0}")]
pub struct BadUtf8Id(pub std::str::Utf8Error);

/// The identifiers share one API; only their names and what they name differ, so
/// that the type system keeps a member id from being passed as a group id.
macro_rules! identifier {
    ($(#[$summary:meta])* $name:ident; $(#[$extra:meta])*) => {
        $(#[$summary])*
        ///
        /// UTF-8 held in [`bytes::Bytes`]: the front end's decoder (kafka-protocol's
        /// `StrBytes`) already holds the id as a slice of the request frame, so
        /// taking it is a reference-count bump instead of an allocation and a copy,
        /// and so is every clone after that. The other side of sharing: while any
        /// clone lives, the whole frame it was cut from stays allocated, so state
        /// that outlives the request (a group's members, its offsets) keeps a
        /// [`detach`](Self::detach)ed copy instead.
        ///
        /// Equality, hashing and order are `str`'s, which is what lets a map keyed
        /// by this type be queried with a `&str` (through [`Borrow<str>`]); the
        /// serde form is a plain string, the same as the `String` it replaces.
        $(#[$extra])*
        #[derive(Clone)]
        pub struct $name(ByteString);

        impl $name {
            /// The id `s`, pointing at the static string: no allocation, usable in
            /// a `static`.
            pub const fn from_static(s: &'static str) -> Self {
                Self(ByteString::from_static(s))
            }

            /// The empty id, without allocating.
            pub const fn empty() -> Self {
                Self(ByteString::new())
            }

            /// The id held in `bytes`, without copying them; an error if they are
            /// not UTF-8.
            pub fn from_utf8(bytes: Bytes) -> Result<Self, BadUtf8Id> {
                ByteString::try_from(bytes).map(Self).map_err(BadUtf8Id)
            }

            /// The id as a string.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id's UTF-8 bytes.
            pub fn as_bytes(&self) -> &Bytes {
                self.0.as_bytes()
            }

            /// The id's UTF-8 bytes, for an encoder to write without a copy.
            pub fn into_bytes(self) -> Bytes {
                self.0.into_bytes()
            }

            /// A copy of the id in an allocation of its own, exactly its size: the
            /// result pins nothing else (no request frame), so it is what
            /// long-lived state should keep. The empty id stays unallocated.
            pub fn detach(&self) -> Self {
                if self.0.is_empty() {
                    Self::empty()
                } else {
                    Self(ByteString::from(self.as_str()))
                }
            }
        }

        impl Default for $name {
            /// The empty id.
            fn default() -> Self {
                Self::empty()
            }
        }

        impl From<String> for $name {
            /// Takes over the string's allocation: no copy. A string with spare
            /// capacity is shrunk first, because `Bytes` would otherwise give it
            /// a second allocation (a shared header) to remember the capacity,
            /// and a second free when the id is dropped.
            fn from(s: String) -> Self {
                Self(ByteString::from(s.into_boxed_str()))
            }
        }

        impl From<&str> for $name {
            /// Copies the string.
            fn from(s: &str) -> Self {
                Self(ByteString::from(s))
            }
        }

        impl From<&String> for $name {
            /// Copies the string.
            fn from(s: &String) -> Self {
                Self::from(s.as_str())
            }
        }

        impl From<Box<str>> for $name {
            /// Takes over the box's allocation: no copy.
            fn from(s: Box<str>) -> Self {
                Self(ByteString::from(s))
            }
        }

        impl From<Arc<str>> for $name {
            /// Copies the string (an `Arc`'s allocation cannot be handed to `Bytes`).
            fn from(s: Arc<str>) -> Self {
                Self::from(&*s)
            }
        }

        impl TryFrom<Bytes> for $name {
            type Error = BadUtf8Id;

            /// As [`from_utf8`](Self::from_utf8): no copy.
            fn try_from(bytes: Bytes) -> Result<Self, BadUtf8Id> {
                Self::from_utf8(bytes)
            }
        }

        impl From<$name> for Bytes {
            /// The id's bytes, for an encoder: no copy.
            fn from(id: $name) -> Bytes {
                id.into_bytes()
            }
        }

        impl From<$name> for String {
            /// Reuses the id's allocation when it is the only owner of all of it,
            /// copies otherwise.
            fn from(id: $name) -> String {
                String::from(id.0)
            }
        }

        impl FromStr for $name {
            type Err = Infallible;

            fn from_str(s: &str) -> Result<Self, Infallible> {
                Ok(Self::from(s))
            }
        }

        impl Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                self.as_str()
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                self.as_str()
            }
        }

        // Equality, order and hashing are `str`'s, as `Borrow<str>` requires.
        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.0 == other.0
            }
        }

        impl Eq for $name {}

        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }

        impl Ord for $name {
            fn cmp(&self, other: &Self) -> Ordering {
                self.as_str().cmp(other.as_str())
            }
        }

        impl Hash for $name {
            // Exactly as `str` hashes (not as `[u8]` does, which adds a length
            // prefix), so that a `&str` finds the id in a hash map.
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.as_str().hash(state);
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                self.as_str() == other.as_str()
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                other == self
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                other == self
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                other == self
            }
        }

        impl fmt::Debug for $name {
            /// Quoted, as a `&str` prints.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self.as_str(), f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self.as_str(), f)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer).map(Self::from)
            }
        }
    };
}

identifier! {
    /// A group's id, as the client names it.
    GroupId;
    ///
    /// ```
    /// use group_types::GroupId;
    /// use group_types::hash::ClientMap;
    ///
    /// let id = GroupId::from_static("orders");
    /// assert_eq!(id, "orders");
    /// assert!(GroupId::from("billing") < id);
    ///
    /// let mut generations: ClientMap<GroupId, i32> = ClientMap::default();
    /// generations.insert(id, 3);
    /// assert_eq!(generations.get("orders"), Some(&3));
    /// ```
}

identifier! {
    /// A member's id, as the coordinator assigns it; empty for a member that has
    /// none yet.
    MemberId;
}

identifier! {
    /// A static member's instance id (KIP-345).
    GroupInstanceId;
}

identifier! {
    /// A group's protocol type: `consumer` for Kafka's consumers, `connect` for
    /// Connect workers; every member of a classic group names the same one.
    ProtocolType;
}

identifier! {
    /// One protocol of a protocol type, as a member offers it and the coordinator
    /// selects it: for consumers, an assignor's name (`range`, `cooperative-sticky`).
    ProtocolName;
}

identifier! {
    /// The metadata string a client commits with an offset; `""` when it sent null.
    CommitMetadata;
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::collections::hash_map::RandomState;
    use std::hash::BuildHasher;

    use proptest::prelude::*;

    use super::*;
    use crate::hash::{ClientMap, ClientState};

    fn agrees_with_str(a: &str, b: &str) -> Result<(), TestCaseError> {
        let (ia, ib) = (GroupId::from(a.to_owned()), GroupId::from(b.to_owned()));
        prop_assert_eq!(ia == ib, a == b);
        prop_assert_eq!(ia.cmp(&ib), a.cmp(b));
        prop_assert_eq!(ia.partial_cmp(&ib), a.partial_cmp(b));
        let (client, std) = (ClientState::default(), RandomState::new());
        prop_assert_eq!(client.hash_one(GroupId::from(a)), client.hash_one(a));
        prop_assert_eq!(std.hash_one(GroupId::from(a)), std.hash_one(a));
        Ok(())
    }

    proptest! {
        #[test]
        fn eq_cmp_and_hash_agree_with_str(a in any::<String>(), b in any::<String>()) {
            agrees_with_str(&a, &b)?;
        }

        // Arbitrary strings are almost never equal or share a prefix: a small
        // alphabet makes both common.
        #[test]
        fn eq_cmp_and_hash_agree_with_str_on_near_strings(a in "[aé]{0,3}", b in "[aé]{0,3}") {
            agrees_with_str(&a, &b)?;
        }
    }

    #[test]
    fn from_utf8_rejects_bad_bytes_and_shares_good_ones() {
        let bad = GroupId::from_utf8(Bytes::from_static(b"\xff"));
        assert!(matches!(bad, Err(BadUtf8Id(_))));
        assert!(bad.unwrap_err().to_string().starts_with("an identifier must be UTF-8: "));

        let frame = Bytes::from(b"\x00\x06orders".to_vec());
        let wire = frame.slice(2..);
        let id = GroupId::from_utf8(wire.clone()).unwrap();
        assert_eq!(id.as_bytes().as_ptr(), wire.as_ptr());
        assert_eq!(id, "orders");
        assert_eq!(id.into_bytes().as_ptr(), wire.as_ptr());
    }

    #[test]
    fn detach_copies_into_an_allocation_that_pins_nothing() {
        let frame = Bytes::from(b"\x00\x06orders\x00\x00".to_vec());
        let id = GroupId::from_utf8(frame.slice(2..8)).unwrap();
        let detached = id.detach();
        assert_ne!(detached.as_bytes().as_ptr(), id.as_bytes().as_ptr());
        assert_eq!(detached, id);
        drop(id);
        // Only the detached copy is left, and it does not hold the frame.
        assert!(frame.is_unique());
        assert_eq!(detached, "orders");

        let empty = GroupId::from_utf8(frame.slice(4..4)).unwrap().detach();
        assert!(empty.is_empty());
        assert_eq!(empty, GroupId::empty());
        assert_eq!(GroupId::default().detach(), "");
    }

    #[test]
    fn owned_strings_are_taken_without_a_copy_and_given_back() {
        let s = String::from("orders");
        let ptr = s.as_ptr();
        let id = GroupId::from(s);
        assert_eq!(id.as_ptr(), ptr);
        let back = String::from(id);
        assert_eq!((back.as_str(), back.as_ptr()), ("orders", ptr));

        let boxed: Box<str> = "billing".into();
        let ptr = boxed.as_ptr();
        assert_eq!(GroupId::from(boxed).as_ptr(), ptr);

        let shared: Arc<str> = "audit".into();
        assert_eq!(GroupId::from(shared.clone()), *shared);
        assert_eq!(GroupId::from(&String::from("g")), "g");
        assert_eq!("g".parse::<GroupId>(), Ok(GroupId::from_static("g")));
    }

    #[test]
    fn a_map_keyed_by_ids_is_found_by_str() {
        let mut client: ClientMap<GroupId, u32> = ClientMap::default();
        client.insert(GroupId::from("g"), 1);
        let mut std: HashMap<GroupId, u32> = HashMap::new();
        std.insert(GroupId::from_static("g"), 2);
        assert_eq!((client.get("g"), std.get("g")), (Some(&1), Some(&2)));
        assert_eq!(client.get("h"), None);
    }

    #[test]
    fn serde_form_is_a_plain_string() {
        let id = GroupId::from("orders");
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"orders\"");
        assert_eq!(json, serde_json::to_string("orders").unwrap());
        assert_eq!(serde_json::from_str::<GroupId>(&json).unwrap(), id);
        assert!(serde_json::from_str::<GroupId>("7").is_err());
    }

    #[test]
    fn debug_quotes_and_display_prints_the_string() {
        static ID: GroupId = GroupId::from_static("or\"ders");
        assert_eq!(format!("{ID:?}"), format!("{:?}", "or\"ders"));
        assert_eq!(format!("{ID}"), "or\"ders");
        assert_eq!(format!("{:>9}|", GroupId::from("g")), "        g|");
    }

    #[test]
    fn member_and_instance_ids_behave_the_same() {
        let member = MemberId::from("consumer-1-5b1c");
        assert_eq!(member, "consumer-1-5b1c");
        assert_eq!("consumer-1-5b1c", member);
        assert_eq!(String::from("consumer-1-5b1c"), member);
        assert_eq!(member.to_string(), "consumer-1-5b1c");
        assert_eq!(format!("{member:?}"), "\"consumer-1-5b1c\"");
        assert!(MemberId::default().is_empty());

        let instance = GroupInstanceId::from_static("host-a");
        assert_eq!(instance, "host-a");
        assert_eq!(*"host-a", instance);
        assert_eq!(instance.to_string(), "host-a");
        assert_eq!(format!("{instance:?}"), "\"host-a\"");
        let mut by_instance: ClientMap<GroupInstanceId, u32> = ClientMap::default();
        by_instance.insert(instance.clone(), 1);
        assert_eq!(by_instance.get("host-a"), Some(&1));
        assert_eq!(serde_json::to_string(&instance).unwrap(), "\"host-a\"");
    }

    #[test]
    fn commit_metadata_is_an_identifier_too() {
        let frame = Bytes::from(b"\x00\x04ckpt".to_vec());
        let metadata = CommitMetadata::from_utf8(frame.slice(2..)).unwrap();
        assert_eq!(metadata.as_bytes().as_ptr(), frame[2..].as_ptr());
        assert_eq!(metadata, "ckpt");
        let detached = metadata.detach();
        assert_ne!(detached.as_bytes().as_ptr(), metadata.as_bytes().as_ptr());
        assert_eq!(detached, metadata);
        assert_eq!(CommitMetadata::default(), "");
        assert!(CommitMetadata::from_utf8(frame.slice(2..2)).unwrap().detach().is_empty());
        assert_eq!(serde_json::to_string(&detached).unwrap(), "\"ckpt\"");
        assert_eq!(serde_json::from_str::<CommitMetadata>("\"\"").unwrap(), CommitMetadata::empty());
    }
}
