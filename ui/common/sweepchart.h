// Series with error bars: the sweep (time against model size, context length, batch size,
// warm-up, precision or attention, one series per other varying value, ± one standard
// deviation of the steps), and the attention benchmark's times. Views any SeriesModel.
//
// Log axes are drawn as linear axes over log10 of the values, with labelled ticks at
// 1-2-5 × 10^k (or every power of two), since Qt Charts' log axis labels only the powers of
// its base. A categorical x (precision) puts each value in a slot. Series that share an x
// are nudged apart a little so that none hides another. An error bar that reaches below
// the axis (std > mean on a log axis, or below 0) runs to the bottom edge with an open end.
#pragma once

#include <QHash>
#include <QPointer>
#include <optional>

#include "ui/common/chartpane.h"

class QCategoryAxis;
class QLineSeries;

namespace ts::ui {

class SeriesModel;
class ErrorBarsItem;

// Tick values between `lo` and `hi` (both > 0) for a log axis: 1, 2, 5 × 10^k when the range
// spans at most three decades, else every decade; for base 2, every power of two.
QList<double> logTicks(double lo, double hi, int base);
// The nearest of those ticks at or below / at or above `v` (1-2-5 × 10^k, or 2^k).
double logTickBelow(double v, int base);
double logTickAbove(double v, int base);
// "1", "20", "0.5", "1024": a tick label.
QString tickLabel(double v);
// The x of series `series` of `count` drawn `slot` apart (in axis units) around `x`.
double dodgeX(double x, int series, int count, double slot);

class SweepChart : public ChartPane {
    Q_OBJECT
public:
    explicit SweepChart(SeriesModel* model, QWidget* parent = nullptr,
                        const QString& fileStem = QStringLiteral("sweep"));

    void setLogY(bool on);
    bool logY() const { return logY_; }

    QString chartTitle() const override;
    QString chartFileStem() const override { return stem_; }

    // What is drawn, for tests.
    int seriesCount() const { return static_cast<int>(lines_.size()); }
    // The source row (SeriesModel::Row::source) of the point nearest to `chartPos` (chart
    // coordinates), -1 when none is near or it names none.
    int sourceAt(const QPointF& chartPos) const;
    // Where the point of `source` is drawn (chart coordinates); for tests.
    std::optional<QPointF> positionOf(int source) const;
    int plottedPoints() const;
    int errorBarCount() const;
    int clippedErrorBars() const;  // bars that run off the bottom of the axis
    bool xIsLog() const { return xLog_; }
    bool yIsLog() const { return yIsLog_; }
    bool xIsCategorical() const { return xCategorical_; }
    QStringList xTickLabels() const;  // the labelled ticks, left to right
    double xAxisMin() const;          // the axis' range, drawn coordinates
    double xAxisMax() const;
    QStringList yTickLabels() const;
    QStringList pointLabels() const;                // labels drawn next to points (model sizes)
    QList<QPointF> seriesPoints(int series) const;  // as drawn (log10 on log axes)
    // Data coordinates → drawn coordinates (log10 on a log axis), and back.
    double toAxisX(double x) const;
    double toAxisY(double y) const;
    double fromAxisX(double x) const;
    double fromAxisY(double y) const;
    // The colour of series `i` (the theme's series colours; the overlay's its own).
    virtual QColor seriesColor(int i) const { return style().seriesColor(i); }

protected:
    void redraw() override;
    void restyle() override;

private:
    void setLogAxis(QCategoryAxis* axis, double lo, double hi, int base);
    void setLinearAxis(QCategoryAxis* axis, double lo, double hi);

    QPointer<SeriesModel> model_;
    QString stem_;
    bool logY_ = false;
    QList<QLineSeries*> lines_;
    QHash<QString, QList<QPair<QPointF, int>>>
        plotted_;  // per series: each point's value and source
    QStringList names_;
    QCategoryAxis* x_ = nullptr;
    QCategoryAxis* y_ = nullptr;
    bool xLog_ = false, yIsLog_ = false, xCategorical_ = false;
    ErrorBarsItem* bars_;
};

}  // namespace ts::ui
