// Issue 29: the distributed lab's Strategies pane as a chart. Hand-made DDP points fed to the
// view as the job posts them: each bar's compute, exposed communication and optimizer are the
// means of the slowest rank's rows over the measured steps (summarizeDdp's), with their spread;
// the step's error bar is its std; memory per rank the allocator's peak, or the tensors on the
// CPU; a point of world size 1 is the one-GPU line over the points of the same work; a failed
// point says why; hovering a bar shows its values; an empty pane a hint, not axes; the pane
// exports the chart and the table; the chart follows the theme.
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <map>

#include "core/result.h"
#include "ui/common/chartstyle.h"
#include "ui/common/exporter.h"
#include "ui/common/format.h"
#include "ui/common/qcp.h"
#include "ui/common/tableview.h"
#include "ui/common/theme.h"
#include "ui/distributed/distributeditems.h"
#include "ui/distributed/distributedview.h"
#include "ui/distributed/strategychart.h"
#include "ui/distributed/strategysummary.h"

using namespace ts;
using namespace ts::ui;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

DistributedPoint ddpPoint(const std::string& strategy, int world = 2,
                          Precision precision = Precision::FP32) {
    DistributedPoint p;
    p.experiment = DistExperiment::Ddp;
    p.world_size = world;
    p.ddp.strategy = strategy;
    p.ddp.precision = precision;
    p.ddp.warmup_steps = 1;
    p.ddp.measured_steps = 3;
    return p;
}

// Rank r's step k of a point whose communication wait is `wait` ms: forward 10 + k, backward 20
// + 2k, optimizer 5 (rank 1 a little slower), so the phases spread over the steps.
DdpStepRow step(int rank, int world, int k, double wait, int64_t peak) {
    DdpStepRow r;
    r.rank = rank;
    r.world_size = world;
    r.step = k;
    r.warmup = k == 0;
    r.forward_ms = 10 + k + rank;
    r.backward_ms = 20 + 2 * k;
    r.comm_wait_ms = wait + 0.5 * k;
    r.optimizer_ms = 5;
    r.total_ms = r.forward_ms + r.backward_ms + r.comm_wait_ms + r.optimizer_ms + 1;  // 1: other
    r.comm_hidden_ms = 0;
    r.parameter_bytes = 4000;
    r.gradient_bytes = 4000;
    r.optimizer_state_bytes = 8000;
    r.comm_buffer_bytes = 1000 + rank;
    r.memory_peak = peak > 0 ? peak + rank : 0;  // 0: the CPU, no allocator
    return r;
}

// The items a point's job posts: started, each rank's steps (warm-up and 3 measured), finished.
QList<QVariant> pointItems(int index, const DistributedPoint& p, double wait, int64_t peak = 0,
                           Status status = Status::Ok, int failed_rank = -1) {
    QList<QVariant> items{QVariant::fromValue(DistPointStarted{index, 8, p})};
    DistributedResult r;
    r.point = p;
    r.status = status;
    r.failed_rank = failed_rank;
    if (status != Status::Ok) r.error = "rank 1 exited with code 1";
    for (int k = 0; k < (status == Status::Ok ? 4 : 1); ++k)
        for (int rank = 0; rank < p.world_size; ++rank) {
            r.steps.push_back(step(rank, p.world_size, k, wait, peak));
            items << QVariant::fromValue(DistStep{index, r.steps.back()});
        }
    items << QVariant::fromValue(DistPointFinished{index, r});
    return items;
}

}  // namespace

class TestStrategyChart : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void barsAreTheSummariesOfTheSlowestRanks();
    void peakMemoryWhereTheAllocatorMeasuredIt();
    void oneGpuPointIsTheBaselineOfItsWork();
    void aFailedPointSaysWhy();
    void hoveringABarShowsItsValues();
    void anEmptyPaneShowsAHint();
    void thePaneExportsItsChartAndTable();
    void chartFollowsTheTheme();
};

