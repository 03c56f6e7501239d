#include "ui/common/seriesmodel.h"

#include <algorithm>

#include "ui/common/format.h"

namespace ts::ui {

int SeriesModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int SeriesModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SeriesModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Series:
            return tr("Series");
        case X:
            return xTitle();
        case XLabel:
            return tr("Label");
        case Mean:
            return tr("Mean ms");
        case Std:
            return tr("Std ms");
    }
    return {};
}

QVariant SeriesModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = rows_[static_cast<size_t>(index.row())];
    if (role == ValueRole) {
        switch (index.column()) {
            case Series:
                return r.series;
            case X:
                return r.x;
            case XLabel:
                return r.xLabel;
            case Mean:
                return r.mean;
            case Std:
                return r.std;
        }
        return {};
    }
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Series:
            return r.series;
        case X:
            return QString::number(r.x, 'g', 6);
        case XLabel:
            return r.xLabel;
        case Mean:
            return formatMs(r.mean);
        case Std:
            return formatMs(r.std);
    }
    return {};
}

void SeriesModel::sortRows() {
    std::stable_sort(rows_.begin(), rows_.end(), [&](const Row& a, const Row& b) {
        const auto ia = series_.indexOf(a.series), ib = series_.indexOf(b.series);
        return ia != ib ? ia < ib : a.x < b.x;
    });
}

}  // namespace ts::ui
