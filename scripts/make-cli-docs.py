#!/usr/bin/env python3
"""Man pages and shell completions for trainscope-cli and trainscope, generated from their own
--help (so they cannot drift from the options): every subcommand's help, read recursively.

    scripts/make-cli-docs.py --cli build/default/app/trainscope-cli \\
        --window build/default/app/trainscope --version 0.1.0 --out build/default/share

writes OUT/man/man1/trainscope-cli.1, OUT/man/man1/trainscope.1,
OUT/bash-completion/completions/{trainscope-cli,trainscope} and
OUT/zsh/site-functions/{_trainscope-cli,_trainscope}. The window's help is read offscreen.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

OPTION = re.compile(r"^  (-\S.*?|[a-z][\w-]*(?: \S+)*?)(?:\s{2,}(\S.*))?$")


def run_help(exe, path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "NO_COLOR": "1"}
    p = subprocess.run([exe, *path, "--help"], capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0:
        sys.exit(f"make-cli-docs: `{' '.join([exe, *path, '--help'])}` exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def parse(text):
    """One --help text (CLI11's or Qt's): its description, usage, options, positionals and
    subcommands, each entry (name, description)."""
    out = {"description": [], "usage": "", "options": [], "positionals": [], "subcommands": []}
    section = "description"
    for line in text.splitlines():
        if line.startswith("Usage:"):
            out["usage"] = line[len("Usage:"):].strip()
            continue
        heading = {"Options:": "options", "Positionals:": "positionals", "Subcommands:": "subcommands",
                   "Arguments:": "positionals"}.get(line.strip())
        if heading and not line.startswith(" "):
            section = heading
            continue
        if section == "description":
            if line.strip():
                out["description"].append(line.strip())
            continue
        if not line.strip():
            continue
        if line.startswith("   ") and out[section]:  # a wrapped description
            name, desc = out[section][-1]
            out[section][-1] = (name, (desc + " " + line.strip()).strip())
            continue
        m = OPTION.match(line)
        if m:
            out[section].append((m.group(1).strip(), (m.group(2) or "").strip()))
    out["description"] = " ".join(out["description"])
    return out


def flags_of(name):
    """'-h,--help' -> ['-h', '--help']; '--size TEXT=tiny' -> ['--size']; Qt's '-v, --version'."""
    head = name.split(" ")[0] if not name.startswith("-") or "," not in name else name
    flags = []
    for part in re.split(r",\s*", head):
        token = part.split(" ")[0].split("=")[0]
        if token.startswith("-"):
            flags.append(token.split("<")[0])
    return flags


def takes_value(name):
    rest = name.split(" ", 1)[1:] if " " in name.replace(", ", ",") else []
    return bool(rest) and not rest[0].startswith("-")


def read_tree(exe, path=()):
    node = parse(run_help(exe, list(path)))
    node["path"] = list(path)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        children = list(pool.map(lambda s: read_tree(exe, (*path, s[0].split(" ")[0])), node["subcommands"]))
    node["children"] = children
    return node


# ---- roff

def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    # Non-ASCII (×, ·, —) as groff's Unicode escapes: troff reads its input as Latin-1.
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return "\n".join(("\\&" + l if l[:1] in ".'" else l) for l in text.split("\n"))


