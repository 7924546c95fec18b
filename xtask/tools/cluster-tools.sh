#!/usr/bin/env bash
# Debian's protobuf-compiler (for etcd-client's build) and etcd-server (for the cluster
# tests), unpacked under TOOLS_DIR (normally target/tools) without installing them:
# `apt-get download` and `dpkg -x`, so nothing needs root but a first `apt-get update`
# on a machine with no package lists. Idempotent: a second run finds them and returns.
# Usage: cluster-tools.sh TOOLS_DIR
# Leaves TOOLS_DIR/bin/protoc (a wrapper that finds the unpacked libprotoc) and
# TOOLS_DIR/bin/etcd, and prints TOOLS_DIR/bin.
set -euo pipefail
tools="$(mkdir -p "$1" && cd "$1" && pwd)"
packages=(protobuf-compiler libprotoc32 libprotobuf32 libprotobuf-dev etcd-server)
stamp="$tools/.debian-$(IFS=-; echo "${packages[*]}")"
exec 9>"$tools/.lock"
flock 9
if [ ! -f "$stamp" ]; then
    rm -rf "$tools/debs" "$tools/root" "$tools/bin"
    mkdir -p "$tools/debs" "$tools/root" "$tools/bin"
    cd "$tools/debs"
    if ! apt-get download "${packages[@]}" >&2 2>/dev/null; then
        # A fresh machine may have no package lists yet.
        apt-get update >&2
        apt-get download "${packages[@]}" >&2
    fi
    for deb in *.deb; do
        dpkg -x "$deb" "$tools/root"
    done
    # protoc finds the well-known .proto files in ../include beside its binary (the
    # unpacked libprotobuf-dev), and its shared libraries through the wrapper.
    cat >"$tools/bin/protoc" <<WRAPPER
#!/bin/sh
LD_LIBRARY_PATH="$tools/root/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$tools/root/usr/bin/protoc" "\$@"
WRAPPER
    chmod +x "$tools/bin/protoc"
    ln -sf "$tools/root/usr/bin/etcd" "$tools/bin/etcd"
    "$tools/bin/protoc" --version >&2
    "$tools/bin/etcd" --version >&2
    touch "$stamp"
fi
echo "$tools/bin"
