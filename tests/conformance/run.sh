#!/usr/bin/env bash
# run.sh — runs upstream's node conformance suite of the pinned release against sergeant.
#
# It brings up everything it needs, each part its own, so it never meets the test run's:
#   * the conformance images in their own registry (images.sh, 127.0.0.1:5100);
#   * a containerd instance "conformance" of deploy/node-env in its own run dir, pulling from
#     that registry only, with its pause image as the sandbox image;
#   * the control plane of tests/control-plane in its own run dir, on ports of its own;
#   * sergeant (release build) as that cluster's only node, the kubelet API on TLS (the
#     cluster CA signs its serving certificate and verifies the API server's client one);
# then runs e2e.test (build.sh) through ginkgo and writes the JUnit report, the logs and a
# summary. Everything is stopped again at the end (--keep leaves it up).
#
# Usage (as root): run.sh [--focus REGEX] [--fast] [--procs N] [--keep] [--spec-timeout DUR]
#   --focus REGEX   the specs to run (default '\[NodeConformance\]')
#   --fast          the small subset of FAST_SPECS below (one spec per area)
#   --procs N       parallel ginkgo processes (default 4; [Serial] specs still run alone)
#   --spec-timeout  deadline of each spec node's context (default 30m, e2e.test's flag)
#
# The skip list is skips.txt (a regex a line, each with its reason; some apply only when a probe
# finds the machine lacking). The suite's image-pull specs start a fake registry on host port
# 5000: the conformance images come from 127.0.0.1:5100, deploy/node-env's registry (which
# serves 5000) is stopped for the run and started again at the end, and when something else
# listens on 5000 those specs are skipped for this run, and the summary says so with the
# listener it found.
#
# Output: the report dir $CONFORMANCE_STATE_DIR/reports/<UTC time>/ (the framework's
# junit_01.xml, ginkgo's report.json, e2e.log, logs of sergeant, containerd and the control
# plane, summary.{md,json}); a full run (no --focus, no --fast) also writes results/latest.md and
# results/latest.json in this directory, kept in the repository.
#
# Exit status: 0 when every selected spec passed (none failed, none left unrun, and for --fast
# every spec of FAST_SPECS passed: none skipped), 1 otherwise, after the summary is written.
#
# Env: CONFORMANCE_RUN_DIR (/run/sergeant-conformance), CONFORMANCE_STATE_DIR
# (/var/lib/sergeant-conformance), CONFORMANCE_REGISTRY (127.0.0.1:5100), CONFORMANCE_PORT_BASE
# (17000: apiserver +443, etcd +379/+380, controller-manager +257, scheduler +259, healthz +248,
# the kubelet API +250 when 10250 is taken), CONFORMANCE_KUBELET_PORT, CARGO_TARGET_DIR,
# CONFORMANCE_SERGEANT (a sergeant binary to use as is), CONFORMANCE_SERGEANT_COMMIT (the commit
# that binary was built from, for the summary; default: the repository's HEAD at the start).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
node_env="$repo/deploy/node-env/node-env.sh"
cp_dir="$repo/tests/control-plane"

