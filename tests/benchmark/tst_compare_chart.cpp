// Issue 29: the benchmark's Compare as a chart. Two hand-made runs whose points match, differ
// beyond the noise, within it, failed in one run or ran in only one: the chart's bars hold the
// model's means and spreads (not pixels), pale bars and the words over each group say which
// difference is noise and why a point has no ratio; hovering a bar says the same; an empty
// comparison shows a hint instead of axes; the pane exports the chart (PNG, SVG) and the table
// (CSV); the colours follow the theme. And item 10 again: every empty cell of the table says why.
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QtCharts/QAbstractSeries>
#include <QtCharts/QChart>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "benchmark/benchmark_json.h"
#include "common/fakedata.h"
#include "ui/benchmark/benchview.h"
#include "ui/benchmark/comparechart.h"
#include "ui/benchmark/comparemodel.h"
#include "ui/common/chartinteraction.h"
#include "ui/common/chartstyle.h"
#include "ui/common/exporter.h"
#include "ui/common/tableview.h"
#include "ui/common/theme.h"

using namespace ts;
using namespace ts::ui;

namespace {

const PointConfig s32 = fake::config("small", 256, Precision::FP32);
const PointConfig s16 = fake::config("small", 256, Precision::BF16);
const PointConfig m32 = fake::config("medium", 256, Precision::FP32);
const PointConfig t32 = fake::config("tiny", 256, Precision::FP32);
const PointConfig l32 = fake::config("large", 256, Precision::FP32);

// Run A (3) and run B (5). Rows, in A's order then B's: small fp32 (B 20% slower, beyond the
// noise), small bf16 (within it: steps ± 2 ms around 5), medium (OOM in B), tiny (only in A),
// large (only in B).
std::vector<BenchResult> runA() {
    return {fake::result(s32, 10), fake::result(s16, 5, 2), fake::result(m32, 20),
            fake::result(t32, 1)};
}
std::vector<BenchResult> runB() {
    return {fake::result(s16, 5.2, 2), fake::result(s32, 12), fake::result(m32, 0, 0, Status::OOM),
            fake::result(l32, 30)};
}

void setRuns(CompareModel& m) {
    CompareModel::Side a, b;
    a.info.id = 3;
    b.info.id = 5;
    a.points = runA();
    b.points = runB();
    m.setRuns(a, b);
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

}  // namespace

class TestCompareChart : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void barsHoldTheModelsMeansAndSpreads();
    void noiseAndUnmatchedPointsAreMarked();
    void hoveringABarSaysItsValues();
    void anEmptyComparisonShowsAHint();
    void everyEmptyCellSaysWhy();
    void thePaneExportsItsChartAndTable();
    void coloursFollowTheTheme();
};

void TestCompareChart::barsHoldTheModelsMeansAndSpreads() {
    CompareModel m;
    CompareChart chart(&m);
    setRuns(m);
    chart.flushRedraw();
    QCOMPARE(chart.categories().size(), m.rowCount());
    QCOMPARE(m.rowCount(), 5);
    for (int r = 0; r < m.rowCount(); ++r) {
        const CompareModel::RowValues v = m.rowValues(r);
        QCOMPARE(chart.categories()[r], m.data(m.index(r, CompareModel::Configuration)).toString());
        // The bars are the table's values: its ValueRole, 0 where a side has no time.
        for (int side = 0; side < 2; ++side) {
            const QVariant t = m.data(m.index(r, side ? CompareModel::TimeB : CompareModel::TimeA),
                                      CompareModel::ValueRole);
            QCOMPARE(chart.means(side)[r], t.isValid() ? t.toDouble() : 0.0);
            const Stats& s = side ? v.b : v.a;
            QCOMPARE(chart.spreads(side)[r], (side ? v.okB : v.okA) ? s.std : 0.0);
        }
    }
    QCOMPARE(chart.means(0)[0], 10.0);
    QCOMPARE(chart.means(1)[0], 12.0);
    QVERIFY(chart.spreads(0)[1] > 1.0);  // the noisy point's error bar
    QCOMPARE(chart.chartFileStem(), QStringLiteral("compare-run3-vs-run5"));
    QVERIFY(chart.chartTitle().contains(QStringLiteral("Run 3 (A) against run 5 (B)")));
    // Another phase: the chart follows the model.
    m.setMetric(Metric::Backward);
    chart.flushRedraw();
    QCOMPARE(chart.means(0)[0], 6.0);  // 60% of the step is backward in the fake results
    QVERIFY(chart.chartTitle().contains(QStringLiteral("backward")));
}

