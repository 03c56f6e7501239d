// A row of check boxes, one per enum value, in a flat group box: how the experiment panels
// offer a multi-select field (ticking several values sweeps over them).
#pragma once

#include <QCheckBox>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QMap>

#include "ui/common/format.h"

namespace ts::ui {

template <typename E, typename Values>
QGroupBox* makeCheckRow(QWidget* parent, const Values& values, QMap<E, QCheckBox*>& boxes) {
    auto* group = new QGroupBox(parent);
    group->setFlat(true);
    auto* row = new QHBoxLayout(group);
    row->setContentsMargins(0, 0, 0, 0);
    for (E v : values) {
        auto* cb = new QCheckBox(qstr(toString(v)), group);
        boxes.insert(v, cb);
        row->addWidget(cb);
    }
    row->addStretch();
    return group;
}

}  // namespace ts::ui
