#include "benchmark/benchmark_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "benchmark/benchmark_json.h"
#include "core/json.h"
#include "core/sweep.h"
#include "core/table.h"

namespace ts {
namespace {

struct Column {
    std::string header;
    std::function<std::string(const BenchResult&)> text;  // for Text and Markdown
    std::function<std::string(const BenchResult&)> csv;   // raw value
    bool right_align = true;
};

std::string timeCell(const BenchResult& r, const Stats& s, bool applies) {
    if (r.status == Status::OOM) return "OOM";
    if (r.status == Status::Failed) return "failed";
    if (!applies || s.count == 0) return "-";
    return fmt::format("{:.2f} ± {:.2f}", s.mean, s.std);
}

// The CPU records no device memory: its 0 bytes are no measurement, so they read "n/a".
bool measuresDeviceMemory(const PointConfig& c) { return c.device.rfind("cuda", 0) == 0; }

std::string mib(const BenchResult& r) {
    if (!measuresDeviceMemory(r.config)) return "n/a";
    return r.peak_memory > 0 ? fmt::format("{:.0f}", r.peak_memory / 1048576.0) : "-";
}

// CSV: empty where nothing was measured (the CPU; a point that failed before its first step).
std::string memoryBytes(const BenchResult& r) {
    return measuresDeviceMemory(r.config) && r.peak_memory > 0 ? fmt::format("{}", r.peak_memory)
                                                               : std::string();
}

std::vector<Column> columns(const std::vector<BenchResult>& results, bool all) {
    auto num = [](auto f) { return [f](const BenchResult& r) { return fmt::format("{}", f(r)); }; };
    std::vector<Column> cols = {
        {"size", num([](const BenchResult& r) { return r.config.model.name; }), {}, false},
        {"d_model", num([](const BenchResult& r) { return r.config.model.d_model; }), {}},
        {"d_ff", num([](const BenchResult& r) { return r.config.model.d_ff; }), {}},
        {"layers", num([](const BenchResult& r) { return r.config.model.num_layers; }), {}},
        {"heads", num([](const BenchResult& r) { return r.config.model.num_heads; }), {}},
    };
    // Configuration columns shown only when they vary (or always, for CSV).
    struct Optional {
        const char* header;
        std::function<std::string(const BenchResult&)> f;
        bool right;
    };
    // The parameter count, then every dimension but the size (its columns are above), as the
    // point's table names them (see Note [point dimensions]).
    std::vector<Optional> optional = {
        {"params", num([](const BenchResult& r) { return r.parameter_count; }), true}};
    for (const auto& d : pointDimensions())
        if (d.id() != Dimension::Size)
            optional.push_back({d.key.data(),
                                [get = d.get](const BenchResult& r) { return get(r.config); },
                                d.kind == DimensionDef::Kind::Integer});
    // Whose code ran is always said where it was the user's.
    const bool any_python = std::any_of(results.begin(), results.end(), [](const BenchResult& r) {
        return r.config.source == Source::Python;
    });
    for (const auto& o : optional) {
        bool varies = false;
        for (const auto& r : results) varies |= o.f(r) != o.f(results.front());
        if (all || varies || (any_python && std::string_view(o.header) == "source"))
            cols.push_back({o.header, o.f, {}, o.right});
    }
    const bool any_backward = std::any_of(results.begin(), results.end(), [](const BenchResult& r) {
        return r.config.mode != Mode::Forward;
    });
    const bool any_optimizer =
        std::any_of(results.begin(), results.end(),
                    [](const BenchResult& r) { return r.config.mode == Mode::Train; });
    auto timeCol = [](const char* header, Stats BenchResult::*stats, auto applies) {
        return Column{header,
                      [=](const BenchResult& r) { return timeCell(r, r.*stats, applies(r)); },
                      [=](const BenchResult& r) {
                          const Stats& s = r.*stats;
                          return s.count && applies(r) ? fmt::format("{:.4f},{:.4f}", s.mean, s.std)
                                                       : std::string(",");
                      }};
    };
    cols.push_back(
        timeCol("forward (ms)", &BenchResult::forward, [](const BenchResult&) { return true; }));
    if (all || any_backward)
        cols.push_back(timeCol("backward (ms)", &BenchResult::backward, [](const BenchResult& r) {
            return r.config.mode != Mode::Forward;
        }));
    if (all || any_optimizer)
        cols.push_back(timeCol("optimizer (ms)", &BenchResult::optimizer,
                               [](const BenchResult& r) { return r.config.mode == Mode::Train; }));
    cols.push_back(
        timeCol("total (ms)", &BenchResult::total, [](const BenchResult&) { return true; }));
    // Model FLOPs (forward + backward) over their measured time, and its share of the GPU's
    // dense peak where the GPU is known.
    cols.push_back({"TFLOP/s",
                    [](const BenchResult& r) {
                        const auto t = achievedTflops(r);
                        return t ? fmt::format("{:.3g}", *t) : std::string("-");
                    },
                    [](const BenchResult& r) {
                        const auto t = achievedTflops(r);
                        return t ? fmt::format("{:.4g}", *t) : std::string();
                    }});
    cols.push_back({"% peak",
                    [](const BenchResult& r) {
                        const auto p = peakShare(r);
                        return p ? fmt::format("{:.0f}%", 100.0 * *p) : std::string("-");
                    },
                    [](const BenchResult& r) {
                        const auto p = peakShare(r);
                        return p ? fmt::format("{:.4f}", *p) : std::string();
                    }});
    // Compiled against eager (the course's compile tables): where the results hold both modes of
    // a configuration, the compiled row gets eager's total time over its own.
    auto eager = std::make_shared<std::map<std::string, const BenchResult*>>();
    for (const auto& r : results)
        if (r.config.exec == ExecMode::Eager) eager->emplace(toJson(r.config).dump(), &r);
    const auto speedup = [eager](const BenchResult& r) -> std::optional<double> {
        if (r.config.exec == ExecMode::Eager || r.status != Status::Ok || r.total.count == 0 ||
            r.total.mean <= 0)
            return std::nullopt;
        PointConfig c = r.config;
        c.exec = ExecMode::Eager;
        const auto it = eager->find(toJson(c).dump());
        if (it == eager->end() || it->second->status != Status::Ok || it->second->total.count == 0)
            return std::nullopt;
        return it->second->total.mean / r.total.mean;
    };
    const bool any_speedup = std::any_of(results.begin(), results.end(), [&](const BenchResult& r) {
        return speedup(r).has_value();
    });
    if (all || any_speedup)
        cols.push_back({"vs eager",
                        [speedup](const BenchResult& r) {
                            const auto x = speedup(r);
                            return x ? fmt::format("{:.2f}×", *x) : std::string("-");
                        },
                        [speedup](const BenchResult& r) {
                            const auto x = speedup(r);
                            return x ? fmt::format("{:.4f}", *x) : std::string();
                        }});
    // The compilation, apart from the steps (torch.compile's, or our compiled mode's capture).
    const bool any_compile = std::any_of(results.begin(), results.end(), [](const BenchResult& r) {
        return compileSeconds(r).has_value();
    });
    if (all || any_compile)
        cols.push_back({"compile (s)",
                        [](const BenchResult& r) {
                            const auto c = compileSeconds(r);
                            return c ? fmt::format("{:.1f}", *c) : std::string("-");
                        },
                        [](const BenchResult& r) {
                            const auto c = compileSeconds(r);
                            return c ? fmt::format("{:.3f}", *c) : std::string();
                        }});
    cols.push_back({"peak MiB", mib, memoryBytes});
    cols.push_back({"status",
                    [](const BenchResult& r) { return std::string(toString(r.status)); },
                    {},
                    false});
    // See Note [noisy measurement]: shown when any result is noisy (always in CSV).
    const bool any_noisy = std::any_of(results.begin(), results.end(), [](const BenchResult& r) {
        return noiseFlag(r).has_value();
    });
    if (all || any_noisy)
        cols.push_back({"noise", noiseText,
                        [](const BenchResult& r) { return csvEscape(noiseText(r)); }, false});
    return cols;
}

std::string csvTable(const std::vector<BenchResult>& results) {
    // See Note [tables other programs read]: every column, raw numbers with units in the header.
    auto cols = columns(results, true);
    std::string out;
    std::vector<std::string> headers;
    for (const auto& c : cols) {
        if (c.header.find("(ms)") != std::string::npos) {
            const std::string base = c.header.substr(0, c.header.find(' '));
            headers.push_back(base + "_ms_mean");
            headers.push_back(base + "_ms_std");
        } else if (c.header == "peak MiB") {
            headers.push_back("peak_memory_bytes");
        } else if (c.header == "TFLOP/s") {
            headers.push_back("tflops");
        } else if (c.header == "% peak") {
            headers.push_back("peak_share");
        } else if (c.header == "vs eager") {
            headers.push_back("speedup_vs_eager");
        } else {
            headers.push_back(csvName(c.header));  // "compile (s)" → "compile_s"
        }
    }
    headers.push_back("error");
    out += fmt::format("{}\n", fmt::join(headers, ","));
    for (const auto& r : results) {
        std::vector<std::string> cells;
        for (const auto& c : cols) cells.push_back(c.csv ? c.csv(r) : csvEscape(c.text(r)));
        cells.push_back(csvEscape(r.error));
        out += fmt::format("{}\n", fmt::join(cells, ","));
    }
    return out;
}

}  // namespace

std::string sharedSettings(const std::vector<BenchResult>& results) {
    if (results.empty()) return {};
    // Every dimension but the size (its columns say it) whose value all rows share, as the
    // point's table names it (see Note [point dimensions]).
    std::vector<std::string> items;
    for (const auto& d : pointDimensions()) {
        if (d.id() == Dimension::Size) continue;
        const std::string v = d.get(results.front().config);
        const bool shared = std::all_of(results.begin(), results.end(),
                                        [&](const BenchResult& r) { return d.get(r.config) == v; });
        if (shared) items.push_back(fmt::format("{} {}", d.name, v));
    }
    return fmt::format("{}", fmt::join(items, ", "));
}

std::string formatResults(const std::vector<BenchResult>& results, TableFormat format) {
    if (format == TableFormat::Csv) return csvTable(results);
    if (results.empty()) return "(no results)\n";
    const bool md = format == TableFormat::Markdown;
    auto cols = columns(results, false);
    TextTable t;
    for (const auto& c : cols) {
        t.headers.push_back(c.header);
        t.right.push_back(c.right_align);
    }
    for (const auto& r : results) {
        std::vector<std::string> row;
        for (const auto& c : cols) row.push_back(c.text(r));
        t.rows.push_back(std::move(row));
    }
    std::string out;
    // The settings every row shares, left out of the table, said above it.
    // See Note [tables other programs read].
    if (md)
        out += fmt::format("Settings of every row: {}.\n\n", markdownText(sharedSettings(results)));
    out += renderTable(t, format);
    // Note [two model tables]: which edition's xl this is, said under the table.
    std::vector<std::string> names;
    for (const auto& r : results) names.push_back(r.config.model.name);
    if (const std::string note = modelTableNote(names); !note.empty())
        out += (md ? "\n" : "") + note + (md ? ".\n" : "\n");
    return out;
}

std::string markdownReport(const std::string& title, const std::vector<BenchResult>& results) {
    std::string out = fmt::format("# {}\n\n", markdownText(title));
    if (results.empty()) return out + "No results.\n";
    out += "## Environment\n\n" +
           formatEnvironment(results.front().environment, TableFormat::Markdown);
    out +=
        "\n## Results\n\nTimes are mean ± sample standard deviation over the measured steps "
        "(warm-up steps excluded).\n\n";
    // The user's code, named once (its points' source column says which rows are its).
    std::vector<std::string> codes;
    for (const auto& r : results)
        if (r.config.source == Source::Python &&
            std::find(codes.begin(), codes.end(), r.config.python.code) == codes.end())
            codes.push_back(r.config.python.code);
    for (const auto& c : codes)
        out += fmt::format("Your code (source python): {}.\n\n", markdownText(c));
    out += formatResults(results, TableFormat::Markdown);
    for (const auto& r : results) {
        if (r.error.empty()) continue;
        // A user's traceback (the Python source) goes below its first line, as code.
        const size_t nl = r.error.find('\n');
        out += fmt::format("\n- {} {}: {}\n", markdownText(r.config.model.name), toString(r.status),
                           markdownText(r.error.substr(0, nl)));
        if (nl != std::string::npos) out += fmt::format("\n```\n{}\n```\n", r.error.substr(nl + 1));
    }
    out +=
        "\n## Steps\n\n| point | step | warm-up | forward (ms) | backward (ms) | optimizer (ms) | "
        "total (ms) | loss |\n"
        "|---:|---:|:---:|---:|---:|---:|---:|---:|\n";
    for (size_t p = 0; p < results.size(); ++p)
        for (const auto& s : results[p].steps)
            out += fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.4f} |\n",
                               p + 1, s.index, s.warmup ? "yes" : "", s.forward_ms, s.backward_ms,
                               s.optimizer_ms, s.total_ms, s.loss);
    return out;
}

