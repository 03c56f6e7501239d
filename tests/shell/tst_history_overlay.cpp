// History's Overlay Selected (issue 29): stored runs of one lab on one chart, offscreen, against a
// store written through its API. Three benchmark sweeps give three series with their points and
// labels; runs that are one point each give their steps; a mixed selection, a missing run and a
// lab without an overlay are refused with the reason and show nothing; the chart's colours
// differ per run, its legend hides and shows a run, it hovers in the lab's unit and exports;
// `--overlay` is checked before the window opens.
#include <QComboBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QXYSeries>
#include <QtTest>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_json.h"
#include "common/fakedata.h"
#include "common/windowtesting.h"
#include "core/store.h"
#include "ui/common/chartinteraction.h"
#include "ui/common/labview.h"
#include "ui/common/overlay.h"
#include "ui/shell/automation.h"
#include "ui/shell/exportcontroller.h"
#include "ui/shell/historycontroller.h"
#include "ui/shell/historywidget.h"
#include "ui/shell/labdeck.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/runlistmodel.h"

using namespace ts;
using namespace ts::ui;

namespace {

const QList<int64_t> kContexts{32, 64, 128};

// A context sweep of tiny whose point at context c takes `scale` × c ms a step.
std::vector<BenchResult> contextSweep(double scale) {
    std::vector<BenchResult> points;
    for (int64_t ctx : kContexts)
        points.push_back(
            fake::result(fake::config("tiny", ctx, Precision::FP32), scale * ctx, 0.5));
    return points;
}

OverlaidRun syntheticRun(qint64 id, double value) {
    OverlaidRun r;
    r.info.id = id;
    r.info.lab = "bench";
    r.overlay.metric = QStringLiteral("mean step time");
    r.overlay.unit = QStringLiteral("ms");
    for (int64_t ctx : kContexts)
        r.overlay.points.push_back(
            OverlayPoint{{OverlayCoordinate{QStringLiteral("context length"), QString::number(ctx),
                                            double(ctx), true}},
                         value * double(ctx),
                         0,
                         {}});
    return r;
}

}  // namespace

class TestHistoryOverlay : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void buttonWantsTwoOrMoreRuns();
    void runsOfTwoKindsAreRefusedByKind();
    void aMissingRunIsNamed();
    void aLabWithoutAnOverlaySaysSo();
    void threeSweepsAreThreeSeries();
    void legendHidesAndShowsARun();
    void hoverSpeaksTheUnit();
    void overlayExportsAsPngAndSvg();
    void forwardBackwardOptimizerByChoice();
    void onePointRunsOverlayTheirSteps();
    void eightRunsHaveEightColours();
    void aRunSplitIntoSeriesNamesWhatSplitsItFirst();
    void overlayOptionIsChecked();

private:
    qint64 storeBench(const QString& label, const std::vector<BenchResult>& points);
    qint64 storeEmpty(const std::string& lab, const QString& label);
    OverlayChart* chart() const { return w_->labView(QStringLiteral("bench"))->overlayChart(); }
    QTemporaryDir dir_;
    std::unique_ptr<MainWindow> w_;
    QList<qint64> sweeps_, singles_;
    qint64 attention_ = 0;
    QList<qint64> precision_;
};

void TestHistoryOverlay::initTestCase() {
    QVERIFY(dir_.isValid());
    w_ = freshWindow("tst_history_overlay", dir_.filePath("results.db"));
    QVERIFY(QTest::qWaitForWindowExposed(w_.get()));
    QTRY_VERIFY_WITH_TIMEOUT(w_->session()->capabilitiesReady(), 60000);
    for (int k = 1; k <= 3; ++k)
        sweeps_ << storeBench(QStringLiteral("sweep %1").arg(k), contextSweep(0.1 * k));
    attention_ = storeEmpty("attention", QStringLiteral("an attention run"));
    precision_ << storeEmpty("precision", QStringLiteral("p1"))
               << storeEmpty("precision", QStringLiteral("p2"));
    for (int k = 1; k <= 2; ++k)
        singles_ << storeBench(QStringLiteral("single %1").arg(k),
                               {fake::result(fake::config("tiny", 64, Precision::FP32), 5.0 * k)});
    w_->history()->refresh();
    QTRY_COMPARE_WITH_TIMEOUT(w_->history()->runList()->rowCount(), 8, 10000);
}

