// Charts and exports on hand-made data: every chart writes a PNG that decodes at the asked
// size, an SVG that parses and a PDF; tables go to CSV (snake_case header and rows, the
// environment as JSON beside it) and Markdown; a report links images that exist. The memory chart
// takes a million points and still replots quickly; chart redraws stay throttled.
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSpinBox>
#include <QSvgRenderer>
#include <QXmlStreamReader>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtTest>
#include <ctime>

#include "common/fakedata.h"
#include "ui/benchmark/memorychart.h"
#include "ui/benchmark/resultmodel.h"
#include "ui/benchmark/speedupmodel.h"
#include "ui/benchmark/stepchart.h"
#include "ui/benchmark/stepmodel.h"
#include "ui/benchmark/sweepmodel.h"
#include "ui/common/exporter.h"
#include "ui/common/format.h"
#include "ui/common/pointformat.h"
#include "ui/common/qcp.h"
#include "ui/common/sweepchart.h"
#include "ui/common/theme.h"
#include "ui/shell/exportdialog.h"

using namespace ts;
using namespace ts::ui;

namespace {

// CPU time of this thread, ms: what the UI thread itself spends, whatever else the machine
// runs (wall time on a shared two-core box mostly measures the neighbours).
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

ExportContext context() {
    ExportContext ctx;
    ctx.runLabel = QStringLiteral("test run");
    ctx.storeRunId = 42;
    ctx.environment = fake::result(fake::config("tiny", 32, Precision::FP32), 1).environment;
    const std::vector<PointConfig> configs{fake::config("small", 256, Precision::FP32),
                                           fake::config("small", 256, Precision::BF16)};
    ctx.configuration = describeSweep(configs);
    ctx.configurationJson = configurationJson(configs);
    return ctx;
}

QString readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

void verifyPng(const QString& path, QSize size) {
    QImage img;
    QVERIFY2(img.load(path, "PNG"), qPrintable(path));
    QCOMPARE(img.size(), size);
    QVERIFY(img.text(QStringLiteral("Description")).contains(QStringLiteral("NVIDIA Test GPU")));
    // Not blank: a chart has more than a couple of colours.
    QSet<QRgb> colours;
    for (int y = 0; y < img.height(); y += 7)
        for (int x = 0; x < img.width(); x += 7) colours.insert(img.pixel(x, y));
    QVERIFY2(colours.size() > 5, qPrintable(QString::number(colours.size())));
}

void verifySvg(const QString& path) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&f);
    while (!xml.atEnd()) xml.readNext();
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QSvgRenderer svg(path);
    QVERIFY(svg.isValid());
    QVERIFY(readAll(path).contains(QStringLiteral("LibTorch: 2.11.0")));
}

void verifyPdf(const QString& path) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    QVERIFY(bytes.startsWith("%PDF-"));
    QVERIFY(bytes.trimmed().endsWith("%%EOF"));
    QVERIFY(bytes.size() > 1000);
}

}  // namespace

class TestExports : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void chartsExportToPngSvgPdf_data();
    void chartsExportToPngSvgPdf();
    void badExportsAreRefusedNotCrashed();
    void missingFoldersAreMade();
    void reportHeadingsAreReadable();
    void exportDialogKeepsThePresetSize();
    void darkChartsExportInPrintColours();
    void csvIsOneTableWithItsEnvironmentBeside();
    void markdownAndClipboard();
    void reportLinksImagesThatExist();
    void stepChartShowsWarmupAndFollowsPoints();
    void sweepChartDrawsSeriesWithErrorBars();
    void redrawsAreThrottled();
    void memoryChartTakesAMillionPoints();

private:
    QTemporaryDir dir_;
    StepModel steps_;
    ResultModel results_;
    std::unique_ptr<SweepModel> sweep_;
    std::unique_ptr<StepChart> stepChart_;
    std::unique_ptr<SweepChart> sweepChart_;
    std::unique_ptr<MemoryChart> memoryChart_;
};

