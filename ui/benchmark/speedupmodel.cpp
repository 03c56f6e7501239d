#include "ui/benchmark/speedupmodel.h"

#include <QBrush>
#include <QColor>
#include <QHash>
#include <algorithm>
#include <cmath>

#include "ui/benchmark/resultmodel.h"
#include "ui/common/format.h"

namespace ts::ui {

QString metricName(Metric m) {
    switch (m) {
        case Metric::Total:
            return QStringLiteral("total");
        case Metric::Forward:
            return QStringLiteral("forward");
        case Metric::Backward:
            return QStringLiteral("backward");
        case Metric::Optimizer:
            return QStringLiteral("optimizer");
    }
    return {};
}

const Stats& metricStats(const BenchResult& r, Metric m) {
    switch (m) {
        case Metric::Forward:
            return r.forward;
        case Metric::Backward:
            return r.backward;
        case Metric::Optimizer:
            return r.optimizer;
        case Metric::Total:
            break;
    }
    return r.total;
}

SpeedupModel::SpeedupModel(ResultModel* source, QObject* parent)
    : QAbstractTableModel(parent), source_(source) {
    connect(source, &QAbstractItemModel::modelReset, this, &SpeedupModel::rebuild);
    connect(source, &QAbstractItemModel::rowsInserted, this, &SpeedupModel::rebuild);
    connect(source, &QAbstractItemModel::rowsRemoved, this, &SpeedupModel::rebuild);
    connect(source, &QAbstractItemModel::dataChanged, this, &SpeedupModel::rebuild);
    rebuild();
}

void SpeedupModel::setDimension(std::optional<Dimension> d) {
    wanted_ = d;
    wantedBaseline_.clear();
    rebuild();
}

void SpeedupModel::setBaseline(const QString& value) {
    wantedBaseline_ = value;
    rebuild();
}

void SpeedupModel::setMetric(Metric m) {
    metric_ = m;
    rebuild();
}

int SpeedupModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rowLabels_.size());
}

int SpeedupModel::columnCount(const QModelIndex& parent) const {
    if (parent.isValid()) return 0;
    const int n = static_cast<int>(values_.size());
    return 1 + n + std::max(0, n - 1);
}

int SpeedupModel::sourceAt(int row, int column) const {
    if (row < 0 || row >= static_cast<int>(cells_.size())) return -1;
    for (int i = 0; i < static_cast<int>(values_.size()); ++i)
        if (column == timeColumn(values_[i]) || column == speedupColumn(values_[i]))
            return cells_[static_cast<size_t>(row)][static_cast<size_t>(i)].source;
    return -1;
}

int SpeedupModel::timeColumn(const QString& value) const {
    const int i = static_cast<int>(values_.indexOf(value));
    return i < 0 ? -1 : 1 + i;
}

int SpeedupModel::speedupColumn(const QString& value) const {
    const int i = static_cast<int>(values_.indexOf(value));
    const int b = static_cast<int>(values_.indexOf(baseline_));
    if (i < 0 || b < 0 || i == b) return -1;
    return 1 + static_cast<int>(values_.size()) + (i < b ? i : i - 1);
}

QVariant SpeedupModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    const int n = static_cast<int>(values_.size());
    if (section == 0) return tr("Configuration");
    if (section <= n) return tr("%1 ms").arg(values_[section - 1]);
    for (const QString& v : values_)
        if (speedupColumn(v) == section) return tr("%1 vs %2 ×").arg(v, baseline_);
    return {};
}

QVariant SpeedupModel::timeData(const Cell& c, int role) const {
    const QString status = !c.present    ? QStringLiteral("missing")
                           : !c.finished ? QStringLiteral("running")
                                         : qstr(toString(c.status));
    if (role == StatusRole) return status;
    const bool ok = c.present && c.finished && c.status == Status::Ok;
    if (role == ValueRole) return ok ? QVariant(c.mean) : QVariant();
    if (role == Qt::ToolTipRole) {
        if (!c.error.isEmpty()) return c.error;
        if (ok) return tr("mean %1 ms, std %2 ms").arg(formatMs(c.mean), formatMs(c.std));
        return {};
    }
    if (role == Qt::BackgroundRole && c.present && c.finished && c.status != Status::Ok)
        return QBrush(QColor(0xd3, 0x2f, 0x2f, 60));
    if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    if (!c.present) return QStringLiteral("—");
    if (!c.finished) return tr("running");
    if (!ok) return status;  // "OOM", "failed", "cancelled"
    return formatMs(c.mean);
}

