#!/usr/bin/env python3
"""End-to-end scenarios of KIP-848's consumer protocol with confluent-kafka 2.16.1
(librdkafka 2.16.0, `group.protocol=consumer`) against group-server.

Each client runs in its own worker process (`consumer_protocol.py worker '<json>'`, the
stdin/stdout plumbing of worker_io.py): it polls continuously, reports every assignment
change and every rebalance callback (assigned, revoked, lost) as a JSON line, and obeys
JSON commands (commit, committed, close). The driver
(`consumer_protocol.py run --server BIN --workdir DIR [--only a,b,...]`) starts one
server in memory shared by the scenarios and one on sled for the restart scenario, runs
the scenarios in parallel threads (each its own group, topics and client ids), and judges
them from the clients' reports and the server's request log (one JSON line per request).

The server runs with short consumer-group timers (session 5 s, heartbeat 0.5 s) so that
session expiry costs seconds. The partitions hold no records: "consuming" is polling,
judged by the Fetch requests the server sees. Every worker has a wall-clock limit and is
killed by its own pid when it overstays or its scenario ends.
"""

import json
import os
import sys
import threading
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
)

SESSION_MS = 5000
HEARTBEAT_MS = 500
# The rebalance (revocation) timeout members send: librdkafka's max.poll.interval.ms.
MAX_POLL_MS = 10000
WORKER_LIFETIME_S = 80.0
# Kafka's floor between two resolutions of a group's regexes (REGEX_BATCH_REFRESH_MIN_INTERVAL_MS).
REGEX_REFRESH_S = 10.0

# The shared server's topics; each scenario uses its own.
TOPICS = {
    "single": 3,
    "three": 6,
    "kill": 4,
    "leave": 4,
    "static": 4,
    "foo1": 2,
    "bar": 2,
    "commits": 3,
    "listed": 1,
    "migrate": 4,
}
RESTART_TOPIC = ("durable", 4)
# The metrics scenario's server holds only its group, so that its counts are exact.
METRICS_TOPIC = ("metered", 6)


# --------------------------------------------------------------------------- worker side


def worker(cfg):
    from confluent_kafka import Consumer, TopicPartition

    conf = {
        "bootstrap.servers": cfg["bootstrap"],
        "client.id": cfg["client_id"],
        "group.id": cfg["group"],
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "max.poll.interval.ms": MAX_POLL_MS,
        "reconnect.backoff.ms": 100,
        "reconnect.backoff.max.ms": 500,
        "retry.backoff.ms": 100,
        "debug": "cgrp",
    }
    if cfg.get("protocol", "consumer") == "consumer":
        conf["group.protocol"] = "consumer"
    else:
        conf.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    if cfg.get("instance"):
        conf["group.instance.id"] = cfg["instance"]
    c = Consumer(conf)

    def tps(partitions):
        return sorted([p.topic, p.partition] for p in partitions)

    def on_assign(consumer, partitions):
        emit({"event": "assigned", "partitions": tps(partitions), "t": time.time()})

    def on_revoke(consumer, partitions):
        emit({"event": "revoked", "partitions": tps(partitions), "t": time.time()})

    def on_lost(consumer, partitions):
        emit({"event": "lost", "partitions": tps(partitions), "t": time.time()})

    if cfg.get("assign"):
        c.assign([TopicPartition(t, p) for t, p in cfg["assign"]])
    else:
        c.subscribe(cfg["topics"], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)

    def poll():
        msg = c.poll(0.1)
        if msg is not None and msg.error():
            emit({"event": "client_error", "error": str(msg.error()), "fatal": msg.error().fatal()})
        return tps(c.assignment())

    for cmd in polled_commands(poll):
        name = cmd["cmd"]
        try:
            if name == "commit":
                offsets = [TopicPartition(t, int(p), int(o)) for t, p, o in cmd["offsets"]]
                result = c.commit(offsets=offsets, asynchronous=False)
                errors = [[r.topic, r.partition, str(r.error)] for r in result or [] if r.error]
                emit({"event": "reply", "id": cmd["id"], "ok": not errors, "error": errors})
            elif name == "committed":
                got = c.committed([TopicPartition(t, p) for t, p in cmd["partitions"]], timeout=10)
                offsets = [[tp.topic, tp.partition, tp.offset if tp.offset >= 0 else None] for tp in got]
                emit({"event": "reply", "id": cmd["id"], "ok": True, "offsets": offsets})
            elif name in ("close", "eof"):
                c.close()
                emit({"event": "closed", "t": time.time()})
                return
        except Exception as e:  # reported to the driver, which decides
            emit({"event": "reply", "id": cmd.get("id"), "ok": False, "error": repr(e)})