void TestExports::initTestCase() {
    QVERIFY(dir_.isValid());
    sweep_ = std::make_unique<SweepModel>(&results_);
    const std::vector<BenchResult> rs = {
        fake::result(fake::config("tiny", 256, Precision::FP32), 2, 0.2),
        fake::result(fake::config("mini", 256, Precision::FP32), 6, 0.4),
        fake::result(fake::config("small", 256, Precision::FP32), 30, 2),
        fake::result(fake::config("tiny", 256, Precision::BF16), 1.5, 0.1),
        fake::result(fake::config("mini", 256, Precision::BF16), 3, 0.3),
        fake::result(fake::config("small", 256, Precision::BF16), 0, 0, Status::OOM)};
    for (size_t i = 0; i < rs.size(); ++i) {
        results_.setRunning(int(i), rs[i].config);
        steps_.appendSteps(int(i), QList<StepSample>(rs[i].steps.begin(), rs[i].steps.end()));
        results_.setResult(int(i), rs[i]);
    }
    stepChart_ = std::make_unique<StepChart>(&steps_, &results_);
    sweepChart_ = std::make_unique<SweepChart>(sweep_.get());
    memoryChart_ = std::make_unique<MemoryChart>(&steps_);
    for (QWidget* w :
         {static_cast<QWidget*>(stepChart_.get()), static_cast<QWidget*>(sweepChart_.get()),
          static_cast<QWidget*>(memoryChart_.get())}) {
        w->resize(900, 550);
        w->show();
    }
    stepChart_->setPoint(0);
}

void TestExports::chartsExportToPngSvgPdf_data() {
    QTest::addColumn<int>("chart");
    QTest::addColumn<QString>("ext");
    for (int c = 0; c < 3; ++c)
        for (const char* ext : {"png", "svg", "pdf"})
            QTest::addRow("%s.%s",
                          c == 0   ? "steps"
                          : c == 1 ? "sweep"
                                   : "memory",
                          ext)
                << c << QString::fromLatin1(ext);
}

void TestExports::chartsExportToPngSvgPdf() {
    QFETCH(int, chart);
    QFETCH(QString, ext);
    ExportableChart* charts[] = {stepChart_.get(), sweepChart_.get(), memoryChart_.get()};
    ExportableChart* c = charts[chart];
    const QString path = dir_.filePath(c->chartFileStem() + QLatin1Char('.') + ext);
    const QSize size(1280, 720);
    QString error;
    QVERIFY2(exportChart(*c, path, size, context(), &error), qPrintable(error));
    if (ext == QLatin1String("png"))
        verifyPng(path, size);
    else if (ext == QLatin1String("svg"))
        verifySvg(path);
    else
        verifyPdf(path);
    // The on-screen chart is back at its own size after painting at another.
    QCOMPARE(dynamic_cast<QWidget*>(c)->size(), QSize(900, 550));
}

void TestExports::badExportsAreRefusedNotCrashed() {
    QString error;
    QVERIFY(!exportChart(*stepChart_, dir_.filePath(QStringLiteral("x.bmp")), {800, 600}, context(),
                         &error));
    QVERIFY(error.contains(QStringLiteral(".png")));
    QVERIFY(!exportChart(*stepChart_, dir_.filePath(QStringLiteral("x.png")), {10, 10}, context(),
                         &error));
    QVERIFY(error.contains(QStringLiteral("size")));
    QVERIFY(!exportTable(results_, dir_.filePath(QStringLiteral("x.xlsx")), context(), &error));
    QVERIFY(error.contains(QStringLiteral(".csv")));
    // A folder that cannot be made (a file stands where it would go) is refused, with the reason.
    QFile blocker(dir_.filePath(QStringLiteral("blocker")));
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    error.clear();
    QVERIFY(!exportChart(*stepChart_, dir_.filePath(QStringLiteral("blocker/dir/x.png")),
                         {800, 600}, context(), &error));
    QVERIFY2(error.contains(QStringLiteral("does not exist and cannot be created")),
             qPrintable(error));
    error.clear();
    QVERIFY(
        !exportTable(results_, dir_.filePath(QStringLiteral("blocker/x.csv")), context(), &error));
    QVERIFY2(error.contains(QStringLiteral("cannot be created")), qPrintable(error));
}

