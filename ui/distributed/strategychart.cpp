#include "ui/distributed/strategychart.h"

#include <algorithm>
#include <cmath>

#include "core/table.h"  // formatBytes
#include "ui/common/format.h"
#include "ui/common/qcp.h"

namespace ts::ui {

namespace {
constexpr double kHalfBar = 0.35;  // a bar is 0.7 of its slot; the one-GPU line 0.9
constexpr double kHalfLine = 0.45;
double keyOf(size_t i) { return static_cast<double>(i) + 1; }

// The value of `graph` at `key` (its data point there); `none` where it has none.
double valueAt(const QCPGraph* graph, double key, double none) {
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        if (std::abs(it->key - key) < 1e-9 && !std::isnan(it->value)) return it->value;
    return none;
}

QString plusMinus(double mean, double std, int steps) {
    return steps > 1 ? QObject::tr("%1 ± %2 ms").arg(formatMs(mean), formatMs(std))
                     : QObject::tr("%1 ms").arg(formatMs(mean));
}
}  // namespace

StrategyChart::StrategyChart(QWidget* parent)
    : QcpChart(tr("Step time per strategy"), QStringLiteral("distributed-strategies"), parent) {
    plot_->yAxis->setLabel(tr("time per step (ms), slowest rank"));
    plot_->yAxis2->setVisible(true);
    plot_->yAxis2->setLabel(tr("memory per rank (MiB)"));
    plot_->yAxis2->grid()->setVisible(false);
    plot_->setInteractions(QCP::Interactions());
    const QString names[SegmentCount] = {tr("compute (forward + backward)"),
                                         tr("exposed communication"), tr("optimizer"), tr("other")};
    QCPBars* below = nullptr;
    for (int s = 0; s < SegmentCount; ++s) {
        segments_[s] = new QCPBars(plot_->xAxis, plot_->yAxis);
        segments_[s]->setName(names[s]);
        segments_[s]->setWidth(2 * kHalfBar);
        if (below) segments_[s]->moveAbove(below);
        below = segments_[s];
    }
    step_ = new QCPGraph(plot_->xAxis, plot_->yAxis);
    step_->setName(tr("step, mean ± std"));
    step_->setLineStyle(QCPGraph::lsNone);
    errors_ = new QCPErrorBars(plot_->xAxis, plot_->yAxis);
    errors_->setDataPlottable(step_);
    errors_->removeFromLegend();
    baseline_ = new QCPGraph(plot_->xAxis, plot_->yAxis);
    baseline_->setName(tr("one GPU (world size 1)"));
    memory_ = new QCPGraph(plot_->xAxis, plot_->yAxis2);
    memory_->setName(tr("peak memory per rank"));
    memory_->setLineStyle(QCPGraph::lsNone);
    legendBelow(3);
    setBars({});
}

QStringList StrategyChart::categories() const {
    QStringList out;
    for (const auto& b : bars_) out << b.label;
    return out;
}

QList<double> StrategyChart::segment(Segment s) const {
    QList<double> out;
    if (s < 0 || s >= SegmentCount) return out;
    const auto data = segments_[s]->data();
    for (size_t i = 0; i < bars_.size(); ++i) {
        double v = 0;
        for (auto it = data->constBegin(); it != data->constEnd(); ++it)
            if (std::abs(it->key - keyOf(i)) < 1e-9) v = it->value;
        out << v;
    }
    return out;
}

QList<double> StrategyChart::stepMeans() const {
    QList<double> out;
    for (size_t i = 0; i < bars_.size(); ++i) out << valueAt(step_, keyOf(i), 0);
    return out;
}

QList<double> StrategyChart::stepErrors() const {
    QList<double> out;
    // The error bars' data is index-aligned with the step graph's.
    for (size_t i = 0; i < bars_.size(); ++i) {
        double e = 0;
        for (int k = 0; k < step_->data()->size(); ++k)
            if (std::abs(step_->data()->at(k)->key - keyOf(i)) < 1e-9 && k < errors_->dataCount())
                e = errors_->data()->at(k).errorPlus;
        out << e;
    }
    return out;
}

QList<double> StrategyChart::memory() const {
    QList<double> out;
    for (size_t i = 0; i < bars_.size(); ++i) out << valueAt(memory_, keyOf(i), 0);
    return out;
}

QList<double> StrategyChart::baselines() const {
    QList<double> out;
    for (size_t i = 0; i < bars_.size(); ++i) out << valueAt(baseline_, keyOf(i) - kHalfLine, -1);
    return out;
}

QString StrategyChart::barText(int i) const {
    if (i < 0 || static_cast<size_t>(i) >= bars_.size()) return {};
    const StrategyBar& b = bars_[static_cast<size_t>(i)];
    QStringList lines{b.label + tr(" (%n rank(s))", nullptr, b.world_size)};
    if (!b.measured) return (lines << b.why).join(QLatin1Char('\n'));
    lines << tr("step %1 over %n measured step(s)", nullptr, b.steps)
                 .arg(plusMinus(b.step_ms, b.step_std, b.steps));
    lines << tr("compute %1").arg(plusMinus(b.compute_ms, b.compute_std, b.steps));
    lines << tr("exposed communication %1").arg(plusMinus(b.comm_ms, b.comm_std, b.steps));
    lines << tr("optimizer %1").arg(plusMinus(b.optimizer_ms, b.optimizer_std, b.steps));
    if (b.other_ms > 0) lines << tr("other %1 ms").arg(formatMs(b.other_ms));
    if (b.baseline_ms > 0)
        lines << (b.baseline_point == b.point
                      ? tr("this is the one-GPU step")
                      : tr("%1%2% over one GPU (%3 ms, point %4)")
                            .arg(b.overhead() >= 0 ? QStringLiteral("+") : QString())
                            .arg(100 * b.overhead(), 0, 'f', 1)
                            .arg(formatMs(b.baseline_ms))
                            .arg(b.baseline_point + 1));
    if (b.memory_bytes > 0)
        lines << (b.memory_is_peak ? tr("peak memory per rank %1")
                                   : tr("tensors per rank %1 (no allocator peak on the CPU)"))
                     .arg(qstr(formatBytes(b.memory_bytes)));
    return lines.join(QLatin1Char('\n'));
}

QString StrategyChart::hoverText(const QPointF& pos) const {
    const double key = plot_->xAxis->pixelToCoord(pos.x());
    const long i = std::lround(key) - 1;
    if (i < 0 || static_cast<size_t>(i) >= bars_.size() || std::abs(key - (i + 1)) > kHalfLine)
        return {};
    return barText(static_cast<int>(i));
}

void StrategyChart::setBars(const std::vector<StrategyBar>& bars) {
    restyle();
    bars_ = bars;
    for (auto* n : notes_) plot_->removeItem(n);
    notes_.clear();
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    QVector<double> keys, seg[SegmentCount], stepKeys, stepValues, stepErrors, lineKeys, lineValues,
        memKeys, memValues;
    double top = 0;
    int64_t memTop = 0;
    bool anyOther = false, anyBaseline = false, anyPeak = false, anyTensors = false;
    for (size_t i = 0; i < bars.size(); ++i) {
        const StrategyBar& b = bars[i];
        const double k = keyOf(i);
        // Over the tick, the label in lines: "3: bucketed 25 MiB" / "sharded" / "bf16".
        ticker->addTick(k, QString(b.label).replace(QStringLiteral(", "), QStringLiteral("\n")));
        keys << k;
        const double parts[SegmentCount] = {b.compute_ms, b.comm_ms, b.optimizer_ms, b.other_ms};
        for (int s = 0; s < SegmentCount; ++s) seg[s] << (b.measured ? parts[s] : 0.0);
        if (!b.measured) {
            auto* text = new QCPItemText(plot_);
            text->position->setTypeX(QCPItemPosition::ptPlotCoords);
            text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            text->position->setCoords(k, 0.97);
            text->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
            text->setRotation(-90);
            text->setText(b.why);
            text->setColor(style_.muted);
            text->setFont(style_.labelFont);
            notes_.push_back(text);
            continue;
        }
        anyOther = anyOther || b.other_ms > 0;
        stepKeys << k;
        stepValues << b.step_ms;
        stepErrors << (b.steps > 1 ? b.step_std : 0.0);
        top = std::max(top, b.step_ms + b.step_std);
        if (b.baseline_ms > 0) {
            anyBaseline = true;
            lineKeys << k - kHalfLine << k + kHalfLine << k + 0.5;
            lineValues << b.baseline_ms << b.baseline_ms << std::nan("");
            top = std::max(top, b.baseline_ms);
        }
        if (b.memory_bytes > 0) {
            memKeys << k;
            memValues << static_cast<double>(b.memory_bytes);
            memTop = std::max(memTop, b.memory_bytes);
            (b.memory_is_peak ? anyPeak : anyTensors) = true;
        }
    }
    plot_->xAxis->setTicker(ticker);
    const QColor colours[SegmentCount] = {style_.seriesColor(0), style_.seriesColor(3),
                                          style_.seriesColor(2), style_.muted};
    for (int s = 0; s < SegmentCount; ++s) {
        QColor fill = colours[s];
        fill.setAlpha(200);
        segments_[s]->setPen(QPen(colours[s], 1));
        segments_[s]->setBrush(fill);
        segments_[s]->setData(keys, seg[s], true);
    }
    // "other" only where a step has time outside its phases.
    segments_[Other]->setVisible(anyOther);
    if (anyOther)
        segments_[Other]->addToLegend();
    else
        segments_[Other]->removeFromLegend();
    step_->setData(stepKeys, stepValues, true);
    step_->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, style_.foreground, style_.foreground, 5));
    errors_->setData(stepErrors);
    errors_->setPen(QPen(style_.foreground, style_.presentation ? 2.0 : 1.2));
    errors_->setWhiskerWidth(12);
    baseline_->setData(lineKeys, lineValues, true);
    baseline_->setPen(QPen(style_.foreground, style_.lineWidth, Qt::DashLine));
    baseline_->setVisible(anyBaseline);
    if (anyBaseline)
        baseline_->addToLegend();
    else
        baseline_->removeFromLegend();
    // GiB where a rank holds 2 GiB or more.
    const bool gib = memTop >= (int64_t{2} << 30);
    memoryScale_ = gib ? 1024.0 * 1024.0 * 1024.0 : 1024.0 * 1024.0;
    memoryUnit_ = gib ? QStringLiteral("GiB") : QStringLiteral("MiB");
    for (double& v : memValues) v /= memoryScale_;
    memory_->setData(memKeys, memValues, true);
    memory_->setName(anyPeak ? tr("peak memory per rank") : tr("tensors per rank"));
    memory_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, style_.seriesColor(4),
                                             style_.seriesColor(4), style_.markerSize + 3));
    memory_->setVisible(!memKeys.isEmpty());
    if (memKeys.isEmpty())
        memory_->removeFromLegend();
    else
        memory_->addToLegend();
    plot_->yAxis2->setLabel(tr("%1 (%2)").arg(
        anyPeak ? tr("peak memory per rank") : tr("tensors per rank"), memoryUnit_));

    const bool empty = bars.empty();
    for (QCPAxis* a : {plot_->xAxis, plot_->yAxis, plot_->yAxis2}) a->setVisible(!empty);
    showNote(empty ? tr("Run DDP points: each strategy's step, split into compute, exposed "
                        "communication and optimizer, appears here")
                   : QString());
    plot_->xAxis->setRange(0.4, static_cast<double>(bars.size()) + 0.6);
    plot_->yAxis->setRange(0, std::max(1e-3, top * 1.15));
    plot_->yAxis2->setRange(0, std::max(1e-3, memTop / memoryScale_ * 1.15));

    QStringList lines;
    if (!empty) {
        lines << tr(
            "Each bar: the step of the slowest rank (the table's step ms) split into "
            "compute (forward and backward), exposed communication (the wait after "
            "backward: what it did not hide) and optimizer, means over the measured "
            "steps; the error bar is the step's standard deviation.");
        if (anyOther) lines << tr("Other: the step's time outside those phases.");
        if (anyPeak)
            lines << tr("Diamonds (right axis): each point's highest allocator peak of a rank.");
        else if (anyTensors)
            lines << tr(
                "Diamonds (right axis): the largest rank's tensors (parameters, "
                "gradients, optimizer state, buffers); the CPU has no allocator peak.");
        if (anyBaseline)
            lines << tr(
                "Dashed: the one-GPU step of the same model, precision and batch per "
                "rank (a point of world size 1 in this run); hover a bar for its overhead "
                "over one GPU.");
        else
            lines << tr(
                "No one-GPU point in this run (a DDP point of world size 1 with the same "
                "model, precision and batch per rank), so no overhead over one GPU is "
                "shown.");
    }
    explanation_ = lines.join(QLatin1Char(' '));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace ts::ui
