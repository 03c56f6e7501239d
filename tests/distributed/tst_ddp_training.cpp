// Data-parallel training of the LM (engine/src/distributed): every strategy, with and without a
// sharded optimizer, Gloo ranks as threads; after a few AdamW steps every rank's parameters equal
// those of one process that trained the whole global batch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

#include "core/observer.h"
#include "distributed/ddp_buckets.h"
#include "distributed/ddp_rank.h"
#include "distributed/distributed_json.h"
#include "distributed/distributed_report.h"
#include "nn/training_step.h"
#include "runtime/device.h"
#include "thread_ranks.h"
#include "training_reference.h"
#include "trainscope/distributed/buckets.h"

using namespace ts;
using namespace ts::test;

namespace {

DdpSpec tinySpec(const std::string& strategy, bool sharded) {
    DdpSpec s;
    s.model_size = "tiny";
    s.context_length = 16;
    s.vocab_size = 128;
    s.batch_per_rank = 2;
    s.strategy = strategy;
    s.bucket_mb = 0.02;  // the tiny model (≈ 0.5 MB) in several buckets
    s.shard_optimizer = sharded;
    s.warmup_steps = 1;
    s.measured_steps = 2;
    s.seed = 3;
    s.learning_rate = 1e-3;
    return s;
}

}  // namespace

class DdpTraining : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(DdpTraining, TwoRanksTrainLikeOneProcessOnTheGlobalBatch) {
    const auto& [strategy, sharded] = GetParam();
    expectLikeOneProcess(tinySpec(strategy, sharded), 2);
}

INSTANTIATE_TEST_SUITE_P(All, DdpTraining,
                         ::testing::Combine(::testing::Values("naive", "flat", "overlap",
                                                              "bucketed"),
                                            ::testing::Bool()),
                         [](const auto& info) {
                             return std::get<0>(info.param) +
                                    (std::get<1>(info.param) ? "_sharded" : "");
                         });

TEST(DdpTrainingFour, BucketedAndShardedOverFourRanks) {
    expectLikeOneProcess(tinySpec("bucketed", true), 4);
}

TEST(DdpTrainingFour, Bf16AutocastOverlappedOverTwoRanks) {
    // bf16 matmuls under autocast, fp32 parameters and gradients. The ranks' and the single
    // process's bf16 roundings differ, and AdamW's first steps move a weight by about the
    // learning rate (1e-3) whatever its gradient's size, so a tiny gradient of the other sign
    // moves it the other way: within a few learning rates of the reference after 3 steps.
    auto spec = tinySpec("overlap", false);
    spec.precision = Precision::BF16;
    expectLikeOneProcess(spec, 2, 2e-2, 0, 6 * spec.learning_rate);
}

TEST(DdpTrainingRows, CountersAndSizes) {
    auto spec = tinySpec("bucketed", true);
    const auto runs = train(spec, 2);
    int64_t state = 0;
    for (const auto& run : runs) {
        const auto& last = run.rows.back();
        EXPECT_FALSE(last.warmup);
        EXPECT_TRUE(run.rows.front().warmup);
        EXPECT_GT(last.collectives, 1);
        EXPECT_GT(last.launched_before_sync, 0);  // buckets started from the hooks, during backward
        EXPECT_GE(last.comm_hidden_ms, 0.0);
        EXPECT_EQ(last.comm_bytes, last.parameter_bytes);  // fp32 gradients, all of them, once
        EXPECT_EQ(last.gradient_bytes, last.parameter_bytes);
        EXPECT_EQ(last.broadcast_bytes, last.parameter_bytes);
        EXPECT_GT(last.comm_buffer_bytes, 0);
        EXPECT_GE(last.comm_wait_ms, 0.0);
        EXPECT_GT(last.optimizer_state_bytes, 0);
        state += last.optimizer_state_bytes;
    }
    // Sharded: the two ranks' AdamW states together are one whole state (two moments per
    // parameter, plus the step counters).
    EXPECT_LT(runs[0].rows.back().optimizer_state_bytes, state);
    EXPECT_GE(state, 2 * runs[0].rows.back().parameter_bytes);
    EXPECT_LT(state, 2 * runs[0].rows.back().parameter_bytes + 4096);
}

