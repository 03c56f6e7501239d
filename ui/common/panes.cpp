#include "ui/common/panes.h"

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

QWidget* panePage(QWidget* parent, QWidget* top, QWidget* main, QWidget* second, QWidget* below) {
    auto* w = new QWidget(parent);
    auto* layout = new QVBoxLayout(w);
    layout->setContentsMargins(4, 4, 4, 4);
    if (top) layout->addWidget(top);
    if (second) {
        auto* split = new QSplitter(Qt::Vertical, w);
        split->addWidget(main);
        split->addWidget(second);
        split->setStretchFactor(0, 3);
        split->setStretchFactor(1, 2);
        layout->addWidget(split, 1);
    } else {
        layout->addWidget(main, 1);
    }
    if (below) layout->addWidget(below);
    return w;
}

}  // namespace ts::ui
