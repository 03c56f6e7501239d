// trainscope-cli with a fork server, for the tests that start the CLI hundreds of times.
//
// Note [the CLI's fork server]: every trainscope-cli process spends about 0.4 s of CPU before main:
// the dynamic loader maps LibTorch (and its CUDA libraries) and LibTorch's static initialisers
// register its operators. The suite's tables of bad input and hostile files start the CLI several
// hundred times, on a 2-core machine. This program is the CLI's own objects under another main: run
// as `trainscope-cli-fork-server --serve SOCKET` it starts once, then forks one child per command
// line that a test sends over the Unix socket (argv, environment, working folder, and the
// test's stdin, stdout and stderr passed as file descriptors). The child is what exec would
// have made of the CLI, minus the start-up: it has run only the static initialisers (the
// server never calls into the CLI or LibTorch, and checks that it has no thread besides its
// own before each fork), it gets the test's environment, folder and descriptors and the
// default signal dispositions, runs `runCommandLine` and ends as the CLI's main does; the server
// answers with the child's pid, then its exit code or the signal that ended it. Any other
// command line (a DDP rank re-executing /proc/self/exe) is the plain CLI. The Python side is
// tests/common/cli_process.py; tests that are about the process itself (signals, pipes,
// a rank's re-exec) start the real binary.
#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli_common.h"

namespace {

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "trainscope-cli-fork-server: %s: %s\n", what, std::strerror(errno));
    std::_Exit(70);
}

int threadCount() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/task")) {
        while (const dirent* e = ::readdir(d))
            if (e->d_name[0] != '.') ++n;
        ::closedir(d);
    }
    return n;
}

bool sendAll(int fd, const std::string& s) {
    size_t done = 0;
    while (done < s.size()) {
        const ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

// One request: its length (4 bytes) with the three descriptors riding on them, then
// NUL-terminated byte strings (arguments and environment are bytes, not text): the working
// folder, the number of arguments, the arguments, then the environment's KEY=VALUE entries.
struct Request {
    std::string cwd;
    std::vector<std::string> argv, env;
};

bool receive(int conn, Request& request, int fds[3]) {
    uint32_t length = 0;
    char control[CMSG_SPACE(3 * sizeof(int))] = {};
    iovec iov{&length, sizeof length};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    if (::recvmsg(conn, &msg, MSG_WAITALL) != static_cast<ssize_t>(sizeof length)) return false;
    const cmsghdr* c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(3 * sizeof(int))) return false;
    std::memcpy(fds, CMSG_DATA(c), 3 * sizeof(int));
    std::string body(length, '\0');
    if (length && ::recv(conn, body.data(), length, MSG_WAITALL) != static_cast<ssize_t>(length))
        return false;
    std::vector<std::string> parts;
    for (size_t at = 0; at < body.size();) {
        const size_t end = body.find('\0', at);
        if (end == std::string::npos) return false;
        parts.push_back(body.substr(at, end - at));
        at = end + 1;
    }
    if (parts.size() < 2) return false;
    const size_t argc = std::strtoul(parts[1].c_str(), nullptr, 10);
    if (argc == 0 || parts.size() < 2 + argc) return false;
    request.cwd = parts[0];
    request.argv.assign(parts.begin() + 2, parts.begin() + 2 + static_cast<long>(argc));
    request.env.assign(parts.begin() + 2 + static_cast<long>(argc), parts.end());
    return true;
}

[[noreturn]] void runChild(Request& request, const int fds[3], int listener, int conn) {
    ::close(listener);
    ::close(conn);
    for (int i = 0; i < 3; ++i)
        if (::dup2(fds[i], i) < 0) die("dup2");
    for (int i = 0; i < 3; ++i)
        if (fds[i] > 2) ::close(fds[i]);
    for (int sig : {SIGPIPE, SIGXFSZ, SIGINT, SIGTERM, SIGCHLD, SIGHUP}) std::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (::chdir(request.cwd.c_str()) != 0) die("chdir");
    ::clearenv();
    for (const auto& kv : request.env) ::putenv(::strdup(kv.c_str()));
    std::vector<std::string>& args = request.argv;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int code = ts::cli::runCommandLine(static_cast<int>(args.size()), argv.data());
    // As trainscope-cli's main ends (See Note [a CLI process skips static destructors]); here
    // LibTorch's destructors would also copy every page of its tables from the server.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);
}

int serve(const char* path) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // ends with the test that started it
    std::signal(SIGPIPE, SIG_IGN);
    const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) die("socket");
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (std::strlen(path) >= sizeof addr.sun_path) {
        std::fprintf(stderr, "trainscope-cli-fork-server: socket path too long: %s\n", path);
        return 2;
    }
    std::strcpy(addr.sun_path, path);
    ::unlink(path);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("bind");
    if (::listen(listener, 4) != 0) die("listen");
    for (;;) {
        const int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (conn < 0) {
            if (errno == EINTR) continue;
            die("accept");
        }
        Request request;
        int fds[3] = {-1, -1, -1};
        if (!receive(conn, request, fds)) {
            ::close(conn);
            continue;
        }
        if (const int threads = threadCount(); threads != 1) {
            sendAll(conn, "error the server has " + std::to_string(threads) +
                              " threads; a fork would not be the CLI's start\n");
            std::_Exit(70);
        }
        const pid_t pid = ::fork();
        if (pid < 0) die("fork");
        if (pid == 0) runChild(request, fds, listener, conn);
        for (int fd : fds) ::close(fd);
        sendAll(conn, "pid " + std::to_string(pid) + "\n");
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) die("waitpid");
        sendAll(conn, WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) + "\n"
                                          : "exit " + std::to_string(WEXITSTATUS(status)) + "\n");
        ::close(conn);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "--serve") == 0) return serve(argv[2]);
    return ts::cli::runCommandLine(argc, argv);
}
