// The snapshot pickle: the writer round-tripped through the reader (every kind of value, the
// integer widths at their edges, memoised strings), lists and dicts in batches of 1,000, pickles
// Python wrote (protocols 2 and 4, with memo) read back, damaged input and a misused writer
// refused, and the snapshot of a hand-written trace in memory_viz's layout with its categories.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/test_paths.h"
#include "core/json.h"
#include "memory/memory_json.h"
#include "memory/memory_pickle.h"
#include "memory/memory_report.h"
#include "synthetic_trace.h"
#include "torch_python.h"

namespace {

using ts::pickle::Value;

std::string unhex(const std::string& hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return out;
}

TEST(Pickle, EveryKindRoundTrips) {
    Value v = Value::dict();
    std::vector<Value> ints;
    for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{255}, int64_t{256},
                      int64_t{2147483647}, int64_t{2147483648}, int64_t{-2147483648LL},
                      int64_t{-2147483649LL}, int64_t{0x7f00deadbeef}, int64_t{140737488355328},
                      std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                      int64_t{-129}, int64_t{128}, int64_t{32768}, int64_t{8388608}})
        ints.push_back(Value::integer(i));
    v.set("ints", Value::list(ints))
        .set("floats", Value::list({Value::real(1.5), Value::real(-0.0), Value::real(1e300)}))
        .set("strings", Value::list({Value::string(""), Value::string("ünïcode ✓"),
                                     Value::string(std::string(70000, 'x'))}))
        .set("misc", Value::tuple({Value::none(), Value::boolean(true), Value::boolean(false)}))
        .set("empty", Value::tuple({}))
        .set("nested", Value::list({Value::dict(), Value::list(),
                                    Value::tuple({Value::integer(0), Value::integer(0)})}));
    const std::string bytes = ts::pickle::dumps(v);
    EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0x80);
    EXPECT_EQ(bytes[1], 2);
    EXPECT_EQ(bytes.back(), '.');
    EXPECT_EQ(ts::pickle::loads(bytes), v);
}

TEST(Pickle, ReadsWhatPythonWrote) {
    // pickle.dumps({'a': [1, s, s, 'ünï'], 'b': (2**40, -5, 1.5, None, True, False, -2**63,
    // 2**63-1, 255, 65535, -129), 'c': {}, 'd': []}, protocol=2 and 4), s = 'shared' (memoised).
    const std::string p2 =
        "80027d71002858010000006171015d7102284b015806000000736861726564710368035805000000c3bc6ec3af"
        "7104655801000000627105"
        "288a060000000000014afbffffff473ff80000000000004e88898a0800000000000000808a08ffffffffffffff"
        "7f4bff4dffff4a7fffffff"
        "74710658010000006371077d710858010000006471095d710a752e";
    const std::string p4 =
        "8004956c000000000000007d94288c0161945d94284b018c067368617265649468038c05c3bc6ec3af94658c01"
        "6294288a06000000000001"
        "4afbffffff473ff80000000000004e88898a0800000000000000808a08ffffffffffffff7f4bff4dffff4a7fff"
        "ffff74948c0163947d948c"
        "0164945d94752e";
    for (const auto& hex : {p2, p4}) {
        const Value v = ts::pickle::loads(unhex(hex));
        const Value& a = v.at("a");
        ASSERT_EQ(a.items.size(), 4u);
        EXPECT_EQ(a.items[0].i, 1);
        EXPECT_EQ(a.items[1].s, "shared");
        EXPECT_EQ(a.items[2].s, "shared");  // the memo's copy
        EXPECT_EQ(a.items[3].s, "ünï");
        const Value& b = v.at("b");
        ASSERT_EQ(b.kind, Value::Kind::Tuple);
        ASSERT_EQ(b.items.size(), 11u);
        EXPECT_EQ(b.items[0].i, int64_t{1} << 40);
        EXPECT_EQ(b.items[1].i, -5);
        EXPECT_EQ(b.items[2].f, 1.5);
        EXPECT_EQ(b.items[3].kind, Value::Kind::None);
        EXPECT_TRUE(b.items[4].b);
        EXPECT_FALSE(b.items[5].b);
        EXPECT_EQ(b.items[6].i, std::numeric_limits<int64_t>::min());
        EXPECT_EQ(b.items[7].i, std::numeric_limits<int64_t>::max());
        EXPECT_EQ(b.items[8].i, 255);
        EXPECT_EQ(b.items[9].i, 65535);
        EXPECT_EQ(b.items[10].i, -129);
        EXPECT_EQ(v.at("c").kind, Value::Kind::Dict);
        EXPECT_EQ(v.at("d").kind, Value::Kind::List);
    }
}

