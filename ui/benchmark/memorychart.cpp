#include "ui/benchmark/memorychart.h"

#include <QMenu>
#include <QPicture>
#include <QToolTip>
#include <QVBoxLayout>

#include "ui/benchmark/resultmodel.h"
#include "ui/benchmark/stepmodel.h"
#include "ui/common/dimensions.h"
#include "ui/common/format.h"
#include "ui/common/qcp.h"
#include "ui/common/theme.h"

namespace ts::ui {

static constexpr double kMiB = 1024.0 * 1024.0;

namespace {
// Ticks at whole 1-2-5 steps (1, 2, 5, 10, 20 …), never 2.5 or 7.5: steps and MiB count.
class WholeTicker : public QCPAxisTicker {
protected:
    double getTickStep(const QCPRange& range) override {
        const double raw = range.size() / (tickCount() + 1e-10);
        if (raw <= 1) return 1;
        const double mag = std::pow(10.0, std::floor(std::log10(raw)));
        for (double m : {1.0, 2.0, 5.0})
            if (raw <= m * mag) return m * mag;
        return 10 * mag;
    }
    int getSubTickCount(double step) override {
        return step >= 5 && std::fmod(step, 5) == 0 ? 4 : step >= 2 ? 1 : 0;
    }
};
}  // namespace

MemoryChart::MemoryChart(StepModel* steps, QWidget* parent) : QWidget(parent), steps_(steps) {
    plot_ = new QCustomPlot(this);
    plot_->setNoAntialiasingOnDrag(true);
    // Wide pens on dense data: one polyline per graph instead of one line per segment.
    plot_->setPlottingHint(QCP::phFastPolylines, true);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
    plot_->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new WholeTicker));
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new WholeTicker));
    tracer_ = new QCPItemTracer(plot_);
    tracer_->setStyle(QCPItemTracer::tsCrosshair);
    tracer_->setInterpolating(false);
    tracer_->setVisible(false);
    plot_->setContextMenuPolicy(Qt::CustomContextMenu);
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(0, 0, new QCPTextElement(plot_, tr("Memory per step")));
    allocated_ = plot_->addGraph();
    allocated_->setName(tr("allocated"));
    reserved_ = plot_->addGraph();
    reserved_->setName(tr("reserved"));
    peak_ = plot_->addGraph();
    peak_->setName(tr("peak in step"));
    for (QCPGraph* g : {allocated_, reserved_, peak_}) g->setAdaptiveSampling(true);
    plot_->xAxis->setLabel(tr("step (whole run)"));
    plot_->yAxis->setLabel(tr("memory (MiB)"));
    plot_->legend->setVisible(true);
    // The legend in a row under the plot: the point labels own the plot's top.
    plot_->axisRect()->insetLayout()->take(plot_->legend);
    plot_->plotLayout()->addElement(2, 0, plot_->legend);
    plot_->plotLayout()->setRowStretchFactor(2, 0.001);
    plot_->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot_->legend->setMargins(QMargins(6, 2, 6, 2));
    note_ = new QCPItemText(plot_);
    note_->position->setType(QCPItemPosition::ptAxisRectRatio);
    note_->position->setCoords(0.5, 0.5);
    note_->setText(tr(
        "No device memory in this run: memory is measured on CUDA devices; CPU runs record none."));
    note_->setVisible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    throttle_ = new RedrawThrottle([this] { redraw(); }, this);
    throttle_->deferWhileHidden(this);  // see Note [hidden charts wait]

    connect(plot_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(this);
        menu.addAction(tr("Export Chart…"), this, &MemoryChart::exportRequested);
        menu.addAction(tr("Copy Chart Image"), this, &MemoryChart::copyRequested);
        menu.addSeparator();
        menu.addAction(tr("Fit to Data"), this, [this] {
            followData_ = true;
            throttle_->request();
        });
        menu.exec(plot_->mapToGlobal(pos));
    });
    // Once the user drags or zooms, new data no longer moves the view. Ctrl+drag zooms
    // into a box instead of dragging.
    connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        followData_ = false;
        plot_->setSelectionRectMode(e->modifiers() & Qt::ControlModifier ? QCP::srmZoom
                                                                         : QCP::srmNone);
    });
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const double key = plot_->xAxis->pixelToCoord(e->pos().x());
        hoverAt(key);
        const QString text =
            tracer_->visible() ? hoverText(static_cast<int>(std::lround(key))) : QString();
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), text, plot_);
    });
    connect(plot_, &QCustomPlot::mouseWheel, this, [this] { followData_ = false; });
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] {
        followData_ = true;
        throttle_->request();
    });
    connect(steps, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex&, int first, int last) { appendRows(first, last); });
    connect(steps, &QAbstractItemModel::modelReset, this, &MemoryChart::reload);
    connect(&Theme::instance(), &Theme::changed, this, &MemoryChart::restyle);
    restyle();
    reload();
}

