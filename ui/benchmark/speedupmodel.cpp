#include "benchmark/speedupmodel.h"

#include <QBrush>
#include <QColor>
#include <QHash>

#include <algorithm>

#include "common/format.h"
#include "benchmark/resultmodel.h"

namespace ts::ui {

QString metricName(Metric m) {
    switch (m) {
        case Metric::Total: return QStringLiteral("total");
        case Metric::Forward: return QStringLiteral("forward");
        case Metric::Backward: return QStringLiteral("backward");
        case Metric::Optimizer: return QStringLiteral("optimizer");
    }
    return {};
}

const Stats& metricStats(const BenchResult& r, Metric m) {
    switch (m) {
        case Metric::Forward: return r.forward;
        case Metric::Backward: return r.backward;
        case Metric::Optimizer: return r.optimizer;
        case Metric::Total: break;
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
    const QString status = !c.present     ? QStringLiteral("missing")
                           : !c.finished  ? QStringLiteral("running")
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

QVariant SpeedupModel::speedupData(const Cell& base, const Cell& c, int role) const {
    const bool baseOk = base.present && base.finished && base.status == Status::Ok;
    const bool ok = c.present && c.finished && c.status == Status::Ok;
    if (role == StatusRole) {
        if (c.present && c.finished && c.status != Status::Ok) return qstr(toString(c.status));
        if (base.present && base.finished && base.status != Status::Ok)
            return QStringLiteral("baseline ") + qstr(toString(base.status));
        return ok && baseOk ? QStringLiteral("ok") : QStringLiteral("missing");
    }
    const bool have = ok && baseOk && c.mean > 0;
    const double ratio = have ? base.mean / c.mean : 0;
    if (role == ValueRole) return have ? QVariant(ratio) : QVariant();
    if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::BackgroundRole) {
        if (c.present && c.finished && c.status != Status::Ok)
            return QBrush(QColor(0xd3, 0x2f, 0x2f, 60));
        if (have) return QBrush(ratio >= 1 ? QColor(0x2e, 0x7d, 0x32, 50) : QColor(0xef, 0x6c, 0x00, 50));
        return {};
    }
    if (role == Qt::ToolTipRole && have)
        return tr("%1 ms / %2 ms").arg(formatMs(base.mean), formatMs(c.mean));
    if (role != Qt::DisplayRole) return {};
    if (c.present && c.finished && c.status != Status::Ok) return qstr(toString(c.status));
    if (base.present && base.finished && base.status != Status::Ok)
        return tr("baseline %1").arg(qstr(toString(base.status)));
    if (!have) return QStringLiteral("—");
    return QString::number(ratio, 'f', 2) + QStringLiteral("×");
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
    std::vector<BenchConfig> configs = source_ ? source_->configs() : std::vector<BenchConfig>{};
    candidates_ = varyingDimensions(configs);
    auto varies = [&](Dimension d) {
        return std::find(candidates_.begin(), candidates_.end(), d) != candidates_.end();
    };
    if (wanted_ && (varies(*wanted_) || candidates_.empty())) {
        dim_ = *wanted_;
    } else {
        dim_ = Dimension::Precision;
        for (Dimension d : {Dimension::Precision, Dimension::Attention, Dimension::Mode,
                            Dimension::Warmup, Dimension::Batch, Dimension::Context,
                            Dimension::Size, Dimension::Steps, Dimension::Device})
            if (varies(d)) {
                dim_ = d;
                break;
            }
    }
    values_ = dimensionValues(configs, dim_);
    baseline_ = values_.contains(wantedBaseline_) ? wantedBaseline_
                : values_.isEmpty()               ? QString()
                                                  : values_.front();
    // Rows: the other varying dimensions.
    std::vector<Dimension> others;
    for (Dimension d : candidates_)
        if (d != dim_) others.push_back(d);
    QHash<QString, int> rowOf;
    if (source_) {
        for (const auto& e : source_->entries()) {
            const BenchConfig& c = e.result.config;
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
