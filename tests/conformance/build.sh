#!/usr/bin/env bash
# Builds what upstream's node conformance suite needs, from the Kubernetes release pinned in
# tests/control-plane/VERSION, through the Go module proxy:
#   e2e.test  a trimmed test binary: upstream's RunE2ETests (k8s.io/kubernetes/test/e2e) linked
#             with only the spec packages the [NodeConformance] specs live in
#             (test/e2e/common/{node,storage,network} and test/e2e/apps); see e2e/e2e_test.go
#   ginkgo    the ginkgo CLI at the version the release's go.mod pins
#   agnhost   test/images/agnhost of the same release (the images.sh agnhost image)
#   nnp       test/images/nonewprivs of the same release (the images.sh nonewprivs image)
#
# Like tests/control-plane/build.sh, a small module in the cache requires k8s.io/kubernetes at
# the pinned version and replaces every staging module (listed at v0.0.0 in the release's
# go.mod) with its published twin k8s.io/NAME v0.MINOR.PATCH. The Go build flags match the
# control plane's (-trimpath, CGO_ENABLED=0), so the packages both link come from one cache.
#
# Output: $CONFORMANCE_CACHE_DIR/<version>/bin/{e2e.test,ginkgo,agnhost,nnp}. A stamp there (the
# version plus a hash of this script, VERSION and e2e/) makes a second run a no-op; a flock
# serialises concurrent callers. Compiles run under nice -n 19. The script prints the wall and
# CPU time of each phase (also appended to build-times.log); its last stdout line is
# CONFORMANCE_BIN=<dir>.
#
# Usage: build.sh [--force]
# Env:   CONFORMANCE_CACHE_DIR (default ~/.cache/sergeant/conformance), GO, GOTOOLCHAIN (local).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version_file="$here/../control-plane/VERSION"
# shellcheck source=../control-plane/VERSION
# shellcheck disable=SC1091 # plain assignments
. "$version_file"
: "${KUBERNETES_VERSION:?VERSION must set KUBERNETES_VERSION}"

force=0
case "${1:-}" in
    --force) force=1 ;;
    "") ;;
    *) echo "usage: build.sh [--force]" >&2; exit 2 ;;
esac

