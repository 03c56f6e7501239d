// The profiler lab in the window: its table models and the search filter, the timeline with a
// large model's number of kernels, the panel's validation, a tiny model profiled on the CPU
// through the window (tables, filters, timeline, the Perfetto trace, exports), the stored
// profile reopened from History, and "Profile this point" from a benchmark result.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtCharts/QChart>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "common/stallprobe.h"
#include "common/test_paths.h"
#include "common/windowtesting.h"
#include "core/json.h"
#include "core/store.h"
#include "profiler/profiler_json.h"
#include "runtime/environment.h"
#include "runtime/python_runner.h"
#include "ui/benchmark/resultmodel.h"
#include "ui/benchmark/speedupmodel.h"
#include "ui/common/qcp.h"
#include "ui/common/sweepchart.h"
#include "ui/common/tableview.h"
#include "ui/common/theme.h"
#include "ui/profiler/calltree.h"
#include "ui/profiler/profileanalysis.h"
#include "ui/profiler/profilecharts.h"
#include "ui/profiler/profilemodels.h"
#include "ui/profiler/profilepanel.h"
#include "ui/profiler/profileview.h"
#include "ui/profiler/timelinechart.h"
#include "ui/shell/mainwindow.h"

using namespace ts;
using namespace ts::ui;

namespace {
ProfiledKernel kernel(const char* name, int64_t start, int64_t dur, Phase p, const char* range,
                      int64_t stream = 7) {
    ProfiledKernel k;
    k.name = name;
    k.start_ns = start;
    k.duration_ns = dur;
    k.phase = p;
    k.range = range;
    k.stream = stream;
    return k;
}

// A profile of one step: forward (matmuls and a softmax in layer.0's attention, a GEMM in
// lm_head), backward and the optimizer, on the GPU.
ProfileResult syntheticProfile() {
    ProfileResult r;
    r.gpu = true;
    r.spec.bench.model = *modelPreset("tiny");
    r.trace.ranges = {{"forward", 1, 0, 1000},
                      {"layer.0", 1, 10, 600},
                      {"attention", 1, 20, 400},
                      {"backward", 1, 1000, 3000},
                      {"optimizer", 1, 3000, 3500}};
    r.trace.kernels = {
        kernel("ampere_sgemm_128x64_nn", 30, 100, Phase::Forward, "layer.0/attention"),
        kernel("softmax_warp_forward", 140, 50, Phase::Forward, "layer.0/attention"),
        kernel("ampere_sgemm_128x64_nn", 700, 200, Phase::Forward, "lm_head"),
        kernel("ampere_sgemm_128x64_tn", 1100, 400, Phase::Backward, "layer.0/attention"),
        kernel("softmax_warp_backward", 1600, 60, Phase::Backward, "layer.0/attention"),
        kernel("multi_tensor_apply_kernel", 3100, 300, Phase::Optimizer, "")};
    StepSample s;
    s.forward_ms = 0.001;
    s.backward_ms = 0.002;
    s.optimizer_ms = 0.0005;
    s.total_ms = 0.0035;
    r.steps = {s};
    return r;
}

CpuEvent cpuEvent(const char* name, uint64_t thread, int64_t start, int64_t end, bool range,
                  uint64_t correlation = 0) {
    CpuEvent e;
    e.name = name;
    e.thread = thread;
    e.start_ns = start;
    e.end_ns = end;
    e.range = range;
    e.correlation = correlation;
    return e;
}

// Ops nested in ops, on the main thread and autograd's, with kernels: the call tree's input.
ProfileResult nestedOpsProfile() {
    RawTrace raw;
    raw.cpu = {cpuEvent("forward", 1, 0, 1'000'000, true),
               cpuEvent("layer.0", 1, 10'000, 600'000, true),
               cpuEvent("aten::linear", 1, 20'000, 300'000, false, 1),
               cpuEvent("aten::mm", 1, 30'000, 290'000, false, 2),
               cpuEvent("aten::softmax", 1, 310'000, 400'000, false, 3),
               cpuEvent("backward", 1, 1'000'000, 3'000'000, true),
               cpuEvent("MmBackward0", 2, 1'100'000, 1'900'000, false, 4),
               cpuEvent("aten::mm", 2, 1'200'000, 1'800'000, false, 5),
               cpuEvent("optimizer", 1, 3'000'000, 3'500'000, true),
               cpuEvent("aten::_fused_adamw_", 1, 3'100'000, 3'400'000, false, 6)};
    for (uint64_t c : {2, 3, 5, 6}) {
        KernelEvent k;
        k.name = c == 3 ? "softmax_warp_forward" : c == 6 ? "multi_tensor_apply" : "sgemm";
        k.launcher = c;
        k.start_ns = 4'000'000 + static_cast<int64_t>(c) * 100'000;
        k.duration_ns = c == 5 ? 90'000 : 20'000;
        k.stream = 7;
        raw.kernels.push_back(k);
    }
    ProfileResult r;
    r.gpu = true;
    r.spec.bench.model = *modelPreset("tiny");
    r.trace = attribute(raw);
    return r;
}

QJsonObject tinyCpuState() {
    return QJsonObject{{"size", "tiny"},  {"context", 32},       {"batch", 2},
                       {"mode", "train"}, {"precision", "fp32"}, {"attention", "naive"},
                       {"device", "cpu"}, {"warmup", 1},         {"profile_steps", 1}};
}
}  // namespace

class TestProfilerWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { caps_ = capabilities(); }
    void tableModelsAndNameFilter();
    void speedupCellsNameTheirPoint();
    void timelineDrawsOnlyWhatIsVisible();
    void callTreeFlameGraphAndTableFollowEachOther();
    void timelineSearchStepsThroughMatches();
    void twoStoredProfilesCompared();
    void importTraceThroughTheFileMenu();
    void largeStoredProfileParsesOffTheUiThread();
    void panelValidatesAndRoundTripsItsSpec();
    void panelProfilesTheUsersCode();
    void storedRunWithoutProfileIsRefused();
    void cpuProfileThroughTheWindowAndBackFromHistory();
    void profileThisPointFromABenchmarkResult();

