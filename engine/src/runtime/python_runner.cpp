#include "runtime/python_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "runtime/build_info.h"
#include "trainscope/distributed/launcher.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

bool runnable(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// The launcher's words for its one rank, in the runner's.
std::string aboutTheRunner(std::string message) {
    for (const std::string from : {"rank 0 ", "rank 0: "})
        if (message.rfind(from, 0) == 0)
            message = "the Python runner " + message.substr(from.size());
    return message;
}

}  // namespace

std::string PythonOutcome::text() const {
    if (traceback.empty()) return message;
    return message + "\n" + traceback;
}

std::string defaultPython() {
    if (auto p = env("TRAINSCOPE_PYTHON"); !p.empty()) return p;
    if (const std::string configured = build::defaultPython();
        !configured.empty() && runnable(configured))
        return configured;
    return "python3";
}

std::string runnerFolder() {
    if (auto p = env("TRAINSCOPE_RUNNER_PATH"); !p.empty()) return p;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        // Installed (first: a package's programs use the package's runner even where the source
        // tree it was built from still exists): <prefix>/lib/trainscope/<program>
        // (app/install.cmake) or <prefix>/bin.
        for (const fs::path& prefix :
             {exe.parent_path().parent_path().parent_path(), exe.parent_path().parent_path()}) {
            const fs::path installed = prefix / "share" / "trainscope" / "runner";
            if (fs::is_directory(installed / "trainscope_runner", ec)) return installed.string();
        }
    }
    // A build: the source tree's runner/.
    return build::runnerDir();
}

std::string exampleCheckout() {
    std::error_code ec;
    const fs::path runner = runnerFolder();
    // Beside the runner: the source tree's examples/, or share/trainscope/examples.
    const fs::path checkout = runner.parent_path() / "examples" / "course-checkout";
    return fs::is_directory(checkout, ec) ? checkout.string() : std::string();
}

std::string findExecutable(const std::string& python) {
    if (python.empty()) return {};
    if (python.find('/') != std::string::npos)
        return runnable(python) ? fs::absolute(python).string() : std::string();
    std::stringstream path(env("PATH"));
    std::string dir;
    while (std::getline(path, dir, ':')) {
        const fs::path candidate = fs::path(dir.empty() ? "." : dir) / python;
        if (runnable(candidate)) return fs::absolute(candidate).string();
    }
    return {};
}

std::vector<std::pair<std::string, std::string>> pythonRunnerEnvironment() {
    const std::string pythonpath = env("PYTHONPATH");
    return {{"PYTHONPATH", runnerFolder() + (pythonpath.empty() ? "" : ":" + pythonpath)},
            {"PYTHONUNBUFFERED", "1"},
            {"PYTHONDONTWRITEBYTECODE", "1"},
            {"PYTHONSAFEPATH", "1"}};
}

namespace {

// Starts `python -m trainscope_runner serve` with the environment its jobs get; its pid once it
// says it serves, else -1 (it is then ended).
pid_t startServer(const std::string& python, const std::string& socket) {
    std::vector<std::string> args = {python,  "-m",       "trainscope_runner",
                                     "serve", "--socket", socket};
    std::vector<std::string> env_s;
    std::set<std::string> replaced;
    const auto runner_env = pythonRunnerEnvironment();
    for (const auto& kv : runner_env) replaced.insert(kv.first);
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        if (!replaced.count(entry.substr(0, entry.find('=')))) env_s.push_back(entry);
    }
    for (const auto& [k, v] : runner_env) env_s.push_back(k + "=" + v);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return -1;
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Its own process group: the terminal's Ctrl-C is the front end's to pass on.
        ::setpgid(0, 0);
        ::dup2(out[1], STDOUT_FILENO);
        if (null_fd >= 0) {
            ::dup2(null_fd, STDIN_FILENO);
            ::dup2(null_fd, STDERR_FILENO);  // a server that fails is replaced by new processes
        }
        for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(out[1]);
    if (null_fd >= 0) ::close(null_fd);
    if (pid < 0) {
        ::close(out[0]);
        return -1;
    }
    // import torch: about 2 s, much more from a cold disk.
    const std::string line = dist::readLine(out[0], std::chrono::seconds(180));
    ::close(out[0]);
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "serving") return pid;
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return -1;
}

}  // namespace

