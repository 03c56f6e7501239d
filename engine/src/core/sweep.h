// A training point's dimensions as data, and sweeps over them.
//
// Note [point dimensions]: every dimension a training point varies along (size, context,
// batch, precision, attention, mode, execution mode, source, warm-up, steps, device) is one row
// of pointDimensions(): its key, its name for people, its sweep-file list, its CLI flag, its
// kind (a whole number in a range, a choice, free text), how to read it from a point and set
// it, and its chart label. The CLI's flags, the sweep file and a stored run's spec, the sweep's
// expansion, the point's JSON, the reports' columns, and the window's dimension lists, tables,
// charts and comparisons all read this table: a new dimension is its field in PointConfig
// (core/point.h, with its value type where it needs one), its row in sweep.cpp (its values, what
// they cannot run with) and what honours it in the engine; nothing else names it.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/point.h"

namespace ts {

// A dimension, known by its row's key ("precision"): a row needs nothing here, so a new
// dimension is its row alone. The named ones are those that code singles out (the CLI's --size,
// the charts' preferred axes); each has its row (tst_config checks).
class Dimension {
public:
    explicit constexpr Dimension(std::string_view key) : key_(key) {}
    constexpr std::string_view key() const { return key_; }
    friend constexpr bool operator==(Dimension a, Dimension b) { return a.key_ == b.key_; }
    friend constexpr auto operator<=>(Dimension a, Dimension b) { return a.key_ <=> b.key_; }

    static const Dimension Size, Context, Batch, Precision, Attention, Mode, Exec, Checkpoint,
        Source, Warmup, Steps, Device;

private:
    std::string_view key_;  // a row's key: static text
};
inline constexpr Dimension Dimension::Size{"size"};
inline constexpr Dimension Dimension::Context{"context"};
inline constexpr Dimension Dimension::Batch{"batch"};
inline constexpr Dimension Dimension::Precision{"precision"};
inline constexpr Dimension Dimension::Attention{"attention"};
inline constexpr Dimension Dimension::Mode{"mode"};
inline constexpr Dimension Dimension::Exec{"exec"};
inline constexpr Dimension Dimension::Checkpoint{"checkpoint"};
inline constexpr Dimension Dimension::Source{"source"};
inline constexpr Dimension Dimension::Warmup{"warmup"};
inline constexpr Dimension Dimension::Steps{"steps"};
inline constexpr Dimension Dimension::Device{"device"};

struct DimensionDef {
    enum class Kind { Integer, Choice, Text };
    std::string_view key;       // "precision": the dimension's name in code, settings, presets,
                                // a report's column
    std::string_view name;      // "precision": for people (headers, legends)
    std::string_view list_key;  // "precisions": the sweep file's list; empty: not swept
    std::string_view flag;      // "--precision": the CLI option (a comma-separated list sweeps)
    std::string_view help;      // what it is, for the CLI's help and the window's tooltips
    Kind kind = Kind::Text;
    int64_t min = 0, max = 0;                          // Integer: the values accepted
    std::vector<std::string> (*choices)() = nullptr;   // Choice: every value, in display order
    std::string (*get)(const PointConfig&) = nullptr;  // the point's value as text
    void (*set)(PointConfig&, const std::string&) = nullptr;  // a value parseValue accepted
    // A number to order and plot by: parameters for the size, the value of a whole number, a
    // choice's index.
    double (*number)(const PointConfig&) = nullptr;
    // The value in a chart's legend ("ctx 256", "your code"); nullptr: the value alone.
    std::string (*label)(const PointConfig&) = nullptr;
    // Text: the value as kept ("nested"), or std::invalid_argument saying what is accepted;
    // nullptr: any text (checked by validatePoint).
    std::string (*canonical)(std::string_view) = nullptr;
    // The point's JSON field (core/point_json.h) that holds it; empty where point_json writes
    // it itself (the size and context inside "model", the source only where it is the user's).
    std::string_view json_key = {};
    // A point's description leaves the default point's value out ("eager" is said by its
    // absence).
    bool unsaid_default = false;
    // Why this dimension's value cannot run with the rest of the point (validatePoint says it),
    // or empty; nullptr: any value that parses can.
    std::string (*problem)(const PointConfig&) = nullptr;

    Dimension id() const { return Dimension(key); }
};

// Every dimension, in sweep nesting order.
const std::vector<DimensionDef>& pointDimensions();
const DimensionDef& dimensionDef(Dimension d);
// By key ("precision") or list key ("precisions").
const DimensionDef* findDimension(std::string_view key);
// The value as the table keeps it ("custom" and the current table's names for sizes: "xl" of
// the 2025 table is "xl-2025"), or std::invalid_argument saying what is accepted.
std::string parseValue(const DimensionDef& d, std::string_view text,
                       ModelTable table = kDefaultModelTable);
// The value in a chart's legend: "ctx 256", "bf16", "your code".
std::string dimensionLabel(const DimensionDef& d, const PointConfig& c);

inline constexpr size_t kMaxSweepPoints = 10'000;  // points of one sweep

// A sweep: every combination of each swept dimension's values, nested in table order. A
// dimension without values keeps the base's; a size of "custom" keeps the base's model.
struct SweepSpec {
    PointConfig base;
    // Which edition's table the sizes name (see Note [two model tables]): "xl" in 2025 is xl-2025.
    ModelTable table = kDefaultModelTable;
    // Each swept dimension's values as parseValue keeps them, in the order given.
    std::map<Dimension, std::vector<std::string>> values;

    std::vector<std::string>& operator[](Dimension d) { return values[d]; }
    const std::vector<std::string>& operator[](Dimension d) const;
};

// The number of points the sweep expands to (saturating at SIZE_MAX).
size_t sweepPointCount(const SweepSpec& spec);
// Expands a sweep into its points. Throws std::invalid_argument naming a value that does not
// parse, or a sweep of more than kMaxSweepPoints points (counted before anything is expanded).
std::vector<PointConfig> expandSweep(const SweepSpec& spec);

// A sweep file: {"base": {...the point's fields...}, "model_table": "2026", and each swept
// dimension's list by its list key ("sizes", "context_lengths", "precisions", ...)}; a stored
// run's spec adds "points" and "command" (which must be "bench": the other labs' specs have
// other shapes). Parsing throws std::invalid_argument naming the field.
SweepSpec sweepFromJson(const nlohmann::json& j);
nlohmann::json sweepToJson(const SweepSpec& s);

}  // namespace ts
