#!/usr/bin/env bash
# Starts the test control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# all on loopback, with the PKI of pki.sh, state and logs under the run dir.
#
# Usage: up.sh [--run-dir DIR]        (default $CP_RUN_DIR, else /tmp/sergeant-control-plane)
# Env (all optional):
#   CP_BIN                 directory with the binaries (default: what build.sh prints; build.sh
#                          is a no-op when its binaries are up to date)
#   CP_NODE_NAME           the node whose credentials node.kubeconfig carries (default: the
#                          lowercased hostname, what an upstream kubelet registers as)
#   CP_APISERVER_PORT      6443     CP_ETCD_PORT 2379 (peer port: +1)
#   CP_CONTROLLER_MANAGER_PORT 10257   CP_SCHEDULER_PORT 10259
#   CP_ETCD_FSYNC=1        keep etcd's fsync (default off: --unsafe-no-fsync, a test cluster)
#   CP_FEATURE_GATES       --feature-gates for apiserver, controller-manager and scheduler
#   CP_APISERVER_ARGS, CP_CONTROLLER_MANAGER_ARGS, CP_SCHEDULER_ARGS, CP_ETCD_ARGS
#                          extra flags (word-split)
#   CP_START_TIMEOUT       seconds per readiness wait (default 120)
#
# Prints KEY=VALUE lines on stdout (also written to DIR/env): KUBECONFIG_ADMIN, KUBECONFIG_NODE,
# APISERVER, NODE_NAME, CA_CERT, ETCD_ENDPOINT, KUBECTL, CP_BIN, CP_RUN_DIR, KUBERNETES_VERSION.
# Idempotent: when the run dir's control plane is already up, it only prints the assignments.
# On failure it stops what it started. Stop with down.sh --run-dir DIR.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
cp_parse_run_dir "$@"
[ "${#cp_args[@]}" -eq 0 ] || cp_die "usage: up.sh [--run-dir DIR]"

apiserver_port=${CP_APISERVER_PORT:-6443}
etcd_port=${CP_ETCD_PORT:-2379}
etcd_peer_port=$((etcd_port + 1))
cm_port=${CP_CONTROLLER_MANAGER_PORT:-10257}
sched_port=${CP_SCHEDULER_PORT:-10259}
timeout=${CP_START_TIMEOUT:-120}
node=${CP_NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}
pki="$run/pki"
apiserver="https://127.0.0.1:$apiserver_port"
etcd_url="http://127.0.0.1:$etcd_port"

if [ -z "${CP_BIN:-}" ]; then
    CP_BIN=$("$here/build.sh" | sed -n 's/^CONTROL_PLANE_BIN=//p')
fi
bin=$CP_BIN
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    [ -x "$bin/$b" ] || cp_die "$bin/$b missing (run build.sh)"
done

print_env() {
    local tmp
    mkdir -p "$run"
    tmp=$(mktemp "$run/env.XXXXXX")
    cat >"$tmp" <<EOF
CP_RUN_DIR=$run
CP_BIN=$bin
KUBERNETES_VERSION=$KUBERNETES_VERSION
APISERVER=$apiserver
KUBECONFIG_ADMIN=$pki/admin.kubeconfig
KUBECONFIG_NODE=$pki/node.kubeconfig
NODE_NAME=$node
CA_CERT=$pki/ca.crt
ETCD_ENDPOINT=$etcd_url
KUBECTL=$bin/kubectl
EOF
    chmod 0644 "$tmp"
    mv "$tmp" "$run/env"
    cat "$run/env"
}

components=(etcd kube-apiserver kube-controller-manager kube-scheduler)
alive=0
for c in "${components[@]}"; do cp_alive "$c" && alive=$((alive + 1)); done

admin_curl() {
    curl -sS --fail --max-time 5 --cacert "$pki/ca.crt" \
        --cert "$pki/admin.crt" --key "$pki/admin.key" "$apiserver$1"
}
readyz_ok() { [ "$(admin_curl /readyz)" = ok ]; }

if [ "$alive" -eq "${#components[@]}" ] && readyz_ok 2>/dev/null; then
    cp_log "already up in $run"
    print_env
    exit 0
fi
[ "$alive" -eq 0 ] || cp_die "a partial control plane runs in $run; run down.sh --run-dir $run first"

for p in "$apiserver_port" "$etcd_port" "$etcd_peer_port" "$cm_port" "$sched_port"; do
    ! port_busy "$p" || cp_die "127.0.0.1:$p is already in use (set CP_*_PORT to move)"
