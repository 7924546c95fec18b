#!/usr/bin/env python3
"""Real Kafka clients against a group-server cluster over etcd.

`cluster.py run --server BIN --etcd BIN --workdir DIR` starts a 3-member etcd cluster
(loopback ports, fast raft timings, data under DIR) and three `group-server --cluster`
nodes (lease TTL 2 s, topic t1 with 6 partitions), then runs the scenarios below with
kafka-python 3.0.12 ("kp") and confluent-kafka 2.16.1 ("ck"), each client in its own
worker process (`cluster.py worker '<json>'`) that commits in a loop and reports every
acknowledged commit (and, for kp, the node that acknowledged it):

- spread: FindCoordinator, asked of every node for a group id in each of the 50
  coordinator partitions, names all three nodes, every node agrees, each owns its even
  share (17/17/16), and the owner of a group is the owner of its partition; Metadata
  lists every node at its address; a node that does not own a group answers its commit
  and offset fetch with NOT_COORDINATOR; consumers
  of three groups owned by three different nodes get assigned and commit;
- kill -9 of a group's owner while its members commit: the partition moves within the
  lease TTL (plus slack), the clients find the new owner and carry on committing, and
  every acknowledged commit reads back (committed offset >= last acknowledged); the
  node restarted takes its share again, and so it does when killed and restarted at
  once (serving once etcd expires its old lease);
- SIGSTOP of a group's owner past its lease: its partitions move, the clients carry on
  through the new owner; a commit sent to the paused node is answered, once it is
  resumed, with an error (never acknowledged) and the offset stays the new owner's;
  no kp commit is acknowledged by the resumed node after the new owner acknowledged
  one; the resumed node rejoins and takes its share again;
- share groups: three share consumers (confluent-kafka's ShareConsumer) of a group
  hold every partition between them; kill -9 of the group's owner moves the group
  and its share state to another node, where the same members carry on, all checked
  through ShareGroupDescribe;
- a 4th node joins: it takes its share (13/13/12/12), and groups on partitions that
  moved to it (predicted from the ownership rules) carry on committing through it;
- etcd quorum: with one etcd member (the leader) killed commits carry on; with a
  second killed commits fail and nothing is acknowledged; both restarted, the cluster
  recovers by itself and commits succeed again; every acknowledged commit reads back.

It prints one PASS/FAIL line per scenario and `cluster: N/N scenarios passed` at the end.
`cluster.py measure ...` (same options, plus --runs N) measures failover instead: kill -9
of a group's owner to the first commit acknowledged by the new owner, N runs, each and
the median. Every process this script starts is killed by its own pid when it ends (and
by the kernel should this script die: PR_SET_PDEATHSIG).

Offsets are milliseconds since the run started, so commits are monotonic across
members and workers; the partitions hold no records.
"""

import argparse
import ctypes
import json
import os
import queue
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
import traceback
import urllib.request

from worker_io import ScenarioFailed, check, emit, stdin_commands, watchdog

TOPIC = "t1"
PARTITIONS = 6
COORDINATOR_PARTITIONS = 50
LEASE_TTL_S = 2
# How much later than the lease TTL a dead node's partition may reach a new owner.
MOVE_SLACK_S = 8.0
SESSION_MS = 6000
HEARTBEAT_MS = 500
MAX_POLL_MS = 10000
COMMIT_EVERY_S = 0.2
# A kp commit gives up after this long (the worker then retries); a ck one is waited for.
COMMIT_TIMEOUT_MS = 3000
WORKER_LIFETIME_S = 150.0
# How long the clients may take to commit again once the coordinator is back.
RESUME_S = 30.0
STOP_S = 5.0


try:
    # Resolved here, in the parent: the child between fork and exec only calls it.
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _PRCTL = None


def die_with_parent():
    """For a child: SIGKILL when this script dies (Linux), so nothing outlives it."""
    if _PRCTL is not None:
        _PRCTL(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


# --------------------------------------------------------------------------- worker side


class KpClient:
    def __init__(self, cfg):
        from kafka import KafkaConsumer, TopicPartition
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.structs import OffsetAndMetadata

        self.TP = TopicPartition
        self.OAM = OffsetAndMetadata
        self.c = KafkaConsumer(
            bootstrap_servers=cfg["bootstrap"],
            client_id=cfg["client_id"],
            group_id=cfg["group"],
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
            max_poll_interval_ms=MAX_POLL_MS,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            partition_assignment_strategy=[RangePartitionAssignor],
            # A request to a paused node times out (and its connection closes) in 5 s.
            request_timeout_ms=5000,
            retry_backoff_ms=100,
            reconnect_backoff_ms=100,
            reconnect_backoff_max_ms=500,
        )
        # Which node each commit went to: the coordinator a commit attempt is sent to
        # is read just before it is sent (no await in between), so after a successful
        # commit this names the node that acknowledged it.
        coordinator = self.c._coordinator
        original = coordinator._send_offset_commit_request
        self.node = None

        async def tracked(offsets):
            self.node = coordinator.coordinator()
            return await original(offsets)

        coordinator._send_offset_commit_request = tracked
        self.c.subscribe([TOPIC])
        # real-clients.md gotcha 15: avoids a kafka-python single-leader rebalance hang.
        self.c.topics()

    def poll(self):
        self.c.poll(timeout_ms=50)

    def assignment(self):
        return sorted(tp.partition for tp in self.c.assignment())

    def commit(self, offsets):
        self.node = None
        try:
            self.c.commit(
                {self.TP(TOPIC, p): self.OAM(o, "", -1) for p, o in offsets.items()}, timeout_ms=COMMIT_TIMEOUT_MS
            )
        except Exception as e:
            emit({"event": "commit_error", "error": "%s: %s" % (type(e).__name__, e), "t": time.time()})
            return
        node = self.node
        if isinstance(node, str) and node.startswith("coordinator-"):
            node = node[len("coordinator-") :]
        emit({"event": "ack", "offsets": offsets, "node": int(node) if node is not None else None, "t": time.time()})

    def drain(self, deadline):
        pass

    def close(self):
        self.c.close(timeout_ms=3000)


class CkClient:
    def __init__(self, cfg):
        from confluent_kafka import Consumer, TopicPartition

        self.TP = TopicPartition
        self.pending = None
        self.c = Consumer(
            {
                "bootstrap.servers": cfg["bootstrap"],
                "client.id": cfg["client_id"],
                "group.id": cfg["group"],
                "session.timeout.ms": SESSION_MS,
                "heartbeat.interval.ms": HEARTBEAT_MS,
                "max.poll.interval.ms": MAX_POLL_MS,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "partition.assignment.strategy": "range",
                "reconnect.backoff.ms": 100,
                "reconnect.backoff.max.ms": 500,
                "retry.backoff.ms": 100,
                # A request to a paused node times out in 5 s.
                "socket.timeout.ms": 5000,
                "on_commit": self.on_commit,
                "error_cb": lambda err: emit({"event": "client_error", "error": str(err), "t": time.time()}),
            }
        )
        self.c.subscribe([TOPIC])

    def on_commit(self, err, partitions):
        # librdkafka calls this from poll(); an exception here would surface there as
        # a SystemError, so none may escape.
        try:
            self.committed(err, partitions)
        except Exception:
            emit({"event": "commit_error", "error": traceback.format_exc(), "t": time.time()})

    def committed(self, err, partitions):
        offsets, sent = self.pending[:2] if self.pending else ({}, None)
        self.pending = None
        failed = [str(tp.error) for tp in partitions if tp.error is not None]
        if err is not None or failed:
            emit({"event": "commit_error", "error": str(err) if err else ",".join(failed), "t": time.time()})
        else:
            emit({"event": "ack", "offsets": offsets, "node": None, "t": time.time(), "sent": sent})

    def poll(self):
        msg = self.c.poll(0.05)
        if msg is not None and msg.error():
            emit({"event": "client_error", "error": str(msg.error()), "t": time.time()})

    def assignment(self):
        return sorted(tp.partition for tp in self.c.assignment())

    def commit(self, offsets):
        if self.pending is not None:
            if time.time() - self.pending[1] > 5 and not self.pending[2:]:
                # Reported once: a commit outstanding this long counts as failing.
                emit({"event": "commit_stuck", "since": self.pending[1], "t": time.time()})
                self.pending = self.pending + (True,)
            return
        self.pending = (offsets, time.time())
        try:
            self.c.commit(offsets=[self.TP(TOPIC, p, o) for p, o in offsets.items()], asynchronous=True)
        except Exception as e:
            self.pending = None
            emit({"event": "commit_error", "error": "%s: %s" % (type(e).__name__, e), "t": time.time()})

    def drain(self, deadline):
        while self.pending is not None and time.time() < deadline:
            self.poll()

    def close(self):
        self.c.close()


def worker(cfg):
    client = (KpClient if cfg["client"] == "kp" else CkClient)(cfg)
    commands = stdin_commands()
    emit({"event": "started", "pid": os.getpid()})
    committing = True
    last = None
    next_commit = 0.0
    while True:
        client.poll()
        current = client.assignment()
        if current != last:
            last = current
            emit({"event": "assignment", "partitions": current, "t": time.time()})
        now = time.time()
        if committing and current and now >= next_commit:
            next_commit = now + COMMIT_EVERY_S
            client.commit({p: int(now * 1000) - cfg["base_ms"] for p in current})
        try:
            cmd = commands.get_nowait()
        except queue.Empty:
            continue
        if cmd["cmd"] == "commit":
            committing = cmd["on"]
            if not committing:
                client.drain(time.time() + 10)
            emit(
                {
                    "event": "committing",
                    "on": committing,
                    "pending": getattr(client, "pending", None) is not None,
                    "t": time.time(),
                }
            )
        elif cmd["cmd"] in ("close", "eof"):
            client.close()
            emit({"event": "closed", "t": time.time()})
            return


# --------------------------------------------------------------------------- the wire


def kstr(s):
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


class Reader:
    def __init__(self, data, at):
        self.d, self.at = data, at

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.d, self.at)
        self.at += struct.calcsize(fmt)
        return v[0]

    def string(self):
        n = self.take(">h")
        if n < 0:
            return None
        s = self.d[self.at : self.at + n].decode()
        self.at += n
        return s


