// LocalLauncher against a stand-in worker (tst_launcher_child): lines arrive per rank, the
// environment reaches every rank, a failing, crashing or hanging rank is named and stops the
// others, a cancel stops all, and no child is left running or unreaped afterwards.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "common/test_paths.h"
#include "trainscope/distributed/launcher.h"

using namespace ts::dist;
using namespace std::chrono_literals;

namespace {

LaunchSpec childSpec(int world, std::vector<std::string> args) {
    LaunchSpec spec;
    spec.executable = ts::testing::testPath("TRAINSCOPE_TEST_LAUNCHER_CHILD");
    spec.arguments = std::move(args);
    spec.world_size = world;
    spec.hang_timeout = 20s;
    spec.grace = 1s;
    return spec;
}

// Neither running nor a zombie: the pid is gone.
void expectGone(const std::vector<pid_t>& pids) {
    for (pid_t pid : pids) {
        errno = 0;
        EXPECT_EQ(::kill(pid, 0), -1) << "pid " << pid << " is still there";
        EXPECT_EQ(errno, ESRCH) << "pid " << pid;
    }
}

struct Launched {
    LaunchOutcome outcome;
    std::map<int, std::vector<std::string>> lines;
    std::vector<pid_t> pids;
    double seconds = 0;
};

Launched launch(const LaunchSpec& spec, LocalLauncher::StopCheck stop = {}) {
    Launched r;
    LocalLauncher launcher(spec);
    const auto t0 = std::chrono::steady_clock::now();
    r.outcome = launcher.run(
        [&](int rank, const std::string& line) { r.lines[rank].push_back(line); }, stop);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.pids = launcher.pids();
    return r;
}

}  // namespace

TEST(Launcher, LinesArrivePerRankWithTheEnvironment) {
    ::setenv("NCCL_NVLS_ENABLE", "0", 1);
    ::setenv("RANK", "7", 1);  // a torchrun around us: replaced, not doubled
    const Launched r = launch(childSpec(3, {"--lines", "4"}));
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
    ASSERT_EQ(r.lines.size(), 3u);
    for (int rank = 0; rank < 3; ++rank) {
        const auto& lines = r.lines.at(rank);
        ASSERT_EQ(lines.size(), 5u) << "rank " << rank;
        const std::string ready = lines[0];
        EXPECT_NE(ready.find("\"rank\":" + std::to_string(rank)), std::string::npos) << ready;
        EXPECT_NE(ready.find("\"world_size\":\"3\""), std::string::npos) << ready;
        EXPECT_NE(ready.find("\"local_rank\":\"" + std::to_string(rank) + "\""), std::string::npos)
            << ready;
        EXPECT_NE(ready.find("\"addr\":\"127.0.0.1\""), std::string::npos) << ready;
        EXPECT_NE(ready.find("\"env\":\"0\""), std::string::npos)
            << "NCCL_NVLS_ENABLE did not reach rank " << rank;
        for (int k = 0; k < 4; ++k)
            EXPECT_EQ(lines[k + 1], "{\"event\":\"progress\",\"rank\":" + std::to_string(rank) +
                                        ",\"i\":" + std::to_string(k) + "}");
        EXPECT_TRUE(r.outcome.ranks[rank].exited);
        EXPECT_EQ(r.outcome.ranks[rank].exit_code, 0);
        EXPECT_EQ(r.outcome.ranks[rank].stderr_tail.back(),
                  "rank " + std::to_string(rank) + " done");
    }
    expectGone(r.pids);
    ::unsetenv("RANK");
}

// See Note [threads per rank]: each rank gets its share of the cores, unless the user said.
TEST(Launcher, EachRankGetsItsShareOfTheCores) {
    ::unsetenv("OMP_NUM_THREADS");
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
    const int cores = CPU_COUNT(&set);
    for (int world : {1, 2, 3}) {
        const Launched r = launch(childSpec(world, {"--lines", "0", "--echo", "OMP_NUM_THREADS"}));
        ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
        const std::string share = std::to_string(std::max(1, cores / world));
        for (int rank = 0; rank < world; ++rank)
            EXPECT_NE(r.lines.at(rank)[0].find("\"env\":\"" + share + "\""), std::string::npos)
                << "world " << world << ": " << r.lines.at(rank)[0];
    }
    ::setenv("OMP_NUM_THREADS", "5", 1);
    const Launched given = launch(childSpec(2, {"--lines", "0", "--echo", "OMP_NUM_THREADS"}));
    ASSERT_TRUE(given.outcome.ok()) << given.outcome.message;
    for (int rank = 0; rank < 2; ++rank)
        EXPECT_NE(given.lines.at(rank)[0].find("\"env\":\"5\""), std::string::npos)
            << given.lines.at(rank)[0];
    ::unsetenv("OMP_NUM_THREADS");
}

