#include "shell/runlistmodel.h"

#include "common/format.h"

namespace ts::ui {

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

int RunListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunListModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunListModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Id: return tr("Run");
        case Created: return tr("Created");
        case Kind: return tr("Kind");
        case Label: return tr("Label");
        case Device: return tr("Device");
        case Points: return tr("Points");
        case Ok: return tr("OK");
    }
    return {};
}

QVariant RunListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RunInfo& r = runs_[static_cast<size_t>(index.row())];
    if (role == RunIdRole) return static_cast<qlonglong>(r.id);
    if (role == Qt::ToolTipRole) return qstr(r.spec_json).left(2000);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Id: return static_cast<qlonglong>(r.id);
        case Created: return qstr(r.created);
        case Kind: return qstr(r.lab);
        case Label: return qstr(r.label);
        case Device: return qstr(r.device_name);
        case Points: return r.point_count;
        case Ok: return r.ok_count;
    }
    return {};
}

void RunListModel::setRuns(std::vector<RunInfo> runs) {
    beginResetModel();
    runs_ = std::move(runs);
    endResetModel();
}

const RunInfo* RunListModel::runById(int64_t id) const {
    const int row = rowOf(id);
    return row < 0 ? nullptr : &runs_[static_cast<size_t>(row)];
}

int RunListModel::rowOf(int64_t id) const {
    for (size_t i = 0; i < runs_.size(); ++i)
        if (runs_[i].id == id) return static_cast<int>(i);
    return -1;
}

}  // namespace ts::ui
