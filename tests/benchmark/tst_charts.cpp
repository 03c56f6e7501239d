// The benchmark's result views on hand-made runs (issue 17): step chart titles, overlay and
// margins, the breakdown, speedup bars and their uncertainty, sweep axes (log ticks,
// categories, dodging, clipped error bars), the memory chart's ticks and point boundaries,
// zoom / pan / hover, n/a and mean ± std in tables, CSV and the engine's report, presets and
// comparisons.
#include <QCheckBox>
#include <QComboBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "benchmark/benchmark_json.h"
#include "benchmark/benchmark_report.h"
#include "common/fakedata.h"
#include "ui/attention/attentionmodel.h"
#include "ui/attention/attentionview.h"
#include "ui/benchmark/benchitems.h"
#include "ui/benchmark/benchview.h"
#include "ui/benchmark/breakdownchart.h"
#include "ui/benchmark/memorychart.h"
#include "ui/benchmark/speedupchart.h"
#include "ui/benchmark/stepchart.h"
#include "ui/common/chartinteraction.h"
#include "ui/common/exporter.h"
#include "ui/common/qcp.h"
#include "ui/common/sweepchart.h"
#include "ui/common/tableview.h"

using namespace ts;
using namespace ts::ui;

namespace {

QJsonObject json(const char* text) { return QJsonDocument::fromJson(text).object(); }

// A live run of `results` into `view`, as the run controller would post it; the job says
// the run has `count` points (more than arrive, while it runs).
void runInto(BenchView& view, const std::vector<BenchResult>& results, int count,
             bool finishLast = true) {
    LabJob job;
    job.lab = QStringLiteral("bench");
    job.label = QStringLiteral("test");
    job.point_count = count;
    view.beginRun(job);
    for (size_t i = 0; i < results.size(); ++i) {
        const int p = static_cast<int>(i);
        QList<QVariant> items;
        items << QVariant::fromValue(BenchPointStarted{p, count, results[i].config});
        for (const StepSample& s : results[i].steps) items << QVariant::fromValue(BenchStep{p, s});
        if (finishLast || i + 1 < results.size())
            items << QVariant::fromValue(BenchPointFinished{p, results[i]});
        view.addItems(items);
    }
}

StoredRun stored(qint64 id, const std::vector<BenchResult>& results) {
    StoredRun run;
    run.info.id = id;
    run.info.lab = "bench";
    run.info.label = "stored";
    for (size_t i = 0; i < results.size(); ++i)
        run.rows.push_back({static_cast<int>(i), results[i].status,
                            toJson(results[i].config).dump(), toJson(results[i]).dump()});
    return run;
}

PointConfig withWarmup(int warmup) {
    PointConfig c = fake::config("small", 256, Precision::FP32);
    c.warmup = warmup;
    return c;
}

PointConfig withMode(Mode m) {
    PointConfig c = fake::config("small", 256, Precision::FP32);
    c.mode = m;
    return c;
}

// A result whose phases are forward f, backward b, optimizer o per step (what the mode runs).
BenchResult phases(const PointConfig& c, double f, double b, double o) {
    BenchResult r = fake::result(c, 1);
    for (StepSample& s : r.steps) {
        s.forward_ms = f;
        s.backward_ms = c.mode == Mode::Forward ? 0 : b;
        s.optimizer_ms = c.mode == Mode::Train ? o : 0;
        s.total_ms = s.forward_ms + s.backward_ms + s.optimizer_ms;
    }
    summarize(r);
    return r;
}

// A result whose measured totals have this mean and standard deviation (two values).
BenchResult spread(const PointConfig& c, double mean, double std) {
    BenchResult r = fake::result(c, mean);
    int i = 0;
    for (StepSample& s : r.steps) {
        if (s.warmup) continue;
        const double d = std * std::sqrt(3.0 / 4.0);  // 4 steps at mean ± d: sample std = std
        s.total_ms = mean + (i++ % 2 ? d : -d);
        s.forward_ms = s.total_ms * 0.3;
        s.backward_ms = s.total_ms * 0.6;
        s.optimizer_ms = s.total_ms * 0.1;
    }
    summarize(r);
    return r;
}

}  // namespace

class TestCharts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void stepTitleCountsTheRunsPointsAndNamesWarmup();
    void replayTitlesCountTheStoredRunsPoints();
    void stepChartKeepsTheLastMarkerInside();
    void overlayDrawsEveryPoint();
    void reportHoldsEveryPointsStepChart();
    void breakdownStacksThePhases();
    void whereTheTimeGoesOpensTheBreakdown();
    void presetsResetWhatTheyDoNotSet();
    void speedupMarksNoisyRatiosUncertain();
    void sweepSizeIsLogLogWithLabels();
    void logTimeAxisClipsLongErrorBarsOpen();
    void logTicksAreOneTwoFive();
    void sweepAgainstPrecisionIsCategoricalAndDodged();
    void attentionChartLabelsItsLogAxes();
    void memoryChartHasWholeTicksAndPointBoundaries();
    void zoomPanResetAndHover();
    void resultsHaveMeanAndStdPerPhaseAndNaForCpu();
    void engineReportSaysNaForCpuMemory();
    void compareNamesTheComparison();
    void aPointWithoutStepsSaysWhy();
    void chartsBehindTheFrontTabWaitUntilShown();
};

