#include "ui/common/qcpchart.h"

#include <QMenu>
#include <QPicture>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/common/qcp.h"
#include "ui/common/theme.h"

namespace ts::ui {

QcpChart::QcpChart(const QString& title, const QString& stem, QWidget* parent)
    : QWidget(parent), title_(title), stem_(stem) {
    plot_ = new QCustomPlot(this);
    // QCustomPlot asks for the width of its legend in one row and the height of every row: a
    // window with a lanes chart did not fit 1280 px. A chart fits any pane. (Re-wrapping the
    // legend to the width on each resize made a window's grab() show the plot as first drawn.)
    plot_->setMinimumSize(160, 120);
    plot_->setPlottingHint(QCP::phFastPolylines, true);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
    plot_->plotLayout()->insertRow(0);
    titleElement_ = new QCPTextElement(plot_, title);
    plot_->plotLayout()->addElement(0, 0, titleElement_);
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
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const QString text = hoverText(e->position());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), text, plot_);
    });
    restyle();
    connect(&Theme::instance(), &Theme::changed, this, &QcpChart::applyTheme);
}

void QcpChart::restyle() {
    style_ = currentChartStyle();
    plot_->setBackground(style_.background);
    plot_->axisRect()->setBackground(style_.plotBackground);
    titleElement_->setTextColor(style_.foreground);
    titleElement_->setFont(style_.titleFont);
    for (QCPAxis* a : plot_->axisRect()->axes()) {
        a->setBasePen(QPen(style_.foreground));
        a->setTickPen(QPen(style_.foreground));
        a->setSubTickPen(QPen(style_.foreground));
        a->setTickLabelColor(style_.foreground);
        a->setLabelColor(style_.foreground);
        a->setTickLabelFont(style_.labelFont);
        a->setLabelFont(style_.labelFont);
        a->grid()->setPen(QPen(style_.grid));
    }
    plot_->legend->setBrush(style_.background);
    plot_->legend->setTextColor(style_.foreground);
    plot_->legend->setFont(style_.legendFont);
    plot_->legend->setBorderPen(QPen(style_.grid));
    note_->setColor(style_.muted);
    note_->setFont(style_.labelFont);
}

// Note [a chart's colours follow the theme]: a chart draws its bars, lanes and labels in the
// theme's colours of the moment (style_), and does not keep what it drew from. When the theme
// changes, the colours it used are mapped to the new theme's: each of the old style's colours
// (background, foreground, grid, muted, warm-up, the series) to its counterpart, keeping the
// alpha it was drawn with; text items' fonts scale with the new label font (presentation mode).
void QcpChart::applyTheme() {
    const ChartStyle old = style_;
    restyle();
    recolour(old, style_);
    plot_->replot();
}

void QcpChart::recolour(const ChartStyle& from, const ChartStyle& to) {
    QList<std::pair<QColor, QColor>> pairs = {
        {from.background, to.background}, {from.plotBackground, to.plotBackground},
        {from.foreground, to.foreground}, {from.grid, to.grid},
        {from.muted, to.muted},           {from.warmup, to.warmup}};
    for (int i = 0; i < from.series.size() && i < to.series.size(); ++i)
        pairs.append({from.series[i], to.series[i]});
    auto colour = [&](const QColor& c) {
        for (const auto& [a, b] : pairs)
            if (a.rgb() == c.rgb()) {
                QColor n = b;
                n.setAlpha(c.alpha());
                return n;
            }
        return c;
    };
    auto pen = [&](QPen p) {
        p.setColor(colour(p.color()));
        return p;
    };
    auto brush = [&](QBrush b) {
        if (b.style() != Qt::NoBrush) b.setColor(colour(b.color()));
        return b;
    };
    const qreal scale = from.labelFont.pointSizeF() > 0 && to.labelFont.pointSizeF() > 0
                            ? to.labelFont.pointSizeF() / from.labelFont.pointSizeF()
                            : 1.0;
    for (int i = 0; i < plot_->plottableCount(); ++i) {
        QCPAbstractPlottable* p = plot_->plottable(i);
        p->setPen(pen(p->pen()));
        p->setBrush(brush(p->brush()));
        if (auto* g = qobject_cast<QCPGraph*>(p)) {
            QCPScatterStyle sc = g->scatterStyle();
            sc.setPen(pen(sc.pen()));
            sc.setBrush(brush(sc.brush()));
            g->setScatterStyle(sc);
        }
    }
    for (int i = 0; i < plot_->itemCount(); ++i) {
        QCPAbstractItem* item = plot_->item(i);
        if (item == note_) continue;
        if (auto* r = qobject_cast<QCPItemRect*>(item)) {
            r->setPen(pen(r->pen()));
            r->setBrush(brush(r->brush()));
        } else if (auto* t = qobject_cast<QCPItemText*>(item)) {
            t->setColor(colour(t->color()));
            t->setPen(pen(t->pen()));
            t->setBrush(brush(t->brush()));
            if (scale != 1.0 && t->font().pointSizeF() > 0) {
                QFont f = t->font();
                f.setPointSizeF(f.pointSizeF() * scale);
                t->setFont(f);
            }
        } else if (auto* l = qobject_cast<QCPItemLine*>(item)) {
            l->setPen(pen(l->pen()));
        } else if (auto* sl = qobject_cast<QCPItemStraightLine*>(item)) {
            sl->setPen(pen(sl->pen()));
        }
    }
}

