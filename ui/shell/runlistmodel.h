// The run history from the results store: one row per stored run.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "core/store.h"

namespace ts::ui {

class RunListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Created, Kind, Label, Device, Points, Ok, ColumnCount };
    static constexpr int RunIdRole = Qt::UserRole + 1;

    explicit RunListModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    void setRuns(std::vector<RunInfo> runs);
    const std::vector<RunInfo>& runs() const { return runs_; }
    const RunInfo* runById(int64_t id) const;
    int rowOf(int64_t id) const;

private:
    std::vector<RunInfo> runs_;
};

}  // namespace ts::ui
