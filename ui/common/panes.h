// The small pieces every lab view builds its panes from: read-only table cells (a right-aligned
// number keeps its value under Qt::UserRole, for sorting and tests, and kValueRole, for the
// exports) and a pane's page (a row on top, the main widget, optionally a second one under a
// splitter, and a row below).
#pragma once

#include <QString>
#include <QStringList>
#include <QVariant>

class QStandardItem;
class QStandardItemModel;
class QWidget;

namespace ts::ui {

QStandardItem* cell(const QString& text, bool right = false);
// A right-aligned cell showing `text` that sorts by `value`.
QStandardItem* valueCell(const QString& text, const QVariant& value);
// The CSV headers of `model`'s columns, in order (see kCsvHeaderRole): "peak_bytes" where the
// header says "peak" and its cells show "1.5 GiB".
void setCsvHeaders(QStandardItemModel* model, const QStringList& names);
QWidget* panePage(QWidget* parent, QWidget* top, QWidget* main, QWidget* second = nullptr,
                  QWidget* below = nullptr);

}  // namespace ts::ui
