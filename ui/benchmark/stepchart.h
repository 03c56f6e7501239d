// Per-step timings of one point (forward, backward, optimizer, total) with the warm-up
// steps shaded, so that the first-step spike is plain to see; or, overlaid, the total of
// every point, one line each. Views the step model.
#pragma once

#include <QPointer>

#include "benchmark/benchmark.h"
#include "ui/common/chartpane.h"

class QAreaSeries;
class QLineSeries;
class QValueAxis;

namespace ts::ui {

class ResultModel;
class StepModel;

class StepChart : public ChartPane {
    Q_OBJECT
public:
    StepChart(StepModel* steps, ResultModel* results, QWidget* parent = nullptr);

    // The point to show; -1 follows the newest point.
    void setPoint(int point);
    int requestedPoint() const { return point_; }
    int shownPoint() const { return shown_; }
    // The run's number of points (the job's or the stored run's), for "point 2 of 3" while
    // points still arrive; 0: as many as have arrived.
    void setRunPointCount(int count);
    // One total line per point instead of the phases of one point.
    void setOverlay(bool on);
    bool overlay() const { return overlay_; }
    int overlaySeriesCount() const { return static_cast<int>(overlayLines_.size()); }
    QList<QLineSeries*> overlaySeries() const { return overlayLines_; }

    QString chartTitle() const override;
    QString chartFileStem() const override { return QStringLiteral("steps"); }

    // What is drawn, for tests: points per series and the shaded warm-up steps.
    int plottedSteps() const;                       // points drawn (decimated beyond 2000)
    int shownSteps() const { return shownSteps_; }  // steps of the shown point
    int shadedWarmupSteps() const { return shadedWarmup_; }
    QLineSeries* totalSeries() const { return total_; }

    QValueAxis* xAxis() const { return x_; }
    QValueAxis* yAxis() const { return y_; }
    QString pointTitle(int point) const;
    // Paints the chart of `point` (not overlaid) and goes back to what it showed.
    void paintPoint(int point, QPainter& painter, const QRectF& target);

private:
    void redraw() override;
    void restyle() override;
    void drawPoint(int point);
    void drawOverlay();
    void setRanges(int steps, double ymax);
    QString describeDifference(const PointConfig& c) const;

    QPointer<StepModel> steps_;
    QPointer<ResultModel> results_;
    int point_ = -1;
    int runPoints_ = 0;
    bool overlay_ = false;
    QList<QLineSeries*> overlayLines_;
    int shown_ = -1;
    int shadedWarmup_ = 0;
    int shownSteps_ = 0;
    QLineSeries *forward_, *backward_, *optimizer_, *total_;
    QLineSeries *warmTop_, *warmBottom_;
    QAreaSeries* warmup_;
    QValueAxis *x_, *y_;
};

// One point's step chart as an export of its own (the report holds one per point).
class StepChartAtPoint : public ExportableChart {
public:
    StepChartAtPoint(StepChart* chart, int point) : chart_(chart), point_(point) {}
    QString chartTitle() const override { return chart_ ? chart_->pointTitle(point_) : QString(); }
    QString chartFileStem() const override {
        return QStringLiteral("steps-point%1").arg(point_ + 1);
    }
    void paintChart(QPainter& painter, const QRectF& target) override {
        if (chart_) chart_->paintPoint(point_, painter, target);
    }
    QColor backgroundColor() const override {
        return chart_ ? chart_->backgroundColor() : QColor();
    }

private:
    QPointer<StepChart> chart_;
    int point_;
};

}  // namespace ts::ui