TEST(Pickle, RefusesDamage) {
    const std::string good =
        ts::pickle::dumps(Value::list({Value::string("abc"), Value::integer(7)}));
    EXPECT_THROW(ts::pickle::loads(good.substr(0, good.size() - 1)),
                 std::invalid_argument);  // no STOP
    EXPECT_THROW(ts::pickle::loads(good.substr(0, 8)), std::invalid_argument);
    EXPECT_THROW(ts::pickle::loads(std::string("\x80\x02\x63os\nsystem\n.", 13)),
                 std::invalid_argument);  // GLOBAL
    EXPECT_THROW(ts::pickle::loads(std::string("\x80\x02"
                                               "e.",
                                               4)),
                 std::invalid_argument);  // APPENDS, no MARK
    EXPECT_THROW(ts::pickle::loads(""), std::invalid_argument);
}

// See Note [pickle batches]: 2,001 items are pushed as 1,000, 1,000 and 1; 1,001 pairs of a dict
// as 1,000 and 1; small ints take one or two bytes. The bytes are spelled out here.
TEST(Pickle, ListsAndDictsInBatchesOfAThousand) {
    auto small = [](int v) {
        return v < 256 ? std::string{'K', static_cast<char>(v)}
                       : std::string{'M', static_cast<char>(v & 0xff), static_cast<char>(v >> 8)};
    };
    ts::pickle::Writer list;
    list.beginList();
    std::string expected = "\x80\x02](";
    for (int k = 0; k < 2001; ++k) {
        list.integer(k % 7);
        if (k == 1000 || k == 2000) expected += "e(";
        expected += small(k % 7);
    }
    list.end();
    expected += "e.";
    const std::string bytes = list.finish();
    EXPECT_EQ(bytes, expected);
    const Value back = ts::pickle::loads(bytes);
    ASSERT_EQ(back.items.size(), 2001u);
    EXPECT_EQ(back.items[2000].i, 2000 % 7);

    ts::pickle::Writer dict;
    dict.beginDict();
    expected = "\x80\x02}(";
    for (int k = 0; k < 1001; ++k) {
        dict.integer(k);
        dict.integer(1);
        if (k == 1000) expected += "u(";
        expected += small(k) + small(1);
    }
    dict.end();
    expected += "u.";
    EXPECT_EQ(dict.finish(), expected);
    // An empty list, dict and tuple take no MARK.
    EXPECT_EQ(ts::pickle::dumps(Value::list({Value::list(), Value::dict(), Value::tuple({})})),
              std::string("\x80\x02](]})e.", 9));
}

TEST(Pickle, StringsAreMemoised) {
    // 300 different strings (memo ids past 255: LONG_BINPUT, LONG_BINGET) twice each, one
    // longer than the memo takes twice, and "alloc" 1,000 times.
    std::vector<Value> items;
    for (int round = 0; round < 2; ++round) {
        for (int k = 0; k < 300; ++k) items.push_back(Value::string("frame " + std::to_string(k)));
        items.push_back(Value::string(std::string(ts::pickle::kMemoLimit + 1, 'x')));
    }
    for (int k = 0; k < 1000; ++k) items.push_back(Value::string("alloc"));
    const Value v = Value::list(items);
    const std::string bytes = ts::pickle::dumps(v);
    EXPECT_EQ(ts::pickle::loads(bytes), v);
    // Each string's text once, the long one twice.
    EXPECT_EQ(bytes.find("frame 299"), bytes.rfind("frame 299"));
    EXPECT_EQ(bytes.find("alloc"), bytes.rfind("alloc"));
    EXPECT_NE(bytes.find(std::string(ts::pickle::kMemoLimit + 1, 'x')),
              bytes.rfind(std::string(ts::pickle::kMemoLimit + 1, 'x')));
    EXPECT_LT(bytes.size(), 2 * (ts::pickle::kMemoLimit + 1) + 300 * 20 + 2000 * 6);
}

