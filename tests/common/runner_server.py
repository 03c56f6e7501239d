"""One Python runner server for a test file's commands (See Note [the runner server] in
runner/trainscope_runner/serve.py): `share_runner_server(cli)` starts `trainscope-cli
runner-server`, and every command the tests start after it (their environment copies this
process's) forks its runner processes from that server instead of importing torch again. The
children of the server are then the tests' runner processes: marked_processes.processes_with
counts them, so "no runner left behind" still holds. The tests about a runner server of a
command's own, and TRAINSCOPE_TEST_RUNNER_SERVER=0, leave it out."""
import atexit
import os
import subprocess

import marked_processes


def share_runner_server(cli):
    if os.environ.get("TRAINSCOPE_TEST_RUNNER_SERVER", "1") == "0":
        return None
    proc = subprocess.Popen([cli, "runner-server", "--while-stdin-open"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("TRAINSCOPE_RUNNER_SERVER="):
        proc.kill()
        raise RuntimeError(f"trainscope-cli runner-server did not start: {proc.stderr.read()}")
    socket = line.split("=", 1)[1]
    # "runner server PID for ...": the server's pid, whose children are the tests' runners.
    said = proc.stderr.readline().split()
    server_pid = int(said[2]) if len(said) > 2 and said[2].isdigit() else None
    os.environ["TRAINSCOPE_RUNNER_SERVER"] = socket
    if server_pid:
        marked_processes.counted_parents.add(server_pid)

    def close():
        os.environ.pop("TRAINSCOPE_RUNNER_SERVER", None)
        if proc.poll() is None:
            proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.stdout.close()
        proc.stderr.close()
    atexit.register(close)
    return socket