SpeedupModel::Ratio SpeedupModel::ratioOf(const Cell& base, const Cell& c) const {
    Ratio r;
    const bool baseOk = base.present && base.finished && base.status == Status::Ok;
    const bool ok = c.present && c.finished && c.status == Status::Ok;
    if (!ok || !baseOk || !(c.mean > 0) || !(base.mean > 0)) return r;
    r.present = true;
    r.value = base.mean / c.mean;
    const double cvBase = base.std / base.mean, cv = c.std / c.mean;
    r.spread = r.value * std::sqrt(cvBase * cvBase + cv * cv);
    QStringList why;
    if (cvBase > kNoisyCv)
        why << tr("%1 varies by %2 % between steps").arg(baseline_).arg(cvBase * 100, 0, 'f', 0);
    if (cv > kNoisyCv)
        why << tr("this value varies by %1 % between steps").arg(cv * 100, 0, 'f', 0);
    if (r.value - r.spread <= 1.0 && r.value + r.spread >= 1.0)
        why << tr("%1 ± %2 includes 1.0: no measurable difference")
                   .arg(r.value, 0, 'f', 2)
                   .arg(r.spread, 0, 'f', 2);
    r.uncertain = !why.isEmpty();
    if (r.uncertain)
        r.why = tr("Uncertain: %1 (noisy above a coefficient of variation of %2 %)")
                    .arg(why.join(QStringLiteral("; ")))
                    .arg(kNoisyCv * 100, 0, 'f', 0);
    return r;
}

SpeedupModel::Ratio SpeedupModel::ratio(int row, const QString& value) const {
    const int i = static_cast<int>(values_.indexOf(value));
    const int b = static_cast<int>(values_.indexOf(baseline_));
    if (row < 0 || row >= static_cast<int>(cells_.size()) || i < 0 || b < 0 || i == b) return {};
    const auto& cells = cells_[static_cast<size_t>(row)];
    return ratioOf(cells[static_cast<size_t>(b)], cells[static_cast<size_t>(i)]);
}

QVariant SpeedupModel::speedupData(const Cell& base, const Cell& c, int role) const {
    const bool failed = c.present && c.finished && c.status != Status::Ok;
    const bool baseFailed = base.present && base.finished && base.status != Status::Ok;
    const Ratio r = ratioOf(base, c);
    if (role == StatusRole) {
        if (failed) return qstr(toString(c.status));
        if (baseFailed) return QStringLiteral("baseline ") + qstr(toString(base.status));
        return r.present ? QStringLiteral("ok") : QStringLiteral("missing");
    }
    if (role == UncertainRole) return r.present && r.uncertain;
    if (role == ValueRole) return r.present ? QVariant(r.value) : QVariant();
    if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::BackgroundRole) {
        if (failed) return QBrush(QColor(0xd3, 0x2f, 0x2f, 60));
        if (r.present && !r.uncertain)
            return QBrush(r.value >= 1 ? QColor(0x2e, 0x7d, 0x32, 50)
                                       : QColor(0xef, 0x6c, 0x00, 50));
        return {};
    }
    if (role == Qt::ForegroundRole && r.present && r.uncertain)
        return QBrush(QColor(0x80, 0x80, 0x80));
    if (role == Qt::ToolTipRole && r.present) {
        const QString base_ = tr("%1 ms / %2 ms").arg(formatMs(base.mean), formatMs(c.mean));
        return r.uncertain ? r.why + QStringLiteral("\n") + base_ : base_;
    }
    if (role != Qt::DisplayRole) return {};
    if (failed) return qstr(toString(c.status));
    if (baseFailed) return tr("baseline %1").arg(qstr(toString(base.status)));
    if (!r.present) return QStringLiteral("—");
    const QString text = QString::number(r.value, 'f', 2) + QStringLiteral("×");
    return r.uncertain ? text + QStringLiteral(" ± ") + QString::number(r.spread, 'f', 2) : text;
}