class Wire:
    """One connection speaking a few non-flexible request versions."""

    def __init__(self, addr, timeout=3.0):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.corr = 0

    def close(self):
        self.sock.close()

    def send(self, api_key, version, body):
        self.corr += 1
        frame = struct.pack(">hhi", api_key, version, self.corr) + kstr("cluster-e2e") + body
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        return self.corr

    def _read(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("connection closed")
            out += chunk
        return out

    def recv(self, corr):
        (size,) = struct.unpack(">i", self._read(4))
        data = self._read(size)
        r = Reader(data, 0)
        got = r.take(">i")
        if got != corr:
            raise ConnectionError("correlation id %d, expected %d" % (got, corr))
        return r

    def call(self, api_key, version, body):
        return self.recv(self.send(api_key, version, body))


def find_coordinator(wire, group):
    """FindCoordinator v1: (error_code, node_id)."""
    return find_coordinator_answer(wire.call(10, 1, find_coordinator_body(group)))


def find_coordinator_body(group):
    return kstr(group) + struct.pack(">b", 0)


def find_coordinator_answer(r):
    r.take(">i")  # throttle
    error = r.take(">h")
    r.string()
    node = r.take(">i")
    r.string()
    r.take(">i")
    return error, node


def metadata_brokers(wire):
    """Metadata v1 with no topics: {node_id: "host:port"}."""
    r = wire.call(3, 1, struct.pack(">i", 0))
    brokers = {}
    for _ in range(r.take(">i")):
        node = r.take(">i")
        host = r.string()
        port = r.take(">i")
        r.string()  # rack
        brokers[node] = "%s:%d" % (host, port)
    return brokers


def offset_commit_body(group, offsets):
    """OffsetCommit v2 as a standalone commit (generation -1, no member)."""
    body = kstr(group) + struct.pack(">i", -1) + kstr("") + struct.pack(">q", -1)
    body += struct.pack(">i", 1) + kstr(TOPIC) + struct.pack(">i", len(offsets))
    for p, o in sorted(offsets.items()):
        body += struct.pack(">iq", p, o) + kstr("")
    return body


def offset_commit_errors(r):
    errors = {}
    for _ in range(r.take(">i")):
        r.string()
        for _ in range(r.take(">i")):
            p = r.take(">i")
            errors[p] = r.take(">h")
    return errors


def offset_fetch(wire, group):
    """OffsetFetch v1 of t1's partitions: {partition: (offset, error_code)}."""
    return offset_fetch_answer(wire.call(9, 1, offset_fetch_body(group)))


def offset_fetch_body(group):
    body = kstr(group) + struct.pack(">i", 1) + kstr(TOPIC) + struct.pack(">i", PARTITIONS)
    return body + b"".join(struct.pack(">i", p) for p in range(PARTITIONS))


def offset_fetch_answer(r):
    out = {}
    for _ in range(r.take(">i")):
        r.string()
        for _ in range(r.take(">i")):
            p = r.take(">i")
            offset = r.take(">q")
            r.string()
            out[p] = (offset, r.take(">h"))
    return out


def partition_of(group):
    """Kafka's coordinator partition: abs(groupId.hashCode()) % 50, abs = & 0x7fffffff."""
    h = 0
    units = group.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (h * 31 + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return (h & 0x7FFFFFFF) % COORDINATOR_PARTITIONS


def group_in(partition, prefix):
    """A group id named `prefix-...` whose coordinator partition is `partition`."""
    i = 0
    while True:
        g = "%s-%d" % (prefix, i)
        if partition_of(g) == partition:
            return g
        i += 1


PROBES = [group_in(p, "probe") for p in range(COORDINATOR_PARTITIONS)]

COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16


def quotas(nodes):
    """The even share of each live node (sorted ids), as group-cluster's plan computes it."""
    base, extra = divmod(COORDINATOR_PARTITIONS, len(nodes))
    return {n: base + (i < extra) for i, n in enumerate(sorted(nodes))}


def predicted_releases(owners, new_live):
    """The partitions the current owners give up when the live set becomes `new_live`
    (group-cluster's plan: above quota, keep the preferred ones, release the others,
    highest first)."""
    live = sorted(new_live)
    want = quotas(live)
    out = set()
    for n in set(owners.values()):
        owned = sorted(p for p, o in owners.items() if o == n)
        excess = len(owned) - want.get(n, 0)
        if excess > 0:
            ranked = sorted(owned, key=lambda p: (live[p % len(live)] == n, -p))
            out.update(ranked[:excess])
    return out


# --------------------------------------------------------------------------- driver side


def poll_until(fn, timeout, what, every=0.1):
    """Calls fn until it returns something truthy (returned) or timeout (fails, naming
    what it waited for and fn's last answer or error)."""
    end = time.time() + timeout
    last = None
    while True:
        try:
            got = fn()
            if got:
                return got
            last = got
        except (OSError, ConnectionError, struct.error) as e:
            last = "%s: %s" % (type(e).__name__, e)
        if time.time() > end:
            raise ScenarioFailed("timed out after %.0f s waiting for %s (last: %s)" % (timeout, what, last))
        time.sleep(every)


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Procs:
    """Every process the driver started, killed by its own pid at the end."""

    live = []

    @classmethod
    def spawn(cls, args, **kw):
        p = subprocess.Popen(args, preexec_fn=die_with_parent, **kw)
        cls.live.append(p)
        return p

    @classmethod
    def kill(cls, p, sig=signal.SIGKILL):
        if p.poll() is None:
            try:
                os.kill(p.pid, sig)
            except ProcessLookupError:
                pass
        if sig == signal.SIGKILL:
            p.wait()
            if p in cls.live:
                cls.live.remove(p)

    @classmethod
    def kill_all(cls):
        for p in list(cls.live):
            cls.kill(p)


class EtcdMember:
    def __init__(self, binary, workdir, name, client_port, peer_port):
        self.binary, self.name = binary, name
        self.client_url = "http://127.0.0.1:%d" % client_port
        self.peer_url = "http://127.0.0.1:%d" % peer_port
        self.data = os.path.join(workdir, "etcd", name)
        self.log = os.path.join(workdir, "etcd-%s.log" % name)
        self.proc = None

    def start(self, initial_cluster):
        args = [self.binary, "--name", self.name, "--data-dir", self.data]
        args += ["--listen-client-urls", self.client_url, "--advertise-client-urls", self.client_url]
        args += ["--listen-peer-urls", self.peer_url, "--initial-advertise-peer-urls", self.peer_url]
        args += ["--initial-cluster", initial_cluster, "--initial-cluster-state", "new"]
        args += ["--initial-cluster-token", "group-server-e2e", "--heartbeat-interval", "50"]
        args += ["--election-timeout", "500", "--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn"]
        log = open(self.log, "a")
        self.proc = Procs.spawn(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def kill(self):
        Procs.kill(self.proc)

    def healthy(self):
        try:
            with urllib.request.urlopen(self.client_url + "/health", timeout=1) as r:
                return json.loads(r.read()).get("health") == "true"
        except (OSError, ValueError):
            return False

    def status(self):
        req = urllib.request.Request(self.client_url + "/v3/maintenance/status", data=b"{}", method="POST")
        with urllib.request.urlopen(req, timeout=1) as r:
            return json.loads(r.read())


class Node:
    """A `group-server --cluster` process."""

    def __init__(self, cluster, node_id):
        self.cluster, self.node_id = cluster, node_id
        self.proc = None
        self.addr = None
        self.stopped = False
        self.killed = False

    def start(self):
        c = self.cluster
        args = [c.server, "--cluster", "--etcd", ",".join(m.client_url for m in c.etcd)]
        args += ["--node-id", str(self.node_id), "--listen", "127.0.0.1:0", "--lease-ttl-secs", str(LEASE_TTL_S)]
        args += ["--cluster-prefix", c.prefix, "--topic", "%s:%d" % (TOPIC, PARTITIONS)]
        args += ["--initial-rebalance-delay-ms", "0", "--exit-on-stdin-close", "--metrics-listen", "127.0.0.1:0"]
        # Short share-group timers, so that share members join and move in seconds.
        args += ["--share-min-session-timeout-ms", "1000", "--share-session-timeout-ms", "10000"]
        args += ["--share-min-heartbeat-interval-ms", "100", "--share-heartbeat-interval-ms", "500"]
        log = open(os.path.join(c.workdir, "node-%d.log" % self.node_id), "a")
        self.proc = Procs.spawn(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        self.stopped = False
        self.killed = False
        self.lines = queue.Queue()

        def pump(out, lines):
            for line in out:
                lines.put(line.decode(errors="replace"))
            lines.put(None)

        threading.Thread(target=pump, args=(self.proc.stdout, self.lines), daemon=True).start()

    def wait_listening(self, timeout=30):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            line = "(nothing in %d s)" % timeout
        prefix = "group-server listening on "
        if not line or not line.startswith(prefix):
            raise ScenarioFailed(
                "node %d did not start: first line %r; log tail: %s" % (self.node_id, line, self.log_tail())
            )
        self.addr = line.strip()[len(prefix) :]
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            line = "(nothing in %d s)" % timeout
        if not line or "metrics on" not in line:
            raise ScenarioFailed("node %d printed no metrics address: %r" % (self.node_id, line))
        self.metrics_url = line.strip().rsplit(" ", 1)[1]

    def metric(self, name):
        """The value of the unlabelled sample `name` of the node's /metrics (None when absent)."""
        body = urllib.request.urlopen(self.metrics_url, timeout=10).read().decode()
        for line in body.splitlines():
            parts = line.split(" ")
            if len(parts) == 2 and parts[0] == name:
                return float(parts[1])
        return None

    def log_tail(self, n=2000):
        try:
            with open(os.path.join(self.cluster.workdir, "node-%d.log" % self.node_id), errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        self.killed = True
        Procs.kill(self.proc)

    def exited_by_itself(self):
        """Why a node this script did not kill is gone, or None."""
        if self.proc is None or self.alive() or self.killed:
            return None
        lines = [l for l in self.log_tail(4000).splitlines() if l.strip()]
        return "node %d exited by itself (status %s); its last log line: %s" % (
            self.node_id,
            self.proc.returncode,
            lines[-1] if lines else "(none)",
        )

    def pause(self):
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.stopped = True
        # kill() only queues the signal: until every thread has stopped, the node may
        # still read (and answer) what is sent to it next.
        poll_until(self.all_threads_stopped, 5, "node %d to stop" % self.node_id, 0.005)

    def all_threads_stopped(self):
        tasks = "/proc/%d/task" % self.proc.pid
        try:
            states = []
            for tid in os.listdir(tasks):
                with open("%s/%s/stat" % (tasks, tid)) as f:
                    # The state follows the parenthesised command name.
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            return False
        return bool(states) and all(s in ("T", "t") for s in states)

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)
        self.stopped = False


class Cluster:
    def __init__(self, server, etcd_bin, workdir):
        self.server, self.workdir = server, workdir
        self.base_ms = int(time.time() * 1000)
        self.prefix = "/group-server-e2e-%d" % os.getpid()
        if os.path.isdir(os.path.join(workdir, "etcd")):
            shutil.rmtree(os.path.join(workdir, "etcd"))
        for f in os.listdir(workdir):
            if f.endswith(".log"):
                os.remove(os.path.join(workdir, f))
        ports = free_ports(6)
        self.etcd = [EtcdMember(etcd_bin, workdir, "e%d" % i, ports[2 * i], ports[2 * i + 1]) for i in range(3)]
        self.initial_cluster = ",".join("%s=%s" % (m.name, m.peer_url) for m in self.etcd)
        self.nodes = {}

    def start(self):
        for m in self.etcd:
            m.start(self.initial_cluster)
        poll_until(lambda: all(m.healthy() for m in self.etcd), 30, "the 3 etcd members to be healthy")
        for n in (1, 2, 3):
            self.nodes[n] = Node(self, n)
            self.nodes[n].start()
        for n in self.nodes.values():
            n.wait_listening()
        return self.wait_spread([1, 2, 3], 30)

    def live(self):
        return [n for n in self.nodes.values() if n.alive() and not n.stopped]

    def bootstrap(self):
        return ",".join(n.addr for n in self.live())

    def add_node(self, node_id):
        node = Node(self, node_id)
        self.nodes[node_id] = node
        node.start()
        node.wait_listening()
        return node

    def restart(self, node_id):
        self.nodes[node_id].kill()
        return self.add_node(node_id)

    # What the nodes answer

    def view(self, node):
        """(brokers, owners by partition) as `node` answers them."""
        w = Wire(node.addr)
        try:
            brokers = metadata_brokers(w)
            owners = {}
            for p, g in enumerate(PROBES):
                error, owner = find_coordinator(w, g)
                owners[p] = owner if error == 0 else None
            return brokers, owners
        finally:
            w.close()

    def owner(self, group, ask=None):
        """The node id FindCoordinator names for `group` (asked of `ask` or every live node
        until one answers), None while none."""
        for node in [ask] if ask else self.live():
            try:
                w = Wire(node.addr)
                try:
                    error, owner = find_coordinator(w, group)
                finally:
                    w.close()
            except OSError:
                continue
            return owner if error == 0 else None
        return None

    def spread(self, expected):
        """The owners map when every expected node is live, every live node lists exactly
        them, names an owner for each partition, all agree, and the shares are even."""
        want = quotas(expected)
        agreed = None
        for node in self.live():
            brokers, owners = self.view(node)
            if sorted(brokers) != sorted(expected):
                return None
            if any(o is None for o in owners.values()):
                return None
            if agreed is not None and owners != agreed:
                return None
            agreed = owners
        counts = {n: sum(1 for o in agreed.values() if o == n) for n in expected}
        if counts != want:
            return None
        # Named is not enough (a node restarted before its old lease expired is named
        # for partitions it does not hold yet): each owner serves its partitions.
        return agreed if self.serving(agreed) else None

    def serving(self, owners):
        """Whether each node answers an offset fetch of every partition `owners` gives it."""
        for node in self.live():
            w = Wire(node.addr)
            try:
                for p, o in owners.items():
                    if o == node.node_id and any(e != 0 for _, e in offset_fetch(w, PROBES[p]).values()):
                        return False
            finally:
                w.close()
        return True

    def wait_spread(self, expected, timeout):
        def describe():
            try:
                return {n.node_id: self.counts(n) for n in self.live()}
            except OSError as e:
                return str(e)

        try:
            return poll_until(lambda: self.spread(expected), timeout, "an even spread over nodes %s" % expected, 0.2)
        except ScenarioFailed as e:
            raise ScenarioFailed("%s; partitions per node as each node sees it: %s" % (e, describe()))

    def counts(self, node):
        brokers, owners = self.view(node)
        c = {}
        for o in owners.values():
            c[o] = c.get(o, 0) + 1
        return {"brokers": sorted(brokers), "owned": c}

    def committed(self, group, timeout=20):
        """The group's committed offsets, read from its current owner."""

        def read():
            owner = self.owner(group)
            if owner is None or owner not in self.nodes:
                return None
            w = Wire(self.nodes[owner].addr)
            try:
                got = offset_fetch(w, group)
            finally:
                w.close()
            if any(err != 0 for _, err in got.values()):
                return None
            return {p: o for p, (o, _) in got.items()}

        return poll_until(read, timeout, "the committed offsets of %s" % group)

    def standalone_commit(self, group, offsets, timeout=20):
        """A commit from the driver (no member) through the group's owner, retried until
        acknowledged; returns the acknowledging node."""

        def attempt():
            owner = self.owner(group)
            if owner is None:
                return None
            w = Wire(self.nodes[owner].addr)
            try:
                errors = offset_commit_errors(w.call(8, 2, offset_commit_body(group, offsets)))
            finally:
                w.close()
            return owner if errors and all(e == 0 for e in errors.values()) else None

        return poll_until(attempt, timeout, "a standalone commit to %s" % group)


def group_owned_by(cluster, owners, node_id, prefix, avoid=()):
    """A group id whose partition `node_id` owns (per `owners`), not in partitions `avoid`."""
    for p in sorted(owners):
        if owners[p] == node_id and p not in avoid:
            return group_in(p, prefix), p
    raise ScenarioFailed("node %d owns no partition" % node_id)


class Worker:
    """A client process; killed by its own pid on failure or when it overstays."""

    live = []

    def __init__(self, cluster, client, group, name):
        self.name, self.client, self.group = name, client, group
        cfg = dict(client=client, bootstrap=cluster.bootstrap(), group=group, client_id=name, base_ms=cluster.base_ms)
        self.log = os.path.join(cluster.workdir, "worker-%s.log" % name)
        self.proc = Procs.spawn(
            [sys.executable, os.path.abspath(__file__), "worker", json.dumps(cfg)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(self.log, "w"),
            text=True,
        )
        self.events = []
        self.cond = threading.Condition()
        self.deadline = time.time() + WORKER_LIFETIME_S
        threading.Thread(target=self._read, daemon=True).start()
        Worker.live.append(self)

    def _read(self):
        for line in self.proc.stdout:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            with self.cond:
                self.events.append(ev)
                self.cond.notify_all()
        with self.cond:
            self.events.append({"event": "exit", "t": time.time()})
            self.cond.notify_all()

    def of(self, kind, after=0.0):
        with self.cond:
            return [e for e in self.events if e["event"] == kind and e.get("t", 0) > after]

    def acks(self, after=0.0):
        return self.of("ack", after)

    def failures(self, after=0.0):
        return self.of("commit_error", after) + self.of("commit_stuck", after)

    def wait_for(self, pred, timeout, what):
        end = min(time.time() + timeout, self.deadline)
        with self.cond:
            while True:
                for ev in self.events:
                    if pred(ev):
                        return ev
                if any(ev["event"] == "exit" for ev in self.events):
                    try:
                        with open(self.log, errors="replace") as f:
                            last = [l for l in f.read().splitlines() if l.strip() and not l.startswith(" ")][-1:]
                    except OSError:
                        last = []
                    raise ScenarioFailed(
                        "%s exited while waiting for %s (its stderr ends: %s)" % (self.name, what, last or "nothing")
                    )
                left = end - time.time()
                if left <= 0:
                    errors = [e.get("error") for e in self.failures()][-3:]
                    raise ScenarioFailed(
                        "%s: timed out after %.0f s waiting for %s (last commit errors: %s)"
                        % (self.name, timeout, what, errors)
                    )
                self.cond.wait(left)

    def wait_ack(self, after, timeout, what, node_not=None, node=None):
        def ok(e):
            if e["event"] != "ack" or e["t"] <= after:
                return False
            if node_not is not None and e.get("node") == node_not:
                return False
            return node is None or e.get("node") == node

        return self.wait_for(ok, timeout, what)

    def send(self, cmd):
        try:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass

    def stop_committing(self):
        n = len(self.of("committing"))
        self.send({"cmd": "commit", "on": False})
        self.wait_for(lambda e: e["event"] == "committing" and len(self.of("committing")) > n, 20, "its last commit")

    def close(self):
        self.send({"cmd": "close"})
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.kill()

    def kill(self):
        Procs.kill(self.proc)
        if self in Worker.live:
            Worker.live.remove(self)

    @classmethod
    def close_all(cls):
        for w in list(cls.live):
            w.send({"cmd": "close"})
        for w in list(cls.live):
            try:
                w.proc.wait(timeout=8)
            except subprocess.TimeoutExpired:
                pass
            w.kill()

def start_group(cluster, group, clients, label):
    return [Worker(cluster, c, group, "%s-%s%d" % (label, c, i)) for i, c in enumerate(clients)]


def wait_all_commit(workers, after, timeout, what, **kw):
    for w in workers:
        w.wait_ack(after, timeout, "%s (%s)" % (what, w.group), **kw)


def check_preserved(cluster, workers):
    """Stops the workers' commits; every acknowledged commit must read back: per
    partition, the committed offset is at least the last acknowledged one."""
    for w in workers:
        w.stop_committing()
    groups = {}
    for w in workers:
        acked = groups.setdefault(w.group, {})
        for e in w.acks():
            for p, o in e["offsets"].items():
                acked[int(p)] = max(acked.get(int(p), -1), o)
    total = 0
    for group, acked in groups.items():
        check(acked, "no commit of %s was ever acknowledged" % group)
        read = cluster.committed(group)
        lost = {p: (o, read.get(p)) for p, o in acked.items() if read.get(p, -1) < o}
        check(not lost, "%s lost acknowledged commits (partition: (acknowledged, read back)): %s" % (group, lost))
        total += sum(len(w.acks()) for w in workers if w.group == group)
    return total


# --------------------------------------------------------------------------- scenarios


def scenario_spread(cluster, state):
    owners = state["owners"]
    names = set(owners.values())
    check(names == {1, 2, 3}, "FindCoordinator names %s, not all of 1, 2, 3" % sorted(names))
    # Many group ids: a group's owner is its partition's owner.
    mismatched = []
    for i in range(150):
        g = "spread-%d" % i
        o = cluster.owner(g)
        if o != owners[partition_of(g)]:
            mismatched.append((g, partition_of(g), o, owners[partition_of(g)]))
    check(not mismatched, "groups named a coordinator other than their partition's owner: %s" % mismatched[:5])
    # Metadata names every node at the address it listens on.
    want = {n.node_id: n.addr for n in cluster.live()}
    for node in cluster.live():
        got = metadata_brokers_of(node)
        check(got == want, "node %d's Metadata lists %s, not %s" % (node.node_id, got, want))
    # A node answers NOT_COORDINATOR for a group it does not own.
    g = PROBES[0]
    for node in cluster.live():
        if node.node_id != owners[0]:
            w = Wire(node.addr)
            try:
                errors = offset_commit_errors(w.call(8, 2, offset_commit_body(g, {0: 1})))
                fetched = offset_fetch(w, g)
            finally:
                w.close()
            check(
                set(errors.values()) == {NOT_COORDINATOR},
                "node %d (not the owner of %s) answered a commit with %s" % (node.node_id, g, errors),
            )
            check(
                {e for _, e in fetched.values()} == {NOT_COORDINATOR},
                "node %d (not the owner of %s) answered an offset fetch with %s" % (node.node_id, g, fetched),
            )
    started = time.time()
    ga, _ = group_owned_by(cluster, owners, 1, "spread-kp")
    gb, _ = group_owned_by(cluster, owners, 2, "spread-ck")
    gc, _ = group_owned_by(cluster, owners, 3, "spread-mix")
    workers = start_group(cluster, ga, ["kp", "kp"], "s1a")
    workers += start_group(cluster, gb, ["ck"], "s1b")
    workers += start_group(cluster, gc, ["kp", "ck"], "s1c")
    wait_all_commit(workers, started, 45, "a first acknowledged commit")
    for g, n in ((ga, 1), (gb, 2), (gc, 3)):
        members = [w for w in workers if w.group == g]
        # Both members of a two-member group end up sharing its 6 partitions.
        def split(members=members):
            last = [w.of("assignment")[-1]["partitions"] if w.of("assignment") else [] for w in members]
            got = sorted(p for a in last for p in a)
            return got == list(range(PARTITIONS)) and all(last)

        poll_until(split, 30, "the members of %s to split t1's partitions" % g)
    for w in workers:
        if w.client == "kp":
            nodes = {e["node"] for e in w.acks()}
            want = {ga: 1, gc: 3}[w.group]
            check(nodes == {want}, "%s's commits were acknowledged by %s, not node %d" % (w.name, nodes, want))
    n = check_preserved(cluster, workers)
    Worker.close_all()
    # Each node's commits went to etcd in transactions of group commit, which it counts.
    gathered = []
    for node in cluster.live():
        transactions = node.metric("group_server_etcd_append_transactions_total")
        appends = node.metric("group_server_etcd_appends_total")
        check(
            transactions is not None and appends is not None and 0 < transactions <= appends,
            "node %d's metrics count %s etcd append transactions for %s appends" % (node.node_id, transactions, appends),
        )
        gathered.append("%d/%d" % (appends, transactions))
    return (
        "50 partitions over nodes 1/2/3 as %s; groups %s, %s, %s (one per node) assigned and %d commits read back; "
        "etcd appends/transactions by node %s"
    ) % (
        [sum(1 for o in owners.values() if o == k) for k in (1, 2, 3)],
        ga,
        gb,
        gc,
        n,
        ", ".join(gathered),
    )


def scenario_kill(cluster, state):
    owners = state["owners"]
    victim = 2
    g_kp, p = group_owned_by(cluster, owners, victim, "kill-kp")
    g_ck, _ = group_owned_by(cluster, owners, victim, "kill-ck", avoid=(p,))
    started = time.time()
    workers = start_group(cluster, g_kp, ["kp", "kp"], "s2a") + start_group(cluster, g_ck, ["ck"], "s2b")
    wait_all_commit(workers, started, 45, "a first acknowledged commit")
    # Both kp members committing (the second has joined).
    poll_until(lambda: all(w.acks(time.time() - 1) for w in workers), 30, "every member committing")
    killed = time.time()
    cluster.nodes[victim].kill()
    moved = {}

    def both_moved():
        for g in (g_kp, g_ck):
            if g not in moved:
                o = cluster.owner(g)
                if o is not None and o != victim:
                    moved[g] = (o, time.time())
        return len(moved) == 2

    poll_until(both_moved, LEASE_TTL_S + MOVE_SLACK_S, "the killed node's partitions to move", 0.05)
    for w in workers:
        w.wait_ack(killed, RESUME_S, "a commit after the kill", node_not=victim)
    resumed = {w.name: w.acks(killed)[0]["t"] - killed for w in workers}
    for w in workers:
        w.wait_ack(max(e["t"] for e in w.acks()), 10, "a further commit")
    n = check_preserved(cluster, workers)
    Worker.close_all()
    cluster.restart(victim)
    state["owners"] = cluster.wait_spread([1, 2, 3], 30)
    # Killed and restarted at once, under the same id, while its old lease lives: the
    # new process serves its share once etcd expires the old lease.
    again = time.time()
    cluster.restart(victim)
    state["owners"] = cluster.wait_spread([1, 2, 3], LEASE_TTL_S + MOVE_SLACK_S + 10)
    quick = time.time() - again
    return (
        "node %d killed; partitions moved to %s in %s s; commits resumed after %s s; %d commits read back; "
        "restarted node took its share; killed and restarted at once, it served its share again after %.1f s"
    ) % (
        victim,
        sorted({o for o, _ in moved.values()}),
        ["%.1f" % (t - killed) for _, t in moved.values()],
        {k: "%.1f" % v for k, v in resumed.items()},
        n,
        quick,
    )


def scenario_pause(cluster, state):
    owners = state["owners"]
    victim = 3
    node = cluster.nodes[victim]
    g_kp, p1 = group_owned_by(cluster, owners, victim, "pause-kp")
    g_ck, p2 = group_owned_by(cluster, owners, victim, "pause-ck", avoid=(p1,))
    g_raw, _ = group_owned_by(cluster, owners, victim, "pause-raw", avoid=(p1, p2))
    started = time.time()
    workers = start_group(cluster, g_kp, ["kp"], "s3a") + start_group(cluster, g_ck, ["ck"], "s3b")
    wait_all_commit(workers, started, 45, "a first acknowledged commit")
    check(cluster.standalone_commit(g_raw, {0: 1}) == victim, "the raw commit went elsewhere")
    probe = Wire(node.addr)
    others = [n for n in cluster.live() if n.node_id != victim]
    paused = time.time()
    node.pause()
    try:
        # Sent while the node is paused: it is read only once the node resumes.
        probe_corr = probe.send(8, 2, offset_commit_body(g_raw, {0: 2}))
        # The offset fetch must be refused (the node's serving lease ran out while it
        # was paused); what FindCoordinator names first is observed, not judged.
        fetch_corr = probe.send(9, 1, offset_fetch_body(g_raw))
        find_corr = probe.send(10, 1, find_coordinator_body(g_raw))
        poll_until(
            lambda: victim not in metadata_brokers_of(others[0]),
            LEASE_TTL_S + MOVE_SLACK_S,
            "the paused node to leave Metadata",
        )
        moved = {}

        def all_moved():
            for g in (g_kp, g_ck, g_raw):
                if g not in moved:
                    o = cluster.owner(g, others[0])
                    if o is not None and o != victim:
                        moved[g] = (o, time.time())
            return len(moved) == 3

        poll_until(all_moved, LEASE_TTL_S + MOVE_SLACK_S, "the paused node's partitions to move", 0.05)
        new_owner = moved[g_raw][0]
        check(cluster.standalone_commit(g_raw, {0: 3}) == new_owner, "the raw commit did not go to the new owner")
        first_new = {}
        for w in workers:
            e = w.wait_ack(paused, RESUME_S, "a commit through the new owner", node_not=victim)
            first_new[w.name] = e["t"]
        # Paused past the lease, and at least STOP_S.
        time.sleep(max(0.0, paused + STOP_S - time.time()))
    finally:
        resumed_at = time.time()
        node.resume()
    # The request sent while paused must not be acknowledged.
    try:
        probe.sock.settimeout(15)
        errors = offset_commit_errors(probe.recv(probe_corr))
        probe_answer = "answered %s" % errors
        check(errors and all(e != 0 for e in errors.values()), "the resumed node acknowledged a commit: %s" % errors)
        fetched = offset_fetch_answer(probe.recv(fetch_corr))[0]
        check(fetched[1] != 0, "the resumed node answered an offset fetch from memory: %s" % (fetched,))
        found = find_coordinator_answer(probe.recv(find_corr))
        probe_answer += ", then its offset fetch %s (offset, error) and FindCoordinator %s (error, node)" % (
            fetched,
            found,
        )
    except (OSError, ConnectionError) as e:
        probe_answer = "connection ended (%s)" % type(e).__name__
    finally:
        probe.close()
    read = cluster.committed(g_raw)
    check(read.get(0) == 3, "the raw group's offset is %s after the resume, not the new owner's 3" % read.get(0))
    # Until the resumed node registers again it owns nothing: no kp commit may be
    # acknowledged by it after the new owner acknowledged one.
    registered = poll_until(
        lambda: victim in metadata_brokers_of(others[0]) and time.time(), 30, "the resumed node to register again"
    )
    for w in workers:
        if w.client == "kp":
            bad = [e for e in w.acks(first_new[w.name]) if e["node"] == victim and e["t"] < registered]
            check(not bad, "%s: the resumed node acknowledged commits after the new owner had: %s" % (w.name, bad[:3]))
    state["owners"] = cluster.wait_spread([1, 2, 3], 30)
    for w in workers:
        w.wait_ack(time.time(), 15, "a commit after the resumed node took its share back")
    n = check_preserved(cluster, workers)
    Worker.close_all()
    return (
        "node %d paused %.1f s; partitions moved in %s s; probe commit %s; commits resumed %s s after the pause; "
        "registered again %.1f s after the resume; %d commits read back"
    ) % (
        victim,
        resumed_at - paused,
        ["%.1f" % (t - paused) for _, t in moved.values()],
        probe_answer,
        {k: "%.1f" % (v - paused) for k, v in first_new.items()},
        registered - resumed_at,
        n,
    )


def metadata_brokers_of(node):
    w = Wire(node.addr)
    try:
        return metadata_brokers(w)
    finally:
        w.close()


def scenario_join(cluster, state):
    owners = state["owners"]
    newcomer = 4
    moving = predicted_releases(owners, [1, 2, 3, newcomer])
    check(moving, "no partition is predicted to move (owners: %s)" % owners)
    # Groups on partitions predicted to move, owned by two different nodes.
    by_node = {}
    for p in sorted(moving):
        by_node.setdefault(owners[p], p)
    picks = sorted(by_node.items())[:2]
    g_kp = group_in(picks[0][1], "join-kp")
    g_ck = group_in(picks[-1][1], "join-ck")
    started = time.time()
    workers = start_group(cluster, g_kp, ["kp"], "s4a") + start_group(cluster, g_ck, ["ck"], "s4b")
    wait_all_commit(workers, started, 45, "a first acknowledged commit")
    joined = time.time()
    cluster.add_node(newcomer)
    state["owners"] = cluster.wait_spread([1, 2, 3, newcomer], 30)
    spread_at = time.time()
    now = state["owners"]
    actually = {p for p in now if now[p] == newcomer}
    moved_groups = [g for g in (g_kp, g_ck) if now[partition_of(g)] == newcomer]
    check(
        moved_groups,
        "neither group's partition moved to node %d (predicted %s, it took %s)"
        % (newcomer, sorted(moving), sorted(actually)),
    )
    for w in workers:
        if w.group in moved_groups:
            node = newcomer if w.client == "kp" else None
            w.wait_ack(spread_at, RESUME_S, "a commit after its partition moved", node=node)
        else:
            w.wait_ack(spread_at, RESUME_S, "a commit after the join")
    resumed = {w.name: w.acks(spread_at)[0]["t"] - joined for w in workers}
    n = check_preserved(cluster, workers)
    Worker.close_all()
    return (
        "node %d took %d partitions (%s as predicted) in %.1f s; groups %s moved to it and committed again after "
        "%s s; %d commits read back"
    ) % (
        newcomer,
        len(actually),
        "all" if actually == moving else "not all",
        spread_at - joined,
        moved_groups,
        {k: "%.1f" % v for k, v in resumed.items()},
        n,
    )


def etcd_leader(cluster):
    """The etcd member that is the leader, as the reachable members report it."""
    ids = {}
    leader = None
    for m in cluster.etcd:
        try:
            s = m.status()
        except (OSError, ValueError):
            continue
        ids[s["header"]["member_id"]] = m
        leader = leader or s.get("leader")
    return ids.get(leader)


def scenario_etcd(cluster, state):
    owners = state["owners"]
    # Groups on the lowest and the highest node.
    g_kp, p = group_owned_by(cluster, owners, min(owners.values()), "etcd-kp")
    g_ck, _ = group_owned_by(cluster, owners, max(owners.values()), "etcd-ck", avoid=(p,))
    started = time.time()
    workers = start_group(cluster, g_kp, ["kp"], "s5a") + start_group(cluster, g_ck, ["ck"], "s5b")
    wait_all_commit(workers, started, 45, "a first acknowledged commit")
    leader = poll_until(lambda: etcd_leader(cluster), 10, "the etcd leader")
    first_killed = time.time()
    leader.kill()
    for w in workers:
        w.wait_ack(first_killed + 0.5, 20, "a commit with one etcd member down")
    second = next(m for m in cluster.etcd if m is not leader)
    second_killed = time.time()
    second.kill()
    # Without a quorum: the clients see failures, and nothing is acknowledged.
    for w in workers:
        w.wait_for(
            lambda e: e["event"] in ("commit_error", "commit_stuck") and e["t"] > second_killed,
            20,
            "a failing commit without an etcd quorum",
        )
    outage_seen = time.time()
    time.sleep(max(0.0, second_killed + 4 - time.time()))
    # An append in flight as the quorum went may still be acknowledged just after.
    grace = 1.5
    during = {w.name: len(w.acks(second_killed + grace)) for w in workers}
    restarted = time.time()
    for m in (leader, second):
        m.start(cluster.initial_cluster)
    check(not any(during.values()), "commits acknowledged without an etcd quorum: %s" % during)
    poll_until(lambda: all(m.healthy() for m in cluster.etcd), 30, "etcd to be healthy again")
    for w in workers:
        w.wait_ack(restarted, 45, "a commit after etcd recovered")
    recovered = {w.name: w.acks(restarted)[0]["t"] - restarted for w in workers}
    state["owners"] = cluster.wait_spread(sorted(cluster.nodes), 30)
    n = check_preserved(cluster, workers)
    Worker.close_all()
    return (
        "commits went on with the etcd leader down; without a quorum failures were seen after %.1f s and nothing "
        "acknowledged; after the restart commits resumed in %s s; %d commits read back"
    ) % (
        outage_seen - second_killed,
        {k: "%.1f" % v for k, v in recovered.items()},
        n,
    )


def scenario_share(cluster, state):
    import share

    owners = state["owners"]
    victim = 3
    group, _ = group_owned_by(cluster, owners, victim, "share")
    everything = frozenset((TOPIC, p) for p in range(PARTITIONS))

    def described(node_id):
        node = cluster.nodes[node_id]
        error, group_state, epoch, members = share.describe(node.addr, group)
        held = [m[2] for m in members.values()]
        covered = len(members) == 3 and all(held) and frozenset().union(*held) == everything
        return (epoch, members) if error == 0 and group_state == "Stable" and covered else None

    workers = [share.Worker(cluster.workdir, cluster.bootstrap(), "share-%s" % n, group, TOPIC) for n in "abc"]
    try:
        epoch, members = poll_until(lambda: described(victim), 40, "three share members covering every partition")
        killed = time.time()
        cluster.nodes[victim].kill()
        new_owner = poll_until(
            lambda: (lambda o: o if o not in (None, victim) else None)(cluster.owner(group)),
            LEASE_TTL_S + MOVE_SLACK_S,
            "the share group's partition to move",
        )
        _, after = poll_until(lambda: described(new_owner), RESUME_S, "the share group on its new owner")
        check(set(after) == set(members), "the same members after the move: %s, not %s" % (sorted(after), sorted(members)))
        moved = time.time() - killed
        for w in workers:
            w.close()
    finally:
        for w in workers:
            w.kill()
    cluster.restart(victim)
    state["owners"] = cluster.wait_spread([1, 2, 3], 30)
    return "3 share members on %d partitions (group epoch %d) moved with their group from node %d to node %d in %.1f s" % (
        PARTITIONS,
        epoch,
        victim,
        new_owner,
        moved,
    )



# Group configs across the nodes (IncrementalAlterConfigs v0, DescribeConfigs v1,
# ConsumerGroupHeartbeat v1, the last one flexible).

GROUP_RESOURCE = 32
CONFIG = "consumer.heartbeat.interval.ms"


def uvarint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def cstr(s):
    """A compact (nullable) string."""
    if s is None:
        return b"\0"
    b = s.encode()
    return uvarint(len(b) + 1) + b


def read_uvarint(r):
    n, shift = 0, 0
    while True:
        b = r.take(">B")
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n
        shift += 7


def read_cstr(r):
    n = read_uvarint(r)
    if n == 0:
        return None
    s = r.d[r.at : r.at + n - 1].decode()
    r.at += n - 1
    return s


def call_flexible(wire, api_key, version, body):
    """A flexible request (header v2) and its answer after the header's tags."""
    wire.corr += 1
    frame = struct.pack(">hhi", api_key, version, wire.corr) + kstr("cluster-e2e") + b"\0" + body
    wire.sock.sendall(struct.pack(">i", len(frame)) + frame)
    r = wire.recv(wire.corr)
    read_uvarint(r)  # the response header's tagged fields (none)
    return r


def group_config_call(addr, api, api_key, version, group, config):
    """`api` (`api_key` at `version`) on the one GROUP resource `group` with the one
    config entry `config` (its name's encoding onwards), on the node at `addr`: the
    answer, read past the resource's error, which must be none."""
    body = struct.pack(">i", 1) + struct.pack(">b", GROUP_RESOURCE) + kstr(group)
    body += struct.pack(">i", 1) + config
    w = Wire(addr)
    try:
        r = w.call(api_key, version, body)
    finally:
        w.close()
    r.take(">i")  # throttle
    check(r.take(">i") == 1, "one resource in the %s answer" % api)
    error = r.take(">h")
    message = r.string()
    check(error == 0, "%s on %s: error %d %s" % (api, addr, error, message))
    return r


def alter_group_config(addr, group, name, value):
    """IncrementalAlterConfigs v0 SET of one config of GROUP `group` on the node at
    `addr`."""
    config = kstr(name) + struct.pack(">b", 0) + kstr(value) + struct.pack(">b", 0)
    group_config_call(addr, "IncrementalAlterConfigs", 44, 0, group, config)


def described_group_config(addr, group, name):
    """DescribeConfigs v1 of `name` of GROUP `group` on the node at `addr`:
    (value, source)."""
    r = group_config_call(addr, "DescribeConfigs", 32, 1, group, kstr(name) + struct.pack(">b", 0))
    r.take(">b")
    r.string()
    found = None
    for _ in range(r.take(">i")):
        n, value = r.string(), r.string()
        r.take(">b")  # read only
        source = r.take(">b")
        r.take(">b")  # sensitive
        for _ in range(r.take(">i")):
            r.string(), r.string(), r.take(">b")
        if n == name:
            found = (value, source)
    check(found is not None, "%s not described on %s" % (name, addr))
    return found


def heartbeat_interval(addr, group, member):
    """A ConsumerGroupHeartbeat v1 join of `member` to `group` on the node at
    `addr`: (error code, heartbeat interval)."""
    body = cstr(group) + cstr(member) + struct.pack(">i", 0) + cstr(None) + cstr(None)
    body += struct.pack(">i", 5000) + uvarint(2) + cstr(TOPIC) + cstr(None) + cstr(None) + uvarint(1) + b"\0"
    w = Wire(addr)
    try:
        r = call_flexible(w, 68, 1, body)
    finally:
        w.close()
    r.take(">i")  # throttle
    error = r.take(">h")
    read_cstr(r)
    read_cstr(r)
    r.take(">i")  # member epoch
    return error, r.take(">i")


def scenario_group_configs(cluster, state):
    """A group config altered on a node that does not coordinate the group is
    described by every node at once, in force on the coordinator from its members'
    next heartbeat (a watch of etcd tells it), and still there after the node that
    altered it restarts."""
    owners = state["owners"]
    group = None
    for i in range(1000):
        g = "configured-%d" % i
        if owners.get(partition_of(g)) is not None:
            group = g
            break
    check(group is not None, "no group on an owned partition (owners: %s)" % owners)
    owner = owners[partition_of(group)]
    other = next(n for n in sorted(cluster.nodes) if n != owner and cluster.nodes[n].alive())
    error, interval = heartbeat_interval(cluster.nodes[owner].addr, group, "m-before")
    check(error == 0, "a first heartbeat on the coordinator: error %d" % error)
    t0 = time.time()
    alter_group_config(cluster.nodes[other].addr, group, CONFIG, "7000")
    for n in sorted(cluster.nodes):
        value, source = described_group_config(cluster.nodes[n].addr, group, CONFIG)
        check((value, source) == ("7000", 8), "node %d describes %s=%s (source %d)" % (n, CONFIG, value, source))
    seen = poll_until(
        lambda: heartbeat_interval(cluster.nodes[owner].addr, group, "m-after")[1] == 7000 or None,
        10,
        "the coordinator to apply the config altered on node %d" % other,
        every=0.05,
    )
    check(seen, "never applied")
    applied = time.time() - t0
    cluster.restart(other)
    state["owners"] = cluster.wait_spread(sorted(cluster.nodes), 30)
    value, _ = described_group_config(cluster.nodes[other].addr, group, CONFIG)
    check(value == "7000", "after node %d restarted it describes %s" % (other, value))
    return "altered on node %d, described by all %d nodes, in force on node %d (the coordinator) after %.2f s (interval %d before), kept across a restart" % (
        other, len(cluster.nodes), owner, applied, interval)


SCENARIOS = [
    ("spread", scenario_spread),
    ("group-configs", scenario_group_configs),
    ("share-owner-killed", scenario_share),
    ("kill-9-owner", scenario_kill),
    ("sigstop-owner", scenario_pause),
    ("fourth-node-joins", scenario_join),
    ("etcd-quorum", scenario_etcd),
]


def run(args):
    cluster = Cluster(args.server, args.etcd, args.workdir)
    started = time.time()
    try:
        state = {"owners": cluster.start()}
    except ScenarioFailed as e:
        print("FAIL setup: %s" % e)
        print("cluster: 0/%d scenarios passed" % len(SCENARIOS))
        return 1
    print("setup: etcd and 3 nodes up in %.1f s" % (time.time() - started), flush=True)
    passed = 0
    for name, fn in SCENARIOS:
        t0 = time.time()
        try:
            detail = fn(cluster, state)
            passed += 1
            print("PASS %s (%.1f s): %s" % (name, time.time() - t0, detail), flush=True)
        except Exception as e:
            message = str(e) if isinstance(e, ScenarioFailed) else traceback.format_exc()
            print("FAIL %s (%.1f s): %s" % (name, time.time() - t0, message), flush=True)
            for n in cluster.nodes.values():
                why = n.exited_by_itself()
                if why:
                    print("  (%s)" % why, flush=True)
            Worker.close_all()
            # Put the cluster back for the next scenario as far as possible.
            for n in cluster.nodes.values():
                if n.stopped:
                    n.resume()
            for m in cluster.etcd:
                if m.proc.poll() is not None:
                    m.start(cluster.initial_cluster)
            for nid, n in list(cluster.nodes.items()):
                if not n.alive():
                    try:
                        cluster.add_node(nid)
                    except ScenarioFailed:
                        pass
            try:
                state["owners"] = cluster.wait_spread(sorted(cluster.nodes), 30)
            except ScenarioFailed as again:
                print("  (the cluster did not settle after the failure: %s)" % again, flush=True)
                state["owners"] = {}
    print("cluster: %d/%d scenarios passed in %.1f s" % (passed, len(SCENARIOS), time.time() - started))
    return 0 if passed == len(SCENARIOS) else 1


def measure(args):
    """Failover time: kill -9 of a group's owner to the first commit the new owner
    acknowledges (kp, which knows the node), and the first ck commit after the kill."""
    cluster = Cluster(args.server, args.etcd, args.workdir)
    owners = cluster.start()
    kp_times, ck_times = [], []
    for run_no in range(args.runs):
        victim = 1 + run_no % 3
        g_kp, p = group_owned_by(cluster, owners, victim, "measure-%d-kp" % run_no)
        g_ck, _ = group_owned_by(cluster, owners, victim, "measure-%d-ck" % run_no, avoid=(p,))
        t0 = time.time()
        workers = start_group(cluster, g_kp, ["kp"], "m%da" % run_no)
        workers += start_group(cluster, g_ck, ["ck"], "m%db" % run_no)
        wait_all_commit(workers, t0, 45, "a first acknowledged commit")
        killed = time.time()
        cluster.nodes[victim].kill()
        kp = workers[0].wait_ack(killed, 60, "a commit through the new owner", node_not=victim)["t"] - killed
        ck = workers[1].wait_ack(killed, 60, "a commit after the kill")["t"] - killed
        kp_times.append(kp)
        ck_times.append(ck)
        print("run %d: node %d killed; kp %.2f s, ck %.2f s" % (run_no + 1, victim, kp, ck), flush=True)
        Worker.close_all()
        cluster.restart(victim)
        owners = cluster.wait_spread([1, 2, 3], 30)
    print(
        "failover (lease TTL %d s), median of %d: kp %.2f s (min %.2f, max %.2f), ck %.2f s (min %.2f, max %.2f)"
        % (
            LEASE_TTL_S,
            args.runs,
            statistics.median(kp_times),
            min(kp_times),
            max(kp_times),
            statistics.median(ck_times),
            min(ck_times),
            max(ck_times),
        )
    )
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["run", "measure"])
    parser.add_argument("--server", required=True, help="the group-server binary (built with --features cluster)")
    parser.add_argument("--etcd", required=True, help="the etcd binary")
    parser.add_argument("--workdir", required=True, help="where etcd's data and the logs go")
    parser.add_argument("--runs", type=int, default=10, help="measure: how many failovers")
    args = parser.parse_args()
    for path, what in ((args.server, "group-server"), (args.etcd, "etcd")):
        if not os.access(path, os.X_OK):
            print("FAIL setup: no %s binary at %s" % (what, path))
            return 2
    os.makedirs(args.workdir, exist_ok=True)
    watchdog(Worker.live)

    def on_signal(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    try:
        return run(args) if args.command == "run" else measure(args)
    finally:
        # SIGKILL ends a stopped (SIGSTOP) node too.
        Procs.kill_all()


if __name__ == "__main__":
    sys.exit(main())
