// The shared value types that travel through queued signals, so Qt must know them: the run's
// environment and record, and the training point and its steps (every lab that runs steps
// posts them). Each lab declares its own besides (benchmark/benchitems.h, ...).
#pragma once

#include <QList>
#include <QMetaType>

#include "core/point.h"
#include "core/store.h"
#include "runtime/environment.h"

Q_DECLARE_METATYPE(ts::Environment)
Q_DECLARE_METATYPE(ts::RunInfo)
Q_DECLARE_METATYPE(ts::Capabilities)
Q_DECLARE_METATYPE(ts::PointConfig)
Q_DECLARE_METATYPE(ts::StepSample)

namespace ts::ui {
// Registers the types above (and the lists of them) once; safe to call again.
void registerMetaTypes();
}  // namespace ts::ui
