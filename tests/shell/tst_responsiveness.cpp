// The UI thread never works more than 50 ms without returning to its event loop while a run
// is in progress: the window is shown with a live view in front, a sweep of real CPU benchmark
// points runs, and a 5 ms timer on the UI thread records each gap between its ticks.
//
// A gap has three parts (see StallProbe): the UI thread on a CPU doing our work, waiting for a
// CPU while other threads (the benchmark's own LibTorch threads, other processes) hold them,
// and asleep (in the event loop, or blocked). Only the first is ours; on a busy two-core
// machine the second alone exceeds 50 ms. The bound is on the first, the UI thread's CPU time
// within a gap. The worst gaps are printed with their three parts and the events that ran in
// them (UiWorkMeter), and so is the longest own work per kind of event.
#include <QAction>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>
#include <QtTest>

#include "common/stallprobe.h"
#include "common/uiworkmeter.h"
#include "common/windowtesting.h"
#include "ui/common/labpanel.h"
#include "ui/shell/mainwindow.h"

using namespace ts::ui;

class TestResponsiveness : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void uiThreadNeverStallsDuringARun_data();
    void uiThreadNeverStallsDuringARun();
};

void TestResponsiveness::uiThreadNeverStallsDuringARun_data() {
    QTest::addColumn<QString>("tab");
    QTest::newRow("steps") << QStringLiteral("steps");
    QTest::newRow("memory") << QStringLiteral("memory");
    QTest::newRow("sweep") << QStringLiteral("sweep");
}

void TestResponsiveness::uiThreadNeverStallsDuringARun() {
    QFETCH(QString, tab);
    QTemporaryDir dir;
    MainWindow w(MainWindow::Options{dir.filePath("results.db"), false});
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->capabilitiesReady(), 60000);
    w.labs()->showPane(tab);
    // A sweep: points start and finish, steps stream in, tables and charts update.
    w.currentPanel()->setState(QJsonObject{{"sizes", QJsonArray{"tiny", "mini"}},
                                           {"context", "32, 64"},
                                           {"batch", "2"},
                                           {"modes", QJsonArray{"train"}},
                                           {"precisions", QJsonArray{"fp32"}},
                                           {"attentions", QJsonArray{"naive"}},
                                           {"warmup", "1"},
                                           {"steps", 15},
                                           {"device", "cpu"}});
    QVERIFY2(w.currentPanel()->isValid(), qPrintable(w.currentPanel()->problems().join('\n')));

    StallProbe probe;
    UiWorkMeter& meter = MeteredApplication::instanceMeter();
    meter.clear();
    meter.setEnabled(true);
    QSignalSpy finished(w.session(), &RunSession::runFinished);
    probe.start();
    w.actions()->runAction()->trigger();  // the press itself is part of the measurement
    QVERIFY(w.session()->isRunning());
    runEventLoopUntil(w.session(), &RunSession::runFinished, 240000);
    probe.stop();
    meter.setEnabled(false);
    QCOMPARE(finished.count(), 1);
    QVERIFY(finished[0][0].value<RunOutcome>() == RunOutcome::Completed);
    QCOMPARE(benchViewOf(&w)->document()->results()->rowCount(), 4);
    QCOMPARE(benchViewOf(&w)->document()->steps()->rowCount(), 4 * 16);

    auto ms = [](qint64 ns) { return ns / 1e6; };
    auto describe = [&](const StallProbe::Gap& g) {
        QString text =
            QStringLiteral("%1 ms: own work %2 ms, waiting for a CPU %3 ms, asleep %4 ms")
                .arg(ms(g.wallNs), 0, 'f', 1)
                .arg(ms(g.cpuNs), 0, 'f', 1)
                .arg(ms(g.queuedNs), 0, 'f', 1)
                .arg(ms(g.asleepNs()), 0, 'f', 1);
        for (const UiWorkMeter::TopEvent& e : meter.eventsBetween(g.startNs, g.startNs + g.wallNs))
            text += QStringLiteral("\n    %1 ms %2").arg(ms(e.cpuNs), 5, 'f', 1).arg(e.kind);
        return text;
    };
    const StallProbe::Gap worst = probe.worstBy(&StallProbe::Gap::cpuNs);
    qInfo("run of %lld ms: %lld UI ticks, %.2f %% of gaps with more than 20 ms of own work",
          probe.elapsedMs(), probe.ticks(), 100 * probe.fractionAbove(20'000'000));
    qInfo("longest gap %s", qPrintable(describe(probe.worstBy(&StallProbe::Gap::wallNs))));
    qInfo("most own work %s", qPrintable(describe(worst)));
    qInfo("longest own work per kind of event:\n  %s",
          qPrintable(meter.report(12).join(QStringLiteral("\n  "))));
    QVERIFY(probe.ticks() > probe.elapsedMs() / 50);  // the probe really ran throughout
    QVERIFY2(worst.cpuNs <= 50'000'000,
             qPrintable(QStringLiteral("the UI thread worked %1 ms without a break: %2")
                            .arg(ms(worst.cpuNs))
                            .arg(describe(worst))));
}

// QTEST_MAIN with an application that meters the UI thread's work (UiWorkMeter).
QTEST_MAIN_WRAPPER(TestResponsiveness,
                   QTEST_QAPP_SETUP(MeteredApplication) QTEST_DISABLE_KEYPAD_NAVIGATION)
#include "tst_responsiveness.moc"
