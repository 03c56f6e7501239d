// The distributed lab in the window: the panel's state round trip through a stored spec and its
// checks (nccl without GPUs, a bucket size ≤ 0, no strategy), the view fed the job's items
// (two ranks' steps with overlapped and bucketed communication, all-reduce rows, a failed
// point, two points compared, sharded beside unsharded memory), a stored run reopened, the
// classroom preset, and the panel's job run end to end on 2 Gloo processes.
#include <signal.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <map>
#include <vector>

#include "common/test_paths.h"
#include "core/json.h"
#include "core/store.h"
#include "distributed/distributed_json.h"
#include "runtime/environment.h"
#include "runtime/python_runner.h"
#include "ui/common/chartstyle.h"
#include "ui/common/qcp.h"
#include "ui/common/qcpchart.h"
#include "ui/common/theme.h"
#include "ui/distributed/bucketmodelchart.h"
#include "ui/distributed/distributedcharts.h"
#include "ui/distributed/distributeditems.h"
#include "ui/distributed/distributedpanel.h"
#include "ui/distributed/distributedview.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/presets.h"

using namespace ts;
using namespace ts::ui;

namespace {

struct Collect : JobObserver {
    QList<QVariant> items;
    std::vector<std::string> logs;
    void item(const QVariant& v) override { items << v; }
    void log(LogLevel, const std::string& m) override { logs.push_back(m); }
};

// A machine with only a CPU (as the probe says it of a CUDA build without a GPU).
Capabilities cpuOnly() {
    Capabilities c;
    c.torch_version = "2.11.0";
    c.torch_cuda_build = true;
    c.devices = {DeviceInfo{"cpu", "CPU", 0, 0, 0, true, false, ""}};
    return c;
}

Capabilities twoGpus() {
    Capabilities c = cpuOnly();
    c.cuda_available = true;
    for (int i = 0; i < 2; ++i)
        c.devices.push_back(DeviceInfo{"cuda:" + std::to_string(i), "Test GPU", int64_t{80} << 30,
                                       9, 0, true, true, ""});
    return c;
}

QJsonObject ddpState() {
    return QJsonObject{{"backend", "gloo"},
                       {"world", 2},
                       {"experiment", "ddp"},
                       {"model", "tiny"},
                       {"context", 32},
                       {"batch", 2},
                       {"precisions", QJsonArray{"fp32"}},
                       {"strategies", QJsonArray{"naive", "bucketed"}},
                       {"buckets", "1, 25"},
                       {"sharding", "both"},
                       {"warmup", 1},
                       {"steps", 2}};
}

DistributedPoint ddpPoint(const std::string& strategy, bool sharded = false) {
    DistributedPoint p;
    p.experiment = DistExperiment::Ddp;
    p.world_size = 2;
    p.ddp.strategy = strategy;
    p.ddp.shard_optimizer = sharded;
    p.ddp.warmup_steps = 1;
    p.ddp.measured_steps = 2;
    return p;
}

// Rank r's step k: forward 10, backward 20, wait, optimizer 5 ms (rank 1 a little slower);
// `hidden` ms of communication overlapped the end of backward.
DdpStepRow step(int rank, int k, double wait, double hidden, bool sharded = false) {
    DdpStepRow r;
    r.rank = rank;
    r.world_size = 2;
    r.step = k;
    r.warmup = k == 0;
    r.forward_ms = 10 + rank;
    r.backward_ms = 20;
    r.comm_wait_ms = wait;
    r.optimizer_ms = 5;
    r.total_ms = r.forward_ms + r.backward_ms + r.comm_wait_ms + r.optimizer_ms;
    r.comm_hidden_ms = hidden;
    r.collectives = 3;
    r.launched_before_sync = hidden > 0 ? 2 : 0;
    r.comm_bytes = 4000;
    r.loss = 9.0 - k;
    r.global_loss = 9.0 - k;
    r.parameter_bytes = 4000;
    r.gradient_bytes = 4000;
    r.optimizer_state_bytes = sharded ? 4000 : 8000;
    r.comm_buffer_bytes = 1000;
    return r;
}

// The items a point's job posts: started, each rank's steps, finished.
QList<QVariant> pointItems(int index, const DistributedPoint& p, double wait, double hidden,
                           bool sharded = false, Status status = Status::Ok,
                           const std::function<void(DdpStepRow&)>& edit = {}) {
    QList<QVariant> items{QVariant::fromValue(DistPointStarted{index, 4, p})};
    DistributedResult r;
    r.point = p;
    r.status = status;
    for (int k = 0; k < 3; ++k)
        for (int rank = 0; rank < 2; ++rank) {
            r.steps.push_back(step(rank, k, wait, hidden, sharded));
            if (edit) edit(r.steps.back());
            items << QVariant::fromValue(DistStep{index, r.steps.back()});
        }
    items << QVariant::fromValue(DistPointFinished{index, r});
    return items;
}

}  // namespace

class TestDistributedWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void panelStateRoundTrip();
    void allreduceStateRoundTrip();
    void ncclNeedsGpus();
    void badBucketsAndNoStrategyRefused();
    void fsdpSettingsRoundTripAndRefusals();
    void fsdpLanesShowTheWaitsForWeights();
    void lanesShowOverlap();
    void lanesNameEachRanksNode();
    void chartsFollowTheTheme();
    void bucketedLanesSayWhatTheyShow();
    void bucketBarsAndTheBucketModel();
    void allreduceSeriesPerWorldSize();
    void failedRankNamedInTheBanner();
    void strategiesCompared();
    void compiledStepNamedAndRefusedOnGloo();
    void yourClassesFromTheCodeBox();
    void aFailedCheckIsARedCell();
    void memoryShardedBesideUnsharded();
    void storedRunReopens();
    void mergedTraceOfAStoredPointSaves();
    void classroomPresetLoads();
    void jobRunsOnTwoGlooProcesses();
    void failedRankEndsTheOthers();
    void historyOpensAndReloadsARun();
};

void TestDistributedWindow::panelStateRoundTrip() {
    DistributedPanel panel;
    panel.setCapabilities(cpuOnly());
    QStringList notes;
    panel.setState(ddpState(), &notes);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    QVERIFY2(notes.isEmpty(), qPrintable(notes.join('\n')));
    // naive × {unsharded, sharded} + bucketed × {1, 25} MB × {unsharded, sharded}.
    QCOMPARE(panel.spec().points.size(), size_t{6});
    const auto job = panel.makeJob();
    QVERIFY(job);
    QCOMPARE(job->lab, QStringLiteral("distributed"));
    QCOMPARE(job->point_count, 6);
    const DistributedSpec stored = distributedSpecFromJson(parseJson(job->spec_json));
    QCOMPARE(stored.points.size(), size_t{6});
    QCOMPARE(stored.points[0].world_size, 2);
    QCOMPARE(stored.points[0].ddp.context_length, int64_t{32});
    QCOMPARE(distributedSpecJson(stored), distributedSpecJson(panel.spec()));
    // History: one line, and back into a panel asking for the same run.
    const QJsonObject json =
        QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
    const QString line = DistributedPanel::describeSpec(json);
    QVERIFY2(line.contains(QStringLiteral("gloo × 2")) &&
                 line.contains(QStringLiteral("buckets 1, 25 MiB")) &&
                 line.contains(QStringLiteral("6 points")),
             qPrintable(line));
    DistributedPanel again;
    again.setCapabilities(cpuOnly());
    again.setState(DistributedPanel::stateFromSpec(json));
    QVERIFY2(again.isValid(), qPrintable(again.problems().join('\n')));
    QCOMPARE(distributedSpecJson(again.spec()), distributedSpecJson(panel.spec()));
    // The panel's own state round trip.
    DistributedPanel third;
    third.setCapabilities(cpuOnly());
    third.setState(panel.state());
    QCOMPARE(third.state(), panel.state());
}

