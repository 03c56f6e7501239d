#include "memory/memory_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/sweep.h"
#include "core/table.h"
#include "memory/memory_json.h"

namespace ts {
namespace {

using Table = TextTable;

std::string nameOf(const RawMemoryTrace& t, int32_t i) {
    return i >= 0 && static_cast<size_t>(i) < t.names.size() ? t.names[i] : std::string();
}

std::string phaseStep(Phase p, int step) {
    return step >= 0 ? fmt::format("{} {}", toString(p), step) : std::string(toString(p));
}

std::string signedBytes(int64_t b) { return b < 0 ? "-" + formatBytes(-b) : "+" + formatBytes(b); }

Table allocationRows(const MemoryResult& r, const MemoryAnalysis& a,
                     const std::vector<size_t>& which) {
    // "where" (the file and line that asked) where the trace has stacks: the user's code's.
    const bool sites = std::any_of(which.begin(), which.end(), [&](size_t k) {
        return !allocationSite(r.trace, a.allocations[k].stack).empty();
    });
    Table t{{"size", "event", "phase", "category", "freed at", "range", "op"},
            {true, true, false, false, true, false, false},
            {}};
    if (sites) {
        t.headers.push_back("where");
        t.right.push_back(false);
    }
    for (size_t k : which) {
        const Allocation& x = a.allocations[k];
        t.rows.push_back(
            {formatBytes(x.size), x.initial ? "before" : fmt::format("{}", x.alloc_index),
             x.initial ? "-" : phaseStep(x.phase, x.step), std::string(toString(x.category)),
             x.free_index ? fmt::format("{}", *x.free_index) : "live", nameOf(r.trace, x.range),
             nameOf(r.trace, x.op)});
        if (sites) t.rows.back().push_back(allocationSite(r.trace, x.stack));
    }
    return t;
}

}  // namespace

std::string describeFailedAllocation(const FailedAllocation& f) {
    std::string where(toString(f.phase));
    if (f.phase == Phase::Other) where = "outside the step's phases";
    if (f.step >= 0) where += fmt::format(" of step {}", f.step);
    std::string what;
    if (!f.range.empty() || !f.op.empty())
        what =
            fmt::format(" ({}{}{})", f.range, !f.range.empty() && !f.op.empty() ? ", " : "", f.op);
    return fmt::format(
        "{} asked for in {}{}, with {} allocated, {} reserved and {} free on the device",
        formatBytes(f.requested), where, what, formatBytes(f.allocated), formatBytes(f.reserved),
        formatBytes(f.device_free));
}

std::string memoryHeadline(const MemoryResult& r) {
    if (!r.spec.imported.empty())
        return fmt::format("{} (an imported snapshot of {}), {} trace entries", r.spec.imported,
                           r.environment.device_name.empty() ? "a GPU" : r.environment.device_name,
                           r.trace.events.size());
    const PointConfig& c = r.spec.bench;
    // The user's model has its own attention: "your code <ref>" says whose model it is.
    const std::string whose = c.source == Source::Python ? fmt::format("your code {} ({} dims)",
                                                                       c.python.code, c.model.name)
                                                         : fmt::format("{}", c.model.name);
    const std::string attention =
        c.source == Source::Python ? std::string() : " " + std::string(toString(c.attention));
    return fmt::format("{} ctx={} batch={} {}{} {} on {}, {} recorded step(s) after {} warm-up",
                       whose, c.model.context_length, c.batch_size, toString(c.precision),
                       attention, toString(c.mode), c.device, r.spec.record_steps, c.warmup);
}

std::string memoryTimelineCsv(const MemoryResult& r) {
    const MemoryAnalysis a = analyzeMemory(r.trace);
    // See Note [tables other programs read]: bytes, said in the headers.
    std::string out = "event,time_us,phase,step,allocated_bytes,reserved_bytes";
    for (MemoryCategory c : allMemoryCategories())
        out += "," + csvName(std::string(toString(c))) + "_bytes";
    out += "\n";
    for (const auto& p : a.timeline) {
        const AllocEvent& e = r.trace.events[p.index];
        out += fmt::format("{},{:.3f},{},{},{},{}", p.index, p.time_ns / 1000.0, toString(e.phase),
                           e.step, p.allocated, p.reserved);
        for (int64_t b : p.by_category) out += fmt::format(",{}", b);
        out += "\n";
    }
    return out;
}

std::string memoryPeakTable(const std::vector<MemoryResult>& results, TableFormat format) {
    const bool csv = format == TableFormat::Csv;
    // CSV (see Note [tables other programs read]): the point's keys, bytes in the headers.
    Table t{csv ? std::vector<std::string>{"size", "context", "batch", "precision", "attention",
                                           "mode", "status", "peak_bytes", "predicted_peak_bytes",
                                           "reserved_bytes"}
                : std::vector<std::string>{"size", "context", "batch", "precision", "attention",
                                           "mode", "status", "peak", "predicted", "reserved"},
            {false, true, true, false, false, false, false, true, true, true},
            {}};
    // The point's other dimensions where they vary (checkpointing: see Note [point dimensions]),
    // after the mode.
    std::vector<const DimensionDef*> extra;
    for (const auto& d : pointDimensions()) {
        if (d.id() == Dimension::Size || d.id() == Dimension::Context ||
            d.id() == Dimension::Batch || d.id() == Dimension::Precision ||
            d.id() == Dimension::Attention || d.id() == Dimension::Mode)
            continue;
        const bool varies = std::any_of(results.begin(), results.end(), [&](const auto& r) {
            return d.get(r.spec.bench) != d.get(results.front().spec.bench);
        });
        if (varies) extra.push_back(&d);
    }
    for (size_t i = 0; i < extra.size(); ++i) {
        t.headers.insert(t.headers.begin() + 6 + static_cast<std::ptrdiff_t>(i),
                         std::string(extra[i]->key));
        t.right.insert(t.right.begin() + 6 + static_cast<std::ptrdiff_t>(i),
                       extra[i]->kind == DimensionDef::Kind::Integer);
    }
    for (MemoryCategory c : allMemoryCategories()) {
        t.headers.push_back(csv ? csvName(toString(c)) + "_bytes" : std::string(toString(c)));
        t.right.push_back(true);
    }
    auto bytes = [&](int64_t b) { return csv ? fmt::format("{}", b) : formatBytes(b); };
    const std::string none = csv ? "" : "-";  // nothing recorded (the CPU, a failed point)
    for (const auto& r : results) {
        const PointConfig& c = r.spec.bench;
        const MemoryAnalysis a = analyzeMemory(r.trace);
        const bool measured = !r.trace.events.empty();
        std::vector<std::string> row{c.model.name,
                                     fmt::format("{}", c.model.context_length),
                                     fmt::format("{}", c.batch_size),
                                     std::string(toString(c.precision)),
                                     std::string(toString(c.attention)),
                                     std::string(toString(c.mode)),
                                     std::string(toString(r.status)),
                                     measured ? bytes(a.peak.allocated) : none,
                                     bytes(predictMemory(c).peak),
                                     measured ? bytes(a.peak.reserved) : none};
        for (size_t i = 0; i < extra.size(); ++i)
            row.insert(row.begin() + 6 + static_cast<std::ptrdiff_t>(i), extra[i]->get(c));
        for (int64_t b : a.peak.by_category) row.push_back(measured ? bytes(b) : none);
        t.rows.push_back(std::move(row));
    }
    return renderTable(t, format);
}

std::string formatMemory(const MemoryResult& r, const MemoryReportOptions& o) {
    if (o.format == TableFormat::Csv) return memoryTimelineCsv(r);
    const TableFormat f = o.format;
    std::string out = f == TableFormat::Markdown ? fmt::format("## Memory: {}\n", memoryHeadline(r))
                                                 : fmt::format("memory: {}\n", memoryHeadline(r));
    const bool imported = !r.spec.imported.empty();
    if (const std::string t = imported ? std::string() : modelTableNote({r.spec.bench.model.name});
        !t.empty())
        out += t + "\n";  // see Note [two model tables]
    if (r.status != Status::Ok) out += fmt::format("{}: {}\n", toString(r.status), r.error);

    // An imported snapshot has no model to predict from (See Note [importing a snapshot]).
    const MemoryPrediction pred = imported ? MemoryPrediction{} : predictMemory(r.spec.bench);
    if (!r.trace.events.empty()) {
        const MemoryAnalysis a = analyzeMemory(r.trace);
        const PeakBreakdown& p = a.peak;
        out += tableHeading(fmt::format("Peak: {} allocated ({} reserved) at event {} of {}, in {}",
                                        formatBytes(p.allocated), formatBytes(p.reserved), p.index,
                                        r.trace.events.size(), phaseStep(p.phase, p.step)),
                            f);
        Table cats{{"category", "at the peak", "share", "predicted", "difference"},
                   {false, true, true, true, true},
                   {}};
        for (const auto& c : compareWithPrediction(r, a))
            cats.rows.push_back(
                {std::string(toString(c.category)), formatBytes(c.measured),
                 p.allocated > 0 ? fmt::format("{:.1f}%", 100.0 * c.measured / p.allocated) : "-",
                 formatBytes(c.predicted), signedBytes(c.measured - c.predicted)});
        cats.rows.push_back({"total", formatBytes(p.allocated), "100%", formatBytes(pred.peak),
                             signedBytes(p.allocated - pred.peak)});
        if (imported) {  // nothing predicted: the measured columns alone
            cats.headers.resize(3);
            cats.right.resize(3);
            for (auto& row : cats.rows) row.resize(3);
        }
        out += renderTable(cats, f);

        Table steps{
            {"step", "peak allocated", "after the step", "reserved"}, {true, true, true, true}, {}};
        for (const auto& s : r.steps)
            if (!s.warmup)
                steps.rows.push_back({fmt::format("{}", s.index), formatBytes(s.memory_peak),
                                      formatBytes(s.memory_allocated),
                                      formatBytes(s.memory_reserved)});
        if (!steps.rows.empty())
            out += tableHeading("Recorded steps, as the allocator's counters saw them", f) +
                   renderTable(steps, f);

        const size_t top = o.top <= 0 ? SIZE_MAX : static_cast<size_t>(o.top);
        out += tableHeading("Largest allocations", f) +
               renderTable(allocationRows(r, a, largestAllocations(a, top)), f);
        std::vector<size_t> live = p.live;
        if (live.size() > top) live.resize(top);
        out += tableHeading(fmt::format("Live at the peak ({} blocks; the largest)", p.live.size()),
                            f) +
               renderTable(allocationRows(r, a, live), f);
    }
    if (imported) {
        // No model: nothing to predict, no tensors of ours to count.
    } else if (r.parameter_bytes == 0) {
        // Nothing measured (the CPU, a failed run): what the analytic model says.
        Table model{{"category", "predicted"}, {false, true}, {}};
        model.rows.push_back({"parameters", formatBytes(pred.parameters)});
        model.rows.push_back({"gradients", formatBytes(pred.gradients)});
        model.rows.push_back({"optimizer state", formatBytes(pred.optimizer_state)});
        model.rows.push_back({"activations (saved for backward)", formatBytes(pred.activations)});
        model.rows.push_back({"weight casts (autocast)", formatBytes(pred.weight_casts)});
        model.rows.push_back({"temporaries (largest)", formatBytes(pred.temporaries)});
        model.rows.push_back({"peak (estimate)", formatBytes(pred.peak)});
        out += tableHeading(fmt::format("Predicted by the analytic model ({} parameters)",
                                        parameterCount(r.spec.bench.model)),
                            f) +
               renderTable(model, f);
    } else {
        const int64_t P = r.parameter_count;
        Table exact{
            {"tensors", "bytes", "per parameter", "predicted"}, {false, true, true, true}, {}};
        exact.rows.push_back({"parameters", fmt::format("{}", r.parameter_bytes),
                              fmt::format("{:.3f}", static_cast<double>(r.parameter_bytes) / P),
                              fmt::format("{}", pred.parameters)});
        exact.rows.push_back({"gradients", fmt::format("{}", r.gradient_bytes),
                              fmt::format("{:.3f}", static_cast<double>(r.gradient_bytes) / P),
                              fmt::format("{}", pred.gradients)});
        exact.rows.push_back({"optimizer state", fmt::format("{}", r.optimizer_bytes),
                              fmt::format("{:.3f}", static_cast<double>(r.optimizer_bytes) / P),
                              fmt::format("{}", pred.optimizer_state)});
        out += tableHeading(
                   fmt::format("The model's and AdamW's tensors ({} parameters), exactly", P), f) +
               renderTable(exact, f);
    }
    if (r.frontier) {
        const FrontierResult& fr = *r.frontier;
        // A probe that failed for another reason than memory (an unsupported head dimension)
        // ends the search: say that, not that nothing fits.
        const FrontierProbe* stopped =
            !fr.probes.empty() && !fr.probes.back().fits && fr.probes.back().status != Status::OOM
                ? &fr.probes.back()
                : nullptr;
        std::string verdict =
            stopped
                ? fmt::format("stopped: {} {} failed for another reason than memory{}",
                              toString(fr.axis), stopped->value,
                              fr.largest_fit > 0 ? fmt::format(" ({} fits)", fr.largest_fit) : "")
            : fr.largest_fit == 0 ? fmt::format("not even {} fits", fr.lo)
            : fr.smallest_oom == 0
                ? fmt::format("{} fits (the search's upper end)", fr.largest_fit)
                : fmt::format("{} fits, {} does not", fr.largest_fit, fr.smallest_oom);
        Table probes{{toString(fr.axis) == "context" ? "context" : "batch", "fits", "status",
                      "peak", "error"},
                     {true, false, false, true, false},
                     {}};
        for (const auto& pr : fr.probes)
            probes.rows.push_back({fmt::format("{}", pr.value), pr.fits ? "yes" : "no",
                                   std::string(toString(pr.status)),
                                   pr.peak_bytes > 0 ? formatBytes(pr.peak_bytes) : "-", pr.error});
        out += tableHeading(fmt::format("OOM frontier by {}: {}", toString(fr.axis), verdict), f) +
               renderTable(probes, f);
        if (fr.oom_trace)
            if (const auto failed = failedAllocation(*fr.oom_trace, analyzeMemory(*fr.oom_trace)))
                out += fmt::format("{}The allocation that failed at {} {}: {}.\n",
                                   f == TableFormat::Markdown ? "\n" : "", toString(fr.axis),
                                   fr.smallest_oom, describeFailedAllocation(*failed));
    }
    return out;
}

std::string formatMemoryComparison(const MemoryResult& a, const MemoryResult& b,
                                   TableFormat format) {
    const bool csv = format == TableFormat::Csv;
    auto bytes = [&](int64_t v) { return csv ? fmt::format("{}", v) : formatBytes(v); };
    auto diff = [&](int64_t v) { return csv ? fmt::format("{}", v) : signedBytes(v); };
    const MemoryAnalysis aa = analyzeMemory(a.trace), ab = analyzeMemory(b.trace);
    const auto ca = compareWithPrediction(a, aa), cb = compareWithPrediction(b, ab);
    Table t{
        csv ? std::vector<std::string>{"category", "a_peak_bytes", "b_peak_bytes",
                                       "b_minus_a_bytes", "a_predicted_bytes", "b_predicted_bytes"}
            : std::vector<std::string>{"category", "A at the peak", "B at the peak", "B - A",
                                       "A predicted", "B predicted"},
        {false, true, true, true, true, true},
        {}};
    for (size_t i = 0; i < ca.size(); ++i)
        t.rows.push_back({std::string(toString(ca[i].category)), bytes(ca[i].measured),
                          bytes(cb[i].measured), diff(cb[i].measured - ca[i].measured),
                          bytes(ca[i].predicted), bytes(cb[i].predicted)});
    t.rows.push_back({"peak allocated", bytes(aa.peak.allocated), bytes(ab.peak.allocated),
                      diff(ab.peak.allocated - aa.peak.allocated),
                      bytes(predictMemory(a.spec.bench).peak),
                      bytes(predictMemory(b.spec.bench).peak)});
    t.rows.push_back({"reserved at the peak", bytes(aa.peak.reserved), bytes(ab.peak.reserved),
                      diff(ab.peak.reserved - aa.peak.reserved), "", ""});
    t.rows.push_back({"parameters (exact)", bytes(a.parameter_bytes), bytes(b.parameter_bytes),
                      diff(b.parameter_bytes - a.parameter_bytes), "", ""});
    t.rows.push_back({"gradients (exact)", bytes(a.gradient_bytes), bytes(b.gradient_bytes),
                      diff(b.gradient_bytes - a.gradient_bytes), "", ""});
    t.rows.push_back({"optimizer state (exact)", bytes(a.optimizer_bytes), bytes(b.optimizer_bytes),
                      diff(b.optimizer_bytes - a.optimizer_bytes), "", ""});
    if (csv) return renderTable(t, format);  // one table: the categories at the peaks
    // Phase by phase: each phase's highest moment, by category, and what B saves (or costs).
    Table phases{{"phase", "category", "A", "B", "B - A", "share of B - A"},
                 {false, false, true, true, true, true},
                 {}};
    for (const auto& row : comparePhases(a.trace, aa, b.trace, ab))
        phases.rows.push_back({phaseComparisonName(row.phase),
                               row.category ? std::string(toString(*row.category)) : "total",
                               row.a_present ? bytes(row.a) : "n/a",
                               row.b_present ? bytes(row.b) : "n/a",
                               row.a_present && row.b_present ? diff(row.b - row.a) : "",
                               row.share ? fmt::format("{:.0f}%", 100.0 * *row.share) : ""});
    std::string out =
        format == TableFormat::Markdown ? "## Memory compared\n\n" : "memory compared\n";
    out +=
        fmt::format("A: {} ({}{}), peak in {}\n", memoryHeadline(a), toString(a.status),
                    a.error.empty() ? "" : ": " + a.error, phaseStep(aa.peak.phase, aa.peak.step));
    out +=
        fmt::format("B: {} ({}{}), peak in {}\n", memoryHeadline(b), toString(b.status),
                    b.error.empty() ? "" : ": " + b.error, phaseStep(ab.peak.phase, ab.peak.step));
    return out + tableHeading("By category", format) + renderTable(t, format) + "\n" +
           tableHeading("Phase by phase (each phase's highest moment)", format) +
           renderTable(phases, format);
}

namespace {

MemoryResult memoryFromRow(const std::string& s) { return memoryResultFromJson(parseJson(s)); }

std::string memoryRunReport(const RunInfo& info, const std::vector<StoredRow>& rows,
                            ReportFormat format) {
    const auto results = parseRows<MemoryResult>(info, rows, memoryFromRow);
    if (format == ReportFormat::Json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : results) arr.push_back(toJson(r));
        return dumpJson(nlohmann::json{{"id", info.id},
                                       {"kind", info.lab},
                                       {"label", info.label},
                                       {"created", info.created},
                                       {"results", arr}},
                        2) +
               "\n";
    }
    const TableFormat tf = format == ReportFormat::Markdown ? TableFormat::Markdown
                           : format == ReportFormat::Csv    ? TableFormat::Csv
                                                            : TableFormat::Text;
    // CSV of a run: the peak table (one row per point); the timeline is `memory --csv`'s.
    if (tf == TableFormat::Csv) return memoryPeakTable(results, tf);
    std::string out;
    if (format == ReportFormat::Table) out = runHeadline(info, results.size(), "point") + "\n";
    if (format == ReportFormat::Markdown)
        out = fmt::format("# TrainScope run {}{}\n", info.id,
                          info.label.empty() ? "" : " — " + markdownText(info.label));
    out += tableHeading("Peak memory by point", tf) + memoryPeakTable(results, tf) + "\n";
    MemoryReportOptions o;
    o.format = tf;
    for (const auto& r : results) {
        out += formatMemory(r, o) + "\n";
        out += formatEnvironment(r.environment, tf) + "\n";
    }
    return out;
}

}  // namespace

MemoryResult storedMemoryPoint(const RunInfo& run, const std::vector<StoredRow>& rows, int point) {
    for (const auto& row : rows) {
        if (row.index != point) continue;
        try {
            return memoryFromRow(row.result_json);
        } catch (const std::exception& e) {
            throw std::runtime_error(rowError(run, row, e.what()));
        }
    }
    throw std::runtime_error(
        fmt::format("run {} has no point {} ({} stored)", run.id, point, rows.size()));
}

Lab memoryLab() { return {kMemoryLab, "Memory", memoryRunReport, rowProblemOf(memoryFromRow)}; }

}  // namespace ts
