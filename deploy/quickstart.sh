#!/usr/bin/env bash
# quickstart.sh — sets up a node (private containerd, local registry, test images) and runs
# sergeant against it: standalone with the example static pods, or, with --with-control-plane,
# in managed mode against a real control plane of its own.
#
# Usage (as root, from anywhere):
#   deploy/quickstart.sh            build, set up, run sergeant in the foreground (Ctrl-C stops it)
#   deploy/quickstart.sh --check    the same, but verify the endpoints answer and stop again
#   deploy/quickstart.sh --down     tear the node environment (and the control plane) down
#
# --with-control-plane (with run or --check) also builds (cached) and starts etcd,
# kube-apiserver, kube-controller-manager and kube-scheduler of the pinned release
# (tests/control-plane/; the build needs Go, see tests/control-plane/README.md), runs sergeant
# with that cluster's node credentials (the static pods get mirror pods), applies the example
# Deployment (deploy/examples/deployment.yaml), waits until its pods run on sergeant's Node and
# prints how to use kubectl. After Ctrl-C the control plane keeps running and the next run
# reuses it; --check stops it again if it started it; --down stops it and deletes its data.
#
# Everything lives under $SERGEANT_RUN_DIR (default /run/sergeant-node); the system
# containerd, if any, is never touched. The control plane runs in $SERGEANT_RUN_DIR/quickstart/
# control-plane on ports of its own, so it never meets the one tests/run.sh starts:
# CP_APISERVER_PORT (16443), CP_ETCD_PORT (12379, peer +1), CP_CONTROLLER_MANAGER_PORT (20257),
# CP_SCHEDULER_PORT (20259). sergeant listens on 127.0.0.1: healthz 10248, read-only 10255 and
# the kubelet API on $SERGEANT_KUBELET_PORT (10250). In managed mode the kubelet API listens on
# every address, so the API server can reach the node for kubectl logs/exec; the read-only port
# is off there (it would listen on every address too, unauthenticated), and the script reads
# the node's endpoints from the kubelet API over TLS as the cluster's admin instead.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
node_env="$repo/deploy/node-env/node-env.sh"
control_plane="$repo/tests/control-plane"
run_dir=${SERGEANT_RUN_DIR:-/run/sergeant-node}
quick_dir="$run_dir/quickstart"
cp_run="$quick_dir/control-plane"
kubelet_port=${SERGEANT_KUBELET_PORT:-10250}
deployment="$repo/deploy/examples/deployment.yaml"

