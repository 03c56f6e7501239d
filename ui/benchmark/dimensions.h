// The dimensions a benchmark point varies along (size, context, precision, ...): one place
// that names them, reads them from a config and says which vary in a sweep. The speedup
// table, the sweep chart, the comparison and the exports all key their rows on these.
#pragma once

#include <QString>
#include <optional>
#include <vector>

#include "benchmark/benchmark.h"

namespace ts::ui {

enum class Dimension {
    Size,
    Context,
    Batch,
    Precision,
    Attention,
    Mode,
    Exec,
    Source,
    Warmup,
    Steps,
    Device
};

const std::vector<Dimension>& allDimensions();
QString dimensionName(Dimension d);  // "precision"
QString dimensionKey(Dimension d);   // "precision" (stable, for settings and presets)
std::optional<Dimension> dimensionFromKey(const QString& key);
QString dimensionValue(Dimension d, const BenchConfig& c);  // "bf16", "256", "tiny"
QString dimensionLabel(Dimension d, const BenchConfig& c);  // "ctx 256", "bs 4", "bf16"
// A number to order and plot by: parameters for size, the value for numeric dimensions,
// the enum order otherwise.
double dimensionNumber(Dimension d, const BenchConfig& c);
bool isNumericDimension(Dimension d);

// The dimensions along which `points` take two or more values, in sweep order.
std::vector<Dimension> varyingDimensions(const std::vector<BenchConfig>& points);
// The distinct values of `d` in `points`, in order of first appearance.
QStringList dimensionValues(const std::vector<BenchConfig>& points, Dimension d);
// A key for a point that ignores the dimensions in `except`; equal keys = same row.
QString pointKey(const BenchConfig& c, const std::vector<Dimension>& except = {});
// The label of a point over the `dims` only ("fp32 · naive"); "all" when `dims` is empty.
QString labelOver(const BenchConfig& c, const std::vector<Dimension>& dims);

}  // namespace ts::ui
