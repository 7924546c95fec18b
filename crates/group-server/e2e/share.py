#!/usr/bin/env python3
"""End-to-end scenario of KIP-932 share groups with confluent-kafka 2.16.1's
ShareConsumer (librdkafka 2.16.0) against group-server.

Three share consumers subscribe to a 2-partition topic: all three join and hold
assignments (more consumers than partitions: a partition may have several members);
one leaves and the other two still cover both partitions; the server is killed
(SIGKILL) and started again on the same data directory and port, and the group is
there before any client speaks, with the same members, who go on heartbeating. Every
check reads the group as the server describes it, by ShareGroupDescribe (v1, sent by
this script: the Python client has no admin call for share groups), and the server's
request log.

Each consumer runs in its own worker process (`share.py worker '<json>'`): it polls
until told to close (a JSON command on stdin) and reports its client errors. The
driver (`share.py run --server BIN --workdir DIR`) prints one PASS or FAIL line and a
summary. The partitions hold no records: consuming is polling (ShareFetch long polls).
"""

import json
import os
import socket
import struct
import sys
import time

from consumer_protocol import check, run_one, wait_until
from worker_io import ServerProcess, WorkerProcess, emit, read_request_log, stdin_commands

TOPIC = "queue"
PARTITIONS = 2
GROUP = "share-e2e"
SESSION_MS = 6000
HEARTBEAT_MS = 500
WORKER_LIFETIME_S = 90.0


# --------------------------------------------------------------------------- worker side


def worker(cfg):
    from confluent_kafka import ShareConsumer

    consumer = ShareConsumer(
        {
            "bootstrap.servers": cfg["bootstrap"],
            "group.id": cfg["group"],
            "client.id": cfg["client_id"],
            "error_cb": lambda err: emit({"event": "client_error", "error": str(err), "fatal": err.fatal()}),
        }
    )
    consumer.subscribe([cfg.get("topic", TOPIC)])
    commands = stdin_commands()
    emit({"event": "started"})
    deadline = time.time() + WORKER_LIFETIME_S
    while time.time() < deadline:
        try:
            consumer.poll(0.2)
        except Exception as e:  # a poll error is reported, the worker goes on
            emit({"event": "client_error", "error": str(e), "fatal": False})
        if not commands.empty():
            cmd = commands.get()
            if cmd["cmd"] in ("close", "eof"):
                consumer.close()
                emit({"event": "closed"})
                return


# --------------------------------------------------------------------------- ShareGroupDescribe


def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def compact_str(s):
    b = s.encode()
    return uvarint(len(b) + 1) + b


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        b = self.data[self.pos : self.pos + n]
        check(len(b) == n, "ShareGroupDescribe answer truncated")
        self.pos += n
        return b

    def i8(self):
        return struct.unpack(">b", self.take(1))[0]

    def i16(self):
        return struct.unpack(">h", self.take(2))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def uvarint(self):
        n, shift = 0, 0
        while True:
            b = self.take(1)[0]
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7

    def string(self):
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def array(self, item):
        n = self.uvarint()
        return [] if n == 0 else [item() for _ in range(n - 1)]

    def tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())


def describe(bootstrap, group):
    """The group as ShareGroupDescribe v1 answers it: (error, state, epoch, {member id:
    (member epoch, client id, frozenset of partitions)})."""
    host, port = bootstrap.rsplit(":", 1)
    header = struct.pack(">hhi", 77, 1, 7) + struct.pack(">h", 5) + b"share" + uvarint(0)
    body = uvarint(2) + compact_str(group) + b"\x00" + uvarint(0)
    frame = header + body
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", recv_exactly(s, 4))[0]
        r = Reader(recv_exactly(s, size))
    check(r.i32() == 7, "correlation id")
    r.tags()
    r.i32()  # throttle

    def member():
        member_id = r.string()
        r.string()  # rack
        epoch = r.i32()
        client_id = r.string()
        r.string()  # host
        r.array(r.string)  # subscribed topics
        held = set()

        def topic():
            r.take(16)
            name = r.string()
            for p in r.array(r.i32):
                held.add((name, p))
            r.tags()

        r.array(topic)
        r.tags()  # the assignment's
        r.tags()
        return member_id, (epoch, client_id, frozenset(held))

    def group_():
        error = r.i16()
        r.string()  # message
        r.string()  # id
        state = r.string()
        epoch = r.i32()
        r.i32()  # assignment epoch
        r.string()  # assignor
        members = dict(r.array(member))
        r.i32()  # authorized operations
        r.tags()
        return error, state, epoch, members

    groups = r.array(group_)
    check(len(groups) == 1, f"one group described, got {len(groups)}")
    return groups[0]


