#include "profiler/profiler_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/table.h"
#include "profiler/profiler_json.h"

namespace ts {
namespace {

using Table = TextTable;

// Long C++ kernel names fill a screen; the tables cut them (CSV keeps them whole).
std::string shortName(const std::string& name, TableFormat format) {
    constexpr size_t kMax = 90;
    if (format == TableFormat::Csv || displayWidth(name) <= kMax) return name;
    return name.substr(0, kMax - 3) + "...";
}

std::string fmtFlops(double f) {
    if (f <= 0) return "";
    if (f >= 1e12) return fmt::format("{:.2f} T", f / 1e12);
    if (f >= 1e9) return fmt::format("{:.2f} G", f / 1e9);
    if (f >= 1e6) return fmt::format("{:.2f} M", f / 1e6);
    return fmt::format("{:.0f}", f);
}

Table kernelRows(const std::vector<KernelRow>& rows, int top, TableFormat format) {
    Table t{{"time %", "total (us)", "instances", "avg (us)", "median (us)", "min (us)", "max (us)",
             "std (us)", "category", "kernel"},
            {true, true, true, true, true, true, true, true, false, false},
            {}};
    for (size_t i = 0; i < rows.size() && (top <= 0 || i < static_cast<size_t>(top)); ++i) {
        const auto& r = rows[i];
        t.rows.push_back({fmt::format("{:.1f}", r.percent), fmt::format("{:.1f}", r.total_us),
                          fmt::format("{}", r.instances), fmt::format("{:.2f}", r.avg_us),
                          fmt::format("{:.2f}", r.median_us), fmt::format("{:.2f}", r.min_us),
                          fmt::format("{:.2f}", r.max_us), fmt::format("{:.2f}", r.std_us),
                          std::string(toString(r.category)), shortName(r.name, format)});
    }
    return t;
}

Table opRows(const std::vector<OpRow>& rows, int top, bool gpu, TableFormat format) {
    Table t{{"op", "calls", "CPU self (us)", "CPU total (us)", gpu ? "CUDA (us)" : "device (us)",
             "FLOPs", "TFLOP/s", "input shapes"},
            {false, true, true, true, true, true, true, false},
            {}};
    const bool csv = format == TableFormat::Csv;
    for (size_t i = 0; i < rows.size() && (top <= 0 || i < static_cast<size_t>(top)); ++i) {
        const auto& r = rows[i];
        t.rows.push_back(
            {shortName(r.name, format), fmt::format("{}", r.calls),
             fmt::format("{:.1f}", r.cpu_self_us), fmt::format("{:.1f}", r.cpu_total_us),
             gpu   ? fmt::format("{:.1f}", r.device_us)
             : csv ? ""
                   : "-",
             csv ? (r.flops > 0 ? fmt::format("{:.0f}", r.flops) : "") : fmtFlops(r.flops),
             r.tflops > 0 ? fmt::format("{:.3g}", r.tflops) : "", r.shapes});
    }
    return t;
}

// The CPU's table: ops by self time (no kernels to rank).
std::vector<OpRow> bySelfTime(std::vector<OpRow> rows) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.cpu_self_us > b.cpu_self_us; });
    return rows;
}

// See Note [tables other programs read]: every kernel (on the CPU: op), "total (us)" → "total_us".
Table csvRows(const ProfileResult& r, const EventFilter& f) {
    Table t = r.gpu ? kernelRows(kernelTable(r.trace.kernels, f), 0, TableFormat::Csv)
                    : opRows(opTable(r.trace.ops, f, false), 0, false, TableFormat::Csv);
    for (auto& h : t.headers) h = csvName(h);
    return t;
}

std::string_view kindName(CallNodeKind k) {
    switch (k) {
        case CallNodeKind::Root:
            return "all";
        case CallNodeKind::Phase:
            return "phase";
        case CallNodeKind::Range:
            return "range";
        case CallNodeKind::Op:
            return "op";
    }
    return "op";
}

