// The planner lab's tables, stored runs and registry entry.
#include "planner/planner_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/store.h"
#include "core/table.h"

namespace ts {

using nlohmann::json;

std::string formatSeconds(double s) {
    if (!std::isfinite(s)) return fmt::format("{}", s);
    if (s == 0) return "0";
    const double a = std::abs(s);
    if (a >= 1) return fmt::format("{:.3g} s", s);
    if (a >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
    if (a >= 1e-6) return fmt::format("{:.3g} µs", s * 1e6);
    return fmt::format("{:.3g} ns", s * 1e9);
}

std::string formatFlopRate(double f) {
    const char* units[] = {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"};
    int u = 0;
    while (std::abs(f) >= 1000 && u < 5) {
        f /= 1000;
        ++u;
    }
    return fmt::format("{:.4g} {}", f, units[u]);
}

std::string formatByteRate(double b) {
    if (b >= 1e9) return fmt::format("{:.4g} GB/s", b / 1e9);
    if (b >= 1e6) return fmt::format("{:.4g} MB/s", b / 1e6);
    return fmt::format("{:.4g} B/s", b);
}

namespace {

std::string plannerNum(double v) { return fmt::format("{:.4g}", v); }

std::string plannerBytes(double v) {
    return v < 9.0e18 ? formatBytes(static_cast<int64_t>(std::llround(v))) : plannerNum(v) + " B";
}

std::string plannerBound(const PassCost& p) {
    if (p.comm_s == 0) return "compute";
    return p.commBound() ? "COMM" : "compute";
}

std::string plannerInputsLine(const PlannerInputs& in) {
    std::string s = fmt::format(
        "C = {} ({:.4g} FLOP/s), W = {} (egress), C/W = {:.4g} FLOP/byte; B = {:.0f} tokens, "
        "D = {}, F = D_FF = {}, L = {}; X (data) = {}, Y (tensor) = {}, N = X·Y = {}; "
        "b = {} bytes per communicated element; memory per parameter p = {}, g = {}, o = {} bytes; "
        "2-D axes {}",
        formatFlopRate(in.flops), in.flops, formatByteRate(in.bandwidth), in.flops / in.bandwidth,
        in.batch_tokens, in.d_model, in.d_ff, in.layers, in.dp, in.tp, in.dp * in.tp, in.comm_bytes,
        in.param_bytes, in.grad_bytes, in.optimizer_bytes,
        in.overlap_axes ? "overlapped (max)" : "sharing the links (sum)");
    if (in.model)
        s += fmt::format("; model {} ({} parameters, context {})", in.model->name,
                         parameterCount(*in.model), in.model->context_length);
    return s;
}

std::string plannerMeasuredText(const MachineMeasurement& m) {
    std::string s = fmt::format("Measured on {} ({}): C = {} from a {}³ {} GEMM ({:.3f} ms)",
                                m.device, printable(m.device_name), formatFlopRate(m.flops),
                                m.gemm_n, m.gemm_dtype, m.gemm_ms);
    if (m.world >= 2)
        s += fmt::format(
            "; W = {} bus bandwidth of a {} {} all-reduce over {} {} ranks ({:.3f} ms); our ring "
            "all-reduce (send/recv): {:.3f} ms, {} bus bandwidth, {} the backend's sum",
            formatByteRate(m.backend_busbw), plannerBytes(static_cast<double>(m.allreduce_bytes)),
            m.allreduce_dtype, m.world, m.backend, m.backend_ms, m.ring_ms,
            formatByteRate(m.ring_busbw), m.ring_exact ? "equal to" : "DIFFERENT from");
    if (!m.note.empty()) s += "; " + printable(m.note);
    return s;
}

}  // namespace

std::string plannerReportText(const PlannerReport& r, TableFormat format) {
    const bool md = format == TableFormat::Markdown;
    const std::string para = "\n\n";
    std::string out = (md ? "Inputs: " : "Inputs: ") + plannerInputsLine(r.inputs) + para;
    if (r.measured) out += plannerMeasuredText(*r.measured) + para;

    TextTable t;
    t.headers = {
        "strategy",  "X",           "Y",        "fwd FLOPs", "fwd compute",     "fwd comm", "fwd",
        "bwd FLOPs", "bwd compute", "bwd comm", "bwd",       "step (L layers)", "step comm"};
    t.right = {false, true, true, true, true, true, false, true, true, true, false, true, true};
    for (const StrategyPlan& p : r.plans)
        t.rows.push_back(
            {std::string(strategyTitle(p.strategy)), std::to_string(p.x), std::to_string(p.y),
             plannerNum(p.forward.flops), formatSeconds(p.forward.compute_s),
             formatSeconds(p.forward.comm_s), plannerBound(p.forward), plannerNum(p.backward.flops),
             formatSeconds(p.backward.compute_s), formatSeconds(p.backward.comm_s),
             plannerBound(p.backward), formatSeconds(p.step_s), formatSeconds(p.step_comm_s)});
    out += tableHeading("One layer's MLP on one device (COMM: communication bound)", format) +
           renderTable(t, format) + "\n";

    TextTable f;
    f.headers = {"strategy", "pass", "FLOPs", "communication time"};
    f.right = {false, false, false, false};
    for (const StrategyPlan& p : r.plans) {
        f.rows.push_back({std::string(strategyTitle(p.strategy)), "forward",
                          p.forward.flops_formula, p.forward.comm_formula});
        f.rows.push_back({std::string(strategyTitle(p.strategy)), "backward",
                          p.backward.flops_formula, p.backward.comm_formula});
    }
    out +=
        tableHeading("The formulas (see docs/PLANNER.md)", format) + renderTable(f, format) + "\n";

    TextTable l;
    l.headers = {"strategy", "limit", "formula", "value", "here"};
    l.right = {false, false, false, true, false};
    for (const StrategyPlan& p : r.plans)
        for (const PlannerLimit& lim : p.limits)
            l.rows.push_back({std::string(strategyTitle(p.strategy)), lim.what, lim.formula,
                              plannerNum(lim.value),
                              !lim.checked ? "-"
                              : lim.holds  ? "within"
                                           : "PAST"});
    out += tableHeading("Where each becomes communication bound", format) + renderTable(l, format) +
           "\n";

    TextTable m;
    m.headers = {"strategy", "parameters per device", "weights", "gradients", "optimizer", "total",
                 "formula"};
    m.right = {false, true, true, true, true, true, false};
    for (const StrategyPlan& p : r.plans)
        m.rows.push_back({std::string(strategyTitle(p.strategy)), plannerNum(p.params_per_device),
                          plannerBytes(p.param_bytes), plannerBytes(p.grad_bytes),
                          plannerBytes(p.optimizer_bytes), plannerBytes(p.memoryBytes()),
                          p.memory_formula});
    out += tableHeading(r.inputs.model ? "Memory per device (the model's parameters P)"
                                       : "Memory per device (P = L·3·D·F, the layers' MLP)",
                        format) +
           renderTable(m, format) + "\n";

    TextTable c;
    c.headers = {"collective", "formula", "bytes sent per device", "time"};
    c.right = {false, false, true, true};
    for (const CollectiveCost& x : r.collectives)
        c.rows.push_back({x.name, x.formula, plannerBytes(x.bytes_sent), formatSeconds(x.seconds)});
    out += tableHeading(fmt::format("Ring collectives of one layer's weights (S = 3·D·F·b = {}) "
                                    "over N = {} devices",
                                    plannerBytes(r.collective_bytes), r.inputs.dp * r.inputs.tp),
                        format) +
           renderTable(c, format);

    if (!r.predictions.empty()) {
        TextTable p;
        p.headers = {"strategy",      "devices",  "tokens per device", "FLOPs per device",
                     "compute",       "comm fwd", "comm bwd",          "step (overlapped)",
                     "step (serial)", "bound",    "memory per device"};
        p.right = {false, true, true, true, true, true, true, true, true, false, true};
        for (const PlannerPrediction& x : r.predictions)
            p.rows.push_back({std::string(strategyTitle(x.strategy)), std::to_string(x.devices),
                              plannerNum(x.tokens_per_device),
                              plannerNum(x.forward_flops + x.backward_flops),
                              formatSeconds(x.compute_s), formatSeconds(x.forward_comm_s),
                              formatSeconds(x.backward_comm_s), formatSeconds(x.step_s),
                              formatSeconds(x.step_serial_s), x.commBound() ? "COMM" : "compute",
                              plannerBytes(x.memory_bytes)});
        out +=
            "\n" +
            tableHeading(fmt::format("The whole {} model's step (FLOPs as the benchmark "
                                     "counts them; all {:.4g} parameters communicated)",
                                     r.predictions.front().model, r.predictions.front().parameters),
                         format) +
            renderTable(p, format);
        for (const PlannerPrediction& x : r.predictions)
            out += fmt::format("{}{}: {}\n", md ? "- " : "", strategyTitle(x.strategy),
                               x.comm_formula);
    }
    return out;
}

std::string plannerCsv(const std::vector<PlannerReport>& reports) {
    // See Note [tables other programs read]: C, W and B by name, with their units.
    std::string out =
        "row,strategy,x,y,flops_per_s,bandwidth_bytes_per_s,batch_tokens,d_model,d_ff,layers,"
        "fwd_flops,fwd_compute_s,fwd_comm_s,fwd_comm_bytes,bwd_flops,bwd_compute_s,bwd_comm_s,"
        "bwd_comm_bytes,step_s,comm_bound,memory_bytes\n";
    for (size_t i = 0; i < reports.size(); ++i) {
        const PlannerInputs& in = reports[i].inputs;
        for (const StrategyPlan& p : reports[i].plans)
            out += fmt::format(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", i,
                toString(p.strategy), p.x, p.y, in.flops, in.bandwidth, in.batch_tokens, in.d_model,
                in.d_ff, in.layers, p.forward.flops, p.forward.compute_s, p.forward.comm_s,
                p.forward.comm_bytes, p.backward.flops, p.backward.compute_s, p.backward.comm_s,
                p.backward.comm_bytes, p.step_s, p.comm_bound ? 1 : 0, p.memoryBytes());
    }
    return out;
}

void storePlannerReport(ResultStore& store, int64_t run_id, int index, const PlannerReport& r) {
    const json config = {
        {"dp", r.inputs.dp}, {"tp", r.inputs.tp}, {"measured", r.measured.has_value()}};
    store.addRow(run_id, {index, Status::Ok, dumpJson(config), dumpJson(toJson(r))});
}

namespace {

PlannerReport plannerRowFromText(const std::string& s) {
    return plannerReportFromJson(parseJson(s));
}

std::string plannerRunReport(const RunInfo& info, const std::vector<StoredRow>& rows,
                             ReportFormat format) {
    const auto reports = plannerReportsFromRows(info, rows);
    if (format == ReportFormat::Json) {
        json arr = json::array();
        for (const auto& r : reports) arr.push_back(toJson(r));
        return dumpJson(json{{"run", info.id},
                             {"lab", info.lab},
                             {"label", info.label},
                             {"created", info.created},
                             {"device", info.device_name},
                             {"rows", arr}},
                        2) +
               "\n";
    }
    if (format == ReportFormat::Csv) return plannerCsv(reports);
    const TableFormat tf =
        format == ReportFormat::Markdown ? TableFormat::Markdown : TableFormat::Text;
    std::string out = format == ReportFormat::Markdown
                          ? fmt::format("# TrainScope planner run {}\n\n", info.id)
                          : "";
    out +=
        (format == ReportFormat::Markdown ? markdownText(runHeadline(info, reports.size(), "plan"))
                                          : runHeadline(info, reports.size(), "plan")) +
        "\n\n";
    for (const auto& r : reports) out += plannerReportText(r, tf) + "\n";
    return out;
}

}  // namespace

std::vector<PlannerReport> plannerReportsFromRows(const RunInfo& run,
                                                  const std::vector<StoredRow>& rows) {
    return parseRows<PlannerReport>(run, rows, plannerRowFromText);
}

Lab plannerLab() {
    return {kPlannerLab, "Parallelism planner", plannerRunReport, rowProblemOf(plannerRowFromText)};
}

}  // namespace ts
