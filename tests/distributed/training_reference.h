// Data-parallel training against one process (tests/distributed): the reference, the ranks as
// Gloo threads, and the check every strategy is held to (DDP's and FSDP's alike): each rank's
// local loss its own, their mean the global batch's, every step's global loss and every
// parameter after the last step one process's on the whole global batch.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "core/observer.h"
#include "distributed/ddp_rank.h"
#include "nn/training_step.h"
#include "runtime/device.h"
#include "thread_ranks.h"

namespace ts::test {

struct Reference {
    std::vector<at::Tensor> params;
    std::vector<double> losses;
};

// One process, the whole global batch, the same number of steps.
inline Reference reference(const DdpSpec& spec, int world) {
    TrainingSetup setup;
    setup.model = ddpModel(spec);
    setup.precision = spec.precision;
    setup.batch_size = spec.batch_per_rank * world;
    setup.seed = spec.seed;
    setup.learning_rate = spec.learning_rate;
    TrainingStep step(setup, c10::Device(c10::kCPU));
    DeviceTimer timer(c10::Device(c10::kCPU), 4);
    Reference r;
    for (int i = 0; i < spec.warmup_steps + spec.measured_steps; ++i)
        r.losses.push_back(step.run(timer).loss);
    r.params = step.parameters();
    return r;
}

struct RankRun {
    std::vector<DdpStepRow> rows;
    std::vector<at::Tensor> params;
};

inline std::vector<RankRun> train(const DdpSpec& spec, int world) {
    std::vector<RankRun> runs(static_cast<size_t>(world));
    CancelToken cancel;
    auto errors = runThreadRanks(world, [&](dist::Group& g) {
        auto& run = runs[static_cast<size_t>(g.rank)];
        run.rows = runDdpRank(spec, g, nullptr, cancel, run.params);
    });
    EXPECT_NO_RANK_ERRORS(errors);
    return runs;
}

inline void expectLikeOneProcess(const DdpSpec& spec, int world, double loss_tol = 1e-5,
                                 double rtol = 1e-4, double atol = 1e-5) {
    const Reference ref = reference(spec, world);
    const auto runs = train(spec, world);
    // Each rank trained on rows of its own: the local losses differ, their mean is the global one.
    double mean_first = 0;
    for (const auto& run : runs) mean_first += run.rows.at(0).loss / world;
    EXPECT_NE(runs[0].rows.at(0).loss, runs[1].rows.at(0).loss);
    EXPECT_NEAR(mean_first, ref.losses.at(0), loss_tol);
    for (int r = 0; r < world; ++r) {
        const auto& run = runs[static_cast<size_t>(r)];
        ASSERT_EQ(run.rows.size(), ref.losses.size()) << "rank " << r;
        ASSERT_EQ(run.params.size(), ref.params.size());
        for (size_t i = 0; i < ref.losses.size(); ++i)
            EXPECT_NEAR(run.rows[i].global_loss, ref.losses[i], loss_tol)
                << "rank " << r << " step " << i;
        for (size_t i = 0; i < ref.params.size(); ++i) {
            // The same averaged gradients and the same step: every rank holds the same bits.
            EXPECT_TRUE(at::equal(run.params[i], runs[0].params[i]))
                << "rank " << r << " parameter " << i;
            EXPECT_TRUE(at::allclose(run.params[i], ref.params[i], rtol, atol))
                << "rank " << r << " parameter " << i << ": max difference "
                << (run.params[i] - ref.params[i]).abs().max().item<double>();
        }
    }
}

}  // namespace ts::test
