// The adapter between the engine and the window, driven by fake jobs: signals arrive in
// order and on the UI thread, Stop ends a run within a step and keeps what was measured,
// results of a superseded or abandoned run never surface, bursts are coalesced.
#include <sqlite3.h>

#include <QtTest>
#include <atomic>
#include <chrono>
#include <thread>

#include "benchmark/benchmark_json.h"
#include "common/fakedata.h"
#include "core/store.h"
#include "ui/benchmark/benchitems.h"
#include "ui/benchmark/storedbenchrun.h"
#include "ui/common/runcontroller.h"
#include "ui/common/storeaccess.h"

using namespace ts;
using namespace ts::ui;
using namespace std::chrono_literals;

namespace {

// A sweep of `points` × `steps` steps, each taking `stepTime`, polling the token between steps
// like the engine. Counts what it ran so the test can check what arrived.
struct FakeSweep {
    int points = 2, steps = 5;
    std::chrono::milliseconds stepTime{0};
    int64_t marker = 2;  // batch size, to tell runs apart
    std::shared_ptr<std::atomic<int>> ran = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> afterCancel = std::make_shared<std::atomic<int>>(0);
    bool ignoreCancel = false;  // a run that keeps sending after it was cancelled

    LabJob job() const {
        LabJob j;
        j.label = QStringLiteral("fake");
        j.point_count = points;
        j.environment = [] {
            Environment e;
            e.device_name = "Fake device";
            return e;
        };
        j.lab = QString::fromLatin1(kBenchLab);
        j.run = [*this](JobObserver& job, const CancelToken& cancel, ResultStore* store,
                        int64_t runId) {
            BenchItemForwarder obs(job);  // as the benchmark panel's job reports
            for (int p = 0; p < points; ++p) {
                PointConfig c = fake::config("tiny", 32, Precision::FP32);
                c.batch_size = marker;
                c.steps = steps;
                c.warmup = 0;
                obs.pointStarted(p, points, c);
                BenchResult r;
                r.config = c;
                for (int s = 0; s < steps; ++s) {
                    if (cancel.cancelled() && !ignoreCancel) break;
                    if (cancel.cancelled()) ++*afterCancel;
                    if (stepTime.count() > 0) std::this_thread::sleep_for(stepTime);
                    const StepSample sample = fake::step(s, false, 1, 2, 0.5);
                    r.steps.push_back(sample);
                    ++*ran;
                    obs.stepFinished(p, sample);
                }
                r.status = cancel.cancelled() ? Status::Cancelled : Status::Ok;
                summarize(r);
                if (store) storeBenchPoint(*store, runId, p, r);
                obs.pointFinished(p, r);
                obs.progress(double(p + 1) / points, (points - p - 1) * 0.1);
                obs.log(LogLevel::Info, "point done");
                if (cancel.cancelled() && !ignoreCancel) return;
            }
        };
        return j;
    }
};

// Every signal of the controller as one line, in arrival order, checking the thread.
struct Recorder {
    QStringList events;
    QList<StepSample> steps;
    QList<quint64> runs;
    int stepBatches = 0;
    bool offThread = false;
    QList<BenchResult> results;
    RunOutcome outcome = RunOutcome::Completed;
    qint64 storeRun = -1;

