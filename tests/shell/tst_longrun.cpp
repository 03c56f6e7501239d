// A run whose first estimate says it will take long is confirmed once, without pausing it:
// Stop stops it, Keep Running leaves it, and the question goes away when the run ends.
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include "ui/shell/longruncheck.h"

using namespace ts::ui;

class TestLongRun : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void asksOnceWhenTheEstimatePassesTheThreshold() {
        QWidget window;
        LongRunCheck check(&window, 1800);
        QSignalSpy stop(&check, &LongRunCheck::stopRequested);
        check.runStarted();
        check.progress(0.0, 60000);  // no estimate before the first step
        check.progress(0.01, 600);   // ten minutes: no question
        QVERIFY(!check.question());
        check.progress(0.02, 14.5 * 3600);
        QMessageBox* box = check.question();
        QVERIFY(box);
        QVERIFY(box->isVisible());
        QVERIFY2(box->text().contains(QStringLiteral("14 h 30 min")), qPrintable(box->text()));
        check.progress(0.03, 14 * 3600);  // once per run
        QCOMPARE(check.question(), box);
        QPushButton* stopButton = nullptr;
        for (QAbstractButton* b : box->buttons())
            if (b->text() == QLatin1String("Stop")) stopButton = qobject_cast<QPushButton*>(b);
        QVERIFY(stopButton);
        stopButton->click();
        QCOMPARE(stop.size(), 1);
        QTRY_VERIFY(!check.question());  // closed and deleted
    }

    void keepRunningAndTheEndOfTheRunCloseIt() {
        QWidget window;
        LongRunCheck check(&window, 1800);
        QSignalSpy stop(&check, &LongRunCheck::stopRequested);
        check.runStarted();
        check.progress(0.1, 7200);
        QVERIFY(check.question());
        for (QAbstractButton* b : check.question()->buttons())
            if (b->text() == QLatin1String("Keep Running")) b->click();
        QTRY_VERIFY(!check.question());
        QCOMPARE(stop.size(), 0);
        check.runStarted();  // the next run may ask again; its end closes the question
        check.progress(0.1, 7200);
        QVERIFY(check.question());
        check.runFinished();
        QTRY_VERIFY(!check.question());
        QCOMPARE(stop.size(), 0);
    }

    void scriptedSessionsAreNotAsked() {
        QWidget window;
        LongRunCheck check(&window, 1800);
        check.setEnabled(false);
        check.runStarted();
        check.progress(0.1, 1e6);
        QVERIFY(!check.question());
    }
};

QTEST_MAIN(TestLongRun)
#include "tst_longrun.moc"
