"""Running trainscope-cli many times without paying LibTorch's start-up each time (See Note [the
CLI's fork server] in tests/common/cli_fork_server.cpp). `CliRunner(cli).run(args, ...)` answers as
subprocess.run(args, capture_output=True) does (a CompletedProcess with the exit code, or minus the
signal, and the bytes or text of stdout and stderr; TimeoutExpired after a timeout), from a child
forked by the fork server beside the CLI when there is one, else from a fresh process.
TRAINSCOPE_TEST_FORK_SERVER=0 turns the server off."""
import atexit
import os
import signal
import socket
import struct
import subprocess
import tempfile
import time

SERVER_NAME = "trainscope-cli-fork-server"


class CliRunner:
    def __init__(self, cli):
        self.cli = cli
        self.server = None
        self.folder = None
        server = os.path.join(os.path.dirname(cli), SERVER_NAME)
        if os.environ.get("TRAINSCOPE_TEST_FORK_SERVER", "1") != "0" and os.access(server, os.X_OK):
            self.folder = tempfile.TemporaryDirectory(prefix="ts-fork-")
            self.socket_path = os.path.join(self.folder.name, "s")
            self.server = subprocess.Popen([server, "--serve", self.socket_path], stdin=subprocess.DEVNULL)
            deadline = time.time() + 60
            while not os.path.exists(self.socket_path):
                if self.server.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"{SERVER_NAME} did not start (exit {self.server.poll()})")
                time.sleep(0.02)
            atexit.register(self.close)

    def close(self):
        if self.server and self.server.poll() is None:
            self.server.terminate()
            self.server.wait(timeout=30)
        if self.folder:
            self.folder.cleanup()
            self.folder = None

    def run(self, args, env=None, cwd=None, input=None, timeout=None, text=False):
        if not self.server:
            return subprocess.run([self.cli, *args], capture_output=True, env=env, cwd=cwd, input=input,
                                  timeout=timeout, text=text)
        env = dict(os.environ) if env is None else env
        argv = [self.cli, *args]
        strings = [os.path.abspath(cwd or os.getcwd()), str(len(argv)), *argv,
                   *(f"{k}={v}" for k, v in env.items())]
        request = b"".join(os.fsencode(x if isinstance(x, (str, bytes, os.PathLike)) else str(x)) + b"\0"
                           for x in strings)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
                tempfile.TemporaryFile() as inp:
            if input is not None:
                inp.write(input.encode() if isinstance(input, str) else input)
                inp.seek(0)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(self.socket_path)
                socket.send_fds(s, [struct.pack("=I", len(request))], [inp.fileno(), out.fileno(), err.fileno()])
                s.sendall(request)
                reader = s.makefile("r")
                pid = self._expect(reader.readline(), "pid")
                s.settimeout(timeout)
                try:
                    line = reader.readline()
                except TimeoutError:
                    os.kill(pid, signal.SIGKILL)  # the server reaps it
                    raise subprocess.TimeoutExpired(argv, timeout)
            kind, value = line.split()
            code = int(value) if kind == "exit" else -int(value)
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        if text:
            stdout, stderr = stdout.decode(), stderr.decode()
        return subprocess.CompletedProcess(argv, code, stdout, stderr)

    @staticmethod
    def _expect(line, word):
        parts = line.split()
        if len(parts) != 2 or parts[0] != word:
            raise RuntimeError(f"{SERVER_NAME}: {line.strip() or 'no answer'}")
        return int(parts[1])