void TestExports::missingFoldersAreMade() {
    // A fresh profile has no ~/Documents: the first export makes the folder it needs.
    QString error;
    const QString png = dir_.filePath(QStringLiteral("missing/dir/x.png"));
    QVERIFY2(exportChart(*stepChart_, png, {800, 600}, context(), &error), qPrintable(error));
    QVERIFY(QImage(png).width() == 800);
    const QString csv = dir_.filePath(QStringLiteral("other/missing/x.csv"));
    QVERIFY2(exportTable(results_, csv, context(), &error), qPrintable(error));
    QVERIFY(QFileInfo(csv).size() > 0);
}

void TestExports::csvIsOneTableWithItsEnvironmentBeside() {
    const QString path = dir_.filePath(QStringLiteral("results.csv"));
    QString error;
    QVERIFY2(exportTable(results_, path, context(), &error), qPrintable(error));
    // See Note [tables other programs read]: the table alone, its header first...
    const QStringList lines = readAll(path).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY(!lines.front().startsWith(QLatin1Char('#')));
    const QStringList header = lines.front().split(QLatin1Char(','));
    QCOMPARE(header, csvHeaders(results_));
    QCOMPARE(header.size(), results_.columnCount());
    const QRegularExpression snake(QStringLiteral("^[a-z][a-z0-9_]*$"));
    for (const QString& h : header) QVERIFY2(snake.match(h).hasMatch(), qPrintable(h));
    QCOMPARE(header[ResultModel::Total], QStringLiteral("total_ms"));
    QCOMPARE(header[ResultModel::PeakMemory], QStringLiteral("peak_memory_bytes"));
    QCOMPARE(lines.size(), 1 + results_.rowCount());
    // ... and where it came from beside it, as JSON.
    const QString beside = dir_.filePath(QStringLiteral("results.environment.json"));
    QCOMPARE(environmentPathFor(path), beside);
    const QJsonObject env = QJsonDocument::fromJson(readAll(beside).toUtf8()).object();
    QCOMPARE(env.value(QStringLiteral("run")).toString(), QStringLiteral("Run 42 — test run"));
    QCOMPARE(env.value(QStringLiteral("store_run_id")).toInt(), 42);
    const QJsonObject machine = env.value(QStringLiteral("environment")).toObject();
    QCOMPARE(machine.value(QStringLiteral("device_name")).toString(),
             QStringLiteral("NVIDIA Test GPU"));
    QCOMPARE(machine.value(QStringLiteral("driver_version")).toString(), QStringLiteral("550.1"));
    QVERIFY(env.value(QStringLiteral("configuration"))
                .toString()
                .startsWith(QStringLiteral("2 points")));
    QVERIFY(env.value(QStringLiteral("configuration_json")).isArray());
    // Without it when not wanted.
    const QString alone = dir_.filePath(QStringLiteral("alone.csv"));
    QVERIFY2(exportTable(results_, alone, context(), &error, false), qPrintable(error));
    QVERIFY(!QFileInfo::exists(dir_.filePath(QStringLiteral("alone.environment.json"))));
    // Raw numbers, so a spreadsheet can compute: the total mean of the first point.
    const QStringList row = lines[1].split(QLatin1Char(','));
    QCOMPARE(row.size(), header.size());
    QCOMPARE(row[ResultModel::Total].toDouble(), results_.entries()[0].result.total.mean);
    QCOMPARE(lines.last().split(QLatin1Char(','))[ResultModel::Status], QStringLiteral("OOM"));
}