// The call tree's rows (See Note [call tree]): text and Markdown indent the names by depth;
// CSV gives the depth and the whole path instead, with raw numbers.
Table callTreeTable(const CallTree& tree, const std::vector<int>& rows, bool gpu,
                    TableFormat format) {
    const bool csv = format == TableFormat::Csv;
    Table t{{"name", "kind", "inclusive (ms)", "self (ms)", "share", "calls"},
            {false, false, true, true, true, true},
            {}};
    if (gpu) {
        t.headers.push_back("device (ms)");
        t.right.push_back(true);
    }
    if (csv) {
        t.headers = {"depth", "path", "name", "kind", "inclusive_ms", "self_ms", "share", "calls"};
        t.right = {true, false, false, false, true, true, true, true};
        if (gpu) {
            t.headers.push_back("device_ms");
            t.right.push_back(true);
        }
    }
    const double total = tree.nodes.empty() ? 0 : tree.nodes[0].inclusive_us;
    for (int id : rows) {
        const CallTreeNode& n = tree.nodes[static_cast<size_t>(id)];
        const double share = total > 0 ? n.inclusive_us / total : 0;
        std::vector<std::string> row;
        if (csv) {
            row = {fmt::format("{}", n.depth),
                   tree.path(id),
                   n.name,
                   std::string(kindName(n.kind)),
                   csvNumber(n.inclusive_us / 1e3),
                   csvNumber(n.self_us / 1e3),
                   csvNumber(share),
                   n.kind == CallNodeKind::Op ? fmt::format("{}", n.calls) : ""};
            if (gpu) row.push_back(csvNumber(n.device_us / 1e3));
        } else {
            // Markdown collapses leading blanks: the depth is drawn with dots there.
            const std::string indent = format == TableFormat::Markdown
                                           ? std::string(static_cast<size_t>(n.depth) * 2, '.')
                                           : std::string(static_cast<size_t>(n.depth) * 2, ' ');
            row = {indent + shortName(n.name, format),
                   std::string(kindName(n.kind)),
                   fmt::format("{:.3f}", n.inclusive_us / 1e3),
                   fmt::format("{:.3f}", n.self_us / 1e3),
                   fmt::format("{:.1f}%", 100.0 * share),
                   n.kind == CallNodeKind::Op ? fmt::format("{}", n.calls) : ""};
            if (gpu) row.push_back(fmt::format("{:.3f}", n.device_us / 1e3));
        }
        t.rows.push_back(std::move(row));
    }
    return t;
}

std::string filterTitle(const EventFilter& f) {
    std::string out = f.phase ? std::string(toString(*f.phase)) : "whole step";
    if (!f.range.empty()) out += ", range " + f.range;
    return out;
}

std::string topTable(const ProfileResult& r, const EventFilter& f, const ProfileReportOptions& o) {
    if (r.gpu)
        return tableHeading(fmt::format("Top kernels — {}", filterTitle(f)), o.format) +
               renderTable(kernelRows(kernelTable(r.trace.kernels, f), o.top, o.format), o.format);
    return tableHeading(fmt::format("Top ops by self CPU time — {}", filterTitle(f)), o.format) +
           renderTable(opRows(bySelfTime(opTable(r.trace.ops, f, false)), o.top, false, o.format),
                       o.format);
}

}  // namespace

std::string profileHeadline(const ProfileResult& r) {
    if (!r.spec.imported.empty())
        return fmt::format(
            "{} (an imported trace{}), {} profiled step(s)", r.spec.imported,
            r.environment.device_name.empty() ? "" : ", " + r.environment.device_name,
            r.spec.profile_steps);
    const PointConfig& c = r.spec.bench;
    // Compiled: TrainScope's step as CUDA graphs, their kernels named by the capture (See Note
    // [a graph's kernels named by its capture]); the user's model under torch.compile.
    const char* exec = c.exec != ExecMode::Compiled ? ""
                       : c.source == Source::Python ? " compiled (torch.compile)"
                                                    : " compiled (CUDA graphs)";
    return fmt::format("{} ctx={} batch={} {} {} {}{} on {}, {} profiled step(s) after {} warm-up",
                       c.model.name, c.model.context_length, c.batch_size, toString(c.precision),
                       toString(c.attention), toString(c.mode), exec, c.device,
                       r.spec.profile_steps, c.warmup);
}

