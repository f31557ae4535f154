#!/usr/bin/env bash
# Builds the whole workspace (libraries and binaries: sergeant.exe, sergeant-fake-cri.exe) for
# x86_64-pc-windows-gnu with Debian's Rust and -Zbuild-std, after tests/windows/setup.sh has
# installed the toolchain. Fails on any compile error. Prints the time it took.
#
# Cold (empty target directory) it builds the standard library and every dependency for the
# target; warm, only what changed. The target directory is $WIN_TARGET_DIR (see env.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/windows/env.sh
. "$here/env.sh"

bash "$here/setup.sh"
start=$(date +%s)
cd "$repo"
# The Windows build carries no debug info: it is built to be run under Wine, not debugged, and
# keeps the target directory small.
CARGO_TARGET_DIR="$WIN_TARGET_DIR" CARGO_PROFILE_DEV_DEBUG=0 RUSTC="$WIN_RUSTC" RUSTC_BOOTSTRAP=1 \
    "$WIN_CARGO" build -Zbuild-std --target "$WIN_TARGET" --workspace --bins --lib
echo "== windows build: $WIN_TARGET_DIR/$WIN_TARGET/debug/sergeant.exe in $(($(date +%s) - start)) s"
