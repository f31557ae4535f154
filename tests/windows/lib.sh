# Helpers shared by the Windows test scripts (sourced, not run). The script that sources this
# defines `fail MESSAGE` (print what it knows and exit 1) and `deadline_s`.
# shellcheck shell=bash

# The Wine path (drive Z: is the Linux root) of Linux path $1.
win() { printf 'Z:%s' "${1//\//\\}"; }

# Stops the background processes whose ids are in the array `pids` (which the sourcing script
# fills), waits for them and removes directory $1: the EXIT trap of the scripts that start them.
stop_all() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$1"
}

# Waits until `$2...` succeeds, or fails naming `$1` after the deadline.
wait_until() {
    local what=$1 end=$((SECONDS + deadline_s))
    shift
    until "$@"; do
        ((SECONDS < end)) || fail "$what within ${deadline_s} s"
        sleep 0.5
    done
}

# Writes to $1 a KubeletConfiguration for run directory $2 (static pods in $2/manifests, pod
# logs in $2/logs) serving healthz on port $3, the read-only port on $4 and the kubelet API on
# $5, all on loopback; any further arguments are appended as lines.
kubelet_config() {
    local file=$1 dir=$2 healthz=$3 read_only=$4 api=$5
    shift 5
    mkdir -p "$dir/manifests"
    {
        printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n'
        printf 'staticPodPath: %s\npodLogsDir: %s\n' "$(win "$dir/manifests")" "$(win "$dir/logs")"
        printf 'healthzBindAddress: 127.0.0.1\nhealthzPort: %s\naddress: 127.0.0.1\n' "$healthz"
        printf 'readOnlyPort: %s\nport: %s\n' "$read_only" "$api"
        for line in "$@"; do printf '%s\n' "$line"; done
    } >"$file"
}

# Runs a node in run directory $1 (after the caller's `pids=()`, trap and `fail`): the fake
# runtime from build directory $2 serving named pipe $3, and sergeant.exe as node $4 on it, with
# a KubeletConfiguration serving healthz on port $5, the read-only port on $6 and the kubelet
# API on $7, and one static pod `web`: one container `app` of a Windows image, with CPU and
# memory limits; any further arguments are appended to the configuration as lines. Adds both
# pids to `pids`; their logs are $1/fake-cri.log and $1/sergeant.log.
pipe_node() {
    local run=$1 bin=$2 pipe=$3 node=$4 healthz=$5 read_only=$6 api=$7
    shift 7
    kubelet_config "$run/config.yaml" "$run" "$healthz" "$read_only" "$api" \
        "containerRuntimeEndpoint: $pipe" "$@"
    cat >"$run/manifests/web.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
spec:
  containers:
  - name: app
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
    resources:
      limits:
        cpu: 500m
        memory: 128Mi
YAML
    "$WINE" "$bin/sergeant-fake-cri.exe" "$pipe" >"$run/fake-cri.log" 2>&1 &
    pids+=($!)
    wait_until "the fake runtime serving $pipe" grep -q "^serving $pipe" "$run/fake-cri.log"
    "$WINE" "$bin/sergeant.exe" --config "$(win "$run/config.yaml")" \
        --root-dir "$(win "$run/root")" --hostname-override "$node" >"$run/sergeant.log" 2>&1 &
    pids+=($!)
}

# Prints the ends of the logs of pipe_node's processes in run directory $1.
node_logs() {
    echo "--- sergeant-fake-cri.exe" >&2; tail -n 40 "$1/fake-cri.log" >&2 || true
    echo "--- sergeant.exe" >&2; tail -n 60 "$1/sergeant.log" >&2 || true
}
