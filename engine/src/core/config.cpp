#include "core/config.h"

#include <fmt/format.h>

#include <cmath>

namespace ts {
namespace {

struct Preset {
    const char* name;
    int64_t d_model, d_ff, num_layers, num_heads;
    bool in2026, in2025;  // see Note [two model tables]
};

// Tiny ones for a CPU, then the course's sizes: the current edition's, then the 2025 one's
// own. Order is the display order.
constexpr Preset kPresets[] = {
    {"tiny", 64, 256, 2, 4, true, true},          {"mini", 128, 512, 4, 4, true, true},
    {"small", 768, 3072, 12, 12, true, true},     {"medium", 1024, 4096, 24, 16, true, true},
    {"large", 1280, 5120, 36, 20, true, true},    {"xl", 2560, 10240, 32, 32, true, false},
    {"10B", 4608, 12288, 50, 36, true, false},    {"8B", 4096, 11008, 34, 32, true, false},
    {"xl-2025", 1600, 6400, 48, 25, false, true}, {"2.7B", 2560, 10240, 32, 32, false, true},
};

template <typename T, typename Table>
std::optional<T> lookup(std::string_view s, const Table& table) {
    for (const auto& [name, value] : table)
        if (s == name) return value;
    return std::nullopt;
}

constexpr std::pair<std::string_view, Mode> kModes[] = {{"forward", Mode::Forward},
                                                        {"forward-backward", Mode::ForwardBackward},
                                                        {"train", Mode::Train}};
constexpr std::pair<std::string_view, Precision> kPrecisions[] = {
    {"fp32", Precision::FP32}, {"bf16", Precision::BF16}, {"fp16", Precision::FP16}};
constexpr std::pair<std::string_view, AttentionImpl> kAttentionImpls[] = {
    {"naive", AttentionImpl::Naive},
    {"tiled", AttentionImpl::Tiled},
    {"sdpa", AttentionImpl::Sdpa},
    {"sdpa-flash", AttentionImpl::SdpaFlash},
    {"sdpa-efficient", AttentionImpl::SdpaEfficient},
    {"sdpa-cudnn", AttentionImpl::SdpaCudnn},
    {"sdpa-math", AttentionImpl::SdpaMath},
    {"flash", AttentionImpl::Flash}};
constexpr std::pair<std::string_view, ExecMode> kExecModes[] = {
    {"eager", ExecMode::Eager},
    {"compiled", ExecMode::Compiled},
    {"reduce-overhead", ExecMode::ReduceOverhead},
    {"max-autotune-no-cudagraphs", ExecMode::MaxAutotuneNoCudagraphs}};
constexpr std::pair<std::string_view, Source> kSources[] = {{"trainscope", Source::TrainScope},
                                                            {"python", Source::Python}};

template <typename Table, typename T>
std::string_view nameOf(const Table& table, T value) {
    for (const auto& [name, v] : table)
        if (v == value) return name;
    return "?";
}

template <typename T, typename Table>
const std::vector<T>& valuesOf(const Table& table) {
    static const std::vector<T> values = [&] {
        std::vector<T> v;
        for (const auto& [name, value] : table) v.push_back(value);
        return v;
    }();
    return values;
}

template <typename T>
std::string joinNames(const std::vector<T>& values) {
    std::string out;
    for (T v : values) out += (out.empty() ? "" : ", ") + std::string(toString(v));
    return out;
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

std::string_view toString(ModelTable t) { return t == ModelTable::Edition2025 ? "2025" : "2026"; }

std::optional<ModelTable> parseModelTable(std::string_view s) {
    if (s == "2026") return ModelTable::Edition2026;
    if (s == "2025") return ModelTable::Edition2025;
    return std::nullopt;
}

const std::vector<std::string>& modelPresetNames(ModelTable t) {
    static const auto names = [](bool current) {
        std::vector<std::string> v;
        for (const auto& p : kPresets)
            if (current ? p.in2026 : p.in2025) v.emplace_back(p.name);
        return v;
    };
    static const std::vector<std::string> current = names(true), previous = names(false);
    return t == ModelTable::Edition2025 ? previous : current;
}

std::string presetName(std::string_view size, ModelTable t) {
    if (t == ModelTable::Edition2025 && size == "xl") return "xl-2025";
    return std::string(size);
}

std::optional<ModelTable> presetEdition(std::string_view name) {
    for (const auto& p : kPresets)
        if (name == p.name && p.in2026 != p.in2025)
            return p.in2026 ? ModelTable::Edition2026 : ModelTable::Edition2025;
    return std::nullopt;
}

std::string modelTableNote(const std::vector<std::string>& model_names) {
    bool current = false, previous = false;
    for (const auto& n : model_names)
        if (const auto e = presetEdition(n))
            (*e == ModelTable::Edition2026 ? current : previous) = true;
    std::string out;
    if (current)
        out =
            "Model table: the course's 2026 edition (xl = d_model 2560, d_ff 10240, 32 layers, 32 "
            "heads; 10B = 4608, 12288, 50, 36)";
    if (previous)
        out += std::string(out.empty() ? "Model table: " : "; ") +
               "the course's 2025 edition (xl-2025 = d_model 1600, d_ff 6400, 48 layers, 25 heads; "
               "2.7B = 2560, 10240, 32, 32)";
    return out;
}

std::string canonicalPresetName(const ModelConfig& m) {
    const auto same = [&](const ModelConfig& p) {
        return p.d_model == m.d_model && p.d_ff == m.d_ff && p.num_layers == m.num_layers &&
               p.num_heads == m.num_heads;
    };
    if (m.name == "xl") {
        const auto current = modelPreset("xl");
        const auto old = modelPreset("xl-2025");
        if (current && old && !same(*current) && same(*old)) return "xl-2025";
    }
    return m.name;
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
            errors.push_back(
                fmt::format("d_model {} is not divisible by num_heads {}", m.d_model, m.num_heads));
        } else if (m.headDim() % 2 != 0) {
            errors.push_back(
                fmt::format("head dimension d_model/num_heads = {} is odd; RoPE rotates pairs and "
                            "needs it even",
                            m.headDim()));
        }
    }
    if (!(m.rope_theta > 0) || !std::isfinite(m.rope_theta))
        errors.push_back(
            fmt::format("rope_theta must be a positive finite number (got {})", m.rope_theta));
    return errors;
}

double bytesPerParameter(Mode m) {
    return 4.0 + (m != Mode::Forward ? 4.0 : 0.0) + (m == Mode::Train ? 8.0 : 0.0);
}

int64_t parameterCount(const ModelConfig& m) {
    const int64_t d = m.d_model, f = m.d_ff, v = m.vocab_size;
    const int64_t per_layer = 4 * d * d + 3 * d * f + 2 * d;
    return v * d + m.num_layers * per_layer + d + d * v;
}

std::string_view toString(Mode m) { return nameOf(kModes, m); }
std::string_view toString(Precision p) { return nameOf(kPrecisions, p); }
std::string_view toString(AttentionImpl a) { return nameOf(kAttentionImpls, a); }
std::string_view toString(ExecMode e) { return nameOf(kExecModes, e); }
std::optional<ExecMode> parseExecMode(std::string_view s) {
    return lookup<ExecMode>(s, kExecModes);
}
const std::vector<ExecMode>& allExecModes() { return valuesOf<ExecMode>(kExecModes); }
std::string namesOf(const std::vector<ExecMode>& v) { return joinNames(v); }
std::string_view toString(Source s) { return nameOf(kSources, s); }
std::optional<Source> parseSource(std::string_view s) { return lookup<Source>(s, kSources); }
const std::vector<Source>& allSources() { return valuesOf<Source>(kSources); }
std::string namesOf(const std::vector<Source>& v) { return joinNames(v); }
std::optional<Mode> parseMode(std::string_view s) { return lookup<Mode>(s, kModes); }
std::optional<Precision> parsePrecision(std::string_view s) {
    return lookup<Precision>(s, kPrecisions);
}
std::optional<AttentionImpl> parseAttentionImpl(std::string_view s) {
    return lookup<AttentionImpl>(s, kAttentionImpls);
}
const std::vector<Mode>& allModes() { return valuesOf<Mode>(kModes); }
const std::vector<Precision>& allPrecisions() { return valuesOf<Precision>(kPrecisions); }
const std::vector<AttentionImpl>& allAttentionImpls() {
    return valuesOf<AttentionImpl>(kAttentionImpls);
}
std::string namesOf(const std::vector<Mode>& v) { return joinNames(v); }
std::string namesOf(const std::vector<Precision>& v) { return joinNames(v); }
std::string namesOf(const std::vector<AttentionImpl>& v) { return joinNames(v); }

std::string validateDevice(const std::string& dev) {
    bool ok = dev == "cpu" || dev == "cuda";
    if (!ok && dev.rfind("cuda:", 0) == 0 && dev.size() > 5 && dev.size() < 9)
        ok = dev.find_first_not_of("0123456789", 5) == std::string::npos;
    return ok ? std::string() : fmt::format("device '{}' is not one of cpu, cuda, cuda:N", dev);
}

}  // namespace ts
