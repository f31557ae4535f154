#!/usr/bin/env bash
# The Windows test set, under Wine: builds the workspace for x86_64-pc-windows-gnu
# (tests/windows/build.sh), serves the fake runtime as a CRI server on a named pipe
# (sergeant-fake-cri.exe npipe://./pipe/NAME) and runs sergeant.exe against that pipe with one
# static pod, in the same Wine prefix. Passes when, within the deadline, /healthz answers ok,
# the read-only port's /pods shows the static pod Running with its container running (which
# takes CRI calls over the pipe: version, sandbox, pull, create, start, status), and /metrics
# counts the CRI event stream obtained over the pipe, and no pod cgroup was made; then runs
# tests/windows/stats.sh (/stats/summary from Windows' calls and the runtime's sandbox stats),
# tests/windows/service.sh (sergeant.exe as a Windows service under sc.exe) and
# tests/windows/node_facts.sh (sergeant.exe registering its Node with the test control plane,
# with the machine's Windows facts, and its Ready condition following the CNI adapter's check of
# a win-bridge configuration given by --cni-conf-dir). Fails, printing both logs, otherwise.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/windows/env.sh
. "$here/env.sh"
# shellcheck source=tests/windows/lib.sh
. "$here/lib.sh"

bash "$here/build.sh"
bin="$WIN_TARGET_DIR/$WIN_TARGET/debug"
# How long the pod may take to run (Wine starts slowly on a busy machine).
deadline_s=${WIN_TEST_DEADLINE:-120}
run=$(mktemp -d /tmp/sergeant-windows.XXXXXX)
pipe="npipe://./pipe/sergeant-test-$$"
# Ports of this run: healthz, read-only, kubelet API; below the kernel's ephemeral range (32768 and
# up) and the Rust tests' ports (20000 and up), so no outgoing connection holds one.
base=$((12000 + $$ % 2000 * 3))
healthz=$base read_only=$((base + 1)) api=$((base + 2))

pids=()
trap 'stop_all "$run"' EXIT
fail() {
    echo "tests/windows/run.sh: FAILED: $*" >&2
    node_logs "$run"
    exit 1
}
pipe_node "$run" "$bin" "$pipe" winnode "$healthz" "$read_only" "$api"

healthy() { [ "$(curl -s -m 2 "http://127.0.0.1:$healthz/healthz")" = ok ]; }
pod_running() {
    curl -s -m 2 "http://127.0.0.1:$read_only/pods" | python3 -c '
import json, sys
pods = json.load(sys.stdin)["items"]
pod = next(p for p in pods if p["metadata"]["name"] == "web-winnode")
status = pod["status"]
assert status["phase"] == "Running", status["phase"]
assert [("running" in c["state"]) for c in status["containerStatuses"]] == [True]
' 2>/dev/null
}
events_counted() {
    curl -s -m 2 "http://127.0.0.1:$read_only/metrics" |
        grep -q '^kubelet_evented_pleg_connection_success_count [1-9]'
}
wait_until "/healthz answering ok" healthy
wait_until "the static pod Running on the pipe-served runtime" pod_running
wait_until "/metrics counting the CRI event stream over the pipe" events_counted
# Windows has no cgroups: the pod must have none. (Under Wine, drive Z: is the Linux root, so a
# Windows build that made one would make it in this machine's cgroupfs.)
uid=$(curl -s -m 2 "http://127.0.0.1:$read_only/pods" | python3 -c '
import json, sys
print(next(p["metadata"]["uid"] for p in json.load(sys.stdin)["items"] if p["metadata"]["name"] == "web-winnode"))')
made=$(find /sys/fs/cgroup -maxdepth 5 -type d -name "pod$uid" 2>/dev/null || true)
if [ -n "$made" ]; then
    for dir in $made; do rmdir "$dir" 2>/dev/null || true; done
    fail "sergeant.exe made pod cgroups: $made"
fi
echo "== windows: sergeant.exe ran a static pod over $pipe under Wine ($SECONDS s)"

# Service mode under Wine's service control manager (sc create/start/query/stop/delete), once
# this run's Wine processes are gone (service.sh starts the prefix's services afresh).
stop_all "$run"
trap - EXIT
bash "$here/stats.sh"
bash "$here/service.sh"
bash "$here/node_facts.sh"
