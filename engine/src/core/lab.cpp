#include "core/lab.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/table.h"

namespace ts {

const Lab* findLab(std::string_view id) {
    for (const Lab& lab : labs())
        if (lab.id == id) return &lab;
    return nullptr;
}

std::string rowError(const RunInfo& run, const StoredRow& row, const char* what) {
    return fmt::format("run {} point {}: {}", run.id, row.index + 1, what);
}

namespace {
// The length of the valid UTF-8 sequence at s[i], or 0 when there is none.
size_t utf8Length(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
    if (n == 0 || c == 0xC0 || c == 0xC1 || c > 0xF4 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
    return n;
}
}  // namespace

std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const size_t n = utf8Length(s, i);
        if (n == 0) {
            out += fmt::format("\\x{:02x}", c);
            ++i;
            continue;
        }
        if (n == 1 && (c < 0x20 || c == 0x7f)) {
            out += c == '\n'   ? "\\n"
                   : c == '\t' ? "\\t"
                   : c == '\r' ? "\\r"
                               : fmt::format("\\x{:02x}", c);
        } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
            out += fmt::format("\\u{:04x}",
                               static_cast<unsigned char>(s[i + 1]));  // C1: U+0080..U+009F
        } else {
            out.append(s.substr(i, n));
        }
        i += n;
    }
    return out;
}

std::string printableLines(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t start = 0; start <= text.size();) {
        const size_t end = std::min(text.find('\n', start), text.size());
        out += printable(text.substr(start, end - start));
        if (end < text.size()) out += '\n';
        start = end + 1;
    }
    return out;
}

std::string runHeadline(const RunInfo& run, size_t row_count, std::string_view rows_word) {
    // See Note [unfinished runs]: a run that never ended says so, beside what it stored.
    const std::string unfinished =
        run.finished() || run.id == 0 ? ""
        : run.planned > 0 ? fmt::format(" — not finished: {} of {} planned points stored",
                                        run.point_count, run.planned)
                          : std::string(" — not finished");
    return fmt::format("run {} ({}), {} on {} — {} {}(s){}{}", run.id, printable(run.lab),
                       printable(run.created), printable(run.device_name), row_count, rows_word,
                       run.label.empty() ? "" : ", " + printable(run.label), unfinished);
}

std::string csvEscape(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string specSettings(const RunInfo& run) {
    std::vector<std::string> items;
    try {
        const auto spec = nlohmann::json::parse(run.spec_json);
        if (!spec.is_object()) return {};
        for (const auto& [key, value] : spec.items()) {
            if (key == "command") continue;
            if (value.is_string())
                items.push_back(fmt::format("{} {}", key, value.get<std::string>()));
            else if (value.is_boolean())
                items.push_back(fmt::format("{} {}", key, value.get<bool>() ? "yes" : "no"));
            else if (value.is_number())
                items.push_back(fmt::format("{} {}", key, value.dump()));
        }
    } catch (const nlohmann::json::exception&) {
        return {};
    }
    return fmt::format("{}", fmt::join(items, ", "));
}

std::vector<std::string> runCsvTables(const Lab& lab, const RunInfo& run,
                                      const std::vector<StoredRow>& rows) {
    if (!lab.csv_tables) return {"results"};
    std::vector<std::string> names;
    for (const auto& t : lab.csv_tables(run, rows)) names.push_back(t.name);
    return names;
}

std::string runCsv(const Lab& lab, const RunInfo& run, const std::vector<StoredRow>& rows,
                   const std::string& table) {
    if (!lab.csv_tables) {
        if (!table.empty() && table != "results")
            throw std::invalid_argument(
                fmt::format("--table: run {} ({}) has one table, results; '{}' is not one", run.id,
                            run.lab, table));
        return lab.report(run, rows, ReportFormat::Csv);
    }
    return pickCsvTable(lab.csv_tables(run, rows), table,
                        fmt::format("run {} ({})", run.id, run.lab));
}

std::string pickCsvTable(const std::vector<CsvTable>& tables, const std::string& name,
                         const std::string& whose) {
    if (tables.empty()) return {};
    if (name.empty()) return tables.front().csv;
    std::vector<std::string> names;
    for (const auto& t : tables) {
        if (t.name == name) return t.csv;
        names.push_back(t.name);
    }
    throw std::invalid_argument(fmt::format("--table: {} has no table '{}' (it has: {})", whose,
                                            name, fmt::join(names, ", ")));
}

std::string cudaLine(const Environment& e) {
    if (e.cuda_version.empty()) return "-";
    // No driver: no GPU took part; the version is only what LibTorch was built with.
    return e.driver_version.empty() ? e.cuda_version + " (LibTorch's build; no GPU)"
                                    : e.cuda_version;
}

std::string formatEnvironment(const Environment& e, TableFormat format) {
    const std::pair<const char*, std::string> items[] = {
        {"device", e.device_name},
        {"driver", e.driver_version.empty() ? "-" : e.driver_version},
        {"CUDA", cudaLine(e)},
        {"LibTorch", e.torch_version},
        {"CPU", e.cpu},
        {"host", e.hostname},
        {"date", e.date},
        {"TrainScope", fmt::format("{} ({})", e.trainscope_version, e.git_commit)},
    };
    std::string out;
    for (const auto& [k, v] : items) {
        switch (format) {
            case TableFormat::Text:
                out += fmt::format("{:<12}{}\n", std::string(k) + ":", v);
                break;
            case TableFormat::Markdown:
                out += fmt::format("- **{}**: {}\n", k, markdownText(v));
                break;
            case TableFormat::Csv:
                out += fmt::format("{},{}\n", k, csvEscape(v));
                break;
        }
    }
    return out;
}

}  // namespace ts
