// The memory lab's torch-free analysis on a hand-written allocator trace (synthetic_trace.h):
// the timeline, every block's category, the peak inside backward and what was live there,
// phase bands, driver samples; the analytic model against hand counts; the frontier's
// bisection with a fake runner that runs out of memory above a limit; JSON and reports.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "memory/memory.h"
#include "memory/memory_json.h"
#include "memory/memory_report.h"
#include "synthetic_trace.h"

namespace {

using ts::AllocAction;
using ts::MemoryCategory;
using ts::Phase;

size_t cat(MemoryCategory c) { return static_cast<size_t>(c); }

// The allocation made by event `index`.
const ts::Allocation& allocatedBy(const ts::MemoryAnalysis& a, size_t index) {
    for (const auto& x : a.allocations)
        if (!x.initial && x.alloc_index == index) return x;
    throw std::runtime_error("no allocation at that event");
}

TEST(MemoryAnalysis, CategoriesByKnownStorageAndLifetime) {
    const auto t = ts::testing::syntheticTrace();
    const auto a = ts::analyzeMemory(t);
    ASSERT_EQ(a.allocations.size(), 2u + 7u);
    EXPECT_TRUE(a.allocations[0].initial);
    EXPECT_EQ(a.allocations[0].category, MemoryCategory::Parameters);
    EXPECT_EQ(a.allocations[1].category, MemoryCategory::OptimizerState);
    EXPECT_EQ(allocatedBy(a, 1).category,
              MemoryCategory::Activations);  // forward → freed in backward
    EXPECT_EQ(allocatedBy(a, 2).category, MemoryCategory::Temporaries);  // forward → forward
    EXPECT_EQ(allocatedBy(a, 5).category, MemoryCategory::Activations);
    EXPECT_EQ(allocatedBy(a, 6).category, MemoryCategory::Gradients);     // known storage of step 0
    EXPECT_EQ(allocatedBy(a, 7).category, MemoryCategory::Temporaries);   // backward → backward
    EXPECT_EQ(allocatedBy(a, 11).category, MemoryCategory::Temporaries);  // optimizer → optimizer
    EXPECT_EQ(allocatedBy(a, 13).category, MemoryCategory::Other);        // never freed, not known
    EXPECT_EQ(allocatedBy(a, 2).free_index, std::optional<size_t>(4));
    EXPECT_FALSE(allocatedBy(a, 6).free_index.has_value());
    EXPECT_EQ(allocatedBy(a, 1).range, 0);
    EXPECT_EQ(allocatedBy(a, 6).op, 2);
}

TEST(MemoryAnalysis, AForwardBlockAtAGradientsLaterAddressIsNotTheGradient) {
    // Seen on an H100: the allocator hands a forward activation's address, once backward frees
    // it, to a gradient of the same step. The activation is not the gradient.
    auto t = ts::testing::syntheticTrace();
    t.events.insert(t.events.begin() + 6, {AllocAction::Alloc, 0x103000, 512, 5500, 0,
                                           Phase::Forward, 0, -1, -1, -1});  // 6: X
    t.events.insert(t.events.begin() + 7, {AllocAction::FreeCompleted, 0x103000, 512, 5600, 0,
                                           Phase::Backward, 0, -1, -1, -1});
    // 8 is G1 now, at the same address.
    EXPECT_EQ(ts::categorizeAllocation(t, 6, 7), MemoryCategory::Activations);
    EXPECT_EQ(ts::categorizeAllocation(t, 8, std::nullopt), MemoryCategory::Gradients);
    const auto a = ts::analyzeMemory(t);
    EXPECT_EQ(allocatedBy(a, 6).category, MemoryCategory::Activations);
    EXPECT_EQ(allocatedBy(a, 8).category, MemoryCategory::Gradients);
}

TEST(MemoryAnalysis, AGradientIsKnownOnlyInItsOwnStep) {
    auto t = ts::testing::syntheticTrace();
    // The same address reused in step 1's forward for a block freed in its forward: a
    // temporary, not the gradient of step 0 that lived there.
    t.events.push_back(
        {AllocAction::FreeCompleted, 0x103000, 4096, 14000, 0, Phase::Other, 1, -1, -1, -1});
    t.events.push_back(
        {AllocAction::Alloc, 0x103000, 4096, 15000, 0, Phase::Forward, 1, -1, -1, -1});
    t.events.push_back(
        {AllocAction::FreeCompleted, 0x103000, 4096, 16000, 0, Phase::Forward, 1, -1, -1, -1});
    EXPECT_EQ(ts::categorizeAllocation(t, 6, 14), MemoryCategory::Gradients);
    EXPECT_EQ(ts::categorizeAllocation(t, 15, 16), MemoryCategory::Temporaries);
    // Forward of step 0 freed in backward of step 1 is not "saved for backward" of its step.
    t.events.push_back({AllocAction::Alloc, 0x200000, 10, 17000, 0, Phase::Forward, 0, -1, -1, -1});
    t.events.push_back(
        {AllocAction::FreeCompleted, 0x200000, 10, 18000, 0, Phase::Backward, 1, -1, -1, -1});
    EXPECT_EQ(ts::categorizeAllocation(t, 17, 18), MemoryCategory::Other);
}

TEST(MemoryAnalysis, TimelineAllocatedReservedAndCategories) {
    const auto t = ts::testing::syntheticTrace();
    const auto a = ts::analyzeMemory(t);
    // Every event but the free_requested changes memory.
    ASSERT_EQ(a.timeline.size(), t.events.size() - 1);
    std::vector<size_t> indices;
    for (const auto& p : a.timeline) indices.push_back(p.index);
    EXPECT_EQ(indices, (std::vector<size_t>{0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));
    const int64_t initial = 4096 + 8192;
    EXPECT_EQ(a.timeline[0].allocated, initial);
    EXPECT_EQ(a.timeline[0].reserved, (2 << 20) + (1 << 20));
    EXPECT_EQ(a.timeline[1].allocated, initial + 1000);
    EXPECT_EQ(a.timeline[2].allocated, initial + 1500);
    EXPECT_EQ(a.timeline[3].allocated, initial + 1000);  // T1 freed
    EXPECT_EQ(a.timeline.back().allocated, initial + 4096 + 64);
    EXPECT_EQ(a.timeline.back().time_ns, 13000);
    for (const auto& p : a.timeline) {
        int64_t sum = 0;
        for (int64_t b : p.by_category) {
            EXPECT_GE(b, 0);
            sum += b;
        }
        EXPECT_EQ(sum, p.allocated) << "at event " << p.index;
    }
    // Activations pile up in forward and are gone after backward.
    EXPECT_EQ(a.timeline[4].by_category[cat(MemoryCategory::Activations)], 3000);  // after event 5
    EXPECT_EQ(a.timeline[9].by_category[cat(MemoryCategory::Activations)], 0);     // after event 10
}

TEST(MemoryAnalysis, PeakInsideBackwardExplained) {
    const auto t = ts::testing::syntheticTrace();
    const auto a = ts::analyzeMemory(t);
    const auto& p = a.peak;
    EXPECT_EQ(p.index, 7u);
    EXPECT_EQ(p.phase, Phase::Backward);
    EXPECT_EQ(p.step, 0);
    EXPECT_EQ(p.allocated, 22384);
    EXPECT_EQ(p.reserved, 3 << 20);
    EXPECT_EQ(p.by_category[cat(MemoryCategory::Parameters)], 4096);
    EXPECT_EQ(p.by_category[cat(MemoryCategory::OptimizerState)], 8192);
    EXPECT_EQ(p.by_category[cat(MemoryCategory::Gradients)], 4096);
    EXPECT_EQ(p.by_category[cat(MemoryCategory::Activations)], 3000);
    EXPECT_EQ(p.by_category[cat(MemoryCategory::Temporaries)], 3000);
    EXPECT_EQ(p.by_category[cat(MemoryCategory::Other)], 0);
    std::vector<int64_t> live;
    for (size_t k : p.live) live.push_back(a.allocations[k].size);
    EXPECT_EQ(live, (std::vector<int64_t>{8192, 4096, 4096, 3000, 2000, 1000}));
    EXPECT_TRUE(a.allocations[p.live[1]].initial);  // ties keep the order: the parameters first
}

TEST(MemoryAnalysis, LargestAllocationsBandsAndDriverSamples) {
    const auto t = ts::testing::syntheticTrace();
    const auto a = ts::analyzeMemory(t);
    std::vector<int64_t> sizes;
    for (size_t k : ts::largestAllocations(a, 3)) sizes.push_back(a.allocations[k].size);
    EXPECT_EQ(sizes, (std::vector<int64_t>{4096, 3000, 2000}));
    EXPECT_EQ(ts::largestAllocations(a, 100).size(), 7u);  // the initial blocks are not listed

    ASSERT_EQ(a.bands.size(), 4u);
    EXPECT_EQ(a.bands[0].phase, Phase::Forward);
    EXPECT_EQ(a.bands[0].first, 0u);
    EXPECT_EQ(a.bands[0].last, 5u);
    EXPECT_EQ(a.bands[1].phase, Phase::Backward);
    EXPECT_EQ(a.bands[1].first, 6u);
    EXPECT_EQ(a.bands[1].last, 10u);
    EXPECT_EQ(a.bands[2].phase, Phase::Optimizer);
    EXPECT_EQ(a.bands[3].phase, Phase::Forward);
    EXPECT_EQ(a.bands[3].first, 13u);

    // Samples go to the first event at or after them (the last one past the end: the last event).
    ASSERT_EQ(a.driver.size(), 3u);
    EXPECT_EQ(a.driver[0], (std::pair<size_t, int64_t>{0, 500 << 20}));
    EXPECT_EQ(a.driver[1].first, 7u);
    EXPECT_EQ(a.driver[2].first, 13u);
}

TEST(MemoryAnalysis, EmptyTraceHasTheInitialBlocksOnly) {
    ts::RawMemoryTrace t;
    t.initial = {{0x10, 100}};
    const auto a = ts::analyzeMemory(t);
    EXPECT_TRUE(a.timeline.empty());
    EXPECT_EQ(a.peak.allocated, 100);
    EXPECT_EQ(a.peak.live.size(), 1u);
}

// ---- The analytic model against hand counts ----

ts::PointConfig handConfig() {
    ts::PointConfig c;
    c.model.vocab_size = 100;
    c.model.context_length = 8;
    c.model.d_model = 16;
    c.model.d_ff = 32;
    c.model.num_layers = 2;
    c.model.num_heads = 2;
    c.batch_size = 3;
    c.precision = ts::Precision::FP32;
    c.attention = ts::AttentionImpl::Naive;
    c.mode = ts::Mode::Train;
    return c;
}

TEST(MemoryModel, Fp32NaiveTrainByHand) {
    // P = V·d + L·(4d² + 3dF + 2d) + d + d·V = 1600 + 2·2592 + 16 + 1600 = 8400.
    const auto c = handConfig();
    ASSERT_EQ(ts::parameterCount(c.model), 8400);
    EXPECT_EQ(ts::parameterTensorCount(c.model), 15);
    const auto p = ts::predictMemory(c);
    EXPECT_EQ(p.parameters, 33600);
    EXPECT_EQ(p.gradients, 33600);
    EXPECT_EQ(p.optimizer_state, 67200 + 60);  // 8P + 4 bytes × 15 step counters
    // BTd = 384, BTF = 768, BHT² = 384; per layer 384·(2·4 + 6·4) + 768·4·4 + 384·4.
    EXPECT_EQ(p.activations_per_layer, 12288 + 12288 + 1536);
    // + final norm 384·8 + log-softmax B·T·V·4 = 2400·4.
    EXPECT_EQ(p.activations, 2 * 26112 + 3072 + 9600);
    EXPECT_EQ(p.weight_casts, 0);
    EXPECT_EQ(p.temporaries, 2400 * 8);  // logits + log-softmax beat the scores (384·8)
    EXPECT_EQ(p.peak, 33600 + 33600 + 67260 + 64896 + 19200);
    EXPECT_EQ(p.by_category[cat(MemoryCategory::Activations)], 64896);
    EXPECT_EQ(p.by_category[cat(MemoryCategory::Other)], 0);
}

TEST(MemoryModel, Bf16AddsWeightCastsAndHalvesActivations) {
    auto c = handConfig();
    c.precision = ts::Precision::BF16;
    const auto p = ts::predictMemory(c);
    EXPECT_EQ(p.parameters, 33600);  // fp32 master weights whatever the precision
    // per layer 384·(8 + 12) + 768·8 + 384·(4 + 2)
    EXPECT_EQ(p.activations_per_layer, 7680 + 6144 + 2304);
    EXPECT_EQ(p.activations, 2 * 16128 + 384 * 6 + 9600);
    EXPECT_EQ(p.weight_casts, 2 * (2 * (4 * 256 + 3 * 16 * 32) + 100 * 16));
    EXPECT_EQ(p.by_category[cat(MemoryCategory::Activations)], 44160 + 13440);
    EXPECT_EQ(p.temporaries, 2400 * 6);
}

TEST(MemoryModel, FusedAttentionIsLinearInContextAndForwardKeepsNothing) {
    auto c = handConfig();
    c.attention = ts::AttentionImpl::Flash;
    EXPECT_EQ(ts::predictMemory(c).activations_per_layer, 12288 + 12288 + 3 * 2 * 8 * 4);
    c.attention = ts::AttentionImpl::Naive;
    c.mode = ts::Mode::Forward;
    const auto f = ts::predictMemory(c);
    EXPECT_EQ(f.gradients, 0);
    EXPECT_EQ(f.optimizer_state, 0);
    EXPECT_EQ(f.activations, 0);
    EXPECT_EQ(f.peak, 33600 + 19200);
    c.mode = ts::Mode::ForwardBackward;
    const auto fb = ts::predictMemory(c);
    EXPECT_EQ(fb.gradients, 33600);
    EXPECT_EQ(fb.optimizer_state, 0);
    // Doubling the context quadruples naive attention's softmax, doubles the rest.
    auto longer = handConfig();
    longer.model.context_length = 16;
    EXPECT_EQ(ts::predictMemory(longer).activations_per_layer, 2 * (12288 + 12288) + 4 * 1536);
}

// ---- The frontier ----

ts::FrontierProbe fitsBelow(int64_t limit, int64_t v, std::vector<int64_t>& seen) {
    seen.push_back(v);
    ts::FrontierProbe p;
    p.fits = v <= limit;
    if (!p.fits) {
        p.status = ts::Status::OOM;
        p.error = "CUDA out of memory";
    }
    p.peak_bytes = v * 100;
    return p;
}

TEST(MemoryFrontier, BisectionFindsTheLargestMultipleThatFits) {
    std::vector<int64_t> seen;
    const auto r = ts::findFrontier(ts::FrontierAxis::Context, 16, 4096, 16,
                                    [&](int64_t v) { return fitsBelow(1000, v, seen); });
    EXPECT_EQ(r.largest_fit, 992);
    EXPECT_EQ(r.smallest_oom, 1008);
    EXPECT_EQ(r.probes.size(), seen.size());
    EXPECT_LE(r.probes.size(), 2u + 8u);  // lo, hi, then log2(4096 / 16) halvings
    EXPECT_EQ(seen[0], 16);
    EXPECT_EQ(seen[1], 4096);
    for (const auto& p : r.probes) {
        EXPECT_EQ(p.value % 16, 0);
        EXPECT_EQ(p.fits, p.value <= 1000);
        EXPECT_EQ(p.status, p.fits ? ts::Status::Ok : ts::Status::OOM);
    }
}

TEST(MemoryFrontier, EndsAndFailures) {
    std::vector<int64_t> seen;
    auto all = ts::findFrontier(ts::FrontierAxis::Batch, 1, 64, 1,
                                [&](int64_t v) { return fitsBelow(1000, v, seen); });
    EXPECT_EQ(all.largest_fit, 64);
    EXPECT_EQ(all.smallest_oom, 0);
    EXPECT_EQ(all.probes.size(), 2u);
    auto none = ts::findFrontier(ts::FrontierAxis::Batch, 1, 64, 1,
                                 [&](int64_t v) { return fitsBelow(0, v, seen); });
    EXPECT_EQ(none.largest_fit, 0);
    EXPECT_EQ(none.smallest_oom, 1);
    EXPECT_EQ(none.probes.size(), 1u);
    auto exact = ts::findFrontier(ts::FrontierAxis::Batch, 1, 64, 1,
                                  [&](int64_t v) { return fitsBelow(37, v, seen); });
    EXPECT_EQ(exact.largest_fit, 37);
    EXPECT_EQ(exact.smallest_oom, 38);
    // A failure that is not about memory stops the search, named in its probe.
    int calls = 0;
    auto broken = ts::findFrontier(ts::FrontierAxis::Batch, 1, 64, 1, [&](int64_t v) {
        ts::FrontierProbe p;
        if (++calls == 3) {
            p.status = ts::Status::Failed;
            p.error = "driver error";
        } else {
            p.fits = v <= 10;
            p.status = p.fits ? ts::Status::Ok : ts::Status::OOM;
        }
        return p;
    });
    EXPECT_EQ(broken.probes.size(), 3u);
    EXPECT_EQ(broken.probes.back().error, "driver error");
    EXPECT_EQ(broken.largest_fit, 1);
    EXPECT_EQ(broken.smallest_oom, 64);
}

// ---- JSON and reports ----

ts::MemoryResult syntheticResult() {
    ts::MemoryResult r;
    r.spec.bench = handConfig();
    r.spec.bench.device = "cuda";
    r.spec.record_steps = 1;
    r.spec.frontier = ts::FrontierAxis::Context;
    r.gpu = true;
    r.parameter_count = 8400;
    r.parameter_bytes = 33600;
    r.gradient_bytes = 33600;
    r.optimizer_bytes = 67260;
    r.trace = ts::testing::syntheticTrace();
    r.trace.stacks = {{{"ts::TrainingStep::run", "training_step.cpp", 42}}};
    r.trace.events[7].stack = 0;
    std::vector<int64_t> seen;
    r.frontier = ts::findFrontier(ts::FrontierAxis::Context, 16, 256, 16,
                                  [&](int64_t v) { return fitsBelow(100, v, seen); });
    return r;
}

TEST(MemoryJson, ResultRoundTrips) {
    const auto r = syntheticResult();
    const auto back = ts::memoryResultFromJson(ts::parseJson(ts::dumpJson(ts::toJson(r))));
    EXPECT_EQ(back.spec, r.spec);
    EXPECT_EQ(back.trace, r.trace);
    EXPECT_EQ(back.frontier, r.frontier);
    EXPECT_EQ(back.optimizer_bytes, 67260);
    EXPECT_EQ(back.status, ts::Status::Ok);
}

TEST(MemoryJson, BadRowsAreNamed) {
    auto j = ts::toJson(syntheticResult());
    j["trace"]["events"][3][0] = "teleport";
    try {
        ts::memoryResultFromJson(j);
        FAIL() << "accepted an unknown action";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("trace.events[3]"), std::string::npos) << e.what();
    }
    auto s = ts::toJson(syntheticResult().spec);
    s["record_steps"] = 0;
    EXPECT_THROW(ts::memorySpecFromJson(s), std::invalid_argument);
    s = ts::toJson(syntheticResult().spec);
    s["frontier"] = "width";
    EXPECT_THROW(ts::memorySpecFromJson(s), std::invalid_argument);
}

TEST(MemoryReport, TablesTimelineCsvAndPeakTable) {
    const auto r = syntheticResult();
    ts::MemoryReportOptions o;
    const std::string text = ts::formatMemory(r, o);
    EXPECT_NE(
        text.find("Peak: 21.9 KiB allocated (3.0 MiB reserved) at event 7 of 14, in backward 0"),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("Largest allocations"), std::string::npos);
    EXPECT_NE(text.find("MmBackward0"), std::string::npos);
    EXPECT_NE(text.find("OOM frontier by context: 96 fits, 112 does not"), std::string::npos)
        << text;
    o.format = ts::TableFormat::Markdown;
    EXPECT_NE(ts::formatMemory(r, o).find("| category"), std::string::npos);
    // A frontier stopped by a failure that is not about memory says so, not "nothing fits".
    auto stopped = r;
    stopped.frontier = ts::findFrontier(ts::FrontierAxis::Context, 16, 256, 16, [](int64_t) {
        ts::FrontierProbe p;
        p.status = ts::Status::Failed;
        p.error = "flash attention backend: head_dim 80 (16, 32, 64 or 128 only)";
        return p;
    });
    const std::string verdict = ts::formatMemory(stopped, o);
    EXPECT_NE(
        verdict.find(
            "OOM frontier by context: stopped: context 16 failed for another reason than memory"),
        std::string::npos)
        << verdict;
    EXPECT_EQ(verdict.find("not even"), std::string::npos);

    const std::string csv = ts::memoryTimelineCsv(r);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 13);
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "event,time_us,phase,step,allocated_bytes,reserved_bytes,parameters_bytes,"
              "gradients_bytes,optimizer_state_bytes,activations_bytes,temporaries_bytes,"
              "other_bytes");
    EXPECT_NE(csv.find("\n7,7.000,backward,0,22384,3145728,4096,4096,8192,3000,3000,0\n"),
              std::string::npos)
        << csv;

    auto fp16 = r;
    fp16.spec.bench.precision = ts::Precision::FP16;
    const std::string peaks = ts::memoryPeakTable({r, fp16}, ts::TableFormat::Csv);
    EXPECT_EQ(std::count(peaks.begin(), peaks.end(), '\n'), 3);
    EXPECT_NE(peaks.find(",8,3,fp32,naive,train,ok,22384,218556,3145728,"), std::string::npos)
        << peaks;
    EXPECT_NE(peaks.find(",fp16,"), std::string::npos);
}

