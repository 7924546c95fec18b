//! A classic member's assignment and the protocols it supports, in one
//! allocation.
//!
//! A Stable group holds one of these per member for as long as it lives, and
//! they were three allocations (the assignment, the protocol list and each
//! protocol's metadata) with a pointer and a length for each. Here they are
//! one exactly sized byte string: `u32 LE` assignment length, the assignment,
//! then per protocol `u32 LE` name length, the name (UTF-8), `u32 LE`
//! metadata length, the metadata. Only [`MemberPayload::new`] writes one, so
//! every length is in bounds and every name is UTF-8.

use group_types::ProtocolMetadata;

/// A member's assignment and `(protocol name, metadata)` list, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MemberPayload {
    bytes: Box<[u8]>,
}

impl MemberPayload {
    /// The payload of `assignment` and `protocols`.
    pub(crate) fn new<'a>(
        assignment: &[u8],
        protocols: impl IntoIterator<Item = (&'a str, &'a [u8]), IntoIter: Clone>,
    ) -> MemberPayload {
        MemberPayload::from_raw(assignment, protocols.into_iter().map(|(n, m)| (n.as_bytes(), m)))
    }

    /// [`Self::new`] with names as bytes: a payload rebuilt from another one's
    /// protocols (whose names are UTF-8 already) checks none of them again.
    fn from_raw<'a>(
        assignment: &[u8],
        protocols: impl Iterator<Item = (&'a [u8], &'a [u8])> + Clone,
    ) -> MemberPayload {
        let size =
            4 + assignment.len() + protocols.clone().map(|(n, m)| 8 + n.len() + m.len()).sum::<usize>();
        let mut bytes = Vec::with_capacity(size);
        push(&mut bytes, assignment);
        for (name, metadata) in protocols {
            push(&mut bytes, name);
            push(&mut bytes, metadata);
        }
        MemberPayload { bytes: bytes.into_boxed_slice() }
    }

    /// The payload of a joining member's `protocols`, with no assignment yet.
    pub(crate) fn joining(protocols: &[ProtocolMetadata]) -> MemberPayload {
        MemberPayload::new(&[], protocols.iter().map(|p| (p.name.as_str(), &p.metadata[..])))
    }

    /// The member's assignment (empty until its first SyncGroup).
    pub(crate) fn assignment(&self) -> &[u8] {
        let mut rest = &self.bytes[..];
        take(&mut rest)
    }

    /// The same protocols with `assignment`.
    pub(crate) fn with_assignment(&self, assignment: &[u8]) -> MemberPayload {
        MemberPayload::from_raw(assignment, self.raw())
    }

    /// The same assignment with `protocols`.
    pub(crate) fn with_protocols(&self, protocols: &[ProtocolMetadata]) -> MemberPayload {
        let protocols = protocols.iter().map(|p| (p.name.as_str(), &p.metadata[..]));
        MemberPayload::new(self.assignment(), protocols)
    }

    /// The same assignment with `other`'s protocols.
    pub(crate) fn with_protocols_of(&self, other: &MemberPayload) -> MemberPayload {
        MemberPayload::from_raw(self.assignment(), other.raw())
    }

    /// The protocols, in the member's order of preference.
    pub(crate) fn protocols(&self) -> Protocols<'_> {
        Protocols { raw: self.raw() }
    }

    /// The protocols with their names as bytes: comparing needs no UTF-8 check.
    fn raw(&self) -> Raw<'_> {
        let mut rest = &self.bytes[..];
        take(&mut rest);
        Raw { rest }
    }

    /// The metadata the member gave for `protocol`, empty when it named none such.
    pub(crate) fn metadata(&self, protocol: &str) -> &[u8] {
        self.raw().find(|(name, _)| *name == protocol.as_bytes()).map_or(&[][..], |(_, m)| m)
    }

    /// True when the member named exactly `protocols`, metadata included.
    pub(crate) fn matches(&self, protocols: &[ProtocolMetadata]) -> bool {
        let mut held = self.raw();
        protocols.iter().all(|p| held.next() == Some((p.name.as_bytes(), &p.metadata[..])))
            && held.next().is_none()
    }

    /// True when both name the same protocols in the same order.
    pub(crate) fn same_names_as(&self, other: &MemberPayload) -> bool {
        self.raw().map(|(n, _)| n).eq(other.raw().map(|(n, _)| n))
    }

    /// The protocols as the protocol's types have them.
    pub(crate) fn to_metadata(&self) -> Vec<ProtocolMetadata> {
        self.protocols().map(|(name, metadata)| ProtocolMetadata::new(name, metadata.to_vec())).collect()
    }
}

