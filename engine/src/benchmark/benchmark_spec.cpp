// The benchmark's configuration: validation and sweep expansion.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "benchmark/benchmark.h"

namespace ts {

TensorEstimate largestTensor(const BenchConfig& c) {
    const auto& m = c.model;
    const double b = static_cast<double>(c.batch_size), t = static_cast<double>(m.context_length);
    const double v = static_cast<double>(m.vocab_size), d = static_cast<double>(m.d_model);
    const double f = static_cast<double>(m.d_ff), h = static_cast<double>(m.num_heads);
    const struct {
        const char* what;
        double bytes;
    } candidates[] = {
        {"logits (batch {0} × context {1} × vocab {2})", b * t * v * 4},
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

std::string deviceMemoryProblem(const BenchConfig& c, int64_t device_memory,
                                const std::string& device_name) {
    const TensorEstimate big = largestTensor(c);
    if (device_memory <= 0 || big.bytes <= static_cast<double>(device_memory)) return {};
    return fmt::format("the {} would take {:.1f} GiB, more than the {:.1f} GiB of {} ({})",
                       big.name, big.bytes / 1073741824.0,
                       static_cast<double>(device_memory) / 1073741824.0, c.device, device_name);
}

double pointMemoryLowerBound(const BenchConfig& c) {
    return static_cast<double>(parameterCount(c.model)) * bytesPerParameter(c.mode) +
           largestTensor(c).bytes;
}

std::string hostMemoryProblem(const BenchConfig& c, int64_t available) {
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

std::vector<std::string> validateBench(const BenchConfig& c) {
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

std::string sourceProblem(const BenchConfig& c) {
    if (c.source == Source::TrainScope) return {};
    if (c.python.code.empty())
        return "the Python source needs the user's code: --code with a course checkout's folder, "
               "module:callable "
               "or path/file.py:callable";
    if (!(c.python.timeout_s > 0) || c.python.timeout_s > 86400)
        return fmt::format("timeout {} s is outside (0, 86400]", c.python.timeout_s);
    return {};
}

std::string compiledProblem(const BenchConfig& c) {
    if (c.exec == ExecMode::Eager) return {};
    if (c.source == Source::Python) return {};  // torch.compile, in the user's Python
    if (c.exec != ExecMode::Compiled)
        return fmt::format(
            "{} is a torch.compile mode, for the user's code (--code) only; TrainScope's own model "
            "runs "
            "eager or compiled",
            toString(c.exec));
    if (c.device.rfind("cuda", 0) != 0)
        return "compiled mode captures CUDA graphs: it needs a CUDA device";
    // GradScaler's steps are device ops and could be captured, but its skipped steps and scale
    // growth have not been checked against eager here: refused rather than trusted.
    if (c.precision == Precision::FP16 && c.mode == Mode::Train)
        return "compiled mode does not capture fp16 training: its dynamic loss scaling "
               "(GradScaler) is not "
               "captured here; use bf16 or fp32, or the eager mode";
    return {};
}

size_t sweepPointCount(const SweepSpec& spec) {
    const size_t sizes[] = {spec.sizes.size(),       spec.context_lengths.size(),
                            spec.batch_sizes.size(), spec.precisions.size(),
                            spec.attentions.size(),  spec.modes.size(),
                            spec.execs.size(),       spec.sources.size(),
                            spec.warmups.size(),     spec.devices.size()};
    size_t n = 1;
    for (size_t s : sizes)
        if (__builtin_mul_overflow(n, std::max<size_t>(s, 1), &n))
            return SIZE_MAX;  // an empty list is the base value
    return n;
}

std::vector<BenchConfig> expandSweep(const SweepSpec& spec) {
    if (const size_t n = sweepPointCount(spec); n > kMaxSweepPoints)
        throw std::invalid_argument(fmt::format(
            "the sweep has {} points, more than the limit of {}; split it",
            n == SIZE_MAX ? std::string("too many") : std::to_string(n), kMaxSweepPoints));
    std::vector<ModelConfig> models;
    if (spec.sizes.empty()) models.push_back(spec.base.model);
    for (const auto& s : spec.sizes) {
        if (s == "custom") {
            models.push_back(spec.base.model);
            continue;
        }
        auto m = modelPreset(s);
        if (!m) throw std::invalid_argument(fmt::format("unknown model size '{}'", s));
        m->context_length = spec.base.model.context_length;
        m->vocab_size = spec.base.model.vocab_size;
        m->rope_theta = spec.base.model.rope_theta;
        models.push_back(*m);
    }
    auto orBase = [](const auto& list, auto base) {
        return list.empty() ? std::vector<decltype(base)>{base} : list;
    };
    std::vector<BenchConfig> points;
    for (const auto& model : models)
        for (int64_t ctx : orBase(spec.context_lengths, spec.base.model.context_length))
            for (int64_t batch : orBase(spec.batch_sizes, spec.base.batch_size))
                for (Precision p : orBase(spec.precisions, spec.base.precision))
                    for (AttentionImpl a : orBase(spec.attentions, spec.base.attention))
                        for (Mode mode : orBase(spec.modes, spec.base.mode))
                            for (ExecMode e : orBase(spec.execs, spec.base.exec))
                                for (Source src : orBase(spec.sources, spec.base.source))
                                    for (int w : orBase(spec.warmups, spec.base.warmup))
                                        for (const std::string& dev :
                                             orBase(spec.devices, spec.base.device)) {
                                            BenchConfig c = spec.base;
                                            c.model = model;
                                            c.model.context_length = ctx;
                                            c.batch_size = batch;
                                            c.precision = p;
                                            c.attention = a;
                                            c.mode = mode;
                                            c.exec = e;
                                            c.source = src;
                                            c.warmup = w;
                                            c.device = dev;
                                            points.push_back(c);
                                        }
    return points;
}

void summarize(BenchResult& r) {
    std::vector<double> f, b, o, t;
    for (const auto& s : r.steps) {
        if (s.warmup) continue;
        f.push_back(s.forward_ms);
        b.push_back(s.backward_ms);
        o.push_back(s.optimizer_ms);
        t.push_back(s.total_ms);
    }
    r.forward = computeStats(f);
    r.backward = computeStats(b);
    r.optimizer = computeStats(o);
    r.total = computeStats(t);
}

}  // namespace ts