TEST(Pickle, WriterRefusesMisuse) {
    {
        ts::pickle::Writer w;
        EXPECT_THROW(w.end(), std::logic_error);
    }
    {
        ts::pickle::Writer w;
        w.beginDict();
        w.string("key");
        EXPECT_THROW(w.end(), std::logic_error);  // a key without its value
    }
    {
        ts::pickle::Writer w;
        w.integer(1);
        EXPECT_THROW(w.integer(2), std::logic_error);  // a second top-level value
    }
    {
        ts::pickle::Writer w;
        w.beginList();
        EXPECT_THROW(w.finish(), std::logic_error);  // still open
    }
    {
        ts::pickle::Writer w;
        EXPECT_THROW(w.finish(), std::logic_error);  // nothing written
    }
}

TEST(Pickle, SnapshotInMemoryVizLayout) {
    const auto t = ts::testing::syntheticTrace();
    const Value snap = ts::pickle::loads(ts::memorySnapshotPickle(t));
    const Value& traces = snap.at("device_traces");
    ASSERT_EQ(traces.items.size(), 1u);  // device 0
    const auto& entries = traces.items[0].items;
    ASSERT_EQ(entries.size(), t.events.size() + 1);  // and the snapshot
    EXPECT_EQ(entries[0].at("action").s, "segment_alloc");
    EXPECT_EQ(entries[0].at("addr").i, 0x100000);
    EXPECT_EQ(entries[0].at("size").i, 1 << 20);
    EXPECT_EQ(entries[4].at("action").s, "free_completed");
    EXPECT_EQ(entries[13].at("time_us").i, 13);
    // Frames, innermost first: the op, the model's range, the phase.
    const auto& frames = entries[1].at("frames").items;
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].at("name").s, "aten::mm");
    EXPECT_EQ(frames[0].at("filename").s, "trainscope/op");
    EXPECT_EQ(frames[1].at("name").s, "layer.0/attention");
    EXPECT_EQ(frames[2].at("name").s, "forward (step 0)");
    EXPECT_EQ(frames[2].at("line").i, 0);

    const Value& segments = snap.at("segments");
    ASSERT_EQ(segments.items.size(), 1u);
    const Value& seg = segments.items[0];
    EXPECT_EQ(seg.at("total_size").i, 1 << 20);
    EXPECT_EQ(seg.at("allocated_size").i, 4096 + 512);
    EXPECT_EQ(seg.at("segment_type").s, "large");
    EXPECT_EQ(seg.at("segment_pool_id"), Value::tuple({Value::integer(0), Value::integer(0)}));
    const auto& blocks = seg.at("blocks").items;
    ASSERT_EQ(blocks.size(), 5u);
    int64_t total = 0;
    for (const auto& b : blocks) total += b.at("size").i;
    EXPECT_EQ(total, 1 << 20);
    EXPECT_EQ(blocks[1].at("state").s, "active_allocated");
    EXPECT_EQ(blocks[1].at("frames").items.at(0).at("name").s, "MmBackward0");  // G1's allocation
    EXPECT_EQ(blocks[0].at("state").s, "inactive");
}

