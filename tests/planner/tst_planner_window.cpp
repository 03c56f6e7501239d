// The planner lab in the window: its panel (the engine's checks on its fields, Compute and
// Measure), a run through the window filling the table with the engine's numbers and formulas
// and the chart with the crossover, the stored run reopened from History, and History's spec
// round trip.
#include <QComboBox>
#include <QJsonDocument>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTextBrowser>
#include <QtTest>

#include "common/windowtesting.h"
#include "planner/planner.h"
#include "runtime/environment.h"
#include "ui/common/runcontroller.h"
#include "ui/planner/plannerchart.h"
#include "ui/planner/plannermodel.h"
#include "ui/planner/plannerpanel.h"
#include "ui/planner/plannerview.h"
#include "ui/shell/mainwindow.h"

using namespace ts;
using namespace ts::ui;

namespace {
// The hand-worked case of tst_planner: C/W = 1000, B = 8192, D = 1024, F = 4096, L = 2, 4 × 2.
QJsonObject handState() {
    return QJsonObject{{"C", "1e12"},       {"W", "1"},        {"B", "8192"},
                       {"model", "custom"}, {"d_model", 1024}, {"d_ff", 4096},
                       {"layers", 2},       {"dp", 4},         {"tp", 2},
                       {"comm_bytes", "2"}, {"overlap", true}, {"measure", false},
                       {"device", "cpu"}};
}

PlannerView* plannerViewOf(const MainWindow* w) {
    return qobject_cast<PlannerView*>(w->labView(QStringLiteral("planner")));
}

bool runAndWait(MainWindow& w, int timeoutMs) {
    QSignalSpy finished(w.session(), &RunSession::runFinished);
    if (!w.session()->start()) return false;
    if (!finished.wait(timeoutMs) && finished.isEmpty()) return false;
    return finished[0][0].value<RunOutcome>() == RunOutcome::Completed;
}
}  // namespace

class TestPlannerWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void panelValidatesWithTheEnginesChecks();
    void specsRoundTripThroughHistory();
    void computeFillsTheTableAndChart();
    void measureOnTheCpuThenReopen();
};

void TestPlannerWindow::panelValidatesWithTheEnginesChecks() {
    PlannerPanel p;
    p.setCapabilities(capabilities());
    p.setState(handState());
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    QCOMPARE(p.inputs().flops, 1e12);
    QCOMPARE(p.inputs().bandwidth, 1e9);  // GB/s in the field
    const auto job = p.makeJob();
    QVERIFY(job);
    QCOMPARE(job->lab, QStringLiteral("planner"));
    // C of 0: flagged with the engine's words, no job.
    auto* c = qobject_cast<QLineEdit*>(p.fieldWidget("C"));
    c->setText(QStringLiteral("0"));
    QVERIFY(!p.isValid());
    QVERIFY(!p.makeJob());
    QVERIFY(c->property("invalid").toBool());
    QVERIFY2(c->toolTip().contains(QStringLiteral("C (FLOP/s) must be a positive number")),
             qPrintable(c->toolTip()));
    c->setText(QStringLiteral("fast"));
    QVERIFY(c->toolTip().contains(QStringLiteral("'fast'")));
    c->setText(QStringLiteral("1e12"));
    QVERIFY(p.isValid());
    // A TP degree that does not divide D_FF is the TP field's or D_FF's problem, named.
    qobject_cast<QSpinBox*>(p.fieldWidget("tp"))->setValue(3);
    QVERIFY(!p.isValid());
    QVERIFY2(p.problems().join(' ').contains(
                 QStringLiteral("not divisible by the tensor-parallel degree 3")),
             qPrintable(p.problems().join('\n')));
    qobject_cast<QSpinBox*>(p.fieldWidget("tp"))->setValue(2);
    QVERIFY(p.isValid());
    // Measuring: C is not asked for (the field is disabled), the device is.
    QJsonObject s = handState();
    s["measure"] = true;
    s["C"] = "";
    p.setState(s);
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    QVERIFY(!p.fieldWidget("C")->isEnabled());
    QVERIFY(p.fieldWidget("device")->isEnabled());
    // A preset fills D, D_FF and L and locks them.
    s = handState();
    s["model"] = "small";
    s["tp"] = 1;
    p.setState(s);
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    QCOMPARE(p.inputs().d_model, int64_t{768});
    QVERIFY(p.inputs().model.has_value());
    QVERIFY(!p.fieldWidget("d_model")->isEnabled());
}

void TestPlannerWindow::specsRoundTripThroughHistory() {
    PlannerPanel a, b;
    a.setCapabilities(capabilities());
    b.setCapabilities(capabilities());
    QJsonObject measured = handState();
    measured["measure"] = true;
    QJsonObject preset = handState();
    preset["model"] = "small";
    preset["tp"] = 1;
    preset["context"] = 512;
    for (const QJsonObject& s : {handState(), measured, preset}) {
        a.setState(s);
        QVERIFY2(a.isValid(), qPrintable(a.problems().join('\n')));
        const auto job = a.makeJob();
        QVERIFY(job);
        const QJsonObject spec =
            QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
        const QString line = PlannerPanel::describeSpec(spec);
        QVERIFY2(line.startsWith(QStringLiteral("plan: ")), qPrintable(line));
        b.setState(PlannerPanel::stateFromSpec(spec));
        QVERIFY2(b.isValid(), qPrintable(b.problems().join('\n')));
        QCOMPARE(b.makeJob()->spec_json, job->spec_json);  // "run again" asks for the same run
    }
}

