// The training point: validation, memory estimates, a step's FLOPs and the GPUs' peaks, the
// phases' names. Torch-free.
#include "core/point.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "core/sweep.h"

namespace ts {

namespace {
constexpr std::array<std::string_view, 4> kPhaseNames = {"forward", "backward", "optimizer",
                                                         "other"};
}  // namespace

std::string toString(const Checkpointing& c) {
    switch (c.kind) {
        case Checkpointing::Kind::None:
            return "none";
        case Checkpointing::Kind::Every:
            return std::to_string(c.every);
        case Checkpointing::Kind::Sqrt:
            return "sqrt";
        case Checkpointing::Kind::Nested:
            return "nested";
    }
    return "none";
}

std::optional<Checkpointing> parseCheckpointing(std::string_view s) {
    if (s == "none") return Checkpointing{};
    if (s == "sqrt") return Checkpointing{Checkpointing::Kind::Sqrt, 0};
    if (s == "nested") return Checkpointing{Checkpointing::Kind::Nested, 0};
    int k = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), k);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || k < 1 || k > kMaxCheckpointEvery)
        return std::nullopt;
    return Checkpointing{Checkpointing::Kind::Every, k};
}

int64_t checkpointSegment(const Checkpointing& c, int64_t layers) {
    switch (c.kind) {
        case Checkpointing::Kind::Every:
            return std::min<int64_t>(c.every, std::max<int64_t>(layers, 1));
        case Checkpointing::Kind::Sqrt:
            return std::max<int64_t>(
                1, static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(layers)))));
        default:
            return 0;
    }
}

std::string_view toString(Phase p) { return kPhaseNames[static_cast<size_t>(p)]; }

std::optional<Phase> parsePhase(std::string_view s) {
    for (size_t i = 0; i < kPhaseNames.size(); ++i)
        if (s == kPhaseNames[i]) return static_cast<Phase>(i);
    return std::nullopt;
}

const std::vector<Phase>& allPhases() {
    static const std::vector<Phase> all = {Phase::Forward, Phase::Backward, Phase::Optimizer,
                                           Phase::Other};
    return all;
}

TensorEstimate largestTensor(const PointConfig& c) {
    const auto& m = c.model;
    const double b = static_cast<double>(c.batch_size), t = static_cast<double>(m.context_length);
    const double v = static_cast<double>(m.vocab_size), d = static_cast<double>(m.d_model);
    const double f = static_cast<double>(m.d_ff), h = static_cast<double>(m.num_heads);
    // The fused loss holds one chunk of the logits at a time, at most 2^29 (See Note [fused LM
    // head and loss] in nn/model.h).
    const double logits = c.fused_loss ? std::min(b * t * v, 536870912.0) : b * t * v;
    const struct {
        const char* what;
        double bytes;
    } candidates[] = {
        {c.fused_loss ? "fused loss's chunk of the logits (at most 2^29 of batch {0} × context {1} "
                        "× vocab {2})"
                      : "logits (batch {0} × context {1} × vocab {2})",
         logits * 4},
        {"attention scores (batch {0} × heads {5} × context {1}²)", b * h * t * t * 4},
        {"feed-forward activation (batch {0} × context {1} × d_ff {4})", b * t * f * 4},
        {"embedding (vocab {2} × d_model {3})", v * d * 4},
        {"feed-forward weight (d_model {3} × d_ff {4})", d * f * 4},
    };
    const auto* biggest = &candidates[0];
    for (const auto& e : candidates)
        if (e.bytes > biggest->bytes) biggest = &e;
    // The shape with its numbers, so that the message names the value to lower.
    return {fmt::format(fmt::runtime(biggest->what), c.batch_size, m.context_length, m.vocab_size,
                        m.d_model, m.d_ff, m.num_heads),
            biggest->bytes};
}

std::string deviceMemoryProblem(const PointConfig& c, int64_t device_memory,
                                const std::string& device_name) {
    const TensorEstimate big = largestTensor(c);
    if (device_memory <= 0 || big.bytes <= static_cast<double>(device_memory)) return {};
    return fmt::format("the {} would take {:.1f} GiB, more than the {:.1f} GiB of {} ({})",
                       big.name, big.bytes / 1073741824.0,
                       static_cast<double>(device_memory) / 1073741824.0, c.device, device_name);
}

double pointMemoryLowerBound(const PointConfig& c) {
    return static_cast<double>(parameterCount(c.model)) * bytesPerParameter(c.mode) +
           largestTensor(c).bytes;
}