std::string runnerServer(const std::string& python) {
    const std::string given = env("TRAINSCOPE_RUNNER_SERVER");
    if (given == "off" || given == "0") return {};
    if (!given.empty()) return given;
    if (python.empty()) return {};
    struct Server {
        pid_t pid = -1;
        std::string socket;
        bool failed = false;
    };
    static std::mutex mutex;
    static std::map<std::string, Server> servers;
    static std::atomic<int> started{0};
    std::lock_guard lock(mutex);
    Server& s = servers[python];
    if (s.failed) return {};
    if (s.pid > 0) {
        int status = 0;
        if (::waitpid(s.pid, &status, WNOHANG) == 0) return s.socket;
        s.pid = -1;  // it ended (killed?): another one
    }
    s.socket = fmt::format("@trainscope-runner-{}-{}", ::getpid(), started++);
    s.pid = startServer(python, s.socket);
    if (s.pid < 0) {
        s.failed = true;  // an interpreter without torch, say: its jobs say why themselves
        return {};
    }
    return s.socket;
}

RunnerServerProcess startRunnerServer(const std::string& python) {
    static std::atomic<int> started{0};
    RunnerServerProcess p;
    p.socket = fmt::format("@trainscope-runner-server-{}-{}", ::getpid(), started++);
    p.pid = startServer(python, p.socket);
    return p;
}

std::string pythonInterpreterProblem(const std::string& python) {
    const std::string asked = python.empty() ? defaultPython() : python;
    if (findExecutable(asked).empty())
        return fmt::format("--python: no Python interpreter '{}' (a path, or a name on the PATH)",
                           asked);
    return {};
}

std::string pythonCodeProblem(const std::string& code, const std::string& python,
                              bool adapters_module) {
    if (auto p = pythonInterpreterProblem(python); !p.empty()) return p;
    std::error_code ec;
    if (code.empty()) return "--code: no code given";
    if (fs::is_directory(code, ec)) return {};
    const size_t colon = code.rfind(':');
    if (adapters_module && colon == std::string::npos) {
        // A file or module of the course's adapter functions (it stands for tests/adapters.py).
        const bool file = code.find('/') != std::string::npos || code.ends_with(".py");
        if (file && !fs::is_regular_file(code, ec))
            return fmt::format("--code: '{}' does not exist", code);
        return {};
    }
    if (colon == std::string::npos || colon == 0 || colon + 1 == code.size())
        return fmt::format(
            "--code: '{}' is neither a folder nor module:callable (or path/file.py:callable)",
            code);
    const std::string where = code.substr(0, colon);
    const bool file =
        where.find('/') != std::string::npos || where.size() > 3 && where.ends_with(".py");
    if (file && !fs::is_regular_file(where, ec))
        return fmt::format("--code: '{}' does not exist (in '{}')", where, code);
    return {};
}

