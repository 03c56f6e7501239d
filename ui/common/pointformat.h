// The benchmark's configurations as text for people: a point, a sweep, and as JSON.
#pragma once

#include <QString>
#include <initializer_list>
#include <vector>

#include "benchmark/benchmark.h"

namespace ts::ui {

// One line naming every value of a point.
QString describeConfig(const PointConfig& c);
// The same without some dimensions: what a lab sets on its own (the profiler's steps).
QString describeConfig(const PointConfig& c, std::initializer_list<Dimension> leaveOut);
// One line for a whole sweep: each dimension with its values, in sweep order.
QString describeSweep(const std::vector<PointConfig>& points);
// Whether a point's run records device memory: CUDA devices do, the CPU records none (its
// memory figures are 0, not a measurement).
bool measuresDeviceMemory(const PointConfig& c);
// The points' configurations as JSON, for a report's appendix.
QString configurationJson(const std::vector<PointConfig>& points);

}  // namespace ts::ui
