# shellcheck shell=bash
# Shared by up.sh, down.sh and apiserver.sh: run-dir parsing, process bookkeeping, polling with
# deadlines, and the kube-apiserver flag list.
# Every process is started through start_proc, which records its pid in RUN/pids/NAME.pid and
# its output in RUN/logs/NAME.log; stop_proc only signals a pid whose command line still names
# the run directory, so a recycled pid is never hit.

cp_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=VERSION
# shellcheck disable=SC1091 # VERSION holds plain assignments
. "$cp_here/VERSION"

cp_log() { printf '[control-plane %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
cp_die() { cp_log "error: $*"; exit 1; }

# Sets $run from --run-dir DIR (or $CP_RUN_DIR, or /tmp/sergeant-control-plane); leaves the
# remaining arguments in cp_args.
cp_parse_run_dir() {
    run=${CP_RUN_DIR:-${TMPDIR:-/tmp}/sergeant-control-plane}
    cp_args=()
    while [ $# -gt 0 ]; do
        case "$1" in
            --run-dir) [ $# -ge 2 ] || cp_die "--run-dir needs a value"; run=$2; shift 2 ;;
            --run-dir=*) run=${1#--run-dir=}; shift ;;
            *) cp_args+=("$1"); shift ;;
        esac
    done
    case "$run" in
        /*) ;;
        *) run="$PWD/$run" ;;
    esac
    case "$run" in
        *[!A-Za-z0-9/._-]*) cp_die "run dir '$run' may only contain [A-Za-z0-9/._-]" ;;
    esac
    run=${run%/}
}

cp_now() { date +%s.%N; }
cp_elapsed() { awk -v a="$1" -v b="$(cp_now)" 'BEGIN { printf "%.1f", b - a }'; }

cp_pid() { # NAME -> pid on stdout if the process is alive and still ours
    local f="$run/pids/$1.pid" pid
    [ -s "$f" ] || return 1
    pid=$(cat "$f")
    [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$run/" || return 1
    echo "$pid"
}

cp_alive() { cp_pid "$1" >/dev/null; }

# start_proc NAME BINARY ARGS... -- detached (own session), output to RUN/logs/NAME.log.
start_proc() {
    local name=$1; shift
    local pidfile="$run/pids/$name.pid" deadline
    mkdir -p "$run/pids" "$run/logs"
    rm -f "$pidfile"
    # The inner sh records its own pid and then execs the binary, so the pid is the binary's.
    # shellcheck disable=SC2016
    setsid sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pidfile" "$@" \
        >>"$run/logs/$name.log" 2>&1 </dev/null &
    deadline=$(( $(date +%s) + 10 ))
    until [ -s "$pidfile" ]; do
        [ "$(date +%s)" -lt "$deadline" ] || cp_die "$name did not start"
        sleep 0.05
    done
}

# stop_proc NAME [GRACE_SECONDS]: SIGTERM, then SIGKILL after the grace period.
stop_proc() {
    local name=$1 grace=${2:-20} pid deadline
    if pid=$(cp_pid "$name"); then
        kill -TERM "$pid" 2>/dev/null || true
        deadline=$(( $(date +%s) + grace ))
        while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            cp_log "$name (pid $pid) ignored SIGTERM for ${grace}s; killing"
            kill -KILL "$pid" 2>/dev/null || true
            deadline=$(( $(date +%s) + 10 ))
            while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
        fi
        kill -0 "$pid" 2>/dev/null && cp_die "$name (pid $pid) would not die"
        cp_log "stopped $name (pid $pid)"
    fi
    rm -f "$run/pids/$name.pid"
}

# wait_until NAME TIMEOUT_SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds;
# fails early (with the log tail) when process NAME dies, and at the deadline.
wait_until() {
    local name=$1 timeout=$2 what=$3; shift 3
    local start deadline
    start=$(cp_now)
    deadline=$(( $(date +%s) + timeout ))
    until "$@" >/dev/null 2>&1; do
        # Checked twice, 0.2 s apart (/proc/PID/cmdline reads empty while a process execs).
        # A component was still called dead now and then right after its start, cause not found
        # yet: the message says what the pid file and ps showed, and run.sh retries once.
        if [ -n "$name" ] && ! cp_alive "$name" && ! { sleep 0.2; cp_alive "$name"; }; then
            local f="$run/pids/$name.pid"
            cp_log "$name exited while waiting for $what (pid file: $(cat "$f" 2>/dev/null || echo none); process: $(ps -o pid=,stat=,args= -p "$(cat "$f" 2>/dev/null || echo 0)" 2>/dev/null | cut -c1-160 || echo gone)); last lines of $run/logs/$name.log:"
            tail -n 30 "$run/logs/$name.log" >&2 || true
            return 1
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            cp_log "timed out after ${timeout}s waiting for $what"
            [ -z "$name" ] || tail -n 30 "$run/logs/$name.log" >&2 || true
            return 1
        fi
        sleep 0.2
    done
    cp_log "$what after $(cp_elapsed "$start")s"
}

# Is something already listening on 127.0.0.1:PORT?
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# cp_extra_words VAR: the words of the extra-args variable VAR (e.g. CP_APISERVER_ARGS), one
# per line (word-split).
cp_extra_words() {
    local v=$1 w
    # shellcheck disable=SC2086
    for w in ${!v:-}; do printf '%s\n' "$w"; done
}

# cp_apiserver_flags PKI_DIR PORT ETCD_URL: sets the array cp_apiserver_flags to the flags of a
# kube-apiserver of this control plane serving on 127.0.0.1:PORT, plus $CP_FEATURE_GATES and
# $CP_APISERVER_ARGS. up.sh starts its apiserver with them and apiserver.sh a second one, so the
# two cannot drift apart.
cp_apiserver_flags() {
    local pki=$1 port=$2 etcd_url=$3 more
    cp_apiserver_flags=(
        --bind-address=127.0.0.1
        --advertise-address=127.0.0.1
        "--secure-port=$port"
        "--etcd-servers=$etcd_url"
        --endpoint-reconciler-type=none
        "--tls-cert-file=$pki/apiserver.crt"
        "--tls-private-key-file=$pki/apiserver.key"
        "--client-ca-file=$pki/ca.crt"
        "--kubelet-client-certificate=$pki/apiserver-kubelet-client.crt"
        "--kubelet-client-key=$pki/apiserver-kubelet-client.key"
        "--kubelet-preferred-address-types=InternalIP,Hostname,ExternalIP"
        "--authorization-mode=Node,RBAC"
        "--enable-admission-plugins=NodeRestriction,ServiceAccount"
        --allow-privileged=true
        --service-cluster-ip-range=10.96.0.0/16
        --service-account-issuer=https://kubernetes.default.svc.cluster.local
        "--service-account-key-file=$pki/sa.pub"
        "--service-account-signing-key-file=$pki/sa.key"
        "--requestheader-client-ca-file=$pki/front-proxy-ca.crt"
        --requestheader-allowed-names=front-proxy-client
        --requestheader-username-headers=X-Remote-User
        --requestheader-group-headers=X-Remote-Group
        --requestheader-extra-headers-prefix=X-Remote-Extra-
        "--proxy-client-cert-file=$pki/front-proxy-client.crt"
        "--proxy-client-key-file=$pki/front-proxy-client.key"
    )
    [ -z "${CP_FEATURE_GATES:-}" ] || cp_apiserver_flags+=("--feature-gates=$CP_FEATURE_GATES")
    mapfile -t more < <(cp_extra_words CP_APISERVER_ARGS)
    cp_apiserver_flags+=("${more[@]}")
}