def kp_worker(cfg):
    """A classic-protocol member (kafka-python 3.0.12, range), for the migration scenario."""
    from kafka import KafkaConsumer

    c = KafkaConsumer(
        bootstrap_servers=cfg["bootstrap"],
        client_id=cfg["client_id"],
        group_id=cfg["group"],
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        max_poll_interval_ms=MAX_POLL_MS,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        retry_backoff_ms=100,
        reconnect_backoff_ms=100,
        reconnect_backoff_max_ms=500,
    )
    c.subscribe(cfg["topics"])
    # real-clients.md gotcha 15: avoids a kafka-python single-leader rebalance hang.
    c.topics()

    def poll():
        c.poll(timeout_ms=100)
        return sorted([tp.topic, tp.partition] for tp in c.assignment())

    for cmd in polled_commands(poll):
        if cmd["cmd"] in ("close", "eof"):
            c.close()
            emit({"event": "closed", "t": time.time()})
            return


# --------------------------------------------------------------------------- driver side


def run_one(name, scenario):
    """The driver of a one-scenario script (`SCRIPT run --server BIN --workdir DIR`):
    runs `scenario(binary, workdir)`, prints its PASS or FAIL line and the summary, and
    exits with its outcome."""
    args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
    binary, workdir = args["--server"], args["--workdir"]
    os.makedirs(workdir, exist_ok=True)
    start = time.time()
    ok, detail = outcome(scenario, binary, workdir)
    print(f"scenario {name}: {'PASS' if ok else 'FAIL'} in {time.time() - start:.1f}s: {detail}", flush=True)
    print(f"{name}: {1 if ok else 0}/1 scenarios passed", flush=True)
    sys.exit(0 if ok else 1)


def tp_set(partitions):
    return frozenset((t, p) for t, p in partitions)


def fmt(partitions):
    return ",".join(f"{t}-{p}" for t, p in sorted(partitions)) or "-"


class Worker(WorkerProcess):
    """A client process of one scenario; killed by its own pid when it overstays or the
    scenario ends."""

    def __init__(self, scenario, name, group, topics=None, kind="ck", server=None, **extra):
        self.name = name
        self.client_id = name
        self.scenario = scenario
        server = server or scenario.server
        cfg = dict(bootstrap=server.bootstrap, group=group, client_id=name, topics=topics or [], **extra)
        mode = "worker" if kind == "ck" else "kp-worker"
        super().__init__(__file__, mode, cfg, os.path.join(scenario.workdir, name + ".stderr"), WORKER_LIFETIME_S)
        scenario.workers.append(self)

    def of(self, kind):
        with self.cond:
            return [ev for ev in self.events if ev["event"] == kind]

    def fatal_errors(self):
        return [ev["error"] for ev in self.of("client_error") if ev.get("fatal")]

    def assignment(self):
        a = self.of("assignment")
        return tp_set(a[-1]["partitions"]) if a else None

    def wait_assignment(self, pred, timeout, what):
        """Waits until the latest reported assignment satisfies pred; returns it."""
        end = time.time() + timeout
        while True:
            a = self.assignment()
            if a is not None and pred(a):
                return a
            fatal = self.fatal_errors()
            check(not fatal, f"{self.name}: fatal client error {fatal} while waiting for {what}")
            if time.time() > end:
                raise ScenarioFailed(f"{self.name}: timed out after {timeout}s waiting for {what}; has {fmt(a or [])}")
            with self.cond:
                self.cond.wait(0.05)

    def commit(self, offsets):
        self.request({"cmd": "commit", "offsets": [[t, p, o] for (t, p), o in sorted(offsets.items())]})

    def committed(self, partitions):
        ev = self.request({"cmd": "committed", "partitions": sorted([t, p] for t, p in partitions)})
        return {(t, p): o for t, p, o in ev["offsets"]}

    def close(self, timeout=20):
        """Closes the worker; returns when it said it closed."""
        return super().close(timeout)["t"]

    def revoked(self, since=0.0, until=float("inf")):
        """The partitions revoke or lost callbacks took away between two instants."""
        out = set()
        for ev in self.of("revoked") + self.of("lost"):
            if since <= ev["t"] <= until:
                out |= tp_set(ev["partitions"])
        return out

    def assignment_at(self, t):
        """The assignment the client reported last before instant t."""
        held = frozenset()
        for ev in self.of("assignment"):
            if ev["t"] <= t:
                held = tp_set(ev["partitions"])
        return held


