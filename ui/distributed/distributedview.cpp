#include "ui/distributed/distributedview.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStyle>
#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/table.h"  // formatBytes
#include "ui/common/chartstyle.h"
#include "ui/common/format.h"
#include "ui/common/panes.h"
#include "ui/common/tableview.h"
#include "ui/distributed/bucketmodelchart.h"
#include "ui/distributed/distributedcharts.h"
#include "ui/distributed/distributedpanel.h"
#include "ui/distributed/distributedstore.h"
#include "ui/distributed/strategychart.h"
#include "ui/distributed/strategysummary.h"

namespace ts::ui {

namespace {

QStandardItem* bytesCell(int64_t bytes) {
    return valueCell(qstr(formatBytes(bytes)), static_cast<qlonglong>(bytes));
}
QStandardItem* msCell(double ms) { return valueCell(formatMs(ms), ms); }
QStandardItem* numberCell(double v, int decimals) {
    return valueCell(QString::number(v, 'f', decimals), v);
}
QStandardItem* dash() { return cell(QStringLiteral("—"), true); }

// The strategy, and a compiled step named so (see Note [compiled data-parallel step]).
std::string strategyLabel(const DdpSpec& d) {
    std::string s = d.strategy;
    if (d.exec != ExecMode::Eager) s.append(" ").append(toString(d.exec));
    return s;
}

QString statusLine(int index, const DistributedResult& r) {
    if (r.status == Status::Ok) return {};
    if (r.status == Status::Cancelled)
        return QObject::tr("Point %1 was stopped: %2").arg(index + 1).arg(qstr(r.error));
    if (r.failed_rank >= 0)
        return QObject::tr("Point %1 failed on rank %2: %3 — the other ranks were stopped.")
            .arg(index + 1)
            .arg(r.failed_rank)
            .arg(qstr(r.error));
    return QObject::tr("Point %1 %2: %3")
        .arg(index + 1)
        .arg(qstr(toString(r.status)), qstr(r.error));
}

}  // namespace

DistributedView::DistributedView(QWidget* parent) : LabView(parent) {
    registerDistributedMetaTypes();
    qRegisterMetaType<DistributedResult>();
    lanes_ = new LanesChart(this);
    lanes_->setObjectName(QStringLiteral("distributedLanes"));
    lanes_->setMinimumHeight(220);
    allreduce_ = new AllreduceChart(this);
    allreduce_->setObjectName(QStringLiteral("distributedAllreduce"));
    memory_ = new RankMemoryChart(this);
    memory_->setObjectName(QStringLiteral("distributedMemory"));
    strategyChart_ = new StrategyChart(this);
    strategyChart_->setObjectName(QStringLiteral("distributedStrategyChart"));
    strategyChart_->setMinimumHeight(220);
    strategyText_ = new QLabel(this);
    strategyText_->setWordWrap(true);
    strategyText_->setObjectName(QStringLiteral("distributedStrategyText"));
    bucketChart_ = new BucketModelChart(this);
    bucketChart_->setObjectName(QStringLiteral("distributedBucketModelChart"));
    bucketChart_->setMinimumHeight(220);
    bucketText_ = new QLabel(this);
    bucketText_->setWordWrap(true);
    bucketText_->setObjectName(QStringLiteral("distributedBucketModelText"));

    auto table = [this](const QString& name, const QString& title, const QString& stem,
                        QStandardItemModel*& model) {
        model = new QStandardItemModel(this);
        auto* t = new DataTableView(this);
        t->setObjectName(name);
        t->setTitle(title, stem);
        t->setModel(model);
        return t;
    };
    allreduceTable_ = table(QStringLiteral("distributedAllreduceTable"), tr("All-reduce by size"),
                            QStringLiteral("distributed-allreduce"), allreduceModel_);
    strategyTable_ = table(QStringLiteral("distributedStrategies"), tr("DDP strategies compared"),
                           QStringLiteral("distributed-strategies"), strategies_);
    memoryTable_ = table(QStringLiteral("distributedMemoryTable"), tr("Memory per rank"),
                         QStringLiteral("distributed-memory"), memoryModel_);
    pointTable_ = table(QStringLiteral("distributedPoints"), tr("Points"),
                        QStringLiteral("distributed-points"), pointsModel_);
    bucketTable_ = table(QStringLiteral("distributedBucketModel"), tr("Bucket-size model"),
                         QStringLiteral("distributed-bucket-model"), bucketModel_);
    pointTable_->horizontalHeader()->setStretchLastSection(true);  // the error

    // The lanes: the point chooser, the failure banner, the chart, what it shows.
    auto* top = new QWidget(this);
    auto* topRows = new QVBoxLayout(top);
    topRows->setContentsMargins(0, 0, 0, 0);
    auto* chooser = new QHBoxLayout;
    point_ = new QComboBox(top);
    point_->setObjectName(QStringLiteral("distributedPoint"));
    connect(point_, &QComboBox::activated, this, [this](int row) {
        followLive_ = false;
        showPoint(point_->itemData(row).toInt());
    });
    chooser->addWidget(new QLabel(tr("Point:"), top));
    chooser->addWidget(point_, 1);
    // See Note [one trace of every rank]: a point run with traced steps has one trace of its
    // ranks, a process track each, for Perfetto.
    traceButton_ = new QPushButton(tr("Save Merged &Trace…"), top);
    traceButton_->setObjectName(QStringLiteral("distributedSaveTrace"));
    traceButton_->setEnabled(false);
    connect(traceButton_, &QPushButton::clicked, this, [this] { saveMergedTraceInteractive(); });
    chooser->addWidget(traceButton_);
    topRows->addLayout(chooser);
    banner_ = new QLabel(top);
    banner_->setObjectName(QStringLiteral("distributedBanner"));
    banner_->setWordWrap(true);
    banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Red for a failure; grey for a point that was stopped.
    banner_->setStyleSheet(
        QStringLiteral("QLabel#distributedBanner { background: #c62828; color: white; font-weight: "
                       "bold; padding: 6px; border-radius: 3px; }"
                       "QLabel#distributedBanner[stopped=\"true\"] { background: #616161; }"));
    banner_->hide();
    topRows->addWidget(banner_);
    lanesText_ = new QLabel(this);
    lanesText_->setWordWrap(true);
    lanesText_->setObjectName(QStringLiteral("distributedLanesText"));

    log_ = new QPlainTextEdit(this);
    log_->setObjectName(QStringLiteral("distributedLog"));
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(20000);

    addPane({QStringLiteral("lanes"), tr("&Lanes"),
             panePage(this, top, lanes_, nullptr, lanesText_), lanes_, nullptr});
    addPane({QStringLiteral("allreduce"), tr("&All-reduce"),
             panePage(this, nullptr, allreduce_, allreduceTable_), allreduce_, allreduceTable_});
    addPane({QStringLiteral("strategies"), tr("&Strategies"),
             panePage(this, nullptr, strategyChart_, strategyTable_, strategyText_), strategyChart_,
             strategyTable_});
    addPane({QStringLiteral("buckets"), tr("&Buckets"),
             panePage(this, nullptr, bucketChart_, bucketTable_, bucketText_), bucketChart_,
             bucketTable_});
    addPane({QStringLiteral("memory"), tr("&Memory"),
             panePage(this, nullptr, memory_, memoryTable_), memory_, memoryTable_});
    addPane({QStringLiteral("log"), tr("L&og"), panePage(this, nullptr, pointTable_, log_), nullptr,
             pointTable_});

    throttle_ = new RedrawThrottle([this] { redrawLanes(); }, this);
    begin({}, {});
}

void DistributedView::begin(const QString& label, const std::string& spec_json) {
    points_.clear();
    finished_.clear();
    shown_ = -1;
    followLive_ = true;
    label_ = label;
    storeRunId_ = 0;
    env_ = {};
    point_->clear();
    traceButton_->setEnabled(false);
    log_->clear();
    banner_->hide();
    lanesText_->clear();
    lanes_->clear(tr("Run a DDP point: each rank's steps appear here as they arrive"));
    configuration_.clear();
    configurationJson_.clear();
    if (!spec_json.empty()) {
        const auto spec = parseJsonOrDiscarded(spec_json);
        if (spec.is_object()) {
            configuration_ = DistributedPanel::describeSpec(
                QJsonDocument::fromJson(QByteArray::fromStdString(spec_json)).object());
            configurationJson_ =
                qstr(spec.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
        }
    }
    fillAllreduce();
    fillStrategies();
    fillMemory();
    fillBucketModel();
    fillPoints();
    Q_EMIT titleChanged();
}

void DistributedView::beginRun(const LabJob& job) { begin(job.label, job.spec_json); }

void DistributedView::runStarted(qint64 storeRunId, const Environment& env) {
    storeRunId_ = storeRunId;
    env_ = env;
    Q_EMIT titleChanged();
}

DistributedResult& DistributedView::pointAt(int index) {
    if (index >= static_cast<int>(points_.size())) {
        points_.resize(static_cast<size_t>(index) + 1);
        finished_.resize(points_.size(), false);
    }
    return points_[static_cast<size_t>(index)];
}

void DistributedView::addLog(const QString& line) {
    log_->appendPlainText(line);
    Q_EMIT logLine(line);
}

void DistributedView::addItems(const QList<QVariant>& items) {
    bool allreduceChanged = false, finished = false;
    for (const QVariant& item : items) {
        const QMetaType type = item.metaType();
        if (type == QMetaType::fromType<DistPointStarted>()) {
            const auto s = item.value<DistPointStarted>();
            if (s.index < 0) continue;
            DistributedResult& r = pointAt(s.index);
            r.point = s.point;
            addLog(tr("Point %1 of %2: %3")
                       .arg(s.index + 1)
                       .arg(s.count)
                       .arg(qstr(pointHeadline(s.point))));
            updateChooser(s.index);
            if (followLive_) showPoint(s.index);
        } else if (type == QMetaType::fromType<DistRankReady>()) {
            const auto s = item.value<DistRankReady>();
            if (s.index < 0 || s.rank < 0) continue;
            DistributedResult& r = pointAt(s.index);
            if (r.rank_devices.size() <= static_cast<size_t>(s.rank))
                r.rank_devices.resize(static_cast<size_t>(s.rank) + 1);
            r.rank_devices[static_cast<size_t>(s.rank)] = s.device;
            log_->appendPlainText(tr("  rank %1 ready on %2").arg(s.rank).arg(qstr(s.device)));
        } else if (type == QMetaType::fromType<DistStep>()) {
            const auto s = item.value<DistStep>();
            if (s.index < 0) continue;
            pointAt(s.index).steps.push_back(s.row);
            if (s.index == shown_) throttle_->request();
        } else if (type == QMetaType::fromType<DistAllreduce>()) {
            const auto s = item.value<DistAllreduce>();
            if (s.index < 0) continue;
            pointAt(s.index).allreduce.push_back(s.row);
            allreduceChanged = true;
        } else if (type == QMetaType::fromType<DistPointFinished>()) {
            const auto s = item.value<DistPointFinished>();
            if (s.index < 0) continue;
            pointAt(s.index) = s.result;
            finished_[static_cast<size_t>(s.index)] = true;
            if (env_.device_name.empty()) env_ = s.result.environment;
            const QString failure = statusLine(s.index, s.result);
            addLog(failure.isEmpty() ? tr("Point %1 finished").arg(s.index + 1) : failure);
            updateChooser(s.index);
            if (s.index == shown_) updateTraceButton();
            finished = true;
            allreduceChanged = allreduceChanged || !s.result.allreduce.empty();
            // A failure is shown where it happened, whichever point was being looked at.
            if (s.result.status == Status::Failed || s.result.status == Status::OOM)
                showPoint(s.index);
            else if (s.index == shown_)
                throttle_->request();
        }
    }
    if (allreduceChanged) fillAllreduce();
    if (finished) {
        fillStrategies();
        fillMemory();
        fillBucketModel();
        fillPoints();
        updateBanner();
    }
}

void DistributedView::flush() { throttle_->flush(); }

void DistributedView::updateChooser(int index) {
    const DistributedResult& r = points_[static_cast<size_t>(index)];
    QString text = QStringLiteral("%1: %2").arg(index + 1).arg(qstr(pointHeadline(r.point)));
    if (finished_[static_cast<size_t>(index)] && r.status != Status::Ok)
        text += QStringLiteral(" — ") + qstr(toString(r.status));
    const int row = point_->findData(index);
    if (row >= 0)
        point_->setItemText(row, text);
    else
        point_->addItem(text, index);
}

void DistributedView::showPoint(int index) {
    if (index < 0 || static_cast<size_t>(index) >= points_.size()) return;
    shown_ = index;
    const int row = point_->findData(index);
    if (row < 0) updateChooser(index);
    point_->setCurrentIndex(point_->findData(index));
    redrawLanes();
    updateBanner();
    updateTraceButton();
    Q_EMIT titleChanged();
}

void DistributedView::updateTraceButton() {
    const bool point = shown_ >= 0 && static_cast<size_t>(shown_) < points_.size();
    const std::string file = point ? points_[static_cast<size_t>(shown_)].trace_file : "";
    const bool there = !file.empty() && QFileInfo(qstr(file)).isFile();
    traceButton_->setEnabled(there);
    if (there)
        traceButton_->setToolTip(
            tr("Copies this point's trace of every rank (a process track per rank: its CPU ops "
               "and, on CUDA, its streams' kernels, NCCL's beside backward's) for "
               "ui.perfetto.dev.\nStored as %1")
                .arg(qstr(file)));
    else if (!file.empty())
        traceButton_->setToolTip(tr("This point's merged trace is gone: %1").arg(qstr(file)));
    else
        traceButton_->setToolTip(
            tr("A DDP point run with traced steps (trainscope-cli distributed ddp "
               "--trace-steps K) has every rank's ops and kernels on one timeline"));
}

bool DistributedView::saveMergedTrace(const QString& path, QString* error) const {
    const bool point = shown_ >= 0 && static_cast<size_t>(shown_) < points_.size();
    const QString file = point ? qstr(points_[static_cast<size_t>(shown_)].trace_file) : QString();
    if (file.isEmpty()) {
        if (error) *error = tr("the shown point has no merged trace");
        return false;
    }
    if (!QFileInfo(file).isFile()) {
        if (error) *error = tr("%1 is not there any more").arg(file);
        return false;
    }
    if (QFileInfo(path).absoluteFilePath() == QFileInfo(file).absoluteFilePath()) return true;
    if (QFile::exists(path) && !QFile::remove(path)) {
        if (error) *error = tr("%1 cannot be replaced").arg(path);
        return false;
    }
    if (!QFile::copy(file, path)) {
        if (error) *error = tr("%1 cannot be copied to %2").arg(file, path);
        return false;
    }
    return true;
}

void DistributedView::saveMergedTraceInteractive() {
    const QString stem =
        storeRunId_ > 0 ? QStringLiteral("ddp-run%1-point%2.json").arg(storeRunId_).arg(shown_ + 1)
                        : QStringLiteral("ddp-point%1.json").arg(shown_ + 1);
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Merged Trace"), stem,
                                                      tr("Chrome / Perfetto trace (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    const bool ok = saveMergedTrace(path, &error);
    Q_EMIT logLine(ok ? tr("Trace written to %1 (open it in ui.perfetto.dev)").arg(path)
                      : tr("Trace not written: %1").arg(error));
    Q_EMIT statusText(ok ? tr("Trace written") : tr("Trace not written (see the log)"));
}

void DistributedView::redrawLanes() {
    if (shown_ < 0 || static_cast<size_t>(shown_) >= points_.size()) return;
    const DistributedResult& r = points_[static_cast<size_t>(shown_)];
    if (r.point.experiment == DistExperiment::Allreduce) {
        lanes_->clear(tr("An all-reduce point: its bandwidth is in the All-reduce pane"));
        lanesText_->clear();
        return;
    }
    lanes_->setSteps(r.steps, r.point.world_size, r.point.ddp.strategy);
    QString text = lanes_->explanation();
    if (!text.isEmpty() && r.point.backend == dist::CommBackend::Nccl)
        text +=
            tr(" On NCCL the hidden part is the collectives' device time less the wait: a bound "
               "from below.");
    lanesText_->setText(text);
}

void DistributedView::updateBanner() {
    if (shown_ < 0 || static_cast<size_t>(shown_) >= points_.size() ||
        !finished_[static_cast<size_t>(shown_)]) {
        banner_->hide();
        return;
    }
    const DistributedResult& r = points_[static_cast<size_t>(shown_)];
    const QString line = statusLine(shown_, r);
    const bool stopped = r.status == Status::Cancelled;
    if (banner_->property("stopped").toBool() != stopped) {
        banner_->setProperty("stopped", stopped);
        banner_->style()->unpolish(banner_);
        banner_->style()->polish(banner_);
    }
    banner_->setText(line);
    banner_->setVisible(!line.isEmpty());
}

void DistributedView::fillAllreduce() {
    std::vector<dist::AllreduceRow> rows;
    for (const auto& p : points_) rows.insert(rows.end(), p.allreduce.begin(), p.allreduce.end());
    allreduce_->setRows(rows);
    allreduceModel_->clear();
    allreduceModel_->setHorizontalHeaderLabels(
        {tr("ranks"), tr("backend"), tr("dtype"), tr("size"), tr("iterations"), tr("time ms"),
         tr("fastest rank's mean ms"), tr("algbw GB/s"), tr("busbw GB/s"), tr("ideal ms")});
    // See Note [tables other programs read]: the CLI's names, bytes said.
    setCsvHeaders(allreduceModel_, {"world_size", "backend", "dtype", "bytes", "iters", "time_ms",
                                    "rank_mean_min_ms", "algbw_gbps", "busbw_gbps", "ideal_ms"});
    for (const auto& r : rows) {
        auto* size =
            valueCell(qstr(dist::formatByteSize(r.bytes)), static_cast<qlonglong>(r.bytes));
        allreduceModel_->appendRow({cell(QString::number(r.world_size), true),
                                    cell(QString::fromLatin1(dist::backendName(r.backend))),
                                    cell(QString::fromLatin1(dist::dtypeName(r.dtype))), size,
                                    cell(QString::number(r.iters), true), msCell(r.time_ms),
                                    msCell(r.rank_mean_min_ms), numberCell(r.algbw_gbps, 2),
                                    numberCell(r.busbw_gbps, 2),
                                    r.ideal_ms > 0 ? msCell(r.ideal_ms) : dash()});
    }
    allreduceTable_->fitColumnsToHeaders();
}

void DistributedView::fillStrategies() {
    strategies_->clear();
    strategies_->setHorizontalHeaderLabels({tr("point"),
                                            tr("strategy"),
                                            tr("bucket MiB"),
                                            tr("sharded"),
                                            tr("precision"),
                                            tr("ranks"),
                                            tr("status"),
                                            tr("check"),
                                            tr("step ms"),
                                            tr("± std"),
                                            tr("forward"),
                                            tr("backward"),
                                            tr("comm wait"),
                                            tr("hidden ms"),
                                            tr("hidden share"),
                                            tr("optimizer"),
                                            tr("all-reduced bytes"),
                                            tr("peak memory"),
                                            tr("loss"),
                                            tr("sent per rank")});
    setCsvHeaders(
        strategies_,
        {"point",        "strategy",    "bucket_mb",         "sharded",    "precision",
         "world_size",   "status",      "check_max_diff",    "step_ms",    "step_std_ms",
         "forward_ms",   "backward_ms", "comm_wait_ms",      "hidden_ms",  "hidden_share_percent",
         "optimizer_ms", "comm_bytes",  "peak_memory_bytes", "final_loss", "sent_bytes"});
    for (size_t i = 0; i < points_.size(); ++i) {
        const DistributedResult& r = points_[i];
        if (r.point.experiment != DistExperiment::Ddp || !finished_[i]) continue;
        const DistributedPoint& p = r.point;
        const DdpSummary s = summarizeDdp(r);
        const bool measured = s.steps > 0;
        auto ms = [&](double v) { return measured ? msCell(v) : dash(); };
        QList<QStandardItem*> row{
            cell(QString::number(i + 1), true), cell(qstr(strategyLabel(p.ddp))),
            strategyTraits(p.ddp.strategy).bucket_size
                ? numberCell(p.ddp.bucket_mb, p.ddp.bucket_mb < 10 ? 1 : 0)
                : dash(),
            // fsdp, fsdp2 and yours-fsdp shard weights, gradients and the optimizer's state;
            // the course's sharding and zero1 the optimizer's state, each named by what it
            // communicates.
            cell(qstr(ddpShardingName(p.ddp))), cell(qstr(toString(p.ddp.precision))),
            cell(QString::number(p.world_size), true), cell(qstr(toString(r.status))),
            // See Note [your DDP classes]: the course's check, where it ran, beside the status
            // (a failed check is why a point failed).
            !r.check.ran
                ? dash()
                : valueCell(r.check.passed ? tr("pass (%1)").arg(r.check.max_diff, 0, 'g', 2)
                                           : tr("FAIL (%1)").arg(r.check.max_diff, 0, 'g', 2),
                            r.check.max_diff),
            ms(s.step_ms), ms(s.step_std_ms), ms(s.forward_ms), ms(s.backward_ms),
            measured && s.comm_wait_ms >= 0 ? msCell(s.comm_wait_ms) : dash(),
            measured && s.hidden_ms >= 0 ? msCell(s.hidden_ms) : dash(),
            measured && s.hidden_share >= 0 ? numberCell(100.0 * s.hidden_share, 0) : dash(),
            ms(s.optimizer_ms), measured ? bytesCell(s.comm_bytes) : dash(),
            measured && s.memory_peak > 0 ? bytesCell(s.memory_peak) : dash(),
            measured ? numberCell(s.final_global_loss, 4) : dash(),
            // See Note [bytes sent per step].
            measured && s.sent_bytes > 0 ? bytesCell(s.sent_bytes) : dash()};
        constexpr int kCheck = 7, kHiddenShare = 14;
        if (measured && s.hidden_share >= 0)
            row[kHiddenShare]->setText(row[kHiddenShare]->text() + QLatin1Char('%'));
        if (r.status != Status::Ok) {
            row[6]->setToolTip(qstr(r.error + (r.traceback.empty() ? "" : "\n\n" + r.traceback)));
            row[6]->setBackground(QColor(0xd3, 0x2f, 0x2f, 60));
        }
        if (r.check.ran) {
            row[kCheck]->setToolTip(qstr(r.what + (r.what.empty() ? "" : "\n") + r.check.message));
            if (!r.check.passed) row[kCheck]->setBackground(QColor(0xd3, 0x2f, 0x2f, 60));
        }
        strategies_->appendRow(row);
    }
    strategyTable_->fitColumnsToHeaders();
    strategyChart_->setBars(strategyBars(points_, finished_));
    strategyText_->setText(strategyChart_->explanation());
    // A point's strategy and its check read whole ("yours-individual", "pass (1.5e-08)"): a few
    // rows, measured.
    strategyTable_->resizeColumnToContents(1);
    strategyTable_->resizeColumnToContents(7);
}

void DistributedView::fillMemory() {
    // DDP points, the same configuration sharded and not side by side.
    std::vector<size_t> order;
    for (size_t i = 0; i < points_.size(); ++i)
        if (points_[i].point.experiment == DistExperiment::Ddp && !points_[i].steps.empty() &&
            finished_[i])
            order.push_back(i);
    const auto& names = ddpStrategyNames();
    auto rankOf = [&](const std::string& s) {
        return std::find(names.begin(), names.end(), s) - names.begin();
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const DdpSpec &x = points_[a].point.ddp, &y = points_[b].point.ddp;
        return std::tuple(x.precision, rankOf(x.strategy), x.bucket_mb, x.shard_optimizer) <
               std::tuple(y.precision, rankOf(y.strategy), y.bucket_mb, y.shard_optimizer);
    });
    std::vector<RankMemoryBar> bars;
    memoryModel_->clear();
    memoryModel_->setHorizontalHeaderLabels(
        {tr("point"), tr("configuration"), tr("rank"), tr("parameters"), tr("gradients"),
         tr("optimizer state"), tr("communication buffers"), tr("total"), tr("allocator peak")});
    setCsvHeaders(memoryModel_, {"point", "configuration", "rank", "parameter_bytes",
                                 "gradient_bytes", "optimizer_state_bytes", "comm_buffer_bytes",
                                 "total_bytes", "memory_peak_bytes"});
    int group = 0;
    for (size_t i : order) {
        const DistributedResult& r = points_[i];
        // Each rank's last step (the sizes hold from step to step; the peak is the step's).
        std::map<int, const DdpStepRow*> last;
        for (const auto& row : r.steps) last[row.rank] = &row;
        for (const auto& [rank, row] : last) {
            RankMemoryBar b{QStringLiteral("%1: %2").arg(i + 1).arg(ddpPointName(r.point)),
                            group,
                            rank,
                            row->parameter_bytes,
                            row->gradient_bytes,
                            row->optimizer_state_bytes,
                            row->comm_buffer_bytes};
            bars.push_back(b);
            memoryModel_->appendRow(
                {cell(QString::number(i + 1), true), cell(ddpPointName(r.point)),
                 cell(QString::number(rank), true), bytesCell(b.parameters), bytesCell(b.gradients),
                 bytesCell(b.optimizer_state), bytesCell(b.comm_buffers),
                 bytesCell(b.parameters + b.gradients + b.optimizer_state + b.comm_buffers),
                 row->memory_peak > 0 ? bytesCell(row->memory_peak) : dash()});
        }
        ++group;
    }
    memory_->setBars(bars);
    memoryTable_->fitColumnsToHeaders();
}

void DistributedView::fillBucketModel() {
    // See Note [bucket-size model]: finished points only (a running one has no summary yet).
    std::vector<DistributedResult> finished;
    for (size_t i = 0; i < points_.size(); ++i)
        if (finished_[i]) finished.push_back(points_[i]);
    const auto models = bucketModels(finished);
    bucketChart_->setModels(models);
    bucketText_->setText(bucketChart_->explanation());
    bucketModel_->clear();
    bucketModel_->setHorizontalHeaderLabels({tr("configuration"), tr("row"), tr("bucket MiB"),
                                             tr("buckets"), tr("predicted wait"),
                                             tr("measured wait"), tr("measured − predicted"),
                                             tr("α ms"), tr("β GB/s"), tr("fit rms ms")});
    // See Note [tables other programs read]: the CLI's names (--table bucket-model).
    setCsvHeaders(bucketModel_,
                  {"configuration", "row", "bucket_mb", "buckets", "predicted_ms", "measured_ms",
                   "measured_minus_predicted_ms", "alpha_ms", "beta_gbps", "fit_rms_ms"});
    for (const auto& m : models) {
        const bool predicted = m.problem.empty();
        auto add = [&](const QString& row, double mib, int buckets, double pred, double meas) {
            bucketModel_->appendRow(
                {cell(qstr(m.label)), cell(row), numberCell(mib, mib < 10 ? 2 : 0),
                 buckets > 0 ? cell(QString::number(buckets), true) : dash(),
                 predicted ? msCell(pred) : dash(), meas >= 0 ? msCell(meas) : dash(),
                 predicted && meas >= 0 ? msCell(meas - pred) : dash(),
                 m.fit.ok ? numberCell(m.fit.alpha_ms, 3) : dash(),
                 m.fit.ok ? numberCell(m.fit.betaGbps(), 3) : dash(),
                 m.fit.ok ? numberCell(m.fit.rms_residual_ms, 3) : dash()});
        };
        for (const auto& p : m.measured)
            add(tr("point %1").arg(p.point + 1), p.bucket_mb, p.buckets, p.predicted_ms,
                p.measured_ms);
        if (predicted) add(tr("best size"), m.optimal_mb, 0, m.optimal_ms, -1);
    }
    bucketTable_->fitColumnsToHeaders();
}

void DistributedView::fillPoints() {
    pointsModel_->clear();
    pointsModel_->setHorizontalHeaderLabels({tr("point"), tr("what"), tr("status"),
                                             tr("failed rank"), tr("ranks' devices"), tr("error")});
    for (size_t i = 0; i < points_.size(); ++i) {
        const DistributedResult& r = points_[i];
        QStringList devices;
        for (const auto& d : r.rank_devices) devices << (d.empty() ? QStringLiteral("?") : qstr(d));
        QList<QStandardItem*> row{
            cell(QString::number(i + 1), true),
            cell(qstr(pointHeadline(r.point))),
            cell(finished_[i] ? qstr(toString(r.status)) : tr("running")),
            r.failed_rank >= 0 ? cell(QString::number(r.failed_rank), true) : cell(QString()),
            cell(devices.join(QStringLiteral(", "))),
            cell(qstr(r.error))};
        row.back()->setToolTip(qstr(r.error));
        if (finished_[i] && (r.status == Status::Failed || r.status == Status::OOM))
            for (QStandardItem* item : row) item->setForeground(QColor(0xc6, 0x28, 0x28));
        pointsModel_->appendRow(row);
    }
    pointTable_->fitColumnsToHeaders();
    pointTable_->resizeColumnToContents(1);
    pointTable_->resizeColumnToContents(4);
}

bool DistributedView::showStored(const StoredRun& run, QString* error) {
    std::vector<DistributedResult> results;
    try {
        results = distributedResultsOf(run);
    } catch (const std::exception& e) {
        if (error) *error = qstr(std::string(e.what()));
        return false;
    }
    begin(qstr(run.info.label), run.info.spec_json);
    storeRunId_ = run.info.id;
    showStoredEnvironment(run.info);
    points_ = std::move(results);
    finished_.assign(points_.size(), true);
    for (size_t i = 0; i < points_.size(); ++i) {
        updateChooser(static_cast<int>(i));
        const QString failure = statusLine(static_cast<int>(i), points_[i]);
        log_->appendPlainText(
            failure.isEmpty()
                ? tr("Point %1: %2").arg(i + 1).arg(qstr(pointHeadline(points_[i].point)))
                : failure);
    }
    if (!points_.empty() && !points_.front().environment.device_name.empty())
        env_ = points_.front().environment;
    fillAllreduce();
    fillStrategies();
    fillMemory();
    fillBucketModel();
    fillPoints();
    // The first failed point, else the first DDP point, else the first.
    int show = -1;
    for (size_t i = 0; i < points_.size() && show < 0; ++i)
        if (points_[i].status == Status::Failed || points_[i].status == Status::OOM)
            show = static_cast<int>(i);
    for (size_t i = 0; i < points_.size() && show < 0; ++i)
        if (points_[i].point.experiment == DistExperiment::Ddp) show = static_cast<int>(i);
    showPoint(show >= 0 ? show : 0);
    Q_EMIT logLine(tr("Opened %1 run %2 (%3 point(s))")
                       .arg(qstr(run.info.lab))
                       .arg(run.info.id)
                       .arg(points_.size()));
    Q_EMIT titleChanged();
    return true;
}

ExportContext DistributedView::exportContext(int pane) const {
    ExportContext ctx = LabView::exportContext(pane);
    if (shown_ >= 0 && static_cast<size_t>(shown_) < points_.size())
        ctx.notes << tr("Lanes: point %1, %2")
                         .arg(shown_ + 1)
                         .arg(qstr(pointHeadline(points_[static_cast<size_t>(shown_)].point)));
    return ctx;
}

QList<ReportPart> DistributedView::reportParts() const {
    QList<ReportPart> parts;
    bool ddp = false, allreduce = false, bucketed = false;
    for (const auto& p : points_) {
        (p.point.experiment == DistExperiment::Ddp ? ddp : allreduce) = true;
        bucketed = bucketed || (p.point.experiment == DistExperiment::Ddp &&
                                p.point.ddp.strategy == "bucketed");
    }
    if (ddp)
        parts << ReportPart{tr("Ranks' steps"), lanes_, nullptr, {}}
              << ReportPart{tr("Step time per strategy"), strategyChart_, nullptr, {}}
              << ReportPart{tr("DDP strategies compared"), nullptr, strategies_, {}}
              << ReportPart{tr("Memory per rank"), memory_, nullptr, {}}
              << ReportPart{tr("Memory per rank (table)"), nullptr, memoryModel_, {}};
    if (bucketed)  // See Note [bucket-size model]
        parts << ReportPart{tr("Wait after backward against bucket size"),
                            bucketChart_,
                            nullptr,
                            {}}
              << ReportPart{tr("Bucket-size model"), nullptr, bucketModel_, {}};
    if (allreduce)
        parts << ReportPart{tr("All-reduce bus bandwidth"), allreduce_, nullptr, {}}
              << ReportPart{tr("All-reduce by size"), nullptr, allreduceModel_, {}};
    parts << ReportPart{tr("Points"), nullptr, pointsModel_, {}};
    return parts;
}

}  // namespace ts::ui
