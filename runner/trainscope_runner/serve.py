"""python -m trainscope_runner serve --socket NAME: the runner server.
(See Note [the runner server] below.)"""

# Note [the runner server]: every runner process (a benchmark point of the user's code, each rank of
# a Python strategy, an attention table, a check) starts with `import torch`, about 2 s of CPU, more
# than many of the jobs themselves take on a CPU. The server imports torch, torch.distributed and the
# runner's own modules once, then forks one child per job that a front end sends over a Unix
# socket: the job's argv (after `-m trainscope_runner`), its environment and working folder, and its
# stdin, stdout and stderr as file descriptors. The child is what `python -m trainscope_runner ARGS`
# would have made, minus the imports:
# - CUDA is never initialised in the server (nothing here calls into it), so each child starts
#   its own CUDA context, as a new process does. Before each fork the server checks that it has
#   started no Python thread. Native threads are those of OpenBLAS's pool, which numpy (imported
#   by torch) starts and which OpenBLAS itself stops around a fork (pthread_atfork);
# - the job's environment replaces the child's. What the interpreter, torch and the libraries it
#   loads read while starting must not differ (the keys in _AT_START: PYTHON*, LD_*, OMP_*,
#   TORCH*, CUDA_*, ...): a job that gives one of them another value is refused, and the front end
#   then runs it as a new process. OMP_NUM_THREADS, which the OpenMP runtime read when torch loaded
#   it and which the launcher sets per rank (See Note [threads per rank]), is applied with
#   torch.set_num_threads;
# - the child is its own process group, dies with the server (PR_SET_PDEATHSIG), gets the default
#   signal dispositions of a new interpreter, runs the runner's main and exits with its code (an
#   uncaught exception: Python's traceback and 1; Ctrl-C: killed by SIGINT, as Python does);
# - the server answers the job's connection with {"pid": N}, then {"exit": code} or
#   {"signal": n} when the child ends; a connection closed before that (the front end died)
#   kills the child's group. Only the server's own user may connect (SO_PEERCRED).
# The front end (distributed/src/launcher.cpp, LaunchSpec::runner_server) treats the child as one
# it forked: its pipes, its process group for stopping it, its end from the connection. A refused
# or failed request falls back to fork and exec. The server ends when the process that started it
# does.

import json
import os
import selectors
import signal
import socket
import struct
import sys
import threading

# What the interpreter, torch and the libraries it loads (OpenMP, BLAS, CUDA's) read while the
# server started: a job whose environment gives any of these another value is refused. The rest
# (the rank's place, PATH, HOME, TrainScope's own settings) is read later, in the child, from the
# job's environment. OMP_NUM_THREADS is applied (torch.set_num_threads).
_AT_START = ("PYTHON", "LD_", "OMP_", "GOMP_", "KMP_", "MKL_", "OPENBLAS_", "TORCH", "PYTORCH", "CUDA_",
             "NVIDIA_", "CUBLAS", "CUDNN")
_APPLIED = {"OMP_NUM_THREADS"}
_MAX_HEADER = 16 << 20


def _read_at_start(key):
    return key.startswith(_AT_START) and key not in _APPLIED


def _environment_difference(mine, theirs):
    """The first key (sorted) read at start-up whose value differs between the two
    environments; None when they agree."""
    for key in sorted(set(mine) | set(theirs)):
        if _read_at_start(key) and mine.get(key) != theirs.get(key):
            return key
    return None


def _same_interpreter(path):
    here = sys.executable
    try:
        return (os.path.realpath(os.path.dirname(path)) == os.path.realpath(os.path.dirname(here))
                and os.path.realpath(path) == os.path.realpath(here))
    except (OSError, ValueError):
        return False


def _address(name):
    return "\0" + name[1:] if name.startswith("@") else name


def _send(conn, **fields):
    try:
        conn.sendall((json.dumps(fields) + "\n").encode())
    except OSError:
        pass


def _read_request(conn):
    """(header dict, [fds]) of one job; raises ValueError on a malformed one."""
    data, fds = b"", []
    while b"\n" not in data:
        chunk, got, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
        fds += got
        if not chunk:
            raise ValueError("the connection closed before the request ended")
        data += chunk
        if len(data) > _MAX_HEADER:
            raise ValueError("the request is too long")
    return json.loads(data.split(b"\n", 1)[0]), fds


