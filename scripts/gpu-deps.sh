#!/usr/bin/env bash
# For a GPU machine without network access: downloads (here, where apt works) the Debian
# packages of the small libraries TrainScope builds with into .deps/debs. scripts/gpu-check.sh
# unpacks them there when the system lacks them, and .deps/commit names the commit for the
# results (the copied tree has no .git). Needs apt-get; run from anywhere. Run it again
# before each GPU session so that the commit is current.
#   scripts/gpu-deps.sh --window   also Qt 6, QCustomPlot, fonts and fontconfig (.deps/window,
#                                  about 30 MB) for scripts/gpu-window.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$ROOT/.deps/debs"
cd "$ROOT/.deps/debs"
apt-get download nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9 libsqlite3-dev libsqlite3-0 \
    libgtest-dev libgmock-dev googletest libgloo-dev 2>/dev/null
ls "$ROOT/.deps/debs"
if [ "${1:-}" = --window ]; then
    # The window's build (headers, CMake packages, moc/rcc) and the libraries it loads that a
    # CUDA image lacks (found with ldd on a built `trainscope` and the offscreen platform
    # plugin; the C and C++ runtimes are the machine's own). Fonts and fontconfig's files, so
    # that text is drawn offscreen.
    mkdir -p "$ROOT/.deps/window"
    cd "$ROOT/.deps/window"
    apt-get download \
        qt6-base-dev qt6-base-dev-tools qmake6 qmake6-bin qt6-charts-dev qt6-svg-dev libqt6opengl6-dev \
        libqcustomplot-dev \
        libgl-dev libglx-dev libegl-dev libopengl-dev libxkbcommon-dev libvulkan-dev \
        libqt6core6 libqt6gui6 libqt6widgets6 libqt6charts6 libqt6svg6 libqt6opengl6 \
        libqt6openglwidgets6 libqt6printsupport6 libqt6dbus6 libqt6test6 libqt6concurrent6 \
        libqt6network6 libqt6sql6 libqt6xml6 libqcustomplot2.1-qt6 qt6-qpa-plugins \
        libb2-1 libbrotli1 libdouble-conversion3 libicu72 libmd4c0 libpcre2-16-0 libpcre2-8-0 \
        libglib2.0-0 libharfbuzz0b libgraphite2-3 libfreetype6 libpng16-16 libfontconfig1 \
        libxkbcommon0 libx11-6 libxau6 libxcb1 libxdmcp6 libbsd0 libmd0 libzstd1 liblz4-1 \
        libsystemd0 libgcrypt20 libgpg-error0 libdbus-1-3 libexpat1 libegl1 libgl1 libglx0 libglvnd0 libopengl0 \
        fonts-dejavu-core fontconfig-config 2>/dev/null
    du -sh "$ROOT/.deps/window"
fi
# The copy that travels to the GPU machine has no .git: record which commit it is.
git -C "$ROOT" describe --always --dirty --abbrev=12 > "$ROOT/.deps/commit" 2>/dev/null || true
