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
