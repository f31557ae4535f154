#!/usr/bin/env bash
# node-env.sh — the test/dev node environment of sergeant (the Rust kubelet).
#
# It gives sergeant a real container runtime to talk to, on one machine, without touching
# any system-wide service:
#   * a private containerd per "instance" (own root, state, runc root, CNI config, CNI
#     bridge and subnet, gRPC socket DIR/NAME/containerd.sock), with a CRI plugin config
#     that works on these machines (restrict_oom_score_adj, /usr/lib/cni, plain-HTTP
#     local registry, netns mounts under its own state dir);
#   * one local registry shared by all instances (docker-registry on 127.0.0.1:5000,
#     storage under the run dir);
#   * the test images, built from scratch by build-image.sh and pushed once to that
#     registry, so containerd pulls them through CRI like any real image:
#       127.0.0.1:5000/sergeant/pause:1.0    our static pause (pause.c)
#       127.0.0.1:5000/sergeant/shell:1.0    static busybox, Cmd ["/bin/sh"]
#       127.0.0.1:5000/sergeant/httpd:1.0    busybox httpd on :8080 serving /www
#       127.0.0.1:5000/sergeant/exit:1.0     exits with $EXIT_CODE (default 1)
#       127.0.0.1:5000/sergeant/termmsg:1.0  writes $MESSAGE to /dev/termination-log
#       127.0.0.1:5000/sergeant/grpc-health:1.0  gRPC health server on :9090
#         (examples/grpc-health-server.rs, built with cargo, with the shared libraries it
#         links copied in)
#   * a second registry that wants credentials (127.0.0.1:5001, htpasswd basic auth, user
#     "sergeant", password "pull-secret-test": fixed test values), for the tests of
#     imagePullSecrets, holding only
#       127.0.0.1:5001/sergeant/private/shell:1.0  like shell, but another image id
#
# Usage (as root):
#   node-env.sh install                                  install the Debian packages needed
#   node-env.sh up     [--instance NAME] [--index N] [--run-dir DIR]
#                      [--registry ADDR --sandbox-image REF] [--cni-from-pod-cidr]
#   node-env.sh down   [--instance NAME | --all]   [--run-dir DIR]
#   node-env.sh status [--run-dir DIR]
#   node-env.sh env    [--instance NAME] [--run-dir DIR]   print the env of a running instance
#   node-env.sh registry-stop  [--run-dir DIR]   stop the shared plain registry (127.0.0.1:5000)
#   node-env.sh registry-start [--run-dir DIR]   start it again, on the storage it had
#
# `up` prints shell assignments (also written to DIR/NAME/env), e.g.
#   CONTAINERD_SOCKET=/run/sergeant-node/main/containerd.sock
#   CONTAINERD_ENDPOINT=unix:///run/sergeant-node/main/containerd.sock
#   REGISTRY=127.0.0.1:5000  CNI_BRIDGE=sgt0  POD_SUBNET=10.88.0.0/16 ...
# so callers do:  eval "$(deploy/node-env/node-env.sh up)"
# Everything else (progress, errors) goes to stderr.
#
# Defaults: instance "main", run dir $SERGEANT_RUN_DIR or /run/sergeant-node.
# Instance "main" is index 0 (bridge sgt0, 10.88.0.0/16); another instance gets index
# 1..99 from a checksum of its name (bridge sgtN, subnet 10.(88+N).0.0/16), or --index N.
#
# `--registry ADDR` gives the instance a plain-HTTP registry of the caller's (e.g. the images of
# tests/conformance/ on 127.0.0.1:5100) in place of the shared ones: `up` then neither starts
# nor fills the registries on 127.0.0.1:5000/5001, the instance's certs.d names ADDR only, and
# containerd's sandbox image is `--sandbox-image REF` (required with --registry, since the
# default pause image lives on :5000).
#
# `--cni-from-pod-cidr` gives the instance no CNI network of its own: containerd renders one
# from a template (its `conf_template`, the instance's bridge with host-local addresses) into
# CNI_CONF_DIR/10-containerd-net.conflist once a kubelet hands it the node's pod CIDR (CRI
# UpdateRuntimeConfig); until then the runtime reports NetworkReady=false and POD_SUBNET is
# empty. Removing the rendered file makes containerd render the next CIDR it is handed.
#
# `up` and `down` are idempotent. `down` kills every container of the instance, stops its
# containerd and shims, unmounts everything under its directory (container rootfs, pod
# network namespaces), deletes its bridge and removes its directory; `down --all` does
# that for every instance and also stops both registries (their storage is kept, so the
# next `up` does not rebuild the images).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_DIR
readonly REGISTRY_ADDR=127.0.0.1:5000
# The registry that wants credentials (fixed test values, not secrets), for the tests of
# imagePullSecrets; it holds AUTH_IMAGE only.
readonly AUTH_REGISTRY_ADDR=127.0.0.1:5001
readonly AUTH_REGISTRY_USER=sergeant
readonly AUTH_REGISTRY_PASSWORD=pull-secret-test
readonly IMAGE_TAG=1.0
readonly IMAGE_NAMES=(pause shell httpd exit termmsg grpc-health)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
readonly REPO_ROOT
readonly PAUSE_IMAGE="$REGISTRY_ADDR/sergeant/pause:$IMAGE_TAG"
readonly AUTH_IMAGE="$AUTH_REGISTRY_ADDR/sergeant/private/shell:$IMAGE_TAG"
readonly CNI_BIN_DIR=/usr/lib/cni
readonly IMAGE_PATH_ENV="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
readonly PACKAGES=(containerd runc containernetworking-plugins busybox-static protobuf-compiler
	docker-registry skopeo openssl iproute2 gcc libc6-dev procps apache2-utils)
# Seconds to wait for a daemon to answer / to exit.
readonly START_TIMEOUT=${SERGEANT_NODE_START_TIMEOUT:-60}
readonly STOP_TIMEOUT=10

RUN_DIR=${SERGEANT_RUN_DIR:-/run/sergeant-node}
INSTANCE=main
INSTANCE_INDEX=""
ALL_INSTANCES=false
# --registry / --sandbox-image: the caller's registry and pause image ("" = the shared ones).
OWN_REGISTRY=""
SANDBOX_IMAGE=""
# --cni-from-pod-cidr: containerd renders the CNI network from the kubelet's pod CIDR.
CNI_FROM_POD_CIDR=false

# ---------------------------------------------------------------------------------------
# small helpers

log() { echo "node-env: $*" >&2; }

die() {
	echo "node-env: error: $*" >&2
	exit 1
}

require_root() {
	[[ $(id -u) -eq 0 ]] || die "must run as root (containerd, mounts and bridges need it)"
}

require_tools() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 ||
			die "'$tool' is not installed; run: $0 install"
	done
}

