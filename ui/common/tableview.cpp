#include "ui/common/tableview.h"

#include <QHeaderView>
#include <QKeyEvent>
#include <QMenu>
#include <QPainter>

namespace ts::ui {

DataTableView::DataTableView(QWidget* parent) : QTableView(parent) {
    setAlternatingRowColors(true);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setWordWrap(false);
    verticalHeader()->setVisible(false);
    // Fixed row heights keep a million-row step table cheap to scroll.
    verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    horizontalHeader()->setStretchLastSection(true);
    horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    setContextMenuPolicy(Qt::CustomContextMenu);
    connect(this, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(this);
        menu.addAction(tr("Export Table…"), this, &DataTableView::exportRequested);
        menu.addAction(tr("Copy Table"), this, &DataTableView::copyRequested);
        // What the table's owner added (addAction): "Profile This Point" of the results.
        if (!actions().isEmpty()) menu.addSeparator();
        for (QAction* a : actions()) menu.addAction(a);
        menu.exec(viewport()->mapToGlobal(pos));
    });
}

void DataTableView::setModel(QAbstractItemModel* model) {
    QTableView::setModel(model);
    if (!model) return;
    connect(model, &QAbstractItemModel::modelReset, this, &DataTableView::fitColumnsToHeaders);
    connect(model, &QAbstractItemModel::headerDataChanged, this,
            &DataTableView::fitColumnsToHeaders);
    fitColumnsToHeaders();
}

void DataTableView::fitColumnsToHeaders() {
    if (!model()) return;
    QHeaderView* h = horizontalHeader();
    const QFontMetrics fm(h->font());
    for (int c = 0; c < model()->columnCount(); ++c) {
        if (h->sectionResizeMode(c) != QHeaderView::Interactive) continue;
        const int want =
            fm.horizontalAdvance(model()->headerData(c, Qt::Horizontal).toString()) + 24;
        h->resizeSection(c, std::max(want, fm.horizontalAdvance(QStringLiteral("00000.000")) + 16));
    }
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
}

void DataTableView::setEmptyText(const QString& text) {
    empty_ = text;
    viewport()->update();
}

bool DataTableView::showsEmptyText() const {
    return !empty_.isEmpty() && (!model() || model()->rowCount() == 0);
}

void DataTableView::paintEvent(QPaintEvent* e) {
    QTableView::paintEvent(e);
    if (!showsEmptyText()) return;
    QPainter painter(viewport());
    QColor text = palette().color(QPalette::PlaceholderText);
    painter.setPen(text);
    const QRect area = viewport()->rect().adjusted(16, 16, -16, -16);
    painter.drawText(area, Qt::AlignCenter | Qt::TextWordWrap, empty_);
}

void DataTableView::changeEvent(QEvent* e) {
    QTableView::changeEvent(e);
    if (e->type() == QEvent::FontChange) fitColumnsToHeaders();
}

void DataTableView::keyPressEvent(QKeyEvent* e) {
    if (e->matches(QKeySequence::Copy)) {
        Q_EMIT copyRequested();
        return;
    }
    QTableView::keyPressEvent(e);
}

}  // namespace ts::ui