void TestHistoryOverlay::cleanupTestCase() { w_.reset(); }

qint64 TestHistoryOverlay::storeBench(const QString& label,
                                      const std::vector<BenchResult>& points) {
    ResultStore store(w_->session()->storePath().toStdString());
    SweepSpec spec;
    spec.base = points.front().config;
    const qint64 id = store.createRun("bench", label.toStdString(),
                                      benchSpecJson(spec, points.size()), "NVIDIA Test GPU");
    for (size_t i = 0; i < points.size(); ++i)
        storeBenchPoint(store, id, static_cast<int>(i), points[i]);
    store.finishRun(id);
    return id;
}

qint64 TestHistoryOverlay::storeEmpty(const std::string& lab, const QString& label) {
    ResultStore store(w_->session()->storePath().toStdString());
    const qint64 id = store.createRun(lab, label.toStdString(), "{}", "CPU");
    store.finishRun(id);
    return id;
}

void TestHistoryOverlay::buttonWantsTwoOrMoreRuns() {
    HistoryWidget* h = w_->history()->widget();
    auto* button = h->findChild<QPushButton*>(QStringLiteral("overlaySelected"));
    QVERIFY(button);
    h->selectRuns({sweeps_[0]});
    QVERIFY(!button->isEnabled());
    h->selectRuns({sweeps_[0], sweeps_[1]});
    QVERIFY(button->isEnabled());
    // Runs of two kinds too: pressing it says why nothing is drawn.
    h->selectRuns({sweeps_[0], attention_});
    QVERIFY(button->isEnabled());
    const auto texts = [&] {
        QStringList t;
        for (QAction* a : h->contextMenu()->actions()) t << a->text();
        return t;
    }();
    QVERIFY2(texts.contains(QStringLiteral("Overlay Selected")), qPrintable(texts.join('|')));
}

void TestHistoryOverlay::runsOfTwoKindsAreRefusedByKind() {
    QSignalSpy failed(w_->history(), &HistoryController::overlayFailed);
    QSignalSpy ready(w_->history(), &HistoryController::overlayReady);
    w_->history()->overlayStoredRuns({sweeps_[0], sweeps_[1], attention_});
    QTRY_COMPARE(failed.size(), 1);
    const QString why = failed.last()[0].toString();
    QVERIFY2(why.contains(QStringLiteral("only runs of one kind overlay"), Qt::CaseInsensitive),
             qPrintable(why));
    QVERIFY2(why.contains(QStringLiteral("'bench'")) && why.contains(QStringLiteral("'attention'")),
             qPrintable(why));
    QVERIFY2(why.contains(QString::number(attention_)), qPrintable(why));
    // Nothing else happens: no chart anywhere.
    QTest::qWait(200);
    QCOMPARE(ready.size(), 0);
    for (const LabDeck::Lab& lab : w_->labs()->labs()) {
        QCOMPARE(lab.view->paneIndex(QStringLiteral("overlay")), -1);
        QVERIFY(!lab.view->overlayChart());
    }
}

void TestHistoryOverlay::aMissingRunIsNamed() {
    QSignalSpy failed(w_->history(), &HistoryController::overlayFailed);
    w_->history()->overlayStoredRuns({sweeps_[0], 999});
    QTRY_COMPARE(failed.size(), 1);
    QVERIFY2(failed.last()[0].toString().contains(QStringLiteral("run 999")),
             qPrintable(failed.last()[0].toString()));
    QVERIFY(!chart());
}

void TestHistoryOverlay::aLabWithoutAnOverlaySaysSo() {
    QSignalSpy failed(w_->history(), &HistoryController::overlayFailed);
    w_->history()->overlayStoredRuns(precision_);
    QTRY_COMPARE(failed.size(), 1);
    QVERIFY2(failed.last()[0].toString().contains(QStringLiteral("have no overlay")),
             qPrintable(failed.last()[0].toString()));
    QVERIFY(!w_->labView(QStringLiteral("precision"))->overlayChart());
    // One run alone is no overlay either.
    w_->history()->overlayStoredRuns({sweeps_[0]});
    QTRY_COMPARE(failed.size(), 2);
    QVERIFY(failed.last()[0].toString().contains(QStringLiteral("two or more")));
}