void TestCharts::aPointWithoutStepsSaysWhy() {
    BenchView view;
    runInto(view,
            {fake::result(withWarmup(0), 5), fake::result(withWarmup(1), 5, 0.1, Status::OOM)}, 2);
    view.stepChart()->setPoint(1);
    view.stepChart()->flushRedraw();
    const QString title = view.stepChart()->chart()->title();
    QVERIFY2(title.contains(QStringLiteral("point 2 of 2")), qPrintable(title));
    QVERIFY2(title.contains(QStringLiteral("(OOM, no steps measured: CUDA out of memory")),
             qPrintable(title));
    view.stepChart()->setPoint(0);
    view.stepChart()->flushRedraw();
    QVERIFY(!view.stepChart()->chart()->title().contains(QStringLiteral("no steps")));
}

// A run streams into every chart of the view, but only the tab in front redraws: the others
// redraw once when they are shown (issue 29: the step, breakdown and speedup charts behind the
// sweep made the UI thread's longest stretch of work exceed 50 ms on a loaded machine).
void TestCharts::chartsBehindTheFrontTabWaitUntilShown() {
    BenchView view;
    view.resize(1000, 700);
    view.showPane(view.paneIndex(QStringLiteral("sweep")));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTest::qWait(120);  // whatever the first show asked for is drawn
    StepChart* steps = view.stepChart();
    const int stepsBefore = steps->redrawCount(), sweepBefore = view.sweepChart()->redrawCount(),
              breakdownBefore = view.breakdownChart()->redrawCount(),
              speedupBefore = view.speedupChart()->redrawCount(),
              memoryBefore = view.memoryChart()->redrawCount();
    const BenchResult first = fake::result(withWarmup(1), 5),
                      second = fake::result(withWarmup(2), 5);
    runInto(view, {first, second}, 2);
    QTest::qWait(120);  // a trailing redraw of any chart is due by now
    QVERIFY(view.sweepChart()->redrawCount() > sweepBefore);  // in front: drawn
    QCOMPARE(steps->redrawCount(), stepsBefore);              // behind it: not
    QCOMPARE(view.breakdownChart()->redrawCount(), breakdownBefore);
    QCOMPARE(view.speedupChart()->redrawCount(), speedupBefore);
    QCOMPARE(view.memoryChart()->redrawCount(), memoryBefore);
    // The data is there all the same.
    QCOMPARE(view.memoryChart()->plottedPoints(),
             static_cast<int>(first.steps.size() + second.steps.size()));

    // Shown, a chart redraws at once, once, with everything that came meanwhile.
    view.showPane(view.paneIndex(QStringLiteral("steps")));
    QCOMPARE(steps->redrawCount(), stepsBefore + 1);
    QCOMPARE(steps->shownSteps(), static_cast<int>(second.steps.size()));
    QVERIFY2(steps->chart()->title().contains(QStringLiteral("point 2 of 2")),
             qPrintable(steps->chart()->title()));
    QTest::qWait(120);
    QCOMPARE(steps->redrawCount(), stepsBefore + 1);
    view.showPane(view.paneIndex(QStringLiteral("memory")));
    QCOMPARE(view.memoryChart()->redrawCount(), memoryBefore + 1);
    // An export draws a hidden chart without showing it.
    view.breakdownChart()->flushRedraw();
    QCOMPARE(view.breakdownChart()->redrawCount(), breakdownBefore + 1);
}

void TestCharts::stepTitleCountsTheRunsPointsAndNamesWarmup() {
    BenchView view;
    // Point 2 of a three-point warm-up sweep is running: two have arrived.
    runInto(view, {fake::result(withWarmup(0), 5), fake::result(withWarmup(1), 5)}, 3, false);
    view.stepChart()->flushRedraw();
    const QString title = view.stepChart()->chart()->title();
    QVERIFY2(title.contains(QStringLiteral("point 2 of 3")), qPrintable(title));
    QVERIFY2(title.contains(QStringLiteral("warm-up 1")), qPrintable(title));
    // The three points of "Warm-up matters" have three titles.
    runInto(view,
            {fake::result(withWarmup(0), 5), fake::result(withWarmup(1), 5),
             fake::result(withWarmup(5), 5)},
            3);
    QSet<QString> titles;
    for (int p = 0; p < 3; ++p) titles << view.stepChart()->pointTitle(p);
    QCOMPARE(titles.size(), 3);
    QVERIFY(view.stepChart()->pointTitle(2).contains(QStringLiteral("point 3 of 3")));
}

void TestCharts::replayTitlesCountTheStoredRunsPoints() {
    BenchView view;
    std::vector<BenchResult> six;
    for (int w : {0, 1, 2, 3, 4, 5}) six.push_back(fake::result(withWarmup(w), 5));
    view.replay(stored(9, six), 1000);
    QTRY_VERIFY_WITH_TIMEOUT(view.document()->results()->rowCount() >= 3, 10000);
    view.stopReplay();
    const int point = view.document()->results()->rowCount() - 1;
    view.stepChart()->flushRedraw();
    QVERIFY2(
        view.stepChart()->chart()->title().contains(QStringLiteral("point %1 of 6").arg(point + 1)),
        qPrintable(view.stepChart()->chart()->title()));
}