void MemoryChart::setResults(ResultModel* results) {
    results_ = results;
    // A new point (or a new run) changes the boundaries' labels.
    auto relabel = [this] {
        boundariesDirty_ = true;
        throttle_->request();
    };
    connect(results, &QAbstractItemModel::modelReset, this, relabel);
    connect(results, &QAbstractItemModel::rowsInserted, this, relabel);
    relabel();
}

QList<double> MemoryChart::boundaryKeys() const { return boundaryKeys_; }

QStringList MemoryChart::boundaryLabels() const {
    QStringList out;
    for (const QCPItemText* t : boundaryTexts_) out << t->text();
    return out;
}

QString MemoryChart::pointLabel(int point) const {
    if (!results_ || point >= results_->rowCount()) return tr("point %1").arg(point + 1);
    std::vector<Dimension> dims = varyingDimensions(results_->configs());
    const PointConfig& c = results_->entries()[static_cast<size_t>(point)].result.config;
    return dims.empty() ? tr("point %1").arg(point + 1)
                        : QStringLiteral("%1: %2").arg(point + 1).arg(labelOver(c, dims));
}

// A vertical line where each point's steps start, labelled with the point. Redrawn only
// when points come or go, not at every batch of steps.
void MemoryChart::drawBoundaries() {
    const int lastPoint = steps_ ? steps_->lastPoint() : -1;
    if (!boundariesDirty_ && lastPoint == boundariesUpTo_) return;
    boundariesDirty_ = false;
    boundariesUpTo_ = lastPoint;
    for (QCPItemText* t : boundaryTexts_) plot_->removeItem(t);
    boundaryTexts_.clear();
    for (int i = plot_->itemCount() - 1; i >= 0; --i)
        if (qobject_cast<QCPItemStraightLine*>(plot_->item(i))) plot_->removeItem(i);
    boundaryKeys_.clear();
    if (!steps_ || steps_->rowCount() == 0) return;
    QPen pen(style_.muted);
    pen.setStyle(Qt::DashLine);
    for (int row = 0; row < steps_->rowCount();) {
        const auto [first, count] = steps_->rowsOfPoint(steps_->pointOf(row));
        const double key = first - 0.5;
        boundaryKeys_ << key;
        auto* line = new QCPItemStraightLine(plot_);
        line->point1->setCoords(key, 0);
        line->point2->setCoords(key, 1);
        line->setPen(pen);
        auto* text = new QCPItemText(plot_);
        text->position->setTypeX(QCPItemPosition::ptPlotCoords);
        text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(key, 0.02);
        // Along the line, reading downwards, so that narrow points do not overlap labels.
        text->setRotation(90);
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        text->setPadding(QMargins(0, 0, 0, 6));
        text->setText(pointLabel(steps_->pointOf(row)));
        text->setColor(style_.muted);
        text->setFont(style_.labelFont);
        text->setClipToAxisRect(true);
        boundaryTexts_ << text;
        row = first + std::max(1, count);
    }
}

QString MemoryChart::hoverText(int row) const {
    if (!steps_ || row < 0 || row >= steps_->rowCount()) return {};
    const StepSample& s = steps_->sample(row);
    const int point = steps_->pointOf(row);
    if (!steps_->measuresMemory(point))
        return tr("step %1 of %2: no device memory (CPU)").arg(s.index).arg(pointLabel(point));
    return tr("step %1 of %2\nallocated %3 MiB\nreserved %4 MiB\npeak in step %5 MiB")
        .arg(s.index)
        .arg(pointLabel(point), formatMiB(s.memory_allocated), formatMiB(s.memory_reserved),
             formatMiB(s.memory_peak));
}

