#!/usr/bin/env bash
# Smoke test of the harness, standalone: up.sh, then checks against the real control plane,
# then down.sh, and a check that nothing is left running.
#   - /readyz through kubectl with admin.kubeconfig, the built-in namespaces
#   - a Deployment gets its ReplicaSet and Pods (controller-manager works), and the scheduler
#     marks them Unschedulable (no node yet)
#   - NodeRestriction: with node.kubeconfig the node can create its own Node object and is
#     Forbidden to patch another node's object
#   - the stamped versions of the built binaries
#
# Usage: smoke.sh [--run-dir DIR] [--keep]      (--keep: leave the control plane running)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
cp_parse_run_dir "$@"
keep=0
for a in "${cp_args[@]}"; do
    case "$a" in
        --keep) keep=1 ;;
        *) cp_die "usage: smoke.sh [--run-dir DIR] [--keep]" ;;
    esac
done
[ -n "${CP_RUN_DIR:-}" ] || [ "$run" != "${TMPDIR:-/tmp}/sergeant-control-plane" ] ||
    run="${TMPDIR:-/tmp}/sergeant-control-plane-smoke"

failures=0
pass() { cp_log "PASS: $*"; }
fail() { cp_log "FAIL: $*"; failures=$((failures + 1)); }
check() { # GOT WANT DESCRIPTION
    if [ "$1" = "$2" ]; then pass "$3: $1"; else fail "$3: got '$1', want '$2'"; fi
}

finish() {
    local rc=$?
    if [ "$keep" = 0 ]; then
        "$here/down.sh" --run-dir "$run" --purge || rc=1
        local left
        left=$(for p in /proc/[0-9]*; do
            tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -F -- "$run/" |
                grep -E '(^|/)(etcd|kube-apiserver|kube-controller-manager|kube-scheduler) ' || true
        done)
        if [ -n "$left" ]; then cp_log "FAIL: still running after down.sh: $left"; rc=1
        else cp_log "PASS: nothing left running after down.sh"; fi
    fi
    exit "$rc"
}
trap finish EXIT

"$here/down.sh" --run-dir "$run" --purge 2>/dev/null   # start from an empty etcd
t=$(cp_now)
env_out=$("$here/up.sh" --run-dir "$run")
cp_log "up.sh took $(cp_elapsed "$t")s"
printf '%s\n' "$env_out"
val() { printf '%s\n' "$env_out" | sed -n "s/^$1=//p"; }
bin=$(val CP_BIN); node=$(val NODE_NAME)
admin=(env "KUBECONFIG=$(val KUBECONFIG_ADMIN)" "$(val KUBECTL)")
as_node=(env "KUBECONFIG=$(val KUBECONFIG_NODE)" "$(val KUBECTL)")

# Versions stamped into the binaries.
for b in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
    v=$("$bin/$b" --version 2>&1 || true)
    check "$v" "Kubernetes $KUBERNETES_VERSION" "$b --version"
done
v=$("${admin[@]}" version --client 2>&1 | sed -n 1p || true)
case "$v" in *"$KUBERNETES_VERSION"*) pass "kubectl version --client: $v" ;; *) fail "kubectl: $v" ;; esac
v=$("$bin/etcd" --version 2>&1 | sed -n 1p || true)
case "$v" in *"${ETCD_VERSION#v}"*) pass "etcd --version: $v" ;; *) fail "etcd: $v" ;; esac
v=$("${admin[@]}" get --raw /version 2>&1 | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' || true)
check "$v" "$KUBERNETES_VERSION" "server version"

# Health and namespaces.
r=$("${admin[@]}" get --raw /readyz 2>&1 || true)
check "$r" ok "get --raw /readyz"
ns=$("${admin[@]}" get ns -o name 2>&1 || true)
for n in default kube-system kube-public kube-node-lease; do
    printf '%s\n' "$ns" | grep -qx "namespace/$n" || { fail "namespace $n missing: $ns"; continue; }
done
pass "get ns: $(printf '%s' "$ns" | tr '\n' ' ')"

# A Deployment: the controller-manager makes a ReplicaSet and 2 Pods, the scheduler finds no
# node for them.
"${admin[@]}" create deployment smoke --image=registry.invalid/smoke:1 --replicas=2 >/dev/null
pods_pending_unschedulable() {
    local out
    out=$("${admin[@]}" get pods -l app=smoke -o \
        jsonpath='{range .items[*]}{.status.phase}/{.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}')
    [ "$(printf '%s\n' "$out" | grep -c '^Pending/Unschedulable$')" = 2 ]
}
if wait_until "" 60 "2 smoke pods Pending/Unschedulable" pods_pending_unschedulable; then
    pass "deployment -> replicaset -> 2 pods, Pending (Unschedulable: no node)"
else
    fail "deployment pods: $("${admin[@]}" get pods -o wide 2>&1)"
fi

# NodeRestriction with the node's own credentials.
node_yaml() { printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n' "$1"; }
if out=$(node_yaml "$node" | "${as_node[@]}" create -f - 2>&1); then
    pass "node credentials create their own Node $node: $out"
else
    fail "node credentials could not create Node $node: $out"
fi
other="other-$node"
node_yaml "$other" | "${admin[@]}" create -f - >/dev/null
# kubectl patch reads the object first, which the Node authorizer already refuses ...
if out=$("${as_node[@]}" patch node "$other" --type=merge -p '{"metadata":{"labels":{"smoke":"x"}}}' 2>&1); then
    fail "node credentials patched another node's object: $out"
elif printf '%s' "$out" | grep -q Forbidden; then
    pass "kubectl patch of Node $other with node credentials: Forbidden ($out)"
else
    fail "unexpected error patching $other: $out"
fi
# ... so also send the PATCH alone: RBAC's system:node role allows it, NodeRestriction refuses.
pki="$run/pki"
code=$(curl -sS -o "$run/patch-other.json" -w '%{http_code}' --max-time 10 -X PATCH \
    --cacert "$pki/ca.crt" --cert "$pki/node-$node.crt" --key "$pki/node-$node.key" \
    -H 'Content-Type: application/merge-patch+json' -d '{"metadata":{"labels":{"smoke":"x"}}}' \
    "$(val APISERVER)/api/v1/nodes/$other" || true)
msg=$(grep -oE '"message": *"([^"\\]|\\.)*"' "$run/patch-other.json" 2>/dev/null || true)
if [ "$code" = 403 ]; then
    pass "raw PATCH of Node $other with node credentials: HTTP 403 ($msg)"
else
    fail "raw PATCH of Node $other with node credentials: HTTP $code ($msg)"
fi
if out=$("${as_node[@]}" label node "$node" smoke=own --overwrite 2>&1); then
    pass "node credentials label their own Node: $out"
else
    fail "node credentials could not label their own Node: $out"
fi
"${admin[@]}" delete deployment smoke --wait=false >/dev/null
"${admin[@]}" delete node "$node" "$other" --wait=false >/dev/null

if [ "$failures" -eq 0 ]; then cp_log "smoke: all checks passed"; else cp_log "smoke: $failures check(s) failed"; exit 1; fi