std::string formatProfile(const ProfileResult& r, const ProfileReportOptions& o) {
    const EventFilter& f = o.filter;
    if (o.format == TableFormat::Csv) return renderTable(csvRows(r, f), o.format);
    std::string out = o.format == TableFormat::Markdown
                          ? fmt::format("## Profile: {}\n", profileHeadline(r))
                          : fmt::format("profile: {}\n", profileHeadline(r));
    if (const std::string t =
            r.spec.imported.empty() ? modelTableNote({r.spec.bench.model.name}) : std::string();
        !t.empty())
        out += t + "\n";      // see Note [two model tables]
    if (r.graph_kernels > 0)  // See Note [a graph's kernels named by its capture]
        out += fmt::format(
            "CUDA graphs: {} of {} replayed kernels named by the capture's launch of the same "
            "order{}\n",
            r.graph_kernels_named, r.graph_kernels,
            r.graph_kernels_named == r.graph_kernels
                ? ""
                : " (the others keep their phase only: the counts or the GEMMs of their phase "
                  "disagreed)");
    if (r.status != Status::Ok) out += fmt::format("{}: {}\n", toString(r.status), r.error);
    if (r.trace.ops.empty() && r.trace.kernels.empty()) return out;

    Table phases{{"phase", "measured (ms)", r.gpu ? "kernel time (ms)" : "op time (ms)", "share",
                  "kernels", "model FLOPs/step", r.gpu ? "achieved over kernel time" : "achieved"},
                 {false, true, true, true, true, true, false},
                 {}};
    // An imported trace has no model to count FLOPs of (See Note [importing a trace]).
    const StepFlops flops = r.spec.imported.empty() ? stepFlops(r.spec.bench) : StepFlops{};
    int profiled = 0;
    for (const auto& s : r.steps) profiled += s.warmup ? 0 : 1;
    for (const auto& p : phaseTimes(r)) {
        if (p.profiled_us == 0 && p.measured_us == 0) continue;
        const double f = p.phase == Phase::Forward    ? flops.forward
                         : p.phase == Phase::Backward ? flops.backward
                                                      : 0;
        std::string achieved = "-";
        // On a GPU over the phase's kernel time: what the GPU did while busy. The phase's
        // measured time under the profiler holds the profiler's own CPU overhead (launches
        // slow down, the GPU waits: see the busy table), which is not the model's cost; the
        // benchmark's results give the unprofiled end-to-end rate.
        const double phase_us = r.gpu ? p.profiled_us : p.measured_us;
        if (f > 0 && phase_us > 0 && profiled > 0) {
            const double seconds = phase_us / 1e6 / profiled;
            achieved =
                r.gpu ? achievedText(f, seconds, r.environment.device_name, r.spec.bench.precision)
                      : fmt::format("{:.3g} TFLOP/s (CPU)", f / seconds / 1e12);
        }
        phases.rows.push_back(
            {std::string(toString(p.phase)),
             p.phase == Phase::Other ? "-" : fmt::format("{:.3f}", p.measured_us / 1000.0),
             fmt::format("{:.3f}", p.profiled_us / 1000.0),
             p.measured_us > 0 ? fmt::format("{:.0f}%", 100.0 * p.profiled_us / p.measured_us)
                               : "-",
             r.gpu ? fmt::format("{}", p.kernels) : "-", f > 0 ? fmtFlops(f) : "-", achieved});
    }
    out += tableHeading(fmt::format("Phases over {} profiled step(s): measured by the step's "
                                    "timer, and what the profiler saw",
                                    r.spec.profile_steps),
                        o.format) +
           renderTable(phases, o.format);

    const bool custom = f.phase || !f.range.empty();
    if (custom) {
        out += topTable(r, f, o);
    } else {
        out += topTable(r, {Phase::Forward, ""}, o);
        out += topTable(r, {}, o);
    }

    std::vector<OpRow> matmuls;
    for (auto& row : opTable(r.trace.ops, f, r.gpu))
        if (row.flops > 0) matmuls.push_back(std::move(row));
    if (!matmuls.empty())
        out += tableHeading(fmt::format("Matmuls — {}", filterTitle(f)), o.format) +
               renderTable(opRows(matmuls, o.top, r.gpu, o.format), o.format);

    const auto parts = attentionBreakdown(r);
    if (!parts.empty() && (!f.phase || *f.phase == Phase::Forward || *f.phase == Phase::Backward)) {
        Table t{{"phase", "part", r.gpu ? "kernel time (us/step)" : "op self time (us/step)",
                 r.gpu ? "kernels/step" : "ops/step", "FLOPs", "bytes (est.)", "ns per MFLOP"},
                {false, false, true, true, true, true, true},
                {}};
        for (const auto& a : parts)
            if (!f.phase || *f.phase == a.phase)
                t.rows.push_back({std::string(toString(a.phase)), a.part,
                                  fmt::format("{:.1f}", a.time_us),
                                  fmt::format("{:.3g}", a.kernels), fmtFlops(a.flops),
                                  fmt::format("{:.3g} MB", a.bytes / 1e6),
                                  fmt::format("{:.3g}", a.ns_per_mflop)});
        out += tableHeading("Attention, part by part (summed over layers)", o.format) +
               renderTable(t, o.format);
    }
    if (r.gpu && !f.phase && f.range.empty()) {
        Table t{{"step", "wall (ms)", "GPU busy (ms)", "idle (ms)", "busy", "launch-bound",
                 "gaps > 5 us", "longest gap (us)"},
                {true, true, true, true, true, true, true, true},
                {}};
        for (const auto& a : stepActivity(r))
            t.rows.push_back(
                {fmt::format("{}", a.step), fmt::format("{:.3f}", a.wall_us / 1000.0),
                 fmt::format("{:.3f}", a.busy_us / 1000.0),
                 fmt::format("{:.3f}", a.idle_us / 1000.0),
                 a.wall_us > 0 ? fmt::format("{:.0f}%", 100.0 * a.busy_us / a.wall_us) : "-",
                 fmt::format("{:.0f}%", 100.0 * a.launch_bound), fmt::format("{}", a.gap_count),
                 a.gaps.empty()
                     ? "-"
                     : fmt::format("{:.1f}", (a.gaps[0].end_ns - a.gaps[0].start_ns) / 1000.0)});
        if (!t.rows.empty())
            out += tableHeading("The GPU in each profiled step: busy against wall time", o.format) +
                   renderTable(t, o.format);
    }

    if (!f.phase && f.range.empty()) {
        // The top of the call tree: four levels below the phases, what takes 2% or more.
        const CallTree tree = callTree(r.trace);
        std::vector<int> rows = callTreeRows(tree, 6, 0.02);
        if (o.top > 0 && rows.size() > static_cast<size_t>(o.top) * 3)
            rows.resize(static_cast<size_t>(o.top) * 3);
        if (!rows.empty())
            out += tableHeading(
                       "Call tree: CPU time by phase, range and op (the top: 6 levels, "
                       "nodes of 2% or more)",
                       o.format) +
                   renderTable(callTreeTable(tree, rows, r.gpu, o.format), o.format);
    }
    Table cats{{"phase", "category", "time (ms)", "share"}, {false, false, true, true}, {}};
    for (const auto& c : categoryRollup(r))
        if (!f.phase || *f.phase == c.phase)
            cats.rows.push_back({std::string(toString(c.phase)), std::string(toString(c.category)),
                                 fmt::format("{:.3f}", c.time_us / 1000.0),
                                 fmt::format("{:.1f}%", 100.0 * c.share)});
    out += tableHeading(r.gpu ? "Kernel time by category" : "Op self time by category", o.format) +
           renderTable(cats, o.format);
    return out;
}

