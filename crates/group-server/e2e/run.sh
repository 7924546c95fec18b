#!/usr/bin/env bash
# End-to-end tests of group-server with real Kafka clients (kafka-python, confluent-kafka).
# Usage: run.sh SERVER_BINARY WORK_DIR
# Creates (once) a virtual environment in WORK_DIR/venv with the pinned clients, then runs
# e2e/driver.py, which starts the server on an ephemeral loopback port and runs the scenarios.
set -euo pipefail
server="$1"
work="$2"
here="$(cd "$(dirname "$0")" && pwd)"
venv="$work/venv"
stamp="$venv/.group-server-e2e-kafka-python-3.0.12-confluent-kafka-2.16.1"
if [ ! -f "$stamp" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check kafka-python==3.0.12 confluent-kafka==2.16.1
    touch "$stamp"
fi
run="$work/run"
rm -rf "$run"
mkdir -p "$run"
exec "$venv/bin/python" "$here/driver.py" run --server "$server" --workdir "$run"
