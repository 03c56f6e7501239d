// The point's dimensions as data, and sweeps over them. See Note [point dimensions] in
// core/sweep.h.
#include "core/sweep.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/json.h"
#include "core/json_read.h"
#include "core/point_json.h"

namespace ts {

namespace {

template <typename E>
std::vector<std::string> namesOfAll(const std::vector<E>& all) {
    std::vector<std::string> out;
    for (E e : all) out.emplace_back(toString(e));
    return out;
}

template <typename E>
double indexOf(const std::vector<E>& all, E e) {
    return static_cast<double>(std::find(all.begin(), all.end(), e) - all.begin());
}

// A choice set from a name parseValue accepted (so the parse cannot fail).
template <typename E, typename Parse>
E choice(const std::string& s, Parse parse) {
    const auto e = parse(s);
    if (!e) throw std::invalid_argument(fmt::format("'{}' is not a value", s));
    return *e;
}

int64_t wholeNumber(const std::string& s) {
    int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size())
        throw std::invalid_argument(fmt::format("'{}' is not a whole number", s));
    return v;
}

constexpr int64_t kAnyInt = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

using K = DimensionDef::Kind;

std::vector<DimensionDef> makeDimensions() {
    std::vector<DimensionDef> d;
    // Context and batch take any whole number here: validatePoint says what is wrong with a
    // zero or a negative one, naming the field.
    d.push_back(
        {"size", "model size", "sizes", "--size",
         "Model size(s) from the course's table (--model-table), or custom", K::Choice, 0, 0,
         [] {
             auto names = modelPresetNames();
             names.push_back("custom");
             return names;
         },
         [](const PointConfig& c) { return c.model.name; },
         [](PointConfig& c, const std::string& s) {
             if (s == "custom") return;  // the base's own dimensions
             ModelConfig m = *modelPreset(s);
             m.context_length = c.model.context_length;
             m.vocab_size = c.model.vocab_size;
             m.rope_theta = c.model.rope_theta;
             c.model = m;
         },
         [](const PointConfig& c) { return static_cast<double>(parameterCount(c.model)); }});
    d.push_back(
        {"context", "context length", "context_lengths", "--context-length",
         "Context length(s): tokens per sequence", K::Integer, kAnyInt, kMaxInt, nullptr,
         [](const PointConfig& c) { return std::to_string(c.model.context_length); },
         [](PointConfig& c, const std::string& s) { c.model.context_length = wholeNumber(s); },
         [](const PointConfig& c) { return static_cast<double>(c.model.context_length); },
         [](const PointConfig& c) { return fmt::format("ctx {}", c.model.context_length); }});
    d.push_back({"batch", "batch size", "batch_sizes", "--batch-size",
                 "Batch size(s): sequences per step", K::Integer, kAnyInt, kMaxInt, nullptr,
                 [](const PointConfig& c) { return std::to_string(c.batch_size); },
                 [](PointConfig& c, const std::string& s) { c.batch_size = wholeNumber(s); },
                 [](const PointConfig& c) { return static_cast<double>(c.batch_size); },
                 [](const PointConfig& c) { return fmt::format("bs {}", c.batch_size); }, nullptr,
                 "batch_size"});
    d.push_back({"precision", "precision", "precisions", "--precision",
                 "Precision(s): autocast to bf16 or fp16 (fp16 training scales the loss), or fp32",
                 K::Choice, 0, 0, [] { return namesOfAll(allPrecisions()); },
                 [](const PointConfig& c) { return std::string(toString(c.precision)); },
                 [](PointConfig& c, const std::string& s) {
                     c.precision = choice<Precision>(s, parsePrecision);
                 },
                 [](const PointConfig& c) { return indexOf(allPrecisions(), c.precision); },
                 nullptr, nullptr, "precision"});
    d.push_back({"attention", "attention", "attentions", "--attention",
                 "Attention implementation(s)", K::Choice, 0, 0,
                 [] { return namesOfAll(allAttentionImpls()); },
                 [](const PointConfig& c) { return std::string(toString(c.attention)); },
                 [](PointConfig& c, const std::string& s) {
                     c.attention = choice<AttentionImpl>(s, parseAttentionImpl);
                 },
                 [](const PointConfig& c) { return indexOf(allAttentionImpls(), c.attention); },
                 nullptr, nullptr, "attention"});
    d.push_back({"mode", "mode", "modes", "--mode",
                 "What a step runs: forward, forward and backward, or the whole training step",
                 K::Choice, 0, 0, [] { return namesOfAll(allModes()); },
                 [](const PointConfig& c) { return std::string(toString(c.mode)); },
                 [](PointConfig& c, const std::string& s) { c.mode = choice<Mode>(s, parseMode); },
                 [](const PointConfig& c) { return indexOf(allModes(), c.mode); }, nullptr, nullptr,
                 "mode"});
    d.push_back(
        {"exec", "execution", "execs", "--exec",
         "eager, or compiled (forward, backward and optimizer each replayed as a CUDA graph; "
         "torch.compile for your code, with its reduce-overhead and max-autotune-no-cudagraphs "
         "modes)",
         K::Choice, 0, 0, [] { return namesOfAll(allExecModes()); },
         [](const PointConfig& c) { return std::string(toString(c.exec)); },
         [](PointConfig& c, const std::string& s) { c.exec = choice<ExecMode>(s, parseExecMode); },
         [](const PointConfig& c) { return indexOf(allExecModes(), c.exec); }, nullptr, nullptr,
         "exec", true});
    d.push_back(
        {"checkpoint", "checkpointing", "checkpoints", "--checkpoint",
         "Activation checkpointing of TrainScope's model: none, k (every k blocks a "
         "checkpoint), sqrt (every ⌈√layers⌉ blocks) or nested (halved recursively)",
         K::Text, 0, 0, nullptr, [](const PointConfig& c) { return toString(c.checkpoint); },
         [](PointConfig& c, const std::string& s) { c.checkpoint = *parseCheckpointing(s); },
         [](const PointConfig& c) {
             // Less memory further right: none, every k (fewer blocks a segment keep
             // less), sqrt, nested.
             switch (c.checkpoint.kind) {
                 case Checkpointing::Kind::None:
                     return 0.0;
                 case Checkpointing::Kind::Every:
                     return 1.0 + 1.0 / c.checkpoint.every;
                 case Checkpointing::Kind::Sqrt:
                     return 2.5;
                 case Checkpointing::Kind::Nested:
                     return 3.0;
             }
             return 0.0;
         },
         [](const PointConfig& c) {
             return c.checkpoint.kind == Checkpointing::Kind::None
                        ? std::string("no checkpoints")
                        : "ckpt " + toString(c.checkpoint);
         },
         [](std::string_view text) {
             const auto c = parseCheckpointing(text);
             if (!c)
                 throw std::invalid_argument(
                     fmt::format("'{}' is not none, a number of blocks (1 to {}), sqrt or nested",
                                 text, kMaxCheckpointEvery));
             return toString(*c);
         },
         "checkpoint", true,
         [](const PointConfig& c) -> std::string {
             if (c.checkpoint.kind == Checkpointing::Kind::None || c.source != Source::Python)
                 return {};
             return "checkpointing applies to TrainScope's model; your code checkpoints itself "
                    "(use --checkpoint none with --source python)";
         }});
    d.push_back(
        {"loss", "LM head and loss", "losses", "--loss",
         "The LM head and cross-entropy of TrainScope's model: logits (the batch × context × "
         "vocabulary logits made whole, then the loss) or fused (in chunks of the tokens, the "
         "logits never whole: their memory saved for a second LM head in backward)",
         K::Choice, 0, 0,
         [] {
             return std::vector<std::string>{"logits", "fused"};
         },
         [](const PointConfig& c) { return std::string(c.fused_loss ? "fused" : "logits"); },
         [](PointConfig& c, const std::string& s) { c.fused_loss = s == "fused"; },
         [](const PointConfig& c) { return c.fused_loss ? 1.0 : 0.0; },
         [](const PointConfig& c) {
             return std::string(c.fused_loss ? "fused loss" : "whole logits");
         },
         nullptr, "loss", true,
         [](const PointConfig& c) -> std::string {
             if (!c.fused_loss) return {};
             if (c.source == Source::Python)
                 return "the fused LM head and loss is TrainScope's; your code computes its own "
                        "logits (use --loss logits with --source python)";
             if (c.exec == ExecMode::Compiled)
                 return "compiled mode captures the whole logits' loss; use the eager mode with "
                        "--loss fused";
             return {};
         }});
    d.push_back(
        {"source",
         "code",
         "sources",
         "--source",
         "Whose model: TrainScope's, your Python code (--code), or both to compare",
         K::Choice,
         0,
         0,
         [] { return namesOfAll(allSources()); },
         [](const PointConfig& c) { return std::string(toString(c.source)); },
         [](PointConfig& c, const std::string& s) { c.source = choice<Source>(s, parseSource); },
         [](const PointConfig& c) { return indexOf(allSources(), c.source); },
         [](const PointConfig& c) {
             return std::string(c.source == Source::Python ? "your code" : "TrainScope");
         },
         nullptr,
         {},
         true});
    d.push_back(
        {"warmup", "warm-up steps", "warmups", "--warmup",
         "Warm-up steps, run but left out of the statistics", K::Integer, 0, kMaxSteps, nullptr,
         [](const PointConfig& c) { return std::to_string(c.warmup); },
         [](PointConfig& c, const std::string& s) { c.warmup = static_cast<int>(wholeNumber(s)); },
         [](const PointConfig& c) { return static_cast<double>(c.warmup); },
         [](const PointConfig& c) { return fmt::format("warm-up {}", c.warmup); }, nullptr,
         "warmup"});
    // Measured steps are the base's: a sweep over them would time the same step again.
    d.push_back(
        {"steps", "measured steps", "", "--steps", "Measured steps", K::Integer, 1, kMaxSteps,
         nullptr, [](const PointConfig& c) { return std::to_string(c.steps); },
         [](PointConfig& c, const std::string& s) { c.steps = static_cast<int>(wholeNumber(s)); },
         [](const PointConfig& c) { return static_cast<double>(c.steps); },
         [](const PointConfig& c) { return fmt::format("steps {}", c.steps); }, nullptr, "steps"});
    d.push_back({"device", "device", "devices", "--device", "cpu, cuda or cuda:N", K::Text, 0, 0,
                 nullptr, [](const PointConfig& c) { return c.device; },
                 [](PointConfig& c, const std::string& s) { c.device = s; },
                 [](const PointConfig&) { return 0.0; }, nullptr, nullptr, "device"});
    return d;
}

}  // namespace

