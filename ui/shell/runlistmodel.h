// The run history from the results store: one row per stored run.
#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <vector>

#include "core/store.h"

namespace ts::ui {

class RunListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Created, Kind, Label, Configuration, Device, Points, Status, ColumnCount };
    static constexpr int RunIdRole = Qt::UserRole + 1;
    // What the columns sort by: the id, the UTC time, counts as numbers (display texts
    // such as "Yesterday 14:05" or "3 of 4 ok" do not sort).
    static constexpr int SortRole = Qt::UserRole + 2;
    // What History's filter matches a cell against (the display text where not given): the
    // Status column's is "ok" for a run all of whose points are, and "notok failed" (plus
    // "interrupted" for one that did not finish) for any other, so that "ok" finds no run
    // that is "not ok" or "none of 4 ok".
    static constexpr int FilterRole = Qt::UserRole + 3;

    explicit RunListModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    void setRuns(std::vector<RunInfo> runs);
    const std::vector<RunInfo>& runs() const { return runs_; }
    const RunInfo* runById(int64_t id) const;
    int rowOf(int64_t id) const;

    // A stored time (ISO 8601 UTC) in local time, as people read it: "Today 14:05",
    // "Yesterday 09:12", "3 Mar 14:05", "3 Mar 2025 14:05" (relative to `now`).
    static QString localTime(const QString& isoUtc,
                             const QDateTime& now = QDateTime::currentDateTime());
    // The Status column: "ok", "not ok", "all 4 ok", "3 of 4 ok", "none of 4 ok", "no results".
    static QString statusText(int points, int ok);

private:
    std::vector<RunInfo> runs_;
    std::vector<QString> summaries_;  // the Configuration column, one per run
};

}  // namespace ts::ui
