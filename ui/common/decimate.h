// Long series thinned for drawing: what the step charts (benchmark, precision) plot when a run
// has more steps than a chart can show.
#pragma once

#include <QList>
#include <QPointF>

namespace ts::ui {

// At most `maxPoints` points: the min and max of each bucket, so spikes survive.
QList<QPointF> decimateMinMax(const QList<QPointF>& points, int maxPoints);

}  // namespace ts::ui