# --fast: one spec per area (the top-level container of upstream's spec tree), chosen so the
# area's core path runs, each a regex matching exactly that spec. Only specs that pass today are
# here, so a failure is a regression; README.md ("The fast subset") names the areas left out
# and why. run.sh --fast fails unless every one of them ran and passed.
FAST_SPECS=(
    'Networking Granular Checks: Pods should function for intra-pod communication: http'
    '\[sig-node\] ConfigMap should be consumable via environment variable'
    '\[sig-node\] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart exec hook properly'
    'Container Runtime blackbox test on terminated container should report termination message from log output if TerminationMessagePolicy FallbackToLogsOnError is set'
    "Containers should be able to override the image's default command and arguments"
    'Downward API should provide pod name, namespace and IP address as env vars'
    'InitContainer should invoke init containers on a RestartAlways pod'
    'Kubelet when scheduling a busybox command in a pod should print the output to logs'
    'Kubelet with pods in a privileged namespace when scheduling an agnhost Pod with hostAliases and hostNetwork should write entries to /etc/hosts when hostNetwork is enabled'
    'KubeletManagedEtcHosts should test kubelet managed /etc/hosts file'
    'Lifecycle Sleep Hook when create a pod with lifecycle hook using sleep action valid prestop hook using sleep action'
    'Lifecycle sleep action zero value'
    'NodeLease NodeLease the kubelet should create and update a lease in the kube-node-lease namespace'
    'Override hostname of Pod a pod with only hostnameOverride field will have hostnameOverride as hostname'
    'Pods should get a host IP'
    'Probing container should be restarted with a exec "cat /tmp/health" liveness probe'
    'Probing restartable init container should be restarted with a exec "cat /tmp/health" liveness probe'
    'Restartable Init Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart exec hook properly'
    'RuntimeClass should schedule a Pod requesting a RuntimeClass without PodOverhead'
    '\[sig-node\] Secrets should be consumable from pods in env vars'
    'Security Context When creating a container with runAsUser should run the container with uid 65534'
    'Sysctls \[LinuxOnly\] should support sysctls \[Environment:NotInUserNS\] \[Conformance\]'
    'Variable Expansion should allow composing env vars into new env vars'
    '\[sig-storage\] ConfigMap should be consumable from pods in volume \[Conformance\]'
    "Downward API volume should provide container's cpu limit"
    'EmptyDir volumes should support \(root,0644,tmpfs\)'
    'HostPath should support r/w'
    'Projected combined should project all components'
    'Projected configMap should be consumable from pods in volume \[Conformance\]'
    "Projected downwardAPI should provide container's memory limit"
    'Projected secret should be consumable from pods in volume \[Conformance\]'
    '\[sig-storage\] Secrets should be consumable from pods in volume \[Conformance\]'
    'Container Restart Rules should restart container on rule match'
    "PodOSRejection Kubelet \[LinuxOnly\] should reject pod when the node OS doesn't match pod's OS"
    'Job containers restarted by container restart policy should not trigger PodFailurePolicy'
    'PLR guaranteed qos - 1 container with resize policy \[Environment:NotInUserNS\] no restart resizing cpu \['
    'Pod InPlace Resize Init Container .* should support resizing a non-sidecar init container'
    # envFrom keys that are no shell identifiers (data-1), read back with the busybox image's
    # `sh -c env`: they guard that image as much as sergeant (README.md, "Images").
    '\[sig-node\] ConfigMap should be consumable via the environment'
    '\[sig-node\] Secrets should be consumable via the environment'
    'Ephemeral Containers will start an ephemeral container in an existing pod'
)

focus='\[NodeConformance\]'
full=1
fast=0
procs=4
keep=0
spec_timeout=30m
while [ $# -gt 0 ]; do
    case "$1" in
    --focus) focus=${2:?--focus needs a regex}; full=0; shift 2 ;;
    --fast) focus=$(IFS='|'; echo "${FAST_SPECS[*]}"); full=0; fast=1; shift ;;
    --procs) procs=${2:?--procs needs a number}; shift 2 ;;
    --keep) keep=1; shift ;;
    --spec-timeout) spec_timeout=${2:?--spec-timeout needs a duration}; shift 2 ;;
    *) echo "usage: run.sh [--focus REGEX] [--fast] [--procs N] [--keep] [--spec-timeout DUR]" >&2; exit 2 ;;
    esac
done

run_dir=${CONFORMANCE_RUN_DIR:-/run/sergeant-conformance}
state_dir=${CONFORMANCE_STATE_DIR:-/var/lib/sergeant-conformance}
port_base=${CONFORMANCE_PORT_BASE:-17000}
node_run="$run_dir/node"
cp_run="$run_dir/control-plane"
sgt_dir="$run_dir/sergeant"
report="$state_dir/reports/$(date -u +%Y%m%dT%H%M%SZ)"
healthz_port=$((port_base + 248))
# The kubelet API on upstream's port when it is free: the framework's failure dumps ask the
# node for its pods on 10250 whatever the Node object says.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -n "${CONFORMANCE_KUBELET_PORT:-}" ]; then
    kubelet_port=$CONFORMANCE_KUBELET_PORT
elif port_free 10250; then
    kubelet_port=10250
else
    kubelet_port=$((port_base + 250))
fi

