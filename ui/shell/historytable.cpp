#include "ui/shell/historytable.h"

#include <QRegularExpression>

#include "ui/shell/runlistmodel.h"

namespace ts::ui {

void RunFilterProxy::setWords(const QString& text) {
    QString t = text;
    // "not ok" (and "not-ok") is one word: the status's (RunListModel::FilterRole).
    t.replace(QRegularExpression(QStringLiteral("\\bnot[\\s-]+ok\\b"),
                                 QRegularExpression::CaseInsensitiveOption),
              QStringLiteral("notok"));
    words_ = t.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    invalidateFilter();
}

bool RunFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (words_.isEmpty()) return true;
    const QAbstractItemModel* m = sourceModel();
    QString row;
    QStringList status;
    for (int c = 0; c < m->columnCount(sourceParent); ++c) {
        const QModelIndex i = m->index(sourceRow, c, sourceParent);
        if (c == RunListModel::Status)
            status = i.data(RunListModel::FilterRole).toString().split(QLatin1Char(' '));
        else
            row += i.data().toString() + QLatin1Char('\n');
    }
    for (const QString& w : words_)
        if (!row.contains(w, Qt::CaseInsensitive) && !status.contains(w, Qt::CaseInsensitive))
            return false;
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