void TestCharts::stepChartKeepsTheLastMarkerInside() {
    BenchView probe;
    // Fragments of markers that moved are not left behind: every change repaints the chart.
    QCOMPARE(probe.stepChart()->chartView()->viewportUpdateMode(),
             QGraphicsView::FullViewportUpdate);
    BenchView view;
    view.resize(900, 600);
    runInto(view, {fake::result(withWarmup(1), 5)}, 1);
    StepChart* chart = view.stepChart();
    chart->flushRedraw();
    const int steps = chart->shownSteps();
    QCOMPARE(steps, 5);
    QVERIFY(chart->xAxis()->min() <= -0.5);
    QVERIFY(chart->xAxis()->max() >= steps - 1 + 0.5);
    // A long point: the margin grows with the axis so that a marker still fits.
    PointConfig c = withWarmup(0);
    c.steps = 1000;
    runInto(view, {fake::result(c, 5)}, 1);
    chart->flushRedraw();
    QVERIFY(chart->xAxis()->max() - 999 >= 0.02 * 1000 - 1e-9);
}

void TestCharts::overlayDrawsEveryPoint() {
    BenchView view;
    runInto(view,
            {fake::result(withWarmup(0), 5), fake::result(withWarmup(1), 6),
             fake::result(withWarmup(5), 7)},
            3);
    view.overlayCheck()->setChecked(true);
    view.stepChart()->flushRedraw();
    QCOMPARE(view.stepChart()->overlaySeriesCount(), 3);
    QSet<QString> names;
    for (QLineSeries* s : view.stepChart()->overlaySeries()) {
        QVERIFY(s->isVisible());
        names << s->name();
    }
    QCOMPARE(names.size(), 3);
    QVERIFY(names.contains(QStringLiteral("3: warm-up 5")));
    QCOMPARE(view.stepChart()->overlaySeries()[2]->count(), 5 + 4);  // warm-up and measured steps
    QVERIFY(!view.stepChart()->totalSeries()->isVisible());
    view.overlayCheck()->setChecked(false);
    view.stepChart()->flushRedraw();
    QVERIFY(view.stepChart()->totalSeries()->isVisible());
    QVERIFY(!view.stepChart()->overlaySeries()[0]->isVisible());
    // A big sweep overlays its first points and says so.
    std::vector<BenchResult> many;
    for (int w = 0; w < 30; ++w) many.push_back(fake::result(withWarmup(w), 5));
    runInto(view, many, 30);
    view.overlayCheck()->setChecked(true);
    view.stepChart()->flushRedraw();
    int visible = 0;
    for (QLineSeries* s : view.stepChart()->overlaySeries()) visible += s->isVisible();
    QCOMPARE(visible, 24);
    QVERIFY(view.stepChart()->chart()->title().contains(QStringLiteral("first 24 of 30")));
}

void TestCharts::reportHoldsEveryPointsStepChart() {
    BenchView view;
    runInto(view,
            {fake::result(withWarmup(0), 5), fake::result(withWarmup(1), 6),
             fake::result(withWarmup(5), 7)},
            3);
    const QList<ReportPart> parts = view.reportParts();
    QStringList stepCharts;
    for (const ReportPart& p : parts)
        if (p.chart && p.chart->chartFileStem().startsWith(QStringLiteral("steps-point")))
            stepCharts << p.chart->chartTitle();
    QCOMPARE(stepCharts.size(), 3);
    QVERIFY(stepCharts[1].contains(QStringLiteral("point 2 of 3")));
    // Writing the report draws each point and leaves the chart on the point it showed.
    view.stepChart()->setPoint(0);
    view.stepChart()->flushRedraw();
    QTemporaryDir dir;
    QString error;
    QVERIFY2(exportReport(dir.filePath(QStringLiteral("r.md")), parts, view.exportContext(-1),
                          {800, 500}, &error),
             qPrintable(error));
    QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("r_files/03-steps-point3.png"))));
    QCOMPARE(view.stepChart()->shownPoint(), 0);
}

void TestCharts::breakdownStacksThePhases() {
    BenchView view;
    runInto(
        view,
        {phases(withMode(Mode::Forward), 2, 4, 1), phases(withMode(Mode::ForwardBackward), 2, 4, 1),
         phases(withMode(Mode::Train), 2, 4, 1)},
        3);
    BreakdownChart* chart = view.breakdownChart();
    chart->flushRedraw();
    QCOMPARE(chart->categories().size(), 3);
    QVERIFY(chart->categories()[0].contains(QStringLiteral("forward")));
    QCOMPARE(chart->phaseValues(0), (QList<double>{2, 2, 2}));
    QCOMPARE(chart->phaseValues(1), (QList<double>{0, 4, 4}));
    QCOMPARE(chart->phaseValues(2), (QList<double>{0, 0, 1}));
    QVERIFY(chart->valueAxis()->max() >= 7);
    QVERIFY(view.paneIndex(QStringLiteral("breakdown")) >= 0);
    // The report has the breakdown, and no sweep chart of three modes at one size.
    QStringList stems;
    for (const ReportPart& p : view.reportParts())
        if (p.chart) stems << p.chart->chartFileStem();
    QVERIFY(stems.contains(QStringLiteral("breakdown")));
    QVERIFY(!stems.contains(QStringLiteral("sweep")));
}

