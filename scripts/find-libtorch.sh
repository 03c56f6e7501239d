#!/usr/bin/env bash
# Prints the CMake prefix of LibTorch 2.11: the one way every script finds it. In order:
# $TORCH_PREFIX; the torch of `python3` (a GPU machine's PyTorch, a workstation's); the project's
# virtual environment ($TRAINSCOPE_VENV, default ~/.cache/trainscope/venv-torch-2.11.0, shared
# by clones), created and filled from PyPI on first use unless --no-install is given.
#   bash scripts/find-libtorch.sh [--no-install]     exit 1 when there is none
set -euo pipefail
TORCH_VERSION_WANTED="2.11.0"
NO_INSTALL=0
[ "${1:-}" = --no-install ] && NO_INSTALL=1
if [ -z "${NO_COLOR:-}" ] && [ -t 2 ]; then  # as setup.sh: plain where NO_COLOR is set
    say() { printf '\033[1m[trainscope]\033[0m %s\n' "$*" >&2; }
else
    say() { printf '[trainscope] %s\n' "$*" >&2; }
fi

# Prints the cmake prefix of a torch 2.11 in the given python, or nothing.
torch_prefix_of() {
    "$1" - <<'PY' 2>/dev/null || true
import torch, torch.utils
if torch.__version__.split('+')[0].startswith('2.11'):
    print(torch.utils.cmake_prefix_path)
PY
}

find_torch() {
    if [ -n "${TORCH_PREFIX:-}" ]; then echo "$TORCH_PREFIX"; return; fi
    local prefix=""
    # 1. A PyTorch install already there (a GPU workstation's usual LibTorch).
    if command -v python3 >/dev/null; then prefix="$(torch_prefix_of python3)"; fi
    if [ -n "$prefix" ]; then say "using the LibTorch of $(command -v python3)"; echo "$prefix"; return; fi
    # 2. The project's own virtual environment, created on first use; outside the checkout so
    #    that every clone (and every CI run on this machine) shares the 4 GB install.
    local venv="${TRAINSCOPE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/trainscope/venv-torch-$TORCH_VERSION_WANTED}"
    if [ "$NO_INSTALL" = 1 ]; then
        [ -x "$venv/bin/python" ] && prefix="$(torch_prefix_of "$venv/bin/python")"
        [ -n "$prefix" ] || { say "no LibTorch $TORCH_VERSION_WANTED found (python3's torch, $venv)"; exit 1; }
        echo "$prefix"
        return
    fi
    if [ ! -x "$venv/bin/python" ]; then
        say "creating $venv"
        mkdir -p "$(dirname "$venv")"
        python3 -m venv "$venv"
    fi
    prefix="$(torch_prefix_of "$venv/bin/python")"
    if [ -z "$prefix" ]; then
        say "installing PyTorch $TORCH_VERSION_WANTED from PyPI into $venv (large download, once)"
        "$venv/bin/python" -m pip install -q --upgrade pip
        "$venv/bin/python" -m pip install -q "torch==$TORCH_VERSION_WANTED" numpy
        prefix="$(torch_prefix_of "$venv/bin/python")"
    fi
    [ -n "$prefix" ] || { say "could not install PyTorch $TORCH_VERSION_WANTED"; exit 1; }
    echo "$prefix"
}

find_torch
