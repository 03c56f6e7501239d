#include "ui/profiler/timelinechart.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPicture>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/common/qcp.h"
#include "ui/common/theme.h"

namespace ts::ui {

// Draws the lanes: lane i is centred on value i (the value axis is reversed: lane 0 on top).
class TimelinePlottable : public QCPAbstractPlottable {
public:
    TimelinePlottable(QCPAxis* key, QCPAxis* value) : QCPAbstractPlottable(key, value) {}

    std::shared_ptr<const Timeline> timeline;
    std::vector<std::pair<double, double>> gaps;  // µs, of every step
    QList<QColor> cpuColours, gpuColours;
    QColor gapColour, textColour;
    int drawnRects = 0, drawnGaps = 0;

    double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }
    QCPRange getKeyRange(bool& found, QCP::SignDomain) const override {
        found = timeline && timeline->end_us > 0;
        return found ? QCPRange(0, timeline->end_us) : QCPRange();
    }
    QCPRange getValueRange(bool& found, QCP::SignDomain, const QCPRange&) const override {
        found = timeline && !timeline->lanes.empty();
        return found ? QCPRange(-0.5, static_cast<double>(timeline->lanes.size()) - 0.5)
                     : QCPRange();
    }

protected:
    void draw(QCPPainter* painter) override {
        drawnRects = drawnGaps = 0;
        if (!timeline) return;
        const QCPRange keys = mKeyAxis->range();
        const QCPRange values = mValueAxis->range();
        const auto& lanes = timeline->lanes;
        const int firstLane = std::max(0, static_cast<int>(std::floor(values.lower - 0.5)));
        const int lastLane = std::min(static_cast<int>(lanes.size()) - 1,
                                      static_cast<int>(std::ceil(values.upper + 0.5)));
        painter->setPen(Qt::NoPen);
        // Idle gaps: bands behind the GPU lanes.
        int firstGpu = -1;
        for (size_t i = 0; i < lanes.size(); ++i)
            if (lanes[i].gpu) {
                firstGpu = static_cast<int>(i);
                break;
            }
        if (firstGpu >= 0) {
            const double top = mValueAxis->coordToPixel(firstGpu - 0.5);
            const double bottom = mValueAxis->coordToPixel(static_cast<double>(lanes.size()) - 0.5);
            for (const auto& [from, to] : gaps) {
                if (to < keys.lower || from > keys.upper) continue;
                const double x0 = mKeyAxis->coordToPixel(from), x1 = mKeyAxis->coordToPixel(to);
                painter->fillRect(QRectF(QPointF(x0, std::min(top, bottom)),
                                         QPointF(std::max(x1, x0 + 1), std::max(top, bottom))),
                                  gapColour);
                ++drawnGaps;
            }
        }
        const QFontMetrics fm(painter->font());
        for (int li = firstLane; li <= lastLane; ++li) {
            const TimelineLane& lane = lanes[static_cast<size_t>(li)];
            const double y0 = mValueAxis->coordToPixel(li - 0.38),
                         y1 = mValueAxis->coordToPixel(li + 0.38);
            const double top = std::min(y0, y1), height = std::abs(y1 - y0);
            const QList<QColor>& colours = lane.gpu ? gpuColours : cpuColours;
            // Spans closer than a pixel merge into one rectangle (in the first one's colour).
            double runStart = 0, runEnd = -1e300;
            int runColour = 0;
            auto flush = [&] {
                if (runEnd < runStart) return;
                painter->fillRect(QRectF(runStart, top, std::max(1.0, runEnd - runStart), height),
                                  colours[runColour % colours.size()]);
                ++drawnRects;
            };
            for (size_t i = lane.firstVisible(keys.lower); i < lane.spans.size(); ++i) {
                const TimelineSpan& s = lane.spans[i];
                if (s.start_us > keys.upper) break;
                const double x0 = mKeyAxis->coordToPixel(s.start_us),
                             x1 = mKeyAxis->coordToPixel(s.end_us);
                if (x0 <= runEnd + 1.0 && (x1 - x0) < 2.0 && (runEnd - runStart) < 4.0) {
                    runEnd = std::max(runEnd, x1);
                    continue;
                }
                flush();
                runStart = x0;
                runEnd = x1;
                runColour = s.colour;
                if (x1 - x0 > 50) {
                    const QRectF box(std::max(x0, 0.0) + 2, top,
                                     std::min(x1, 1e5) - std::max(x0, 0.0) - 4, height);
                    labels_.push_back({box, timeline->names[static_cast<size_t>(s.name)]});
                }
            }
            flush();
        }
        painter->setPen(textColour);
        for (const auto& [box, text] : labels_)
            painter->drawText(box, Qt::AlignVCenter | Qt::AlignLeft,
                              fm.elidedText(text, Qt::ElideRight, static_cast<int>(box.width())));
        labels_.clear();
    }
    void drawLegendIcon(QCPPainter*, const QRectF&) const override {}

private:
    std::vector<std::pair<QRectF, QString>> labels_;
};