TEST(DdpTrainingZero1, ReduceScatterAndAllGatherTrainLikeOneProcess) {
    // ZeRO stage 1 as DeepSpeed does it (see Note [two ways to shard the optimizer]).
    expectLikeOneProcess(tinySpec("zero1", false), 2);
    // Three ranks pad the flat buffers to a multiple of 3. Against one process, any strategy on
    // three ranks differs by 3e-5 in one parameter (AdamW's first steps on gradients near zero
    // amplify the sum's rounding: flat does the same), so there zero1 is held to flat's weights.
    const auto flat = train(tinySpec("flat", false), 3);
    const auto zero1 = train(tinySpec("zero1", false), 3);
    for (size_t r = 0; r < 3; ++r) {
        ASSERT_EQ(zero1[r].params.size(), flat[r].params.size());
        for (size_t i = 0; i < flat[r].params.size(); ++i)
            EXPECT_TRUE(at::allclose(zero1[r].params[i], flat[r].params[i], 1e-4, 1e-6))
                << "rank " << r << " parameter " << i;
        for (size_t k = 0; k < flat[r].rows.size(); ++k)
            EXPECT_NEAR(zero1[r].rows[k].global_loss, flat[r].rows[k].global_loss, 1e-6);
    }
}

TEST(DdpTrainingFill, TheOldFillByAddingTrainsTheSame) {
    // See Note [a bucket's gradients in one copy]: TRAINSCOPE_DDP_FILL=add (each gradient its
    // zeroed view from backward's start) trains as the default fill does, bit for bit on Gloo.
    for (const char* strategy : {"bucketed", "zero1"}) {
        SCOPED_TRACE(strategy);
        const auto copied = train(tinySpec(strategy, false), 2);
        ::setenv("TRAINSCOPE_DDP_FILL", "add", 1);
        const auto added = train(tinySpec(strategy, false), 2);
        ::unsetenv("TRAINSCOPE_DDP_FILL");
        for (size_t r = 0; r < 2; ++r) {
            ASSERT_EQ(copied[r].params.size(), added[r].params.size());
            for (size_t i = 0; i < added[r].params.size(); ++i)
                EXPECT_TRUE(at::equal(copied[r].params[i], added[r].params[i]))
                    << "rank " << r << " parameter " << i;
            for (size_t k = 0; k < added[r].rows.size(); ++k)
                EXPECT_EQ(copied[r].rows[k].global_loss, added[r].rows[k].global_loss);
        }
    }
}

TEST(DdpTrainingZero1, SendsHalfTheGradientBytesOfTheCoursesSharding) {
    const auto course = train(tinySpec("flat", true), 2);
    const auto zero1 = train(tinySpec("zero1", false), 2);
    const DdpStepRow& c = course[0].rows.back();
    const DdpStepRow& z = zero1[0].rows.back();
    const int64_t p = c.parameter_bytes;  // fp32: gradients as large as the parameters
    // The course's: an all-reduce of every gradient (2·½·G) and the owners' broadcasts (½·P).
    EXPECT_EQ(c.comm_bytes, p);
    EXPECT_EQ(c.broadcast_bytes, p);
    EXPECT_EQ(c.sent_bytes, p + p / 2);
    // zero1: a reduce-scatter of the flat gradients and an all-gather of the flat parameters,
    // each padded to an even number of elements (½·G + ½·P).
    EXPECT_GE(z.reduce_scatter_bytes, p);
    EXPECT_LE(z.reduce_scatter_bytes, p + 4);
    EXPECT_EQ(z.gather_bytes, z.reduce_scatter_bytes);
    EXPECT_EQ(z.comm_bytes, z.reduce_scatter_bytes);
    EXPECT_EQ(z.broadcast_bytes, 0);
    EXPECT_EQ(z.sent_bytes, z.reduce_scatter_bytes);
    EXPECT_LT(z.sent_bytes, c.sent_bytes);
    EXPECT_EQ(z.collectives, 2);  // one reduce-scatter, one all-gather (one dtype)
    // Each rank's AdamW holds the state of half the flat parameters (two moments and a step).
    EXPECT_LE(z.optimizer_state_bytes, 2 * (z.gather_bytes / 2) + 64);
    EXPECT_GE(z.optimizer_state_bytes, 2 * (z.gather_bytes / 2));
}

TEST(DdpTrainingRows, InvalidSpecIsRefused) {
    auto spec = tinySpec("ring", false);
    EXPECT_FALSE(validateDdpSpec(spec).empty());
    spec.strategy = "bucketed";
    spec.bucket_mb = 0;
    EXPECT_FALSE(validateDdpSpec(spec).empty());
    spec.bucket_mb = 1;
    spec.precision = Precision::FP16;
    spec.shard_optimizer = true;
    EXPECT_FALSE(validateDdpSpec(spec).empty());
    spec.precision = Precision::BF16;
    EXPECT_TRUE(validateDdpSpec(spec).empty());
    spec.strategy = "zero1";  // shards the optimizer its own way
    EXPECT_FALSE(validateDdpSpec(spec).empty());
    spec.shard_optimizer = false;
    EXPECT_TRUE(validateDdpSpec(spec).empty());
}