def man_page(tree, prog, version, summary, see_also):
    lines = [f'.TH {prog.upper()} 1 "" "TrainScope {version}" "User Commands"', ".SH NAME",
             f"{roff(prog)} \\- {roff(summary)}", ".SH SYNOPSIS", f".B {roff(prog)}",
             roff(tree["usage"].split(" ", 1)[1] if " " in tree["usage"] else ""),
             ".SH DESCRIPTION", roff(tree["description"] or summary)]

    def options(node):
        for name, desc in node["positionals"] + node["options"]:
            lines.extend([".TP", f".B {roff(name)}", roff(desc)])

    lines.append(".SH OPTIONS")
    options(tree)

    def commands(node, depth):
        for child in node["children"]:
            lines.append(f".SS {roff(' '.join(child['path']))}")
            lines.append(roff(child["description"]))
            lines.extend([".PP", f"Usage: {roff(child['usage'])}"])
            options(child)
            commands(child, depth + 1)

    if tree["children"]:
        lines.append(".SH COMMANDS")
        commands(tree, 0)
    lines.extend([".SH ENVIRONMENT", ".TP", ".B TRAINSCOPE_DB",
                  "The results store (default ~/.local/share/trainscope/results.db).", ".TP",
                  ".B TRAINSCOPE_PYTHON", "The Python interpreter with PyTorch that runs your code.", ".TP",
                  ".B TRAINSCOPE_LIBTORCH", "The LibTorch (a torch/lib folder) an installed TrainScope loads.",
                  ".SH FILES", ".TP", ".I ~/.local/share/trainscope/venv-torch-VERSION",
                  "The PyTorch an installed TrainScope uses when neither variable above is set: "
                  "trainscope-setup-torch(1) makes it (and removes it, with --remove).",
                  ".SH SEE ALSO", roff(see_also)])
    return "\n".join(lines) + "\n"


# ---- completions

def collect(node, table):
    words = [n.split(" ")[0] for n, _ in node["subcommands"]]
    flags = [f for n, _ in node["options"] for f in flags_of(n)]
    table[" ".join(node["path"])] = (words, flags)
    for child in node["children"]:
        collect(child, table)


def bash_completion(tree, prog):
    table = {}
    collect(tree, table)
    fn = "_" + re.sub(r"\W", "_", prog)
    cases = "\n".join(f'        "{key}") words="{" ".join(w + f)}" ;;' for key, (w, f) in table.items())
    return f"""# bash completion for {prog}, generated from its --help by scripts/make-cli-docs.py
{fn}() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} sub="" w i
    # The subcommands typed so far (words without a leading dash that name one).
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${{COMP_WORDS[i]}}
        [[ $w == -* ]] && continue
        case " $({fn}_words "$sub") " in *" $w "*) sub=${{sub:+$sub }}$w ;; esac
    done
    COMPREPLY=($(compgen -W "$({fn}_words "$sub")" -- "$cur"))
}}
{fn}_words() {{
    local words=""
    case "$1" in
{cases}
    esac
    printf '%s' "$words"
}}
complete -o default -F {fn} {prog}
"""


def zsh_completion(tree, prog):
    table = {}
    collect(tree, table)
    fn = "_" + re.sub(r"\W", "_", prog)
    cases = "\n".join(f'        "{key}") print -r -- "{" ".join(w + f)}" ;;' for key, (w, f) in table.items())
    # `sub`, not `path`: zsh ties `path` to $PATH.
    return f"""#compdef {prog}
# zsh completion for {prog}, generated from its --help by scripts/make-cli-docs.py
{fn}() {{
    local sub="" w
    local -a next
    for w in "${{(@)words[2,CURRENT-1]}}"; do
        [[ $w == -* ]] && continue
        next=(${{=$({fn}_words "$sub")}})
        (( ${{next[(Ie)$w]}} )) && sub="${{sub:+$sub }}$w"
    done
    compadd -- ${{=$({fn}_words "$sub")}}
}}
{fn}_words() {{
    case "$1" in
{cases}
    esac
}}
{fn} "$@"
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--window")
    ap.add_argument("--version", default="")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    progs = [("trainscope-cli", args.cli, "where the time and memory of a transformer training step go (command line)",
              "trainscope(1), trainscope-setup-torch(1)")]
    if args.window:
        progs.append(("trainscope", args.window, "a workbench for where the time and memory of a transformer training "
                      "step go", "trainscope-cli(1), trainscope-setup-torch(1)"))
    for prog, exe, summary, see in progs:
        tree = read_tree(exe)
        for folder, name, text in [("man/man1", prog + ".1", man_page(tree, prog, args.version, summary, see)),
                                   ("bash-completion/completions", prog, bash_completion(tree, prog)),
                                   ("zsh/site-functions", "_" + prog, zsh_completion(tree, prog))]:
            os.makedirs(os.path.join(args.out, folder), exist_ok=True)
            with open(os.path.join(args.out, folder, name), "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