    explicit Recorder(RunController& c) {
        auto mark = [this](quint64 run, const QString& e) {
            if (QThread::currentThread() != qApp->thread()) offThread = true;
            runs << run;
            events << e;
        };
        QObject::connect(&c, &RunController::runStarted,
                         [this, mark](quint64 r, qint64 id, const Environment&) {
                             storeRun = id;
                             mark(r, QStringLiteral("started"));
                         });
        // The benchmark's items, as the benchmark view takes them: steps of one point in a
        // row are one batch.
        QObject::connect(
            &c, &RunController::itemsArrived,
            [this, mark](quint64 r, const QList<QVariant>& items) {
                int stepsPoint = -1;
                bool inSteps = false;
                auto endBatch = [&] {
                    if (!inSteps) return;
                    ++stepBatches;
                    mark(r, QStringLiteral("batch"));
                    inSteps = false;
                };
                for (const QVariant& v : items) {
                    if (v.canConvert<BenchStep>()) {
                        const auto s = v.value<BenchStep>();
                        if (inSteps && s.point != stepsPoint) endBatch();
                        stepsPoint = s.point;
                        inSteps = true;
                        steps << s.sample;
                        events << QStringLiteral("step %1.%2").arg(s.point).arg(s.sample.index);
                        continue;
                    }
                    endBatch();
                    if (v.canConvert<BenchPointStarted>()) {
                        const auto p = v.value<BenchPointStarted>();
                        mark(r,
                             QStringLiteral("point %1 bs%2").arg(p.index).arg(p.config.batch_size));
                    } else if (v.canConvert<BenchPointFinished>()) {
                        const auto f = v.value<BenchPointFinished>();
                        results << f.result;
                        mark(r, QStringLiteral("done %1").arg(f.index));
                    }
                }
                endBatch();
            });
        QObject::connect(&c, &RunController::progress, [this, mark](quint64 r, double, double) {
            mark(r, QStringLiteral("progress"));
        });
        QObject::connect(
            &c, &RunController::logMessage,
            [this, mark](quint64 r, int, const QString&) { mark(r, QStringLiteral("log")); });
        QObject::connect(&c, &RunController::runFinished,
                         [this, mark](quint64 r, RunOutcome o, const QString&) {
                             outcome = o;
                             mark(r, QStringLiteral("finished"));
                         });
    }
    QStringList without(const QStringList& drop) const {
        QStringList out;
        for (const QString& e : events)
            if (!drop.contains(e)) out << e;
        return out;
    }
};

}  // namespace

class TestRunController : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void signalsArriveInOrderOnTheUiThread();
    void stopEndsWithinAStepAndKeepsWhatWasMeasured();
    void resultsOfASupersededRunAreDropped();
    void abandonDropsEverything();
    void failingJobReportsFailed();
    void runsAreStoredUnderTheirId();
    void aNewerStoreIsReadOnly();
    void burstsAreCoalesced();
    void destructorCancelsAndWaits();
};

void TestRunController::signalsArriveInOrderOnTheUiThread() {
    RunController c;
    Recorder rec(c);
    FakeSweep f;
    f.points = 3;
    f.steps = 4;
    f.stepTime = 2ms;
    const quint64 id = c.start(f.job());
    QVERIFY(c.isRunning());
    QCOMPARE(c.currentRun(), id);
    QTRY_VERIFY_WITH_TIMEOUT(rec.events.contains(QStringLiteral("finished")), 10000);
    QVERIFY(!c.isRunning());
    QVERIFY(!rec.offThread);
    for (quint64 r : rec.runs) QCOMPARE(r, id);
    // Exact order once the batching and repeated bookkeeping are set aside.
    const QStringList got =
        rec.without({QStringLiteral("batch"), QStringLiteral("progress"), QStringLiteral("log")});
    QStringList want{QStringLiteral("started")};
    for (int p = 0; p < 3; ++p) {
        want << QStringLiteral("point %1 bs2").arg(p);
        for (int s = 0; s < 4; ++s) want << QStringLiteral("step %1.%2").arg(p).arg(s);
        want << QStringLiteral("done %1").arg(p);
    }
    want << QStringLiteral("finished");
    QCOMPARE(got, want);
    QVERIFY(rec.outcome == RunOutcome::Completed);
    QCOMPARE(rec.results.size(), 3);
    QCOMPARE(c.droppedEvents(), 0);
}

