// The profiler's runs in History's overlay: a profile is one point, so its profiled steps'
// times (the steps' own CUDA-event times, a steady clock on the CPU) against the step index;
// profiles of different points, their mean step time against the dimension that varies.
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/result.h"
#include "profiler/profiler_json.h"
#include "ui/common/format.h"
#include "ui/profiler/profileview.h"

namespace ts::ui {

RunOverlay ProfileView::overlayOf(const StoredRun& run) {
    RunOverlay o{tr("mean step time"), QStringLiteral("ms"), tr("step time"), {}, {}};
    if (run.rows.empty()) {
        o.unavailable =
            tr("it holds no profile (it was stopped or failed before the profile "
               "was stored)");
        return o;
    }
    try {
        for (const StoredRow& row : run.rows) {
            const ProfileResult r = profileResultFromJson(parseJson(row.result_json));
            OverlayPoint p;
            if (r.spec.imported.empty()) p.at = pointCoordinates(r.spec.bench);
            std::vector<double> times;
            for (const StepSample& s : r.steps)
                if (!s.warmup) {
                    p.steps << QPointF(s.index, s.total_ms);
                    times.push_back(s.total_ms);
                }
            if (r.status == Status::Ok && !times.empty()) {
                const Stats st = computeStats(times);
                p.value = st.mean;
                p.spread = st.std;
            }
            o.points.push_back(std::move(p));
        }
    } catch (const std::exception& e) {
        o.unavailable = qstr(std::string(e.what()));
    }
    return o;
}

}  // namespace ts::ui
