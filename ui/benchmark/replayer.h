// Replays a stored run through the live views, step by step at its recorded pace (or
// faster), so a class can watch a GPU run on a laptop without one.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include "ui/benchmark/storedbenchrun.h"

namespace ts::ui {

class Replayer : public QObject {
    Q_OBJECT
public:
    explicit Replayer(QObject* parent = nullptr);

    // `speed`: multiple of the recorded pace; every step shows for at least `minStepMs`.
    void start(StoredBenchRun run, double speed = 1.0, double minStepMs = 40.0);
    void stop();
    bool isActive() const { return timer_.isActive(); }
    const StoredBenchRun& run() const { return run_; }

Q_SIGNALS:
    void pointStarted(int index, int count, const ts::PointConfig& config);
    void stepsArrived(int point, const QList<ts::StepSample>& steps);
    void pointFinished(int index, const ts::BenchResult& result);
    void progress(double fraction, double etaSeconds);
    void finished(bool stopped);

private:
    void tick();
    QTimer timer_;
    QElapsedTimer clock_;
    StoredBenchRun run_;
    double speed_ = 1, minStepMs_ = 40;
    size_t point_ = 0, step_ = 0;
    double due_ = 0;      // ms after start at which the next step shows
    double totalMs_ = 0;  // of the whole replay
    bool pointOpen_ = false;
};

}  // namespace ts::ui