void QcpChart::showNote(const QString& text) {
    note_->setText(text);
    note_->setVisible(!text.isEmpty());
}

QString QcpChart::noteText() const { return note_->visible() ? note_->text() : QString(); }

void QcpChart::legendBelow(int wrap) {
    plot_->axisRect()->insetLayout()->take(plot_->legend);
    plot_->axisRect()->insetLayout()->simplify();
    if (wrap > 0) plot_->legend->setWrap(wrap);
    plot_->legend->setFillOrder(QCPLegend::foColumnsFirst, true);  // re-arranges the entries
    // An empty legend in the plot's layout caps the plot's column at the legend's few pixels
    // (a layout column is as narrow as its narrowest element's maximum, and an empty grid's is
    // its margins): the legend is in the layout, below the plot, only while it has entries.
    auto place = [this] {
        QCPLayoutGrid* layout = plot_->plotLayout();
        const bool placed = layout->hasElement(layout->rowCount() - 1, 0) &&
                            layout->element(layout->rowCount() - 1, 0) == plot_->legend;
        const bool wanted = plot_->legend->itemCount() > 0;
        if (wanted && !placed) {
            layout->addElement(layout->rowCount(), 0, plot_->legend);
            layout->setRowStretchFactor(layout->rowCount() - 1, 0.001);
        } else if (!wanted && placed) {
            layout->take(plot_->legend);
            layout->simplify();
        }
    };
    place();
    connect(plot_, &QCustomPlot::beforeReplot, this, place);
}

QString QcpChart::hoverText(const QPointF& pos) const {
    // The nearest mark within QCustomPlot's selection tolerance: each plottable's own hit test
    // (a graph's nearest point, the bar under the pointer) with the data index it found.
    double best = plot_->selectionTolerance();
    QString text;
    auto number = [](double v) { return QString::number(v, 'g', 5); };
    for (int i = 0; i < plot_->plottableCount(); ++i) {
        QCPAbstractPlottable* p = plot_->plottable(i);
        if (!p->visible() || p->name().isEmpty()) continue;
        QVariant details;
        const double d = p->selectTest(pos, false, &details);
        if (d < 0 || d >= best) continue;
        const QCPDataSelection sel = details.value<QCPDataSelection>();
        if (sel.isEmpty()) continue;
        const int k = sel.dataRange(0).begin();
        if (auto* g = qobject_cast<QCPGraph*>(p); g && k < g->data()->size()) {
            const auto it = g->data()->at(k);
            text = QStringLiteral("%1\n%2: %3\n%4: %5")
                       .arg(p->name(), g->keyAxis()->label(), number(it->key),
                            g->valueAxis()->label(), number(it->value));
        } else if (auto* b = qobject_cast<QCPBars*>(p); b && k < b->data()->size()) {
            const auto it = b->data()->at(k);
            QString key = number(it->key);
            if (auto ticker = b->keyAxis()->ticker().dynamicCast<QCPAxisTickerText>())
                key = ticker->ticks().value(it->key, key);
            text = QStringLiteral("%1 · %2\n%3: %4")
                       .arg(p->name(), key, b->valueAxis()->label(), number(it->value));
        } else {
            continue;
        }
        best = d;
    }
    return text;
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