const std::vector<DimensionDef>& pointDimensions() {
    static const std::vector<DimensionDef> dims = makeDimensions();
    return dims;
}

const DimensionDef& dimensionDef(Dimension d) {
    for (const auto& def : pointDimensions())
        if (def.key == d.key()) return def;
    throw std::logic_error(fmt::format("no row of pointDimensions() has the key '{}'", d.key()));
}

const DimensionDef* findDimension(std::string_view key) {
    for (const auto& def : pointDimensions())
        if (def.key == key || (!def.list_key.empty() && def.list_key == key)) return &def;
    return nullptr;
}

std::string parseValue(const DimensionDef& d, std::string_view text, ModelTable table) {
    const std::string s(text);
    switch (d.kind) {
        case K::Integer: {
            const int64_t v = wholeNumber(s);
            if (v < d.min || v > d.max)
                throw std::invalid_argument(fmt::format("{} is outside [{}, {}]", v, d.min, d.max));
            return std::to_string(v);
        }
        case K::Choice: {
            const std::string v = d.id() == Dimension::Size ? presetName(s, table) : s;
            const auto all = d.choices();
            if (std::find(all.begin(), all.end(), v) == all.end())
                throw std::invalid_argument(
                    fmt::format("'{}' is not one of {}", s, fmt::join(all, ", ")));
            return v;
        }
        case K::Text:
            return d.canonical ? d.canonical(s) : s;
    }
    return s;
}