done

started=0
cleanup_on_failure() {
    local rc=$?
    if [ "$rc" -ne 0 ] && [ "$started" = 1 ]; then
        cp_log "start failed; stopping what was started (logs stay in $run/logs)"
        "$here/down.sh" --run-dir "$run" || true
    fi
}
trap cleanup_on_failure EXIT

t_all=$(cp_now)
mkdir -p "$run/logs" "$run/pids"
"$here/pki.sh" "$pki" "$node" "$apiserver_port"

gates=()
[ -z "${CP_FEATURE_GATES:-}" ] || gates=("--feature-gates=$CP_FEATURE_GATES")

# --- etcd ---------------------------------------------------------------------------------
etcd_args=(
    --name=sergeant-test
    "--data-dir=$run/etcd"
    "--listen-client-urls=$etcd_url"
    "--advertise-client-urls=$etcd_url"
    "--listen-peer-urls=http://127.0.0.1:$etcd_peer_port"
    "--initial-advertise-peer-urls=http://127.0.0.1:$etcd_peer_port"
    "--initial-cluster=sergeant-test=http://127.0.0.1:$etcd_peer_port"
    --log-level=warn
)
[ "${CP_ETCD_FSYNC:-0}" = 1 ] || etcd_args+=(--unsafe-no-fsync)
mapfile -t more < <(cp_extra_words CP_ETCD_ARGS); etcd_args+=("${more[@]}")
started=1
start_proc etcd "$bin/etcd" "${etcd_args[@]}"
wait_until etcd "$timeout" "etcd healthy" \
    sh -c "curl -sS --fail --max-time 2 '$etcd_url/health' | grep -q '\"health\":\"true\"'"

# --- kube-apiserver -----------------------------------------------------------------------
cp_apiserver_flags "$pki" "$apiserver_port" "$etcd_url"
start_proc kube-apiserver "$bin/kube-apiserver" "${cp_apiserver_flags[@]}"
wait_until kube-apiserver "$timeout" "kube-apiserver /readyz ok" readyz_ok

# --- kube-controller-manager and kube-scheduler -------------------------------------------
cm_args=(
    "--kubeconfig=$pki/controller-manager.kubeconfig"
    "--authentication-kubeconfig=$pki/controller-manager.kubeconfig"
    "--authorization-kubeconfig=$pki/controller-manager.kubeconfig"
    --bind-address=127.0.0.1
    "--secure-port=$cm_port"
    --leader-elect=false
    --use-service-account-credentials=true
    "--service-account-private-key-file=$pki/sa.key"
    "--root-ca-file=$pki/ca.crt"
    "--cluster-signing-cert-file=$pki/ca.crt"
    "--cluster-signing-key-file=$pki/ca.key"
    --cluster-name=sergeant-test
    --service-cluster-ip-range=10.96.0.0/16
    "${gates[@]}"
)
mapfile -t more < <(cp_extra_words CP_CONTROLLER_MANAGER_ARGS); cm_args+=("${more[@]}")
start_proc kube-controller-manager "$bin/kube-controller-manager" "${cm_args[@]}"

sched_args=(
    "--kubeconfig=$pki/scheduler.kubeconfig"
    "--authentication-kubeconfig=$pki/scheduler.kubeconfig"
    "--authorization-kubeconfig=$pki/scheduler.kubeconfig"
    --bind-address=127.0.0.1
    "--secure-port=$sched_port"
    --leader-elect=false
    "${gates[@]}"
)
mapfile -t more < <(cp_extra_words CP_SCHEDULER_ARGS); sched_args+=("${more[@]}")
start_proc kube-scheduler "$bin/kube-scheduler" "${sched_args[@]}"

# Their serving certs are self-signed in memory, hence -k (loopback only).
healthz() { [ "$(curl -sS --fail --max-time 2 -k "https://127.0.0.1:$1/healthz")" = ok ]; }
wait_until kube-controller-manager "$timeout" "kube-controller-manager /healthz ok" healthz "$cm_port"
wait_until kube-scheduler "$timeout" "kube-scheduler /healthz ok" healthz "$sched_port"
wait_until kube-controller-manager "$timeout" "service account default/default exists" \
    admin_curl /api/v1/namespaces/default/serviceaccounts/default

cp_log "control plane up in $(cp_elapsed "$t_all")s (run dir $run)"
print_env
