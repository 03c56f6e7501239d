// The attention lab's tables: Markdown, CSV, JSON lines, and its stored runs.
#include "attention/attention_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "attention/attention_json.h"
#include "core/json.h"
#include "core/table.h"

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
    out += (format == ReportFormat::Markdown ? markdownText(runHeadline(info, cells.size(), "cell"))
                                             : runHeadline(info, cells.size(), "cell")) +
           "\n\n";
    // The settings every cell shares, from the stored spec; a spec stored without them says
    // nothing. See Note [tables other programs read].
    try {
        const auto spec = nlohmann::json::parse(info.spec_json);
        if (spec.contains("steps") && spec.contains("warmup") && spec.contains("device"))
            out += attentionSettings(spec.at("steps").get<int>(), spec.at("warmup").get<int>(),
                                     spec.at("device").get<std::string>()) +
                   "\n\n";
    } catch (const std::exception&) {
    }
    return out + attentionMarkdown(cells, measuredPasses(cells));
}

}  // namespace

std::string attentionSettings(int steps, int warmup, const std::string& device) {
    return fmt::format("Median of {} measured step(s) after {} warm-up, on {}.", steps, warmup,
                       markdownText(device));
}

std::string attentionMarkdown(const std::vector<AttentionCell>& cells,
                              const std::vector<AttentionPass>& passes) {
    auto has = [&](AttentionPass p) {
        return std::find(passes.begin(), passes.end(), p) != passes.end();
    };
    TextTable t;
    t.compact = true;
    t.headers = {"impl", "dtype", "causal", "b×h", "d", "seq"};
    t.right = {false, false, false, false, false, true};
    for (auto p : {AttentionPass::Forward, AttentionPass::Backward, AttentionPass::ForwardBackward})
        if (has(p)) {
            t.headers.push_back(fmt::format("{} ms (median ± std)", toString(p)));
            t.headers.emplace_back("TFLOP/s");
            t.right.insert(t.right.end(), {true, true});
        }
    t.headers.insert(t.headers.end(), {"mem before bwd", "peak mem", "check"});
    t.right.insert(t.right.end(), {true, true, false});
    for (const auto& c : cells) {
        std::vector<std::string> row = {implName(c),
                                        std::string(toString(c.dtype)),
                                        c.causal ? "yes" : "no",
                                        fmt::format("{}×{}", c.batch, c.heads),
                                        fmt::format("{}", c.head_dim),
                                        fmt::format("{}", c.seq)};
        const bool ok = c.status == Status::Ok;
        const std::string mark = ok ? "" : std::string(toString(c.status));
        auto col = [&](double ms, double sd, double tf) {
            row.push_back(ok ? fmt::format("{:.3f} ± {:.3f}", ms, sd) : mark);
            row.push_back(ok ? fmt::format("{:.1f}", tf) : "");
        };
        if (has(AttentionPass::Forward)) col(c.forward_ms, c.forward_std_ms, c.forward_tflops);
        if (has(AttentionPass::Backward)) col(c.backward_ms, c.backward_std_ms, c.backward_tflops);
        if (has(AttentionPass::ForwardBackward))
            col(c.forward_backward_ms, c.forward_backward_std_ms, c.forward_backward_tflops);
        std::string check =
            c.err_out < 0 ? "-" : fmt::format("{:.1e}/{:.1e}", c.err_out, c.err_grad);
        if (!ok) check = c.error.substr(0, 80);
        row.push_back(ok ? fmtBytes(c.memory_before_backward) : "");
        row.push_back(ok ? fmtBytes(c.peak_memory) : "");
        row.push_back(check);
        t.rows.push_back(std::move(row));
    }
    std::string out = renderTable(t, TableFormat::Markdown);
    // The user's code that raised: each traceback once, under the implementation it came from.
    std::vector<std::pair<std::string, std::string>> raised;
    for (const auto& c : cells)
        if (!c.traceback.empty() && std::find(raised.begin(), raised.end(),
                                              std::pair{implName(c), c.traceback}) == raised.end())
            raised.emplace_back(implName(c), c.traceback);
    for (const auto& [impl, tb] : raised)
        out += fmt::format("\n{} raised:\n\n```\n{}\n```\n", markdownText(impl), tb);
    return out;
}

// See Note [tables other programs read]: a pass, a check or memory that was not measured is an
// empty field (the cell keeps 0 or -1 for it).
std::string attentionCsvHeader() {
    return "impl,dtype,causal,batch,heads,head_dim,seq,status,forward_ms,backward_ms,"
           "forward_backward_ms,forward_tflops,backward_tflops,forward_backward_tflops,"
           "memory_before_backward_bytes,peak_memory_bytes,err_out,err_grad,tolerance,error,"
           "forward_mean_ms,forward_std_ms,backward_mean_ms,backward_std_ms,"
           "forward_backward_mean_ms,forward_backward_std_ms,first_call_ms";
}

std::string attentionCsvRow(const AttentionCell& c) {
    auto measured = [](double v) { return v > 0 ? csvNumber(v) : std::string(); };
    auto bytes = [](int64_t b) { return b > 0 ? fmt::format("{}", b) : std::string(); };
    auto checked = [&](double v) { return c.err_out >= 0 ? csvNumber(v) : std::string(); };
    const std::vector<std::string> cells = {
        implName(c),
        std::string(toString(c.dtype)),
        c.causal ? "1" : "0",
        fmt::format("{}", c.batch),
        fmt::format("{}", c.heads),
        fmt::format("{}", c.head_dim),
        fmt::format("{}", c.seq),
        std::string(toString(c.status)),
        measured(c.forward_ms),
        measured(c.backward_ms),
        measured(c.forward_backward_ms),
        measured(c.forward_tflops),
        measured(c.backward_tflops),
        measured(c.forward_backward_tflops),
        bytes(c.memory_before_backward),
        bytes(c.peak_memory),
        checked(c.err_out),
        checked(c.err_grad),
        c.tolerance > 0 ? csvNumber(c.tolerance) : "",
        c.error,
        measured(c.forward_mean_ms),
        measured(c.forward_mean_ms).empty() ? "" : csvNumber(c.forward_std_ms),
        measured(c.backward_mean_ms),
        measured(c.backward_mean_ms).empty() ? "" : csvNumber(c.backward_std_ms),
        measured(c.forward_backward_mean_ms),
        measured(c.forward_backward_mean_ms).empty() ? "" : csvNumber(c.forward_backward_std_ms),
        measured(c.first_call_ms)};
    std::vector<std::string> escaped;
    for (const auto& cell : cells) escaped.push_back(csvEscape(cell));
    return fmt::format("{}", fmt::join(escaped, ","));
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
