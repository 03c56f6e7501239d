#include "ui/distributed/bucketmodelchart.h"

#include <algorithm>

#include "ui/common/format.h"
#include "ui/common/qcp.h"

namespace ts::ui {

namespace {
QString emptyNote() {
    return QObject::tr(
        "Run bucketed DDP at several bucket sizes (1, 10, 100, 1000 MiB): the model's predicted "
        "wait after backward appears here beside each point's own");
}
}  // namespace

BucketModelChart::BucketModelChart(QWidget* parent)
    : QcpChart(tr("Wait after backward against bucket size"),
               QStringLiteral("distributed-bucket-model"), parent) {
    plot_->xAxis->setLabel(tr("bucket size (MiB)"));
    plot_->yAxis->setLabel(tr("wait after backward (ms)"));
    plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    legendBelow(3);
    showNote(emptyNote());
}

void BucketModelChart::setModels(const std::vector<BucketModel>& models) {
    restyle();
    plot_->clearGraphs();
    curves_ = 0;
    measured_ = 0;
    QStringList lines;
    int colour = 0;
    for (const BucketModel& m : models) {
        const QColor c = style_.seriesColor(colour++);
        const QString name = qstr(m.label);
        if (m.problem.empty()) {
            QVector<double> x, y;
            for (const auto& [mib, ms] : m.curve) {
                x << mib;
                y << ms;
            }
            auto* curve = plot_->addGraph();
            curve->setName(tr("%1: predicted").arg(name));
            curve->setPen(QPen(c, style_.lineWidth));
            curve->setData(x, y, true);
            ++curves_;
            auto* best = plot_->addGraph();
            best->setName(tr("%1: best size").arg(name));
            best->setLineStyle(QCPGraph::lsNone);
            best->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, c, c, 11));
            best->setData({m.optimal_mb}, {m.optimal_ms}, true);
            lines << tr("%1: t(n) = %2 ms + n / %3 GB/s, fitted to %4 of %5%10 (rms residual %6 "
                        "ms); least wait %7 ms at %8 MiB (the course's sqrt(s·α·β): %9 MiB).")
                         .arg(name)
                         .arg(m.fit.alpha_ms, 0, 'f', 3)
                         .arg(m.fit.betaGbps(), 0, 'f', 3)
                         .arg(m.fit.points)
                         .arg(qstr(m.fit_source))
                         .arg(m.fit.rms_residual_ms, 0, 'f', 3)
                         .arg(m.optimal_ms, 0, 'f', 3)
                         .arg(m.optimal_mb, 0, 'g', 3)
                         .arg(m.course_optimal_mb, 0, 'g', 3)
                         .arg(m.fit.through_origin ? tr(" through the origin") : QString());
        } else {
            lines << tr("%1: no prediction: %2.").arg(name, qstr(m.problem));
        }
        QVector<double> x, y;
        for (const auto& p : m.measured)
            if (p.measured_ms >= 0) {
                x << p.bucket_mb;
                y << p.measured_ms;
            }
        if (!x.isEmpty()) {
            auto* points = plot_->addGraph();
            points->setName(tr("%1: measured").arg(name));
            points->setLineStyle(QCPGraph::lsNone);
            points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 8));
            points->setData(x, y, true);
            measured_ += static_cast<int>(x.size());
        }
    }
    if (!models.empty())
        lines.prepend(
            tr("The line is the model's wait after backward for each bucket size (see docs/"
               "DISTRIBUTED.md, the bucket-size model: buckets launched in order as their last "
               "gradient is ready, from the measured backward; all-reduces one at a time at the "
               "fitted latency and bandwidth); the dots are what each bucketed point waited."));
    explanation_ = lines.join(QLatin1Char(' '));
    showNote(models.empty() ? emptyNote() : QString());
    if (plot_->graphCount() > 0) {
        plot_->rescaleAxes();
        plot_->xAxis->scaleRange(1.3);
        plot_->yAxis->setRangeLower(0);
        plot_->yAxis->setRangeUpper(std::max(1e-3, plot_->yAxis->range().upper * 1.15));
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace ts::ui