void TestDistributedWindow::allreduceStateRoundTrip() {
    DistributedPanel panel;
    panel.setCapabilities(cpuOnly());
    panel.setState(QJsonObject{{"backend", "gloo"},
                               {"world", 4},
                               {"experiment", "allreduce"},
                               {"sizes", "1MB, 16 MiB"},
                               {"dtypes", QJsonArray{"fp32"}},
                               {"ar_warmup", 1},
                               {"ar_iters", 3}});
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    QCOMPARE(panel.spec().points.size(), size_t{1});
    const DistributedPoint& p = panel.spec().points[0];
    QVERIFY(p.experiment == DistExperiment::Allreduce);
    QCOMPARE(p.allreduce.sizes, (std::vector<int64_t>{1000000, 16 << 20}));
    QCOMPARE(p.allreduce.iters, 3);
    const auto job = panel.makeJob();
    QVERIFY(job);
    const QJsonObject json =
        QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
    QVERIFY(DistributedPanel::describeSpec(json).contains(QStringLiteral("all-reduce")));
    DistributedPanel again;
    again.setCapabilities(cpuOnly());
    again.setState(DistributedPanel::stateFromSpec(json));
    QCOMPARE(distributedSpecJson(again.spec()), distributedSpecJson(panel.spec()));
    // At 2, 4 and 6 ranks: a point each, the same all-reduce.
    panel.setState(QJsonObject{{"world", 6}, {"ar_sweep_world", true}});
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    QCOMPARE(panel.spec().points.size(), size_t{3});
    QCOMPARE(panel.spec().points[0].world_size, 2);
    QCOMPARE(panel.spec().points[2].world_size, 6);
    QVERIFY(panel.summary().contains(QStringLiteral("2–6")));
    const auto sweepJob = panel.makeJob();
    QVERIFY(sweepJob);
    const QJsonObject sweep =
        QJsonDocument::fromJson(QByteArray::fromStdString(sweepJob->spec_json)).object();
    QVERIFY(DistributedPanel::describeSpec(sweep).contains(QStringLiteral("gloo × 2, 4, 6")));
    again.setState(DistributedPanel::stateFromSpec(sweep));
    QCOMPARE(distributedSpecJson(again.spec()), distributedSpecJson(panel.spec()));
    // A size that is none, refused under the field.
    panel.setState(QJsonObject{{"sizes", "1MB, lots"}});
    QVERIFY(!panel.isValid());
    QVERIFY(panel.fieldWidget("sizes")->property("invalid").toBool());
    QVERIFY(panel.problems().join('\n').contains(QStringLiteral("'lots'")));
}

void TestDistributedWindow::ncclNeedsGpus() {
    DistributedPanel panel;
    panel.setCapabilities(cpuOnly());
    auto* backend = qobject_cast<QComboBox*>(panel.fieldWidget("backend"));
    QVERIFY(backend);
    const int nccl = backend->findData(QStringLiteral("nccl"));
    auto* model = qobject_cast<QStandardItemModel*>(backend->model());
    QVERIFY(!model->item(nccl)->isEnabled());
    QVERIFY(!backend->itemData(nccl, Qt::ToolTipRole).toString().isEmpty());
    QStringList notes;
    panel.setState(QJsonObject{{"backend", "nccl"}, {"world", 2}}, &notes);
    QCOMPARE(backend->currentData().toString(), QStringLiteral("gloo"));
    QVERIFY2(notes.join('\n').contains(QStringLiteral("nccl")), qPrintable(notes.join('\n')));
    QVERIFY(panel.isValid());
    auto* world = qobject_cast<QSpinBox*>(panel.fieldWidget("world"));
    QCOMPARE(world->maximum(), 16);

    // Two GPUs: nccl where this build has it, one rank per GPU.
    DistributedPanel gpus;
    gpus.setCapabilities(twoGpus());
    auto* b2 = qobject_cast<QComboBox*>(gpus.fieldWidget("backend"));
    const bool enabled = qobject_cast<QStandardItemModel*>(b2->model())->item(nccl)->isEnabled();
    QCOMPARE(enabled, dist::ncclBuilt());
    if (enabled) {
        gpus.setState(QJsonObject{{"backend", "nccl"}, {"world", 4}});
        QCOMPARE(qobject_cast<QSpinBox*>(gpus.fieldWidget("world"))->maximum(), 2);
        QCOMPARE(gpus.spec().points.front().world_size, 2);
    }
}

void TestDistributedWindow::badBucketsAndNoStrategyRefused() {
    DistributedPanel panel;
    panel.setCapabilities(cpuOnly());
    QJsonObject s = ddpState();
    s["buckets"] = "25, 0";
    panel.setState(s);
    QVERIFY(!panel.isValid());
    QVERIFY(!panel.makeJob());
    QVERIFY(panel.fieldWidget("buckets")->property("invalid").toBool());
    QVERIFY2(panel.problems().join('\n').contains(
                 QStringLiteral("bucket size must be a positive number of MiB")),
             qPrintable(panel.problems().join('\n')));
    s["buckets"] = "-1";
    panel.setState(s);
    QVERIFY(!panel.isValid());
    // A written unit is read (issue item 7): 25MB is 10^6 bytes, 25MiB the bare 25.
    s["buckets"] = "25MB, 25MiB";
    panel.setState(s);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    {
        std::vector<double> sizes;
        for (const auto& p : panel.spec().points)
            if (p.ddp.strategy == "bucketed") sizes.push_back(p.ddp.bucket_mb);
        QVERIFY(std::find(sizes.begin(), sizes.end(), 25.0) != sizes.end());
        QVERIFY(std::find(sizes.begin(), sizes.end(), 25e6 / 1048576) != sizes.end());
    }
    s["buckets"] = "25 bytes";
    panel.setState(s);
    QVERIFY(!panel.isValid());
    // Without the bucketed strategy the bucket sizes are not asked for.
    s["strategies"] = QJsonArray{"naive"};
    panel.setState(s);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    // No strategy at all.
    s["strategies"] = QJsonArray{};
    s["buckets"] = "25";
    panel.setState(s);
    QVERIFY(!panel.isValid());
    QVERIFY(!panel.makeJob());
    QVERIFY(panel.fieldWidget("strategies")->property("invalid").toBool());
    QVERIFY(panel.problems().join('\n').contains(QStringLiteral("choose at least one strategy")));
    // Nor a precision.
    s["strategies"] = QJsonArray{"flat"};
    s["precisions"] = QJsonArray{};
    panel.setState(s);
    QVERIFY(panel.problems().join('\n').contains(QStringLiteral("choose at least one precision")));
}

