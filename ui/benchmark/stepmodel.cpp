#include "ui/benchmark/stepmodel.h"

#include <algorithm>

#include "ui/common/format.h"
#include "ui/common/roles.h"

namespace ts::ui {

StepModel::StepModel(QObject* parent) : QAbstractTableModel(parent) {}

int StepModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int StepModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant StepModel::headerData(int section, Qt::Orientation o, int role) const {
    // The CSV's names where the raw value is not what the header says (see kCsvHeaderRole):
    // bytes, not MiB; whether a step is a warm-up one (1) or measured (0).
    if (o == Qt::Horizontal && role == kCsvHeaderRole) {
        switch (section) {
            case Phase:
                return QStringLiteral("warmup");
            case Allocated:
                return QStringLiteral("allocated_bytes");
            case Reserved:
                return QStringLiteral("reserved_bytes");
            case Peak:
                return QStringLiteral("peak_bytes");
        }
        return {};
    }
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Point:
            return tr("Point");
        case Step:
            return tr("Step");
        case Phase:
            return tr("Phase");
        case Forward:
            return tr("Forward ms");
        case Backward:
            return tr("Backward ms");
        case Optimizer:
            return tr("Optimizer ms");
        case Total:
            return tr("Total ms");
        case Loss:
            return tr("Loss");
        case Allocated:
            return tr("Allocated MiB");
        case Reserved:
            return tr("Reserved MiB");
        case Peak:
            return tr("Peak MiB");
    }
    return {};
}

QVariant StepModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = rows_[static_cast<size_t>(index.row())];
    const StepSample& s = r.sample;
    const bool memory =
        index.column() == Allocated || index.column() == Reserved || index.column() == Peak;
    if (memory && !measuresMemory(r.point) && (role == ValueRole || role == Qt::DisplayRole))
        return role == ValueRole ? QVariant() : QVariant(QStringLiteral("n/a"));
    if (role == ValueRole) {
        switch (index.column()) {
            case Point:
                return r.point;
            case Step:
                return s.index;
            case Phase:
                return s.warmup;
            case Forward:
                return s.forward_ms;
            case Backward:
                return s.backward_ms;
            case Optimizer:
                return s.optimizer_ms;
            case Total:
                return s.total_ms;
            case Loss:
                return s.loss;
            case Allocated:
                return static_cast<qlonglong>(s.memory_allocated);
            case Reserved:
                return static_cast<qlonglong>(s.memory_reserved);
            case Peak:
                return static_cast<qlonglong>(s.memory_peak);
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole)
        return index.column() == Phase ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                       : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Point:
            return r.point + 1;
        case Step:
            return s.index;
        case Phase:
            return s.warmup ? tr("warm-up") : tr("measured");
        case Forward:
            return formatMs(s.forward_ms);
        case Backward:
            return formatMs(s.backward_ms);
        case Optimizer:
            return formatMs(s.optimizer_ms);
        case Total:
            return formatMs(s.total_ms);
        case Loss:
            return QString::number(s.loss, 'f', 4);
        case Allocated:
            return formatMiB(s.memory_allocated);
        case Reserved:
            return formatMiB(s.memory_reserved);
        case Peak:
            return formatMiB(s.memory_peak);
    }
    return {};
}

void StepModel::setMeasuresMemory(int point, bool measures) {
    const auto it = std::find(noMemoryPoints_.begin(), noMemoryPoints_.end(), point);
    if (measures && it != noMemoryPoints_.end()) noMemoryPoints_.erase(it);
    if (!measures && it == noMemoryPoints_.end()) noMemoryPoints_.push_back(point);
}

bool StepModel::measuresMemory(int point) const {
    return std::find(noMemoryPoints_.begin(), noMemoryPoints_.end(), point) ==
           noMemoryPoints_.end();
}

void StepModel::clear() {
    noMemoryPoints_.clear();
    if (rows_.empty()) return;
    beginResetModel();
    rows_.clear();
    rows_.shrink_to_fit();
    endResetModel();
}

void StepModel::appendSteps(int point, const QList<StepSample>& steps) {
    if (steps.isEmpty()) return;
    const int first = static_cast<int>(rows_.size());
    beginInsertRows({}, first, first + static_cast<int>(steps.size()) - 1);
    rows_.reserve(rows_.size() + static_cast<size_t>(steps.size()));
    for (const auto& s : steps) rows_.push_back({point, s});
    endInsertRows();
}

std::pair<int, int> StepModel::rowsOfPoint(int point) const {
    // Points arrive in order, so rows are sorted by point.
    auto lo = std::lower_bound(rows_.begin(), rows_.end(), point,
                               [](const Row& r, int p) { return r.point < p; });
    auto hi =
        std::upper_bound(lo, rows_.end(), point, [](int p, const Row& r) { return p < r.point; });
    return {static_cast<int>(lo - rows_.begin()), static_cast<int>(hi - lo)};
}

}  // namespace ts::ui
