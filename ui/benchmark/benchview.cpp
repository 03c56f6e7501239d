#include "ui/benchmark/benchview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/point_json.h"
#include "ui/benchmark/benchitems.h"
#include "ui/benchmark/breakdownchart.h"
#include "ui/benchmark/comparechart.h"
#include "ui/benchmark/comparewidget.h"
#include "ui/benchmark/memorychart.h"
#include "ui/benchmark/speedupchart.h"
#include "ui/benchmark/stepchart.h"
#include "ui/benchmark/storedbenchrun.h"
#include "ui/common/dimensions.h"
#include "ui/common/format.h"
#include "ui/common/panes.h"
#include "ui/common/pointformat.h"
#include "ui/common/sweepchart.h"
#include "ui/common/tableview.h"

namespace ts::ui {

namespace {}  // namespace

BenchView::BenchView(QWidget* parent) : LabView(parent) {
    qRegisterMetaType<PointConfig>();
    qRegisterMetaType<StepSample>();
    qRegisterMetaType<QList<StepSample>>();
    qRegisterMetaType<BenchResult>();
    qRegisterMetaType<BenchPointStarted>();
    qRegisterMetaType<BenchStep>();
    qRegisterMetaType<BenchPointFinished>();

    // Steps: the chart of one point above the table of every step.
    stepChart_ = new StepChart(doc_.steps(), doc_.results(), this);
    stepChart_->setObjectName(QStringLiteral("stepChart"));
    stepTable_ = new DataTableView(this);
    stepTable_->setObjectName(QStringLiteral("stepTable"));
    stepTable_->setTitle(tr("Steps"), QStringLiteral("steps"));
    stepTable_->setModel(doc_.steps());
    pointCombo_ = new QComboBox(this);
    pointCombo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    pointCombo_->setToolTip(tr("Which sweep point the chart shows"));
    overlay_ = new QCheckBox(tr("Overlay all points"), this);
    overlay_->setObjectName(QStringLiteral("overlayPoints"));
    overlay_->setToolTip(tr("The total time per step of every point on one chart"));
    auto* stepControls = new QHBoxLayout;
    stepControls->addWidget(new QLabel(tr("Point:"), this));
    stepControls->addWidget(pointCombo_);
    stepControls->addWidget(overlay_);
    stepControls->addStretch();
    stepChart_->setMinimumHeight(220);
    addPane({QStringLiteral("steps"), tr("&Steps"),
             panePage(this, paneRow(this, stepControls), stepChart_, stepTable_, nullptr, {3, 1}),
             stepChart_, stepTable_});
    connect(pointCombo_, &QComboBox::currentIndexChanged, this,
            [this] { stepChart_->setPoint(pointCombo_->currentData().toInt()); });
    connect(overlay_, &QCheckBox::toggled, this, [this](bool on) {
        stepChart_->setOverlay(on);
        pointCombo_->setEnabled(!on);
    });
    connect(&doc_, &RunDocument::infoChanged, this,
            [this] { stepChart_->setRunPointCount(doc_.pointCount()); });

    // Sweep: time against size / context / batch, one series per other varying value.
    sweepChart_ = new SweepChart(doc_.sweep(), this);
    sweepChart_->setObjectName(QStringLiteral("sweepChart"));
    sweepX_ = new QComboBox(this);
    for (Dimension d : SweepModel::xDimensions())
        sweepX_->addItem(dimensionName(d), dimensionKey(d));
    sweepMetric_ = new QComboBox(this);
    for (Metric m : {Metric::Total, Metric::Forward, Metric::Backward, Metric::Optimizer})
        sweepMetric_->addItem(metricName(m), static_cast<int>(m));
    sweepLogY_ = new QCheckBox(tr("log time axis"), this);
    auto* sweepControls = new QHBoxLayout;
    sweepControls->addWidget(new QLabel(tr("Time against:"), this));
    sweepControls->addWidget(sweepX_);
    sweepControls->addWidget(new QLabel(tr("Phase:"), this));
    sweepControls->addWidget(sweepMetric_);
    sweepControls->addWidget(sweepLogY_);
    sweepControls->addStretch();
    addPane({QStringLiteral("sweep"), tr("S&weep"),
             panePage(this, paneRow(this, sweepControls), sweepChart_), sweepChart_, nullptr});
    connect(sweepX_, &QComboBox::currentIndexChanged, this, [this] {
        if (auto d = dimensionFromKey(sweepX_->currentData().toString()))
            doc_.sweep()->setXDimension(*d);
    });
    connect(sweepMetric_, &QComboBox::currentIndexChanged, this, [this] {
        doc_.sweep()->setMetric(static_cast<Metric>(sweepMetric_->currentData().toInt()));
    });
    connect(sweepLogY_, &QCheckBox::toggled, sweepChart_, &SweepChart::setLogY);

    // Speedup: a baseline column against the others.
    speedupTable_ = new DataTableView(this);
    speedupTable_->setObjectName(QStringLiteral("speedupTable"));
    speedupTable_->setTitle(tr("Speedup"), QStringLiteral("speedup"));
    speedupTable_->setModel(doc_.speedup());
    speedupTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    speedupTable_->horizontalHeader()->setStretchLastSection(false);
    speedupDim_ = new QComboBox(this);
    speedupBaseline_ = new QComboBox(this);
    speedupMetric_ = new QComboBox(this);
    for (Metric m : {Metric::Total, Metric::Forward, Metric::Backward, Metric::Optimizer})
        speedupMetric_->addItem(metricName(m), static_cast<int>(m));
    auto* speedControls = new QHBoxLayout;
    speedControls->addWidget(new QLabel(tr("Compare:"), this));
    speedControls->addWidget(speedupDim_);
    speedControls->addWidget(new QLabel(tr("Baseline:"), this));
    speedControls->addWidget(speedupBaseline_);
    speedControls->addWidget(new QLabel(tr("Phase:"), this));
    speedControls->addWidget(speedupMetric_);
    speedControls->addStretch();
    speedupChart_ = new SpeedupChart(doc_.speedup(), this);
    speedupChart_->setObjectName(QStringLiteral("speedupChart"));
    auto* speedSplit = new QSplitter(Qt::Horizontal, this);
    speedSplit->addWidget(speedupTable_);
    speedSplit->addWidget(speedupChart_);
    speedSplit->setSizes({500, 500});  // half and half, whatever the table's own width
    addPane({QStringLiteral("speedup"), tr("S&peedup"),
             panePage(this, paneRow(this, speedControls), speedSplit), speedupChart_,
             speedupTable_});
    connect(speedupDim_, &QComboBox::activated, this, [this] {
        if (auto d = dimensionFromKey(speedupDim_->currentData().toString()))
            doc_.speedup()->setDimension(*d);
    });
    connect(speedupBaseline_, &QComboBox::activated, this,
            [this] { doc_.speedup()->setBaseline(speedupBaseline_->currentText()); });
    connect(speedupMetric_, &QComboBox::currentIndexChanged, this, [this] {
        doc_.speedup()->setMetric(static_cast<Metric>(speedupMetric_->currentData().toInt()));
    });
    connect(doc_.speedup(), &SpeedupModel::shapeChanged, this, &BenchView::refillSpeedupControls);

    // Breakdown: forward, backward and optimizer of each point, stacked.
    breakdownChart_ = new BreakdownChart(doc_.results(), this);
    breakdownChart_->setObjectName(QStringLiteral("breakdownChart"));
    addPane({QStringLiteral("breakdown"), tr("&Breakdown"),
             panePage(this, nullptr, breakdownChart_), breakdownChart_, nullptr});

    // Results: one row per point.
    resultTable_ = new DataTableView(this);
    resultTable_->setObjectName(QStringLiteral("resultTable"));
    resultTable_->setTitle(tr("Results"), QStringLiteral("results"));
    resultTable_->setModel(doc_.results());
    resultTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    resultTable_->horizontalHeader()->setStretchLastSection(false);
    // Any point can be profiled: the Profiler lab opens with its configuration and runs it.
    profileAct_ = new QAction(tr("Profile This Point"), resultTable_);
    profileAct_->setToolTip(
        tr("Opens the Profiler with the selected point's configuration and runs it"));
    profileAct_->setEnabled(false);
    resultTable_->addAction(profileAct_);
    connect(profileAct_, &QAction::triggered, this,
            [this] { profilePoint(resultTable_->currentIndex().row()); });
    auto* profileButton = new QPushButton(tr("&Profile This Point"), this);
    profileButton->setObjectName(QStringLiteral("profilePoint"));
    profileButton->setToolTip(profileAct_->toolTip());
    connect(profileAct_, &QAction::changed, profileButton,
            [this, profileButton] { profileButton->setEnabled(profileAct_->isEnabled()); });
    profileButton->setEnabled(false);
    connect(profileButton, &QPushButton::clicked, profileAct_, &QAction::trigger);
    connect(resultTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { profileAct_->setEnabled(current.isValid()); });
    connect(doc_.results(), &QAbstractItemModel::modelReset, this,
            [this] { profileAct_->setEnabled(false); });
    auto* sweepProfile = new QAction(tr("Profile This Point"), sweepChart_);
    sweepChart_->addAction(sweepProfile);
    connect(sweepProfile, &QAction::triggered, this,
            [this] { profileSweepPointAt(sweepChart_->contextMenuPosition()); });
    auto* speedupProfile = new QAction(tr("Profile This Point"), speedupTable_);
    speedupTable_->addAction(speedupProfile);
    connect(speedupProfile, &QAction::triggered, this, [this] {
        const QModelIndex at = speedupTable_->currentIndex();
        profilePoint(doc_.speedup()->sourceAt(at.row(), at.column()));
    });
    auto* resultControls = new QHBoxLayout;
    resultControls->addStretch();
    resultControls->addWidget(profileButton);
    addPane({QStringLiteral("results"), tr("&Results"),
             panePage(this, paneRow(this, resultControls), resultTable_), nullptr, resultTable_});

    memoryChart_ = new MemoryChart(doc_.steps(), this);
    memoryChart_->setObjectName(QStringLiteral("memoryChart"));
    memoryChart_->setResults(doc_.results());
    addPane({QStringLiteral("memory"), tr("&Memory"), panePage(this, nullptr, memoryChart_),
             memoryChart_, nullptr});

    compareWidget_ = new CompareWidget(&compare_, this);
    comparePane_ = addPane({QStringLiteral("compare"), tr("&Compare"), compareWidget_,
                            compareWidget_->chart(), compareWidget_->table()});

    connect(&doc_, &RunDocument::infoChanged, this, &BenchView::titleChanged);
    connect(tabs(), &QTabWidget::currentChanged, this, &BenchView::titleChanged);
    connect(doc_.results(), &QAbstractItemModel::rowsInserted, this, &BenchView::refillPointCombo);
    connect(doc_.results(), &QAbstractItemModel::modelReset, this, &BenchView::refillPointCombo);
    refillPointCombo();
    refillSpeedupControls();
    connectReplayer();
}

// ---------------------------------------------------------------- runs

BenchView::~BenchView() = default;

CompareChart* BenchView::compareChart() const { return compareWidget_->chart(); }

// A new run, replay or stored run replaces a comparison: the Compare pane is emptied, and one
// that was in front gives way to the steps, so the run streams where it can be seen.
void BenchView::endComparison() {
    if (!comparing_) return;
    comparing_ = false;
    compare_.clear();
    compareWidget_->table()->setTitle(tr("Comparison"), QStringLiteral("compare"));
    if (currentPane() == comparePane_) showPane(0);
    Q_EMIT titleChanged();
}

void BenchView::beginRun(const LabJob& job) {
    replayer_.stop();
    endComparison();
    doc_.begin(RunDocument::Source::Live, job.label, job.point_count);
    pointCombo_->setCurrentIndex(0);
}

void BenchView::runStarted(qint64 storeRunId, const Environment& env) {
    doc_.setStoreRunId(storeRunId);
    doc_.setEnvironment(env);
}

void BenchView::addItems(const QList<QVariant>& items) {
    // Steps come in bursts: consecutive steps of one point go to the models together.
    QList<StepSample> steps;
    int stepsPoint = -1;
    auto flush = [&] {
        if (!steps.isEmpty()) doc_.addSteps(stepsPoint, steps);
        steps.clear();
    };
    for (const QVariant& item : items) {
        if (item.canConvert<BenchStep>()) {
            const auto s = item.value<BenchStep>();
            if (s.point != stepsPoint) flush();
            stepsPoint = s.point;
            steps.append(s.sample);
            continue;
        }
        flush();
        if (item.canConvert<BenchPointStarted>()) {
            const auto p = item.value<BenchPointStarted>();
            doc_.startPoint(p.index, p.config);
            Q_EMIT statusText(tr("Running point %1 of %2: %3")
                                  .arg(p.index + 1)
                                  .arg(p.count)
                                  .arg(describeConfig(p.config)));
            Q_EMIT logLine(
                tr("Point %1/%2: %3").arg(p.index + 1).arg(p.count).arg(describeConfig(p.config)));
        } else if (item.canConvert<BenchPointFinished>()) {
            const auto f = item.value<BenchPointFinished>();
            const BenchResult& r = f.result;
            doc_.finishPoint(f.index, r);
            if (r.status == Status::Ok) {
                // The phases the mode runs: a forward-only point has no backward of 0 ms.
                QStringList phases{tr("forward %1").arg(formatMs(r.forward.mean))};
                if (r.config.mode != Mode::Forward)
                    phases << tr("backward %1").arg(formatMs(r.backward.mean));
                if (r.config.mode == Mode::Train)
                    phases << tr("optimizer %1").arg(formatMs(r.optimizer.mean));
                Q_EMIT logLine(tr("Point %1: total %2 ± %3 ms per step (%4)")
                                   .arg(f.index + 1)
                                   .arg(formatMs(r.total.mean), formatMs(r.total.std),
                                        phases.join(QStringLiteral(", "))));
            } else
                Q_EMIT logLine(tr("Point %1: %2 %3")
                                   .arg(f.index + 1)
                                   .arg(qstr(toString(r.status)), qstr(r.error)));
        }
    }
    flush();
}

bool BenchView::showStored(const StoredRun& run, QString* error) {
    const StoredBenchRun bench = benchRunFrom(run);
    if (!bench.error.isEmpty()) {
        if (error) *error = bench.error;
        return false;
    }
    replayer_.stop();
    endComparison();
    doc_.load(bench);
    Q_EMIT logLine(tr("Opened run %1 (%2 points)").arg(run.info.id).arg(bench.points.size()));
    return true;
}

void BenchView::replay(const StoredRun& stored, double speed) {
    StoredBenchRun run = benchRunFrom(stored);
    if (!run.error.isEmpty()) {
        Q_EMIT logLine(tr("Could not replay run %1: %2").arg(stored.info.id).arg(run.error));
        Q_EMIT replayFinished(true);
        return;
    }
    endComparison();
    doc_.begin(RunDocument::Source::Replay, qstr(run.info.label),
               static_cast<int>(run.points.size()));
    doc_.setStoreRunId(run.info.id);
    if (!run.points.empty()) doc_.setEnvironment(run.points.front().environment);
    pointCombo_->setCurrentIndex(0);
    Q_EMIT logLine(tr("Replaying run %1 at %2× its recorded pace").arg(run.info.id).arg(speed));
    showPane(paneIndex(QStringLiteral("steps")));
    replayer_.start(std::move(run), speed);
}

void BenchView::connectReplayer() {
    connect(&replayer_, &Replayer::pointStarted, this,
            [this](int index, int count, const PointConfig& c) {
                doc_.startPoint(index, c);
                Q_EMIT statusText(tr("Replaying point %1 of %2: %3")
                                      .arg(index + 1)
                                      .arg(count)
                                      .arg(describeConfig(c)));
            });
    connect(&replayer_, &Replayer::stepsArrived, this,
            [this](int point, const QList<StepSample>& steps) { doc_.addSteps(point, steps); });
    connect(&replayer_, &Replayer::pointFinished, this,
            [this](int index, const BenchResult& r) { doc_.finishPoint(index, r); });
    connect(&replayer_, &Replayer::progress, this, &BenchView::progress);
    connect(&replayer_, &Replayer::finished, this, [this](bool stopped) {
        Q_EMIT logLine(stopped ? tr("Replay stopped") : tr("Replay finished"));
        Q_EMIT statusText(stopped ? tr("Replay stopped") : tr("Replay finished"));
        Q_EMIT replayFinished(stopped);
    });
}

bool BenchView::compare(const StoredRun& a, const StoredRun& b, QString* error) {
    StoredBenchRun ra = benchRunFrom(a), rb = benchRunFrom(b);
    for (const StoredBenchRun* r : {&ra, &rb})
        if (!r->error.isEmpty()) {
            if (error) *error = r->error;
            return false;
        }
    compare_.setRuns({ra.info, std::move(ra.points)}, {rb.info, std::move(rb.points)});
    comparing_ = true;
    compareWidget_->table()->setTitle(
        tr("Comparison"), QStringLiteral("compare-run%1-vs-run%2").arg(a.info.id).arg(b.info.id));
    showPane(comparePane_);
    Q_EMIT titleChanged();
    Q_EMIT logLine(tr("Comparing run %1 (A) with run %2 (B)").arg(a.info.id).arg(b.info.id));
    return true;
}

// Every view setting back to its default, so that one preset's choices (a log time axis,
// a speedup baseline) do not carry over into the next.
void BenchView::resetViewSettings() {
    doc_.speedup()->setDimension(std::nullopt);
    doc_.speedup()->setBaseline({});
    speedupMetric_->setCurrentIndex(0);
    sweepX_->setCurrentIndex(0);
    sweepMetric_->setCurrentIndex(0);
    sweepLogY_->setChecked(false);
    overlay_->setChecked(false);
    pointCombo_->setCurrentIndex(0);
}

void BenchView::applyPresetView(const QJsonObject& view) {
    resetViewSettings();
    const auto dimension = dimensionFromKey(view.value(QLatin1String("dimension")).toString());
    if (dimension) {
        doc_.speedup()->setDimension(*dimension);
        const QString baseline = view.value(QLatin1String("baseline")).toString();
        if (!baseline.isEmpty()) doc_.speedup()->setBaseline(baseline);
    }
    if (auto x = dimensionFromKey(view.value(QLatin1String("x")).toString())) {
        const int i = sweepX_->findData(dimensionKey(*x));
        if (i >= 0) sweepX_->setCurrentIndex(i);
    }
    sweepLogY_->setChecked(view.value(QLatin1String("log_time")).toBool(false));
    overlay_->setChecked(view.value(QLatin1String("overlay")).toBool(false));
    LabView::applyPresetView(view);
    // Modes do different work: a preset that compares them gets the breakdown of the step,
    // not a speedup.
    if (dimension && !SpeedupModel::comparesAsSpeedup(*dimension) &&
        currentPane() == paneIndex(QStringLiteral("speedup")))
        showPane(paneIndex(QStringLiteral("breakdown")));
}

// ---------------------------------------------------------------- exports

ExportContext BenchView::compareContext() const {
    ExportContext ctx;
    if (!compare_.hasRuns()) return ctx;
    const auto& a = compare_.sideA();
    const auto& b = compare_.sideB();
    ctx.title = tr("Comparison of run %1 (A) and run %2 (B)").arg(a.info.id).arg(b.info.id);
    if (!a.points.empty()) ctx.environment = a.points.front().environment;
    std::vector<PointConfig> configs;
    for (const auto& p : a.points) configs.push_back(p.config);
    ctx.configuration = describeSweep(configs);
    if (!b.points.empty())
        ctx.notes
            << tr("Run B environment: %1")
                   .arg(environmentLines(b.points.front().environment).join(QStringLiteral("; ")));
    return ctx;
}

ExportContext BenchView::exportContext(int pane) const {
    return pane == comparePane_ && comparing_ ? compareContext() : doc_.exportContext();
}

bool BenchView::showsComparison() const { return comparing_ && currentPane() == comparePane_; }

QString BenchView::runTitle() const {
    return showsComparison() ? compareContext().title : doc_.title();
}

qint64 BenchView::storeRunId() const { return showsComparison() ? 0 : doc_.storeRunId(); }

QList<ReportPart> BenchView::reportParts() const {
    QList<ReportPart> parts;
    auto& doc = const_cast<RunDocument&>(doc_);  // the models are read, not changed
    // Every point's step chart, not only the one on screen.
    const int points = doc.results()->rowCount();
    while (static_cast<int>(pointCharts_.size()) < points)
        pointCharts_.push_back(
            std::make_unique<StepChartAtPoint>(stepChart_, static_cast<int>(pointCharts_.size())));
    if (points == 0) parts << ReportPart{tr("Step timings"), stepChart_, nullptr};
    for (int p = 0; p < points; ++p)
        parts << ReportPart{tr("Step timings, point %1 of %2").arg(p + 1).arg(points),
                            pointCharts_[static_cast<size_t>(p)].get(), nullptr};
    if (points > 1) parts << ReportPart{tr("Where the time goes"), breakdownChart_, nullptr};
    // The sweep chart says something when its x varies (not for a sweep over modes only).
    const std::vector<Dimension> varying = varyingDimensions(doc.results()->configs());
    if (!doc.sweep()->rows().empty() &&
        std::find(varying.begin(), varying.end(), doc.sweep()->xDimension()) != varying.end())
        parts << ReportPart{tr("Sweep"), sweepChart_, nullptr};
    auto* speedup = doc.speedup();
    if (!speedup->candidates().empty())
        parts << ReportPart{tr("Speedup (%1, baseline %2)")
                                .arg(dimensionName(speedup->dimension()), speedup->baseline()),
                            speedupChart_, speedup};
    parts << ReportPart{tr("Results"), nullptr, doc.results()};
    parts << ReportPart{tr("Memory per step"), memoryChart_, nullptr};
    return parts;
}

// ---------------------------------------------------------------- controls

void BenchView::refillPointCombo() {
    const int wanted = pointCombo_->currentData().toInt();
    const QSignalBlocker block(pointCombo_);
    pointCombo_->clear();
    pointCombo_->addItem(tr("follow the running point"), -1);
    const auto& entries = doc_.results()->entries();
    for (size_t i = 0; i < entries.size(); ++i)
        pointCombo_->addItem(
            QStringLiteral("%1: %2").arg(i + 1).arg(describeConfig(entries[i].result.config)),
            static_cast<int>(i));
    const int idx = pointCombo_->findData(wanted);
    pointCombo_->setCurrentIndex(idx < 0 ? 0 : idx);
    stepChart_->setPoint(pointCombo_->currentData().toInt());
}

void BenchView::refillSpeedupControls() {
    SpeedupModel* m = doc_.speedup();
    {
        const QSignalBlocker b1(speedupDim_);
        speedupDim_->clear();
        auto candidates = m->candidates();
        if (candidates.empty()) candidates.push_back(m->dimension());
        for (Dimension d : candidates) speedupDim_->addItem(dimensionName(d), dimensionKey(d));
        speedupDim_->setCurrentIndex(
            std::max(0, speedupDim_->findData(dimensionKey(m->dimension()))));
    }
    {
        const QSignalBlocker b2(speedupBaseline_);
        speedupBaseline_->clear();
        speedupBaseline_->addItems(m->values());
        speedupBaseline_->setCurrentIndex(
            std::max(0, static_cast<int>(m->values().indexOf(m->baseline()))));
    }
}

bool BenchView::profilePoint(int row) {
    const auto& entries = doc_.results()->entries();
    if (row < 0 || row >= static_cast<int>(entries.size())) return false;
    const PointConfig& point = entries[static_cast<size_t>(row)].result.config;
    const QJsonObject json =
        QJsonDocument::fromJson(QByteArray::fromStdString(dumpJson(toJson(point)))).object();
    // The profiler lab by its id (its entry in labs.cpp takes the point).
    Q_EMIT openPointInLab(QStringLiteral("profile"), json,
                          tr("Profile of point %1: %2").arg(row + 1).arg(describeConfig(point)),
                          true);
    return true;
}

bool BenchView::profileSweepPointAt(const QPointF& chartPos) {
    return profilePoint(sweepChart_->sourceAt(chartPos));
}

}  // namespace ts::ui