void TestExports::markdownAndClipboard() {
    SpeedupModel speedup(&results_);
    const QString md = tableToMarkdown(speedup, context());
    const QStringList lines = md.split(QLatin1Char('\n'));
    QVERIFY2(
        lines[0].startsWith(QStringLiteral("| Configuration | fp32 ms | bf16 ms | bf16 vs fp32 ×")),
        qPrintable(lines[0]));
    QVERIFY(lines[1].startsWith(QLatin1String("| --- |")));
    QCOMPARE(lines.filter(QRegularExpression(QStringLiteral("^\\| (tiny|mini|small) \\|"))).size(),
             3);
    QVERIFY(md.contains(QStringLiteral("| OOM |")));
    QVERIFY(md.contains(QStringLiteral("- Device: NVIDIA Test GPU")));
    // A label is text, not markup: "<b>" and "*" come out as written, a "|" splits no cell.
    ExportContext marked = context();
    marked.runLabel = QStringLiteral("<b>bold</b> *x* | y");
    const QString escaped = tableToMarkdown(speedup, marked);
    QVERIFY2(escaped.contains(QStringLiteral("\\<b\\>bold\\</b\\> \\*x\\* \\| y")),
             qPrintable(escaped));
    QVERIFY(!escaped.contains(QStringLiteral("<b>")));
    copyTableToClipboard(speedup, context());
    const QString text = QApplication::clipboard()->text();
    // The CSV's table with tabs: its headers and raw numbers (a spreadsheet computes with them).
    QVERIFY2(text.startsWith(QStringLiteral("configuration\tfp32_ms\tbf16_ms\tbf16_vs_fp32_x")),
             qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral(" ms")) && !text.contains(QStringLiteral("×")),
             qPrintable(text));
    // Only the table in plain text (a spreadsheet takes every line as a row); the context
    // is in the HTML flavour's footer.
    QVERIFY2(!text.contains(QLatin1Char('#')), qPrintable(text));
    QCOMPARE(text.split(QLatin1Char('\n'), Qt::SkipEmptyParts).size(), speedup.rowCount() + 1);
    QVERIFY(QApplication::clipboard()->mimeData()->html().contains(
        QStringLiteral("Device: NVIDIA Test GPU")));
    copyChartToClipboard(*sweepChart_, {640, 400}, context());
    QCOMPARE(QApplication::clipboard()->image().size(), QSize(640, 400));
}

void TestExports::reportHeadingsAreReadable() {
    // Pane titles carry "&" for Alt+key; an empty configuration is no section at all.
    ExportContext ctx = context();
    ctx.configurationJson = QStringLiteral("[]");
    const QString path = dir_.filePath(QStringLiteral("headings.md"));
    QString error;
    QVERIFY2(exportReport(path,
                          {{QStringLiteral("&Attention"), stepChart_.get(), nullptr},
                           {QStringLiteral("Forward && backward"), nullptr, &results_}},
                          ctx, {800, 500}, &error),
             qPrintable(error));
    const QString md = readAll(path);
    QVERIFY2(md.contains(QStringLiteral("## Attention\n")), qPrintable(md));
    QVERIFY(md.contains(QStringLiteral("![Attention](")));
    QVERIFY(md.contains(QStringLiteral("## Forward & backward\n")));
    QVERIFY(!md.contains(QStringLiteral("## Configuration")));
    QVERIFY(!md.contains(QStringLiteral("[]")));
}

void TestExports::exportDialogKeepsThePresetSize() {
    ExportDialog dlg(ExportDialog::Kind::Chart, dir_.filePath(QStringLiteral("x.png")),
                     QSize(900, 550));
    auto* preset = dlg.findChild<QComboBox*>();
    QVERIFY(preset);
    QComboBox* size = nullptr;  // the second combo: the size presets
    for (QComboBox* c : dlg.findChildren<QComboBox*>())
        if (c->findText(QStringLiteral("Paper column"), Qt::MatchStartsWith) >= 0) size = c;
    QVERIFY(size);
    size->setCurrentIndex(size->findText(QStringLiteral("Paper column"), Qt::MatchStartsWith));
    QVERIFY2(size->currentText().startsWith(QStringLiteral("Paper column")),
             qPrintable(size->currentText()));
    QCOMPARE(dlg.size(), QSize(800, 500));
    // Typing a size of one's own is Custom.
    dlg.findChildren<QSpinBox*>().first()->setValue(801);
    QCOMPARE(size->currentText(), QStringLiteral("Custom"));
    // Every row label shows its mnemonic, not a literal "&".
    for (QLabel* l : dlg.findChildren<QLabel*>())
        if (l->text().contains(QLatin1Char('&'))) QVERIFY2(l->buddy(), qPrintable(l->text()));
}