void TestDistributedWindow::fsdpSettingsRoundTripAndRefusals() {
    DistributedPanel panel;
    panel.setCapabilities(cpuOnly());
    QJsonObject s = ddpState();
    s["strategies"] = QJsonArray{"bucketed", "fsdp", "fsdp2"};
    s["param_dtype"] = "bf16";
    s["prefetch"] = 1;
    s["checkpoint"] = "3";  // not among the list's choices: added
    panel.setState(s);
    // bf16 parameters need bf16 autocast: the field says so and Run is blocked.
    QVERIFY(!panel.isValid());
    QVERIFY(panel.fieldWidget("param_dtype")->property("invalid").toBool());
    QVERIFY2(panel.problems().join('\n').contains(QStringLiteral("bf16 parameters need bf16")),
             qPrintable(panel.problems().join('\n')));
    s["precisions"] = QJsonArray{"bf16"};
    panel.setState(s);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    // bucketed × {1, 25} MB × {unsharded, sharded}, and one point each of fsdp and fsdp2 (they
    // shard the optimizer's state themselves).
    QCOMPARE(panel.spec().points.size(), size_t{6});
    const DdpSpec& fsdp = panel.spec().points[4].ddp;
    QCOMPARE(QString::fromStdString(fsdp.strategy), QStringLiteral("fsdp"));
    QCOMPARE(QString::fromStdString(fsdp.param_dtype), QStringLiteral("bf16"));
    QCOMPARE(fsdp.prefetch, 1);
    QCOMPARE(QString::fromStdString(toString(fsdp.checkpoint)), QStringLiteral("3"));
    QVERIFY(!fsdp.shard_optimizer);
    QVERIFY(panel.fieldWidget("prefetch")->isEnabled());
    // History: the line names them; the spec reopens into the same panel.
    const auto job = panel.makeJob();
    QVERIFY(job);
    const QJsonObject json =
        QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
    const QString line = DistributedPanel::describeSpec(json);
    QVERIFY2(line.contains(QStringLiteral("fsdp")) &&
                 line.contains(QStringLiteral("bf16 params")) &&
                 line.contains(QStringLiteral("checkpoint 3")),
             qPrintable(line));
    DistributedPanel again;
    again.setCapabilities(cpuOnly());
    again.setState(DistributedPanel::stateFromSpec(json));
    QVERIFY2(again.isValid(), qPrintable(again.problems().join('\n')));
    QCOMPARE(distributedSpecJson(again.spec()), distributedSpecJson(panel.spec()));
    // Without a fully sharded strategy its settings are greyed out.
    s["strategies"] = QJsonArray{"naive"};
    s["param_dtype"] = "fp32";
    panel.setState(s);
    QVERIFY(!panel.fieldWidget("prefetch")->isEnabled());
    QVERIFY(!panel.fieldWidget("param_dtype")->isEnabled());
}

void TestDistributedWindow::fsdpLanesShowTheWaitsForWeights() {
    DistributedView view;
    DistributedPoint p = ddpPoint("fsdp");
    view.addItems(pointItems(0, p, 2, 0, false, Status::Ok, [](DdpStepRow& row) {
        row.gather_wait_forward_ms = 3;
        row.gather_wait_backward_ms = row.rank == 0 ? 0 : 4;
    }));
    view.flush();
    LanesChart* lanes = view.lanes();
    // Forward's waits on both ranks, backward's on rank 1 only: 6 + 3 bars, each ending with
    // its pass, inside the communication lane.
    QCOMPARE(lanes->barCount(LanesChart::GatherWait), 9);
    const auto forward = lanes->bars(LanesChart::Forward, 1),
               waits = lanes->bars(LanesChart::GatherWait, 1);
    QCOMPARE(waits[0].second, forward[0].second);
    QCOMPARE(waits[0].second - waits[0].first, 3.0);
    QVERIFY2(view.lanesText()->text().contains(QStringLiteral("Fully sharded")),
             qPrintable(view.lanesText()->text()));
}

// Issue 29 item 3: the QCustomPlot charts in the dark theme had their titles dark on dark, and a
// live switch left the lanes white; in presentation mode their axis labels stayed small. Every
// chart's background, title, axes and legend take the theme, and what was drawn before the
// switch (the lanes' bars) is recoloured to the new theme's colours.
void TestDistributedWindow::chartsFollowTheTheme() {
    Theme::instance().setMode(ThemeMode::Light);
    Theme::instance().setPresentation(false);
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("overlap"), 3, 6));
    view.flush();
    LanesChart* lanes = view.lanes();
    const QColor lightForward = lanes->plot()->plottable(0)->brush().color();
    QCOMPARE(lightForward.rgb(), currentChartStyle().seriesColor(0).rgb());
    const QList<QcpChart*> charts = view.findChildren<QcpChart*>();
    QVERIFY(charts.size() >= 3);
    auto check = [&](const char* when) {
        const ChartStyle style = currentChartStyle();
        for (QcpChart* c : charts) {
            const QString what = QStringLiteral("%1, %2").arg(when, c->chartTitle());
            QCOMPARE(c->backgroundColor(), style.background);
            auto* title = qobject_cast<QCPTextElement*>(c->plot()->plotLayout()->element(0, 0));
            QVERIFY2(title, qPrintable(what));
            QVERIFY2(title->textColor() == style.foreground, qPrintable(what));
            QCOMPARE(title->font().pointSizeF(), style.titleFont.pointSizeF());
            for (QCPAxis* a : c->plot()->axisRect()->axes()) {
                QVERIFY2(a->tickLabelColor() == style.foreground, qPrintable(what));
                QCOMPARE(a->tickLabelFont().pointSizeF(), style.labelFont.pointSizeF());
            }
            QVERIFY2(c->plot()->legend->textColor() == style.foreground, qPrintable(what));
        }
    };
    Theme::instance().setMode(ThemeMode::Dark);
    check("dark");
    // What is drawn, not only what is set: the chart's corner is the dark background.
    lanes->resize(600, 300);
    const QImage drawn = lanes->grab().toImage();
    QVERIFY2(qGray(drawn.pixel(3, 3)) < 80, qPrintable(QColor(drawn.pixel(3, 3)).name()));
    {
        Theme::instance().setMode(ThemeMode::Light);
        QWidget top;
        auto* stack = new QStackedWidget(&top);
        stack->addWidget(new QLabel(QStringLiteral("another lab")));
        auto* v3 = new DistributedView;
        stack->addWidget(v3);
        auto* l = new QVBoxLayout(&top);
        l->addWidget(stack);
        Theme::instance().setMode(ThemeMode::Dark);
        top.resize(900, 600);
        top.show();
        QVERIFY(QTest::qWaitForWindowExposed(&top));
        stack->setCurrentIndex(1);
        QTest::qWait(300);
        // A window's grab, as a screenshot takes it: the lanes drawn dark there too.
        const QImage whole = top.grab().toImage();
        const QColor corner = whole.pixel(v3->lanes()->mapTo(&top, QPoint(3, 3)));
        QVERIFY2(qGray(corner.rgb()) < 80, qPrintable(corner.name()));
    }
    QVERIFY(currentChartStyle().background.lightnessF() < 0.2);
    // The bars drawn in the light theme now have the dark theme's forward colour, same alpha.
    const QColor darkForward = lanes->plot()->plottable(0)->brush().color();
    QCOMPARE(darkForward.rgb(), currentChartStyle().seriesColor(0).rgb());
    QCOMPARE(darkForward.alpha(), lightForward.alpha());
    Theme::instance().setPresentation(true);
    check("dark, presentation");
    Theme::instance().setPresentation(false);
    Theme::instance().setMode(ThemeMode::Light);
    check("light again");
    QCOMPARE(lanes->plot()->plottable(0)->brush().color(), lightForward);
}

// A run that torchrun or srun started: each step row carries its node, and the lane says it;
// a local run's lanes say the rank alone.
void TestDistributedWindow::lanesNameEachRanksNode() {
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("bucketed"), 2, 1, false, Status::Ok, [](DdpStepRow& row) {
        row.node = row.rank == 0 ? "node 0 (gpu-a)" : "node 1 (gpu-b)";
    }));
    view.flush();
    LanesChart* lanes = view.lanes();
    QCOMPARE(lanes->laneCount(), 2);
    QCOMPARE(lanes->rankLabel(0), QStringLiteral("rank 0 · node 0 (gpu-a)"));
    QCOMPARE(lanes->rankLabel(1), QStringLiteral("rank 1 · node 1 (gpu-b)"));
    DistributedView local;
    local.addItems(pointItems(0, ddpPoint("bucketed"), 2, 1));
    local.flush();
    QCOMPARE(local.lanes()->rankLabel(1), QStringLiteral("rank 1"));
}

