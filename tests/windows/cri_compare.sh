#!/usr/bin/env bash
# Compares the CRI requests sergeant.exe sends for the Windows pods in tests/windows/cri-pods/
# with those upstream's Windows kubelet (v1.37.2, kubelet.exe) sends for the same pods, both
# under Wine, each against its own recording fake CRI server (sergeant-fake-cri.exe --record).
#
#   cri_compare.sh                    runs sergeant.exe, compares with the stored record of
#                                     upstream (tests/windows/upstream-cri/requests.jsonl)
#   cri_compare.sh --record-upstream  first builds kubelet.exe (tests/windows/kubelet-build.sh),
#                                     runs it and stores its record there, then compares
#
# An agent runs until every container of the pods has been created, or refused with its
# manifest (sergeant logs "manifest rejected: FILE"), or the deadline (WIN_CRI_DEADLINE,
# 120 s) passes; a pod it refuses shows as requests it did not send. The
# comparison (tests/windows/cri_compare.py) prints a table of the differing fields and fails
# when one is not on its explained allow-list. Records write the agent's run directory as
# <RUN>. kubelet.exe runs in a Wine prefix of its own (WINEPREFIX_KUBELET), prepared here: the
# registry values its node-info code reads and Wine lacks, and the pdh.dll stand-in
# (tests/windows/pdh.c). The comparer's own tests (tests/windows/cri_compare_test.py) run
# first.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/windows/env.sh
. "$here/env.sh"
# shellcheck source=tests/windows/lib.sh
. "$here/lib.sh"

record_upstream=0
case "${1:-}" in
    --record-upstream) record_upstream=1 ;;
    "") ;;
    *) echo "usage: $(basename "$0") [--record-upstream]" >&2; exit 2 ;;
esac

