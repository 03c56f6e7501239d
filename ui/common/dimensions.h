// The dimensions a training point varies along (size, context, precision, ...) as the window
// shows them: the point's table (see Note [point dimensions], core/sweep.h) in Qt's strings, and
// which of them vary in a sweep. The speedup table, the sweep chart, the comparison and the
// exports all key their rows on these.
#pragma once

#include <QString>
#include <optional>
#include <vector>

#include "core/sweep.h"

namespace ts::ui {

const std::vector<Dimension>& allDimensions();
QString dimensionName(Dimension d);  // "precision"
QString dimensionKey(Dimension d);   // "precision" (stable, for settings and presets)
std::optional<Dimension> dimensionFromKey(const QString& key);
QString dimensionValue(Dimension d, const PointConfig& c);  // "bf16", "256", "tiny"
QString dimensionLabel(Dimension d, const PointConfig& c);  // "ctx 256", "bs 4", "bf16"
// A number to order and plot by: parameters for size, the value for numeric dimensions,
// the enum order otherwise.
double dimensionNumber(Dimension d, const PointConfig& c);
bool isNumericDimension(Dimension d);

// The dimensions along which `points` take two or more values, in sweep order.
std::vector<Dimension> varyingDimensions(const std::vector<PointConfig>& points);
// The distinct values of `d` in `points`, in order of first appearance.
QStringList dimensionValues(const std::vector<PointConfig>& points, Dimension d);
// A key for a point that ignores the dimensions in `except`; equal keys = same row.
QString pointKey(const PointConfig& c, const std::vector<Dimension>& except = {});
// The label of a point over the `dims` only ("fp32 · naive"); "all" when `dims` is empty.
QString labelOver(const PointConfig& c, const std::vector<Dimension>& dims);

}  // namespace ts::ui
