#include "ui/memory/memoryview.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/json.h"
#include "core/table.h"
#include "memory/memory_json.h"
#include "memory/memory_pickle.h"
#include "memory/memory_report.h"
#include "ui/common/format.h"
#include "ui/common/panes.h"
#include "ui/common/tableview.h"
#include "ui/memory/memorycharts.h"

namespace ts::ui {

namespace {
// The allocation's index in the analysis (past kValueRole and kCsvHeaderRole, which the exports
// read: a size exported as this index was the bug).
constexpr int kAllocationRole = Qt::UserRole + 3;

QStandardItem* bytesCell(int64_t bytes) {
    return valueCell(qstr(formatBytes(bytes)), static_cast<qlonglong>(bytes));
}

// The step of `r`'s frontier that ran out of memory, as a result of its own: the probe's
// point, its trace up to the failure. None when the frontier has no such picture.
std::optional<MemoryResult> failedStepOf(const MemoryResult& r) {
    if (!r.frontier || !r.frontier->oom_trace) return std::nullopt;
    MemoryResult f;
    f.spec = r.spec;
    f.spec.frontier = FrontierAxis::None;
    f.spec.record_steps = 1;
    f.spec.bench.warmup = 0;
    (r.frontier->axis == FrontierAxis::Context ? f.spec.bench.model.context_length
                                               : f.spec.bench.batch_size) =
        r.frontier->smallest_oom;
    f.status = Status::OOM;
    f.gpu = r.gpu;
    f.trace = *r.frontier->oom_trace;
    const auto failed = failedAllocation(f.trace, analyzeMemory(f.trace));
    f.error = failed ? describeFailedAllocation(*failed) : "out of memory";
    f.parameter_count = r.parameter_count;
    f.environment = r.environment;
    return f;
}

QString failedStepTitle(const MemoryResult& f) {
    return QObject::tr("Out of memory: %1 (the frontier's failing step)")
        .arg(qstr(memoryHeadline(f)));
}
}  // namespace

MemoryView::MemoryView(QWidget* parent) : LabView(parent) {
    qRegisterMetaType<MemoryResult>();
    timeline_ = new MemoryTimelineChart(this);
    timeline_->setObjectName(QStringLiteral("memoryTimeline"));
    timeline_->setMinimumHeight(240);
    categories_ = new MemoryCategoryChart(this);
    categories_->setObjectName(QStringLiteral("memoryCategories"));
    frontier_ = new FrontierChart(this);
    frontier_->setObjectName(QStringLiteral("memoryFrontier"));
    compareChart_ = new MemoryCompareChart(this);
    compareChart_->setObjectName(QStringLiteral("memoryCompare"));

    allocations_ = new QStandardItemModel(this);
    allocationTable_ = new DataTableView(this);
    allocationTable_->setObjectName(QStringLiteral("memoryAllocations"));
    allocationTable_->setTitle(tr("Largest allocations"), QStringLiteral("memory-allocations"));
    allocationTable_->setModel(allocations_);
    allocationTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    allocationTable_->setSelectionMode(QAbstractItemView::SingleSelection);
    connect(allocationTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                timeline_->highlight(
                    current.isValid()
                        ? allocations_->item(current.row(), 0)->data(kAllocationRole).toInt()
                        : -1);
            });
    peak_ = new QStandardItemModel(this);
    peakTable_ = new DataTableView(this);
    peakTable_->setObjectName(QStringLiteral("memoryPeak"));
    peakTable_->setTitle(tr("Peak by category"), QStringLiteral("memory-peak"));
    peakTable_->setModel(peak_);
    points_ = new QStandardItemModel(this);
    pointTable_ = new DataTableView(this);
    pointTable_->setObjectName(QStringLiteral("memoryPoints"));
    pointTable_->setTitle(tr("Peak memory by point"), QStringLiteral("memory-points"));
    pointTable_->setModel(points_);

    compare_ = new QStandardItemModel(this);
    compareTable_ = new DataTableView(this);
    compareTable_->setObjectName(QStringLiteral("memoryComparison"));
    compareTable_->setTitle(tr("Two runs, phase by phase"), QStringLiteral("memory-comparison"));
    compareTable_->setModel(compare_);