// ---- Two runs compared, and the out-of-memory's picture ----

TEST(MemoryAnalysis, PhasePeaksOfTheSyntheticStep) {
    const auto t = ts::testing::syntheticTrace();
    const auto p = ts::phasePeaks(t, ts::analyzeMemory(t));
    ASSERT_EQ(p.size(), 4u);
    // Forward's highest moment is its last block (the loss, event 13): 12288 + G1 + 64.
    EXPECT_EQ(p[0].phase, Phase::Forward);
    EXPECT_EQ(p[0].index, 13u);
    EXPECT_EQ(p[0].allocated, 16448);
    EXPECT_EQ(p[1].phase, Phase::Backward);
    EXPECT_EQ(p[1].index, 7u);
    EXPECT_EQ(p[1].allocated, 22384);
    EXPECT_EQ(p[1].by_category[cat(MemoryCategory::Activations)], 3000);
    EXPECT_EQ(p[2].phase, Phase::Optimizer);
    EXPECT_EQ(p[2].allocated, 12288 + 4096 + 100);
    EXPECT_EQ(p[3].phase, Phase::Other);  // the step's peak
    EXPECT_EQ(p[3].allocated, 22384);
    for (const auto& x : p) EXPECT_TRUE(x.present);
    // A forward-only trace has no backward or optimizer.
    auto fwd = t;
    fwd.events.resize(6);
    const auto q = ts::phasePeaks(fwd, ts::analyzeMemory(fwd));
    EXPECT_TRUE(q[0].present);
    EXPECT_FALSE(q[1].present);
    EXPECT_FALSE(q[2].present);
}

