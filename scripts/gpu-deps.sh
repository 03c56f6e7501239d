#!/usr/bin/env bash
# For a GPU machine without network access: downloads (here, where apt works) the Debian
# packages of the small libraries TrainScope builds with into .deps/debs. scripts/gpu-check.sh
# unpacks them there when the system lacks them. Needs apt-get; run from anywhere.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$ROOT/.deps/debs"
cd "$ROOT/.deps/debs"
apt-get download nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9 libsqlite3-dev libsqlite3-0 \
    libgtest-dev libgmock-dev googletest 2>/dev/null
ls "$ROOT/.deps/debs"
