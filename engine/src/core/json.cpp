#include "trainscope/engine/json.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace ts {
using nlohmann::json;

namespace {

constexpr RunStatus kRunStatuses[] = {RunStatus::Ok, RunStatus::OOM, RunStatus::Failed,
                                      RunStatus::Cancelled};
constexpr Mode kModes[] = {Mode::Forward, Mode::ForwardBackward, Mode::Train};
constexpr Precision kPrecisions[] = {Precision::FP32, Precision::BF16, Precision::FP16};
constexpr Attention kAttentions[] = {Attention::Naive, Attention::Sdpa, Attention::Tiled,
                                     Attention::Flash};

std::optional<RunStatus> parseRunStatus(std::string_view s) {
    for (RunStatus r : kRunStatuses)
        if (toString(r) == s) return r;
    return std::nullopt;
}

[[noreturn]] void fail(std::string_view field, std::string_view problem) {
    throw std::invalid_argument(fmt::format("{}: {}", field, problem));
}

// The offending value as it appeared, shortened so a huge object does not flood the message.
std::string shown(const json& v) {
    std::string s = v.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

std::string join(std::string_view a, std::string_view b) {
    return a.empty() ? std::string(b) : fmt::format("{}.{}", a, b);
}

void requireObject(const json& j, std::string_view field) {
    if (!j.is_object()) fail(field.empty() ? "(top level)" : field, "expected an object, got " + shown(j));
}

// Rejects keys outside `known`: a misspelt key must not be silently ignored.
void rejectUnknown(const json& j, std::string_view prefix,
                   std::initializer_list<std::string_view> known) {
    for (const auto& [key, value] : j.items()) {
        bool ok = false;
        for (auto k : known) ok = ok || key == k;
        if (!ok) fail(join(prefix, key), "unknown key");
    }
}

// Non-finite doubles (a diverged loss) have no JSON literal; nlohmann would write null and
// lose which one it was, so they go out as strings and come back from strings (or null).
json number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    return v;
}

double toDouble(const json& v, std::string_view field) {
    if (v.is_number()) return v.get<double>();
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
        if (s == "Infinity") return std::numeric_limits<double>::infinity();
        if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    }
    fail(field, "expected a number, got " + shown(v));
}

// Integers; an integral float (1e4 in a hand-written file) is accepted, 4.5 is not.
int64_t toInt(const json& v, std::string_view field, int64_t lo, int64_t hi) {
    int64_t out = 0;
    if (v.is_number_unsigned()) {
        const auto u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(hi)) fail(field, fmt::format("{} is out of range", u));
        out = static_cast<int64_t>(u);
    } else if (v.is_number_integer()) {
        out = v.get<int64_t>();
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        // 2^63 as a double; the upper bound is exclusive since INT64_MAX is not representable.
        if (!(std::trunc(d) == d && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18))
            fail(field, "expected an integer, got " + shown(v));
        out = static_cast<int64_t>(d);
    } else {
        fail(field, "expected an integer, got " + shown(v));
    }
    if (out < lo || out > hi) fail(field, fmt::format("{} is out of range", out));
    return out;
}

uint64_t toUint(const json& v, std::string_view field) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer()) fail(field, fmt::format("expected a non-negative integer, got {}", shown(v)));
    return static_cast<uint64_t>(toInt(v, field, 0, std::numeric_limits<int64_t>::max()));
}

std::string toStr(const json& v, std::string_view field) {
    if (!v.is_string()) fail(field, "expected a string, got " + shown(v));
    return v.get<std::string>();
}

bool toBool(const json& v, std::string_view field) {
    if (!v.is_boolean()) fail(field, "expected true or false, got " + shown(v));
    return v.get<bool>();
}

template <typename E, size_t N, typename Parse>
E toEnum(const json& v, std::string_view field, const E (&all)[N], Parse parse) {
    const std::string s = toStr(v, field);
    if (auto e = parse(s)) return *e;
    std::string names;
    for (E e : all) names += (names.empty() ? "" : ", ") + std::string(toString(e));
    fail(field, fmt::format("'{}' is not one of {}", s, names));
}