/// The protocols of a [`MemberPayload`]: `(name, metadata)`.
#[derive(Debug, Clone)]
pub(crate) struct Protocols<'a> {
    raw: Raw<'a>,
}

impl<'a> Iterator for Protocols<'a> {
    type Item = (&'a str, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let (name, metadata) = self.raw.next()?;
        // Written from a `&str` by `MemberPayload::new`: never fails.
        Some((std::str::from_utf8(name).unwrap_or_default(), metadata))
    }
}

/// [`Protocols`] with names as bytes.
#[derive(Debug, Clone)]
struct Raw<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Raw<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let name = take(&mut self.rest);
        Some((name, take(&mut self.rest)))
    }
}

fn push(out: &mut Vec<u8>, bytes: &[u8]) {
    // Kafka's protocol bounds names and metadata far below 4 GiB, and so does memory.
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The next length-prefixed part of `rest` (empty past the end, which only a
/// payload this module did not write could reach).
fn take<'a>(rest: &mut &'a [u8]) -> &'a [u8] {
    let Some((len, tail)) = rest.split_first_chunk::<4>() else {
        *rest = &[];
        return &[];
    };
    let len = (u32::from_le_bytes(*len) as usize).min(tail.len());
    let (part, tail) = tail.split_at(len);
    *rest = tail;
    part
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn protocols(list: &[(String, Vec<u8>)]) -> Vec<ProtocolMetadata> {
        list.iter().map(|(n, m)| ProtocolMetadata::new(n.as_str(), m.clone())).collect()
    }

    proptest! {
        #[test]
        fn a_payload_gives_back_what_it_was_made_of(
            assignment in proptest::collection::vec(any::<u8>(), 0..40),
            list in proptest::collection::vec((".{0,12}", proptest::collection::vec(any::<u8>(), 0..40)), 0..5),
            other in proptest::collection::vec(any::<u8>(), 0..10),
        ) {
            let metadata = protocols(&list);
            let payload = MemberPayload::joining(&metadata).with_assignment(&assignment);
            prop_assert_eq!(payload.assignment(), &assignment[..]);
            prop_assert_eq!(payload.to_metadata(), metadata.clone());
            prop_assert!(payload.matches(&metadata));
            for (name, m) in &list {
                // The first protocol of that name, as Kafka's member finds it.
                let first = list.iter().find(|(n, _)| n == name).map(|(_, m)| m).unwrap_or(m);
                prop_assert_eq!(payload.metadata(name), &first[..]);
            }
            prop_assert_eq!(payload.metadata("\u{0}absent"), &[][..]);
            let changed = payload.with_assignment(&other);
            prop_assert_eq!(changed.assignment(), &other[..]);
            prop_assert!(changed.same_names_as(&payload) && changed.matches(&metadata));
        }
    }

    #[test]
    fn names_and_metadata_are_told_apart() {
        let a = MemberPayload::joining(&[
            ProtocolMetadata::new("range", vec![1]),
            ProtocolMetadata::new("sticky", vec![]),
        ]);
        let fewer = [ProtocolMetadata::new("range", vec![1])];
        assert!(!a.matches(&fewer), "a prefix is not the list");
        assert!(!a.same_names_as(&MemberPayload::joining(&fewer)));
        let other_metadata =
            [ProtocolMetadata::new("range", vec![2]), ProtocolMetadata::new("sticky", vec![])];
        assert!(!a.matches(&other_metadata) && a.same_names_as(&MemberPayload::joining(&other_metadata)));
        let renamed = a.with_protocols(&[ProtocolMetadata::new("roundrobin", vec![1])]);
        assert!(!renamed.same_names_as(&a));
        assert_eq!(renamed.assignment(), a.assignment());
        assert_eq!(
            a.with_assignment(&[7, 7]).with_protocols_of(&renamed).to_metadata(),
            renamed.to_metadata()
        );
        assert_eq!(a.with_assignment(&[7, 7]).with_protocols_of(&renamed).assignment(), &[7, 7]);
    }
}
