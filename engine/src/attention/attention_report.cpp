// The attention lab's tables: Markdown, CSV, JSON lines, and its stored runs.
#include "attention/attention_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "attention/attention_json.h"
#include "core/json.h"

namespace ts {

namespace {

std::string fmtBytes(int64_t b) {
    if (b <= 0) return "-";
    if (b >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / 1073741824.0);
    return fmt::format("{:.1f} MiB", b / 1048576.0);
}

}  // namespace

std::vector<AttentionPass> measuredPasses(const std::vector<AttentionCell>& cells) {
    bool f = false, b = false, fb = false;
    for (const auto& c : cells) {
        f |= c.forward_ms > 0;
        b |= c.backward_ms > 0;
        fb |= c.forward_backward_ms > 0;
    }
    std::vector<AttentionPass> passes;
    if (f) passes.push_back(AttentionPass::Forward);
    if (b) passes.push_back(AttentionPass::Backward);
    if (fb) passes.push_back(AttentionPass::ForwardBackward);
    if (passes.empty()) passes.push_back(AttentionPass::Forward);
    return passes;
}

namespace {

std::string attentionRunReport(const RunInfo& info, const std::vector<StoredRow>& rows,
                               ReportFormat format) {
    const auto cells = attentionCellsFromRows(info, rows);
    std::string out;
    switch (format) {
        case ReportFormat::Json: {
            nlohmann::json arr = nlohmann::json::array();
            for (const auto& c : cells) arr.push_back(toJson(c));
            return dumpJson(nlohmann::json{{"id", info.id},
                                           {"kind", info.lab},
                                           {"label", info.label},
                                           {"created", info.created},
                                           {"device", info.device_name},
                                           {"cells", arr}},
                            2) +
                   "\n";
        }
        case ReportFormat::Csv:
            out = attentionCsvHeader() + "\n";
            for (const auto& c : cells) out += attentionCsvRow(c) + "\n";
            return out;
        case ReportFormat::Markdown:
            out = fmt::format("# TrainScope attention run {}\n\n", info.id);
            break;
        case ReportFormat::Table:
            break;
    }
    return out + runHeadline(info, cells.size(), "cell") + "\n\n" +
           attentionMarkdown(cells, measuredPasses(cells));
}

}  // namespace

std::string attentionMarkdown(const std::vector<AttentionCell>& cells,
                              const std::vector<AttentionPass>& passes) {
    auto has = [&](AttentionPass p) {
        return std::find(passes.begin(), passes.end(), p) != passes.end();
    };
    std::string out = "| impl | dtype | causal | b×h | d | seq |";
    std::string rule = "|---|---|---|---|---|---:|";
    for (auto p : {AttentionPass::Forward, AttentionPass::Backward, AttentionPass::ForwardBackward})
        if (has(p)) {
            out += fmt::format(" {} ms (median ± std) | TFLOP/s |", toString(p));
            rule += "---:|---:|";
        }
    out += " mem before bwd | peak mem | check |\n";
    rule += "---:|---:|---|\n";
    out += rule;
    for (const auto& c : cells) {
        out += fmt::format("| {} | {} | {} | {}×{} | {} | {} |", implName(c), toString(c.dtype),
                           c.causal ? "yes" : "no", c.batch, c.heads, c.head_dim, c.seq);
        const bool ok = c.status == Status::Ok;
        const std::string mark = ok ? "" : std::string(toString(c.status));
        auto col = [&](double ms, double sd, double tf) {
            out += ok ? fmt::format(" {:.3f} ± {:.3f} | {:.1f} |", ms, sd, tf)
                      : fmt::format(" {} | |", mark);
        };
        if (has(AttentionPass::Forward)) col(c.forward_ms, c.forward_std_ms, c.forward_tflops);
        if (has(AttentionPass::Backward)) col(c.backward_ms, c.backward_std_ms, c.backward_tflops);
        if (has(AttentionPass::ForwardBackward))
            col(c.forward_backward_ms, c.forward_backward_std_ms, c.forward_backward_tflops);
        std::string check =
            c.err_out < 0 ? "-" : fmt::format("{:.1e}/{:.1e}", c.err_out, c.err_grad);
        if (!ok) check = c.error.substr(0, 80);
        out += fmt::format(" {} | {} | {} |\n", ok ? fmtBytes(c.memory_before_backward) : "",
                           ok ? fmtBytes(c.peak_memory) : "", check);
    }
    // The user's code that raised: each traceback once, under the implementation it came from.
    std::vector<std::pair<std::string, std::string>> raised;
    for (const auto& c : cells)
        if (!c.traceback.empty() && std::find(raised.begin(), raised.end(),
                                              std::pair{implName(c), c.traceback}) == raised.end())
            raised.emplace_back(implName(c), c.traceback);
    for (const auto& [impl, tb] : raised)
        out += fmt::format("\n{} raised:\n\n```\n{}\n```\n", impl, tb);
    return out;
}

std::string attentionCsvHeader() {
    return "impl,dtype,causal,batch,heads,head_dim,seq,status,forward_ms,backward_ms,forward_"
           "backward_ms,"
           "forward_tflops,backward_tflops,forward_backward_tflops,memory_before_backward,peak_"
           "memory,err_out,"
           "err_grad,tolerance,error,forward_mean_ms,forward_std_ms,backward_mean_ms,backward_std_"
           "ms,forward_backward_mean_ms,forward_backward_std_ms,first_call_ms";
}

std::string attentionCsvRow(const AttentionCell& c) {
    std::string err = c.error;
    std::replace(err.begin(), err.end(), '"', '\'');
    std::replace(err.begin(), err.end(), '\n', ' ');
    return fmt::format(
        "{},{},{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.2f},{:.2f},{:.2f},{},{},{:.3e},{:.3e},{:."
        "0e},\"{}\",{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.3f}",
        implName(c), toString(c.dtype), c.causal ? 1 : 0, c.batch, c.heads, c.head_dim, c.seq,
        toString(c.status), c.forward_ms, c.backward_ms, c.forward_backward_ms, c.forward_tflops,
        c.backward_tflops, c.forward_backward_tflops, c.memory_before_backward, c.peak_memory,
        c.err_out, c.err_grad, c.tolerance, err, c.forward_mean_ms, c.forward_std_ms,
        c.backward_mean_ms, c.backward_std_ms, c.forward_backward_mean_ms,
        c.forward_backward_std_ms, c.first_call_ms);
}

std::string attentionJsonLine(const AttentionCell& c) { return dumpJson(toJson(c)); }

namespace {
AttentionCell cellFromRow(const std::string& s) { return attentionCellFromJson(parseJson(s)); }
}  // namespace

std::vector<AttentionCell> attentionCellsFromRows(const RunInfo& run,
                                                  const std::vector<StoredRow>& rows) {
    return parseRows<AttentionCell>(run, rows, cellFromRow);
}

Lab attentionLab() {
    return {kAttentionLab, "Attention benchmark", attentionRunReport, rowProblemOf(cellFromRow)};
}

}  // namespace ts
