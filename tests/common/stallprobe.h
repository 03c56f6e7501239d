// Measures how long the UI thread goes without returning to its event loop: a 5 ms timer
// records each gap between its ticks. A gap has three parts, and Linux reports each per
// thread:
// - the UI thread on a CPU, doing our work: its CPU clock (CLOCK_THREAD_CPUTIME_ID);
// - the UI thread ready but waiting for a CPU while other threads (the run's own LibTorch
//   threads, other processes) hold them: the run-queue wait in /proc/thread-self/schedstat;
// - the UI thread asleep: waiting in the event loop for the next tick, or blocked (a page
//   fault read from disk, a lock), or the machine's CPU taken by its host (steal).
// On a busy two-core machine the second alone exceeds 50 ms; it is the operating system's
// doing, not ours. The stall a test bounds is the first, our own work. Each gap keeps its
// three parts and when it began, so a test can print what the worst ones were made of and,
// with UiWorkMeter, what ran in them.
#pragma once

#include <QEventLoop>
#include <QFile>
#include <QTimer>
#include <algorithm>
#include <ctime>
#include <vector>

#include "thread_clocks.h"

class StallProbe {
public:
    struct Gap {
        qint64 startNs;  // CLOCK_MONOTONIC
        qint64 wallNs, cpuNs, queuedNs;
        qint64 asleepNs() const { return std::max<qint64>(0, wallNs - cpuNs - queuedNs); }
    };

    StallProbe() {
        timer_.setTimerType(Qt::PreciseTimer);
        timer_.setInterval(5);
        QObject::connect(&timer_, &QTimer::timeout, [this] { tick(); });
    }
    void start() {
        startNs_ = lastNs_ = monotonicNs();
        lastCpuNs_ = threadCpuNs();
        lastWaitNs_ = runQueueWaitNs();
        timer_.start();
    }
    void stop() { timer_.stop(); }

    qint64 elapsedMs() const { return (monotonicNs() - startNs_) / 1'000'000; }
    qint64 ticks() const { return static_cast<qint64>(gaps_.size()); }
    const std::vector<Gap>& gaps() const { return gaps_; }
    qint64 worstGapNs() const {
        qint64 w = 0;
        for (const Gap& g : gaps_) w = std::max(w, g.wallNs);
        return w;
    }
    // The UI thread's own work (CPU time) in each gap, in ns.
    std::vector<qint64> stalls() const {
        std::vector<qint64> out;
        out.reserve(gaps_.size());
        for (const Gap& g : gaps_) out.push_back(g.cpuNs);
        return out;
    }
    qint64 worstStallNs() const { return worstBy(&Gap::cpuNs).cpuNs; }
    // The gap with the most own work, or the longest one (zeros when there is none).
    Gap worstBy(qint64 Gap::*part) const {
        const auto it = std::max_element(gaps_.begin(), gaps_.end(),
                                         [part](auto& a, auto& b) { return a.*part < b.*part; });
        return it == gaps_.end() ? Gap{0, 0, 0, 0} : *it;
    }
    // The fraction of gaps whose own work exceeds `ns`.
    double fractionAbove(qint64 ns) const {
        if (gaps_.empty()) return 0;
        return double(std::count_if(gaps_.begin(), gaps_.end(),
                                    [ns](const Gap& g) { return g.cpuNs > ns; })) /
               double(gaps_.size());
    }

    static qint64 monotonicNs() { return testclocks::monotonicNs(); }
    static qint64 threadCpuNs() { return testclocks::threadCpuNs(); }
    // Nanoseconds this thread has waited on a run queue (ready, but no CPU free); -1 if unknown.
    static qint64 runQueueWaitNs() {
        QFile f(QStringLiteral("/proc/thread-self/schedstat"));
        if (!f.open(QIODevice::ReadOnly)) return -1;
        const QList<QByteArray> fields = f.readAll().simplified().split(' ');
        return fields.size() >= 2 ? fields[1].toLongLong() : -1;
    }

private:
    void tick() {
        const qint64 now = monotonicNs(), cpu = threadCpuNs(), wait = runQueueWaitNs();
        const qint64 wall = now - lastNs_;
        const qint64 queued =
            (wait >= 0 && lastWaitNs_ >= 0) ? std::clamp<qint64>(wait - lastWaitNs_, 0, wall) : 0;
        gaps_.push_back({lastNs_, wall, std::clamp<qint64>(cpu - lastCpuNs_, 0, wall), queued});
        lastNs_ = now;
        lastCpuNs_ = cpu;
        lastWaitNs_ = wait;
    }

    QTimer timer_;
    qint64 startNs_ = 0, lastNs_ = 0, lastCpuNs_ = 0, lastWaitNs_ = -1;
    std::vector<Gap> gaps_;
};

// Runs the UI thread's event loop as the application does, asleep while nothing is due, until
// `sender` emits `signal` or `timeoutMs` pass. (A loop over QCoreApplication::processEvents(
// WaitForMoreEvents, ms) does not do that: with a time limit, processEvents drops
// WaitForMoreEvents, so such a loop never sleeps and the UI thread spins on a CPU the whole
// run, slowing the run it measures and waiting for a CPU itself in every gap.)
template <class Sender, class Signal>
void runEventLoopUntil(const Sender* sender, Signal signal, int timeoutMs) {
    QEventLoop loop;
    QObject::connect(sender, signal, &loop, &QEventLoop::quit);
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
}
