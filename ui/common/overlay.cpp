#include "ui/common/overlay.h"

#include <QDateTime>
#include <QLocale>
#include <QMap>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QXYSeries>
#include <algorithm>

#include "ui/common/chartinteraction.h"
#include "ui/common/decimate.h"
#include "ui/common/dimensions.h"
#include "ui/common/format.h"

namespace ts::ui {

QList<OverlayCoordinate> pointCoordinates(const PointConfig& c) {
    QList<OverlayCoordinate> at;
    for (Dimension d : allDimensions())
        at << OverlayCoordinate{dimensionName(d), dimensionValue(d, c), dimensionNumber(d, c),
                                isNumericDimension(d)};
    return at;
}

QString overlayRunName(const RunInfo& info) {
    QStringList parts{QObject::tr("run %1").arg(info.id)};
    if (!info.label.empty()) parts << qstr(info.label);
    if (QDateTime t = QDateTime::fromString(qstr(info.created), Qt::ISODate); t.isValid())
        parts << QLocale().toString(t.toLocalTime(), QStringLiteral("yyyy-MM-dd HH:mm"));
    return parts.join(QStringLiteral(" · "));
}

namespace {

constexpr int kMaxStepPoints = 2000;  // per series, as the step charts draw them (decimate.h)

QString idList(const std::vector<const OverlaidRun*>& runs) {
    QStringList ids;
    for (const OverlaidRun* r : runs) ids << QString::number(r->info.id);
    return ids.join(QStringLiteral(", "));
}

QString axisTitle(const QString& what, const QString& unit) {
    return unit.isEmpty() ? what : QStringLiteral("%1 (%2)").arg(what, unit);
}

// The coordinate of `p` named `name`, if it has one.
const OverlayCoordinate* coordinate(const OverlayPoint& p, const QString& name) {
    for (const OverlayCoordinate& c : p.at)
        if (c.name == name) return &c;
    return nullptr;
}

// Every point's coordinates by name, in order of first appearance, with the distinct texts each
// takes over `points` (missing where a point has none).
QMap<QString, QStringList> valuesByName(const std::vector<const OverlayPoint*>& points,
                                        QStringList* order) {
    QMap<QString, QStringList> values;
    for (const OverlayPoint* p : points)
        for (const OverlayCoordinate& c : p->at) {
            if (!order->contains(c.name)) *order << c.name;
            if (!values[c.name].contains(c.text)) values[c.name] << c.text;
        }
    return values;
}

}  // namespace

namespace {

// Point `p` by metric `metric` (0: its headline).
OverlayValue valueOf(const OverlayPoint& p, int metric) {
    if (metric == 0) return {p.value, p.spread, p.steps};
    return p.more.value(metric - 1);
}

}  // namespace

std::optional<OverlayPlot> combineOverlays(const std::vector<OverlaidRun>& runs, QString* error,
                                           int metric) {
    auto refuse = [&](const QString& why) -> std::optional<OverlayPlot> {
        if (error) *error = why;
        return std::nullopt;
    };
    if (runs.size() < 2) return refuse(QObject::tr("select two or more runs to overlay"));
    for (const OverlaidRun& r : runs)
        if (!r.overlay.unavailable.isEmpty())
            return refuse(QObject::tr("run %1: %2").arg(r.info.id).arg(r.overlay.unavailable));
    // Runs that measure different things share no axis (the distributed lab's all-reduce and
    // DDP): both named.
    QMap<QString, std::vector<const OverlaidRun*>> byMetric;
    QStringList metrics;
    for (const OverlaidRun& r : runs) {
        const QString m = axisTitle(r.overlay.metric, r.overlay.unit);
        if (!metrics.contains(m)) metrics << m;
        byMetric[m].push_back(&r);
    }
    if (metrics.size() > 1) {
        QStringList parts;
        for (const QString& m : metrics)
            parts << QObject::tr("%1 (runs %2)").arg(m, idList(byMetric[m]));
        return refuse(QObject::tr("the runs measure different things: %1; overlay runs of one")
                          .arg(parts.join(QStringLiteral(" and "))));
    }

    OverlayPlot plot;
    const RunOverlay& first = runs.front().overlay;
    plot.unit = first.unit;
    // The further metrics where every run has the same ones.
    plot.metrics << first.metric;
    if (std::all_of(runs.begin(), runs.end(),
                    [&](const OverlaidRun& r) { return r.overlay.more == first.more; }))
        plot.metrics << first.more;
    plot.metric = metric >= 0 && metric < plot.metrics.size() ? metric : 0;
    const QString metricName = plot.metrics[plot.metric];
    const QString stepMetric = plot.metric == 0 ? first.stepMetric : metricName;
    // Each run's points by the metric drawn.
    std::vector<std::vector<OverlayPoint>> drawn;
    for (const OverlaidRun& r : runs) {
        plot.runIds << r.info.id;
        plot.runNames << overlayRunName(r.info);
        auto& own = drawn.emplace_back();
        for (const OverlayPoint& p : r.overlay.points) {
            const OverlayValue v = valueOf(p, plot.metric);
            own.push_back(OverlayPoint{p.at, v.value, v.spread, v.steps, {}});
        }
    }
    std::vector<const OverlayPoint*> measured;
    for (const auto& own : drawn)
        for (const OverlayPoint& p : own) p.value ? measured.push_back(&p) : void(++plot.missing);
    if (measured.empty()) {
        std::vector<const OverlaidRun*> all;
        for (const OverlaidRun& r : runs) all.push_back(&r);
        return refuse(QObject::tr("none of runs %1 has a measured point to draw (each point "
                                  "failed, ran out of memory or was not measured)")
                          .arg(idList(all)));
    }

    // One point a run, each with its steps: the steps against the step index.
    const bool steps =
        !stepMetric.isEmpty() && std::all_of(drawn.begin(), drawn.end(), [](const auto& own) {
            return own.size() == 1 && own[0].value && !own[0].steps.isEmpty();
        });
    if (steps) {
        plot.steps = true;
        plot.title = QObject::tr("%1 per step, %2 runs overlaid").arg(stepMetric).arg(runs.size());
        plot.xTitle = QObject::tr("step");
        plot.yTitle = axisTitle(stepMetric, first.unit);
        for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
            plot.series << plot.runNames[i];
            for (const QPointF& s :
                 decimateMinMax(drawn[static_cast<size_t>(i)][0].steps, kMaxStepPoints))
                plot.rows.push_back(
                    {plot.runNames[i], s.x(), {}, s.y(), 0, static_cast<int>(plot.rows.size())});
        }
        return plot;
    }

