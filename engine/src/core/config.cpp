#include "trainscope/engine/config.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>

namespace ts {
namespace {

struct Preset {
    const char* name;
    int64_t d_model, d_ff, num_layers, num_heads;
};

// The course's sizes, then tiny ones for a CPU. Order is the display order.
constexpr Preset kPresets[] = {
    {"tiny", 64, 256, 2, 4},      {"mini", 128, 512, 4, 4},     {"small", 768, 3072, 12, 12},
    {"medium", 1024, 4096, 24, 16}, {"large", 1280, 5120, 36, 20}, {"xl", 1600, 6400, 48, 25},
    {"2.7B", 2560, 10240, 32, 32},
};

template <typename T, typename Table>
std::optional<T> lookup(std::string_view s, const Table& table) {
    for (const auto& [name, value] : table)
        if (s == name) return value;
    return std::nullopt;
}

constexpr std::pair<std::string_view, Mode> kModes[] = {
    {"forward", Mode::Forward}, {"forward-backward", Mode::ForwardBackward}, {"train", Mode::Train}};
constexpr std::pair<std::string_view, Precision> kPrecisions[] = {
    {"fp32", Precision::FP32}, {"bf16", Precision::BF16}, {"fp16", Precision::FP16}};
constexpr std::pair<std::string_view, Attention> kAttentions[] = {
    {"naive", Attention::Naive}, {"sdpa", Attention::Sdpa}, {"tiled", Attention::Tiled},
    {"flash", Attention::Flash}};

template <typename Table, typename T>
std::string_view nameOf(const Table& table, T value) {
    for (const auto& [name, v] : table)
        if (v == value) return name;
    return "?";
}

}  // namespace

std::optional<ModelConfig> modelPreset(std::string_view name) {
    for (const auto& p : kPresets) {
        if (name == p.name) {
            ModelConfig m;
            m.name = p.name;
            m.d_model = p.d_model;
            m.d_ff = p.d_ff;
            m.num_layers = p.num_layers;
            m.num_heads = p.num_heads;
            return m;
        }
    }
    return std::nullopt;
}

const std::vector<std::string>& modelPresetNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& p : kPresets) v.emplace_back(p.name);
        return v;
    }();
    return names;
}

std::vector<std::string> validateModel(const ModelConfig& m) {
    std::vector<std::string> errors;
    auto positive = [&](const char* what, int64_t v) {
        if (v <= 0) errors.push_back(fmt::format("{} must be positive (got {})", what, v));
    };
    positive("vocab_size", m.vocab_size);
    positive("context_length", m.context_length);
    positive("d_model", m.d_model);
    positive("d_ff", m.d_ff);
    positive("num_layers", m.num_layers);
    positive("num_heads", m.num_heads);
    if (m.d_model > 0 && m.num_heads > 0) {
        if (m.d_model % m.num_heads != 0) {
            errors.push_back(fmt::format("d_model {} is not divisible by num_heads {}", m.d_model,
                                         m.num_heads));
        } else if (m.headDim() % 2 != 0) {
            errors.push_back(fmt::format(
                "head dimension d_model/num_heads = {} is odd; RoPE rotates pairs and needs it even",
                m.headDim()));
        }
    }
    if (!(m.rope_theta > 0))
        errors.push_back(fmt::format("rope_theta must be positive (got {})", m.rope_theta));
    return errors;
}

int64_t parameterCount(const ModelConfig& m) {
    const int64_t d = m.d_model, f = m.d_ff, v = m.vocab_size;
    const int64_t per_layer = 4 * d * d + 3 * d * f + 2 * d;
    return v * d + m.num_layers * per_layer + d + d * v;
}

std::string_view toString(Mode m) { return nameOf(kModes, m); }
std::string_view toString(Precision p) { return nameOf(kPrecisions, p); }
std::string_view toString(Attention a) { return nameOf(kAttentions, a); }
std::optional<Mode> parseMode(std::string_view s) { return lookup<Mode>(s, kModes); }
std::optional<Precision> parsePrecision(std::string_view s) {
    return lookup<Precision>(s, kPrecisions);
}
std::optional<Attention> parseAttention(std::string_view s) {
    return lookup<Attention>(s, kAttentions);
}

std::vector<std::string> validateBench(const BenchConfig& c) {
    std::vector<std::string> errors = validateModel(c.model);
    if (c.batch_size <= 0)
        errors.push_back(fmt::format("batch_size must be positive (got {})", c.batch_size));
    if (c.warmup < 0)
        errors.push_back(fmt::format("warmup must be zero or more (got {})", c.warmup));
    if (c.steps <= 0) errors.push_back(fmt::format("steps must be positive (got {})", c.steps));
    if (!(c.learning_rate > 0))
        errors.push_back(fmt::format("learning_rate must be positive (got {})", c.learning_rate));
    const std::string& dev = c.device;
    bool device_ok = dev == "cpu" || dev == "cuda";
    if (!device_ok && dev.rfind("cuda:", 0) == 0 && dev.size() > 5) {
        device_ok = dev.find_first_not_of("0123456789", 5) == std::string::npos;
    }
    if (!device_ok)
        errors.push_back(fmt::format("device '{}' is not one of cpu, cuda, cuda:N", dev));
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
                for (Attention a : orBase(spec.attentions, spec.base.attention))
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

}  // namespace ts
