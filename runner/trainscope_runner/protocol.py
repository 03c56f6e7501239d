"""The runner's side of the line protocol, the one the distributed workers speak: one JSON
object a line on stdout, each with an "event".

    {"event":"found", ...}                 what `check` found (the interpreter, torch, the code)
    {"event":"ready", ...}                 the model is built; its class and parameter count
    {"event":"step", "index":0, ...}       one timed step
    {"event":"result", "status":"ok"|"oom", ...}
    {"event":"error", "message":..., "phase":..., "traceback":...}   then exit 3

Anything else the user's code prints goes to stderr: stdout is the protocol's alone."""

import json
import os
import sys
import traceback

_out = None

# The runner's own files: left out of a user's traceback, which should show their code.
_RUNNER_DIR = os.path.dirname(os.path.abspath(__file__))


def claim_stdout():
    """Keeps the real stdout for protocol lines and sends every other print to stderr."""
    global _out
    _out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr


def emit(event, **fields):
    fields = {"event": event, "rank": 0, **fields}
    line = json.dumps(fields, allow_nan=False, default=str)
    # $TRAINSCOPE_RUNNER_LOG: a file that gets one line per event (its name and size), to see
    # what the runner sent when a front end seems not to have received it.
    if os.environ.get("TRAINSCOPE_RUNNER_LOG"):
        with open(os.environ["TRAINSCOPE_RUNNER_LOG"], "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()} {event} {len(line)} bytes\n")
    (_out or sys.stdout).write(line + "\n")
    (_out or sys.stdout).flush()


def user_traceback(exc):
    """The traceback of `exc` as Python prints it, without the runner's own frames: the user
    sees their files and lines."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not os.path.abspath(f.filename).startswith(_RUNNER_DIR + os.sep)]
    text = "Traceback (most recent call last):\n" if frames else ""
    text += "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return text


def where(exc):
    """'file.py:12' of the innermost frame of the user's code, or ''."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not os.path.abspath(f.filename).startswith(_RUNNER_DIR + os.sep)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""


class UserError(Exception):
    """A failure in (or of) the user's code, with the phase it happened in."""

    def __init__(self, phase, message, cause=None):
        super().__init__(message)
        self.phase = phase
        self.cause = cause


def fail(err):
    """Reports `err` (a UserError or any exception) as the error line and exits 3."""
    if isinstance(err, UserError):
        cause = err.cause
        tb = user_traceback(cause) if cause is not None else ""
        at = where(cause) if cause is not None else ""
        emit("error", phase=err.phase, message=str(err) + (f" ({at})" if at else ""), traceback=tb)
    else:
        emit("error", phase="runner", message=f"{type(err).__name__}: {err}", traceback=user_traceback(err))
    sys.exit(3)
