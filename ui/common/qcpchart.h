// A QCustomPlot chart as the window's panes show it (QCustomPlot for large series: a million
// trace events stay smooth to pan and zoom): its title, the export hooks (Export… and Copy),
// the context menu and a double click that fit the data, the theme's colours, and a note
// centred over an empty chart. The memory and distributed labs' charts derive from it.
#pragma once

#include <QWidget>

#include "ui/common/chartstyle.h"
#include "ui/common/exporter.h"

class QCustomPlot;
class QCPItemText;
class QCPTextElement;

namespace ts::ui {

class QcpChart : public QWidget, public ExportableChart {
    Q_OBJECT
public:
    QcpChart(const QString& title, const QString& stem, QWidget* parent);
    QString chartTitle() const override { return title_; }
    QString chartFileStem() const override { return stem_; }
    void paintChart(QPainter& painter, const QRectF& target) override;
    QColor backgroundColor() const override { return style_.background; }
    QCustomPlot* plot() const { return plot_; }
    // The graphs' data points (all graphs together), for tests.
    int plottedPoints() const;
    // What hovering at `pos` (the plot's pixels) shows: the series and the values of the point or
    // bar under the pointer; empty where there is none. The memory and distributed charts'
    // hover values (issue 29 item 11); a chart whose marks are its own overrides it.
    virtual QString hoverText(const QPointF& pos) const;
    QString noteText() const;  // empty while no note is shown

Q_SIGNALS:
    void exportRequested();
    void copyRequested();

protected:
    // Takes the current theme's colours and fonts for what every chart has (background, axes,
    // title, legend, note). A theme change (dark, presentation) also recolours what a chart
    // drew in the old theme's colours: see Note [a chart's colours follow the theme].
    void restyle();
    void showNote(const QString& text);  // centred over an empty chart; empty text hides it
    // Moves the legend out of the plot into a row of its own under it (where it would cover
    // bars or lanes), its entries side by side, `wrap` to a row (0: one row).
    void legendBelow(int wrap = 0);

    QCustomPlot* plot_;
    ChartStyle style_;

private:
    void applyTheme();
    void recolour(const ChartStyle& from, const ChartStyle& to);

    QString title_, stem_;
    QCPItemText* note_;
    QCPTextElement* titleElement_;
};

}  // namespace ts::ui
