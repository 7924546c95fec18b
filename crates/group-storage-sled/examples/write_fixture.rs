//! Writes the fixture store the tests load (`tests/fixtures/store-v3`) and
//! what it loads to (`expected.txt`, `epochs.txt`), with this build's code:
//! `cargo run -p group-storage-sled --example write_fixture -- DIR`. The
//! committed fixture was written by the build before the shared record codec,
//! so the test proves that stores of that build still load.

#[path = "../tests/it/fixture_records.rs"]
mod fixture_records;

use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch};
use group_storage_sled::{SledMetadataStore, SledOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: write_fixture DIR")?;
    let dir = std::path::Path::new(&dir);
    let store_dir = dir.join("store-v3");
    let store = SledMetadataStore::open_with_options(
        &store_dir,
        SledOptions::new().partitions(fixture_records::FIXTURE_PARTITIONS),
    )?;
    for (group, epoch, records) in fixture_records::fixture_appends() {
        // Groups share partitions: an epoch never goes back.
        let p = store.partition_of(group);
        store.append_blocking(p, OwnerEpoch(epoch).max(store.owner_epoch(p)?), records)?;
    }
    let expected = fixture_records::canonical(store.load_all()?);
    let epochs: Vec<String> = (0..fixture_records::FIXTURE_PARTITIONS)
        .map(|p| store.owner_epoch(CoordinatorPartition(p)).map(|e| e.0.to_string()))
        .collect::<Result<_, _>>()?;
    drop(store);
    std::fs::write(dir.join("expected.txt"), expected)?;
    std::fs::write(dir.join("epochs.txt"), epochs.join(" ") + "\n")?;
    Ok(())
}