void TestStrategyChart::barsAreTheSummariesOfTheSlowestRanks() {
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("naive"), 12));
    view.addItems(pointItems(1, ddpPoint("overlap"), 3));
    StrategyChart* chart = view.strategyChart();
    QCOMPARE(chart->barCount(), 2);
    QCOMPARE(chart->categories(),
             QStringList({QStringLiteral("1: naive, fp32"), QStringLiteral("2: overlap, fp32")}));
    for (int i = 0; i < 2; ++i) {
        const DistributedResult& r = view.results()[static_cast<size_t>(i)];
        const DdpSummary s = summarizeDdp(r);
        QCOMPARE(chart->segment(StrategyChart::Compute)[i], s.forward_ms + s.backward_ms);
        QCOMPARE(chart->segment(StrategyChart::Communication)[i], s.comm_wait_ms);
        QCOMPARE(chart->segment(StrategyChart::Optimizer)[i], s.optimizer_ms);
        QCOMPARE(chart->stepMeans()[i], s.step_ms);
        QCOMPARE(chart->stepErrors()[i], s.step_std_ms);
        QVERIFY(s.step_std_ms > 0);
        // The stack's top is the table's step: "other" is the step less its phases.
        const double stack = chart->segment(StrategyChart::Compute)[i] +
                             chart->segment(StrategyChart::Communication)[i] +
                             chart->segment(StrategyChart::Optimizer)[i] +
                             chart->segment(StrategyChart::Other)[i];
        QVERIFY(std::abs(stack - s.step_ms) < 1e-9);
        QVERIFY(std::abs(chart->segment(StrategyChart::Other)[i] - 1.0) < 1e-9);
        // ... and the table's step ms is the same number.
        QCOMPARE(view.strategyModel()->item(i, 8)->data(Qt::UserRole).toDouble(), s.step_ms);
        // No allocator on the CPU: the largest rank's tensors (rank 1's buffer is a byte larger).
        QCOMPARE(chart->memory()[i], (4000 + 4000 + 8000 + 1001) / kMiB);
    }
    QCOMPARE(chart->memoryUnit(), QStringLiteral("MiB"));
    // Each phase's spread: the slowest rank's (rank 1) per measured step, sample std.
    const std::vector<StrategyBar> bars = strategyBars(view.results(), {true, true});
    const Stats compute = computeStats({11 + 1 + 22, 11 + 2 + 24, 11 + 3 + 26});
    QCOMPARE(bars[0].compute_ms, compute.mean);
    QCOMPARE(bars[0].compute_std, compute.std);
    QCOMPARE(bars[0].comm_std, computeStats({12.5, 13.0, 13.5}).std);
    QCOMPARE(bars[0].optimizer_std, 0.0);
    // The naive point waits longer for its gradients than the overlapped one.
    QVERIFY(chart->segment(StrategyChart::Communication)[0] >
            chart->segment(StrategyChart::Communication)[1]);
    QVERIFY(chart->baselines() == QList<double>({-1, -1}));
    QVERIFY2(chart->explanation().contains(QStringLiteral("No one-GPU point")),
             qPrintable(chart->explanation()));
    QCOMPARE(view.strategyText()->text(), chart->explanation());
}

void TestStrategyChart::peakMemoryWhereTheAllocatorMeasuredIt() {
    DistributedView view;
    const int64_t peak = int64_t{3} << 30;
    view.addItems(pointItems(0, ddpPoint("bucketed"), 2, peak));
    StrategyChart* chart = view.strategyChart();
    QCOMPARE(chart->memoryUnit(), QStringLiteral("GiB"));
    QCOMPARE(chart->memory()[0], (peak + 1) / (1024.0 * kMiB));  // the highest rank's peak
    QVERIFY(chart->barText(0).contains(QStringLiteral("peak memory per rank")));
    QVERIFY(chart->plot()->yAxis2->label().contains(QStringLiteral("GiB")));
}

