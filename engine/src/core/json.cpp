#include "core/json.h"

#include <set>

#include "core/json_read.h"

namespace ts {
namespace jsonio {

[[noreturn]] void fail(std::string_view field, std::string_view problem) {
    throw std::invalid_argument(fmt::format("{}: {}", field, problem));
}

namespace {
constexpr size_t kShownLength = 60;

// Compact JSON, as dump() writes it, that stops once `out` is long enough and does not
// descend below a few levels: the value may be huge or deep, the message needs its start.
void appendShown(const json& v, std::string& out, int depth) {
    if (out.size() > kShownLength) return;
    if (!v.is_structured()) {
        out += dumpJson(v);
        return;
    }
    const bool object = v.is_object();
    if (depth >= 4) {
        out += object ? "{...}" : "[...]";
        return;
    }
    out += object ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= kShownLength; ++it) {
        if (!first) out += ',';
        first = false;
        if (object) out += dumpJson(json(it.key())) + ':';
        appendShown(*it, out, depth + 1);
    }
    out += object ? '}' : ']';
}
}  // namespace

std::string shown(const json& v) {
    std::string s;
    appendShown(v, s, 0);
    if (s.size() > kShownLength) s = s.substr(0, kShownLength - 3) + "...";
    return s;
}

std::string join(std::string_view a, std::string_view b) {
    return a.empty() ? std::string(b) : fmt::format("{}.{}", a, b);
}

void requireObject(const json& j, std::string_view field) {
    if (!j.is_object())
        fail(field.empty() ? "(top level)" : field, "expected an object, got " + shown(j));
}

void rejectUnknown(const json& j, std::string_view prefix,
                   const std::vector<std::string_view>& known) {
    for (const auto& [key, value] : j.items()) {
        bool ok = false;
        for (auto k : known) ok = ok || key == k;
        if (!ok) fail(join(prefix, key), "unknown key");
    }
}

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
    if (v.is_number_integer())
        fail(field, fmt::format("expected a non-negative integer, got {}", shown(v)));
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

namespace {
template <typename E, typename Parse>
E toEnum(const json& v, std::string_view field, const std::vector<E>& all, Parse parse) {
    const std::string s = toStr(v, field);
    if (auto e = parse(s)) return *e;
    fail(field, fmt::format("'{}' is not one of {}", s, namesOf(all)));
}
}  // namespace

Mode toMode(const json& v, std::string_view f) { return toEnum(v, f, allModes(), parseMode); }
Precision toPrecision(const json& v, std::string_view f) {
    return toEnum(v, f, allPrecisions(), parsePrecision);
}
AttentionImpl toAttentionImpl(const json& v, std::string_view f) {
    return toEnum(v, f, allAttentionImpls(), parseAttentionImpl);
}
ExecMode toExecMode(const json& v, std::string_view f) {
    return toEnum(v, f, allExecModes(), parseExecMode);
}
Source toSource(const json& v, std::string_view f) {
    return toEnum(v, f, allSources(), parseSource);
}
Status toStatus(const json& v, std::string_view f) {
    return toEnum(v, f, allStatuses(), parseStatus);
}

std::string toSize(const json& v, std::string_view field, bool allow_custom) {
    const std::string s = toStr(v, field);
    if (modelPreset(s) || (allow_custom && s == "custom")) return s;
    std::string names;
    for (const auto& n : modelPresetNames()) names += (names.empty() ? "" : ", ") + n;
    if (allow_custom) names += ", custom";
    fail(field, fmt::format("'{}' is not one of {}", s, names));
}

void readModelFields(const json& j, std::string_view prefix, ModelConfig& m) {
    read(j, prefix, "vocab_size", m.vocab_size, kInt64);
    read(j, prefix, "context_length", m.context_length, kInt64);
    read(j, prefix, "d_model", m.d_model, kInt64);
    read(j, prefix, "d_ff", m.d_ff, kInt64);
    read(j, prefix, "num_layers", m.num_layers, kInt64);
    read(j, prefix, "num_heads", m.num_heads, kInt64);
    read(j, prefix, "rope_theta", m.rope_theta, toDouble);
}

ModelConfig presetWithOverrides(const json& j, std::string_view prefix, const std::string& size) {
    ModelConfig m = *modelPreset(size);
    const ModelConfig preset = m;
    readModelFields(j, prefix, m);
    if (m.d_model != preset.d_model || m.d_ff != preset.d_ff || m.num_layers != preset.num_layers ||
        m.num_heads != preset.num_heads)
        m.name = "custom";
    return m;
}

ModelConfig modelFrom(const json& j, std::string_view prefix, bool strict) {
    requireObject(j, prefix);
    if (strict) {
        rejectUnknown(j, prefix,
                      {"name", "size", "vocab_size", "context_length", "d_model", "d_ff",
                       "num_layers", "num_heads", "rope_theta"});
    }
    ModelConfig m;
    if (auto it = j.find("size"); it != j.end())
        m = presetWithOverrides(j, prefix, toSize(*it, join(prefix, "size"), false));
    else
        readModelFields(j, prefix, m);
    read(j, prefix, "name", m.name, toStr);
    m.name = canonicalPresetName(m);  // see Note [two model tables]: the 2025 xl stored as "xl"
    return m;
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

}  // namespace jsonio

using nlohmann::json;
using namespace jsonio;

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

json toJson(const Stats& s) {
    return {{"count", s.count},           {"mean", number(s.mean)}, {"std", number(s.std)},
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

json parseJson(std::string_view text) {
    // Brackets inside strings do not nest; a backslash escapes the next character there.
    int depth = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth)
                throw std::invalid_argument(fmt::format(
                    "nested more than {} levels deep (at byte {})", kMaxJsonDepth, i + 1));
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    // Text past a NUL would be ignored by some readers and not others: no JSON has one.
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
        throw std::invalid_argument(fmt::format("a NUL byte at byte {}: not JSON text", nul + 1));
    // A key given twice in one object would silently take its last value: refused, named.
    std::vector<std::set<std::string>> keys;
    const json::parser_callback_t refuseDuplicates = [&keys](int, json::parse_event_t event,
                                                             json& parsed) {
        if (event == json::parse_event_t::object_start) {
            keys.emplace_back();
        } else if (event == json::parse_event_t::object_end) {
            if (!keys.empty()) keys.pop_back();
        } else if (event == json::parse_event_t::key && !keys.empty()) {
            const auto& key = parsed.get_ref<const std::string&>();
            if (!keys.back().insert(key).second)
                throw std::invalid_argument(
                    fmt::format("the key \"{}\" is given twice in one object", key));
        }
        return true;
    };
    return json::parse(text, refuseDuplicates);
}

std::string dumpJson(const json& j, int indent) {
    return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

ModelConfig modelFromJson(const json& j) { return modelFrom(j, "", true); }
Stats statsFromJson(const json& j) { return statsFrom(j, ""); }
Environment environmentFromJson(const json& j) { return environmentFrom(j, ""); }

json parseJsonOrDiscarded(std::string_view text) {
    try {
        return parseJson(text);
    } catch (const std::exception&) {
        return json(json::value_t::discarded);
    }
}

}  // namespace ts