namespace {

ProfileResult profileFromRow(const std::string& s) { return profileResultFromJson(parseJson(s)); }

std::string profileRunReport(const RunInfo& info, const std::vector<StoredRow>& rows,
                             ReportFormat format) {
    const auto results = parseRows<ProfileResult>(info, rows, profileFromRow);
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
    ProfileReportOptions o;
    o.format = format == ReportFormat::Markdown ? TableFormat::Markdown
               : format == ReportFormat::Csv    ? TableFormat::Csv
                                                : TableFormat::Text;
    std::string out;
    if (format == ReportFormat::Csv) {
        // One table (see Note [tables other programs read]): every profile's rows under one
        // header, the profile's index first.
        Table all;
        for (size_t i = 0; i < results.size(); ++i) {
            Table t = csvRows(results[i], o.filter);
            if (all.headers.empty()) {
                all.headers = t.headers;
                all.headers.insert(all.headers.begin(), "profile");
            }
            for (auto& row : t.rows) {
                row.insert(row.begin(), fmt::format("{}", i));
                all.rows.push_back(std::move(row));
            }
        }
        return all.headers.empty() ? std::string() : renderTable(all, TableFormat::Csv);
    }
    if (format == ReportFormat::Table) out = runHeadline(info, results.size(), "profile") + "\n\n";
    if (format == ReportFormat::Markdown)
        out = fmt::format("# TrainScope run {}{}\n\n", info.id,
                          info.label.empty() ? "" : " — " + markdownText(info.label));
    for (const auto& r : results) {
        out += formatProfile(r, o);
        if (format != ReportFormat::Csv)
            out += "\n" + formatEnvironment(r.environment, o.format == TableFormat::Markdown
                                                               ? TableFormat::Markdown
                                                               : TableFormat::Text);
    }
    return out;
}

}  // namespace

