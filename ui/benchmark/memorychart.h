// Device memory per step (allocated, reserved, peak) over the whole run, with QCustomPlot:
// it keeps a million points smooth (adaptive sampling), rows are appended incrementally as
// they arrive and the plot is replotted at most 20 times a second, queued. A vertical line
// with the point's label marks where each point starts. Ticks fall on whole steps and
// whole 1-2-5 MiB. Wheel zooms, drag pans, Ctrl+drag zooms into a box, a double click
// resets; hovering shows a crosshair and the step's values.
#pragma once

#include <QPointer>
#include <QWidget>

#include "ui/common/chartstyle.h"
#include "ui/common/exporter.h"

class QCustomPlot;
class QCPGraph;
class QCPItemText;
class QCPItemTracer;

namespace ts::ui {

class ResultModel;
class StepModel;

class MemoryChart : public QWidget, public ExportableChart {
    Q_OBJECT
public:
    explicit MemoryChart(StepModel* steps, QWidget* parent = nullptr);

    QString chartTitle() const override { return tr("Memory per step"); }
    QString chartFileStem() const override { return QStringLiteral("memory"); }
    void paintChart(QPainter& painter, const QRectF& target) override;
    QColor backgroundColor() const override { return style_.background; }

    // The run's points, for the labels of the point boundaries (without: "point N").
    void setResults(ResultModel* results);

    QCustomPlot* plot() const { return plot_; }
    // Where points start (row of their first step) and what their boundary says.
    QList<double> boundaryKeys() const;
    QStringList boundaryLabels() const;
    // The tooltip over step `row` of the whole run, and the crosshair's place.
    QString hoverText(int row) const;
    void hoverAt(double key);
    bool crosshairVisible() const;
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
    void drawBoundaries();
    QString pointLabel(int point) const;

    QPointer<StepModel> steps_;
    QPointer<ResultModel> results_;
    QList<QCPItemText*> boundaryTexts_;
    QList<double> boundaryKeys_;
    bool boundariesDirty_ = true;
    int boundariesUpTo_ = -1;  // the last point the boundaries were drawn for
    QCPItemTracer* tracer_;
    QCustomPlot* plot_;
    QCPGraph *allocated_, *reserved_, *peak_;
    QCPItemText* note_;
    RedrawThrottle* throttle_;
    ChartStyle style_;
    double maxValue_ = 0;
    bool followData_ = true;  // rescale as data arrives until the user zooms or drags
};

}  // namespace ts::ui
