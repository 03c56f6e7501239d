#!/usr/bin/env bash
# Fails (exit 1) when a C++ or CUDA file of the project does not match its .clang-format,
# naming each such file and the command that fixes them all. The formatter is clang-format 14
# (Debian 12's; scripts/setup.sh installs it): other versions format some lines otherwise.
#   scripts/check-format.sh         check
#   scripts/check-format.sh --fix   format the files in place
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CLANG_FORMAT="${CLANG_FORMAT:-$(command -v clang-format-14 || true)}"
if [ -z "$CLANG_FORMAT" ]; then
    echo "check-format: clang-format-14 is not installed (bash scripts/setup.sh installs it)" >&2
    exit 2
fi
# The project's own sources: git's list where this is a checkout, else the source folders.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cpp' '*.h' '*.cu' '*.cuh')
else
    mapfile -t files < <(find app engine kernels distributed ui tests \
        \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
fi
if [ "${1:-}" = --fix ]; then
    "$CLANG_FORMAT" -i "${files[@]}"
    exit 0
fi
bad=()
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    "$CLANG_FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
    echo "check-format: ${#bad[@]} of ${#files[@]} files do not match .clang-format:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    echo "fix them with: bash scripts/check-format.sh --fix" >&2
    exit 1
fi
echo "check-format: all ${#files[@]} files match .clang-format"
