#include "benchmark/memorychart.h"

#include <QMenu>
#include <QPicture>
#include <QVBoxLayout>

#include "common/qcp.h"
#include "benchmark/stepmodel.h"
#include "common/theme.h"

namespace ts::ui {

static constexpr double kMiB = 1024.0 * 1024.0;

MemoryChart::MemoryChart(StepModel* steps, QWidget* parent) : QWidget(parent), steps_(steps) {
    plot_ = new QCustomPlot(this);
    plot_->setNoAntialiasingOnDrag(true);
    // Wide pens on dense data: one polyline per graph instead of one line per segment.
    plot_->setPlottingHint(QCP::phFastPolylines, true);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
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
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    note_ = new QCPItemText(plot_);
    note_->position->setType(QCPItemPosition::ptAxisRectRatio);
    note_->position->setCoords(0.5, 0.5);
    note_->setText(tr("No device memory in this run: memory is measured on CUDA devices; CPU runs record none."));
    note_->setVisible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    throttle_ = new RedrawThrottle([this] { redraw(); }, this);

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
    // Once the user drags or zooms, new data no longer moves the view.
    connect(plot_, &QCustomPlot::mousePress, this, [this] { followData_ = false; });
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
    if (followData_) {
        plot_->xAxis->setRange(-0.5, std::max(1, n) - 0.5);
        plot_->yAxis->setRange(0, maxValue_ > 0 ? maxValue_ * 1.1 : 1);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryChart::restyle() {
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
            c = QColor((c.red() + bg.red()) / 2, (c.green() + bg.green()) / 2, (c.blue() + bg.blue()) / 2);
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
    note_->setFont(s.labelFont);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryChart::paintChart(QPainter& painter, const QRectF& target) {
    flushRedraw();
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