std::string hostMemoryProblem(const PointConfig& c, int64_t available) {
    if (c.source == Source::Python || available <= 0) return {};
    const double need = pointMemoryLowerBound(c);
    if (need <= static_cast<double>(available)) return {};
    const double gib = 1073741824.0;
    const double params = static_cast<double>(parameterCount(c.model));
    return fmt::format(
        "{} on the CPU needs at least {:.1f} GiB ({:.3g} parameters: weights{}{} at {:.0f} bytes "
        "each, and its largest tensor, the {}), more than the {:.1f} GiB this machine has free; "
        "lower the sizes or run it on a GPU",
        c.model.name, need / gib, params, c.mode != Mode::Forward ? ", gradients" : "",
        c.mode == Mode::Train ? ", AdamW's state" : "", bytesPerParameter(c.mode),
        largestTensor(c).name, static_cast<double>(available) / gib);
}

std::vector<std::string> validatePoint(const PointConfig& c) {
    std::vector<std::string> errors = validateModel(c.model);
    if (c.batch_size <= 0)
        errors.push_back(fmt::format("batch_size must be positive (got {})", c.batch_size));
    if (c.warmup < 0)
        errors.push_back(fmt::format("warmup must be zero or more (got {})", c.warmup));
    if (c.warmup > kMaxSteps)
        errors.push_back(
            fmt::format("warmup {} is more than the limit of {} steps", c.warmup, kMaxSteps));
    if (c.steps <= 0) errors.push_back(fmt::format("steps must be positive (got {})", c.steps));
    if (c.steps > kMaxSteps)
        errors.push_back(
            fmt::format("steps {} is more than the limit of {} steps", c.steps, kMaxSteps));
    if (!(c.learning_rate > 0) || !std::isfinite(c.learning_rate))
        errors.push_back(fmt::format("learning_rate must be a positive finite number (got {})",
                                     c.learning_rate));
    else if (c.learning_rate > kMaxLearningRate)  // as the precision lab limits it
        errors.push_back(fmt::format("learning_rate {} is more than the limit of {}",
                                     c.learning_rate, kMaxLearningRate));
    if (auto e = validateDevice(c.device); !e.empty()) errors.push_back(e);
    if (auto e = compiledProblem(c); !e.empty()) errors.push_back(e);
    if (auto e = sourceProblem(c); !e.empty()) errors.push_back(e);
    // What a dimension's value cannot run with, as its row says (see Note [point dimensions]).
    for (const auto& d : pointDimensions())
        if (d.problem)
            if (auto e = d.problem(c); !e.empty()) errors.push_back(e);
    if (errors.empty()) {
        const TensorEstimate big = largestTensor(c);
        if (big.bytes > kMaxTensorBytes)
            errors.push_back(fmt::format(
                "the {} would take {:.3g} bytes, more than the 2^40 bytes (1 TiB) that any "
                "device holds; lower the sizes",
                big.name, big.bytes));
    }
    return errors;
}

std::string sourceProblem(const PointConfig& c) {
    if (c.source == Source::TrainScope) return {};
    if (c.python.code.empty())
        return "the Python source needs the user's code: --code with a course checkout's folder, "
               "module:callable "
               "or path/file.py:callable";
    if (!(c.python.timeout_s > 0) || c.python.timeout_s > 86400)
        return fmt::format("timeout {} s is outside (0, 86400]", c.python.timeout_s);
    return {};
}

std::string compiledProblem(const PointConfig& c) {
    if (c.exec == ExecMode::Eager) return {};
    if (c.source == Source::Python) return {};  // torch.compile, in the user's Python
    if (c.exec != ExecMode::Compiled)
        return fmt::format(
            "{} is a torch.compile mode, for the user's code (--code) only; TrainScope's own model "
            "runs "
            "eager or compiled",
            toString(c.exec));
    return capturedStepProblem(c.device, c.precision, c.mode == Mode::Train, c.checkpoint);
}

std::string capturedStepProblem(std::string_view device, Precision precision, bool training,
                                const Checkpointing& checkpoint) {
    if (!device.empty() && device.rfind("cuda", 0) != 0)
        return "compiled mode captures CUDA graphs: it needs a CUDA device";
    if (checkpoint.kind != Checkpointing::Kind::None)
        return "compiled mode does not capture checkpointing's recompute (a backward inside "
               "backward); use the eager mode with --checkpoint";
    // GradScaler's steps are device ops and could be captured, but its skipped steps and scale
    // growth have not been checked against eager here: refused rather than trusted.
    if (precision == Precision::FP16 && training)
        return "compiled mode does not capture fp16 training: its dynamic loss scaling "
               "(GradScaler) is not captured here; use bf16 or fp32, or the eager mode";
    return {};
}

StepFlops stepFlops(const PointConfig& cfg) {
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

}  // namespace ts
