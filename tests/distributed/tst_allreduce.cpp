// The all-reduce benchmark: sizes, the merged row's arithmetic (nccl-tests' algbw and busbw),
// the worker's JSON lines both ways, and two Gloo ranks (threads of this process) measuring.
#include <gtest/gtest.h>

#include <thread>

#include "trainscope/distributed/allreduce_bench.h"
#include "trainscope/distributed/worker_lines.h"

using namespace ts::dist;

TEST(Allreduce, ByteSizes) {
    EXPECT_EQ(parseByteSize("1MB"), 1000000);
    EXPECT_EQ(parseByteSize("16MiB"), 16 << 20);
    EXPECT_EQ(parseByteSize("1GB"), 1000000000);
    EXPECT_EQ(parseByteSize("1gib"), int64_t{1} << 30);
    EXPECT_EQ(parseByteSize("1.5KiB"), 1536);
    EXPECT_EQ(parseByteSize("1048576"), 1048576);
    EXPECT_EQ(parseByteSize("64 B"), 64);
    EXPECT_EQ(parseByteSize("0"), 0);
    for (const char* bad : {"", "MB", "-1MB", "1.2.3MB", "1XB", "0.5", "1e3", "99999999999GB"})
        EXPECT_FALSE(parseByteSize(bad)) << bad;
    EXPECT_EQ(formatByteSize(int64_t{1} << 30), "1 GiB");
    EXPECT_EQ(formatByteSize(16 << 20), "16 MiB");
    EXPECT_EQ(formatByteSize(1000000), "1 MB");
    EXPECT_EQ(formatByteSize(1001), "1001 B");
    EXPECT_EQ(defaultAllreduceSizes(CommBackend::Gloo).back(), 64 << 20);
    EXPECT_EQ(defaultAllreduceSizes(CommBackend::Nccl).back(), int64_t{1} << 30);
}

TEST(Allreduce, SpecProblems) {
    AllreduceSpec s;
    s.sizes = {1024};
    EXPECT_EQ(allreduceSpecProblem(s), "");
    s.sizes = {0};
    EXPECT_NE(allreduceSpecProblem(s).find("more than 0 bytes"), std::string::npos);
    s.sizes = {int64_t{8} << 30};
    EXPECT_NE(allreduceSpecProblem(s).find("more than 4 GiB"), std::string::npos);
    s.sizes = {1024};
    s.iters = 0;
    EXPECT_NE(allreduceSpecProblem(s).find("at least 1"), std::string::npos);
    EXPECT_EQ(parseDtype("bfloat16"), BenchDtype::BFloat16);
    EXPECT_FALSE(parseDtype("fp8"));
}

TEST(Allreduce, RowIsTheSlowestRankWithNcclTestsBandwidths) {
    AllreduceTiming t;
    t.world_size = 4;
    t.bytes = 1'000'000'000;
    t.elements = 250'000'000;
    t.iters = 10;
    t.ranks = {
        {0, 10.0, 9.0, 12.0}, {1, 20.0, 19.0, 25.0}, {2, 15.0, 8.0, 16.0}, {3, 12.0, 11.0, 13.0}};
    const AllreduceRow row = allreduceRow(t, /*link_gbps=*/100.0);
    EXPECT_DOUBLE_EQ(row.time_ms, 20.0);
    EXPECT_DOUBLE_EQ(row.rank_mean_min_ms, 10.0);
    EXPECT_DOUBLE_EQ(row.fastest_ms, 8.0);
    EXPECT_DOUBLE_EQ(row.slowest_ms, 25.0);
    EXPECT_DOUBLE_EQ(row.algbw_gbps, 50.0);        // 1 GB in 20 ms
    EXPECT_DOUBLE_EQ(row.busbw_gbps, 50.0 * 1.5);  // 2(n−1)/n = 1.5 at n = 4
    EXPECT_DOUBLE_EQ(row.ideal_ms, 15.0);          // 1.5 GB over 100 GB/s
    EXPECT_DOUBLE_EQ(allreduceRow(t, 0).ideal_ms, 0.0);
    t.ranks.pop_back();
    EXPECT_THROW(allreduceRow(t, 0), std::invalid_argument);
    EXPECT_DOUBLE_EQ(busFactor(1), 0.0);
    EXPECT_DOUBLE_EQ(busFactor(2), 1.0);
}