PythonOutcome runPython(const PythonJob& job,
                        const std::function<void(const nlohmann::json&)>& on_event,
                        const CancelToken& cancel) {
    PythonOutcome out;
    const std::string asked = job.python.empty() ? defaultPython() : job.python;
    const std::string python = findExecutable(asked);
    if (python.empty()) {
        out.state = PythonOutcome::State::Failed;
        out.phase = "setup";
        out.message = fmt::format(
            "no Python interpreter '{}' (--python: a path, or a name on the PATH)", asked);
        return out;
    }
    dist::LaunchSpec launch;
    launch.executable = python;
    launch.arguments = {"-m", "trainscope_runner", job.command, "--spec", job.spec.dump()};
    launch.world_size = 1;
    launch.backend = dist::CommBackend::Gloo;
    launch.hang_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(std::ceil(job.timeout_s * 1000)));
    launch.environment = pythonRunnerEnvironment();
    launch.runner_server = runnerServer(python);
    bool saw_error = false;
    dist::LocalLauncher launcher(launch);
    const dist::LaunchOutcome done = launcher.run(
        [&](int, const std::string& line) {
            const nlohmann::json j =
                nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
            if (!j.is_object() || !j.contains("event")) return;  // a stray print of a library
            if (j.value("event", "") == "error") {
                saw_error = true;
                out.phase = j.value("phase", "");
                out.message = j.value("message", "the user's code failed");
                out.traceback = j.value("traceback", "");
                return;
            }
            on_event(j);
        },
        [&] { return cancel.cancelled(); });
    switch (done.state) {
        case dist::LaunchOutcome::State::Finished:
            if (saw_error) out.state = PythonOutcome::State::Failed;
            return out;
        case dist::LaunchOutcome::State::Cancelled:
            out.state = PythonOutcome::State::Cancelled;
            out.message = "stopped; the Python runner was ended";
            return out;
        case dist::LaunchOutcome::State::TimedOut:
            out.state = PythonOutcome::State::TimedOut;
            out.phase = "step";
            out.message = fmt::format(
                "the user's code wrote nothing for {:g} s and was stopped (a hung step? raise "
                "--timeout when a "
                "step, or torch.compile's first one, takes longer)",
                job.timeout_s);
            return out;
        case dist::LaunchOutcome::State::Failed:
            break;
    }
    out.state = PythonOutcome::State::Failed;
    if (saw_error) return out;  // the user's code failed, said in its own words
    // A crash (a segfault in an extension), an interpreter that would not start: the
    // launcher's words, and what the runner wrote on stderr last.
    out.phase = "runner";
    out.message = aboutTheRunner(done.message);
    if (!done.ranks.empty()) {
        std::string tail;
        for (const auto& l : done.ranks.front().stderr_tail) tail += l + "\n";
        out.traceback = tail;
    }
    return out;
}

}  // namespace ts

namespace ts {

CodeCheck checkPythonCode(const std::string& code, const std::string& optimizer,
                          const std::string& python, const CancelToken& cancel, double timeout_s,
                          bool adapters) {
    CodeCheck c;
    if (const std::string problem = pythonCodeProblem(code, python, adapters); !problem.empty()) {
        c.outcome.state = PythonOutcome::State::Failed;
        c.outcome.phase = "setup";
        c.outcome.message = problem;
        return c;
    }
    PythonJob job{python,
                  "check",
                  {{"code", code}, {"optimizer", optimizer}, {"adapters", adapters}},
                  timeout_s};
    c.outcome = runPython(
        job,
        [&](const nlohmann::json& j) {
            if (j.value("event", "") == "found") c.found = j;
        },
        cancel);
    if (c.outcome.ok() && c.found.is_null()) {
        c.outcome.state = PythonOutcome::State::Failed;
        c.outcome.message = "the Python runner ended without saying what it found";
    }
    return c;
}

std::string CodeCheck::text() const {
    if (!outcome.ok()) return "Not usable: " + outcome.text();
    const nlohmann::json& f = found;
    std::string out = fmt::format(
        "Python {} with torch {}; {}\n", f.value("python", "?"), f.value("torch", "?"),
        f.value("gpu", "").empty() ? std::string("no GPU") : "GPU " + f.value("gpu", ""));
    if (f.value("form", "") == "checkout")
        out += fmt::format("A course checkout: {}\n", f.value("root", ""));
    else if (!f.value("where", "").empty())
        out += fmt::format("From {}\n", f.value("where", ""));
    if (!f.value("named", "").empty()) out += fmt::format("Named: {}\n", f.value("named", ""));
    if (f.contains("model"))
        out += fmt::format("Model: {}\nOptimizer: {}\n", f.value("model", "?"),
                           f.value("optimizer", "?"));
    if (const std::string e = f.value("edition", ""); !e.empty())
        out += e == "both" ? "The course's adapters of both editions (2025 and 2026)\n"
                           : fmt::format("The course's {} edition's adapters\n", e);
    if (const auto a = f.find("adapters"); a != f.end() && a->is_object() && !a->empty()) {
        out += "tests/adapters.py:\n";
        for (const auto& [name, state] : a->items())
            out += fmt::format("  {} ({})\n", name,
                               state.is_string() ? state.get<std::string>() : state.dump());
    }
    if (const auto n = f.find("notes"); n != f.end() && n->is_array())
        for (const auto& note : *n)
            if (note.is_string()) out += "Note: " + note.get<std::string>() + "\n";
    return out;
}

}  // namespace ts
