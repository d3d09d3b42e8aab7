#!/usr/bin/env bash
# Installs what tests/live needs: the Debian libraries the backend wheels link against (plus etcd for
# Mooncake HA and the Yuanrong worker), and one virtualenv per backend under build/backends/<name> made from
# tests/live/requirements-<name>.txt. Idempotent: a venv whose stamp matches its requirements file and the
# Python that made it is left alone, and apt is not touched when every package is installed, so a second
# run takes well under a second.
#
# Usage: tests/live/install_backends.sh            (from anywhere; PYTHON=python3.11 to pick the interpreter)
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
live="$root/tests/live"
backends_dir="$root/build/backends"
python="${PYTHON:-python3}"

# libibverbs1/librdmacm1/libnuma1: mooncake_master and the Mooncake client load them even for tcp.
# etcd-server: Mooncake HA leader election and the Yuanrong worker ring. iproute2: `ip link set lo up`.
# graphviz: `dot`, which draws `python -m kvpool fleet --svg/--png` (tests/test_fleet.py).
# strace: kills `pulumi up` inside a checkpoint save (tests/e2e/test_interrupted_updates.py).
debs=(libibverbs1 librdmacm1 libnuma1 etcd-server iproute2 graphviz strace)
missing=()
for deb in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q "install ok installed" || missing+=("$deb")
done
if ((${#missing[@]})); then
    echo "install_backends: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v etcd >/dev/null || { echo "install_backends: etcd not on PATH after installing etcd-server" >&2; exit 1; }

mkdir -p "$backends_dir"
exec 9>"$backends_dir/.lock"
flock 9  # two concurrent runs (make test + a manual run) must not build the same venv at once

python_version="$("$python" -c 'import sys; print(sys.version)')"
for name in mooncake memcache yuanrong; do
    requirements="$live/requirements-$name.txt"
    venv="$backends_dir/$name"
    stamp="$(sha256sum "$requirements" | cut -d' ' -f1) $python_version"
    if [[ -f "$venv/.installed" && "$(cat "$venv/.installed")" == "$stamp" ]]; then
        continue
    fi
    echo "install_backends: building $venv"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" \
        >"$venv/pip.log" 2>&1; then
        grep -v "is ignored: it is neither a file nor a directory" "$venv/pip.log" >&2 || true
        echo "install_backends: pip install -r $requirements failed (log: $venv/pip.log)" >&2
        exit 1
    fi
    printf '%s' "$stamp" >"$venv/.installed"
done
echo "install_backends: ok ($backends_dir: mooncake memcache yuanrong)"