log() { printf '[conformance %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (containerd, mounts, cgroups)"

t_start=$SECONDS
sergeant_commit=${CONFORMANCE_SERGEANT_COMMIT:-$(cd "$repo" && git rev-parse --short HEAD 2>/dev/null || echo unknown)}
phase_times=()
phase() { phase_times+=("$1 $(($SECONDS - $2))s"); log "$1 done in $(($SECONDS - $2))s"; }

# --- bring-up -----------------------------------------------------------------------------

# One run at a time: a second run would share the first one's run dir, containerd instance,
# control plane, ports and cgroup root, and its cleanup would tear them down under the first.
# The pid of the run that holds them is in $run_dir/run.pid, checked and written under a lock
# (held by a subshell only, so no daemon started later inherits it).
claim_run_dir() {
    mkdir -p "$run_dir"
    (
        flock 7
        holder=$(cat "$run_dir/run.pid" 2>/dev/null || true)
        if [ -n "$holder" ] && [ "$holder" != $$ ] &&
            tr '\0' ' ' 2>/dev/null <"/proc/$holder/cmdline" | grep -q 'run\.sh'; then
            die "another run.sh (pid $holder) is using $run_dir; wait for it to end"
        fi
        echo $$ >"$run_dir/run.pid"
    ) 7>"$run_dir/run.lock"
}
release_run_dir() {
    [ "$(cat "$run_dir/run.pid" 2>/dev/null)" != $$ ] || rm -f "$run_dir/run.pid"
}

sergeant_pid=""
registry_started=0
freed_5000=""
cleanup() {
    local rc=$?
    if [ "$freed_5000" = stopped ]; then
        bash "$node_env" registry-start >/dev/null 2>&1 ||
            log "deploy/node-env's registry did not start again: node-env.sh registry-start"
    fi
    [ -z "$sergeant_pid" ] || cp -f "$sgt_dir/sergeant.log" "$report/" 2>/dev/null || true
    [ -d "$cp_run/logs" ] && mkdir -p "$report/control-plane" && cp -f "$cp_run"/logs/*.log "$report/control-plane/" 2>/dev/null
    cp -f "$node_run"/logs/containerd-conformance.log "$report/" 2>/dev/null || true
    release_run_dir
    if [ "$keep" = 1 ]; then
        log "--keep: leaving sergeant (pid ${sergeant_pid:-none}), the control plane ($cp_run) and containerd ($node_run) up"
        exit "$rc"
    fi
    if [ -n "$sergeant_pid" ] && kill -0 "$sergeant_pid" 2>/dev/null; then
        kill -TERM "$sergeant_pid" 2>/dev/null || true
        local i
        for i in $(seq 1 100); do kill -0 "$sergeant_pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$sergeant_pid" 2>/dev/null || true
    fi
    bash "$cp_dir/down.sh" --run-dir "$cp_run" --purge >/dev/null 2>&1 || log "control plane down failed"
    bash "$node_env" down --run-dir "$node_run" --instance conformance >/dev/null 2>&1 || log "node-env down failed"
    [ "$registry_started" = 0 ] || bash "$here/images.sh" down || true
    exit "$rc"
}
claim_run_dir
mkdir -p "$report" "$sgt_dir"
trap cleanup EXIT

t=$SECONDS
bash "$node_env" install
bin=$(bash "$here/build.sh" | sed -n 's/^CONFORMANCE_BIN=//p')
[ -x "$bin/e2e.test" ] || die "build.sh gave no e2e.test"
phase "build e2e.test/ginkgo/agnhost" "$t"

t=$SECONDS
registry=${CONFORMANCE_REGISTRY:-127.0.0.1:5100}
curl -fsS --max-time 2 --noproxy '*' -o /dev/null "http://$registry/v2/" 2>/dev/null || registry_started=1
images_env=$(bash "$here/images.sh" up)
eval "$images_env"
phase "images" "$t"

t=$SECONDS
node_envs=$(bash "$node_env" up --run-dir "$node_run" --instance conformance \
    --registry "$CONFORMANCE_REGISTRY" --sandbox-image "$SANDBOX_IMAGE")
CONTAINERD_ENDPOINT=$(printf '%s\n' "$node_envs" | sed -n 's/^CONTAINERD_ENDPOINT=//p')
[ -n "$CONTAINERD_ENDPOINT" ] || die "node-env up printed no CONTAINERD_ENDPOINT"
phase "containerd" "$t"

t=$SECONDS
export CP_APISERVER_PORT=$((port_base + 443)) CP_ETCD_PORT=$((port_base + 379))
export CP_CONTROLLER_MANAGER_PORT=$((port_base + 257)) CP_SCHEDULER_PORT=$((port_base + 259))
CP_BIN=$(bash "$cp_dir/build.sh" | sed -n 's/^CONTROL_PLANE_BIN=//p')
export CP_BIN
bash "$cp_dir/up.sh" --run-dir "$cp_run" >/dev/null
cp_value() { sed -n "s/^$1=//p" "$cp_run/env"; }
KUBECTL=$(cp_value KUBECTL)
KUBECONFIG_ADMIN=$(cp_value KUBECONFIG_ADMIN)
NODE_NAME=$(cp_value NODE_NAME)
pki=$(dirname "$(cp_value CA_CERT)")
kubectl() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
phase "control plane" "$t"

t=$SECONDS
if [ -n "${CONFORMANCE_SERGEANT:-}" ]; then
    sergeant=$CONFORMANCE_SERGEANT
else
    if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
        # shellcheck disable=SC1091
        . "$HOME/.cargo/env"
    fi
    (cd "$repo" && nice -n 19 cargo build --release --bin sergeant) >&2 || die "cargo build --release failed"
    sergeant="${CARGO_TARGET_DIR:-$repo/target}/release/sergeant"
fi
[ -x "$sergeant" ] || die "no sergeant binary at $sergeant"
phase "sergeant build" "$t"

# sergeant's configuration: managed mode with the kubelet API on every address over TLS (the
# API server proxies logs, exec, attach and port-forward to it), its own ports, state, logs and
# cgroup root, and the read-only port off.
t=$SECONDS
mkdir -p "$state_dir/root" "$state_dir/pod-logs"
cat >"$sgt_dir/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 0.0.0.0
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $healthz_port
tlsCertFile: $pki/node-$NODE_NAME-serving.crt
tlsPrivateKeyFile: $pki/node-$NODE_NAME-serving.key
authentication:
  x509:
    clientCAFile: $pki/ca.crt
containerRuntimeEndpoint: $CONTAINERD_ENDPOINT
cgroupRoot: /sergeant-conformance
# The shared test machine's disk is often below upstream's default thresholds (real disk
# pressure: every pod refused); these still evict when the disk is really about to fill.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 512Mi
  imagefs.available: 512Mi
  nodefs.inodesFree: 5%
podLogsDir: $state_dir/pod-logs
maxPods: 110
logging:
  format: text
  verbosity: 2
EOF
for p in "$kubelet_port" "$healthz_port"; do
    port_free "$p" || die "port $p is in use; set CONFORMANCE_PORT_BASE or CONFORMANCE_KUBELET_PORT"
done
[ "$kubelet_port" = 10250 ] || log "the kubelet API is on $kubelet_port, not 10250: the framework's failure dumps will not reach the node"
"$sergeant" --config "$sgt_dir/config.yaml" --kubeconfig "$pki/node.kubeconfig" \
    --hostname-override "$NODE_NAME" --root-dir "$state_dir/root" >"$sgt_dir/sergeant.log" 2>&1 &
sergeant_pid=$!
node_ready() {
    [ "$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
deadline=$((SECONDS + 120))
until node_ready; do
    kill -0 "$sergeant_pid" 2>/dev/null || die "sergeant exited; see $sgt_dir/sergeant.log"
    [ "$SECONDS" -lt "$deadline" ] || die "Node $NODE_NAME not Ready within 120 s; see $sgt_dir/sergeant.log"
    sleep 1
done
phase "sergeant Ready" "$t"

# --- host port 5000 ---------------------------------------------------------------------

# The image-pull specs' fake registry must listen on host port 5000. deploy/node-env's shared
# registry, when it runs, holds that port: it is stopped for the suite (anything using it
# meanwhile cannot pull from it) and started again at the end on the same storage. Something
# else on 5000 is left alone, and the port5000-busy probe below skips those specs.
freed_5000=$(bash "$node_env" registry-stop)
[ "$freed_5000" != stopped ] || log "stopped deploy/node-env's registry on 127.0.0.1:5000 for the suite"

# --- skips --------------------------------------------------------------------------------

# probe_lacks NAME: succeeds (with a finding on stdout) when the machine lacks what NAME checks.
probe_lacks() {
    case "$1" in
    port5000-busy)
        local who
        who=$(ss -Hltnp 'sport = :5000' | awk '{ print $4, $6 }' | head -n 1)
        [ -n "$who" ] && echo "host port 5000 was in use: $who"
        ;;
    no-dummy-link)
        local err
        if err=$(ip link add sgtconfprobe0 type dummy 2>&1); then
            ip link del sgtconfprobe0
            return 1
        fi
        echo "ip link add ... type dummy: $err"
        ;;
    *) die "skips.txt names an unknown probe '$1'" ;;
    esac
}

# The skips of this run, as REGEX<TAB>REASON lines, for ginkgo and for summarize.py.
applied_skips="$report/skips-applied.txt"
: >"$applied_skips"
while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    if [ "${line#@}" != "$line" ]; then
        probe=${line%%	*}; probe=${probe#@}
        rest=${line#*	}
        if finding=$(probe_lacks "$probe"); then
            log "skip for this run ($probe): $finding"
            printf '%s (%s)\n' "$rest" "$finding" >>"$applied_skips"
        fi
    else
        printf '%s\n' "$line" >>"$applied_skips"
    fi
done <"$here/skips.txt"
skip_regex=$(cut -f1 "$applied_skips" | paste -sd'|')

# --- the suite ----------------------------------------------------------------------------

t=$SECONDS
log "running e2e.test: focus '$focus', $procs process(es), report $report"
export KUBE_TEST_REPO_LIST
set +e
(
    cd "$report" &&
        "$bin/ginkgo" --procs="$procs" --timeout=12h --no-color --output-dir="$report" \
            --json-report=report.json \
            --poll-progress-after=10m --poll-progress-interval=5m \
            --focus="$focus" ${skip_regex:+--skip="$skip_regex"} \
            "$bin/e2e.test" -- \
            --kubeconfig="$KUBECONFIG_ADMIN" --provider=local --report-dir="$report" \
            --kube-test-repo-list="$KUBE_TEST_REPO_LIST" --spec-timeout="$spec_timeout" \
            --container-runtime-endpoint="$CONTAINERD_ENDPOINT" \
            --allowed-not-ready-nodes=0 --minStartupPods=0 --disable-log-dump \
            --delete-namespace-on-failure=true
) >"$report/e2e.log" 2>&1
suite_rc=$?
set -e
phase "suite (rc $suite_rc)" "$t"

# --- summary ------------------------------------------------------------------------------

out="$report/summary"
python3 "$here/summarize.py" --report "$report/report.json" --out "$out" \
    --focus "$focus" --skips "$applied_skips" \
    --kubernetes "$("$bin/e2e.test" --version 2>/dev/null | head -n 1)" \
    --wall "$((SECONDS - t_start))" --phases "$(IFS=';'; echo "${phase_times[*]}")" \
    --sergeant "$sergeant_commit" ||
    die "summarize.py failed (report in $report)"
if [ "$full" = 1 ]; then
    mkdir -p "$here/results"
    cp "$out.md" "$here/results/latest.md"
    cp "$out.json" "$here/results/latest.json"
    out="$here/results/latest"
fi
log "summary: $out.md (report dir $report, total $((SECONDS - t_start))s)"

# The verdict: every selected spec passed; --fast also needs each of its specs to have run.
read -r n_passed n_failed verdict < <(python3 - "$out.json" "$fast" "${#FAST_SPECS[@]}" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["numbers"]
bad = [f"{n[k]} {k}" for k in ("failed", "notrun") if n[k]]
if sys.argv[2] == "1":
    want = int(sys.argv[3])
    if n["passed"] != want:
        bad.append(f"{n['passed']} of the {want} fast specs passed")
    if n["listed"] or n["skipped"]:
        bad.append(f"{n['listed'] + n['skipped']} skipped")
print(n["passed"], n["failed"] + n["notrun"], "; ".join(bad))
PY
)
log "phases: $(IFS=';'; echo "${phase_times[*]}"); total $((SECONDS - t_start))s"
if [ -n "$verdict" ] || [ "$suite_rc" != 0 ]; then
    log "FAILED: ${verdict:-ginkgo exited $suite_rc} (see $out.md)"
    rc=1
else
    log "passed: every selected spec"
    rc=0
fi
# The closing line: the spec count (failed includes those that did not run).
echo "conformance: $n_passed passed, $n_failed failed"
exit "$rc"
