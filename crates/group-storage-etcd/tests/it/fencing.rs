//! Fencing: by the stored epoch (a lower epoch after a higher one is refused
//! and leaves nothing visible; an empty append fences older owners), and by
//! owner keys (an append must carry the owner key's create_revision, which
//! changes when the lease goes and another node creates the key).

use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch, StorageError};
use group_storage_etcd::owner_key;
use rstest::rstest;

use crate::common::{Raw, config, connect, etcd, offset};

const P: CoordinatorPartition = CoordinatorPartition(3);

#[rstest]
#[case::lower(5, 4, true)]
#[case::equal(5, 5, false)]
#[case::higher(5, 6, false)]
#[case::zero_after_one(1, 0, true)]
#[case::zero_twice(0, 0, false)]
#[case::below_max(u64::MAX, u64::MAX - 1, true)]
#[case::max_twice(u64::MAX, u64::MAX, false)]
fn an_append_below_the_stored_epoch_is_fenced_and_invisible(
    #[case] first: u64,
    #[case] second: u64,
    #[case] fenced: bool,
) {
    let cluster = etcd();
    let store = connect(config(&cluster, "epochs"));
    store.append_blocking(P, OwnerEpoch(first), vec![offset("g", "t", 0, 1, "first")]).expect("first append");
    let result = store.append_blocking(P, OwnerEpoch(second), vec![offset("g", "t", 0, 2, "second")]);
    let loaded = store.load(P).expect("load");
    let value = loaded.groups.offsets[0].get("t", 0).map(|o| o.offset);
    if fenced {
        assert_eq!(
            result,
            Err(StorageError::Fenced { partition: P.0, epoch: second, current: first }),
            "{second} after {first}"
        );
        assert_eq!(
            (loaded.epoch, value),
            (OwnerEpoch(first), Some(1)),
            "nothing of the fenced append is visible"
        );
    } else {
        assert_eq!(result, Ok(()));
        assert_eq!((loaded.epoch, value), (OwnerEpoch(second), Some(2)));
    }
}

#[test]
fn a_new_owners_empty_append_fences_the_old_owner() {
    let cluster = etcd();
    let config = config(&cluster, "takeover");
    let old = connect(config.clone());
    let new = connect(config);
    old.append_blocking(P, OwnerEpoch(1), vec![offset("g", "t", 0, 10, "")]).expect("old owner writes");

    // The new owner fences first, then loads: what it loads is final.
    new.append_blocking(P, OwnerEpoch(2), vec![]).expect("the empty append");
    assert_eq!(new.owner_epoch(P), Ok(OwnerEpoch(2)), "the empty append raised the epoch");
    let at_takeover = new.load(P).expect("load");
    assert_eq!(at_takeover.epoch, OwnerEpoch(2));

    let late = old.append_blocking(P, OwnerEpoch(1), vec![offset("g", "t", 0, 11, "late")]);
    assert_eq!(late, Err(StorageError::Fenced { partition: P.0, epoch: 1, current: 2 }));
    assert_eq!(new.load(P).expect("load"), at_takeover, "the old owner's late append is invisible");
    assert_eq!(old.load(P).expect("load"), at_takeover, "also through the old owner's store");
    new.append_blocking(P, OwnerEpoch(2), vec![offset("g", "t", 0, 12, "")]).expect("the new owner writes");
}

#[test]
fn owner_keys_fence_appends_by_their_create_revision() {
    let cluster = etcd();
    let config = group_storage_etcd::EtcdConfig { fence_with_owner_keys: true, ..config(&cluster, "owners") };
    let key = owner_key(&config.prefix, P);
    let store = connect(config);
    let raw = Raw::connect(&cluster);
    let mut client = raw.client.clone();

    // No owner key at all: nothing is accepted.
    assert!(matches!(store.append_blocking(P, OwnerEpoch(1), vec![]), Err(StorageError::Fenced { .. })));

    // Node A takes the partition: its key, on its lease.
    let (lease_a, epoch_a) = raw.runtime.block_on(async {
        let lease = client.lease_grant(30, None).await.expect("lease").id();
        let put = etcd_client::PutOptions::new().with_lease(lease);
        let rev = client
            .put(key.clone(), "node-a", Some(put))
            .await
            .expect("owner key")
            .header()
            .unwrap()
            .revision();
        (lease, OwnerEpoch(rev as u64))
    });
    store.append_blocking(P, epoch_a, vec![offset("g", "t", 0, 1, "a")]).expect("the owner appends");
    let wrong = OwnerEpoch(epoch_a.0 + 1);
    assert!(
        matches!(store.append_blocking(P, wrong, vec![]), Err(StorageError::Fenced { .. })),
        "an epoch that is not the key's create_revision is refused, even a higher one"
    );

    // A's lease is revoked (A died); node B creates the key again.
    raw.runtime.block_on(client.lease_revoke(lease_a)).expect("revoke");
    assert!(
        matches!(
            store.append_blocking(P, epoch_a, vec![offset("g", "t", 0, 2, "a")]),
            Err(StorageError::Fenced { .. })
        ),
        "the key is gone: A is fenced"
    );
    let epoch_b = raw.runtime.block_on(async {
        let lease = client.lease_grant(30, None).await.expect("lease").id();
        let put = etcd_client::PutOptions::new().with_lease(lease);
        let rev = client
            .put(key.clone(), "node-b", Some(put))
            .await
            .expect("owner key")
            .header()
            .unwrap()
            .revision();
        OwnerEpoch(rev as u64)
    });
    assert!(epoch_b > epoch_a);
    let stale = store.append_blocking(P, epoch_a, vec![offset("g", "t", 0, 3, "a")]);
    assert!(
        matches!(stale, Err(StorageError::Fenced { epoch, current, .. }) if epoch == epoch_a.0 && current == epoch_b.0),
        "A's epoch after B took over: {stale:?}"
    );
    store.append_blocking(P, epoch_b, vec![offset("g", "t", 0, 4, "b")]).expect("B appends");

    let loaded = store.load(P).expect("load");
    assert_eq!(loaded.epoch, epoch_b);
    let o = loaded.groups.offsets[0].get("t", 0).cloned().expect("an offset");
    assert_eq!((o.offset, o.metadata.as_str()), (4, "b"), "only accepted appends are visible");
}
