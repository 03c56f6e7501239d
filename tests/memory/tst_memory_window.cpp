// The memory lab in the window: the panel's job and its state round trip through a stored
// spec, a stored run (the hand-written trace) shown in every pane with the allocations table
// linked to the timeline, the frontier's failed step shown and saved as a snapshot, two
// stored runs compared phase by phase (from History too), a CPU run of the job ending with
// the clear reason, and a trace of a million events drawn.
#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QFile>
#include <QItemSelectionModel>
#include <QJsonDocument>
#include <QLabel>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "common/test_paths.h"
#include "core/json.h"
#include "core/store.h"
#include "memory/memory_json.h"
#include "memory/memory_pickle.h"
#include "runtime/environment.h"
#include "synthetic_trace.h"
#include "ui/common/qcp.h"
#include "ui/common/tableview.h"
#include "ui/memory/memorycharts.h"
#include "ui/memory/memorypanel.h"
#include "ui/memory/memoryview.h"
#include "ui/shell/historywidget.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/presets.h"

using namespace ts;
using namespace ts::ui;

namespace {

MemoryResult syntheticResult() {
    MemoryResult r;
    r.spec.bench.model = *modelPreset("tiny");
    r.spec.bench.device = "cuda";
    r.spec.record_steps = 1;
    r.gpu = true;
    r.parameter_count = parameterCount(r.spec.bench.model);
    r.trace = ts::testing::syntheticTrace();
    FrontierResult f;
    f.axis = FrontierAxis::Context;
    f.lo = 16;
    f.hi = 256;
    f.granule = 16;
    f.largest_fit = 96;
    f.smallest_oom = 112;
    f.probes = {{16, true, Status::Ok, 1000, ""},
                {256, false, Status::OOM, 0, "CUDA out of memory"},
                {96, true, Status::Ok, 5000, ""},
                {112, false, Status::OOM, 0, "CUDA out of memory"}};
    r.frontier = f;
    return r;
}

int64_t storeResult(ResultStore& store, const MemoryResult& r, const std::string& label) {
    const int64_t id = store.createRun(kMemoryLab, label, memorySpecJson({r.spec}), "test GPU");
    storeMemory(store, id, 0, r);
    return id;
}

struct Collect : JobObserver {
    QList<QVariant> items;
    std::vector<std::string> logs;
    void item(const QVariant& v) override { items << v; }
    void log(LogLevel, const std::string& m) override { logs.push_back(m); }
};

}  // namespace

class TestMemoryWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void panelJobAndStateRoundTrip();
    void declaredFieldsReadWhatPresetsWrite();
    void cpuRunOfTheJobSaysWhy();
    void storedRunInEveryPane();
    void failedStepShownAndSaved();
    void twoRunsComparedPhaseByPhase();
    void historyComparesMemoryRuns();
    void importSnapshotThroughTheFileMenu();
    void aMillionEvents();
    void classroomPresetLoads();
};

void TestMemoryWindow::classroomPresetLoads() {
    const auto preset = findPreset(QStringLiteral("memory-of-a-training-step"));
    QVERIFY(preset);
    QCOMPARE(preset->experiment, QStringLiteral("memory"));
    QCOMPARE(preset->view.value("tab").toString(), QStringLiteral("timeline"));
    // The GPU configuration as written, and the CPU variant the window loads without a GPU.
    MemoryPanel panel;
    panel.setCapabilities(capabilities());
    QJsonObject config = preset->config;
    if (!capabilities().cuda_available)
        for (auto it = preset->cpuConfig.begin(); it != preset->cpuConfig.end(); ++it)
            config[it.key()] = it.value();
    QStringList notes;
    panel.applyPreset(config, preset->title, &notes);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    QVERIFY2(notes.isEmpty(), qPrintable(notes.join('\n')));
    QCOMPARE(panel.spec().record_steps, capabilities().cuda_available ? 2 : 1);
    MemoryView view;
    QVERIFY(view.paneIndex(preset->view.value("tab").toString()) >= 0);
    // Issue 29 item 7: an empty view's charts say what comes, not empty axes.
    QVERIFY(view.timeline()->noteText().contains(QStringLiteral("active memory")));
    QVERIFY(view.categories()->noteText().contains(QStringLiteral("by category")));
}

