"""What the e2e scripts (driver.py, security.py, cluster.py, consumer_protocol.py) share:
each client runs in a worker process that reads JSON commands, one a line, on stdin
and answers JSON lines on stdout; and the reader of a server's request log."""

import json
import queue
import sys
import threading


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
