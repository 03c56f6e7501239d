#include "ui/shell/historytable.h"

namespace ts::ui {

void RunFilterProxy::setWords(const QString& text) {
    words_ = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    invalidateFilter();
}

bool RunFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (words_.isEmpty()) return true;
    const QAbstractItemModel* m = sourceModel();
    QString row;
    for (int c = 0; c < m->columnCount(sourceParent); ++c)
        row += m->index(sourceRow, c, sourceParent).data().toString() + QLatin1Char('\n');
    for (const QString& w : words_)
        if (!row.contains(w, Qt::CaseInsensitive)) return false;
    return true;
}

QStyleOptionHeader::SortIndicator SortArrowHeader::arrowOf(int section) const {
    QStyleOptionHeader opt;
    initStyleOptionForIndex(&opt, section);
    return opt.sortIndicator;
}

void SortArrowHeader::initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const {
    QHeaderView::initStyleOptionForIndex(option, logicalIndex);
    if (!isSortIndicatorShown() || logicalIndex != sortIndicatorSection()) return;
    option->sortIndicator = sortIndicatorOrder() == Qt::DescendingOrder
                                ? QStyleOptionHeader::SortDown
                                : QStyleOptionHeader::SortUp;
}

}  // namespace ts::ui
