// The timeline of a profile (QCustomPlot): CPU ranges and top-level ops by thread on top,
// GPU kernels by stream below, the GPU's idle gaps shaded. One plottable draws every lane and
// only what is visible: a lane's spans are sorted, a binary search finds the first in view,
// and spans narrower than a pixel merge into one rectangle, so a 2.7B model's step (a hundred
// thousand kernels) replots in milliseconds at any zoom. Wheel zooms in time, drag pans, a
// double click (or the step chooser) shows one whole step; hovering names the span.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "ui/common/chartstyle.h"
#include "ui/common/exporter.h"
#include "ui/profiler/profileanalysis.h"

class QComboBox;
class QCustomPlot;

namespace ts::ui {

class TimelinePlottable;

class TimelineChart : public QWidget, public ExportableChart {
    Q_OBJECT
public:
    explicit TimelineChart(QWidget* parent = nullptr);

    QString chartTitle() const override { return tr("Timeline of a profiled step"); }
    QString chartFileStem() const override { return QStringLiteral("timeline"); }
    void paintChart(QPainter& painter, const QRectF& target) override;
    QColor backgroundColor() const override { return style_.background; }

    // The profile's lanes and the steps (with their idle gaps) to choose from.
    void setTimeline(std::shared_ptr<const Timeline> timeline,
                     const std::vector<StepActivity>& steps);
    // Shows profiled step `index` whole (-1: the whole trace).
    void showStep(int index);
    int shownStep() const;
    QComboBox* stepCombo() const { return step_; }
    QCustomPlot* plot() const { return plot_; }

    // For tests: lanes, spans, what the last replot drew (rectangles after merging).
    int laneCount() const;
    int spanCount() const;
    int drawnRects() const;
    int drawnGaps() const;
    // The span under (time µs, lane), as "name: 12.3 µs", empty when none.
    QString spanAt(double us, int lane) const;
    void replotNow();

Q_SIGNALS:
    void exportRequested();
    void copyRequested();

private:
    void restyle();

    QCustomPlot* plot_;
    TimelinePlottable* lanes_;
    QComboBox* step_;
    ChartStyle style_;
    std::shared_ptr<const Timeline> timeline_;
    std::vector<StepActivity> steps_;
};

}  // namespace ts::ui