std::string formatProfileDiff(const ProfileResult& a, const ProfileResult& b, TableFormat format,
                              int top) {
    const ProfileDiff d = diffProfiles(a, b);
    const bool csv = format == TableFormat::Csv;
    const std::string what = d.kernels ? "kernel" : "op";
    Table t{{what, "category", d.kernels ? "A (us/step)" : "A self CPU (us/step)",
             d.kernels ? "B (us/step)" : "B self CPU (us/step)", "B - A (us)", "B / A",
             "A calls/step", "B calls/step", "note"},
            {false, false, true, true, true, true, true, true, false},
            {}};
    for (size_t i = 0; i < d.rows.size() && (top <= 0 || i < static_cast<size_t>(top)); ++i) {
        const ProfileDiffRow& r = d.rows[i];
        if (csv)
            t.rows.push_back(
                {r.name, std::string(toString(r.category)), r.in_a ? csvNumber(r.a_us) : "",
                 r.in_b ? csvNumber(r.b_us) : "", csvNumber(r.delta_us), csvNumber(r.ratio),
                 r.in_a ? csvNumber(r.a_calls) : "", r.in_b ? csvNumber(r.b_calls) : "", r.note});
        else
            t.rows.push_back({shortName(r.name, format), std::string(toString(r.category)),
                              r.in_a ? fmt::format("{:.1f}", r.a_us) : "-",
                              r.in_b ? fmt::format("{:.1f}", r.b_us) : "-",
                              fmt::format("{:+.1f}", r.delta_us),
                              r.ratio ? fmt::format("{:.2f}x", *r.ratio) : "-",
                              r.in_a ? fmt::format("{:.3g}", r.a_calls) : "-",
                              r.in_b ? fmt::format("{:.3g}", r.b_calls) : "-", r.note});
    }
    if (csv) {
        t.headers = {what,    "category",         "a_us_per_step",    "b_us_per_step", "delta_us",
                     "ratio", "a_calls_per_step", "b_calls_per_step", "note"};
        return renderTable(t, format);
    }
    const bool md = format == TableFormat::Markdown;
    auto line = [&](const char* side, const ProfileResult& r, int steps) {
        return fmt::format(fmt::runtime(md ? "- **{}**: {} ({} profiled step(s) counted)\n"
                                           : "{}: {} ({} profiled step(s) counted)\n"),
                           side, md ? markdownText(profileHeadline(r)) : profileHeadline(r), steps);
    };
    std::string out = md ? "## Two profiles compared\n\n" : "Two profiles compared\n";
    out += line("A", a, d.a_steps) + line("B", b, d.b_steps);
    out +=
        fmt::format("{}{} time per profiled step: A {:.3f} ms, B {:.3f} ms, B - A {:+.3f} ms{}\n",
                    md ? "\n" : "", d.kernels ? "Kernel" : "Op self CPU", d.a_total_us / 1e3,
                    d.b_total_us / 1e3, (d.b_total_us - d.a_total_us) / 1e3,
                    d.a_total_us > 0 ? fmt::format(" ({:.2f}x)", d.b_total_us / d.a_total_us) : "");
    if (!d.kernels) out += "(ops by self CPU time: a CPU profile has no kernels)\n";
    return out + tableHeading(fmt::format("{}s by |B - A|", d.kernels ? "Kernel" : "Op"), format) +
           renderTable(t, format);
}

