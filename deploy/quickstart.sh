#!/usr/bin/env bash
# quickstart.sh — sets up a node (private containerd, local registry, test images) and runs
# sergeant against it in standalone mode, with the example static pods.
#
# Usage (as root, from anywhere):
#   deploy/quickstart.sh            build, set up, run sergeant in the foreground (Ctrl-C stops it)
#   deploy/quickstart.sh --check    the same, but verify the endpoints answer and stop again
#   deploy/quickstart.sh --down     tear the node environment down
#
# Everything lives under $SERGEANT_RUN_DIR (default /run/sergeant-node); the system
# containerd, if any, is never touched.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
node_env="$repo/deploy/node-env/node-env.sh"
run_dir=${SERGEANT_RUN_DIR:-/run/sergeant-node}
quick_dir="$run_dir/quickstart"

log() { printf 'quickstart: %s\n' "$*" >&2; }

build() {
    if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
        # shellcheck disable=SC1091
        . "$HOME/.cargo/env"
    fi
    log "building sergeant (release)"
    (cd "$repo" && cargo build --release --bin sergeant >&2)
    local target_dir=${CARGO_TARGET_DIR:-$repo/target}
    printf '%s\n' "$target_dir/release/sergeant"
}

write_config() {
    local endpoint=$1
    mkdir -p "$quick_dir/manifests"
    cp "$repo"/deploy/examples/pods/*.yaml "$quick_dir/manifests/"
    sed -e "s|^staticPodPath: .*|staticPodPath: $quick_dir/manifests|" \
        -e "s|^containerRuntimeEndpoint: .*|containerRuntimeEndpoint: $endpoint|" \
        "$repo/deploy/examples/standalone.yaml" >"$quick_dir/config.yaml"
    printf '%s\n' "$quick_dir/config.yaml"
}

wait_for_url() {
    local url=$1 deadline=$((SECONDS + 30))
    until curl -fsS "$url" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || { log "no answer from $url within 30 s"; return 1; }
        sleep 0.2
    done
}

check() {
    local binary=$1 config=$2
    "$binary" --config "$config" --root-dir "$quick_dir/root" &
    local pid=$!
    trap 'kill "$pid" 2>/dev/null || true' EXIT
    wait_for_url http://127.0.0.1:10248/healthz
    for path in /healthz /metrics /debug/supervision /debug/config /pods; do
        curl -fsS "http://127.0.0.1:10255$path" >/dev/null
        log "ok: http://127.0.0.1:10255$path"
    done
    local ip="" deadline=$((SECONDS + 60))
    until [ -n "$ip" ]; do
        ip=$(curl -fsS http://127.0.0.1:10255/pods | python3 -c '
import json, sys
for pod in json.load(sys.stdin)["items"]:
    status = pod.get("status", {})
    if pod["metadata"]["name"].startswith("httpd-") and status.get("phase") == "Running":
        print(status.get("podIP", ""))' || true)
        [ "$SECONDS" -lt "$deadline" ] || { log "the example pod is not Running within 60 s"; return 1; }
        [ -n "$ip" ] || sleep 0.5
    done
    log "example pod httpd is Running at $ip: $(curl -fsS "http://$ip:8080/")"
    rm -f "$quick_dir"/manifests/*.yaml
    deadline=$((SECONDS + 60))
    until [ "$(curl -fsS http://127.0.0.1:10255/pods | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" = 0 ]; do
        [ "$SECONDS" -lt "$deadline" ] || { log "the example pod was not removed within 60 s"; return 1; }
        sleep 0.5
    done
    log "example pod removed"
    kill -TERM "$pid"
    wait "$pid"
    trap - EXIT
    log "sergeant stopped cleanly"
}

main() {
    case "${1:-run}" in
    --down)
        bash "$node_env" down --all
        return
        ;;
    run | --check) ;;
    *)
        echo "usage: $0 [--check | --down]" >&2
        exit 2
        ;;
    esac
    bash "$node_env" install
    local env_lines
    env_lines=$(bash "$node_env" up)
    local CONTAINERD_ENDPOINT=""
    eval "$env_lines"
    log "containerd at $CONTAINERD_ENDPOINT, registry at 127.0.0.1:5000"
    local binary config
    binary=$(build)
    config=$(write_config "$CONTAINERD_ENDPOINT")
    if [ "${1:-run}" = --check ]; then
        check "$binary" "$config"
        return
    fi
    log "running: $binary --config $config   (healthz 127.0.0.1:10248, read-only 127.0.0.1:10255)"
    exec "$binary" --config "$config" --root-dir "$quick_dir/root"
}

main "$@"