    // The x: the first coordinate (in the lab's order) whose value differs between the points.
    QStringList names;
    const QMap<QString, QStringList> values = valuesByName(measured, &names);
    QString x;
    for (const QString& n : names)
        if (values[n].size() > 1) {
            x = n;
            break;
        }
    const bool categorical =
        x.isEmpty() || !std::all_of(measured.begin(), measured.end(), [&](const OverlayPoint* p) {
            const OverlayCoordinate* c = coordinate(*p, x);
            return c && c->numeric;
        });
    if (categorical) {
        // Every run at one point: that point is the one category.
        if (x.isEmpty()) {
            QStringList texts;
            for (const OverlayCoordinate& c : measured.front()->at) texts << c.text;
            plot.categories << (texts.isEmpty() ? QObject::tr("the point")
                                                : texts.join(QStringLiteral(" · ")));
        } else {
            plot.categories = values[x];
        }
    }
    // A numeric x that reads as names (model sizes by their parameters) names its points.
    plot.labelPoints =
        !categorical && std::any_of(measured.begin(), measured.end(), [&](const OverlayPoint* p) {
            const OverlayCoordinate* c = coordinate(*p, x);
            return c && c->text != tickLabel(c->number);
        });
    plot.xTitle = x.isEmpty() ? QObject::tr("point") : x;
    plot.yTitle = axisTitle(metricName, first.unit);
    plot.title = QObject::tr("%1 against %2, %3 runs overlaid")
                     .arg(metricName, plot.xTitle)
                     .arg(runs.size());

    for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
        // A run that varies along more than the x is split into a series per the rest.
        std::vector<const OverlayPoint*> own;
        for (const OverlayPoint& p : drawn[static_cast<size_t>(i)])
            if (p.value) own.push_back(&p);
        QStringList ownNames;
        const QMap<QString, QStringList> ownValues = valuesByName(own, &ownNames);
        QStringList split;
        for (const QString& n : ownNames)
            if (n != x && ownValues[n].size() > 1) split << n;
        for (const OverlayPoint* p : own) {
            // What tells the run's series apart comes first (a legend cuts long names short),
            // a number with its dimension's name ("bucket_mb 10", not a bare "10").
            QStringList rest;
            for (const QString& n : split)
                if (const OverlayCoordinate* c = coordinate(*p, n))
                    rest << (c->numeric ? QStringLiteral("%1 %2").arg(n, c->text) : c->text);
            QStringList name{QObject::tr("run %1").arg(runs[static_cast<size_t>(i)].info.id)};
            name << rest;
            if (const std::string& label = runs[static_cast<size_t>(i)].info.label; !label.empty())
                name << qstr(label);
            const QString series =
                rest.isEmpty() ? plot.runNames[i] : name.join(QStringLiteral(" · "));
            const OverlayCoordinate* c = x.isEmpty() ? nullptr : coordinate(*p, x);
            if (!c && !x.isEmpty()) continue;  // no such x (an imported profile among others)
            const double at = !c            ? 0
                              : categorical ? static_cast<double>(plot.categories.indexOf(c->text))
                                            : c->number;
            if (!plot.series.contains(series)) plot.series << series;
            plot.rows.push_back({series, at, c ? c->text : plot.categories.value(0), *p->value,
                                 p->spread, static_cast<int>(plot.rows.size())});
        }
    }
    return plot;
}

