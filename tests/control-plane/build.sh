#!/usr/bin/env bash
# Builds the control plane the tests run against -- kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd, plus the upstream kubelet and kubectl for comparisons -- from the one
# Kubernetes release pinned in VERSION, through the Go module proxy.
#
# k8s.io/kubernetes lists its staging modules (k8s.io/api, k8s.io/apimachinery, ...) at v0.0.0
# and replaces them with ./staging directories, which a dependent module cannot see. So a small
# module in the cache requires k8s.io/kubernetes at the pinned version and replaces every one of
# those staging modules with its published twin k8s.io/NAME v0.MINOR.PATCH; the replace list is
# generated from the downloaded go.mod of that release. etcd is built from its own module
# (go.etcd.io/etcd/server/v3 at ETCD_VERSION, whose root package is the etcd main).
#
# Output: $CP_CACHE_DIR/<kubernetes version>/bin/{kube-apiserver,kube-controller-manager,
# kube-scheduler,kubelet,kubectl,etcd}. A stamp file there makes a second run a no-op; the Go
# module and build caches (GOMODCACHE, GOCACHE) make a rebuild after a recipe change fast.
#
# Usage: build.sh [--force]
# Env:   CP_CACHE_DIR (default ~/.cache/sergeant/control-plane), GO (go binary),
#        GOTOOLCHAIN (default local). The last line printed is CONTROL_PLANE_BIN=<dir>.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=VERSION
# shellcheck disable=SC1091 # VERSION holds plain assignments
. "$here/VERSION"
: "${KUBERNETES_VERSION:?VERSION must set KUBERNETES_VERSION}"
: "${ETCD_VERSION:?VERSION must set ETCD_VERSION}"

force=0
case "${1:-}" in
    --force) force=1 ;;
    "") ;;
    *) echo "usage: build.sh [--force]" >&2; exit 2 ;;
esac

