#!/usr/bin/env bash
# Installs what TrainScope needs on Debian 12 / Ubuntu, finds or installs LibTorch 2.11,
# configures and builds. Sourced by start.sh and test.sh; runnable on its own.
#   TRAINSCOPE_BUILD_DIR   build folder (default: build/default)
#   TRAINSCOPE_CMAKE_ARGS  extra CMake arguments (e.g. -DTRAINSCOPE_UI=OFF)
#   TRAINSCOPE_SKIP_APT=1  do not install system packages
#   TORCH_PREFIX           a LibTorch / torch cmake prefix to use instead of searching
#   TRAINSCOPE_VENV        where PyTorch is installed when none is found
#                          (default: ~/.cache/trainscope/venv-torch-2.11.0, shared by clones)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TRAINSCOPE_BUILD_DIR:-$ROOT/build/default}"
# Bold only on a terminal, and never where NO_COLOR is set to anything (https://no-color.org).
# Each line says the minutes and seconds since the script began (bash's SECONDS), so that a
# log tells where a slow set-up or test run spent its time.
if [ -z "${NO_COLOR:-}" ] && [ -t 2 ]; then
    say() { printf '\033[1m[trainscope %d:%02d]\033[0m %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }
else
    say() { printf '[trainscope %d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }
fi

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

install_system_packages() {
    [ "${TRAINSCOPE_SKIP_APT:-0}" = 1 ] && return
    command -v apt-get >/dev/null || { say "no apt-get: install the packages in scripts/setup.sh by hand"; return; }
    # Real package names only (libqt6svg6-dev is virtual, provided by qt6-svg-dev: dpkg would
    # never see it installed and every run would call apt-get).
    # desktop-file-utils, appstream, zsh, groff-base: tst_install checks the installed tree with them.
    # mold: the linker (CMakeLists.txt), faster than GNU ld on the programs that link LibTorch.
    # nodejs, curl, xz-utils: tst_memory_viz_js runs pytorch.org/memory_viz's own JavaScript (test.sh fetches it).
    local pkgs=(build-essential cmake ninja-build ccache git pkg-config python3 python3-venv python3-pip
                libsqlite3-dev nlohmann-json3-dev libcli11-dev libfmt-dev
                qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev libxkbcommon-dev
                libgl-dev libqcustomplot-dev xvfb xauth libgloo-dev clang-format-14
                desktop-file-utils appstream zsh groff-base binutils nodejs curl xz-utils mold)
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing system packages: ${missing[*]}"
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# The LibTorch prefix a build folder was configured with (empty: none).
configured_prefix() {
    sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | head -n 1
}

configure_and_build() {
    local prefix="$1"
    local gen=()
    command -v ninja >/dev/null && gen=(-G Ninja)
    if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
        say "configuring in $BUILD_DIR"
        # shellcheck disable=SC2086
        cmake -S "$ROOT" -B "$BUILD_DIR" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_PREFIX_PATH="$prefix" ${TRAINSCOPE_CMAKE_ARGS:-} >/dev/null
    elif [ "$(configured_prefix)" != "$prefix" ]; then
        # A build folder made with another LibTorch (TORCH_PREFIX given now, or python3's torch
        # changed): configured again for this one, its cached paths to the old one dropped, or
        # find_package(Torch) would keep them.
        local old root name
        old="$(configured_prefix)"
        root="${old%/share/cmake}"
        local drop=()
        if [ -n "$root" ]; then
            while IFS= read -r name; do drop+=(-U "$name"); done < <(
                grep -F "=$root" "$BUILD_DIR/CMakeCache.txt" | sed 's/:.*//' | grep -v '^CMAKE_PREFIX_PATH$')
        fi
        say "$BUILD_DIR was configured with LibTorch at $old; configuring it for $prefix"
        # shellcheck disable=SC2086
        cmake -S "$ROOT" -B "$BUILD_DIR" "${drop[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
            ${TRAINSCOPE_CMAKE_ARGS:-} >/dev/null
    fi
    say "building (first build takes a while on few cores)"
    cmake --build "$BUILD_DIR" --parallel "${TRAINSCOPE_JOBS:-$(nproc)}"
}

# The Python packages the tests need beside torch, into the project's venv when LibTorch is its
# (markdown-it-py: tst_cli_formats parses the CLI's Markdown with it). Another python's packages
# are left alone; the test then says it cannot parse Markdown there.
install_test_packages() {
    local prefix="$1"
    local venv="${TRAINSCOPE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/trainscope/venv-torch-2.11.0}"
    case "$prefix" in "$venv"/*) ;; *) return ;; esac
    "$venv/bin/python" -c 'import markdown_it' 2>/dev/null && return
    say "installing markdown-it-py into $venv (the Markdown tests read the CLI's tables with it)"
    "$venv/bin/python" -m pip install -q markdown-it-py || say "could not install markdown-it-py"
}

install_system_packages
# Paths relative to the source tree, so that ccache hits across clones of the project.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
TORCH_CMAKE_PREFIX="$(bash "$ROOT/scripts/find-libtorch.sh")" || exit 1
export TORCH_CMAKE_PREFIX
install_test_packages "$TORCH_CMAKE_PREFIX"
configure_and_build "$TORCH_CMAKE_PREFIX"
export TRAINSCOPE_BUILD_DIR="$BUILD_DIR"
