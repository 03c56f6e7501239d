#include "memory/memoryview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include "common/format.h"
#include "common/tableview.h"
#include "core/json.h"
#include "memory/memory_json.h"
#include "memory/memory_report.h"
#include "memory/memorycharts.h"

namespace ts::ui {

namespace {
constexpr int kAllocationRole = Qt::UserRole + 1;  // the allocation's index in the analysis

QStandardItem* cell(const QString& text, bool right = false) {
    auto* item = new QStandardItem(text);
    item->setEditable(false);
    if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}
QStandardItem* bytesCell(int64_t bytes) {
    auto* item = cell(qstr(formatBytes(bytes)), true);
    item->setData(static_cast<qlonglong>(bytes), Qt::UserRole);  // for sorting and tests
    return item;
}

QWidget* page(QWidget* parent, QWidget* top, QWidget* main, QWidget* second = nullptr) {
    auto* w = new QWidget(parent);
    auto* layout = new QVBoxLayout(w);
    layout->setContentsMargins(4, 4, 4, 4);
    if (top) layout->addWidget(top);
    if (second) {
        auto* split = new QSplitter(Qt::Vertical, w);
        split->addWidget(main);
        split->addWidget(second);
        split->setStretchFactor(0, 3);
        split->setStretchFactor(1, 2);
        layout->addWidget(split, 1);
    } else {
        layout->addWidget(main, 1);
    }
    return w;
}
}  // namespace

MemoryView::MemoryView(QWidget* parent) : LabView(parent) {
    qRegisterMetaType<MemoryResult>();
    timeline_ = new MemoryTimelineChart(this);
    timeline_->setObjectName(QStringLiteral("memoryTimeline"));
    timeline_->setMinimumHeight(300);
    categories_ = new MemoryCategoryChart(this);
    categories_->setObjectName(QStringLiteral("memoryCategories"));
    frontier_ = new FrontierChart(this);
    frontier_->setObjectName(QStringLiteral("memoryFrontier"));

    allocations_ = new QStandardItemModel(this);
    allocationTable_ = new DataTableView(this);
    allocationTable_->setObjectName(QStringLiteral("memoryAllocations"));
    allocationTable_->setTitle(tr("Largest allocations"), QStringLiteral("memory-allocations"));
    allocationTable_->setModel(allocations_);
    allocationTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    allocationTable_->setSelectionMode(QAbstractItemView::SingleSelection);
    connect(allocationTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                timeline_->highlight(current.isValid()
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

    point_ = new QComboBox(this);
    point_->setObjectName(QStringLiteral("memoryPoint"));
    connect(point_, &QComboBox::activated, this, [this](int i) { showPoint(i); });
    auto* chooser = new QWidget(this);
    auto* row = new QHBoxLayout(chooser);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Point:"), chooser));
    row->addWidget(point_, 1);
    timelineText_ = new QLabel(chooser);
    row->addWidget(timelineText_, 2);
    peakText_ = new QLabel(this);
    peakText_->setWordWrap(true);

    addPane({QStringLiteral("timeline"), tr("&Timeline"), page(this, chooser, timeline_), timeline_, nullptr});
    addPane({QStringLiteral("categories"), tr("&Categories"), page(this, nullptr, categories_), categories_, nullptr});
    addPane({QStringLiteral("allocations"), tr("&Allocations"), page(this, nullptr, allocationTable_), nullptr,
             allocationTable_});
    addPane({QStringLiteral("peaks"), tr("&Peaks"), page(this, peakText_, peakTable_, pointTable_), nullptr, peakTable_});
    addPane({QStringLiteral("frontier"), tr("&Frontier"), page(this, nullptr, frontier_), frontier_, nullptr});
    // A selected allocation's lifetime is highlighted on the timeline; a double click goes there.
    connect(allocationTable_, &QAbstractItemView::doubleClicked, this, [this] { showPane(paneIndex(QStringLiteral("timeline"))); });
    begin({}, {});
}

void MemoryView::begin(const QString& label, const std::string& spec_json) {
    results_.clear();
    shown_ = -1;
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
    const auto spec = nlohmann::json::parse(spec_json, nullptr, /*allow_exceptions=*/false);
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
        configurationJson_ = qstr(spec.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
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
        if (item.metaType() == QMetaType::fromType<MemoryResult>()) addResult(item.value<MemoryResult>());
}

void MemoryView::addResult(const MemoryResult& r) {
    results_.push_back(r);
    if (env_.device_name.empty()) env_ = r.environment;
    point_->addItem(qstr(memoryHeadline(r)));
    fillPointTable();
    showPoint(static_cast<int>(results_.size()) - 1);
}

void MemoryView::fillPointTable() {
    points_->clear();
    points_->setHorizontalHeaderLabels({tr("size"), tr("context"), tr("batch"), tr("precision"), tr("attention"),
                                        tr("mode"), tr("status"), tr("peak"), tr("predicted"), tr("reserved")});
    for (const auto& r : results_) {
        const BenchConfig& c = r.spec.bench;
        const MemoryAnalysis a = analyzeMemory(r.trace);
        const bool measured = !r.trace.events.empty();
        QList<QStandardItem*> row{cell(qstr(c.model.name)),
                                  cell(QString::number(c.model.context_length), true),
                                  cell(QString::number(c.batch_size), true),
                                  cell(qstr(toString(c.precision))),
                                  cell(qstr(toString(c.attention))),
                                  cell(qstr(toString(c.mode))),
                                  cell(qstr(toString(r.status))),
                                  measured ? bytesCell(a.peak.allocated) : cell(QStringLiteral("—"), true),
                                  bytesCell(predictMemory(c).peak),
                                  measured ? bytesCell(a.peak.reserved) : cell(QStringLiteral("—"), true)};
        points_->appendRow(row);
    }
    pointTable_->fitColumnsToHeaders();
}

void MemoryView::showPoint(int index) {
    if (index < 0 || static_cast<size_t>(index) >= results_.size()) return;
    shown_ = index;
    point_->setCurrentIndex(index);
    const MemoryResult& r = results_[index];
    analysis_ = analyzeMemory(r.trace);
    timeline_->setResult(r, analysis_);
    categories_->setResult(r, analysis_);
    frontier_->setResult(r);
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
        return i >= 0 && static_cast<size_t>(i) < r.trace.names.size() ? qstr(r.trace.names[i]) : QString();
    };
    allocations_->clear();
    allocations_->setHorizontalHeaderLabels({tr("size"), tr("event"), tr("phase"), tr("step"), tr("category"),
                                             tr("freed at"), tr("range"), tr("op"), tr("stack")});
    for (size_t k : largestAllocations(analysis_, kAllocationRows)) {
        const Allocation& x = analysis_.allocations[k];
        QString stack;
        if (x.stack >= 0 && static_cast<size_t>(x.stack) < r.trace.stacks.size()) {
            QStringList frames;
            for (const auto& f : r.trace.stacks[x.stack]) frames << qstr(f.name);
            stack = frames.join(QStringLiteral(" ← "));
        }
        QList<QStandardItem*> row{bytesCell(x.size),
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
    peak_->setHorizontalHeaderLabels({tr("category"), tr("at the peak"), tr("share"), tr("predicted"), tr("difference")});
    for (const auto& c : compareWithPrediction(r, analysis_)) {
        const int64_t d = c.measured - c.predicted;
        peak_->appendRow({cell(qstr(toString(c.category))), bytesCell(c.measured),
                          cell(p.allocated > 0 ? QString::number(100.0 * c.measured / p.allocated, 'f', 1) + QLatin1Char('%')
                                               : QStringLiteral("—"),
                               true),
                          bytesCell(c.predicted),
                          cell((d < 0 ? QStringLiteral("−") : QStringLiteral("+")) + qstr(formatBytes(d < 0 ? -d : d)), true)});
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
        lines << tr("Exactly: parameters %1 B, gradients %2 B, optimizer state %3 B (%4 parameters).")
                     .arg(r.parameter_bytes)
                     .arg(r.gradient_bytes)
                     .arg(r.optimizer_bytes)
                     .arg(r.parameter_count);
    if (r.status != Status::Ok) lines << tr("%1: %2").arg(qstr(toString(r.status)), qstr(r.error));
    peakText_->setText(lines.join(QLatin1Char('\n')));
    Q_EMIT titleChanged();
}

bool MemoryView::showStored(const StoredRun& run, QString* error) {
    std::vector<MemoryResult> results;
    try {
        for (const auto& row : run.rows) results.push_back(storedMemoryPoint(run.info, run.rows, row.index));
    } catch (const std::exception& e) {
        if (error) *error = qstr(std::string(e.what()));
        return false;
    }
    begin(qstr(run.info.label), run.info.spec_json);
    storeRunId_ = run.info.id;
    env_.device_name = run.info.device_name;
    for (const auto& r : results) addResult(r);
    if (!results_.empty()) showPoint(0);
    Q_EMIT logLine(tr("Opened %1 run %2 (%3 point(s))").arg(qstr(run.info.lab)).arg(run.info.id).arg(results.size()));
    Q_EMIT titleChanged();
    return true;
}

ExportContext MemoryView::exportContext(int) const {
    ExportContext ctx;
    ctx.runLabel = label_;
    ctx.storeRunId = storeRunId_;
    ctx.environment = env_;
    ctx.configuration = configuration_;
    ctx.configurationJson = configurationJson_;
    return ctx;
}

QList<ReportPart> MemoryView::reportParts() const {
    QList<ReportPart> parts;
    parts << ReportPart{tr("Active memory timeline"), timeline_, nullptr, {}}
          << ReportPart{tr("Live memory by category"), categories_, nullptr, {}}
          << ReportPart{tr("Peak by category"), nullptr, peak_, {}}
          << ReportPart{tr("Peak memory by point"), nullptr, points_, {}}
          << ReportPart{tr("Largest allocations"), nullptr, allocations_, {}};
    if (shown_ >= 0 && results_[shown_].frontier) parts << ReportPart{tr("OOM frontier"), frontier_, nullptr, {}};
    return parts;
}

QString MemoryView::runTitle() const { return exportContext(0).runTitle(); }

}  // namespace ts::ui
