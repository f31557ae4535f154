#!/usr/bin/env bash
# Runs one more kube-apiserver of a running control plane, in the foreground: the run dir's
# binary, etcd and PKI, with the flags up.sh gives its own apiserver (lib.sh's
# cp_apiserver_flags), on another port. It execs the binary, so the caller's child is the
# apiserver itself and a SIGTERM to it is a real apiserver shutdown. For tests that stop and
# restart an API server of their own without taking the shared one away from anybody else.
#
# Usage: apiserver.sh --run-dir DIR --port PORT       (DIR: where up.sh wrote its env file)
# Env:   CP_FEATURE_GATES, CP_APISERVER_ARGS as for up.sh.
# Its log goes to stdout/stderr; stop it with SIGTERM. The serving certificate covers
# 127.0.0.1, so every kubeconfig of the run dir works once its server is https://127.0.0.1:PORT.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
cp_parse_run_dir "$@"
port=""
set -- "${cp_args[@]}"
while [ $# -gt 0 ]; do
    case "$1" in
        --port) [ $# -ge 2 ] || cp_die "--port needs a value"; port=$2; shift 2 ;;
        --port=*) port=${1#--port=}; shift ;;
        *) cp_die "usage: apiserver.sh --run-dir DIR --port PORT (unknown argument '$1')" ;;
    esac
done
case "$port" in
    ""|*[!0-9]*) cp_die "apiserver.sh: --port must be a port number, got '$port'" ;;
esac
[ -s "$run/env" ] || cp_die "$run/env missing: start the control plane with up.sh --run-dir $run first"

env_value() { # KEY -> its value in the run dir's env file
    local value
    value=$(sed -n "s/^$1=//p" "$run/env")
    [ -n "$value" ] || cp_die "$run/env has no $1"
    printf '%s\n' "$value"
}
bin=$(env_value CP_BIN)
etcd_url=$(env_value ETCD_ENDPOINT)
[ -x "$bin/kube-apiserver" ] || cp_die "$bin/kube-apiserver missing (run build.sh)"
! port_busy "$port" || cp_die "127.0.0.1:$port is already in use"

cp_apiserver_flags "$run/pki" "$port" "$etcd_url"
exec "$bin/kube-apiserver" "${cp_apiserver_flags[@]}"
