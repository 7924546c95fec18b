//! Minimum-of-N timing of every assignor on scenarios S1-S6, for a loaded
//! machine where criterion's medians are inflated by preemption: the fastest
//! of N runs is what the code costs when it gets a core.
//!
//! ```text
//! cargo run --release -p group-assignors --example bench_min [SCENARIO...]
//! ```
//!
//! With no argument every scenario runs (S3 and S6 need a few seconds each);
//! `S6-unshared` (S6 with a separately built topic list per member) runs only
//! when named.

#[path = "../benches/scenarios.rs"]
mod scenarios;

use std::time::Instant;

use group_assignors::get_assignor;
use group_types::{MemberSubscription, TopicPartition};

use crate::scenarios::{ASSIGNORS, moved, s4, s5, uniform, uniform_unshared};

type Input = (Vec<MemberSubscription>, Vec<TopicPartition>);
type Builder = fn() -> Input;

fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let builders: [(&str, Builder); 7] = [
        ("S1", || uniform(1, 1000, 10)),
        ("S2", || uniform(100, 100, 100)),
        ("S3", || uniform(1000, 1000, 2000)),
        ("S4", || {
            let (ms, parts, first) = s4();
            let second = get_assignor("sticky").expect("built in").assign(&ms, &parts).expect("valid input");
            eprintln!("S4: sticky moves {} partitions", moved(&first, &second));
            (ms, parts)
        }),
        ("S5", s5),
        ("S6", || uniform(10_000, 10, 1000)),
        // Not a benchmarks.md scenario: S6 with a separately built list per
        // member, to show what sharing saves. Only on request.
        ("S6-unshared", || uniform_unshared(10_000, 10, 1000)),
    ];
    println!("| scenario | {} |", ASSIGNORS.join(" | "));
    println!("|---|---|---|---|---|");
    for (id, build) in builders {
        let selected = if wanted.is_empty() { !id.contains('-') } else { wanted.iter().any(|w| w == id) };
        if !selected {
            continue;
        }
        let (ms, parts) = build();
        let runs = if parts.len() > 50_000 { 15 } else { 300 };
        let mut row = Vec::new();
        for name in ASSIGNORS {
            let assignor = get_assignor(name).expect("built in");
            let mut best = f64::MAX;
            for _ in 0..runs {
                let start = Instant::now();
                let out = assignor.assign(&ms, &parts).expect("valid input");
                best = best.min(start.elapsed().as_secs_f64() * 1e3);
                drop(out);
            }
            row.push(format!("{best:.3}"));
        }
        println!("| {id} | {} |", row.join(" | "));
    }
}