log() { printf '[conformance build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

GO=${GO:-}
if [ -z "$GO" ]; then
    if command -v go >/dev/null 2>&1; then GO=$(command -v go)
    elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
    else die "no Go toolchain (go on PATH or /usr/local/go/bin/go)"; fi
fi
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export CGO_ENABLED=0
export GOMAXPROCS=${GOMAXPROCS:-2}
export GOFLAGS=${GOFLAGS:-}

kv=${KUBERNETES_VERSION#v}
k_major=${kv%%.*}
k_minor=${kv#*.}; k_minor=${k_minor%%.*}
staging_version="v0.${kv#*.}"
[ "$k_major" = 1 ] || die "unexpected Kubernetes version $KUBERNETES_VERSION"

cache=${CONFORMANCE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sergeant/conformance}
root="$cache/$KUBERNETES_VERSION"
src="$root/src"
bin="$root/bin"
stamp="$bin/.stamp"
mkdir -p "$src" "$bin"

exec 9>"$root/.lock"
flock 9

binaries=(e2e.test ginkgo agnhost nnp)
recipe=$(cat "$version_file" "${BASH_SOURCE[0]}" "$here"/e2e/* | sha256sum | cut -c1-16)
want_stamp="kubernetes=$KUBERNETES_VERSION recipe=$recipe"
all_present() {
    local b
    for b in "${binaries[@]}"; do [ -x "$bin/$b" ] || return 1; done
}
if [ "$force" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ] && all_present; then
    log "up to date: $bin ($want_stamp)"
    echo "CONFORMANCE_BIN=$bin"
    exit 0
fi
rm -f "$stamp"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
clk_tck=$(getconf CLK_TCK)
# CPU seconds (user+system) of this shell's finished children.
cpu_now() { local st; read -r -a st <"/proc/$$/stat"; cpu=$((st[15] + st[16])); }
cpu_since() { local before=$1; cpu_now; awk -v a="$before" -v b="$cpu" -v t="$clk_tck" 'BEGIN { printf "%.0f", (b - a) / t }'; }
timings=()
t_start=$(now); cpu_now; cpu_start=$cpu
log "building e2e.test, ginkgo, agnhost of Kubernetes $KUBERNETES_VERSION"
log "go: $("$GO" version), GOCACHE=$("$GO" env GOCACHE), GOMODCACHE=$("$GO" env GOMODCACHE)"

# --- 1. the module: k8s.io/kubernetes with its staging modules replaced -------------------
t=$(now); cpu_now; c=$cpu
k8s_gomod=$(cd "$root" && "$GO" mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[ -f "$k8s_gomod" ] || die "could not download k8s.io/kubernetes@$KUBERNETES_VERSION"
go_line=$(awk '$1 == "go" { print $2; exit }' "$k8s_gomod")
ginkgo_version=$(awk '$1 == "github.com/onsi/ginkgo/v2" { print $2; exit }' "$k8s_gomod")
[ -n "$ginkgo_version" ] || die "the release's go.mod pins no github.com/onsi/ginkgo/v2"
mapfile -t staging < <(awk '
    $1 == "require" && $3 == "v0.0.0" && $2 ~ /^k8s\.io\// { print $2; next }
    $2 == "v0.0.0" && $1 ~ /^k8s\.io\// { print $1 }' "$k8s_gomod" | sort -u)
[ "${#staging[@]}" -gt 10 ] || die "found only ${#staging[@]} staging modules in $k8s_gomod"

gomod="module sergeant.invalid/conformance

go $go_line

require (
	k8s.io/kubernetes $KUBERNETES_VERSION
	github.com/onsi/ginkgo/v2 $ginkgo_version
)

// The commands built besides the test binary; tool lines keep their dependencies through
// go mod tidy.
tool (
	github.com/onsi/ginkgo/v2/ginkgo
	k8s.io/kubernetes/test/images/agnhost
	k8s.io/kubernetes/test/images/nonewprivs
)

// Generated by tests/conformance/build.sh from k8s.io/kubernetes@$KUBERNETES_VERSION/go.mod.
replace ("
for m in "${staging[@]}"; do gomod+=$'\n'"	$m => $m $staging_version"; done
gomod+=$'\n'")"

# go mod tidy rewrites go.mod with the full requirement list: the generated text is kept beside
# it, and go.mod is reset (and resolved again) only when that text or the test files change.
rm -f "$src"/*_test.go
cp "$here"/e2e/*_test.go "$src/"
resolved_marker="$(printf '%s\n' "$gomod" | cat - "$src"/*_test.go | sha256sum | cut -c1-16)"
if [ ! -f "$src/.resolved" ] || [ "$(cat "$src/.resolved")" != "$resolved_marker" ]; then
    printf '%s\n' "$gomod" >"$src/go.mod"
    rm -f "$src/go.sum"
    (cd "$src" && nice -n 19 "$GO" mod tidy) || die "go mod tidy failed"
    printf '%s\n' "$resolved_marker" >"$src/.resolved"
fi
got_ginkgo=$(cd "$src" && "$GO" list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)
[ "$got_ginkgo" = "$ginkgo_version" ] || die "ginkgo resolved to $got_ginkgo, the release pins $ginkgo_version"
timings+=("resolve+download $(elapsed "$t")s (cpu $(cpu_since "$c")s)")

# --- 2. compile ---------------------------------------------------------------------------
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=$k_major -X $pkg.gitMinor=$k_minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

t=$(now); cpu_now; c=$cpu
(cd "$src" && nice -n 19 "$GO" build -trimpath -ldflags "-s -w" -o "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo) ||
    die "building ginkgo failed"
timings+=("compile ginkgo $(elapsed "$t")s (cpu $(cpu_since "$c")s)")
log "built ginkgo $ginkgo_version in $(elapsed "$t")s"

t=$(now); cpu_now; c=$cpu
(cd "$src" && nice -n 19 "$GO" build -trimpath -ldflags "$ldflags" -o "$bin/agnhost" k8s.io/kubernetes/test/images/agnhost) ||
    die "building agnhost failed"
timings+=("compile agnhost $(elapsed "$t")s (cpu $(cpu_since "$c")s)")
log "built agnhost in $(elapsed "$t")s"

t=$(now); cpu_now; c=$cpu
(cd "$src" && nice -n 19 "$GO" build -trimpath -ldflags "-s -w" -o "$bin/nnp" k8s.io/kubernetes/test/images/nonewprivs) ||
    die "building nnp failed"
timings+=("compile nnp $(elapsed "$t")s (cpu $(cpu_since "$c")s)")

# -vet=off: e2e_test.go drops a context's cancel function on purpose (see boundNode there).
t=$(now); cpu_now; c=$cpu
(cd "$src" && nice -n 19 "$GO" test -c -vet=off -trimpath -ldflags "$ldflags" -o "$bin/e2e.test" .) ||
    die "building e2e.test failed"
timings+=("compile e2e.test $(elapsed "$t")s (cpu $(cpu_since "$c")s)")
log "built e2e.test in $(elapsed "$t")s"

all_present || die "a binary is missing from $bin"
got=$("$bin/e2e.test" --version 2>&1 | head -n 1 || true)
case "$got" in
    *"$KUBERNETES_VERSION"*) ;;
    *) die "e2e.test --version says '$got'" ;;
esac

timings+=("total $(elapsed "$t_start")s (cpu $(cpu_since "$cpu_start")s)")
printf '%s\n' "$want_stamp" >"$stamp"
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    printf '  %s\n' "${timings[@]}"
    printf '  load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$root/build-times.log"
log "timings: $(IFS=';'; echo "${timings[*]}")"
log "done: $bin ($(du -sh "$bin" | cut -f1))"
echo "CONFORMANCE_BIN=$bin"
