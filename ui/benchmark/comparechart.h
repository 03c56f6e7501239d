// The comparison of two runs as bars: one group per matched configuration, run A's and run B's
// mean time side by side, each with an error bar of its steps' standard deviation, and the ratio
// B / A written over the group. A difference within the noise (or with too few steps to tell)
// is drawn pale and says so; a configuration only one run has, or one that failed in a run, has
// its one bar and the reason over it. Views the compare model (its values, its verdicts).
// See Note [a difference within the noise] in comparemodel.cpp.
#pragma once

#include <QPointer>
#include <QStringList>

#include "ui/common/chartpane.h"

class QBarCategoryAxis;
class QBarSeries;
class QValueAxis;

namespace ts::ui {

class CompareModel;
class CompareMarks;

class CompareChart : public ChartPane {
    Q_OBJECT
public:
    explicit CompareChart(CompareModel* model, QWidget* parent = nullptr);

    QString chartTitle() const override;
    // "compare-run3-vs-run5", as the table beside it.
    QString chartFileStem() const override;

    // What is drawn, for tests: the model's values, not pixels. `side` 0 is A, 1 is B.
    QStringList categories() const;
    QList<double> means(int side) const;    // 0 where the side has no time
    QList<double> spreads(int side) const;  // the error bars' half heights (std); 0: none
    QList<int> paleRows() const;            // within the noise, or too few steps to tell
    QList<int> unmatchedRows() const;       // rows without a time on both sides
    QStringList marks() const;              // the text over each group
    QString hint() const;                   // shown instead of axes while nothing compares
    bool axesVisible() const;
    QColor barColor(int side, int row) const;  // as drawn: a pale bar pale
    // What hovering side `side`'s bar of row `row` shows.
    QString barText(int row, int side) const;

private:
    void redraw() override;
    void restyle() override;
    QColor paleColor(int side) const;

    QPointer<CompareModel> model_;
    QBarSeries* bars_;
    QBarCategoryAxis* x_;
    QValueAxis* y_;
    CompareMarks* marks_;
    QList<double> spreads_[2];
};

}  // namespace ts::ui