TEST(Launcher, AFailingRankIsNamedAndStopsTheOthers) {
    const Launched r =
        launch(childSpec(3, {"--fail-rank", "1", "--mode", "exit", "--others-sleep", "60"}));
    EXPECT_EQ(r.outcome.state, LaunchOutcome::State::Failed);
    EXPECT_EQ(r.outcome.failed_rank, 1);
    EXPECT_EQ(r.outcome.message, "rank 1 failed (exit code 5): rank 1: going down (exit)");
    EXPECT_LT(r.seconds, 15.0) << "the others were not stopped";
    EXPECT_TRUE(r.outcome.ranks[0].stopped);
    EXPECT_TRUE(r.outcome.ranks[2].stopped);
    EXPECT_EQ(r.outcome.ranks[0].signal, SIGTERM);
    EXPECT_EQ(r.outcome.ranks[1].stderr_tail.size(), 2u);
    expectGone(r.pids);
}

TEST(Launcher, AnErrorLineIsTheMessage) {
    const Launched r =
        launch(childSpec(2, {"--fail-rank", "0", "--mode", "error-json", "--others-sleep", "60"}));
    EXPECT_EQ(r.outcome.state, LaunchOutcome::State::Failed);
    EXPECT_EQ(r.outcome.failed_rank, 0);
    EXPECT_EQ(r.outcome.message, "rank 0 failed (exit code 3): the bad thing on rank 0");
    expectGone(r.pids);
}

TEST(Launcher, CrashesAreNamedBySignal) {
    for (const auto& [mode, sig] :
         {std::pair<std::string, std::string>{"segv", "signal 11 (SIGSEGV)"},
          std::pair<std::string, std::string>{"kill", "signal 9 (SIGKILL)"}}) {
        const Launched r =
            launch(childSpec(3, {"--fail-rank", "2", "--mode", mode, "--others-sleep", "60"}));
        EXPECT_EQ(r.outcome.state, LaunchOutcome::State::Failed) << mode;
        EXPECT_EQ(r.outcome.failed_rank, 2) << mode;
        EXPECT_NE(r.outcome.message.find("rank 2 was killed by " + sig), std::string::npos)
            << r.outcome.message;
        EXPECT_NE(r.outcome.message.find("going down"), std::string::npos) << r.outcome.message;
        expectGone(r.pids);
    }
}

TEST(Launcher, AHangingRankIsTimedOut) {
    LaunchSpec spec = childSpec(3, {"--fail-rank", "1", "--mode", "hang"});
    spec.hang_timeout = 1500ms;
    const Launched r = launch(spec);
    EXPECT_EQ(r.outcome.state, LaunchOutcome::State::TimedOut);
    EXPECT_EQ(r.outcome.failed_rank, 1);
    EXPECT_EQ(r.outcome.message, "rank 1 wrote nothing for 1 s and did not exit (hung?)");
    EXPECT_LT(r.seconds, 10.0);
    EXPECT_EQ(r.outcome.ranks[1].signal, SIGTERM);
    EXPECT_EQ(r.outcome.ranks[0].exit_code, 0);  // finished before the hang was noticed
    expectGone(r.pids);
}

// See Note [hung rank]: the rank that stopped reporting first is named even though the others
// fall silent too (blocked, as in a collective, after it stopped).
TEST(Launcher, TheRankThatStoppedFirstIsBlamedNotTheOnesWaitingForIt) {
    for (int trial = 0; trial < 3; ++trial) {
        LaunchSpec spec =
            childSpec(2, {"--fail-rank", "1", "--mode", "hang", "--others-report-ms", "1500"});
        spec.hang_timeout = 1500ms;
        const Launched r = launch(spec);
        EXPECT_EQ(r.outcome.state, LaunchOutcome::State::TimedOut);
        EXPECT_EQ(r.outcome.failed_rank, 1) << r.outcome.message;
        EXPECT_NE(r.outcome.message.find("rank 1 wrote nothing for 1 s"), std::string::npos)
            << r.outcome.message;
        EXPECT_NE(r.outcome.message.find("before the other ranks"), std::string::npos)
            << r.outcome.message;
        expectGone(r.pids);
    }
}

