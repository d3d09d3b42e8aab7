#!/usr/bin/env bash
# Builds Motor's Rust KV conductor (kv-conductor/ of the Motor checkout) for tests/live/test_kv_conductor.py, into a
# cache outside the repository: ${XDG_CACHE_HOME:-~/.cache}/motor-kvpool/kv-conductor/<hash>/kv-conductor, where
# <hash> covers the conductor's sources and the rustc version. Motor's code is never copied into the repository:
# cargo builds from a copy in a temporary folder (the checkout is read-only). crates.io gives the crates, Debian
# libzmq3-dev the ZeroMQ library its `zmq` crate links. Idempotent: a cached binary is reused (well under a second).
# `nice`: the CPU is shared with the Go builds of tools/real-engine.
#
# Usage: tests/live/build_kv_conductor.sh   prints the binary's path on the last line of stdout
#        MOTOR_CHECKOUT=/path/to/PyMotor     (default ../shared/reference/motor-8919e55 beside the repository)
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
checkout="${MOTOR_CHECKOUT:-$root/../shared/reference/motor-8919e55}"
source_dir="$checkout/kv-conductor"
if [[ ! -f "$source_dir/Cargo.toml" ]]; then
    echo "build_kv_conductor: no $source_dir/Cargo.toml (set MOTOR_CHECKOUT to a njuyuan/PyMotor checkout)" >&2
    exit 2
fi
command -v cargo >/dev/null || { echo "build_kv_conductor: cargo is not on PATH (install Rust: rustup.rs)" >&2; exit 2; }

hash="$(
    cd "$source_dir"
    { find . -type f ! -path './target/*' -print0 | sort -z | xargs -0 sha256sum; rustc --version; } | sha256sum | cut -c1-16
)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/motor-kvpool/kv-conductor"
binary="$cache/$hash/kv-conductor"
if [[ -x "$binary" ]]; then
    echo "$binary"
    exit 0
fi

# The zmq crate links the system libzmq through pkg-config.
debs=(libzmq3-dev pkg-config)
missing=()
for deb in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q "install ok installed" || missing+=("$deb")
done
if ((${#missing[@]})); then
    echo "build_kv_conductor: apt-get install ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9  # one build at a time; a concurrent run waits and then finds the binary
if [[ -x "$binary" ]]; then
    echo "$binary"
    exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$source_dir" "$work/kv-conductor"
chmod -R u+w "$work/kv-conductor"
echo "build_kv_conductor: cargo build --release in a copy of $source_dir (log: $cache/build.log)" >&2
# One target folder for every hash: a changed source rebuilds only what changed.
if ! (cd "$work/kv-conductor" && CARGO_TARGET_DIR="$cache/target" nice -n 19 cargo build --release --bin kv-conductor) \
    >"$cache/build.log" 2>&1; then
    tail -n 30 "$cache/build.log" >&2
    echo "build_kv_conductor: cargo build failed (log: $cache/build.log)" >&2
    exit 1
fi
mkdir -p "$cache/$hash"
cp "$cache/target/release/kv-conductor" "$binary.tmp"
mv "$binary.tmp" "$binary"
echo "$binary"
