// See Note [one trace of every rank] (distributed/rank_traces.h): two small Kineto-shaped traces
// merged into one: a process per rank named "rank r", the GPU's streams under it, flow ids that
// do not collide, timestamps on the smallest base's clock; and the spec's traced steps (checked,
// TrainScope's strategies only, kept in JSON) with the stored point's file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/json.h"
#include "distributed/distributed.h"
#include "distributed/distributed_json.h"
#include "distributed/rank_traces.h"

namespace {

using nlohmann::json;

// A rank's trace as Kineto writes it: a host process (its OS pid), GPU 0's process (pid 0) with
// a compute stream and NCCL's, a Spans track with a string pid, a CPU op → kernel flow, a global
// instant (no thread of its own).
json rankTrace(int os_pid, int64_t base_ns, double t0_us) {
    return {
        {"schemaVersion", 1},
        {"baseTimeNanoseconds", base_ns},
        {"distributedInfo", {{"rank", os_pid % 10}, {"world_size", 2}, {"backend", "nccl"}}},
        {"trainscope", {{"device", os_pid % 10 == 0 ? "cuda:0" : "cuda:1"}}},
        {"traceEvents",
         json::array({
             {{"ph", "M"},
              {"name", "process_name"},
              {"pid", os_pid},
              {"args", {{"name", "trainscope-cli"}}}},
             {{"ph", "M"},
              {"name", "thread_name"},
              {"pid", os_pid},
              {"tid", os_pid + 1},
              {"args", {{"name", "thread 2 (pt_gloo_runloop)"}}}},
             {{"ph", "M"},
              {"name", "thread_name"},
              {"pid", os_pid},
              {"tid", os_pid},
              {"args", {{"name", "thread 1 (main)"}}}},
             {{"ph", "X"},
              {"cat", "cpu_op"},
              {"name", "gloo:all_reduce"},
              {"pid", os_pid},
              {"tid", os_pid + 1},
              {"ts", t0_us + 61},
              {"dur", 3.0}},
             // Kineto names a GPU's process as the host's and labels it "GPU 0" (the host's
             // likewise: "python", labelled "CPU", in tests/profiler/fixtures).
             {{"ph", "M"},
              {"name", "process_name"},
              {"pid", 0},
              {"args", {{"name", "trainscope-cli"}}}},
             {{"ph", "M"}, {"name", "process_labels"}, {"pid", 0}, {"args", {{"labels", "GPU 0"}}}},
             {{"ph", "M"},
              {"name", "process_sort_index"},
              {"pid", 0},
              {"args", {{"sort_index", 5000}}}},
             {{"ph", "M"},
              {"name", "thread_name"},
              {"pid", 0},
              {"tid", 7},
              {"args", {{"name", "stream 7"}}}},
             {{"ph", "M"},
              {"name", "thread_name"},
              {"pid", 0},
              {"tid", 13},
              {"args", {{"name", "stream 13"}}}},
             {{"ph", "X"},
              {"cat", "cpu_op"},
              {"name", "autograd::engine::evaluate_function: MmBackward0"},
              {"pid", os_pid},
              {"tid", os_pid},
              {"ts", t0_us},
              {"dur", 50.0}},
             {{"ph", "X"},
              {"cat", "cpu_op"},
              {"name", "c10d::allreduce_"},
              {"pid", os_pid},
              {"tid", os_pid},
              {"ts", t0_us + 60},
              {"dur", 5.0}},
             {{"ph", "s"},
              {"cat", "ac2g"},
              {"name", "ac2g"},
              {"id", 42},
              {"pid", os_pid},
              {"tid", os_pid},
              {"ts", t0_us + 1}},
             {{"ph", "X"},
              {"cat", "kernel"},
              {"name", "ampere_sgemm"},
              {"pid", 0},
              {"tid", 7},
              {"ts", t0_us + 10},
              {"dur", 30.0}},
             {{"ph", "f"},
              {"cat", "ac2g"},
              {"name", "ac2g"},
              {"id", 42},
              {"pid", 0},
              {"tid", 7},
              {"ts", t0_us + 10},
              {"bp", "e"}},
             {{"ph", "X"},
              {"cat", "kernel"},
              {"name", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
              {"pid", 0},
              {"tid", 13},
              {"ts", t0_us + 62},
              {"dur", 20.0}},
             {{"ph", "X"},
              {"cat", "Trace"},
              {"name", "PyTorch Profiler (0)"},
              {"pid", "Spans"},
              {"tid", "PyTorch Profiler"},
              {"ts", t0_us},
              {"dur", 100.0}},
             {{"ph", "i"},
              {"s", "g"},
              {"name", "Record Window End"},
              {"pid", ""},
              {"tid", ""},
              {"ts", t0_us + 100}},
         })}};
}

// The merged trace's names: pid → process name, (pid, tid) → thread name.
struct Names {
    std::map<int, std::string> process;
    std::map<std::pair<int, int>, std::string> thread;
};
Names namesOf(const json& merged) {
    Names n;
    for (const auto& e : merged["traceEvents"]) {
        if (e["ph"] != "M") continue;
        if (e["name"] == "process_name") n.process[e["pid"].get<int>()] = e["args"]["name"];
        if (e["name"] == "thread_name")
            n.thread[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
    }
    return n;
}

const json* find(const json& merged, int pid, const std::string& name) {
    for (const auto& e : merged["traceEvents"])
        if (e["ph"] == "X" && e["pid"] == pid && e["name"] == name) return &e;
    return nullptr;
}

TEST(RankTraces, EachRankIsOneProcessWithItsStreamsUnderIt) {
    const json merged = ts::mergeRankTraces(
        {rankTrace(4100, 1'000'000'000, 100.0), rankTrace(4201, 1'000'000'000, 103.0)});
    const Names n = namesOf(merged);
    EXPECT_EQ(n.process, (std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}}));
    for (int r : {0, 1}) {
        // The host's threads first (the busiest first), then GPU 0's streams, then Kineto's
        // span track: one process.
        EXPECT_EQ(n.thread.at({r, 1}), "thread 1 (main)");
        EXPECT_EQ(n.thread.at({r, 2}), "thread 2 (pt_gloo_runloop)");
        EXPECT_EQ(n.thread.at({r, 3}), "GPU 0 stream 7");
        EXPECT_EQ(n.thread.at({r, 4}), "GPU 0 stream 13");
        EXPECT_EQ(n.thread.at({r, 5}), "Spans PyTorch Profiler");
        EXPECT_EQ(n.thread.size(), 10u);
        const json* kernel = find(merged, r, "ampere_sgemm");
        const json* nccl = find(merged, r, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
        const json* backward = find(merged, r, "autograd::engine::evaluate_function: MmBackward0");
        ASSERT_TRUE(kernel && nccl && backward);
        EXPECT_EQ((*kernel)["tid"], 3);
        EXPECT_EQ((*nccl)["tid"], 4);
        EXPECT_EQ((*backward)["tid"], 1);
    }
    // Every event belongs to rank 0 or 1: no pid of Kineto's is left.
    std::set<json> pids;
    for (const auto& e : merged["traceEvents"])
        if (e.contains("pid")) pids.insert(e["pid"]);
    EXPECT_EQ(pids, (std::set<json>{0, 1}));
    // Kineto's own process metadata is replaced: one process_sort_index per rank, its rank.
    int sort_indices = 0;
    for (const auto& e : merged["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_sort_index") {
            ++sort_indices;
            EXPECT_EQ(e["args"]["sort_index"], e["pid"]);
        }
    EXPECT_EQ(sort_indices, 2);
    // The ranks' devices label their processes; their distributedInfo is listed.
    ASSERT_EQ(merged["ranks"].size(), 2u);
    EXPECT_EQ(merged["ranks"][1]["distributedInfo"]["rank"], 1);
    EXPECT_EQ(merged["traceName"], "2 ranks, merged");
}

TEST(RankTraces, FlowIdsDoNotCollideAndStayPaired) {
    const json merged =
        ts::mergeRankTraces({rankTrace(4100, 5'000, 0.0), rankTrace(4201, 5'000, 0.0)});
    std::map<json, std::set<std::string>> phases;  // id → its flow's phases
    std::map<json, std::set<int>> ranks;           // id → the ranks that use it
    for (const auto& e : merged["traceEvents"])
        if (e["ph"] == "s" || e["ph"] == "f") {
            phases[e["id"]].insert(e["ph"].get<std::string>());
            ranks[e["id"]].insert(e["pid"].get<int>());
        }
    ASSERT_EQ(phases.size(), 2u);  // 42 twice became two ids
    for (const auto& [id, ph] : phases) {
        EXPECT_EQ(ph, (std::set<std::string>{"s", "f"})) << id;
        EXPECT_EQ(ranks[id].size(), 1u) << id;
    }
    // String ids are prefixed by the rank.
    json a = rankTrace(4100, 0, 0.0), b = rankTrace(4201, 0, 0.0);
    for (json* t : {&a, &b})
        for (auto& e : (*t)["traceEvents"])
            if (e["ph"] == "s" || e["ph"] == "f") e["id"] = "0x2a";
    std::set<json> ids;
    const json strings = ts::mergeRankTraces({a, b});
    for (const auto& e : strings["traceEvents"])
        if (e["ph"] == "s") ids.insert(e["id"]);
    EXPECT_EQ(ids, (std::set<json>{"r0:0x2a", "r1:0x2a"}));
}

TEST(RankTraces, TimestampsAreOnTheSmallestBasesClock) {
    // Rank 1's base is 2 ms later: its events move 2000 µs later, rank 0's stay.
    const json merged = ts::mergeRankTraces(
        {rankTrace(4100, 1'000'000'000, 100.0), rankTrace(4201, 1'002'000'000, 100.0)});
    EXPECT_EQ(merged["baseTimeNanoseconds"], 1'000'000'000);
    EXPECT_DOUBLE_EQ((*find(merged, 0, "ampere_sgemm"))["ts"].get<double>(), 110.0);
    EXPECT_DOUBLE_EQ((*find(merged, 1, "ampere_sgemm"))["ts"].get<double>(), 2110.0);
    EXPECT_DOUBLE_EQ((*find(merged, 1, "ampere_sgemm"))["dur"].get<double>(), 30.0);
}

TEST(RankTraces, ATraceWithoutEventsIsRefused) {
    EXPECT_THROW(ts::mergeRankTraces({rankTrace(1, 0, 0), json{{"schemaVersion", 1}}}),
                 std::invalid_argument);
}

TEST(RankTraces, FilesMergedAndPathsBesideTheStore) {
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::temp_directory_path() / ("tst_rank_traces_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (int r : {0, 1})
        std::ofstream(ts::rankTraceFile(dir.string(), r)) << rankTrace(4100 + r, 0, 0).dump();
    const std::string out = (dir / "merged" / "m.json").string();
    ts::mergeRankTraceFiles(dir.string(), 2, out);
    std::ifstream in(out);
    EXPECT_EQ(namesOf(json::parse(in)).process.size(), 2u);
    // A rank that wrote nothing is named.
    try {
        ts::mergeRankTraceFiles(dir.string(), 3, out);
        ADD_FAILURE() << "a missing rank was not noticed";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);

    EXPECT_EQ(ts::mergedTracePath("", "/data/results.db", 12, 0),
              "/data/results.traces/run-12-point-1.json");
    EXPECT_EQ(ts::mergedTracePath("/out", "/data/results.db", 12, 2), "/out/run-12-point-3.json");
    EXPECT_EQ(ts::mergedTracePath("", "", 0, 1), "ddp-trace-point-2.json");
}

// The spec's side: traced steps within the measured ones, for every strategy (the Python ones
// through torch.profiler), kept through the worker's JSON; the stored point names its merged file.
TEST(RankTraces, TracedStepsInTheSpecAndTheStoredPoint) {
    ts::DdpSpec spec;
    spec.measured_steps = 2;
    spec.trace_steps = 2;
    EXPECT_TRUE(ts::validateDdpSpec(spec).empty());
    spec.trace_steps = 3;
    ASSERT_EQ(ts::validateDdpSpec(spec).size(), 1u);
    EXPECT_NE(ts::validateDdpSpec(spec)[0].find("traced steps"), std::string::npos);
    spec.trace_steps = 1;
    spec.strategy = "torch-ddp";
    EXPECT_TRUE(ts::validateDdpSpec(spec).empty());

    ts::DistributedPoint base;
    base.ddp.trace_steps = 1;
    const auto points =
        ts::ddpSweep(base, {ts::Precision::FP32}, {"bucketed", "torch-ddp", "fsdp"}, {}, {false});
    ASSERT_EQ(points.size(), 3u);
    EXPECT_EQ(points[0].ddp.trace_steps, 1);
    EXPECT_EQ(points[1].ddp.trace_steps, 1);
    EXPECT_EQ(points[2].ddp.trace_steps, 1);

    ts::DdpSpec traced;
    traced.trace_steps = 2;
    traced.trace_dir = "/tmp/x.ranks";
    const ts::DdpSpec back = ts::ddpSpecFromJson(ts::toJson(traced));
    EXPECT_EQ(back.trace_steps, 2);
    EXPECT_EQ(back.trace_dir, "/tmp/x.ranks");
    EXPECT_FALSE(ts::toJson(ts::DdpSpec{}).contains("trace_steps"));  // old points read as before

    ts::DistributedResult r;
    r.trace_file = "/data/results.traces/run-3-point-1.json";
    ts::StoredRow row{0, ts::Status::Ok, ts::dumpJson(ts::toJson(r.point)), ""};
    nlohmann::json payload = ts::pointEndPayload(r);
    payload["point"] = 0;
    row.result_json = ts::dumpJson(payload);
    const auto results = ts::distributedResultsFromRows(ts::RunInfo{}, {row});
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].trace_file, r.trace_file);
}

}  // namespace