# Milliseconds since the epoch.
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# wait_for TIMEOUT_S WATCH_PID WHAT CMD...: poll CMD until it succeeds. Fails at the
# deadline, or at once if WATCH_PID (when not empty) is no longer running.
wait_for() {
	local timeout_s=$1 watch_pid=$2 what=$3
	shift 3
	local deadline=$(($(now_ms) + timeout_s * 1000)) delay=0.02
	until "$@" >/dev/null 2>&1; do
		if [[ -n $watch_pid ]] && ! process_running "$watch_pid"; then
			return 2
		fi
		(($(now_ms) < deadline)) || die "timed out after ${timeout_s}s waiting for $what"
		sleep "$delay"
		[[ $delay == 0.2 ]] || delay=$(awk -v d="$delay" 'BEGIN { d *= 2; if (d > 0.2) d = 0.2; print d }')
	done
}

# The command line of a process, NULs as spaces ("" if gone).
proc_cmdline() {
	local cmdline=""
	[[ -r /proc/$1/cmdline ]] && cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null || true)
	echo "$cmdline"
}

# pid_from_file FILE PATTERN: print the pid in FILE if that process is alive and its
# command line contains PATTERN (guards against pid reuse); fail otherwise.
pid_from_file() {
	local file=$1 pattern=$2 pid
	[[ -f $file ]] || return 1
	pid=$(<"$file")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ $(proc_cmdline "$pid") == *"$pattern"* ]] || return 1
	echo "$pid"
}

# All descendants of the given pids (not the pids themselves), one per line.
proc_descendants() {
	ps -e -o pid=,ppid= | awk -v roots="$*" '
		{ parent[$1] = $2 }
		END {
			n = split(roots, queue, " ")
			for (i = 1; i <= n; i++) seen[queue[i]] = 1
			for (i = 1; i <= n; i++)
				for (p in parent)
					if (parent[p] == queue[i] && !(p in seen)) { seen[p] = 1; queue[++n] = p; print p }
		}'
}

# stop_pid PID WHAT: SIGTERM, wait up to STOP_TIMEOUT, then SIGKILL.
stop_pid() {
	local pid=$1 what=$2
	kill -TERM "$pid" 2>/dev/null || return 0
	if ! wait_for_exit "$pid" "$STOP_TIMEOUT"; then
		log "$what (pid $pid) ignored SIGTERM for ${STOP_TIMEOUT}s; sending SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		wait_for_exit "$pid" "$STOP_TIMEOUT" || die "$what (pid $pid) does not die"
	fi
}

# Is the process alive? A zombie (dead, not yet reaped) is not.
process_running() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat:0:1} != Z ]]
}

# wait_for_exit PID TIMEOUT_S: succeed once the process is gone.
wait_for_exit() {
	local pid=$1 deadline=$(($(now_ms) + $2 * 1000))
	while process_running "$pid"; do
		(($(now_ms) < deadline)) || return 1
		sleep 0.02
	done
}

# Take an exclusive lock on FILE on fd 9 (released when the script exits). Daemons are
# started with 9>&- so they never inherit it.
take_lock() {
	exec 9>"$1"
	flock -w 300 9 || die "could not lock $1 within 300s (another node-env.sh running?)"
}

# ---------------------------------------------------------------------------------------
# install

