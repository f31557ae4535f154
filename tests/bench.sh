#!/usr/bin/env bash
# The benchmarks (not tests: they print numbers and write them to results files, they assert
# nothing): CRI adapter overhead against a bare tonic client, and pod start-up and footprint
# with 1, 10 and 110 static pods, managed-mode start-up, the API requests of an idle node
# with 110 pods, and node pressure (threshold crossed to condition and eviction), for sergeant
# and for the upstream kubelet of the pinned release, on the same containerd, in
# SERGEANT_BENCH_ROUNDS (default 3) rounds per agent, interleaved, with the median, min and
# max of every number over the rounds (benches/common/rounds.rs). Starts the node environment
# itself, like tests/run.sh, but on a containerd instance of its own ("bench", stopped again at
# the end): the upstream kubelet removes every container on its containerd that it does not
# know, so it must never share the instance the tests use ("main").
#
# SERGEANT_BASELINE (optional): another sergeant binary, say an older commit's built with
# `cargo build --release --bin sergeant`, that pod_startup measures as a third agent in the
# same rounds with the same configuration (a before-and-after in one run), named
# SERGEANT_BASELINE_LABEL (default sergeant-baseline). Unset: sergeant and upstream only.
#
# Results: $SERGEANT_RESULTS_DIR (default target/bench-results) as JSON.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/sergeant/target}"
export SERGEANT_RESULTS_DIR="${SERGEANT_RESULTS_DIR:-$repo/target/bench-results}"

# Refuse a round count the benchmarks would refuse, before containerd and the builds.
if [ -n "${SERGEANT_BENCH_ROUNDS+set}" ] && ! { [[ $SERGEANT_BENCH_ROUNDS =~ ^[0-9]+$ ]] && ((10#$SERGEANT_BENCH_ROUNDS > 0)); }; then
    echo "bench.sh: SERGEANT_BENCH_ROUNDS=$SERGEANT_BENCH_ROUNDS: give a whole number of rounds per agent, 1 or more (unset: 3)" >&2
    exit 2
fi

if [ -n "${SERGEANT_BASELINE:-}" ]; then
    [ -f "$SERGEANT_BASELINE" ] || { echo "bench.sh: SERGEANT_BASELINE=$SERGEANT_BASELINE: no such file" >&2; exit 2; }
    SERGEANT_BASELINE=$(realpath "$SERGEANT_BASELINE")
    export SERGEANT_BASELINE
fi

node_env="$repo/deploy/node-env/node-env.sh"
bash "$node_env" install
trap 'bash "$node_env" down --instance bench >&2' EXIT
SERGEANT_CRI_ENDPOINT=$(bash "$node_env" up --instance bench | sed -n 's/^CONTAINERD_ENDPOINT=//p')
[ -n "$SERGEANT_CRI_ENDPOINT" ] || { echo "bench.sh: node-env.sh up --instance bench printed no CONTAINERD_ENDPOINT" >&2; exit 1; }
export SERGEANT_CRI_ENDPOINT

# The instance may be fresh: pull the sandbox and test images into it first, so that the first
# agent's first round does not pay for pulls that the second agent's is spared.
for image in 127.0.0.1:5000/sergeant/pause:1.0 127.0.0.1:5000/sergeant/shell:1.0; do
    ctr --address "${SERGEANT_CRI_ENDPOINT#unix://}" --namespace k8s.io images pull --plain-http "$image" >/dev/null
done

# The upstream kubelet of the pinned release, built once and cached (tests/control-plane).
UPSTREAM_KUBELET="$(bash "$repo/tests/control-plane/build.sh" | sed -n 's/^CONTROL_PLANE_BIN=//p')/kubelet"
export UPSTREAM_KUBELET

cargo bench -p sergeant-runtime-adapters --bench cri_overhead
cargo bench -p sergeant --bench pod_startup
cargo bench -p sergeant --bench api_latency

# The managed-mode start-up benchmark needs the control plane.
export SERGEANT_CONTROL_PLANE_DIR=${SERGEANT_CONTROL_PLANE_DIR:-/tmp/sergeant-control-plane}
bash "$repo/tests/control-plane/up.sh" --run-dir "$SERGEANT_CONTROL_PLANE_DIR" >/dev/null
cargo bench -p sergeant --bench managed_startup
# The API server load of an idle node with 110 pods (service-account tokens mounted), counted
# by an audit-logging API server of the benchmark's own.
cargo bench -p sergeant --bench managed_idle_api
# Node pressure (disk, memory): from a threshold crossed to the condition on the Node and to the
# eviction, and the agents' footprint while they sample with one pod. Mounts a loop device.
cargo bench -p sergeant --bench node_pressure
echo "results in $SERGEANT_RESULTS_DIR"
