#include "ui/common/metatypes.h"

namespace ts::ui {

void registerMetaTypes() {
    qRegisterMetaType<ts::Environment>();
    qRegisterMetaType<ts::RunInfo>();
    qRegisterMetaType<ts::Capabilities>();
    qRegisterMetaType<ts::PointConfig>();
    qRegisterMetaType<ts::StepSample>();
}

}  // namespace ts::ui
