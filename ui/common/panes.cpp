#include "ui/common/panes.h"

#include <QHBoxLayout>
#include <QSplitter>
#include <QStandardItem>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "ui/common/roles.h"

namespace ts::ui {

QStandardItem* cell(const QString& text, bool right) {
    auto* item = new QStandardItem(text);
    item->setEditable(false);
    if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QStandardItem* valueCell(const QString& text, const QVariant& value) {
    auto* item = cell(text, true);
    item->setData(value, Qt::UserRole);
    item->setData(value, kValueRole);
    return item;
}

void setCsvHeaders(QStandardItemModel* model, const QStringList& names) {
    for (int c = 0; c < names.size() && c < model->columnCount(); ++c)
        model->setHeaderData(c, Qt::Horizontal, names[c], kCsvHeaderRole);
}

QWidget* panePage(QWidget* parent, QWidget* top, QWidget* main, QWidget* second, QWidget* below,
                  QPair<int, int> stretch) {
    auto* w = new QWidget(parent);
    auto* layout = new QVBoxLayout(w);
    layout->setContentsMargins(4, 4, 4, 4);
    if (top) layout->addWidget(top);
    if (second) {
        auto* split = new QSplitter(Qt::Vertical, w);
        split->addWidget(main);
        split->addWidget(second);
        split->setStretchFactor(0, stretch.first);
        split->setStretchFactor(1, stretch.second);
        layout->addWidget(split, 1);
    } else {
        layout->addWidget(main, 1);
    }
    if (below) layout->addWidget(below);
    return w;
}

QWidget* paneRow(QWidget* parent, QLayout* row) {
    auto* w = new QWidget(parent);
    row->setContentsMargins(0, 0, 0, 0);
    w->setLayout(row);
    return w;
}

QWidget* paneRow(QWidget* parent, const QList<QWidget*>& widgets, bool stretchFirst) {
    auto* row = new QHBoxLayout;
    if (stretchFirst) row->addStretch();
    for (QWidget* x : widgets) row->addWidget(x);
    if (!stretchFirst) row->addStretch();
    return paneRow(parent, row);
}

QWidget* paneColumn(QWidget* parent, const QList<QWidget*>& widgets) {
    auto* w = new QWidget(parent);
    auto* column = new QVBoxLayout(w);
    column->setContentsMargins(0, 0, 0, 0);
    for (QWidget* x : widgets) column->addWidget(x);
    return w;
}

}  // namespace ts::ui
