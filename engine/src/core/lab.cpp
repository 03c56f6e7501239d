#include "core/lab.h"

#include <fmt/format.h>

namespace ts {

const Lab* findLab(std::string_view id) {
    for (const Lab& lab : labs())
        if (lab.id == id) return &lab;
    return nullptr;
}

std::string rowError(const RunInfo& run, const StoredRow& row, const char* what) {
    return fmt::format("run {} point {}: {}", run.id, row.index + 1, what);
}

std::string runHeadline(const RunInfo& run, size_t row_count, std::string_view rows_word) {
    return fmt::format("run {} ({}), {} on {} — {} {}(s){}", run.id, run.lab, run.created, run.device_name,
                       row_count, rows_word, run.label.empty() ? "" : ", " + run.label);
}

std::string csvEscape(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string formatEnvironment(const Environment& e, TableFormat format) {
    const std::pair<const char*, std::string> items[] = {
        {"device", e.device_name},   {"driver", e.driver_version.empty() ? "-" : e.driver_version},
        {"CUDA", e.cuda_version.empty() ? "-" : e.cuda_version},
        {"LibTorch", e.torch_version}, {"CPU", e.cpu}, {"host", e.hostname}, {"date", e.date},
        {"TrainScope", fmt::format("{} ({})", e.trainscope_version, e.git_commit)},
    };
    std::string out;
    for (const auto& [k, v] : items) {
        switch (format) {
            case TableFormat::Text: out += fmt::format("{:<12}{}\n", std::string(k) + ":", v); break;
            case TableFormat::Markdown: out += fmt::format("- **{}**: {}\n", k, v); break;
            case TableFormat::Csv: out += fmt::format("{},{}\n", k, csvEscape(v)); break;
        }
    }
    return out;
}

}  // namespace ts