void TestCharts::whereTheTimeGoesOpensTheBreakdown() {
    BenchView view;
    runInto(
        view,
        {phases(withMode(Mode::Forward), 2, 4, 1), phases(withMode(Mode::ForwardBackward), 2, 4, 1),
         phases(withMode(Mode::Train), 2, 4, 1)},
        3);
    view.applyPresetView(json(R"({"tab": "speedup", "dimension": "mode", "baseline": "forward"})"));
    QCOMPARE(view.currentPane(), view.paneIndex(QStringLiteral("breakdown")));
    view.applyPresetView(json(R"({"tab": "breakdown"})"));
    QCOMPARE(view.currentPane(), view.paneIndex(QStringLiteral("breakdown")));
    // No speedup of one mode over another, in the table or the bars.
    SpeedupModel* speedup = view.document()->speedup();
    QVERIFY(speedup->dimension() != Dimension::Mode);
    for (int c = 0; c < speedup->columnCount(); ++c)
        QVERIFY2(
            !speedup->headerData(c, Qt::Horizontal).toString().contains(QStringLiteral(" vs ")),
            qPrintable(speedup->headerData(c, Qt::Horizontal).toString()));
    view.speedupChart()->flushRedraw();
    QCOMPARE(view.speedupChart()->barSetCount(), 0);
}

void TestCharts::presetsResetWhatTheyDoNotSet() {
    BenchView view;
    view.applyPresetView(json(R"({"tab": "sweep", "x": "context", "log_time": true})"));
    QVERIFY(view.logTimeCheck()->isChecked());
    QCOMPARE(view.sweepXCombo()->currentData().toString(), dimensionKey(Dimension::Context));
    view.applyPresetView(json(R"({"tab": "steps", "overlay": true})"));
    QVERIFY(!view.logTimeCheck()->isChecked());
    QCOMPARE(view.sweepXCombo()->currentData().toString(), dimensionKey(Dimension::Size));
    QVERIFY(view.overlayCheck()->isChecked());
    view.applyPresetView(
        json(R"({"tab": "speedup", "dimension": "precision", "baseline": "fp32"})"));
    QVERIFY(!view.overlayCheck()->isChecked());
    QCOMPARE(view.currentPane(), view.paneIndex(QStringLiteral("speedup")));
}

void TestCharts::speedupMarksNoisyRatiosUncertain() {
    ResultModel results;
    SpeedupModel model(&results);
    SpeedupChart chart(&model);
    const std::vector<BenchResult> rs = {
        spread(fake::config("tiny", 256, Precision::FP32), 10, 0.1),  // clean: 2.00×
        spread(fake::config("tiny", 256, Precision::BF16), 5, 0.05),
        spread(fake::config("mini", 256, Precision::FP32), 10, 2),  // CV 20 %
        spread(fake::config("mini", 256, Precision::BF16), 5, 0.05),
        spread(fake::config("small", 256, Precision::FP32), 10.2, 0.5),  // 1.02 ± 0.07 includes 1
        spread(fake::config("small", 256, Precision::BF16), 10, 0.5)};
    for (size_t i = 0; i < rs.size(); ++i) results.setResult(static_cast<int>(i), rs[i]);
    model.setDimension(Dimension::Precision);
    const int col = model.speedupColumn(QStringLiteral("bf16"));
    QVERIFY(col > 0);
    QVERIFY(!model.data(model.index(0, col), SpeedupModel::UncertainRole).toBool());
    QCOMPARE(model.data(model.index(0, col)).toString(), QStringLiteral("2.00×"));
    for (int row : {1, 2}) {
        QVERIFY2(model.data(model.index(row, col), SpeedupModel::UncertainRole).toBool(),
                 qPrintable(QString::number(row)));
        QVERIFY(model.data(model.index(row, col)).toString().contains(QStringLiteral("±")));
        QVERIFY(model.data(model.index(row, col), Qt::ToolTipRole)
                    .toString()
                    .startsWith(QStringLiteral("Uncertain")));
        QVERIFY(!model.data(model.index(row, col), Qt::BackgroundRole)
                     .isValid());  // no green/orange verdict
    }
    QVERIFY(model.data(model.index(1, col), Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("20 %")));
    QVERIFY(model.data(model.index(2, col), Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("includes 1.0")));
    chart.flushRedraw();
    QCOMPARE(chart.barSetCount(), 1);
    QCOMPARE(chart.categories().size(), 3);
    QCOMPARE(chart.values(0)[0], 2.0);
    QCOMPARE(chart.uncertainBars(0), (QList<int>{1, 2}));
    // Issue 29 item 12: uncertain bars were all one grey, so series could not be told apart.
    // An uncertain bar is a pale tint of its own series' colour; the sure one is the colour.
    const QColor sure = chart.barColor(0, 0), pale = chart.barColor(0, 1);
    QVERIFY(sure != pale);
    QCOMPARE(chart.barColor(0, 2), pale);
    QVERIFY2(pale.hsvHue() == sure.hsvHue() || sure.hsvSaturation() == 0,
             qPrintable(QStringLiteral("%1 vs %2").arg(pale.name(), sure.name())));
}