void TestMemoryWindow::panelJobAndStateRoundTrip() {
    MemoryPanel panel;
    panel.setCapabilities(capabilities());
    QStringList notes;
    panel.setState(QJsonObject{{"size", "tiny"},
                               {"context", 32},
                               {"batch", 2},
                               {"precision", "fp32"},
                               {"attention", "naive"},
                               {"mode", "train"},
                               {"device", "cpu"},
                               {"warmup", 0},
                               {"record_steps", 3},
                               {"frontier", "batch"}},
                   &notes);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    const auto job = panel.makeJob();
    QVERIFY(job);
    QCOMPARE(job->lab, QStringLiteral("memory"));
    const MemorySpec spec = memorySpecFromJson(parseJson(job->spec_json));
    QCOMPARE(spec.record_steps, 3);
    QCOMPARE(spec.bench.model.context_length, 32);
    QVERIFY(spec.frontier == FrontierAxis::Batch);
    QVERIFY(spec == panel.spec());
    // History: the stored spec as one line, and back into a panel asking for the same run.
    const QJsonObject stored =
        QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
    const QString line = MemoryPanel::describeSpec(stored);
    QVERIFY2(
        line.contains(QStringLiteral("ctx 32")) && line.contains(QStringLiteral("frontier batch")),
        qPrintable(line));
    MemoryPanel again;
    again.setCapabilities(capabilities());
    again.setState(MemoryPanel::stateFromSpec(stored));
    QVERIFY(again.spec() == panel.spec());
}

// See Note [declared fields]: the panel's state is its registry's, read the same way in every
// lab: a number written as text (or a list's first), an unknown choice named and kept out.
void TestMemoryWindow::declaredFieldsReadWhatPresetsWrite() {
    MemoryPanel panel;
    panel.setCapabilities(capabilities());
    QStringList notes;
    panel.setState(QJsonObject{{"context", "256"},
                               {"batch", "8, 16"},
                               {"record_steps", 1},
                               {"frontier", "sideways"},
                               {"checkpoint", "2"}},
                   &notes);
    QCOMPARE(panel.spec().bench.model.context_length, 256);
    QCOMPARE(panel.spec().bench.batch_size, 8);
    QVERIFY(panel.spec().frontier == FrontierAxis::None);
    QVERIFY2(notes.join('\n').contains(QStringLiteral("frontier 'sideways' is not known here")),
             qPrintable(notes.join('\n')));
    // Every field by its object name, and back: state() read into another panel is the same.
    for (const char* name :
         {"label", "size", "context", "batch", "mode", "precision", "attention", "device", "warmup",
          "record_steps", "frontier", "checkpoint", "loss", "sources", "code", "python"})
        QVERIFY2(panel.fieldWidget(QLatin1String(name)), name);
    // A dimension the panel has no field of its own for is a line of the point's table's row
    // (the fused loss: a choice), read into the spec.
    panel.setState(QJsonObject{{"loss", "fused"}});
    QVERIFY(panel.spec().bench.fused_loss);
    panel.setState(QJsonObject{{"loss", "chunked"}});
    QVERIFY(panel.fieldWidget(QStringLiteral("loss"))->property("invalid").toBool());
    panel.setState(QJsonObject{{"loss", "logits"}});
    MemoryPanel again;
    again.setCapabilities(capabilities());
    again.setState(panel.state());
    QCOMPARE(again.state(), panel.state());
    QVERIFY(again.spec() == panel.spec());
}

void TestMemoryWindow::cpuRunOfTheJobSaysWhy() {
    MemoryPanel panel;
    panel.setCapabilities(capabilities());
    panel.setState(QJsonObject{{"size", "tiny"},
                               {"context", 16},
                               {"batch", 1},
                               {"device", "cpu"},
                               {"warmup", 0},
                               {"record_steps", 1},
                               {"frontier", "none"}});
    const auto job = panel.makeJob();
    QVERIFY(job);
    Collect out;
    CancelToken cancel;
    job->run(out, cancel, nullptr, 0);
    QCOMPARE(out.items.size(), 1);
    const MemoryResult r = out.items[0].value<MemoryResult>();
    QVERIFY(r.status == Status::Failed);
    QVERIFY(r.error.find("needs a CUDA device") != std::string::npos);
    MemoryView view;
    view.addItems(out.items);
    QCOMPARE(view.pointCount(), 1);
    QCOMPARE(view.pointModel()->rowCount(), 1);
    QCOMPARE(view.pointModel()->item(0, 6)->text(), QStringLiteral("failed"));
    // Issue 29 item 6: nothing was recorded, so nothing reads as measured ("at the peak 0 B"
    // beside the prediction): the measured cells say so, the prediction stays.
    QVERIFY(view.peakModel()->rowCount() > 0);
    for (int row = 0; row < view.peakModel()->rowCount(); ++row) {
        QCOMPARE(view.peakModel()->item(row, 1)->text(), QStringLiteral("not measured"));
        QVERIFY(view.peakModel()->item(row, 3)->text() != QStringLiteral("—"));
    }
    // Two such runs do not compare as "A 0 B, B 0 B".
    QTemporaryDir dir;
    ResultStore store(dir.filePath(QStringLiteral("results.db")).toStdString());
    std::vector<StoredRun> runs;
    for (int i = 0; i < 2; ++i) {
        const int64_t id = storeResult(store, r, "cpu");
        runs.push_back(StoredRun{*store.run(id), store.rows(id, kMemoryLab), {}});
    }
    QString error;
    QVERIFY(!view.compare(runs[0], runs[1], &error));
    QVERIFY2(error.contains(QStringLiteral("recorded no allocation")), qPrintable(error));
}

void TestMemoryWindow::storedRunInEveryPane() {
    QTemporaryDir dir;
    ResultStore store(dir.filePath(QStringLiteral("results.db")).toStdString());
    const MemoryResult r = syntheticResult();
    const int64_t id =
        store.createRun(kMemoryLab, "synthetic", memorySpecJson({r.spec}), "test GPU");
    storeMemory(store, id, 0, r);
    StoredRun run{*store.run(id), store.rows(id, kMemoryLab), {}};
    MemoryView view;
    QString error;
    QVERIFY2(view.showStored(run, &error), qPrintable(error));
    QCOMPARE(view.storeRunId(), id);
    QStringList keys;
    for (const auto& p : view.panes()) keys << p.key;
    QCOMPARE(keys, (QStringList{"timeline", "categories", "allocations", "peaks", "frontier",
                                "compare"}));

    // The timeline: allocated and reserved after each of the 13 changes, the 3 driver samples;
    // four phase bands; the categories stacked (six graphs of 13 points).
    QCOMPARE(view.timeline()->plottedPoints(), 13 + 13 + 3);
    QCOMPARE(view.timeline()->bandCount(), 4);
    // Issue 29 item 11: hovering the allocated line says its series, event and value.
    {
        QCustomPlot* plot = view.timeline()->plot();
        plot->setViewport(QRect(0, 0, 800, 400));  // laid out as if shown at that size
        plot->replot();
        QCPGraph* allocated = plot->graph(0);
        const auto at = allocated->data()->at(6);
        const QString text =
            view.timeline()->hoverText(QPointF(allocated->keyAxis()->coordToPixel(at->key),
                                               allocated->valueAxis()->coordToPixel(at->value)));
        QVERIFY2(
            text.startsWith(allocated->name()) && text.contains(QString::number(at->key, 'g', 5)),
            qPrintable(text));
    }
    QCOMPARE(view.categories()->plot()->graphCount(), 6);
    QCOMPARE(view.categories()->plottedPoints(), 6 * 13);
    // The top of the stack is the allocated line.
    const auto* top = view.categories()->plot()->graph(5)->data().data();
    QCOMPARE(top->at(6)->value * 1024.0 * 1024.0, 22384.0);

    // The peak: six categories, measured against predicted.
    QAbstractItemModelTester peakTester(view.peakModel());
    QCOMPARE(view.peakModel()->rowCount(), 6);
    QCOMPARE(view.peakModel()->item(0, 0)->text(), QStringLiteral("parameters"));
    QCOMPARE(view.peakModel()->item(0, 1)->data(Qt::UserRole).toLongLong(), 4096);
    QCOMPARE(view.peakModel()->item(1, 1)->data(Qt::UserRole).toLongLong(), 4096);  // gradients
    QCOMPARE(view.peakModel()->item(3, 1)->data(Qt::UserRole).toLongLong(), 3000);  // activations
    QCOMPARE(view.peakModel()->item(0, 3)->data(Qt::UserRole).toLongLong(),
             predictMemory(r.spec.bench).parameters);

    // The allocations, largest first; selecting one highlights its lifetime on the timeline.
    QAbstractItemModelTester allocTester(view.allocationModel());
    QCOMPARE(view.allocationModel()->rowCount(), 7);
    QCOMPARE(view.allocationModel()->item(0, 0)->data(Qt::UserRole).toLongLong(), 4096);
    QCOMPARE(view.allocationModel()->item(1, 4)->text(), QStringLiteral("temporaries"));
    QCOMPARE(view.allocationModel()->item(1, 7)->text(), QStringLiteral("MmBackward0"));
    QCOMPARE(view.timeline()->highlighted(), -1);
    view.allocationTable()->selectionModel()->setCurrentIndex(
        view.allocationModel()->index(1, 0),
        QItemSelectionModel::SelectCurrent | QItemSelectionModel::Rows);
    const int highlighted = view.timeline()->highlighted();
    QVERIFY(highlighted >= 0);
    const Allocation& x = view.analysis().allocations[highlighted];
    QCOMPARE(x.alloc_index, size_t{7});
    QCOMPARE(x.size, int64_t{3000});

    // The frontier: fits and out-of-memory probes, two graphs.
    QCOMPARE(view.frontier()->plot()->graphCount(), 2);
    QCOMPARE(view.frontier()->plot()->graph(0)->data()->size(), 2);
    QCOMPARE(view.frontier()->plot()->graph(1)->data()->size(), 2);
    QCOMPARE(view.pointModel()->rowCount(), 1);

    // Exports and the report know the run.
    QVERIFY(view.exportContext(0).configuration.contains(QStringLiteral("tiny ctx=256")));
    QVERIFY(view.reportParts().size() >= 5);
    QPixmap image(800, 500);
    QPainter painter(&image);
    view.timeline()->paintChart(painter, QRectF(0, 0, 800, 500));
}

void TestMemoryWindow::failedStepShownAndSaved() {
    QTemporaryDir dir;
    ResultStore store(dir.filePath(QStringLiteral("results.db")).toStdString());
    MemoryResult r = syntheticResult();
    r.frontier->oom_trace = ts::testing::syntheticOomTrace();
    const int64_t id = storeResult(store, r, "with a failure");
    StoredRun run{*store.run(id), store.rows(id, kMemoryLab), {}};
    MemoryView view;
    QString error;
    QVERIFY2(view.showStored(run, &error), qPrintable(error));
    // The frontier pane names the allocation that failed.
    QVERIFY2(
        view.failureText()->text().contains(QStringLiteral(
            "At context 112 the step ran out of memory: 1.00 GiB asked for in backward of step 0 "
            "(layer.0/attention, MmBackward0)")),
        qPrintable(view.failureText()->text()));
    auto* chooser = view.findChild<QComboBox*>(QStringLiteral("memoryPoint"));
    QVERIFY(chooser);
    QCOMPARE(chooser->count(), 2);  // the point, then its failed step
    QVERIFY(chooser->itemText(1).startsWith(QStringLiteral("Out of memory: tiny ctx=112")));
    // Issue 29 item 15: the chooser shows a point's headline, not "tiny ctx=".
    view.resize(900, 600);
    static_cast<QWidget&>(view).show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY2(chooser->width() >= chooser->fontMetrics().horizontalAdvance(QStringLiteral("x")) * 30,
             qPrintable(QString::number(chooser->width())));
    // With a point shown, the view still fits beside the panel on a 1280 px screen (its
    // chooser's note wraps; on an H100 it made the window 1336 px wide).
    QVERIFY2(view.minimumSizeHint().width() <= 720,
             qPrintable(QString::number(view.minimumSizeHint().width())));
    static_cast<QWidget&>(view).hide();
    QCOMPARE(view.pointModel()->rowCount(), 1);  // the peak table lists points only

    // Saving the shown point's snapshot, then the failed step's.
    // Items beside the bands on a plain trace (the lifetime, its label, the note).
    const int fixedItems = view.timeline()->plot()->itemCount() - view.timeline()->bandCount();
    const QString pointPath = dir.filePath(QStringLiteral("point.pickle"));
    QVERIFY2(view.saveSnapshot(pointPath, &error), qPrintable(error));
    QVERIFY(view.showFailedStep(0));
    QCOMPARE(chooser->currentIndex(), 1);
    QVERIFY(view.shownResult()->status == Status::OOM);
    // Every pane shows the failing step: 8 changes before the refusal, the peak just before it,
    // the forward blocks still held counted as activations.
    QCOMPARE(view.analysis().timeline.size(), size_t{7});
    QCOMPARE(view.analysis().peak.allocated, 22384);
    QCOMPARE(view.peakModel()->item(3, 1)->data(Qt::UserRole).toLongLong(), 3000);
    // The timeline marks the failure (a line and its label beside the bands and the lifetime).
    QCOMPARE(view.timeline()->plot()->itemCount(), view.timeline()->bandCount() + fixedItems + 2);
    const QString oomPath = dir.filePath(QStringLiteral("oom.pickle"));
    QVERIFY2(view.saveSnapshot(oomPath, &error), qPrintable(error));
    QFile file(oomPath);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    const auto snap =
        pickle::loads(std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())));
    const auto& entries = snap.at("device_traces").items.at(0).items;
    QCOMPARE(entries.size(), size_t{10});  // 9 events and the "snapshot" entry
    QCOMPARE(entries[8].at("action").s, std::string("oom"));
    QCOMPARE(entries.back().at("action").s, std::string("snapshot"));
    // Back to the point: its own trace again.
    view.showPoint(0);
    QVERIFY(view.shownResult()->status == Status::Ok);
    QCOMPARE(view.timeline()->plot()->itemCount(), view.timeline()->bandCount() + fixedItems);
    // The frontier preset's view ends a live run on the failed step, once.
    MemoryView live;
    live.applyPresetView(QJsonObject{{"tab", "timeline"}, {"failed_step", true}});
    live.addItems({QVariant::fromValue(r)});
    QVERIFY(live.shownResult()->status == Status::OOM);
    QCOMPARE(live.currentPane(), live.paneIndex(QStringLiteral("timeline")));
    live.addItems({QVariant::fromValue(r)});
    QVERIFY(live.shownResult()->status == Status::Ok);
    QVERIFY(findPreset(QStringLiteral("how-long-a-context-fits")));
    QCOMPARE(findPreset(QStringLiteral("how-long-a-context-fits"))->experiment,
             QStringLiteral("memory"));
    // A path that cannot be written is refused with the reason.
    QVERIFY(!view.saveSnapshot(dir.filePath(QStringLiteral("no/such/dir/x.pickle")), &error));
    QVERIFY(error.contains(QStringLiteral("Could not write")));
}

void TestMemoryWindow::twoRunsComparedPhaseByPhase() {
    {
        // Issue 29 item 7: before any comparison the chart filled a 160-px corner (the empty
        // legend below it capped the plot's width); it spans its pane, before and after.
        MemoryCompareChart empty;
        empty.resize(1000, 300);
        empty.show();
        QVERIFY(QTest::qWaitForWindowExposed(&empty));
        QCustomPlot* plot = empty.plot();
        plot->replot();
        QVERIFY2(plot->axisRect()->width() > plot->width() / 2,
                 qPrintable(QStringLiteral("the plot is %1 px wide in a %2 px chart")
                                .arg(plot->axisRect()->width())
                                .arg(plot->width())));
    }
    QTemporaryDir dir;
    ResultStore store(dir.filePath(QStringLiteral("results.db")).toStdString());
    const MemoryResult a = syntheticResult();
    MemoryResult b = a;
    b.spec.bench.precision = Precision::BF16;
    b.trace.events[5].size = 1000;  // A2 half as large: an activation saved
    b.trace.events[9].size = 1000;
    const int64_t ia = storeResult(store, a, "fp32"), ib = storeResult(store, b, "bf16");
    StoredRun ra{*store.run(ia), store.rows(ia, kMemoryLab), {}},
        rb{*store.run(ib), store.rows(ib, kMemoryLab), {}};
    MemoryView view;
    QCOMPARE(view.compareUnavailable(), QString());
    QString error;
    QVERIFY2(view.compare(ra, rb, &error), qPrintable(error));
    QCOMPARE(view.currentPane(), view.paneIndex(QStringLiteral("compare")));
    QVERIFY(view.runTitle().contains(QStringLiteral("run %1 vs run %2").arg(ia).arg(ib)));
    QCOMPARE(view.storeRunId(), ia);  // the other panes show A
    // Four phases (forward, backward, optimizer, the step's peak) × (six categories + total).
    QAbstractItemModelTester tester(view.comparisonModel());
    QCOMPARE(view.comparisonModel()->rowCount(), 4 * 7);
    int backwardActivations = -1, backwardTotal = -1;
    for (int row = 0; row < view.comparisonModel()->rowCount(); ++row) {
        const QString phase = view.comparisonModel()->item(row, 0)->text(),
                      category = view.comparisonModel()->item(row, 1)->text();
        if (phase == QStringLiteral("backward") && category == QStringLiteral("activations"))
            backwardActivations = row;
        if (phase == QStringLiteral("backward") && category == QStringLiteral("total"))
            backwardTotal = row;
    }
    QVERIFY(backwardActivations >= 0 && backwardTotal >= 0);
    QCOMPARE(view.comparisonModel()->item(backwardActivations, 2)->data(Qt::UserRole).toLongLong(),
             3000);
    QCOMPARE(view.comparisonModel()->item(backwardActivations, 3)->data(Qt::UserRole).toLongLong(),
             2000);
    QCOMPARE(view.comparisonModel()->item(backwardActivations, 5)->text(), QStringLiteral("100%"));
    QCOMPARE(view.comparisonModel()->item(backwardTotal, 4)->text(), QStringLiteral("−1000 B"));
    // The chart: A's and B's stacked bars per phase, their tops the phases' highest moments.
    QCOMPARE(view.comparisonChart()->barTotal(1, 0) * 1024 * 1024, 22384.0);
    QCOMPARE(view.comparisonChart()->barTotal(1, 1) * 1024 * 1024, 21384.0);
    {
        QCustomPlot* plot = view.comparisonChart()->plot();
        plot->replot();                          // (the chart's own replot is queued)
        QVERIFY(plot->legend->itemCount() > 0);  // the categories' legend, below the bars
        QCOMPARE(plot->plotLayout()->element(plot->plotLayout()->rowCount() - 1, 0),
                 static_cast<QCPLayoutElement*>(plot->legend));
    }
    // In the report, and cleared by a new run.
    bool inReport = false;
    for (const auto& part : view.reportParts()) inReport |= part.table == view.comparisonModel();
    QVERIFY(inReport);
    view.beginRun(LabJob{});
    QCOMPARE(view.comparisonModel()->rowCount(), 0);
}