TimelineChart::TimelineChart(QWidget* parent) : QWidget(parent) {
    plot_ = new QCustomPlot(this);
    plot_->setObjectName(QStringLiteral("timelinePlot"));
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
    plot_->yAxis->setRangeReversed(true);
    plot_->yAxis->grid()->setVisible(false);
    plot_->xAxis->setLabel(tr("time (µs from the first event)"));
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(
        0, 0,
        new QCPTextElement(plot_, tr("Timeline: CPU ranges and ops above, GPU kernels by stream "
                                     "below, GPU idle gaps shaded")));
    lanes_ = new TimelinePlottable(plot_->xAxis, plot_->yAxis);
    plot_->setContextMenuPolicy(Qt::CustomContextMenu);

    step_ = new QComboBox(this);
    step_->setObjectName(QStringLiteral("timelineStep"));
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Step:"), this));
    controls->addWidget(step_);
    controls->addWidget(
        new QLabel(tr("wheel zooms in time, drag pans, double click shows the step whole"), this));
    controls->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(controls);
    layout->addWidget(plot_, 1);

    connect(step_, &QComboBox::activated, this, [this] { showStep(step_->currentData().toInt()); });
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { showStep(shownStep()); });
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const double key = plot_->xAxis->pixelToCoord(e->pos().x());
        const int lane = static_cast<int>(std::lround(plot_->yAxis->pixelToCoord(e->pos().y())));
        const QString text = spanAt(key, lane);
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), text, plot_);
    });
    connect(plot_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(this);
        menu.addAction(tr("Export Chart…"), this, &TimelineChart::exportRequested);
        menu.addAction(tr("Copy Chart Image"), this, &TimelineChart::copyRequested);
        menu.addSeparator();
        menu.addAction(tr("Show the Whole Step"), this, [this] { showStep(shownStep()); });
        menu.exec(plot_->mapToGlobal(pos));
    });
    connect(&Theme::instance(), &Theme::changed, this, &TimelineChart::restyle);
    restyle();
}