void TestCompareChart::noiseAndUnmatchedPointsAreMarked() {
    CompareModel m;
    CompareChart chart(&m);
    setRuns(m);
    chart.flushRedraw();
    // The model decides, the chart draws its verdicts: see Note [a difference within the noise].
    QVERIFY(m.significant(0));
    QVERIFY(!m.significant(1));
    QCOMPARE(chart.paleRows(), QList<int>({1}));
    QCOMPARE(chart.unmatchedRows(), QList<int>({2, 3, 4}));
    const QStringList marks = chart.marks();
    QCOMPARE(marks.size(), 5);
    QCOMPARE(marks[0], QStringLiteral("1.20×"));
    QVERIFY2(
        marks[1].contains(QStringLiteral("noise")) && marks[1].startsWith(QStringLiteral("1.04×")),
        qPrintable(marks[1]));
    QCOMPARE(marks[2], QStringLiteral("not compared: run 5 OOM"));
    QCOMPARE(marks[3], QStringLiteral("only in run 3"));
    QCOMPARE(marks[4], QStringLiteral("only in run 5"));
    // A pale bar is drawn pale; a bar beyond the noise in its side's colour.
    const ChartStyle style = currentChartStyle();
    QCOMPARE(chart.barColor(0, 0).rgb(), style.seriesColor(0).rgb());
    QCOMPARE(chart.barColor(1, 0).rgb(), style.seriesColor(1).rgb());
    QVERIFY(chart.barColor(0, 1).rgb() != style.seriesColor(0).rgb());
    QVERIFY(chart.barColor(1, 1).rgb() != style.seriesColor(1).rgb());
    // Too few steps to tell: pale as well, and it says so.
    CompareModel::Side a, b;
    a.info.id = 1;
    b.info.id = 2;
    PointConfig one = s32;
    one.steps = 1;
    a.points = {fake::result(one, 10)};
    b.points = {fake::result(one, 30)};
    m.setRuns(a, b);
    chart.flushRedraw();
    QCOMPARE(chart.paleRows(), QList<int>({0}));
    QVERIFY2(chart.marks()[0].contains(QStringLiteral("too few steps")),
             qPrintable(chart.marks()[0]));
    QCOMPARE(chart.spreads(0)[0], 0.0);  // one step has no spread to draw
}

void TestCompareChart::hoveringABarSaysItsValues() {
    CompareModel m;
    CompareChart chart(&m);
    setRuns(m);
    chart.resize(900, 500);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.flushRedraw();
    const QString b0 = chart.barText(0, 1);
    QVERIFY2(b0.contains(QStringLiteral("B: run 5")) && b0.contains(QStringLiteral("12")) &&
                 b0.contains(QStringLiteral("B / A 1.200×")) &&
                 b0.contains(QStringLiteral("B slower")),
             qPrintable(b0));
    QVERIFY2(chart.barText(1, 0).contains(QStringLiteral("within noise")),
             qPrintable(chart.barText(1, 0)));
    QVERIFY2(chart.barText(3, 1).contains(QStringLiteral("run 5 has no point")),
             qPrintable(chart.barText(3, 1)));
    QVERIFY2(chart.barText(2, 1).contains(QStringLiteral("OOM")), qPrintable(chart.barText(2, 1)));
    // The tooltip over B's bar of the first group is that text (the interaction's hook).
    QAbstractSeries* bars = chart.chart()->series().first();
    const double x = 0 - 0.35 + 1.5 * 0.35;  // B's bar: the second half of the group
    const QPointF at = chart.chart()->mapToPosition(QPointF(x, 12.0), bars);
    const auto hit = chart.interaction()->nearestPoint(at, 20);
    QVERIFY(hit.has_value());
    QCOMPARE(chart.interaction()->hitText(*hit), b0);
}

void TestCompareChart::anEmptyComparisonShowsAHint() {
    CompareModel m;
    CompareChart chart(&m);
    chart.flushRedraw();
    QVERIFY(chart.hint().contains(QStringLiteral("Select two runs")));
    QVERIFY(!chart.axesVisible());
    CompareModel::Side a, b;
    a.info.id = 1;
    b.info.id = 2;
    m.setRuns(a, b);
    chart.flushRedraw();
    QVERIFY2(chart.hint().contains(QStringLiteral("Neither run")), qPrintable(chart.hint()));
    QVERIFY(!chart.axesVisible());
    setRuns(m);
    chart.flushRedraw();
    QVERIFY(chart.hint().isEmpty());
    QVERIFY(chart.axesVisible());
    m.clear();
    chart.flushRedraw();
    QVERIFY(!chart.hint().isEmpty());
    QVERIFY(chart.categories().isEmpty());
}

