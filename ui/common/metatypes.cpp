#include "common/metatypes.h"

namespace ts::ui {

void registerMetaTypes() {
    qRegisterMetaType<ts::Environment>();
    qRegisterMetaType<ts::RunInfo>();
    qRegisterMetaType<ts::Capabilities>();
}

}  // namespace ts::ui
