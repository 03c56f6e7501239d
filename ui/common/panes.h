// The small pieces every lab view builds its panes from: read-only table cells (a right-aligned
// number keeps its value under Qt::UserRole, for sorting and tests, and kValueRole, for the
// exports) and a pane's page (a row on top, the main widget, optionally a second one under a
// splitter, and a row below): every lab view builds its panes with panePage.
#pragma once

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QVariant>

class QLayout;
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
// `stretch`: how main and second share the splitter's height.
QWidget* panePage(QWidget* parent, QWidget* top, QWidget* main, QWidget* second = nullptr,
                  QWidget* below = nullptr, QPair<int, int> stretch = {3, 2});
// A row of controls as panePage's top or below: `row` (a layout of its own), or `widgets` side
// by side then a stretch (`stretchFirst`: the stretch first, the widgets at the right).
QWidget* paneRow(QWidget* parent, QLayout* row);
QWidget* paneRow(QWidget* parent, const QList<QWidget*>& widgets, bool stretchFirst = false);
// Widgets one under the other (notes above a chart), as one widget for panePage.
QWidget* paneColumn(QWidget* parent, const QList<QWidget*>& widgets);

}  // namespace ts::ui