log() { printf '[control-plane build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- Go toolchain -------------------------------------------------------------------------
GO=${GO:-}
if [ -z "$GO" ]; then
    if command -v go >/dev/null 2>&1; then GO=$(command -v go)
    elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
    else die "no Go toolchain (go on PATH or /usr/local/go/bin/go)"; fi
fi
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export CGO_ENABLED=0          # static binaries, as upstream releases them; no C toolchain needed
export GOMAXPROCS=${GOMAXPROCS:-2}
export GOFLAGS=${GOFLAGS:-}   # keep whatever the caller set (e.g. -buildvcs=false)

# v1.MINOR.PATCH -> staging modules are published as v0.MINOR.PATCH.
kv=${KUBERNETES_VERSION#v}
k_major=${kv%%.*}
k_minor=${kv#*.}; k_minor=${k_minor%%.*}
k_rest=${kv#*.*.}
staging_version="v0.${k_minor}.${k_rest}"
[ "$k_major" = 1 ] || die "unexpected Kubernetes version $KUBERNETES_VERSION"

# --- Cache layout, lock, stamp ------------------------------------------------------------
cache=${CP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sergeant/control-plane}
root="$cache/$KUBERNETES_VERSION"
src="$root/src"
src_etcd="$root/src-etcd"
bin="$root/bin"
stamp="$bin/.stamp"
mkdir -p "$src" "$src_etcd" "$bin"

exec 9>"$root/.lock"
flock 9   # concurrent callers wait for one build instead of racing it

binaries=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd)
recipe=$(cat "$here/VERSION" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)
want_stamp="kubernetes=$KUBERNETES_VERSION etcd=$ETCD_VERSION recipe=$recipe"

all_present() {
    local b
    for b in "${binaries[@]}"; do [ -x "$bin/$b" ] || return 1; done
}

if [ "$force" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ] && all_present; then
    log "up to date: $bin ($want_stamp)"
    echo "CONTROL_PLANE_BIN=$bin"
    exit 0
fi
rm -f "$stamp"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# CPU seconds (user+system) of this shell's finished children, from /proc/$$/stat.
clk_tck=$(getconf CLK_TCK)
cpu_now() {
    local st
    read -r -a st <"/proc/$$/stat"
    cpu=$(( st[15] + st[16] ))
}
cpu_since() { local before=$1; cpu_now; awk -v a="$before" -v b="$cpu" -v t="$clk_tck" 'BEGIN { printf "%.0f", (b - a) / t }'; }
t_start=$(now)
cpu_now; cpu_start=$cpu
timings=()
log "building Kubernetes $KUBERNETES_VERSION (staging modules $staging_version) and etcd $ETCD_VERSION"
log "go: $("$GO" version), GOTOOLCHAIN=$GOTOOLCHAIN, GOMAXPROCS=$GOMAXPROCS, GOCACHE=$("$GO" env GOCACHE), GOMODCACHE=$("$GO" env GOMODCACHE)"

# set_gomod DIR CONTENT: `go get` below adds the full requirement list to DIR/go.mod, so the
# generated content is kept next to it (go.mod.gen) and go.mod is reset -- and marked for a new
# resolve -- only when the generated content changes. Rewriting go.mod on every run would change
# the selected versions (v0.0.0+replace vs v0.MINOR.PATCH) and with them every Go cache key.
set_gomod() {
    local dir=$1 content=$2
    if [ ! -f "$dir/go.mod" ] || [ ! -f "$dir/go.mod.gen" ] || [ "$(cat "$dir/go.mod.gen")" != "$content" ]; then
        printf '%s\n' "$content" >"$dir/go.mod.gen"
        cp "$dir/go.mod.gen" "$dir/go.mod"
        rm -f "$dir/.resolved"
    fi
    touch "$dir/go.sum"
}

# --- 1. Resolve modules (downloads) -------------------------------------------------------
t=$(now); cpu_now; c=$cpu
k8s_gomod=$(cd "$root" && "$GO" mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[ -f "$k8s_gomod" ] || die "could not download k8s.io/kubernetes@$KUBERNETES_VERSION"
go_line=$(awk '$1 == "go" { print $2; exit }' "$k8s_gomod")

# Every k8s.io module that k8s.io/kubernetes requires at v0.0.0 is a staging module.
mapfile -t staging < <(awk '
    $1 == "require" && $3 == "v0.0.0" && $2 ~ /^k8s\.io\// { print $2; next }
    $2 == "v0.0.0" && $1 ~ /^k8s\.io\// { print $1 }' "$k8s_gomod" | sort -u)
[ "${#staging[@]}" -gt 10 ] || die "found only ${#staging[@]} staging modules in $k8s_gomod"

gomod="module sergeant.invalid/control-plane

go $go_line

require k8s.io/kubernetes $KUBERNETES_VERSION

// Generated by tests/control-plane/build.sh from k8s.io/kubernetes@$KUBERNETES_VERSION/go.mod.
replace ("
for m in "${staging[@]}"; do
    gomod+=$'\n'"	$m => $m $staging_version"
done
gomod+=$'\n'")"
set_gomod "$src" "$gomod"

k8s_core=(cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler)
k8s_extra=(cmd/kubelet cmd/kubectl)
k8s_pkgs=()
for p in "${k8s_core[@]}" "${k8s_extra[@]}"; do k8s_pkgs+=("k8s.io/kubernetes/$p@$KUBERNETES_VERSION"); done
# go get records every module and checksum the commands need; skipped when this exact go.mod
# was resolved before (the marker is written only after a successful resolve).
resolved_marker="kubernetes=$KUBERNETES_VERSION etcd=$ETCD_VERSION staging=$staging_version"
resolved() { [ -s "$1/go.sum" ] && [ -f "$1/.resolved" ] && [ "$(cat "$1/.resolved")" = "$resolved_marker" ]; }
if ! resolved "$src"; then
    (cd "$src" && nice -n 19 "$GO" get "${k8s_pkgs[@]}") || die "go get of the Kubernetes commands failed"
    printf '%s\n' "$resolved_marker" >"$src/.resolved"
fi

set_gomod "$src_etcd" "module sergeant.invalid/etcd

go $go_line

require go.etcd.io/etcd/server/v3 $ETCD_VERSION"
if ! resolved "$src_etcd"; then
    (cd "$src_etcd" && nice -n 19 "$GO" get "go.etcd.io/etcd/server/v3@$ETCD_VERSION") || die "go get of etcd failed"
    printf '%s\n' "$resolved_marker" >"$src_etcd/.resolved"
fi
timings+=("resolve+download $(elapsed "$t")s (cpu $(cpu_since "$c")s)")
log "modules resolved (${#staging[@]} staging modules replaced) in $(elapsed "$t")s"

# --- 2. Compile ---------------------------------------------------------------------------
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=$k_major -X $pkg.gitMinor=$k_minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

gobuild() { (cd "$1" && shift && nice -n 19 "$GO" build -trimpath "$@"); }

t=$(now); cpu_now; c=$cpu
core_pkgs=()
for p in "${k8s_core[@]}"; do core_pkgs+=("k8s.io/kubernetes/$p"); done
gobuild "$src" -ldflags "$ldflags" -o "$bin/" "${core_pkgs[@]}"
timings+=("compile apiserver+controller-manager+scheduler $(elapsed "$t")s (cpu $(cpu_since "$c")s)")
log "built ${k8s_core[*]} in $(elapsed "$t")s"

t=$(now); cpu_now; c=$cpu
gobuild "$src_etcd" -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3
timings+=("compile etcd $(elapsed "$t")s (cpu $(cpu_since "$c")s)")
log "built etcd in $(elapsed "$t")s"

t=$(now); cpu_now; c=$cpu
extra_pkgs=()
for p in "${k8s_extra[@]}"; do extra_pkgs+=("k8s.io/kubernetes/$p"); done
gobuild "$src" -ldflags "$ldflags" -o "$bin/" "${extra_pkgs[@]}"
timings+=("compile kubelet+kubectl $(elapsed "$t")s (cpu $(cpu_since "$c")s)")
log "built ${k8s_extra[*]} in $(elapsed "$t")s"

all_present || die "a binary is missing from $bin"
got=$("$bin/kube-apiserver" --version 2>&1 || true)
[ "$got" = "Kubernetes $KUBERNETES_VERSION" ] || die "kube-apiserver --version says '$got'"

timings+=("total $(elapsed "$t_start")s (cpu $(cpu_since "$cpu_start")s)")
printf '%s\n' "$want_stamp" >"$stamp"
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    printf '  %s\n' "${timings[@]}"
    printf '  load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$root/build-times.log"
log "timings: $(IFS=';'; echo "${timings[*]}")"
log "done: $bin ($(du -sh "$bin" | cut -f1))"
echo "CONTROL_PLANE_BIN=$bin"
