#!/usr/bin/env bash
# For a GPU machine without network access: downloads (here, where apt works) the Debian
# packages of the small libraries TrainScope builds with into .deps/debs. scripts/gpu-check.sh
# unpacks them there when the system lacks them, and .deps/commit names the commit for the
# results (the copied tree has no .git). Needs apt-get; run from anywhere. Run it again
# before each GPU session so that the commit is current.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$ROOT/.deps/debs"
cd "$ROOT/.deps/debs"
apt-get download nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9 libsqlite3-dev libsqlite3-0 \
    libgtest-dev libgmock-dev googletest 2>/dev/null
ls "$ROOT/.deps/debs"
# The copy that travels to the GPU machine has no .git: record which commit it is.
git -C "$ROOT" describe --always --dirty --abbrev=12 > "$ROOT/.deps/commit" 2>/dev/null || true