void OverlayModel::setPlot(OverlayPlot plot) {
    beginResetModel();
    plot_ = std::move(plot);
    rows_ = plot_.rows;
    series_ = plot_.series;
    missing_ = plot_.missing;
    sortRows();
    endResetModel();
}

OverlayChart::OverlayChart(OverlayModel* model, QWidget* parent)
    : SweepChart(model, parent, QStringLiteral("overlay")), overlay_(model) {
    setObjectName(QStringLiteral("overlayChart"));
    interaction()->setValueText([this](const QPointF& v) {
        const QStringList cats = overlay_->xCategories();
        const int i = static_cast<int>(std::lround(v.x()));
        const QString x = xIsCategorical() ? (i >= 0 && i < cats.size() ? cats[i] : QString())
                                           : ChartInteraction::formatValue(fromAxisX(v.x()));
        const QString unit = overlay_->plot().unit;
        return tr("%1: %2\ny: %3%4")
            .arg(overlay_->xTitle(), x, ChartInteraction::formatValue(fromAxisY(v.y())),
                 unit.isEmpty() ? QString() : QLatin1Char(' ') + unit);
    });
    // A point's own values, not where it is drawn (points that share an x are nudged apart).
    interaction()->setHitText([this](const ChartInteraction::Hit& hit) -> QString {
        const int source = sourceAt(hit.position);
        const OverlayPlot& plot = overlay_->plot();
        if (source < 0 || source >= static_cast<int>(plot.rows.size())) return {};
        const SeriesModel::Row& r = plot.rows[static_cast<size_t>(source)];
        const QString unit = plot.unit.isEmpty() ? QString() : QLatin1Char(' ') + plot.unit;
        QString value = ChartInteraction::formatValue(r.mean);
        if (r.std > 0) value += tr(" ± %1").arg(ChartInteraction::formatValue(r.std));
        value += unit;
        return QStringLiteral("%1\n%2: %3\n%4")
            .arg(r.series, plot.xTitle,
                 r.xLabel.isEmpty() ? ChartInteraction::formatValue(r.x) : r.xLabel, value);
    });
}

QString OverlayChart::chartFileStem() const {
    QStringList ids;
    for (qint64 id : overlay_->plot().runIds) ids << QString::number(id);
    return ids.isEmpty() ? QStringLiteral("overlay")
                         : QStringLiteral("overlay-runs-") + ids.join(QLatin1Char('-'));
}

// The theme's series colours without its greys (a run drawn grey reads as "disabled"), then
// a few more of the same lightness, so that at least ten runs differ.
QColor OverlayChart::seriesColor(int i) const {
    QList<QColor> colours;
    for (const QColor& c : style().series)
        if (c.hsvSaturation() > 60) colours << c;
    if (style().dark)
        colours << QColor(0xc5, 0xe1, 0xa5) << QColor(0x90, 0xa4, 0xff);
    else
        colours << QColor(0x88, 0x22, 0x55) << QColor(0x11, 0x77, 0x33) << QColor(0x44, 0x33, 0xaa);
    return colours[i % colours.size()];
}

void OverlayChart::redraw() {
    SweepChart::redraw();
    const auto series = chart()->series();
    int points = 0;
    for (QAbstractSeries* s : series)
        if (auto* xy = qobject_cast<QXYSeries*>(s)) points = std::max(points, int(xy->count()));
    for (QAbstractSeries* s : series) {
        if (auto* xy = qobject_cast<QXYSeries*>(s)) xy->setPointsVisible(points <= 200);
        for (QLegendMarker* m : chart()->legend()->markers(s)) {
            disconnect(m, &QLegendMarker::clicked, this, nullptr);
            connect(m, &QLegendMarker::clicked, this,
                    [this, s] { toggleSeries(static_cast<int>(chart()->series().indexOf(s))); });
        }
    }
}

bool OverlayChart::seriesVisible(int i) const {
    const auto series = chart()->series();
    return i >= 0 && i < series.size() && series[i]->isVisible();
}

void OverlayChart::toggleSeries(int i) {
    const auto series = chart()->series();
    if (i < 0 || i >= series.size()) return;
    QAbstractSeries* s = series[i];
    s->setVisible(!s->isVisible());
    // Qt hides a hidden series' legend entry too: it stays, pale, to be clicked again.
    for (QLegendMarker* m : chart()->legend()->markers(s)) {
        m->setVisible(true);
        QColor label = style().foreground;
        label.setAlphaF(s->isVisible() ? 1.0 : 0.35);
        m->setLabelBrush(label);
        QBrush brush = m->brush();
        QColor c = seriesColor(i);
        c.setAlphaF(s->isVisible() ? 1.0 : 0.25);
        brush.setColor(c);
        m->setBrush(brush);
    }
    requestRedraw();  // the error bars of a hidden series go with it
    flushRedraw();
}

}  // namespace ts::ui
