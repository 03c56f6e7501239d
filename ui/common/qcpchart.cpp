#include "ui/common/qcpchart.h"

#include <QMenu>
#include <QPicture>
#include <QVBoxLayout>

#include "ui/common/qcp.h"

namespace ts::ui {

QcpChart::QcpChart(const QString& title, const QString& stem, QWidget* parent)
    : QWidget(parent), title_(title), stem_(stem) {
    plot_ = new QCustomPlot(this);
    plot_->setPlottingHint(QCP::phFastPolylines, true);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(0, 0, new QCPTextElement(plot_, title));
    plot_->legend->setVisible(true);
    plot_->setContextMenuPolicy(Qt::CustomContextMenu);
    note_ = new QCPItemText(plot_);
    note_->position->setType(QCPItemPosition::ptAxisRectRatio);
    note_->position->setCoords(0.5, 0.5);
    note_->setVisible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    auto fit = [this] {
        plot_->rescaleAxes();
        plot_->replot(QCustomPlot::rpQueuedReplot);
    };
    connect(plot_, &QWidget::customContextMenuRequested, this, [this, fit](const QPoint& pos) {
        QMenu menu(this);
        menu.addAction(tr("Export Chart…"), this, &QcpChart::exportRequested);
        menu.addAction(tr("Copy Chart Image"), this, &QcpChart::copyRequested);
        menu.addSeparator();
        menu.addAction(tr("Fit to Data"), this, fit);
        menu.exec(plot_->mapToGlobal(pos));
    });
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, fit);
    restyle();
}

void QcpChart::restyle() {
    style_ = currentChartStyle();
    plot_->setBackground(style_.background);
    plot_->axisRect()->setBackground(style_.plotBackground);
    for (QCPAxis* a : {plot_->xAxis, plot_->yAxis}) {
        a->setBasePen(QPen(style_.foreground));
        a->setTickPen(QPen(style_.foreground));
        a->setSubTickPen(QPen(style_.foreground));
        a->setTickLabelColor(style_.foreground);
        a->setLabelColor(style_.foreground);
        a->grid()->setPen(QPen(style_.grid));
    }
    plot_->legend->setBrush(style_.background);
    plot_->legend->setTextColor(style_.foreground);
    note_->setColor(style_.muted);
}

void QcpChart::showNote(const QString& text) {
    note_->setText(text);
    note_->setVisible(!text.isEmpty());
}

QString QcpChart::noteText() const { return note_->visible() ? note_->text() : QString(); }

void QcpChart::legendBelow(int wrap) {
    plot_->axisRect()->insetLayout()->take(plot_->legend);
    plot_->axisRect()->insetLayout()->simplify();
    plot_->plotLayout()->addElement(plot_->plotLayout()->rowCount(), 0, plot_->legend);
    plot_->plotLayout()->setRowStretchFactor(plot_->plotLayout()->rowCount() - 1, 0.001);
    plot_->legend->setFillOrder(QCPLegend::foColumnsFirst);
    if (wrap > 0) plot_->legend->setWrap(wrap);
}

int QcpChart::plottedPoints() const {
    int n = 0;
    for (int i = 0; i < plot_->graphCount(); ++i) n += plot_->graph(i)->data()->size();
    return n;
}

void QcpChart::paintChart(QPainter& painter, const QRectF& target) {
    // QCustomPlot paints through its own painter: record vector commands, replay them.
    QPicture picture;
    {
        QCPPainter p(&picture);
        plot_->toPainter(&p, static_cast<int>(target.width()), static_cast<int>(target.height()));
    }
    painter.drawPicture(target.topLeft(), picture);
}

}  // namespace ts::ui