void TestExports::darkChartsExportInPrintColours() {
    Theme& theme = Theme::instance();
    const ThemeMode was = theme.mode();
    theme.setMode(ThemeMode::Dark);
    const QColor screen = renderChartImage(*sweepChart_, {600, 400}, context()).pixelColor(5, 5);
    QVERIFY(screen.lightnessF() < 0.5);
    {
        ExportDialog dlg(ExportDialog::Kind::Chart, dir_.filePath(QStringLiteral("x.png")),
                         QSize(600, 400));
        auto* colours = dlg.findChild<QComboBox*>(QStringLiteral("colours"));
        QVERIFY(colours && colours->isEnabled());
        colours->setCurrentIndex(colours->findData(true));
        QVERIFY(dlg.printColours());
        const PrintColours print(dlg.printColours());
        QVERIFY(!theme.isDark());
        const QImage paper = renderChartImage(*sweepChart_, {600, 400}, context());
        QVERIFY2(paper.pixelColor(5, 5).lightnessF() > 0.9,
                 qPrintable(paper.pixelColor(5, 5).name()));
    }
    // Afterwards the window's charts are dark again.
    QVERIFY(theme.isDark());
    QCOMPARE(renderChartImage(*sweepChart_, {600, 400}, context()).pixelColor(5, 5), screen);
    theme.setMode(was);
}

void TestExports::reportLinksImagesThatExist() {
    SpeedupModel speedup(&results_);
    const QString path = dir_.filePath(QStringLiteral("report.md"));
    QString error;
    QVERIFY2(exportReport(path,
                          {{QStringLiteral("Steps"), stepChart_.get(), nullptr},
                           {QStringLiteral("Sweep"), sweepChart_.get(), nullptr},
                           {QStringLiteral("Speedup"), nullptr, &speedup},
                           {QStringLiteral("Memory"), memoryChart_.get(), nullptr}},
                          context(), {1000, 600}, &error),
             qPrintable(error));
    const QString md = readAll(path);
    QVERIFY(md.startsWith(QStringLiteral("# TrainScope report: Run 42 — test run")));
    QVERIFY(md.contains(QStringLiteral("- Device: NVIDIA Test GPU")));
    QVERIFY(md.contains(QStringLiteral("```json")));
    QVERIFY(md.contains(QStringLiteral("\"precision\"")));
    const QRegularExpression img(QStringLiteral("!\\[[^\\]]*\\]\\(([^)]+)\\)"));
    int images = 0;
    for (auto it = img.globalMatch(md); it.hasNext();) {
        const QString file = dir_.filePath(it.next().captured(1));
        QImage i;
        QVERIFY2(i.load(file), qPrintable(file));
        QCOMPARE(i.size(), QSize(1000, 600));
        QVERIFY(QFileInfo::exists(
            QString(file).replace(QStringLiteral(".png"), QStringLiteral(".svg"))));
        ++images;
    }
    QCOMPARE(images, 3);
}

void TestExports::stepChartShowsWarmupAndFollowsPoints() {
    stepChart_->setPoint(1);
    stepChart_->flushRedraw();
    QCOMPARE(stepChart_->shownPoint(), 1);
    QCOMPARE(stepChart_->plottedSteps(), 5);  // 1 warm-up + 4 measured
    QCOMPARE(stepChart_->shadedWarmupSteps(), 1);
    QCOMPARE(stepChart_->totalSeries()->at(0).y(), 60.0);  // the warm-up spike: 10 × 6 ms
    stepChart_->setPoint(-1);                              // follow the newest
    stepChart_->flushRedraw();
    QCOMPARE(stepChart_->shownPoint(), 5);
    QCOMPARE(stepChart_->plottedSteps(), 0);  // the OOM point has no steps
    QVERIFY(stepChart_->chart()->title().contains(QStringLiteral("point 6 of 6")));
}

void TestExports::sweepChartDrawsSeriesWithErrorBars() {
    sweepChart_->flushRedraw();
    QCOMPARE(sweepChart_->seriesCount(), 2);
    QCOMPARE(sweepChart_->plottedPoints(), 5);
    QCOMPARE(sweepChart_->errorBarCount(), 5);
    QVERIFY(sweepChart_->chart()->title().contains(QStringLiteral("1 point(s) OOM")));
    sweepChart_->setLogY(true);
    sweepChart_->flushRedraw();
    QCOMPARE(sweepChart_->plottedPoints(), 5);
}