void TestRunController::stopEndsWithinAStepAndKeepsWhatWasMeasured() {
    RunController c;
    Recorder rec(c);
    FakeSweep f;
    f.points = 1;
    f.steps = 1000;
    f.stepTime = 20ms;
    c.start(f.job());
    QTRY_VERIFY_WITH_TIMEOUT(rec.steps.size() >= 3, 10000);
    QElapsedTimer t;
    t.start();
    c.stop();
    QTRY_VERIFY_WITH_TIMEOUT(rec.events.contains(QStringLiteral("finished")), 5000);
    // Within a step: one 20 ms step may still finish, plus delivery.
    QVERIFY2(t.elapsed() < 500, qPrintable(QStringLiteral("stop took %1 ms").arg(t.elapsed())));
    QVERIFY(rec.outcome == RunOutcome::Stopped);
    QVERIFY(f.ran->load() < 1000);
    // Everything measured arrived, and the point came back as cancelled with those steps.
    QCOMPARE(rec.steps.size(), f.ran->load());
    QCOMPARE(rec.results.size(), 1);
    QVERIFY(rec.results[0].status == Status::Cancelled);
    QCOMPARE(int(rec.results[0].steps.size()), f.ran->load());
}

void TestRunController::resultsOfASupersededRunAreDropped() {
    RunController c;
    Recorder rec(c);
    FakeSweep slow;
    slow.points = 3;
    slow.steps = 20;
    slow.stepTime = 10ms;
    slow.marker = 111;
    slow.ignoreCancel = true;  // keeps sending after the cancel: all of it must be dropped
    const quint64 first = c.start(slow.job());
    QTRY_VERIFY_WITH_TIMEOUT(!rec.steps.isEmpty(), 10000);
    const int before = static_cast<int>(rec.events.size());
    const int runsBefore = static_cast<int>(rec.runs.size());
    FakeSweep fast;
    fast.points = 2;
    fast.steps = 3;
    fast.marker = 222;
    const quint64 second = c.start(fast.job());
    QVERIFY(second > first);
    QCOMPARE(c.currentRun(), second);
    QTRY_VERIFY_WITH_TIMEOUT(rec.events.mid(before).contains(QStringLiteral("finished")), 10000);
    QVERIFY(c.waitForWorkers(20000));  // the stale worker has sent everything by now
    QCoreApplication::processEvents();
    QVERIFY(slow.afterCancel->load() > 0);
    for (int i = before; i < rec.events.size(); ++i) {
        QVERIFY2(!rec.events[i].contains(QStringLiteral("bs111")), qPrintable(rec.events[i]));
    }
    for (int i = runsBefore; i < rec.runs.size(); ++i) QCOMPARE(rec.runs[i], second);
    QCOMPARE(rec.events.filter(QStringLiteral("finished")).size(), 1);
    QVERIFY(c.droppedEvents() > 0);
    QVERIFY(rec.outcome == RunOutcome::Completed);
}

void TestRunController::abandonDropsEverything() {
    RunController c;
    Recorder rec(c);
    FakeSweep f;
    f.points = 2;
    f.steps = 50;
    f.stepTime = 5ms;
    c.start(f.job());
    QTRY_VERIFY_WITH_TIMEOUT(!rec.steps.isEmpty(), 10000);
    c.abandon();
    QVERIFY(!c.isRunning());
    const int seen = static_cast<int>(rec.events.size());
    QVERIFY(c.waitForWorkers(10000));
    QTest::qWait(100);
    QCOMPARE(rec.events.size(), seen);
    QVERIFY(c.droppedEvents() > 0);
}

void TestRunController::failingJobReportsFailed() {
    RunController c;
    Recorder rec(c);
    LabJob j;
    j.run = [](Observer& obs, const CancelToken&, ResultStore*, int64_t) {
        obs.log(LogLevel::Error, "about to fail");
        throw std::runtime_error("boom");
    };
    QSignalSpy finished(&c, &RunController::runFinished);
    c.start(j);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);
    QVERIFY(finished[0][1].value<RunOutcome>() == RunOutcome::Failed);
    QCOMPARE(finished[0][2].toString(), QStringLiteral("boom"));
    QVERIFY(!c.isRunning());
}

