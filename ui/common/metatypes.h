// The shared value types that travel through queued signals, so Qt must know them. Each lab
// declares its own (benchmark/benchitems.h, ...).
#pragma once

#include <QList>
#include <QMetaType>

#include "core/store.h"
#include "runtime/environment.h"

Q_DECLARE_METATYPE(ts::Environment)
Q_DECLARE_METATYPE(ts::RunInfo)
Q_DECLARE_METATYPE(ts::Capabilities)

namespace ts::ui {
// Registers the types above (and the lists of them) once; safe to call again.
void registerMetaTypes();
}  // namespace ts::ui