void TestDistributedWindow::lanesShowOverlap() {
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("overlap"), 3, 6));
    view.flush();
    QCOMPARE(view.pointCount(), 1);
    QCOMPARE(view.shownPoint(), 0);
    LanesChart* lanes = view.lanes();
    QCOMPARE(lanes->laneCount(), 2);
    for (auto kind : {LanesChart::Forward, LanesChart::Backward, LanesChart::CommWait,
                      LanesChart::Optimizer, LanesChart::Communication, LanesChart::Hidden})
        QCOMPARE(lanes->barCount(kind), 6);  // 2 ranks × 3 steps
    // Each hidden bar overlaps its backward bar and ends where backward does.
    for (int rank = 0; rank < 2; ++rank) {
        const auto backward = lanes->bars(LanesChart::Backward, rank),
                   hidden = lanes->bars(LanesChart::Hidden, rank);
        QCOMPARE(hidden.size(), size_t{3});
        for (size_t k = 0; k < 3; ++k) {
            QCOMPARE(hidden[k].second, backward[k].second);
            QCOMPARE(hidden[k].first, backward[k].second - 6);
            QVERIFY(hidden[k].first > backward[k].first);
        }
    }
    // Steps start together, after the slowest rank's previous step (rank 1: 11 + 20 + 3 + 5 = 39
    // ms).
    QCOMPARE(lanes->bars(LanesChart::Forward, 0)[1].first, 39.0);
    QCOMPARE(lanes->bars(LanesChart::Forward, 1)[1].first, 39.0);
    QVERIFY(!view.banner()->isVisibleTo(&view) && view.banner()->isHidden());
    QVERIFY(view.lanesText()->text().contains(QStringLiteral("hidden behind backward")));
    // Issue 29 item 11: hovering a bar says what it is (rank, kind, length, start and end).
    lanes->resize(900, 500);
    lanes->plot()->replot();
    const auto forward = lanes->bars(LanesChart::Forward, 0)[1];
    const double x = lanes->plot()->xAxis->coordToPixel((forward.first + forward.second) / 2);
    QStringList texts;
    for (int y = 0; y < lanes->plot()->height(); y += 2)
        if (const QString t = lanes->hoverText(QPointF(x, y)); !t.isEmpty()) texts << t;
    QVERIFY2(
        std::any_of(texts.begin(), texts.end(),
                    [&](const QString& t) {
                        return t.startsWith(QStringLiteral("rank 0 · forward")) &&
                               t.contains(QString::number(forward.second - forward.first, 'f', 2));
                    }),
        qPrintable(texts.join(QStringLiteral(" | "))));
    QVERIFY(lanes->hoverText(QPointF(1, 1)).isEmpty());  // nothing there
    QPixmap image(800, 400);
    QPainter painter(&image);
    lanes->paintChart(painter, QRectF(0, 0, 800, 400));
}

void TestDistributedWindow::bucketedLanesSayWhatTheyShow() {
    DistributedView view;
    DistributedPoint p = ddpPoint("bucketed");
    p.ddp.bucket_mb = 1;
    view.addItems(pointItems(0, p, 2, 8));
    view.flush();
    QCOMPARE(view.lanes()->laneCount(), 2);
    QCOMPARE(view.lanes()->barCount(LanesChart::Hidden), 6);
    QCOMPARE(view.lanes()->barCount(LanesChart::Communication), 6);
    QVERIFY2(view.lanesText()->text().contains(QStringLiteral("one communication lane per rank")),
             qPrintable(view.lanesText()->text()));
    // Naive: nothing hidden, all of it waited for.
    DistributedView naive;
    naive.addItems(pointItems(0, ddpPoint("naive"), 12, 0));
    naive.flush();
    QCOMPARE(naive.lanes()->barCount(LanesChart::Hidden), 0);
    QCOMPARE(naive.lanes()->barCount(LanesChart::CommWait), 6);
    QVERIFY(naive.lanesText()->text().contains(QStringLiteral("waited for")));
}