// See Note [snapshot categories]: each alloc and free carries its allocation's category, the
// live blocks theirs, and the trace ends with a "snapshot" entry in category "unknown".
TEST(Pickle, SnapshotCategories) {
    const auto t = ts::testing::syntheticTrace();
    const Value snap = ts::pickle::loads(ts::memorySnapshotPickle(t));
    const auto& entries = snap.at("device_traces").items.at(0).items;
    auto category = [&](size_t i) -> std::string {
        const Value* c = entries.at(i).find("category");
        return c ? c->s : "(none)";
    };
    const std::vector<std::string> expected = {
        "(none)",                                                    // 0 segment_alloc
        "activations", "temporaries", "temporaries", "temporaries",  // A1, T1 and its frees
        "activations",                                               // 5 A2
        "gradients",   "temporaries", "temporaries",                 // G1, BT, BT freed
        "activations", "activations",                                // A2, A1 freed
        "temporaries", "temporaries",                                // O1 made and freed
        "other",                                                     // 13 L, live at the end
        "unknown"};                                                  // the snapshot
    ASSERT_EQ(entries.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(category(i), expected[i]) << i;
    const Value& last = entries.back();
    EXPECT_EQ(last.at("action").s, "snapshot");
    EXPECT_EQ(last.at("size").i, 4096 + 512);  // the active blocks' bytes
    EXPECT_EQ(last.at("time_us").i, 13);
    EXPECT_TRUE(last.at("frames").items.empty());
    const auto& blocks = snap.at("segments").items.at(0).at("blocks").items;
    EXPECT_EQ(blocks[1].at("category").s, "gradients");  // G1
    EXPECT_EQ(blocks[3].at("category").s, "other");      // L
    EXPECT_EQ(blocks[0].find("category"), nullptr);      // free
    // An out-of-memory entry has none.
    const Value oom = ts::pickle::loads(ts::memorySnapshotPickle(ts::testing::syntheticOomTrace()));
    const auto& oe = oom.at("device_traces").items.at(0).items;
    ASSERT_EQ(oe.size(), 10u);
    EXPECT_EQ(oe[8].at("action").s, "oom");
    EXPECT_EQ(oe[8].find("category"), nullptr);
    EXPECT_EQ(oe[9].at("action").s, "snapshot");
}

TEST(Pickle, OtherDevicesTraceListsStayEmpty) {
    auto t = ts::testing::syntheticTrace();
    t.device = 2;
    const Value snap = ts::pickle::loads(ts::memorySnapshotPickle(t));
    const auto& traces = snap.at("device_traces").items;
    ASSERT_EQ(traces.size(), 3u);
    EXPECT_TRUE(traces[0].items.empty());
    EXPECT_TRUE(traces[1].items.empty());
    EXPECT_EQ(traces[2].items.size(), t.events.size() + 1);
    EXPECT_EQ(snap.at("segments").items.at(0).at("device").i, 2);
}

// PyTorch's own reader of snapshots on the hand-written trace, where a python with torch is
// found (torch.cuda._memory_viz needs no GPU): its text trace, its segment summary and the
// Active Memory Timeline page.
TEST(Pickle, LoadsInTorchMemoryViz) {
    const std::string python = ts::testing::pythonWithTorch(TRAINSCOPE_PYTHONS);
    if (python.empty()) GTEST_SKIP() << "no python with torch";
    const auto path = std::filesystem::temp_directory_path() /
                      ("trainscope_memory_pickle_" + std::to_string(::getpid()) + ".pickle");
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << ts::memorySnapshotPickle(ts::testing::syntheticTrace());
    }
    const std::string script =
        "import pickle, torch.cuda._memory_viz as m; d = pickle.load(open('" + path.string() +
        "', 'rb')); t = m.trace(d); h = m.trace_plot(d); s = m.segsum(d); "
        "assert '15 entries' in t, t[:300]; assert 'cudaMalloc' in t, t[:300]; "
        "assert 'Active Memory Timeline' in h; print('ok', len(d['device_traces'][0]))";
    int code = 0;
    const std::string out = ts::testing::runPython(python, script, code);
    std::filesystem::remove(path);
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("ok 15"), std::string::npos) << out;  // 14 events, the snapshot
}

}  // namespace