def _child(header, fds, closing, server_pid, server_cwd):
    """In the forked child: becomes the job and never returns."""
    try:
        os.setpgid(0, 0)
        _parent_death_signal(signal.SIGKILL)
        if os.getppid() != server_pid:
            os._exit(127)
        for fd in closing:
            os.close(fd)
        stdin, stdout, stderr = fds
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.environ.clear()
        os.environ.update(header["env"])
        cwd = header.get("cwd") or server_cwd
        os.chdir(cwd)
        if not sys.flags.safe_path:  # See Note [the runner's sys.path]: the job's folder, not the server's
            sys.path[:] = [cwd if p in ("", server_cwd) else p for p in sys.path]
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as a new interpreter has it
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        threads = os.environ.get("OMP_NUM_THREADS", "")
        if threads.isdigit() and int(threads) > 0:
            import torch
            torch.set_num_threads(int(threads))
        sys.argv = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "__main__.py")] + header["argv"]
    except BaseException:  # noqa: B902 — nothing of the job ran; say so on its stderr
        import traceback
        traceback.print_exc()
        os._exit(127)
    code = 0
    try:
        from .__main__ import main
        code = main(header["argv"])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except KeyboardInterrupt:
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        os._exit(130)
    except BaseException:  # noqa: B902 — as the interpreter prints an uncaught exception
        import traceback
        traceback.print_exc()
        code = 1
    _flush()
    import atexit
    atexit._run_exitfuncs()
    _flush()
    os._exit(code or 0)


def _flush():
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:  # noqa: BLE001
            pass


def _parent_death_signal(sig):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def serve(name):
    # What the jobs import anyway, imported once here (none of it starts a thread or CUDA).
    import torch  # noqa: F401
    import torch.distributed  # noqa: F401
    import torch.nn.functional  # noqa: F401
    from . import adapters, attention, bench, code, ddp, fsdp2, lm, memory, profile, protocol, ranges  # noqa: F401

    server_pid, server_cwd, parent = os.getpid(), os.getcwd(), os.getppid()
    environment = dict(os.environ)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(_address(name))
    listener.listen(64)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    children = {}  # pid -> connection (None once the front end has gone)
    print(json.dumps({"event": "serving", "pid": server_pid, "socket": name}), flush=True)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)  # the front end has read its line and closed the pipe
    os.close(null)

    def start(conn):
        uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        if uid != os.getuid():
            _send(conn, refused="another user's connection")
            return False
        try:
            header, fds = _read_request(conn)
        except (ValueError, OSError) as e:
            _send(conn, refused=f"a bad request: {e}")
            return False
        try:
            if len(fds) != 3:
                _send(conn, refused=f"{len(fds)} file descriptors, not stdin, stdout and stderr")
                return False
            argv = header.get("argv", [])
            if argv[:2] != ["-m", "trainscope_runner"]:
                _send(conn, refused="not `python -m trainscope_runner ...`")
                return False
            header["argv"] = argv[2:]
            if not _same_interpreter(header.get("python", "")):
                _send(conn, refused=f"another interpreter ({header.get('python')}, the server's {sys.executable})")
                return False
            differs = _environment_difference(environment, header.get("env", {}))
            if differs:
                _send(conn, refused=f"the environment's {differs} differs from the server's")
                return False
            if torch.cuda.is_initialized() or threading.active_count() != 1:
                _send(conn, refused="the server has CUDA or threads started; a fork would not be clean")
                return False
            closing = [listener.fileno()] + [c.fileno() for c in children.values() if c is not None] + [conn.fileno()]
            pid = os.fork()
            if pid == 0:
                _child(header, fds, closing, server_pid, server_cwd)
            try:
                os.setpgid(pid, pid)
            except OSError:
                pass
            children[pid] = conn
            _send(conn, pid=pid)
            return True
        finally:
            for fd in fds:
                os.close(fd)

    while True:
        for key, _ in sel.select(timeout=0.05):
            if key.fileobj is listener:
                conn, _ = listener.accept()
                conn.settimeout(10)
                if start(conn):
                    conn.setblocking(False)
                    sel.register(conn, selectors.EVENT_READ)
                else:
                    conn.close()
            else:  # a job's front end closed its connection (or wrote, which it never does)
                conn = key.fileobj
                try:
                    gone = conn.recv(1) == b""
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if gone:
                    sel.unregister(conn)
                    conn.close()
                    for pid, c in children.items():
                        if c is conn:
                            children[pid] = None
                            try:
                                os.killpg(pid, signal.SIGKILL)
                            except OSError:
                                pass
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = children.pop(pid, None)
            if conn is not None:
                if os.WIFSIGNALED(status):
                    _send(conn, signal=os.WTERMSIG(status))
                else:
                    _send(conn, exit=os.waitstatus_to_exitcode(status))
                sel.unregister(conn)
                conn.close()
        if os.getppid() != parent:  # the process that started the server has ended
            for pid in children:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            return 0