// Ranks that fall silent together are not blamed one by one: they wait on each other.
TEST(Launcher, RanksSilentTogetherWaitOnEachOther) {
    LaunchSpec spec = childSpec(3, {"--lines", "1", "--others-block"});
    spec.hang_timeout = 1500ms;
    const Launched r = launch(spec);
    EXPECT_EQ(r.outcome.state, LaunchOutcome::State::TimedOut);
    EXPECT_EQ(r.outcome.failed_rank, -1) << r.outcome.message;
    EXPECT_NE(r.outcome.message.find("ranks 0, 1, 2 all wrote nothing"), std::string::npos)
        << r.outcome.message;
    EXPECT_NE(r.outcome.message.find("wait on each other"), std::string::npos) << r.outcome.message;
    EXPECT_LT(r.seconds, 10.0);
    expectGone(r.pids);
}

TEST(Launcher, RanksThatIgnoreSigtermAreKilledAfterTheGrace) {
    LaunchSpec spec = childSpec(3, {"--fail-rank", "0", "--mode", "exit", "--others-sleep", "60",
                                    "--ignore-term", "--fail-after-ms", "300"});
    spec.grace = 500ms;
    const Launched r = launch(spec);
    EXPECT_EQ(r.outcome.failed_rank, 0);
    EXPECT_LT(r.seconds, 10.0);
    EXPECT_EQ(r.outcome.ranks[1].signal, SIGKILL);
    EXPECT_EQ(r.outcome.ranks[2].signal, SIGKILL);
    expectGone(r.pids);
}

TEST(Launcher, CancelStopsEveryRank) {
    bool seen = false;
    const Launched r = [&] {
        Launched out;
        LocalLauncher launcher(childSpec(4, {"--others-sleep", "60"}));
        out.outcome =
            launcher.run([&](int, const std::string&) { seen = true; }, [&] { return seen; });
        out.pids = launcher.pids();
        return out;
    }();
    EXPECT_EQ(r.outcome.state, LaunchOutcome::State::Cancelled);
    EXPECT_EQ(r.outcome.failed_rank, -1);
    for (const auto& e : r.outcome.ranks) EXPECT_TRUE(e.stopped || e.exited);
    expectGone(r.pids);
}

TEST(Launcher, TheDestructorReapsALauncherLeftByAnException) {
    std::vector<pid_t> pids;
    try {
        LocalLauncher launcher(childSpec(3, {"--others-sleep", "60"}));
        launcher.run([&](int, const std::string&) {
            pids = launcher.pids();
            throw std::runtime_error("the window went away");
        });
        FAIL() << "run() did not pass the exception on";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "the window went away");
    }
    ASSERT_EQ(pids.size(), 3u);
    expectGone(pids);
}

TEST(Launcher, ATakenRendezvousPortIsTriedAgainOnAnother) {
    const std::string flag =
        ::testing::TempDir() + "tst_launcher_busy_" + std::to_string(::getpid());
    std::remove(flag.c_str());
    const Launched r = launch(childSpec(2, {"--busy-once", flag, "--lines", "1"}));
    std::remove(flag.c_str());
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
    EXPECT_EQ(r.outcome.attempts, 2);
    EXPECT_EQ(r.lines.at(0).size(), 2u);  // the second launch's lines only
    expectGone(r.pids);
}

TEST(Launcher, BadSpecsAreRefusedBeforeAnythingStarts) {
    auto problem = [](LaunchSpec s) { return launchProblem(s); };
    EXPECT_EQ(problem(childSpec(2, {})), "");
    EXPECT_EQ(problem(childSpec(0, {})), "world size must be at least 1 (it is 0)");
    EXPECT_NE(problem(childSpec(100000, {})).find("more than a local launch starts"),
              std::string::npos);
    LaunchSpec missing = childSpec(2, {});
    missing.executable = "/no/such/worker";
    EXPECT_EQ(problem(missing),
              "worker executable '/no/such/worker' does not exist or cannot be run");
    LaunchSpec nccl = childSpec(64, {});
    nccl.backend = CommBackend::Nccl;
    const std::string p = problem(nccl);
    // "… than the 2 GPUs present", "… than the 1 GPU present" (the GPU machine), or no NCCL at all.
    EXPECT_TRUE(p.find("is more than the ") != std::string::npos ||
                p.find("without NCCL") != std::string::npos)
        << p;
    EXPECT_THROW(LocalLauncher{childSpec(0, {})}, std::invalid_argument);
}
