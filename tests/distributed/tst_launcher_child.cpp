// A stand-in worker for tst_launcher: prints JSON lines as a rank would and misbehaves on
// request. Reads RANK from the environment as a real worker does.
//   --lines N         progress lines after the ready line (default 3)
//   --echo NAME       the ready line carries NAME's value ("env")
//   --fail-rank R --mode exit|error-json|segv|kill|hang   rank R fails after its first line
//   --others-sleep S  the other ranks sleep S seconds before exiting (to be stopped)
//   --ignore-term     the other ranks ignore SIGTERM (to be killed)
//   --fail-after-ms N the failing rank waits N ms first (the others are ready by then)
//   --busy-once FILE  rank 0 fails as a taken rendezvous port does, once (FILE remembers)
//   --others-report-ms N  the other ranks print a line every 100 ms for N ms, then block
//                         (as ranks waiting in a collective): they never exit
//   --others-block    the other ranks block after their lines instead of exiting
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {
std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "<unset>";
}
}  // namespace

int main(int argc, char** argv) {
    int lines = 3, fail_rank = -1, others_sleep = 0, fail_after_ms = 0, others_report_ms = -1;
    bool ignore_term = false, others_block = false;
    std::string mode = "exit", echo = "NCCL_NVLS_ENABLE", busy_once;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--lines")
            lines = std::atoi(next().c_str());
        else if (a == "--echo")
            echo = next();
        else if (a == "--fail-rank")
            fail_rank = std::atoi(next().c_str());
        else if (a == "--mode")
            mode = next();
        else if (a == "--others-sleep")
            others_sleep = std::atoi(next().c_str());
        else if (a == "--ignore-term")
            ignore_term = true;
        else if (a == "--fail-after-ms")
            fail_after_ms = std::atoi(next().c_str());
        else if (a == "--busy-once")
            busy_once = next();
        else if (a == "--others-report-ms")
            others_report_ms = std::atoi(next().c_str());
        else if (a == "--others-block")
            others_block = true;
    }
    const int rank = std::atoi(env("RANK").c_str());
    if (rank == 0 && !busy_once.empty() && ::access(busy_once.c_str(), F_OK) != 0) {
        if (FILE* f = std::fopen(busy_once.c_str(), "w")) std::fclose(f);
        std::fprintf(
            stderr,
            "rank 0: rendezvous at 127.0.0.1:%s failed: The server socket has failed to listen "
            "on any local network address. name: EADDRINUSE, message: address already in use\n",
            env("MASTER_PORT").c_str());
        return 1;
    }
    // The others print nothing before rank 0 is up, as workers print nothing before the group.
    if (rank != 0 && !busy_once.empty()) ::usleep(500 * 1000);
    if (ignore_term && rank != fail_rank) ::signal(SIGTERM, SIG_IGN);
    std::printf(
        "{\"event\":\"ready\",\"rank\":%d,\"world_size\":\"%s\",\"local_rank\":\"%s\",\"port\":\"%"
        "s\","
        "\"addr\":\"%s\",\"env\":\"%s\"}\n",
        rank, env("WORLD_SIZE").c_str(), env("LOCAL_RANK").c_str(), env("MASTER_PORT").c_str(),
        env("MASTER_ADDR").c_str(), env(echo.c_str()).c_str());
    std::fflush(stdout);
    if (rank == fail_rank) {
        if (fail_after_ms > 0) ::usleep(static_cast<useconds_t>(fail_after_ms) * 1000);
        std::fprintf(stderr, "rank %d: first stderr line\nrank %d: going down (%s)\n", rank, rank,
                     mode.c_str());
        std::fflush(stderr);
        if (mode == "exit") return 5;
        if (mode == "error-json") {
            std::printf(
                "{\"event\":\"error\",\"rank\":%d,\"message\":\"the bad thing on rank %d\"}\n",
                rank, rank);
            std::fflush(stdout);
            return 3;
        }
        if (mode == "segv") ::raise(SIGSEGV);
        if (mode == "kill") ::raise(SIGKILL);
        if (mode == "hang")
            for (;;) ::pause();
        return 9;
    }
    for (int k = 0; k < lines; ++k) {
        std::printf("{\"event\":\"progress\",\"rank\":%d,\"i\":%d}\n", rank, k);
        std::fflush(stdout);
    }
    if (others_report_ms >= 0) {
        for (int t = 0; t < others_report_ms; t += 100) {
            std::printf("{\"event\":\"progress\",\"rank\":%d,\"t\":%d}\n", rank, t);
            std::fflush(stdout);
            ::usleep(100 * 1000);
        }
        others_block = true;
    }
    if (others_block)
        for (;;) ::pause();
    std::fprintf(stderr, "rank %d done\n", rank);
    if (others_sleep > 0) ::sleep(static_cast<unsigned>(others_sleep));
    return 0;
}
