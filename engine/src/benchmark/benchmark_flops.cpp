// FLOPs of a step from the model's dimensions, and the peaks of the GPUs we know: the
// throughput columns of the benchmark's results and the profiler's phases. Torch-free.
#include <fmt/format.h>

#include <cctype>

#include "benchmark/benchmark.h"

namespace ts {

StepFlops stepFlops(const BenchConfig& cfg) {
    const ModelConfig& m = cfg.model;
    const double tokens =
        static_cast<double>(cfg.batch_size) * static_cast<double>(m.context_length);
    const double d = static_cast<double>(m.d_model), f = static_cast<double>(m.d_ff),
                 T = static_cast<double>(m.context_length), V = static_cast<double>(m.vocab_size);
    // Per layer: Q, K, V and the output projection; SwiGLU's W1, W3 (one matrix) and W2;
    // attention's QKᵀ and PV (2·T·d each per token). Then the LM head.
    const double per_layer = 2 * tokens * (4 * d * d + 3 * d * f) + 4 * tokens * T * d;
    StepFlops out;
    out.forward = static_cast<double>(m.num_layers) * per_layer + 2 * tokens * d * V;
    out.backward = cfg.mode == Mode::Forward ? 0 : 2 * out.forward;
    return out;
}

namespace {

struct PeakRow {
    std::string_view match;  // a substring of the device name; the first that matches wins
    std::string_view label;
    double fp32, bf16, fp16;  // dense TFLOP/s; 0: not supported
};
// NVIDIA's data sheets: dense tensor-core peaks (bf16/fp16 with fp32 accumulation) and
// plain (non-tensor-core) FP32.
constexpr PeakRow kPeaks[] = {
    {"H200 NVL", "H200 NVL", 60.0, 835.5, 835.5},
    {"H200", "H200 SXM", 67.0, 989.4, 989.4},
    {"H100 NVL", "H100 NVL", 60.0, 835.5, 835.5},
    {"H100 PCIe", "H100 PCIe", 51.2, 756.5, 756.5},
    {"H100", "H100 SXM", 67.0, 989.4, 989.4},
    {"GH200", "GH200", 67.0, 989.4, 989.4},
    {"A100", "A100", 19.5, 312.0, 312.0},
    {"L40S", "L40S", 91.6, 362.1, 362.1},
    {"A10G", "A10G", 31.2, 70.0, 70.0},
    {"A10", "A10", 31.2, 125.0, 125.0},
    {"L4", "L4", 30.3, 121.0, 121.0},
    {"V100", "V100", 15.7, 0.0, 125.0},
    {"RTX 4090", "RTX 4090", 82.6, 165.2, 165.2},
};

const PeakRow* peakRow(std::string_view device) {
    for (const auto& row : kPeaks) {
        const size_t at = device.find(row.match);
        if (at == std::string_view::npos) continue;
        // "A10" must not match "A100": the match ends at a word's end.
        const size_t end = at + row.match.size();
        if (end < device.size() && std::isalnum(static_cast<unsigned char>(device[end]))) continue;
        return &row;
    }
    return nullptr;
}

}  // namespace

std::optional<double> densePeakTflops(std::string_view device_name, Precision p) {
    const PeakRow* row = peakRow(device_name);
    if (!row) return std::nullopt;
    const double v = p == Precision::FP32   ? row->fp32
                     : p == Precision::BF16 ? row->bf16
                                            : row->fp16;
    if (v <= 0) return std::nullopt;
    return v;
}

std::string achievedText(double flops, double seconds, std::string_view device_name, Precision p) {
    if (seconds <= 0 || flops <= 0) return "n/a";
    const double tflops = flops / seconds / 1e12;
    const PeakRow* row = peakRow(device_name);
    const auto peak = densePeakTflops(device_name, p);
    if (!row || !peak) return fmt::format("{:.1f} TFLOP/s (unknown GPU)", tflops);
    return fmt::format("{:.1f} TFLOP/s ({:.0f}% of {} {} dense peak)", tflops,
                       100.0 * tflops / *peak, row->label, toString(p));
}

std::optional<double> achievedTflops(const BenchResult& r) {
    if (r.status != Status::Ok || r.forward.count == 0) return std::nullopt;
    // The user's model named as module:callable may be anything, so the course model's FLOPs
    // would be a guess; a course checkout's BasicsTransformerLM is that model.
    if (r.config.source == Source::Python && r.config.python.code.find(':') != std::string::npos)
        return std::nullopt;
    const StepFlops f = stepFlops(r.config);
    const double ms = r.forward.mean + (r.config.mode == Mode::Forward ? 0.0 : r.backward.mean);
    if (ms <= 0) return std::nullopt;
    return f.total() / (ms / 1000.0) / 1e12;
}

std::optional<double> peakShare(const BenchResult& r) {
    if (r.config.device.rfind("cuda", 0) != 0) return std::nullopt;
    const auto achieved = achievedTflops(r);
    const auto peak = densePeakTflops(r.environment.device_name, r.config.precision);
    if (!achieved || !peak) return std::nullopt;
    return *achieved / *peak;
}

std::optional<double> compileSeconds(const BenchResult& r) {
    if (r.config.exec == ExecMode::Eager || r.first_step_ms <= 0 || r.total.count == 0)
        return std::nullopt;
    return std::max(0.0, r.first_step_ms - r.total.mean) / 1000.0;
}

std::optional<NoiseFlag> noiseFlag(const BenchResult& r) {
    const Stats& t = r.total;
    if (r.status != Status::Ok || t.count < 2 || t.mean <= 0 || t.cv <= kNoisyCv)
        return std::nullopt;
    NoiseFlag f;
    f.cv = t.cv;
    const bool gpu = r.config.device.rfind("cuda", 0) == 0;
    if (t.count < 5)
        f.cause = fmt::format("too few steps ({} measured): measure more", t.count);
    else if (t.max > 1.5 * t.median)
        f.cause =
            fmt::format("outliers (slowest step {:.1f} ms, median {:.1f} ms): other load on the {}",
                        t.max, t.median, gpu ? "GPU or the host" : "host");
    else if (gpu && t.mean < 30.0)
        f.cause = fmt::format(
            "launch-bound ({:.1f} ms steps: the CPU's kernel launches set the pace)", t.mean);
    else if (!gpu)
        f.cause = "the CPU is shared (other processes, frequency scaling)";
    else
        f.cause = "a steady spread between steps";
    return f;
}

std::string noiseText(const BenchResult& r) {
    const auto f = noiseFlag(r);
    return f ? fmt::format("CV {:.0f}%: {}", 100 * f->cv, f->cause) : std::string();
}

}  // namespace ts