namespace {
BenchResult benchFromRow(const std::string& s) { return resultFromJson(parseJson(s)); }
}  // namespace

std::vector<BenchResult> benchResultsFromRows(const RunInfo& run,
                                              const std::vector<StoredRow>& rows) {
    return parseRows<BenchResult>(run, rows, benchFromRow);
}

std::string benchRunReport(const RunInfo& info, const std::vector<StoredRow>& rows,
                           ReportFormat format) {
    const auto results = benchResultsFromRows(info, rows);
    switch (format) {
        case ReportFormat::Json: {
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
        case ReportFormat::Markdown:
            return markdownReport(fmt::format("TrainScope run {}{}", info.id,
                                              info.label.empty() ? "" : " — " + info.label),
                                  results);
        case ReportFormat::Csv:
            return formatResults(results, TableFormat::Csv);
        case ReportFormat::Table:
            break;
    }
    std::string out = runHeadline(info, results.size(), "point") + "\n\n" +
                      formatResults(results, TableFormat::Text);
    if (!results.empty())
        out += "\n" + formatEnvironment(results.front().environment, TableFormat::Text);
    return out;
}

Lab benchmarkLab() {
    return {kBenchLab, "End-to-end benchmark", benchRunReport, rowProblemOf(benchFromRow)};
}

}  // namespace ts