void TestCharts::sweepSizeIsLogLogWithLabels() {
    // The CPU model-size preset: two sizes less than a decade apart, log time.
    BenchView view;
    view.resize(900, 600);
    runInto(view,
            {fake::result(fake::config("tiny", 64, Precision::FP32), 2, 0.1),
             fake::result(fake::config("mini", 64, Precision::FP32), 6, 0.2)},
            2);
    view.applyPresetView(json(R"({"tab": "sweep", "x": "size", "log_time": true})"));
    SweepChart* chart = view.sweepChart();
    chart->flushRedraw();
    QVERIFY(chart->xIsLog());
    QVERIFY(chart->yIsLog());
    // Labelled ticks at both ends of the axis, 1-2-5 between.
    const QStringList xTicks = chart->xTickLabels();
    QVERIFY2(xTicks.size() >= 3, qPrintable(xTicks.join(',')));
    QCOMPARE(std::pow(10.0, chart->xAxisMin()), xTicks.front().toDouble());
    QCOMPARE(std::pow(10.0, chart->xAxisMax()), xTicks.back().toDouble());
    QCOMPARE(chart->pointLabels(), (QStringList{QStringLiteral("tiny"), QStringLiteral("mini")}));
    // Points sit at log10 of their values (millions of parameters).
    const double tiny = parameterCount(fake::config("tiny", 64, Precision::FP32).model) * 1e-6;
    QCOMPARE(chart->seriesPoints(0)[0].x(), std::log10(tiny));
    QCOMPARE(chart->fromAxisY(chart->seriesPoints(0)[0].y()), 2.0);
}

void TestCharts::logTimeAxisClipsLongErrorBarsOpen() {
    ResultModel results;
    SweepModel model(&results);
    SweepChart chart(&model);
    results.setResult(0, spread(fake::config("tiny", 256, Precision::FP32), 2, 3));  // std > mean
    results.setResult(1, spread(fake::config("mini", 256, Precision::FP32), 6, 0.5));
    chart.setLogY(true);
    chart.flushRedraw();
    QCOMPARE(chart.errorBarCount(), 2);
    QCOMPARE(chart.clippedErrorBars(), 1);  // the bar of 2 ± 3 ms; 6 ± 0.5 fits
    // The axis starts at a tick below the smallest mean, not at an arbitrary 1 % of it.
    QVERIFY(chart.fromAxisY(chart.seriesPoints(0)[0].y()) == 2.0);
    QVERIFY(chart.yTickLabels().size() >= 3);
}

void TestCharts::logTicksAreOneTwoFive() {
    QCOMPARE(logTicks(0.08, 12, 10), (QList<double>{0.1, 0.2, 0.5, 1, 2, 5, 10}));
    QCOMPARE(logTicks(1, 1e6, 10), (QList<double>{1, 10, 100, 1000, 1e4, 1e5, 1e6}));
    QCOMPARE(logTicks(100, 1100, 2), (QList<double>{128, 256, 512, 1024}));
    QCOMPARE(logTickBelow(1.04, 10), 1.0);
    QCOMPARE(logTickBelow(4.9, 10), 2.0);
    QCOMPARE(logTickAbove(5.2, 10), 10.0);
    QCOMPARE(logTickAbove(0.03, 10), 0.05);
    QCOMPARE(logTickBelow(1000, 2), 512.0);
    QCOMPARE(logTickAbove(1025, 2), 2048.0);
    QCOMPARE(tickLabel(0.5), QStringLiteral("0.5"));
    QCOMPARE(tickLabel(2000), QStringLiteral("2000"));
    QCOMPARE(dodgeX(3, 0, 1, 0.1), 3.0);
    QCOMPARE(dodgeX(3, 0, 2, 0.1), 2.95);
    QCOMPARE(dodgeX(3, 1, 2, 0.1), 3.05);
    QCOMPARE(dodgeX(3, 1, 3, 0.1), 3.0);
}

void TestCharts::sweepAgainstPrecisionIsCategoricalAndDodged() {
    BenchView view;
    runInto(view,
            {fake::result(fake::config("tiny", 256, Precision::FP32), 4),
             fake::result(fake::config("tiny", 256, Precision::BF16), 2),
             fake::result(fake::config("mini", 256, Precision::FP32), 8),
             fake::result(fake::config("mini", 256, Precision::BF16), 3)},
            4);
    view.applyPresetView(json(R"({"tab": "sweep", "x": "precision"})"));
    SweepChart* chart = view.sweepChart();
    chart->flushRedraw();
    QVERIFY(chart->xIsCategorical());
    QCOMPARE(chart->xTickLabels(), (QStringList{QStringLiteral("fp32"), QStringLiteral("bf16")}));
    QCOMPARE(chart->seriesCount(), 2);  // tiny, mini
    // Both series have a point at fp32 (slot 0): nudged apart, symmetrically.
    const double a = chart->seriesPoints(0)[0].x(), b = chart->seriesPoints(1)[0].x();
    QVERIFY(a < 0 && b > 0);
    QCOMPARE(a, -b);
    // Warm-up is a numeric x.
    view.sweepXCombo()->setCurrentIndex(
        view.sweepXCombo()->findData(dimensionKey(Dimension::Warmup)));
    QCOMPARE(view.document()->sweep()->xDimension(),
             Dimension::Size);  // warm-up does not vary here
}

