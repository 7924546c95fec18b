#!/usr/bin/env bash
# End-to-end tests of group-server with real Kafka clients (kafka-python, confluent-kafka).
# Usage: run.sh SERVER_BINARY WORK_DIR
# Creates (once) a virtual environment in WORK_DIR/venv with the pinned clients (venv.sh),
# then runs e2e/driver.py, which starts the server on an ephemeral loopback port and runs
# the scenarios.
set -euo pipefail
server="$1"
work="$2"
here="$(cd "$(dirname "$0")" && pwd)"
python="$(bash "$here/venv.sh" "$work")"
run="$work/run"
rm -rf "$run"
mkdir -p "$run"
exec "$python" "$here/driver.py" run --server "$server" --workdir "$run"
