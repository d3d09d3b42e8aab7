#!/usr/bin/env bash
# Builds the real engine the e2e tests (tests/e2e/) run against, from Go modules only:
#   pulumi               Pulumi CLI            github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
#   pulumi-language-python                     see tools/real-engine/pulumi/language-python/README.md
#   pulumi-language-yaml                       github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml (own go.mod)
#   pulumi-resource-kubernetes                 github.com/pulumi/pulumi-kubernetes/provider/v4 (our main.go)
#   kube-apiserver, kube-controller-manager, kube-scheduler   k8s.io/kubernetes
#   etcd                                       go.etcd.io/etcd/server/v3
#   kwok                                       sigs.k8s.io/kwok/cmd/kwok
#   promtool                                   github.com/prometheus/prometheus/cmd/promtool (rule checks and tests)
#   prometheus (only when named)               github.com/prometheus/prometheus/cmd/prometheus (bench/pool_dashboard.py)
# into ${MOTOR_KVPOOL_CACHE:-$HOME/.cache/motor-kvpool}/real-engine/<component>-<version>/bin, skipping
# what is already built. Nothing is written into the repository; GOMODCACHE and GOCACHE stay at Go's
# defaults. Cold build times go to real-engine/build-times.log in the cache.
#
#   bash tools/real-engine/build.sh            build everything missing (all but prometheus)
#   bash tools/real-engine/build.sh pulumi     build one component (pulumi, yaml, kubernetes-provider, kube, etcd, kwok,
#                                              promtool, prometheus)
#   bash tools/real-engine/build.sh --print-bin-dirs   print the bin directories (for PATH; prometheus' too), build nothing
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${MOTOR_KVPOOL_CACHE:-$HOME/.cache/motor-kvpool}/real-engine"
LOG="$CACHE/build-times.log"
JOBS="${REAL_ENGINE_JOBS:-2}"

# Versions: each one names a cache directory, so changing one rebuilds only that component.
PULUMI_VERSION=3.274.1
# Our Python language host (pulumi/language-python/main.go) is no upstream release: bump this when it changes, so
# an existing cache builds the pulumi component again. 2: accepts the obsolete flags pulumi-language-yaml starts it with.
PYTHON_HOST_REV=2
# The Go proxy serves pulumi-yaml only as v1.11.1 and v1.25.0 (later tags: 403). v1.25.0 does not compile
# against pkg/v3 v3.274.1, so it has its own go.mod (yaml/) at its own pkg/v3 and sdk/v3 v3.206.0.
YAML_VERSION=1.25.0
# The Go proxy serves provider/v4 only as v4.0.0-20260115033456-f47bc2d6f199, which is the commit of release
# v4.25.0 (tag v4.25.0 -> f47bc2d6f1996444d11c12b4ef083b82585f7c07); the commit of v4.34.2 is refused (403).
# So the plugin is the v4.25.0 code and reports 4.25.0; tests/e2e installs it under the version the Python
# SDK asks for (pulumi-kubernetes==4.34.2 in requirements.txt): `pulumi plugin install resource kubernetes
# v4.34.2 --file <bin>`. See tools/real-engine/README.md.
K8S_PROVIDER_VERSION=4.25.0
KUBE_VERSION=1.36.3
ETCD_VERSION=3.6.16
KWOK_VERSION=0.8.0
PROMTOOL_VERSION=0.316.0  # the Go module's version of Prometheus 3.x (the proxy serves v0.316.0)

dir_of() {
    case "$1" in
        pulumi) echo "$CACHE/pulumi-$PULUMI_VERSION-pyhost$PYTHON_HOST_REV" ;;
        yaml) echo "$CACHE/pulumi-language-yaml-$YAML_VERSION" ;;
        kubernetes-provider) echo "$CACHE/pulumi-resource-kubernetes-$K8S_PROVIDER_VERSION" ;;
        kube) echo "$CACHE/kubernetes-$KUBE_VERSION" ;;
        etcd) echo "$CACHE/etcd-$ETCD_VERSION" ;;
        kwok) echo "$CACHE/kwok-$KWOK_VERSION" ;;
        promtool) echo "$CACHE/promtool-$PROMTOOL_VERSION-remove_all_sd" ;;
        prometheus) echo "$CACHE/prometheus-$PROMTOOL_VERSION-remove_all_sd" ;;
    esac
}

# prometheus is left out: only bench/pool_dashboard.py runs the server, and CI has no time to build it.
ALL=(pulumi yaml kubernetes-provider kube etcd kwok promtool)

if [[ "${1:-}" == "--print-bin-dirs" ]]; then
    for c in "${ALL[@]}" prometheus; do echo "$(dir_of "$c")/bin"; done
    exit 0
fi

command -v go >/dev/null || { echo "build.sh: go is not installed (Go 1.26 is needed)" >&2; exit 1; }
mkdir -p "$CACHE"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

gobuild() { nice -n 10 go build -p "$JOBS" -trimpath "$@"; }

build_pulumi() {  # $1 = output bin dir
    local bin="$1" ld="-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION"
    cd "$HERE/pulumi"
    gobuild -tags osusergo,grpcnotrace -ldflags "$ld" -o "$bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
    gobuild -tags osusergo,grpcnotrace -ldflags "$ld" -o "$bin/pulumi-language-python" ./language-python
    # The language host runs programs through this script, shipped in the sdk/v3 module, beside it.
    local sdk; sdk="$(go list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)"
    install -m 0755 "$sdk/python/cmd/pulumi-language-python-exec" "$bin/"
}

