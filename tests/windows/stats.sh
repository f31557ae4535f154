#!/usr/bin/env bash
# sergeant.exe's /stats/summary on Windows, under Wine: node stats from Windows' system calls and
# pod stats from the runtime's CRI answers alone. Serves the fake runtime on a named pipe, runs
# sergeant.exe with one static pod on it, and compares the read-only port's /stats/summary with
# what Windows' calls answer (tests/windows/winstats_probe.c, run just before and just after the
# request; Wine answers them from this Linux machine's counters, in Windows' terms) and with the
# fake runtime's documented made-up numbers. Passes when:
#   - node CPU: usageCoreNanoSeconds lies between the two probes' GetSystemTimes busy time
#     (kernel + user - idle: it counts I/O wait, which /proc/stat's busy time does not);
#   - node memory: workingSetBytes is the processes' private working sets (the probes' sum),
#     availableBytes GlobalMemoryStatusEx's physical memory less it, usageBytes the commit
#     charge (GetPerformanceInfo) within the probes' range (a read of /proc would give
#     MemTotal - MemFree, the page cache included);
#   - no process limit (no rlimit section: none on Windows, as upstream);
#   - system containers: `windows-global-commit-memory` with the commit charge as usage and
#     usage + available the commit limit, and `pods` with the pods' sums (no `pods` cgroup);
#   - the pod and its container: CPU rate 1 millicore, working set 4 MiB, usage (commit)
#     6 MiB, the pod's network interface `fake0`: the fake runtime's Windows numbers
#     (runtime-adapters/src/fake/windows_stats.rs), read from ListPodSandboxStats;
#   - the eviction manager meets a memory.available threshold set halfway between what can
#     still be committed and the physical memory less the working set: the signal is the
#     commit charge's, as upstream's on Windows (/debug/supervision shows the threshold met).
# Fails, printing both logs and the summary, otherwise. Needs sergeant.exe built by
# tests/windows/build.sh (run.sh builds it and runs this script).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/windows/env.sh
. "$here/env.sh"
# shellcheck source=tests/windows/lib.sh
. "$here/lib.sh"

bin="$WIN_TARGET_DIR/$WIN_TARGET/debug"
deadline_s=${WIN_TEST_DEADLINE:-120}
run=$(mktemp -d /tmp/sergeant-winstats.XXXXXX)
pipe="npipe://./pipe/sergeant-stats-$$"
base=$((16000 + $$ % 1000 * 3))
healthz=$base read_only=$((base + 1)) api=$((base + 2))

"$WIN_LINKER" -O1 -Wall -o "$run/winstats_probe.exe" "$here/winstats_probe.c" -lpsapi

