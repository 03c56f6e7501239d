#include "ui/profiler/timelinechart.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPicture>
#include <QShortcut>
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
    QColor gapColour, textColour, matchColour, currentColour;
    const std::vector<TimelineMatch>* matches = nullptr;  // the chart's search
    int current = -1;
    int drawnRects = 0, drawnGaps = 0, drawnMatches = 0;

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
        drawnRects = drawnGaps = drawnMatches = 0;
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
        // The search's matches over the spans, outlined (at least 3 px wide, so that a match
        // merged into its neighbours still shows); the current one filled.
        if (matches) {
            for (size_t m = 0; m < matches->size(); ++m) {
                const TimelineMatch& x = (*matches)[m];
                if (x.lane < firstLane || x.lane > lastLane || x.end_us < keys.lower ||
                    x.start_us > keys.upper)
                    continue;
                const double y0 = mValueAxis->coordToPixel(x.lane - 0.45),
                             y1 = mValueAxis->coordToPixel(x.lane + 0.45);
                double x0 = mKeyAxis->coordToPixel(x.start_us),
                       x1 = mKeyAxis->coordToPixel(x.end_us);
                if (x1 - x0 < 3) x0 = (x0 + x1) / 2 - 1.5, x1 = x0 + 3;
                const QRectF box(QPointF(x0, std::min(y0, y1)), QPointF(x1, std::max(y0, y1)));
                const bool now = static_cast<int>(m) == current;
                if (now) painter->fillRect(box, currentColour);
                painter->setPen(QPen(now ? textColour : matchColour, now ? 2.5 : 1.5));
                painter->setBrush(Qt::NoBrush);
                painter->drawRect(box);
                ++drawnMatches;
            }
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
    search_ = new QLineEdit(this);
    search_->setObjectName(QStringLiteral("timelineSearch"));
    search_->setPlaceholderText(tr("find ops and kernels (Ctrl+F)"));
    search_->setClearButtonEnabled(true);
    search_->setToolTip(
        tr("Outlines every op, range and kernel whose name holds the text; Enter "
           "shows the next, Shift+Enter the previous"));
    search_->installEventFilter(this);
    matchLabel_ = new QLabel(this);
    matchLabel_->setObjectName(QStringLiteral("timelineMatches"));
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Step:"), this));
    controls->addWidget(step_);
    controls->addWidget(
        new QLabel(tr("wheel zooms in time, drag pans, double click shows the step whole"), this));
    controls->addStretch();
    controls->addWidget(search_, 1);
    controls->addWidget(matchLabel_);
    auto* find =
        new QShortcut(QKeySequence::Find, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    connect(find, &QShortcut::activated, this, [this] {
        search_->setFocus(Qt::ShortcutFocusReason);
        search_->selectAll();
    });
    connect(search_, &QLineEdit::textChanged, this, &TimelineChart::setSearch);
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
    // Matches in an accent no series uses: amber, its fill half transparent.
    lanes_->matchColour = s.dark ? QColor(255, 200, 60) : QColor(200, 120, 0);
    lanes_->currentColour = lanes_->matchColour;
    lanes_->currentColour.setAlpha(110);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void TimelineChart::setSearch(const QString& text) {
    if (search_->text() != text) {
        const QSignalBlocker b(search_);
        search_->setText(text);
    }
    matches_ = timeline_ ? findSpans(*timeline_, text.trimmed()) : std::vector<TimelineMatch>{};
    lanes_->matches = &matches_;
    current_ = -1;
    if (!matches_.empty())
        showMatch(0);
    else
        plot_->replot(QCustomPlot::rpQueuedReplot);
    matchLabel_->setText(matchText());
}

QString TimelineChart::matchText() const {
    if (search_->text().trimmed().isEmpty()) return {};
    if (matches_.empty()) return tr("no match");
    if (current_ < 0) return tr("%1 matches").arg(matches_.size());
    return tr("%1 of %2").arg(current_ + 1).arg(matches_.size());
}

void TimelineChart::nextMatch() {
    if (!matches_.empty()) showMatch((current_ + 1) % static_cast<int>(matches_.size()));
}

void TimelineChart::previousMatch() {
    if (matches_.empty()) return;
    const int n = static_cast<int>(matches_.size());
    showMatch((current_ - 1 + n) % n);
}

// Zooms onto match `index`: the span with its own width on each side (at least 2 µs), its lane
// brought into view.
void TimelineChart::showMatch(int index) {
    current_ = index;
    lanes_->current = index;
    const TimelineMatch& m = matches_[static_cast<size_t>(index)];
    const double pad = std::max(2.0, m.end_us - m.start_us);
    plot_->xAxis->setRange(m.start_us - pad, m.end_us + pad);
    const QCPRange v = plot_->yAxis->range();
    if (m.lane < v.lower || m.lane > v.upper)
        plot_->yAxis->setRange(m.lane - v.size() / 2, m.lane + v.size() / 2);
    matchLabel_->setText(matchText());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool TimelineChart::eventFilter(QObject* watched, QEvent* event) {
    if (watched == search_ && event->type() == QEvent::KeyPress) {
        const auto* k = static_cast<QKeyEvent*>(event);
        if (k->key() == Qt::Key_Return || k->key() == Qt::Key_Enter) {
            if (k->modifiers() & Qt::ShiftModifier)
                previousMatch();
            else
                nextMatch();
            return true;
        }
        if (k->key() == Qt::Key_Escape && !search_->text().isEmpty()) {
            search_->clear();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
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
    // A new profile: the search stays, over the new spans (without zooming away from the step).
    matches_ =
        timeline_ ? findSpans(*timeline_, search_->text().trimmed()) : std::vector<TimelineMatch>{};
    lanes_->matches = &matches_;
    current_ = lanes_->current = -1;
    matchLabel_->setText(matchText());
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
int TimelineChart::drawnMatches() const { return lanes_->drawnMatches; }
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
