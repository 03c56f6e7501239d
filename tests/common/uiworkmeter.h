// What the UI thread spends its CPU on: every event the application delivers on the UI thread
// is timed with the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID: time on a CPU only, not
// time waiting for one) and filed under a kind, the receiver's class (and its owners' up to the
// first of ours: a timer's chart) with the event's type. Events delivered inside another
// (a paint inside a window's update request) count in both: the outer event's time includes
// them. A test makes its QApplication a MeteredApplication (its own main()), then reads the
// kinds' counts, totals and maxima, and the top-level events that ran in a time window.
#pragma once

#include <QApplication>
#include <QElapsedTimer>
#include <QEvent>
#include <QHash>
#include <QMetaEnum>
#include <QString>
#include <QThread>
#include <algorithm>
#include <ctime>
#include <vector>

#include "thread_clocks.h"

class UiWorkMeter {
public:
    struct Kind {
        qint64 count = 0, totalNs = 0, maxNs = 0;
    };
    // One event delivered from the event loop itself (not from inside another event).
    struct TopEvent {
        qint64 startNs, endNs;  // QElapsedTimer's clock (monotonic), as StallProbe's gaps
        qint64 cpuNs;
        QString kind;
    };

    static qint64 threadCpuNs() { return testclocks::threadCpuNs(); }
    static qint64 monotonicNs() { return testclocks::monotonicNs(); }

    void setEnabled(bool on) { enabled_ = on; }
    bool enabled() const { return enabled_; }
    void clear() {
        kinds_.clear();
        top_.clear();
    }

    // Called by MeteredApplication around each delivery.
    bool deliver(QObject* receiver, QEvent* e, const std::function<bool()>& run) {
        if (!enabled_ || QThread::currentThread() != qApp->thread()) return run();
        const int depth = depth_++;
        const qint64 wall0 = depth == 0 ? monotonicNs() : 0, cpu0 = threadCpuNs();
        // Described before delivery: the event may delete its receiver.
        const QString kind = describe(receiver, e);
        const bool result = run();
        const qint64 cpu = threadCpuNs() - cpu0;
        --depth_;
        Kind& k = kinds_[depth == 0 ? kind : QStringLiteral("  (inner) ") + kind];
        ++k.count;
        k.totalNs += cpu;
        k.maxNs = std::max(k.maxNs, cpu);
        if (depth == 0 && cpu > 1'000'000) top_.push_back({wall0, monotonicNs(), cpu, kind});
        return result;
    }

    const QHash<QString, Kind>& kinds() const { return kinds_; }
    // The top-level events of more than 1 ms of CPU that overlap [fromNs, toNs).
    std::vector<TopEvent> eventsBetween(qint64 fromNs, qint64 toNs) const {
        std::vector<TopEvent> out;
        for (const TopEvent& t : top_)
            if (t.endNs > fromNs && t.startNs < toNs) out.push_back(t);
        return out;
    }
    // "kind: n events, max x ms, total y ms" lines, the largest maxima first.
    QStringList report(int lines) const {
        std::vector<std::pair<QString, Kind>> all(kinds_.keyValueBegin(), kinds_.keyValueEnd());
        std::sort(all.begin(), all.end(),
                  [](const auto& a, const auto& b) { return a.second.maxNs > b.second.maxNs; });
        QStringList out;
        for (int i = 0; i < std::min<int>(lines, static_cast<int>(all.size())); ++i)
            out << QStringLiteral("%1: %2 events, longest %3 ms, total %4 ms")
                       .arg(all[i].first)
                       .arg(all[i].second.count)
                       .arg(all[i].second.maxNs / 1e6, 0, 'f', 1)
                       .arg(all[i].second.totalNs / 1e6, 0, 'f', 1);
        return out;
    }

    static QString describe(QObject* receiver, QEvent* e) {
        static const QMetaEnum types = QMetaEnum::fromType<QEvent::Type>();
        const char* type = types.valueToKey(e->type());
        QString who = QString::fromLatin1(receiver->metaObject()->className());
        if (!receiver->objectName().isEmpty()) who += '#' + receiver->objectName();
        // Whose timer or internal object it is: the owners up to the first of ours.
        for (QObject* p = receiver->parent(); p && !who.contains(QLatin1String("ts::"));
             p = p->parent())
            who += QLatin1String(" of ") + QString::fromLatin1(p->metaObject()->className());
        return who + ':' + (type ? QString::fromLatin1(type) : QString::number(e->type()));
    }

private:
    bool enabled_ = false;
    int depth_ = 0;
    QHash<QString, Kind> kinds_;
    std::vector<TopEvent> top_;
};

class MeteredApplication : public QApplication {
public:
    using QApplication::QApplication;
    bool notify(QObject* receiver, QEvent* e) override {
        return meter.deliver(receiver, e, [&] { return QApplication::notify(receiver, e); });
    }
    static UiWorkMeter& instanceMeter() {
        return static_cast<MeteredApplication*>(QCoreApplication::instance())->meter;
    }
    UiWorkMeter meter;
};
