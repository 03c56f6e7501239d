#include "trainscope/distributed/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "trainscope/distributed/group_spec.h"

extern char** environ;

namespace ts::dist {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxWorld = 256;         // a typo (--world 4000) must not fork thousands of processes
constexpr size_t kMaxLine = 4u << 20;  // a line longer than this is handed on in pieces
constexpr int kPortAttempts = 3;

// Note [threads per rank]: every rank is a process with LibTorch's intra-op pool, which by default
// takes one thread per core. N ranks on C cores then run N·C OpenMP threads that spin while they
// wait for each other: on a 2-core machine, four Gloo ranks of the tiny model took 200-800 ms a
// step where one thread each takes 10-30 ms (and every collective waits for the slowest,
// descheduled rank). So each rank gets OMP_NUM_THREADS = the cores this process may use / world
// size (at least 1), as torchrun sets 1 for several processes per node. A value the user set (in
// our environment or the spec's) is passed on untouched. NCCL ranks get the same share: their CPU
// work is launching kernels, and one GPU per rank needs no more than its share of cores.
int threadsPerRank(int world_size) {
    cpu_set_t set;
    CPU_ZERO(&set);
    int cores = 0;
    if (::sched_getaffinity(0, sizeof(set), &set) == 0) cores = CPU_COUNT(&set);
    if (cores <= 0) cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    return std::max(1, cores / std::max(1, world_size));
}

std::string signalName(int sig) {
    switch (sig) {
        case SIGKILL:
            return "SIGKILL";
        case SIGTERM:
            return "SIGTERM";
        case SIGSEGV:
            return "SIGSEGV";
        case SIGABRT:
            return "SIGABRT";
        case SIGBUS:
            return "SIGBUS";
        case SIGFPE:
            return "SIGFPE";
        case SIGILL:
            return "SIGILL";
        case SIGINT:
            return "SIGINT";
        case SIGPIPE:
            return "SIGPIPE";
        default:
            return "signal " + std::to_string(sig);
    }
}

// The message of a worker's {"event":"error","message":...} line, or "" for any other line.
std::string errorMessageOf(const std::string& line) {
    if (line.find("\"error\"") == std::string::npos) return "";
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || j.value("event", "") != "error") return "";
    const auto m = j.find("message");
    return m != j.end() && m->is_string() ? m->get<std::string>()
                                          : std::string("an error without a message");
}

bool addressInUse(const std::string& text) {
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return lower.find("address already in use") != std::string::npos ||
           lower.find("eaddrinuse") != std::string::npos;
}

void closeFd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

// Reads what a pipe holds now; false at end of file (the fd is then closed).
bool drain(int& fd, std::string& buf) {
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n > 0) {
            buf.append(chunk, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        closeFd(fd);
        return false;
    }
}