void MemoryChart::hoverAt(double key) {
    const int row = static_cast<int>(std::lround(key));
    const bool inside = steps_ && row >= 0 && row < steps_->rowCount();
    tracer_->setVisible(inside);
    if (inside) {
        tracer_->setGraph(allocated_);
        tracer_->setGraphKey(row);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool MemoryChart::crosshairVisible() const { return tracer_->visible(); }

int MemoryChart::plottedPoints() const { return allocated_->dataCount(); }

void MemoryChart::appendRows(int first, int last) {
    if (!steps_) return;
    const int n = last - first + 1;
    QVector<double> keys(n), alloc(n), res(n), peak(n);
    for (int i = 0; i < n; ++i) {
        const StepSample& s = steps_->sample(first + i);
        keys[i] = first + i;
        alloc[i] = static_cast<double>(s.memory_allocated) / kMiB;
        res[i] = static_cast<double>(s.memory_reserved) / kMiB;
        peak[i] = static_cast<double>(s.memory_peak) / kMiB;
        maxValue_ = std::max({maxValue_, alloc[i], res[i], peak[i]});
    }
    // Rows arrive in order: sorted appends are cheap even at a million points.
    allocated_->addData(keys, alloc, true);
    reserved_->addData(keys, res, true);
    peak_->addData(keys, peak, true);
    throttle_->request();
}

void MemoryChart::reload() {
    boundariesDirty_ = true;
    for (QCPGraph* g : {allocated_, reserved_, peak_}) g->data()->clear();
    maxValue_ = 0;
    followData_ = true;
    if (steps_ && steps_->rowCount() > 0) appendRows(0, steps_->rowCount() - 1);
    throttle_->request();
}

void MemoryChart::redraw() {
    const int n = allocated_->dataCount();
    // Antialiased wide lines over dense data cost seconds per replot; beyond a few thousand
    // points the lines are a band anyway, so they are drawn aliased.
    plot_->setAntialiasedElement(QCP::aePlottables, n <= 5000);
    note_->setVisible(n > 0 && maxValue_ <= 0);
    drawBoundaries();
    if (followData_) {
        plot_->xAxis->setRange(-0.5, std::max(1, n) - 0.5);
        plot_->yAxis->setRange(0, maxValue_ > 0 ? maxValue_ * 1.1 : 1);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryChart::restyle() {
    style_ = currentChartStyle();
    boundariesDirty_ = true;  // their colours
    throttle_->request();
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
        QFont lf = s.labelFont;
        lf.setBold(true);
        a->setLabelFont(lf);
        a->grid()->setPen(QPen(s.grid));
        a->grid()->setSubGridVisible(false);
    }
    const QList<QCPGraph*> graphs = {allocated_, reserved_, peak_};
    for (int i = 0; i < graphs.size(); ++i) {
        // Solid, opaque, whole-pixel pens: dashes, alpha and fractional widths on a dense
        // polyline each multiply the replot time.
        QColor c = s.seriesColor(i);
        if (graphs[i] == peak_) {
            const QColor bg = s.background;
            c = QColor((c.red() + bg.red()) / 2, (c.green() + bg.green()) / 2,
                       (c.blue() + bg.blue()) / 2);
        }
        QPen pen(c);
        pen.setWidth(graphs[i] == peak_ ? 1 : std::max(1, qRound(s.lineWidth)));
        graphs[i]->setPen(pen);
    }
    plot_->legend->setBrush(s.background);
    plot_->legend->setBorderPen(QPen(s.grid));
    plot_->legend->setTextColor(s.foreground);
    plot_->legend->setFont(s.legendFont);
    if (auto* title = qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0))) {
        title->setTextColor(s.foreground);
        title->setFont(s.titleFont);
    }
    note_->setColor(s.muted);
    tracer_->setPen(QPen(s.muted, 1, Qt::DashLine));
    note_->setFont(s.labelFont);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryChart::paintChart(QPainter& painter, const QRectF& target) {
    flushRedraw();
    tracer_->setVisible(false);  // the mouse's place is no part of an export
    // QCustomPlot paints through its own painter class: record into a picture (vector
    // commands, so SVG and PDF stay vector) and replay it into the export's painter.
    QPicture picture;
    {
        QCPPainter p(&picture);
        plot_->toPainter(&p, static_cast<int>(target.width()), static_cast<int>(target.height()));
    }
    painter.drawPicture(target.topLeft(), picture);
}

}  // namespace ts::ui