TEST(DdpTrainingRows, ACancelOnOneRankStopsEveryRankAtTheSameStep) {
    const auto spec = tinySpec("flat", false);
    CancelToken running, stopped;
    stopped.cancel();
    std::vector<size_t> steps(2);
    auto errors = runThreadRanks(2, [&](dist::Group& g) {
        steps[static_cast<size_t>(g.rank)] =
            runDdpRank(spec, g, nullptr, g.rank == 1 ? stopped : running).size();
    });
    EXPECT_NO_RANK_ERRORS(errors);
    EXPECT_EQ(steps, (std::vector<size_t>{1, 1}));
}

TEST(BucketSize, ABareNumberIsMiBAndAWrittenUnitIsRead) {
    // Issue item 7: PyTorch's bucket_cap_mb is MiB; 25MB (10^6 bytes) is 23.84 MiB.
    EXPECT_EQ(parseBucketMiB("25"), 25.0);
    EXPECT_EQ(parseBucketMiB("25MiB"), 25.0);
    EXPECT_EQ(parseBucketMiB(" 0.5 mib "), 0.5);
    EXPECT_DOUBLE_EQ(*parseBucketMiB("25MB"), 25e6 / 1048576);
    EXPECT_DOUBLE_EQ(*parseBucketMiB("512KiB"), 0.5);
    EXPECT_DOUBLE_EQ(*parseBucketMiB("1GB"), 1e9 / 1048576);
    EXPECT_EQ(parseBucketMiB("1GiB"), 1024.0);
    EXPECT_EQ(parseBucketMiB("-5"), -5.0);  // read; the caller says it is not above 0
    for (const char* bad : {"", "MiB", "25 bytes", "2.5.1", "25XB", "1e"})
        EXPECT_FALSE(parseBucketMiB(bad).has_value()) << bad;
    EXPECT_EQ(formatBucketMiB(25), "25 MiB");
    DistributedPoint p;
    p.ddp.bucket_mb = 25;
    EXPECT_NE(pointHeadline(p).find("bucketed 25 MiB"), std::string::npos) << pointHeadline(p);
}

// See Note [per-bucket timing]: a real 2-rank Gloo run of bucketed DDP (ranks as threads), the
// tiny model in several buckets: every step of every rank has one span per bucket, in launch
// order, inside the step, each ending after it was launched and launched after it was ready.
TEST(DdpTrainingBuckets, EachBucketsAllReduceIsTimedInsideItsStep) {
    auto spec = tinySpec("bucketed", false);
    spec.bucket_mb = 0.05;
    const auto runs = train(spec, 2);
    for (const auto& run : runs) {
        ASSERT_FALSE(run.rows.empty());
        for (const auto& row : run.rows) {
            // The buckets BucketedSync makes of these gradients (reverse order, 1 MiB first).
            ASSERT_FALSE(row.gradients.empty());
            std::vector<int64_t> bytes;
            int64_t all = 0;
            for (const auto& g : row.gradients) {
                bytes.push_back(g.bytes);
                all += g.bytes;
            }
            EXPECT_EQ(all, row.parameter_bytes);
            const int64_t bucket = static_cast<int64_t>(spec.bucket_mb * 1024 * 1024);
            const size_t expected =
                dist::assignBuckets(bytes, bucket, std::min(bucket, dist::kFirstBucketBytes))
                    .size();
            ASSERT_GT(expected, 2u);
            ASSERT_EQ(row.buckets.size(), expected) << "rank " << row.rank << " step " << row.step;
            EXPECT_EQ(static_cast<int>(row.buckets.size()), row.collectives);
            int64_t bucket_bytes = 0;
            for (size_t k = 0; k < row.buckets.size(); ++k) {
                const auto& b = row.buckets[k];
                EXPECT_EQ(b.index, static_cast<int>(k));
                bucket_bytes += b.bytes;
                EXPECT_GT(b.params, 0);
                // Within the step: ready once backward ran, done by the end of the wait.
                EXPECT_GE(b.ready_ms, row.forward_ms - 0.1) << k;
                EXPECT_LE(b.ready_ms, b.launch_ms) << k;
                EXPECT_LE(b.launch_ms, b.end_ms) << k;
                EXPECT_LE(b.end_ms, row.forward_ms + row.backward_ms + row.comm_wait_ms + 0.5) << k;
                if (k > 0) EXPECT_GE(b.launch_ms, row.buckets[k - 1].launch_ms) << k;
            }
            EXPECT_EQ(bucket_bytes, row.comm_bytes);
            // Some buckets started from the hooks, while backward ran.
            EXPECT_LT(row.buckets.front().launch_ms, row.forward_ms + row.backward_ms);
        }
    }
    // The strategies without buckets have no spans.
    const auto flat = train(tinySpec("flat", false), 2);
    EXPECT_TRUE(flat[0].rows.back().buckets.empty());
    EXPECT_TRUE(flat[0].rows.back().gradients.empty());
}

