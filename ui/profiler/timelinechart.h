// The timeline of a profile (QCustomPlot): CPU ranges and top-level ops by thread on top,
// GPU kernels by stream below, the GPU's idle gaps shaded. One plottable draws every lane and
// only what is visible: a lane's spans are sorted, a binary search finds the first in view,
// and spans narrower than a pixel merge into one rectangle, so a 2.7B model's step (a hundred
// thousand kernels) replots in milliseconds at any zoom. Wheel zooms in time, drag pans, a
// double click (or the step chooser) shows one whole step; hovering names the span. The search
// field above it outlines every span whose name holds the text, says "k of n", and steps through
// them in time order (Enter, Shift+Enter), zooming onto the current one.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "ui/common/chartstyle.h"
#include "ui/common/exporter.h"
#include "ui/profiler/profileanalysis.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;

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

    // The search: every span whose name holds `text` (case-insensitive) is outlined and the first
    // is current (the view zooms onto it); empty: none.
    void setSearch(const QString& text);
    void nextMatch();      // Enter: the next in time, wrapping around
    void previousMatch();  // Shift+Enter
    int matchCount() const { return static_cast<int>(matches_.size()); }
    int currentMatch() const { return current_; }  // 0-based; -1: none
    const std::vector<TimelineMatch>& matches() const { return matches_; }
    QString matchText() const;  // "3 of 12", "no match", "" without a search
    QLineEdit* searchField() const { return search_; }

    // For tests: lanes, spans, what the last replot drew (rectangles after merging).
    int laneCount() const;
    int spanCount() const;
    int drawnRects() const;
    int drawnGaps() const;
    int drawnMatches() const;  // outlined matches of the search in the last replot
    // The span under (time µs, lane), as "name: 12.3 µs", empty when none.
    QString spanAt(double us, int lane) const;
    void replotNow();

Q_SIGNALS:
    void exportRequested();
    void copyRequested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void restyle();
    void showMatch(int index);

    QCustomPlot* plot_;
    TimelinePlottable* lanes_;
    QComboBox* step_;
    QLineEdit* search_;
    QLabel* matchLabel_;
    std::vector<TimelineMatch> matches_;
    int current_ = -1;
    ChartStyle style_;
    std::shared_ptr<const Timeline> timeline_;
    std::vector<StepActivity> steps_;
};

}  // namespace ts::ui
