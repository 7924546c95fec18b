#!/usr/bin/env python3
"""End-to-end scenarios for group-server with real Kafka clients.

kafka-python 3.0.12 ("kp") and confluent-kafka 2.16.1 / librdkafka 2.16.0 ("ck") run as
separate worker processes (`driver.py worker '<json>'`) that poll continuously, report their
assignment as JSON lines on stdout and obey JSON commands on stdin. The driver
(`driver.py run --server BIN --workdir DIR`) starts the server on an ephemeral loopback
port, runs scenarios 1-9 of real-clients.md section 6, and checks client-side facts
together with the server's request log (--request-log: one JSON line per request).

The partitions hold no records: where a scenario speaks of consuming, it commits explicit
offsets and checks positions (the offsets of the Fetch requests the server sees) and
committed offsets instead. Every worker has a wall-clock limit and is killed by its own
pid when it overstays or a scenario fails.
"""

import json
import os
import shutil
import sys
import time

from worker_io import (
    ScenarioFailed,
    ServerProcess,
    WorkerProcess,
    check,
    emit,
    outcome,
    polled_commands,
    read_request_log,
    watchdog,
)

TOPIC = "t1"
PARTITIONS = 3
WORKER_LIFETIME_S = 90.0
# How late a client's report of its own assignment may reach the driver.
OBSERVATION_SLACK_S = 1.0
SESSION_MS = 6000
HEARTBEAT_MS = 500
MAX_POLL_MS = 10000


# --------------------------------------------------------------------------- worker side


class KpClient:
    def __init__(self, cfg):
        from kafka import KafkaConsumer
        from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
        from kafka.coordinator.assignors.range import RangePartitionAssignor

        strategy = (
            [CooperativeStickyAssignor] if cfg.get("strategy") == "cooperative-sticky" else [RangePartitionAssignor]
        )
        kwargs = dict(
            bootstrap_servers=cfg["bootstrap"],
            client_id=cfg["client_id"],
            group_id=cfg["group"],
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
            max_poll_interval_ms=MAX_POLL_MS,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            partition_assignment_strategy=strategy,
            request_timeout_ms=30500,
            retry_backoff_ms=100,
            reconnect_backoff_ms=100,
            reconnect_backoff_max_ms=500,
        )
        if cfg.get("instance"):
            kwargs["group_instance_id"] = cfg["instance"]
        self.c = KafkaConsumer(**kwargs)
        from kafka import TopicPartition

        self.TP = TopicPartition
        if cfg.get("mode") == "assign":
            self.c.assign([TopicPartition(TOPIC, p) for p in range(PARTITIONS)])
        else:
            self.c.subscribe([TOPIC])
            # real-clients.md gotcha 15: avoids a kafka-python single-leader rebalance hang.
            self.c.topics()

    def poll(self):
        self.c.poll(timeout_ms=100)

    def assignment(self):
        return sorted([tp.topic, tp.partition] for tp in self.c.assignment())

    def commit(self, offsets):
        from kafka.structs import OffsetAndMetadata

        self.c.commit({self.TP(t, int(p)): OffsetAndMetadata(o, "", -1) for t, p, o in offsets})

    def committed(self, parts):
        return [[t, p, self.c.committed(self.TP(t, p))] for t, p in parts]

    def close(self):
        self.c.close()


class CkClient:
    def __init__(self, cfg):
        from confluent_kafka import Consumer, TopicPartition

        self.TP = TopicPartition
        static = {"group.instance.id": cfg["instance"]} if cfg.get("instance") else {}
        self.c = Consumer(
            {
                **static,
                "bootstrap.servers": cfg["bootstrap"],
                "client.id": cfg["client_id"],
                "group.id": cfg["group"],
                "session.timeout.ms": SESSION_MS,
                "heartbeat.interval.ms": HEARTBEAT_MS,
                "max.poll.interval.ms": MAX_POLL_MS,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "partition.assignment.strategy": cfg.get("strategy", "range"),
                "reconnect.backoff.ms": 100,
                "reconnect.backoff.max.ms": 500,
                "retry.backoff.ms": 100,
            }
        )
        if cfg.get("mode") == "assign":
            self.c.assign([TopicPartition(TOPIC, p) for p in range(PARTITIONS)])
        else:
            self.c.subscribe([TOPIC])

    def poll(self):
        msg = self.c.poll(0.1)
        if msg is not None and msg.error():
            emit({"event": "client_error", "error": str(msg.error())})

    def assignment(self):
        return sorted([tp.topic, tp.partition] for tp in self.c.assignment())

    def commit(self, offsets):
        self.c.commit(offsets=[self.TP(t, int(p), o) for t, p, o in offsets], asynchronous=False)

    def committed(self, parts):
        got = self.c.committed([self.TP(t, p) for t, p in parts], timeout=10)
        return [[tp.topic, tp.partition, tp.offset if tp.offset >= 0 else None] for tp in got]

    def close(self):
        self.c.close()


