// The distributed lab's runs in History's overlay: a DDP run's step time (the slowest rank's,
// the mean over measured steps) per point against the dimension that varies (strategy, world
// size, bucket size, ...); an all-reduce run's bus bandwidth against the size.
#include "ui/common/format.h"
#include "ui/distributed/distributedstore.h"
#include "ui/distributed/distributedview.h"

namespace ts::ui {

namespace {

OverlayCoordinate number(const QString& name, double v) {
    return {name, QString::number(v, 'g', 6), v, true};
}
OverlayCoordinate text(const QString& name, const QString& v) { return {name, v, 0, false}; }

}  // namespace

RunOverlay DistributedView::overlayOf(const StoredRun& run) {
    RunOverlay o;
    std::vector<DistributedResult> results;
    try {
        results = distributedResultsOf(run);
    } catch (const std::exception& e) {
        o.unavailable = qstr(std::string(e.what()));
        return o;
    }
    // A run of DDP points is their step time; one of all-reduce points only, the bandwidth.
    const bool ddp = std::any_of(results.begin(), results.end(), [](const DistributedResult& r) {
        return r.point.experiment == DistExperiment::Ddp;
    });
    if (ddp) {
        o.metric = tr("step time");
        o.unit = QStringLiteral("ms");
    } else {
        o.metric = tr("all-reduce bus bandwidth");
        o.unit = QStringLiteral("GB/s");
    }
    for (const DistributedResult& r : results) {
        const DistributedPoint& pt = r.point;
        if ((pt.experiment == DistExperiment::Ddp) != ddp) continue;
        const QString backend = QString::fromLatin1(dist::backendName(pt.backend));
        if (!ddp) {
            for (const dist::AllreduceRow& a : r.allreduce)
                o.points.push_back(OverlayPoint{
                    {number(tr("size (bytes)"), static_cast<double>(a.bytes)),
                     number(tr("world size"), a.world_size),
                     text(tr("dtype"), QString::fromLatin1(dist::dtypeName(a.dtype))),
                     text(tr("backend"), backend)},
                    a.busbw_gbps > 0 ? std::optional<double>(a.busbw_gbps) : std::nullopt,
                    0,
                    {}});
            if (r.allreduce.empty()) o.points.push_back({});
            continue;
        }
        const DdpSpec& d = pt.ddp;
        OverlayPoint p;
        p.at = {text(tr("strategy"), qstr(d.strategy)), number(tr("world size"), pt.world_size)};
        if (d.strategy == "bucketed") p.at << number(tr("bucket (MiB)"), d.bucket_mb);
        p.at << QList<OverlayCoordinate>{
            text(tr("sharding"), qstr(ddpShardingName(d))),
            text(tr("precision"), qstr(toString(d.precision))),
            text(tr("model size"), qstr(d.model_size)),
            number(tr("context length"), static_cast<double>(d.context_length)),
            number(tr("batch per rank"), static_cast<double>(d.batch_per_rank)),
            text(tr("backend"), backend)};
        if (r.status == Status::Ok) {
            const DdpSummary s = summarizeDdp(r);
            if (s.steps > 0 && s.step_ms > 0) {
                p.value = s.step_ms;
                p.spread = s.step_std_ms;
            }
        }
        o.points.push_back(std::move(p));
    }
    return o;
}

}  // namespace ts::ui
