#include "ui/distributed/distributedcharts.h"

#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <tuple>

#include "ui/common/format.h"
#include "ui/common/qcp.h"

namespace ts::ui {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
// A rank's rows: the compute row, the thin communication lane under it, and under that the
// buckets' track (neighbouring buckets a half-track apart, so that overlapping ones stay apart).
constexpr double kComputeTop = 0.05, kComputeBottom = 0.5, kCommTop = 0.54, kCommBottom = 0.7,
                 kBucketTop = 0.74, kBucketMiddle = 0.84, kBucketBottom = 0.94;
}  // namespace

// Rectangles in plot coordinates (key: time, value: lane), one brush for all: one plottable a
// kind of bar gives the legend its entries. A live run has a few hundred bars, so each draw
// paints them all.
class SpanPlottable : public QCPAbstractPlottable {
public:
    struct Span {
        double t0, t1, y0, y1;
        int rank;
        bool faded;      // a warm-up step
        QString detail;  // more for the hover text (a bucket's size)
    };
    SpanPlottable(QCPAxis* key, QCPAxis* value) : QCPAbstractPlottable(key, value) {}
    std::vector<Span> spans;

    double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }
    QCPRange getKeyRange(bool& found, QCP::SignDomain) const override {
        found = !spans.empty();
        QCPRange r(0, 0);
        for (const auto& s : spans) r.upper = std::max(r.upper, s.t1);
        return r;
    }
    QCPRange getValueRange(bool& found, QCP::SignDomain, const QCPRange&) const override {
        found = !spans.empty();
        QCPRange r(0, 0);
        for (const auto& s : spans) r.upper = std::max(r.upper, s.y1);
        return r;
    }

protected:
    void draw(QCPPainter* painter) override {
        for (const auto& s : spans) {
            const QPointF a = coordsToPixels(s.t0, s.y0), b = coordsToPixels(s.t1, s.y1);
            QRectF rect = QRectF(a, b).normalized();
            if (rect.width() < 1) rect.setWidth(1);
            QBrush brush = mBrush;
            QColor c = brush.color();
            if (s.faded) c.setAlphaF(c.alphaF() * 0.45);
            brush.setColor(c);
            painter->setBrush(brush);
            painter->setPen(mPen);
            painter->drawRect(rect);
        }
    }
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override {
        painter->setBrush(mBrush);
        painter->setPen(mPen);
        painter->drawRect(rect.adjusted(1, 2, -1, -2));
    }
};

// ---- The lanes ----

LanesChart::LanesChart(QWidget* parent)
    : QcpChart(tr("Ranks' steps"), QStringLiteral("distributed-lanes"), parent) {
    plot_->xAxis->setLabel(
        tr("time (ms), each step from the slowest rank's end of the one before"));
    plot_->yAxis->setRangeReversed(true);
    plot_->yAxis->grid()->setVisible(false);
    // Short names: the legend is two rows of four under the lanes at 640 px (the text below the
    // chart says what each is).
    const QString names[KindCount] = {
        tr("forward"),      tr("backward"),     tr("gradient wait"),       tr("optimizer"),
        tr("comm. waited"), tr("comm. hidden"), tr("weights wait (fsdp)"), tr("bucket all-reduce")};
    for (int k = 0; k < KindCount; ++k) {
        spans_[k] = new SpanPlottable(plot_->xAxis, plot_->yAxis);
        spans_[k]->setName(names[k]);
    }
    legendBelow(4);  // the lanes would be under it
    clear(tr("Run a DDP point: each rank's steps appear here as they arrive"));
}

