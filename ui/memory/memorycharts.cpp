#include "ui/memory/memorycharts.h"

#include <QVBoxLayout>

#include "core/table.h"
#include "memory/memory_report.h"
#include "ui/common/format.h"
#include "ui/common/qcp.h"

namespace ts::ui {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
// Above this many points the stacked categories are thinned (six filled graphs cost more
// than a line each); the timeline's lines are not: adaptive sampling keeps them smooth.
constexpr size_t kMaxStackedPoints = 200'000;

QColor phaseColor(Phase p, const ChartStyle& s) {
    QColor c = p == Phase::Forward     ? s.seriesColor(0)
               : p == Phase::Backward  ? s.seriesColor(1)
               : p == Phase::Optimizer ? s.seriesColor(2)
                                       : s.muted;
    c.setAlpha(s.dark ? 40 : 28);
    return c;
}
}  // namespace

std::vector<size_t> thinTimeline(const std::vector<TimelinePoint>& points, size_t max) {
    std::vector<size_t> out;
    if (max == 0) return out;
    if (points.size() <= max) {
        out.resize(points.size());
        for (size_t i = 0; i < points.size(); ++i) out[i] = i;
        return out;
    }
    const double per = static_cast<double>(points.size()) / static_cast<double>(max);
    for (size_t b = 0; b < max; ++b) {
        const size_t first = static_cast<size_t>(b * per),
                     last = std::min(points.size(), static_cast<size_t>((b + 1) * per));
        size_t best = first;
        for (size_t i = first; i < last; ++i)
            if (points[i].allocated > points[best].allocated) best = i;
        if (first < last) out.push_back(best);
    }
    return out;
}

// ---- The timeline ----

MemoryTimelineChart::MemoryTimelineChart(QWidget* parent)
    : QcpChart(tr("Active memory timeline"), QStringLiteral("memory-timeline"), parent) {
    plot_->xAxis->setLabel(tr("allocator event"));
    plot_->yAxis->setLabel(tr("memory (MiB)"));
    lifetime_ = new QCPItemRect(plot_);
    lifetime_->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    lifetime_->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    lifetime_->setVisible(false);
    lifetimeText_ = new QCPItemText(plot_);
    lifetimeText_->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    lifetimeText_->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    lifetimeText_->setVisible(false);
    // Empty axes say what comes (issue 29 item 7).
    showNote(
        tr("Run a point on a CUDA device, or open a stored run: the allocator's active "
           "memory, event by event, appears here"));
}