Mode toMode(const json& v, std::string_view f) { return toEnum(v, f, kModes, parseMode); }
Precision toPrecision(const json& v, std::string_view f) {
    return toEnum(v, f, kPrecisions, parsePrecision);
}
Attention toAttention(const json& v, std::string_view f) {
    return toEnum(v, f, kAttentions, parseAttention);
}

std::string toSize(const json& v, std::string_view field, bool allow_custom) {
    const std::string s = toStr(v, field);
    if (modelPreset(s) || (allow_custom && s == "custom")) return s;
    std::string names;
    for (const auto& n : modelPresetNames()) names += (names.empty() ? "" : ", ") + n;
    if (allow_custom) names += ", custom";
    fail(field, fmt::format("'{}' is not one of {}", s, names));
}

AttentionImpl toAttentionImpl(const json& v, std::string_view f) {
    const std::string s = toStr(v, f);
    if (auto e = parseAttentionImpl(s)) return *e;
    fail(f, fmt::format("'{}' is not an attention implementation", s));
}

CellStatus toCellStatus(const json& v, std::string_view f) {
    const std::string s = toStr(v, f);
    for (CellStatus c : {CellStatus::Ok, CellStatus::OOM, CellStatus::Failed, CellStatus::Unsupported,
                         CellStatus::Cancelled})
        if (s == toString(c)) return c;
    fail(f, fmt::format("'{}' is not a cell status", s));
}

// Reads j[key] into out when present; leaves the default otherwise.
template <typename T, typename Conv>
void read(const json& j, std::string_view prefix, const char* key, T& out, Conv conv) {
    auto it = j.find(key);
    if (it != j.end()) out = static_cast<T>(conv(*it, join(prefix, key)));
}