// Rows with their buckets' spans (see Note [per-bucket timing]) draw one bar per bucket in each
// rank's buckets track, and bucketed points of three sizes give the model's curve beside their
// measured waits (see Note [bucket-size model]); both come back from the store.
void TestDistributedWindow::bucketBarsAndTheBucketModel() {
    // Six gradients of 1000 bytes, ready every 3 ms of backward (the last parameter first); three
    // buckets of 1000, 2000 and 3000 bytes, each all-reduce 0.5 ms + bytes / 1000 B/ms.
    auto withBuckets = [](DdpStepRow& r) {
        const double b0 = r.forward_ms;
        for (int i = 0; i < 6; ++i) r.gradients.push_back({1000, b0 + 3.0 * (6 - i)});
        double end = 0;
        int64_t bytes = 1000;
        for (int k = 0; k < 3; ++k, bytes += 1000) {
            dist::BucketSpan b;
            b.index = k;
            b.bytes = bytes;
            b.params = k + 1;
            b.ready_ms = b0 + 3.0 + 6.0 * k;
            b.launch_ms = b.ready_ms;
            b.end_ms = std::max(b.launch_ms, end) + 0.5 + static_cast<double>(bytes) / 1000;
            end = b.end_ms;
            r.buckets.push_back(b);
        }
    };
    DistributedView view;
    std::vector<DistributedResult> results;
    int index = 0;
    for (double mib : {1.0, 10.0, 100.0}) {
        DistributedPoint p = ddpPoint("bucketed");
        p.ddp.bucket_mb = mib;
        const auto items =
            pointItems(index++, p, 2.0 + mib / 100, 5, false, Status::Ok, withBuckets);
        view.addItems(items);
        results.push_back(items.back().value<DistPointFinished>().result);
    }
    view.showPoint(0);
    view.flush();
    LanesChart* lanes = view.lanes();
    QCOMPARE(lanes->barCount(LanesChart::Bucket), 3 * 3 * 2);  // buckets × steps × ranks
    const auto bars = lanes->bars(LanesChart::Bucket, 1);
    QCOMPARE(bars.size(), size_t{9});
    for (size_t k = 0; k < bars.size(); ++k) {
        QVERIFY(bars[k].second > bars[k].first);
        if (k % 3) QVERIFY(bars[k].first > bars[k - 1].first);  // launch order within a step
    }
    // Bucket 0 of rank 1's first measured step starts 3 ms into its backward.
    const auto backward = lanes->bars(LanesChart::Backward, 1)[1];
    QCOMPARE(bars[3].first, backward.first + 3.0);
    QVERIFY2(view.lanesText()->text().contains(QStringLiteral("one bar per bucket")),
             qPrintable(view.lanesText()->text()));
    lanes->resize(900, 500);
    lanes->plot()->replot();
    // Bucket 0 lies in the upper half of rank 1's buckets track (1.74 to 1.84 on the lanes' axis).
    const QPointF at(lanes->plot()->xAxis->coordToPixel((bars[3].first + bars[3].second) / 2),
                     lanes->plot()->yAxis->coordToPixel(1.79));
    const QString hover = lanes->hoverText(at);
    QVERIFY2(hover.startsWith(QStringLiteral("rank 1 · bucket 0 (0.00 MiB, 1 parameters")),
             qPrintable(hover));

    // The model: one configuration, its curve, the three points measured and the best size.
    auto checkModel = [](DistributedView& v) {
        QVERIFY(v.paneIndex(QStringLiteral("buckets")) >= 0);
        QCOMPARE(v.bucketModelChart()->curveCount(), 1);
        QCOMPARE(v.bucketModelChart()->measuredCount(), 3);
        QVERIFY(v.bucketModelChart()->plottedPoints() > 10);
        QAbstractItemModelTester tester(v.bucketModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(v.bucketModel()->rowCount(), 4);  // three points and the best size
        QCOMPARE(v.bucketModel()->item(3, 1)->text(), QStringLiteral("best size"));
        // The fit of the buckets' own times: 0.5 ms + n / (1000 bytes per ms = 0.001 GB/s).
        QCOMPARE(v.bucketModel()->item(0, 7)->text(), QStringLiteral("0.500"));
        QCOMPARE(v.bucketModel()->item(0, 8)->text(), QStringLiteral("0.001"));
        QVERIFY2(v.bucketText()->text().contains(QStringLiteral("least wait")),
                 qPrintable(v.bucketText()->text()));
        QPixmap image(800, 400);
        QPainter painter(&image);
        v.bucketModelChart()->paintChart(painter, QRectF(0, 0, 800, 400));
    };
    checkModel(view);
    bool reported = false;
    for (const auto& part : view.reportParts())
        reported = reported || part.chart == static_cast<ExportableChart*>(view.bucketModelChart());
    QVERIFY(reported);

    // Stored and opened again: the same bars and the same model.
    QTemporaryDir dir;
    ResultStore store(dir.filePath(QStringLiteral("r.db")).toStdString());
    DistributedSpec spec;
    for (const auto& r : results) spec.points.push_back(r.point);
    const int64_t id =
        store.createRun(kDistributedLab, "buckets", distributedSpecJson(spec), "cpu");
    int row = 0;
    for (size_t i = 0; i < results.size(); ++i) {
        for (const auto& s : results[i].steps)
            storeDistributedRow(store, id, row++, static_cast<int>(i), results[i].point,
                                ddpStepPayload(s));
        storeDistributedRow(store, id, row++, static_cast<int>(i), results[i].point,
                            pointEndPayload(results[i]), results[i].status);
    }
    StoredRun run{*store.run(id), store.rows(id, kDistributedLab), {}};
    DistributedView again;
    QString error;
    QVERIFY2(again.showStored(run, &error), qPrintable(error));
    QCOMPARE(again.lanes()->barCount(LanesChart::Bucket), 18);
    checkModel(again);
}

void TestDistributedWindow::allreduceSeriesPerWorldSize() {
    DistributedView view;
    QList<QVariant> items;
    int index = 0;
    for (int world : {2, 4}) {
        DistributedPoint p;
        p.experiment = DistExperiment::Allreduce;
        p.world_size = world;
        p.allreduce.sizes = {1 << 20, 16 << 20};
        items << QVariant::fromValue(DistPointStarted{index, 2, p});
        DistributedResult r;
        r.point = p;
        for (auto dtype : {dist::BenchDtype::Float32, dist::BenchDtype::BFloat16})
            for (int64_t bytes : p.allreduce.sizes) {
                dist::AllreduceRow row;
                row.bytes = bytes;
                row.dtype = dtype;
                row.world_size = world;
                row.iters = 5;
                row.time_ms = bytes / 1e6;
                row.algbw_gbps = bytes / (row.time_ms * 1e6);
                row.busbw_gbps = row.algbw_gbps * dist::busFactor(world);
                r.allreduce.push_back(row);
                items << QVariant::fromValue(DistAllreduce{index, row});
            }
        items << QVariant::fromValue(DistPointFinished{index, r});
        ++index;
    }
    view.addItems(items);
    QCOMPARE(view.allreduceChart()->seriesCount(), 4);  // {2, 4} ranks × {fp32, bf16}
    QAbstractItemModelTester tester(view.allreduceModel());
    QCOMPARE(view.allreduceModel()->rowCount(), 8);
    QCOMPARE(view.allreduceChart()->plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
    // busbw of 4 ranks: algbw · 1.5.
    QCOMPARE(view.allreduceModel()->item(4, 8)->data(Qt::UserRole).toDouble(),
             view.allreduceModel()->item(4, 7)->data(Qt::UserRole).toDouble() * 1.5);
    // The lanes say where an all-reduce point's results are.
    QVERIFY(view.lanes()->noteText().contains(QStringLiteral("All-reduce pane")));
    bool inReport = false;
    for (const auto& part : view.reportParts()) inReport |= part.chart == view.allreduceChart();
    QVERIFY(inReport);
}

void TestDistributedWindow::failedRankNamedInTheBanner() {
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("naive"), 4, 0));
    // Point 2: rank 1 fails after its first step; the launcher ended rank 0.
    const DistributedPoint p = ddpPoint("overlap");
    DistributedResult r;
    r.point = p;
    r.status = Status::Failed;
    r.failed_rank = 1;
    r.error = "rank 1: Connection reset by peer";
    r.steps = {step(0, 0, 3, 6), step(1, 0, 3, 6)};
    view.addItems({QVariant::fromValue(DistPointStarted{1, 2, p}),
                   QVariant::fromValue(DistStep{1, r.steps[0]}),
                   QVariant::fromValue(DistStep{1, r.steps[1]}),
                   QVariant::fromValue(DistPointFinished{1, r})});
    QCOMPARE(view.shownPoint(), 1);
    QVERIFY(!view.banner()->isHidden());
    const QString banner = view.banner()->text();
    QVERIFY2(banner.contains(QStringLiteral("rank 1")) &&
                 banner.contains(QStringLiteral("Connection reset by peer")) &&
                 banner.contains(QStringLiteral("other ranks were stopped")),
             qPrintable(banner));
    // The points' table and the log say it too; the good point shows no banner.
    QCOMPARE(view.pointModel()->rowCount(), 2);
    QCOMPARE(view.pointModel()->item(1, 2)->text(), QStringLiteral("failed"));
    QCOMPARE(view.pointModel()->item(1, 3)->text(), QStringLiteral("1"));
    QVERIFY(view.logText()->toPlainText().contains(QStringLiteral("failed on rank 1")));
    view.showPoint(0);
    QVERIFY(view.banner()->isHidden());
    view.showPoint(1);
    QVERIFY(!view.banner()->isHidden());
    QCOMPARE(view.lanes()->barCount(LanesChart::Forward),
             2);  // the steps that arrived before the failure
    QVERIFY(!view.banner()->property("stopped").toBool());
    // A point stopped by the user is said so, in grey.
    DistributedResult stopped;
    stopped.point = ddpPoint("flat");
    stopped.status = Status::Cancelled;
    stopped.error = "stopped before it started";
    view.addItems({QVariant::fromValue(DistPointFinished{2, stopped})});
    view.showPoint(2);
    QVERIFY(!view.banner()->isHidden());
    QVERIFY(view.banner()->property("stopped").toBool());
    QVERIFY(view.banner()->text().contains(QStringLiteral("Point 3 was stopped")));
    QCOMPARE(view.pointModel()->item(2, 2)->text(), QStringLiteral("cancelled"));
}