void LanesChart::clear(const QString& note) {
    for (auto* s : spans_) s->spans.clear();
    ranks_ = 0;
    nodes_.clear();
    explanation_.clear();
    showNote(note);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString LanesChart::hoverText(const QPointF& pos) const {
    const double t = plot_->xAxis->pixelToCoord(pos.x()), y = plot_->yAxis->pixelToCoord(pos.y());
    // The translucent "hidden" bar lies over backward: the narrower kinds are asked first.
    for (int k : {int(Bucket), int(Hidden), int(GatherWait), int(Forward), int(Backward),
                  int(CommWait), int(Optimizer), int(Communication)})
        for (const auto& s : spans_[k]->spans)
            if (t >= s.t0 && t <= s.t1 && y >= s.y0 && y <= s.y1)
                return tr("rank %1 · %2%3\n%4 ms, from %5 to %6 ms")
                    .arg(s.rank)
                    .arg(s.detail.isEmpty() ? spans_[k]->name() : s.detail,
                         s.faded ? tr(" (warm-up)") : QString())
                    .arg(s.t1 - s.t0, 0, 'f', 2)
                    .arg(s.t0, 0, 'f', 2)
                    .arg(s.t1, 0, 'f', 2);
    return {};
}

QString LanesChart::rankLabel(int rank) const {
    const bool named = rank >= 0 && static_cast<size_t>(rank) < nodes_.size() &&
                       !nodes_[static_cast<size_t>(rank)].empty();
    return named ? tr("rank %1 · %2").arg(rank).arg(qstr(nodes_[static_cast<size_t>(rank)]))
                 : tr("rank %1").arg(rank);
}

int LanesChart::barCount(Kind kind) const { return static_cast<int>(spans_[kind]->spans.size()); }

std::vector<std::pair<double, double>> LanesChart::bars(Kind kind, int rank) const {
    std::vector<std::pair<double, double>> out;
    for (const auto& s : spans_[kind]->spans)
        if (s.rank == rank) out.emplace_back(s.t0, s.t1);
    return out;
}

void LanesChart::setSteps(const std::vector<DdpStepRow>& steps, int world_size,
                          const std::string& strategy) {
    restyle();
    for (auto* s : spans_) s->spans.clear();
    int ranks = world_size;
    for (const auto& r : steps) ranks = std::max(ranks, r.rank + 1);
    ranks_ = ranks;
    nodes_.assign(static_cast<size_t>(std::max(ranks, 0)), std::string());
    for (const auto& r : steps)
        if (r.rank >= 0 && !r.node.empty()) nodes_[static_cast<size_t>(r.rank)] = r.node;
    // Steps in order (warm-up first); each starts when the slowest rank ended the one before.
    using Key = std::pair<int, int>;  // (measured?, step)
    std::map<Key, double> longest;
    auto total = [](const DdpStepRow& r) {
        // A compiled overlapped step has no comm wait of its own (-1: inside backward).
        const double sum =
            r.forward_ms + r.backward_ms + std::max(0.0, r.comm_wait_ms) + r.optimizer_ms;
        return r.total_ms > 0 ? std::max(r.total_ms, sum) : sum;
    };
    for (const auto& r : steps) {
        double& t = longest[{r.warmup ? 0 : 1, r.step}];
        t = std::max(t, total(r));
    }
    std::map<Key, double> start;
    double t = 0, measured_from = -1;
    for (const auto& [key, ms] : longest) {
        start[key] = t;
        if (key.first == 1 && measured_from < 0) measured_from = t;
        t += ms;
    }
    bool hiddenMeasured = false, anyHidden = false, anyBuckets = false;
    for (const auto& r : steps) {
        const double s0 = start[{r.warmup ? 0 : 1, r.step}];
        const double y = r.rank;
        const double f1 = s0 + r.forward_ms, b1 = f1 + r.backward_ms,
                     w1 = b1 + std::max(0.0, r.comm_wait_ms), o1 = w1 + r.optimizer_ms;
        auto add = [&](Kind k, double a, double b, double top, double bottom) {
            if (b > a)
                spans_[k]->spans.push_back({a, b, y + top, y + bottom, r.rank, r.warmup, {}});
        };
        add(Forward, s0, f1, kComputeTop, kComputeBottom);
        add(Backward, f1, b1, kComputeTop, kComputeBottom);
        add(CommWait, b1, w1, kComputeTop, kComputeBottom);
        add(Optimizer, w1, o1, kComputeTop, kComputeBottom);
        add(Communication, b1, w1, kCommTop, kCommBottom);
        // Fully sharded: a pass's waits for weights, drawn together at the pass's end.
        add(GatherWait, f1 - std::min(r.forward_ms, r.gather_wait_forward_ms), f1, kCommTop,
            kCommBottom);
        add(GatherWait, b1 - std::min(r.backward_ms, r.gather_wait_backward_ms), b1, kCommTop,
            kCommBottom);
        // See Note [per-bucket timing]: each bucket's all-reduce, launch to end, in its track.
        for (const auto& b : r.buckets) {
            anyBuckets = true;
            const bool upper = b.index % 2 == 0;
            const double a = s0 + b.launch_ms, e = std::max(a, s0 + b.end_ms);
            spans_[Bucket]->spans.push_back({a, e, y + (upper ? kBucketTop : kBucketMiddle),
                                             y + (upper ? kBucketMiddle : kBucketBottom), r.rank,
                                             r.warmup,
                                             tr("bucket %1 (%2 MiB, %3 parameters; ready at %4 ms)")
                                                 .arg(b.index)
                                                 .arg(b.bytes / kMiB, 0, 'f', 2)
                                                 .arg(b.params)
                                                 .arg(s0 + b.ready_ms, 0, 'f', 2)});
        }
        if (r.comm_hidden_ms >= 0) hiddenMeasured = true;
        if (r.comm_hidden_ms > 0) {
            anyHidden = true;
            // Over backward, from the compute row down through the communication lane.
            add(Hidden, std::max(s0, b1 - r.comm_hidden_ms), b1, kComputeTop, kCommBottom);
        }
    }
    const QColor colours[KindCount] = {
        style_.seriesColor(0), style_.seriesColor(1), style_.muted,          style_.seriesColor(2),
        style_.seriesColor(3), style_.seriesColor(3), style_.seriesColor(4), style_.seriesColor(5)};
    for (int k = 0; k < KindCount; ++k) {
        QColor fill = colours[k];
        fill.setAlpha(k == Hidden ? 80 : 200);
        spans_[k]->setBrush(fill);
        spans_[k]->setPen(k == Hidden   ? QPen(colours[k], 1, Qt::DashLine)
                          : k == Bucket ? QPen(colours[k].darker(150), 1)
                                        : QPen(Qt::NoPen));
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int r = 0; r < ranks; ++r) {
        ticker->addTick(r + (kComputeTop + kComputeBottom) / 2, rankLabel(r));
        ticker->addTick(r + (kCommTop + kCommBottom) / 2, tr("comm"));
        if (anyBuckets) ticker->addTick(r + (kBucketTop + kBucketBottom) / 2, tr("buckets"));
    }
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setRange(-0.05, std::max(1, ranks) + 0.0);
    // The measured steps fill the view: a first warm-up step (allocations, NCCL's set-up) can
    // last longer than all of them; it stays to the left (a double click shows everything).
    const double from = measured_from > 0 ? measured_from : 0.0;
    plot_->xAxis->setRange(from, t > from ? from + (t - from) * 1.02 : from + 1.0);

    QStringList lines;
    lines << tr(
        "Each rank: forward, backward, the wait for its averaged gradients and the optimizer "
        "(warm-up steps "
        "paler, to the left of the view: double-click shows them); under it, its communication: "
        "hidden behind "
        "backward (translucent, over backward) and waited for after it.");
    if (anyBuckets)
        lines << tr(
            "Buckets: under the communication lane, one bar per bucket's all-reduce from its "
            "launch to its end (neighbouring buckets a half-track apart); a ready bucket is "
            "launched only after the ones before it, in the same order on every rank. Hovering a "
            "bar says its size and when its last gradient was ready.");
    else if (strategy == "bucketed")
        lines << tr(
            "Bucketed: these rows give each rank's communication as a whole (stored before "
            "buckets were timed one by one), so one communication lane per rank is shown.");
    else if (strategy == "naive" || strategy == "flat")
        lines
            << tr("%1: every all-reduce starts after backward, so all communication is waited for.")
                   .arg(qstr(strategy));
    if (strategy == "fsdp")
        lines << tr(
            "Fully sharded: in the communication lane, how long compute stood still for weights "
            "whose all-gather had not finished (forward's and backward's waits, each drawn "
            "together at its pass's end: what the prefetch did not hide); the all-gathers' and "
            "reduce-scatters' own time is in the table Fully sharded. After backward: the wait "
            "for the last reduce-scatters and the norms' all-reduce.");
    else if (strategy == "fsdp2")
        lines << tr("PyTorch's FSDP2 reports its phases only: its collectives run inside them.");
    if (!hiddenMeasured && !steps.empty())
        lines << tr("The hidden communication was not measured for this point.");
    else if (hiddenMeasured && !anyHidden && strategy != "naive" && strategy != "flat")
        lines << tr("No communication overlapped backward in these steps.");
    explanation_ = steps.empty() ? QString() : lines.join(QLatin1Char(' '));
    showNote(steps.empty() ? tr("No step has arrived yet") : QString());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

// ---- The all-reduce ----

AllreduceChart::AllreduceChart(QWidget* parent)
    : QcpChart(tr("All-reduce bus bandwidth (busbw = algbw · 2(n−1)/n)"),
               QStringLiteral("distributed-allreduce"), parent) {
    plot_->xAxis->setLabel(tr("size per rank"));
    // Short enough for the axis of a 1280×720 window (the formula, in full, was cut there).
    plot_->yAxis->setLabel(tr("busbw (GB/s)"));
    plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
    showNote(tr("Run the all-reduce experiment: one series per world size and dtype"));
}

int AllreduceChart::seriesCount() const { return plot_->graphCount(); }

void AllreduceChart::setRows(const std::vector<dist::AllreduceRow>& rows) {
    restyle();
    plot_->clearGraphs();
    std::map<std::tuple<int, std::string, std::string>, std::vector<std::pair<double, double>>>
        series;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    std::vector<int64_t> sizes;
    for (const auto& r : rows) {
        series[{r.world_size, dist::dtypeName(r.dtype), dist::backendName(r.backend)}].emplace_back(
            static_cast<double>(r.bytes), r.busbw_gbps);
        if (std::find(sizes.begin(), sizes.end(), r.bytes) == sizes.end()) sizes.push_back(r.bytes);
    }
    for (int64_t b : sizes) ticker->addTick(static_cast<double>(b), qstr(dist::formatByteSize(b)));
    plot_->xAxis->setTicker(ticker);
    int colour = 0;
    for (auto& [key, points] : series) {
        std::sort(points.begin(), points.end());
        QVector<double> x, y;
        for (const auto& [b, bw] : points) {
            x << b;
            y << bw;
        }
        auto* g = plot_->addGraph();
        const auto& [world, dtype, backend] = key;
        g->setName(tr("%1 × %2 %3").arg(qstr(dtype)).arg(world).arg(qstr(backend)));
        g->setData(x, y, true);
        const QColor c = style_.seriesColor(colour);
        g->setPen(QPen(c, style_.lineWidth, colour % 2 ? Qt::DashLine : Qt::SolidLine));
        g->setScatterStyle(QCPScatterStyle(
            colour % 2 ? QCPScatterStyle::ssSquare : QCPScatterStyle::ssDisc, c, 7));
        ++colour;
    }
    showNote(rows.empty() ? tr("Run the all-reduce experiment: one series per world size and dtype")
                          : QString());
    if (!rows.empty()) {
        plot_->rescaleAxes();
        plot_->xAxis->scaleRange(1.3);
        plot_->yAxis->setRangeLower(0);
        plot_->yAxis->setRangeUpper(std::max(1e-3, plot_->yAxis->range().upper * 1.15));
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

// ---- Memory per rank ----

RankMemoryChart::RankMemoryChart(QWidget* parent)
    : QcpChart(tr("Memory per rank"), QStringLiteral("distributed-memory"), parent) {
    plot_->yAxis->setLabel(tr("bytes held (MiB)"));
    plot_->setInteractions(QCP::Interactions());
    legendBelow();  // its bars would be under it
    showNote(tr("Run DDP points: each rank's parameters, gradients, optimizer state and buffers"));
}

double RankMemoryChart::barTotal(int i) const {
    if (i < 0 || static_cast<size_t>(i) >= keys_.size()) return 0;
    double total = 0;
    for (int p = 0; p < plot_->plottableCount(); ++p)
        if (auto* bars = qobject_cast<QCPBars*>(plot_->plottable(p)))
            for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
                if (it->key == keys_[i]) total += it->value;
    return total;
}

void RankMemoryChart::setBars(const std::vector<RankMemoryBar>& in) {
    restyle();
    plot_->clearPlottables();
    for (auto* l : labels_) plot_->removeItem(l);
    labels_.clear();
    keys_.clear();
    bars_ = static_cast<int>(in.size());
    // Bars of a group side by side, a gap between groups; the group's label over its bars.
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double key = 0;
    int lastGroup = -1;
    std::vector<std::pair<double, QString>> groupStarts;
    for (const auto& b : in) {
        key += b.group != lastGroup && lastGroup >= 0 ? 2.0 : 1.0;
        if (b.group != lastGroup) groupStarts.emplace_back(key, b.point);
        lastGroup = b.group;
        keys_.push_back(key);
        ticker->addTick(key, tr("r%1").arg(b.rank));
    }
    plot_->xAxis->setTicker(ticker);
    const QString names[4] = {tr("parameters"), tr("gradients"), tr("optimizer state"),
                              tr("communication buffers")};
    QCPBars* below = nullptr;
    double top = 0;
    std::vector<double> totals(in.size(), 0.0);
    for (int c = 0; c < 4; ++c) {
        auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
        bars->setName(names[c]);
        bars->setWidth(0.8);
        QColor line = style_.seriesColor(c), fill = line;
        fill.setAlpha(170);
        bars->setPen(QPen(line, 1));
        bars->setBrush(fill);
        QVector<double> keys, values;
        for (size_t i = 0; i < in.size(); ++i) {
            const RankMemoryBar& b = in[i];
            const int64_t bytes = c == 0   ? b.parameters
                                  : c == 1 ? b.gradients
                                  : c == 2 ? b.optimizer_state
                                           : b.comm_buffers;
            keys << keys_[i];
            values << bytes / kMiB;
            totals[i] += bytes / kMiB;
            top = std::max(top, totals[i]);
        }
        bars->setData(keys, values, true);
        if (below) bars->moveAbove(below);
        below = bars;
    }
    for (size_t g = 0; g < groupStarts.size(); ++g) {
        auto* text = new QCPItemText(plot_);
        text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(groupStarts[g].first - 0.4, 0.02);
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        text->setText(groupStarts[g].second);
        text->setColor(style_.foreground);
        labels_.push_back(text);
    }
    showNote(
        in.empty()
            ? tr("Run DDP points: each rank's parameters, gradients, optimizer state and buffers")
            : QString());
    plot_->xAxis->setRange(0, key + 1);
    plot_->yAxis->setRange(0, std::max(1e-3, top * 1.25));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace ts::ui