// See Note [a strategy's step against one GPU].
void TestStrategyChart::oneGpuPointIsTheBaselineOfItsWork() {
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("bucketed", 1), 0.5));
    view.addItems(pointItems(1, ddpPoint("bucketed", 2), 2));
    view.addItems(pointItems(2, ddpPoint("naive", 2), 12));
    view.addItems(pointItems(3, ddpPoint("bucketed", 2, Precision::BF16), 2));  // other work
    StrategyChart* chart = view.strategyChart();
    QCOMPARE(chart->barCount(), 4);
    const double one = summarizeDdp(view.results()[0]).step_ms;
    const QList<double> lines = chart->baselines();
    QCOMPARE(lines[0], one);
    QCOMPARE(lines[1], one);
    QCOMPARE(lines[2], one);
    QCOMPARE(lines[3], -1.0);
    // Mixed world sizes: each label says its own.
    QVERIFY2(chart->categories()[0].endsWith(QStringLiteral("one GPU")),
             qPrintable(chart->categories()[0]));
    QVERIFY(chart->categories()[1].endsWith(QStringLiteral("2 ranks")));
    const double step = summarizeDdp(view.results()[2]).step_ms;
    const QString overhead =
        QStringLiteral("+%1% over one GPU").arg(100 * (step / one - 1), 0, 'f', 1);
    QVERIFY2(chart->barText(2).contains(overhead),
             qPrintable(chart->barText(2) + " / " + overhead));
    QVERIFY(chart->barText(0).contains(QStringLiteral("this is the one-GPU step")));
    QVERIFY(chart->explanation().contains(QStringLiteral("Dashed")));
    // The line is in the legend, under its name.
    bool inLegend = false;
    for (int i = 0; i < chart->plot()->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(chart->plot()->legend->item(i)))
            inLegend = inLegend || item->plottable()->name().contains(QStringLiteral("one GPU"));
    QVERIFY(inLegend);
    // A compiled point is named so, and an eager one-GPU step is not its baseline (the compiled
    // step is measured against a compiled one).
    DistributedPoint compiled = ddpPoint("bucketed", 2);
    compiled.ddp.exec = ExecMode::Compiled;
    view.addItems(pointItems(4, compiled, 2));
    QCOMPARE(chart->barCount(), 5);
    QVERIFY2(chart->categories()[4].contains(QStringLiteral("MiB compiled,")),
             qPrintable(chart->categories()[4]));
    QVERIFY(!chart->categories()[1].contains(QStringLiteral("compiled")));
    QCOMPARE(chart->baselines()[4], -1.0);
    QCOMPARE(chart->baselines()[1], one);
}

void TestStrategyChart::aFailedPointSaysWhy() {
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("overlap"), 3));
    view.addItems(pointItems(1, ddpPoint("bucketed"), 3, 0, Status::Failed, 1));
    StrategyChart* chart = view.strategyChart();
    QCOMPARE(chart->barCount(), 2);
    QCOMPARE(chart->segment(StrategyChart::Compute)[1], 0.0);
    QCOMPARE(chart->stepMeans()[1], 0.0);
    QVERIFY2(chart->barText(1).contains(QStringLiteral("failed on rank 1")),
             qPrintable(chart->barText(1)));
    bool written = false;
    for (int i = 0; i < chart->plot()->itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(chart->plot()->item(i)))
            written = written || (t->visible() && t->text() == QStringLiteral("failed on rank 1"));
    QVERIFY(written);
}

void TestStrategyChart::hoveringABarShowsItsValues() {
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("naive"), 12));
    view.addItems(pointItems(1, ddpPoint("overlap"), 3));
    StrategyChart* chart = view.strategyChart();
    chart->resize(900, 500);
    chart->plot()->replot();
    const DdpSummary s = summarizeDdp(view.results()[1]);
    const QPointF at(chart->plot()->xAxis->coordToPixel(2.0),
                     chart->plot()->yAxis->coordToPixel(s.step_ms / 2));
    const QString text = chart->hoverText(at);
    QCOMPARE(text, chart->barText(1));
    QVERIFY2(text.startsWith(QStringLiteral("2: overlap, fp32")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("exposed communication")) &&
                 text.contains(QStringLiteral(" ± ")) && text.contains(formatMs(s.step_ms)),
             qPrintable(text));
    // Between two bars: nothing.
    const QPointF between(chart->plot()->xAxis->coordToPixel(1.5), at.y());
    QVERIFY(chart->hoverText(between).isEmpty());
}

