// The profiler's torch-free half on synthetic events: attribution (kernels launched from
// autograd's thread included), categories, kernel-table statistics, the trace and the JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "common/test_paths.h"
#include "core/json.h"
#include "profiler/profiler.h"
#include "profiler/profiler_json.h"
#include "profiler/profiler_report.h"

namespace {

using ts::Phase;

constexpr uint64_t kMain = 1, kAutograd = 7;

ts::CpuEvent range(const char* name, int64_t start, int64_t end, uint64_t thread = kMain) {
    ts::CpuEvent e;
    e.name = name;
    e.thread = thread;
    e.start_ns = start;
    e.end_ns = end;
    e.range = true;
    return e;
}

ts::CpuEvent op(const char* name, uint64_t corr, int64_t start, int64_t end,
                uint64_t thread = kMain) {
    ts::CpuEvent e;
    e.name = name;
    e.thread = thread;
    e.start_ns = start;
    e.end_ns = end;
    e.correlation = corr;
    return e;
}

ts::KernelEvent kernel(const char* name, uint64_t launcher, int64_t start, int64_t duration) {
    ts::KernelEvent k;
    k.name = name;
    k.launcher = launcher;
    k.start_ns = start;
    k.duration_ns = duration;
    k.stream = 7;
    return k;
}

// One step as Kineto reports it: the phases and the model's ranges on the main thread, the
// backward ops on autograd's thread (no ranges there), the backward node naming its forward
// op by sequence number. Events deliberately out of order.
ts::RawTrace syntheticStep() {
    ts::RawTrace t;
    t.cpu.push_back(range("backward", 100'000, 200'000));
    t.cpu.push_back(range("forward", 0, 100'000));
    t.cpu.push_back(range("layer.0", 10'000, 60'000));
    t.cpu.push_back(range("attention", 10'000, 40'000));
    auto mm = op("aten::mm", 1, 12'000, 20'000);
    mm.sequence_nr = 5;
    mm.shapes = {{8, 16}, {16, 32}};
    t.cpu.push_back(mm);
    t.cpu.push_back(range("softmax", 22'000, 30'000));
    t.cpu.push_back(op("aten::_softmax", 2, 23'000, 29'000));
    t.cpu.push_back(range("optimizer", 200'000, 250'000));
    t.cpu.push_back(op("aten::_fused_adamw_", 3, 205'000, 245'000));
    t.cpu.push_back(op("aten::zero_", 9, -10'000, -5'000));
    auto node = op("MmBackward0", 4, 110'000, 150'000, kAutograd);
    node.sequence_nr = 5;
    node.fwd_thread = kMain;
    t.cpu.push_back(node);
    t.cpu.push_back(op("aten::mm", 5, 115'000, 125'000, kAutograd));
    t.cpu.push_back(op("aten::mm", 6, 130'000, 140'000, kAutograd));
    t.cpu.push_back(op("aten::add", 7, 160'000, 170'000, kAutograd));
    t.kernels.push_back(kernel("ampere_sgemm_64x32_nn", 1, 1'000'000, 50'000));
    t.kernels.push_back(kernel("cunn_SoftMaxForward", 2, 1'100'000, 10'000));
    t.kernels.push_back(kernel("ampere_sgemm_64x32_tn", 5, 1'200'000, 30'000));
    t.kernels.push_back(kernel("ampere_sgemm_64x32_nt", 6, 1'300'000, 20'000));
    t.kernels.push_back(
        kernel("vectorized_elementwise_kernel<CUDAFunctor_add>", 7, 1'400'000, 5'000));
    t.kernels.push_back(
        kernel("multi_tensor_apply_kernel<FusedAdamMathFunctor>", 3, 1'500'000, 40'000));
    t.kernels.push_back(kernel("Memcpy HtoD (Pageable -> Device)", 0, 900'000, 1'000));
    return t;
}

const ts::ProfiledOp& findOp(const ts::AttributedTrace& a, const std::string& name, int64_t start) {
    for (const auto& o : a.ops)
        if (o.name == name && o.start_ns == start) return o;
    throw std::runtime_error("no op " + name);
}

const ts::ProfiledKernel& findKernel(const ts::AttributedTrace& a, const std::string& name) {
    for (const auto& k : a.kernels)
        if (k.name == name) return k;
    throw std::runtime_error("no kernel " + name);
}

TEST(Attribution, OpsTakeThePhaseAndRangesAroundThemOnTheirThread) {
    const auto a = ts::attribute(syntheticStep());
    EXPECT_EQ(a.ranges.size(), 6u);
    EXPECT_EQ(a.ops.size(), 8u);
    const auto& mm = findOp(a, "aten::mm", 12'000);
    EXPECT_EQ(mm.phase, Phase::Forward);
    EXPECT_EQ(mm.range, "layer.0/attention");
    EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 8 * 16 * 32);
    EXPECT_EQ(mm.shapes, "[[8, 16], [16, 32]]");
    EXPECT_TRUE(mm.top_level);
    const auto& sm = findOp(a, "aten::_softmax", 23'000);
    EXPECT_EQ(sm.range, "layer.0/attention/softmax");
    EXPECT_EQ(findOp(a, "aten::_fused_adamw_", 205'000).phase, Phase::Optimizer);
    EXPECT_EQ(findOp(a, "aten::zero_", -10'000).phase, Phase::Other);
}

TEST(Attribution, BackwardOpsOnAnotherThreadTakeThePhaseByTimeAndTheRangeOfTheirForwardOp) {
    const auto a = ts::attribute(syntheticStep());
    const auto& node = findOp(a, "MmBackward0", 110'000);
    EXPECT_EQ(node.phase, Phase::Backward);
    EXPECT_EQ(node.range, "layer.0/attention");
    EXPECT_TRUE(node.top_level);
    EXPECT_EQ(node.self_ns, 40'000 - 20'000);
    EXPECT_EQ(node.device_ns, 30'000 + 20'000);  // its children's kernels
    for (int64_t start : {115'000, 130'000}) {
        const auto& child = findOp(a, "aten::mm", start);
        EXPECT_EQ(child.phase, Phase::Backward);
        EXPECT_EQ(child.range, "layer.0/attention");  // inherited from the node
        EXPECT_FALSE(child.top_level);
    }
    const auto& add = findOp(a, "aten::add", 160'000);
    EXPECT_EQ(add.phase, Phase::Backward);
    EXPECT_EQ(add.range, "");
}

TEST(Attribution, KernelsTakeTheirLaunchingOpsPhaseAndRange) {
    const auto a = ts::attribute(syntheticStep());
    ASSERT_EQ(a.kernels.size(), 7u);
    for (size_t i = 1; i < a.kernels.size(); ++i)
        EXPECT_LE(a.kernels[i - 1].start_ns, a.kernels[i].start_ns);
    auto check = [&](const char* name, Phase phase, const char* range, const char* op) {
        const auto& k = findKernel(a, name);
        EXPECT_EQ(k.phase, phase) << name;
        EXPECT_EQ(k.range, range) << name;
        EXPECT_EQ(k.op, op) << name;
    };
    check("ampere_sgemm_64x32_nn", Phase::Forward, "layer.0/attention", "aten::mm");
    check("cunn_SoftMaxForward", Phase::Forward, "layer.0/attention/softmax", "aten::_softmax");
    // Launched from autograd's thread while the main thread was in "backward".
    check("ampere_sgemm_64x32_tn", Phase::Backward, "layer.0/attention", "aten::mm");
    check("ampere_sgemm_64x32_nt", Phase::Backward, "layer.0/attention", "aten::mm");
    check("vectorized_elementwise_kernel<CUDAFunctor_add>", Phase::Backward, "", "aten::add");
    check("multi_tensor_apply_kernel<FusedAdamMathFunctor>", Phase::Optimizer, "",
          "aten::_fused_adamw_");
    check("Memcpy HtoD (Pageable -> Device)", Phase::Other, "", "");
    EXPECT_EQ(findOp(a, "aten::mm", 12'000).device_ns, 50'000);
}

TEST(Attribution, AKernelLaunchedOutsideAnyOpTakesItsRuntimeCallsRanges) {
    // Our FlashAttention kernels are launched from C++, not from an aten op: Kineto links them
    // to no op, but CUPTI's correlation names the cudaLaunchKernel call, inside the ranges.
    ts::RawTrace t;
    t.cpu.push_back(range("forward", 0, 100'000));
    t.cpu.push_back(range("layer.0", 1'000, 90'000));
    t.cpu.push_back(range("attention", 2'000, 80'000));
    t.cpu.push_back(range("fused", 10'000, 50'000));
    auto launch = op("cudaLaunchKernel", 0, 20'000, 21'000);
    launch.runtime_correlation = 777;
    t.cpu.push_back(launch);
    auto k = kernel("flash_fwd_kernel", /*launcher=*/0, 30'000, 5'000);
    k.correlation = 777;
    t.kernels.push_back(k);
    t.kernels.push_back(kernel("orphan", 0, 60'000, 1'000));  // no op, no runtime call: unknown
    const auto a = ts::attribute(t);
    const auto& flash = findKernel(a, "flash_fwd_kernel");
    EXPECT_EQ(flash.phase, Phase::Forward);
    EXPECT_EQ(flash.range, "layer.0/attention/fused");
    EXPECT_EQ(flash.op, "cudaLaunchKernel");
    const auto& orphan = findKernel(a, "orphan");
    EXPECT_EQ(orphan.phase, Phase::Other);
    EXPECT_EQ(orphan.range, "");
}

// See Note [a graph's kernels named by its capture]. The capture: forward's ranges and ops on
// the main thread, each node made by a runtime or driver call (a GEMM through the driver, our
// attention kernel from C++ outside any op, a memset); a call that makes no node is not counted.
ts::CpuEvent call(const char* name, uint64_t corr, int64_t start, int64_t end) {
    ts::CpuEvent e = op(name, 0, start, end);  // a runtime call: CUPTI's correlation only
    e.runtime_correlation = corr;
    return e;
}
ts::RawTrace syntheticCapture() {
    ts::RawTrace t;
    t.cpu.push_back(range("forward", 0, 100'000));
    t.cpu.push_back(range("layer.0", 1'000, 90'000));
    t.cpu.push_back(op("aten::linear", 1, 2'000, 10'000));
    t.cpu.push_back(call("cuLaunchKernelEx", 101, 3'000, 4'000));
    t.cpu.push_back(range("attention", 20'000, 40'000));
    t.cpu.push_back(call("cudaLaunchKernel", 102, 21'000, 22'000));
    t.cpu.push_back(call("cudaStreamIsCapturing", 103, 23'000, 23'500));
    t.cpu.push_back(op("aten::zero_", 2, 50'000, 60'000));
    t.cpu.push_back(call("cudaMemsetAsync", 104, 51'000, 52'000));
    return t;
}
// Two replays of forward's graph: a range and a cudaGraphLaunch each, whose kernels Kineto
// links to the launch (CUPTI's correlation).
ts::RawTrace syntheticReplays(const std::vector<const char*>& names) {
    ts::RawTrace t;
    for (int r = 0; r < 2; ++r) {
        const int64_t t0 = r * 1'000'000;
        t.cpu.push_back(range("forward", t0, t0 + 10'000));
        t.cpu.push_back(call("cudaGraphLaunch", 900 + r, t0 + 1'000, t0 + 2'000));
        for (size_t i = 0; i < names.size(); ++i) {
            ts::KernelEvent k = kernel(names[i], 0, t0 + 5'000 + 100 * i, 50);
            k.correlation = 900 + r;
            t.kernels.push_back(k);
        }
    }
    return t;
}

TEST(GraphNaming, EachReplayedKernelTakesTheOpAndRangeOfItsCaptureLaunch) {
    const auto launches = ts::graphCaptureLaunches(syntheticCapture());
    ASSERT_EQ(launches.size(), 3u);  // not cudaStreamIsCapturing
    EXPECT_EQ(launches[0].op, "aten::linear");
    EXPECT_EQ(launches[0].range, "layer.0");
    EXPECT_EQ(launches[1].range, "layer.0/attention");
    EXPECT_EQ(launches[2].op, "aten::zero_");
    for (const auto& l : launches) EXPECT_EQ(l.phase, Phase::Forward);

    auto replay = ts::attribute(syntheticReplays(
        {"nvjet_tst_128x64_64x4_h_bz_TNT", "flashFwdSm90Kernel", "Memset (Device)"}));
    for (const auto& k : replay.kernels) {  // before: the phase, and the launch for op
        EXPECT_EQ(k.phase, Phase::Forward);
        EXPECT_EQ(k.op, "cudaGraphLaunch");
    }
    const auto named = ts::nameGraphKernels(replay, launches);
    EXPECT_EQ(named.replayed, 6);
    EXPECT_EQ(named.named, 6);
    EXPECT_TRUE(named.problems.empty());
    ASSERT_EQ(replay.kernels.size(), 6u);
    for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(replay.kernels[3 * r].op, "aten::linear");
        EXPECT_EQ(replay.kernels[3 * r].range, "layer.0");
        EXPECT_EQ(replay.kernels[3 * r + 1].range, "layer.0/attention");
        EXPECT_EQ(replay.kernels[3 * r + 2].op, "aten::zero_");
    }
}

TEST(GraphNaming, ACountOrAGemmThatDisagreesLeavesThePhaseAlone) {
    const auto launches = ts::graphCaptureLaunches(syntheticCapture());
    // A kernel the capture did not see: 4 a replay against 3 calls.
    auto extra = ts::attribute(syntheticReplays({"nvjet_a", "flash", "Memset (Device)", "more"}));
    auto named = ts::nameGraphKernels(extra, launches);
    EXPECT_EQ(named.replayed, 8);
    EXPECT_EQ(named.named, 0);
    ASSERT_EQ(named.problems.size(), 1u);
    EXPECT_NE(named.problems[0].find("8 kernels replayed, 3 calls captured"), std::string::npos)
        << named.problems[0];
    for (const auto& k : extra.kernels) {
        EXPECT_EQ(k.op, "cudaGraphLaunch");
        EXPECT_EQ(k.phase, Phase::Forward);
        EXPECT_TRUE(k.range.empty());
    }
    // The same count in another order: the GEMM would be named by the memset's op.
    auto swapped = ts::attribute(syntheticReplays({"Memset (Device)", "flash", "sm90_xmma_gemm"}));
    named = ts::nameGraphKernels(swapped, launches);
    EXPECT_EQ(named.named, 0);
    ASSERT_EQ(named.problems.size(), 1u);
    EXPECT_NE(named.problems[0].find("GEMM"), std::string::npos) << named.problems[0];
}

TEST(Attribution, WithoutKernelsTheCpuOpsStillGetPhasesAndRanges) {
    auto raw = syntheticStep();
    raw.kernels.clear();
    const auto a = ts::attribute(raw);
    EXPECT_TRUE(a.kernels.empty());
    EXPECT_EQ(findOp(a, "aten::mm", 130'000).phase, Phase::Backward);
    for (const auto& o : a.ops) EXPECT_EQ(o.device_ns, 0) << o.name;
}

TEST(Attribution, FilterMatchesAnyComponentOfTheRange) {
    EXPECT_TRUE(
        ts::matches({Phase::Forward, "attention"}, Phase::Forward, "layer.3/attention/softmax"));
    EXPECT_TRUE(ts::matches({std::nullopt, "layer.3"}, Phase::Backward, "layer.3/mlp"));
    EXPECT_FALSE(ts::matches({std::nullopt, "layer.3"}, Phase::Backward, "layer.30/mlp"));
    EXPECT_FALSE(ts::matches({Phase::Backward, ""}, Phase::Forward, "lm_head"));
    EXPECT_FALSE(ts::matches({std::nullopt, "attn"}, Phase::Forward, "layer.0/attention"));
    EXPECT_TRUE(ts::matches({}, Phase::Other, ""));
}

TEST(MatmulFlops, FromInputShapes) {
    EXPECT_DOUBLE_EQ(ts::matmulFlops("aten::mm", {{4, 5}, {5, 6}}), 2.0 * 4 * 5 * 6);
    EXPECT_DOUBLE_EQ(ts::matmulFlops("aten::addmm", {{6}, {4, 5}, {5, 6}, {}, {}}),
                     2.0 * 4 * 5 * 6);
    EXPECT_DOUBLE_EQ(ts::matmulFlops("aten::bmm", {{3, 4, 5}, {3, 5, 6}}), 2.0 * 3 * 4 * 5 * 6);
    EXPECT_DOUBLE_EQ(ts::matmulFlops("aten::baddbmm", {{3, 4, 6}, {3, 4, 5}, {3, 5, 6}}),
                     2.0 * 3 * 4 * 5 * 6);
    EXPECT_EQ(ts::matmulFlops("aten::mm", {{4, 5}, {7, 6}}), 0);  // shapes that do not multiply
    EXPECT_EQ(ts::matmulFlops("aten::mm", {}), 0);
    EXPECT_EQ(ts::matmulFlops("aten::matmul", {{4, 5}, {5, 6}}), 0);  // counted in its mm
    EXPECT_EQ(ts::matmulFlops("aten::add", {{4, 5}, {4, 5}}), 0);
}

TEST(Categories, ByNameRules) {
    using C = ts::Category;
    const std::pair<const char*, C> cases[] = {
        {"ampere_sgemm_128x64_tn", C::Gemm},
        {"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTT", C::Gemm},
        {"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32", C::Gemm},
        {"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(...)", C::Gemm},
        {"aten::mm", C::Gemm},
        {"aten::addmm", C::Gemm},
        {"MmBackward0", C::Gemm},  // autograd's nodes by the op they differentiate
        {"SoftmaxBackward0", C::ReductionSoftmax},
        {"flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 64, 4>>", C::Attention},
        {"fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)",
         C::Attention},
        {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>",
         C::ReductionSoftmax},
        {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps>>",
         C::ReductionSoftmax},
        {"aten::_softmax", C::ReductionSoftmax},
        {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float>",
         C::ReductionSoftmax},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
         C::Elementwise},
        {"aten::mul", C::Elementwise},
        {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>",
         C::Normalization},
        {"aten::rms_norm", C::Normalization},
        {"void at::native::multi_tensor_apply_kernel<at::native::FusedAdamMathFunctor<float, 4>>",
         C::Optimizer},
        {"aten::_fused_adamw_", C::Optimizer},
        {"Memcpy HtoD (Pageable -> Device)", C::Memory},
        {"Memset (Device)", C::Memory},
        {"aten::copy_", C::Memory},
        {"cudaLaunchKernel", C::Other},
    };
    for (const auto& [name, expected] : cases)
        EXPECT_EQ(ts::toString(ts::categorize(name)), ts::toString(expected)) << name;
}

TEST(KernelTable, StatisticsPerName) {
    std::vector<ts::ProfiledKernel> ks;
    for (int64_t us : {10, 20, 30, 40})
        ks.push_back({"gemm_a", 0, us * 1000, 7, Phase::Forward, "layer.0/mlp", "aten::mm"});
    ks.push_back({"softmax_b", 0, 150'000, 7, Phase::Forward, "layer.0/attention/softmax",
                  "aten::_softmax"});
    ks.push_back({"gemm_a", 0, 500'000, 7, Phase::Backward, "layer.0/mlp", "aten::mm"});
    const auto rows = ts::kernelTable(ks, {Phase::Forward, ""});
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].name, "softmax_b");  // by total time
    EXPECT_DOUBLE_EQ(rows[0].percent, 60.0);
    const auto& g = rows[1];
    EXPECT_EQ(g.instances, 4);
    EXPECT_EQ(g.category, ts::Category::Gemm);
    EXPECT_DOUBLE_EQ(g.total_us, 100.0);
    EXPECT_DOUBLE_EQ(g.percent, 40.0);
    EXPECT_DOUBLE_EQ(g.avg_us, 25.0);
    EXPECT_DOUBLE_EQ(g.median_us, 25.0);
    EXPECT_DOUBLE_EQ(g.min_us, 10.0);
    EXPECT_DOUBLE_EQ(g.max_us, 40.0);
    EXPECT_NEAR(g.std_us, std::sqrt(500.0 / 3.0), 1e-9);
    const auto mlp = ts::kernelTable(ks, {std::nullopt, "mlp"});
    ASSERT_EQ(mlp.size(), 1u);
    EXPECT_EQ(mlp[0].instances, 5);
    EXPECT_DOUBLE_EQ(mlp[0].percent, 100.0);
}

ts::ProfileResult syntheticResult() {
    ts::ProfileResult r;
    r.spec.bench.model = *ts::modelPreset("tiny");
    r.spec.bench.device = "cuda";
    r.spec.profile_steps = 1;
    r.gpu = true;
    ts::StepSample s;
    s.index = 0;
    s.forward_ms = 0.1;
    s.backward_ms = 0.1;
    s.optimizer_ms = 0.05;
    s.total_ms = 0.25;
    r.steps = {s};
    r.trace = ts::attribute(syntheticStep());
    r.environment.device_name = "synthetic";
    return r;
}

TEST(Tables, PhaseTimesAndCategoriesFromKernels) {
    const auto r = syntheticResult();
    const auto phases = ts::phaseTimes(r);
    ASSERT_EQ(phases.size(), 4u);
    EXPECT_DOUBLE_EQ(phases[0].profiled_us, 60.0);
    EXPECT_EQ(phases[0].kernels, 2);
    EXPECT_DOUBLE_EQ(phases[0].measured_us, 100.0);
    EXPECT_DOUBLE_EQ(phases[1].profiled_us, 55.0);
    EXPECT_DOUBLE_EQ(phases[2].profiled_us, 40.0);
    EXPECT_DOUBLE_EQ(phases[3].profiled_us, 1.0);
    double forward_share = 0;
    for (const auto& c : ts::categoryRollup(r)) {
        if (c.phase == Phase::Forward) forward_share += c.share;
        if (c.phase == Phase::Forward && c.category == ts::Category::Gemm)
            EXPECT_NEAR(c.share, 50.0 / 60.0, 1e-12);
        if (c.phase == Phase::Optimizer) EXPECT_EQ(c.category, ts::Category::Optimizer);
    }
    EXPECT_NEAR(forward_share, 1.0, 1e-12);
    const auto ops = ts::opTable(r.trace.ops, {Phase::Forward, ""}, true);
    ASSERT_FALSE(ops.empty());
    EXPECT_EQ(ops[0].name, "aten::mm");
    EXPECT_DOUBLE_EQ(ops[0].device_us, 50.0);
    EXPECT_NEAR(ops[0].tflops, 2.0 * 8 * 16 * 32 / 50e-6 / 1e12, 1e-12);
}

TEST(Trace, ChromeJsonParsesBackWithEveryEvent) {
    const auto r = syntheticResult();
    const auto j = nlohmann::json::parse(ts::chromeTraceJson(r));
    const auto& ev = j.at("traceEvents");
    size_t ranges = 0, ops = 0, kernels = 0;
    for (const auto& e : ev) {
        if (e.at("ph") != "X") continue;
        EXPECT_GE(e.at("ts").get<double>(), 0.0);
        EXPECT_GE(e.at("dur").get<double>(), 0.0);
        const std::string cat = e.at("cat");
        ranges += cat == "range";
        ops += cat == "op";
        if (cat == "kernel") {
            ++kernels;
            EXPECT_EQ(e.at("pid"), 1);
            EXPECT_TRUE(e.at("args").contains("phase"));
        }
    }
    EXPECT_EQ(ranges, r.trace.ranges.size());
    EXPECT_EQ(ops, r.trace.ops.size());
    EXPECT_EQ(kernels, r.trace.kernels.size());
}

TEST(Json, ResultRoundTripsAndDamageIsNamed) {
    const auto r = syntheticResult();
    const auto back = ts::profileResultFromJson(ts::parseJson(ts::dumpJson(ts::toJson(r))));
    EXPECT_EQ(back.spec, r.spec);
    EXPECT_TRUE(back.gpu);
    ASSERT_EQ(back.trace.ops.size(), r.trace.ops.size());
    ASSERT_EQ(back.trace.kernels.size(), r.trace.kernels.size());
    EXPECT_EQ(back.trace.kernels[1].range, r.trace.kernels[1].range);
    EXPECT_EQ(back.trace.ops[2].flops, r.trace.ops[2].flops);
    EXPECT_EQ(ts::formatProfile(back, {}), ts::formatProfile(r, {}));
    auto j = ts::toJson(r);
    j["trace"]["kernels"][0][4] = "sideways";
    try {
        ts::profileResultFromJson(j);
        FAIL() << "a bad phase was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("trace.kernels[0]"), std::string::npos) << e.what();
    }
    j = ts::toJson(r);
    j.erase("trace");
    EXPECT_THROW(ts::profileResultFromJson(j), std::invalid_argument);
    // A compiled run's naming counts are kept and said under the headline; an eager run (and a
    // run stored before them) has none and says nothing.
    EXPECT_FALSE(ts::toJson(r).contains("graph_kernels"));
    EXPECT_EQ(ts::formatProfile(r, {}).find("CUDA graphs:"), std::string::npos);
    auto compiled = r;
    compiled.graph_kernels = 244;
    compiled.graph_kernels_named = 200;
    const auto again = ts::profileResultFromJson(ts::parseJson(ts::dumpJson(ts::toJson(compiled))));
    EXPECT_EQ(again.graph_kernels, 244);
    EXPECT_EQ(again.graph_kernels_named, 200);
    const std::string text = ts::formatProfile(again, {});
    EXPECT_NE(text.find("CUDA graphs: 200 of 244 replayed kernels named"), std::string::npos)
        << text;
    EXPECT_NE(text.find("keep their phase only"), std::string::npos) << text;
}

TEST(Report, DefaultTablesAreForwardAndWholeStepAndCsvHasEveryKernel) {
    const auto r = syntheticResult();
    const std::string text = ts::formatProfile(r, {});
    EXPECT_NE(text.find("Top kernels — forward"), std::string::npos) << text;
    EXPECT_NE(text.find("Top kernels — whole step"), std::string::npos) << text;
    EXPECT_NE(text.find("Kernel time by category"), std::string::npos) << text;
    ts::ProfileReportOptions csv;
    csv.format = ts::TableFormat::Csv;
    const std::string c = ts::formatProfile(r, csv);
    EXPECT_EQ(std::count(c.begin(), c.end(), '\n'), 1 + 7);  // header + 7 distinct kernels
    ts::ProfileReportOptions md;
    md.format = ts::TableFormat::Markdown;
    md.filter.phase = Phase::Backward;
    const std::string m = ts::formatProfile(r, md);
    EXPECT_NE(m.find("| time % |"), std::string::npos) << m;
    EXPECT_NE(m.find("Top kernels — backward"), std::string::npos) << m;
    EXPECT_EQ(m.find("Top kernels — forward"), std::string::npos) << m;
}

// The node under `parent` named `name`, or -1.
int childNamed(const ts::CallTree& t, int parent, const std::string& name) {
    for (int c : t.nodes[static_cast<size_t>(parent)].children)
        if (t.nodes[static_cast<size_t>(c)].name == name) return c;
    return -1;
}

// Follows names down from the root; fails the test when one is missing.
const ts::CallTreeNode& nodeAt(const ts::CallTree& t, std::initializer_list<std::string> path) {
    int at = 0;
    for (const auto& name : path) {
        at = childNamed(t, at, name);
        if (at < 0) throw std::runtime_error("no call tree node " + name);
    }
    return t.nodes[static_cast<size_t>(at)];
}

TEST(CallTree, PhasesThenRangesThenOpsWithInclusiveAndSelfTime) {
    const auto t = ts::callTree(ts::attribute(syntheticStep()));
    ASSERT_FALSE(t.nodes.empty());
    const auto& root = t.nodes[0];
    EXPECT_EQ(root.kind, ts::CallNodeKind::Root);
    // Every op's time once: 8 + 6 (forward) + 40 + 10 (backward) + 40 (optimizer) + 5 (other).
    EXPECT_DOUBLE_EQ(root.inclusive_us, 109.0);
    // The phases, by time.
    std::vector<std::string> phases;
    for (int c : root.children) phases.push_back(t.nodes[static_cast<size_t>(c)].name);
    EXPECT_EQ(phases, (std::vector<std::string>{"backward", "optimizer", "forward", "other"}));
    const auto& fwd = nodeAt(t, {"forward", "layer.0", "attention"});
    EXPECT_EQ(fwd.kind, ts::CallNodeKind::Range);
    EXPECT_DOUBLE_EQ(fwd.inclusive_us, 14.0);
    EXPECT_DOUBLE_EQ(fwd.self_us, 0.0);
    const auto& mm = nodeAt(t, {"forward", "layer.0", "attention", "aten::mm"});
    EXPECT_EQ(mm.calls, 1);
    EXPECT_DOUBLE_EQ(mm.inclusive_us, 8.0);
    EXPECT_EQ(mm.depth, 4);
    EXPECT_DOUBLE_EQ(
        nodeAt(t, {"forward", "layer.0", "attention", "softmax", "aten::_softmax"}).inclusive_us,
        6.0);
    // The backward node sits under its forward op's range, in backward, its two mm inside it
    // aggregated into one node of two calls; its kernels are its device time.
    const auto& node = nodeAt(t, {"backward", "layer.0", "attention", "MmBackward0"});
    EXPECT_DOUBLE_EQ(node.inclusive_us, 40.0);
    EXPECT_DOUBLE_EQ(node.self_us, 20.0);
    EXPECT_DOUBLE_EQ(node.device_us, 50.0);
    const auto& inner = nodeAt(t, {"backward", "layer.0", "attention", "MmBackward0", "aten::mm"});
    EXPECT_EQ(inner.calls, 2);
    EXPECT_DOUBLE_EQ(inner.inclusive_us, 20.0);
    EXPECT_DOUBLE_EQ(inner.device_us, 50.0);
    // An op outside any model range hangs from its phase.
    EXPECT_DOUBLE_EQ(nodeAt(t, {"backward", "aten::add"}).inclusive_us, 10.0);
    EXPECT_DOUBLE_EQ(nodeAt(t, {"backward"}).inclusive_us, 50.0);
    EXPECT_DOUBLE_EQ(nodeAt(t, {"backward"}).device_us, 55.0);  // + the add's kernel
    const int id = childNamed(t, childNamed(t, 0, "backward"), "aten::add");
    EXPECT_EQ(t.path(id), "backward/aten::add");
}

TEST(CallTree, StoredProfilesWithoutParentLinksGiveTheSameTree) {
    // Stored profiles keep no parents: the tree comes from the intervals of each thread, so a
    // profile read back from its JSON (as every stored run is) gives the same tree.
    const auto r = syntheticResult();
    const auto back = ts::profileResultFromJson(nlohmann::json::parse(ts::dumpJson(ts::toJson(r))));
    const auto a = ts::callTree(r.trace), b = ts::callTree(back.trace);
    ASSERT_EQ(a.nodes.size(), b.nodes.size());
    for (size_t i = 0; i < a.nodes.size(); ++i) {
        EXPECT_EQ(a.path(static_cast<int>(i)), b.path(static_cast<int>(i)));
        EXPECT_DOUBLE_EQ(a.nodes[i].inclusive_us, b.nodes[i].inclusive_us);
        EXPECT_EQ(a.nodes[i].calls, b.nodes[i].calls);
    }
    EXPECT_TRUE(ts::callTree({}).nodes.empty());
}

TEST(CallTree, RowsAreDepthFirstAndTheTopLeavesOutDeepAndSmallNodes) {
    const auto t = ts::callTree(ts::attribute(syntheticStep()));
    const auto all = ts::callTreeRows(t);
    EXPECT_EQ(all.size(), t.nodes.size());
    EXPECT_EQ(all[0], 0);
    EXPECT_EQ(t.nodes[static_cast<size_t>(all[1])].name, "backward");
    EXPECT_EQ(t.nodes[static_cast<size_t>(all[2])].name, "layer.0");  // backward's largest
    for (int id : ts::callTreeRows(t, 2)) EXPECT_LE(t.nodes[static_cast<size_t>(id)].depth, 2);
    for (int id : ts::callTreeRows(t, 0, 0.1))  // 10% of 109 µs
        EXPECT_GE(t.nodes[static_cast<size_t>(id)].inclusive_us, 10.9);
}

TEST(CallTree, ReportAndCsvTableCarryTheTree) {
    const auto r = syntheticResult();
    const std::string text = ts::formatProfile(r, {});
    EXPECT_NE(text.find("Call tree"), std::string::npos) << text;
    EXPECT_NE(text.find("      MmBackward0"), std::string::npos) << text;  // depth 3, indented
    const auto tables = ts::profileCsvTables({r});
    std::vector<std::string> names;
    for (const auto& t : tables) names.push_back(t.name);
    EXPECT_EQ(names, (std::vector<std::string>{"kernels", "ops", "calltree"}));
    const std::string& csv = tables[2].csv;
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "profile,depth,path,name,kind,inclusive_ms,self_ms,share,calls,device_ms");
    EXPECT_NE(csv.find("0,4,backward/layer.0/attention/MmBackward0,MmBackward0,op,0.04,0.02,"),
              std::string::npos)
        << csv;
    // The run's first CSV table is what a profile run's CSV always was.
    ts::RunInfo info;
    info.id = 1;
    info.lab = ts::kProfileLab;
    const std::vector<ts::StoredRow> rows = {
        {0, ts::Status::Ok, "{}", ts::dumpJson(ts::toJson(r))}};
    EXPECT_EQ(tables[0].csv, ts::profilerLab().report(info, rows, ts::ReportFormat::Csv));
}

TEST(ProfileDiff, KernelsMatchedByNamePerProfiledStepLargestDifferenceFirst) {
    const auto a = syntheticResult();  // one profiled step
    auto b = a;
    // B: two profiled steps; the softmax kernel twice as slow in each, the memcpy gone, a new
    // kernel; everything else as in A (the same time per step).
    b.steps.push_back(b.steps.front());
    std::vector<ts::ProfiledKernel> kernels;
    for (const auto& k : a.trace.kernels) {
        if (k.name.starts_with("Memcpy")) continue;
        for (int step = 0; step < 2; ++step) {
            auto x = k;
            if (k.name == "cunn_SoftMaxForward") x.duration_ns *= 2;
            kernels.push_back(x);
        }
    }
    ts::ProfiledKernel extra = kernels.front();
    extra.name = "flash_fwd_kernel";
    extra.duration_ns = 3'000;
    kernels.push_back(extra);
    b.trace.kernels = kernels;

    const auto d = ts::diffProfiles(a, b);
    EXPECT_TRUE(d.kernels);
    EXPECT_EQ(d.a_steps, 1);
    EXPECT_EQ(d.b_steps, 2);
    ASSERT_EQ(d.rows.size(), 8u);  // A's 7 kernels and B's new one
    // The softmax: 10 µs per step in A, 20 in B.
    EXPECT_EQ(d.rows[0].name, "cunn_SoftMaxForward");
    EXPECT_DOUBLE_EQ(d.rows[0].a_us, 10.0);
    EXPECT_DOUBLE_EQ(d.rows[0].b_us, 20.0);
    EXPECT_DOUBLE_EQ(d.rows[0].delta_us, 10.0);
    EXPECT_DOUBLE_EQ(*d.rows[0].ratio, 2.0);
    EXPECT_DOUBLE_EQ(d.rows[0].a_calls, 1.0);
    EXPECT_DOUBLE_EQ(d.rows[0].b_calls, 1.0);  // per step
    EXPECT_TRUE(d.rows[0].note.empty());
    const auto find = [&](const std::string& name) {
        for (const auto& r : d.rows)
            if (r.name == name) return r;
        throw std::runtime_error("no row " + name);
    };
    const auto gone = find("Memcpy HtoD (Pageable -> Device)");
    EXPECT_EQ(gone.note, "only in A");
    EXPECT_FALSE(gone.in_b);
    EXPECT_FALSE(gone.ratio);
    EXPECT_DOUBLE_EQ(gone.delta_us, -1.0);
    const auto added = find("flash_fwd_kernel");
    EXPECT_EQ(added.note, "only in B");
    EXPECT_DOUBLE_EQ(added.b_us, 1.5);  // 3 µs over two steps
    EXPECT_DOUBLE_EQ(find("ampere_sgemm_64x32_nn").delta_us, 0.0);
    for (size_t i = 1; i < d.rows.size(); ++i)
        EXPECT_GE(std::abs(d.rows[i - 1].delta_us), std::abs(d.rows[i].delta_us));

    const std::string text = ts::formatProfileDiff(a, b, ts::TableFormat::Text);
    EXPECT_NE(text.find("only in A"), std::string::npos) << text;
    EXPECT_NE(text.find("2.00x"), std::string::npos) << text;
    EXPECT_NE(text.find("(2 profiled step(s) counted)"), std::string::npos) << text;
    const std::string csv = ts::formatProfileDiff(a, b, ts::TableFormat::Csv);
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "kernel,category,a_us_per_step,b_us_per_step,delta_us,ratio,a_calls_per_step,"
              "b_calls_per_step,note");
    EXPECT_NE(csv.find("\nflash_fwd_kernel,attention,,1.5,1.5,,,0.5,only in B\n"),
              std::string::npos)
        << csv;
}

TEST(ProfileDiff, WithoutKernelsOpsAreComparedBySelfCpuTime) {
    auto a = syntheticResult();
    auto b = a;
    a.trace.kernels.clear();  // a CPU profile
    const auto d = ts::diffProfiles(a, b);
    EXPECT_FALSE(d.kernels);
    ASSERT_FALSE(d.rows.empty());
    for (const auto& r : d.rows) {
        EXPECT_TRUE(r.in_a && r.in_b) << r.name;
        EXPECT_DOUBLE_EQ(r.delta_us, 0.0) << r.name;
    }
    const std::string md = ts::formatProfileDiff(a, b, ts::TableFormat::Markdown);
    EXPECT_NE(md.find("| op "), std::string::npos) << md;
    EXPECT_NE(md.find("### Ops by |B - A|"), std::string::npos) << md;
}

std::string fixture(const std::string& name) {
    std::ifstream in(ts::testing::testPath("TRAINSCOPE_TEST_PROFILER_FIXTURES") + "/" + name,
                     std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(ImportTrace, TorchProfilersCpuTraceGetsItsStepAndThePhasesPyTorchRecorded) {
    // One training step of a small MLP under torch.profiler on the CPU (make_fixtures.py).
    const auto r = ts::importChromeTrace(fixture("cpu_step.pt.trace.json"), "cpu_step.json");
    EXPECT_EQ(r.spec.imported, "cpu_step.json");
    EXPECT_FALSE(r.gpu);
    EXPECT_EQ(r.environment.device_name, "CPU");
    EXPECT_FALSE(r.environment.date.empty());  // from baseTimeNanoseconds
    ASSERT_EQ(r.steps.size(), 1u);             // ProfilerStep#1
    EXPECT_EQ(r.spec.profile_steps, 1);
    EXPECT_GT(r.steps[0].total_ms, 0);
    EXPECT_GT(r.steps[0].forward_ms, 0);
    EXPECT_GT(r.steps[0].backward_ms, 0);
    EXPECT_GT(r.steps[0].optimizer_ms, 0);
    // The phases PyTorch's records imply: the linears in forward, autograd's nodes in
    // backward, the SGD update in the optimizer.
    std::map<std::string, std::set<Phase>> phases;
    for (const auto& o : r.trace.ops) phases[o.name].insert(o.phase);
    EXPECT_EQ(phases["aten::linear"], std::set<Phase>{Phase::Forward});
    EXPECT_EQ(phases["AddmmBackward0"], std::set<Phase>{Phase::Backward});
    EXPECT_TRUE(phases["aten::add_"].count(Phase::Optimizer));
    for (const auto& rg : r.trace.ranges) EXPECT_FALSE(rg.name.starts_with("ProfilerStep#"));
    // Every table of the lab serves it; what needs a model is left out.
    EXPECT_TRUE(ts::attentionBreakdown(r).empty());
    const auto tree = ts::callTree(r.trace);
    std::vector<std::string> top;
    for (int c : tree.nodes.at(0).children) top.push_back(tree.nodes[static_cast<size_t>(c)].name);
    for (const char* p : {"forward", "backward", "optimizer"})
        EXPECT_NE(std::find(top.begin(), top.end(), p), top.end()) << p;
    const std::string text = ts::formatProfile(r, {});
    EXPECT_NE(text.find("cpu_step.json (an imported trace, CPU), 1 profiled step(s)"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("TFLOP/s (CPU)"), std::string::npos) << text;  // no model, no rate
    // Stored and read back as it was.
    const auto back = ts::profileResultFromJson(nlohmann::json::parse(ts::dumpJson(ts::toJson(r))));
    EXPECT_EQ(back.spec, r.spec);
    EXPECT_EQ(back.trace.ops.size(), r.trace.ops.size());
    const auto spec = nlohmann::json::parse(ts::profileSpecJson(r.spec));
    EXPECT_EQ(spec.at("command"), "profile import");
    EXPECT_EQ(spec.at("imported"), "cpu_step.json");
}

TEST(ImportTrace, KernelsFindTheirOpThroughExternalIdAndTheTracesOwnPhaseRangesStand) {
    // Kineto's layout on a GPU: a cpu_op, the runtime call inside it, the kernel it launched
    // (External id: the op; correlation: the runtime call), a memcpy, and what is left out.
    const std::string trace =
        R"json({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
      "traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
        {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 1, "tid": 1, "ts": 10, "dur": 500},
        {"ph": "X", "cat": "user_annotation", "name": "attn", "pid": 1, "tid": 1, "ts": 20, "dur": 300},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 30, "dur": 100,
         "args": {"External id": 10, "Input Dims": [[8, 16], [16, 32]]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 40, "dur": 5,
         "args": {"External id": 10, "correlation": 100}},
        {"ph": "X", "cat": "user_annotation", "name": "backward", "pid": 1, "tid": 1, "ts": 510, "dur": 400},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 520, "dur": 5,
         "args": {"correlation": 101}},
        {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm", "pid": 0, "tid": 7, "ts": 200, "dur": 50.5,
         "args": {"External id": 10, "correlation": 100, "stream": 7, "device": 0}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7,
         "ts": 600, "dur": 3, "args": {"correlation": 101, "stream": 7}},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "attn", "pid": 0, "tid": 7, "ts": 200, "dur": 50},
        {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1, "tid": 1, "ts": 25, "dur": 200},
        {"ph": "s", "cat": "ac2g", "id": 100, "pid": 1, "tid": 1, "ts": 40},
        {"ph": "X", "cat": "cpu_op", "name": 5, "ts": "oops"}
      ]})json";
    const auto r = ts::importChromeTrace(trace, "gpu.json");
    EXPECT_TRUE(r.gpu);
    EXPECT_EQ(r.environment.device_name, "NVIDIA H100 80GB HBM3");
    ASSERT_EQ(r.trace.kernels.size(), 2u);
    const auto& k = findKernel(r.trace, "sm90_xmma_gemm");
    EXPECT_EQ(k.phase, Phase::Forward);
    EXPECT_EQ(k.range, "attn");
    EXPECT_EQ(k.op, "aten::mm");
    EXPECT_EQ(k.duration_ns, 50'500);
    EXPECT_EQ(k.stream, 7);
    // The memcpy: through its runtime call (no op around it), in backward.
    EXPECT_EQ(findKernel(r.trace, "Memcpy DtoH (Device -> Pageable)").phase, Phase::Backward);
    const auto& mm = findOp(r.trace, "aten::mm", 30'000);
    EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 8 * 16 * 32);
    EXPECT_EQ(mm.device_ns, 50'500);
    ASSERT_EQ(r.steps.size(), 1u);
    EXPECT_DOUBLE_EQ(r.steps[0].forward_ms, 0.5);
    EXPECT_DOUBLE_EQ(r.steps[0].backward_ms, 0.4);
}

// A distributed run's merged trace (See Note [one trace of every rank]): each rank's events under
// pid = its rank; one rank is imported, rank 0 unless asked.
TEST(ImportTrace, OneRankOfAMergedTraceOfRanks) {
    const std::string merged =
        R"json({"ranks": [{"rank": 0}, {"rank": 1}], "traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "rank 0"}},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "rank 1"}},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 0, "tid": 1, "ts": 0, "dur": 1000},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 0, "tid": 1, "ts": 10, "dur": 100,
         "args": {"External id": 1}},
        {"ph": "X", "cat": "kernel", "name": "gemm_rank0", "pid": 0, "tid": 3, "ts": 50, "dur": 20,
         "args": {"External id": 1, "stream": 7}},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 5, "dur": 1200},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 15, "dur": 100,
         "args": {"External id": 1}},
        {"ph": "X", "cat": "kernel", "name": "gemm_rank1", "pid": 1, "tid": 3, "ts": 60, "dur": 30,
         "args": {"External id": 1, "stream": 7}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather", "pid": 1, "tid": 4, "ts": 60, "dur": 40,
         "args": {"stream": 9}}
      ]})json";
    int read = -5;
    const auto first = ts::importChromeTrace(merged, "m.json", -1, &read);
    EXPECT_EQ(read, 0);
    EXPECT_EQ(first.spec.imported, "m.json (rank 0 of 2)");
    ASSERT_EQ(first.trace.kernels.size(), 1u);
    EXPECT_EQ(first.trace.kernels[0].name, "gemm_rank0");
    ASSERT_EQ(first.steps.size(), 1u);
    EXPECT_DOUBLE_EQ(first.steps[0].total_ms, 1.0);

    const auto second = ts::importChromeTrace(merged, "m.json", 1, &read);
    EXPECT_EQ(read, 1);
    EXPECT_EQ(second.spec.imported, "m.json (rank 1 of 2)");
    ASSERT_EQ(second.trace.kernels.size(), 2u);
    EXPECT_EQ(findKernel(second.trace, "gemm_rank1").op, "aten::mm");
    ASSERT_EQ(second.steps.size(), 1u);
    EXPECT_DOUBLE_EQ(second.steps[0].total_ms, 1.2);

    for (const auto& [text, rank, why] : std::vector<std::tuple<std::string, int, std::string>>{
             {merged, 2, "--rank 2: the trace holds ranks 0 to 1"},
             {fixture("cpu_step.pt.trace.json"), 0, "one process's, not a distributed run's"}}) {
        try {
            ts::importChromeTrace(text, "m.json", rank);
            ADD_FAILURE() << "rank " << rank << " accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    }
    // A one-process trace reads as before, its rank -1.
    ts::importChromeTrace(fixture("cpu_step.pt.trace.json"), "one.json", -1, &read);
    EXPECT_EQ(read, -1);
}

TEST(ImportTrace, WhatIsNoTraceIsRefusedSayingWhy) {
    const std::string whole = fixture("cpu_step.pt.trace.json");
    ASSERT_GT(whole.size(), 1000u);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {whole.substr(0, whole.size() / 2), "truncated"},
        {"hello", "cannot be read"},
        {"", "truncated"},
        {R"({"schemaVersion": 1})", "no \"traceEvents\" list"},
        {"42", "neither an object nor a list"},
        {R"({"traceEvents": []})", "empty trace"},
        {R"({"traceEvents": {"ph": "X"}})", "no \"traceEvents\" list"},
        {"[1, 2, 3]", "empty trace"},
        {R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": 5, "ts": "x"}]})", "wrong shape"},
        {R"({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0",
             "tid": 1, "ts": 0, "dur": 5}]})",
         "empty trace"},
        {std::string("\x1f\x8b\x08\x00", 4), "gzip"}};
    for (const auto& [text, why] : cases) {
        try {
            ts::importChromeTrace(text, "bad.json");
            ADD_FAILURE() << "accepted: " << text.substr(0, 60);
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos)
                << e.what() << " (wanted " << why << ")";
        }
    }
}

}  // namespace

namespace insight {

ts::ProfiledKernel placed(const char* name, int64_t start, int64_t duration, Phase phase,
                          const char* range, int64_t stream = 7) {
    ts::ProfiledKernel k;
    k.name = name;
    k.start_ns = start;
    k.duration_ns = duration;
    k.phase = phase;
    k.range = range;
    k.stream = stream;
    return k;
}

// Two profiled steps of a one-layer model, B=2, H=2, T=8, d=4, naive attention on a GPU.
ts::ProfileResult twoSteps() {
    ts::ProfileResult r;
    r.gpu = true;
    r.spec.bench.batch_size = 2;
    r.spec.bench.model.num_heads = 2;
    r.spec.bench.model.d_model = 8;
    r.spec.bench.model.context_length = 8;
    r.spec.bench.model.num_layers = 1;
    r.spec.bench.precision = ts::Precision::BF16;
    ts::StepSample warm;
    warm.warmup = true;
    r.steps = {warm, ts::StepSample{}, ts::StepSample{}};
    for (int s = 0; s < 2; ++s) {
        const int64_t t0 = s * 1'000'000;
        r.trace.ranges.push_back({"forward", 1, t0, t0 + 300'000});
        r.trace.ranges.push_back({"backward", 1, t0 + 300'000, t0 + 600'000});
        r.trace.ranges.push_back({"optimizer", 1, t0 + 600'000, t0 + 700'000});
        r.trace.ranges.push_back({"layer.0", 1, t0 + 10'000, t0 + 200'000});  // not a step
        // GPU: 20 µs of launch latency, then kernels with one 100 µs hole and an overlap.
        r.trace.kernels.push_back(
            placed("gemm_qk", t0 + 20'000, 30'000, Phase::Forward, "layer.0/attention/scores"));
        r.trace.kernels.push_back(
            placed("softmax_k", t0 + 50'000, 10'000, Phase::Forward, "layer.0/attention/softmax"));
        r.trace.kernels.push_back(
            placed("gemm_pv", t0 + 60'000, 40'000, Phase::Forward, "layer.0/attention/values"));
        r.trace.kernels.push_back(
            placed("gemm_bwd", t0 + 200'000, 500'000, Phase::Backward, "layer.0/attention/scores"));
        r.trace.kernels.push_back(
            placed("copy", t0 + 250'000, 100'000, Phase::Backward, "", 9));  // overlaps
        r.trace.kernels.push_back(placed("adam", t0 + 720'000, 30'000, Phase::Optimizer, ""));
    }
    return r;
}

TEST(AttentionBreakdown, NaivePartsPerStepWithFlopsFromTheDimensions) {
    const auto rows = ts::attentionBreakdown(twoSteps());
    ASSERT_EQ(rows.size(), 4u);  // forward scores, softmax, values; backward scores
    const double tt = 2 * 2 * 8 * 8, qkv = 2 * 2 * 8 * 4;  // B·H·T², B·H·T·d
    EXPECT_EQ(rows[0].part, "scores");
    EXPECT_EQ(rows[0].phase, Phase::Forward);
    EXPECT_DOUBLE_EQ(rows[0].time_us, 30.0);  // per step: 2 kernels over 2 profiled steps
    EXPECT_DOUBLE_EQ(rows[0].kernels, 1.0);
    EXPECT_DOUBLE_EQ(rows[0].flops, 2 * tt * 4);
    EXPECT_DOUBLE_EQ(rows[0].bytes, (2 * qkv + tt) * 2);  // bf16 Q, K in; S out
    EXPECT_DOUBLE_EQ(rows[0].ns_per_mflop, 30.0 * 1000 / (2 * tt * 4 / 1e6));
    EXPECT_EQ(rows[1].part, "softmax");
    EXPECT_DOUBLE_EQ(rows[1].flops, 5 * tt);
    EXPECT_DOUBLE_EQ(rows[1].bytes, tt * (2 + 4));  // bf16 in, fp32 out under autocast
    EXPECT_EQ(rows[2].part, "values");
    EXPECT_DOUBLE_EQ(rows[2].time_us, 40.0);
    EXPECT_EQ(rows[3].phase, Phase::Backward);
    EXPECT_DOUBLE_EQ(rows[3].flops, 4 * tt * 4);
    EXPECT_DOUBLE_EQ(rows[3].time_us, 500.0);
}

TEST(AttentionBreakdown, FusedIsOnePartAndForwardModeHasNoBackward) {
    auto r = twoSteps();
    r.trace.kernels.clear();
    r.trace.kernels.push_back(
        placed("flash_fwd", 0, 80'000, Phase::Forward, "layer.0/attention/fused"));
    r.trace.kernels.push_back(
        placed("flash_bwd", 300'000, 90'000, Phase::Backward, "layer.0/attention/fused"));
    auto rows = ts::attentionBreakdown(r);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].part, "fused");
    EXPECT_DOUBLE_EQ(rows[0].time_us, 40.0);
    EXPECT_DOUBLE_EQ(rows[0].bytes, 4 * (2 * 2 * 8 * 4) * 2);  // Q, K, V, O in bf16
    r.spec.bench.mode = ts::Mode::Forward;
    rows = ts::attentionBreakdown(r);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].phase, Phase::Forward);
}

TEST(StepActivity, BusyIsTheUnionOfKernelsAndGapsAreTheHoles) {
    const auto steps = ts::stepActivity(twoSteps());
    ASSERT_EQ(steps.size(), 2u);
    for (const auto& s : steps) {
        // From the forward range's start to the last kernel's end (750 µs).
        EXPECT_DOUBLE_EQ(s.wall_us, 750.0);
        // 20..100 µs busy (80), 200..700 (500; the copy on another stream inside it), 720..750
        // (30).
        EXPECT_DOUBLE_EQ(s.busy_us, 610.0);
        EXPECT_DOUBLE_EQ(s.idle_us, 140.0);
        // Holes: 0..20, 100..200, 700..720; all while the CPU was inside the step (until 700 µs)
        // except the last 20 µs.
        ASSERT_EQ(s.gaps.size(), 3u);
        EXPECT_EQ(s.gap_count, 3);
        EXPECT_EQ(s.gaps[0].end_ns - s.gaps[0].start_ns, 100'000);
        EXPECT_DOUBLE_EQ(s.launch_bound, 120.0 / 750.0);
    }
    EXPECT_EQ(steps[1].start_ns, 1'000'000);
}

TEST(StepActivity, NoForwardRangeNoSteps) {
    ts::ProfileResult r;
    EXPECT_TRUE(ts::stepActivity(r).empty());
}

TEST(Flops, StepFlopsCountMatmulsAndAttention) {
    ts::PointConfig cfg;
    cfg.batch_size = 2;
    cfg.model.context_length = 4;
    cfg.model.d_model = 8;
    cfg.model.d_ff = 16;
    cfg.model.num_layers = 3;
    cfg.model.vocab_size = 10;
    const double tokens = 8;
    const double layer = 2 * tokens * (4 * 64 + 3 * 8 * 16) + 4 * tokens * 4 * 8;
    const auto f = ts::stepFlops(cfg);
    EXPECT_DOUBLE_EQ(f.forward, 3 * layer + 2 * tokens * 8 * 10);
    EXPECT_DOUBLE_EQ(f.backward, 2 * f.forward);
    cfg.mode = ts::Mode::Forward;
    EXPECT_DOUBLE_EQ(ts::stepFlops(cfg).backward, 0.0);
}

TEST(Peaks, KnownGpusByNameAndUnknownOnesSaySo) {
    EXPECT_DOUBLE_EQ(*ts::densePeakTflops("NVIDIA H100 80GB HBM3", ts::Precision::BF16), 989.4);
    EXPECT_DOUBLE_EQ(*ts::densePeakTflops("NVIDIA H100 PCIe", ts::Precision::FP32), 51.2);
    EXPECT_DOUBLE_EQ(*ts::densePeakTflops("NVIDIA H200", ts::Precision::FP16), 989.4);
    EXPECT_DOUBLE_EQ(*ts::densePeakTflops("NVIDIA A100-SXM4-80GB", ts::Precision::BF16), 312.0);
    EXPECT_DOUBLE_EQ(*ts::densePeakTflops("NVIDIA A10", ts::Precision::BF16), 125.0);  // not A100
    EXPECT_FALSE(ts::densePeakTflops("Tesla V100-SXM2-16GB", ts::Precision::BF16));    // no bf16
    EXPECT_FALSE(ts::densePeakTflops("Intel(R) Xeon(R) CPU", ts::Precision::FP32));
    EXPECT_EQ(ts::achievedText(494.7e12, 1.0, "NVIDIA H100 80GB HBM3", ts::Precision::BF16),
              "494.7 TFLOP/s (50% of H100 SXM bf16 dense peak)");
    EXPECT_EQ(ts::achievedText(2e12, 1.0, "Mystery GPU 9000", ts::Precision::BF16),
              "2.0 TFLOP/s (unknown GPU)");
    EXPECT_EQ(ts::achievedText(0, 1.0, "NVIDIA H100", ts::Precision::BF16), "n/a");
}

}  // namespace insight
