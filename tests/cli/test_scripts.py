#!/usr/bin/env python3
"""The set-up script (scripts/setup.sh) with a stand-in for cmake that records its arguments:
a build folder configured with one LibTorch is configured again when TORCH_PREFIX names another
(its cached paths to the old one dropped), left alone when it is the same, and its messages are
bold on a terminal unless NO_COLOR is set. Runs in a second; builds nothing.
Usage: test_scripts.py path/to/the/source/tree"""
import os
import pty
import subprocess
import sys
import tempfile
import unittest

ROOT = None

FAKE_CMAKE = """#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$FAKE_CMAKE_LOG"
"""


class SetupScript(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        bin_dir = os.path.join(self.tmp.name, "bin")
        os.mkdir(bin_dir)
        with open(os.path.join(bin_dir, "cmake"), "w") as f:
            f.write(FAKE_CMAKE)
        os.chmod(os.path.join(bin_dir, "cmake"), 0o755)
        self.build = os.path.join(self.tmp.name, "build")
        os.mkdir(self.build)
        self.log = os.path.join(self.tmp.name, "cmake.log")
        self.env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"], FAKE_CMAKE_LOG=self.log,
                        TRAINSCOPE_BUILD_DIR=self.build, TRAINSCOPE_SKIP_APT="1", TRAINSCOPE_JOBS="1")
        self.env.pop("NO_COLOR", None)

    def tearDown(self):
        self.tmp.cleanup()

    def cache(self, prefix):
        root = prefix[: -len("/share/cmake")]
        with open(os.path.join(self.build, "CMakeCache.txt"), "w") as f:
            f.write(f"CMAKE_PREFIX_PATH:UNINITIALIZED={prefix}\n"
                    f"Torch_DIR:PATH={root}/share/cmake/Torch\n"
                    f"TORCH_LIBRARY:FILEPATH={root}/lib/libtorch.so\n"
                    "SQLite3_LIBRARY:FILEPATH=/usr/lib/libsqlite3.so\n")

    def setup(self, **env):
        p = subprocess.run(["bash", os.path.join(ROOT, "scripts", "setup.sh")], capture_output=True, text=True,
                           timeout=60, env=dict(self.env, **env))
        self.assertEqual(p.returncode, 0, p.stderr)
        calls = []
        if os.path.exists(self.log):
            with open(self.log) as f:
                calls = f.read().splitlines()
        return p, calls

    def test_torch_prefix_configures_the_build_folder_again(self):
        self.cache("/old/torch/share/cmake")
        p, calls = self.setup(TORCH_PREFIX="/new/torch/share/cmake")
        configure = [c for c in calls if not c.startswith("--build")]
        self.assertEqual(len(configure), 1, calls)
        self.assertIn("-DCMAKE_PREFIX_PATH=/new/torch/share/cmake", configure[0])
        # The old LibTorch's cached paths go, others stay.
        self.assertIn("-U Torch_DIR", configure[0])
        self.assertIn("-U TORCH_LIBRARY", configure[0])
        self.assertNotIn("SQLite3_LIBRARY", configure[0])
        self.assertIn("configuring it for /new/torch/share/cmake", p.stderr)
        self.assertTrue(calls[-1].startswith("--build"), calls)

    def test_the_same_prefix_builds_without_configuring(self):
        self.cache("/same/torch/share/cmake")
        _, calls = self.setup(TORCH_PREFIX="/same/torch/share/cmake")
        self.assertEqual([c.split()[0] for c in calls], ["--build"], calls)

    def test_no_color(self):
        self.cache("/same/torch/share/cmake")

        def stderr_on_a_terminal(**env):
            main, side = pty.openpty()
            p = subprocess.run(["bash", os.path.join(ROOT, "scripts", "setup.sh")], stdout=subprocess.DEVNULL,
                               stderr=side, timeout=60, env=dict(self.env, TORCH_PREFIX="/same/torch/share/cmake",
                                                                 **env))
            os.close(side)
            out = b""
            while True:
                try:
                    chunk = os.read(main, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            os.close(main)
            self.assertEqual(p.returncode, 0, out)
            return out.decode()

        # Each line says the time since the script began: "[trainscope 1:05] building".
        self.assertRegex(stderr_on_a_terminal(), r"\033\[1m\[trainscope \d+:\d\d\]\033\[0m ")
        plain = stderr_on_a_terminal(NO_COLOR="1")
        self.assertRegex(plain, r"\[trainscope \d+:[0-5]\d\] building")
        self.assertNotIn("\033", plain)


if __name__ == "__main__":
    ROOT = os.path.abspath(sys.argv.pop(1))
    unittest.main()
