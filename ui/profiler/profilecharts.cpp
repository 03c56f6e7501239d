#include "ui/profiler/profilecharts.h"

#include <QGraphicsSimpleTextItem>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>

#include "ui/common/format.h"

namespace ts::ui {

// ---------------------------------------------------------------- categories

CategoryChart::CategoryChart(QWidget* parent) : ChartPane(parent) {
    series_ = new QStackedBarSeries;
    // The shares are written on the bars by placeLabels(), not by the series: its labels go on
    // every segment, and a 0.4% one lands on top of its neighbours' text.
    chart()->addSeries(series_);
    x_ = new QBarCategoryAxis;
    x_->setTitleText(tr("phase"));
    y_ = new QValueAxis;
    y_->setRange(0, 100);
    y_->setLabelFormat(QStringLiteral("%.0f"));
    y_->setTitleText(tr("%"));  // a short chart elides even "share (%)" to "shar…"
    connect(chart(), &QChart::plotAreaChanged, this, [this] { placeLabels(); });
    chart()->addAxis(x_, Qt::AlignBottom);
    chart()->addAxis(y_, Qt::AlignLeft);
    series_->attachAxis(x_);
    series_->attachAxis(y_);
    restyle();
    redraw();
}

void CategoryChart::setRows(const std::vector<CategoryRow>& rows, bool gpu) {
    rows_ = rows;
    gpu_ = gpu;
    requestRedraw();
}

QStringList CategoryChart::phases() const { return x_->categories(); }

QStringList CategoryChart::categoryNames() const {
    QStringList out;
    for (QBarSet* s : series_->barSets()) out << s->label();
    return out;
}

QList<double> CategoryChart::shares(Category c) const {
    QList<double> out;
    for (QBarSet* s : series_->barSets())
        if (s->label() == qstr(toString(c)))
            for (int i = 0; i < s->count(); ++i) out << s->at(i);
    return out;
}

void CategoryChart::restyle() {
    applyChartStyle(chart(), style());
    const auto sets = series_->barSets();
    for (int i = 0; i < sets.size(); ++i) {
        sets[i]->setColor(style().seriesColor(sets[i]->property("category").toInt()));
        sets[i]->setBorderColor(style().background);
    }
    placeLabels();
}

// Each segment's share in its middle, where the segment is taller than the text (the table
// and the hover have the rest), in black or white, whichever reads on the segment's fill.
void CategoryChart::placeLabels() {
    qDeleteAll(labels_);
    labels_.clear();
    const auto sets = series_->barSets();
    for (int p = 0; p < x_->count(); ++p) {
        double base = 0;
        for (QBarSet* set : sets) {
            const double v = p < set->count() ? set->at(p) : 0;
            if (v > 0) {
                const QString text = QStringLiteral("%1 %").arg(v, 0, 'f',
                                                                v >= 99.95 ? 0
                                                                : v >= 10  ? 1
                                                                           : 2);
                auto* label = new QGraphicsSimpleTextItem(text, chart());
                label->setBrush(set->color().lightnessF() > 0.6 ? QColor(0x20, 0x20, 0x20)
                                                                : QColor(Qt::white));
                label->setZValue(100);
                const QRectF box = label->boundingRect();
                const QPointF bottom = chart()->mapToPosition(QPointF(p, base), series_),
                              top = chart()->mapToPosition(QPointF(p, base + v), series_);
                if (bottom.y() - top.y() < box.height() + 2) {
                    delete label;
                } else {
                    label->setPos((bottom + top) / 2 - QPointF(box.width() / 2, box.height() / 2));
                    labels_ << label;
                }
            }
            base += v;
        }
    }
}

QStringList CategoryChart::segmentLabels() const {
    QStringList out;
    for (const QGraphicsSimpleTextItem* l : labels_) out << l->text();
    return out;
}

void CategoryChart::redraw() {
    // Phases that have time, in step order; a category with no time anywhere has no set.
    QList<Phase> phases;
    for (Phase p : allPhases())
        if (std::any_of(rows_.begin(), rows_.end(),
                        [&](const CategoryRow& r) { return r.phase == p && r.time_us > 0; }))
            phases << p;
    series_->clear();
    QStringList names;
    for (Phase p : phases) names << qstr(toString(p));
    double gemmForward = -1;
    for (Category c : allCategories()) {
        QList<qreal> values;
        bool any = false;
        for (Phase p : phases) {
            double share = 0;
            for (const auto& r : rows_)
                if (r.phase == p && r.category == c) share = r.share * 100;
            values << share;
            any |= share > 0;
            if (c == Category::Gemm && p == Phase::Forward) gemmForward = share;
        }
        if (!any) continue;
        auto* set = new QBarSet(qstr(toString(c)));
        set->setProperty("category", static_cast<int>(c));
        set->append(values);
        series_->append(set);
    }
    x_->setCategories(names);
    y_->setRange(0, 100);
    restyle();
    const QString what = gpu_ ? tr("kernel time") : tr("ops' self CPU time");
    chart()->setTitle(
        names.isEmpty() ? tr("Categories — a profile's roll-up appears here")
        : gemmForward >= 0
            ? tr("Share of each phase's %1 by category; matmuls (GEMM) take %2% of forward")
                  .arg(what)
                  .arg(gemmForward, 0, 'f', 0)
            : tr("Share of each phase's %1 by category").arg(what));
}

// ---------------------------------------------------------------- attention parts

AttentionPartsChart::AttentionPartsChart(QWidget* parent) : ChartPane(parent) {
    series_ = new QBarSeries;
    series_->setLabelsVisible(true);
    // Whole microseconds above 100 (12597, not "1.26e+04" beside an axis that reads 12597).
    series_->setLabelsPrecision(7);
    chart()->addSeries(series_);
    x_ = new QBarCategoryAxis;
    x_->setTitleText(tr("part of attention"));
    y_ = new QValueAxis;
    y_->setLabelFormat(QStringLiteral("%.5g"));
    chart()->addAxis(x_, Qt::AlignBottom);
    chart()->addAxis(y_, Qt::AlignLeft);
    series_->attachAxis(x_);
    series_->attachAxis(y_);
    restyle();
    redraw();
}

void AttentionPartsChart::setParts(const std::vector<AttentionPart>& parts, bool gpu) {
    parts_ = parts;
    gpu_ = gpu;
    requestRedraw();
}

QStringList AttentionPartsChart::partNames() const { return x_->categories(); }

void AttentionPartsChart::restyle() {
    applyChartStyle(chart(), style());
    const auto sets = series_->barSets();
    for (int i = 0; i < sets.size(); ++i) {
        sets[i]->setColor(style().seriesColor(i));
        sets[i]->setBorderColor(style().background);
        sets[i]->setLabelColor(style().foreground);
    }
}

void AttentionPartsChart::redraw() {
    QStringList parts;
    for (const auto& p : parts_)
        if (!parts.contains(qstr(p.part))) parts << qstr(p.part);
    series_->clear();
    double top = 0;
    for (Phase ph : {Phase::Forward, Phase::Backward}) {
        QList<qreal> values;
        bool any = false;
        for (const QString& name : parts) {
            double v = 0;
            for (const auto& p : parts_)
                if (p.phase == ph && qstr(p.part) == name) v += p.time_us;
            values << (v >= 100 ? std::round(v) : std::round(v * 10) / 10);
            any |= v > 0;
            top = std::max(top, v);
        }
        if (!any) continue;
        auto* set = new QBarSet(qstr(toString(ph)));
        set->append(values);
        series_->append(set);
    }
    x_->setCategories(parts);
    y_->setRange(0, top > 0 ? top * 1.15 : 1);
    y_->applyNiceNumbers();
    y_->setTitleText(gpu_ ? tr("kernel time per step (µs)")
                          : tr("ops' self CPU time per step (µs)"));
    restyle();
    chart()->setTitle(parts.isEmpty() ? tr("Attention — the breakdown of a profile appears here")
                                      : tr("Attention per step, summed over layers: scores, "
                                           "softmax and values, or one fused kernel"));
}

}  // namespace ts::ui