void TimelineChart::restyle() {
    style_ = currentChartStyle();
    const ChartStyle& s = style_;
    plot_->setBackground(s.background);
    plot_->axisRect()->setBackground(s.plotBackground);
    for (QCPAxis* a : {plot_->xAxis, plot_->yAxis}) {
        a->setBasePen(QPen(s.muted));
        a->setTickPen(QPen(s.muted));
        a->setSubTickPen(QPen(s.muted));
        a->setTickLabelColor(s.foreground);
        a->setLabelColor(s.foreground);
        a->setTickLabelFont(s.labelFont);
    }
    plot_->xAxis->grid()->setPen(QPen(s.grid));
    if (auto* title = qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0)))
        title->setTextColor(s.foreground);
    lanes_->cpuColours.clear();
    lanes_->gpuColours.clear();
    // CPU spans by phase (forward, backward, optimizer, other), lighter; GPU by category.
    for (int i = 0; i < 3; ++i) lanes_->cpuColours << s.seriesColor(i).lighter(s.dark ? 90 : 130);
    lanes_->cpuColours << s.muted;
    for (int i = 0; i < static_cast<int>(allCategories().size()); ++i)
        lanes_->gpuColours << s.seriesColor(i);
    QColor gap = s.dark ? QColor(255, 90, 90) : QColor(220, 40, 40);
    gap.setAlpha(45);
    lanes_->gapColour = gap;
    lanes_->textColour = s.dark ? QColor(Qt::white) : QColor(Qt::black);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void TimelineChart::setTimeline(std::shared_ptr<const Timeline> timeline,
                                const std::vector<StepActivity>& steps) {
    timeline_ = std::move(timeline);
    steps_ = steps;
    lanes_->timeline = timeline_;
    lanes_->gaps.clear();
    const double origin = timeline_ ? static_cast<double>(timeline_->origin_ns) : 0.0;
    for (const auto& s : steps_)
        for (const auto& g : s.gaps)
            lanes_->gaps.push_back({(g.start_ns - origin) / 1e3, (g.end_ns - origin) / 1e3});
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    if (timeline_)
        for (size_t i = 0; i < timeline_->lanes.size(); ++i)
            ticker->addTick(static_cast<double>(i), timeline_->lanes[i].label);
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setSubTicks(false);
    step_->clear();
    for (size_t i = 0; i < steps_.size(); ++i)
        step_->addItem(tr("profiled step %1").arg(i + 1), static_cast<int>(i));
    step_->addItem(tr("all profiled steps"), -1);
    showStep(steps_.empty() ? -1 : 0);
}

int TimelineChart::shownStep() const { return step_->currentData().toInt(); }

void TimelineChart::showStep(int index) {
    const int at = step_->findData(index);
    if (at >= 0) step_->setCurrentIndex(at);
    double from = 0, to = timeline_ ? timeline_->end_us : 1;
    if (timeline_ && index >= 0 && index < static_cast<int>(steps_.size())) {
        from = (steps_[static_cast<size_t>(index)].start_ns - timeline_->origin_ns) / 1e3;
        to = (steps_[static_cast<size_t>(index)].end_ns - timeline_->origin_ns) / 1e3;
    }
    const double margin = std::max(1.0, (to - from) * 0.01);
    plot_->xAxis->setRange(from - margin, to + margin);
    const int lanes = timeline_ ? static_cast<int>(timeline_->lanes.size()) : 1;
    plot_->yAxis->setRange(-0.6, std::max(1, lanes) - 0.4);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

int TimelineChart::laneCount() const {
    return timeline_ ? static_cast<int>(timeline_->lanes.size()) : 0;
}
int TimelineChart::spanCount() const { return timeline_ ? timeline_->spanCount() : 0; }
int TimelineChart::drawnRects() const { return lanes_->drawnRects; }
int TimelineChart::drawnGaps() const { return lanes_->drawnGaps; }
void TimelineChart::replotNow() { plot_->replot(QCustomPlot::rpImmediateRefresh); }

QString TimelineChart::spanAt(double us, int lane) const {
    if (!timeline_ || lane < 0 || lane >= static_cast<int>(timeline_->lanes.size())) return {};
    const TimelineLane& l = timeline_->lanes[static_cast<size_t>(lane)];
    // The innermost (latest starting) span that holds the time.
    const TimelineSpan* hit = nullptr;
    for (size_t i = l.firstVisible(us); i < l.spans.size() && l.spans[i].start_us <= us; ++i)
        if (l.spans[i].end_us >= us) hit = &l.spans[i];
    if (!hit) return {};
    return QStringLiteral("%1: %2 µs")
        .arg(timeline_->names[static_cast<size_t>(hit->name)])
        .arg(hit->end_us - hit->start_us, 0, 'f', 1);
}

void TimelineChart::paintChart(QPainter& painter, const QRectF& target) {
    QPicture picture;
    {
        QCPPainter p(&picture);
        plot_->toPainter(&p, static_cast<int>(target.width()), static_cast<int>(target.height()));
    }
    painter.drawPicture(target.topLeft(), picture);
}

}  // namespace ts::ui
