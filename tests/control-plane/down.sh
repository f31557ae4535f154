#!/usr/bin/env bash
# Stops everything up.sh (or a test, through lib.sh's start_proc) started in a run dir, newest
# component first, and checks that none of the control-plane binaries still runs with that run
# dir on its command line.
#
# Usage: down.sh [--run-dir DIR] [--purge]     --purge also deletes DIR (etcd data, PKI, logs).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
cp_parse_run_dir "$@"
purge=0
for a in "${cp_args[@]}"; do
    case "$a" in
        --purge) purge=1 ;;
        *) cp_die "usage: down.sh [--run-dir DIR] [--purge]" ;;
    esac
done

if [ -d "$run/pids" ]; then
    # The apiserver's clients first, together: scheduler, controller-manager and whatever a
    # test registered in the same run dir (e.g. a kubelet); then the apiserver, then etcd.
    clients=(kube-scheduler kube-controller-manager)
    for f in "$run"/pids/*.pid; do
        [ -e "$f" ] || continue
        name=$(basename "$f" .pid)
        case "$name" in kube-scheduler|kube-controller-manager|kube-apiserver|etcd) ;; *) clients+=("$name") ;; esac
    done
    waits=()
    for name in "${clients[@]}"; do stop_proc "$name" & waits+=($!); done
    rc=0
    for w in "${waits[@]}"; do wait "$w" || rc=1; done
    [ "$rc" = 0 ] || cp_die "could not stop every client of the apiserver"
    stop_proc kube-apiserver
    stop_proc etcd
fi

# Nothing of ours may survive: a process running one of the control-plane binaries whose
# command line names this run dir (e.g. one whose pid file was lost) is killed by pid.
bin_dir=""
[ ! -s "$run/env" ] || bin_dir=$(sed -n 's/^CP_BIN=//p' "$run/env")
leftover=()
while read -r exe_link target; do
    case "$(basename "$target")" in
        etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet) ;;
        *) continue ;;
    esac
    [ -z "$bin_dir" ] || [ "$(dirname "$target")" = "$bin_dir" ] || continue
    pid=${exe_link#/proc/}; pid=${pid%/exe}
    tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$run/" || continue
    leftover+=("$pid")
done < <(find /proc/[0-9]*/exe -maxdepth 0 -printf '%p %l\n' 2>/dev/null || true)
if [ "${#leftover[@]}" -gt 0 ]; then
    cp_log "killing leftover processes of $run: ${leftover[*]}"
    kill -KILL "${leftover[@]}" 2>/dev/null || true
    deadline=$(( $(date +%s) + 10 ))
    for pid in "${leftover[@]}"; do
        while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
        ! kill -0 "$pid" 2>/dev/null || cp_die "pid $pid would not die"
    done
fi

if [ "$purge" = 1 ]; then
    rm -rf "$run"
    cp_log "purged $run"
fi
cp_log "down ($run)"
