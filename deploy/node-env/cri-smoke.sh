#!/usr/bin/env bash
# cri-smoke.sh — check an instance of node-env.sh through CRI with crictl:
# pull the four test images, run a pod, start shell/httpd/exit/termmsg containers in it,
# check their states, exit codes, termination message, the pod IP (inside POD_SUBNET) and
# an HTTP GET to the pod's httpd (a pod IP on our own bridge), then remove the pod.
#
#   cri-smoke.sh [SOCKET]     default: $CONTAINERD_SOCKET, else /run/sergeant-node/main/containerd.sock
#   CRICTL=/path/to/crictl    default: crictl in PATH, else ~/go/bin/crictl
#
# crictl is not packaged in Debian 12; it builds from the Go module proxy with
#   GOTOOLCHAIN=local go install sigs.k8s.io/cri-tools/cmd/crictl@v1.37.0
set -euo pipefail

die() {
	echo "cri-smoke.sh: FAIL: $*" >&2
	exit 1
}

SOCK=${1:-${CONTAINERD_SOCKET:-/run/sergeant-node/main/containerd.sock}}
CRICTL=${CRICTL:-$(command -v crictl || echo "$HOME/go/bin/crictl")}
REGISTRY=${REGISTRY:-127.0.0.1:5000}
[[ -x $CRICTL ]] || die "crictl not found (see the header of $0)"
[[ -S $SOCK ]] || die "no containerd socket at $SOCK"
export CRI_CONFIG_FILE=/dev/null

cr() { "$CRICTL" --runtime-endpoint "unix://$SOCK" --image-endpoint "unix://$SOCK" "$@" 2>/dev/null; }

# json_field JSON PYTHON_EXPR(d): evaluate an expression on parsed JSON.
json_field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }

WORK=$(mktemp -d)
POD=""
cleanup() {
	if [[ -n $POD ]]; then
		cr stopp "$POD" >/dev/null || true
		cr rmp "$POD" >/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

write_configs() {
	: >"$WORK/termlog"
	cat >"$WORK/pod.json" <<EOF
{"metadata":{"name":"cri-smoke","namespace":"default","uid":"cri-smoke-$$","attempt":0},
 "log_directory":"$WORK","linux":{}}
EOF
	container_json sleeper shell ',"command":["/bin/sh","-c","echo hello; sleep 3600"]'
	container_json web httpd ''
	container_json exiter exit ',"envs":[{"key":"EXIT_CODE","value":"3"}]'
	container_json termmsg termmsg ",\"envs\":[{\"key\":\"MESSAGE\",\"value\":\"bye from cri-smoke\"}],
		\"mounts\":[{\"container_path\":\"/dev/termination-log\",\"host_path\":\"$WORK/termlog\"}]"
}

container_json() {
	echo "{\"metadata\":{\"name\":\"$1\"},\"image\":{\"image\":\"$REGISTRY/sergeant/$2:1.0\"},\"log_path\":\"$1.log\",\"linux\":{}$3}" >"$WORK/$1.json"
}

wait_exited() {
	local id=$1 i
	for ((i = 0; i < 100; i++)); do
		[[ $(json_field "$(cr inspect "$id")" 'd["status"]["state"]') == CONTAINER_EXITED ]] && return 0
		sleep 0.05
	done
	die "container $id did not exit within 5s"
}

main() {
	write_configs
	local image start
	start=$(date +%s%N)
	for image in pause shell httpd exit termmsg; do
		cr pull "$REGISTRY/sergeant/$image:1.0" >/dev/null || die "CRI PullImage $REGISTRY/sergeant/$image:1.0"
	done
	echo "pulled 5 images in $((($(date +%s%N) - start) / 1000000)) ms"

	start=$(date +%s%N)
	POD=$(cr runp "$WORK/pod.json") || die "RunPodSandbox"
	echo "RunPodSandbox in $((($(date +%s%N) - start) / 1000000)) ms"
	local ip
	ip=$(json_field "$(cr inspectp "$POD")" 'd["status"]["network"]["ip"]')
	echo "pod IP $ip"
	[[ -n $ip ]] || die "the pod got no IP"

	local name id
	local -A ids=()
	for name in sleeper web exiter termmsg; do
		id=$(cr create "$POD" "$WORK/$name.json" "$WORK/pod.json") || die "CreateContainer $name"
		cr start "$id" >/dev/null || die "StartContainer $name"
		ids[$name]=$id
	done
	wait_exited "${ids[exiter]}"
	wait_exited "${ids[termmsg]}"
	[[ $(json_field "$(cr inspect "${ids[exiter]}")" 'd["status"]["exitCode"]') == 3 ]] || die "exit image: exit code is not 3"
	[[ $(json_field "$(cr inspect "${ids[termmsg]}")" 'd["status"]["exitCode"]') == 0 ]] || die "termmsg image: exit code is not 0"
	[[ $(<"$WORK/termlog") == "bye from cri-smoke" ]] || die "termmsg image: termination log is '$(<"$WORK/termlog")'"
	[[ $(json_field "$(cr inspect "${ids[sleeper]}")" 'd["status"]["state"]') == CONTAINER_RUNNING ]] || die "shell container is not running"
	grep -q 'stdout F hello' "$WORK/sleeper.log" || die "shell container log has no 'hello'"
	echo "containers: shell running, exit -> 3, termmsg -> 0 with message"

	local body="" i
	for ((i = 0; i < 50; i++)); do
		body=$(python3 -c 'import sys,urllib.request as u; print(u.build_opener(u.ProxyHandler({})).open(sys.argv[1], timeout=1).read().decode().strip())' \
			"http://$ip:8080/" 2>/dev/null) && break
		sleep 0.1
	done
	[[ $body == "sergeant-httpd ok" ]] || die "GET http://$ip:8080/ answered '$body'"
	echo "GET http://$ip:8080/ -> $body"

	cr stopp "$POD" >/dev/null || die "StopPodSandbox"
	cr rmp "$POD" >/dev/null || die "RemovePodSandbox"
	POD=""
	echo "cri-smoke: 1 passed, 0 failed"
}

main "$@"