void TestStrategyChart::anEmptyPaneShowsAHint() {
    DistributedView view;
    StrategyChart* chart = view.strategyChart();
    QCOMPARE(chart->barCount(), 0);
    QVERIFY(!chart->noteText().isEmpty());
    QVERIFY(!chart->plot()->xAxis->visible());
    QVERIFY(!chart->plot()->yAxis->visible());
    QVERIFY(!chart->plot()->yAxis2->visible());
    view.addItems(pointItems(0, ddpPoint("naive"), 12));
    QVERIFY(chart->noteText().isEmpty());
    QVERIFY(chart->plot()->xAxis->visible());
    QVERIFY(chart->plot()->yAxis2->visible());
    // An all-reduce run has no DDP point: the hint again.
    DistributedPoint all;
    all.experiment = DistExperiment::Allreduce;
    DistributedResult r;
    r.point = all;
    LabJob job;
    view.beginRun(job);
    view.addItems({QVariant::fromValue(DistPointStarted{0, 1, all}),
                   QVariant::fromValue(DistPointFinished{0, r})});
    QCOMPARE(chart->barCount(), 0);
    QVERIFY(!chart->noteText().isEmpty());
}

void TestStrategyChart::thePaneExportsItsChartAndTable() {
    Theme::instance().setMode(ThemeMode::Light);
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("naive"), 12));
    view.addItems(pointItems(1, ddpPoint("bucketed", 1), 1));
    view.addItems(pointItems(2, ddpPoint("overlap"), 3, 0, Status::Failed, 1));
    const int pane = view.paneIndex(QStringLiteral("strategies"));
    QVERIFY(pane >= 0);
    const LabView::Pane& p = view.panes()[pane];
    QCOMPARE(p.chart, static_cast<ExportableChart*>(view.strategyChart()));
    QVERIFY(p.table);
    QTemporaryDir dir;
    QString error;
    const ExportContext ctx = view.exportContext(pane);
    const QString png = dir.filePath(QStringLiteral("strategies.png"));
    QVERIFY2(exportChart(*p.chart, png, {900, 600}, ctx, &error), qPrintable(error));
    const QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= 900);
    // The compute segments are in the image (their colour, as drawn over white).
    QColor fill = currentChartStyle().seriesColor(0);
    int near = 0;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2) {
            const QColor c = image.pixel(x, y);
            near += std::abs(c.hue() - fill.hue()) < 6 && c.saturation() > 60;
        }
    QVERIFY2(near > 200, qPrintable(QString::number(near)));
    const QString svg = dir.filePath(QStringLiteral("strategies.svg"));
    QVERIFY2(exportChart(*p.chart, svg, {900, 600}, ctx, &error), qPrintable(error));
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    QVERIFY(svgFile.readAll().contains("<svg"));
    const QString csv = dir.filePath(QStringLiteral("strategies.csv"));
    QVERIFY2(exportTable(*p.table->model(), csv, ctx, &error), qPrintable(error));
    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines =
        QString::fromUtf8(csvFile.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 4);  // the header and three points, the failed one too
    QVERIFY(lines[0].contains(QStringLiteral("step_ms")));
    // The report has the chart too.
    bool inReport = false;
    for (const ReportPart& part : view.reportParts())
        inReport = inReport || part.chart == view.strategyChart();
    QVERIFY(inReport);
}

void TestStrategyChart::chartFollowsTheTheme() {
    Theme::instance().setMode(ThemeMode::Light);
    Theme::instance().setPresentation(false);
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("naive"), 12));
    StrategyChart* chart = view.strategyChart();
    auto computeColour = [&] {
        for (int i = 0; i < chart->plot()->plottableCount(); ++i)
            if (auto* b = qobject_cast<QCPBars*>(chart->plot()->plottable(i));
                b && b->name().startsWith(QStringLiteral("compute")))
                return b->brush().color();
        return QColor();
    };
    QCOMPARE(computeColour().rgb(), currentChartStyle().seriesColor(0).rgb());
    Theme::instance().setMode(ThemeMode::Dark);
    QCOMPARE(computeColour().rgb(), currentChartStyle().seriesColor(0).rgb());
    QCOMPARE(chart->backgroundColor(), currentChartStyle().background);
    QVERIFY(chart->plot()->yAxis2->tickLabelColor() == currentChartStyle().foreground);
    Theme::instance().setPresentation(true);
    QCOMPARE(chart->plot()->yAxis2->tickLabelFont().pointSizeF(),
             currentChartStyle().labelFont.pointSizeF());
    Theme::instance().setPresentation(false);
    Theme::instance().setMode(ThemeMode::Light);
}

QTEST_MAIN(TestStrategyChart)
#include "tst_strategy_chart.moc"
