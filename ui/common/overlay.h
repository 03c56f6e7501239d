// Several stored runs of one lab on one chart (History's Overlay Selected; `trainscope
// --overlay`): what a lab reads of one run (RunOverlay, by its entry's overlayOf in ui/labs.cpp),
// how the runs are laid over each other (combineOverlays, in a pool thread), the series model
// the chart views and the chart itself (a SweepChart with a colour per series, legend toggles
// and hover values in the lab's unit).
//
// Note [overlaying stored runs]: a lab says, per point of a run, where the point sits (its
// coordinates: the dimensions its points vary along, by name, as numbers where they are) and
// its headline value (mean ± std in one unit), and, where it records them, the point's
// measured steps. The shell knows no lab: it lays the runs over each other by those names.
// The x axis is the first coordinate (in the order the lab gives them: the benchmark's the
// point's dimension table's) whose value differs between the points of all the runs; numeric
// where every point has it as a number, else categories. Each run is a series (split by the other
// coordinates that vary inside it). When every run is one point with steps, the chart is
// their steps against the step index instead. Runs that measure different things (the
// distributed lab's all-reduce and DDP) are refused with both named, never drawn on one axis.
#pragma once

#include <QList>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

#include "core/point.h"
#include "core/store.h"
#include "ui/common/seriesmodel.h"
#include "ui/common/sweepchart.h"

namespace ts::ui {

struct OverlayCoordinate {
    QString name;  // "context length", "precision"
    QString text;  // "256", "bf16"
    double number = 0;
    bool numeric = false;  // `number` places it on a numeric axis
};

// A point's value by one of the lab's further metrics (RunOverlay::more).
struct OverlayValue {
    std::optional<double> value;
    double spread = 0;
    QList<QPointF> steps;
};

struct OverlayPoint {
    QList<OverlayCoordinate> at;
    std::optional<double> value;  // none: OOM, failed, not measured (counted, not drawn)
    double spread = 0;            // ± one standard deviation
    QList<QPointF> steps;         // (step index, value) of the measured steps, where recorded
    QList<OverlayValue> more;     // by RunOverlay::more, in its order
};

// What a lab reads of one stored run (its entry's overlayOf; in a pool thread).
struct RunOverlay {
    QString metric;      // "mean step time"
    QString unit;        // "ms"
    QString stepMetric;  // what the points' steps hold ("step time"); empty: no steps
    // Further metrics in the same unit that the chart can show instead ("forward time", ...).
    QStringList more;
    std::vector<OverlayPoint> points;
    QString unavailable;  // non-empty: this run has nothing to overlay, and why
};

struct OverlaidRun {
    RunInfo info;
    RunOverlay overlay;
};

// The runs laid over each other, ready for the model.
struct OverlayPlot {
    QString title, xTitle, yTitle, unit;
    QStringList categories;    // non-empty: a categorical x
    bool steps = false;        // steps against the step index
    bool labelPoints = false;  // each x's name beside its points (model sizes)
    QStringList series;
    std::vector<SeriesModel::Row> rows;
    int missing = 0;  // points without a value
    QList<qint64> runIds;
    QStringList runNames;  // per run, as the legend names it
    QStringList metrics;   // what the runs can be drawn by: the headline, then the more
    int metric = 0;        // the one drawn
};

// A training point's coordinates: every dimension of the point's table (ui/common/dimensions.h),
// by name, numeric where the dimension is.
QList<OverlayCoordinate> pointCoordinates(const PointConfig& c);
// "run 3 · alpha · 2026-11-27 14:05" (local time).
QString overlayRunName(const RunInfo& info);
// The runs on one chart by metric `metric` (0: the headline, k: more[k − 1]), or nullopt with
// `error` saying why not (a run without an overlay, runs that measure different things,
// nothing measured).
std::optional<OverlayPlot> combineOverlays(const std::vector<OverlaidRun>& runs, QString* error,
                                           int metric = 0);

class OverlayModel : public SeriesModel {
    Q_OBJECT
public:
    using SeriesModel::SeriesModel;
    void setPlot(OverlayPlot plot);
    const OverlayPlot& plot() const { return plot_; }

    QString chartTitle() const override { return plot_.title; }
    QString xTitle() const override { return plot_.xTitle; }
    QString yAxisTitle() const override { return plot_.yTitle; }
    QStringList xCategories() const override { return plot_.categories; }
    bool labelPoints() const override { return plot_.labelPoints; }
    // Steps share every x: nudged apart they would no longer sit on their step.
    bool dodgeSharedX() const override { return !plot_.steps; }

private:
    OverlayPlot plot_;
};

class OverlayChart : public SweepChart {
    Q_OBJECT
public:
    explicit OverlayChart(OverlayModel* model, QWidget* parent = nullptr);
    QString chartFileStem() const override;
    QColor seriesColor(int i) const override;
    // A click on a legend entry hides its series (the entry stays, pale) or shows it again.
    void toggleSeries(int series);
    bool seriesVisible(int series) const;

private:
    void redraw() override;
    OverlayModel* overlay_;
};

}  // namespace ts::ui