// Issue 29 item 10: "unmatched points '—' with no reason".
void TestCompareChart::everyEmptyCellSaysWhy() {
    CompareModel m;
    setRuns(m);
    for (int r = 0; r < m.rowCount(); ++r)
        for (int c = CompareModel::TimeA; c <= CompareModel::Ratio; ++c) {
            const QModelIndex i = m.index(r, c);
            if (m.data(i, CompareModel::ValueRole).isValid()) continue;
            const QString tip = m.data(i, Qt::ToolTipRole).toString();
            QVERIFY2(!tip.isEmpty(), qPrintable(QStringLiteral("row %1 column %2: %3")
                                                    .arg(r)
                                                    .arg(c)
                                                    .arg(m.data(i).toString())));
        }
    QCOMPARE(m.data(m.index(3, CompareModel::Ratio), Qt::ToolTipRole).toString(),
             QStringLiteral("only in run 3"));
    const QString oom = m.data(m.index(2, CompareModel::TimeB), Qt::ToolTipRole).toString();
    QVERIFY2(oom.contains(QStringLiteral("OOM")) && oom.contains(QStringLiteral("out of memory")),
             qPrintable(oom));
}

void TestCompareChart::thePaneExportsItsChartAndTable() {
    Theme::instance().setMode(ThemeMode::Light);
    BenchView view;
    QString error;
    QVERIFY2(view.compare(stored(3, runA()), stored(5, runB()), &error), qPrintable(error));
    const int pane = view.paneIndex(QStringLiteral("compare"));
    QVERIFY(pane >= 0);
    const LabView::Pane& p = view.panes()[pane];
    // Registered as the pane's chart and table: Export… and Copy take them, as other panes'.
    QCOMPARE(p.chart, static_cast<ExportableChart*>(view.compareChart()));
    QVERIFY(p.table);
    QCOMPARE(p.chart->chartFileStem(), p.table->fileStem());
    QTemporaryDir dir;
    const ExportContext ctx = view.exportContext(pane);
    const QString png = dir.filePath(QStringLiteral("compare.png"));
    QVERIFY2(exportChart(*p.chart, png, {900, 600}, ctx, &error), qPrintable(error));
    const QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= 900);
    // The bars are in the image: run A's colour fills a good part of it.
    const QRgb a = currentChartStyle().seriesColor(0).rgb();
    int filled = 0;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2) filled += image.pixel(x, y) == a;
    QVERIFY2(filled > 200, qPrintable(QString::number(filled)));
    const QString svg = dir.filePath(QStringLiteral("compare.svg"));
    QVERIFY2(exportChart(*p.chart, svg, {900, 600}, ctx, &error), qPrintable(error));
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    QVERIFY(svgFile.readAll().contains("<svg"));
    const QString csv = dir.filePath(QStringLiteral("compare.csv"));
    QVERIFY2(exportTable(*p.table->model(), csv, ctx, &error), qPrintable(error));
    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines =
        QString::fromUtf8(csvFile.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1 + view.compareModel()->rowCount());
    QVERIFY2(lines[1].contains(QStringLiteral("1.2")), qPrintable(lines[1]));
}

void TestCompareChart::coloursFollowTheTheme() {
    Theme::instance().setMode(ThemeMode::Light);
    Theme::instance().setPresentation(false);
    CompareModel m;
    CompareChart chart(&m);
    setRuns(m);
    chart.flushRedraw();
    const QColor lightA = chart.barColor(0, 0);
    Theme::instance().setMode(ThemeMode::Dark);
    QCOMPARE(chart.barColor(0, 0).rgb(), currentChartStyle().seriesColor(0).rgb());
    QVERIFY(chart.barColor(0, 0) != lightA);
    QCOMPARE(chart.backgroundColor(), currentChartStyle().background);
    // A pale bar is pale against the dark background too: nearer to it than its side's colour.
    const QColor pale = chart.barColor(0, 1), bg = currentChartStyle().background;
    auto distance = [](const QColor& x, const QColor& y) {
        return std::abs(x.red() - y.red()) + std::abs(x.green() - y.green()) +
               std::abs(x.blue() - y.blue());
    };
    QVERIFY(distance(pale, bg) < distance(chart.barColor(0, 0), bg));
    Theme::instance().setPresentation(true);
    QCOMPARE(chart.chart()->titleFont().pointSizeF(), currentChartStyle().titleFont.pointSizeF());
    Theme::instance().setPresentation(false);
    Theme::instance().setMode(ThemeMode::Light);
}

QTEST_MAIN(TestCompareChart)
#include "tst_compare_chart.moc"
