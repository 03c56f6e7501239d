#include "common/metatypes.h"

namespace ts::ui {

void registerMetaTypes() {
    qRegisterMetaType<ts::BenchConfig>();
    qRegisterMetaType<ts::StepSample>();
    qRegisterMetaType<QList<ts::StepSample>>();
    qRegisterMetaType<ts::BenchResult>();
    qRegisterMetaType<ts::Environment>();
    qRegisterMetaType<ts::RunInfo>();
    qRegisterMetaType<ts::Capabilities>();
}

}  // namespace ts::ui
