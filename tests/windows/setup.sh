#!/usr/bin/env bash
# Prepares this machine to build sergeant for Windows and run it under Wine. Idempotent: a
# second run checks and returns in about a second.
#
#   1. apt-installs Debian's newer Rust (rustc-web, cargo-web, rust-web-src: the standard
#      library's source, built for the target with -Zbuild-std), the mingw-w64 linker and Wine 8;
#   2. builds the bcryptprimitives.dll stand-in (tests/windows/bcryptprimitives.c) that Rust's
#      std needs and Wine 8 lacks;
#   3. creates a Wine prefix without any dialog (no Mono, no Gecko, no display) and puts the DLL
#      in its system32, so every .exe run in the prefix loads.
#
# Prints the time each step took. Other scripts source tests/windows/env.sh for the paths.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/windows/env.sh
. "$here/env.sh"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
seconds_since() { local ms=$(($(now_ms) - $1)); printf '%d.%d s' $((ms / 1000)) $((ms % 1000 / 100)); }
step_start=0
step() { step_start=$(now_ms); printf '== windows setup: %s\n' "$*"; }
done_step() { printf '   %s\n' "$(seconds_since "$step_start")"; }

packages=(rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 wine64)

install_packages() {
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "   installing: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    "$WIN_RUSTC" --version
    "$WIN_LINKER" --version | head -n1
    "$WINE" --version
}

build_shim() {
    mkdir -p "$WIN_TOOLS_DIR"
    local dll="$WIN_TOOLS_DIR/bcryptprimitives.dll"
    if [ ! -f "$dll" ] || [ "$here/bcryptprimitives.c" -nt "$dll" ]; then
        "$WIN_LINKER" -shared -O2 -o "$dll.tmp" "$here/bcryptprimitives.c" -ladvapi32
        mv "$dll.tmp" "$dll"
    fi
}

prepare_prefix() {
    local system32="$WINEPREFIX/drive_c/windows/system32"
    if [ ! -f "$WINEPREFIX/system.reg" ]; then
        mkdir -p "$WINEPREFIX"
        # mscoree/mshtml disabled: wineboot would otherwise offer to download Mono and Gecko.
        WINEDLLOVERRIDES="mscoree,mshtml=" DISPLAY='' "$WINE" wineboot --init >/dev/null 2>&1
        "$WINESERVER" -w
    fi
    if ! cmp -s "$WIN_TOOLS_DIR/bcryptprimitives.dll" "$system32/bcryptprimitives.dll"; then
        cp "$WIN_TOOLS_DIR/bcryptprimitives.dll" "$system32/bcryptprimitives.dll"
    fi
}

main() {
    local t0
    t0=$(now_ms)
    step "packages (${packages[*]})"; install_packages; done_step
    step "bcryptprimitives.dll stand-in"; build_shim; done_step
    step "wine prefix $WINEPREFIX"; prepare_prefix; done_step
    printf '== windows setup done in %s\n' "$(seconds_since "$t0")"
}

main "$@"