auto intIn(int64_t lo, int64_t hi) {
    return [lo, hi](const json& v, std::string_view f) { return toInt(v, f, lo, hi); };
}
const auto kInt64 = intIn(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
const auto kInt = intIn(std::numeric_limits<int>::min(), std::numeric_limits<int>::max());

constexpr std::string_view kModelDims[] = {"vocab_size", "context_length", "d_model", "d_ff",
                                           "num_layers", "num_heads", "rope_theta"};

// The dimension fields of a model, read over whatever `m` holds already.
void readModelFields(const json& j, std::string_view prefix, ModelConfig& m) {
    read(j, prefix, "vocab_size", m.vocab_size, kInt64);
    read(j, prefix, "context_length", m.context_length, kInt64);
    read(j, prefix, "d_model", m.d_model, kInt64);
    read(j, prefix, "d_ff", m.d_ff, kInt64);
    read(j, prefix, "num_layers", m.num_layers, kInt64);
    read(j, prefix, "num_heads", m.num_heads, kInt64);
    read(j, prefix, "rope_theta", m.rope_theta, toDouble);
}

// A preset with overrides: a changed shape is no longer that preset, so it becomes "custom".
ModelConfig presetWithOverrides(const json& j, std::string_view prefix, const std::string& size) {
    ModelConfig m = *modelPreset(size);
    const ModelConfig preset = m;
    readModelFields(j, prefix, m);
    if (m.d_model != preset.d_model || m.d_ff != preset.d_ff ||
        m.num_layers != preset.num_layers || m.num_heads != preset.num_heads)
        m.name = "custom";
    return m;
}

ModelConfig modelFrom(const json& j, std::string_view prefix, bool strict) {
    requireObject(j, prefix);
    if (strict) {
        rejectUnknown(j, prefix, {"name", "size", "vocab_size", "context_length", "d_model", "d_ff",
                                  "num_layers", "num_heads", "rope_theta"});
    }
    ModelConfig m;
    if (auto it = j.find("size"); it != j.end())
        m = presetWithOverrides(j, prefix, toSize(*it, join(prefix, "size"), false));
    else
        readModelFields(j, prefix, m);
    read(j, prefix, "name", m.name, toStr);
    return m;
}

// `strict` rejects unknown keys: on for configs people write, off for stored results so that
// a file written by a newer build (with more fields) still reads.
BenchConfig benchFrom(const json& j, std::string_view prefix, bool strict) {
    requireObject(j, prefix);
    if (strict) {
        rejectUnknown(j, prefix,
                      {"model", "size", "batch_size", "warmup", "steps", "mode", "precision",
                       "attention", "device", "seed", "learning_rate", "vocab_size",
                       "context_length", "d_model", "d_ff", "num_layers", "num_heads",
                       "rope_theta"});
    }
    BenchConfig c;
    const auto model = j.find("model");
    const auto size = j.find("size");
    if (model != j.end() && size != j.end())
        fail(join(prefix, "size"), "give either \"model\" or \"size\", not both");
    if (model != j.end()) {
        // Dimensions beside a "model" object would be ambiguous: which one wins?
        for (auto key : kModelDims)
            if (j.contains(key))
                fail(join(prefix, key), "set it inside \"model\", or use \"size\" with overrides");
        c.model = modelFrom(*model, join(prefix, "model"), strict);
    } else if (size != j.end()) {
        c.model = presetWithOverrides(j, prefix, toSize(*size, join(prefix, "size"), false));
    } else {
        readModelFields(j, prefix, c.model);
    }
    read(j, prefix, "batch_size", c.batch_size, kInt64);
    read(j, prefix, "warmup", c.warmup, kInt);
    read(j, prefix, "steps", c.steps, kInt);
    read(j, prefix, "mode", c.mode, toMode);
    read(j, prefix, "precision", c.precision, toPrecision);
    read(j, prefix, "attention", c.attention, toAttention);
    read(j, prefix, "device", c.device, toStr);
    read(j, prefix, "seed", c.seed, toUint);
    read(j, prefix, "learning_rate", c.learning_rate, toDouble);
    return c;
}

StepSample stepFrom(const json& j, std::string_view prefix) {
    requireObject(j, prefix);
    StepSample s;
    read(j, prefix, "index", s.index, kInt);
    read(j, prefix, "warmup", s.warmup, toBool);
    read(j, prefix, "forward_ms", s.forward_ms, toDouble);
    read(j, prefix, "backward_ms", s.backward_ms, toDouble);
    read(j, prefix, "optimizer_ms", s.optimizer_ms, toDouble);
    read(j, prefix, "total_ms", s.total_ms, toDouble);
    read(j, prefix, "loss", s.loss, toDouble);
    read(j, prefix, "memory_allocated", s.memory_allocated, kInt64);
    read(j, prefix, "memory_reserved", s.memory_reserved, kInt64);
    read(j, prefix, "memory_peak", s.memory_peak, kInt64);
    return s;
}

Stats statsFrom(const json& j, std::string_view prefix) {
    requireObject(j, prefix);
    Stats s;
    read(j, prefix, "count", s.count, kInt);
    read(j, prefix, "mean", s.mean, toDouble);
    read(j, prefix, "std", s.std, toDouble);
    read(j, prefix, "median", s.median, toDouble);
    read(j, prefix, "min", s.min, toDouble);
    read(j, prefix, "max", s.max, toDouble);
    read(j, prefix, "cv", s.cv, toDouble);
    return s;
}

Environment environmentFrom(const json& j, std::string_view prefix) {
    requireObject(j, prefix);
    Environment e;
    read(j, prefix, "device_name", e.device_name, toStr);
    read(j, prefix, "driver_version", e.driver_version, toStr);
    read(j, prefix, "cuda_version", e.cuda_version, toStr);
    read(j, prefix, "torch_version", e.torch_version, toStr);
    read(j, prefix, "cpu", e.cpu, toStr);
    read(j, prefix, "hostname", e.hostname, toStr);
    read(j, prefix, "date", e.date, toStr);
    read(j, prefix, "git_commit", e.git_commit, toStr);
    read(j, prefix, "trainscope_version", e.trainscope_version, toStr);
    return e;
}

// A list field of a sweep: each element converted, errors naming "field[i]".
template <typename T, typename Conv>
void readList(const json& j, const char* key, std::vector<T>& out, Conv conv) {
    auto it = j.find(key);
    if (it == j.end()) return;
    if (!it->is_array()) fail(key, "expected a list, got " + shown(*it));
    for (size_t i = 0; i < it->size(); ++i)
        out.push_back(static_cast<T>(conv((*it)[i], fmt::format("{}[{}]", key, i))));
}

}  // namespace

