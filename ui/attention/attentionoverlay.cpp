// The attention benchmark's runs in History's overlay: each cell's mean time per timed pass
// against the dimension that varies (the sequence length, as a rule).
#include "attention/attention_report.h"
#include "ui/attention/attentionview.h"
#include "ui/common/format.h"

namespace ts::ui {

RunOverlay AttentionView::overlayOf(const StoredRun& run) {
    RunOverlay o{tr("mean time"), QStringLiteral("ms"), {}, {}, {}};
    std::vector<AttentionCell> cells;
    try {
        cells = attentionCellsFromRows(run.info, run.rows);
    } catch (const std::exception& e) {
        o.unavailable = qstr(std::string(e.what()));
        return o;
    }
    auto number = [](const QString& name, int64_t v) {
        return OverlayCoordinate{name, QString::number(v), static_cast<double>(v), true};
    };
    auto text = [](const QString& name, const QString& v) {
        return OverlayCoordinate{name, v, 0, false};
    };
    for (const AttentionCell& c : cells) {
        const QList<OverlayCoordinate> at{
            number(tr("sequence length"), c.seq),
            number(tr("head dim"), c.head_dim),
            text(tr("implementation"), qstr(implName(c))),
            text(tr("dtype"), qstr(toString(c.dtype))),
            text(tr("mask"), c.causal ? tr("causal") : tr("full")),
            number(tr("batch"), c.batch),
            number(tr("heads"), c.heads),
        };
        if (c.status != Status::Ok) {  // OOM, failed, unsupported: counted, not drawn
            o.points.push_back(OverlayPoint{at, std::nullopt, 0, {}});
            continue;
        }
        // One point per timed pass: the pass is a coordinate like the others.
        const struct {
            QString pass;
            double mean, std;
        } passes[] = {
            {tr("forward"), c.forward_mean_ms, c.forward_std_ms},
            {tr("backward"), c.backward_mean_ms, c.backward_std_ms},
            {tr("forward + backward"), c.forward_backward_mean_ms, c.forward_backward_std_ms}};
        for (const auto& pass : passes)
            if (pass.mean > 0) {
                OverlayPoint p{at, pass.mean, pass.std, {}};
                p.at << text(tr("pass"), pass.pass);
                o.points.push_back(std::move(p));
            }
    }
    return o;
}

}  // namespace ts::ui
