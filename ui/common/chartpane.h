// Base of the Qt Charts views: a QChartView in a widget that redraws at most 20 times a
// second, follows the theme, offers Export / Copy / Reset Zoom on right-click, zooms, pans
// and shows hover values (ChartInteraction), and paints itself at any size for exports.
#pragma once

#include <QWidget>

#include "ui/common/chartstyle.h"
#include "ui/common/exporter.h"

class QChart;
class QChartView;

namespace ts::ui {

class ChartInteraction;

class ChartPane : public QWidget, public ExportableChart {
    Q_OBJECT
public:
    explicit ChartPane(QWidget* parent = nullptr);

    QChart* chart() const { return chart_; }
    QChartView* chartView() const { return view_; }
    void paintChart(QPainter& painter, const QRectF& target) override;
    QColor backgroundColor() const override { return style_.background; }
    // Draws any pending change now (exports, tests).
    void flushRedraw() { throttle_->flush(); }
    int redrawCount() const { return throttle_->redraws(); }
    ChartInteraction* interaction() const { return interaction_; }
    // Where (chart coordinates) the context menu was last opened: its actions act there.
    QPointF contextMenuPosition() const { return menuPos_; }

Q_SIGNALS:
    void exportRequested();
    void copyRequested();

protected:
    void requestRedraw() { throttle_->request(); }
    virtual void redraw() = 0;
    // Colours of the subclass's own series; the base styles chart, legend and axes.
    virtual void restyle() {}
    const ChartStyle& style() const { return style_; }

private:
    QPointF menuPos_;
    void applyTheme();
    QChart* chart_;
    QChartView* view_;
    RedrawThrottle* throttle_;
    ChartInteraction* interaction_;
    ChartStyle style_;
};

}  // namespace ts::ui