json toJson(const ModelConfig& m) {
    return {{"name", m.name},
            {"vocab_size", m.vocab_size},
            {"context_length", m.context_length},
            {"d_model", m.d_model},
            {"d_ff", m.d_ff},
            {"num_layers", m.num_layers},
            {"num_heads", m.num_heads},
            {"rope_theta", number(m.rope_theta)}};
}

json toJson(const BenchConfig& c) {
    return {{"model", toJson(c.model)},
            {"batch_size", c.batch_size},
            {"warmup", c.warmup},
            {"steps", c.steps},
            {"mode", toString(c.mode)},
            {"precision", toString(c.precision)},
            {"attention", toString(c.attention)},
            {"device", c.device},
            {"seed", c.seed},
            {"learning_rate", number(c.learning_rate)}};
}

json toJson(const StepSample& s) {
    return {{"index", s.index},
            {"warmup", s.warmup},
            {"forward_ms", number(s.forward_ms)},
            {"backward_ms", number(s.backward_ms)},
            {"optimizer_ms", number(s.optimizer_ms)},
            {"total_ms", number(s.total_ms)},
            {"loss", number(s.loss)},
            {"memory_allocated", s.memory_allocated},
            {"memory_reserved", s.memory_reserved},
            {"memory_peak", s.memory_peak}};
}

json toJson(const Stats& s) {
    return {{"count", s.count},         {"mean", number(s.mean)}, {"std", number(s.std)},
            {"median", number(s.median)}, {"min", number(s.min)},   {"max", number(s.max)},
            {"cv", number(s.cv)}};
}

json toJson(const Environment& e) {
    return {{"device_name", e.device_name},
            {"driver_version", e.driver_version},
            {"cuda_version", e.cuda_version},
            {"torch_version", e.torch_version},
            {"cpu", e.cpu},
            {"hostname", e.hostname},
            {"date", e.date},
            {"git_commit", e.git_commit},
            {"trainscope_version", e.trainscope_version}};
}

json toJson(const BenchResult& r) {
    json steps = json::array();
    for (const auto& s : r.steps) steps.push_back(toJson(s));
    return {{"config", toJson(r.config)},
            {"status", toString(r.status)},
            {"error", r.error},
            {"oom_bytes", r.oom_bytes},
            {"parameter_count", r.parameter_count},
            {"steps", std::move(steps)},
            {"forward", toJson(r.forward)},
            {"backward", toJson(r.backward)},
            {"optimizer", toJson(r.optimizer)},
            {"total", toJson(r.total)},
            {"peak_memory", r.peak_memory},
            {"environment", toJson(r.environment)}};
}

json toJson(const AttentionCell& c) {
    return {{"impl", toString(c.impl)},
            {"dtype", toString(c.dtype)},
            {"causal", c.causal},
            {"batch", c.batch},
            {"heads", c.heads},
            {"head_dim", c.head_dim},
            {"seq", c.seq},
            {"status", toString(c.status)},
            {"error", c.error},
            {"forward_ms", number(c.forward_ms)},
            {"backward_ms", number(c.backward_ms)},
            {"forward_backward_ms", number(c.forward_backward_ms)},
            {"forward_tflops", number(c.forward_tflops)},
            {"backward_tflops", number(c.backward_tflops)},
            {"forward_backward_tflops", number(c.forward_backward_tflops)},
            {"memory_before_backward", c.memory_before_backward},
            {"peak_memory", c.peak_memory},
            {"err_out", number(c.err_out)},
            {"err_grad", number(c.err_grad)},
            {"tolerance", number(c.tolerance)}};
}

