#include "ui/benchmark/resultmodel.h"

#include <QBrush>
#include <QColor>

#include "ui/common/dimensions.h"
#include "ui/common/format.h"
#include "ui/common/pointformat.h"
#include "ui/common/roles.h"

namespace ts::ui {

ResultModel::ResultModel(QObject* parent) : QAbstractTableModel(parent) {}

int ResultModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

int ResultModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ResultModel::headerData(int section, Qt::Orientation o, int role) const {
    // The CSV's name where the raw value's unit is not the header's (see kCsvHeaderRole).
    if (o == Qt::Horizontal && role == kCsvHeaderRole && section == PeakMemory)
        return QStringLiteral("peak_memory_bytes");
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Point:
            return tr("Point");
        case Size:
            return tr("Model");
        case Params:
            return tr("Parameters");
        case Context:
            return tr("Context");
        case Batch:
            return tr("Batch");
        case Precision:
            return tr("Precision");
        case Attention:
            return tr("Attention");
        case Mode:
            return tr("Mode");
        case Exec:
            return tr("Execution");
        case Checkpoint:
            return tr("Checkpointing");
        case Device:
            return tr("Device");
        case Warmup:
            return tr("Warm-up");
        case Steps:
            return tr("Steps");
        case Status:
            return tr("Status");
        case Forward:
            return tr("Forward ms");
        case ForwardStd:
            return tr("Forward std ms");
        case Backward:
            return tr("Backward ms");
        case BackwardStd:
            return tr("Backward std ms");
        case Optimizer:
            return tr("Optimizer ms");
        case OptimizerStd:
            return tr("Optimizer std ms");
        case Total:
            return tr("Total ms");
        case TotalStd:
            return tr("Total std ms");
        case TotalCv:
            return tr("Total CV %");
        case Tflops:
            return tr("TFLOP/s");
        case PeakShare:
            return tr("% of peak");
        case PeakMemory:
            return tr("Peak MiB");
        case Compile:
            return tr("Compile s");
    }
    return {};
}

static QString statusText(const ResultModel::Entry& e) {
    return e.finished ? qstr(toString(e.result.status)) : QStringLiteral("running");
}

static QString notApplicable() { return QStringLiteral("n/a"); }

// The phase's statistics behind a column, and whether the point's mode runs that phase.
static std::pair<const Stats*, bool> phaseOf(const BenchResult& r, int col) {
    switch (col) {
        case ResultModel::Forward:
        case ResultModel::ForwardStd:
            return {&r.forward, true};
        case ResultModel::Backward:
        case ResultModel::BackwardStd:
            return {&r.backward, r.config.mode != Mode::Forward};
        case ResultModel::Optimizer:
        case ResultModel::OptimizerStd:
            return {&r.optimizer, r.config.mode == Mode::Train};
        default:
            return {&r.total, true};
    }
}

