#include "common/chartpane.h"

#include <QMenu>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>

#include "common/theme.h"

namespace ts::ui {

ChartPane::ChartPane(QWidget* parent) : QWidget(parent) {
    chart_ = new QChart;
    chart_->setMargins(QMargins(6, 6, 6, 6));
    chart_->legend()->setAlignment(Qt::AlignBottom);
    view_ = new QChartView(chart_, this);
    view_->setRenderHint(QPainter::Antialiasing);
    // Qt Charts leaves fragments of markers that moved or vanished (a new point's fewer
    // steps) until something else repaints them: repaint the whole chart on every change.
    view_->setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
    view_->setContextMenuPolicy(Qt::CustomContextMenu);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_);
    throttle_ = new RedrawThrottle([this] { redraw(); }, this);
    connect(view_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(this);
        menu.addAction(tr("Export Chart…"), this, &ChartPane::exportRequested);
        menu.addAction(tr("Copy Chart Image"), this, &ChartPane::copyRequested);
        menu.exec(view_->mapToGlobal(pos));
    });
    connect(&Theme::instance(), &Theme::changed, this, &ChartPane::applyTheme);
    style_ = currentChartStyle();
    applyChartStyle(chart_, style_);
}

void ChartPane::applyTheme() {
    style_ = currentChartStyle();
    applyChartStyle(chart_, style_);
    restyle();
}

void ChartPane::paintChart(QPainter& painter, const QRectF& target) {
    flushRedraw();
    paintChartInto(chart_, painter, target);
}

}  // namespace ts::ui