TEST(MemoryAnalysis, ComparePhasesAttributesTheSavingToCategories) {
    const auto a = ts::testing::syntheticTrace();
    auto b = a;
    b.events[5].size = 1000;  // A2 half as large: an activation saved
    b.events[9].size = 1000;
    const auto rows = ts::comparePhases(a, ts::analyzeMemory(a), b, ts::analyzeMemory(b));
    ASSERT_EQ(rows.size(), 4 * (ts::kMemoryCategories + 1));
    auto row = [&](Phase ph, std::optional<MemoryCategory> c) {
        for (const auto& r : rows)
            if (r.phase == ph && r.category == c) return r;
        throw std::runtime_error("no such row");
    };
    const auto back = row(Phase::Backward, std::nullopt);
    EXPECT_EQ(back.a, 22384);
    EXPECT_EQ(back.b, 21384);
    const auto act = row(Phase::Backward, MemoryCategory::Activations);
    EXPECT_EQ(act.b - act.a, -1000);
    ASSERT_TRUE(act.share);
    EXPECT_DOUBLE_EQ(*act.share, 1.0);  // all of the saving is activations
    EXPECT_DOUBLE_EQ(*row(Phase::Backward, MemoryCategory::Parameters).share, 0.0);
    EXPECT_FALSE(row(Phase::Optimizer, MemoryCategory::Activations).share);  // no difference there
    EXPECT_EQ(ts::phaseComparisonName(Phase::Other), "step (peak)");

    ts::MemoryResult ra = syntheticResult(), rb = ra;
    rb.trace = b;
    const std::string text = ts::formatMemoryComparison(ra, rb, ts::TableFormat::Text);
    EXPECT_NE(text.find("Phase by phase"), std::string::npos) << text;
    EXPECT_NE(text.find("100%"), std::string::npos) << text;
}

