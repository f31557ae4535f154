# shellcheck shell=bash
# Shared by the Go builds of the pinned release: tests/control-plane/build.sh (the control plane)
# and tests/conformance/build.sh (the node conformance suite). Sourcing it only defines
# functions. The caller sets KUBERNETES_VERSION and defines log and die.
#
#   build_args ARGS...     parses the builds' one option: sets force=1 for --force, exits 2 on
#                          anything else
#   go_setup               picks the toolchain ($GO) and exports the build environment: local
#                          toolchain, static binaries (CGO_ENABLED=0), GOMAXPROCS 2 by default
#   k8s_release_gomod DIR  downloads k8s.io/kubernetes@KUBERNETES_VERSION's go.mod (from DIR)
#                          and sets k8s_gomod (its path), go_line, staging (the k8s.io modules it
#                          lists at v0.0.0, i.e. its ./staging directories), staging_version
#                          (v0.MINOR.PATCH, their published twins), k_major and k_minor
#   staging_replaces       the `replace ( ... )` block of a module that requires the release
#   k8s_ldflags            sets ldflags: stripped, version stamped like a release build
#   build_begin VAR        with the caller's bin, binaries, want_stamp and force: when bin/.stamp
#                          holds want_stamp and every binary is there, prints VAR=bin and exits
#                          0; otherwise drops the stamp and starts the "total" timer
#   build_finish VAR ROOT  checks every binary is there, writes the stamp, appends the timings
#                          to ROOT/build-times.log, prints VAR=bin
#   timer_start NAME / timer_note NAME
#                          wall and CPU time of a phase; timer_note appends "NAME Ws (cpu Cs)"
#                          to the caller's timings array and logs it

build_args() {
    force=0
    case "${1:-}" in
        --force) force=1 ;;
        "") ;;
        *) echo "usage: $(basename "$0") [--force]" >&2; exit 2 ;;
    esac
}

go_setup() {
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
}

k8s_release_gomod() {
    local dir=$1 kv=${KUBERNETES_VERSION#v}
    # v1.MINOR.PATCH -> staging modules are published as v0.MINOR.PATCH.
    k_major=${kv%%.*}
    k_minor=${kv#*.}; k_minor=${k_minor%%.*}
    staging_version="v0.${kv#*.}"
    [ "$k_major" = 1 ] || die "unexpected Kubernetes version $KUBERNETES_VERSION"
    k8s_gomod=$(cd "$dir" && "$GO" mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" |
        sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
    [ -f "$k8s_gomod" ] || die "could not download k8s.io/kubernetes@$KUBERNETES_VERSION"
    go_line=$(awk '$1 == "go" { print $2; exit }' "$k8s_gomod")
    mapfile -t staging < <(awk '
        $1 == "require" && $3 == "v0.0.0" && $2 ~ /^k8s\.io\// { print $2; next }
        $2 == "v0.0.0" && $1 ~ /^k8s\.io\// { print $1 }' "$k8s_gomod" | sort -u)
    [ "${#staging[@]}" -gt 10 ] || die "found only ${#staging[@]} staging modules in $k8s_gomod"
}

staging_replaces() {
    local m
    printf 'replace ('
    for m in "${staging[@]}"; do printf '\n\t%s => %s %s' "$m" "$m" "$staging_version"; done
    printf '\n)'
}

k8s_ldflags() {
    local pkg
    ldflags="-s -w"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=$k_major -X $pkg.gitMinor=$k_minor"
        ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
    done
}

binaries_present() {
    local name
    for name in "${binaries[@]}"; do [ -x "$bin/$name" ] || return 1; done
}

build_begin() {
    if [ "$force" = 0 ] && [ -f "$bin/.stamp" ] && [ "$(cat "$bin/.stamp")" = "$want_stamp" ] &&
        binaries_present; then
        log "up to date: $bin ($want_stamp)"
        echo "$1=$bin"
        exit 0
    fi
    rm -f "$bin/.stamp"
    timings=()
    timer_start total
}

build_finish() {
    binaries_present || die "a binary is missing from $bin"
    timer_note total
    printf '%s\n' "$want_stamp" >"$bin/.stamp"
    {
        date -u +%Y-%m-%dT%H:%M:%SZ
        printf '  %s\n' "${timings[@]}"
        printf '  load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
    } >>"$2/build-times.log"
    log "timings: $(IFS=';'; echo "${timings[*]}")"
    log "done: $bin ($(du -sh "$bin" | cut -f1))"
    echo "$1=$bin"
}

# CPU seconds (user+system) of this shell's finished children, from /proc/$$/stat, in clock
# ticks.
_go_build_cpu_ticks() {
    local st
    read -r -a st <"/proc/$$/stat"
    echo $((st[15] + st[16]))
}

declare -gA _timer_wall=() _timer_cpu=()

timer_start() {
    _timer_wall[$1]=$(date +%s.%N)
    _timer_cpu[$1]=$(_go_build_cpu_ticks)
}

timer_note() {
    local wall cpu
    wall=$(awk -v a="${_timer_wall[$1]}" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    cpu=$(awk -v a="${_timer_cpu[$1]}" -v b="$(_go_build_cpu_ticks)" -v t="$(getconf CLK_TCK)" \
        'BEGIN { printf "%.0f", (b - a) / t }')
    timings+=("$1 ${wall}s (cpu ${cpu}s)")
    log "$1: ${wall}s (cpu ${cpu}s)"
}
