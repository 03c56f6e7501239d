#include "ui/common/decimate.h"

#include <algorithm>

namespace ts::ui {

QList<QPointF> decimateMinMax(const QList<QPointF>& points, int maxPoints) {
    if (points.size() <= maxPoints || maxPoints < 4) return points;
    QList<QPointF> out;
    const qsizetype buckets = maxPoints / 2;
    const double per = static_cast<double>(points.size()) / static_cast<double>(buckets);
    out.reserve(maxPoints);
    for (qsizetype b = 0; b < buckets; ++b) {
        const auto lo = static_cast<qsizetype>(b * per);
        const auto hi = std::min(points.size(), static_cast<qsizetype>((b + 1) * per));
        if (lo >= hi) continue;
        qsizetype imin = lo, imax = lo;
        for (qsizetype i = lo; i < hi; ++i) {
            if (points[i].y() < points[imin].y()) imin = i;
            if (points[i].y() > points[imax].y()) imax = i;
        }
        out << points[std::min(imin, imax)];
        if (imin != imax) out << points[std::max(imin, imax)];
    }
    return out;
}

}  // namespace ts::ui
