#!/usr/bin/env bash
# sergeant.exe in managed mode under Wine registers its Node with the test control plane, and
# the Node says what this Windows machine says about itself, read where upstream's Windows
# kubelet reads it. Wine's prefix calls itself Windows 7 and lacks values every Windows Server
# has (the major and minor version numbers, the update revision UBR, the boot id, the hardware
# configuration), so this script gives the prefix a Windows Server 2022 identity for the run,
# with values no Linux file holds (a fact read from a Linux file could not match them), and
# puts the prefix back as it was at the end. Passes when the Node has:
#   - labels kubernetes.io/os=windows and node.kubernetes.io/windows-build=10.0.20348
#     (major.minor.build, what pods' node selectors match their image's build against);
#   - nodeInfo: operatingSystem windows, kernelVersion 10.0.20348.<UBR>, osImage the registry's
#     ProductName, bootID its BootId, systemUUID its LastConfig without braces in capitals,
#     machineID the host name (as upstream reports it on Windows);
#   - capacity: memory what GlobalMemoryStatusEx says (Wine answers with this Linux machine's
#     MemTotal, counted in its pages: within 1 MiB of it), cpu the machine's online CPUs
#     counted from /sys/devices/system/cpu/online (what Wine answers GetActiveProcessorCount
#     with for a process free to run on every CPU; not nproc, which counts this shell's
#     affinity),
#     ephemeral-storage the size of the root dir's volume (GetDiskFreeSpaceExW: Wine answers
#     with the Linux filesystem's size).
# Then the CNI adapter, pointed by --cni-conf-dir at a win-bridge l2bridge configuration: the
# Node is Ready on the good file; with an `ipam.subnet` that is not a CIDR block it is Ready
# False, its message naming the file and the field (plugins[0].ipam.subnet); put right, Ready
# again. (The fake runtime names no CNI directory of its own: without the flag there would be
# no check.)
# Needs the control plane of tests/control-plane (SERGEANT_CONTROL_PLANE_DIR) and sergeant.exe
# built by tests/windows/build.sh (run.sh builds it and runs this script).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/windows/env.sh
. "$here/env.sh"
# shellcheck source=tests/windows/lib.sh
. "$here/lib.sh"