void TestHistoryOverlay::threeSweepsAreThreeSeries() {
    QSignalSpy ready(w_->history(), &HistoryController::overlayReady);
    w_->history()->widget()->selectRuns(sweeps_);
    w_->history()->overlaySelected();
    QTRY_COMPARE(ready.size(), 1);
    QCOMPARE(ready.last()[0].toString(), QStringLiteral("bench"));
    LabView* v = w_->labView(QStringLiteral("bench"));
    QCOMPARE(w_->labs()->currentView(), v);
    QCOMPARE(v->currentPane(), v->paneIndex(QStringLiteral("overlay")));
    OverlayChart* c = chart();
    QVERIFY(c);
    c->flushRedraw();
    const OverlayPlot& plot = v->overlayModel()->plot();
    QCOMPARE(plot.xTitle, QStringLiteral("context length"));
    QVERIFY(!plot.steps);
    QVERIFY2(plot.yTitle.contains(QStringLiteral("ms")), qPrintable(plot.yTitle));
    QCOMPARE(plot.series.size(), 3);
    QCOMPARE(c->seriesCount(), 3);
    QCOMPARE(plot.runIds, sweeps_);
    const auto series = c->chart()->series();
    for (int k = 0; k < 3; ++k) {
        // Labelled by run id, label and date, as the legend shows it.
        const QString name = plot.series[k];
        QVERIFY2(name.startsWith(QStringLiteral("run %1 · sweep %2 · ").arg(sweeps_[k]).arg(k + 1)),
                 qPrintable(name));
        QVERIFY2(QRegularExpression(QStringLiteral("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d$"))
                     .match(name)
                     .hasMatch(),
                 qPrintable(name));
        QCOMPARE(series[k]->name(), name);
        // Its points: each context with that run's mean step time.
        QList<QPair<double, double>> points;
        for (const SeriesModel::Row& r : v->overlayModel()->rows())
            if (r.series == name) points.append({r.x, r.mean});
        QCOMPARE(points.size(), 3);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(points[i].first, double(kContexts[i]));
            QVERIFY2(std::abs(points[i].second - 0.1 * (k + 1) * kContexts[i]) < 1e-9,
                     qPrintable(QString::number(points[i].second)));
        }
        QCOMPARE(c->seriesPoints(k).size(), 3);
    }
    // Colours differ per run, none grey.
    QSet<QRgb> colours;
    for (QAbstractSeries* s : series) {
        const QColor col = static_cast<QXYSeries*>(s)->color();
        QVERIFY2(col.hsvSaturation() > 60, qPrintable(col.name()));
        colours.insert(col.rgb());
    }
    QCOMPARE(colours.size(), 3);
}

void TestHistoryOverlay::legendHidesAndShowsARun() {
    OverlayChart* c = chart();
    QVERIFY(c);
    QLegendMarker* marker = c->chart()->legend()->markers(c->chart()->series()[1]).value(0);
    QVERIFY(marker);
    Q_EMIT marker->clicked();
    QVERIFY(!c->seriesVisible(1));
    QVERIFY(marker->isVisible());  // the entry stays to bring it back
    QVERIFY(c->seriesVisible(0) && c->seriesVisible(2));
    Q_EMIT marker->clicked();
    QVERIFY(c->seriesVisible(1));
}

void TestHistoryOverlay::hoverSpeaksTheUnit() {
    OverlayChart* c = chart();
    auto* line = static_cast<QXYSeries*>(c->chart()->series()[2]);
    const QPointF at = c->chart()->mapToPosition(line->points().back(), line);
    const auto hit = c->interaction()->nearestPoint(at);
    QVERIFY(hit);
    QCOMPARE(hit->series, line->name());
    const QString text = c->interaction()->hitText(*hit);
    QVERIFY2(text.contains(QStringLiteral("context length: 128")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral(" ms")), qPrintable(text));
}

