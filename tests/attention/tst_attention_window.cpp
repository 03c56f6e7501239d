// The attention benchmark in the window: its panel (the one added through the registry
// alone), its cell model and series, a real CPU run through the adapter, the window showing
// the cells in the experiment's own tab, with exports, and stored runs reopened from History.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QJsonDocument>
#include <QLineEdit>
#include <QPushButton>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "attention/attention_json.h"
#include "common/windowtesting.h"
#include "core/store.h"
#include "runtime/environment.h"
#include "runtime/python_runner.h"
#include "ui/attention/attentionmodel.h"
#include "ui/attention/attentionpanel.h"
#include "ui/attention/attentionview.h"
#include "ui/common/runcontroller.h"
#include "ui/common/sweepchart.h"
#include "ui/common/tableview.h"
#include "ui/shell/historywidget.h"
#include "ui/shell/mainwindow.h"

using namespace ts;
using namespace ts::ui;

namespace {
AttentionCell cell(AttentionImpl impl, int64_t seq, double fwd, Status status = Status::Ok) {
    AttentionCell c;
    c.impl = impl;
    c.seq = seq;
    c.head_dim = 16;
    c.status = status;
    c.forward_ms = status == Status::Ok ? fwd : 0;
    c.backward_ms = status == Status::Ok ? 2 * fwd : 0;
    c.err_out = 1e-6;
    c.tolerance = 1e-4;
    if (status != Status::Ok) c.error = "CUDA out of memory";
    return c;
}

QJsonObject tinyState() {
    return QJsonObject{{"impls", QJsonArray{"naive", "tiled"}},
                       {"seq", "32, 64"},
                       {"head_dims", "16"},
                       {"batches", "1"},
                       {"heads", "2"},
                       {"dtypes", QJsonArray{"fp32"}},
                       {"causal", QJsonArray{"causal"}},
                       {"passes", QJsonArray{"forward", "backward"}},
                       {"warmup", 1},
                       {"steps", 2},
                       {"device", "cpu"},
                       {"check", true}};
}
}  // namespace

class TestAttention : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { caps_ = capabilities(); }
    void cellModelAndSeries();
    void panelValidatesAndDisablesWhatIsMissing();
    void yourAttentionFromTheCodeBox();
    void realCpuRunThroughTheAdapter();
    void windowShowsCellsInTheExperimentsOwnTab();
    void storedAttentionRunsReopenBesideBenchmarkRuns();

private:
    Capabilities caps_;
};