private:
    Capabilities caps_;
};

void TestProfilerWindow::tableModelsAndNameFilter() {
    const ProfileAnalysis a = analyzeProfile(syntheticProfile());
    QCOMPARE(a.kernels.size(), size_t(5));  // two launches of one GEMM are one row
    KernelTableModel* m = makeKernelTableModel(this);
    QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    NameFilterModel filter;
    filter.setSourceModel(m);
    QAbstractItemModelTester filterTester(&filter,
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    m->setRows(a.kernels);
    QCOMPARE(m->rowCount(), 5);
    QCOMPARE(m->columnCount(), 10);
    // Sorted by total time: the backward GEMM (400 ns) first.
    QCOMPARE(m->data(m->index(0, 0), Qt::DisplayRole).toString(),
             QStringLiteral("ampere_sgemm_128x64_tn"));
    QCOMPARE(m->data(m->index(0, 1), Qt::DisplayRole).toString(), QStringLiteral("GEMM"));
    QCOMPARE(m->data(m->index(0, 3), KernelTableModel::ValueRole).toDouble(), 0.4);
    // The search keeps names that hold the text, in any case.
    filter.setSearch(QStringLiteral("SOFTMAX"));
    QCOMPARE(filter.rowCount(), 2);
    filter.setSearch(QStringLiteral("sgemm"));
    QCOMPARE(filter.rowCount(), 2);
    filter.setSearch(QString());
    QCOMPARE(filter.rowCount(), 5);
    // Phase and range filters.
    const FilteredTables forward = filteredTables(*a.result, {Phase::Forward, ""});
    QCOMPARE(forward.kernels.size(), size_t(2));
    const FilteredTables attention = filteredTables(*a.result, {std::nullopt, "attention"});
    QCOMPARE(attention.kernels.size(), size_t(4));
    // The ranges the filter offers, in model order.
    QCOMPARE(a.ranges, (QStringList{"layer.0", "attention", "lm_head"}));
    QVERIFY(rangeNameLess("layer.2", "layer.10"));
    QVERIFY(!rangeNameLess("layer.10", "layer.2"));
    // The categories chart: GEMM's share of forward (300 of 350 ns).
    CategoryChart chart;
    chart.setRows(a.categories, true);
    chart.flushRedraw();
    QCOMPARE(chart.phases(), (QStringList{"forward", "backward", "optimizer"}));
    const QList<double> gemm = chart.shares(Category::Gemm);
    QCOMPARE(gemm.size(), 3);
    QVERIFY2(std::abs(gemm[0] - 100.0 * 300 / 350) < 0.01, qPrintable(QString::number(gemm[0])));
    QVERIFY(chart.chart()->title().contains(QStringLiteral("86%")));
    // Issue 29 item 13: shares are written only on segments tall enough for them; a 0.4%
    // sliver's text no longer lands on its neighbours'.
    std::vector<CategoryRow> rows = {{Phase::Forward, Category::Gemm, 904, 0.904},
                                     {Phase::Forward, Category::Elementwise, 92, 0.092},
                                     {Phase::Forward, Category::Normalization, 4, 0.004}};
    chart.resize(900, 400);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setRows(rows, false);
    chart.flushRedraw();
    QTRY_COMPARE(chart.segmentLabels(), (QStringList{"90.4 %", "9.20 %"}));
    chart.resize(900, 150);  // a short chart: 9.2% of it is too low for text
    QTRY_COMPARE(chart.segmentLabels(), (QStringList{"90.4 %"}));
}

void TestProfilerWindow::speedupCellsNameTheirPoint() {
    // Two points that differ in precision: one row, a time column per precision.
    ResultModel results;
    std::vector<BenchResult> rs(2);
    for (int i = 0; i < 2; ++i) {
        rs[i].config.model = *modelPreset("tiny");
        rs[i].config.precision = i ? Precision::BF16 : Precision::FP32;
        rs[i].total.count = 3;
        rs[i].total.mean = i ? 1.0 : 2.0;
    }
    results.setResults(rs);
    SpeedupModel speedup(&results);
    QCOMPARE(speedup.rowCount(), 1);
    QCOMPARE(speedup.sourceAt(0, speedup.timeColumn("fp32")), 0);
    QCOMPARE(speedup.sourceAt(0, speedup.timeColumn("bf16")), 1);
    QCOMPARE(speedup.sourceAt(0, speedup.speedupColumn("bf16")), 1);
    QCOMPARE(speedup.sourceAt(0, 0), -1);  // the row's label
    QCOMPARE(speedup.sourceAt(3, 1), -1);
}

void TestProfilerWindow::timelineDrawsOnlyWhatIsVisible() {
    // A 2.7B model's step: about a hundred thousand kernels on two streams.
    ProfileResult r;
    r.gpu = true;
    r.trace.ranges = {{"forward", 1, 0, 40'000'000}, {"backward", 1, 40'000'000, 120'000'000}};
    const int n = 100'000;
    r.trace.kernels.reserve(n);
    for (int i = 0; i < n; ++i)
        r.trace.kernels.push_back(
            kernel(i % 3 ? "ampere_bf16_gemm" : "elementwise_kernel", int64_t(i) * 1200, 1000,
                   i < 33'000 ? Phase::Forward : Phase::Backward, "", i % 10 ? 7 : 13));
    StepActivity step;
    step.start_ns = 0;
    step.end_ns = 120'000'000;
    step.gaps = {{50'000'000, 50'500'000}};
    const ProfileAnalysis a = analyzeProfile(r);
    TimelineChart chart;
    chart.resize(1200, 500);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setTimeline(a.timeline, {step});
    QCOMPARE(chart.laneCount(), 3);  // the main thread's ranges, two streams
    QCOMPARE(chart.spanCount(), n + 2);
    // The whole step: sub-pixel kernels merge, so far fewer rectangles than kernels.
    QElapsedTimer t;
    t.start();
    chart.replotNow();
    const qint64 wholeMs = t.elapsed();
    QVERIFY2(chart.drawnRects() > 100 && chart.drawnRects() < 5000,
             qPrintable(QString::number(chart.drawnRects())));
    QCOMPARE(chart.drawnGaps(), 1);
    qInfo("whole step: %lld ms for %d rectangles", wholeMs, chart.drawnRects());
    QVERIFY2(wholeMs < 250,
             qPrintable(QStringLiteral("replot of the whole step took %1 ms").arg(wholeMs)));
    // Zoomed in to 10 µs around kernel 50000: only those drawn.
    chart.plot()->xAxis->setRange(60'000, 60'010);
    t.restart();
    chart.replotNow();
    QVERIFY2(t.elapsed() < 100, qPrintable(QString::number(t.elapsed())));
    // Kernels 50000..50008 (1 µs every 1.2 µs) and the backward range.
    QVERIFY2(chart.drawnRects() >= 9 && chart.drawnRects() <= 11,
             qPrintable(QString::number(chart.drawnRects())));
    // Kernel 50000 runs on stream 13 (the second GPU lane), from 60000 to 60001 µs.
    QCOMPARE(chart.spanAt(60'000.5, 2), QStringLiteral("ampere_bf16_gemm: 1.0 µs"));
    QCOMPARE(chart.spanAt(60'001.1, 2), QString());  // after it, nothing until kernel 50010
    QVERIFY(chart.spanAt(60'000.5, 0).startsWith(QStringLiteral("backward")));
    // The step chooser shows the step whole again.
    chart.showStep(0);
    QVERIFY(chart.plot()->xAxis->range().lower < 0 && chart.plot()->xAxis->range().upper > 120'000);
}

void TestProfilerWindow::largeStoredProfileParsesOffTheUiThread() {
    // A 2.7B model's step as the store holds it: a hundred thousand kernels, tens of MB of JSON.
    ProfileResult r;
    r.gpu = true;
    r.spec.bench.model = *modelPreset("tiny");
    r.trace.ranges = {{"forward", 1, 0, 40'000'000}, {"backward", 1, 40'000'000, 120'000'000}};
    const int n = 100'000;
    for (int i = 0; i < n; ++i)
        r.trace.kernels.push_back(kernel(i % 3 ? "ampere_bf16_gemm" : "elementwise_kernel",
                                         int64_t(i) * 1200, 1000,
                                         i < 33'000 ? Phase::Forward : Phase::Backward,
                                         i % 2 ? "layer.0/mlp" : "layer.1/attention"));
    StoredRun run;
    run.info.id = 4;
    run.info.lab = "profile";
    run.info.spec_json = profileSpecJson(r.spec);
    run.rows.push_back({0, Status::Ok, "{}", toJson(r).dump()});
    ProfileView view;
    view.resize(1200, 800);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy shown(&view, &ProfileView::profileShown);
    StallProbe probe;
    probe.start();
    QElapsedTimer t;
    t.start();
    QString error;
    QVERIFY(view.showStored(run, &error));
    const qint64 callMs = t.elapsed();
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 120000);
    // A phase filter over every kernel, in the pool too.
    QSignalSpy filtered(&view, &ProfileView::tablesFiltered);
    view.kernelFilters().phase->setCurrentIndex(
        view.kernelFilters().phase->findData(QStringLiteral("backward")));
    QTRY_COMPARE_WITH_TIMEOUT(filtered.count(), 1, 60000);
    probe.stop();
    qInfo(
        "showStored returned after %lld ms; parsed and shown after %lld ms; worst UI stall %lld ms",
        callMs, probe.elapsedMs(), probe.worstStallNs() / 1'000'000);
    QVERIFY2(callMs < 100, qPrintable(QString::number(callMs)));
    QVERIFY2(probe.worstStallNs() < 200'000'000,
             qPrintable(QString::number(probe.worstStallNs() / 1e6)));
    QCOMPARE(view.timeline()->spanCount(), n + 2);
    QCOMPARE(view.kernelModel()->rowCount(), 2);
    int64_t instances = 0;
    for (const KernelRow& k : view.kernelModel()->rows()) instances += k.instances;
    QCOMPARE(instances, int64_t(n - 33'000));
}

void TestProfilerWindow::panelValidatesAndRoundTripsItsSpec() {
    ProfilePanel panel;
    panel.setCapabilities(caps_);
    panel.setState(tinyCpuState());
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    QVERIFY(panel.summary().contains(QStringLiteral("1 profiled step")));
    // The point's own warm-up and step count are left out: they said "steps N" beside it.
    QVERIFY2(!panel.summary().contains(QStringLiteral("steps")), qPrintable(panel.summary()));
    const auto job = panel.makeJob();
    QVERIFY(job);
    QCOMPARE(job->lab, QStringLiteral("profile"));
    // The stored spec reads back as the same state, and in words for History.
    const QJsonObject spec =
        QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
    QJsonObject back = ProfilePanel::stateFromSpec(spec);
    for (const QString& key : tinyCpuState().keys())
        QCOMPARE(back.value(key), tinyCpuState().value(key));
    const QString words = ProfilePanel::describeSpec(spec);
    QVERIFY2(words.contains(QStringLiteral("tiny")) && words.contains(QStringLiteral("1 profiled")),
             qPrintable(words));
    // Custom dimensions the heads do not divide: flagged on the field, Run refused.
    panel.setState(
        QJsonObject{{"size", "custom"}, {"custom", QJsonObject{{"d_model", 100}, {"heads", 3}}}});
    QVERIFY(!panel.isValid());
    QVERIFY(!panel.makeJob());
    QVERIFY2(panel.fieldWidget("d_model")->toolTip().contains(QStringLiteral("divisible")) ||
                 panel.fieldWidget("heads")->toolTip().contains(QStringLiteral("divisible")),
             qPrintable(panel.problems().join('\n')));
    // An unknown size is named, not a crash.
    QStringList notes;
    panel.setState(QJsonObject{{"size", "huge"}}, &notes);
    QVERIFY(notes.join('\n').contains(QStringLiteral("'huge'")));
    // Compiled (See Note [a graph's kernels named by its capture]): stored and described as
    // such; on the CPU refused on its own box in the engine's words.
    QJsonObject compiled = tinyCpuState();
    compiled["compiled"] = true;
    panel.setState(compiled);
    QVERIFY(panel.spec().bench.exec == ExecMode::Compiled);
    QCOMPARE(ProfilePanel::stateFromSpec(
                 QJsonDocument::fromJson(QByteArray::fromStdString(profileSpecJson(panel.spec())))
                     .object())
                 .value(QStringLiteral("compiled"))
                 .toBool(),
             true);
    QVERIFY(ProfilePanel::describeSpec(
                QJsonDocument::fromJson(QByteArray::fromStdString(profileSpecJson(panel.spec())))
                    .object())
                .contains(QStringLiteral("compiled")));
    if (!caps_.cuda_available) {
        QVERIFY(!panel.isValid());
        QVERIFY2(panel.fieldWidget("compiled")->toolTip().contains(QStringLiteral("CUDA")),
                 qPrintable(panel.problems().join('\n')));
    }
    if (!caps_.cuda_available) {
        // No GPU: bf16 on the CPU is refused in the engine's words (or flagged unavailable).
        panel.setState(tinyCpuState());
        auto* precision = qobject_cast<QComboBox*>(panel.fieldWidget("precision"));
        QVERIFY(precision);
        QCOMPARE(precision->currentData().toString(), QStringLiteral("fp32"));
    }
}

void TestProfilerWindow::panelProfilesTheUsersCode() {
    ProfilePanel panel;
    panel.setCapabilities(caps_);
    QJsonObject state = tinyCpuState();
    state["sources"] = QJsonArray{"python"};
    state["code"] = QString::fromStdString(exampleCheckout());
    panel.setState(state);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    QVERIFY(panel.spec().bench.source == Source::Python);
    QCOMPARE(panel.spec().bench.python.code, exampleCheckout());
    QVERIFY(!panel.fieldWidget("attention")->isEnabled());  // the user's model has its own
    const auto job = panel.makeJob();
    QVERIFY(job);
    const QJsonObject spec =
        QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
    const QJsonObject back = ProfilePanel::stateFromSpec(spec);
    QCOMPARE(back.value("sources").toArray(), QJsonArray{"python"});
    QCOMPARE(back.value("code").toString(), state["code"].toString());
    QVERIFY(ProfilePanel::describeSpec(spec).startsWith(QStringLiteral("your code")));
    // One point, one source: ticking both keeps the user's code alone.
    state["sources"] = QJsonArray{"trainscope", "python"};
    panel.setState(state);
    QCOMPARE(panel.state().value("sources").toArray(), QJsonArray{"python"});
    // Code that is not there is flagged on its field before Run.
    state["code"] = "/no/such/file.py:build";
    panel.setState(state);
    QVERIFY(!panel.isValid());
    QVERIFY(panel.fieldWidget("code")->property("invalid").toBool());
    // A spec stored before the field: TrainScope's model.
    QCOMPARE(ProfilePanel::stateFromSpec(QJsonObject{{"bench", QJsonObject{}}})
                 .value("sources")
                 .toArray(),
             QJsonArray{"trainscope"});
}

void TestProfilerWindow::storedRunWithoutProfileIsRefused() {
    ProfileView view;
    StoredRun run;
    run.info.id = 9;
    run.info.lab = "profile";
    QString error;
    QVERIFY(!view.showStored(run, &error));
    QVERIFY2(error.contains(QStringLiteral("holds no profile")), qPrintable(error));
    // A damaged row: said in the log, nothing shown.
    run.rows.push_back({0, Status::Ok, "{}", "{\"spec\": 3}"});
    QSignalSpy log(&view, &LabView::logLine);
    QVERIFY(view.showStored(run, &error));
    QTRY_COMPARE(view.pendingJobs(), 0);
    QVERIFY(!log.isEmpty());
    QVERIFY(
        log.last()[0].toString().contains(QStringLiteral("Could not read the profile of run 9")));
    QVERIFY(!view.result());
}

void TestProfilerWindow::callTreeFlameGraphAndTableFollowEachOther() {
    Theme::instance().setMode(ThemeMode::Light);
    ProfileView view;
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QAbstractItemModelTester tester(view.callTreeModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.addItems({QVariant::fromValue(analyzeProfile(nestedOpsProfile()))});
    view.showPane(view.paneIndex(QStringLiteral("calltree")));
    QApplication::processEvents();

    // The table: the root, then the phases by time, then ranges and ops.
    CallTreeModel* m = view.callTreeModel();
    QCOMPARE(m->rowCount(), 1);
    QCOMPARE(m->columnCount(), 6);  // a GPU profile: the kernels' time too
    const QModelIndex root = m->index(0, 0);
    QStringList phases;
    for (int i = 0; i < m->rowCount(root); ++i) phases << m->index(i, 0, root).data().toString();
    QCOMPARE(phases, (QStringList{"backward", "forward", "optimizer"}));  // 800, 370, 300 µs
    const CallTree* tree = m->tree();
    QVERIFY(tree);
    // forward/layer.0/aten::linear/aten::mm: nested by the intervals of its thread.
    int mm = -1;
    for (size_t i = 0; i < tree->nodes.size(); ++i)
        if (tree->path(static_cast<int>(i)) == "forward/layer.0/aten::linear/aten::mm")
            mm = static_cast<int>(i);
    QVERIFY(mm > 0);
    const QModelIndex mmIndex = m->indexOfNode(mm, CallTreeModel::Inclusive);
    QCOMPARE(mmIndex.data(CallTreeModel::ValueRole).toDouble(), 0.26);
    QCOMPARE(m->indexOfNode(mm, CallTreeModel::Calls).data().toString(), QStringLiteral("1"));
    const int linear = tree->nodes[static_cast<size_t>(mm)].parent;
    QCOMPARE(m->indexOfNode(linear, CallTreeModel::Self).data(CallTreeModel::ValueRole).toDouble(),
             0.28 - 0.26);

    // The flame graph: the root full width, each child as wide as its share of its parent.
    FlameGraph* flame = view.flameGraph();
    QVERIFY(flame->isVisible());
    const QRectF all = flame->nodeRect(0);
    QVERIFY(all.width() > 500);
    const CallTreeNode& rootNode = tree->nodes[0];
    const int backward = rootNode.children[0];
    const QRectF b = flame->nodeRect(backward);
    QVERIFY(qAbs(b.width() / all.width() - tree->nodes[static_cast<size_t>(backward)].inclusive_us /
                                               rootNode.inclusive_us) < 0.01);
    QVERIFY(b.top() > all.top());
    QCOMPARE(flame->nodeAt(b.center()), backward);
    QVERIFY(flame->drawnNodes() == 0 || flame->drawnNodes() >= 3);
    flame->repaint();
    QVERIFY(flame->drawnNodes() >= static_cast<int>(tree->nodes.size()) - 1);
    // Hovering names it with its times and share.
    const QString tip = flame->describe(mm);
    QVERIFY2(tip.contains(QStringLiteral("aten::mm")) &&
                 tip.contains(QStringLiteral("inclusive")) &&
                 tip.contains(QStringLiteral("% of the profile")),
             qPrintable(tip));

    // A click zooms into the bar: it fills the width, the table selects its row.
    QTest::mouseClick(flame, Qt::LeftButton, {}, flame->nodeRect(linear).center().toPoint());
    QCOMPARE(flame->zoomed(), linear);
    QVERIFY(qAbs(flame->nodeRect(linear).width() - all.width()) < 1);
    QCOMPARE(m->nodeOf(view.callTreeView()->currentIndex()), linear);
    QVERIFY(flame->nodeRect(backward).isEmpty());  // outside the zoomed subtree
    QVERIFY(!flame->nodeRect(0).isEmpty());        // the root stays above, dimmed
    QVERIFY(view.findChild<QLabel*>(QStringLiteral("flameZoom"))
                ->text()
                .contains(QStringLiteral("forward/layer.0/aten::linear")));
    // A click on a bar above zooms out to it; choosing a row in the table zooms there.
    QTest::mouseClick(flame, Qt::LeftButton, {}, flame->nodeRect(0).center().toPoint());
    QCOMPARE(flame->zoomed(), 0);
    view.callTreeView()->setCurrentIndex(m->indexOfNode(backward));
    QCOMPARE(flame->zoomed(), backward);

    // Widths by the GPU's kernel time: the backward mm's 90 µs of kernels against 60 forward.
    flame->zoomTo(0);
    const double cpuWidth = flame->nodeRect(backward).width();
    view.flameMeasure()->setCurrentIndex(1);
    QCOMPARE(flame->measure(), FlameGraph::Measure::Device);
    QVERIFY(qAbs(flame->nodeRect(backward).width() - cpuWidth) > 1);
    QVERIFY(qAbs(flame->nodeRect(backward).width() / flame->nodeRect(0).width() -
                 tree->nodes[static_cast<size_t>(backward)].device_us / rootNode.device_us) < 0.01);

    // Theme-aware: the dark theme paints another background; the export paints the same bars.
    const QImage light = flame->grab().toImage();
    Theme::instance().setMode(ThemeMode::Dark);
    QApplication::processEvents();
    const QImage dark = flame->grab().toImage();
    QVERIFY(light.pixelColor(light.width() - 2, light.height() - 2) !=
            dark.pixelColor(dark.width() - 2, dark.height() - 2));
    Theme::instance().setMode(ThemeMode::Light);
    QImage exported(800, 400, QImage::Format_ARGB32);
    QPainter p(&exported);
    flame->paintChart(p, QRectF(0, 0, 800, 400));
    p.end();
    QVERIFY(flame->drawnNodes() >= 3);
    QVERIFY(view.reportParts().size() > 0);
    bool reported = false;
    for (const ReportPart& part : view.reportParts()) reported |= part.chart == flame;
    QVERIFY(reported);
}

void TestProfilerWindow::timelineSearchStepsThroughMatches() {
    ProfileView view;
    view.resize(1000, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.addItems({QVariant::fromValue(analyzeProfile(syntheticProfile()))});
    view.showPane(view.paneIndex(QStringLiteral("timeline")));
    TimelineChart* t = view.timeline();
    auto* field = t->findChild<QLineEdit*>(QStringLiteral("timelineSearch"));
    auto* count = t->findChild<QLabel*>(QStringLiteral("timelineMatches"));
    QVERIFY(field && count);
    QCOMPARE(t->searchField(), field);
    // Case-insensitive, over kernels (and ops and ranges): two GEMMs forward, one backward.
    QTest::keyClicks(field, QStringLiteral("SGEMM"));
    QCOMPARE(t->matchCount(), 3);
    QCOMPARE(t->currentMatch(), 0);
    QCOMPARE(count->text(), QStringLiteral("1 of 3"));
    // The view is zoomed onto the current match: it in the middle, its own width (at least
    // 2 µs) on either side.
    auto inView = [t](const TimelineMatch& m) {
        const QCPRange r = t->plot()->xAxis->range();
        const double pad = std::max(2.0, m.end_us - m.start_us);
        return qAbs(r.lower - (m.start_us - pad)) < 1e-9 && qAbs(r.upper - (m.end_us + pad)) < 1e-9;
    };
    QVERIFY(inView(t->matches()[0]));
    QVERIFY(t->matches()[0].start_us < t->matches()[1].start_us);  // in time order
    // Enter: the next; Shift+Enter: the previous; both wrap around.
    QTest::keyClick(field, Qt::Key_Return);
    QCOMPARE(t->currentMatch(), 1);
    QCOMPARE(count->text(), QStringLiteral("2 of 3"));
    QVERIFY(inView(t->matches()[1]));
    QTest::keyClick(field, Qt::Key_Return);
    QTest::keyClick(field, Qt::Key_Return);
    QCOMPARE(t->currentMatch(), 0);
    QTest::keyClick(field, Qt::Key_Return, Qt::ShiftModifier);
    QCOMPARE(t->currentMatch(), 2);
    QCOMPARE(count->text(), QStringLiteral("3 of 3"));
    // The matches are outlined where they are drawn.
    t->showStep(-1);
    t->replotNow();
    QCOMPARE(t->drawnMatches(), 3);
    // Another text, and one that matches nothing; Escape clears the search.
    field->setText(QStringLiteral("softmax_warp"));
    QCOMPARE(t->matchCount(), 2);
    field->setText(QStringLiteral("no such kernel"));
    QCOMPARE(t->matchCount(), 0);
    QCOMPARE(t->currentMatch(), -1);
    QCOMPARE(count->text(), QStringLiteral("no match"));
    QTest::keyClick(field, Qt::Key_Return);  // nothing to step to: no crash
    QTest::keyClick(field, Qt::Key_Escape);
    QVERIFY(field->text().isEmpty());
    QVERIFY(count->text().isEmpty());
    t->replotNow();
    QCOMPARE(t->drawnMatches(), 0);
    // Ctrl+F in the timeline puts the cursor in the field.
    t->plot()->setFocus();
    QTest::keySequence(t->plot(), QKeySequence::Find);
    QTRY_VERIFY(field->hasFocus());
}

void TestProfilerWindow::twoStoredProfilesCompared() {
    // Run A: the synthetic profile; run B: the same with the backward GEMM twice as slow and
    // the optimizer's kernel gone.
    ProfileResult a = syntheticProfile(), b = syntheticProfile();
    for (auto& k : b.trace.kernels)
        if (k.name == "ampere_sgemm_128x64_tn") k.duration_ns *= 2;
    b.trace.kernels.pop_back();
    auto stored = [](const ProfileResult& r, qint64 id) {
        StoredRun run;
        run.info.id = id;
        run.info.lab = kProfileLab;
        run.info.spec_json = profileSpecJson(r.spec);
        run.rows = {{0, Status::Ok, "{}", dumpJson(toJson(r))}};
        return run;
    };
    ProfileView view;
    QAbstractItemModelTester tester(view.diffModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(view.compareUnavailable().isEmpty());
    QString error;
    StoredRun empty = stored(a, 9);
    empty.rows.clear();
    QVERIFY(!view.compare(empty, stored(b, 2), &error));
    QVERIFY(error.contains(QStringLiteral("holds no profile")));
    QSignalSpy shown(&view, &ProfileView::comparisonShown);
    QVERIFY2(view.compare(stored(a, 1), stored(b, 2), &error), qPrintable(error));
    QCOMPARE(view.currentPane(), view.paneIndex(QStringLiteral("compare")));
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 30000);
    QVERIFY(shown[0][0].toString().isEmpty());
    ProfileDiffModel* m = view.diffModel();
    QCOMPARE(m->rowCount(), 5);  // A's five kernel names
    QCOMPARE(m->index(0, 0).data().toString(), QStringLiteral("ampere_sgemm_128x64_tn"));
    QCOMPARE(m->index(0, 4).data(ProfileDiffModel::ValueRole).toDouble(), 0.4);  // +400 ns
    QCOMPARE(m->index(0, 5).data().toString(), QStringLiteral("2.00×"));
    const int last = m->rowCount() - 1;
    QCOMPARE(m->index(1, 0).data().toString(), QStringLiteral("multi_tensor_apply_kernel"));
    QCOMPARE(m->index(1, 8).data().toString(), QStringLiteral("only in A"));
    QVERIFY(!m->index(1, 3).data(ProfileDiffModel::ValueRole).isValid());  // not in B: empty
    QCOMPARE(m->index(last, 4).data(ProfileDiffModel::ValueRole).toDouble(), 0.0);
    QVERIFY2(view.comparisonText().contains(QStringLiteral("Kernel time per profiled step")),
             qPrintable(view.comparisonText()));
    // Run A is in the other panes; the export names both runs.
    QTRY_VERIFY(view.result() != nullptr);
    QVERIFY(view.exportContext(view.paneIndex(QStringLiteral("compare")))
                .title.contains(QStringLiteral("run 1 vs run 2")));
    bool reported = false;
    for (const ReportPart& p : view.reportParts()) reported |= p.table == m;
    QVERIFY(reported);
    // Opening another run ends the comparison.
    QSignalSpy loaded(&view, &LabView::storedRunLoaded);
    QVERIFY(view.showStored(stored(b, 2), &error));
    QCOMPARE(m->rowCount(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
}

void TestProfilerWindow::importTraceThroughTheFileMenu() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("results.db"));
    MainWindow w(MainWindow::Options{db, false});
    auto* view = qobject_cast<ProfileView*>(w.labView(QStringLiteral("profile")));
    QVERIFY(view);
    // A .json is the profiler's: stored, then read and shown in every pane.
    QSignalSpy shown(view, &ProfileView::profileShown);
    QString error;
    const QString fixture =
        QString::fromStdString(ts::testing::testPath("TRAINSCOPE_TEST_PROFILER_FIXTURES")) +
        QStringLiteral("/cpu_step.pt.trace.json");
    QVERIFY2(w.history()->importTrace(fixture, &error), qPrintable(error));
    QCOMPARE(w.labs()->currentId(), QStringLiteral("profile"));
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 30000);
    QCOMPARE(view->result()->spec.imported, std::string("cpu_step.pt.trace.json"));
    QVERIFY(view->storeRunId() > 0);
    QVERIFY(view->opModel()->rowCount() > 10);
    QVERIFY(view->timeline()->spanCount() > 0);
    QStringList phases;
    const CallTree* tree = view->callTreeModel()->tree();
    for (int c : tree->nodes[0].children)
        phases << QString::fromStdString(tree->nodes[static_cast<size_t>(c)].name);
    for (const char* p : {"forward", "backward", "optimizer"})
        QVERIFY2(phases.contains(QString::fromLatin1(p)), qPrintable(phases.join(',')));
    QVERIFY(view->findChild<QLabel*>(QStringLiteral("phaseNote"))
                ->text()
                .contains(QStringLiteral("Imported from cpu_step.pt.trace.json")));
    // A truncated trace: refused with the reason, nothing stored.
    QFile f(fixture);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QFile cut(dir.filePath(QStringLiteral("cut.json")));
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write(f.read(f.size() / 2));
    cut.close();
    QVERIFY(!w.history()->importTrace(cut.fileName(), &error));
    QVERIFY2(error.contains(QStringLiteral("truncated")), qPrintable(error));
    ResultStore store(db.toStdString(), ResultStore::Access::ReadIfNeeded);
    QCOMPARE(store.listRuns().size(), size_t(1));
}

void TestProfilerWindow::cpuProfileThroughTheWindowAndBackFromHistory() {
    QTemporaryDir dir;
    auto w = freshWindow("tst_profiler_window", dir.filePath("results.db"));
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    auto* view = qobject_cast<ProfileView*>(w->labView("profile"));
    QVERIFY(view);
    QVERIFY(w->labs()->select("profile"));
    w->currentPanel()->setState(tinyCpuState());
    QVERIFY2(w->currentPanel()->isValid(), qPrintable(w->currentPanel()->problems().join('\n')));
    QSignalSpy finished(w->session(), &RunSession::runFinished);
    QSignalSpy shown(view, &ProfileView::profileShown);
    QVERIFY(w->session()->start());
    QVERIFY(finished.wait(180000) || !finished.isEmpty());
    QVERIFY(finished[0][0].value<RunOutcome>() == RunOutcome::Completed);
    QCOMPARE(shown.count(), 1);
    QVERIFY(view->result());
    QVERIFY(view->result()->status == Status::Ok);
    const qint64 runId = view->storeRunId();
    QVERIFY(runId > 0);

    // The op table (a CPU profile has no kernels), its phase filter and search.
    const int allOps = view->opModel()->rowCount();
    QVERIFY2(allOps > 5, qPrintable(QString::number(allOps)));
    QCOMPARE(view->kernelModel()->rowCount(), 0);
    // Issue 29 item 7: the empty Kernels table says why it is empty, and what would fill it;
    // the op table, which has rows, says nothing over them.
    auto* kernels = view->findChild<DataTableView*>(QStringLiteral("kernelTable"));
    auto* ops = view->findChild<DataTableView*>(QStringLiteral("opTable"));
    QVERIFY(kernels && ops);
    QVERIFY(kernels->showsEmptyText());
    QVERIFY(kernels->emptyText().contains(QStringLiteral("CPU profile records no kernels")));
    QVERIFY(!ops->showsEmptyText());
    QSignalSpy filtered(view, &ProfileView::tablesFiltered);
    auto bar = view->opFilters();
    bar.phase->setCurrentIndex(bar.phase->findData(QStringLiteral("optimizer")));
    QTRY_VERIFY(!filtered.isEmpty());
    const int optimizerOps = view->opModel()->rowCount();
    QVERIFY2(optimizerOps > 0 && optimizerOps < allOps, qPrintable(QString::number(optimizerOps)));
    bar.phase->setCurrentIndex(0);
    QTRY_COMPARE(view->opModel()->rowCount(), allOps);
    QVERIFY(bar.range->findData(QStringLiteral("attention")) > 0);
    QVERIFY(bar.range->findData(QStringLiteral("layer.0")) > 0);
    bar.search->setText(QStringLiteral("MM"));
    QVERIFY(view->opFilter()->rowCount() >= 1 && view->opFilter()->rowCount() < allOps);
    bar.search->clear();
    // The matmuls have FLOPs.
    bool flops = false;
    for (const OpRow& r : view->opModel()->rows()) flops |= r.flops > 0;
    QVERIFY(flops);

    // Naive attention's three parts, forward and backward, in the table and the chart.
    QStringList parts;
    for (const AttentionPart& p : view->attentionModel()->rows())
        if (p.phase == Phase::Forward) parts << QString::fromStdString(p.part);
    QCOMPARE(parts, (QStringList{"scores", "softmax", "values"}));
    for (const AttentionPart& p : view->attentionModel()->rows())
        QVERIFY(p.time_us > 0 && p.flops > 0);
    auto* partsChart = view->findChild<AttentionPartsChart*>();
    partsChart->flushRedraw();
    QCOMPARE(partsChart->partNames(), (QStringList{"scores", "softmax", "values"}));
    // What the step achieved, from the model's FLOPs.
    QVERIFY2(view->findChild<QLabel*>("phaseNote")
                     ->text()
                     .contains(QStringLiteral("Model FLOPs per step")) &&
                 view->findChild<QLabel*>("phaseNote")
                     ->text()
                     .contains(QStringLiteral("GFLOP/s on the CPU")),
             qPrintable(view->findChild<QLabel*>("phaseNote")->text()));
    // Categories, phases and the timeline have the step.
    QVERIFY(view->categoryModel()->rowCount() > 0);
    QCOMPARE(view->phaseModel()->rowCount(), 4);
    QVERIFY(view->timeline()->laneCount() >= 2);
    QVERIFY(view->timeline()->spanCount() > 10);
    QVERIFY(w->labs()->showPane("timeline"));
    QApplication::processEvents();
    view->timeline()->replotNow();
    QVERIFY(view->timeline()->drawnRects() > 0);

    // The call tree: the step's three phases, the model's ranges under them.
    {
        const CallTree* tree = view->callTreeModel()->tree();
        QVERIFY(tree && !tree->nodes.empty());
        QStringList phases;
        for (int c : tree->nodes[0].children)
            phases << QString::fromStdString(tree->nodes[static_cast<size_t>(c)].name);
        for (const char* p : {"forward", "backward", "optimizer"})
            QVERIFY2(phases.contains(QString::fromLatin1(p)), qPrintable(phases.join(',')));
        bool attention = false;
        for (size_t i = 0; i < tree->nodes.size(); ++i)
            attention |= tree->path(static_cast<int>(i)).find("forward/layer.0/attention") == 0;
        QVERIFY(attention);
        QString exportError;
        QVERIFY2(w->exports()->exportTab("calltree", dir.filePath("calltree.png"), {800, 450},
                                         &exportError),
                 qPrintable(exportError));
    }

    // The Perfetto trace: valid JSON with events.
    QString error;
    QVERIFY2(view->writeTrace(dir.filePath("trace.json"), &error), qPrintable(error));
    QFile trace(dir.filePath("trace.json"));
    QVERIFY(trace.open(QIODevice::ReadOnly));
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(trace.readAll(), &perr);
    QVERIFY2(perr.error == QJsonParseError::NoError, qPrintable(perr.errorString()));
    QVERIFY(doc.object().value("traceEvents").toArray().size() > 10);
    QVERIFY(!view->writeTrace(dir.filePath("no/such/folder/trace.json"), &error));
    QVERIFY(error.contains(QStringLiteral("cannot write")));

    // Exports and the report.
    QVERIFY2(w->exports()->exportTab("ops", dir.filePath("ops.csv"), {}, &error),
             qPrintable(error));
    QVERIFY2(
        w->exports()->exportTab("categories", dir.filePath("categories.png"), {800, 450}, &error),
        qPrintable(error));
    QVERIFY2(w->exports()->exportTab("timeline", dir.filePath("timeline.png"), {800, 450}, &error),
             qPrintable(error));
    QImage img;
    QVERIFY(img.load(dir.filePath("timeline.png")));
    QVERIFY2(w->exports()->exportReport(dir.filePath("report.md"), {800, 450}, &error),
             qPrintable(error));
    QFile md(dir.filePath("report.md"));
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    for (const char* part : {"## Ops\n", "| Op |", "## Call tree\n", "## Category roll-up, table\n",
                             "| Phase | Category |", "## Phases: profiled and measured\n"})
        QVERIFY2(report.contains(QString::fromUtf8(part)), part);

    // Back from History: the same tables, read in a pool thread.
    const std::vector<OpRow> live = view->opModel()->rows();
    shown.clear();
    w->history()->openStoredRun(runId);
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
    QCOMPARE(view->storeRunId(), runId);
    QCOMPARE(view->opModel()->rowCount(), allOps);
    QCOMPARE(view->opModel()->rows().front().name, live.front().name);
    QVERIFY(view->timeline()->spanCount() > 10);
}

void TestProfilerWindow::profileThisPointFromABenchmarkResult() {
    QTemporaryDir dir;
    auto w = freshWindow("tst_profiler_window", dir.filePath("results.db"));
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    QVERIFY(w->labs()->select("bench"));
    w->currentPanel()->setState(QJsonObject{{"sizes", QJsonArray{"tiny"}},
                                            {"context", "48"},
                                            {"batch", "2"},
                                            {"modes", QJsonArray{"train"}},
                                            {"precisions", QJsonArray{"fp32"}},
                                            {"attentions", QJsonArray{"naive"}},
                                            {"warmup", "1"},
                                            {"steps", 2},
                                            {"device", "cpu"}});
    QSignalSpy finished(w->session(), &RunSession::runFinished);
    QVERIFY(w->session()->start());
    QVERIFY(finished.wait(180000) || !finished.isEmpty());
    BenchView* bench = benchViewOf(w.get());
    const PointConfig point = bench->document()->results()->entries().front().result.config;
    // Nothing selected: nothing to profile.
    QVERIFY(!bench->profilePointAction()->isEnabled());
    QVERIFY(!bench->profilePoint(5));
    // Select the result, then the action (as the context menu and the button do).
    bench->resultTable()->setCurrentIndex(bench->resultTable()->model()->index(0, 0));
    QVERIFY(bench->profilePointAction()->isEnabled());
    QVERIFY(bench->resultTable()->actions().contains(bench->profilePointAction()));
    // The sweep chart's point, as its context menu finds it.
    QVERIFY(w->labs()->showPane("sweep"));
    QApplication::processEvents();
    bench->sweepChart()->flushRedraw();
    const auto at = bench->sweepChart()->positionOf(0);
    QVERIFY(at);
    QCOMPARE(bench->sweepChart()->sourceAt(*at), 0);
    QCOMPARE(bench->sweepChart()->sourceAt(*at + QPointF(300, 300)), -1);
    QVERIFY(!bench->profileSweepPointAt(*at + QPointF(300, 300)));
    QCOMPARE(bench->sweepChart()->actions().size(), 1);
    auto* view = qobject_cast<ProfileView*>(w->labView("profile"));
    QSignalSpy shown(view, &ProfileView::profileShown);
    bench->profilePointAction()->trigger();
    // The window switched to the profiler with that point and runs it.
    QCOMPARE(w->currentView(), view);
    QVERIFY(w->session()->isRunning());
    QVERIFY(finished.wait(180000) || finished.count() > 1);
    QCOMPARE(finished.count(), 2);
    QVERIFY(finished[1][0].value<RunOutcome>() == RunOutcome::Completed);
    QCOMPARE(shown.count(), 1);
    const PointConfig profiled = view->result()->spec.bench;
    QCOMPARE(profiled.model.name, point.model.name);
    QCOMPARE(profiled.model.context_length, int64_t(48));
    QCOMPARE(profiled.batch_size, point.batch_size);
    QCOMPARE(profiled.warmup, point.warmup);
    QCOMPARE(profiled.device, std::string("cpu"));
    QVERIFY(view->runTitle().contains(QStringLiteral("Profile of point 1")));
    QVERIFY(w->logText().contains(QStringLiteral("Profile of point 1")));
    // From the sweep's point: the same profile again.
    QVERIFY(w->labs()->select("bench"));
    QVERIFY(w->labs()->showPane("sweep"));
    QApplication::processEvents();
    QVERIFY(bench->profileSweepPointAt(*bench->sweepChart()->positionOf(0)));
    QCOMPARE(w->currentView(), view);
    QVERIFY(finished.wait(180000) || finished.count() > 2);
    QCOMPARE(finished.count(), 3);
    QCOMPARE(shown.count(), 2);
    QCOMPARE(view->result()->spec.bench.model.context_length, int64_t(48));
}

QTEST_MAIN(TestProfilerWindow)
#include "tst_profiler_window.moc"