class Server(ServerProcess):
    def __init__(self, binary, workdir, name, topics, durable=False, metered=False):
        super().__init__(binary, workdir)
        self.name = name
        self.topics = topics
        self.durable = durable
        self.metered = metered
        self.metrics_url = None
        self.log_path = os.path.join(workdir, f"{name}.requests.jsonl")
        self.data_dir = os.path.join(workdir, f"{name}.data")
        open(self.log_path, "w").close()

    def start(self):
        args = ["--request-log", self.log_path]
        for t, n in self.topics.items():
            args += ["--topic", f"{t}:{n}"]
        args += [
            "--initial-rebalance-delay-ms", "0",
            "--consumer-min-session-timeout-ms", "1000",
            "--consumer-session-timeout-ms", str(SESSION_MS),
            "--consumer-min-heartbeat-interval-ms", "100",
            "--consumer-heartbeat-interval-ms", str(HEARTBEAT_MS),
            "--exit-on-stdin-close",
        ]
        args += ["--data-dir", self.data_dir] if self.durable else ["--memory"]
        if self.metered:
            args += ["--metrics-listen", "127.0.0.1:0"]
        self.launch(args, f"{self.name}.stderr", f"server {self.name}", rust_log="info,sled=warn")
        if self.metered:
            line = self.proc.stdout.readline()
            check("metrics on" in line, f"server {self.name} has no metrics: {line!r}")
            self.metrics_url = line.rsplit(" ", 1)[1].strip()

    def metric(self, name, **labels):
        """The value of a sample of /metrics (0 when absent)."""
        import urllib.request

        body = urllib.request.urlopen(self.metrics_url, timeout=10).read().decode()
        for line in body.splitlines():
            if line.startswith("#") or " " not in line:
                continue
            series, value = line.rsplit(" ", 1)
            metric, _, rest = series.partition("{")
            got = dict(p.split("=", 1) for p in rest.rstrip("}").split(",") if "=" in p)
            got = {k: v.strip('"') for k, v in got.items()}
            if metric == name and all(got.get(k) == v for k, v in labels.items()):
                return float(value)
        return 0.0

    def log(self):
        with open(os.path.join(self.workdir, f"{self.name}.stderr")) as f:
            return f.read()

    def requests(self, client_id=None, api=None, since=0.0):
        return read_request_log(self.log_path, client_id, api, since)

    def heartbeats(self, client_id, since=0.0):
        """The answered ConsumerGroupHeartbeats of a client."""
        return [
            r for r in self.requests(client_id, "ConsumerGroupHeartbeat", since) if r.get("response")
        ]


class Scenario:
    def __init__(self, driver, name, fn, server):
        self.driver = driver
        self.name = name
        self.fn = fn
        self.server = server
        self.workdir = driver.workdir
        self.workers = []
        self.result = None

    def run(self):
        start = time.time()
        try:
            ok, detail = outcome(self.fn, self)
        finally:
            for w in self.workers:
                w.kill()
        took = time.time() - start
        if not ok:
            detail += self.evidence()
        self.result = (self.name, ok, took, detail)
        print(f"scenario {self.name}: {'PASS' if ok else 'FAIL'} in {took:.1f}s: {detail}", flush=True)

    def evidence(self):
        """For a failure: each worker's last heartbeat answers and client errors."""
        lines = []
        for w in self.workers:
            hbs = self.server.heartbeats(w.client_id)[-3:]
            brief = [(r.get("epoch"), r.get("error"), r.get("member_epoch"), r.get("assignment")) for r in hbs]
            lines.append(f"\n  {w.name}: last heartbeats (epoch, error, member epoch, assigned) {brief}")
            errors = [ev["error"] for ev in w.of("client_error")][-3:]
            if errors:
                lines.append(f"; client errors {errors}")
        return "".join(lines)

    def worker(self, name, group, topics=None, **extra):
        return Worker(self, f"{self.name}-{name}", group, topics, **extra)

    def group(self, suffix=""):
        return f"cp-{self.name}{suffix}"


# --------------------------------------------------------------------------- scenarios


def parts(topic, n):
    return frozenset((topic, p) for p in range(n))


def fetched(server, client_id, since=0.0):
    """The partitions the server saw a client Fetch."""
    seen = set()
    for r in server.requests(client_id, "Fetch", since):
        for t, p, _ in r.get("partitions", []):
            seen.add((t, p))
    return seen