void TestExports::redrawsAreThrottled() {
    StepModel steps;
    ResultModel results;
    StepChart chart(&steps, &results);
    MemoryChart memory(&steps);
    chart.resize(600, 400);
    chart.show();
    const int chartBefore = chart.redrawCount(), memBefore = memory.redrawCount();
    // A batch per event loop turn for half a second: thousands of batches, far more than
    // 20 a second.
    int batches = 0;
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 500) {
        steps.appendSteps(0, {fake::step(batches, false, 1, 2, 0.5, 1 << 20)});
        ++batches;
        QCoreApplication::processEvents();
    }
    QTest::qWait(120);
    const double seconds = t.elapsed() / 1000.0;
    double c0 = threadCpuMs();
    chart.setPoint(0);
    chart.flushRedraw();
    const double redrawMs = threadCpuMs() - c0;
    c0 = threadCpuMs();
    chart.grab();
    const double paintMs = threadCpuMs() - c0;
    qInfo(
        "%d batches, %d chart redraws, %d memory redraws; step chart of %d steps: redraw %.1f ms, "
        "paint %.1f ms",
        batches, chart.redrawCount() - chartBefore, memory.redrawCount() - memBefore, batches,
        redrawMs, paintMs);
    QVERIFY2(redrawMs + paintMs < 50, "a redraw of the step chart must fit in a frame budget");
    QVERIFY(batches > 100);
    // At most 20 redraws a second (+1 for the last pending one), however many batches came.
    QVERIFY2(chart.redrawCount() - chartBefore <= 20 * seconds + 1,
             qPrintable(QString::number(chart.redrawCount())));
    QVERIFY2(memory.redrawCount() - memBefore <= 20 * seconds + 1,
             qPrintable(QString::number(memory.redrawCount())));
    QVERIFY(chart.redrawCount() - chartBefore >= 5);  // but they keep up while data flows
    QCOMPARE(chart.shownSteps(), batches);
    QVERIFY(chart.plottedSteps() <= 2000);  // min/max decimation keeps Qt Charts fast
    QCOMPARE(memory.plottedPoints(), batches);
}

void TestExports::memoryChartTakesAMillionPoints() {
    StepModel steps;
    MemoryChart chart(&steps);
    chart.resize(1200, 600);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    constexpr int kTotal = 1'000'000, kBatch = 50'000;
    QElapsedTimer t;
    t.start();
    double slowestAppend = 0;
    for (int first = 0; first < kTotal; first += kBatch) {
        QList<StepSample> batch;
        batch.reserve(kBatch);
        for (int i = first; i < first + kBatch; ++i)
            batch << fake::step(i, false, 1, 2, 0.5, int64_t(1000 + (i % 5000)) << 20);
        const double c0 = threadCpuMs();
        steps.appendSteps(0, batch);  // the chart appends these rows to its graphs
        slowestAppend = std::max(slowestAppend, threadCpuMs() - c0);
    }
    chart.flushRedraw();
    QCOMPARE(chart.plottedPoints(), kTotal);
    // Replot the full million at screen size: adaptive sampling keeps it interactive.
    QList<double> times;
    for (int i = 0; i < 5; ++i) {
        const double c0 = threadCpuMs();
        chart.plot()->replot(QCustomPlot::rpImmediateRefresh);
        times << threadCpuMs() - c0;
    }
    std::sort(times.begin(), times.end());
    qInfo(
        "1M points: appended in %lld ms wall (slowest batch of 50k: %.1f ms CPU), replot median "
        "%.1f ms CPU",
        t.elapsed(), slowestAppend, times[2]);
    QVERIFY2(times[2] < 50, qPrintable(QStringLiteral("replot took %1 ms").arg(times[2])));
    // Live batches hold the steps of one drain (a few); even 50k rows at once stay short.
    QVERIFY2(slowestAppend < 100,
             qPrintable(QStringLiteral("appending 50k rows took %1 ms").arg(slowestAppend)));
    // Zoomed in, the single steps are there.
    chart.plot()->xAxis->setRange(1000, 1100);
    chart.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const QString png = dir_.filePath(QStringLiteral("memory-1m.png"));
    QVERIFY(exportChart(chart, png, {1200, 600}, context()));
    verifyPng(png, {1200, 600});
}

QTEST_MAIN(TestExports)
#include "tst_exports.moc"
