// The Python source of work: TrainScope's runner package (runner/trainscope_runner) started in
// the interpreter the user names, importing the user's code and speaking the workers' line
// protocol (one JSON object a line on stdout; distributed/worker_lines.h) back to a lab's
// runner. Started through the distributed lab's local launcher as a world of one, so that it
// gets the launcher's guarantees: its own process group, dies with us, a hang timeout, Stop
// ends it within a grace period, no orphans (see Note [local launcher]). LibTorch-free.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/observer.h"

namespace ts {

// The interpreter used when the user names none: $TRAINSCOPE_PYTHON, else the Python with
// torch that set-up found (fixed at configure time), else `python3` on the PATH.
std::string defaultPython();
// The folder that holds the trainscope_runner package: $TRAINSCOPE_RUNNER_PATH, else
// share/trainscope/runner of the prefix the executable is installed in, else the source tree's
// runner/ (a build).
std::string runnerFolder();

// The environment a runner process gets: PYTHONPATH with the runner's folder first (the user's
// after it), unbuffered output, no bytecode written into the user's folders, and PYTHONSAFEPATH
// so that a file in the working folder named like a module of the standard library or of torch
// (a `timeit.py`) does not shadow it (see Note [the runner's sys.path]).
std::vector<std::pair<std::string, std::string>> pythonRunnerEnvironment();

// See Note [the runner server] (runner/trainscope_runner/serve.py): the socket of a runner
// server for `python` (a path, as findExecutable returns it), whose children the launcher's
// runner processes then are. $TRAINSCOPE_RUNNER_SERVER when set ("off": none); else this
// process's own for that interpreter, started on first use (it imports torch once) and ended
// with this process; "" when none would start (every job is then a new process).
std::string runnerServer(const std::string& python);

// A runner server of its own for `python` (a path), for `trainscope-cli runner-server`: its pid
// and socket once it serves; pid -1 when it would not start. It ends when this process does.
struct RunnerServerProcess {
    int pid = -1;
    std::string socket;
};
RunnerServerProcess startRunnerServer(const std::string& python);

// The course-style checkout shipped in examples/ (a model with the course's constructor and a
// student's AdamW): the Code field's default, so that a first Run has code to run. Empty when
// it is not there.
std::string exampleCheckout();

struct PythonJob {
    std::string python;   // the interpreter (a path, or a name on the PATH); empty: defaultPython()
    std::string command;  // the runner's command: "check", "bench"
    nlohmann::json spec;  // what it runs (its --spec)
    double timeout_s = 600;  // the runner silent this long: its step hangs, it is ended
};

struct PythonOutcome {
    enum class State { Finished, Failed, TimedOut, Cancelled };
    State state = State::Finished;
    std::string phase;    // where the user's code failed: import, construct, forward, ... (Failed)
    std::string message;  // one line: what failed, with the user's file and line where known
    std::string traceback;  // the user's traceback as Python prints it (their frames only)
    bool ok() const { return state == State::Finished; }
    // message, then the traceback: what a point's error shows.
    std::string text() const;
};

// Runs the job and returns once the runner has ended; every JSON line it writes (other than
// its error line) reaches `on_event`, on this thread. A failure of the user's code, a Python
// that cannot start or has no torch, a crash (a signal), a hang are outcomes, not exceptions.
PythonOutcome runPython(const PythonJob& job,
                        const std::function<void(const nlohmann::json&)>& on_event,
                        const CancelToken& cancel);

// Why `code` (--code) and `python` (--python; empty: the default) cannot be what a point runs,
// without starting Python: an interpreter that is not there, a folder or file that does not
// exist, a reference that is neither a folder nor module:callable. Empty when they may be.
// With `adapters_module`, a file or module of the course's adapter functions (no ":Name") is
// accepted too: the attention and distributed labs find the user's code through them.
std::string pythonCodeProblem(const std::string& code, const std::string& python,
                              bool adapters_module = false);
// The interpreter alone (--python; empty: the default) is not there.
std::string pythonInterpreterProblem(const std::string& python);

// What `--code` names, as the runner found it without running anything: the interpreter, its
// torch and GPU, the form (a checkout or a callable), the model and optimizer, the course's
// adapters in tests/adapters.py and whether each is implemented yet.
struct CodeCheck {
    PythonOutcome outcome;  // Failed: the user's import error (with the traceback), no torch, ...
    nlohmann::json found;   // the runner's "found" line
    std::string text() const;  // a few lines for a person: what was found, or what failed
};
// With `adapters`, the code is the course's adapters (the attention and distributed labs): a
// checkout without a model, or a file of adapter functions, is what was asked for.
CodeCheck checkPythonCode(const std::string& code, const std::string& optimizer,
                          const std::string& python, const CancelToken& cancel,
                          double timeout_s = 120, bool adapters = false);

// Where `python` is: the path itself when it has a '/', else searched on the PATH; empty when
// it cannot be found or run.
std::string findExecutable(const std::string& python);

}  // namespace ts