pids=()
trap 'stop_all "$run"' EXIT
fail() {
    echo "tests/windows/stats.sh: FAILED: $*" >&2
    node_logs "$run"
    echo "--- /stats/summary" >&2; cat "$run/summary.json" >&2 2>/dev/null || true
    exit 1
}
probe() { "$WINE" "$run/winstats_probe.exe" | tr -d '\r'; }
# A memory.available threshold halfway between what can still be committed (the commit limit
# less the commit charge: the signal on Windows) and the physical memory less the working set
# (what the signal would be if taken from the node's memory, as on Linux): met only when the
# eviction manager observes the commit charge.
first=$(probe) || fail "the probe of Windows' calls"
threshold=$(python3 -c '
import json, sys
p = json.loads(sys.argv[1])
print((p["commit_limit"] - p["commit_total"] + p["total_phys"] - p["private_working_set"]) // 2)
' "$first")
pipe_node "$run" "$bin" "$pipe" winstats "$healthz" "$read_only" "$api" \
    "evictionHard:" "  memory.available: \"$threshold\""

# The summary once the stats provider has sampled the running pod's container.
sampled() {
    curl -s -m 5 -o "$run/summary.json" "http://127.0.0.1:$read_only/stats/summary" &&
        python3 -c '
import json, sys
pods = json.load(open(sys.argv[1]))["pods"]
pod = next(p for p in pods if p["podRef"]["name"] == "web-winstats")
assert [c["name"] for c in pod["containers"]] == ["app"]
assert "memory" in pod["containers"][0]
' "$run/summary.json" 2>/dev/null
}
wait_until "/stats/summary with the static pod's container" sampled

before=$(probe) || fail "the probe of Windows' calls"
curl -s -m 5 -o "$run/summary.json" "http://127.0.0.1:$read_only/stats/summary" ||
    fail "GET /stats/summary"
after=$(probe) || fail "the probe of Windows' calls"

python3 - "$run/summary.json" "$before" "$after" <<'PY' || fail "the summary does not agree"
import json, sys

summary = json.load(open(sys.argv[1]))
before, after = json.loads(sys.argv[2]), json.loads(sys.argv[3])
MI = 1024 * 1024
# What may change in Wine's commit charge (this machine's memory in use) around the request.
SLACK = 256 * MI


def between(name, value, key, slack=0):
    low = min(before[key], after[key]) - slack
    high = max(before[key], after[key]) + slack
    assert low <= value <= high, f"{name} = {value}, Windows says {low}..{high} ({key})"


node = summary["node"]
between("node cpu usageCoreNanoSeconds", node["cpu"]["usageCoreNanoSeconds"], "busy_core_nanos")
memory = node["memory"]
between("node memory workingSetBytes", memory["workingSetBytes"], "private_working_set")
assert before["total_phys"] == after["total_phys"]
assert memory["availableBytes"] == before["total_phys"] - memory["workingSetBytes"], memory
between("node memory usageBytes", memory["usageBytes"], "commit_total", SLACK)
assert "rlimit" not in node, node["rlimit"]
assert node["fs"]["capacityBytes"] > 0, node["fs"]

system = {c["name"]: c for c in node["systemContainers"]}
assert sorted(system) == ["pods", "windows-global-commit-memory"], sorted(system)
commit = system["windows-global-commit-memory"]["memory"]
between("commit usageBytes", commit["usageBytes"], "commit_total", SLACK)
assert before["commit_limit"] == after["commit_limit"]
assert commit["usageBytes"] + commit["availableBytes"] == before["commit_limit"], commit

pod = next(p for p in summary["pods"] if p["podRef"]["name"] == "web-winstats")
container = pod["containers"][0]
for name, stats in (("pod", pod), ("container", container)):
    assert stats["cpu"]["usageNanoCores"] == 1_000_000, (name, stats["cpu"])
    assert stats["cpu"]["usageCoreNanoSeconds"] > 0, (name, stats["cpu"])
    assert stats["memory"]["workingSetBytes"] == 4 * MI, (name, stats["memory"])
    assert stats["memory"]["usageBytes"] == 6 * MI, (name, stats["memory"])
    assert "rssBytes" not in stats["memory"], (name, stats["memory"])
assert pod["network"]["name"] == "fake0", pod.get("network")
pods = system["pods"]
assert pods["cpu"]["usageNanoCores"] == sum(p["cpu"]["usageNanoCores"] for p in summary["pods"])
assert pods["memory"]["workingSetBytes"] == sum(
    p["memory"]["workingSetBytes"] for p in summary["pods"]), pods
print(f"node: cpu {node['cpu']['usageCoreNanoSeconds']} core-ns, working set "
      f"{memory['workingSetBytes']}, commit {commit['usageBytes']} of {before['commit_limit']}")
PY
# The eviction manager's verdict, as /debug/supervision shows it.
memory_pressure() {
    curl -s -m 5 "http://127.0.0.1:$read_only/debug/supervision" | python3 -c '
import json, sys
def statuses(node):
    yield node.get("name"), node.get("status") or ""
    for child in node.get("children") or []:
        yield from statuses(child)
status = dict(statuses(json.load(sys.stdin)))["eviction-manager"]
assert "met: memory.available<" in status, status
' 2>/dev/null
}
wait_until "memory.available observed from the commit charge (threshold $threshold bytes)" \
    memory_pressure
echo "== windows: /stats/summary from Windows' calls and the runtime's sandbox stats ($SECONDS s)"