// See Note [compiled data-parallel step] (engine/src/nn/graphed_step.cpp): the compiled DDP step
// is refused before anything starts where it cannot run (Gloo's CPU ranks, the strategies that are
// not captured, torch.compile's modes), stored and read back, named in the point's label, swept
// beside eager, and its overlapped strategies' missing comm wait is "—", never a number.
TEST(CompiledDdp, RefusedWhereItCannotRunAndNamedWhereItRuns) {
    DistributedPoint p;
    p.ddp = tinySpec("bucketed", false);
    p.ddp.bucket_mb = 25;
    p.ddp.exec = ExecMode::Compiled;
    p.backend = dist::CommBackend::Gloo;
    const auto gloo = validateDistributedPoint(p, 2, true);
    ASSERT_EQ(gloo.size(), 1u);
    EXPECT_NE(gloo.front().find("needs the nccl backend"), std::string::npos) << gloo.front();
    p.backend = dist::CommBackend::Nccl;
    EXPECT_TRUE(validateDistributedPoint(p, 2, true).empty());
    EXPECT_NE(pointHeadline(p).find("ddp bucketed 25 MiB compiled vocab 128 tiny"),
              std::string::npos)
        << pointHeadline(p);
    for (const char* s : {"naive", "flat", "overlap", "bucketed", "zero1"}) {
        DdpSpec d = p.ddp;
        d.strategy = s;
        EXPECT_TRUE(validateDdpSpec(d).empty()) << s;
        d.shard_optimizer = d.strategy != "zero1";
        EXPECT_TRUE(validateDdpSpec(d).empty()) << s << " sharded";
    }
    auto refused = [&](DdpSpec d, const char* needle) {
        const auto errors = validateDdpSpec(d);
        ASSERT_EQ(errors.size(), 1u) << needle;
        EXPECT_NE(errors.front().find(needle), std::string::npos) << errors.front();
    };
    DdpSpec d = p.ddp;
    d.strategy = "fsdp";
    refused(d, "fsdp is not captured");
    d.strategy = "torch-ddp";
    refused(d, "torch-ddp runs in PyTorch");
    d = p.ddp;
    d.checkpoint = *parseCheckpointing("2");
    refused(d, "checkpointing");
    d = p.ddp;
    d.precision = Precision::FP16;
    refused(d, "fp16");
    d = p.ddp;
    d.exec = ExecMode::ReduceOverhead;
    refused(d, "reduce-overhead is a torch.compile mode");

    // Stored and read back; an eager spec is written as it always was (no "exec").
    EXPECT_EQ(ddpSpecFromJson(toJson(p.ddp)).exec, ExecMode::Compiled);
    EXPECT_EQ(toJson(p.ddp)["exec"], "compiled");
    EXPECT_FALSE(toJson(tinySpec("bucketed", false)).contains("exec"));
    EXPECT_EQ(ddpSpecFromJson(toJson(tinySpec("bucketed", false))).exec, ExecMode::Eager);

    // Swept: each exec mode for ours; the Python strategies and fsdp once, eager.
    const auto points = ddpSweep(p, {Precision::FP32}, {"bucketed", "torch-ddp", "fsdp"}, {},
                                 {false}, {ExecMode::Eager, ExecMode::Compiled});
    std::vector<std::string> seen;
    for (const auto& q : points)
        seen.push_back(q.ddp.strategy + " " + std::string(toString(q.ddp.exec)));
    EXPECT_EQ(seen, (std::vector<std::string>{"bucketed eager", "bucketed compiled",
                                              "torch-ddp eager", "fsdp eager"}));

    // A compiled overlapped step's rows: no comm wait (-1), so none in the summary nor a share.
    DistributedResult r;
    r.point = p;
    for (int step = 0; step < 3; ++step) {
        DdpStepRow row;
        row.step = step;
        row.warmup = step == 0;
        row.forward_ms = 1;
        row.backward_ms = 2;
        row.comm_wait_ms = -1;
        row.optimizer_ms = 0.5;
        row.total_ms = 3.5;
        row.comm_hidden_ms = -1;
        r.steps.push_back(row);
    }
    const DdpSummary s = summarizeDdp(r);
    EXPECT_EQ(s.steps, 2);
    EXPECT_LT(s.comm_wait_ms, 0);
    EXPECT_LT(s.hidden_share, 0);
    EXPECT_DOUBLE_EQ(s.backward_ms, 2);
    const std::string table = formatDdpComparison({r}, TableFormat::Text);
    EXPECT_NE(table.find("bucketed compiled"), std::string::npos) << table;
    EXPECT_NE(table.find("—"), std::string::npos) << table;
    EXPECT_EQ(table.find("-1.0"), std::string::npos) << table;
    // Nor a bucket-size model: it predicts an eager step's wait after backward.
    EXPECT_TRUE(bucketModels({r}).empty());
    r.point.ddp.exec = ExecMode::Eager;
    EXPECT_EQ(bucketModels({r}).size(), 1u);
}