void TestCharts::attentionChartLabelsItsLogAxes() {
    AttentionView view;
    const double ms[] = {0.06, 0.2, 0.7, 2.5};
    int i = 0;
    for (int64_t seq : {128, 256, 512, 1024}) {
        AttentionCell c;
        c.impl = AttentionImpl::Naive;
        c.seq = seq;
        c.head_dim = 64;
        c.forward_ms = ms[i++];
        c.backward_ms = 2 * c.forward_ms;
        view.model()->addCell(c);
    }
    SweepChart* chart = view.sweepChart();
    chart->flushRedraw();
    QVERIFY(chart->xIsLog() && chart->yIsLog());
    // Every power of two, one beyond the data at each end.
    QCOMPARE(chart->xTickLabels(),
             (QStringList{QStringLiteral("64"), QStringLiteral("128"), QStringLiteral("256"),
                          QStringLiteral("512"), QStringLiteral("1024"), QStringLiteral("2048")}));
    // Not only 1 and 0.1: the 1-2-5 ticks between them.
    const QStringList y = chart->yTickLabels();
    for (const char* t : {"0.05", "0.1", "0.2", "0.5", "1", "2"})
        QVERIFY2(y.contains(QString::fromLatin1(t)), qPrintable(y.join(',')));
    // A CPU run has no device memory: n/a, not 0.0 MiB.
    QCOMPARE(view.model()->data(view.model()->index(0, AttentionModel::PeakMemory)).toString(),
             QStringLiteral("0.0"));
    LabJob job;
    job.lab = QStringLiteral("attention");
    job.spec_json = R"({"command": "attention", "device": "cpu", "impls": ["naive"]})";
    view.beginRun(job);
    view.model()->addCell(AttentionCell{});
    QCOMPARE(view.model()->data(view.model()->index(0, AttentionModel::PeakMemory)).toString(),
             QStringLiteral("n/a"));
    QVERIFY(!view.model()
                 ->data(view.model()->index(0, AttentionModel::MemBeforeBackward),
                        AttentionModel::ValueRole)
                 .isValid());
}

void TestCharts::memoryChartHasWholeTicksAndPointBoundaries() {
    BenchView view;
    view.resize(1000, 600);
    view.show();
    // Three points of 5 steps with 100-104 MiB allocated: ticks would fall on 2.5 and 7.5.
    runInto(view,
            {fake::result(withWarmup(1), 5), fake::result(withWarmup(1), 6),
             fake::result(withWarmup(1), 7)},
            3);
    MemoryChart* chart = view.memoryChart();
    chart->flushRedraw();
    chart->plot()->replot();
    for (QCPAxis* axis : {chart->plot()->xAxis, chart->plot()->yAxis})
        for (double t : axis->tickVector())
            QVERIFY2(t == std::round(t), qPrintable(QString::number(t)));
    QCOMPARE(chart->boundaryKeys(), (QList<double>{-0.5, 4.5, 9.5}));
    QCOMPARE(chart->boundaryLabels().size(), 3);
    QCOMPARE(chart->boundaryLabels()[2], QStringLiteral("point 3"));
    QVERIFY(chart->hoverText(6).contains(QStringLiteral("allocated")));
    chart->hoverAt(6);
    QVERIFY(chart->crosshairVisible());
    chart->hoverAt(-10);
    QVERIFY(!chart->crosshairVisible());
    // Ctrl+drag draws a box to zoom into; a plain drag pans.
    const QPoint centre = chart->plot()->axisRect()->rect().center();
    QTest::mousePress(chart->plot(), Qt::LeftButton, Qt::ControlModifier, centre);
    QCOMPARE(chart->plot()->selectionRectMode(), QCP::srmZoom);
    QTest::mouseRelease(chart->plot(), Qt::LeftButton, Qt::ControlModifier, centre);
    QTest::mousePress(chart->plot(), Qt::LeftButton, {}, centre);
    QCOMPARE(chart->plot()->selectionRectMode(), QCP::srmNone);
    QTest::mouseRelease(chart->plot(), Qt::LeftButton, {}, centre);
}