def wait_until(pred, timeout, what):
    end = time.time() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.time() > end:
            raise ScenarioFailed(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def disjoint_cover(workers, everything):
    sets = [w.assignment() or frozenset() for w in workers]
    union = frozenset().union(*sets)
    return union == everything and sum(len(s) for s in sets) == len(everything)


def no_double_ownership(workers):
    """No partition has two owners at once, by the clients' own callbacks: a partition that
    moves is revoked from its old owner before the new one is given it."""
    timeline = []
    for w in workers:
        for kind, delta in (("assigned", 1), ("revoked", -1), ("lost", -1)):
            for ev in w.of(kind):
                for tp in tp_set(ev["partitions"]):
                    timeline.append((ev["t"], delta, tp, w.name))
    owners = {}
    for t, delta, tp, name in sorted(timeline):
        held = owners.setdefault(tp, set())
        if delta > 0:
            check(not held, f"{fmt([tp])} assigned to {name} at {t:.3f} while {sorted(held)} still owned it")
            held.add(name)
        else:
            held.discard(name)


def s_single(sc):
    """One member: all partitions at epoch 1, consumes (Fetch) them, describe shows it, leaves."""
    from confluent_kafka import ConsumerGroupState, ConsumerGroupType
    from confluent_kafka.admin import AdminClient

    everything = parts("single", TOPICS["single"])
    w = sc.worker("a", sc.group(), ["single"])
    w.wait_assignment(lambda a: a == everything, 20, "every partition")
    wait_until(lambda: fetched(sc.server, w.client_id) >= everything, 15, "a Fetch of every partition")
    hbs = sc.server.heartbeats(w.client_id)
    check(hbs and hbs[0]["epoch"] == 0 and hbs[0]["member_epoch"] == 1, f"join heartbeat {hbs[:1]}")
    # The assignment names topic ids: librdkafka looks them up with Metadata by id.
    by_id = [r for r in sc.server.requests(w.client_id, "Metadata") if r.get("by_id")]
    check(by_id and all(r["version"] >= 12 for r in by_id), f"Metadata by topic id: {by_id[:1]}")
    check(all(r["version"] == 1 for r in hbs), "librdkafka heartbeats at v1")
    admin = AdminClient({"bootstrap.servers": sc.server.bootstrap, "client.id": f"{sc.name}-admin"})
    desc = admin.describe_consumer_groups([sc.group()], request_timeout=10)[sc.group()].result(timeout=15)
    check(desc.type == ConsumerGroupType.CONSUMER, f"described type {desc.type}")
    check(desc.state == ConsumerGroupState.STABLE, f"described state {desc.state}")
    check(len(desc.members) == 1, f"described members {desc.members}")
    member = desc.members[0]
    check(member.client_id == w.client_id and member.host == "/127.0.0.1", f"member {member.client_id} {member.host}")
    got = tp_set((tp.topic, tp.partition) for tp in member.assignment.topic_partitions)
    check(got == everything, f"described assignment {fmt(got)}")
    described = sc.server.requests(f"{sc.name}-admin", "ConsumerGroupDescribe")
    check(described, "the admin client used ConsumerGroupDescribe")
    closed_at = w.close()
    leave = [r for r in sc.server.heartbeats(w.client_id) if r["epoch"] == -1]
    check(leave and leave[-1]["member_epoch"] == -1 and leave[-1]["error"] == 0, f"leave heartbeat {leave}")
    desc = admin.describe_consumer_groups([sc.group()], request_timeout=10)[sc.group()].result(timeout=15)
    check(desc.state == ConsumerGroupState.EMPTY and not desc.members, f"after close: {desc.state} {desc.members}")
    return (
        f"epoch 1 with {fmt(everything)} (ids resolved by Metadata v{by_id[0]['version']}), fetched all, "
        f"described Stable via ConsumerGroupDescribe "
        f"v{described[0]['version']}, left with epoch -1 in {closed_at - leave[-1]['ts'] / 1000:.1f}s, group Empty"
    )


def settled(workers, pred, timeout, what):
    """Waits for pred over the workers' assignments, then for nothing to move for a
    moment; the instant after which the state holds."""
    wait_until(pred, timeout, what)
    time.sleep(0.5)
    check(pred(), f"{what} did not hold")
    return time.time()


def check_step(workers, since, until, least_moves=None):
    """Between two settled instants: a partition a member owns before and after was never
    revoked from it in between; with `least_moves`, only that many partitions changed
    owner (a sticky assignor moves no more than balance needs)."""
    moved = 0
    for w in workers:
        before, after = w.assignment_at(since), w.assignment_at(until)
        taken = w.revoked(since, until)
        check(not (before & after & taken), f"{w.name} kept {fmt(before & after & taken)} but had them revoked")
        check(taken <= before, f"{w.name} had {fmt(taken - before)} revoked, which it did not own")
        moved += len(after - before)
    if least_moves is not None:
        check(moved == least_moves, f"{moved} partitions changed owner, where {least_moves} had to")
    return moved


def s_three(sc, sticky=False):
    """Three members joining one by one: partitions move only from those that give them up;
    a partition a member keeps is never revoked; no partition has two owners. With
    `sticky`, also that no more partitions move than balance needs (Kafka's uniform
    assignor)."""
    topic, n = "three", TOPICS["three"]
    everything = parts(topic, n)
    group = sc.group()
    a = sc.worker("a", group, [topic])
    t0 = settled([a], lambda: a.assignment() == everything, 20, "all 6 partitions")
    b = sc.worker("b", group, [topic])
    t1 = settled(
        [a, b], lambda: disjoint_cover([a, b], everything) and len(b.assignment() or ()) == 3, 20, "a 3+3 split"
    )
    m1 = check_step([a, b], t0, t1, 3 if sticky else None)
    c = sc.worker("c", group, [topic])
    t2 = settled(
        [a, b, c],
        lambda: disjoint_cover([a, b, c], everything) and all(len(w.assignment() or ()) == 2 for w in (a, b, c)),
        20,
        "a 2+2+2 split",
    )
    m2 = check_step([a, b, c], t1, t2, 2 if sticky else None)
    no_double_ownership([a, b, c])
    for w in (a, b, c):
        check(not w.of("lost"), f"{w.name} lost partitions: {w.of('lost')}")
    epochs = sorted({r["member_epoch"] for r in sc.server.heartbeats(a.client_id)})
    return (
        f"b joined: 3+3 in {t1 - t0 - 0.5:.1f}s, {m1} moved; c joined: 2+2+2 in {t2 - t1 - 0.5:.1f}s, {m2} moved "
        f"(the least is 3 then 2); a's epochs {epochs}; no kept partition revoked, never two owners"
    )


def s_sticky(sc):
    return s_three(sc, sticky=True)


def split_two(sc, topic, static=False):
    """Members a and b (static: instances i-a and i-b) of the scenario's group on `topic`:
    a alone takes every partition, then b half of them."""
    everything = parts(topic, TOPICS[topic])
    a = sc.worker("a", sc.group(), [topic], instance="i-a" if static else None)
    a.wait_assignment(lambda s: s == everything, 20, "every partition")
    b = sc.worker("b", sc.group(), [topic], instance="i-b" if static else None)
    wait_until(lambda: disjoint_cover([a, b], everything) and len(b.assignment() or ()) == 2, 20, "a 2+2 split")
    return a, b, everything


def s_kill(sc):
    """A member killed (SIGKILL): its partitions go to the survivor after the session timeout."""
    n = TOPICS["kill"]
    a, b, everything = split_two(sc, "kill")
    b.kill()
    killed = time.time()
    a.wait_assignment(lambda s: s == everything, SESSION_MS / 1000 + 10, "every partition after the kill")
    took = time.time() - killed
    check(SESSION_MS / 1000 - 1.0 <= took, f"reassigned after {took:.1f}s, before the session timeout")
    check(not a.revoked(killed), f"a had {fmt(a.revoked(killed))} revoked")
    check(not [r for r in sc.server.heartbeats(b.client_id) if r["epoch"] < 0], "the killed member sent a leave")
    return f"survivor owns all {n} after {took:.1f}s (session {SESSION_MS} ms), kept its own"


def s_leave(sc):
    """A member closing sends a leave heartbeat: its partitions move at once."""
    n = TOPICS["leave"]
    a, b, everything = split_two(sc, "leave")
    start = time.time()
    b.close()
    a.wait_assignment(lambda s: s == everything, 10, "every partition after the leave")
    took = time.time() - start
    check(took < SESSION_MS / 1000, f"took {took:.1f}s: as long as a session expiry")
    leaves = [r for r in sc.server.heartbeats(b.client_id) if r["epoch"] == -1]
    check(leaves and leaves[-1]["error"] == 0, f"b's leave heartbeat {leaves}")
    check(not a.revoked(start), f"a had {fmt(a.revoked(start))} revoked")
    return f"b left with epoch -1; a owns all {n} {took:.1f}s after the close"


def s_static(sc):
    """A static member restarting within its session gets its partitions back, and the other
    member keeps its own throughout."""
    topic = "static"
    a, b, _ = split_two(sc, topic, static=True)
    a_kept, b_had = a.assignment(), b.assignment()
    closing = time.time()
    restarted = b.close()
    leaves = [r for r in sc.server.heartbeats(b.client_id) if r["epoch"] < 0]
    check(leaves and leaves[-1]["epoch"] == -2, f"the static member's leave heartbeats {leaves}")
    b2 = sc.worker("b2", sc.group(), [topic], instance="i-b")
    got = b2.wait_assignment(lambda s: bool(s), 15, "an assignment after the restart")
    took = time.time() - restarted
    check(took < SESSION_MS / 1000, f"rejoined after {took:.1f}s, past the session timeout")
    check(got == b_had, f"restarted with {fmt(got)}, had {fmt(b_had)}")
    time.sleep(1.0)
    check(a.assignment() == a_kept, f"a moved to {fmt(a.assignment())} from {fmt(a_kept)}")
    check(not a.revoked(closing), f"a had {fmt(a.revoked(closing))} revoked")
    joins = [r for r in sc.server.heartbeats(b2.client_id) if r["epoch"] == 0]
    return (
        f"b closed (epoch -2) and a new process with its instance id got {fmt(got)} back after {took:.1f}s "
        f"(join answered epoch {joins[0]['member_epoch'] if joins else '?'}); a untouched"
    )


def s_regex(sc):
    """`^foo.*` picks up a topic created while the member runs (CreateTopics)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    a = sc.worker("a", sc.group(), ["^foo.*"])
    first = parts("foo1", TOPICS["foo1"])
    a.wait_assignment(lambda s: s == first, 25, "foo1's partitions")
    regex = [r for r in sc.server.requests(a.client_id, "ConsumerGroupHeartbeat") if r.get("epoch") == 0]
    check(regex, "a join heartbeat")
    admin = AdminClient({"bootstrap.servers": sc.server.bootstrap, "client.id": f"{sc.name}-admin"})
    created_at = time.time()
    futures = admin.create_topics([NewTopic("foo2", 3, 1), NewTopic("nofoo", 1, 1)], request_timeout=10)
    for name, f in futures.items():
        f.result(timeout=15)
    again = admin.create_topics([NewTopic("foo2", 3, 1)], request_timeout=10)["foo2"]
    try:
        again.result(timeout=15)
        raise ScenarioFailed("creating foo2 twice succeeded")
    except ScenarioFailed:
        raise
    except Exception as e:  # KafkaException(TOPIC_ALREADY_EXISTS)
        check("TOPIC_ALREADY_EXISTS" in str(e) or "already exists" in str(e), f"second create: {e}")
    both = first | parts("foo2", 3)
    a.wait_assignment(lambda s: s == both, REGEX_REFRESH_S + 15, "foo1 and foo2")
    took = time.time() - created_at
    check(not a.revoked(), f"a had {fmt(a.revoked())} revoked")
    check(not (a.assignment() & parts("bar", TOPICS["bar"])), "bar matched ^foo.*")
    return f"foo1 at once; foo2 (created later) {took:.1f}s after CreateTopics; nofoo and bar never"


def s_commits(sc):
    """Commits carry the member epoch (OffsetCommit v9); a later member reads them back
    (OffsetFetch v9 with its member id and epoch) and resumes from them."""
    topic, n = "commits", TOPICS["commits"]
    everything = parts(topic, n)
    a = sc.worker("a", sc.group(), [topic])
    a.wait_assignment(lambda s: s == everything, 20, "every partition")
    offsets = {tp: 5 + tp[1] for tp in everything}
    a.commit(offsets)
    got = a.committed(everything)
    check(got == offsets, f"committed read back {got}")
    commit = sc.server.requests(a.client_id, "OffsetCommit")[-1]
    epoch = [r["member_epoch"] for r in sc.server.heartbeats(a.client_id) if r["error"] == 0][-1]
    check(commit["version"] == 9 and commit["generation"] == epoch, f"commit {commit}, member epoch {epoch}")
    a.close()
    b = sc.worker("b", sc.group(), [topic])
    since = time.time()
    b.wait_assignment(lambda s: s == everything, 20, "every partition")
    check(b.committed(everything) == offsets, "the new member reads the offsets back")
    positions = wait_until(
        lambda: (lambda seen: seen if all(tp in seen for tp in everything) else None)(first_fetch(sc.server, b.client_id, since)),
        15,
        "b's first Fetch of every partition",
    )
    check(all(positions[tp] == offsets[tp] for tp in everything), f"b fetched from {positions}, committed {offsets}")
    fetches = sc.server.requests(b.client_id, "OffsetFetch")
    return f"committed at member epoch {epoch} (OffsetCommit v9), {len(fetches)} OffsetFetch v9, b resumed at the commits"


def first_fetch(server, client_id, since):
    first = {}
    for r in server.requests(client_id, "Fetch", since):
        for t, p, off in r.get("partitions", []):
            first.setdefault((t, p), off)
    return first


def s_list(sc):
    """ListGroups v5: a consumer group is listed with type `consumer` and filtered by type."""
    from confluent_kafka import ConsumerGroupType
    from confluent_kafka.admin import AdminClient

    a = sc.worker("a", sc.group(), ["listed"])
    a.wait_assignment(lambda s: s == parts("listed", 1), 20, "the partition")
    admin = AdminClient({"bootstrap.servers": sc.server.bootstrap, "client.id": f"{sc.name}-admin"})

    def listed(types):
        kwargs = {"types": types} if types else {}
        res = admin.list_consumer_groups(request_timeout=10, **kwargs).result(timeout=15)
        return {g.group_id: g for g in res.valid}

    everything = listed(None)
    check(sc.group() in everything, f"not listed: {sorted(everything)}")
    check(everything[sc.group()].type == ConsumerGroupType.CONSUMER, f"type {everything[sc.group()].type}")
    check(sc.group() in listed({ConsumerGroupType.CONSUMER}), "not listed under the consumer type")
    check(sc.group() not in listed({ConsumerGroupType.CLASSIC}), "listed under the classic type")
    versions = {r["version"] for r in sc.server.requests(f"{sc.name}-admin", "ListGroups")}
    return f"listed as consumer, filtered by type (ListGroups v{sorted(versions)})"


def s_restart(sc):
    """Server restart on sled (SIGKILL): offsets committed before it, standalone and at a
    member epoch, are kept; the members carry on at their epochs (or rejoin) and own every
    partition again; a commit at the member epoch is accepted after it."""
    topic, n = RESTART_TOPIC
    everything = parts(topic, n)
    server = sc.server
    group = sc.group()
    # A standalone commit (generation -1, no member) while the group has no members: the
    # empty classic group it makes is replaced by the consumer group, offsets kept.
    offsets = {tp: 7 + tp[1] for tp in everything}
    s = sc.worker("standalone", group, assign=sorted(everything), protocol="classic")
    s.commit(offsets)
    s.close()
    a = sc.worker("a", group, [topic])
    b = sc.worker("b", group, [topic])
    wait_until(lambda: disjoint_cover([a, b], everything) and len(a.assignment() or ()) == 2, 25, "a 2+2 split")
    before = (a.assignment(), b.assignment())
    mine = {tp: 20 + tp[1] for tp in a.assignment()}
    a.commit(mine)
    offsets.update(mine)
    epochs_before = {w.name: server.heartbeats(w.client_id)[-1]["member_epoch"] for w in (a, b)}
    server.kill()
    down = time.time()
    time.sleep(1.0)
    server.start()
    restarted = time.time()
    # Both members heartbeat again, accepted, and own every partition between them.
    wait_until(
        lambda: all(
            any(r["error"] == 0 for r in server.heartbeats(w.client_id, since=restarted)) for w in (a, b)
        ),
        20,
        "an accepted heartbeat from each member after the restart",
    )
    wait_until(lambda: disjoint_cover([a, b], everything), 20, "every partition owned again")
    after = (a.assignment(), b.assignment())
    hbs = {w.name: server.heartbeats(w.client_id, since=restarted) for w in (a, b)}
    rejoined = {name: any(r["epoch"] == 0 for r in rs) for name, rs in hbs.items()}
    errors = {name: sorted({r["error"] for r in rs if r["error"]}) for name, rs in hbs.items()}
    got = b.committed(everything)
    check(got == offsets, f"offsets after the restart {got}, committed {offsets}")
    again = {tp: o + 1 for tp, o in mine.items() if tp in a.assignment()}
    a.commit(again)
    commit = server.requests(a.client_id, "OffsetCommit", since=restarted)[-1]
    for w in (a, b):
        check(not w.fatal_errors(), f"{w.name}: fatal errors {w.fatal_errors()}")
    return (
        f"down {restarted - down:.1f}s; member epochs before {epochs_before}; after the restart errors "
        f"{errors}, rejoined with epoch 0: {rejoined}; assignments "
        f"{'kept' if after == before else f'moved from {[fmt(x) for x in before]} to {[fmt(x) for x in after]}'}; "
        f"standalone and member-epoch offsets kept; committed again at epoch {commit['generation']}"
    )


def s_migration(sc):
    """A classic kafka-python group upgraded by a consumer-protocol member joining, and
    downgraded when it leaves: the classic member keeps partitions throughout, and
    ListGroups shows the group's type change each way."""
    from confluent_kafka import ConsumerGroupType
    from confluent_kafka.admin import AdminClient

    topic, n = "migrate", TOPICS["migrate"]
    everything = parts(topic, n)
    group = sc.group()
    admin = AdminClient({"bootstrap.servers": sc.server.bootstrap, "client.id": f"{sc.name}-admin"})

    def group_type():
        res = admin.list_consumer_groups(request_timeout=10).result(timeout=15)
        return {g.group_id: g.type for g in res.valid}.get(group)

    k = sc.worker("kp", group, [topic], kind="kp")
    k.wait_assignment(lambda s: s == everything, 25, "every partition (classic group)")
    check(group_type() == ConsumerGroupType.CLASSIC, f"before: {group_type()}")
    c = sc.worker("ck", group, [topic])
    start = time.time()
    wait_until(lambda: disjoint_cover([k, c], everything) and len(c.assignment() or ()) == 2, 25, "a 2+2 split")
    upgraded = time.time() - start
    check(group_type() == ConsumerGroupType.CONSUMER, f"with the consumer member: {group_type()}")
    joins = sc.server.requests(k.client_id, "JoinGroup", since=start)
    c.close()
    start = time.time()
    k.wait_assignment(lambda s: s == everything, 25, "every partition after the consumer member left")
    downgraded = time.time() - start
    wait_until(lambda: group_type() == ConsumerGroupType.CLASSIC, 10, "the group classic again")
    return (
        f"upgrade: 2+2 {upgraded:.1f}s after the consumer member joined ({len(joins)} JoinGroup of the classic "
        f"member meanwhile); downgrade: the classic member owns all {n} {downgraded:.1f}s after it left; "
        "listed as classic, consumer, classic"
    )


def s_metrics(sc):
    """Three consumer-protocol members in a Stable group are counted as a consumer group
    with three members, their joins and epoch bumps counted and logged; a leave is too."""
    topic, n = METRICS_TOPIC
    everything = parts(topic, n)
    group = sc.group()
    ws = [sc.worker(name, group, [topic]) for name in ("a", "b", "c")]
    wait_until(lambda: disjoint_cover(ws, everything) and all(len(w.assignment() or ()) == 2 for w in ws), 40, "a 2+2+2 split")
    server = sc.server
    wait_until(lambda: server.metric("kafka_group_groups", state="Stable", type="consumer") == 1, 15, "a Stable consumer group in the metrics")
    members = server.metric("kafka_group_members", type="consumer")
    check(members == 3, f"consumer members {members}")
    check(server.metric("kafka_group_members", type="classic") == 0, "classic members")
    joined = server.metric("kafka_group_consumer_members_joined_total")
    check(joined == 3, f"joins counted {joined}")
    bumps = server.metric("kafka_group_consumer_rebalances_total")
    check(bumps >= 3, f"epoch bumps counted {bumps}")
    ws[0].close()
    wait_until(lambda: server.metric("kafka_group_members", type="consumer") == 2, 15, "two members after a close")
    removed = server.metric("kafka_group_consumer_members_removed_total")
    check(removed == 1, f"removals counted {removed}")
    log = server.log()
    for line in ("consumer member joined", "consumer group epoch bumped", "consumer member assignment", "consumer member removed"):
        check(line in log and group in log, f"no {line!r} line for {group} in the server's log")
    return f"3 members Stable, {bumps:.0f} epoch bumps counted; a close counted and logged"


SCENARIOS = {
    "single": s_single,
    "three_join": s_three,
    "sticky": s_sticky,
    "kill": s_kill,
    "leave": s_leave,
    "static": s_static,
    "regex": s_regex,
    "commits": s_commits,
    "list_groups": s_list,
    "restart": s_restart,
    "migration": s_migration,
    "metrics": s_metrics,
}


class Driver:
    def __init__(self, binary, workdir, only):
        self.binary = binary
        self.workdir = workdir
        self.only = only

    def main(self):
        started = time.time()
        shared = Server(self.binary, self.workdir, "shared", TOPICS)
        durable = Server(self.binary, self.workdir, "durable", dict([RESTART_TOPIC]), durable=True)
        metered = Server(self.binary, self.workdir, "metered", dict([METRICS_TOPIC]), metered=True)
        scenarios = []
        servers = []
        try:
            for name in self.only:
                fn = SCENARIOS[name]
                server = {"restart": durable, "metrics": metered}.get(name, shared)
                if server not in servers:
                    server.start()
                    servers.append(server)
                scenarios.append(Scenario(self, name, fn, server))
            threads = [threading.Thread(target=s.run, daemon=True) for s in scenarios]
            for t in threads:
                t.start()
            for t in threads:
                t.join(WORKER_LIFETIME_S + 30)
        finally:
            for s in scenarios:
                for w in s.workers:
                    w.kill()
            for server in servers:
                server.kill()
        results = [s.result or (s.name, False, 0.0, "did not finish") for s in scenarios]
        passed = sum(1 for r in results if r[1])
        total = time.time() - started
        print(
            f"consumer-protocol: {passed}/{len(results)} scenarios passed in {total:.1f}s "
            f"({', '.join(f'{r[0]} {r[2]:.1f}s' for r in results)})",
            flush=True,
        )
        return 0 if passed == len(results) else 1


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
        return 0
    if len(sys.argv) >= 3 and sys.argv[1] == "kp-worker":
        kp_worker(json.loads(sys.argv[2]))
        return 0
    args = sys.argv[1:]
    binary = args[args.index("--server") + 1]
    workdir = args[args.index("--workdir") + 1]
    only = args[args.index("--only") + 1].split(",") if "--only" in args else list(SCENARIOS)
    unknown = [n for n in only if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenarios {unknown}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    os.makedirs(workdir, exist_ok=True)
    return Driver(binary, workdir, only).main()


if __name__ == "__main__":
    sys.exit(main())