TEST(MemoryAnalysis, TheFailedAllocationAndWhatWasHeld) {
    const auto t = ts::testing::syntheticOomTrace();
    const auto a = ts::analyzeMemory(t);
    const auto f = ts::failedAllocation(t, a);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->index, 8u);
    EXPECT_EQ(f->requested, int64_t{1} << 30);
    EXPECT_EQ(f->device_free, 12345);
    EXPECT_EQ(f->phase, Phase::Backward);
    EXPECT_EQ(f->range, "layer.0/attention");
    EXPECT_EQ(f->op, "MmBackward0");
    EXPECT_EQ(f->allocated, 22384);  // the peak just before
    EXPECT_EQ(f->reserved, 3 << 20);
    EXPECT_EQ(f->by_category[cat(MemoryCategory::Activations)], 3000);
    EXPECT_EQ(ts::describeFailedAllocation(*f),
              "1.00 GiB asked for in backward of step 0 (layer.0/attention, MmBackward0), with "
              "21.9 KiB allocated, "
              "3.0 MiB reserved and 12.1 KiB free on the device");
    EXPECT_FALSE(ts::failedAllocation(ts::testing::syntheticTrace(),
                                      ts::analyzeMemory(ts::testing::syntheticTrace())));

    // Stored with the frontier, read back, and told in the report.
    auto r = syntheticResult();
    r.frontier->oom_trace = t;
    const auto back = ts::memoryResultFromJson(ts::parseJson(ts::dumpJson(ts::toJson(r))));
    EXPECT_EQ(back.frontier, r.frontier);
    const std::string text = ts::formatMemory(back, {});
    EXPECT_NE(
        text.find("The allocation that failed at context 112: 1.00 GiB asked for in backward"),
        std::string::npos)
        << text;
}

}  // namespace