void TestAttention::cellModelAndSeries() {
    AttentionModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    AttentionSeriesModel series(&m);
    QAbstractItemModelTester seriesTester(&series,
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.addCell(cell(AttentionImpl::Naive, 128, 1.0));
    m.addCell(cell(AttentionImpl::Flash, 128, 0.25));
    m.addCell(cell(AttentionImpl::Naive, 256, 4.0));
    m.addCell(cell(AttentionImpl::Flash, 256, 0.0, Status::OOM));
    QCOMPARE(m.rowCount(), 4);
    QCOMPARE(m.data(m.index(1, AttentionModel::Impl)).toString(), QStringLiteral("flash"));
    QCOMPARE(m.data(m.index(3, AttentionModel::Status)).toString(), QStringLiteral("OOM"));
    QCOMPARE(m.data(m.index(3, AttentionModel::Forward)).toString(), QStringLiteral("—"));
    QVERIFY(m.data(m.index(3, AttentionModel::Status), Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("memory")));
    QCOMPARE(m.data(m.index(2, AttentionModel::Backward), AttentionModel::ValueRole).toDouble(),
             8.0);
    QCOMPARE(series.seriesNames(), QStringList({"naive", "flash"}));
    QCOMPARE(series.rowCount(), 3);
    QCOMPARE(series.missingPoints(), 1);
    series.setPass(AttentionPass::Backward);
    QCOMPARE(series.rows()[1].mean, 8.0);  // naive at 256, backward
    QVERIFY(series.chartTitle().contains(QStringLiteral("backward")));
    m.clear();
    QCOMPARE(series.rowCount(), 0);
}

// See Note [attention in Python]: torch-compile is a tick, the user's attention the Code box;
// both go into the spec, back from History, and a failure shows the user's traceback.
void TestAttention::yourAttentionFromTheCodeBox() {
    const std::string checkout = exampleCheckout();
    if (checkout.empty()) QSKIP("no examples/course-checkout here");
    AttentionPanel p;
    p.setCapabilities(caps_);
    QJsonObject state = tinyState();
    state["torch_compile"] = true;
    state["sources"] = QJsonArray{"python"};
    state["code"] = QString::fromStdString(checkout);
    p.setState(state);
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    QCOMPARE(p.spec().python_impls,
             (std::vector<std::string>{"torch-compile", "yours-pytorch", "yours-triton"}));
    QCOMPARE(p.spec().code, checkout);
    QCOMPARE(p.cellCount(), 2 * 5);  // 2 shapes × (naive, tiled and the three in Python)
    const auto job = p.makeJob();
    QVERIFY(job);
    const QJsonObject json =
        QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
    QVERIFY(AttentionPanel::describeSpec(json).contains(QStringLiteral("yours-pytorch")));
    AttentionPanel again;
    again.setCapabilities(caps_);
    again.setState(AttentionPanel::stateFromSpec(json));
    QCOMPARE(again.spec().python_impls, p.spec().python_impls);
    QCOMPARE(again.spec().code, checkout);
    // A module:Name is one implementation, "yours"; a missing file is said on the field.
    state["torch_compile"] = false;
    state["code"] = QStringLiteral("/nowhere/mine.py:attend");
    p.setState(state);
    QVERIFY(!p.isValid());
    QVERIFY(p.problems().join('\n').contains(QStringLiteral("does not exist")));
    // A cell of the user's that raised: red, with their traceback in the tooltip.
    AttentionModel m;
    AttentionCell c = cell(AttentionImpl::Naive, 64, 0, Status::Failed);
    c.python_impl = "yours";
    c.error = "ValueError: broken (mine.py:9)";
    c.traceback =
        "Traceback (most recent call last):\n  File \"mine.py\", line 9\nValueError: broken";
    m.addCell(c);
    QCOMPARE(m.data(m.index(0, AttentionModel::Impl)).toString(), QStringLiteral("yours"));
    QVERIFY(m.data(m.index(0, AttentionModel::Status), Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("File \"mine.py\", line 9")));
}

void TestAttention::panelValidatesAndDisablesWhatIsMissing() {
    AttentionPanel p;
    QVERIFY(!p.makeJob());  // not before the machine is known
    p.setCapabilities(caps_);
    p.setState(tinyState());
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    QCOMPARE(p.cellCount(), 4);
    // Cells are implementations × shapes; "problem" is kept for what must be fixed.
    QVERIFY2(p.summary().startsWith(QStringLiteral("4 cells: ")) &&
                 p.summary().contains(QStringLiteral("shape")) &&
                 !p.summary().contains(QStringLiteral("problem")),
             qPrintable(p.summary()));
    const auto job = p.makeJob();
    QVERIFY(job);
    QCOMPARE(job->lab, QStringLiteral("attention"));
    QVERIFY(job->stored);
    auto* seq = qobject_cast<QLineEdit*>(p.fieldWidget("seq"));
    seq->setText(QStringLiteral("32, 0"));
    QVERIFY(!p.isValid());
    QVERIFY(seq->property("invalid").toBool());
    QVERIFY(seq->toolTip().contains(QStringLiteral("sequence length 0")));
    seq->setText(QStringLiteral("32, sixty-four"));
    QVERIFY(seq->toolTip().contains(QStringLiteral("'sixty-four'")));
    seq->setText(QStringLiteral("32"));
    QVERIFY(p.isValid());
    QJsonObject none = tinyState();
    none["impls"] = QJsonArray{};
    p.setState(none);
    QVERIFY(p.fieldWidget("impls")->property("invalid").toBool());
    // What this build or machine lacks is disabled, with the engine's reason.
    QCheckBox* flash = nullptr;
    for (QCheckBox* cb : p.findChildren<QCheckBox*>())
        if (cb->text() == QLatin1String("flash")) flash = cb;
    QVERIFY(flash);
    if (!caps_.cuda_available || !caps_.flash_kernels) {
        QVERIFY(!flash->isEnabled());
        QVERIFY(flash->toolTip().contains(QStringLiteral("flash")));
        QJsonObject s = tinyState();
        s["impls"] = QJsonArray{"naive", "flash"};
        QStringList notes;
        p.setState(s, &notes);
        QVERIFY2(notes.join(' ').contains(QStringLiteral("flash left out")),
                 qPrintable(notes.join('\n')));
        QVERIFY(p.isValid());
    }
    // LibTorch's memory-efficient and cuDNN backends have no CPU version: on the CPU they are
    // disabled with that reason, not offered to fail in every cell.
    for (const char* name : {"sdpa-efficient", "sdpa-cudnn"}) {
        QCheckBox* cb = nullptr;
        for (QCheckBox* c : p.findChildren<QCheckBox*>())
            if (c->text() == QLatin1String(name)) cb = c;
        QVERIFY(cb);
        QVERIFY2(!cb->isEnabled(), name);  // the panel's device is the CPU here
        QVERIFY2(cb->toolTip().contains(QStringLiteral("runs on CUDA devices only")),
                 qPrintable(cb->toolTip()));
        QJsonObject s = tinyState();
        s["impls"] = QJsonArray{"naive", name};
        QStringList notes;
        p.setState(s, &notes);
        QVERIFY2(notes.join(' ').contains(QStringLiteral("%1 left out: ").arg(QLatin1String(name))),
                 qPrintable(notes.join('\n')));
        QVERIFY(p.isValid());
    }
    // The course's set-ups fill the fields.
    auto* setup = p.findChild<QComboBox*>(QStringLiteral("setup"));
    QVERIFY(setup);
    const auto a = attentionPreset("a");
    QVERIFY(a);
    setup->setCurrentIndex(setup->findData(QStringLiteral("a")));
    Q_EMIT setup->activated(setup->currentIndex());
    QStringList seqs;
    for (int64_t v : a->seq_lens) seqs << QString::number(v);
    QCOMPARE(p.state().value("seq").toString(), seqs.join(QStringLiteral(", ")));
    QCOMPARE(p.spec().seq_lens, a->seq_lens);
    QCOMPARE(p.spec().head_dims, a->head_dims);
    QCOMPARE(p.state().value("steps").toInt(), a->steps);
}

void TestAttention::realCpuRunThroughTheAdapter() {
    AttentionPanel p;
    p.setCapabilities(caps_);
    p.setState(tinyState());
    auto job = p.makeJob();
    QVERIFY(job);
    RunController c;
    QList<AttentionCell> cells;
    connect(&c, &RunController::itemsArrived, this, [&](quint64, const QList<QVariant>& items) {
        for (const QVariant& v : items) cells << v.value<AttentionCell>();
    });
    QSignalSpy done(&c, &RunController::runFinished);
    QSignalSpy progress(&c, &RunController::progress);
    c.start(std::move(*job));
    QVERIFY(done.wait(120000) || !done.isEmpty());
    QVERIFY(done[0][1].value<RunOutcome>() == RunOutcome::Completed);
    QCOMPARE(cells.size(), 4);
    for (const auto& cell : cells) {
        QVERIFY2(cell.status == Status::Ok, cell.error.c_str());
        QVERIFY(cell.forward_ms > 0 && cell.backward_ms > 0);
        QVERIFY(cell.err_out >= 0 && cell.err_out <= cell.tolerance);  // checked before timing
        QCOMPARE(cell.head_dim, int64_t(16));
    }
    QVERIFY(!progress.isEmpty());
    QCOMPARE(progress.last()[1].toDouble(), 1.0);
}

void TestAttention::windowShowsCellsInTheExperimentsOwnTab() {
    QTemporaryDir dir;
    MainWindow w(MainWindow::Options{dir.filePath("results.db"), false});
    w.resize(1400, 900);
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->capabilitiesReady(), 60000);
    // The registry's second lab brought its own view.
    const QString tab = QStringLiteral("attention");
    QVERIFY(w.labView("attention")->paneIndex(tab) >= 0);
    auto* view = qobject_cast<AttentionView*>(w.labView("attention"));
    QVERIFY(view);
    auto* experiment = w.findChild<QComboBox*>(QStringLiteral("experiment"));
    experiment->setCurrentIndex(experiment->findData(QStringLiteral("attention")));
    QCOMPARE(w.currentPanel(), w.panel("attention"));
    w.currentPanel()->setState(tinyState());
    QSignalSpy finished(w.session(), &RunSession::runFinished);
    w.actions()->runAction()->trigger();
    QVERIFY(w.session()->isRunning());
    QVERIFY(finished.wait(120000) || !finished.isEmpty());
    QVERIFY(finished[0][0].value<RunOutcome>() == RunOutcome::Completed);
    QCOMPARE(view->model()->rowCount(), 4);
    view->sweepChart()->flushRedraw();
    QCOMPARE(view->sweepChart()->seriesCount(), 2);
    QCOMPARE(view->sweepChart()->plottedPoints(), 4);
    QString error;
    QVERIFY2(w.exports()->exportTab(tab, dir.filePath("attention.csv"), {}, &error),
             qPrintable(error));
    QFile csv(dir.filePath("attention.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    // See Note [tables other programs read]: the table alone, snake_case headers.
    const QStringList rows = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(rows.size(), 5);
    QVERIFY2(rows[0].startsWith(QStringLiteral("implementation,batch,heads,seq,head_dim,dtype")),
             qPrintable(rows[0]));
    QVERIFY(QFile::exists(dir.filePath("attention.environment.json")));
    QVERIFY2(w.exports()->exportTab(tab, dir.filePath("attention.png"), {900, 500}, &error),
             qPrintable(error));
    QImage img;
    QVERIFY(img.load(dir.filePath("attention.png")));
    QCOMPARE(img.size(), QSize(900, 500));
    QVERIFY2(w.exports()->exportReport(dir.filePath("report.md"), {800, 450}, &error),
             qPrintable(error));
    QFile md(dir.filePath("report.md"));
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    QVERIFY(report.contains(QStringLiteral("| Implementation |")));
    // A chart for each pass the run timed, headings without the menu's "&", the spec as JSON.
    const QComboBox* pass = view->findChild<QComboBox*>();
    const int shown = pass->currentIndex();
    for (const char* heading :
         {"## Attention, forward\n", "## Attention, backward\n", "## Configuration\n\n```json\n{"})
        QVERIFY2(report.contains(QString::fromUtf8(heading)), qPrintable(report.right(600)));
    QVERIFY(!report.contains(QStringLiteral("&Attention")));
    QCOMPARE(pass->currentIndex(), shown);  // the pane shows the pass it showed before
    // Stored, cell by cell, under a run of kind "attention".
    const qint64 stored = attentionViewOf(&w)->storeRunId();
    QVERIFY(stored > 0);
    ResultStore store(dir.filePath("results.db").toStdString());
    QCOMPARE(store.run(stored)->lab, std::string("attention"));
    QCOMPARE(loadAttentionCells(store, stored).size(), size_t(4));
}

void TestAttention::storedAttentionRunsReopenBesideBenchmarkRuns() {
    QTemporaryDir dir;
    const QString db = dir.filePath("results.db");
    MainWindow w(MainWindow::Options{db, false});
    w.resize(1400, 900);
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->capabilitiesReady(), 60000);
    QSignalSpy finished(w.session(), &RunSession::runFinished);
    // A benchmark run first, so that the store holds both kinds.
    QVERIFY(w.labs()->select("bench"));
    w.currentPanel()->setState(QJsonObject{{"label", "bench beside"},
                                           {"sizes", QJsonArray{"tiny"}},
                                           {"context", "32"},
                                           {"batch", "2"},
                                           {"modes", QJsonArray{"train"}},
                                           {"precisions", QJsonArray{"fp32"}},
                                           {"attentions", QJsonArray{"naive"}},
                                           {"warmup", "1"},
                                           {"steps", 2},
                                           {"device", "cpu"}});
    QVERIFY(w.session()->start());
    QVERIFY(finished.wait(180000) || !finished.isEmpty());
    QVERIFY(finished[0][0].value<RunOutcome>() == RunOutcome::Completed);
    const qint64 benchRun = benchViewOf(&w)->document()->storeRunId();
    QVERIFY(benchRun > 0);
    // The attention run, through the window.
    QVERIFY(w.labs()->select("attention"));
    w.currentPanel()->setState(QJsonObject{{"label", "stored attention"},
                                           {"impls", QJsonArray{"naive", "tiled"}},
                                           {"seq", "32"},
                                           {"head_dims", "16"},
                                           {"batches", "1"},
                                           {"heads", "2"},
                                           {"dtypes", QJsonArray{"fp32"}},
                                           {"causal", QJsonArray{"causal"}},
                                           {"passes", QJsonArray{"forward", "backward"}},
                                           {"warmup", 0},
                                           {"steps", 1},
                                           {"device", "cpu"},
                                           {"check", true}});
    QVERIFY2(w.currentPanel()->isValid(), qPrintable(w.currentPanel()->problems().join('\n')));
    QVERIFY(w.session()->start());
    QVERIFY(finished.wait(120000) || finished.count() > 1);
    QCOMPARE(finished.count(), 2);
    QVERIFY(finished[1][0].value<RunOutcome>() == RunOutcome::Completed);
    const qint64 attRun = attentionViewOf(&w)->storeRunId();
    QVERIFY(attRun > benchRun);
    QVERIFY(w.logText().contains(QStringLiteral("Stored as run %1").arg(attRun)));
    auto* view = qobject_cast<AttentionView*>(w.labView("attention"));
    QVERIFY(view);
    const std::vector<AttentionCell> live = view->model()->cells();
    QCOMPARE(live.size(), size_t(2));

    // In the store: the run's kind, label and every cell as the view showed it.
    std::vector<AttentionCell> cells;
    {
        ResultStore store(db.toStdString());
        const auto info = store.run(attRun);
        QVERIFY(info);
        QCOMPARE(info->lab, std::string("attention"));
        QCOMPARE(info->label, std::string("stored attention"));
        QCOMPARE(info->point_count, 2);
        QVERIFY(nlohmann::json::parse(info->spec_json).at("command") == "attention");
        cells = loadAttentionCells(store, attRun);
    }
    QCOMPARE(cells.size(), size_t(2));
    for (size_t i = 0; i < cells.size(); ++i) {
        QVERIFY(cells[i].impl == live[i].impl);
        QCOMPARE(cells[i].seq, int64_t(32));
        QCOMPARE(cells[i].head_dim, int64_t(16));
        QVERIFY2(cells[i].status == Status::Ok, cells[i].error.c_str());
        QCOMPARE(cells[i].forward_ms, live[i].forward_ms);
    }

    // In the history, with its kind.
    QSignalSpy refreshed(w.history(), &HistoryController::refreshed);
    w.history()->refresh();
    QVERIFY(refreshed.wait(10000) || !refreshed.isEmpty());
    RunListModel* runs = w.history()->runList();
    const int row = runs->rowOf(attRun);
    QVERIFY(row >= 0);
    QCOMPARE(runs->data(runs->index(row, RunListModel::Kind)).toString(),
             QStringLiteral("attention"));
    QCOMPARE(runs->data(runs->index(runs->rowOf(benchRun), RunListModel::Kind)).toString(),
             QStringLiteral("bench"));

    // Replay and Compare are for benchmark runs: disabled for an attention run, saying why.
    HistoryWidget* h = w.history()->widget();
    auto button = [h](const QString& text) {
        for (QPushButton* b : h->findChildren<QPushButton*>())
            if (b->text() == text) return b;
        return static_cast<QPushButton*>(nullptr);
    };
    QPushButton *open = button(QObject::tr("&Open")), *replay = button(QObject::tr("Re&play")),
                *compare = button(QObject::tr("Co&mpare"));
    QVERIFY(open && replay && compare);
    h->selectRuns({attRun});
    QVERIFY(open->isEnabled());
    QVERIFY(!replay->isEnabled());
    QVERIFY(replay->toolTip().contains(QStringLiteral("Replay works on runs of")));
    h->selectRuns({benchRun});
    QVERIFY(replay->isEnabled());
    h->selectRuns({attRun, benchRun});
    QVERIFY(!compare->isEnabled());
    QVERIFY(compare->toolTip().contains(QStringLiteral("Compare works on runs of")));

    // Reopen: the Attention tab shows the same cells, and is the tab shown.
    view->clear();
    w.labs()->showPane(QStringLiteral("steps"));
    QVERIFY(!view->isVisible());
    QSignalSpy opened(w.history(), &HistoryController::storedRunOpened);
    h->selectRuns({attRun});
    open->click();
    QVERIFY(opened.wait(10000) || !opened.isEmpty());
    QCOMPARE(opened.last()[0].toLongLong(), attRun);
    QVERIFY(view->isVisible());  // its tab is the current one
    QCOMPARE(attentionViewOf(&w)->storeRunId(), attRun);
    const std::vector<AttentionCell>& reopened = view->model()->cells();
    QCOMPARE(reopened.size(), cells.size());
    for (size_t i = 0; i < cells.size(); ++i) {
        QVERIFY(reopened[i].impl == cells[i].impl);
        QCOMPARE(reopened[i].seq, cells[i].seq);
        QCOMPARE(reopened[i].forward_ms, cells[i].forward_ms);
        QCOMPARE(reopened[i].backward_ms, cells[i].backward_ms);
    }
    // The report of a reopened attention run is the attention view's.
    QString error;
    QVERIFY2(w.exports()->exportReport(dir.filePath("reopened.md"), {800, 450}, &error),
             qPrintable(error));
    QFile md(dir.filePath("reopened.md"));
    QVERIFY(md.open(QIODevice::ReadOnly));
    QVERIFY(md.readAll().contains("| Implementation |"));

    // Replay or compare asked for anyway (the menu): nothing starts, no error is logged, and
    // Compare says why it refused (a scripted --compare ends on it instead of waiting).
    QSignalSpy refused(w.history(), &HistoryController::comparisonFailed);
    w.history()->replayStoredRun(attRun, 1000.0);
    w.history()->compareStoredRuns(benchRun, attRun);
    QVERIFY(refused.wait(10000) || !refused.isEmpty());
    QVERIFY(refused[0][0].toString().contains(QStringLiteral("only runs of one kind")));
    QTest::qWait(300);
    QVERIFY(!w.session()->isRunning());
    QVERIFY(!w.logText().contains(QStringLiteral("Could not")));

    // A benchmark run still opens into the benchmark views.
    h->selectRuns({benchRun});
    open->click();
    QVERIFY(opened.wait(10000) || opened.count() > 1);
    QCOMPARE(opened.last()[0].toLongLong(), benchRun);
    QCOMPARE(benchViewOf(&w)->document()->storeRunId(), benchRun);
    QCOMPARE(benchViewOf(&w)->document()->results()->rowCount(), 1);
    QCOMPARE(benchViewOf(&w)->document()->steps()->rowCount(), 3);  // warm-up included
    QVERIFY(!w.logText().contains(QStringLiteral("Could not")));

    // A run that is not in the store: Compare fails, and says so.
    w.history()->compareStoredRuns(benchRun, 999999);
    QVERIFY(refused.wait(10000) || refused.count() > 1);
    QVERIFY(refused[1][0].toString().contains(QStringLiteral("not in the store")));
}

QTEST_MAIN(TestAttention)
#include "tst_attention_window.moc"
