//! Memory per Stable member (`benchmarks.md` "Coordinator"): 1,000 groups of 100
//! members, each with a 50-byte subscription and a 20-byte assignment, loaded into
//! one core. Measured by dhat's counting allocator, so the figure is what the
//! core keeps (bytes it asked for, and the number of allocations, each of which
//! costs the system allocator about 16 bytes more), whatever else the process did
//! before.
//!
//! `cargo bench -p group-coordinator --bench memory`

mod common;

use std::hint::black_box;

use common::{config, stored};
use group_coordinator::CoordinatorCore;

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

fn live() -> (i64, i64) {
    let stats = dhat::HeapStats::get();
    (stats.curr_bytes as i64, stats.curr_blocks as i64)
}

fn main() {
    const GROUPS: usize = 1_000;
    const MEMBERS: usize = 100;
    // Testing mode: statistics only, no profile file written.
    let _profiler = dhat::Profiler::builder().testing().trim_backtraces(Some(4)).build();
    let mut core = CoordinatorCore::new(config());
    let (bytes_before, allocations_before) = live();
    for g in 0..GROUPS {
        // One group at a time: the input is freed before the next, so what stays
        // live is what the core keeps.
        let mut one = stored(1, MEMBERS);
        for record in &mut one.groups {
            record.group_id = format!("group-{g}").into();
        }
        let _ = core.load(0, one);
    }
    let (bytes_after, allocations_after) = live();
    let members = (GROUPS * MEMBERS) as f64;
    let bytes = (bytes_after - bytes_before) as f64 / members;
    let allocations = (allocations_after - allocations_before) as f64 / members;
    println!(
        "memory per Stable member (core, 50-byte subscription, 20-byte assignment, {GROUPS} groups of \
         {MEMBERS}): {bytes:.0} bytes requested in {allocations:.2} allocations \
         (about {:.0} bytes with the allocator's own 16 per allocation)",
        bytes + 16.0 * allocations
    );
    black_box(core.group_count());
}