QVariant SpeedupModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row(), col = index.column();
    const int n = static_cast<int>(values_.size());
    if (col == 0) {
        if (role == Qt::DisplayRole || role == ValueRole) return rowLabels_[row];
        return {};
    }
    const auto& cells = cells_[static_cast<size_t>(row)];
    if (col <= n) return timeData(cells[static_cast<size_t>(col - 1)], role);
    const int b = static_cast<int>(values_.indexOf(baseline_));
    for (int i = 0; i < n; ++i)
        if (speedupColumn(values_[i]) == col)
            return speedupData(cells[static_cast<size_t>(b)], cells[static_cast<size_t>(i)], role);
    return {};
}

void SpeedupModel::rebuild() {
    beginResetModel();
    const QStringList oldValues = values_;
    const Dimension oldDim = dim_;
    const QString oldBaseline = baseline_;
    values_.clear();
    rowLabels_.clear();
    cells_.clear();
    std::vector<PointConfig> configs = source_ ? source_->configs() : std::vector<PointConfig>{};
    candidates_.clear();
    for (Dimension d : varyingDimensions(configs))
        if (comparesAsSpeedup(d)) candidates_.push_back(d);
    auto varies = [&](Dimension d) {
        return std::find(candidates_.begin(), candidates_.end(), d) != candidates_.end();
    };
    if (wanted_ && comparesAsSpeedup(*wanted_) && (varies(*wanted_) || candidates_.empty())) {
        dim_ = *wanted_;
    } else {
        dim_ = Dimension::Precision;
        // A sweep of the user's code against TrainScope's, or of eager against compiled, is
        // made to compare them: those first.
        for (Dimension d :
             {Dimension::Source, Dimension::Exec, Dimension::Precision, Dimension::Attention,
              Dimension::Warmup, Dimension::Batch, Dimension::Context, Dimension::Size,
              Dimension::Steps, Dimension::Device})
            if (varies(d)) {
                dim_ = d;
                break;
            }
    }
    values_ = dimensionValues(configs, dim_);
    baseline_ = values_.contains(wantedBaseline_) ? wantedBaseline_
                : values_.isEmpty()               ? QString()
                                                  : values_.front();
    // Rows: the other varying dimensions (mode included: each mode is its own row).
    std::vector<Dimension> others;
    for (Dimension d : varyingDimensions(configs))
        if (d != dim_) others.push_back(d);
    QHash<QString, int> rowOf;
    if (source_) {
        for (size_t index = 0; index < source_->entries().size(); ++index) {
            const auto& e = source_->entries()[index];
            const PointConfig& c = e.result.config;
            const QString key = pointKey(c, {dim_});
            int row = rowOf.value(key, -1);
            if (row < 0) {
                row = static_cast<int>(rowLabels_.size());
                rowOf.insert(key, row);
                rowLabels_ << labelOver(c, others);
                cells_.emplace_back(static_cast<size_t>(values_.size()));
            }
            Cell& cell = cells_[static_cast<size_t>(row)]
                               [static_cast<size_t>(values_.indexOf(dimensionValue(dim_, c)))];
            cell.present = true;
            cell.source = static_cast<int>(index);
            cell.finished = e.finished;
            cell.status = e.result.status;
            const Stats& s = metricStats(e.result, metric_);
            cell.mean = s.mean;
            cell.std = s.std;
            cell.error = qstr(e.result.error);
        }
    }
    endResetModel();
    if (oldValues != values_ || oldDim != dim_ || oldBaseline != baseline_) Q_EMIT shapeChanged();
}

}  // namespace ts::ui