void TestDistributedWindow::strategiesCompared() {
    DistributedView view;
    view.addItems(pointItems(0, ddpPoint("naive"), 12, 0));
    view.addItems(pointItems(1, ddpPoint("overlap"), 3, 9));
    QAbstractItemModelTester tester(view.strategyModel());
    QStandardItemModel* m = view.strategyModel();
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(m->item(0, 1)->text(), QStringLiteral("naive"));
    QCOMPARE(m->item(1, 1)->text(), QStringLiteral("overlap"));
    // Each row is summarizeDdp of its point: the slowest rank's step, over the measured steps.
    const DdpSummary s = summarizeDdp(view.results()[1]);
    QCOMPARE(m->item(1, 8)->data(Qt::UserRole).toDouble(), s.step_ms);
    // Its median too: per measured step the slowest rank, then the middle of those.
    std::map<int, double> slowest;
    for (const DdpStepRow& row : view.results()[1].steps)
        if (!row.warmup) slowest[row.step] = std::max(slowest[row.step], row.total_ms);
    std::vector<double> totals;
    for (const auto& [step, total] : slowest) totals.push_back(total);
    std::sort(totals.begin(), totals.end());
    QVERIFY(!totals.empty());
    const size_t mid = totals.size() / 2;
    QCOMPARE(s.step_median_ms,
             totals.size() % 2 ? totals[mid] : 0.5 * (totals[mid - 1] + totals[mid]));
    QCOMPARE(m->item(1, 12)->data(Qt::UserRole).toDouble(), s.comm_wait_ms);
    QCOMPARE(m->item(0, 13)->data(Qt::UserRole).toDouble(), 0.0);  // naive hides nothing
    QVERIFY(m->item(1, 14)->text().endsWith(QLatin1Char('%')));
    QVERIFY(m->item(0, 8)->data(Qt::UserRole).toDouble() >
            m->item(1, 8)->data(Qt::UserRole).toDouble());
}

// See Note [compiled data-parallel step]: the panel's Execution choice sweeps eager beside
// compiled, is refused on Gloo, comes back from a stored state; the table names a compiled point
// and shows "—" for the comm wait an overlapped compiled step does not have.
void TestDistributedWindow::compiledStepNamedAndRefusedOnGloo() {
    DistributedPanel panel;
    panel.setCapabilities(cpuOnly());
    QJsonObject state = ddpState();
    state["sharding"] = "off";
    state["exec"] = "both";
    panel.setState(state);
    QVERIFY(!panel.isValid());
    QVERIFY2(panel.problems().join('\n').contains(QStringLiteral("needs the nccl backend")),
             qPrintable(panel.problems().join('\n')));
    QStringList points;
    for (const auto& p : panel.spec().points)
        points << QString::fromStdString(p.ddp.strategy + " " + std::string(toString(p.ddp.exec)));
    QCOMPARE(points, QStringList({"naive eager", "naive compiled", "bucketed eager",
                                  "bucketed compiled", "bucketed eager", "bucketed compiled"}));
    QCOMPARE(panel.state()["exec"].toString(), QStringLiteral("both"));
    state["exec"] = "eager";
    panel.setState(state);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));

    DistributedView view;
    DistributedPoint p = ddpPoint("overlap");
    p.ddp.exec = ExecMode::Compiled;
    view.addItems(pointItems(0, p, -1, -1, false, Status::Ok,
                             [](DdpStepRow& row) { row.total_ms = 35 + row.rank; }));
    QStandardItemModel* m = view.strategyModel();
    QCOMPARE(m->rowCount(), 1);
    QCOMPARE(m->item(0, 1)->text(), QStringLiteral("overlap compiled"));
    QCOMPARE(m->item(0, 12)->text(), QStringLiteral("—"));  // comm wait: inside backward
    QCOMPARE(m->item(0, 13)->text(), QStringLiteral("—"));  // hidden: not measured
}

// See Note [your DDP classes]: the Code box adds the strategies the user's adapters define, and
// the run asked for comes back from History with the same code.
void TestDistributedWindow::yourClassesFromTheCodeBox() {
    const std::string checkout = exampleCheckout();
    if (checkout.empty()) QSKIP("no examples/course-checkout here");
    DistributedPanel panel;
    panel.setCapabilities(cpuOnly());
    QJsonObject state = ddpState();
    state["strategies"] = QJsonArray{"torch-ddp"};
    state["sharding"] = "off";
    state["buckets"] = "25";
    state["sources"] = QJsonArray{"python"};
    state["code"] = QString::fromStdString(checkout);
    panel.setState(state);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    QStringList strategies;
    for (const auto& p : panel.spec().points) {
        strategies << QString::fromStdString(p.ddp.strategy);
        QCOMPARE(p.ddp.code, checkout);
    }
    QCOMPARE(strategies, QStringList({"torch-ddp", "yours-individual", "yours-bucketed"}));
    const auto job = panel.makeJob();
    QVERIFY(job);
    const QJsonObject json =
        QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
    DistributedPanel again;
    again.setCapabilities(cpuOnly());
    again.setState(DistributedPanel::stateFromSpec(json));
    QVERIFY2(again.isValid(), qPrintable(again.problems().join('\n')));
    QCOMPARE(distributedSpecJson(again.spec()), distributedSpecJson(panel.spec()));
    // Code that names no DDP adapters is said on the code field, before Run.
    state["code"] = QStringLiteral("mypkg.ddp:DDP");
    panel.setState(state);
    QVERIFY(!panel.isValid());
    QVERIFY2(panel.problems().join('\n').contains(QStringLiteral("name them")),
             qPrintable(panel.problems().join('\n')));
}

void TestDistributedWindow::aFailedCheckIsARedCell() {
    DistributedView view;
    DistributedPoint p = ddpPoint("yours-individual");
    p.ddp.code = "examples/wrong/ddp_not_averaged.py";
    QList<QVariant> items{QVariant::fromValue(DistPointStarted{0, 1, p})};
    DistributedResult r;
    r.point = p;
    r.status = Status::Failed;
    r.error = "wrong result: parameters differ from single-process training";
    r.what = "ddp_not_averaged.DDPNotAveraged";
    r.check.ran = true;
    r.check.passed = false;
    r.check.max_diff = 0.25;
    r.check.message = "parameters differ from single-process training";
    items << QVariant::fromValue(DistPointFinished{0, r});
    view.addItems(items);
    view.flush();
    QStandardItemModel* m = view.strategyModel();
    QCOMPARE(m->rowCount(), 1);
    const int check = 7;  // beside the status: why the point failed
    QCOMPARE(m->horizontalHeaderItem(check)->text(), QStringLiteral("check"));
    QVERIFY2(m->item(0, check)->text().startsWith(QStringLiteral("FAIL")),
             qPrintable(m->item(0, check)->text()));
    QVERIFY(m->item(0, check)->background().color().red() > 200);
    QVERIFY(m->item(0, check)->toolTip().contains(QStringLiteral("DDPNotAveraged")));
    QCOMPARE(m->item(0, 6)->text(), QStringLiteral("failed"));
}

void TestDistributedWindow::memoryShardedBesideUnsharded() {
    DistributedView view;
    // In run order: bucketed sharded, naive unsharded, naive sharded.
    view.addItems(pointItems(0, ddpPoint("bucketed", true), 2, 4, true));
    view.addItems(pointItems(1, ddpPoint("naive", false), 12, 0, false));
    view.addItems(pointItems(2, ddpPoint("naive", true), 12, 0, true));
    RankMemoryChart* chart = view.memoryChart();
    QCOMPARE(chart->barCount(), 6);  // 3 points × 2 ranks
    QAbstractItemModelTester tester(view.memoryModel());
    QStandardItemModel* m = view.memoryModel();
    QCOMPARE(m->rowCount(), 6);
    // Naive unsharded, then naive sharded beside it, then bucketed.
    QCOMPARE(m->item(0, 0)->text(), QStringLiteral("2"));
    QCOMPARE(m->item(2, 0)->text(), QStringLiteral("3"));
    QCOMPARE(m->item(4, 0)->text(), QStringLiteral("1"));
    QCOMPARE(m->item(0, 5)->data(Qt::UserRole).toLongLong(), 8000);  // optimizer state, unsharded
    QCOMPARE(m->item(2, 5)->data(Qt::UserRole).toLongLong(), 4000);  // sharded: half
    const double mib = 1024.0 * 1024.0;
    QCOMPARE(chart->barTotal(0) * mib, 17000.0);
    QCOMPARE(chart->barTotal(2) * mib, 13000.0);
    // Issue 29 item 11: hovering a bar names its series and value.
    chart->resize(900, 500);
    chart->plot()->replot();
    QCPBars* first = nullptr;
    for (int i = 0; i < chart->plot()->plottableCount() && !first; ++i)
        first = qobject_cast<QCPBars*>(chart->plot()->plottable(i));
    QVERIFY(first && first->data()->size() > 0);
    const auto bar = first->data()->at(0);
    const QPointF at(first->keyAxis()->coordToPixel(bar->key),
                     first->valueAxis()->coordToPixel(bar->value / 2));
    const QString text = chart->hoverText(at);
    QVERIFY2(text.startsWith(first->name()), qPrintable(text + " / " + first->name()));
}

