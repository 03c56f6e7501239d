// The benchmark's runs in History's overlay: each point's mean step time against the dimension
// that varies, or each measured step's time when every run is one point; forward, backward and
// optimizer time the same way, by choice.
#include "ui/benchmark/benchview.h"
#include "ui/benchmark/storedbenchrun.h"

namespace ts::ui {

RunOverlay BenchView::overlayOf(const StoredRun& run) {
    RunOverlay o{tr("mean step time"),
                 QStringLiteral("ms"),
                 tr("step time"),
                 {tr("forward time"), tr("backward time"), tr("optimizer time")},
                 {},
                 {}};
    const StoredBenchRun bench = benchRunFrom(run);
    if (!bench.error.isEmpty()) {
        o.unavailable = bench.error;
        return o;
    }
    for (const BenchResult& r : bench.points) {
        const bool ok = r.status == Status::Ok;
        OverlayPoint p;
        p.at = pointCoordinates(r.config);
        if (ok && r.total.count > 0) {
            p.value = r.total.mean;
            p.spread = r.total.std;
        }
        // A phase the mode does not run (backward in forward mode) has no value, not a zero.
        const Stats* phases[] = {&r.forward, &r.backward, &r.optimizer};
        double StepSample::*times[] = {&StepSample::forward_ms, &StepSample::backward_ms,
                                       &StepSample::optimizer_ms};
        for (int k = 0; k < 3; ++k) {
            OverlayValue v;
            if (ok && phases[k]->count > 0 && phases[k]->mean > 0) {
                v.value = phases[k]->mean;
                v.spread = phases[k]->std;
            }
            for (const StepSample& s : r.steps)
                if (!s.warmup && v.value) v.steps << QPointF(s.index, s.*times[k]);
            p.more << v;
        }
        for (const StepSample& s : r.steps)
            if (!s.warmup) p.steps << QPointF(s.index, s.total_ms);
        o.points.push_back(std::move(p));
    }
    return o;
}

}  // namespace ts::ui
