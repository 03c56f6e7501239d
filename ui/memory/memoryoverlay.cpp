// The memory lab's runs in History's overlay: each point's peak allocated device memory (over
// its recorded steps, as the allocator counted it) against the dimension that varies.
#include <algorithm>

#include "memory/memory_report.h"
#include "ui/common/format.h"
#include "ui/memory/memoryview.h"

namespace ts::ui {

RunOverlay MemoryView::overlayOf(const StoredRun& run) {
    RunOverlay o{tr("peak allocated memory"), QStringLiteral("MiB"), {}, {}, {}};
    try {
        for (const StoredRow& row : run.rows) {
            const MemoryResult r = storedMemoryPoint(run.info, run.rows, row.index);
            OverlayPoint p;
            if (r.spec.imported.empty()) p.at = pointCoordinates(r.spec.bench);
            int64_t peak = 0;
            for (const StepSample& s : r.steps) peak = std::max(peak, s.memory_peak);
            if (peak == 0 && !r.trace.events.empty()) peak = analyzeMemory(r.trace).peak.allocated;
            // A CPU run records no device memory: nothing to draw, not a zero.
            if (r.status == Status::Ok && peak > 0) p.value = static_cast<double>(peak) / (1 << 20);
            o.points.push_back(std::move(p));
        }
    } catch (const std::exception& e) {
        o.unavailable = qstr(std::string(e.what()));
    }
    return o;
}

}  // namespace ts::ui