package_installed() {
	[[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

cmd_install() {
	require_root
	local -a missing=()
	local pkg
	for pkg in "${PACKAGES[@]}"; do
		package_installed "$pkg" || missing+=("$pkg")
	done
	if ((${#missing[@]} == 0)); then
		log "all packages already installed"
		return 0
	fi
	log "installing: ${missing[*]}"
	# No service may start from a package's postinst (docker-registry ships an init
	# script listening on :5000): add a policy-rc.d for the install if there is none.
	local policy=/usr/sbin/policy-rc.d added_policy=false
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		added_policy=true
	fi
	local rc=0
	{
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -qq update &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -y -q \
				-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
				install "${missing[@]}"
	} >&2 || rc=$?
	if $added_policy; then rm -f "$policy"; fi
	((rc == 0)) || die "apt-get install of ${missing[*]} failed (exit $rc)"
	for pkg in "${missing[@]}"; do
		package_installed "$pkg" || die "package $pkg is still not installed after apt-get"
	done
	log "installed: ${missing[*]}"
}

# ---------------------------------------------------------------------------------------
# local registry (shared by all instances)

# Two registries, named by KIND: "plain" on REGISTRY_ADDR (no auth, every test image) and
# "auth" on AUTH_REGISTRY_ADDR (htpasswd basic auth, AUTH_IMAGE only).
registry_dir() { if [[ $1 == auth ]]; then echo "$RUN_DIR/registry-auth"; else echo "$RUN_DIR/registry"; fi; }
registry_addr() { if [[ $1 == auth ]]; then echo "$AUTH_REGISTRY_ADDR"; else echo "$REGISTRY_ADDR"; fi; }

# The user:password a registry of KIND takes ("" for plain).
registry_creds() { if [[ $1 == auth ]]; then echo "$AUTH_REGISTRY_USER:$AUTH_REGISTRY_PASSWORD"; fi; }

registry_pid() {
	pid_from_file "$(registry_dir "$1")/registry.pid" "$(registry_dir "$1")/config.yml"
}

# registry_answers KIND: does something answer the registry v2 API on its address with 200
# (with its credentials, if any)?
registry_answers() {
	python3 - "$(registry_addr "$1")" "$(registry_creds "$1")" <<'PY'
import base64, sys, urllib.request
try:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
    request = urllib.request.Request("http://%s/v2/" % sys.argv[1])
    if sys.argv[2]:
        request.add_header("Authorization", "Basic " + base64.b64encode(sys.argv[2].encode()).decode())
    with opener.open(request, timeout=2) as r:
        ok = r.status == 200 and r.headers.get("Docker-Distribution-Api-Version", "").startswith("registry/2")
except Exception:
    ok = False
sys.exit(0 if ok else 1)
PY
}

# registry_port_busy KIND: is anything listening on its port?
registry_port_busy() {
	local addr
	addr=$(registry_addr "$1")
	(exec 3<>"/dev/tcp/${addr%:*}/${addr#*:}") 2>/dev/null
}

# The htpasswd file of the auth registry: bcrypt (the only hash docker-registry takes),
# written again only if it does not verify the credentials.
write_htpasswd() {
	local file=$1
	if [[ -f $file ]] && htpasswd -vb "$file" "$AUTH_REGISTRY_USER" "$AUTH_REGISTRY_PASSWORD" >/dev/null 2>&1; then
		return 0
	fi
	htpasswd -cbB "$file" "$AUTH_REGISTRY_USER" "$AUTH_REGISTRY_PASSWORD" 2>/dev/null ||
		die "htpasswd could not write $file"
}

write_registry_config() {
	local kind=$1 dir
	dir=$(registry_dir "$kind")
	mkdir -p "$dir/storage"
	cat >"$dir/config.yml" <<EOF
# Generated by node-env.sh: the $kind local registry of sergeant's test node environment.
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
  fields:
    service: sergeant-registry-$kind
storage:
  filesystem:
    rootdirectory: $dir/storage
  delete:
    enabled: true
  cache:
    blobdescriptor: inmemory
http:
  addr: $(registry_addr "$kind")
EOF
	if [[ $kind == auth ]]; then
		write_htpasswd "$dir/htpasswd"
		cat >>"$dir/config.yml" <<EOF
auth:
  htpasswd:
    realm: sergeant-registry-auth
    path: $dir/htpasswd
EOF
	fi
}

# start_registry KIND
start_registry() {
	local kind=$1 dir addr pid
	dir=$(registry_dir "$kind")
	addr=$(registry_addr "$kind")
	if pid=$(registry_pid "$kind"); then
		wait_for "$START_TIMEOUT" "$pid" "the $kind registry (pid $pid) to answer on $addr" registry_answers "$kind" ||
			die "the $kind registry (pid $pid) died; see $dir/registry.log"
		log "$kind registry already running (pid $pid) on $addr"
		return 0
	fi
	if registry_port_busy "$kind"; then
		if registry_answers "$kind"; then
			log "reusing the $kind registry that already answers on $addr (not started by this run dir)"
			return 0
		fi
		die "$addr is taken by something that is not the $kind registry; stop it (ss -ltnp 'sport = :${addr#*:}')"
	fi
	write_registry_config "$kind"
	log "starting $kind registry on $addr (storage $dir/storage)"
	setsid docker-registry serve "$dir/config.yml" </dev/null >>"$dir/registry.log" 2>&1 9>&- &
	pid=$!
	echo "$pid" >"$dir/registry.pid"
	wait_for "$START_TIMEOUT" "$pid" "the $kind registry to answer on $addr" registry_answers "$kind" ||
		die "the $kind registry exited at start; last lines of $dir/registry.log:$(printf '\n')$(tail -n 20 "$dir/registry.log")"
}

# stop_registry KIND
stop_registry() {
	local pid
	if pid=$(registry_pid "$1"); then
		log "stopping $1 registry (pid $pid)"
		stop_pid "$pid" "$1 registry"
	fi
	rm -f "$(registry_dir "$1")/registry.pid"
}

# ---------------------------------------------------------------------------------------
# images

image_ref() { echo "$REGISTRY_ADDR/sergeant/$1:$IMAGE_TAG"; }

# A hash of everything the images are built from (sources, busybox, the image functions
# of this script); stored beside the registry storage so a changed recipe rebuilds them.
image_inputs_hash() {
	{
		sha256sum "$SCRIPT_DIR/pause.c" "$SCRIPT_DIR/build-image.sh" "$(command -v busybox)" \
			"$REPO_ROOT/examples/grpc-health-server.rs" "$REPO_ROOT/Cargo.lock"
		declare -f image_ref make_pause_rootfs make_busybox_rootfs make_www_rootfs \
			grpc_health_binary make_grpc_health_rootfs build_and_push build_all_images
		echo "$REGISTRY_ADDR $IMAGE_TAG $IMAGE_PATH_ENV ${IMAGE_NAMES[*]}"
		gcc --version | head -n 1
	} | sha256sum | cut -d' ' -f1
}

image_in_registry() {
	skopeo inspect --raw --tls-verify=false "docker://$(image_ref "$1")" >/dev/null 2>&1
}

images_up_to_date() {
	local stamp name
	stamp="$(registry_dir plain)/images.stamp"
	[[ -f $stamp && $(<"$stamp") == "$(image_inputs_hash)" ]] || return 1
	for name in "${IMAGE_NAMES[@]}"; do
		image_in_registry "$name" || return 1
	done
}

# Rootfs of the pause image: just /pause, static.
make_pause_rootfs() {
	local rootfs=$1
	mkdir -p "$rootfs"
	gcc -static -Os -s -Wall -o "$rootfs/pause" "$SCRIPT_DIR/pause.c" ||
		die "gcc -static failed on $SCRIPT_DIR/pause.c (is libc6-dev installed?)"
	chmod 0755 "$rootfs/pause"
}

# Rootfs of the busybox base layer: /bin/busybox + one symlink per applet, /tmp,
# /etc/passwd and /etc/group with root and nobody.
make_busybox_rootfs() {
	local rootfs=$1 busybox applet
	busybox=$(command -v busybox) || die "busybox not found (package busybox-static)"
	if readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
		die "$busybox is dynamically linked; install busybox-static"
	fi
	mkdir -p "$rootfs"/{bin,dev,etc,proc,sys,tmp,root,usr/bin,var/run}
	chmod 0755 "$rootfs" "$rootfs"/{bin,dev,etc,proc,sys,usr,usr/bin,var,var/run}
	chmod 1777 "$rootfs/tmp"
	chmod 0700 "$rootfs/root"
	install -m 0755 "$busybox" "$rootfs/bin/busybox"
	for applet in $("$busybox" --list); do
		[[ $applet == busybox || -e $rootfs/bin/$applet ]] && continue
		ln -s busybox "$rootfs/bin/$applet"
	done
	ln -s ../../bin/busybox "$rootfs/usr/bin/env"
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
		'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$rootfs/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' 'nobody:x:65534:' >"$rootfs/etc/group"
	chmod 0644 "$rootfs/etc/passwd" "$rootfs/etc/group"
}

# Second layer of the httpd image: the site.
make_www_rootfs() {
	local rootfs=$1
	mkdir -p "$rootfs/www"
	chmod 0755 "$rootfs" "$rootfs/www"
	echo "sergeant-httpd ok" >"$rootfs/www/index.html"
	echo "ok" >"$rootfs/www/healthz"
	chmod 0644 "$rootfs/www/index.html" "$rootfs/www/healthz"
}

# Builds the gRPC health server example with cargo and prints its path.
grpc_health_binary() {
	local target=${CARGO_TARGET_DIR:-$HOME/.cache/sergeant/target}
	if ! command -v cargo >/dev/null 2>&1 && [[ -f $HOME/.cargo/env ]]; then
		# shellcheck disable=SC1091
		. "$HOME/.cargo/env"
	fi
	command -v cargo >/dev/null 2>&1 || die "cargo not found: the grpc-health image is built from examples/grpc-health-server.rs"
	(cd "$REPO_ROOT" && CARGO_TARGET_DIR=$target cargo build --quiet --example grpc-health-server) >&2 ||
		die "building examples/grpc-health-server.rs failed"
	echo "$target/debug/examples/grpc-health-server"
}

# Rootfs of the grpc-health image: the server, stripped, and the shared libraries it links
# (with the dynamic loader) at their host paths.
make_grpc_health_rootfs() {
	local rootfs=$1 binary lib
	binary=$(grpc_health_binary)
	mkdir -p "$rootfs/tmp"
	chmod 0755 "$rootfs"
	chmod 1777 "$rootfs/tmp"
	install -m 0755 "$binary" "$rootfs/grpc-health-server"
	strip "$rootfs/grpc-health-server"
	for lib in $(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		mkdir -p "$rootfs$(dirname "$lib")"
		cp -L "$lib" "$rootfs$lib"
		chmod 0755 "$rootfs$lib"
	done
}

# build_and_push NAME LAYOUT_ROOT BUILD_IMAGE_ARGS...
build_and_push() {
	local name=$1 work=$2 digest
	shift 2
	digest=$("$SCRIPT_DIR/build-image.sh" image --out "$work/oci-$name" --tag "$IMAGE_TAG" \
		--env "$IMAGE_PATH_ENV" "$@" --push "$(image_ref "$name")") ||
		die "building or pushing image sergeant/$name failed"
	log "pushed $(image_ref "$name") ($digest)"
}

build_all_images() {
	local work
	work="$RUN_DIR/images"
	rm -rf "$work"
	mkdir -p "$work"
	# umask matters for the modes that end up in the layers.
	(
		umask 022
		make_pause_rootfs "$work/rootfs-pause"
		make_busybox_rootfs "$work/rootfs-busybox"
		make_www_rootfs "$work/rootfs-www"
		make_grpc_health_rootfs "$work/rootfs-grpc-health"
	)
	"$SCRIPT_DIR/build-image.sh" layer "$work/rootfs-busybox" "$work/busybox.tar.gz" ||
		die "building the busybox layer failed"
	local base="$work/busybox.tar.gz"

	build_and_push pause "$work" --rootfs "$work/rootfs-pause" --entrypoint '["/pause"]'
	build_and_push shell "$work" --layer "$base" --cmd '["/bin/sh"]'
	build_and_push httpd "$work" --layer "$base" --rootfs "$work/rootfs-www" \
		--entrypoint '["/bin/httpd","-f","-p","8080","-h","/www"]'
	# shellcheck disable=SC2016 # the ${...} are expanded by the container's shell
	build_and_push exit "$work" --layer "$base" \
		--entrypoint '["/bin/sh","-c","exit ${EXIT_CODE:-1}"]'
	# shellcheck disable=SC2016
	build_and_push termmsg "$work" --layer "$base" \
		--entrypoint '["/bin/sh","-c","echo ${MESSAGE:-terminated by sergeant} > /dev/termination-log; exit ${EXIT_CODE:-0}"]'
	build_and_push grpc-health "$work" --rootfs "$work/rootfs-grpc-health" \
		--entrypoint '["/grpc-health-server"]'
}

ensure_images() {
	if images_up_to_date; then
		log "images already in the registry and up to date"
		return 0
	fi
	log "building images"
	build_all_images
	image_inputs_hash >"$(registry_dir plain)/images.stamp"
}

# The private shell image (static busybox, Cmd ["/bin/sh"]) of the auth registry. Its config
# differs from sergeant/shell's (SERGEANT_REGISTRY=auth), so it is another image to
# containerd: removing it (CRI RemoveImage drops every name of an image) leaves shell alone.
build_auth_image() {
	local work="$RUN_DIR/images-auth" digest
	rm -rf "$work"
	mkdir -p "$work"
	(
		umask 022
		make_busybox_rootfs "$work/rootfs-busybox"
	)
	"$SCRIPT_DIR/build-image.sh" layer "$work/rootfs-busybox" "$work/busybox.tar.gz" ||
		die "building the busybox layer of $AUTH_IMAGE failed"
	digest=$("$SCRIPT_DIR/build-image.sh" image --out "$work/oci" --tag "$IMAGE_TAG" \
		--env "$IMAGE_PATH_ENV" --env SERGEANT_REGISTRY=auth --layer "$work/busybox.tar.gz" \
		--cmd '["/bin/sh"]') || die "building $AUTH_IMAGE failed"
	skopeo copy --quiet --insecure-policy --dest-tls-verify=false \
		--dest-creds "$(registry_creds auth)" "oci:$work/oci:$IMAGE_TAG" "docker://$AUTH_IMAGE" >&2 ||
		die "skopeo copy of $AUTH_IMAGE to the auth registry failed"
	rm -rf "$work"
	log "pushed $AUTH_IMAGE ($digest)"
}

auth_image_inputs_hash() {
	{
		sha256sum "$SCRIPT_DIR/build-image.sh" "$(command -v busybox)"
		declare -f make_busybox_rootfs build_auth_image
		echo "$AUTH_IMAGE $IMAGE_PATH_ENV"
	} | sha256sum | cut -d' ' -f1
}

ensure_auth_image() {
	local stamp
	stamp="$(registry_dir auth)/images.stamp"
	if [[ -f $stamp && $(<"$stamp") == "$(auth_image_inputs_hash)" ]] &&
		skopeo inspect --raw --tls-verify=false --creds "$(registry_creds auth)" \
			"docker://$AUTH_IMAGE" >/dev/null 2>&1; then
		log "$AUTH_IMAGE already in the auth registry and up to date"
		return 0
	fi
	log "building $AUTH_IMAGE"
	build_auth_image
	auth_image_inputs_hash >"$stamp"
}

# ---------------------------------------------------------------------------------------
# instances: names, indexes, paths

validate_instance_name() {
	[[ $1 =~ ^[a-z0-9][a-z0-9-]{0,30}$ ]] ||
		die "bad instance name '$1' (lowercase letters, digits and '-', at most 31 characters)"
}

instance_dir() { echo "$RUN_DIR/$1"; }
instance_socket() { echo "$(instance_dir "$1")/containerd.sock"; }
instance_config() { echo "$(instance_dir "$1")/containerd.toml"; }
instance_log() { echo "$RUN_DIR/logs/containerd-$1.log"; }

# The index of an instance: the one recorded at `up`, else --index, else derived from the
# name (main = 0, another name 1..99 from its CRC).
instance_index() {
	local name=$1 recorded
	recorded="$(instance_dir "$name")/index"
	if [[ -f $recorded ]]; then
		cat "$recorded"
	elif [[ -n $INSTANCE_INDEX ]]; then
		echo "$INSTANCE_INDEX"
	elif [[ $name == main ]]; then
		echo 0
	else
		local crc
		crc=$(printf '%s' "$name" | cksum | cut -d' ' -f1)
		echo $((crc % 99 + 1))
	fi
}

bridge_of_index() { echo "sgt$1"; }
subnet_of_index() { echo "10.$((88 + $1)).0.0/16"; }

# Names of all instances that have a directory under the run dir.
list_instances() {
	local dir
	for dir in "$RUN_DIR"/*/; do
		[[ -f $dir/containerd.toml ]] && basename "$dir"
	done
	return 0
}

containerd_pid() {
	pid_from_file "$(instance_dir "$1")/containerd.pid" "$(instance_config "$1")"
}

containerd_answers() {
	local sock
	sock=$(instance_socket "$1")
	[[ -S $sock ]] || return 1
	ctr --address "$sock" --connect-timeout 2s --timeout 5s version
}

# Did the CRI plugin load? (containerd answers even when it did not.)
cri_plugin_ok() {
	ctr --address "$(instance_socket "$1")" --connect-timeout 2s --timeout 5s plugins ls |
		awk '$1 == "io.containerd.grpc.v1" && $2 == "cri" { found = 1; ok = ($NF == "ok") } END { exit !(found && ok) }'
}

# The running instance (other than NAME) that uses INDEX, if any.
index_user() {
	local name=$1 index=$2 other
	for other in $(list_instances); do
		[[ $other == "$name" ]] && continue
		if [[ $(instance_index "$other") == "$index" ]] && containerd_pid "$other" >/dev/null; then
			echo "$other"
			return 0
		fi
	done
	return 1
}

# Does the host already route the subnet of INDEX through something else than its bridge?
subnet_routed_elsewhere() {
	local index=$1 probe bridge
	probe="10.$((88 + index)).0.1"
	bridge=$(bridge_of_index "$index")
	ip -o route show to match "$probe" 2>/dev/null |
		awk -v br="$bridge" '$1 != "default" { for (i = 1; i < NF; i++) if ($i == "dev" && $(i + 1) != br) found = 1 } END { exit !found }'
}

# Are pod interfaces attached to the bridge of INDEX?
bridge_has_ports() {
	[[ -n $(ip -o link show master "$(bridge_of_index "$1")" 2>/dev/null) ]]
}

# Is the bridge of INDEX configured in another running containerd (e.g. an instance of
# another run dir)? Looks at the CNI conf_dir of every `containerd --config FILE`.
bridge_claimed_elsewhere() {
	local index=$1 own_config=$2 pid config conf_dir
	local -a args
	for pid in $(pgrep -x containerd || true); do
		mapfile -d '' -t args <"/proc/$pid/cmdline" 2>/dev/null || continue
		config=""
		local i
		for ((i = 0; i + 1 < ${#args[@]}; i++)); do
			[[ ${args[i]} == --config || ${args[i]} == -c ]] && config=${args[i + 1]}
		done
		[[ -n $config && -r $config && $config != "$own_config" ]] || continue
		conf_dir=$(sed -n 's/^ *conf_dir = "\(.*\)"$/\1/p' "$config" | head -n 1)
		[[ -n $conf_dir ]] || continue
		if grep -qs "\"bridge\": \"$(bridge_of_index "$index")\"" "$conf_dir"/*; then
			return 0
		fi
	done
	return 1
}

# Pick the index of instance NAME for `up`: the wanted one if it is free, else (only for
# a derived index) the next free one. Dies if there is none.
choose_index() {
	local name=$1 wanted tries index user
	wanted=$(instance_index "$name")
	if ! [[ $wanted =~ ^[0-9]+$ ]] || ((wanted > 99)); then
		die "bad index '$wanted' for instance '$name' (0..99)"
	fi
	local fixed=false
	if [[ -f $(instance_dir "$name")/index || -n $INSTANCE_INDEX || $name == main ]]; then fixed=true; fi
	index=$wanted
	for ((tries = 0; tries < 99; tries++)); do
		if user=$(index_user "$name" "$index"); then
			$fixed && die "instance '$user' already uses index $index (bridge $(bridge_of_index "$index")); pick another with --index N (1..99)"
		elif subnet_routed_elsewhere "$index"; then
			$fixed && die "subnet $(subnet_of_index "$index") of index $index is already routed on this host; pick another with --index N (1..99)"
		elif bridge_claimed_elsewhere "$index" "$(instance_config "$name")"; then
			$fixed && die "bridge $(bridge_of_index "$index") is used by another containerd (an instance of another run dir?); pick another with --index N (1..99) or bring that one down"
		elif bridge_has_ports "$index" && ! containerd_pid "$name" >/dev/null; then
			$fixed && die "bridge $(bridge_of_index "$index") has pods of another containerd; pick another with --index N (1..99)"
		else
			echo "$index"
			return 0
		fi
		index=$((index % 99 + 1))
	done
	die "no free index (1..99) left for instance '$name'"
}

# ---------------------------------------------------------------------------------------
# instances: configuration files

write_containerd_config() {
	local name=$1 dir
	dir=$(instance_dir "$name")
	cat <<EOF
# Generated by node-env.sh for instance '$name'. Private: never the system containerd.
version = 2
root = "$dir/root"
state = "$dir/state"
oom_score = 0
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$dir/containerd.sock"

[ttrpc]
  address = ""

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$dir/opt"

  # Unused (CRI uses runc v2), but the tasks service needs it loaded: keep it local.
  [plugins."io.containerd.runtime.v1.linux"]
    runtime_root = "$dir/runc-v1"

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "${SANDBOX_IMAGE:-$PAUSE_IMAGE}"
    # Required here: the kernel refuses to lower oom_score_adj below 0.
    restrict_oom_score_adj = true
    # Pod network namespaces live under this instance's state dir, not /var/run/netns.
    netns_mounts_under_state_dir = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    systemd_cgroup = false
    tolerate_missing_hugetlb_controller = true
    disable_hugetlb_controller = true

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          BinaryName = "runc"
          Root = "$dir/runc"
          SystemdCgroup = false

      # A second handler for RuntimeClass tests, named as upstream's e2e suite expects one
      # (`test-handler`): runc again, with its own state directory.
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler.options]
          BinaryName = "runc"
          Root = "$dir/test-handler"
          SystemdCgroup = false

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$CNI_BIN_DIR"
      conf_dir = "$dir/cni/net.d"
      max_conf_num = 1
$(if [[ -f $dir/cni/template.conflist ]]; then echo "      conf_template = \"$dir/cni/template.conflist\""; fi)

    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "$dir/certs.d"
EOF
}

# write_cni_conflist NAME INDEX [template]: the instance's CNI network: its bridge, host-local
# addresses from its subnet. With "template", the file containerd renders once it is handed
# the pod CIDR (its conf_template; Go template fields .PodCIDRRanges and .Routes) instead;
# forceAddress then lets the bridge take the gateway of a new range after the rendered file
# was removed.
write_cni_conflist() {
	local name=$1 index=$2 mode=${3:-} dir ranges routes force=""
	dir=$(instance_dir "$name")
	if [[ $mode == template ]]; then
		# shellcheck disable=SC2016 # Go template variables, not shell ones
		ranges='{{range $i, $range := .PodCIDRRanges}}{{if $i}}, {{end}}[{ "subnet": "{{$range}}" }]{{end}}'
		# shellcheck disable=SC2016
		routes='{{range $i, $route := .Routes}}{{if $i}}, {{end}}{ "dst": "{{$route}}" }{{end}}'
		force='
      "forceAddress": true,'
	else
		ranges="[{ \"subnet\": \"$(subnet_of_index "$index")\" }]"
		routes='{ "dst": "0.0.0.0/0" }'
	fi
	cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "sergeant-$name",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$(bridge_of_index "$index")",
      "isGateway": true,$force
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [$ranges],
        "routes": [$routes],
        "dataDir": "$dir/cni/ipam"
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } },
    { "type": "loopback" }
  ]
}
EOF
}

# write_registry_hosts ADDR: the certs.d hosts.toml of a local registry. containerd reads
# certs.d at every pull, so a new registry needs no restart.
write_registry_hosts() {
	cat <<EOF
# Generated by node-env.sh: the local registry speaks plain HTTP.
server = "http://$1"

[host."http://$1"]
  capabilities = ["pull", "resolve", "push"]
  skip_verify = true
EOF
}

# The registries an instance pulls from: the caller's (--registry), else the shared two.
instance_registries() {
	if [[ -n $OWN_REGISTRY ]]; then echo "$OWN_REGISTRY"; else echo "$REGISTRY_ADDR $AUTH_REGISTRY_ADDR"; fi
}

# Write all files of an instance; succeed with "changed" on stdout if containerd's
# config differs from the one already there.
write_instance_files() {
	local name=$1 index=$2 dir new_config addr
	dir=$(instance_dir "$name")
	mkdir -p "$dir"/{root,state,runc,opt,cni/net.d,cni/ipam} "$RUN_DIR/logs"
	echo "$index" >"$dir/index"
	if [[ $CNI_FROM_POD_CIDR == true ]]; then
		rm -f "$dir/cni/net.d/10-sergeant.conflist"
		write_cni_conflist "$name" "$index" template >"$dir/cni/template.conflist"
	else
		rm -f "$dir/cni/template.conflist" "$dir/cni/net.d/10-containerd-net.conflist"
		write_cni_conflist "$name" "$index" >"$dir/cni/net.d/10-sergeant.conflist"
	fi
	rm -rf "$dir/certs.d"
	for addr in $(instance_registries); do
		mkdir -p "$dir/certs.d/$addr"
		write_registry_hosts "$addr" >"$dir/certs.d/$addr/hosts.toml"
	done
	new_config=$(write_containerd_config "$name")
	if [[ ! -f $dir/containerd.toml || $(<"$dir/containerd.toml") != "$new_config" ]]; then
		printf '%s\n' "$new_config" >"$dir/containerd.toml"
		echo changed
	fi
}

# ---------------------------------------------------------------------------------------
# instances: containerd

start_containerd() {
	local name=$1 config_changed=$2 dir sock log pid rc=0
	dir=$(instance_dir "$name")
	sock=$(instance_socket "$name")
	log=$(instance_log "$name")
	if pid=$(containerd_pid "$name"); then
		if [[ -z $config_changed ]]; then
			if wait_for "$START_TIMEOUT" "$pid" "containerd '$name' (pid $pid) to answer on $sock" \
				containerd_answers "$name" && cri_plugin_ok "$name"; then
				return 0
			fi
		fi
		log "restarting containerd '$name' (pid $pid): its config changed or it does not answer"
		stop_pid "$pid" "containerd '$name'"
	fi
	rm -f "$sock" "$sock.ttrpc"
	log "starting containerd '$name' on $sock (log $log)"
	echo "=== $(date -u +%FT%TZ) node-env.sh starts containerd" >>"$log"
	setsid containerd --config "$dir/containerd.toml" </dev/null >>"$log" 2>&1 9>&- &
	pid=$!
	echo "$pid" >"$dir/containerd.pid"
	wait_for "$START_TIMEOUT" "$pid" "containerd '$name' to answer on $sock" \
		containerd_answers "$name" || rc=$?
	((rc == 0)) || die "containerd '$name' exited at start; last lines of $log:$(printf '\n')$(tail -n 20 "$log")"
	cri_plugin_ok "$name" ||
		die "containerd '$name' runs but its CRI plugin did not load; see: grep -i 'level=warning.*cri' $log"
}

# Shim processes (containerd-shim-runc-v2) serving this instance's containerd.
instance_shims() {
	local sock pid
	sock=$(instance_socket "$1")
	for pid in $(pgrep -f -- 'containerd-shim' || true); do
		[[ " $(proc_cmdline "$pid") " == *" -address $sock "* ]] && echo "$pid"
	done
	return 0
}

# Best effort while containerd still answers: SIGKILL every task in every namespace so
# the shims see their containers exit.
kill_tasks_via_ctr() {
	local name=$1 sock ns task
	sock=$(instance_socket "$name")
	containerd_pid "$name" >/dev/null || return 0
	containerd_answers "$name" >/dev/null 2>&1 || return 0
	for ns in $(ctr --address "$sock" --timeout 5s namespaces ls -q 2>/dev/null); do
		for task in $(ctr --address "$sock" --timeout 5s -n "$ns" tasks ls -q 2>/dev/null); do
			ctr --address "$sock" --timeout 5s -n "$ns" tasks kill -a -s KILL "$task" >/dev/null 2>&1 || true
		done
	done
}

# Kill the shims of an instance and every process below them (the containers).
kill_shims() {
	local name=$1 pid
	local -a shims victims sockets=()
	mapfile -t shims < <(instance_shims "$name")
	((${#shims[@]})) || return 0
	for pid in "${shims[@]}"; do
		sockets+=("$(shim_socket_path "$pid")")
	done
	mapfile -t victims < <(proc_descendants "${shims[@]}")
	log "killing ${#shims[@]} shim(s) of '$name' and ${#victims[@]} process(es) below them"
	# Containers first, while their shim is alive to reap them at once; then the shims.
	kill_and_wait "$name" "${victims[@]}"
	kill_and_wait "$name" "${shims[@]}"
	remove_shim_sockets "${sockets[@]}"
}

# kill_and_wait INSTANCE PID...: SIGKILL the processes and wait until they are gone.
kill_and_wait() {
	local name=$1 pid
	shift
	for pid in "$@"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	for pid in "$@"; do
		wait_for_exit "$pid" "$STOP_TIMEOUT" || die "process $pid of instance '$name' does not die"
	done
}

# containerd 1.6 puts each shim's socket at /run/containerd/s/<sha256(address/ns/id)>,
# whatever its config says. Print that path for a running shim.
shim_socket_path() {
	local -a args
	local ns="" id="" addr="" i
	mapfile -d '' -t args <"/proc/$1/cmdline" 2>/dev/null || return 0
	for ((i = 0; i + 1 < ${#args[@]}; i++)); do
		case ${args[i]} in
		-namespace) ns=${args[i + 1]} ;;
		-id) id=${args[i + 1]} ;;
		-address) addr=${args[i + 1]} ;;
		esac
	done
	[[ -n $ns && -n $id && -n $addr ]] || return 0
	echo "/run/containerd/s/$(printf '%s' "$addr/$ns/$id" | sha256sum | cut -d' ' -f1)"
}

# A killed shim leaves its socket behind: remove those of our shims, and the directories
# if nothing else is left in them.
remove_shim_sockets() {
	local sock
	for sock in "$@"; do
		[[ $sock == /run/containerd/s/* ]] && rm -f "$sock"
	done
	return 0
}

# Remove /run/containerd/s and /run/containerd if the shims left them empty (a system
# containerd's files there are never touched).
remove_empty_shim_dirs() {
	rmdir /run/containerd/s /run/containerd 2>/dev/null || true
}

# The containerd namespaces and container ids this instance has state for, as "ns id"
# lines (id may be empty), from its runc roots and task state.
instance_containers() {
	local dir=$1 nsdir id
	for nsdir in "$dir"/runc/*/ "$dir"/state/io.containerd.runtime.v2.task/*/; do
		[[ -d $nsdir ]] || continue
		echo "$(basename "$nsdir") "
		for id in "$nsdir"*/; do
			if [[ -d $id ]]; then echo "$(basename "$nsdir") $(basename "$id")"; fi
		done
	done | sort -u
}

# Remove the empty cgroups of this instance's containers (cgroupfs path /NS/ID, used when
# CRI gets no cgroup_parent), then the /NS parents if empty. rmdir never removes a cgroup
# that still has processes or children, so other runtimes' cgroups are safe.
remove_container_cgroups() {
	local ns id controller
	local -A namespaces=()
	while read -r ns id; do
		[[ -n $ns ]] || continue
		namespaces[$ns]=1
		[[ -n $id ]] || continue
		for controller in /sys/fs/cgroup/*/; do
			[[ ! -d $controller$ns/$id ]] || rmdir "$controller$ns/$id" 2>/dev/null || true
		done
	done
	for ns in "${!namespaces[@]}"; do
		for controller in /sys/fs/cgroup/*/; do
			[[ ! -d $controller$ns ]] || rmdir "$controller$ns" 2>/dev/null || true
		done
	done
	return 0
}

# Remove what runc still knows about in this instance's runc roots (kills leftovers and
# frees their cgroups).
delete_runc_containers() {
	local name=$1 root id
	for root in "$(instance_dir "$name")"/runc/*/; do
		[[ -d $root ]] || continue
		for id in $(runc --root "$root" list -q 2>/dev/null); do
			runc --root "$root" delete -f "$id" >/dev/null 2>&1 ||
				log "warning: runc --root $root delete -f $id failed"
		done
	done
}

# libcni caches each attachment in /var/lib/cni/results/NETWORK-SANDBOXID-IFNAME and only
# drops it on a CNI DEL, which killed pods never get: remove this instance's entries
# (its own network, and the loopback network of its sandboxes).
remove_cni_cache() {
	local name=$1 dir=$2 id
	local -a ids=()
	local cache=/var/lib/cni/results
	[[ -d $cache ]] || return 0
	mapfile -t ids < <(
		for id in "$dir"/root/io.containerd.grpc.v1.cri/sandboxes/*/ "$dir"/state/io.containerd.grpc.v1.cri/sandboxes/*/; do
			if [[ -d $id ]]; then basename "$id"; fi
		done | sort -u
	)
	rm -f "$cache/sergeant-$name-"*
	for id in "${ids[@]}"; do
		rm -f "$cache/cni-loopback-$id-"*
	done
}

# Mount points at or below DIR, deepest first.
mounts_under() {
	local dir=$1
	awk -v dir="$dir" '
		function unescape(s) { gsub(/\\040/, " ", s); gsub(/\\011/, "\t", s); gsub(/\\012/, "\n", s); gsub(/\\134/, "\\", s); return s }
		{ mp = unescape($5); if (mp == dir || index(mp, dir "/") == 1) print gsub(/\//, "/", mp) "\t" mp }
	' /proc/self/mountinfo | sort -rn -k1,1 | cut -f2- | uniq
}

unmount_under() {
	local dir=$1 mp pass
	for pass in 1 2 3 4 5; do
		local -a mps=()
		mapfile -t mps < <(mounts_under "$dir")
		((${#mps[@]})) || return 0
		((pass > 1)) || log "unmounting ${#mps[@]} mount(s) under $dir"
		for mp in "${mps[@]}"; do
			umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || true
		done
	done
	mapfile -t mps < <(mounts_under "$dir")
	((${#mps[@]} == 0)) || die "could not unmount: ${mps[*]}"
}

# delete_bridge INDEX: delete the bridge of INDEX unless another running containerd (an
# instance of another run dir) has it in its CNI config.
delete_bridge() {
	local index=$1 bridge
	bridge=$(bridge_of_index "$index")
	if bridge_claimed_elsewhere "$index" ""; then
		log "leaving bridge $bridge: another containerd uses it"
		return 0
	fi
	if ip link show "$bridge" >/dev/null 2>&1; then
		log "deleting bridge $bridge"
		ip link delete "$bridge" || die "ip link delete $bridge failed"
	fi
}

instance_env() {
	local name=$1 index sock dir
	dir=$(instance_dir "$name")
	index=$(instance_index "$name")
	sock=$(instance_socket "$name")
	printf '%s=%q\n' \
		CONTAINERD_SOCKET "$sock" \
		CONTAINERD_ENDPOINT "unix://$sock" \
		CONTAINERD_NAMESPACE k8s.io \
		REGISTRY "${OWN_REGISTRY:-$REGISTRY_ADDR}" \
		AUTH_REGISTRY "$AUTH_REGISTRY_ADDR" \
		AUTH_REGISTRY_USER "$AUTH_REGISTRY_USER" \
		AUTH_REGISTRY_PASSWORD "$AUTH_REGISTRY_PASSWORD" \
		AUTH_IMAGE "$AUTH_IMAGE" \
		PAUSE_IMAGE "${SANDBOX_IMAGE:-$PAUSE_IMAGE}" \
		CNI_BRIDGE "$(bridge_of_index "$index")" \
		CNI_CONF_DIR "$dir/cni/net.d" \
		POD_SUBNET "$(if [[ ! -f $dir/cni/template.conflist ]]; then subnet_of_index "$index"; fi)" \
		SERGEANT_NODE_INSTANCE "$name" \
		SERGEANT_RUN_DIR "$RUN_DIR" \
		CONTAINERD_LOG "$(instance_log "$name")"
}

# reclaim_dead_instance NAME: when NAME's directory exists but its containerd is not running
# (killed, or the machine's processes were stopped without a reboot), free what that run left
# holding the node: its shims and containers, their cgroups, the network namespaces and shm
# mounts under its state directory (which keep pod interfaces on its bridge), its CNI cache.
# Images under its root stay, so the next start does not pull again.
reclaim_dead_instance() {
	local name=$1 dir containers
	dir=$(instance_dir "$name")
	[[ -d $dir ]] || return 0
	containerd_pid "$name" >/dev/null && return 0
	log "containerd '$name' is not running: reclaiming what its last run left"
	containers=$(instance_containers "$dir")
	kill_shims "$name"
	delete_runc_containers "$name"
	remove_container_cgroups <<<"$containers"
	unmount_under "$dir/state"
	remove_cni_cache "$name" "$dir"
}

instance_up() {
	local name=$1 index changed
	reclaim_dead_instance "$name"
	index=$(choose_index "$name")
	changed=$(write_instance_files "$name" "$index")
	start_containerd "$name" "$changed"
	instance_env "$name" >"$(instance_dir "$name")/env"
	cat "$(instance_dir "$name")/env"
}

instance_down() {
	local name=$1 dir index pid containers
	dir=$(instance_dir "$name")
	if [[ ! -d $dir ]] && [[ -z $(instance_shims "$name") ]]; then
		delete_bridge "$(instance_index "$name")"
		log "instance '$name' is not up"
		return 0
	fi
	index=$(instance_index "$name")
	containers=$(instance_containers "$dir")
	kill_tasks_via_ctr "$name"
	if pid=$(containerd_pid "$name"); then
		log "stopping containerd '$name' (pid $pid)"
		stop_pid "$pid" "containerd '$name'"
	fi
	kill_shims "$name"
	delete_runc_containers "$name"
	remove_container_cgroups <<<"$containers"
	remove_empty_shim_dirs
	unmount_under "$dir"
	delete_bridge "$index"
	remove_cni_cache "$name" "$dir"
	if [[ -d $dir ]]; then
		rm -rf --one-file-system "$dir" || die "could not remove $dir"
	fi
	log "instance '$name' is down"
}

# ---------------------------------------------------------------------------------------
# commands

parse_args() {
	while (($#)); do
		case $1 in
		--instance)
			INSTANCE=${2:?--instance needs a name}
			shift 2
			;;
		--index)
			INSTANCE_INDEX=${2:?--index needs a number}
			if ! [[ $INSTANCE_INDEX =~ ^[0-9]+$ ]] || ((INSTANCE_INDEX < 1 || INSTANCE_INDEX > 99)); then
				die "--index must be 1..99 (0 is instance main)"
			fi
			shift 2
			;;
		--run-dir)
			RUN_DIR=${2:?--run-dir needs a directory}
			shift 2
			;;
		--all)
			ALL_INSTANCES=true
			shift
			;;
		--registry)
			OWN_REGISTRY=${2:?--registry needs HOST:PORT}
			[[ $OWN_REGISTRY =~ ^[A-Za-z0-9.-]+:[0-9]+$ ]] || die "--registry must be HOST:PORT, not '$OWN_REGISTRY'"
			shift 2
			;;
		--sandbox-image)
			SANDBOX_IMAGE=${2:?--sandbox-image needs an image reference}
			shift 2
			;;
		--cni-from-pod-cidr)
			CNI_FROM_POD_CIDR=true
			shift
			;;
		*) die "unknown option '$1' (see the header of $0)" ;;
		esac
	done
	validate_instance_name "$INSTANCE"
	[[ $RUN_DIR == /* ]] || die "--run-dir must be an absolute path"
	[[ -z $OWN_REGISTRY || -n $SANDBOX_IMAGE ]] || die "--registry needs --sandbox-image (the default pause image is on $REGISTRY_ADDR)"
	RUN_DIR=${RUN_DIR%/}
}

cmd_up() {
	require_root
	require_tools containerd containerd-shim-runc-v2 ctr runc docker-registry skopeo gcc busybox \
		python3 ip flock readelf ps pgrep htpasswd "$CNI_BIN_DIR/bridge"
	mkdir -p "$RUN_DIR"
	if [[ -z $OWN_REGISTRY ]]; then
		mkdir -p "$(registry_dir plain)" "$(registry_dir auth)"
		(
			take_lock "$RUN_DIR/.lock"
			start_registry plain
			ensure_images
			start_registry auth
			ensure_auth_image
		)
	fi
	take_lock "$RUN_DIR/.lock-$INSTANCE"
	instance_up "$INSTANCE"
}

# Frees host port 5000 for a while (upstream's conformance specs start a registry of their
# own there) without touching the instances: the storage is kept, registry-start serves it again.
# Prints "stopped" when it stopped a registry this run dir had started, nothing otherwise.
cmd_registry_stop() {
	require_root
	[[ -d $RUN_DIR ]] || return 0
	take_lock "$RUN_DIR/.lock"
	if registry_pid plain >/dev/null; then
		stop_registry plain
		echo stopped
	fi
}

cmd_registry_start() {
	require_root
	require_tools docker-registry python3
	mkdir -p "$(registry_dir plain)"
	take_lock "$RUN_DIR/.lock"
	start_registry plain
}

cmd_down() {
	require_root
	[[ -d $RUN_DIR ]] || { log "nothing to do: $RUN_DIR does not exist"; return 0; }
	local name
	if $ALL_INSTANCES; then
		take_lock "$RUN_DIR/.lock"
		for name in $(list_instances); do
			instance_down "$name"
		done
		stop_registry plain
		stop_registry auth
		# Bridges of instances whose directory is already gone.
		local bridge
		for bridge in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '$2 ~ /^sgt[0-9]+$/ { print $2 }'); do
			delete_bridge "${bridge#sgt}"
		done
	else
		take_lock "$RUN_DIR/.lock-$INSTANCE"
		instance_down "$INSTANCE"
	fi
}

cmd_env() {
	containerd_pid "$INSTANCE" >/dev/null || die "instance '$INSTANCE' is not up (run dir $RUN_DIR)"
	cat "$(instance_dir "$INSTANCE")/env"
}

cmd_status() {
	local pid name state shims mounts bridge
	local kind addr
	for kind in plain auth; do
		addr=$(registry_addr "$kind")
		if pid=$(registry_pid "$kind"); then
			echo "$kind registry: running (pid $pid) on $addr, storage $(registry_dir "$kind")/storage"
		elif registry_answers "$kind"; then
			echo "$kind registry: a registry not started by this run dir answers on $addr"
		else
			echo "$kind registry: down"
		fi
	done
	local found=false
	for name in $(list_instances); do
		found=true
		if pid=$(containerd_pid "$name"); then
			if containerd_answers "$name" >/dev/null 2>&1; then state="running (pid $pid)"; else state="not answering (pid $pid)"; fi
		else
			state="down"
		fi
		shims=$(instance_shims "$name" | wc -l)
		mounts=$(mounts_under "$(instance_dir "$name")" | wc -l)
		bridge=$(bridge_of_index "$(instance_index "$name")")
		ip link show "$bridge" >/dev/null 2>&1 && bridge="$bridge (up)" || bridge="$bridge (not created yet)"
		echo "instance $name: containerd $state, socket $(instance_socket "$name"), $shims shim(s), $mounts mount(s), bridge $bridge, subnet $(subnet_of_index "$(instance_index "$name")")"
	done
	$found || echo "instances: none under $RUN_DIR"
}

main() {
	local cmd=${1:-}
	[[ -n $cmd ]] || die "usage: $0 install|up|down|status|env|registry-stop|registry-start [options] (see the header of $0)"
	shift
	parse_args "$@"
	case $cmd in
	install) cmd_install ;;
	up) cmd_up ;;
	down) cmd_down ;;
	status) cmd_status ;;
	env) cmd_env ;;
	registry-stop) cmd_registry_stop ;;
	registry-start) cmd_registry_start ;;
	-h | --help | help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' ;;
	*) die "unknown command '$cmd' (expected install, up, down, status, env, registry-stop or registry-start)" ;;
	esac
}

# Sourced (tests/conformance/images.sh reuses the rootfs builders), it only defines functions.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
fi
