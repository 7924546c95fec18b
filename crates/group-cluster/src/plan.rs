//! What a node should do about partition ownership, given what etcd shows: a pure
//! function of one observation, so that the driver over etcd and the seeded
//! simulation run the very same decisions.
//!
//! The rules, which keep ownership from ever overlapping and spread it evenly:
//! - a partition is owned by whoever holds its owner key; a node only ever creates
//!   a missing key (never takes one over), so a partition of a dead node moves only
//!   once etcd has expired that node's lease;
//! - the owner key's create revision is the owner's epoch: a later owner always has
//!   a higher one, so the store fences the appends of any earlier owner;
//! - a node serves a partition only while etcd shows its key under the node's
//!   current lease with the epoch the node loaded it at: anything else unloads it;
//! - each live node's quota is `partitions / nodes`, the first `partitions % nodes`
//!   nodes (by id) one more, so none owns more than `ceil(partitions / nodes)`; a
//!   node above its quota releases the excess, one below it claims free partitions,
//!   those whose preferred node (`live[p % nodes]`) it is first.

use std::collections::BTreeMap;

use group_offsets::{CoordinatorPartition, OwnerEpoch};

/// An etcd lease id.
pub type LeaseId = i64;

/// A partition's owner key as etcd shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerRecord {
    /// The node id written in the key.
    pub node_id: i32,
    /// The lease the key is attached to.
    pub lease: LeaseId,
    /// The key's create revision: the owner's epoch.
    pub epoch: OwnerEpoch,
}

/// One consistent reading of the cluster's keys (one etcd revision).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    /// The ids of the nodes registered under a live lease, with what they advertise.
    pub nodes: BTreeMap<i32, String>,
    /// The owner key of every owned partition, by partition number.
    pub owners: BTreeMap<u32, OwnerRecord>,
}

/// Where a partition stands on this node (the coordinator's view).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hosting {
    /// Not loaded.
    Unowned,
    /// Being loaded at this epoch.
    Loading,
    /// Loaded and served at this epoch.
    Owned(OwnerEpoch),
}

/// What the node should do next; the driver carries the actions out in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Stop serving a partition etcd no longer shows as this node's (lease lost,
    /// key deleted or recreated by another node).
    Unload(CoordinatorPartition),
    /// Give up a partition above quota: unload it, then delete the owner key if it
    /// still has this epoch.
    Release(CoordinatorPartition, OwnerEpoch),
    /// Create the missing owner key under this node's lease, then load the
    /// partition at the key's create revision.
    Claim(CoordinatorPartition),
    /// The key is this node's but the partition is not loaded (a claim whose load
    /// failed, or service stopped while etcd was unreachable): load it.
    Load(CoordinatorPartition, OwnerEpoch),
}

/// The node's own side of the decision.
#[derive(Debug, Clone)]
pub struct Local<'a> {
    /// This node's id.
    pub node_id: i32,
    /// The lease this node holds now, `None` when it holds none.
    pub lease: Option<LeaseId>,
    /// The state of every partition on this node, indexed by partition number.
    pub hosting: &'a [Hosting],
}

/// How many partitions the node at `index` of `nodes` live nodes should own.
pub fn quota(partitions: u32, nodes: usize, index: usize) -> usize {
    if nodes == 0 {
        return 0;
    }
    let base = partitions as usize / nodes;
    base + usize::from(index < partitions as usize % nodes)
}

