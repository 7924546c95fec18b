#!/usr/bin/env bash
# The pinned real Kafka clients (kafka-python, confluent-kafka) in a virtual environment.
# Usage: venv.sh WORK_DIR
# Creates (once) WORK_DIR/venv with the clients and prints its python's path. A lock
# keeps two test scripts started together (run.sh and the security scenarios) from
# building it twice.
set -euo pipefail
work="$1"
venv="$work/venv"
stamp="$venv/.group-server-e2e-kafka-python-3.0.12-confluent-kafka-2.16.1"
mkdir -p "$work"
exec 9>"$work/venv.lock"
flock 9
if [ ! -f "$stamp" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check kafka-python==3.0.12 confluent-kafka==2.16.1 >&2
    touch "$stamp"
fi
echo "$venv/bin/python"