void TestPlannerWindow::computeFillsTheTableAndChart() {
    QTemporaryDir dir;
    auto w = freshWindow("tst_planner_window", dir.filePath("results.db"));
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    QVERIFY(w->labs()->select("planner"));
    auto* panel = qobject_cast<PlannerPanel*>(w->currentPanel());
    QVERIFY(panel);
    panel->setState(handState());
    // Compute asks the window to run (no GPU, the formulas alone).
    QSignalSpy finished(w->session(), &RunSession::runFinished);
    panel->computeButton()->click();
    QVERIFY(finished.wait(60000) || !finished.isEmpty());
    QCOMPARE(finished[0][0].value<RunOutcome>(), RunOutcome::Completed);
    PlannerView* view = plannerViewOf(w.get());
    QVERIFY(view);
    QTRY_VERIFY(view->report().has_value());
    PlannerTableModel* model = view->table();
    QCOMPARE(model->rowCount(), static_cast<int>(allStrategies().size()));
    // The engine's numbers and formulas, row by row.
    const PlannerReport expected = makePlannerReport(panel->inputs());
    for (int r = 0; r < model->rowCount(); ++r) {
        const StrategyPlan& p = expected.plans[static_cast<size_t>(r)];
        QCOMPARE(model->index(r, PlannerTableModel::StrategyCol).data().toString(),
                 QString::fromUtf8(std::string(strategyTitle(p.strategy)).c_str()));
        QCOMPARE(model->index(r, PlannerTableModel::BwdComm).data(Qt::ToolTipRole).toString(),
                 QString::fromStdString(p.backward.comm_formula));
        QCOMPARE(model->index(r, PlannerTableModel::Bound).data().toString(),
                 p.comm_bound ? QStringLiteral("communication") : QStringLiteral("compute"));
    }
    QCOMPARE(model->index(0, PlannerTableModel::BwdComm).data().toString(),
             QStringLiteral("37.7 ms"));  // the DP backward's all-reduce, by hand in tst_planner
    QVERIFY(view->formulas()->toPlainText().contains(QStringLiteral("N_DP ≤ 1 + 2·B·W/(b·C)")));
    QVERIFY(view->reportText()->toPlainText().contains(QStringLiteral("alternate ring")));
    // The chart: DP first, crossing at 750 tokens per device.
    PlannerChart* chart = view->chart();
    chart->flushRedraw();
    QVERIFY(chart->curve().has_value());
    QVERIFY(chart->curve()->crossover.has_value());
    QVERIFY(std::abs(*chart->curve()->crossover - 750.0) < 1e-6);
    QVERIFY(chart->plottedPoints(QStringLiteral("compute")) > 10);
    QVERIFY(chart->plottedPoints(QStringLiteral("communication")) > 10);
    QCOMPARE(chart->plottedPoints(QStringLiteral("crossover")), 1);
    QVERIFY(chart->chartTitle().contains(QStringLiteral("750")));
    // TP: against the degree, crossing at 7.144.
    view->chartStrategy()->setCurrentIndex(view->chartStrategy()->findData(QStringLiteral("tp")));
    chart->flushRedraw();
    QVERIFY(std::abs(*chart->curve()->crossover - 7.144) < 1e-6);
    QVERIFY(chart->chartTitle().contains(QStringLiteral("TP")));
}

void TestPlannerWindow::measureOnTheCpuThenReopen() {
    QTemporaryDir dir;
    auto w = freshWindow("tst_planner_window", dir.filePath("results.db"));
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    QVERIFY(w->labs()->select("planner"));
    QJsonObject s = handState();
    s["measure"] = true;
    s["device"] = "cpu";
    w->currentPanel()->setState(s);
    QVERIFY2(w->currentPanel()->isValid(), qPrintable(w->currentPanel()->problems().join('\n')));
    QVERIFY(runAndWait(*w, 300000));
    PlannerView* view = plannerViewOf(w.get());
    QTRY_VERIFY(view->report().has_value());
    const PlannerReport r = *view->report();
    QVERIFY(r.measured.has_value());
    QCOMPARE(r.measured->backend, std::string("gloo"));
    QVERIFY(r.measured->ring_exact);
    QCOMPARE(r.inputs.flops, r.measured->flops);
    QVERIFY(view->reportText()->toPlainText().contains(QStringLiteral("Measured on cpu")));
    // Reopened from the store: the same plan.
    const qint64 id = view->storeRunId();
    QVERIFY(id > 0);
    plannerViewOf(w.get())->table()->setReport(std::nullopt);
    w->history()->openStoredRun(id);
    QTRY_VERIFY_WITH_TIMEOUT(view->report().has_value(), 30000);
    QCOMPARE(view->report()->plans[0].step_s, r.plans[0].step_s);
    QVERIFY(view->report()->measured.has_value());
}

QTEST_MAIN(TestPlannerWindow)
#include "tst_planner_window.moc"
