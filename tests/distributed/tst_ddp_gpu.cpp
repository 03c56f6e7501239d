// The compiled data-parallel step on NCCL (label gpu; SKIPPED without 2 GPUs): see Note [compiled
// data-parallel step] in engine/src/nn/graphed_step.cpp. Two ranks as threads of this process,
// one GPU each; every strategy that captures, compiled, against the same strategy eager on the
// same model (the fused kernels, which the compiled mode runs): the same global loss at every
// step, the same parameters after the last, the same bits on both ranks, and the rows a captured
// step can give (counters from the capture, no per-bucket times, no comm wait where the sync is
// inside backward's graph).
#include <c10/core/DeviceGuard.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "core/observer.h"
#include "distributed/ddp_rank.h"
#include "thread_ranks.h"  // See Note [flight recorder]: off for ranks as threads
#include "trainscope/distributed/launcher.h"
#include "trainscope/distributed/process_group.h"

using namespace ts;

namespace {

constexpr int kWorld = 2;

struct GpuRun {
    std::vector<DdpStepRow> rows;
    std::vector<at::Tensor> params;  // on the CPU
};

DdpSpec smallSpec(const std::string& strategy, bool sharded, ExecMode exec) {
    DdpSpec s;
    s.model_size = "tiny";
    s.context_length = 64;
    s.vocab_size = 512;
    s.batch_per_rank = 2;
    s.strategy = strategy;
    s.bucket_mb = 0.25;  // the tiny model in several buckets
    s.shard_optimizer = sharded;
    s.warmup_steps = 1;
    s.measured_steps = 3;  // 4 steps, the first with the warm-up and the capture
    s.seed = 5;
    s.learning_rate = 1e-4;
    s.exec = exec;
    s.fused_kernels = exec == ExecMode::Eager;  // the compiled mode's model, eager
    return s;
}

std::vector<GpuRun> trainOnGpus(const DdpSpec& spec) {
    std::vector<GpuRun> runs(kWorld);
    std::vector<std::string> errors(kWorld);
    const int port = dist::freeLoopbackPort();
    std::vector<std::thread> ranks;
    for (int r = 0; r < kWorld; ++r)
        ranks.emplace_back([&, r] {
            try {
                const c10::Device device(c10::kCUDA, static_cast<c10::DeviceIndex>(r));
                c10::DeviceGuard guard(device);  // NCCL's communicator on this rank's GPU
                dist::GroupSpec g;
                g.backend = dist::CommBackend::Nccl;
                g.rank = r;
                g.world_size = kWorld;
                g.master_port = port;
                g.timeout = std::chrono::seconds(120);
                dist::Group group = dist::makeGroup(g);
                DdpSpec mine = spec;
                mine.device = device.str();
                CancelToken cancel;
                std::vector<at::Tensor> params;
                runs[r].rows = runDdpRank(mine, group, nullptr, cancel, params);
                for (const auto& p : params) runs[r].params.push_back(p.detach().cpu().clone());
            } catch (const std::exception& e) {
                errors[r] = e.what();
            }
        });
    for (auto& t : ranks) t.join();
    EXPECT_NO_RANK_ERRORS(errors);
    return runs;
}

struct Case {
    std::string strategy;
    bool sharded;
};

class CompiledDdpGpu : public ::testing::TestWithParam<Case> {
protected:
    void SetUp() override {
        if (!dist::ncclBuilt() || dist::gpuCount() < kWorld)
            GTEST_SKIP() << "SKIPPED: needs NCCL and 2 GPUs";
    }
};

TEST_P(CompiledDdpGpu, TrainsAsTheEagerStepDoes) {
    const Case c = GetParam();
    const auto eager = trainOnGpus(smallSpec(c.strategy, c.sharded, ExecMode::Eager));
    const auto compiled = trainOnGpus(smallSpec(c.strategy, c.sharded, ExecMode::Compiled));
    ASSERT_EQ(eager.size(), compiled.size());
    const bool overlapped = c.strategy == "overlap" || c.strategy == "bucketed";
    for (int r = 0; r < kWorld; ++r) {
        const auto& e = eager[r];
        const auto& k = compiled[r];
        ASSERT_EQ(e.rows.size(), 4u);
        ASSERT_EQ(k.rows.size(), e.rows.size()) << "rank " << r;
        for (size_t i = 0; i < e.rows.size(); ++i) {
            const DdpStepRow& er = e.rows[i];
            const DdpStepRow& kr = k.rows[i];
            // The existing NCCL check's tolerance (tests/distributed/test_distributed_gpu.py).
            EXPECT_NEAR(kr.global_loss, er.global_loss, 2e-4 * std::abs(er.global_loss))
                << "rank " << r << " step " << i;
            // Counters from the capture: the eager step's.
            EXPECT_EQ(kr.collectives, er.collectives) << "step " << i;
            EXPECT_EQ(kr.launched_before_sync, er.launched_before_sync) << "step " << i;
            EXPECT_EQ(kr.comm_bytes, er.comm_bytes) << "step " << i;
            EXPECT_EQ(kr.broadcast_bytes, er.broadcast_bytes) << "step " << i;
            EXPECT_EQ(kr.gather_bytes, er.gather_bytes) << "step " << i;
            // What a captured step cannot time: no bucket spans; overlapped: no comm wait and no
            // hidden time (inside backward's graph); the others' sync is a graph of its own.
            EXPECT_TRUE(kr.buckets.empty());
            EXPECT_TRUE(kr.gradients.empty());
            if (overlapped) {
                EXPECT_LT(kr.comm_wait_ms, 0) << "step " << i;
                EXPECT_LT(kr.comm_hidden_ms, 0) << "step " << i;
            } else {
                EXPECT_GT(kr.comm_wait_ms, 0) << "step " << i;
            }
            EXPECT_GT(kr.backward_ms, 0);
            EXPECT_GT(kr.optimizer_ms, 0);
            EXPECT_GT(kr.memory_peak, 0);
        }
        ASSERT_EQ(k.params.size(), e.params.size());
        for (size_t i = 0; i < e.params.size(); ++i) {
            // Both ranks hold the same bits; and what eager holds, within the existing tolerance.
            EXPECT_TRUE(at::equal(k.params[i], compiled[0].params[i]))
                << "rank " << r << " parameter " << i;
            EXPECT_TRUE(at::allclose(k.params[i], e.params[i], 1e-4, 1e-5))
                << "rank " << r << " parameter " << i << ": max difference "
                << (k.params[i] - e.params[i]).abs().max().item<double>();
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Strategies, CompiledDdpGpu,
                         ::testing::Values(Case{"flat", false}, Case{"bucketed", false},
                                           Case{"overlap", false}, Case{"naive", false},
                                           Case{"zero1", false}, Case{"flat", true},
                                           Case{"bucketed", true}),
                         [](const auto& info) {
                             return info.param.strategy + (info.param.sharded ? "_sharded" : "");
                         });

// bf16 autocast: the compiled step averages the fp32 parameters' gradients (no low-precision
// weight copies: see Note [compiled data-parallel step], item f); bf16's roundings differ
// between the eager and the captured kernels' orders only slightly.
TEST(CompiledDdpGpuBf16, BucketedTrainsAsEager) {
    if (!dist::ncclBuilt() || dist::gpuCount() < kWorld)
        GTEST_SKIP() << "SKIPPED: needs NCCL and 2 GPUs";
    auto spec = smallSpec("bucketed", false, ExecMode::Eager);
    spec.precision = Precision::BF16;
    const auto eager = trainOnGpus(spec);
    spec = smallSpec("bucketed", false, ExecMode::Compiled);
    spec.precision = Precision::BF16;
    const auto compiled = trainOnGpus(spec);
    for (int r = 0; r < kWorld; ++r) {
        ASSERT_EQ(compiled[r].rows.size(), eager[r].rows.size());
        for (size_t i = 0; i < eager[r].rows.size(); ++i)
            EXPECT_NEAR(compiled[r].rows[i].global_loss, eager[r].rows[i].global_loss,
                        2e-2 * std::abs(eager[r].rows[i].global_loss))
                << "rank " << r << " step " << i;
    }
}

}  // namespace