std::string dimensionLabel(const DimensionDef& d, const PointConfig& c) {
    return d.label ? d.label(c) : d.get(c);
}

const std::vector<std::string>& SweepSpec::operator[](Dimension d) const {
    static const std::vector<std::string> none;
    const auto it = values.find(d);
    return it == values.end() ? none : it->second;
}

size_t sweepPointCount(const SweepSpec& spec) {
    size_t n = 1;
    for (const auto& [dim, list] : spec.values)
        if (__builtin_mul_overflow(n, std::max<size_t>(list.size(), 1), &n))
            return SIZE_MAX;  // an empty list is the base value
    return n;
}

std::vector<PointConfig> expandSweep(const SweepSpec& spec) {
    if (const size_t n = sweepPointCount(spec); n > kMaxSweepPoints)
        throw std::invalid_argument(fmt::format(
            "the sweep has {} points, more than the limit of {}; split it",
            n == SIZE_MAX ? std::string("too many") : std::to_string(n), kMaxSweepPoints));
    // Each dimension's values, checked before anything is expanded.
    struct Axis {
        const DimensionDef* def;
        std::vector<std::string> values;
    };
    std::vector<Axis> axes;
    for (const auto& def : pointDimensions()) {
        const auto& list = spec[def.id()];
        if (list.empty()) continue;
        Axis a{&def, {}};
        for (const auto& v : list) {
            try {
                a.values.push_back(parseValue(def, v, spec.table));
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(fmt::format("{}: {}", def.list_key, e.what()));
            }
        }
        axes.push_back(std::move(a));
    }
    // An odometer over the axes, the last one turning fastest.
    std::vector<PointConfig> points;
    std::vector<size_t> at(axes.size(), 0);
    while (true) {
        PointConfig c = spec.base;
        for (size_t i = 0; i < axes.size(); ++i) axes[i].def->set(c, axes[i].values[at[i]]);
        points.push_back(std::move(c));
        size_t i = axes.size();
        while (i > 0 && ++at[i - 1] == axes[i - 1].values.size()) at[--i] = 0;
        if (i == 0) break;
    }
    return points;
}

