// The engine's value types travel through queued signals, so Qt must know them.
#pragma once

#include <QList>
#include <QMetaType>

#include "core/config.h"
#include "runtime/environment.h"
#include "benchmark/benchmark.h"
#include "core/store.h"

Q_DECLARE_METATYPE(ts::BenchConfig)
Q_DECLARE_METATYPE(ts::StepSample)
Q_DECLARE_METATYPE(ts::BenchResult)
Q_DECLARE_METATYPE(ts::Environment)
Q_DECLARE_METATYPE(ts::RunInfo)
Q_DECLARE_METATYPE(ts::Capabilities)

namespace ts::ui {
// Registers the types above (and the lists of them) once; safe to call again.
void registerMetaTypes();
}  // namespace ts::ui
