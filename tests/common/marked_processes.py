"""Finding the processes a test started (a CLI, its ranks, its Python runner), so that a test can
check none is left behind: every one inherits a marker in its environment (the launcher passes
the whole environment on), so processes of other checkouts on this machine are not counted."""
import os


def marked_env(marker, **extra):
    env = dict(os.environ)
    env["TRAINSCOPE_TEST_MARKER"] = marker
    env.update(extra)
    return env


def processes_with(marker):
    """Pids (this test's own excepted) whose environment holds the marker."""
    found = []
    needle = f"TRAINSCOPE_TEST_MARKER={marker}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            pass  # gone, or not ours to read
    return found
