// On the GPUs: C from a bf16 GEMM (it must be a plausible tensor-core rate) and W from an NCCL
// all-reduce between every GPU, with our ring all-reduce's sum equal to NCCL's. SKIPPED
// without a GPU (tests/common/gpu_main.cpp).
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include "planner/planner.h"

using namespace ts;

namespace {
class Print : public Observer {
public:
    void log(LogLevel, const std::string& m) override { std::printf("%s\n", m.c_str()); }
};
}  // namespace

TEST(PlannerGpu, MeasuresCAndWAndTheRingMatchesNccl) {
    MeasureSpec s;
    s.device = "cuda";
    s.allreduce_bytes = 64 << 20;
    Print obs;
    CancelToken cancel;
    const MachineMeasurement m = measureMachine(s, obs, cancel);
    EXPECT_EQ(m.gemm_dtype, "bf16");
    EXPECT_EQ(m.gemm_n, 8192);
    // Any GPU this runs on does a bf16 GEMM faster than 10 TFLOP/s and slower than 5 PFLOP/s.
    EXPECT_GT(m.flops, 10e12);
    EXPECT_LT(m.flops, 5e15);
    const int gpus = static_cast<int>(torch::cuda::device_count());
    EXPECT_EQ(m.world, gpus);
    if (gpus < 2) {
        EXPECT_NE(m.note.find("one device"), std::string::npos);
        EXPECT_EQ(m.bandwidth(), 0);
        GTEST_SKIP() << "one GPU: no all-reduce between devices to measure";
    }
    EXPECT_EQ(m.backend, "nccl");
    EXPECT_TRUE(m.ring_exact) << "our ring's sum differs from NCCL's";
    EXPECT_GT(m.backend_busbw, 1e9);  // more than 1 GB/s between GPUs of one host
    EXPECT_GT(m.ring_busbw, 1e8);
    std::printf("C = %.4g FLOP/s, W = %.4g B/s (NCCL), ring %.4g B/s\n", m.flops, m.backend_busbw,
                m.ring_busbw);
}
