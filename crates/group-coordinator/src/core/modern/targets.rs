//! [`Targets`]: a modern group's target assignments by member id, in id order.
//!
//! A `BTreeMap` keyed by the ids spent some 45 bytes a member on its nodes
//! (half-full leaves of eleven keys and values, and the inner nodes above
//! them); a vector sorted by id spends the 24 bytes of the entry and the
//! vector's slack. Targets are looked up far more often than members join or
//! leave, and a join moves the vector's tail once (24 bytes a member), which
//! costs less than the join's assignment does.

use std::fmt;
use std::sync::Arc;

use super::assignment::Held;

/// Target assignments by member id, listed in id order.
#[derive(Clone, Default)]
pub(crate) struct Targets {
    /// Sorted by id, ids unique.
    entries: Vec<(Arc<str>, Held)>,
}

impl Targets {
    /// Where `member` is, or would be.
    fn find(&self, member: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(id, _)| (**id).cmp(member))
    }

    /// Member `member`'s target.
    pub(crate) fn get(&self, member: &str) -> Option<&Held> {
        let at = self.find(member).ok()?;
        Some(&self.entries[at].1)
    }

    /// Sets member `member`'s target, returning the one it replaces.
    pub(crate) fn insert(&mut self, member: Arc<str>, target: Held) -> Option<Held> {
        match self.find(&member) {
            Ok(at) => Some(std::mem::replace(&mut self.entries[at].1, target)),
            Err(at) => {
                self.entries.insert(at, (member, target));
                None
            }
        }
    }

    /// Takes member `member`'s target out.
    pub(crate) fn remove(&mut self, member: &str) -> Option<Held> {
        let at = self.find(member).ok()?;
        Some(self.entries.remove(at).1)
    }

    /// The targets of `ids`, which ascend, in one walk of both lists. A
    /// lookup each would binary-search the vector, comparing ids whose long
    /// common prefix and unpredictable outcome made that a sixth of a
    /// 100-member join (`perf`); walking in step, most ids are compared once.
    pub(crate) fn get_ascending<'a>(
        &'a self,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> impl Iterator<Item = Option<&'a Held>> {
        let mut at = 0;
        ids.into_iter().map(move |id| {
            while self.entries.get(at).is_some_and(|(k, _)| **k < *id) {
                at += 1;
            }
            match self.entries.get(at) {
                Some((k, target)) if **k == *id => Some(target),
                _ => None,
            }
        })
    }

    /// The member ids, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &Arc<str>> + '_ {
        self.entries.iter().map(|(id, _)| id)
    }
}

impl fmt::Debug for Targets {
    /// As a map in id order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.entries.iter().map(|(id, t)| (id, t))).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use group_assignors::server::MemberTarget;
    use group_types::TopicId;
    use proptest::prelude::*;

    use super::*;

    fn held(n: u8) -> Held {
        Held::from(MemberTarget { topics: vec![(TopicId([1; 16]), vec![i32::from(n)])] })
    }

    proptest! {
        /// Whatever the inserts and removals, targets are found and listed as
        /// a `BTreeMap` finds and lists them.
        #[test]
        fn finds_and_lists_as_an_ordered_map(ops in proptest::collection::vec((any::<bool>(), 0..20u8, 0..4u8), 0..100)) {
            let mut targets = Targets::default();
            let mut model: BTreeMap<Arc<str>, Held> = BTreeMap::new();
            for (set, id, n) in ops {
                let id: Arc<str> = Arc::from(format!("member-{id}"));
                if set {
                    prop_assert_eq!(targets.insert(id.clone(), held(n)), model.insert(id, held(n)));
                } else {
                    prop_assert_eq!(targets.remove(&id), model.remove(&id));
                }
                prop_assert_eq!(targets.keys().collect::<Vec<_>>(), model.keys().collect::<Vec<_>>());
                prop_assert_eq!(format!("{targets:?}"), format!("{model:?}"));
                for id in 0..20u8 {
                    let id = format!("member-{id}");
                    prop_assert_eq!(targets.get(&id), model.get(id.as_str()));
                }
                let mut ids: Vec<String> = (0..20u8).filter(|i| i % 3 != n % 3).map(|i| format!("member-{i}")).collect();
                ids.sort();
                let walked: Vec<_> = targets.get_ascending(ids.iter().map(String::as_str)).collect();
                let looked_up: Vec<_> = ids.iter().map(|id| model.get(id.as_str())).collect();
                prop_assert_eq!(walked, looked_up);
            }
        }
    }
}