void TestDistributedWindow::storedRunReopens() {
    QTemporaryDir dir;
    ResultStore store(dir.filePath(QStringLiteral("results.db")).toStdString());
    DistributedSpec spec;
    spec.points = {ddpPoint("overlap"), ddpPoint("flat", true)};
    const int64_t id = store.createRun(kDistributedLab, "stored", distributedSpecJson(spec), "cpu");
    int row = 0;
    for (int i = 0; i < 2; ++i) {
        DistributedResult r;
        r.point = spec.points[static_cast<size_t>(i)];
        for (int k = 0; k < 3; ++k)
            for (int rank = 0; rank < 2; ++rank) {
                r.steps.push_back(step(rank, k, 3, i == 0 ? 6 : 0, i == 1));
                storeDistributedRow(store, id, row++, i, r.point, ddpStepPayload(r.steps.back()));
            }
        if (i == 1) {
            r.status = Status::Failed;
            r.failed_rank = 0;
            r.error = "rank 0: killed by signal 9";
        }
        r.rank_devices = {"cpu", "cpu"};
        storeDistributedRow(store, id, row++, i, r.point, pointEndPayload(r), r.status);
    }
    StoredRun run{*store.run(id), store.rows(id, kDistributedLab), {}};
    DistributedView view;
    QString error;
    QVERIFY2(view.showStored(run, &error), qPrintable(error));
    QCOMPARE(view.storeRunId(), id);
    QCOMPARE(view.pointCount(), 2);
    QStringList keys;
    for (const auto& p : view.panes()) keys << p.key;
    QCOMPARE(keys, (QStringList{"lanes", "allreduce", "strategies", "buckets", "memory", "log"}));
    // The failed point is shown first, its rank named.
    QCOMPARE(view.shownPoint(), 1);
    QVERIFY(view.banner()->text().contains(QStringLiteral("rank 0")));
    QCOMPARE(view.strategyModel()->rowCount(), 2);
    QCOMPARE(view.memoryChart()->barCount(), 4);
    view.showPoint(0);
    QCOMPARE(view.lanes()->barCount(LanesChart::Hidden), 6);
    QVERIFY(view.exportContext(0).configuration.contains(QStringLiteral("2 points")));
    QVERIFY(view.runTitle().contains(QStringLiteral("stored")));
    QVERIFY(view.reportParts().size() >= 4);
}

// See Note [one trace of every rank]: a point stored with its merged trace offers it; a point
// without one, or whose file is gone, does not.
void TestDistributedWindow::mergedTraceOfAStoredPointSaves() {
    QTemporaryDir dir;
    const QString traceFile = dir.filePath(QStringLiteral("results.traces/run-1-point-1.json"));
    QVERIFY(QDir().mkpath(QFileInfo(traceFile).path()));
    const QByteArray content = R"({"traceEvents": [], "traceName": "2 ranks, merged"})";
    {
        QFile f(traceFile);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
    }
    ResultStore store(dir.filePath(QStringLiteral("results.db")).toStdString());
    DistributedSpec spec;
    spec.points = {ddpPoint("overlap"), ddpPoint("flat")};
    spec.points[0].ddp.trace_steps = 1;
    const int64_t id = store.createRun(kDistributedLab, "traced", distributedSpecJson(spec), "cpu");
    int row = 0;
    for (int i = 0; i < 2; ++i) {
        DistributedResult r;
        r.point = spec.points[static_cast<size_t>(i)];
        for (int rank = 0; rank < 2; ++rank)
            storeDistributedRow(store, id, row++, i, r.point, ddpStepPayload(step(rank, 1, 3, 0)));
        if (i == 0) r.trace_file = traceFile.toStdString();
        storeDistributedRow(store, id, row++, i, r.point, pointEndPayload(r), r.status);
    }
    DistributedView view;
    QString error;
    QVERIFY2(view.showStored({*store.run(id), store.rows(id, kDistributedLab), {}}, &error),
             qPrintable(error));
    view.showPoint(0);
    QVERIFY(view.traceButton()->isEnabled());
    QVERIFY(view.traceButton()->toolTip().contains(traceFile));
    const QString saved = dir.filePath(QStringLiteral("copy.json"));
    QVERIFY2(view.saveMergedTrace(saved, &error), qPrintable(error));
    QFile copy(saved);
    QVERIFY(copy.open(QIODevice::ReadOnly));
    QCOMPARE(copy.readAll(), content);
    view.showPoint(1);
    QVERIFY(!view.traceButton()->isEnabled());
    QVERIFY(!view.saveMergedTrace(saved, &error));
    QVERIFY(error.contains(QStringLiteral("no merged trace")));
    // The file removed beside the store: said, not offered.
    QVERIFY(QFile::remove(traceFile));
    view.showPoint(0);
    QVERIFY(!view.traceButton()->isEnabled());
    QVERIFY(view.traceButton()->toolTip().contains(QStringLiteral("gone")));
}

void TestDistributedWindow::classroomPresetLoads() {
    const auto preset = findPreset(QStringLiteral("ddp-strategies"));
    QVERIFY(preset);
    QCOMPARE(preset->experiment, QStringLiteral("distributed"));
    DistributedPanel panel;
    panel.setCapabilities(capabilities());
    QJsonObject config = preset->config;
    // NCCL on the GPUs present (the preset's 2 ranks capped at one GPU's 1), Gloo without any.
    const bool gpus = capabilities().cuda_available && dist::ncclBuilt() && panel.gpuCount() >= 1;
    if (!capabilities().cuda_available)
        for (auto it = preset->cpuConfig.begin(); it != preset->cpuConfig.end(); ++it)
            config[it.key()] = it.value();
    QStringList notes;
    panel.applyPreset(config, preset->title, &notes);
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    if (!capabilities().cuda_available) QVERIFY2(notes.isEmpty(), qPrintable(notes.join('\n')));
    // Four strategies, the bucketed one twice.
    QCOMPARE(panel.spec().points.size(), size_t{5});
    const auto& first = panel.spec().points.front();
    QVERIFY(first.backend == (gpus ? dist::CommBackend::Nccl : dist::CommBackend::Gloo));
    if (gpus) QCOMPARE(first.world_size, std::min(2, panel.gpuCount()));
    DistributedView view;
    QVERIFY(view.paneIndex(preset->view.value("tab").toString()) >= 0);
}

