// The item roles the window's models share with its exports.
// See Note [tables other programs read] in engine/src/core/table.h.
#pragma once

#include <Qt>

namespace ts::ui {

// The raw number behind a cell (ms, bytes, a count), in the unit its column's CSV header names:
// what a CSV and the clipboard write. Every model of the window answers it where it has one.
inline constexpr int kValueRole = Qt::UserRole + 1;
// headerData's: a column's CSV header, snake_case with the raw value's unit
// ("peak_memory_bytes"), where the header for people names another unit ("Peak MiB"). A model
// that does not answer it gets csvName() of its header.
inline constexpr int kCsvHeaderRole = Qt::UserRole + 2;

}  // namespace ts::ui