namespace {

std::string snapshotFixture() {
    std::ifstream in(ts::testing::testPath("TRAINSCOPE_TEST_MEMORY_FIXTURES") + "/snapshot.pickle",
                     std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
}

TEST(ImportSnapshot, PythonsPickleOfASnapshotBecomesAMemoryRun) {
    // make_snapshot.py: device 1's trace, a weight block live before it, an activation, a
    // temporary, a gradient the snapshot calls GRADIENT, an out-of-memory.
    const auto r = ts::importMemorySnapshot(snapshotFixture(), "snapshot.pickle");
    EXPECT_EQ(r.spec.imported, "snapshot.pickle");
    EXPECT_TRUE(r.gpu);
    EXPECT_EQ(r.trace.device, 1);
    ASSERT_EQ(r.trace.events.size(), 9u);  // "snapshot" and "user_defined" left out
    EXPECT_EQ(r.trace.events[0].action, ts::AllocAction::SegmentAlloc);
    EXPECT_EQ(r.trace.events[1].time_ns, 1000);  // µs from the first entry, in ns
    const auto& oom = r.trace.events.back();
    EXPECT_EQ(oom.action, ts::AllocAction::Oom);
    EXPECT_EQ(oom.addr, 3u << 20);  // the device's free bytes
    EXPECT_EQ(oom.size, 64 << 20);
    // Frames are the stack, innermost first.
    ASSERT_GE(r.trace.events[2].stack, 0);
    EXPECT_EQ(r.trace.stacks[static_cast<size_t>(r.trace.events[2].stack)].front().name, "softmax");
    // Live before the trace: the weights' block, which the trace never allocated.
    ASSERT_EQ(r.trace.initial.size(), 1u);
    EXPECT_EQ(r.trace.initial[0].size, 2 << 20);
    EXPECT_EQ(r.trace.segments.size(), 2u);
    EXPECT_EQ(r.trace.initial_reserved, 2 << 20);  // 22 MiB at the end less the 20 allocated
    // Categories: the gradient as the snapshot says; the rest, with no phase, "other".
    const ts::MemoryAnalysis a = ts::analyzeMemory(r.trace);
    std::map<int64_t, ts::MemoryCategory> bySize;
    for (const auto& x : a.allocations)
        if (!x.initial) bySize[x.size] = x.category;
    EXPECT_EQ(bySize[2 << 20], ts::MemoryCategory::Gradients);  // made after the activation
    EXPECT_EQ(bySize[1 << 20], ts::MemoryCategory::Other);
    EXPECT_EQ(a.peak.allocated, (2 << 20) + (2 << 20) + (2 << 20));  // weights, act, grad
    EXPECT_TRUE(ts::failedAllocation(r.trace, a).has_value());
    // Nothing predicted, and the report says where it came from.
    for (const auto& c : ts::compareWithPrediction(r, a)) EXPECT_EQ(c.predicted, 0);
    const std::string text = ts::formatMemory(r, {});
    EXPECT_NE(text.find("snapshot.pickle (an imported snapshot of cuda:1"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("predicted"), std::string::npos) << text;
    // Stored and read back with its categories; the spec says it was imported.
    const auto back = ts::memoryResultFromJson(nlohmann::json::parse(ts::dumpJson(ts::toJson(r))));
    EXPECT_EQ(back.trace, r.trace);
    EXPECT_EQ(back.spec, r.spec);
    EXPECT_EQ(nlohmann::json::parse(ts::memorySpecJson({r.spec})).at("command"), "memory import");
}

TEST(ImportSnapshot, TrainScopesOwnSnapshotReadsBackItsPhasesOpsAndCategories) {
    const ts::RawMemoryTrace t = ts::testing::syntheticTrace();
    const auto r = ts::importMemorySnapshot(ts::memorySnapshotPickle(t), "ours.pickle");
    ASSERT_EQ(r.trace.events.size(), t.events.size());
    const ts::MemoryAnalysis mine = ts::analyzeMemory(t), theirs = ts::analyzeMemory(r.trace);
    for (size_t i = 0; i < t.events.size(); ++i) {
        EXPECT_EQ(r.trace.events[i].action, t.events[i].action) << i;
        EXPECT_EQ(r.trace.events[i].phase, t.events[i].phase) << i;
        EXPECT_EQ(r.trace.events[i].step, t.events[i].step) << i;
        auto name = [](const ts::RawMemoryTrace& x, int32_t k) {
            return k >= 0 ? x.names[static_cast<size_t>(k)] : std::string();
        };
        EXPECT_EQ(name(r.trace, r.trace.events[i].op), name(t, t.events[i].op)) << i;
        EXPECT_EQ(name(r.trace, r.trace.events[i].range), name(t, t.events[i].range)) << i;
    }
    std::vector<ts::MemoryCategory> a, b;
    for (const auto& x : mine.allocations)
        if (!x.initial) a.push_back(x.category);
    for (const auto& x : theirs.allocations)
        if (!x.initial) b.push_back(x.category);
    EXPECT_EQ(a, b);
}

TEST(ImportSnapshot, WhatIsNoSnapshotIsRefusedSayingWhy) {
    const std::string whole = snapshotFixture();
    ts::pickle::Value list = ts::pickle::Value::list({ts::pickle::Value::integer(1)});
    ts::pickle::Value empty = ts::pickle::Value::dict();
    empty.set("segments", ts::pickle::Value::list())
        .set("device_traces", ts::pickle::Value::list());
    ts::pickle::Value strange = ts::pickle::Value::dict();
    strange.set("segments", ts::pickle::Value::integer(3))
        .set("device_traces", ts::pickle::Value::list());
    const std::vector<std::pair<std::string, std::string>> cases = {
        {whole.substr(0, whole.size() / 2), "truncated"},
        {"", "an empty file"},
        {"{\"traceEvents\": []}", "not a Python pickle"},
        {ts::pickle::dumps(list), "no \"segments\" and \"device_traces\""},
        {ts::pickle::dumps(empty), "an empty snapshot"},
        {ts::pickle::dumps(strange), "must be lists"},
        {std::string("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00\x8c\x01x\x94\x93.", 18),
         "not a memory snapshot"}};
    for (const auto& [bytes, why] : cases) {
        try {
            ts::importMemorySnapshot(bytes, "bad.pickle");
            ADD_FAILURE() << "accepted a bad snapshot (" << why << ")";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos)
                << e.what() << " (wanted " << why << ")";
        }
    }
}

}  // namespace
