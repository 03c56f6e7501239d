// The benchmark's configuration: validation and sweep expansion.
#include <fmt/format.h>

#include <stdexcept>

#include "benchmark/benchmark.h"

namespace ts {

std::vector<std::string> validateBench(const BenchConfig& c) {
    std::vector<std::string> errors = validateModel(c.model);
    if (c.batch_size <= 0)
        errors.push_back(fmt::format("batch_size must be positive (got {})", c.batch_size));
    if (c.warmup < 0)
        errors.push_back(fmt::format("warmup must be zero or more (got {})", c.warmup));
    if (c.steps <= 0) errors.push_back(fmt::format("steps must be positive (got {})", c.steps));
    if (!(c.learning_rate > 0))
        errors.push_back(fmt::format("learning_rate must be positive (got {})", c.learning_rate));
    if (auto e = validateDevice(c.device); !e.empty()) errors.push_back(e);
    return errors;
}

std::vector<BenchConfig> expandSweep(const SweepSpec& spec) {
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
                        for (int w : orBase(spec.warmups, spec.base.warmup))
                            for (const std::string& dev : orBase(spec.devices, spec.base.device)) {
                                BenchConfig c = spec.base;
                                c.model = model;
                                c.model.context_length = ctx;
                                c.batch_size = batch;
                                c.precision = p;
                                c.attention = a;
                                c.mode = mode;
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