void MemoryTimelineChart::setResult(const MemoryResult& r, const MemoryAnalysis& a) {
    result_ = &r;
    analysis_ = &a;
    highlighted_ = -1;
    plot_->clearGraphs();
    for (auto* b : bands_) plot_->removeItem(b);
    bands_.clear();
    for (auto* m : failures_) plot_->removeItem(m);
    failures_.clear();
    lifetime_->setVisible(false);
    lifetimeText_->setVisible(false);
    QVector<double> keys, allocated, reserved;
    keys.reserve(static_cast<qsizetype>(a.timeline.size()));
    allocated.reserve(keys.capacity());
    reserved.reserve(keys.capacity());
    for (const auto& p : a.timeline) {
        keys << static_cast<double>(p.index);
        allocated << p.allocated / kMiB;
        reserved << p.reserved / kMiB;
    }
    auto* alloc = plot_->addGraph();
    alloc->setName(tr("allocated"));
    alloc->setData(keys, allocated, true);
    alloc->setLineStyle(QCPGraph::lsStepLeft);
    alloc->setPen(QPen(style_.seriesColor(0), style_.lineWidth));
    auto* res = plot_->addGraph();
    res->setName(tr("reserved"));
    res->setData(keys, reserved, true);
    res->setLineStyle(QCPGraph::lsStepLeft);
    res->setPen(QPen(style_.seriesColor(1), style_.lineWidth, Qt::DashLine));
    QVector<double> dk, dv;
    for (const auto& [index, used] : a.driver) {
        dk << static_cast<double>(index);
        dv << used / kMiB;
    }
    auto* drv = plot_->addGraph();
    drv->setName(tr("device used (driver)"));
    drv->setData(dk, dv, true);
    drv->setLineStyle(QCPGraph::lsStepLeft);
    drv->setPen(QPen(style_.seriesColor(3), 1));
    drv->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    for (QCPGraph* g : {alloc, res, drv}) g->setAdaptiveSampling(true);
    for (const auto& b : a.bands) {
        auto* rect = new QCPItemRect(plot_);
        rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->topLeft->setCoords(static_cast<double>(b.first), 0);
        rect->bottomRight->setCoords(static_cast<double>(b.last) + 1, 1);
        rect->setPen(Qt::NoPen);
        rect->setBrush(phaseColor(b.phase, style_));
        rect->setLayer(QStringLiteral("background"));
        bands_.push_back(rect);
    }
    // Where the allocator refused an allocation (a frontier probe's trace ends there).
    for (size_t i = 0; i < r.trace.events.size(); ++i) {
        const AllocEvent& e = r.trace.events[i];
        if (e.action != AllocAction::Oom) continue;
        auto* line = new QCPItemStraightLine(plot_);
        line->point1->setCoords(static_cast<double>(i), 0);
        line->point2->setCoords(static_cast<double>(i), 1);
        line->setPen(QPen(style_.seriesColor(1), 2));
        auto* text = new QCPItemText(plot_);
        text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(static_cast<double>(i), 0.5);  // clear of the legend
        text->setPositionAlignment(Qt::AlignRight | Qt::AlignVCenter);
        text->setText(tr("out of memory: %1 asked for ").arg(qstr(formatBytes(e.size))));
        text->setColor(style_.seriesColor(1));
        failures_.push_back(line);
        failures_.push_back(text);
    }
    showNote(a.timeline.empty()
                 ? (r.status == Status::Ok ? tr("The trace holds no allocation.")
                                           : tr("Nothing recorded: %1").arg(qstr(r.error)))
                 : QString());
    plot_->rescaleAxes();
    if (!a.timeline.empty()) plot_->yAxis->setRangeLower(0);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryTimelineChart::highlight(int index) {
    highlighted_ = -1;
    lifetime_->setVisible(false);
    lifetimeText_->setVisible(false);
    if (analysis_ && result_ && index >= 0 &&
        static_cast<size_t>(index) < analysis_->allocations.size()) {
        const Allocation& x = analysis_->allocations[index];
        const double first = x.initial ? 0.0 : static_cast<double>(x.alloc_index);
        const double last = x.free_index ? static_cast<double>(*x.free_index)
                                         : static_cast<double>(result_->trace.events.size());
        QColor c = style_.seriesColor(4);
        c.setAlpha(70);
        lifetime_->topLeft->setCoords(first, 0);
        lifetime_->bottomRight->setCoords(std::max(last, first + 1), 1);
        lifetime_->setPen(QPen(style_.seriesColor(4), 1));
        lifetime_->setBrush(c);
        lifetime_->setVisible(true);
        auto name = [&](int32_t i) {
            return i >= 0 && static_cast<size_t>(i) < result_->trace.names.size()
                       ? qstr(result_->trace.names[i])
                       : QString();
        };
        QStringList what{qstr(formatBytes(x.size)), qstr(toString(x.category))};
        if (!name(x.range).isEmpty()) what << name(x.range);
        if (!name(x.op).isEmpty()) what << name(x.op);
        lifetimeText_->setText(what.join(QStringLiteral(" · ")));
        lifetimeText_->position->setCoords(first, 0.02);
        lifetimeText_->setColor(style_.foreground);
        lifetimeText_->setVisible(true);
        highlighted_ = index;
        // Bring the lifetime into view when it is outside.
        const QCPRange range = plot_->xAxis->range();
        if (last < range.lower || first > range.upper) {
            const double pad = std::max(10.0, (last - first) * 0.2);
            plot_->xAxis->setRange(first - pad, last + pad);
        }
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

// ---- The categories, stacked ----

MemoryCategoryChart::MemoryCategoryChart(QWidget* parent)
    : QcpChart(tr("Live memory by category"), QStringLiteral("memory-categories"), parent) {
    plot_->xAxis->setLabel(tr("allocator event"));
    plot_->yAxis->setLabel(tr("memory (MiB)"));
    showNote(tr("Run a point or open a stored run: live memory by category appears here"));
}

void MemoryCategoryChart::setResult(const MemoryResult& r, const MemoryAnalysis& a) {
    plot_->clearGraphs();
    const std::vector<size_t> shown = thinTimeline(a.timeline, kMaxStackedPoints);
    QVector<double> keys;
    for (size_t i : shown) keys << static_cast<double>(a.timeline[i].index);
    std::vector<double> below(shown.size(), 0.0);
    QCPGraph* previous = nullptr;
    int colour = 0;
    for (MemoryCategory c : allMemoryCategories()) {
        QVector<double> top;
        for (size_t k = 0; k < shown.size(); ++k) {
            below[k] += a.timeline[shown[k]].by_category[static_cast<size_t>(c)] / kMiB;
            top << below[k];
        }
        auto* g = plot_->addGraph();
        g->setName(qstr(toString(c)));
        g->setData(keys, top, true);
        g->setLineStyle(QCPGraph::lsStepLeft);
        QColor line = style_.seriesColor(colour++), fill = line;
        fill.setAlpha(150);
        g->setPen(QPen(line, 1));
        g->setBrush(fill);
        if (previous) g->setChannelFillGraph(previous);
        g->setAdaptiveSampling(true);
        previous = g;
    }
    showNote(a.timeline.empty()
                 ? tr("Nothing recorded: %1").arg(qstr(r.error.empty() ? "no allocation" : r.error))
                 : QString());
    plot_->rescaleAxes();
    if (!a.timeline.empty()) plot_->yAxis->setRangeLower(0);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

// ---- Two runs compared ----

MemoryCompareChart::MemoryCompareChart(QWidget* parent)
    : QcpChart(tr("Two runs, phase by phase"), QStringLiteral("memory-compare"), parent) {
    plot_->yAxis->setLabel(tr("phase's peak (MiB)"));
    plot_->setInteractions(QCP::Interactions());
    legendBelow();  // its bars would be under it
    clear(tr("Select two memory runs in History and press Compare"));
}

void MemoryCompareChart::clear(const QString& note) {
    plot_->clearPlottables();
    showNote(note);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryCompareChart::setComparison(const std::vector<PhaseComparisonRow>& rows) {
    plot_->clearPlottables();
    restyle();
    // Slots: one per phase present in either run; A at 3·slot + 1, B at 3·slot + 2.
    std::vector<Phase> phases;
    for (const auto& r : rows)
        if (std::find(phases.begin(), phases.end(), r.phase) == phases.end())
            phases.push_back(r.phase);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (size_t s = 0; s < phases.size(); ++s) {
        const QString name = qstr(phaseComparisonName(phases[s]));
        ticker->addTick(3.0 * s + 1, tr("A\n%1").arg(name));
        ticker->addTick(3.0 * s + 2, tr("B\n%1").arg(name));
    }
    plot_->xAxis->setTicker(ticker);
    QCPBars* below = nullptr;
    int colour = 0;
    double top = 0;
    std::vector<double> totals(2 * phases.size(), 0.0);
    for (MemoryCategory c : allMemoryCategories()) {
        auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
        bars->setName(qstr(toString(c)));
        bars->setWidth(0.8);
        QColor line = style_.seriesColor(colour++), fill = line;
        fill.setAlpha(170);
        bars->setPen(QPen(line, 1));
        bars->setBrush(fill);
        QVector<double> keys, values;
        for (const auto& r : rows) {
            if (!r.category || *r.category != c) continue;
            const size_t s = static_cast<size_t>(std::find(phases.begin(), phases.end(), r.phase) -
                                                 phases.begin());
            for (int b = 0; b < 2; ++b) {
                if (!(b ? r.b_present : r.a_present)) continue;
                const double v = (b ? r.b : r.a) / kMiB;
                keys << 3.0 * s + 1 + b;
                values << v;
                totals[2 * s + b] += v;
                top = std::max(top, totals[2 * s + b]);
            }
        }
        bars->setData(keys, values, true);
        if (below) bars->moveAbove(below);
        below = bars;
    }
    showNote(rows.empty() ? tr("Neither run recorded a step") : QString());
    plot_->xAxis->setRange(0, 3.0 * phases.size());
    plot_->yAxis->setRange(0, std::max(1.0, top * 1.1));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

double MemoryCompareChart::barTotal(int slot, int b) const {
    double total = 0;
    const double key = 3.0 * slot + 1 + b;
    for (int i = 0; i < plot_->plottableCount(); ++i)
        if (auto* bars = qobject_cast<QCPBars*>(plot_->plottable(i)))
            for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
                if (it->key == key) total += it->value;
    return total;
}

// ---- The frontier ----

FrontierChart::FrontierChart(QWidget* parent)
    : QcpChart(tr("OOM frontier"), QStringLiteral("memory-frontier"), parent) {
    plot_->yAxis->setLabel(tr("peak of one step (MiB)"));
    plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    showNote(tr("Run a point with a frontier (context or batch): how far it fits appears here"));
}

void FrontierChart::setResult(const MemoryResult& r) {
    plot_->clearGraphs();
    for (auto* m : marks_) plot_->removeItem(m);
    marks_.clear();
    restyle();
    if (!r.frontier) {
        showNote(tr(
            "No frontier in this run (memory --frontier context|batch, or the panel's Frontier)"));
        plot_->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const FrontierResult& f = *r.frontier;
    plot_->xAxis->setLabel(f.axis == FrontierAxis::Context ? tr("context length")
                                                           : tr("batch size"));
    QVector<double> fk, fv, ok, ov;
    double top = 0;
    for (const auto& p : f.probes) top = std::max(top, p.peak_bytes / kMiB);
    for (const auto& p : f.probes) {
        if (p.fits) {
            fk << static_cast<double>(p.value);
            fv << p.peak_bytes / kMiB;
        } else {
            ok << static_cast<double>(p.value);
            ov << (top > 0 ? top * 1.1 : 1.0);  // out of memory: drawn above every measured peak
        }
    }
    auto* fits = plot_->addGraph();
    fits->setName(tr("fits (peak)"));
    fits->setData(fk, fv);
    fits->setLineStyle(QCPGraph::lsNone);
    fits->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, style_.seriesColor(0), 8));
    auto* oom = plot_->addGraph();
    oom->setName(tr("out of memory"));
    oom->setData(ok, ov);
    oom->setLineStyle(QCPGraph::lsNone);
    oom->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, style_.seriesColor(1), 10));
    if (f.largest_fit > 0) {
        auto* line = new QCPItemStraightLine(plot_);
        line->point1->setCoords(static_cast<double>(f.largest_fit), 0);
        line->point2->setCoords(static_cast<double>(f.largest_fit), 1);
        line->setPen(QPen(style_.muted, 1, Qt::DashLine));
        auto* text = new QCPItemText(plot_);
        text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(static_cast<double>(f.largest_fit), 0.05);
        text->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        text->setText(tr("largest that fits: %1 ").arg(f.largest_fit));
        text->setColor(style_.foreground);
        marks_ = {line, text};
    }
    showNote(f.probes.empty() ? tr("The frontier ran no probe") : QString());
    plot_->rescaleAxes();
    plot_->xAxis->scaleRange(1.3);
    plot_->yAxis->setRangeLower(0);
    plot_->yAxis->setRangeUpper(std::max(1.0, top * 1.25));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace ts::ui
