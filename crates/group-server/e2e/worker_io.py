"""What the e2e scripts (driver.py, security.py, cluster.py, consumer_protocol.py) share:
each client runs in a worker process that reads JSON commands, one a line, on stdin
and answers JSON lines on stdout; the driver's side of such a process and of a
group-server process; a scenario's failure; and the reader of a server's request log."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import traceback


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def stdin_commands():
    """A queue of the commands read from stdin, ending with {"cmd": "eof"}."""
    q = queue.Queue()

    def pump():
        for line in sys.stdin:
            line = line.strip()
            if line:
                q.put(json.loads(line))
        q.put({"cmd": "eof"})

    threading.Thread(target=pump, daemon=True).start()
    return q


def polled_commands(poll):
    """A worker's main loop: calls `poll` (which polls its client and returns the client's
    assignment) continuously, reports every change of assignment, and yields each command
    read from stdin in between."""
    commands = stdin_commands()
    emit({"event": "started", "pid": os.getpid()})
    last = None
    while True:
        current = poll()
        if current != last:
            last = current
            emit({"event": "assignment", "partitions": current, "t": time.time()})
        try:
            cmd = commands.get_nowait()
        except queue.Empty:
            continue
        yield cmd


def read_request_log(path, client_id=None, api=None, since=0.0):
    """The entries of a server's JSON request log (`--request-log`), optionally only
    one client's, one API's, or those logged at or after `since` (seconds)."""
    out = []
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if client_id is not None and r.get("client_id") != client_id:
                continue
            if api is not None and r.get("api") != api:
                continue
            if r["ts"] / 1000.0 < since:
                continue
            out.append(r)
    return out


class ScenarioFailed(Exception):
    """A scenario's own check failed: reported without a traceback."""


def check(cond, message):
    if not cond:
        raise ScenarioFailed(message)


def outcome(fn, *args):
    """Runs a scenario, `fn(*args)`: (True, what it returned or "") or (False, why it
    failed, with the traceback unless a check failed)."""
    try:
        return True, fn(*args) or ""
    except Exception as e:
        detail = f"{type(e).__name__}: {e}"
        if not isinstance(e, ScenarioFailed):
            detail += "\n" + traceback.format_exc()
        return False, detail


def kill_process(proc):
    """SIGKILLs `proc` by its pid, if started and still running, and reaps it."""
    if proc and proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def watchdog(live):
    """Kills, by pid, every worker in the list `live` that outlives its `deadline`."""

    def loop():
        while True:
            time.sleep(1)
            for w in list(live):
                if time.time() > w.deadline and w.proc.poll() is None:
                    os.kill(w.proc.pid, signal.SIGKILL)

    threading.Thread(target=loop, daemon=True).start()


class ServerProcess:
    """A group-server on a loopback port: ephemeral on the first start, the same one on
    a restart."""

    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = workdir
        self.proc = None
        self.port = 0

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.port}"

    def launch(self, args, stderr_name, what="server", rust_log=None):
        """Starts the server listening on `bootstrap` with `args` (RUST_LOG defaulting to
        `rust_log` when given); returns once its first line names the port."""
        env = dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", rust_log)) if rust_log else None
        # stdin stays open while the driver lives: if the driver dies, the server exits.
        self.proc = subprocess.Popen(
            [self.binary, "--listen", self.bootstrap, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(os.path.join(self.workdir, stderr_name), "a"),
            text=True,
            env=env,
        )
        line = self.proc.stdout.readline()
        check("listening on" in line, f"{what} did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1])

    def kill(self):
        kill_process(self.proc)


class WorkerProcess:
    """The driver's side of a worker process (`script mode '<json cfg>'`): the JSON lines it
    prints become `events`, each stamped with its arrival under `STAMP` unless it has
    one, then an "exit" event; it may live `lifetime_s` seconds."""

    STAMP = "t"

    def __init__(self, script, mode, cfg, stderr_path, lifetime_s):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(script), mode, json.dumps(cfg)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(stderr_path, "w"),
            text=True,
        )
        self.events = []
        self.cond = threading.Condition()
        self.next_id = 0
        self.deadline = time.time() + lifetime_s
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            ev.setdefault(self.STAMP, time.time())
            with self.cond:
                self.events.append(ev)
                self.cond.notify_all()
        with self.cond:
            self.events.append({"event": "exit", self.STAMP: time.time()})
            self.cond.notify_all()

    def wait_for(self, pred, timeout, what):
        end = min(time.time() + timeout, self.deadline)
        with self.cond:
            while True:
                for ev in self.events:
                    if pred(ev):
                        return ev
                if any(ev["event"] == "exit" for ev in self.events):
                    raise ScenarioFailed(f"{self.name} exited while waiting for {what}")
                left = end - time.time()
                if left <= 0:
                    raise ScenarioFailed(f"{self.name}: timed out after {timeout}s waiting for {what}")
                self.cond.wait(left)

    def request(self, cmd, timeout=20):
        """Sends `cmd` with a fresh id and returns its successful reply."""
        self.next_id += 1
        cmd = dict(cmd, id=self.next_id)
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        rid = self.next_id
        ev = self.wait_for(lambda e: e["event"] == "reply" and e.get("id") == rid, timeout, cmd["cmd"])
        check(ev["ok"], f"{self.name} {cmd['cmd']} failed: {ev.get('error')}")
        return ev

    def close(self, timeout=20):
        """Asks the worker to close; returns its "closed" (or "exit") event."""
        try:
            self.proc.stdin.write(json.dumps({"cmd": "close"}) + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass
        ev = self.wait_for(lambda e: e["event"] in ("closed", "exit"), timeout, "close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
        return ev

    def kill(self):
        kill_process(self.proc)
