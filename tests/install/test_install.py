#!/usr/bin/env python3
"""The installed tree and the Debian package (app/install.cmake): `cmake --install` into a fresh
prefix gives the launchers in bin/, the programs in lib/trainscope with no RUNPATH of the build's
(no /lib/intel64_win, no build folder), the Python runner and the examples in share/trainscope,
a desktop entry and AppStream metainfo that their own validators accept, the icon in hicolor,
man pages that render without warnings and name every command, bash and zsh completions that
parse and complete; the installed CLI runs the user's code through the installed runner, and
says plainly where LibTorch is missing. `cpack -G DEB` gives a package with the files and
dependencies a Debian 12 machine needs.
Usage: test_install.py path/to/build-folder"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = None


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
                    "share/man/man1/trainscope-cli.1", "share/bash-completion/completions/trainscope-cli",
                    "share/zsh/site-functions/_trainscope-cli"]
        if self.window:
            expected += ["bin/trainscope", "share/applications/org.trainscope.TrainScope.desktop",
                         "share/icons/hicolor/scalable/apps/org.trainscope.TrainScope.svg",
                         "share/metainfo/org.trainscope.TrainScope.metainfo.xml", "share/man/man1/trainscope.1"]
        for f in expected:
            self.assertTrue(os.path.exists(self.path(f)), f)
        for f in ["bin/trainscope-cli", "lib/trainscope/trainscope-cli"]:
            self.assertTrue(os.access(self.path(f), os.X_OK), f)
        leftovers = [d for d, _, files in os.walk(self.prefix) if d.endswith("__pycache__")]
        self.assertEqual(leftovers, [])

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

    def test_the_man_pages_render_and_name_every_command(self):
        pages = ["trainscope-cli"] + (["trainscope"] if self.window else [])
        for page in pages:
            p = run("groff", "-man", "-Tutf8", "-ww", "-z", self.path("share/man/man1", page + ".1"))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr.strip(), "", f"{page}.1: groff warnings")
            # Rendered wide, without hyphenation, the overstrikes (bold) taken out.
            text = run("groff", "-man", "-Tutf8", "-rHY=0", "-rLL=300n", self.path("share/man/man1", page + ".1"),
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
        p = run(self.path("bin", "trainscope-cli"), "--version",
                env={**os.environ, "TRAINSCOPE_LIBTORCH": os.path.join(self.tmp.name, "nowhere")})
        self.assertEqual(p.returncode, 2)
        self.assertIn("no LibTorch found", p.stderr)
        self.assertIn("pip install torch==2.11", p.stderr)


class Package(unittest.TestCase):
    def test_the_debian_package(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = run("cpack", "-G", "DEB", "-B", tmp, cwd=BUILD)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            [deb] = [f for f in os.listdir(tmp) if f.endswith(".deb")]
            fields = run("dpkg-deb", "-f", os.path.join(tmp, deb)).stdout
            self.assertIn("Package: trainscope", fields)
            for dep in ["libqt6widgets6", "libqt6charts6", "libqcustomplot2.1-qt6", "libsqlite3-0", "python3"]:
                self.assertIn(dep, fields)
            files = run("dpkg-deb", "-c", os.path.join(tmp, deb)).stdout
            for f in ["./usr/bin/trainscope-cli", "./usr/lib/trainscope/trainscope-cli",
                      "./usr/share/trainscope/runner/trainscope_runner/__main__.py",
                      "./usr/share/man/man1/trainscope-cli.1"]:
                self.assertIn(f, files)
            # Every dependency names a package Debian has (apt knows it).
            for dep in fields.split("Depends:", 1)[1].splitlines()[0].split(","):
                name = dep.strip().split(" ")[0].split("|")[0].strip()
                q = run("apt-cache", "show", name)
                self.assertEqual(q.returncode, 0, f"Depends names {name}, which apt does not know")


if __name__ == "__main__":
    BUILD = os.path.abspath(sys.argv.pop(1))
    unittest.main()