/// The actions that bring this node closer to an even, non-overlapping spread.
pub fn reconcile(local: &Local<'_>, observed: &Observation) -> Vec<Action> {
    let partitions = local.hosting.len() as u32;
    let mine = |p: u32| -> Option<OwnerEpoch> {
        let lease = local.lease?;
        observed.owners.get(&p).filter(|o| o.node_id == local.node_id && o.lease == lease).map(|o| o.epoch)
    };
    let mut actions = Vec::new();
    // Safety first: stop serving whatever etcd does not show as ours at the epoch
    // we loaded it at.
    for (p, hosting) in local.hosting.iter().enumerate() {
        let p = p as u32;
        let keep = match hosting {
            Hosting::Unowned => true,
            // A load in flight finishes or fails on its own; its key is checked again
            // once it is Owned.
            Hosting::Loading => true,
            Hosting::Owned(epoch) => mine(p) == Some(*epoch),
        };
        if !keep {
            actions.push(Action::Unload(CoordinatorPartition(p)));
        }
    }
    let Some(_) = local.lease else { return actions };
    let live: Vec<i32> = observed.nodes.keys().copied().collect();
    let Some(index) = live.iter().position(|&n| n == local.node_id) else {
        // Not registered (yet): serve nothing new.
        return actions;
    };
    let preferred = |p: u32| live[p as usize % live.len()] == local.node_id;
    let target = quota(partitions, live.len(), index);
    let owned: Vec<(u32, OwnerEpoch)> = (0..partitions).filter_map(|p| mine(p).map(|e| (p, e))).collect();
    if owned.len() > target {
        // Keep the preferred ones; give up the others, highest first.
        let mut excess: Vec<(u32, OwnerEpoch)> = owned.clone();
        excess.sort_by_key(|&(p, _)| (preferred(p), std::cmp::Reverse(p)));
        for &(p, epoch) in excess.iter().take(owned.len() - target) {
            actions.push(Action::Release(CoordinatorPartition(p), epoch));
        }
    } else if owned.len() < target {
        let mut free: Vec<u32> = (0..partitions).filter(|p| !observed.owners.contains_key(p)).collect();
        free.sort_by_key(|&p| (!preferred(p), p));
        for p in free.into_iter().take(target - owned.len()) {
            actions.push(Action::Claim(CoordinatorPartition(p)));
        }
    }
    let released: Vec<u32> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Release(p, _) => Some(p.0),
            _ => None,
        })
        .collect();
    for &(p, epoch) in &owned {
        if local.hosting[p as usize] == Hosting::Unowned && !released.contains(&p) {
            actions.push(Action::Load(CoordinatorPartition(p), epoch));
        }
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn observed(nodes: &[i32], owners: &[(u32, i32, LeaseId, u64)]) -> Observation {
        Observation {
            nodes: nodes.iter().map(|&n| (n, format!("127.0.0.1:{}", 9000 + n))).collect(),
            owners: owners
                .iter()
                .map(|&(p, node_id, lease, epoch)| {
                    (p, OwnerRecord { node_id, lease, epoch: OwnerEpoch(epoch) })
                })
                .collect(),
        }
    }

    #[rstest]
    #[case(50, 1, &[50])]
    #[case(50, 3, &[17, 17, 16])]
    #[case(50, 7, &[8, 7, 7, 7, 7, 7, 7])]
    #[case(2, 3, &[1, 1, 0])]
    fn quotas_add_up_and_differ_by_at_most_one(
        #[case] partitions: u32,
        #[case] nodes: usize,
        #[case] want: &[usize],
    ) {
        let got: Vec<usize> = (0..nodes).map(|i| quota(partitions, nodes, i)).collect();
        assert_eq!(got, want);
        assert_eq!(got.iter().sum::<usize>(), partitions as usize);
    }

    #[test]
    fn a_lone_node_claims_every_free_partition() {
        let hosting = vec![Hosting::Unowned; 4];
        let local = Local { node_id: 1, lease: Some(7), hosting: &hosting };
        let actions = reconcile(&local, &observed(&[1], &[]));
        assert_eq!(actions, (0..4).map(|p| Action::Claim(CoordinatorPartition(p))).collect::<Vec<_>>());
    }

    #[test]
    fn a_node_above_quota_releases_the_partitions_preferred_by_others() {
        let hosting: Vec<Hosting> = (1..=4).map(|e| Hosting::Owned(OwnerEpoch(e))).collect();
        let local = Local { node_id: 1, lease: Some(7), hosting: &hosting };
        let owners: Vec<_> = (0..4).map(|p| (p, 1, 7, u64::from(p) + 1)).collect();
        // Nodes 1 and 2: node 1 prefers 0 and 2, node 2 prefers 1 and 3.
        let actions = reconcile(&local, &observed(&[1, 2], &owners));
        assert_eq!(
            actions,
            vec![
                Action::Release(CoordinatorPartition(3), OwnerEpoch(4)),
                Action::Release(CoordinatorPartition(1), OwnerEpoch(2))
            ]
        );
    }

    #[test]
    fn a_new_node_waits_for_partitions_to_be_released_and_never_takes_a_held_key() {
        let hosting = vec![Hosting::Unowned; 4];
        let local = Local { node_id: 2, lease: Some(9), hosting: &hosting };
        let owners: Vec<_> = (0..4).map(|p| (p, 1, 7, u64::from(p) + 1)).collect();
        assert_eq!(reconcile(&local, &observed(&[1, 2], &owners)), vec![]);
        let owners: Vec<_> = [0, 2].iter().map(|&p| (p, 1, 7, u64::from(p) + 1)).collect();
        assert_eq!(
            reconcile(&local, &observed(&[1, 2], &owners)),
            vec![Action::Claim(CoordinatorPartition(1)), Action::Claim(CoordinatorPartition(3))]
        );
    }

    #[rstest]
    // The key is gone (lease expired while the node was paused).
    #[case(&[])]
    // Recreated by another node.
    #[case(&[(0, 2, 9, 10)])]
    // Same node id, but an older or newer lease (a restarted process).
    #[case(&[(0, 1, 8, 1)])]
    // Ours, but recreated at another epoch: what we loaded is stale.
    #[case(&[(0, 1, 7, 5)])]
    fn a_partition_not_shown_as_ours_at_our_epoch_is_unloaded(#[case] owners: &[(u32, i32, LeaseId, u64)]) {
        let hosting = vec![Hosting::Owned(OwnerEpoch(1))];
        let local = Local { node_id: 1, lease: Some(7), hosting: &hosting };
        let actions = reconcile(&local, &observed(&[1, 2], owners));
        assert_eq!(actions.first(), Some(&Action::Unload(CoordinatorPartition(0))));
    }

    #[test]
    fn without_a_lease_a_node_unloads_everything_and_claims_nothing() {
        let hosting = vec![Hosting::Owned(OwnerEpoch(1)), Hosting::Unowned];
        let local = Local { node_id: 1, lease: None, hosting: &hosting };
        let actions = reconcile(&local, &observed(&[1], &[(0, 1, 7, 1)]));
        assert_eq!(actions, vec![Action::Unload(CoordinatorPartition(0))]);
    }

    #[test]
    fn a_held_key_that_is_not_loaded_is_loaded_at_its_epoch() {
        let hosting = vec![Hosting::Unowned, Hosting::Owned(OwnerEpoch(3))];
        let local = Local { node_id: 1, lease: Some(7), hosting: &hosting };
        let actions = reconcile(&local, &observed(&[1], &[(0, 1, 7, 2), (1, 1, 7, 3)]));
        assert_eq!(actions, vec![Action::Load(CoordinatorPartition(0), OwnerEpoch(2))]);
    }
}
