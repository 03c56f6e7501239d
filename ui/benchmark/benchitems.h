// The benchmark's items: what its job posts through the run controller (JobObserver::item)
// and its view takes, in order. Steps are items too; the view groups them per point.
#pragma once

#include <QMetaType>

#include "benchmark/benchmark.h"
#include "ui/common/metatypes.h"
#include "ui/common/runcontroller.h"

namespace ts::ui {

struct BenchPointStarted {
    int index = 0, count = 0;
    PointConfig config;
};
struct BenchStep {
    int point = 0;
    StepSample sample;
};
struct BenchPointFinished {
    int index = 0;
    BenchResult result;
};

// The engine's benchmark observer as a job's items, progress and log.
class BenchItemForwarder final : public BenchObserver {
public:
    explicit BenchItemForwarder(JobObserver& out) : out_(out) {}
    void pointStarted(int index, int count, const PointConfig& config) override;
    void stepFinished(int index, const StepSample& sample) override;
    void pointFinished(int index, const BenchResult& result) override;
    void progress(double fraction, double eta_seconds) override {
        out_.progress(fraction, eta_seconds);
    }
    void log(LogLevel level, const std::string& message) override { out_.log(level, message); }

private:
    JobObserver& out_;
};

}  // namespace ts::ui

Q_DECLARE_METATYPE(ts::BenchResult)
Q_DECLARE_METATYPE(ts::ui::BenchPointStarted)
Q_DECLARE_METATYPE(ts::ui::BenchStep)
Q_DECLARE_METATYPE(ts::ui::BenchPointFinished)