pods="$here/cri-pods"
stored="$here/upstream-cri/requests.jsonl"
deadline_s=${WIN_CRI_DEADLINE:-120}
WINEPREFIX_KUBELET=${WINEPREFIX_KUBELET:-$HOME/.cache/sergeant/wine-prefix-kubelet}
work=$(mktemp -d /tmp/sergeant-cri-compare.XXXXXX)
pids=()
trap 'stop_all "$work"' EXIT
fail() {
    echo "tests/windows/cri_compare.sh: FAILED: $*" >&2
    for log in "$work"/*/*.log; do
        [ -f "$log" ] && { echo "--- $log" >&2; tail -n 30 "$log" >&2; }
    done
    exit 1
}

# A Python 3 with PyYAML, which reads the pods' manifests: the first python3 on PATH that has
# it, else Debian's, with python3-yaml installed when missing.
python_with_yaml() {
    local py
    for py in python3 /usr/bin/python3; do
        if "$py" -c 'import yaml' 2>/dev/null; then
            command -v "$py"
            return
        fi
    done
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3-yaml >/dev/null
    echo /usr/bin/python3
}
py=$(python_with_yaml)
"$py" -B "$here/cri_compare_test.py" 2>"$work/comparer-tests.log" ||
    { cat "$work/comparer-tests.log" >&2; fail "the comparer's own tests"; }
bash "$here/build.sh" >/dev/null
bin="$WIN_TARGET_DIR/$WIN_TARGET/debug"
# How many containers the pods have: an agent is done when it created them all.
containers=$("$py" - "$pods" <<'PY'
import pathlib, sys, yaml
print(sum(len(yaml.safe_load(p.read_text())["spec"]["containers"])
          for p in pathlib.Path(sys.argv[1]).glob("*.yaml")))
PY
)

# Wine prefix for kubelet.exe: what its Windows stats and node-info code read at start.
prepare_kubelet_prefix() {
    WINEPREFIX=$WINEPREFIX_KUBELET bash "$here/setup.sh" >/dev/null
    local dll="$WIN_TOOLS_DIR/pdh.dll" system32="$WINEPREFIX_KUBELET/drive_c/windows/system32"
    if [ ! -f "$dll" ] || [ "$here/pdh.c" -nt "$dll" ]; then
        "$WIN_LINKER" -shared -O2 -o "$dll.tmp" "$here/pdh.c"
        mv "$dll.tmp" "$dll"
    fi
    cmp -s "$dll" "$system32/pdh.dll" || cp "$dll" "$system32/pdh.dll"
    local version='HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion' value
    # A Windows Server 2022 node (Wine's prefix says Windows 7 and lacks the numeric values).
    for value in "CurrentMajorVersionNumber REG_DWORD 10" "CurrentMinorVersionNumber REG_DWORD 0" \
        "CurrentBuildNumber REG_SZ 20348" "UBR REG_DWORD 1"; do
        set -- $value
        WINEPREFIX=$WINEPREFIX_KUBELET "$WINE" reg add "$version" /v "$1" /t "$2" /d "$3" /f >/dev/null
    done
    WINEPREFIX=$WINEPREFIX_KUBELET "$WINE" reg add "$version" /v ProductName /t REG_SZ \
        /d "Windows Server 2022 Datacenter" /f >/dev/null
    WINEPREFIX=$WINEPREFIX_KUBELET "$WINE" reg add 'HKLM\SYSTEM\HardwareConfig' /v LastConfig \
        /t REG_SZ /d '{0a1b2c3d-0000-4000-8000-000000000001}' /f >/dev/null
    WINEPREFIX=$WINEPREFIX_KUBELET "$WINE" reg add \
        'HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management\PrefetchParameters' \
        /v BootId /t REG_DWORD /d 1 /f >/dev/null
}

# created RECORD [LOG]: how many distinct containers RECORD shows created, plus the
# containers of the manifests LOG says were rejected.
created() {
    "$py" - "$1" "${2:-}" "$pods" <<'PY'
import json, pathlib, re, sys, yaml
seen = set()
for line in open(sys.argv[1], encoding="utf-8"):
    d = json.loads(line)
    if d["method"] == "CreateContainer":
        r = d["request"]
        seen.add((r["sandbox_config"]["metadata"]["name"], r["config"]["metadata"]["name"]))
refused = 0
if sys.argv[2]:
    log = pathlib.Path(sys.argv[2]).read_text(errors="replace")
    for name in set(re.findall(r"manifest rejected: [^ ]*\\([^\\ :]+\.yaml)", log)):
        pod = yaml.safe_load((pathlib.Path(sys.argv[3]) / name).read_text())
        refused += len(pod["spec"]["containers"])
print(len(seen) + refused)
PY
}

# run_agent NAME PREFIX OUT AGENT-ARGS...: runs the agent (AGENT-ARGS, a Wine command line
# given {config} and {root} for its files) with the pods against a recording fake CRI server in
# Wine prefix PREFIX, until it created every container or the deadline passed; writes the
# record, its run directory as <RUN>, to OUT. Prints the seconds it took.
run_agent() {
    local name=$1 prefix=$2 out=$3
    shift 3
    local dir="$work/$name" pipe="npipe://./pipe/sergeant-cri-compare-$name-$$" start=$SECONDS
    local base=$((14000 + $$ % 1000 * 3))
    [ "$name" = upstream ] && base=$((base + 3000))
    kubelet_config "$dir/config.yaml" "$dir" "$base" $((base + 1)) $((base + 2)) \
        "containerRuntimeEndpoint: $pipe" "cgroupsPerQOS: false" "enforceNodeAllocatable: []" \
        'resolvConf: ""' "authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}" \
        "authorization: {mode: AlwaysAllow}"
    cp "$pods"/*.yaml "$dir/manifests/"
    : >"$dir/requests.jsonl"
    WINEPREFIX=$prefix "$WINE" "$bin/sergeant-fake-cri.exe" "$pipe" \
        --record "$(win "$dir/requests.jsonl")" >"$dir/fake-cri.log" 2>&1 &
    pids+=($!)
    local fake=$!
    wait_until "the fake runtime serving $pipe for $name" grep -qs "^serving $pipe" "$dir/fake-cri.log"
    local args=() arg
    for arg in "$@"; do
        arg=${arg//\{config\}/$(win "$dir/config.yaml")}
        args+=("${arg//\{root\}/$(win "$dir/root")}")
    done
    WINEPREFIX=$prefix "$WINE" "${args[@]}" >"$dir/$name.log" 2>&1 &
    pids+=($!)
    local agent=$! end=$((SECONDS + deadline_s))
    until [ "$(created "$dir/requests.jsonl" "$dir/$name.log")" -ge "$containers" ] ||
        ((SECONDS >= end)); do
        kill -0 "$agent" 2>/dev/null || fail "$name exited early"
        sleep 0.5
    done
    kill "$agent" "$fake" 2>/dev/null || true
    wait "$agent" "$fake" 2>/dev/null || true
    local run_win
    run_win=$(win "$dir")
    "$py" - "$dir/requests.jsonl" "$run_win" >"$out" <<'PY'
import json, sys
run = json.dumps(sys.argv[2])[1:-1]  # as it appears inside a JSON string
for line in open(sys.argv[1], encoding="utf-8"):
    print(line.rstrip("\n").replace(run, "<RUN>"))
PY
    echo "== $name: $(created "$dir/requests.jsonl") of $containers containers created, $((SECONDS - start)) s"
}

if [ "$record_upstream" = 1 ]; then
    exe_dir=$(bash "$here/kubelet-build.sh" | sed -n 's/^KUBELET_EXE_DIR=//p')
    [ -x "$exe_dir/kubelet.exe" ] || fail "no kubelet.exe from kubelet-build.sh"
    prepare_kubelet_prefix
    mkdir -p "$(dirname "$stored")"
    WINEDLLOVERRIDES=pdh=n run_agent upstream "$WINEPREFIX_KUBELET" "$stored" \
        "$exe_dir/kubelet.exe" --config '{config}' --root-dir '{root}' --cert-dir '{root}\pki' \
        --hostname-override winnode --v=2
fi
[ -s "$stored" ] || fail "no stored upstream record at $stored (run with --record-upstream)"

run_agent sergeant "$WINEPREFIX" "$work/sergeant.jsonl" \
    "$bin/sergeant.exe" --config '{config}' --root-dir '{root}' --hostname-override winnode
"$py" -B "$here/cri_compare.py" "$stored" "$work/sergeant.jsonl"
