#!/usr/bin/env bash
# sergeant.exe as a Windows service under Wine's service control manager (services.exe), driven
# with Wine's sc.exe as an operator would: `sc create NAME binPath= "sergeant.exe
# --windows-service ..."`, `sc start`, `sc query`, `sc stop`, `sc delete`. Passes when:
#   - after `sc start`, `sc query` shows RUNNING and /healthz answers ok (the agent runs, on the
#     fake runtime adapter, logging to --log-file since a service has no console);
#   - after `sc stop`, `sc query` shows STOPPED with exit code 0, /healthz no longer answers, and
#     the log shows Running reported, StopPending reported on the stop request, the tree
#     stopped cleanly, then Stopped reported, in that order (StartPending is reported before logging is
#     set up, so only its effect is seen: sc start returns);
#   - the Event Log got a Warning entry for a warning and Information entries for Running and
#     StopPending (seen as the ReportEventW calls Wine prints on its eventlog debug channel: Wine
#     keeps no Event Log to read back);
#   - a service whose configuration is invalid ends STOPPED with the service-specific exit code
#     2 (sergeant's bad-configuration code), with an Error entry in the Event Log saying why.
# Expects tests/windows/build.sh to have built sergeant.exe (run.sh does).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/windows/env.sh
. "$here/env.sh"
# shellcheck source=tests/windows/lib.sh
. "$here/lib.sh"

exe="$WIN_TARGET_DIR/$WIN_TARGET/debug/sergeant.exe"
deadline_s=${WIN_TEST_DEADLINE:-120}
run=$(mktemp -d /tmp/sergeant-winsvc.XXXXXX)
name="sergeant-test-$$"
bad="sergeant-bad-$$"
# Ports of this run (healthz, read-only, kubelet API), apart from run.sh's and the Rust tests'.
base=$((8000 + $$ % 1000 * 3))
healthz=$base read_only=$((base + 1)) api=$((base + 2))
sc() { "$WINE" sc "$@" 2>/dev/null | tr -d '\r'; }

cleanup() {
    for svc in "$name" "$bad"; do
        sc stop "$svc" >/dev/null || true
        sc delete "$svc" >/dev/null || true
    done
    rm -rf "$run"
}
trap cleanup EXIT
fail() {
    echo "tests/windows/service.sh: FAILED: $*" >&2
    echo "--- sc query $name" >&2; sc query "$name" >&2 || true
    echo "--- service log" >&2; tail -n 60 "$run/service.log" >&2 || true
    echo "--- the service's stderr" >&2; grep -v eventlog "$run/wine.log" | tail -n 20 >&2 || true
    exit 1
}
# The STATE line's name (RUNNING, STOPPED, ...) of service $1.
state() { sc query "$1" | awk '$1 == "STATE" { print $4 }'; }
in_state() { [ "$(state "$1")" = "$2" ]; }
# The value of the query line $2 (WIN32_EXIT_CODE, SERVICE_EXIT_CODE) of service $1.
query_value() { sc query "$1" | awk -v key="$2" '$1 == key { print $3 }'; }

kubelet_config "$run/config.yaml" "$run" "$healthz" "$read_only" "$api" --- \
    "apiVersion: sergeant.dev/v1alpha1" "kind: SergeantConfiguration" "runtimeAdapter: fake"
printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nhealthzPort: many\n' \
    >"$run/bad.yaml"

command_line() {
    printf '%s --windows-service --config %s --root-dir %s --hostname-override winsvc --log-file %s' \
        "$(win "$exe")" "$(win "$run/$1")" "$(win "$run/root")" "$(win "$run/$2")"
}
# The Event Log: Wine's ReportEventW writes each entry to its `eventlog` debug channel on the
# stderr that services.exe (and so the service) inherited from the Wine command that started it.
# So this script starts the prefix's services afresh, from a command whose stderr it keeps.
timeout 60 "$WINESERVER" -w || fail "the Wine prefix's processes still running after 60 s"
WINEDEBUG=-all,+eventlog "$WINE" sc create "$name" binPath= "$(command_line config.yaml service.log)" \
    >/dev/null 2>"$run/wine.log" || fail "sc create $name"
in_state "$name" STOPPED || fail "a new service is not STOPPED: $(state "$name")"

sc start "$name" >/dev/null || fail "sc start $name"
wait_until "sc query showing RUNNING" in_state "$name" RUNNING
healthy() { [ "$(curl -s -m 2 "http://127.0.0.1:$healthz/healthz")" = ok ]; }
wait_until "/healthz answering ok from the service" healthy

sc stop "$name" >/dev/null || fail "sc stop $name"
wait_until "sc query showing STOPPED" in_state "$name" STOPPED
code=$(query_value "$name" WIN32_EXIT_CODE)
[ "$code" = 0 ] || fail "stopped with WIN32_EXIT_CODE $code"
! healthy || fail "/healthz still answers after the service stopped"

# The service's log tells its life in order.
log="$run/service.log"
last=0
for step in 'service: reported Running' \
    'service: reported StopPending' 'service stop: shutting down' 'stopped cleanly' \
    'service: reported Stopped'; do
    at=$(grep -n -m1 -F "$step" "$log" | cut -d: -f1 || true)
    [ -n "$at" ] || fail "the service log lacks \"$step\""
    ((at > last)) || fail "\"$step\" (line $at) is out of order (after line $last)"
    last=$at
done

# The Event Log got the warnings (a Warning entry) and the service's state changes
# (Information entries), as ReportEventW calls.
for entry in 'warn:eventlog:ReportEventW L"sergeant_actors::config_watcher: cannot listen for SIGHUP' \
    'trace:eventlog:ReportEventW L"sergeant::service::platform: service: reported Running' \
    'trace:eventlog:ReportEventW L"sergeant::service::platform: service: reported StopPending'; do
    grep -q -F "$entry" "$run/wine.log" ||
        fail "no Event Log entry ${entry#*L\"} in Wine's eventlog channel: $(grep -c eventlog "$run/wine.log") entries"
done

# A service that cannot start: stopped with sergeant's bad-configuration code.
sc create "$bad" binPath= "$(command_line bad.yaml bad.log)" >/dev/null || fail "sc create $bad"
sc start "$bad" >/dev/null || true
wait_until "the misconfigured service STOPPED" in_state "$bad" STOPPED
specific=$(query_value "$bad" SERVICE_EXIT_CODE)
[ "$specific" = 2 ] || fail "the misconfigured service's SERVICE_EXIT_CODE is $specific, not 2"
# ... and an Error entry in the Event Log saying why.
grep -q -F 'err:eventlog:ReportEventW L"sergeant: invalid configuration: ' "$run/wine.log" ||
    fail "no Event Log error entry for the misconfigured service"

echo "== windows: sergeant.exe ran as a service under Wine's service manager: sc start -> RUNNING, /healthz ok, sc stop -> STOPPED (exit 0) after an ordered shutdown, Event Log entries written; a bad configuration -> STOPPED with code 2 and an Event Log error ($SECONDS s)"