    point_ = new QComboBox(this);
    point_->setObjectName(QStringLiteral("memoryPoint"));
    // Wide enough for a point's headline ("tiny ctx=256 bs=4 fp32 naive train · peak …"), not
    // squeezed to "tiny ctx=" by the note beside it.
    point_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    point_->setMinimumContentsLength(30);
    connect(point_, &QComboBox::activated, this, [this](int row) {
        const int code = point_->itemData(row).toInt();
        if (code >= 0)
            showPoint(code);
        else
            showFailedStep(-1 - code);
    });
    saveSnapshot_ = new QPushButton(tr("Save &Snapshot…"), this);
    saveSnapshot_->setObjectName(QStringLiteral("memorySaveSnapshot"));
    saveSnapshot_->setToolTip(
        tr("Write the shown trace as the snapshot pickle that PyTorch's memory_viz page and "
           "torch.cuda._memory_viz read"));
    connect(saveSnapshot_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save Memory Snapshot"),
                                                          QStringLiteral("memory-snapshot.pickle"),
                                                          tr("Memory snapshots (*.pickle)"));
        if (path.isEmpty()) return;
        QString error;
        if (saveSnapshot(path, &error))
            Q_EMIT logLine(
                tr("Snapshot written to %1 (drag it onto https://pytorch.org/memory_viz)")
                    .arg(path));
        else
            Q_EMIT statusText(error);
    });
    auto* chooser = new QWidget(this);
    auto* row = new QHBoxLayout(chooser);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Point:"), chooser));
    row->addWidget(point_, 1);
    timelineText_ = new QLabel(chooser);
    // Wraps rather than widen the window past a 1280 px screen ("3647 events; peak 2.49 GiB at
    // event 1301 (backward 0)" beside the chooser and the button).
    timelineText_->setWordWrap(true);
    timelineText_->setMinimumWidth(120);
    row->addWidget(timelineText_, 1);
    row->addWidget(saveSnapshot_);
    peakText_ = new QLabel(this);
    peakText_->setWordWrap(true);

    // The frontier's failed allocation, and its step for every pane.
    auto* failure = new QWidget(this);
    auto* failureRow = new QHBoxLayout(failure);
    failureRow->setContentsMargins(0, 0, 0, 0);
    failureText_ = new QLabel(failure);
    failureText_->setObjectName(QStringLiteral("memoryFailure"));
    failureText_->setWordWrap(true);
    failureText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    showFailure_ = new QPushButton(tr("Show the &Failed Step"), failure);
    showFailure_->setToolTip(
        tr("Show the step that ran out of memory, up to the allocation that failed, on the "
           "timeline and in every pane"));
    connect(showFailure_, &QPushButton::clicked, this, [this] {
        if (showFailedStep(shown_)) showPane(paneIndex(QStringLiteral("timeline")));
    });
    failureRow->addWidget(failureText_, 1);
    failureRow->addWidget(showFailure_);

    // Two runs compared: a point of each.
    auto* compareTop = new QWidget(this);
    auto* compareRows = new QVBoxLayout(compareTop);
    compareRows->setContentsMargins(0, 0, 0, 0);
    compareText_ = new QLabel(compareTop);
    compareText_->setWordWrap(true);
    compareText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    compareAPoint_ = new QComboBox(compareTop);
    compareAPoint_->setObjectName(QStringLiteral("memoryCompareA"));
    compareBPoint_ = new QComboBox(compareTop);
    compareBPoint_->setObjectName(QStringLiteral("memoryCompareB"));
    auto* pick = new QHBoxLayout;
    pick->addWidget(new QLabel(tr("A:"), compareTop));
    pick->addWidget(compareAPoint_, 1);
    pick->addWidget(new QLabel(tr("B:"), compareTop));
    pick->addWidget(compareBPoint_, 1);
    compareRows->addWidget(compareText_);
    compareRows->addLayout(pick);
    for (QComboBox* c : {compareAPoint_, compareBPoint_})
        connect(c, &QComboBox::activated, this, [this] {
            comparePoints(compareAPoint_->currentIndex(), compareBPoint_->currentIndex());
        });

    addPane({QStringLiteral("timeline"), tr("&Timeline"), panePage(this, chooser, timeline_),
             timeline_, nullptr});
    addPane({QStringLiteral("categories"), tr("&Categories"), panePage(this, nullptr, categories_),
             categories_, nullptr});
    addPane({QStringLiteral("allocations"), tr("&Allocations"),
             panePage(this, nullptr, allocationTable_), nullptr, allocationTable_});
    addPane({QStringLiteral("peaks"), tr("&Peaks"),
             panePage(this, peakText_, peakTable_, pointTable_), nullptr, peakTable_});
    addPane({QStringLiteral("frontier"), tr("&Frontier"), panePage(this, failure, frontier_),
             frontier_, nullptr});
    addPane({QStringLiteral("compare"), tr("C&ompare"),
             panePage(this, compareTop, compareChart_, compareTable_), compareChart_,
             compareTable_});
    // A selected allocation's lifetime is highlighted on the timeline; a double click goes there.
    connect(allocationTable_, &QAbstractItemView::doubleClicked, this,
            [this] { showPane(paneIndex(QStringLiteral("timeline"))); });
    begin({}, {});
}