def worker(cfg):
    client = (KpClient if cfg["client"] == "kp" else CkClient)(cfg)

    def poll():
        client.poll()
        return client.assignment()

    for cmd in polled_commands(poll):
        name = cmd["cmd"]
        try:
            if name == "commit":
                client.commit(cmd["offsets"])
                emit({"event": "reply", "id": cmd["id"], "ok": True})
            elif name == "committed":
                emit({"event": "reply", "id": cmd["id"], "ok": True, "offsets": client.committed(cmd["partitions"])})
            elif name in ("close", "eof"):
                client.close()
                emit({"event": "closed"})
                return
        except Exception as e:  # reported to the driver, which decides
            emit({"event": "reply", "id": cmd.get("id"), "ok": False, "error": repr(e)})


# --------------------------------------------------------------------------- driver side


class Worker(WorkerProcess):
    """A client process; killed by its own pid on failure or when it overstays."""

    # Arrival times, apart from the "t" that some events carry from the worker.
    STAMP = "_t"
    live = []

    def __init__(self, driver, client, group, name, **extra):
        self.name = name
        self.client_id = name
        cfg = dict(client=client, bootstrap=driver.bootstrap, group=group, client_id=name, **extra)
        stderr = os.path.join(driver.workdir, name + ".stderr")
        super().__init__(__file__, "worker", cfg, stderr, WORKER_LIFETIME_S)
        Worker.live.append(self)

    def assignment(self):
        with self.cond:
            a = [ev for ev in self.events if ev["event"] == "assignment"]
        return a[-1]["partitions"] if a else None

    def wait_assignment(self, pred, timeout, what):
        """Waits until the latest reported assignment satisfies pred."""
        end = time.time() + timeout
        while True:
            a = self.assignment()
            if a is not None and pred(parts(a)):
                return parts(a)
            if time.time() > end:
                raise ScenarioFailed(f"{self.name}: timed out waiting for {what}; last assignment {a}")
            with self.cond:
                self.cond.wait(0.05)

    def commit(self, offsets):
        self.request({"cmd": "commit", "offsets": [[TOPIC, p, o] for p, o in offsets.items()]})

    def committed(self):
        ev = self.request({"cmd": "committed", "partitions": [[TOPIC, p] for p in range(PARTITIONS)]})
        return {p: o for _, p, o in ev["offsets"]}

    def close(self, timeout=20):
        super().close(timeout)
        self.forget()

    def kill(self):
        super().kill()
        self.forget()

    def forget(self):
        if self in Worker.live:
            Worker.live.remove(self)

    @classmethod
    def kill_all(cls):
        for w in list(cls.live):
            w.kill()

def parts(assignment):
    return frozenset(p for _, p in assignment)


ALL = frozenset(range(PARTITIONS))


class Server(ServerProcess):
    def __init__(self, binary, workdir):
        super().__init__(binary, workdir)
        self.log_path = os.path.join(workdir, "requests.jsonl")
        self.data_dir = os.path.join(workdir, "data")
        open(self.log_path, "w").close()

    def start(self, durable=False):
        args = [
            "--topic",
            f"{TOPIC}:{PARTITIONS}",
            "--initial-rebalance-delay-ms",
            "0",
            "--request-log",
            self.log_path,
            "--exit-on-stdin-close",
        ]
        args += ["--data-dir", self.data_dir] if durable else ["--memory"]
        self.launch(args, "server.stderr")

    def requests(self, client_id=None, api=None, since=0.0):
        return read_request_log(self.log_path, client_id, api, since)


