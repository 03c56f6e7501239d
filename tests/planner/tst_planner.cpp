// The planner's formulas against cases worked by hand, its limits against the times they
// bound, the curves' crossovers, the whole-model prediction against stepFlops(), bad inputs,
// and the report's JSON round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/point.h"
#include "planner/planner.h"
#include "planner/planner_report.h"

using namespace ts;

namespace {

// C = 1e12 FLOP/s, W = 1e9 B/s (C/W = 1000), B = 8192 tokens, D = 1024, F = 4096, L = 2,
// X = 4, Y = 2, b = 2 bytes.
PlannerInputs handCase() {
    PlannerInputs in;
    in.flops = 1e12;
    in.bandwidth = 1e9;
    in.batch_tokens = 8192;
    in.d_model = 1024;
    in.d_ff = 4096;
    in.layers = 2;
    in.dp = 4;
    in.tp = 2;
    return in;
}

const PlannerLimit& limitOf(const StrategyPlan& p, const std::string& starts) {
    for (const auto& l : p.limits)
        if (l.what.rfind(starts, 0) == 0) return l;
    throw std::runtime_error("no limit " + starts);
}

bool anyContains(const std::vector<std::string>& v, const std::string& s) {
    for (const auto& x : v)
        if (x.find(s) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(Planner, DataParallelByHand) {
    const StrategyPlan p = planStrategy(handCase(), Strategy::DP);
    EXPECT_EQ(p.x, 4);
    EXPECT_EQ(p.y, 1);
    // Forward: 6·B·D·F/X = 6·8192·1024·4096/4 = 51,539,607,552 FLOPs; / 1e12 = 51.5 ms; no comm.
    EXPECT_DOUBLE_EQ(p.forward.flops, 51539607552.0);
    EXPECT_DOUBLE_EQ(p.forward.compute_s, 0.051539607552);
    EXPECT_EQ(p.forward.comm_s, 0.0);
    // Backward: twice the FLOPs; all-reduce of 3·D·F·2 = 25,165,824 bytes: each device sends
    // 2·(3/4) of it = 37,748,736 bytes, at 1e9 B/s 37.7 ms: compute bound.
    EXPECT_DOUBLE_EQ(p.backward.flops, 103079215104.0);
    EXPECT_DOUBLE_EQ(p.backward.comm_bytes, 37748736.0);
    EXPECT_DOUBLE_EQ(p.backward.comm_s, 0.037748736);
    EXPECT_FALSE(p.comm_bound);
    // Step of L = 2: 2·(51.54 ms + max(103.08, 37.75) ms) = 309.24 ms.
    EXPECT_NEAR(p.step_s, 0.309237645312, 1e-12);
    // N_DP ≤ 1 + B·W/C = 1 + 8192·1e9/1e12 = 9.192; per device B/X ≥ (3/4)·1000 = 750.
    EXPECT_NEAR(limitOf(p, "largest N_DP").value, 9.192, 1e-12);
    EXPECT_TRUE(limitOf(p, "largest N_DP").holds);
    EXPECT_NEAR(limitOf(p, "smallest").value, 750.0, 1e-9);
    // Memory: P = L·3·D·F = 25,165,824 parameters at 4 + 4 + 8 bytes, not sharded.
    EXPECT_DOUBLE_EQ(p.params_per_device, 25165824.0);
    EXPECT_DOUBLE_EQ(p.memoryBytes(), 25165824.0 * 16);
}

TEST(Planner, TheDataLimitIsWhereCommunicationCatchesUp) {
    PlannerInputs in = handCase();
    // At N_DP = 9 (below 9.192) the backward is compute bound; at 10 it is communication bound.
    in.dp = 8;  // 8192 tokens over 8 still ≥ 1 each
    EXPECT_FALSE(planStrategy(in, Strategy::DP).backward.commBound());
    in.batch_tokens = 8192;
    in.dp = 10;
    EXPECT_TRUE(planStrategy(in, Strategy::DP).backward.commBound());
    EXPECT_FALSE(limitOf(planStrategy(in, Strategy::DP), "largest N_DP").holds);
    // FSDP has the same limit, in both passes.
    EXPECT_TRUE(planStrategy(in, Strategy::FSDP).forward.commBound());
    EXPECT_TRUE(planStrategy(in, Strategy::FSDP).backward.commBound());
    in.dp = 9;
    EXPECT_FALSE(planStrategy(in, Strategy::FSDP).forward.commBound());
    EXPECT_FALSE(planStrategy(in, Strategy::FSDP).backward.commBound());
}

TEST(Planner, FullyShardedByHand) {
    const StrategyPlan p = planStrategy(handCase(), Strategy::FSDP);
    // Forward: all-gather of 3·D·F·2 bytes, (3/4) of it sent: 18,874,368 bytes, 18.9 ms.
    EXPECT_DOUBLE_EQ(p.forward.comm_bytes, 18874368.0);
    EXPECT_DOUBLE_EQ(p.backward.comm_bytes, 37748736.0);  // all-gather + reduce-scatter
    // Everything sharded over X = 4: 25,165,824 / 4 parameters.
    EXPECT_DOUBLE_EQ(p.params_per_device, 6291456.0);
}

TEST(Planner, TensorParallelByHand) {
    const StrategyPlan p = planStrategy(handCase(), Strategy::TP);
    EXPECT_EQ(p.x, 1);
    EXPECT_EQ(p.y, 2);
    // Forward 6·B·D·F/2 = 103,079,215,104 FLOPs; all-reduce of y (B·D·2 = 16,777,216 bytes),
    // 2·(1/2) of it sent: 16.8 ms. The backward's all-reduce of dx is the same size.
    EXPECT_DOUBLE_EQ(p.forward.flops, 103079215104.0);
    EXPECT_DOUBLE_EQ(p.forward.comm_bytes, 16777216.0);
    EXPECT_DOUBLE_EQ(p.backward.comm_bytes, 16777216.0);
    EXPECT_DOUBLE_EQ(p.backward.flops, 206158430208.0);
    // N_TP ≤ 1 + 3·F·W/(2C) = 1 + 3·4096/2000 = 7.144 forward, 1 + 3·4096/1000 = 13.288 backward.
    EXPECT_NEAR(limitOf(p, "largest N_TP (forward)").value, 7.144, 1e-12);
    EXPECT_NEAR(limitOf(p, "largest N_TP (backward)").value, 13.288, 1e-12);
    PlannerInputs in = handCase();
    in.tp = 8;  // past 7.144: the forward is communication bound, the backward is not
    in.d_model = 1024;
    const StrategyPlan q = planStrategy(in, Strategy::TP);
    EXPECT_TRUE(q.forward.commBound());
    EXPECT_FALSE(q.backward.commBound());
    in.tp = 4;
    EXPECT_FALSE(planStrategy(in, Strategy::TP).forward.commBound());
}

TEST(Planner, FsdpTimesTpByHand) {
    PlannerInputs in = handCase();
    StrategyPlan p = planStrategy(in, Strategy::FsdpTp);
    // Forward FLOPs 6·B·D·F/(X·Y) = 25,769,803,776. FSDP all-gather of the TP shard's weights
    // (3·1024·2048·2 = 12,582,912 bytes), 3/4 sent: 9,437,184 bytes = 9.44 ms; TP all-reduce
    // of (B/X)·D·2 = 4,194,304 bytes, 2·(1/2) sent = 4.19 ms. Overlapped: the larger.
    EXPECT_DOUBLE_EQ(p.forward.flops, 25769803776.0);
    EXPECT_DOUBLE_EQ(p.forward.comm_bytes, 9437184.0 + 4194304.0);
    EXPECT_DOUBLE_EQ(p.forward.comm_s, 0.009437184);
    // X_opt = √(2·8192·8/(3·4096)) = √(10.667) = 3.266; N ≤ 3·B·F·W²/(2·C²) = 50.33.
    EXPECT_NEAR(p.x_opt, std::sqrt(32.0 / 3.0), 1e-12);
    EXPECT_NEAR(limitOf(p, "largest N").value, 50.331648, 1e-9);
    EXPECT_NEAR(limitOf(p, "smallest").value, 2e24 / (3 * 4096 * 1e18), 1e-9);  // 2C²/(3FW²)
    // Sharing the links: the sum, and a quarter of the largest N (3·B·F·W²/(8·C²) = 12.58).
    in.overlap_axes = false;
    p = planStrategy(in, Strategy::FsdpTp);
    EXPECT_DOUBLE_EQ(p.forward.comm_s, 0.009437184 + 0.004194304);
    EXPECT_NEAR(limitOf(p, "largest N").value, 12.582912, 1e-9);
    EXPECT_DOUBLE_EQ(p.params_per_device, 25165824.0 / 8);
}

TEST(Planner, FsdpTpLimitIsTightAtTheOptimum) {
    // At X = X_opt (non-integer degrees are not plannable: check with the large-degree formulas
    // the limit is derived from): with N = N_max, 3·D·F·b·X/(N·W) equals 6·B·D·F/(N·C).
    PlannerInputs in = handCase();
    const StrategyPlan p = planStrategy(in, Strategy::FsdpTp);
    const double N = limitOf(p, "largest N").value;
    const double B = in.batch_tokens, F = 4096, D = 1024, b = 2, C = in.flops, W = in.bandwidth;
    const double x = std::sqrt(2 * B * N / (3 * F));
    const double fsdp = 3 * D * F * b * x / (N * W), tp = 2 * B * D * b / (x * W);
    const double compute = 6 * B * D * F / (N * C);
    EXPECT_NEAR(fsdp / compute, 1.0, 1e-12);
    EXPECT_NEAR(tp / compute, 1.0, 1e-12);
}

TEST(Planner, DpTimesTpByHand) {
    const StrategyPlan p = planStrategy(handCase(), Strategy::DpTp);
    // Backward: DP all-reduce of the TP shard's gradients, 2·(3/4)·12,582,912 = 18,874,368
    // bytes, and TP all-reduce of dx, 4,194,304 bytes; overlapped, the larger: 18.9 ms.
    EXPECT_DOUBLE_EQ(p.backward.comm_bytes, 18874368.0 + 4194304.0);
    EXPECT_DOUBLE_EQ(p.backward.comm_s, 0.018874368);
    EXPECT_DOUBLE_EQ(p.forward.comm_s, 0.004194304);
    EXPECT_DOUBLE_EQ(p.params_per_device, 25165824.0 / 2);
}

TEST(Planner, RingCollectives) {
    // S = 1 MB over 4 devices at 1 GB/s: all-gather and reduce-scatter 3/4 ms, all-reduce 1.5
    // ms, the course's alternate ring (whole tensors, N−1 steps) 3 ms.
    const auto c = ringCollectives(1e6, 4, 1e9);
    ASSERT_EQ(c.size(), 4u);
    EXPECT_DOUBLE_EQ(c[0].seconds, 0.75e-3);
    EXPECT_DOUBLE_EQ(c[1].seconds, 0.75e-3);
    EXPECT_DOUBLE_EQ(c[2].seconds, 1.5e-3);
    EXPECT_DOUBLE_EQ(c[2].bytes_sent, 1.5e6);
    EXPECT_DOUBLE_EQ(c[3].seconds, 3e-3);
    EXPECT_DOUBLE_EQ(ringAllReduceSeconds(1e6, 1, 1e9), 0.0);
}

TEST(Planner, CurvesCrossWhereTheLimitsSay) {
    const PlannerInputs in = handCase();
    // DP: the backward crosses at B/X = (X−1)/X · C/W = 750 tokens per device.
    PlannerCurve c = planCurve(in, Strategy::DP);
    ASSERT_TRUE(c.crossover);
    EXPECT_NEAR(*c.crossover, 750.0, 1e-6);
    EXPECT_NEAR(c.crossover_s, planStrategy(in, Strategy::DP).backward.comm_s, 1e-12);
    EXPECT_DOUBLE_EQ(c.current_x, 2048.0);
    // TP: the forward crosses at N_TP = 7.144.
    c = planCurve(in, Strategy::TP);
    ASSERT_TRUE(c.crossover);
    EXPECT_NEAR(*c.crossover, 7.144, 1e-6);
    EXPECT_EQ(c.pass, "forward");
    // FSDP × TP at X = 4, Y = 2: compute 6·b·D·F/C against the all-gather's 9.437 ms (the
    // TP all-reduce grows slower than compute): they meet at b = 9.437184e-3/2.5165824e-5 = 375.
    c = planCurve(in, Strategy::FsdpTp);
    ASSERT_TRUE(c.crossover);
    EXPECT_NEAR(*c.crossover, 375.0, 1e-6);
    for (size_t i = 1; i < c.x.size(); ++i) EXPECT_GT(c.x[i], c.x[i - 1]);
    // One device along the data axis: nothing to communicate, nothing to cross.
    PlannerInputs one = in;
    one.dp = 1;
    EXPECT_FALSE(planCurve(one, Strategy::DP).crossover);
}

TEST(Planner, WholeModelPredictionUsesTheBenchmarksFlops) {
    PlannerInputs in;
    in.flops = 1e12;
    in.bandwidth = 1e9;
    ModelConfig m = *modelPreset("small");
    m.context_length = 256;
    in.model = m;
    in.d_model = m.d_model;
    in.d_ff = m.d_ff;
    in.layers = m.num_layers;
    in.batch_tokens = 4 * 256;
    in.dp = 2;
    ASSERT_TRUE(validatePlannerInputs(in).empty());
    const PlannerPrediction dp = predictStep(in, Strategy::DP);
    // Each of 2 devices runs 2 sequences of 256: the benchmark's FLOPs of a batch of 2.
    PointConfig two;
    two.model = m;
    two.batch_size = 2;
    two.mode = Mode::Train;
    const StepFlops f = stepFlops(two);
    EXPECT_NEAR(dp.forward_flops / f.forward, 1.0, 1e-12);
    EXPECT_NEAR(dp.backward_flops / f.backward, 1.0, 1e-12);
    const double P = static_cast<double>(parameterCount(m));
    EXPECT_DOUBLE_EQ(dp.backward_comm_bytes, 2 * 0.5 * P * 2);  // 2·(N−1)/N·P·b
    EXPECT_EQ(dp.forward_comm_bytes, 0.0);
    EXPECT_DOUBLE_EQ(dp.memory_bytes, P * 16);
    const PlannerPrediction fsdp = predictStep(in, Strategy::FSDP);
    EXPECT_DOUBLE_EQ(fsdp.forward_comm_bytes, 0.5 * P * 2);
    EXPECT_DOUBLE_EQ(fsdp.memory_bytes, P * 16 / 2);
    EXPECT_NEAR(fsdp.step_serial_s, fsdp.compute_s + (0.5 * P * 2 + P * 2) / 1e9, 1e-12);
    EXPECT_THROW(predictStep(in, Strategy::TP), std::invalid_argument);
    in.model.reset();
    EXPECT_THROW(predictStep(in, Strategy::DP), std::invalid_argument);
}

TEST(Planner, BadInputsAreNamed) {
    PlannerInputs in = handCase();
    EXPECT_TRUE(validatePlannerInputs(in).empty());
    in.flops = 0;
    EXPECT_TRUE(
        anyContains(validatePlannerInputs(in), "C (FLOP/s) must be a positive number, got 0"));
    in = handCase();
    in.bandwidth = std::nan("");
    EXPECT_TRUE(anyContains(validatePlannerInputs(in), "W (bytes/s)"));
    in = handCase();
    in.tp = 3;
    EXPECT_TRUE(anyContains(validatePlannerInputs(in),
                            "d_ff 4096 is not divisible by the tensor-parallel degree 3"));
    EXPECT_TRUE(anyContains(validatePlannerInputs(in), "d_model 1024 is not divisible"));
    in = handCase();
    in.dp = 0;
    EXPECT_TRUE(anyContains(validatePlannerInputs(in),
                            "data-parallel degree (DP) must be in 1..1000000, got 0"));
    in = handCase();
    in.dp = 16;
    in.batch_tokens = 8;
    EXPECT_TRUE(anyContains(validatePlannerInputs(in), "less than one token to each of the 16"));
    in = handCase();
    in.comm_bytes = -2;
    EXPECT_TRUE(anyContains(validatePlannerInputs(in), "bytes per communicated element"));
    in = handCase();
    in.model = *modelPreset("small");
    EXPECT_TRUE(anyContains(validatePlannerInputs(in), "the model small has d_model 768"));
    MeasureSpec s;
    s.device = "tpu";
    s.world = 1;
    s.iters = 0;
    const auto m = validateMeasureSpec(s);
    EXPECT_TRUE(anyContains(m, "'tpu'"));
    EXPECT_TRUE(anyContains(m, "over 1 rank"));
    EXPECT_TRUE(anyContains(m, "iterations must be in 1..10000, got 0"));
}

TEST(Planner, ReportRoundTripsThroughJson) {
    PlannerInputs in = handCase();
    in.overlap_axes = false;
    MachineMeasurement m;
    m.device = "cpu";
    m.flops = 1e12;
    m.backend = "gloo";
    m.world = 2;
    m.backend_busbw = 1e9;
    m.ring_exact = true;
    const PlannerReport r = makePlannerReport(in, m);
    const nlohmann::json j = toJson(r);
    EXPECT_EQ(j.at("plans").size(), allStrategies().size());
    EXPECT_EQ(j.at("plans")[0].at("backward").at("comm_formula").get<std::string>(),
              "all-reduce dW1, dW2, dW3: 2·(X−1)/X · 3·D·F·b / W");
    const PlannerReport back = plannerReportFromJson(nlohmann::json::parse(j.dump()));
    ASSERT_EQ(back.plans.size(), r.plans.size());
    for (size_t i = 0; i < r.plans.size(); ++i) {
        EXPECT_EQ(back.plans[i].step_s, r.plans[i].step_s);
        EXPECT_EQ(back.plans[i].backward.comm_s, r.plans[i].backward.comm_s);
    }
    EXPECT_FALSE(back.inputs.overlap_axes);
    ASSERT_TRUE(back.measured);
    EXPECT_EQ(back.measured->bandwidth(), 1e9);
    // A stored row with a bad value is named.
    nlohmann::json bad = j;
    bad["inputs"]["tp"] = 3;
    try {
        plannerReportFromJson(bad);
        FAIL() << "a bad row was read";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("not divisible"), std::string::npos) << e.what();
    }
    // The lab is registered and its text shows the formulas.
    ASSERT_NE(findLab("planner"), nullptr);
    const std::string text = plannerReportText(r, TableFormat::Text);
    EXPECT_NE(text.find("N_DP ≤ 1 + 2·B·W/(b·C)  (b = 2: N_DP ≤ 1 + B·W/C)"), std::string::npos);
    EXPECT_NE(text.find("(N−1) · S/W"), std::string::npos);
}