void MemoryView::begin(const QString& label, const std::string& spec_json) {
    results_.clear();
    failures_.clear();
    failureOf_.clear();
    shown_ = -1;
    shownFailure_ = -1;
    compareA_.clear();
    compareB_.clear();
    compareTitle_.clear();
    compareAPoint_->clear();
    compareBPoint_->clear();
    compare_->clear();
    compareText_->setText(
        tr("Select two memory runs in History and press Compare: fp32 against bf16, naive against "
           "fused attention, phase by phase and category by category."));
    compareChart_->clear(tr("Select two memory runs in History and press Compare"));
    saveSnapshot_->setEnabled(false);
    showFailure_->setEnabled(false);
    failureText_->clear();
    analysis_ = {};
    label_ = label;
    storeRunId_ = 0;
    env_ = {};
    point_->clear();
    allocations_->clear();
    peak_->clear();
    points_->clear();
    peakText_->clear();
    timelineText_->clear();
    configuration_.clear();
    configurationJson_.clear();
    const auto spec = parseJsonOrDiscarded(spec_json);
    if (spec.is_object()) {
        try {
            std::vector<MemorySpec> specs;
            if (spec.contains("points"))
                for (const auto& p : spec.at("points")) specs.push_back(memorySpecFromJson(p));
            else
                specs.push_back(memorySpecFromJson(spec));
            QStringList parts;
            for (const auto& s : specs) parts << qstr(memoryHeadline(MemoryResult{s}));
            configuration_ = parts.join(QStringLiteral("; "));
        } catch (const std::exception&) {
            // A spec this version cannot read: the JSON is still shown.
        }
        configurationJson_ =
            qstr(spec.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    Q_EMIT titleChanged();
}

void MemoryView::beginRun(const LabJob& job) { begin(job.label, job.spec_json); }

void MemoryView::runStarted(qint64 storeRunId, const Environment& env) {
    storeRunId_ = storeRunId;
    env_ = env;
    Q_EMIT titleChanged();
}

void MemoryView::addItems(const QList<QVariant>& items) {
    for (const QVariant& item : items)
        if (item.metaType() == QMetaType::fromType<MemoryResult>())
            addResult(item.value<MemoryResult>());
}

void MemoryView::addResult(const MemoryResult& r) {
    results_.push_back(r);
    takeEnvironment(r.environment);
    point_->addItem(qstr(memoryHeadline(r)), static_cast<int>(results_.size()) - 1);
    failureOf_.push_back(-1);
    if (auto f = failedStepOf(r)) {
        failureOf_.back() = static_cast<int>(failures_.size());
        failures_.push_back(std::move(*f));
        point_->addItem(failedStepTitle(failures_.back()), -static_cast<int>(failures_.size()));
    }
    fillPointTable();
    showPoint(static_cast<int>(results_.size()) - 1);
    if (failedStepOnArrival_ && failureOf_.back() >= 0) {
        failedStepOnArrival_ = false;
        showFailedStep(static_cast<int>(results_.size()) - 1);
    }
}

void MemoryView::applyPresetView(const QJsonObject& view) {
    LabView::applyPresetView(view);
    failedStepOnArrival_ = view.value(QLatin1String("failed_step")).toBool();
}

const MemoryResult* MemoryView::shownResult() const {
    if (shownFailure_ >= 0) return &failures_[shownFailure_];
    return shown_ >= 0 ? &results_[shown_] : nullptr;
}

bool MemoryView::showFailedStep(int index) {
    if (index < 0 || static_cast<size_t>(index) >= results_.size() || failureOf_[index] < 0)
        return false;
    shown_ = index;
    shownFailure_ = failureOf_[index];
    show(failures_[shownFailure_], -1 - shownFailure_);
    return true;
}

bool MemoryView::saveSnapshot(const QString& path, QString* error) const {
    const MemoryResult* r = shownResult();
    if (!r || (r->trace.events.empty() && r->trace.segments.empty())) {
        if (error) *error = tr("No allocator trace is shown: nothing to save");
        return false;
    }
    // Never over a results store: any SQLite database or its log is refused.
    if (const std::string problem = outputTargetProblem(path.toStdString(), {}); !problem.empty()) {
        if (error) *error = tr("Could not write %1").arg(QString::fromStdString(problem));
        return false;
    }
    QSaveFile file(path);
    const std::string bytes = memorySnapshotPickle(r->trace);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        file.write(bytes.data(), static_cast<qint64>(bytes.size())) !=
            static_cast<qint64>(bytes.size()) ||
        !file.commit()) {
        if (error) *error = tr("Could not write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

void MemoryView::fillPointTable() {
    points_->clear();
    points_->setHorizontalHeaderLabels({tr("size"), tr("context"), tr("batch"), tr("precision"),
                                        tr("attention"), tr("mode"), tr("status"), tr("peak"),
                                        tr("predicted"), tr("reserved")});
    // See Note [tables other programs read]: bytes, said in the CSV's headers.
    setCsvHeaders(points_, {"size", "context", "batch", "precision", "attention", "mode", "status",
                            "peak_bytes", "predicted_peak_bytes", "reserved_bytes"});
    for (const auto& r : results_) {
        const PointConfig& c = r.spec.bench;
        const MemoryAnalysis a = analyzeMemory(r.trace);
        const bool measured = !r.trace.events.empty();
        QList<QStandardItem*> row{
            cell(qstr(c.model.name)), cell(QString::number(c.model.context_length), true),
            cell(QString::number(c.batch_size), true), cell(qstr(toString(c.precision))),
            cell(qstr(toString(c.attention))), cell(qstr(toString(c.mode))),
            cell(qstr(toString(r.status))),
            measured ? bytesCell(a.peak.allocated) : cell(QStringLiteral("—"), true),
            // An imported snapshot has no model to predict from.
            r.spec.imported.empty() ? bytesCell(predictMemory(c).peak)
                                    : cell(QStringLiteral("—"), true),
            measured ? bytesCell(a.peak.reserved) : cell(QStringLiteral("—"), true)};
        points_->appendRow(row);
    }
    pointTable_->fitColumnsToHeaders();
}

void MemoryView::showPoint(int index) {
    if (index < 0 || static_cast<size_t>(index) >= results_.size()) return;
    shown_ = index;
    shownFailure_ = -1;
    show(results_[index], index);
}

void MemoryView::showFrontierOf(const MemoryResult& point) {
    frontier_->setResult(point);
    const int k = shown_ >= 0 ? failureOf_[shown_] : -1;
    showFailure_->setEnabled(k >= 0);
    if (k >= 0)
        failureText_->setText(tr("At %1 %2 the step ran out of memory: %3.")
                                  .arg(qstr(toString(point.frontier->axis)))
                                  .arg(point.frontier->smallest_oom)
                                  .arg(qstr(failures_[k].error)));
    else if (point.frontier && point.frontier->smallest_oom > 0)
        failureText_->setText(
            tr("The allocator did not report the failing allocation (no snapshot of it)."));
    else if (point.frontier)
        failureText_->setText(tr("No probe ran out of memory."));
    else
        failureText_->clear();
}

void MemoryView::show(const MemoryResult& r, int chooserCode) {
    point_->setCurrentIndex(point_->findData(chooserCode));
    analysis_ = analyzeMemory(r.trace);
    timeline_->setResult(r, analysis_);
    categories_->setResult(r, analysis_);
    showFrontierOf(results_[shown_]);
    saveSnapshot_->setEnabled(!r.trace.events.empty() || !r.trace.segments.empty());
    const PeakBreakdown& p = analysis_.peak;
    timelineText_->setText(r.trace.events.empty()
                               ? tr("%1: %2").arg(qstr(toString(r.status)), qstr(r.error))
                               : tr("%1 events; peak %2 at event %3 (%4 %5)")
                                     .arg(r.trace.events.size())
                                     .arg(qstr(formatBytes(p.allocated)))
                                     .arg(p.index)
                                     .arg(qstr(toString(p.phase)))
                                     .arg(p.step));

    auto name = [&](int32_t i) {
        return i >= 0 && static_cast<size_t>(i) < r.trace.names.size() ? qstr(r.trace.names[i])
                                                                       : QString();
    };
    allocations_->clear();
    allocations_->setHorizontalHeaderLabels({tr("size"), tr("event"), tr("phase"), tr("step"),
                                             tr("category"), tr("freed at"), tr("range"), tr("op"),
                                             tr("stack")});
    setCsvHeaders(allocations_, {"size_bytes", "event", "phase", "step", "category", "freed_at",
                                 "range", "op", "stack"});
    for (size_t k : largestAllocations(analysis_, kAllocationRows)) {
        const Allocation& x = analysis_.allocations[k];
        QString stack;
        if (x.stack >= 0 && static_cast<size_t>(x.stack) < r.trace.stacks.size()) {
            QStringList frames;
            // The user's Python frames carry their file and line: "forward (model.py:88)".
            for (const auto& f : r.trace.stacks[x.stack])
                frames << (f.filename.empty() || f.line <= 0
                               ? qstr(f.name)
                               : QStringLiteral("%1 (%2:%3)")
                                     .arg(qstr(f.name), QFileInfo(qstr(f.filename)).fileName())
                                     .arg(f.line));
            stack = frames.join(QStringLiteral(" ← "));
        }
        QList<QStandardItem*> row{
            bytesCell(x.size),
            cell(QString::number(x.alloc_index), true),
            cell(qstr(toString(x.phase))),
            cell(QString::number(x.step), true),
            cell(qstr(toString(x.category))),
            cell(x.free_index ? QString::number(*x.free_index) : tr("live"), true),
            cell(name(x.range)),
            cell(name(x.op)),
            cell(stack)};
        row[0]->setData(static_cast<int>(k), kAllocationRole);
        allocations_->appendRow(row);
    }
    allocationTable_->fitColumnsToHeaders();

    peak_->clear();
    peak_->setHorizontalHeaderLabels(
        {tr("category"), tr("at the peak"), tr("share"), tr("predicted"), tr("difference")});
    setCsvHeaders(peak_, {"category", "at_peak_bytes", "share_percent", "predicted_bytes",
                          "difference_bytes"});
    // A point that recorded nothing (a CPU run: no caching allocator) has the analytic model
    // alone: its measured cells say so instead of "0 B" beside the prediction.
    const bool measured = !r.trace.events.empty();
    const bool imported = !r.spec.imported.empty();  // no model: nothing predicted
    for (const auto& c : compareWithPrediction(r, analysis_)) {
        const int64_t d = c.measured - c.predicted;
        if (!measured) {
            peak_->appendRow({cell(qstr(toString(c.category))), cell(tr("not measured"), true),
                              cell(QStringLiteral("—"), true), bytesCell(c.predicted),
                              cell(QStringLiteral("—"), true)});
            continue;
        }
        peak_->appendRow(
            {cell(qstr(toString(c.category))), bytesCell(c.measured),
             p.allocated > 0 ? valueCell(QString::number(100.0 * c.measured / p.allocated, 'f', 1) +
                                             QLatin1Char('%'),
                                         100.0 * c.measured / p.allocated)
                             : cell(QStringLiteral("—"), true),
             imported ? cell(QStringLiteral("—"), true) : bytesCell(c.predicted),
             imported ? cell(QStringLiteral("—"), true)
                      : valueCell((d < 0 ? QStringLiteral("−") : QStringLiteral("+")) +
                                      qstr(formatBytes(d < 0 ? -d : d)),
                                  static_cast<qlonglong>(d))});
    }
    peakTable_->fitColumnsToHeaders();
    QStringList lines;
    lines << qstr(memoryHeadline(r));
    if (!r.trace.events.empty())
        lines << tr("Peak %1 allocated, %2 reserved, at event %3 in %4 of step %5; %6 blocks live.")
                     .arg(qstr(formatBytes(p.allocated)), qstr(formatBytes(p.reserved)))
                     .arg(p.index)
                     .arg(qstr(toString(p.phase)))
                     .arg(p.step)
                     .arg(p.live.size());
    if (r.parameter_bytes > 0)
        lines
            << tr("Exactly: parameters %1 B, gradients %2 B, optimizer state %3 B (%4 parameters).")
                   .arg(r.parameter_bytes)
                   .arg(r.gradient_bytes)
                   .arg(r.optimizer_bytes)
                   .arg(r.parameter_count);
    if (r.status != Status::Ok) lines << tr("%1: %2").arg(qstr(toString(r.status)), qstr(r.error));
    peakText_->setText(lines.join(QLatin1Char('\n')));
    Q_EMIT titleChanged();
}

namespace {
// A stored run's points (throws std::runtime_error naming a row that cannot be read).
std::vector<MemoryResult> pointsOf(const StoredRun& run) {
    std::vector<MemoryResult> out;
    for (const auto& row : run.rows)
        out.push_back(storedMemoryPoint(run.info, run.rows, row.index));
    return out;
}
}  // namespace

bool MemoryView::showStored(const StoredRun& run, QString* error) {
    std::vector<MemoryResult> results;
    try {
        results = pointsOf(run);
    } catch (const std::exception& e) {
        if (error) *error = qstr(std::string(e.what()));
        return false;
    }
    showPoints(run, results);
    return true;
}

void MemoryView::showPoints(const StoredRun& run, const std::vector<MemoryResult>& results) {
    begin(qstr(run.info.label), run.info.spec_json);
    storeRunId_ = run.info.id;
    showStoredEnvironment(run.info);
    for (const auto& r : results) addResult(r);
    if (!results_.empty()) showPoint(0);
    Q_EMIT logLine(tr("Opened %1 run %2 (%3 point(s))")
                       .arg(qstr(run.info.lab))
                       .arg(run.info.id)
                       .arg(results.size()));
    Q_EMIT titleChanged();
}

bool MemoryView::importFile(const QString& path, const QString& storePath, QString* error) {
    const std::optional<StoredRun> run = importRun(
        path, storePath, kMemoryLab, tr("snapshot"),
        [](std::string_view bytes, const std::string& name) {
            const auto r = importMemorySnapshot(bytes, name);
            return ImportedRun{memorySpecJson({r.spec}),
                               r.environment,
                               {0, r.status, dumpJson(toJson(r.spec)), dumpJson(toJson(r))}};
        },
        error);
    if (!run) return false;
    Q_EMIT logLine(tr("Imported %1 as run %2").arg(path).arg(run->info.id));
    return showStored(*run, error);
}

bool MemoryView::compare(const StoredRun& a, const StoredRun& b, QString* error) {
    std::vector<MemoryResult> pa, pb;
    try {
        pa = pointsOf(a);
        pb = pointsOf(b);
    } catch (const std::exception& e) {
        if (error) *error = qstr(std::string(e.what()));
        return false;
    }
    for (const StoredRun* r : {&a, &b})
        if (r->rows.empty()) {
            if (error) *error = tr("run %1 has no stored point to compare").arg(r->info.id);
            return false;
        }
    // "A 0 B, B 0 B" compared nothing: a run whose points recorded no allocation (the CPU's)
    // is refused with the reason.
    for (const auto& [run, points] : {std::pair{&a, &pa}, std::pair{&b, &pb}})
        if (std::none_of(points->begin(), points->end(),
                         [](const MemoryResult& r) { return !r.trace.events.empty(); })) {
            if (error)
                *error = tr("run %1 recorded no allocation (memory is recorded on a CUDA device; "
                            "a CPU run holds the analytic model only): compare runs recorded on "
                            "a GPU")
                             .arg(run->info.id);
            return false;
        }
    showPoints(a, pa);
    compareA_ = std::move(pa);
    compareB_ = std::move(pb);
    compareTitle_ = tr("run %1 vs run %2").arg(a.info.id).arg(b.info.id);
    for (auto [combo, points, id] : {std::tuple{compareAPoint_, &compareA_, a.info.id},
                                     std::tuple{compareBPoint_, &compareB_, b.info.id}}) {
        combo->clear();
        for (const auto& r : *points)
            combo->addItem(tr("run %1: %2").arg(id).arg(qstr(memoryHeadline(r))));
    }
    comparePoints(0, 0);
    showPane(paneIndex(QStringLiteral("compare")));
    Q_EMIT titleChanged();
    return true;
}

void MemoryView::comparePoints(int ia, int ib) {
    if (ia < 0 || ib < 0 || static_cast<size_t>(ia) >= compareA_.size() ||
        static_cast<size_t>(ib) >= compareB_.size())
        return;
    compareAPoint_->setCurrentIndex(ia);
    compareBPoint_->setCurrentIndex(ib);
    const MemoryResult &a = compareA_[ia], &b = compareB_[ib];
    const MemoryAnalysis aa = analyzeMemory(a.trace), ab = analyzeMemory(b.trace);
    const auto rows = comparePhases(a.trace, aa, b.trace, ab);
    compareChart_->setComparison(rows);
    compare_->clear();
    compare_->setHorizontalHeaderLabels(
        {tr("phase"), tr("category"), tr("A"), tr("B"), tr("B − A"), tr("share of B − A")});
    setCsvHeaders(compare_, {"phase", "category", "a_bytes", "b_bytes", "b_minus_a_bytes",
                             "share_of_b_minus_a_percent"});
    for (const auto& r : rows) {
        const int64_t d = r.b - r.a;
        QList<QStandardItem*> row{
            cell(qstr(phaseComparisonName(r.phase))),
            cell(r.category ? qstr(toString(*r.category)) : tr("total")),
            r.a_present ? bytesCell(r.a) : cell(tr("n/a"), true),
            r.b_present ? bytesCell(r.b) : cell(tr("n/a"), true),
            r.a_present && r.b_present
                ? valueCell((d < 0 ? QStringLiteral("−") : QStringLiteral("+")) +
                                qstr(formatBytes(d < 0 ? -d : d)),
                            static_cast<qlonglong>(d))
                : cell(QString(), true),
            r.share ? valueCell(QString::number(100.0 * *r.share, 'f', 0) + QLatin1Char('%'),
                                100.0 * *r.share)
                    : cell(QString(), true)};
        if (!r.category)
            for (QStandardItem* item : row) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
        compare_->appendRow(row);
    }
    compareTable_->fitColumnsToHeaders();
    const int64_t peakDiff = ab.peak.allocated - aa.peak.allocated;
    compareText_->setText(tr("A: %1\nB: %2\nPeak: A %3, B %4 (B %5 %6).")
                              .arg(qstr(memoryHeadline(a)), qstr(memoryHeadline(b)),
                                   qstr(formatBytes(aa.peak.allocated)),
                                   qstr(formatBytes(ab.peak.allocated)),
                                   peakDiff <= 0 ? tr("saves") : tr("needs"),
                                   qstr(formatBytes(peakDiff < 0 ? -peakDiff : peakDiff))));
}

ExportContext MemoryView::exportContext(int pane) const {
    ExportContext ctx = LabView::exportContext(pane);
    if (!compareA_.empty()) ctx.title = tr("Memory runs compared: %1").arg(compareTitle_);
    return ctx;
}

QList<ReportPart> MemoryView::reportParts() const {
    QList<ReportPart> parts;
    parts << ReportPart{tr("Active memory timeline"), timeline_, nullptr, {}}
          << ReportPart{tr("Live memory by category"), categories_, nullptr, {}}
          << ReportPart{tr("Peak by category"), nullptr, peak_, {}}
          << ReportPart{tr("Peak memory by point"), nullptr, points_, {}}
          << ReportPart{tr("Largest allocations"), nullptr, allocations_, {}};
    if (shown_ >= 0 && results_[shown_].frontier)
        parts << ReportPart{tr("OOM frontier"), frontier_, nullptr, {}};
    if (!compareA_.empty())
        parts << ReportPart{tr("Two runs, phase by phase"), compareChart_, nullptr, {}}
              << ReportPart{tr("Two runs, phase by phase (table)"), nullptr, compare_, {}};
    return parts;
}

}  // namespace ts::ui