cp_dir=${SERGEANT_CONTROL_PLANE_DIR:-/tmp/sergeant-control-plane}
[ -f "$cp_dir/env" ] || { echo "node_facts.sh: no control plane at $cp_dir (tests/control-plane/up.sh)" >&2; exit 1; }
cp_var() { sed -n "s/^$1=//p" "$cp_dir/env"; }
kubectl=$(cp_var KUBECTL)
admin=$(cp_var KUBECONFIG_ADMIN)
port=$(cp_var APISERVER)
port=${port##*:}

bin="$WIN_TARGET_DIR/$WIN_TARGET/debug"
deadline_s=${WIN_TEST_DEADLINE:-120}
run=$(mktemp -d /tmp/sergeant-winfacts.XXXXXX)
node="winfacts-$$"
pipe="npipe://./pipe/sergeant-facts-$$"
base=$((14000 + $$ % 1000 * 3))
healthz=$base read_only=$((base + 1)) api=$((base + 2))

# The Windows Server 2022 identity given to the prefix: key, value name, type, data.
version_key='HKLM\Software\Microsoft\Windows NT\CurrentVersion'
prefetch_key='HKLM\System\CurrentControlSet\Control\Session Manager\Memory Management\PrefetchParameters'
hardware_key='HKLM\System\HardwareConfig'
product="Windows Server 2022 Datacenter"
ubr=2340 boot_id=4711 uuid='{4c4c4544-0044-3010-8052-b4c04f4e4d32}'
identity=(
    "$version_key|CurrentMajorVersionNumber|REG_DWORD|10"
    "$version_key|CurrentMinorVersionNumber|REG_DWORD|0"
    "$version_key|CurrentBuildNumber|REG_SZ|20348"
    "$version_key|UBR|REG_DWORD|$ubr"
    "$version_key|ProductName|REG_SZ|$product"
    "$prefetch_key|BootId|REG_DWORD|$boot_id"
    "$hardware_key|LastConfig|REG_SZ|$uuid"
)

reg() { "$WINE" reg "$@" 2>/dev/null | tr -d '\r'; }
# The data of value $2 of key $1, or nothing when it does not exist.
reg_data() { reg query "$1" /v "$2" | awk -v name="$2" '$1 == name { $1 = ""; $2 = ""; sub(/^ +/, ""); print }'; }

# What the prefix held before, to put back: "key|name|type|data", or "key|name|-|" when absent.
saved=()
for entry in "${identity[@]}"; do
    IFS='|' read -r key name type _ <<<"$entry"
    if before=$(reg query "$key" /v "$name" | awk -v name="$name" '$1 == name { print $2 }') && [ -n "$before" ]; then
        saved+=("$key|$name|$before|$(reg_data "$key" "$name")")
    else
        saved+=("$key|$name|-|")
    fi
done
restore() {
    local entry key name type data
    for entry in "${saved[@]}"; do
        IFS='|' read -r key name type data <<<"$entry"
        if [ "$type" = - ]; then
            reg delete "$key" /v "$name" /f >/dev/null || true
        else
            reg add "$key" /v "$name" /t "$type" /d "$data" /f >/dev/null || true
        fi
    done
}

pids=()
cleanup() {
    "$kubectl" --kubeconfig "$admin" delete node "$node" --ignore-not-found >/dev/null 2>&1 || true
    stop_all "$run"
    restore
}
trap cleanup EXIT
fail() {
    echo "tests/windows/node_facts.sh: FAILED: $*" >&2
    echo "--- Node $node" >&2
    "$kubectl" --kubeconfig "$admin" get node "$node" -o yaml >&2 2>&1 || true
    echo "--- sergeant.exe" >&2; tail -n 60 "$run/sergeant.log" >&2 || true
    exit 1
}

for entry in "${identity[@]}"; do
    IFS='|' read -r key name type data <<<"$entry"
    reg add "$key" /v "$name" /t "$type" /d "$data" /f >/dev/null || fail "reg add $key\\$name"
done

# The node's own credentials (system:node:NAME), as a kubeconfig with its certificates inline.
flock "$cp_dir/pki/.pki.lock" bash "$repo/tests/control-plane/pki.sh" "$cp_dir/pki" "$node" "$port" >/dev/null
kubelet_config "$run/config.yaml" "$run" "$healthz" "$read_only" "$api" \
    "containerRuntimeEndpoint: $pipe" "nodeStatusUpdateFrequency: 1s"
# The node's CNI network: a win-bridge l2bridge with HNS v1 endpoint policies.
cni_file="$run/cni/10-l2bridge.conflist"
mkdir -p "$run/cni"
good_subnet='"subnet": "10.244.1.0/24"'
cat >"$cni_file" <<JSON
{
  "cniVersion": "0.2.0",
  "name": "cbr0",
  "plugins": [{
    "type": "win-bridge",
    "capabilities": { "portMappings": true, "dns": true },
    "ipam": { "type": "host-local", $good_subnet },
    "dns": { "Nameservers": ["10.96.0.10"] },
    "policies": [
      { "name": "EndpointPolicy", "value": { "Type": "OutBoundNAT", "ExceptionList": ["10.244.0.0/16", "10.96.0.0/12"] } }
    ]
  }]
}
JSON
"$WINE" "$bin/sergeant-fake-cri.exe" "$pipe" >"$run/fake-cri.log" 2>&1 &
pids+=($!)
wait_until "the fake runtime serving $pipe" grep -q "^serving $pipe" "$run/fake-cri.log"
"$WINE" "$bin/sergeant.exe" --config "$(win "$run/config.yaml")" --root-dir "$(win "$run/root")" \
    --hostname-override "$node" --kubeconfig "$(win "$cp_dir/pki/node-$node.kubeconfig")" \
    --cni-conf-dir "$(win "$run/cni")" >"$run/sergeant.log" 2>&1 &
pids+=($!)

registered() {
    "$kubectl" --kubeconfig "$admin" get node "$node" -o json >"$run/node.json" 2>/dev/null &&
        python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["status"]["nodeInfo"]["bootID"]' "$run/node.json" 2>/dev/null
}
wait_until "Node $node registered with its nodeInfo" registered

mem_total_kib=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
root_bytes=$(df -B1 --output=size "$run" | tail -n1 | tr -d ' ')
python3 - "$run/node.json" "$node" "$product" "$ubr" "$boot_id" "$uuid" "$(hostname)" \
    "$((mem_total_kib * 1024))" "$(cat /sys/devices/system/cpu/online)" "$root_bytes" <<'PY' || fail "the Node does not say what the machine said"
import json, sys
path, node, product, ubr, boot_id, uuid, host, memory, online, root = sys.argv[1:]
# The online CPU list: ranges and single CPUs, "0-3,6,8-11".
cpus = str(sum(int(r.split("-")[-1]) - int(r.split("-")[0]) + 1 for r in online.strip().split(",")))
n = json.load(open(path))
labels, info, capacity = n["metadata"]["labels"], n["status"]["nodeInfo"], n["status"]["capacity"]
want = {
    "label kubernetes.io/os": (labels.get("kubernetes.io/os"), "windows"),
    "label node.kubernetes.io/windows-build": (labels.get("node.kubernetes.io/windows-build"), "10.0.20348"),
    "label kubernetes.io/hostname": (labels.get("kubernetes.io/hostname"), node),
    "nodeInfo.operatingSystem": (info["operatingSystem"], "windows"),
    "nodeInfo.kernelVersion": (info["kernelVersion"], f"10.0.20348.{ubr}"),
    "nodeInfo.osImage": (info["osImage"], product),
    "nodeInfo.bootID": (info["bootID"], boot_id),
    "nodeInfo.systemUUID": (info["systemUUID"], uuid.strip("{}").upper()),
    "nodeInfo.machineID": (info["machineID"].lower(), host.lower()),
    "capacity.cpu": (capacity["cpu"], cpus),
    "capacity.ephemeral-storage": (capacity["ephemeral-storage"], root),
}
wrong = [f"{what}: {got!r}, expected {expected!r}" for what, (got, expected) in want.items() if got != expected]
# Wine's GlobalMemoryStatusEx counts the memory in its own pages: seen a page below MemTotal.
if abs(int(capacity["memory"]) - int(memory)) > 1 << 20:
    wrong.append(f"capacity.memory: {capacity['memory']!r}, expected MemTotal {memory!r} within 1 MiB")
for line in wrong:
    print(line, file=sys.stderr)
sys.exit(1 if wrong else 0)
PY
# The Node's Ready condition is $1 (True or False) with a message holding every later argument.
ready_is() {
    "$kubectl" --kubeconfig "$admin" get node "$node" -o json 2>/dev/null | python3 -c '
import json, sys
want, parts = sys.argv[1], sys.argv[2:]
ready = next(c for c in json.load(sys.stdin)["status"]["conditions"] if c["type"] == "Ready")
assert ready["status"] == want, ready
assert all(p in ready.get("message", "") for p in parts), ready
' "$@" 2>/dev/null
}
wait_until "Node $node Ready on a good win-bridge network" ready_is True
sed -i 's#"subnet": "10.244.1.0/24"#"subnet": "10.244.1.0/33"#' "$cni_file"
wait_until "Node $node not Ready, naming the file and field, on a win-bridge subnet that is no CIDR block" \
    ready_is False "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady" \
    "10-l2bridge.conflist" "plugins[0].ipam.subnet" "10.244.1.0/33"
sed -i 's#"subnet": "10.244.1.0/33"#'"$good_subnet"'#' "$cni_file"
wait_until "Node $node Ready again once the win-bridge network is put right" ready_is True
echo "== windows: the CNI adapter under Wine (--cni-conf-dir): Ready on a good win-bridge network, Ready False naming 10-l2bridge.conflist and plugins[0].ipam.subnet on a broken one, Ready again once fixed"
echo "== windows: sergeant.exe registered Node $node under Wine with the machine's Windows facts: os windows, build 10.0.20348, kernel 10.0.20348.$ubr, boot id, system UUID, memory, cpu and storage as Windows reports them ($SECONDS s)"
