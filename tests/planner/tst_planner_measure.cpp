// The planner's measurement on the CPU: a GEMM's FLOP/s and a Gloo all-reduce between two
// thread ranks, the backend's beside our ring, whose sums must agree; then a run that plans
// with what was measured and stores it.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/store.h"
#include "planner/planner.h"
#include "planner/planner_report.h"

using namespace ts;

namespace {
class Quiet : public Observer {};

MeasureSpec smallCpu() {
    MeasureSpec s;
    s.device = "cpu";
    s.gemm_n = 256;
    s.world = 2;
    s.allreduce_bytes = 1 << 20;
    s.warmup = 1;
    s.iters = 3;
    return s;
}
}  // namespace

TEST(PlannerMeasure, CpuGemmAndGlooAllReduce) {
    Quiet obs;
    CancelToken cancel;
    const MachineMeasurement m = measureMachine(smallCpu(), obs, cancel);
    EXPECT_EQ(m.gemm_n, 256);
    EXPECT_EQ(m.gemm_dtype, "fp32");
    EXPECT_GT(m.gemm_ms, 0);
    EXPECT_DOUBLE_EQ(m.flops, 2.0 * 256 * 256 * 256 / (m.gemm_ms / 1e3));
    EXPECT_EQ(m.backend, "gloo");
    EXPECT_EQ(m.world, 2);
    EXPECT_EQ(m.allreduce_bytes, 1 << 20);
    EXPECT_TRUE(m.ring_exact);
    EXPECT_GT(m.backend_ms, 0);
    EXPECT_GT(m.ring_ms, 0);
    // nccl-tests' bus bandwidth: bytes / time · 2(n−1)/n, which for 2 ranks is bytes / time.
    EXPECT_NEAR(m.backend_busbw, (1 << 20) / (m.backend_ms / 1e3), 1e-6 * m.backend_busbw);
    EXPECT_EQ(m.bandwidth(), m.backend_busbw);
}

TEST(PlannerMeasure, ARunPlansWithTheMeasurementAndStoresIt) {
    const auto db = std::filesystem::temp_directory_path() / "tst_planner_measure.db";
    std::filesystem::remove(db);
    ResultStore store(db.string());
    PlannerInputs in;
    in.batch_tokens = 4096;
    in.d_model = 256;
    in.d_ff = 1024;
    in.dp = 2;
    const int64_t run = store.createRun(kPlannerLab, "", plannerSpecJson(in, smallCpu()), "cpu");
    Quiet obs;
    CancelToken cancel;
    const PlannerReport r = runPlanner(in, smallCpu(), obs, cancel, &store, run);
    ASSERT_TRUE(r.measured);
    EXPECT_EQ(r.inputs.flops, r.measured->flops);
    EXPECT_EQ(r.inputs.bandwidth, r.measured->bandwidth());
    const auto rows = store.rows(run, kPlannerLab);
    ASSERT_EQ(rows.size(), 1u);
    const auto back = plannerReportsFromRows(*store.run(run), rows);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].plans[0].step_s, r.plans[0].step_s);
    EXPECT_TRUE(back[0].measured->ring_exact);
    // Without a measurement and without C, the run refuses the inputs by name.
    PlannerInputs none = in;
    EXPECT_THROW(runPlanner(none, std::nullopt, obs, cancel), std::invalid_argument);
    std::filesystem::remove(db);
}
