//! What the consumer and share group benches (`consumer.rs`, `share.rs`) share: the
//! groups' shape and the two measurements, keep-alive heartbeats and a join then leave.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, Throughput};
use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, MetadataImage, Request, RequestId, Response, TopicImage,
};
use group_types::TopicId;

/// The allocator group-server ships with (`--features system-allocator` for the system's).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// A core over `GROUPS` topics of 100 partitions (`topic-%04d`), one a group, whose
/// every write completes at once.
pub(crate) struct Driver {
    pub(crate) core: CoordinatorCore,
    next: u64,
    out: Effects,
}

impl Driver {
    pub(crate) fn new(config: CoordinatorConfig) -> Driver {
        let topics = (0..GROUPS)
            .map(|g| TopicImage::new(TopicId::from_u128(g as u128 + 1), format!("topic-{g:04}"), 100));
        let mut core = CoordinatorCore::new(config);
        core.update_metadata_image(Arc::new(MetadataImage::new(1, topics)));
        Driver { core, next: 0, out: Effects::default() }
    }

    /// Sends `request` and completes its writes, lets `settle` finish on the core what
    /// they released, and returns the answer.
    pub(crate) fn send(
        &mut self,
        request: Request,
        settle: impl FnOnce(&mut CoordinatorCore),
    ) -> Option<Response> {
        self.next += 1;
        let rid = RequestId(self.next);
        self.core.handle_into(1, rid, request, &mut self.out);
        while let Some(w) = self.out.writes.pop() {
            self.core.complete_write_into(1, w.id, Ok(()), &mut self.out);
        }
        settle(&mut self.core);
        let answer = self.out.responses.iter().find(|(r, _)| *r == rid).map(|(_, r)| r.clone());
        self.out.responses.clear();
        self.out.timers.clear();
        self.out.events.clear();
        answer
    }
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
