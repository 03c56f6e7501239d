"""Finding the processes a test started (a CLI, its ranks, its Python runner), so that a test can
check none is left behind: every one inherits a marker in its environment (the launcher passes
the whole environment on), so processes of other checkouts on this machine are not counted."""
import os

# Processes whose children count as the test's too: a runner server shared by a test file's
# commands (tests/common/runner_server.py), whose children inherit its environment, not a test's.
counted_parents = set()


def marked_env(marker, **extra):
    env = dict(os.environ)
    env["TRAINSCOPE_TEST_MARKER"] = marker
    env.update(extra)
    return env


def _parent(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def processes_with(marker):
    """Pids (this test's own excepted) whose environment holds the marker, and the children of
    a shared runner server (See counted_parents)."""
    found = []
    needle = f"TRAINSCOPE_TEST_MARKER={marker}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        if counted_parents and _parent(pid) in counted_parents:
            found.append(int(pid))
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            pass  # gone, or not ours to read
    return found
