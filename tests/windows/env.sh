# Paths shared by the Windows test scripts (sourced, not run). Every value can be overridden
# from the environment.
# shellcheck shell=bash

# Debian's Rust 1.96 (rustc-web), called by full path: the rustup toolchain stays the default.
WIN_RUSTC=${WIN_RUSTC:-/usr/bin/rustc}
WIN_CARGO=${WIN_CARGO:-/usr/bin/cargo}
WIN_LINKER=${WIN_LINKER:-x86_64-w64-mingw32-gcc}
WIN_TARGET=x86_64-pc-windows-gnu
# The Windows build's own target directory (the std built with -Zbuild-std is cached there).
WIN_TARGET_DIR=${WIN_TARGET_DIR:-$HOME/.cache/sergeant/windows-gnu}
# Built helpers (the bcryptprimitives.dll stand-in).
WIN_TOOLS_DIR=${WIN_TOOLS_DIR:-$HOME/.cache/sergeant/windows-tools}
WINE=${WINE:-/usr/lib/wine/wine64}
WINESERVER=${WINESERVER:-/usr/lib/wine/wineserver64}
WINEPREFIX=${WINEPREFIX:-$HOME/.cache/sergeant/wine-prefix}
WINEDEBUG=${WINEDEBUG:--all}
export WIN_RUSTC WIN_CARGO WIN_LINKER WIN_TARGET WIN_TARGET_DIR WIN_TOOLS_DIR WINE WINESERVER \
    WINEPREFIX WINEDEBUG
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=${CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER:-$WIN_LINKER}
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER
