// The precision lab in the window: its panel (validation against the engine's checks), real
// CPU runs of each experiment through the window filling the accumulation table and chart,
// the autocast tree and the training and loss-scale charts with what the engine computes,
// stored runs reopened from History, History's spec round trip, and the classroom presets.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QBrush>
#include <QComboBox>
#include <QFile>
#include <QJsonDocument>
#include <QLineEdit>
#include <QStandardItemModel>
#include <QTreeView>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "common/windowtesting.h"
#include "core/store.h"
#include "precision/precision.h"
#include "runtime/environment.h"
#include "ui/common/runcontroller.h"
#include "ui/precision/precisionchart.h"
#include "ui/precision/precisionmodels.h"
#include "ui/precision/precisionpanel.h"
#include "ui/precision/precisionview.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/presets.h"

using namespace ts;
using namespace ts::ui;

namespace {
PrecisionView* precisionViewOf(const MainWindow* w) {
    return qobject_cast<PrecisionView*>(w->labView(QStringLiteral("precision")));
}

// The course's four sums (no bf16), with the LibTorch check.
QJsonObject courseState() {
    return QJsonObject{{"study", "accumulate"},
                       {"addend", "0.01"},
                       {"count", "1000"},
                       {"formats", QJsonArray{"fp16"}},
                       {"check_torch", true}};
}
QJsonObject autocastState() {
    return QJsonObject{{"study", "autocast"}, {"model", "toy"},    {"autocast_dtype", "bf16"},
                       {"in_features", 16},   {"out_features", 4}, {"batch", 8},
                       {"device", "cpu"}};
}
QJsonObject trainState(const QJsonArray& precisions) {
    return QJsonObject{{"study", "train"}, {"precisions", precisions},   {"steps", "6"},
                       {"lr", "0.01"},     {"init_scale", "1073741824"}, {"train_batch", 64},
                       {"device", "cpu"}};
}

bool runAndWait(MainWindow& w, int timeoutMs) {
    QSignalSpy finished(w.session(), &RunSession::runFinished);
    if (!w.session()->start()) return false;
    if (!finished.wait(timeoutMs) && finished.isEmpty()) return false;
    return finished[0][0].value<RunOutcome>() == RunOutcome::Completed;
}

QString csvBody(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    // See Note [tables other programs read]: the table alone, no comment lines.
    return QString::fromUtf8(f.readAll()).trimmed();
}
}  // namespace

class TestPrecisionWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { caps_ = capabilities(); }
    void panelValidatesWithTheEnginesChecks();
    void specsRoundTripThroughHistory();
    void accumulationRunFillsTheTableAndChart();
    void autocastRunFillsTheTreeWithTheEnginesDtypes();
    void trainingRunFillsTheLossAndScaleCharts();
    void presetsLoadIntoThePrecisionLab();
    void onTheGpuLayerNormIsAnFp32Island();

private:
    Capabilities caps_;
};

void TestPrecisionWindow::panelValidatesWithTheEnginesChecks() {
    PrecisionPanel p;
    QVERIFY(!p.makeJob());  // not before the machine is known
    p.setCapabilities(caps_);
    p.setState(courseState());
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    auto job = p.makeJob();
    QVERIFY(job);
    QCOMPARE(job->lab, QStringLiteral("precision"));
    QCOMPARE(job->point_count, 4);
    QCOMPARE(nlohmann::json::parse(job->spec_json).at("command").get<std::string>(),
             std::string("precision accumulate"));
    // A bad count: flagged with the engine's words, no job.
    auto* count = qobject_cast<QLineEdit*>(p.fieldWidget("count"));
    QVERIFY(count);
    count->setText(QStringLiteral("0"));
    QVERIFY(!p.isValid());
    QVERIFY(!p.makeJob());
    QVERIFY(count->property("invalid").toBool());
    QVERIFY2(count->toolTip().contains(QStringLiteral("count 0 is not in 1..")),
             qPrintable(count->toolTip()));
    count->setText(QStringLiteral("a thousand"));
    QVERIFY(count->toolTip().contains(QStringLiteral("'a thousand'")));
    count->setText(QString::number(kMaxAccumulationCount + 1));
    QVERIFY(!p.isValid());
    count->setText(QStringLiteral("1000"));
    QVERIFY(p.isValid());
    QVERIFY(!count->property("invalid").toBool());
    auto* addend = qobject_cast<QLineEdit*>(p.fieldWidget("addend"));
    addend->setText(QStringLiteral("1e300"));  // no fp32 value
    QVERIFY(addend->property("invalid").toBool());
    QVERIFY2(addend->toolTip().contains(QStringLiteral("does not fit in fp32")),
             qPrintable(addend->toolTip()));
    addend->setText(QStringLiteral("0.01"));
    // Training: no precision ticked, a bad learning rate.
    p.setState(trainState(QJsonArray{}));
    QVERIFY(!p.isValid());
    QVERIFY(p.fieldWidget("precisions")->property("invalid").toBool());
    p.setState(trainState(QJsonArray{"fp32"}));
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    auto* steps = qobject_cast<QLineEdit*>(p.fieldWidget("steps"));
    steps->setText(QStringLiteral("99999999999"));
    QVERIFY(!p.isValid());
    QVERIFY2(steps->toolTip().contains(QStringLiteral("steps 99999999999 is not in 1..100000")),
             qPrintable(steps->toolTip()));
    steps->setText(QStringLiteral("0"));
    QVERIFY(steps->toolTip().contains(QStringLiteral("steps 0 is not in 1..")));
    steps->setText(QStringLiteral("6"));
    QVERIFY(p.isValid());
    qobject_cast<QLineEdit*>(p.fieldWidget("lr"))->setText(QStringLiteral("-1"));
    QVERIFY(p.fieldWidget("lr")->property("invalid").toBool());
    QVERIFY(p.fieldWidget("lr")->toolTip().contains(QStringLiteral("learning rate -1")));
    // The autocast inspector: the GPU is disabled without one, with the reason.
    p.setState(autocastState());
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    auto* device = qobject_cast<QComboBox*>(p.fieldWidget("device"));
    const int cuda = device->findData(QStringLiteral("cuda"));
    QVERIFY(cuda >= 0);
    if (!caps_.cuda_available) {
        auto* model = qobject_cast<QStandardItemModel*>(device->model());
        QVERIFY(!model->item(cuda)->isEnabled());
        QVERIFY(!device->itemData(cuda, Qt::ToolTipRole).toString().isEmpty());
        QJsonObject s = autocastState();
        s["device"] = "cuda";
        QStringList notes;
        p.setState(s, &notes);
        QVERIFY2(notes.join(' ').contains(QStringLiteral("device 'cuda' is not available here")),
                 qPrintable(notes.join('\n')));
        QVERIFY(p.isValid());
        QCOMPARE(p.autocastSpec().device, std::string("cpu"));
    }
    // The accumulation runs on the CPU whatever the device: the field says so.
    p.setState(courseState());
    QVERIFY(!device->isEnabled());
    QVERIFY(device->toolTip().contains(QStringLiteral("CPU")));

    // In the window: an invalid panel disables Run.
    QTemporaryDir dir;
    auto w = freshWindow("tst_precision_window", dir.filePath("results.db"));
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    QVERIFY(w->labs()->select("precision"));
    w->currentPanel()->setState(courseState());
    QVERIFY(w->actions()->runAction()->isEnabled());
    qobject_cast<QLineEdit*>(w->currentPanel()->fieldWidget("count"))
        ->setText(QStringLiteral("-5"));
    QVERIFY(!w->actions()->runAction()->isEnabled());
    QVERIFY(!w->session()->start());
}

void TestPrecisionWindow::specsRoundTripThroughHistory() {
    PrecisionPanel a, b;
    a.setCapabilities(caps_);
    b.setCapabilities(caps_);
    for (const QJsonObject& s :
         {courseState(), autocastState(), trainState(QJsonArray{"fp32", "bf16"})}) {
        a.setState(s);
        QVERIFY2(a.isValid(), qPrintable(a.problems().join('\n')));
        const auto job = a.makeJob();
        QVERIFY(job);
        const QJsonObject spec =
            QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
        const QString line = PrecisionPanel::describeSpec(spec);
        QVERIFY2(!line.contains(QStringLiteral("unknown")), qPrintable(line));
        b.setState(PrecisionPanel::stateFromSpec(spec));
        QVERIFY2(b.isValid(), qPrintable(b.problems().join('\n')));
        QCOMPARE(b.makeJob()->spec_json, job->spec_json);  // "run again" asks for the same run
    }
    QVERIFY(PrecisionPanel::describeSpec({{"command", "precision accumulate"},
                                          {"addend", 0.01},
                                          {"count", 1000},
                                          {"fp16", true},
                                          {"bf16", false}})
                .contains(QStringLiteral("1000 × 0.01")));
}

void TestPrecisionWindow::accumulationRunFillsTheTableAndChart() {
    QTemporaryDir dir;
    const QString db = dir.filePath("results.db");
    auto w = freshWindow("tst_precision_window", db);
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    PrecisionView* view = precisionViewOf(w.get());
    QVERIFY(view);
    QVERIFY(w->labs()->select("precision"));
    w->currentPanel()->setState(courseState());
    QVERIFY(runAndWait(*w, 120000));
    AccumulationModel* m = view->accumulationModel();
    QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(m->rowCount(), 4);
    QCOMPARE(view->study(), QStringLiteral("accumulate"));
    // The engine's own results, row by row; the course's printed values.
    const auto variants = accumulationVariants(true, false);
    const QStringList course = {"10.0001", "9.9531", "10.0021", "10.0021"};
    for (int i = 0; i < 4; ++i) {
        const AccumulationResult want = accumulate(variants[size_t(i)], 0.01, 1000);
        QCOMPARE(m->data(m->index(i, AccumulationModel::Variant)).toString(),
                 QString::fromStdString(want.variant.name()));
        QCOMPARE(m->data(m->index(i, AccumulationModel::Value)).toString(), course[i]);
        QCOMPARE(
            m->data(m->index(i, AccumulationModel::Value), AccumulationModel::ValueRole).toDouble(),
            want.value);
        QCOMPARE(
            m->data(m->index(i, AccumulationModel::Error), AccumulationModel::ValueRole).toDouble(),
            want.error);
        QCOMPARE(m->data(m->index(i, AccumulationModel::UlpEnd), AccumulationModel::ValueRole)
                     .toDouble(),
                 want.ulp_end);
        QCOMPARE(
            m->data(m->index(i, AccumulationModel::FirstRounding), AccumulationModel::ValueRole)
                .toLongLong(),
            qlonglong(want.first_rounding_step));
        QCOMPARE(m->data(m->index(i, AccumulationModel::FirstStall), AccumulationModel::ValueRole)
                     .toLongLong(),
                 qlonglong(want.first_stall_step));
        QCOMPARE(m->data(m->index(i, AccumulationModel::Torch)).toString(), QStringLiteral("same"));
    }
    QCOMPARE(m->data(m->index(1, AccumulationModel::FirstRounding)).toString(),
             QStringLiteral("step 3"));
    // A line per sum on a log axis, each with the steps whose error is not exactly zero.
    PrecisionChart* chart = view->accumulationChart();
    chart->flushRedraw();
    QVERIFY(chart->logY());
    QCOMPARE(chart->seriesCount(), 4);
    for (const AccumulationResult& r : m->results()) {
        int nonZero = 0;
        for (double e : r.running_error) nonZero += e != 0;
        QVERIFY(nonZero > 0);
        QCOMPARE(chart->plottedPoints(QString::fromStdString(r.variant.name())),
                 std::min(nonZero, 3000));
    }
    // The other panes say which experiment fills them.
    QVERIFY(view->emptyNote("accumulation").isEmpty());
    QVERIFY(view->emptyNote("autocast").contains(QStringLiteral("autocast inspector")));
    // Exports: the table as CSV, the chart as an image, the report.
    QString error;
    QVERIFY2(w->exports()->exportTab("accumulation", dir.filePath("acc.csv"), {}, &error),
             qPrintable(error));
    const QString csv = csvBody(dir.filePath("acc.csv"));
    QVERIFY2(csv.startsWith(QStringLiteral("sum,final_value,exact_value,error,addend_as_stored,"
                                           "first_rounding_step,first_stall_step,ulp_at_end,"
                                           "torch_value\n")),
             qPrintable(csv));
    QCOMPARE(csv.count('\n'), 4);
    // Numbers; a sum that never stalls has no stall step (empty, not 0 or "never").
    const QStringList fp32 = csv.split('\n')[1].split(',');
    QCOMPARE(fp32[0], QStringLiteral("fp32 += fp32"));
    QVERIFY(fp32[1].toDouble() > 10);
    QCOMPARE(fp32[6], QString());
    QVERIFY2(w->exports()->exportTab("accumulation", dir.filePath("acc.png"), {800, 450}, &error),
             qPrintable(error));
    QImage img;
    QVERIFY(img.load(dir.filePath("acc.png")));
    QCOMPARE(img.size(), QSize(800, 450));
    QVERIFY2(w->exports()->exportReport(dir.filePath("report.md"), {800, 450}, &error),
             qPrintable(error));
    QFile md(dir.filePath("report.md"));
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    QVERIFY2(report.contains(QStringLiteral("| fp16 += fp16 | 9.9531 |")),
             qPrintable(report.left(2000)));
    QVERIFY(report.contains(QStringLiteral("## Accumulation: running error")));
    QVERIFY(report.contains(QStringLiteral("precision accumulate")));

    // Stored under kind "precision"; reopened from History with the same rows.
    const qint64 id = view->storeRunId();
    QVERIFY(id > 0);
    {
        ResultStore store(db.toStdString());
        QCOMPARE(store.run(id)->lab, std::string("precision"));
    }
    const std::vector<AccumulationResult> live = m->results();
    view->clear();
    QCOMPARE(m->rowCount(), 0);
    QVERIFY(!view->emptyNote("accumulation").isEmpty());
    QSignalSpy opened(w->history(), &HistoryController::storedRunOpened);
    w->history()->openStoredRun(id);
    QVERIFY(opened.wait(10000) || !opened.isEmpty());
    QCOMPARE(view->storeRunId(), id);
    QCOMPARE(view->study(), QStringLiteral("accumulate"));
    QCOMPARE(m->rowCount(), 4);
    for (int i = 0; i < 4; ++i) {
        QCOMPARE(m->results()[size_t(i)].value, live[size_t(i)].value);
        QCOMPARE(m->results()[size_t(i)].running_error.size(),
                 live[size_t(i)].running_error.size());
    }
    chart->flushRedraw();
    QCOMPARE(chart->seriesCount(), 4);
    QVERIFY(view->isVisible());
    QCOMPARE(view->panes()[view->currentPane()].key, QStringLiteral("accumulation"));
}

void TestPrecisionWindow::autocastRunFillsTheTreeWithTheEnginesDtypes() {
    QTemporaryDir dir;
    auto w = freshWindow("tst_precision_window", dir.filePath("results.db"));
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    PrecisionView* view = precisionViewOf(w.get());
    QVERIFY(w->labs()->select("precision"));
    w->currentPanel()->setState(autocastState());
    QAbstractItemModelTester flatTester(view->autocastTable(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(runAndWait(*w, 120000));
    QCOMPARE(view->study(), QStringLiteral("autocast"));
    // The engine, asked directly for the same spec.
    AutocastSpec spec;
    Observer quiet;
    const AutocastReport want = runAutocastInspector(spec, quiet);
    QVERIFY2(want.status == Status::Ok, want.error.c_str());
    AutocastTreeModel* tree = view->autocastTree();
    QAbstractItemModelTester tester(tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto cell = [&](const std::string& name, int column) {
        return tree->data(tree->indexOf(QString::fromStdString(name), column)).toString();
    };
    auto orDash = [](const std::string& s) {
        return s.empty() ? QStringLiteral("-") : QString::fromStdString(s);
    };
    int grads = 0;
    for (const AutocastRecord& r : want.records) {
        QVERIFY2(tree->indexOf(QString::fromStdString(r.name)).isValid(), r.name.c_str());
        if (r.kind == "grad") {
            ++grads;
            QCOMPARE(cell(r.name, AutocastTreeModel::Grad), QString::fromStdString(r.output_dtype));
            continue;
        }
        QCOMPARE(cell(r.name, AutocastTreeModel::Params), orDash(r.param_dtype));
        QCOMPARE(cell(r.name, AutocastTreeModel::Input), orDash(r.input_dtype));
        QCOMPARE(cell(r.name, AutocastTreeModel::Output), orDash(r.output_dtype));
    }
    QVERIFY(grads > 0);
    // The course's facts on the CPU: fc1 computes in bf16 from fp32 weights; its gradient is fp32.
    QCOMPARE(cell("fc1", AutocastTreeModel::Output), QStringLiteral("bf16"));
    QCOMPARE(cell("fc1", AutocastTreeModel::Params), QStringLiteral("fp32"));
    QCOMPARE(cell("fc1", AutocastTreeModel::Grad),
             QString::fromStdString(want.find("fc1.weight.grad")->output_dtype));
    // Colour per dtype; the loss (fp32 from bf16 logits) is marked as an fp32 island, fc1 not.
    const QModelIndex out = tree->indexOf("fc1", AutocastTreeModel::Output);
    QCOMPARE(tree->data(out, Qt::BackgroundRole).value<QBrush>().color(), dtypeTint("bf16"));
    QCOMPARE(tree->data(tree->indexOf("fc1", AutocastTreeModel::Params), Qt::BackgroundRole)
                 .value<QBrush>()
                 .color(),
             dtypeTint("fp32"));
    QVERIFY(dtypeTint("bf16") != dtypeTint("fp32") && dtypeTint("fp16") != dtypeTint("bf16"));
    const bool lossIsland =
        want.find("loss")->output_dtype == "fp32" && want.find("loss")->input_dtype == "bf16";
    QCOMPARE(tree->data(tree->indexOf("loss"), AutocastTreeModel::IslandRole).toBool(), lossIsland);
    QVERIFY(!tree->data(tree->indexOf("fc1"), AutocastTreeModel::IslandRole).toBool());
    // The measured ops: each module row summarises what its own ops computed in, and has them
    // as children (nested by depth), each with the engine's dtypes.
    QCOMPARE(tree->headerData(AutocastTreeModel::Computed, Qt::Horizontal).toString(),
             QStringLiteral("Computed in"));
    QVERIFY(!want.ops.empty());
    for (const AutocastRecord& r : want.records)
        QCOMPARE(cell(r.name, AutocastTreeModel::Computed), orDash(want.computedIn(r)));
    QCOMPARE(cell("fc1", AutocastTreeModel::Computed), QStringLiteral("bf16"));
    QCOMPARE(cell("ln", AutocastTreeModel::Computed), QStringLiteral("bf16+fp32"));
    QCOMPARE(cell("loss", AutocastTreeModel::Computed), QStringLiteral("fp32"));
    int opRows = 0;
    for (size_t i = 0; i < want.ops.size(); ++i) {
        const AutocastOp& op = want.ops[i];
        const QModelIndex at = tree->indexOfOp(int(i));
        if (op.module.empty()) {  // the toy's ops outside a module (none seen): not in the tree
            QVERIFY(!at.isValid());
            continue;
        }
        QVERIFY2(at.isValid(), op.name.c_str());
        ++opRows;
        QCOMPARE(at.data().toString(), QString::fromStdString(op.name));
        QCOMPARE(tree->data(at.siblingAtColumn(AutocastTreeModel::Computed)).toString(),
                 orDash(op.computed_dtype));
        QCOMPARE(tree->data(at.siblingAtColumn(AutocastTreeModel::Output)).toString(),
                 orDash(op.output_dtype));
        // Under its module's row: directly at depth 0, under the enclosing op deeper.
        QModelIndex module = at.parent();
        for (int d = 0; d < op.depth; ++d) module = module.parent();
        QCOMPARE(module.data(Qt::UserRole + 1).toString(), QString::fromStdString(op.module));
    }
    QVERIFY(opRows > 10);
    // fc1's linear: cast by autocast, fp32 in, computed in bf16 (tinted as bf16); the matmul
    // inside it a child in bf16.
    int lin = -1, mm = -1, back = -1;
    for (size_t i = 0; i < want.ops.size(); ++i) {
        const AutocastOp& op = want.ops[i];
        if (op.module != "fc1") continue;
        if (op.name == "aten::linear" && lin < 0) lin = int(i);
        if (op.name == "aten::mm" && op.phase == "forward" && mm < 0) mm = int(i);
        if (op.name == "aten::mm" && op.phase == "backward" && back < 0) back = int(i);
    }
    QVERIFY(lin >= 0 && mm >= 0 && back >= 0);
    const QModelIndex linIdx = tree->indexOfOp(lin);
    QCOMPARE(linIdx.parent(), tree->indexOf("fc1"));
    QVERIFY(
        tree->data(linIdx.siblingAtColumn(AutocastTreeModel::Kind)).toString().contains("cast"));
    QCOMPARE(tree->data(linIdx.siblingAtColumn(AutocastTreeModel::Input)).toString(),
             QStringLiteral("fp32, fp32"));
    QCOMPARE(tree->data(linIdx.siblingAtColumn(AutocastTreeModel::Computed)).toString(),
             QStringLiteral("bf16"));
    QCOMPARE(tree->data(linIdx.siblingAtColumn(AutocastTreeModel::Computed), Qt::BackgroundRole)
                 .value<QBrush>()
                 .color(),
             dtypeTint("bf16"));
    QVERIFY(tree->indexOfOp(mm).parent().isValid() &&
            tree->indexOfOp(mm).parent() != tree->indexOf("fc1"));
    QCOMPARE(
        tree->data(tree->indexOfOp(mm).siblingAtColumn(AutocastTreeModel::Computed)).toString(),
        QStringLiteral("bf16"));
    QVERIFY(tree->data(tree->indexOfOp(back).siblingAtColumn(AutocastTreeModel::Kind))
                .toString()
                .contains("MmBackward0"));
    // The mixed layer norm takes its first dtype's tint.
    QCOMPARE(tree->data(tree->indexOf("ln", AutocastTreeModel::Computed), Qt::BackgroundRole)
                 .value<QBrush>()
                 .color(),
             dtypeTint("bf16"));
    // The view opens the modules (their ops show) but not the ops' nested ops.
    auto* treeView = view->findChild<QTreeView*>(QStringLiteral("autocastTree"));
    QVERIFY(treeView);
    QVERIFY(treeView->isExpanded(tree->indexOf("fc1")));
    QVERIFY(tree->hasChildren(linIdx));
    QVERIFY(!treeView->isExpanded(linIdx));
    // The flat records export; the training panes explain themselves.
    QCOMPARE(view->autocastTable()->rowCount(), int(want.records.size()));
    QString error;
    QVERIFY2(w->exports()->exportTab("autocast", dir.filePath("autocast.csv"), {}, &error),
             qPrintable(error));
    QVERIFY(csvBody(dir.filePath("autocast.csv"))
                .contains(QStringLiteral("fc1,linear,fp32,fp32,bf16")));
    QVERIFY(view->emptyNote("training").contains(QStringLiteral("training numerics")));
    QVERIFY(view->emptyNote("autocast").isEmpty());

    // The tiny LM: one module row carrying its gradients' dtype, the gradients grouped by name.
    QJsonObject lm = autocastState();
    lm["model"] = "tiny";
    lm["context"] = 16;
    lm["batch"] = 2;
    w->currentPanel()->setState(lm);
    QVERIFY2(w->currentPanel()->isValid(), qPrintable(w->currentPanel()->problems().join('\n')));
    QVERIFY(runAndWait(*w, 120000));
    AutocastSpec lmSpec;
    lmSpec.model = "tiny";
    lmSpec.batch = 2;
    const AutocastReport lmWant = runAutocastInspector(lmSpec, quiet);
    QVERIFY2(lmWant.status == Status::Ok, lmWant.error.c_str());
    QCOMPARE(view->autocastTable()->rowCount(), int(lmWant.records.size()));
    std::string gradDtype;
    int nested = 0;
    for (const AutocastRecord& r : lmWant.records) {
        const QModelIndex at = tree->indexOf(QString::fromStdString(r.name));
        QVERIFY2(at.isValid(), r.name.c_str());
        if (r.kind != "grad") {
            QCOMPARE(cell(r.name, AutocastTreeModel::Output), orDash(r.output_dtype));
            continue;
        }
        gradDtype = gradDtype.empty() || gradDtype == r.output_dtype ? r.output_dtype : "mixed";
        const QStringList parts = QString::fromStdString(r.name).split('.');
        if (parts.size() >= 3) {  // "block0.w_qkv.grad": under "block0"
            ++nested;
            QCOMPARE(at.parent().data().toString(), parts.front());
        }
    }
    QVERIFY(nested > 0);
    const AutocastRecord* model = nullptr;
    for (const AutocastRecord& r : lmWant.records)
        if (r.kind == "transformer_lm") model = &r;
    QVERIFY(model);
    QCOMPARE(cell(model->name, AutocastTreeModel::Grad), QString::fromStdString(gradDtype));
    // The LM's ops sit under rows of their module paths ("layer.0.attention") under the model.
    QCOMPARE(cell(model->name, AutocastTreeModel::Computed), orDash(lmWant.computedIn(*model)));
    int grouped = 0;
    for (size_t i = 0; i < lmWant.ops.size(); ++i) {
        const AutocastOp& op = lmWant.ops[i];
        if (op.module == "loss" || op.depth != 0 || op.module.empty()) continue;
        const QModelIndex at = tree->indexOfOp(int(i));
        QVERIFY2(at.isValid(), op.name.c_str());
        QCOMPARE(at.parent().data().toString(), QString::fromStdString(op.module));
        QCOMPARE(at.parent().parent(), tree->indexOf(QString::fromStdString(model->name)));
        ++grouped;
    }
    QVERIFY(grouped > 10);
}

void TestPrecisionWindow::trainingRunFillsTheLossAndScaleCharts() {
    QTemporaryDir dir;
    const QString db = dir.filePath("results.db");
    auto w = freshWindow("tst_precision_window", db);
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    PrecisionView* view = precisionViewOf(w.get());
    QVERIFY(w->labs()->select("precision"));
    w->currentPanel()->setState(trainState(QJsonArray{"fp32", "fp16"}));
    QVERIFY2(w->currentPanel()->isValid(), qPrintable(w->currentPanel()->problems().join('\n')));
    TrainSummaryModel* m = view->trainModel();
    QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(runAndWait(*w, 300000));
    QCOMPARE(m->rowCount(), 2);
    // The engine, asked directly for the same spec: same losses, same skipped steps.
    TrainNumericsSpec spec;
    spec.precisions = {Precision::FP32, Precision::FP16};
    spec.steps = 6;
    spec.init_scale = 1073741824.0;
    Observer quiet;
    CancelToken cancel;
    const auto want = runTrainNumerics(spec, quiet, cancel);
    QCOMPARE(want.size(), size_t(2));
    for (size_t i = 0; i < 2; ++i) {
        QVERIFY2(m->curves()[i].status == Status::Ok, m->curves()[i].error.c_str());
        QCOMPARE(m->curves()[i].finalLoss(), want[i].finalLoss());
    }
    const int skipped = want[1].skippedSteps();
    QVERIFY(skipped > 0);  // 2^30 overflows fp16's scaled gradients at first
    QCOMPARE(m->data(m->index(1, TrainSummaryModel::Skipped)).toInt(), skipped);
    QCOMPARE(m->data(m->index(0, TrainSummaryModel::Skipped)).toString(), QStringLiteral("-"));
    // Loss per precision; the difference to fp32; the scale with its skipped steps marked.
    for (PrecisionChart* c :
         {view->lossChart(), view->lossDiffChart(), view->lossScaleChart(), view->underflowChart()})
        c->flushRedraw();
    QCOMPARE(view->lossChart()->seriesCount(), 2);
    QCOMPARE(view->lossChart()->plottedPoints("fp32"), 6);
    QCOMPARE(view->lossChart()->plottedPoints("fp16"), 6);
    QCOMPARE(view->lossDiffChart()->seriesCount(), 1);
    QCOMPARE(view->lossDiffChart()->plottedPoints(QStringLiteral("fp16 − fp32")), 6);
    QCOMPARE(view->lossScaleChart()->plottedPoints("fp16 loss scale"), 6);
    QCOMPARE(view->lossScaleChart()->plottedPoints("fp16 skipped (overflow)"), skipped);
    QVERIFY(view->emptyNote("loss-scale").isEmpty());
    QVERIFY(view->emptyNote("accumulation").contains(QStringLiteral("training numerics")));
    // Reopened from the store: the same curves.
    const qint64 id = view->storeRunId();
    QVERIFY(id > 0);
    view->clear();
    QSignalSpy opened(w->history(), &HistoryController::storedRunOpened);
    w->history()->openStoredRun(id);
    QVERIFY(opened.wait(10000) || !opened.isEmpty());
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(m->curves()[1].skippedSteps(), skipped);
    view->lossScaleChart()->flushRedraw();
    QCOMPARE(view->lossScaleChart()->plottedPoints("fp16 skipped (overflow)"), skipped);
    QString error;
    QVERIFY2(w->exports()->exportReport(dir.filePath("train.md"), {800, 450}, &error),
             qPrintable(error));
    QFile md(dir.filePath("train.md"));
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    for (const char* heading : {"## Training: loss\n", "## Loss scale\n", "## Training numerics\n"})
        QVERIFY2(report.contains(QString::fromUtf8(heading)), qPrintable(report.left(1500)));

    // Stop in the middle of a long run: the curve so far arrives, marked cancelled.
    QJsonObject longRun = trainState(QJsonArray{"fp32", "fp16"});
    longRun["steps"] = "100000";
    w->currentPanel()->setState(longRun);
    QSignalSpy finished(w->session(), &RunSession::runFinished);
    QVERIFY(w->session()->start());
    QTest::qWait(1500);
    w->session()->stop();
    QVERIFY(finished.wait(60000) || !finished.isEmpty());
    QVERIFY(finished[0][0].value<RunOutcome>() == RunOutcome::Stopped);
    QCOMPARE(m->rowCount(), 1);  // the fp16 curve never started
    QVERIFY(m->curves()[0].status == Status::Cancelled);
    QVERIFY(!m->curves()[0].steps.empty());
    QVERIFY(m->curves()[0].steps.size() < size_t(100000));
    view->lossChart()->flushRedraw();
    const int done = int(m->curves()[0].steps.size());
    const int plotted = view->lossChart()->plottedPoints("fp32");
    if (done <= 3000)
        QCOMPARE(plotted, done);
    else
        QVERIFY2(plotted > 1000 && plotted <= 3000,
                 qPrintable(QString::number(plotted)));  // thinned
}

void TestPrecisionWindow::presetsLoadIntoThePrecisionLab() {
    QTemporaryDir dir;
    auto w = freshWindow("tst_precision_window", dir.filePath("results.db"));
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    PrecisionView* view = precisionViewOf(w.get());
    const QList<QPair<QString, QPair<QString, QString>>> presets = {
        {"accumulation-in-low-precision", {"accumulate", "accumulation"}},
        {"what-autocast-does", {"autocast", "autocast"}},
        {"fp16-needs-loss-scaling", {"train", "loss-scale"}}};
    for (const auto& [id, want] : presets) {
        const auto preset = findPreset(id);
        QVERIFY2(preset, qPrintable(id));
        QCOMPARE(preset->experiment, QStringLiteral("precision"));
        QVERIFY(!preset->description.isEmpty());
        w->session()->loadPreset(*preset);
        QCOMPARE(w->currentPanel(), w->panel("precision"));
        QVERIFY2(w->currentPanel()->isValid(),
                 qPrintable(id + ": " + w->currentPanel()->problems().join('\n')));
        QVERIFY(w->actions()->runAction()->isEnabled());
        QCOMPARE(w->currentPanel()->state().value("study").toString(), want.first);
        QCOMPARE(view->panes()[view->currentPane()].key, want.second);
        const auto job = w->currentPanel()->makeJob();
        QVERIFY(job);
        if (!caps_.cuda_available) QCOMPARE(job->device, std::string("cpu"));  // the CPU variant
    }
    // The accumulation preset is the course's numbers, bf16 included.
    auto* panel = qobject_cast<PrecisionPanel*>(w->panel("precision"));
    w->session()->loadPreset(*findPreset("accumulation-in-low-precision"));
    QCOMPARE(panel->accumulationSpec().count, int64_t(1000));
    QCOMPARE(panel->accumulationSpec().addend, 0.01);
    QVERIFY(panel->accumulationSpec().fp16 && panel->accumulationSpec().bf16);
    w->session()->loadPreset(*findPreset("fp16-needs-loss-scaling"));
    QCOMPARE(panel->trainSpec().init_scale, 1073741824.0);
}

// On a GPU (skipped without one): CUDA's autocast keeps the layer norm in fp32, so the tree
// marks it as an fp32 island beside the loss; fp16 training there skips steps as on the CPU.
// A screenshot of each pane goes to $TRAINSCOPE_SHOTS when it is set.
void TestPrecisionWindow::onTheGpuLayerNormIsAnFp32Island() {
    if (!caps_.cuda_available) QSKIP("no CUDA device");
    QTemporaryDir dir;
    auto w = freshWindow("tst_precision_window", dir.filePath("results.db"));
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->capabilitiesReady(), 60000);
    PrecisionView* view = precisionViewOf(w.get());
    auto shoot = [&](const QString& pane, const QString& name) {
        const QString shots = qEnvironmentVariable("TRAINSCOPE_SHOTS");
        if (shots.isEmpty()) return;
        view->showPane(view->paneIndex(pane));
        QTest::qWait(700);  // throttled redraws
        w->grab().save(shots + QLatin1Char('/') + name);
    };
    QVERIFY(w->labs()->select("precision"));
    QJsonObject cast = autocastState();
    cast["device"] = "cuda";
    w->currentPanel()->setState(cast);
    QVERIFY2(w->currentPanel()->isValid(), qPrintable(w->currentPanel()->problems().join('\n')));
    QVERIFY(runAndWait(*w, 120000));
    AutocastSpec spec;
    spec.device = "cuda";
    Observer quiet;
    const AutocastReport want = runAutocastInspector(spec, quiet);
    QVERIFY2(want.status == Status::Ok, want.error.c_str());
    AutocastTreeModel* tree = view->autocastTree();
    for (const AutocastRecord& r : want.records) {
        if (r.kind == "grad") continue;
        QCOMPARE(
            tree->data(tree->indexOf(QString::fromStdString(r.name), AutocastTreeModel::Output))
                .toString(),
            QString::fromStdString(r.output_dtype));
    }
    QCOMPARE(tree->data(tree->indexOf("ln", AutocastTreeModel::Output)).toString(),
             QStringLiteral("fp32"));
    QVERIFY(tree->data(tree->indexOf("ln"), AutocastTreeModel::IslandRole).toBool());
    QVERIFY(tree->data(tree->indexOf("loss"), AutocastTreeModel::IslandRole).toBool());
    shoot("autocast", "precision-autocast-gpu.png");

    QJsonObject train = trainState(QJsonArray{"fp32", "bf16", "fp16"});
    train["device"] = "cuda";
    w->currentPanel()->setState(train);
    QVERIFY2(w->currentPanel()->isValid(), qPrintable(w->currentPanel()->problems().join('\n')));
    QVERIFY(runAndWait(*w, 300000));
    TrainSummaryModel* m = view->trainModel();
    QCOMPARE(m->rowCount(), 3);
    for (const auto& c : m->curves()) QVERIFY2(c.status == Status::Ok, c.error.c_str());
    QVERIFY(m->curves()[2].skippedSteps() > 0);
    view->lossScaleChart()->flushRedraw();
    QCOMPARE(view->lossScaleChart()->plottedPoints("fp16 skipped (overflow)"),
             m->curves()[2].skippedSteps());
    shoot("training", "precision-training-gpu.png");
    shoot("loss-scale", "precision-loss-scale-gpu.png");
}

QTEST_MAIN(TestPrecisionWindow)
#include "tst_precision_window.moc"
