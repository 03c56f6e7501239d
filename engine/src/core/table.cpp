#include "core/table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace ts {

size_t displayWidth(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

std::string renderTable(const TextTable& t, TableFormat format) {
    if (format == TableFormat::Csv) {
        std::string out = fmt::format("{}\n", fmt::join(t.headers, ","));
        for (const auto& row : t.rows) {
            std::vector<std::string> cells;
            for (const auto& c : row) cells.push_back(csvEscape(c));
            out += fmt::format("{}\n", fmt::join(cells, ","));
        }
        return out;
    }
    const bool md = format == TableFormat::Markdown;
    std::vector<size_t> w(t.headers.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = displayWidth(t.headers[i]);
    for (const auto& row : t.rows)
        for (size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], displayWidth(row[i]));
    auto line = [&](const std::vector<std::string>& cells, bool header) {
        std::vector<std::string> padded;
        for (size_t i = 0; i < cells.size(); ++i) {
            const std::string fill(w[i] - displayWidth(cells[i]), ' ');
            padded.push_back(!header && t.right[i] ? fill + cells[i] : cells[i] + fill);
        }
        return md ? fmt::format("| {} |\n", fmt::join(padded, " | "))
                  : fmt::format("{}\n", fmt::join(padded, "  "));
    };
    std::string out = line(t.headers, true);
    std::vector<std::string> rule;
    for (size_t i = 0; i < w.size(); ++i) {
        std::string dashes(md ? w[i] + 2 : w[i], '-');
        if (md && t.right[i]) dashes.back() = ':';
        rule.push_back(dashes);
    }
    out += md ? fmt::format("|{}|\n", fmt::join(rule, "|"))
              : fmt::format("{}\n", fmt::join(rule, "  "));
    for (const auto& row : t.rows) out += line(row, false);
    return out;
}

std::string tableHeading(const std::string& title, TableFormat format) {
    return format == TableFormat::Markdown ? fmt::format("\n### {}\n\n", title)
                                           : fmt::format("\n{}\n", title);
}

std::string formatBytes(int64_t bytes) {
    const double b = static_cast<double>(bytes);
    if (std::abs(b) >= 1024.0 * 1024 * 1024)
        return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
    if (std::abs(b) >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
    if (std::abs(b) >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
    return fmt::format("{} B", bytes);
}

}  // namespace ts