// See Note [a step that varies]: the points whose steps vary by 5% or more are named with their
// spread, and the report says why such a step varies; a steady point says nothing.
TEST(DdpReport, StepsThatVaryAreNamedWithWhatSteadiesThem) {
    auto result = [](dist::CommBackend backend, ExecMode exec, std::vector<double> totals) {
        DistributedResult r;
        r.point.ddp = tinySpec("bucketed", false);
        r.point.ddp.exec = exec;
        r.point.backend = backend;
        r.point.world_size = 2;
        for (int rank = 0; rank < 2; ++rank)
            for (size_t i = 0; i < totals.size(); ++i) {
                DdpStepRow row;
                row.rank = rank;
                row.step = static_cast<int>(i);
                row.warmup = i == 0;
                row.total_ms = totals[i] - (rank == 0 ? 1.0 : 0.0);  // rank 1 the slowest
                row.forward_ms = row.total_ms / 3;
                row.backward_ms = row.total_ms / 2;
                r.steps.push_back(row);
            }
        return r;
    };
    const auto steady = result(dist::CommBackend::Nccl, ExecMode::Eager, {500, 100, 101, 100, 99});
    EXPECT_EQ(formatStepSpread({steady}, TableFormat::Text), "");
    // Two measured steps say nothing about a spread.
    EXPECT_EQ(formatStepSpread({result(dist::CommBackend::Nccl, ExecMode::Eager, {500, 90, 150})},
                               TableFormat::Text),
              "");

    const auto noisy = result(dist::CommBackend::Nccl, ExecMode::Eager, {500, 90, 150, 110, 95});
    const std::string text = formatStepSpread({steady, noisy}, TableFormat::Text);
    EXPECT_NE(text.find("Steps that vary"), std::string::npos) << text;
    EXPECT_EQ(text.find("point 1 "), std::string::npos) << text;  // the steady one
    EXPECT_NE(text.find("point 2 (ddp bucketed"), std::string::npos) << text;
    EXPECT_NE(text.find("median 102.5 ms, from 90.00 to 150.0 ms over 4 steps"), std::string::npos)
        << text;
    EXPECT_NE(text.find("host's kernel launches"), std::string::npos) << text;
    EXPECT_NE(text.find("--exec compiled"), std::string::npos) << text;
    EXPECT_EQ(text.find("On Gloo"), std::string::npos) << text;
    // ... and in the whole report, after the strategies.
    const std::string all = formatDistributed({steady, noisy}, TableFormat::Text);
    EXPECT_GT(all.find("Steps that vary"), all.find("DDP strategies")) << all;

    const auto gloo = result(dist::CommBackend::Gloo, ExecMode::Eager, {50, 9, 15, 11, 9.5});
    const std::string md = formatStepSpread({gloo}, TableFormat::Markdown);
    EXPECT_NE(md.find("### Steps that vary"), std::string::npos) << md;
    EXPECT_NE(md.find("- point 1"), std::string::npos) << md;
    EXPECT_NE(md.find("On Gloo"), std::string::npos) << md;
    EXPECT_EQ(md.find("host's kernel launches"), std::string::npos) << md;
    EXPECT_EQ(formatStepSpread({gloo}, TableFormat::Csv), "");
}