class Driver:
    def __init__(self, binary, workdir):
        self.workdir = workdir
        self.server = Server(binary, workdir)
        self.results = []

    @property
    def bootstrap(self):
        return self.server.bootstrap

    def admin(self):
        from kafka.admin import KafkaAdminClient

        return KafkaAdminClient(bootstrap_servers=self.bootstrap, client_id="e2e-admin", request_timeout_ms=20000)

    def last_generation(self, client_id, since=0.0):
        syncs = self.server.requests(client_id=client_id, api="SyncGroup", since=since)
        return syncs[-1]["generation"] if syncs else None

    def fetch_offsets(self, client_id, since=0.0):
        """The first fetch offset the server saw per partition from client_id."""
        first = {}
        for r in self.server.requests(client_id=client_id, api="Fetch", since=since):
            for topic, p, off in r.get("partitions", []):
                first.setdefault(p, off)
        return first

    def wait_fetch_offsets(self, client_id, partitions, since, timeout=15):
        end = time.time() + timeout
        while True:
            got = self.fetch_offsets(client_id, since)
            if all(p in got for p in partitions):
                return got
            if time.time() > end:
                raise ScenarioFailed(f"{client_id}: no Fetch for {sorted(partitions)} (saw {got})")
            time.sleep(0.1)

    def run(self, number, name, fn):
        start = time.time()
        self.group_start = start
        self.sub_results = []
        try:
            ok, detail = outcome(fn)
        finally:
            Worker.kill_all()
        took = time.time() - start
        rows = self.sub_results if ok and self.sub_results else [(number, name, ok, took, detail)]
        for number, name, ok, took, detail in rows:
            self.results.append((number, name, ok, took, detail))
            print(f"scenario {number} ({name}): {'PASS' if ok else 'FAIL'} in {took:.1f}s: {detail}", flush=True)

    # ----------------------------------------------------------------- scenarios

    def s1_single(self):
        ws = {c: Worker(self, c, f"s1-{c}", f"s1-{c}") for c in ("kp", "ck")}
        for c, w in ws.items():
            w.wait_assignment(lambda a: a == ALL, 20, "all 3 partitions")
        for c, w in ws.items():
            w.commit({0: 10, 1: 10, 2: 10})
            got = w.committed()
            check(got == {0: 10, 1: 10, 2: 10}, f"{c}: committed {got}")
            check(self.last_generation(w.client_id) == 1, f"{c}: generation {self.last_generation(w.client_id)}")
            w.close()
            check(self.server.requests(client_id=w.client_id, api="LeaveGroup"), f"{c}: no LeaveGroup seen")
        admin = self.admin()
        try:
            desc = admin.describe_groups(["s1-kp", "s1-ck"])
            states = {g: desc[g]["group_state"] for g in desc}
            check(all(s == "Empty" for s in states.values()), f"states after close: {states}")
        finally:
            admin.close()
        return "kp+ck: generation 1, 3 partitions, committed 10/10/10, LeaveGroup, group Empty"

    def start_pair(self, first, second, group, strategy="range"):
        a = Worker(self, first, group, f"{group}-a-{first}", strategy=strategy)
        a.wait_assignment(lambda s: s == ALL, 20, "all partitions (alone)")
        b = Worker(self, second, group, f"{group}-b-{second}", strategy=strategy)
        return a, b

    def wait_split(self, a, b, timeout=20):
        end = time.time() + timeout
        while True:
            pa, pb = a.assignment(), b.assignment()
            if pa is not None and pb is not None:
                sa, sb = parts(pa), parts(pb)
                if not (sa & sb) and (sa | sb) == ALL and sorted([len(sa), len(sb)]) == [1, 2]:
                    ga, gb = self.last_generation(a.client_id), self.last_generation(b.client_id)
                    if ga == gb and ga is not None:
                        return sa, sb, ga
            if time.time() > end:
                raise ScenarioFailed(f"no 2+1 split: {a.name}={pa} {b.name}={pb}")
            time.sleep(0.05)

    def one_leader(self, group_members, generation):
        senders = [
            m.client_id
            for m in group_members
            for r in self.server.requests(client_id=m.client_id, api="SyncGroup")
            if r["generation"] == generation and r["assignments"] > 0
        ]
        check(len(set(senders)) == 1, f"generation {generation}: assignments sent by {senders}")

    def s2_s3_s8(self):
        pairs = {v: self.start_pair(v[0], v[1], f"s2-{v[0]}-{v[1]}") for v in (("kp", "kp"), ("ck", "ck"), ("kp", "ck"))}
        splits = {}
        for v, (a, b) in pairs.items():
            sa, sb, gen = self.wait_split(a, b)
            self.one_leader([a, b], gen)
            splits[v] = (sorted(sa), sorted(sb), gen)
        s2 = "; ".join(f"{v[0]}+{v[1]}: {s[0]}+{s[1]} gen {s[2]}" for v, s in splits.items())
        self.sub_results.append((2, "two consumers split partitions", True, time.time() - self.group_start, s2))

        # Scenario 8 (admin view) while the kp+kp group is Stable.
        t8 = time.time()
        admin = self.admin()
        try:
            groups = {g["group_id"] if isinstance(g, dict) else g[0] for g in admin.list_groups()}
            check({"s2-kp-kp", "s2-ck-ck", "s2-kp-ck"} <= groups, f"list_groups: {groups}")
            d = admin.describe_groups(["s2-kp-kp"])["s2-kp-kp"]
            check(d["group_state"] == "Stable", f"describe state {d['group_state']}")
            check(len(d["members"]) == 2, f"describe members {len(d['members'])}")
            check(d["protocol_data"] == "range", f"protocol {d['protocol_data']}")
            decoded = set()
            for m in d["members"]:
                assignment = m["member_assignment"]
                for entry in assignment["assigned_partitions"]:
                    check(entry["topic"] == TOPIC, f"decoded assignment topic {entry}")
                    decoded |= set(entry["partitions"])
            check(decoded == ALL, f"decoded assignments cover {decoded}")
        finally:
            admin.close()
        ck_view = self.confluent_admin_view("s2-ck-ck")
        s8_stable = f"Stable, 2 members, range, assignments decode to {sorted(decoded)}; confluent AdminClient: {ck_view}"
        t8 = time.time() - t8

        # Scenario 3: the joiner leaves, the first member takes over.
        t3 = time.time()
        out = []
        for v, (a, b) in pairs.items():
            gen = splits[v][2]
            left_at = time.time()
            b.close()
            a.wait_assignment(lambda s: s == ALL, 10, "all partitions after the other left")
            took = time.time() - left_at
            gen2 = self.last_generation(a.client_id)
            # The survivor's first generation after the leave is gen + 1. kafka-python
            # sometimes rejoins once more by itself right after syncing (a client-side
            # metadata check, nothing the server asked for), so later ones may follow.
            synced = {r["generation"] for r in self.server.requests(client_id=a.client_id, api="SyncGroup", since=left_at)}
            check(gen + 1 in synced and gen2 >= gen + 1, f"{v}: generation {gen} -> {sorted(synced)}")
            hb = [r for r in self.server.requests(client_id=a.client_id, api="Heartbeat", since=left_at) if r["error"] == 27]
            joins = self.server.requests(client_id=a.client_id, api="JoinGroup", since=left_at)
            check(hb or joins, f"{v}: survivor neither saw REBALANCE_IN_PROGRESS nor rejoined")
            check(took < 5, f"{v}: takeover took {took:.1f}s")
            out.append(f"{v[0]}+{v[1]}: gen {gen}->{gen2} in {took:.1f}s (heartbeat 27 seen: {bool(hb)})")
        self.sub_results.append((3, "one member leaves, the other takes over", True, time.time() - t3, "; ".join(out)))
        t8b = time.time()

        # Scenario 8, after everyone has left: Empty, offsets still listed with topics=null.
        a = pairs[("kp", "kp")][0]
        a.commit({0: 4, 1: 5, 2: 6})
        for v, (a, b) in pairs.items():
            a.close()
        admin = self.admin()
        try:
            d = admin.describe_groups(["s2-kp-kp"])["s2-kp-kp"]
            check(d["group_state"] == "Empty", f"after leaving: {d['group_state']}")
            offsets = admin.list_group_offsets({"s2-kp-kp": None})["s2-kp-kp"]
            got = {tp.partition: om.offset for tp, om in offsets.items()}
            check(got == {0: 4, 1: 5, 2: 6}, f"list_group_offsets(topics=null): {got}")
        finally:
            admin.close()
        t8 += time.time() - t8b
        detail = f"{s8_stable}; then Empty with offsets 4/5/6 from topics=null"
        self.sub_results.append((8, "admin view, kafka-python and confluent admin clients", True, t8, detail))

    def confluent_admin_view(self, group):
        """ListGroups v5, DescribeGroups v5 and OffsetFetch v9 (topics=null) from librdkafka."""
        from confluent_kafka import ConsumerGroupTopicPartitions
        from confluent_kafka.admin import AdminClient

        a = AdminClient({"bootstrap.servers": self.bootstrap, "client.id": "e2e-ck-admin"})
        listed = a.list_consumer_groups(request_timeout=20).result()
        states = {g.group_id: g.state.name for g in listed.valid}
        check(states.get(group) == "STABLE", f"confluent list_consumer_groups: {states}")
        d = a.describe_consumer_groups([group], request_timeout=20)[group].result()
        check(d.partition_assignor == "range" and len(d.members) == 2, f"confluent describe: {d}")
        owned = sorted(tp.partition for m in d.members for tp in m.assignment.topic_partitions)
        check(owned == sorted(ALL), f"confluent describe assignments: {owned}")
        offsets = a.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=20)[group].result()
        check(offsets.group_id == group, f"confluent list_consumer_group_offsets: {offsets}")
        return "STABLE, 2 members, range, assignments cover [0, 1, 2], offsets listed"

    def s4_crash(self):
        out = []
        pairs = [self.start_pair(x, y, f"s4-{x}-{y}") for x, y in (("kp", "ck"), ("ck", "kp"))]
        for a, b in pairs:
            self.wait_split(a, b)
        killed_at = time.time()
        for a, b in pairs:
            b.kill()
        for a, b in pairs:
            a.wait_assignment(lambda s: s == ALL, 15, "everything after the crash")
            took = time.time() - killed_at
            check(took < 10, f"{a.name}: reassigned after {took:.1f}s")
            check(not self.server.requests(client_id=b.client_id, api="LeaveGroup"), "killed member sent LeaveGroup")
            out.append(f"{a.name} took over from killed {b.name} in {took:.1f}s")
            a.close()
        return "; ".join(out)

    def s5_resume(self):
        committed = {0: 5, 1: 6, 2: 7}
        first = {c: Worker(self, c, f"s5-{c}", f"s5-{c}-1") for c in ("kp", "ck")}
        for c, w in first.items():
            w.wait_assignment(lambda s: s == ALL, 20, "all partitions")
            w.commit(committed)
            w.close()
        out = []
        since = time.time()
        second = {c: Worker(self, c, f"s5-{c}", f"s5-{c}-2") for c in ("kp", "ck")}
        for c, w in second.items():
            w.wait_assignment(lambda s: s == ALL, 20, "all partitions (restarted)")
            got = self.wait_fetch_offsets(w.client_id, ALL, since)
            check(got == committed, f"{c}: first fetch offsets {got}, committed {committed}")
            lo = self.server.requests(client_id=w.client_id, api="ListOffsets", since=since)
            check(not lo, f"{c}: used ListOffsets {lo}")
            check(w.committed() == committed, f"{c}: committed() {w.committed()}")
            out.append(f"{c}: resumed at {sorted(got.items())}, no ListOffsets")
            w.close()
        return "; ".join(out)

    def s6_restart(self):
        """Commit, kill the server, restart it on the same directory and port.

        The coordinator persists group records as well as offsets, so running members may
        simply carry on (heartbeats answered NONE) or rejoin (UNKNOWN_MEMBER_ID); either
        way they must keep all partitions. A consumer started afterwards resumes at the
        committed offsets.
        """
        committed = {0: 3, 1: 4, 2: 5}
        shutil.rmtree(self.server.data_dir, ignore_errors=True)
        self.server.kill()
        self.server.start(durable=True)
        ws = {c: Worker(self, c, f"s6-{c}", f"s6-{c}") for c in ("kp", "ck")}
        for c, w in ws.items():
            w.wait_assignment(lambda s: s == ALL, 20, "all partitions")
            w.commit(committed)
        restart = time.time()
        self.server.kill()
        self.server.start(durable=True)
        out = []
        for c, w in ws.items():
            end = time.time() + 20
            while True:
                ok_hb = [
                    r
                    for r in self.server.requests(client_id=w.client_id, api="Heartbeat", since=restart)
                    if r.get("error") == 0
                ]
                rejoined = self.last_generation(w.client_id, since=restart)
                if ok_hb and (rejoined is not None or ok_hb[-1]["generation"] >= 1):
                    break
                check(time.time() < end, f"{c}: no successful heartbeat after the restart")
                time.sleep(0.1)
            check(w.assignment() is not None and parts(w.assignment()) == ALL, f"{c}: lost partitions {w.assignment()}")
            check(w.committed() == committed, f"{c}: committed() after restart {w.committed()}")
            how = f"rejoined at generation {rejoined}" if rejoined else f"kept generation {ok_hb[-1]['generation']}"
            out.append(f"{c}: {how}, committed() = 3/4/5")
        admin = self.admin()
        try:
            offs = admin.list_group_offsets({"s6-kp": None, "s6-ck": None})
            for g in ("s6-kp", "s6-ck"):
                got = {tp.partition: om.offset for tp, om in offs[g].items()}
                check(got == committed, f"{g}: OffsetFetch after restart {got}")
        finally:
            admin.close()
        for w in ws.values():
            w.close()
        since = time.time()
        again = {c: Worker(self, c, f"s6-{c}", f"s6-{c}-2") for c in ("kp", "ck")}
        for c, w in again.items():
            w.wait_assignment(lambda s: s == ALL, 20, "all partitions (new consumer)")
            got = self.wait_fetch_offsets(w.client_id, ALL, since)
            check(got == committed, f"{c}: new consumer fetched from {got}")
            out.append(f"{c}: new consumer resumed at {sorted(got.items())}")
            w.close()
        self.server.kill()
        self.server.start(durable=False)
        return "; ".join(out)

    def s7_cooperative(self):
        out = []
        for first, second in (("ck", "kp"), ("kp", "ck")):
            out.append(self.cooperative_pair(first, second))
        return "; ".join(out)

    def cooperative_pair(self, first, second):
        group = f"s7-{first}-{second}"
        a = Worker(self, first, group, f"{group}-a-{first}", strategy="cooperative-sticky")
        a.wait_assignment(lambda s: s == ALL, 20, "all partitions (alone)")
        gen0 = self.last_generation(a.client_id)
        b = Worker(self, second, group, f"{group}-b-{second}", strategy="cooperative-sticky")
        sa, sb, gen = self.wait_split(a, b, timeout=25)
        # Every assignment a reported after it first had everything kept what it ends with.
        history = [parts(ev["partitions"]) for ev in a.events if ev["event"] == "assignment"]
        start = next(i for i, h in enumerate(history) if h == ALL)
        check(all(sa <= h for h in history[start:]), f"{first} lost a partition it kept: {history}")
        # No duplicate owners: the two reported sets are disjoint. Each client
        # reports its assignment only after its poll() returns, so a revocation
        # can reach us a poll (plus pipe latency) after the other member's new
        # assignment: an overlap counts only if it outlives that window, as a
        # real double assignment lasts a whole generation.
        timeline = sorted(
            [(ev["_t"], "a", parts(ev["partitions"])) for ev in a.events if ev["event"] == "assignment"]
            + [(ev["_t"], "b", parts(ev["partitions"])) for ev in b.events if ev["event"] == "assignment"]
        )
        cur = {"a": frozenset(), "b": frozenset()}
        overlap_since = None
        for t, who, s in timeline:
            before = dict(cur)
            cur[who] = s
            if cur["a"] & cur["b"]:
                overlap_since = t if overlap_since is None else overlap_since
            elif overlap_since is not None:
                lasted = t - overlap_since
                check(lasted < OBSERVATION_SLACK_S, f"duplicate owners for {lasted:.2f}s: {before}")
                overlap_since = None
        check(not (cur["a"] & cur["b"]), f"duplicate owners at the end: {cur}")
        check(gen - gen0 >= 2, f"expected two generations after the join, got {gen0} -> {gen}")
        a.close()
        b.close()
        return f"{first} first kept {sorted(sa)}, {second} got {sorted(sb)}, generations {gen0} -> {gen}"

    def s9_standalone(self):
        out = []
        ws = {c: Worker(self, c, f"s9-{c}", f"s9-{c}", mode="assign") for c in ("kp", "ck")}
        for c, w in ws.items():
            w.wait_assignment(lambda s: s == ALL, 20, "assign()")
            w.commit({0: 2, 1: 2, 2: 2})
            got = w.committed()
            check(got == {0: 2, 1: 2, 2: 2}, f"{c}: committed {got}")
            gens = [r["generation"] for r in self.server.requests(client_id=w.client_id, api="OffsetCommit")]
            check(gens and all(g == -1 for g in gens), f"{c}: commit generations {gens}")
            out.append(f"{c}: generation -1 commit accepted, committed() = 2/2/2")
            w.close()
        return "; ".join(out)

    def s10_static(self):
        group = "s10-static"
        a = Worker(self, "kp", group, "s10-kp-1", instance="s10-kp")
        a.wait_assignment(lambda s: s == ALL, 20, "all partitions (alone)")
        b = Worker(self, "ck", group, "s10-ck-1", instance="s10-ck")
        sa, sb, gen = self.wait_split(a, b)
        out = []
        members = {"kp": a, "ck": b}
        for c in ("ck", "kp"):
            old = members[c]
            other = members["kp" if c == "ck" else "ck"]
            keep = parts(old.assignment())
            other_keep = parts(other.assignment())
            restarted_at = time.time()
            old.close()
            check(not self.server.requests(client_id=old.client_id, api="LeaveGroup"), f"static {c} sent LeaveGroup")
            new = Worker(self, c, group, f"s10-{c}-2", instance=f"s10-{c}")
            got = new.wait_assignment(lambda s: bool(s), 20, "an assignment after the restart")
            took = time.time() - restarted_at
            check(got == keep, f"{c}: restarted with {sorted(got)}, had {sorted(keep)}")
            check(parts(other.assignment()) == other_keep, f"the other member moved: {other.assignment()}")
            joins = self.server.requests(client_id=other.client_id, api="JoinGroup", since=restarted_at)
            out.append(f"{c}: same partitions {sorted(got)} after {took:.1f}s, other member rejoined {len(joins) // 2} time(s)")
            members[c] = new
        for w in members.values():
            w.close()
        return "; ".join(out)

    def main(self):
        self.started = time.time()
        watchdog(Worker.live)
        self.server.start(durable=False)
        try:
            self.run(1, "single consumer, each client", self.s1_single)
            self.run("2+3+8", "two consumers split; one leaves; admin view", self.s2_s3_s8)
            self.run(4, "member crash, session expiry", self.s4_crash)
            self.run(5, "commit, restart the consumer, it resumes", self.s5_resume)
            self.run(6, "coordinator restart with durable storage", self.s6_restart)
            self.run(7, "cooperative-sticky, mixed clients", self.s7_cooperative)
            self.run(9, "standalone commit", self.s9_standalone)
            self.run(10, "static membership restart", self.s10_static)
        finally:
            Worker.kill_all()
            self.server.kill()
        failed = [r for r in self.results if not r[2]]
        total = time.time() - self.started
        print(f"e2e: {len(self.results) - len(failed)}/{len(self.results)} scenarios passed in {total:.1f}s", flush=True)
        return 1 if failed else 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
        return 0
    args = sys.argv[1:]
    binary = args[args.index("--server") + 1]
    workdir = args[args.index("--workdir") + 1]
    os.makedirs(workdir, exist_ok=True)
    return Driver(binary, workdir).main()


if __name__ == "__main__":
    sys.exit(main())