AttentionCell attentionCellFromJson(const json& j) {
    requireObject(j, "");
    AttentionCell c;
    read(j, "", "impl", c.impl, toAttentionImpl);
    read(j, "", "dtype", c.dtype, toPrecision);
    read(j, "", "causal", c.causal, toBool);
    read(j, "", "batch", c.batch, kInt64);
    read(j, "", "heads", c.heads, kInt64);
    read(j, "", "head_dim", c.head_dim, kInt64);
    read(j, "", "seq", c.seq, kInt64);
    read(j, "", "status", c.status, toCellStatus);
    read(j, "", "error", c.error, toStr);
    read(j, "", "forward_ms", c.forward_ms, toDouble);
    read(j, "", "backward_ms", c.backward_ms, toDouble);
    read(j, "", "forward_backward_ms", c.forward_backward_ms, toDouble);
    read(j, "", "forward_tflops", c.forward_tflops, toDouble);
    read(j, "", "backward_tflops", c.backward_tflops, toDouble);
    read(j, "", "forward_backward_tflops", c.forward_backward_tflops, toDouble);
    read(j, "", "memory_before_backward", c.memory_before_backward, kInt64);
    read(j, "", "peak_memory", c.peak_memory, kInt64);
    read(j, "", "err_out", c.err_out, toDouble);
    read(j, "", "err_grad", c.err_grad, toDouble);
    read(j, "", "tolerance", c.tolerance, toDouble);
    return c;
}

ModelConfig modelFromJson(const json& j) { return modelFrom(j, "", true); }
BenchConfig benchFromJson(const json& j) { return benchFrom(j, "", true); }
StepSample stepFromJson(const json& j) { return stepFrom(j, ""); }
Stats statsFromJson(const json& j) { return statsFrom(j, ""); }
Environment environmentFromJson(const json& j) { return environmentFrom(j, ""); }

BenchResult resultFromJson(const json& j) {
    requireObject(j, "");
    BenchResult r;
    if (auto it = j.find("config"); it != j.end()) r.config = benchFrom(*it, "config", false);
    read(j, "", "status", r.status, [](const json& v, std::string_view f) {
        return toEnum(v, f, kRunStatuses, parseRunStatus);
    });
    read(j, "", "error", r.error, toStr);
    read(j, "", "oom_bytes", r.oom_bytes, kInt64);
    read(j, "", "parameter_count", r.parameter_count, kInt64);
    if (auto it = j.find("steps"); it != j.end()) {
        if (!it->is_array()) fail("steps", "expected a list, got " + shown(*it));
        for (size_t i = 0; i < it->size(); ++i)
            r.steps.push_back(stepFrom((*it)[i], fmt::format("steps[{}]", i)));
    }
    if (auto it = j.find("forward"); it != j.end()) r.forward = statsFrom(*it, "forward");
    if (auto it = j.find("backward"); it != j.end()) r.backward = statsFrom(*it, "backward");
    if (auto it = j.find("optimizer"); it != j.end()) r.optimizer = statsFrom(*it, "optimizer");
    if (auto it = j.find("total"); it != j.end()) r.total = statsFrom(*it, "total");
    read(j, "", "peak_memory", r.peak_memory, kInt64);
    if (auto it = j.find("environment"); it != j.end())
        r.environment = environmentFrom(*it, "environment");
    return r;
}

SweepSpec sweepFromJson(const json& j) {
    requireObject(j, "");
    rejectUnknown(j, "", {"base", "sizes", "context_lengths", "batch_sizes", "precisions",
                          "attentions", "modes", "warmups", "devices"});
    SweepSpec s;
    if (auto it = j.find("base"); it != j.end()) s.base = benchFrom(*it, "base", true);
    readList(j, "sizes", s.sizes,
             [](const json& v, std::string_view f) { return toSize(v, f, true); });
    readList(j, "context_lengths", s.context_lengths, kInt64);
    readList(j, "batch_sizes", s.batch_sizes, kInt64);
    readList(j, "precisions", s.precisions, toPrecision);
    readList(j, "attentions", s.attentions, toAttention);
    readList(j, "modes", s.modes, toMode);
    readList(j, "warmups", s.warmups, kInt);
    readList(j, "devices", s.devices, toStr);
    return s;
}

}  // namespace ts