void TestCharts::zoomPanResetAndHover() {
    BenchView view;
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    runInto(view, {fake::result(withWarmup(1), 5)}, 1);
    StepChart* chart = view.stepChart();
    chart->flushRedraw();
    ChartInteraction* zoom = chart->interaction();
    const double min = chart->xAxis()->min(), max = chart->xAxis()->max();
    const auto yTicks = chart->yAxis()->tickType();
    zoom->zoomAt(chart->chart()->plotArea().center() + QPointF(13, 7), 2.37);
    QVERIFY(zoom->isZoomed());
    QVERIFY(chart->xAxis()->max() - chart->xAxis()->min() < (max - min) * 0.6);
    // Issue 29 item 13: a zoomed axis ticks at round values (1, 2, 2.5, 5 × 10^k from a
    // multiple of the step), not at the odd range's fifths (96.954, 404.15).
    for (QValueAxis* a : {chart->xAxis(), chart->yAxis()}) {
        QCOMPARE(a->tickType(), QValueAxis::TicksDynamic);
        const double step = a->tickInterval(),
                     mantissa = step / std::pow(10, std::floor(std::log10(step)));
        QVERIFY2(mantissa == 1 || mantissa == 2 || mantissa == 2.5 || mantissa == 5,
                 qPrintable(QString::number(step)));
        QCOMPARE(std::remainder(a->tickAnchor(), step), 0.0);
        if (a == chart->xAxis()) QCOMPARE(step, std::round(std::max(1.0, step)));  // steps: whole
        QVERIFY(a->tickAnchor() >= a->min() && a->tickAnchor() < a->min() + step);
    }
    const double zoomedMax = chart->xAxis()->max();
    // New data redraws the chart; the user's view stays.
    runInto(view, {fake::result(withWarmup(1), 5)}, 1);
    chart->flushRedraw();
    QCOMPARE(chart->xAxis()->max(), zoomedMax);
    zoom->pan(QPointF(50, 0));
    QVERIFY(chart->xAxis()->max() > zoomedMax);
    // A double click resets.
    QTest::mouseDClick(chart->chartView()->viewport(), Qt::LeftButton, {},
                       chart->chartView()->viewport()->rect().center());
    QVERIFY(!zoom->isZoomed());
    QCOMPARE(chart->xAxis()->min(), min);
    QCOMPARE(chart->xAxis()->max(), max);
    QCOMPARE(chart->yAxis()->tickType(), yTicks);  // the chart's own ticks again
    // The mouse: a click leaves the view alone, the wheel zooms, a drag pans.
    QWidget* viewport = chart->chartView()->viewport();
    const QPoint centre =
        viewport->mapFromGlobal(chart->chartView()->mapToGlobal(chart->chartView()->mapFromScene(
            chart->chart()->mapToScene(chart->chart()->plotArea().center()))));
    QTest::mouseClick(viewport, Qt::LeftButton, {}, centre);
    QVERIFY(!zoom->isZoomed());
    QWheelEvent wheel(centre, viewport->mapToGlobal(centre), {}, QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(viewport, &wheel);
    QVERIFY(zoom->isZoomed());
    QVERIFY(chart->xAxis()->max() - chart->xAxis()->min() < max - min);
    const double beforeDrag = chart->xAxis()->min();
    QTest::mousePress(viewport, Qt::LeftButton, {}, centre);
    QTest::mouseMove(viewport, centre + QPoint(60, 0));
    QTest::mouseRelease(viewport, Qt::LeftButton, {}, centre + QPoint(60, 0));
    QVERIFY2(chart->xAxis()->min() < beforeDrag, "dragging right shows earlier steps");
    zoom->resetZoom();
    QVERIFY(!zoom->isZoomed());
    // Hover: the nearest point's series and values, and a crosshair.
    QLineSeries* total = chart->totalSeries();
    const QPointF at = chart->chart()->mapToPosition(total->at(2), total);
    const auto hit =
        zoom->nearestPoint(at + QPointF(1, -1));  // the backward point lies a little below
    QVERIFY(hit.has_value());
    QCOMPARE(hit->series, QStringLiteral("total"));
    QCOMPARE(hit->y, total->at(2).y());
    QVERIFY2(zoom->hitText(*hit).contains(QStringLiteral("step 2\n4.9 ms")),
             qPrintable(zoom->hitText(*hit)));
    zoom->showCrosshair(at);
    QVERIFY(zoom->crosshairVisible());
    QVERIFY(!zoom->crosshairText().isEmpty());
    zoom->showCrosshair(QPointF(-100, -100));
    QVERIFY(!zoom->crosshairVisible());
    // Bars: the hit names the phase and the point.
    view.breakdownChart()->flushRedraw();
    view.showPane(view.paneIndex(QStringLiteral("breakdown")));
    QApplication::processEvents();
    QChart* bars = view.breakdownChart()->chart();
    bool found = false;
    for (int y = 0; y < 40 && !found; ++y) {
        const auto barHit = view.breakdownChart()->interaction()->nearestPoint(
            bars->plotArea().center() + QPointF(0, y * 5), 400);
        found = barHit && barHit->x.startsWith(QStringLiteral("1"));
    }
    QVERIFY(found);
}

void TestCharts::resultsHaveMeanAndStdPerPhaseAndNaForCpu() {
    ResultModel m;
    PointConfig cpu = withMode(Mode::Forward);
    cpu.device = "cpu";
    const BenchResult gpu = fake::result(withMode(Mode::Train), 10, 0.5);
    m.setResult(0, gpu);
    m.setResult(1, fake::result(cpu, 4, 0.2));
    QCOMPARE(m.data(m.index(0, ResultModel::ForwardStd), ResultModel::ValueRole).toDouble(),
             gpu.forward.std);
    QCOMPARE(m.data(m.index(0, ResultModel::OptimizerStd), ResultModel::ValueRole).toDouble(),
             gpu.optimizer.std);
    QVERIFY(gpu.forward.std > 0);
    QCOMPARE(m.data(m.index(0, ResultModel::PeakMemory)).toString(), QStringLiteral("200.0"));
    QCOMPARE(m.data(m.index(1, ResultModel::PeakMemory)).toString(), QStringLiteral("n/a"));
    QVERIFY(!m.data(m.index(1, ResultModel::PeakMemory), ResultModel::ValueRole).isValid());
    QCOMPARE(m.data(m.index(1, ResultModel::Backward)).toString(),
             QStringLiteral("n/a"));  // forward mode
    QCOMPARE(m.data(m.index(1, ResultModel::OptimizerStd)).toString(), QStringLiteral("n/a"));
    // See Note [noisy measurement]: a CV above 5% is marked, amber, its likely cause in the
    // tooltip.
    BenchResult noisy = gpu;
    noisy.config.device = "cuda";
    noisy.total = {10, 20.0, 3.0, 20.0, 16.0, 25.0, 0.15};
    ResultModel n;
    n.setResult(0, noisy);
    QVERIFY(n.data(n.index(0, ResultModel::TotalCv)).toString().endsWith(QStringLiteral("⚠")));
    QVERIFY(n.data(n.index(0, ResultModel::TotalCv), Qt::ForegroundRole).isValid());
    QVERIFY2(n.data(n.index(0, ResultModel::TotalCv), Qt::ToolTipRole)
                 .toString()
                 .contains(QStringLiteral("launch-bound")),
             qPrintable(n.data(n.index(0, ResultModel::TotalCv), Qt::ToolTipRole).toString()));
    noisy.total.cv = 0.02;  // steady
    n.setResult(0, noisy);
    QVERIFY(!n.data(n.index(0, ResultModel::TotalCv), Qt::ForegroundRole).isValid());
    QVERIFY(!n.data(n.index(0, ResultModel::TotalCv)).toString().endsWith(QStringLiteral("⚠")));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("results.csv"));
    QString error;
    QVERIFY2(exportTable(m, path, {}, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    // See Note [tables other programs read]: one table, no comment lines, snake_case headers
    // with the raw values' units, and nothing where nothing was measured.
    const QStringList lines =
        QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    const QStringList header = lines[0].split(QLatin1Char(','));
    for (const char* h : {"forward_ms", "forward_std_ms", "backward_std_ms", "optimizer_std_ms",
                          "total_std_ms", "peak_memory_bytes", "total_cv_percent"})
        QVERIFY2(header.contains(QString::fromLatin1(h)), h);
    const QStringList gpuRow = lines[1].split(QLatin1Char(','));
    const QStringList cpuRow = lines[2].split(QLatin1Char(','));
    QVERIFY(std::abs(gpuRow[ResultModel::ForwardStd].toDouble() - gpu.forward.std) < 1e-9);
    QCOMPARE(gpuRow[ResultModel::PeakMemory], QString::number(gpu.peak_memory));
    QCOMPARE(cpuRow[ResultModel::PeakMemory], QString());
    QCOMPARE(cpuRow[ResultModel::Backward], QString());
    QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("results.environment.json"))));
    // The step table: no memory figures on the CPU either.
    BenchView view;
    runInto(view, {fake::result(cpu, 4)}, 1);
    StepModel* steps = view.document()->steps();
    QCOMPARE(steps->data(steps->index(0, StepModel::Allocated)).toString(), QStringLiteral("n/a"));
    QVERIFY(!steps->data(steps->index(0, StepModel::Peak), StepModel::ValueRole).isValid());
}

