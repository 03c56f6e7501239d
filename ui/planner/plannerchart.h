// The planner's chart: a strategy's compute and communication time of its binding pass
// against tokens per device (or the TP degree), both axes logarithmic, with the crossover
// (where the pass becomes communication bound) and the inputs' own point marked.
#pragma once

#include "planner/planner.h"
#include "ui/common/chartpane.h"

namespace ts::ui {

class PlannerChart : public ChartPane {
    Q_OBJECT
public:
    explicit PlannerChart(QWidget* parent = nullptr);

    void setCurve(const std::optional<PlannerCurve>& curve);
    const std::optional<PlannerCurve>& curve() const { return curve_; }

    QString chartTitle() const override;
    QString chartFileStem() const override { return QStringLiteral("planner-crossover"); }
    // What is drawn (after flushRedraw()): the series' names and point counts, for tests.
    int seriesCount() const;
    int plottedPoints(const QString& series) const;

protected:
    void redraw() override;
    void restyle() override;

private:
    std::optional<PlannerCurve> curve_;
};

}  // namespace ts::ui