def recv_exactly(s, n):
    out = bytearray()
    while len(out) < n:
        chunk = s.recv(n - len(out))
        check(chunk, "connection closed mid-answer")
        out += chunk
    return bytes(out)


# --------------------------------------------------------------------------- driver side


class Worker(WorkerProcess):
    def __init__(self, workdir, bootstrap, name, group=GROUP, topic=TOPIC):
        self.name = name
        cfg = dict(bootstrap=bootstrap, group=group, client_id=name, topic=topic)
        super().__init__(__file__, "worker", cfg, os.path.join(workdir, name + ".stderr"), WORKER_LIFETIME_S)

    def of(self, kind):
        with self.cond:
            return [ev for ev in self.events if ev.get("event") == kind]

    def close(self):
        """Closes the worker, which must say it closed within 20 s."""
        self.proc.stdin.write(json.dumps({"cmd": "close"}) + "\n")
        self.proc.stdin.flush()
        wait_until(lambda: self.of("closed"), 20, f"{self.name} to close")


class Server(ServerProcess):
    def __init__(self, binary, workdir):
        super().__init__(binary, workdir)
        self.log_path = os.path.join(workdir, "share.requests.jsonl")
        self.data_dir = os.path.join(workdir, "share.data")
        open(self.log_path, "w").close()

    def start(self):
        args = [
            "--request-log", self.log_path,
            "--topic", f"{TOPIC}:{PARTITIONS}", "--data-dir", self.data_dir,
            "--share-min-session-timeout-ms", "1000", "--share-session-timeout-ms", str(SESSION_MS),
            "--share-min-heartbeat-interval-ms", "100", "--share-heartbeat-interval-ms", str(HEARTBEAT_MS),
            "--exit-on-stdin-close",
        ]
        self.launch(args, "share.stderr", rust_log="info,sled=warn")

    def heartbeats(self, since=0.0):
        return [r for r in read_request_log(self.log_path, None, "ShareGroupHeartbeat", since) if r.get("response")]


EVERYTHING = frozenset((TOPIC, p) for p in range(PARTITIONS))


def covered(bootstrap, members_expected):
    """The described group when it is Stable with `members_expected` members, each holding
    at least one partition and together every partition."""
    error, state, epoch, members = describe(bootstrap, GROUP)
    if error != 0 or state != "Stable" or len(members) != members_expected:
        return None
    held = [m[2] for m in members.values()]
    if any(not h for h in held) or frozenset().union(*held) != EVERYTHING:
        return None
    return epoch, members


def scenario(binary, workdir):
    server = Server(binary, workdir)
    server.start()
    workers = []
    try:
        workers = [Worker(workdir, server.bootstrap, f"share-{n}") for n in "abc"]
        epoch, members = wait_until(lambda: covered(server.bootstrap, 3), 40, "three members covering both partitions")
        sizes = sorted(len(m[2]) for m in members.values())
        check(sum(sizes) > PARTITIONS, f"a partition is shared by several members: {sizes}")

        workers[0].close()
        epoch, members = wait_until(lambda: covered(server.bootstrap, 2), 20, "two members covering both partitions")
        clients = sorted(m[1] for m in members.values())
        check(clients == ["share-b", "share-c"], f"the members left are b and c: {clients}")

        server.kill()
        server.start()
        restarted = time.time()
        error, state, loaded_epoch, loaded = describe(server.bootstrap, GROUP)
        check(error == 0 and set(loaded) == set(members), f"loaded after the restart: {error} {state} {loaded}")
        check(loaded_epoch == epoch, f"the group epoch survives: {loaded_epoch} != {epoch}")
        wait_until(
            lambda: len({r["member"] for r in server.heartbeats(restarted) if r["error"] == 0}) == 2,
            20,
            "both members heartbeating the restarted server",
        )
        after = covered(server.bootstrap, 2)
        check(after is not None and set(after[1]) == set(members), f"same members after the restart: {after}")
        for w in workers[1:]:
            w.close()
        for w in workers:
            fatal = [ev["error"] for ev in w.of("client_error") if ev.get("fatal")]
            check(not fatal, f"{w.name}: fatal client errors {fatal}")
        return f"3 members on {PARTITIONS} partitions, 2 after a leave, kept across a kill -9"
    finally:
        for w in workers:
            w.kill()
        server.kill()


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
        return
    run_one("share", scenario)


if __name__ == "__main__":
    main()