void TestHistoryOverlay::overlayExportsAsPngAndSvg() {
    for (const QString& name : {QStringLiteral("overlay.png"), QStringLiteral("overlay.svg")}) {
        QString error;
        const QString path = dir_.filePath(name);
        QVERIFY2(w_->exports()->exportTab(QStringLiteral("overlay"), path, QSize(900, 600), &error),
                 qPrintable(error));
        QVERIFY(QFileInfo(path).size() > 1000);
    }
    QFile svg(dir_.filePath("overlay.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QByteArray text = svg.readAll();
    QVERIFY(text.contains(QStringLiteral("run %1").arg(sweeps_[0]).toUtf8()));
    // The export's header names the overlaid runs, not the run the lab's other panes show.
    LabView* v = w_->labView(QStringLiteral("bench"));
    const ExportContext ctx = v->paneContext(v->paneIndex(QStringLiteral("overlay")));
    QVERIFY2(
        ctx.runTitle().contains(
            QStringLiteral("%1, %2, %3 overlaid").arg(sweeps_[0]).arg(sweeps_[1]).arg(sweeps_[2])),
        qPrintable(ctx.runTitle()));
}

void TestHistoryOverlay::forwardBackwardOptimizerByChoice() {
    LabView* v = w_->labView(QStringLiteral("bench"));
    QComboBox* metric = v->overlayMetric();
    QVERIFY(metric && metric->isVisibleTo(v));
    QCOMPARE(metric->count(), 4);
    QCOMPARE(metric->itemText(1), QStringLiteral("forward time"));
    QCOMPARE(metric->currentIndex(), 0);
    metric->setCurrentIndex(1);
    Q_EMIT metric->activated(1);
    const OverlayPlot& plot = v->overlayModel()->plot();
    QCOMPARE(plot.metric, 1);
    QVERIFY2(plot.yTitle.startsWith(QStringLiteral("forward time")), qPrintable(plot.yTitle));
    QCOMPARE(chart()->seriesCount(), 3);
    // fake::result: forward is 0.3 of each step.
    for (const SeriesModel::Row& r : v->overlayModel()->rows()) {
        const int k = static_cast<int>(plot.runIds.indexOf(sweeps_[0])) +
                      static_cast<int>(plot.series.indexOf(r.series));
        QVERIFY2(std::abs(r.mean - 0.3 * 0.1 * (k + 1) * r.x) < 1e-9, qPrintable(r.series));
    }
}

void TestHistoryOverlay::onePointRunsOverlayTheirSteps() {
    QSignalSpy ready(w_->history(), &HistoryController::overlayReady);
    w_->history()->overlayStoredRuns(singles_);
    QTRY_COMPARE(ready.size(), 1);
    const OverlayPlot& plot = w_->labView(QStringLiteral("bench"))->overlayModel()->plot();
    QVERIFY(plot.steps);
    QCOMPARE(plot.series.size(), 2);
    QCOMPARE(chart()->seriesCount(), 2);
    // fake::result: one warm-up step, then four measured ones at 5k ± 0.1 ms.
    for (int k = 0; k < 2; ++k) {
        QList<double> xs, ys;
        for (const SeriesModel::Row& r :
             w_->labView(QStringLiteral("bench"))->overlayModel()->rows())
            if (r.series == plot.series[k]) xs << r.x, ys << r.mean;
        QCOMPARE(xs, (QList<double>{1, 2, 3, 4}));
        for (double y : ys) QVERIFY(std::abs(y - 5.0 * (k + 1)) <= 0.1 + 1e-9);
        // Steps sit on their step: series that share an x are not nudged apart.
        for (const QPointF& p : chart()->seriesPoints(k)) QCOMPARE(p.x(), std::round(p.x()));
    }
}

void TestHistoryOverlay::eightRunsHaveEightColours() {
    std::vector<OverlaidRun> runs;
    for (int k = 1; k <= 10; ++k) runs.push_back(syntheticRun(k, k));
    QString error;
    const auto plot = combineOverlays(runs, &error);
    QVERIFY2(plot, qPrintable(error));
    QCOMPARE(plot->series.size(), 10);
    OverlayModel model;
    model.setPlot(*plot);
    OverlayChart c(&model);
    c.flushRedraw();
    QCOMPARE(c.seriesCount(), 10);
    QSet<QRgb> colours;
    for (int i = 0; i < 10; ++i) {
        QVERIFY2(c.seriesColor(i).hsvSaturation() > 60, qPrintable(c.seriesColor(i).name()));
        colours.insert(c.seriesColor(i).rgb());
    }
    QVERIFY2(colours.size() >= 8, qPrintable(QString::number(colours.size())));
    // Runs that measure different things share no axis.
    runs[3].overlay.metric = QStringLiteral("bus bandwidth");
    runs[3].overlay.unit = QStringLiteral("GB/s");
    QVERIFY(!combineOverlays(runs, &error));
    QVERIFY2(error.contains(QStringLiteral("bus bandwidth (GB/s) (runs 4)")), qPrintable(error));
}

// A run that varies along more than the x (bucket sizes, where the other run varies the
// strategy) is a series per value; each series' name says that value right after the run, so a
// legend that cuts long names short still tells them apart (seen on the GPU machine: four
// entries "run 2 · 2026-11-27 0…").
void TestHistoryOverlay::aRunSplitIntoSeriesNamesWhatSplitsItFirst() {
    auto point = [](const QString& strategy, double bucket, double value) {
        return OverlayPoint{{OverlayCoordinate{QStringLiteral("strategy"), strategy, 0, false},
                             OverlayCoordinate{QStringLiteral("bucket MiB"),
                                               QString::number(bucket), bucket, true}},
                            value,
                            0,
                            {}};
    };
    std::vector<OverlaidRun> runs(2);
    for (int k = 0; k < 2; ++k) {
        runs[k].info.id = k + 1;
        runs[k].info.lab = "distributed";
        runs[k].info.created = "2026-11-27T07:20:41Z";
        runs[k].overlay.metric = QStringLiteral("step time");
        runs[k].overlay.unit = QStringLiteral("ms");
    }
    runs[0].overlay.points = {point(QStringLiteral("bucketed"), 25, 40),
                              point(QStringLiteral("fsdp"), 25, 45)};
    runs[1].info.label = "sweep";
    for (double b : {1.0, 10.0, 100.0})
        runs[1].overlay.points.push_back(point(QStringLiteral("bucketed"), b, 390 - b / 100));
    QString error;
    const auto plot = combineOverlays(runs, &error);
    QVERIFY2(plot, qPrintable(error));
    QCOMPARE(plot->xTitle, QStringLiteral("strategy"));
    QVERIFY2(plot->series.contains(QStringLiteral("run 2 · bucket MiB 1 · sweep")),
             qPrintable(plot->series.join(QStringLiteral(" | "))));
    QVERIFY(plot->series.contains(QStringLiteral("run 2 · bucket MiB 100 · sweep")));
    QCOMPARE(plot->series.size(), 4);  // run 1 whole, run 2 a series per bucket size
}

void TestHistoryOverlay::overlayOptionIsChecked() {
    AutomationOptions o;
    AutomationArgs a;
    a.overlay = QStringLiteral("3,5,9");
    a.shots = {QStringLiteral("out.png")};
    QCOMPARE(parseAutomation(a, &o), QString());
    QCOMPARE(o.overlay, (QList<qint64>{3, 5, 9}));
    QCOMPARE(o.shots.size(), 1);
    QCOMPARE(o.shots[0].first, QString());  // the window as the overlay leaves it
    for (const QString bad : {QStringLiteral("3"), QStringLiteral("3,x"), QStringLiteral("3,,5")}) {
        a.overlay = bad;
        QVERIFY2(
            parseAutomation(a, &o).startsWith(QStringLiteral("--overlay: expected two or more")),
            qPrintable(bad));
    }
    a.overlay = QStringLiteral("3,5");
    a.compare = QStringLiteral("3,5");
    QVERIFY(parseAutomation(a, &o).contains(QStringLiteral("choose one")));
}

QTEST_MAIN(TestHistoryOverlay)
#include "tst_history_overlay.moc"