QVariant ResultModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Entry& e = entries_[static_cast<size_t>(index.row())];
    const BenchResult& r = e.result;
    const PointConfig& c = r.config;
    const bool stats = e.finished && r.total.count > 0;
    const int col = index.column();
    if (role == StatusRole) return statusText(e);
    if (role == Qt::ToolTipRole) {
        if (!r.error.empty()) return qstr(r.error);
        if (col == Tflops)
            return tr(
                "Model FLOPs of forward and backward (from the dimensions: matmuls and attention) "
                "over "
                "their measured mean time");
        if (col == PeakShare) {
            const auto peak = densePeakTflops(r.environment.device_name, c.precision);
            return peak ? tr("Of %1's dense %2 peak, %3 TFLOP/s")
                              .arg(qstr(r.environment.device_name), qstr(toString(c.precision)))
                              .arg(*peak)
                        : tr("Only for the GPUs TrainScope knows the peak of (not the CPU)");
        }
        if (col == TotalCv && e.finished) {
            const std::string noise = noiseText(r);
            return noise.empty() ? tr("Coefficient of variation of the step time over the measured "
                                      "steps: steady "
                                      "(at most %1%)")
                                       .arg(kNoisyCv * 100)
                                 : tr("Noisy measurement, %1").arg(qstr(noise));
        }
        if (col == Compile)
            return tr(
                "The compilation's share of the first step: its wall time less a measured step's "
                "mean (torch.compile, or TrainScope's compiled mode); not part of the step times");
        if (col == PeakMemory && e.finished && !measuresDeviceMemory(c))
            return tr("No device memory on the CPU: memory is measured on CUDA devices only");
        return describeConfig(c);
    }
    if (role == Qt::ForegroundRole && col == Status && e.finished && r.status != Status::Ok)
        return QBrush(QColor(0xd3, 0x2f, 0x2f));
    // See Note [noisy measurement]: a CV above 5% in amber, marked, its cause in the tooltip.
    if (role == Qt::ForegroundRole && col == TotalCv && e.finished && noiseFlag(r))
        return QBrush(QColor(0xe0, 0x8a, 0x00));
    if (role == Qt::TextAlignmentRole) {
        const bool text = col == Size || col == Precision || col == Attention || col == Mode ||
                          col == Exec || col == Checkpoint || col == Device || col == Status;
        return text ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                    : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role != Qt::DisplayRole && role != ValueRole) return {};
    const bool raw = role == ValueRole;
    auto none = [&](const QString& text) { return raw ? QVariant() : QVariant(text); };
    // Mean or std of a phase: empty until finished, "n/a" for a phase the mode skips.
    auto phase = [&](bool wantStd) -> QVariant {
        const auto [s, applies] = phaseOf(r, col);
        if (!stats) return none(QString());
        if (!applies) return none(notApplicable());
        const double v = wantStd ? s->std : s->mean;
        return raw ? QVariant(v) : QVariant(formatMs(v));
    };
    switch (col) {
        case Point:
            return index.row() + 1;
        case Size:
            return sizeLabel(c.model);
        case Params: {
            // The model that ran: the user's own where it was theirs (the runner counts it),
            // TrainScope's count of its model until the point has run.
            const auto n = r.parameter_count > 0 ? r.parameter_count : parameterCount(c.model);
            return raw ? QVariant(static_cast<qlonglong>(n)) : QVariant(formatParams(n));
        }
        case Context:
            return static_cast<qlonglong>(c.model.context_length);
        case Batch:
            return static_cast<qlonglong>(c.batch_size);
        case Precision:
            return qstr(toString(c.precision));
        case Attention:
            return qstr(toString(c.attention));
        case Mode:
            return qstr(toString(c.mode));
        case Exec:
            return qstr(toString(c.exec));
        case Checkpoint:
            return qstr(toString(c.checkpoint));
        case Device:
            return qstr(c.device);
        case Warmup:
            return c.warmup;
        case Steps:
            return c.steps;
        case Status:
            return statusText(e);
        case Forward:
        case Backward:
        case Optimizer:
        case Total:
            return phase(false);
        case ForwardStd:
        case BackwardStd:
        case OptimizerStd:
        case TotalStd:
            return phase(true);
        case TotalCv:
            if (!stats) return none(QString());
            return raw ? QVariant(r.total.cv * 100)
                       : QVariant(QString::number(r.total.cv * 100, 'f', 1) +
                                  (noiseFlag(r) ? QStringLiteral(" ⚠") : QString()));
        case Tflops: {
            if (!stats) return none(QString());
            const auto t = achievedTflops(r);
            if (!t) return none(notApplicable());
            return raw ? QVariant(*t) : QVariant(QString::number(*t, 'g', 3));
        }
        case PeakShare: {
            if (!stats) return none(QString());
            const auto p = peakShare(r);
            if (!p) return none(notApplicable());
            return raw ? QVariant(*p * 100)
                       : QVariant(QStringLiteral("%1%").arg(*p * 100, 0, 'f', 0));
        }
        case PeakMemory:
            if (!e.finished) return none(QString());
            if (!measuresDeviceMemory(c)) return none(notApplicable());
            return raw ? QVariant(static_cast<qlonglong>(r.peak_memory))
                       : QVariant(formatMiB(r.peak_memory));
        case Compile: {
            if (!stats) return none(QString());
            const auto s = compileSeconds(r);
            if (!s) return none(notApplicable());
            return raw ? QVariant(*s) : QVariant(QString::number(*s, 'f', 1));
        }
    }
    return {};
}

void ResultModel::clear() {
    if (entries_.empty()) return;
    beginResetModel();
    entries_.clear();
    endResetModel();
}

void ResultModel::ensureRows(int count) {
    const int have = static_cast<int>(entries_.size());
    if (count <= have) return;
    beginInsertRows({}, have, count - 1);
    entries_.resize(static_cast<size_t>(count));
    endInsertRows();
}

void ResultModel::setRunning(int index, const PointConfig& config) {
    if (index < 0) return;
    ensureRows(index + 1);
    Entry& e = entries_[static_cast<size_t>(index)];
    e.result = BenchResult{};
    e.result.config = config;
    e.finished = false;
    Q_EMIT dataChanged(this->index(index, 0), this->index(index, ColumnCount - 1));
}

void ResultModel::setResult(int index, const BenchResult& result) {
    if (index < 0) return;
    ensureRows(index + 1);
    Entry& e = entries_[static_cast<size_t>(index)];
    e.result = result;
    e.result.steps.clear();  // the steps live in the step model; keep rows light
    e.result.steps.shrink_to_fit();
    e.finished = true;
    Q_EMIT dataChanged(this->index(index, 0), this->index(index, ColumnCount - 1));
}

void ResultModel::setResults(const std::vector<BenchResult>& results) {
    beginResetModel();
    entries_.clear();
    for (const auto& r : results) {
        Entry e{r, true};
        e.result.steps.clear();
        entries_.push_back(std::move(e));
    }
    endResetModel();
}

std::vector<BenchResult> ResultModel::finishedResults() const {
    std::vector<BenchResult> out;
    for (const auto& e : entries_)
        if (e.finished) out.push_back(e.result);
    return out;
}

std::vector<PointConfig> ResultModel::configs() const {
    std::vector<PointConfig> out;
    for (const auto& e : entries_) out.push_back(e.result.config);
    return out;
}

}  // namespace ts::ui