TEST(Allreduce, WorkerLinesReadBack) {
    AllreduceTiming t;
    t.rank = 0;
    t.world_size = 2;
    t.device = "cpu";
    t.bytes = 4096;
    t.elements = 2048;
    t.dtype = BenchDtype::BFloat16;
    t.iters = 3;
    t.mean_ms = 1.5;
    t.min_ms = 1.0;
    t.max_ms = 2.0;
    t.ranks = {{0, 1.5, 1.0, 2.0}, {1, 1.25, 1.0, 1.5}};
    const auto w = parseWorkerLine(allreduceResultLine(t));
    ASSERT_TRUE(w && w->allreduce);
    EXPECT_EQ(w->event, "result");
    EXPECT_EQ(w->experiment, "allreduce");
    EXPECT_EQ(w->allreduce->dtype, BenchDtype::BFloat16);
    EXPECT_EQ(w->allreduce->ranks.size(), 2u);
    EXPECT_DOUBLE_EQ(w->allreduce->ranks[1].mean_ms, 1.25);
    const auto e = parseWorkerLine(errorLine(1, "gone \"away\""));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->rank, 1);
    EXPECT_EQ(e->message, "gone \"away\"");
    EXPECT_FALSE(parseWorkerLine("W1123 a warning from somewhere"));
    const auto broken = parseWorkerLine(R"({"event":"result","experiment":"allreduce","rank":0})");
    ASSERT_TRUE(broken);
    EXPECT_EQ(broken->event, "error");
}

namespace {
struct Collect : AllreduceObserver {
    std::vector<AllreduceTiming> timings;
    std::string device;
    void ready(int, int, const std::string& d) override { device = d; }
    void measured(const AllreduceTiming& t, int, int) override { timings.push_back(t); }
};
}  // namespace

TEST(Allreduce, TwoGlooRanksMeasure) {
    const int world = 2;
    const int port = freeLoopbackPort();
    AllreduceSpec spec;
    spec.sizes = {4096, 65536};
    spec.warmup = 1;
    spec.iters = 3;
    std::vector<Collect> seen(world);
    std::vector<std::string> errors(world);
    std::vector<std::thread> ranks;
    for (int r = 0; r < world; ++r)
        ranks.emplace_back([&, r] {
            try {
                GroupSpec g;
                g.rank = r;
                g.world_size = world;
                g.master_port = port;
                g.timeout = std::chrono::seconds(30);
                runAllreduceRank(g, spec, seen[r]);
            } catch (const std::exception& e) {
                errors[r] = e.what();
            }
        });
    for (auto& t : ranks) t.join();
    for (int r = 0; r < world; ++r) {
        ASSERT_EQ(errors[r], "") << "rank " << r;
        EXPECT_EQ(seen[r].device, "cpu");
        ASSERT_EQ(seen[r].timings.size(), 4u);  // 2 dtypes × 2 sizes
        for (const auto& t : seen[r].timings) {
            EXPECT_GT(t.mean_ms, 0.0);
            EXPECT_LE(t.min_ms, t.mean_ms);
            EXPECT_GE(t.max_ms, t.mean_ms);
            EXPECT_EQ(t.ranks.size(), r == 0 ? 2u : 0u);
        }
    }
    const AllreduceTiming& last = seen[0].timings.back();
    EXPECT_EQ(last.dtype, BenchDtype::BFloat16);
    EXPECT_EQ(last.bytes, 65536);
    EXPECT_EQ(last.elements, 32768);
    EXPECT_DOUBLE_EQ(last.ranks[1].mean_ms, seen[1].timings.back().mean_ms);
    EXPECT_GT(allreduceRow(last, 0).busbw_gbps, 0.0);
}