// Asks the runner server to fork the job (See Note [the runner server]): its argv after the
// interpreter, environment, this folder, and stdin, `out` and `err` as its descriptors. The
// child's pid, its connection in `conn` (the server writes its end there); or -1 with `why`.
pid_t forkThroughServer(const std::string& server, const std::string& python,
                        const std::vector<std::string>& args, const std::vector<std::string>& env,
                        int out, int err, int& conn, std::string& why) {
    conn = -1;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const bool abstract = !server.empty() && server[0] == '@';
    if (server.size() >= sizeof addr.sun_path) {
        why = "the socket's name is too long";
        return -1;
    }
    std::memcpy(addr.sun_path, server.data(), server.size());
    if (abstract) addr.sun_path[0] = '\0';
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + server.size() +
                                            (abstract ? 0 : 1));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
        why = std::string("cannot reach it: ") + std::strerror(errno);
        if (fd >= 0) ::close(fd);
        return -1;
    }
    nlohmann::json environment = nlohmann::json::object();
    for (const auto& e : env) {
        const size_t eq = e.find('=');
        if (eq != std::string::npos) environment[e.substr(0, eq)] = e.substr(eq + 1);
    }
    char cwd[4096];
    const std::string header = nlohmann::json{{"python", python},
                                              {"argv", args},
                                              {"env", environment},
                                              {"cwd", ::getcwd(cwd, sizeof cwd) ? cwd : ""}}
                                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                               "\n";
    int in = STDIN_FILENO, null_in = -1;
    if (::fcntl(in, F_GETFD) < 0) in = null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int fds[3] = {in, out, err};
    char control[CMSG_SPACE(sizeof fds)] = {};
    iovec iov{const_cast<char*>(header.data()), header.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof fds);
    std::memcpy(CMSG_DATA(cm), fds, sizeof fds);
    ssize_t sent;
    while ((sent = ::sendmsg(fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (null_in >= 0) ::close(null_in);
    size_t done = sent > 0 ? static_cast<size_t>(sent) : 0;
    while (sent >= 0 && done < header.size()) {
        sent = ::send(fd, header.data() + done, header.size() - done, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) sent = 0;
        if (sent > 0) done += static_cast<size_t>(sent);
    }
    if (sent < 0) {
        why = std::string("the request was not sent: ") + std::strerror(errno);
        ::close(fd);
        return -1;
    }
    const auto reply =
        nlohmann::json::parse(readLine(fd, std::chrono::seconds(30)), nullptr, false);
    if (reply.is_object() && reply.contains("pid") && reply["pid"].is_number_integer()) {
        conn = fd;
        ::fcntl(conn, F_SETFL, ::fcntl(conn, F_GETFL) | O_NONBLOCK);
        return reply["pid"].get<pid_t>();
    }
    why = reply.is_object() ? reply.value("refused", "no pid in its answer") : "no answer";
    ::close(fd);
    return -1;
}

// A served child's end, from its connection: true once the server has said it (or has gone:
// then as if killed).
bool servedChildEnded(int& conn, std::string& buf, bool& exited, int& code, int& sig) {
    drain(conn, buf);  // at end of file the answer, if any, is all in `buf`
    const size_t nl = buf.find('\n');
    if (nl == std::string::npos && conn >= 0) return false;
    const auto j = nlohmann::json::parse(buf.substr(0, nl), nullptr, false);
    if (j.is_object() && j.contains("exit")) {
        exited = true;
        code = j.value("exit", -1);
    } else {
        sig = j.is_object() ? j.value("signal", SIGKILL) : SIGKILL;
    }
    closeFd(conn);
    return true;
}

}  // namespace

std::string readLine(int fd, std::chrono::milliseconds timeout) {
    std::string line;
    const auto deadline = Clock::now() + timeout;
    char ch;
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return "";
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return "";
        const ssize_t n = ::read(fd, &ch, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return "";
        if (ch == '\n') return line;
        line += ch;
    }
}

int gpuCount() { return static_cast<int>(torch::cuda::device_count()); }

std::string launchProblem(const LaunchSpec& spec) {
    if (spec.world_size < 1)
        return "world size must be at least 1 (it is " + std::to_string(spec.world_size) + ")";
    if (spec.world_size > kMaxWorld)
        return "world size " + std::to_string(spec.world_size) +
               " is more than a local launch starts (" + std::to_string(kMaxWorld) + ")";
    if (spec.backend == CommBackend::Nccl) {
        if (!ncclBuilt())
            return "this TrainScope was built without NCCL (a CPU LibTorch): use --backend gloo";
        const int gpus = gpuCount();
        if (spec.world_size > gpus)
            return "world size " + std::to_string(spec.world_size) + " is more than the " +
                   std::to_string(gpus) + (gpus == 1 ? " GPU present" : " GPUs present") +
                   " (NCCL runs one rank per GPU)";
    }
    if (spec.executable.empty()) return "no worker executable given";
    if (::access(spec.executable.c_str(), X_OK) != 0)
        return "worker executable '" + spec.executable + "' does not exist or cannot be run";
    return "";
}

struct LocalLauncher::Child {
    int rank = 0;
    pid_t pid = 0;
    bool alive = false;  // started and not yet reaped
    int out = -1, err = -1;
    std::string out_buf, err_buf;
    Clock::time_point last_activity;
    RankEnd end;
    std::string error_line;  // its {"event":"error"} message
    int server = -1;         // a served child's connection to the runner server
    std::string server_buf;
};

LocalLauncher::LocalLauncher(LaunchSpec spec) : spec_(std::move(spec)) {
    if (const std::string problem = launchProblem(spec_); !problem.empty())
        throw std::invalid_argument(problem);
}

LocalLauncher::~LocalLauncher() { reapAll(); }

std::vector<pid_t> LocalLauncher::pids() const {
    std::vector<pid_t> out;
    for (const auto& c : children_) out.push_back(c.pid);
    return out;
}

void LocalLauncher::start() {
    reapAll();  // a run() left by an exception in a callback
    port_ = freeLoopbackPort();
    const std::string world = std::to_string(spec_.world_size);
    // Every variable we set, so that the parent's own copy (a torchrun around us) is replaced.
    std::vector<std::pair<std::string, std::string>> fixed = {
        {"WORLD_SIZE", world},
        {"LOCAL_WORLD_SIZE", world},
        {"MASTER_ADDR", "127.0.0.1"},
        {"MASTER_PORT", std::to_string(port_)}};
    for (const auto& kv : spec_.environment) fixed.push_back(kv);
    // See Note [threads per rank].
    const bool threads_given = std::getenv("OMP_NUM_THREADS") != nullptr ||
                               std::any_of(fixed.begin(), fixed.end(), [](const auto& kv) {
                                   return kv.first == "OMP_NUM_THREADS";
                               });
    if (!threads_given)
        fixed.emplace_back("OMP_NUM_THREADS", std::to_string(threadsPerRank(spec_.world_size)));
    std::set<std::string> replaced = {"RANK", "LOCAL_RANK"};
    for (const auto& kv : fixed) replaced.insert(kv.first);
    std::vector<std::string> inherited;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        if (!replaced.count(entry.substr(0, entry.find('=')))) inherited.push_back(entry);
    }
    std::vector<std::string> argv_s = {spec_.executable};
    argv_s.insert(argv_s.end(), spec_.arguments.begin(), spec_.arguments.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    children_.clear();
    children_.resize(spec_.world_size);
    // A started rank (forked here or by the runner server): our ends of its pipes, non-blocking.
    auto adopt = [](Child& c, pid_t pid, const int out[2], const int err[2]) {
        ::close(out[1]);
        ::close(err[1]);
        c.pid = c.end.pid = pid;
        c.alive = true;
        c.out = out[0];
        c.err = err[0];
        ::fcntl(c.out, F_SETFL, ::fcntl(c.out, F_GETFL) | O_NONBLOCK);
        ::fcntl(c.err, F_SETFL, ::fcntl(c.err, F_GETFL) | O_NONBLOCK);
        c.last_activity = Clock::now();
    };
    const pid_t parent = ::getpid();
    for (int r = 0; r < spec_.world_size; ++r) {
        Child& c = children_[r];
        c.rank = c.end.rank = r;
        // Everything the child needs is made before fork: after it, only async-signal-safe calls.
        std::vector<std::string> env_s = inherited;
        for (const auto& [k, v] : fixed) env_s.push_back(k + "=" + v);
        env_s.push_back("RANK=" + std::to_string(r));
        env_s.push_back("LOCAL_RANK=" + std::to_string(r));
        std::vector<char*> envp;
        for (auto& e : env_s) envp.push_back(e.data());
        envp.push_back(nullptr);
        int out[2], err[2];
        if (::pipe2(out, O_CLOEXEC) != 0)
            throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        if (::pipe2(err, O_CLOEXEC) != 0) {
            ::close(out[0]);
            ::close(out[1]);
            throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        }
        if (!spec_.runner_server.empty()) {
            int conn = -1;
            std::vector<std::string> args(argv_s.begin() + 1, argv_s.end());
            const pid_t served =
                forkThroughServer(spec_.runner_server, spec_.executable, args, env_s, out[1],
                                  err[1], conn, c.end.server_refusal);
            if (served > 0) {
                c.end.served = true;
                c.server = conn;
                adopt(c, served, out, err);
                continue;
            }
            if (std::getenv("TRAINSCOPE_RUNNER_LOG"))
                std::fprintf(stderr, "rank %d: not through the runner server: %s\n", r,
                             c.end.server_refusal.c_str());
        }
        const pid_t pid = ::fork();
        if (pid < 0) {
            const int e = errno;
            for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
            throw std::runtime_error(std::string("cannot start rank ") + std::to_string(r) + ": " +
                                     std::strerror(e));
        }
        if (pid == 0) {
            ::setpgid(0, 0);
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl
            ::dup2(out[1], STDOUT_FILENO);
            ::dup2(err[1], STDERR_FILENO);
            // exec keeps ignored signals ignored and the mask: give the worker the defaults.
            for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
            sigset_t none;
            sigemptyset(&none);
            ::sigprocmask(SIG_SETMASK, &none, nullptr);
            ::execve(argv[0], argv.data(), envp.data());
            static const char msg[] = "cannot run the worker executable\n";
            (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
            ::_exit(127);
        }
        ::setpgid(pid, pid);  // also here, so that a stop right now reaches its group
        adopt(c, pid, out, err);
    }
}

void LocalLauncher::stopAll(int sig) {
    for (auto& c : children_) {
        if (!c.alive) continue;
        c.end.stopped = true;
        if (::kill(-c.pid, sig) != 0) ::kill(c.pid, sig);
    }
}

void LocalLauncher::reapAll() {
    stopAll(SIGKILL);
    for (auto& c : children_) {
        if (c.alive && c.server >= 0) {
            // Killed above; the server answers once it has reaped it (or has gone).
            const auto deadline = Clock::now() + std::chrono::seconds(10);
            bool exited = false;
            int code = 0, sig = 0;
            while (!servedChildEnded(c.server, c.server_buf, exited, code, sig) &&
                   Clock::now() < deadline) {
                pollfd p{c.server, POLLIN, 0};
                ::poll(&p, 1, 100);
            }
            closeFd(c.server);
            c.alive = false;
        } else if (c.alive) {
            int status = 0;
            while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
            }
            c.alive = false;
        }
        closeFd(c.out);
        closeFd(c.err);
    }
}

namespace {

// Hands on each complete line of `buf` (and, at end of file, the rest).
template <typename F>
bool takeLines(std::string& buf, bool at_end, F&& each) {
    bool any = false;
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string line = buf.substr(start, nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        each(line);
        any = true;
    }
    buf.erase(0, start);
    if (!buf.empty() && (at_end || buf.size() > kMaxLine)) {
        each(buf);
        buf.clear();
        any = true;
    }
    return any;
}

std::string describeEnd(const RankEnd& e) {
    std::string what = "rank " + std::to_string(e.rank);
    if (e.signal)
        what +=
            " was killed by signal " + std::to_string(e.signal) + " (" + signalName(e.signal) + ")";
    else
        what += " failed (exit code " + std::to_string(e.exit_code) + ")";
    if (!e.message.empty()) what += ": " + e.message;
    return what;
}

}  // namespace

bool LocalLauncher::launchOnce(LaunchOutcome& outcome, const LineHandler& on_line,
                               const StopCheck& stop) {
    start();
    bool delivered = false;  // a stdout line went to on_line (then a port clash is not retried)
    bool stopping = false;
    Clock::time_point kill_at{};

    // `last`: every rank has ended; what a pipe holds now is all it will get (a grandchild
    // that kept the write end must not keep the launcher waiting).
    auto readChild = [&](Child& c, bool last = false) {
        bool activity = false;
        if (c.out >= 0) {
            bool open = drain(c.out, c.out_buf);
            if (last && open) closeFd(c.out), open = false;
            activity |= takeLines(c.out_buf, !open, [&](const std::string& line) {
                if (std::string m = errorMessageOf(line); !m.empty()) c.error_line = m;
                delivered = true;
                if (on_line) on_line(c.rank, line);
            });
        }
        if (c.err >= 0) {
            bool open = drain(c.err, c.err_buf);
            if (last && open) closeFd(c.err), open = false;
            activity |= takeLines(c.err_buf, !open, [&](const std::string& line) {
                c.end.stderr_tail.push_back(line);
                if (c.end.stderr_tail.size() > kStderrTail) c.end.stderr_tail.pop_front();
            });
        }
        if (activity) c.last_activity = Clock::now();
    };
    auto beginStop = [&](LaunchOutcome::State state, int rank, std::string message) {
        if (stopping) return;
        stopping = true;
        outcome.state = state;
        outcome.failed_rank = rank;
        outcome.message = std::move(message);
        stopAll(SIGTERM);
        kill_at = Clock::now() + spec_.grace;
    };

    for (;;) {
        std::vector<pollfd> fds;
        std::vector<Child*> owners;
        for (auto& c : children_)
            for (int fd : {c.out, c.err})
                if (fd >= 0) {
                    fds.push_back({fd, POLLIN, 0});
                    owners.push_back(&c);
                }
        if (std::none_of(children_.begin(), children_.end(),
                         [](const Child& c) { return c.alive; })) {
            for (auto& c : children_) readChild(c, /*last=*/true);
            break;
        }
        if (::poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR)
            throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        for (size_t i = 0; i < fds.size(); ++i)
            if (fds[i].revents) readChild(*owners[i]);

        // Ranks that ended: read what they left in their pipes first, for their message.
        std::vector<Child*> failed;
        for (auto& c : children_) {
            if (!c.alive) continue;
            if (c.server >= 0) {
                bool exited = false;
                int code = -1, sig = 0;
                if (!servedChildEnded(c.server, c.server_buf, exited, code, sig)) continue;
                c.alive = false;
                readChild(c);
                c.end.exited = exited;
                if (exited) c.end.exit_code = code;
                c.end.signal = sig;
            } else {
                int status = 0;
                const pid_t got = ::waitpid(c.pid, &status, WNOHANG);
                if (got == 0 || (got < 0 && errno == EINTR)) continue;
                c.alive = false;
                readChild(c);
                if (got > 0 && WIFEXITED(status)) {
                    c.end.exited = true;
                    c.end.exit_code = WEXITSTATUS(status);
                } else if (got > 0 && WIFSIGNALED(status)) {
                    c.end.signal = WTERMSIG(status);
                }
            }
            c.end.message = !c.error_line.empty()        ? c.error_line
                            : !c.end.stderr_tail.empty() ? c.end.stderr_tail.back()
                                                         : std::string();
            if (!(c.end.exited && c.end.exit_code == 0) && !c.end.stopped) failed.push_back(&c);
        }
        if (!failed.empty() && !stopping) {
            // A rank killed by a signal is the cause; the others' errors ("connection closed")
            // are what its death did to them. Ranks reaped together (a loaded machine): one
            // whose error is its own comes before one that lost its peer (Gloo's "Connection
            // reset by peer" when the rank that raised had already gone).
            auto lostPeer = [](const Child* c) {
                for (const char* m : {"Connection reset by peer", "Connection closed by peer",
                                      "Broken pipe", "gloo/transport"})
                    if (c->end.message.find(m) != std::string::npos) return true;
                return false;
            };
            auto first = std::find_if(failed.begin(), failed.end(),
                                      [](Child* c) { return c->end.signal != 0; });
            if (first == failed.end())
                first = std::find_if(failed.begin(), failed.end(),
                                     [&](Child* c) { return !lostPeer(c); });
            Child* cause = first != failed.end() ? *first : failed.front();
            beginStop(LaunchOutcome::State::Failed, cause->rank, describeEnd(cause->end));
        }
        if (!stopping && stop && stop()) beginStop(LaunchOutcome::State::Cancelled, -1, "stopped");
        if (!stopping && spec_.hang_timeout.count() > 0) {
            // Note [hung rank]: the rank that stopped reporting first is blamed. Ranks that all
            // fell silent within kTogether of each other stopped together, each blocked on the
            // others (a collective one of them never joined, a deadlock): no one rank is named.
            constexpr auto kTogether = std::chrono::seconds(1);
            const auto now = Clock::now();
            std::vector<const Child*> alive;
            for (const auto& c : children_)
                if (c.alive) alive.push_back(&c);
            std::sort(alive.begin(), alive.end(), [](const Child* a, const Child* b) {
                return a->last_activity < b->last_activity;
            });
            if (!alive.empty() && now - alive.front()->last_activity > spec_.hang_timeout) {
                const auto secs =
                    std::chrono::duration_cast<std::chrono::seconds>(spec_.hang_timeout).count();
                const bool all_silent = now - alive.back()->last_activity > spec_.hang_timeout;
                const auto lead = alive.size() > 1
                                      ? alive[1]->last_activity - alive.front()->last_activity
                                      : Clock::duration::max();
                if (all_silent && lead < kTogether) {
                    // Named in rank order (the order they fell silent is noise here).
                    std::vector<int> silent;
                    for (const Child* c : alive) silent.push_back(c->rank);
                    std::sort(silent.begin(), silent.end());
                    std::string ranks;
                    for (int rank : silent)
                        ranks += (ranks.empty() ? "" : ", ") + std::to_string(rank);
                    beginStop(LaunchOutcome::State::TimedOut, -1,
                              "ranks " + ranks + " all wrote nothing for " + std::to_string(secs) +
                                  " s and did not exit, having stopped within 1 s of each other: "
                                  "they wait on each other (a collective that one rank never "
                                  "joined?)");
                } else {
                    std::string message = "rank " + std::to_string(alive.front()->rank) +
                                          " wrote nothing for " + std::to_string(secs) +
                                          " s and did not exit (hung?)";
                    if (alive.size() > 1) {
                        char buf[96];
                        std::snprintf(buf, sizeof buf,
                                      "; it stopped reporting %.1f s before the other ranks",
                                      std::chrono::duration<double>(lead).count());
                        message += buf;
                    }
                    beginStop(LaunchOutcome::State::TimedOut, alive.front()->rank,
                              std::move(message));
                }
            }
        }
        if (stopping && Clock::now() >= kill_at) stopAll(SIGKILL);
    }
    for (auto& c : children_) outcome.ranks.push_back(c.end);
    return outcome.state == LaunchOutcome::State::Failed && !delivered &&
           outcome.failed_rank >= 0 &&
           addressInUse(outcome.ranks[outcome.failed_rank].message + "\n" + [&] {
               std::string all;
               for (const auto& l : outcome.ranks[outcome.failed_rank].stderr_tail) all += l + "\n";
               return all;
           }());
}

LaunchOutcome LocalLauncher::run(const LineHandler& on_line, const StopCheck& stop) {
    LaunchOutcome outcome;
    for (int attempt = 1;; ++attempt) {
        outcome = LaunchOutcome{};
        outcome.attempts = attempt;
        const bool port_taken = launchOnce(outcome, on_line, stop);
        reapAll();
        if (!port_taken || attempt >= kPortAttempts) break;
    }
    return outcome;
}

}  // namespace ts::dist
