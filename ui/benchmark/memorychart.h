// Device memory per step (allocated, reserved, peak) over the whole run, with QCustomPlot:
// it keeps a million points smooth (adaptive sampling), rows are appended incrementally as
// they arrive and the plot is replotted at most 20 times a second, queued.
#pragma once

#include <QPointer>
#include <QWidget>

#include "common/chartstyle.h"
#include "common/exporter.h"

class QCustomPlot;
class QCPGraph;
class QCPItemText;

namespace ts::ui {

class StepModel;

class MemoryChart : public QWidget, public ExportableChart {
    Q_OBJECT
public:
    explicit MemoryChart(StepModel* steps, QWidget* parent = nullptr);

    QString chartTitle() const override { return tr("Memory per step"); }
    QString chartFileStem() const override { return QStringLiteral("memory"); }
    void paintChart(QPainter& painter, const QRectF& target) override;
    QColor backgroundColor() const override { return style_.background; }

    QCustomPlot* plot() const { return plot_; }
    int plottedPoints() const;
    double maxPlottedMiB() const { return maxValue_; }  // the largest value on the chart
    void flushRedraw() { throttle_->flush(); }
    int redrawCount() const { return throttle_->redraws(); }

Q_SIGNALS:
    void exportRequested();
    void copyRequested();

private:
    void appendRows(int first, int last);
    void reload();
    void redraw();
    void restyle();

    QPointer<StepModel> steps_;
    QCustomPlot* plot_;
    QCPGraph *allocated_, *reserved_, *peak_;
    QCPItemText* note_;
    RedrawThrottle* throttle_;
    ChartStyle style_;
    double maxValue_ = 0;
    bool followData_ = true;  // rescale as data arrives until the user zooms or drags
};

}  // namespace ts::ui