void TestRunController::aNewerStoreIsReadOnly() {
    // A store written by a newer TrainScope: History still lists it and opens its runs, and
    // says why nothing can be stored there.
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("newer.db"));
    qint64 id = 0;
    {
        ResultStore store(db.toStdString());
        id = store.createRun(kBenchLab, "from the future", "{}", "Fake device");
        storeBenchPoint(store, id, 0, fake::result(fake::config("tiny", 32, Precision::FP32), 3));
    }
    sqlite3* raw = nullptr;
    QCOMPARE(sqlite3_open(db.toUtf8().constData(), &raw), SQLITE_OK);
    QCOMPARE(sqlite3_exec(raw, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    const RunList list = listRuns(db);
    QVERIFY2(list.error.isEmpty(), qPrintable(list.error));
    QCOMPARE(list.runs.size(), size_t(1));
    QVERIFY2(list.readOnly.contains(QStringLiteral("newer")), qPrintable(list.readOnly));
    const StoredBenchRun run = benchRunFrom(loadRun(db, id));
    QVERIFY2(run.error.isEmpty(), qPrintable(run.error));
    QCOMPARE(run.points.size(), size_t(1));
}

void TestRunController::runsAreStoredUnderTheirId() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("results.db"));
    RunController c;
    c.setStorePath(db);
    Recorder rec(c);
    FakeSweep f;
    f.points = 2;
    f.steps = 3;
    c.start(f.job());
    QTRY_VERIFY_WITH_TIMEOUT(rec.events.contains(QStringLiteral("finished")), 10000);
    QVERIFY(rec.storeRun > 0);
    const StoredBenchRun run = benchRunFrom(loadRun(db, rec.storeRun));
    QVERIFY2(run.error.isEmpty(), qPrintable(run.error));
    QCOMPARE(run.info.label, std::string("fake"));
    QCOMPARE(run.info.device_name, std::string("Fake device"));
    QCOMPARE(run.points.size(), size_t(2));
    QCOMPARE(run.points[1].steps.size(), size_t(3));
    // An unwritable store is reported, and the run still goes on.
    RunController bad;
    bad.setStorePath(dir.filePath(QStringLiteral("no/such/dir/x.db")));
    QSignalSpy logs(&bad, &RunController::logMessage);
    QSignalSpy done(&bad, &RunController::runFinished);
    bad.start(f.job());
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QVERIFY(done[0][1].value<RunOutcome>() == RunOutcome::Completed);
    bool warned = false;
    for (const auto& l : logs) warned |= l[2].toString().contains(QStringLiteral("not stored"));
    QVERIFY(warned);
}

void TestRunController::burstsAreCoalesced() {
    RunController c;
    Recorder rec(c);
    FakeSweep f;
    f.points = 1;
    f.steps = 100000;
    c.start(f.job());
    QTRY_VERIFY_WITH_TIMEOUT(rec.events.contains(QStringLiteral("finished")), 30000);
    QCOMPARE(rec.steps.size(), 100000);
    for (int i = 0; i < rec.steps.size(); ++i)
        if (rec.steps[i].index != i) QFAIL("steps out of order");
    // One queued delivery per burst, not per step.
    QVERIFY2(rec.stepBatches < 100000 / 10, qPrintable(QString::number(rec.stepBatches)));
}

void TestRunController::destructorCancelsAndWaits() {
    FakeSweep f;
    f.points = 1;
    f.steps = 100000;
    f.stepTime = 5ms;
    auto* c = new RunController;
    c->start(f.job());
    QTRY_VERIFY_WITH_TIMEOUT(f.ran->load() > 0, 5000);
    QElapsedTimer t;
    t.start();
    delete c;  // must cancel the worker and join it, not hang or leave it running
    QVERIFY(t.elapsed() < 2000);
    const int ran = f.ran->load();
    QTest::qWait(50);
    QCOMPARE(f.ran->load(), ran);
}

QTEST_MAIN(TestRunController)
#include "tst_runcontroller.moc"
