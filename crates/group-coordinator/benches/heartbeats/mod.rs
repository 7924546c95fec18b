//! What the consumer and share group benches (`consumer.rs`, `share.rs`) share: the
//! groups' shape and the two measurements, keep-alive heartbeats and a join then leave.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput};

/// Groups in the keep-alive benchmark.
pub(crate) const GROUPS: usize = 100;
/// Members of each group.
pub(crate) const MEMBERS: usize = 100;

/// Group `g`'s id.
pub(crate) fn group_id(g: usize) -> String {
    format!("group-{g:04}")
}

/// Member `m` of group `g`, as long as a client's generated id.
pub(crate) fn member_id(g: usize, m: usize) -> String {
    format!("member-{g:04}-{m:05}-Zm9vYmFyYmF6")
}

/// `{kind}_heartbeat_10k_members_100_groups`, each of `members` (group, id, epoch) in
/// turn keeping alive with `request`; and `{kind}_join_and_leave_100_member_group`, a
/// newcomer to group 0 joining with `join` then leaving (epoch -1). `send` answers.
pub(crate) fn bench<R, A>(
    c: &mut Criterion,
    kind: &str,
    members: &[(usize, String, i32)],
    mut send: impl FnMut(R) -> Option<A>,
    request: impl Fn(usize, &str, i32) -> R,
    join: impl Fn(usize, &str) -> R,
) {
    let mut group = c.benchmark_group(format!("{kind}_heartbeat_10k_members_100_groups"));
    group.throughput(Throughput::Elements(1));
    let mut i = 0;
    group.bench_function("core", |b| {
        b.iter_batched(
            || {
                i = (i + 1) % members.len();
                let (g, id, epoch) = &members[i];
                request(*g, id, *epoch)
            },
            |r| black_box(send(r)),
            BatchSize::SmallInput,
        )
    });
    group.finish();
    let mut group = c.benchmark_group(format!("{kind}_join_and_leave_100_member_group"));
    group.throughput(Throughput::Elements(1));
    let mut n = 0;
    group.bench_function("core", |b| {
        b.iter(|| {
            n += 1;
            let id = format!("newcomer-{n}");
            let joined = send(join(0, &id)).expect("joined");
            black_box(&joined);
            black_box(send(request(0, &id, -1)))
        })
    });
    group.finish();
}
