#!/usr/bin/env python3
"""The installed tree and the Debian package (app/install.cmake): `cmake --install` into a fresh
prefix gives the launchers in bin/, the programs in lib/trainscope with no RUNPATH of the build's
(no /lib/intel64_win, no build folder), the Python runner and the examples in share/trainscope,
a desktop entry and AppStream metainfo that their own validators accept, the icon in hicolor,
man pages (gzipped, as Debian's) that render without warnings and name every command, bash and
zsh completions that parse and complete, the copyright and changelog in share/doc; the installed
CLI runs the user's code through the installed runner; the launchers find the torch of the venv
trainscope-setup-torch makes, and say plainly where LibTorch is missing or misnamed; the
window's no-LibTorch dialog starts. `cpack -G DEB` gives a package with the files, dependencies
and description a Debian 12 machine needs.
Usage: test_install.py path/to/build-folder"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = None
PYTHONS = []  # pythons that may have torch, from the command line


def run(*args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 600)
    return subprocess.run(list(args), **kw)


class Installed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.prefix = os.path.join(cls.tmp.name, "prefix")
        p = run("cmake", "--install", BUILD, "--prefix", cls.prefix)
        if p.returncode != 0:
            raise AssertionError(f"cmake --install failed:\n{p.stdout}\n{p.stderr}")
        cls.window = os.path.exists(os.path.join(cls.prefix, "lib", "trainscope", "trainscope"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.prefix, *parts)

    def test_the_tree(self):
        expected = ["bin/trainscope-cli", "lib/trainscope/trainscope-cli",
                    "share/trainscope/runner/trainscope_runner/__main__.py",
                    "share/trainscope/examples/course-checkout/tests/adapters.py",
                    "share/man/man1/trainscope-cli.1.gz", "share/bash-completion/completions/trainscope-cli",
                    "share/zsh/site-functions/_trainscope-cli", "bin/trainscope-setup-torch",
                    "share/doc/trainscope/copyright", "share/doc/trainscope/changelog.gz",
                    "share/doc/trainscope/README.md", "share/doc/trainscope/docs/ARCHITECTURE.md"]
        if self.window:
            expected += ["bin/trainscope", "share/applications/org.trainscope.TrainScope.desktop",
                         "share/icons/hicolor/scalable/apps/org.trainscope.TrainScope.svg",
                         "share/metainfo/org.trainscope.TrainScope.metainfo.xml", "share/man/man1/trainscope.1.gz",
                         "lib/trainscope/trainscope-needs-libtorch"]
        for f in expected:
            self.assertTrue(os.path.exists(self.path(f)), f)
        for f in ["bin/trainscope-cli", "lib/trainscope/trainscope-cli", "bin/trainscope-setup-torch"]:
            self.assertTrue(os.access(self.path(f), os.X_OK), f)
        leftovers = [d for d, _, files in os.walk(self.prefix) if d.endswith("__pycache__")]
        self.assertEqual(leftovers, [])
        # The installed README's pictures and links into docs/ resolve beside it.
        doc = self.path("share/doc/trainscope")
        with open(os.path.join(doc, "README.md")) as f:
            links = re.findall(r"\]\((docs/[^)#\s]+)", f.read())
        self.assertGreater(len(links), 5)
        missing = [l for l in links if not os.path.exists(os.path.join(doc, l))]
        self.assertEqual(missing, [], "README links that the installed docs lack")

    def test_no_runpath_of_the_build(self):
        for prog in ["trainscope-cli", "trainscope"]:
            exe = self.path("lib", "trainscope", prog)
            if not os.path.exists(exe):
                continue
            dynamic = run("readelf", "-d", exe).stdout
            runpath = [l for l in dynamic.splitlines() if "RPATH" in l or "RUNPATH" in l]
            self.assertEqual(runpath, [], f"{prog}: {runpath}")

    def test_the_desktop_entry_and_metainfo_validate(self):
        if not self.window:
            self.skipTest("built without the window")
        p = run("desktop-file-validate", self.path("share/applications/org.trainscope.TrainScope.desktop"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.strip(), "", "no hints either")
        p = run("appstreamcli", "validate", "--no-net", "--explain",
                self.path("share/metainfo/org.trainscope.TrainScope.metainfo.xml"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(self.path("share/applications/org.trainscope.TrainScope.desktop")) as f:
            entry = f.read()
        self.assertIn("Exec=trainscope\n", entry)
        self.assertIn("Icon=org.trainscope.TrainScope\n", entry)
        self.assertIn("StartupWMClass=TrainScope\n", entry)  # the window's WM_CLASS

    def test_the_man_pages_render_and_name_every_command(self):
        pages = ["trainscope-cli"] + (["trainscope"] if self.window else [])
        for page in pages:
            with gzip.open(self.path("share/man/man1", page + ".1.gz"), "rt") as f:
                source = f.read()
            p = run("groff", "-man", "-Tutf8", "-ww", "-z", input=source)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr.strip(), "", f"{page}.1: groff warnings")
            # Rendered wide, without hyphenation, the overstrikes (bold) taken out.
            text = run("groff", "-man", "-Tutf8", "-rHY=0", "-rLL=300n", input=source,
                       env={**os.environ, "GROFF_NO_SGR": "1"}).stdout
            text = re.sub(".\b", "", text).replace("\u2010", "-").replace("\u2212", "-")
            if page == "trainscope-cli":
                for command in ["bench", "attention", "profile", "precision accumulate", "memory",
                                "distributed ddp", "runs show", "plan", "info", "--context-length", "--code"]:
                    self.assertIn(command, text, f"{page}(1) names {command}")
            else:
                for option in ["--preset", "--experiment", "--screenshot", "your-ddp-classes"]:
                    self.assertIn(option, text)

    def test_the_completions_parse_and_complete(self):
        script = self.path("share/bash-completion/completions/trainscope-cli")
        p = run("bash", "-c", f"""
            source {script}
            COMP_WORDS=(trainscope-cli dist); COMP_CWORD=1; _trainscope_cli; echo "1:${{COMPREPLY[*]}}"
            COMP_WORDS=(trainscope-cli distributed ""); COMP_CWORD=2; _trainscope_cli; echo "2:${{COMPREPLY[*]}}"
            COMP_WORDS=(trainscope-cli distributed ddp --size small --co); COMP_CWORD=5; _trainscope_cli
            echo "3:${{COMPREPLY[*]}}"
        """)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = dict(l.split(":", 1) for l in p.stdout.splitlines())
        self.assertEqual(lines["1"].split(), ["distributed"])
        self.assertIn("ddp", lines["2"].split())
        self.assertIn("allreduce", lines["2"].split())
        self.assertIn("--code", lines["3"].split())
        self.assertIn("--context-length", lines["3"].split())
        zsh = shutil.which("zsh")
        if zsh is None:
            self.fail("zsh is not installed (scripts/setup.sh installs it)")
        for f in ["_trainscope-cli"] + (["_trainscope"] if self.window else []):
            p = run(zsh, "-n", self.path("share/zsh/site-functions", f))
            self.assertEqual(p.returncode, 0, p.stderr)
        # The zsh function's word lists, called as zsh's completion would call them.
        p = run(zsh, "-c", f"""
            compadd() {{ shift; print -r -- "$@"; }}
            source {self.path("share/zsh/site-functions/_trainscope-cli")} 2>/dev/null
            words=(trainscope-cli distributed ""); CURRENT=3; _trainscope_cli
        """)
        self.assertIn("ddp", p.stdout.split(), p.stdout + p.stderr)

    def test_the_installed_cli_runs_your_code_through_the_installed_runner(self):
        cli = self.path("bin", "trainscope-cli")
        env = {k: v for k, v in os.environ.items() if k != "TRAINSCOPE_RUNNER_PATH"}
        env["TRAINSCOPE_DB"] = os.path.join(self.tmp.name, "results.db")
        p = run(cli, "info", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"Python runner: {self.path('share', 'trainscope', 'runner')}", p.stdout)
        checkout = self.path("share", "trainscope", "examples", "course-checkout")
        p = run(cli, "attention", "--code", checkout, "--impl", "yours-pytorch", "--seq", "64", "--head-dim", "16",
                "--batch", "1", "--heads", "2", "--dtype", "fp32", "--pass", "forward", "--warmup", "1", "--steps",
                "1", "--no-store", "--jsonl", env=env, cwd=self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('"status":"ok"', p.stdout)
        self.assertIn(checkout, p.stderr)

    def test_no_libtorch_is_said_plainly(self):
        cli = self.path("bin", "trainscope-cli")
        p = run(cli, "--version", env={**os.environ, "TRAINSCOPE_LIBTORCH": os.path.join(self.tmp.name, "nowhere")})
        self.assertEqual(p.returncode, 2)
        self.assertIn("has no libtorch.so (it should be a torch/lib folder)", p.stderr)
        p = run(cli, "--version", env={**os.environ, "TRAINSCOPE_PYTHON": "/bin/false"})
        self.assertEqual(p.returncode, 2)
        self.assertIn("TRAINSCOPE_PYTHON=/bin/false has no torch", p.stderr)
        # Nowhere at all: only where the build's own LibTorch is gone (not here); the message
        # and the dialog are the launcher's last branch, read here.
        with open(self.path("bin", "trainscope")) if self.window else open(cli) as f:
            launcher = f.read()
        self.assertIn("trainscope-setup-torch", launcher)

    def test_the_launchers_find_the_venv_setup_torch_makes(self):
        # trainscope-setup-torch's venv, as it would leave it (the real one takes 3 GB): a venv
        # folder whose python3 is one with torch. The launcher finds it; setup says it is done.
        python = run(sys.executable, "-c", "import sys; print(sys.executable)").stdout.strip()
        with_torch = next((py for py in (os.environ.get("TRAINSCOPE_PYTHON"), *PYTHONS, python) if py and
                           run(py, "-c", "import torch").returncode == 0), None)
        if with_torch is None:
            self.skipTest("no python with torch here")
        data = os.path.join(self.tmp.name, "data")
        setup = self.path("bin", "trainscope-setup-torch")
        env = {k: v for k, v in os.environ.items() if k not in ("TRAINSCOPE_PYTHON", "TRAINSCOPE_LIBTORCH")}
        env.update(XDG_DATA_HOME=data, HOME=self.tmp.name)
        venv = run(setup, "--where", env=env).stdout.strip()
        self.assertEqual(venv, os.path.join(data, "trainscope", "venv-torch-2.11.0"))
        os.makedirs(os.path.join(venv, "bin"))
        # A wrapper, not a symlink: a venv's python found through a symlink elsewhere is the
        # system's, without the venv's packages.
        fake = os.path.join(venv, "bin", "python3")
        with open(fake, "w") as f:
            f.write(f'#!/bin/sh\nexec "{with_torch}" "$@"\n')
        os.chmod(fake, 0o755)
        self.assertEqual(run(fake, "-c", "import torch").returncode, 0, "the fake venv has torch")
        p = run(self.path("bin", "trainscope-cli"), "info", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"(python: {fake})", p.stdout)
        p = run(setup, env=env, timeout=60)  # done already: no download
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("already in", p.stdout)
        p = run(setup, "--bogus", env=env)
        self.assertEqual(p.returncode, 2)
        p = run(setup, "--remove", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(venv))

    def test_the_no_libtorch_dialog_starts(self):
        if not self.window:
            self.skipTest("built without the window")
        helper = self.path("lib", "trainscope", "trainscope-needs-libtorch")
        p = run(helper, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage:", p.stderr)
        # Up and waiting for the user (killed after 3 s), not crashed.
        p = run("timeout", "3", helper, "/bin/true", "/bin/true", "2.11.0",
                env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
        self.assertEqual(p.returncode, 124, p.stderr)


class Package(unittest.TestCase):
    def test_the_debian_package(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = run("cpack", "-G", "DEB", "-B", tmp, cwd=BUILD)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            [deb] = [f for f in os.listdir(tmp) if f.endswith(".deb")]
            fields = run("dpkg-deb", "-f", os.path.join(tmp, deb)).stdout
            self.assertIn("Package: trainscope", fields)
            for dep in ["libqt6widgets6", "libqt6charts6", "libqcustomplot2.1-qt6", "libsqlite3-0", "python3",
                        "python3-venv"]:
                self.assertIn(dep, fields)
            # Debian's description: one space before each line of the long part, " ." between
            # paragraphs, lines of 80 columns at most.
            long = fields.split("Description:", 1)[1].split("\n")[1:]
            long = [l for l in long[:next((i for i, l in enumerate(long) if l and l[0] != " "), len(long))] if l]
            self.assertIn(" .", long)
            for line in long:
                self.assertTrue(line.startswith(" ") and not line.startswith("  "), repr(line))
                self.assertLessEqual(len(line), 80, line)
            files = run("dpkg-deb", "-c", os.path.join(tmp, deb)).stdout
            for f in ["./usr/bin/trainscope-cli", "./usr/lib/trainscope/trainscope-cli",
                      "./usr/share/trainscope/runner/trainscope_runner/__main__.py",
                      "./usr/share/man/man1/trainscope-cli.1.gz", "./usr/share/doc/trainscope/copyright",
                      "./usr/share/doc/trainscope/changelog.gz", "./usr/bin/trainscope-setup-torch"]:
                self.assertIn(f, files)
            # Every dependency names a package Debian has (apt knows it).
            for dep in fields.split("Depends:", 1)[1].splitlines()[0].split(","):
                name = dep.strip().split(" ")[0].split("|")[0].strip()
                q = run("apt-cache", "show", name)
                self.assertEqual(q.returncode, 0, f"Depends names {name}, which apt does not know")


if __name__ == "__main__":
    BUILD = os.path.abspath(sys.argv.pop(1))
    PYTHONS = [p for p in (sys.argv.pop(1).split(":") if len(sys.argv) > 1 else []) if p]
    unittest.main()