build_yaml() {
    cd "$HERE/yaml"
    gobuild -tags osusergo,grpcnotrace \
        -ldflags "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=$YAML_VERSION" \
        -o "$1/pulumi-language-yaml" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml
}

build_kubernetes-provider() {
    local bin="$1" work="$1/../src"
    rm -rf "$work"; mkdir -p "$work"
    cp "$HERE/kubernetes-provider/go.mod" "$HERE/kubernetes-provider/go.sum" "$HERE/kubernetes-provider/main.go" "$work/"
    cd "$work"
    # `go list -m` names a module's directory only once it is downloaded: on a cold module cache, download first.
    go mod download github.com/pulumi/pulumi-kubernetes/provider/v4
    local mod; mod="$(go list -m -f '{{.Dir}}' github.com/pulumi/pulumi-kubernetes/provider/v4)"
    # The published cmd/ embeds generated files that are not in the module; ours embeds the committed ones.
    python3 - "$mod/cmd/pulumi-resource-kubernetes" "$K8S_PROVIDER_VERSION" <<'EOF'
import json, sys, shutil
src, version = sys.argv[1], sys.argv[2]
schema = json.load(open(f"{src}/schema.json"))
schema["version"] = version
json.dump(schema, open("schema.json", "w"))
shutil.copyfile(f"{src}/terraform-mapping.json", "terraform-mapping.json")
EOF
    gobuild -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$K8S_PROVIDER_VERSION" \
        -o "$bin/pulumi-resource-kubernetes" .
    cd /; rm -rf "$work"
}

build_kube() {
    local bin="$1" minor="${KUBE_VERSION#*.}"; minor="${minor%%.*}"
    local ld="-s -w -X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1"
    ld="$ld -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
    ld="$ld -X k8s.io/client-go/pkg/version.gitVersion=v$KUBE_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1"
    ld="$ld -X k8s.io/client-go/pkg/version.gitMinor=$minor"
    cd "$HERE/kube"
    gobuild -ldflags "$ld" -o "$bin/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
        k8s.io/kubernetes/cmd/kube-scheduler
}

build_etcd() {
    cd "$HERE/etcd"
    gobuild -ldflags "-s -w" -o "$1/etcd" go.etcd.io/etcd/server/v3
}

build_kwok() {
    cd "$HERE/kwok"
    gobuild -ldflags "-s -w" -o "$1/kwok" sigs.k8s.io/kwok/cmd/kwok
    # kwok runs no stage unless given one: keep the module's "fast" node and pod stages beside the binary.
    local mod; mod="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
    mkdir -p "$1/../stages"
    local f; for f in "$mod"/kustomize/stage/node/fast/node-*.yaml "$mod"/kustomize/stage/pod/fast/pod-*.yaml; do
        echo "---"; cat "$f"
    done >"$1/../stages/fast.yaml"
}

build_promtool() {
    cd "$HERE/promtool"
    # remove_all_sd leaves out Prometheus' service-discovery plugins (the cloud SDKs), which checking and testing
    # rules never loads: 586 s instead of 1063 s cold, both measured on 2 busy cores.
    gobuild -tags remove_all_sd -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMTOOL_VERSION" \
        -o "$1/promtool" github.com/prometheus/prometheus/cmd/promtool
}

build_prometheus() {
    cd "$HERE/prometheus"
    # Same module and tag as promtool. Without the tag builtinassets the web UI is read from disk, so the
    # module builds with no npm step; the HTTP API the bench queries does not need the UI.
    gobuild -tags remove_all_sd -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMTOOL_VERSION" \
        -o "$1/prometheus" github.com/prometheus/prometheus/cmd/prometheus
}

want=("$@"); [[ ${#want[@]} -eq 0 ]] && want=("${ALL[@]}")
failed=()
for c in "${want[@]}"; do
    d="$(dir_of "$c")"
    if [[ -f "$d/.built" ]]; then
        echo "real-engine: $c already built in $d/bin"
        continue
    fi
    echo "real-engine: building $c into $d/bin (log: $d/build.log)"
    rm -rf "$d"; mkdir -p "$d/bin"
    start=$(date +%s)
    # Not `if ( build )`: inside a tested command bash ignores set -e, so a failed step would pass unnoticed.
    set +e
    ( set -e; "build_$c" "$d/bin" ) >"$d/build.log" 2>&1
    status=$?
    set -e
    if [[ $status -eq 0 ]]; then
        secs=$(( $(date +%s) - start ))
        touch "$d/.built"
        echo "$(date -u +%FT%TZ) $c $(basename "$d") built in ${secs}s (jobs=$JOBS, nproc=$(nproc))" | tee -a "$LOG"
    else
        secs=$(( $(date +%s) - start ))
        echo "$(date -u +%FT%TZ) $c $(basename "$d") FAILED after ${secs}s" | tee -a "$LOG"
        tail -n 30 "$d/build.log" >&2
        failed+=("$c")
    fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "real-engine: failed to build: ${failed[*]} (the e2e tests that need them skip)" >&2
    # A failed build does not fail the caller: `make test` runs on, and tests/e2e names what is missing.
    [[ -n "${CI:-}" ]] && exit 1  # under CI a missing binary fails the run (tests/outside.py)
fi
exit 0
