#!/usr/bin/env bash
# What tests/test_workflow.py needs to check .github/workflows/ without GitHub: actionlint, built from the Go
# module proxy into the cache outside the repository (skipped when built), and the Debian tools the workflow's
# own scripts run with (jq) and actionlint checks `run:` scripts with (shellcheck).
#
#   bash tools/workflow-lint/build.sh     prints the actionlint binary's path
set -euo pipefail

VERSION=1.7.12
BIN="${MOTOR_KVPOOL_CACHE:-$HOME/.cache/motor-kvpool}/actionlint-$VERSION/bin"

missing=()
for tool in jq shellcheck; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]})); then
    echo "workflow-lint: apt-get install ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ ! -x "$BIN/actionlint" ]]; then
    command -v go >/dev/null || { echo "workflow-lint: go is not installed (Go 1.26 is needed)" >&2; exit 1; }
    echo "workflow-lint: go install github.com/rhysd/actionlint/cmd/actionlint@v$VERSION" >&2
    GOBIN="$BIN" CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install -trimpath \
        "github.com/rhysd/actionlint/cmd/actionlint@v$VERSION"
fi
echo "$BIN/actionlint"
