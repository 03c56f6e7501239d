#include "ui/benchmark/benchitems.h"

#include <QVariant>

namespace ts::ui {

void BenchItemForwarder::pointStarted(int index, int count, const PointConfig& config) {
    out_.item(QVariant::fromValue(BenchPointStarted{index, count, config}));
}

void BenchItemForwarder::stepFinished(int index, const StepSample& sample) {
    out_.item(QVariant::fromValue(BenchStep{index, sample}));
}

void BenchItemForwarder::pointFinished(int index, const BenchResult& result) {
    out_.item(QVariant::fromValue(BenchPointFinished{index, result}));
}

}  // namespace ts::ui
