#include "core/table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

namespace ts {

size_t displayWidth(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

std::string renderTable(const TextTable& t, TableFormat format) {
    if (format == TableFormat::Csv) {
        std::vector<std::string> headers;
        for (const auto& h : t.headers) headers.push_back(csvEscape(h));
        std::string out = fmt::format("{}\n", fmt::join(headers, ","));
        for (const auto& row : t.rows) {
            std::vector<std::string> cells;
            for (const auto& c : row) cells.push_back(csvEscape(c));
            out += fmt::format("{}\n", fmt::join(cells, ","));
        }
        return out;
    }
    const bool md = format == TableFormat::Markdown;
    // Markdown: every header and cell as text, not markup (see Note [tables other programs read]).
    auto shown = [md](const std::vector<std::string>& cells) {
        if (!md) return cells;
        std::vector<std::string> out;
        for (const auto& c : cells) out.push_back(markdownText(c));
        return out;
    };
    const std::vector<std::string> headers = shown(t.headers);
    std::vector<std::vector<std::string>> rows;
    for (const auto& row : t.rows) rows.push_back(shown(row));
    const bool compact = md && t.compact;
    std::vector<size_t> w(headers.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = compact ? 1 : displayWidth(headers[i]);
    for (const auto& row : rows)
        for (size_t i = 0; i < row.size() && i < w.size() && !compact; ++i)
            w[i] = std::max(w[i], displayWidth(row[i]));
    auto right = [&](size_t i) { return i < t.right.size() && t.right[i]; };
    auto line = [&](const std::vector<std::string>& cells, bool header) {
        std::vector<std::string> padded;
        for (size_t i = 0; i < cells.size() && i < w.size(); ++i) {
            const std::string fill(compact ? 0 : w[i] - displayWidth(cells[i]), ' ');
            padded.push_back(!header && right(i) ? fill + cells[i] : cells[i] + fill);
        }
        // A short row gets empty cells: a Markdown table's rows have the header's columns.
        for (size_t i = cells.size(); i < w.size(); ++i)
            padded.emplace_back(compact ? 0 : w[i], ' ');
        return md ? fmt::format("| {} |\n", fmt::join(padded, " | "))
                  : fmt::format("{}\n", fmt::join(padded, "  "));
    };
    std::string out = line(headers, true);
    std::vector<std::string> rule;
    for (size_t i = 0; i < w.size(); ++i) {
        std::string dashes(compact ? 3 : md ? w[i] + 2 : w[i], '-');
        if (md && right(i)) dashes.back() = ':';
        rule.push_back(dashes);
    }
    out += md ? fmt::format("|{}|\n", fmt::join(rule, "|"))
              : fmt::format("{}\n", fmt::join(rule, "  "));
    for (const auto& row : rows) out += line(row, false);
    return out;
}

std::string markdownText(std::string_view text) {
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n' || c == '\r') {
            out += ' ';
            continue;
        }
        // "_" between two letters or digits neither opens nor closes emphasis ("d_model"); "&"
        // only starts an entity ("&lt;") before a letter, a digit or "#".
        const bool inside_word =
            c == '_' && i > 0 && i + 1 < text.size() && word(text[i - 1]) && word(text[i + 1]);
        const bool plain_ampersand =
            c == '&' && (i + 1 == text.size() || !(word(text[i + 1]) || text[i + 1] == '#'));
        if (!inside_word && !plain_ampersand &&
            std::string_view("\\`*_[]<>|#~&").find(c) != std::string_view::npos)
            out += '\\';
        out += c;
    }
    return out;
}

std::string csvName(std::string_view header) {
    // Symbols that carry meaning become words; every other run of non-letters one underscore.
    static const std::pair<std::string_view, std::string_view> kWords[] = {
        {"%", " percent "}, {"/", " per "}, {"±", " std "}, {"\u2212", " minus "},
        {"Δ", " delta "},   {"×", " x "},   {"→", " to "},  {"#", " number "},
        {"&", " and "},     {"'", ""},      {"’", ""},      {"+", " plus "},
        {"µ", "u"},         {"μ", "u"}};
    std::string words;
    for (size_t i = 0; i < header.size();) {
        bool replaced = false;
        for (const auto& [symbol, word] : kWords)
            if (header.substr(i, symbol.size()) == symbol) {
                words += word;
                i += symbol.size();
                replaced = true;
                break;
            }
        if (!replaced) words += header[i++];
    }
    std::string out;
    for (char c : words) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x80 && std::isalnum(u)) {
            out += static_cast<char>(std::tolower(u));
        } else if (!out.empty() && out.back() != '_') {
            out += '_';
        }
    }
    while (!out.empty() && out.back() == '_') out.pop_back();
    if (out.empty()) return "column";
    if (std::isdigit(static_cast<unsigned char>(out.front()))) out = "n" + out;
    return out;
}

std::string csvNumber(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); }

std::string csvNumber(const std::optional<double>& v) { return v ? csvNumber(*v) : std::string(); }

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
