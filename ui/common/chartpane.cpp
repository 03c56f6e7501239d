#include "ui/common/chartpane.h"

#include <QMenu>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>

#include "ui/common/chartinteraction.h"
#include "ui/common/theme.h"

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
    interaction_ = new ChartInteraction(view_, [this] {
        requestRedraw();
        flushRedraw();
    });
    // A redraw sets the ranges from the data; a zoomed view keeps the user's ranges.
    throttle_ = new RedrawThrottle(
        [this] {
            redraw();
            interaction_->restoreZoom();
        },
        this);
    throttle_->deferWhileHidden(this);  // see Note [hidden charts wait]
    connect(view_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(this);
        menu.addAction(tr("Export Chart…"), this, &ChartPane::exportRequested);
        menu.addAction(tr("Copy Chart Image"), this, &ChartPane::copyRequested);
        menu.addSeparator();
        QAction* reset =
            menu.addAction(tr("Reset Zoom"), interaction_, &ChartInteraction::resetZoom);
        reset->setEnabled(interaction_->isZoomed());
        // What the chart's owner added (addAction): "Profile This Point" of the sweep.
        menuPos_ = chart_->mapFromScene(view_->mapToScene(pos));
        if (!actions().isEmpty()) menu.addSeparator();
        for (QAction* a : actions()) menu.addAction(a);
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
    interaction_->hideCrosshair();  // the mouse's place is no part of an export
    paintChartInto(chart_, painter, target);
}

}  // namespace ts::ui