void TestCharts::engineReportSaysNaForCpuMemory() {
    PointConfig cpu = withMode(Mode::Train);
    cpu.device = "cpu";
    const std::vector<BenchResult> rs = {fake::result(withMode(Mode::Train), 10, 0.5),
                                         fake::result(cpu, 4, 0.2)};
    const QString md = QString::fromStdString(markdownReport("t", rs));
    const QStringList rows = md.split(QLatin1Char('\n')).filter(QStringLiteral("| small"));
    QCOMPARE(rows.size(), 2);
    QVERIFY2(rows[0].contains(QStringLiteral(" 200 |")), qPrintable(rows[0]));
    QVERIFY2(rows[1].contains(QStringLiteral(" n/a |")), qPrintable(rows[1]));
    // Mean ± std of every phase.
    QVERIFY(md.contains(QStringLiteral("forward (ms)")) &&
            md.contains(QStringLiteral("optimizer (ms)")));
    QVERIFY(rows[0].contains(QStringLiteral(" ± ")));
    const QStringList csv =
        QString::fromStdString(formatResults(rs, TableFormat::Csv)).split(QLatin1Char('\n'));
    const int col = static_cast<int>(
        csv[0].split(QLatin1Char(',')).indexOf(QStringLiteral("peak_memory_bytes")));
    QVERIFY(col >= 0);
    QCOMPARE(csv[1].split(QLatin1Char(','))[col], QString::number(int64_t(200) << 20));
    QCOMPARE(csv[2].split(QLatin1Char(','))[col], QString());  // not measured: empty
}

void TestCharts::compareNamesTheComparison() {
    BenchView view;
    QString error;
    QVERIFY2(view.showStored(stored(7, {fake::result(withWarmup(1), 5)}), &error),
             qPrintable(error));
    QVERIFY(view.runTitle().startsWith(QStringLiteral("Run 7")));
    QSignalSpy titles(&view, &LabView::titleChanged);
    QVERIFY2(view.compare(stored(3, {fake::result(withWarmup(1), 5)}),
                          stored(5, {fake::result(withWarmup(1), 4)}), &error),
             qPrintable(error));
    QVERIFY(titles.count() > 0);
    QCOMPARE(view.runTitle(), QStringLiteral("Comparison of run 3 (A) and run 5 (B)"));
    QCOMPARE(view.storeRunId(), 0);  // export names do not say run 7
    const int pane = view.paneIndex(QStringLiteral("compare"));
    QCOMPARE(view.panes()[pane].table->fileStem(), QStringLiteral("compare-run3-vs-run5"));
    QCOMPARE(view.exportContext(pane).runTitle(),
             QStringLiteral("Comparison of run 3 (A) and run 5 (B)"));
    // The other panes still show, and name, run 7.
    view.showPane(view.paneIndex(QStringLiteral("steps")));
    QVERIFY(view.runTitle().startsWith(QStringLiteral("Run 7")));
    QCOMPARE(view.storeRunId(), 7);
    // Opening a run ends the comparison.
    QVERIFY(view.showStored(stored(8, {fake::result(withWarmup(1), 5)}), &error));
    view.showPane(pane);
    QVERIFY(view.runTitle().startsWith(QStringLiteral("Run 8")));
}

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
