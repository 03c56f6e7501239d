// The Profile view's tables: one small model per engine table (kernels, ops, category
// roll-up, attention parts, phase times, step activity), each a list of the engine's rows
// with its columns, and the name filter of the search box. Numbers carry their raw value
// under ValueRole for sorting and CSV.
#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <functional>
#include <vector>

#include "profiler/profiler.h"

namespace ts::ui {

// A table of rows of `Row`, with its columns given as functions.
template <typename Row>
class RowTableModel : public QAbstractTableModel {
public:
    static constexpr int ValueRole = Qt::UserRole + 1;  // as the exporter reads raw numbers
    struct Column {
        QString title;
        std::function<QVariant(const Row&)> value;  // a number or a string
        std::function<QString(const Row&)> text;    // empty: value as text
    };
    RowTableModel(QList<Column> columns, QObject* parent)
        : QAbstractTableModel(parent), columns_(std::move(columns)) {}

    void setRows(std::vector<Row> rows) {
        beginResetModel();
        rows_ = std::move(rows);
        endResetModel();
    }
    const std::vector<Row>& rows() const { return rows_; }

    int rowCount(const QModelIndex& parent = {}) const override {
        return parent.isValid() ? 0 : static_cast<int>(rows_.size());
    }
    int columnCount(const QModelIndex& parent = {}) const override {
        return parent.isValid() ? 0 : static_cast<int>(columns_.size());
    }
    QVariant data(const QModelIndex& index, int role) const override {
        if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
            return {};
        const Row& r = rows_[static_cast<size_t>(index.row())];
        const Column& c = columns_[index.column()];
        switch (role) {
            case Qt::DisplayRole:
                return c.text ? QVariant(c.text(r)) : c.value(r);
            case ValueRole:
                return c.value(r);
            case Qt::ToolTipRole:
                return index.column() == 0 ? c.value(r) : QVariant();
            case Qt::TextAlignmentRole: {
                const QVariant v = c.value(r);
                return v.typeId() == QMetaType::QString
                           ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                           : QVariant(Qt::AlignRight | Qt::AlignVCenter);
            }
            default:
                return {};
        }
    }
    QVariant headerData(int section, Qt::Orientation o, int role) const override {
        if (o == Qt::Horizontal && role == Qt::DisplayRole && section < columns_.size())
            return columns_[section].title;
        return QAbstractTableModel::headerData(section, o, role);
    }

private:
    QList<Column> columns_;
    std::vector<Row> rows_;
};

using KernelTableModel = RowTableModel<KernelRow>;
using OpTableModel = RowTableModel<OpRow>;
using CategoryTableModel = RowTableModel<CategoryRow>;
using AttentionPartModel = RowTableModel<AttentionPart>;
using PhaseTimeModel = RowTableModel<PhaseTime>;
using StepActivityModel = RowTableModel<StepActivity>;
using ProfileDiffModel = RowTableModel<ProfileDiffRow>;

KernelTableModel* makeKernelTableModel(QObject* parent);
OpTableModel* makeOpTableModel(QObject* parent);
CategoryTableModel* makeCategoryTableModel(QObject* parent);
AttentionPartModel* makeAttentionPartModel(QObject* parent);
PhaseTimeModel* makePhaseTimeModel(QObject* parent);
StepActivityModel* makeStepActivityModel(QObject* parent);
// Two profiles compared (See Note [profile diff]): per profiled step; a side without the name
// has no value there (empty in a CSV), and the note says which.
ProfileDiffModel* makeProfileDiffModel(QObject* parent);

// The search box: keeps the rows whose first column (the kernel's or op's name) holds the
// text, case-insensitively; sorts by the raw values.
class NameFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit NameFilterModel(QObject* parent = nullptr);
    void setSearch(const QString& text);
    QString search() const { return search_; }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

private:
    QString search_;
};

}  // namespace ts::ui