void TestMemoryWindow::historyComparesMemoryRuns() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("results.db"));
    int64_t ia = 0, ib = 0, bench = 0;
    {
        ResultStore store(db.toStdString());
        ia = storeResult(store, syntheticResult(), "fp32");
        ib = storeResult(store, syntheticResult(), "again");
        bench = store.createRun("bench", "a benchmark", "{}", "test GPU");
    }
    MainWindow w(MainWindow::Options{db, false});
    QSignalSpy refreshed(w.history(), &HistoryController::refreshed);
    w.history()->refresh();
    QVERIFY(refreshed.wait(10000) || !refreshed.isEmpty());
    HistoryWidget* h = w.history()->widget();
    QPushButton* compare = nullptr;
    for (QPushButton* b : h->findChildren<QPushButton*>())
        if (b->text() == QObject::tr("Co&mpare")) compare = b;
    QVERIFY(compare);
    h->selectRuns({ia, ib});
    QVERIFY(compare->isEnabled());
    h->selectRuns({ia, bench});
    QVERIFY(!compare->isEnabled());
    QCOMPARE(compare->toolTip(), QStringLiteral("Only runs of one kind compare"));
    // Compared through the window: the Memory experiment shows the comparison.
    QSignalSpy ready(w.history(), &HistoryController::comparisonReady);
    w.history()->compareStoredRuns(ia, ib);
    QVERIFY(ready.wait(10000) || !ready.isEmpty());
    auto* view = qobject_cast<MemoryView*>(w.labView(QStringLiteral("memory")));
    QVERIFY(view);
    QCOMPARE(view->comparisonModel()->rowCount(), 4 * 7);
    QVERIFY(w.windowTitle().contains(QStringLiteral("run %1 vs run %2").arg(ia).arg(ib)));
}