void TestDistributedWindow::jobRunsOnTwoGlooProcesses() {
    DistributedPanel panel;
    panel.setCapabilities(capabilities());
    panel.setWorkerPath(QString::fromStdString(ts::testing::testPath("TRAINSCOPE_TEST_CLI")));
    panel.setState(QJsonObject{{"backend", "gloo"},
                               {"world", 2},
                               {"experiment", "ddp"},
                               {"model", "tiny"},
                               {"context", 16},
                               {"batch", 1},
                               {"precisions", QJsonArray{"fp32"}},
                               {"strategies", QJsonArray{"naive"}},
                               {"sharding", "off"},
                               {"warmup", 1},
                               {"steps", 2}});
    QVERIFY2(panel.isValid(), qPrintable(panel.problems().join('\n')));
    const auto job = panel.makeJob();
    QVERIFY(job);
    QTemporaryDir dir;
    ResultStore store(dir.filePath(QStringLiteral("results.db")).toStdString());
    const int64_t id = store.createRun(kDistributedLab, "e2e", job->spec_json, "cpu");
    Collect out;
    CancelToken cancel;
    job->run(out, cancel, &store, id);
    int steps = 0, ready = 0;
    std::optional<DistributedResult> result;
    for (const QVariant& v : out.items) {
        if (v.metaType() == QMetaType::fromType<DistStep>()) ++steps;
        if (v.metaType() == QMetaType::fromType<DistRankReady>()) ++ready;
        if (v.metaType() == QMetaType::fromType<DistPointFinished>())
            result = v.value<DistPointFinished>().result;
    }
    QVERIFY(result);
    QVERIFY2(result->status == Status::Ok, result->error.c_str());
    QCOMPARE(ready, 2);
    QCOMPARE(steps, 2 * 3);  // 2 ranks × (1 warm-up + 2 measured)
    DistributedView view;
    view.beginRun(*job);
    view.addItems(out.items);
    view.flush();
    QCOMPARE(view.lanes()->laneCount(), 2);
    QCOMPARE(view.lanes()->barCount(LanesChart::Backward), 6);
    QCOMPARE(view.strategyModel()->rowCount(), 1);
    QVERIFY(view.strategyModel()->item(0, 8)->data(Qt::UserRole).toDouble() > 0);
    // The same run, stored as it went, reopens.
    StoredRun run{*store.run(id), store.rows(id, kDistributedLab), {}};
    DistributedView stored;
    QString error;
    QVERIFY2(stored.showStored(run, &error), qPrintable(error));
    QCOMPARE(stored.lanes()->barCount(LanesChart::Backward), 6);
}

void TestDistributedWindow::failedRankEndsTheOthers() {
    // A worker whose rank 1 reports an error and exits; rank 0 is the real worker, which waits
    // for rank 1 until the launcher ends it. Rank 0 leaves its process id behind.
    QTemporaryDir dir;
    const QString pidFile = dir.filePath(QStringLiteral("rank0.pid"));
    const QString script = dir.filePath(QStringLiteral("worker.sh"));
    {
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            QStringLiteral(
                "#!/bin/sh\n"
                "if [ \"$RANK\" = 1 ]; then sleep 1; echo "
                "'{\"event\":\"error\",\"rank\":1,\"message\":\"injected failure\"}'; exit 3; fi\n"
                "echo $$ > '%1'\n"
                "exec '%2' \"$@\"\n")
                .arg(pidFile, QString::fromStdString(ts::testing::testPath("TRAINSCOPE_TEST_CLI")))
                .toUtf8());
        f.close();
        f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
    }
    DistributedPanel panel;
    panel.setCapabilities(capabilities());
    panel.setWorkerPath(script);
    panel.setState(QJsonObject{{"backend", "gloo"},
                               {"world", 2},
                               {"experiment", "ddp"},
                               {"model", "tiny"},
                               {"context", 16},
                               {"batch", 1},
                               {"precisions", QJsonArray{"fp32"}},
                               {"strategies", QJsonArray{"naive", "flat"}},
                               {"sharding", "off"},
                               {"warmup", 0},
                               {"steps", 1}});
    const auto job = panel.makeJob();
    QVERIFY(job);
    Collect out;
    CancelToken cancel;
    job->run(out, cancel, nullptr, 0);
    DistributedView view;
    view.beginRun(*job);
    view.addItems(out.items);
    QCOMPARE(view.pointCount(), 2);
    const DistributedResult& r = view.results()[0];
    QVERIFY(r.status == Status::Failed);
    QCOMPARE(r.failed_rank, 1);
    QVERIFY2(r.error.find("injected failure") != std::string::npos, r.error.c_str());
    // The window shows the failed point, its rank and message.
    QVERIFY(!view.banner()->isHidden());
    QVERIFY2(view.banner()->text().contains(QStringLiteral("rank 1")) &&
                 view.banner()->text().contains(QStringLiteral("injected failure")),
             qPrintable(view.banner()->text()));
    QCOMPARE(view.pointModel()->item(0, 2)->text(), QStringLiteral("failed"));
    // Rank 0 is gone: the launcher ended and reaped it before the point ended.
    QFile f(pidFile);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const pid_t pid = static_cast<pid_t>(f.readAll().trimmed().toLongLong());
    QVERIFY(pid > 0);
    QVERIFY(::kill(pid, 0) != 0);
    QCOMPARE(errno, ESRCH);
}

void TestDistributedWindow::historyOpensAndReloadsARun() {
    // A stored run of the window's own making: its spec from a panel, a point's steps and end.
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("results.db"));
    DistributedPanel source;
    source.setCapabilities(capabilities());
    QJsonObject state = ddpState();
    state["strategies"] = QJsonArray{"overlap"};
    state["sharding"] = "off";
    source.setState(state);
    QVERIFY2(source.isValid(), qPrintable(source.problems().join('\n')));
    int64_t id = 0;
    {
        ResultStore store(db.toStdString());
        id = store.createRun(kDistributedLab, "from history", distributedSpecJson(source.spec()),
                             "cpu");
        DistributedResult r;
        r.point = source.spec().points.front();
        int row = 0;
        for (int k = 0; k < 3; ++k)
            for (int rank = 0; rank < 2; ++rank) {
                r.steps.push_back(step(rank, k, 3, 6));
                storeDistributedRow(store, id, row++, 0, r.point, ddpStepPayload(r.steps.back()));
            }
        storeDistributedRow(store, id, row++, 0, r.point, pointEndPayload(r));
    }
    MainWindow w(MainWindow::Options{db, false});
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->capabilitiesReady(), 60000);
    QSignalSpy refreshed(w.history(), &HistoryController::refreshed);
    w.history()->refresh();
    QVERIFY(refreshed.wait(10000) || !refreshed.isEmpty());
    // Open: the Distributed experiment shows the run.
    QSignalSpy opened(w.history(), &HistoryController::storedRunOpened);
    w.history()->openStoredRun(id);
    QVERIFY(opened.wait(10000) || !opened.isEmpty());
    auto* view = qobject_cast<DistributedView*>(w.labView(QStringLiteral("distributed")));
    QVERIFY(view);
    QCOMPARE(w.currentView(), view);
    QCOMPARE(view->storeRunId(), id);
    QCOMPARE(view->lanes()->barCount(LanesChart::Hidden), 6);
    // Load Configuration: the panel asks for the same run again.
    QVERIFY(w.history()->loadRunConfiguration(id));
    auto* panel = qobject_cast<DistributedPanel*>(w.panel(QStringLiteral("distributed")));
    QVERIFY(panel);
    QCOMPARE(w.currentPanel(), panel);
    QVERIFY2(panel->isValid(), qPrintable(panel->problems().join('\n')));
    QCOMPARE(distributedSpecJson(panel->spec()), distributedSpecJson(source.spec()));
}

QTEST_MAIN(TestDistributedWindow)
#include "tst_distributed_window.moc"
