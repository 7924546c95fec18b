"""The worker side shared by the e2e scripts (driver.py, security.py, cluster.py): each
client runs in a worker process that reads JSON commands, one a line, on stdin and
answers JSON lines on stdout."""

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
