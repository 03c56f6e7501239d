#include "ui/benchmark/replayer.h"

#include <algorithm>

namespace ts::ui {

Replayer::Replayer(QObject* parent) : QObject(parent) {
    timer_.setInterval(50);  // 20 Hz, the views' redraw rate
    connect(&timer_, &QTimer::timeout, this, &Replayer::tick);
}

void Replayer::start(StoredBenchRun run, double speed, double minStepMs) {
    stop();
    run_ = std::move(run);
    speed_ = speed > 0 ? speed : 1;
    minStepMs_ = std::max(0.0, minStepMs);
    point_ = step_ = 0;
    due_ = 0;
    pointOpen_ = false;
    totalMs_ = 0;
    for (const auto& p : run_.points)
        for (const auto& s : p.steps) totalMs_ += std::max(s.total_ms / speed_, minStepMs_);
    clock_.start();
    timer_.start();
    tick();
}

void Replayer::stop() {
    if (!timer_.isActive()) return;
    timer_.stop();
    Q_EMIT finished(true);
}

void Replayer::tick() {
    const double now = static_cast<double>(clock_.elapsed());
    const int count = static_cast<int>(run_.points.size());
    while (point_ < run_.points.size()) {
        const BenchResult& p = run_.points[point_];
        const int index = static_cast<int>(point_);
        if (!pointOpen_) {
            Q_EMIT pointStarted(index, count, p.config);
            pointOpen_ = true;
        }
        QList<StepSample> batch;
        while (step_ < p.steps.size() && due_ <= now) {
            batch.append(p.steps[step_]);
            due_ += std::max(p.steps[step_].total_ms / speed_, minStepMs_);
            ++step_;
        }
        if (!batch.isEmpty()) Q_EMIT stepsArrived(index, batch);
        if (step_ < p.steps.size()) break;  // the rest is not due yet
        Q_EMIT pointFinished(index, p);
        ++point_;
        step_ = 0;
        pointOpen_ = false;
    }
    const double fraction = totalMs_ > 0 ? std::min(1.0, now / totalMs_) : 1.0;
    Q_EMIT progress(point_ >= run_.points.size() ? 1.0 : fraction,
                    std::max(0.0, (totalMs_ - now) / 1000.0));
    if (point_ >= run_.points.size()) {
        timer_.stop();
        Q_EMIT finished(false);
    }
}

}  // namespace ts::ui