namespace {

// A table of every profile of a run under one header, the profile's index first.
std::string profilesCsv(const std::vector<ProfileResult>& results,
                        const std::function<Table(const ProfileResult&)>& table) {
    Table all;
    for (size_t i = 0; i < results.size(); ++i) {
        Table t = table(results[i]);
        if (all.headers.empty()) {
            all.headers = t.headers;
            all.headers.insert(all.headers.begin(), "profile");
        }
        for (auto& row : t.rows) {
            row.insert(row.begin(), fmt::format("{}", i));
            all.rows.push_back(std::move(row));
        }
    }
    return all.headers.empty() ? std::string() : renderTable(all, TableFormat::Csv);
}

}  // namespace

std::vector<CsvTable> profileCsvTables(const std::vector<ProfileResult>& results) {
    std::vector<CsvTable> out;
    bool gpu = false;
    for (const auto& r : results) gpu = gpu || r.gpu;
    // The first is the run's CSV as it always was: every kernel on a GPU, every op on the CPU.
    if (gpu)
        out.push_back({"kernels", profilesCsv(results, [](const ProfileResult& r) {
                           Table t =
                               kernelRows(kernelTable(r.trace.kernels, {}), 0, TableFormat::Csv);
                           for (auto& h : t.headers) h = csvName(h);
                           return t;
                       })});
    out.push_back({"ops", profilesCsv(results, [](const ProfileResult& r) {
                       Table t =
                           opRows(opTable(r.trace.ops, {}, r.gpu), 0, r.gpu, TableFormat::Csv);
                       for (auto& h : t.headers) h = csvName(h);
                       return t;
                   })});
    out.push_back({"calltree", profilesCsv(results, [](const ProfileResult& r) {
                       const CallTree tree = callTree(r.trace);
                       return callTreeTable(tree, callTreeRows(tree), r.gpu, TableFormat::Csv);
                   })});
    return out;
}

Lab profilerLab() {
    Lab lab{kProfileLab, "Profiler", profileRunReport, rowProblemOf(profileFromRow)};
    lab.csv_tables = [](const RunInfo& info, const std::vector<StoredRow>& rows) {
        return profileCsvTables(parseRows<ProfileResult>(info, rows, profileFromRow));
    };
    return lab;
}

}  // namespace ts