log() { printf 'quickstart: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

build() {
    if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
        # shellcheck disable=SC1091
        . "$HOME/.cargo/env"
    fi
    log "building sergeant (release)"
    # `|| die`: errexit does not reach into the $(build) of the caller.
    (cd "$repo" && cargo build --release --bin sergeant >&2) || die "cargo build failed"
    local target_dir=${CARGO_TARGET_DIR:-$repo/target}
    printf '%s\n' "$target_dir/release/sergeant"
}

# Where the script reads the node's endpoints (/pods, /metrics, /debug/...), and how: the
# read-only port on loopback; managed_config turns that port off (0) and moves them to the
# kubelet API.
read_only_port=10255
node_api=http://127.0.0.1:$read_only_port
node_curl=(curl -fsS)

# GET PATH from the node's endpoints.
node_get() { "${node_curl[@]}" "$node_api$1"; }

write_config() {
    local endpoint=$1
    mkdir -p "$quick_dir/manifests"
    cp "$repo"/deploy/examples/pods/*.yaml "$quick_dir/manifests/"
    sed -e "s|^staticPodPath: .*|staticPodPath: $quick_dir/manifests|" \
        -e "s|^containerRuntimeEndpoint: .*|containerRuntimeEndpoint: $endpoint|" \
        -e "s|^readOnlyPort: .*|&\nport: $kubelet_port|" \
        "$repo/deploy/examples/standalone.yaml" >"$quick_dir/config.yaml"
    printf '%s\n' "$quick_dir/config.yaml"
}

# Managed mode: the API server refuses to proxy to loopback, so for kubectl logs/exec the
# kubelet API listens on every address, upstream's default. It trusts the cluster CA for the
# API server's client certificate and serves the node's certificate that CA signed (for
# 127.0.0.1 too), so the script's own requests verify it. The read-only port shares `address`
# and has no authentication: it is turned off, not exposed to the network.
managed_config() {
    local config=$1 pki=$2 node=$3 tls
    # Inserted before the first `---`, the end of the KubeletConfiguration document.
    tls="tlsCertFile: $pki/node-$node-serving.crt\ntlsPrivateKeyFile: $pki/node-$node-serving.key"
    tls+="\nauthentication:\n  x509:\n    clientCAFile: $pki/ca.crt"
    sed -i -e 's|^address: .*|address: 0.0.0.0|' \
        -e 's|^readOnlyPort: .*|readOnlyPort: 0|' \
        -e "0,/^---\$/s|^---\$|$tls\n---|" "$config"
    read_only_port=0
    node_api="https://127.0.0.1:$kubelet_port"
    node_curl=(curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key")
}

# until_ok SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds, or fails at the
# deadline.
until_ok() {
    local seconds=$1 what=$2 deadline=$((SECONDS + $1))
    shift 2
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || { log "$what: not within $seconds s"; return 1; }
        sleep 0.5
    done
}

wait_for_url() { until_ok 30 "an answer from $1" curl -fsS "$1"; }

# Runs sergeant in the background (the arguments after the configuration are extra flags);
# sets $sergeant_pid and kills it on exit unless stop_sergeant ran.
start_sergeant() {
    local binary=$1 config=$2 port ports=(10248 "$kubelet_port")
    shift 2
    [ "$read_only_port" = 0 ] || ports+=("$read_only_port")
    for port in "${ports[@]}"; do
        ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null ||
            die "127.0.0.1:$port is in use (another sergeant or kubelet?); the kubelet API port moves with SERGEANT_KUBELET_PORT"
    done
    "$binary" --config "$config" --root-dir "$quick_dir/root" "$@" &
    sergeant_pid=$!
    trap 'kill "$sergeant_pid" 2>/dev/null || true' EXIT
    wait_for_url http://127.0.0.1:10248/healthz
}

stop_sergeant() {
    kill -TERM "$sergeant_pid"
    wait "$sergeant_pid"
    trap - EXIT
    log "sergeant stopped cleanly"
}

# The pods the node lists on /pods, as "name phase podIP" lines.
listed_pods() {
    node_get /pods | python3 -c '
import json, sys
for pod in json.load(sys.stdin)["items"]:
    status = pod.get("status", {})
    print(pod["metadata"]["name"], status.get("phase", ""), status.get("podIP", ""))'
}

static_pod_running() { listed_pods | grep -q '^httpd-[^ ]* Running [0-9]'; }
no_pods_listed() { [ -z "$(listed_pods)" ]; }

check_endpoints() {
    for path in /healthz /metrics /debug/supervision /debug/config /pods; do
        node_get "$path" >/dev/null
        log "ok: $node_api$path"
    done
    until_ok 60 "the example pod Running" static_pod_running
    local ip
    ip=$(listed_pods | awk '$1 ~ /^httpd-/ && $2 == "Running" { print $3; exit }')
    log "example pod httpd is Running at $ip: $(curl -fsS "http://$ip:8080/")"
}

remove_static_pods() {
    rm -f "$quick_dir"/manifests/*.yaml
    until_ok 60 "the example pod removed" no_pods_listed
    log "example pod removed"
}

# --- managed mode -------------------------------------------------------------------------

# Builds and starts the control plane; sets KUBECTL, KUBECONFIG_ADMIN, KUBECONFIG_NODE,
# NODE_NAME, and cp_started=1 when it was not running before.
control_plane_up() {
    export CP_APISERVER_PORT=${CP_APISERVER_PORT:-16443} CP_ETCD_PORT=${CP_ETCD_PORT:-12379}
    export CP_CONTROLLER_MANAGER_PORT=${CP_CONTROLLER_MANAGER_PORT:-20257}
    export CP_SCHEDULER_PORT=${CP_SCHEDULER_PORT:-20259}
    log "building the control plane (cached after the first build, which takes minutes)"
    CP_BIN=$(bash "$control_plane/build.sh" | sed -n 's/^CONTROL_PLANE_BIN=//p')
    export CP_BIN
    cp_started=1
    if [ -s "$cp_run/env" ] && [ "$("$CP_BIN/kubectl" --kubeconfig "$cp_run/pki/admin.kubeconfig" \
        get --raw /readyz 2>/dev/null)" = ok ]; then
        cp_started=0
    fi
    bash "$control_plane/up.sh" --run-dir "$cp_run" >/dev/null
    KUBECTL=$(cp_value KUBECTL)
    KUBECONFIG_ADMIN=$(cp_value KUBECONFIG_ADMIN)
    KUBECONFIG_NODE=$(cp_value KUBECONFIG_NODE)
    NODE_NAME=$(cp_value NODE_NAME)
    log "control plane $(cp_value KUBERNETES_VERSION) at $(cp_value APISERVER) (run dir $cp_run)"
}

# The value of KEY in the env file up.sh wrote.
cp_value() { sed -n "s/^$1=//p" "$cp_run/env"; }

kubectl() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

node_ready() {
    [ "$(kubectl get node "$NODE_NAME" \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
mirror_pod_running() {
    [ "$(kubectl get pod "httpd-$NODE_NAME" -o jsonpath='{.status.phase}')" = Running ]
}
mirror_pod_gone() { [ -z "$(kubectl get pod "httpd-$NODE_NAME" --ignore-not-found -o name)" ]; }

# The example Deployment's pods as "node phase podIP" lines.
deployment_pods() {
    kubectl get pods -l app=hello \
        -o jsonpath='{range .items[*]}{.spec.nodeName} {.status.phase} {.status.podIP}{"\n"}{end}'
}

no_deployment_pods() { [ -z "$(deployment_pods)" ]; }

# Registers the node, checks its mirror pod, runs the example Deployment on it, and says how to
# use kubectl.
managed_demo() {
    until_ok 120 "Node $NODE_NAME Ready" node_ready
    log "Node $NODE_NAME is Ready"
    until_ok 60 "mirror pod default/httpd-$NODE_NAME Running" mirror_pod_running
    log "static pod httpd has its mirror pod default/httpd-$NODE_NAME, Running"
    kubectl apply -f "$deployment" >&2
    kubectl rollout status deployment/hello --timeout=120s >&2
    local pods want
    want=$(kubectl get deployment hello -o jsonpath='{.spec.replicas}')
    pods=$(deployment_pods)
    [ "$(printf '%s\n' "$pods" | grep -c "^$NODE_NAME Running ")" = "$want" ] ||
        die "the Deployment's pods are not all Running on $NODE_NAME: $pods"
    local ip
    for ip in $(printf '%s\n' "$pods" | awk '{ print $3 }'); do
        log "Deployment pod at $ip on $NODE_NAME answers: $(curl -fsS --max-time 5 "http://$ip:8080/")"
    done
    log "kubectl exec through the API server to sergeant: $(kubectl exec deployment/hello -- cat /www/index.html)"
    cat >&2 <<EOF

  sergeant runs as Node $NODE_NAME of a real control plane; try kubectl:

    export KUBECONFIG=$KUBECONFIG_ADMIN
    $KUBECTL get nodes,pods -o wide
    $KUBECTL exec -it deployment/hello -- sh
    $KUBECTL scale deployment/hello --replicas=4

EOF
}

managed_cleanup() {
    kubectl delete -f "$deployment" --wait=true --timeout=60s >&2
    until_ok 60 "the Deployment's pods deleted" no_deployment_pods
    log "example Deployment deleted, its pods are gone"
    remove_static_pods
    until_ok 60 "mirror pod httpd-$NODE_NAME deleted" mirror_pod_gone
    log "mirror pod deleted"
}

main() {
    local mode=run with_control_plane=0 arg
    for arg in "$@"; do
        case "$arg" in
        --with-control-plane) with_control_plane=1 ;;
        --check | --down) mode=$arg ;;
        *)
            echo "usage: $0 [--check | --down] [--with-control-plane]" >&2
            exit 2
            ;;
        esac
    done
    if [ "$mode" = --down ]; then
        bash "$control_plane/down.sh" --run-dir "$cp_run" --purge
        bash "$node_env" down --all
        return
    fi
    bash "$node_env" install
    local env_lines
    env_lines=$(bash "$node_env" up)
    local CONTAINERD_ENDPOINT=""
    eval "$env_lines"
    log "containerd at $CONTAINERD_ENDPOINT, registry at 127.0.0.1:5000"
    local binary config
    binary=$(build)
    config=$(write_config "$CONTAINERD_ENDPOINT")
    local flags=()
    if [ "$with_control_plane" = 1 ]; then
        control_plane_up
        managed_config "$config" "$(dirname "$(cp_value CA_CERT)")" "$NODE_NAME"
        flags=(--kubeconfig "$KUBECONFIG_NODE" --hostname-override "$NODE_NAME")
    fi
    if [ "$mode" = run ] && [ "$with_control_plane" = 0 ]; then
        log "running: $binary --config $config   (healthz 127.0.0.1:10248, read-only 127.0.0.1:10255)"
        exec "$binary" --config "$config" --root-dir "$quick_dir/root"
    fi
    start_sergeant "$binary" "$config" "${flags[@]}"
    [ "$with_control_plane" = 0 ] || managed_demo
    if [ "$mode" = run ]; then
        log "sergeant runs (pid $sergeant_pid; healthz 127.0.0.1:10248, endpoints at $node_api); Ctrl-C stops it"
        trap 'kill -TERM "$sergeant_pid" 2>/dev/null || true' INT TERM
        wait "$sergeant_pid" || wait "$sergeant_pid" || true
        trap - EXIT
        return
    fi
    check_endpoints
    if [ "$with_control_plane" = 1 ]; then
        managed_cleanup
    else
        remove_static_pods
    fi
    stop_sergeant
    if [ "${cp_started:-0}" = 1 ]; then
        bash "$control_plane/down.sh" --run-dir "$cp_run"
        log "control plane stopped (its data stays in $cp_run; --down deletes it)"
    fi
}

main "$@"
