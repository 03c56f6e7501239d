// History's table pieces: the filter (every typed word must appear in the run's row, its
// configuration included) and a header whose sort arrow points the way the rows run.
#pragma once

#include <QHeaderView>
#include <QSortFilterProxyModel>
#include <QStyleOptionHeader>

namespace ts::ui {

class RunFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    // Words separated by spaces, AND-ed, case-insensitive: "fp32 xl" keeps runs with both. A
    // word is found inside a cell's text ("fp" finds fp32), except in the status, where it is a
    // whole word of RunListModel::FilterRole: "ok", "not ok" (or "failed"), "interrupted".
    void setWords(const QString& text);
    bool filtering() const { return !words_.isEmpty(); }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QStringList words_;
};

// Qt's header draws "▲" over descending rows (it maps Descending to SortUp, which Fusion
// draws pointing up). Here the arrow points down when the largest value is on top.
class SortArrowHeader : public QHeaderView {
    Q_OBJECT
public:
    explicit SortArrowHeader(QWidget* parent = nullptr) : QHeaderView(Qt::Horizontal, parent) {}
    // The arrow drawn over `section`: SortDown (▼), SortUp (▲) or None.
    QStyleOptionHeader::SortIndicator arrowOf(int section) const;

protected:
    void initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const override;
};

}  // namespace ts::ui