void TestMemoryWindow::importSnapshotThroughTheFileMenu() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("results.db"));
    MainWindow w(MainWindow::Options{db, false});
    auto* view = qobject_cast<MemoryView*>(w.labView(QStringLiteral("memory")));
    QVERIFY(view);
    QVERIFY(view->importPatterns().contains(QStringLiteral("*.pickle")));
    // The file's type picks the lab: a .pickle is the memory lab's.
    QString error;
    const QString fixture =
        QString::fromStdString(ts::testing::testPath("TRAINSCOPE_TEST_MEMORY_FIXTURES")) +
        QStringLiteral("/snapshot.pickle");
    QVERIFY2(w.history()->importTrace(fixture, &error), qPrintable(error));
    QVERIFY(error.isEmpty());
    QCOMPARE(w.labs()->currentId(), QStringLiteral("memory"));
    bool said = false;
    for (QLabel* l : view->findChildren<QLabel*>())
        said |=
            l->text().contains(QStringLiteral("snapshot.pickle (an imported snapshot of cuda:1"));
    QVERIFY(said);
    {
        ResultStore store(db.toStdString(), ResultStore::Access::ReadIfNeeded);
        const auto runs = store.listRuns();
        QCOMPARE(runs.size(), size_t(1));
        QCOMPARE(runs[0].lab, std::string("memory"));
        QCOMPARE(runs[0].label, std::string("snapshot.pickle"));
        QVERIFY(runs[0].finished());
    }
    // A damaged snapshot and a file no lab reads: refused, saying why; nothing stored.
    QFile bad(dir.filePath(QStringLiteral("bad.pickle")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("\x80\x04]");
    bad.close();
    QVERIFY(!w.history()->importTrace(bad.fileName(), &error));
    QVERIFY2(error.contains(QStringLiteral("not a memory snapshot")), qPrintable(error));
    QVERIFY(!w.history()->importTrace(dir.filePath(QStringLiteral("notes.txt")), &error));
    QVERIFY2(error.contains(QStringLiteral("no experiment imports")), qPrintable(error));
    ResultStore store(db.toStdString(), ResultStore::Access::ReadIfNeeded);
    QCOMPARE(store.listRuns().size(), size_t(1));
}

void TestMemoryWindow::aMillionEvents() {
    MemoryResult r = syntheticResult();
    r.frontier.reset();
    RawMemoryTrace& t = r.trace;
    t.events.clear();
    t.driver.clear();
    const size_t n = 1'000'000;
    t.events.reserve(n);
    // A saw-tooth: forward allocates 1000 blocks, backward frees them, over and over.
    for (size_t i = 0; t.events.size() < n; ++i) {
        const int step = static_cast<int>(i);
        for (uint64_t k = 0; k < 250'000 && t.events.size() < n; ++k)
            t.events.push_back({AllocAction::Alloc, 0x1000000 + k * 4096, 4096,
                                static_cast<int64_t>(t.events.size()), 0, Phase::Forward, step, -1,
                                -1, -1});
        for (uint64_t k = 250'000; k-- > 0 && t.events.size() < n;)
            t.events.push_back({AllocAction::FreeCompleted, 0x1000000 + k * 4096, 4096,
                                static_cast<int64_t>(t.events.size()), 0, Phase::Backward, step, -1,
                                -1, -1});
    }
    QElapsedTimer timer;
    timer.start();
    MemoryView view;
    view.resize(1200, 800);
    view.addItems({QVariant::fromValue(r)});
    const qint64 shown = timer.elapsed();
    QCOMPARE(view.timeline()->plot()->graph(0)->data()->size(), static_cast<int>(n));
    QVERIFY(view.categories()->plottedPoints() <= 6 * 200'000);
    QCOMPARE(view.analysis().peak.allocated, 250'000 * 4096 + 4096 + 8192);
    // Drawing the whole timeline: adaptive sampling keeps it to the pixels' worth of points.
    timer.restart();
    const QPixmap pixmap = view.timeline()->plot()->toPixmap(1200, 600);
    const qint64 drawn = timer.elapsed();
    qInfo("a million events: analysed and shown in %lld ms, the timeline drawn in %lld ms", shown,
          drawn);
    QVERIFY(!pixmap.isNull());
    QVERIFY2(drawn < 1000, qPrintable(QStringLiteral("drawing took %1 ms").arg(drawn)));
}

QTEST_MAIN(TestMemoryWindow)
#include "tst_memory_window.moc"
