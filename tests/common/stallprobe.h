// Measures how long the UI thread goes without returning to its event loop: a 5 ms timer
// records each gap between its ticks. A gap has three parts: the UI thread working, waiting
// in the event loop, and waiting for a CPU while other threads hold them. The last is the
// operating system's doing, not a stall of the UI thread, and on a busy machine it alone can
// exceed 50 ms; Linux reports it per thread in schedstat, so it is taken out of each gap.
#pragma once

#include <QElapsedTimer>
#include <QFile>
#include <QTimer>
#include <algorithm>
#include <vector>

class StallProbe {
public:
    StallProbe() {
        timer_.setTimerType(Qt::PreciseTimer);
        timer_.setInterval(5);
        QObject::connect(&timer_, &QTimer::timeout, [this] { tick(); });
    }
    void start() {
        lastWaitNs_ = runQueueWaitNs();
        clock_.start();
        timer_.start();
    }
    void stop() { timer_.stop(); }

    qint64 elapsedMs() const { return clock_.elapsed(); }
    qint64 ticks() const { return ticks_; }
    qint64 worstGapNs() const { return worstGapNs_; }
    // The UI thread's own share of each gap, in ns.
    const std::vector<qint64>& stalls() const { return stalls_; }
    qint64 worstStallNs() const {
        return stalls_.empty() ? 0 : *std::max_element(stalls_.begin(), stalls_.end());
    }

private:
    // Nanoseconds this thread has waited on a run queue (ready, but no CPU free); -1 if unknown.
    static qint64 runQueueWaitNs() {
        QFile f(QStringLiteral("/proc/thread-self/schedstat"));
        if (!f.open(QIODevice::ReadOnly)) return -1;
        const QList<QByteArray> fields = f.readAll().simplified().split(' ');
        return fields.size() >= 2 ? fields[1].toLongLong() : -1;
    }
    void tick() {
        const qint64 now = clock_.nsecsElapsed();
        const qint64 wait = runQueueWaitNs();
        if (lastNs_ >= 0) {
            const qint64 gap = now - lastNs_;
            const qint64 queued = (wait >= 0 && lastWaitNs_ >= 0)
                                      ? std::clamp<qint64>(wait - lastWaitNs_, 0, gap)
                                      : 0;
            worstGapNs_ = std::max(worstGapNs_, gap);
            stalls_.push_back(gap - queued);
        }
        lastNs_ = now;
        lastWaitNs_ = wait;
        ++ticks_;
    }

    QTimer timer_;
    QElapsedTimer clock_;
    qint64 lastNs_ = -1, lastWaitNs_ = -1, ticks_ = 0, worstGapNs_ = 0;
    std::vector<qint64> stalls_;
};
