// The local launcher: N copies of a worker executable on this machine, one per rank, as
// torchrun would start them (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT added to this process's whole environment). Each worker speaks JSON lines on
// stdout; the launcher hands every line to a callback with its rank and keeps the last lines
// of each rank's stderr for error messages. One failing, dying or silent rank stops them all.
// Torch-free header: the CLI and the window use it alike.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "trainscope/distributed/group_spec.h"

namespace ts::dist {

struct LaunchSpec {
    std::string executable;              // an absolute path (the CLI: /proc/self/exe)
    std::vector<std::string> arguments;  // after argv[0], the same for every rank
    int world_size = 1;
    CommBackend backend = CommBackend::Gloo;  // NCCL: at most one rank per GPU present
    // A rank that has written nothing (stdout or stderr) and not exited for this long is hung:
    // all ranks are stopped. Zero: wait for ever.
    std::chrono::milliseconds hang_timeout{std::chrono::seconds(120)};
    // Between SIGTERM and SIGKILL when ranks are stopped.
    std::chrono::milliseconds grace{std::chrono::seconds(3)};
    // More variables for every rank (NAME, value); they win over this process's own.
    std::vector<std::pair<std::string, std::string>> environment;
    // A runner server's socket ("@name": Linux's abstract namespace, else a path): each rank is
    // first asked of it, a child it forks instead of a new process (See Note [the runner
    // server], runner/trainscope_runner/serve.py); a refusal or no answer: fork and exec.
    std::string runner_server;
};

// One line from `fd` (blocking, at most `timeout`), without its newline; "" at end of file, an
// error or the timeout.
std::string readLine(int fd, std::chrono::milliseconds timeout);

// The CUDA devices this process sees (what NCCL's world size may reach).
int gpuCount();

// Why a launch cannot start ("" when it can): world size below 1, NCCL not built or more ranks
// than GPUs ("world size 4 is more than the 2 GPUs present"), no executable at the path.
std::string launchProblem(const LaunchSpec& spec);

// How one rank ended.
struct RankEnd {
    int rank = 0;
    pid_t pid = 0;
    bool exited = false;  // on its own, with exit_code
    int exit_code = -1;
    int signal = 0;        // killed by this signal (0: none)
    bool stopped = false;  // we stopped it (another rank failed, a hang, a cancel)
    std::string message;   // its {"event":"error"} message, else its last stderr line
    std::deque<std::string> stderr_tail;  // its last stderr lines (at most kStderrTail)
    bool served = false;                  // forked by the runner server (LaunchSpec::runner_server)
    std::string server_refusal;           // why the runner server did not fork it ("" when it did)
};

struct LaunchOutcome {
    enum class State { Finished, Failed, TimedOut, Cancelled };
    State state = State::Finished;
    int failed_rank = -1;  // the rank that failed or hung first (-1: none)
    // "rank 1 was killed by signal 9 (SIGKILL): <its last stderr line>", "rank 2 wrote nothing
    // for 30 s (hung?)", "stopped"; empty when every rank finished.
    std::string message;
    std::vector<RankEnd> ranks;  // by rank
    int attempts = 1;  // launches made (a rendezvous port taken by another process retries)
    bool ok() const { return state == State::Finished; }
};

inline constexpr size_t kStderrTail = 40;

// Note [local launcher]:
// The ranks are started with fork + execve, each the leader of its own process group (so the
// terminal's Ctrl-C reaches the launcher alone, which then stops them in order, and a stop
// reaches anything a worker started) and with PR_SET_PDEATHSIG, so they die with the thread
// that launched them even when the launcher is killed. stdout and stderr come back through
// non-blocking pipes read in one poll() loop on the calling thread. On the first failure
// (non-zero exit, a signal, an error line followed by an exit, a hang, a cancel) every other
// rank gets SIGTERM, then SIGKILL after `grace`; every child is reaped before run() returns,
// and the destructor does the same for a launcher left mid-run (an exception in a callback).
// A rank forked by a runner server instead (LaunchSpec::runner_server, See Note [the runner
// server]) is its own process group too and is stopped the same way; its end comes from its
// connection to the server, and if the launcher dies, the closed connection makes the server
// kill it.
class LocalLauncher {
public:
    using LineHandler = std::function<void(int rank, const std::string& line)>;
    using StopCheck = std::function<bool()>;

    // Throws std::invalid_argument with launchProblem() when the spec cannot start.
    explicit LocalLauncher(LaunchSpec spec);
    ~LocalLauncher();
    LocalLauncher(const LocalLauncher&) = delete;
    LocalLauncher& operator=(const LocalLauncher&) = delete;

    // Starts the ranks and returns once all have ended. `on_line` gets every complete stdout
    // line (without its newline) with its rank, on this thread, in the order each rank wrote
    // them; `stop` is asked about ten times a second and a true stops every rank (Cancelled).
    // A failure is a result, not an exception; only a failure to start (fork, pipes) throws.
    LaunchOutcome run(const LineHandler& on_line, const StopCheck& stop = {});

    // The pids of the last launch's ranks (by rank), for tests that check none is left.
    std::vector<pid_t> pids() const;
    int port() const { return port_; }

private:
    struct Child;
    bool launchOnce(LaunchOutcome& outcome, const LineHandler& on_line, const StopCheck& stop);
    void start();
    void stopAll(int first_signal);
    void reapAll();

    LaunchSpec spec_;
    int port_ = 0;
    std::vector<Child> children_;
};

}  // namespace ts::dist