using namespace jsonio;

SweepSpec sweepFromJson(const json& j) {
    requireObject(j, "");
    // "points" and "command" are what a stored run's spec adds, so that it can be run again as
    // a sweep file.
    std::vector<std::string_view> known = {"base", "points", "command", "model_table"};
    for (const auto& def : pointDimensions())
        if (!def.list_key.empty()) known.push_back(def.list_key);
    rejectUnknown(j, "", known);
    if (auto it = j.find("command"); it != j.end() && *it != "bench")
        fail("command", "this is the spec of a " + shown(*it) + " run, not a benchmark sweep");
    SweepSpec s;
    if (auto it = j.find("model_table"); it != j.end()) {
        const auto t = it->is_string() ? parseModelTable(it->get<std::string>()) : std::nullopt;
        if (!t) fail("model_table", "expected \"2026\" or \"2025\", got " + shown(*it));
        s.table = *t;
    } else if (j.contains("points")) {
        // A run stored before the two tables (see Note [two model tables]): its sizes are 2025's.
        s.table = ModelTable::Edition2025;
    }
    if (auto it = j.find("base"); it != j.end()) s.base = pointFromJson(*it, "base", true);
    for (const auto& def : pointDimensions()) {
        if (def.list_key.empty()) continue;
        const std::string key(def.list_key);
        auto it = j.find(key);
        if (it == j.end()) continue;
        if (!it->is_array()) fail(key, "expected a list, got " + shown(*it));
        auto& out = s[def.id()];
        for (size_t i = 0; i < it->size(); ++i) {
            const json& v = (*it)[i];
            const std::string field = fmt::format("{}[{}]", key, i);
            std::string text;
            if (def.kind == K::Integer)
                text = std::to_string(toInt(v, field, def.min, def.max));
            else
                text = toStr(v, field);
            try {
                out.push_back(parseValue(def, text, s.table));
            } catch (const std::invalid_argument& e) {
                fail(field, e.what());
            }
        }
    }
    return s;
}

json sweepToJson(const SweepSpec& s) {
    json j = {{"base", toJson(s.base)}, {"model_table", toString(s.table)}};
    for (const auto& def : pointDimensions()) {
        if (def.list_key.empty()) continue;
        json list = json::array();
        for (const auto& v : s[def.id()]) {
            if (def.kind == K::Integer)
                list.push_back(std::stoll(v));
            else
                list.push_back(v);
        }
        j[std::string(def.list_key)] = std::move(list);
    }
    return j;
}

}  // namespace ts
