#include "ui/distributed/strategysummary.h"

#include <QObject>
#include <algorithm>
#include <map>
#include <tuple>

#include "core/result.h"
#include "ui/common/format.h"

namespace ts::ui {

QString ddpPointName(const DistributedPoint& p) {
    const DdpSpec& d = p.ddp;
    QString s = qstr(d.strategy);
    if (strategyTraits(d.strategy).bucket_size)
        s += QStringLiteral(" %1 MiB").arg(d.bucket_mb, 0, 'g', 6);
    if (d.exec == ExecMode::Compiled) s += QObject::tr(" compiled");
    if (d.shard_optimizer) s += QObject::tr(", sharded");
    return s + QStringLiteral(", ") + qstr(toString(d.precision));
}

namespace {

QString whyNotMeasured(const DistributedResult& r) {
    if (r.status == Status::Ok) return QObject::tr("no measured steps");
    if (r.failed_rank >= 0) return QObject::tr("failed on rank %1").arg(r.failed_rank);
    return qstr(toString(r.status));
}

// What makes two points' steps comparable apart from the ranks: the model, its precision, each
// rank's batch and the execution (a compiled step against a compiled one).
auto workOf(const DistributedPoint& p) {
    return std::tuple(p.ddp.model_size, p.ddp.context_length, p.ddp.batch_per_rank, p.ddp.precision,
                      p.ddp.exec);
}

}  // namespace

// Note [a strategy's step against one GPU]: the course asks what data parallelism costs over one
// GPU. A run that has a DDP point of world size 1 (`--world 1`, or a spec of several worlds)
// measured that step: the same model, precision and batch per rank on one rank, where no
// gradient crosses a wire. Each point of the same work is compared with it (step / one-GPU − 1,
// the overhead); where several one-rank points of that work ran (a strategy's copies and
// division still run on one rank), the fastest is the one GPU. A run without one has no
// baseline, and the chart says so rather than guessing one from another run.
std::vector<StrategyBar> strategyBars(const std::vector<DistributedResult>& points,
                                      const std::vector<bool>& finished) {
    std::vector<StrategyBar> bars;
    bool worlds_vary = false;
    int first_world = -1;
    for (size_t i = 0; i < points.size(); ++i) {
        const DistributedResult& r = points[i];
        if (r.point.experiment != DistExperiment::Ddp || i >= finished.size() || !finished[i])
            continue;
        if (first_world < 0) first_world = r.point.world_size;
        worlds_vary = worlds_vary || r.point.world_size != first_world;
    }
    for (size_t i = 0; i < points.size(); ++i) {
        const DistributedResult& r = points[i];
        if (r.point.experiment != DistExperiment::Ddp || i >= finished.size() || !finished[i])
            continue;
        StrategyBar b;
        b.point = static_cast<int>(i);
        b.strategy = qstr(r.point.ddp.strategy);
        b.world_size = r.point.world_size;
        b.label = QStringLiteral("%1: %2").arg(i + 1).arg(ddpPointName(r.point));
        if (worlds_vary)
            b.label += r.point.world_size == 1 ? QObject::tr(", one GPU")
                                               : QObject::tr(", %1 ranks").arg(r.point.world_size);
        const DdpSummary s = summarizeDdp(r);
        b.steps = s.steps;
        b.measured = r.status == Status::Ok && s.steps > 0;
        if (!b.measured) {
            b.why = whyNotMeasured(r);
            bars.push_back(b);
            continue;
        }
        // The rows summarizeDdp averages: per measured step, the slowest rank's.
        std::map<int, const DdpStepRow*> slowest;
        for (const auto& row : r.steps) {
            if (row.warmup) continue;
            auto& slot = slowest[row.step];
            if (!slot || row.total_ms > slot->total_ms) slot = &row;
        }
        std::vector<double> compute, comm, optimizer, total;
        for (const auto& [step, row] : slowest) {
            compute.push_back(row->forward_ms + row->backward_ms);
            // A compiled overlapped step's wait is inside backward (-1): none of its own.
            comm.push_back(std::max(0.0, row->comm_wait_ms));
            optimizer.push_back(row->optimizer_ms);
            total.push_back(row->total_ms);
        }
        const Stats c = computeStats(compute), w = computeStats(comm), o = computeStats(optimizer);
        b.compute_ms = c.mean;
        b.compute_std = c.std;
        b.comm_ms = w.mean;
        b.comm_std = w.std;
        b.optimizer_ms = o.mean;
        b.optimizer_std = o.std;
        b.step_ms = s.step_ms;
        b.step_std = s.step_std_ms;
        b.other_ms = std::max(0.0, s.step_ms - (c.mean + w.mean + o.mean));
        b.memory_is_peak = s.memory_peak > 0;
        if (b.memory_is_peak) {
            b.memory_bytes = s.memory_peak;
        } else {
            // Each rank's tensors at its last step (the sizes hold from step to step).
            std::map<int, const DdpStepRow*> last;
            for (const auto& row : r.steps) last[row.rank] = &row;
            for (const auto& [rank, row] : last)
                b.memory_bytes = std::max(b.memory_bytes,
                                          row->parameter_bytes + row->gradient_bytes +
                                              row->optimizer_state_bytes + row->comm_buffer_bytes);
        }
        bars.push_back(b);
    }
    // The one-GPU step of each bar's work: the fastest measured one-rank point.
    for (StrategyBar& b : bars) {
        if (!b.measured) continue;
        const auto work = workOf(points[static_cast<size_t>(b.point)].point);
        for (const StrategyBar& one : bars)
            if (one.measured && one.world_size == 1 &&
                workOf(points[static_cast<size_t>(one.point)].point) == work &&
                (b.baseline_ms < 0 || one.step_ms < b.baseline_ms)) {
                b.baseline_ms = one.step_ms;
                b.baseline_point = one.point;
            }
    }
    return bars;
}

}  // namespace ts::ui
