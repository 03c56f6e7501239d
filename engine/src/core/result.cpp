#include "core/result.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <regex>
#include <string>

namespace ts {

Stats computeStats(const std::vector<double>& values) {
    Stats s;
    s.count = static_cast<int>(values.size());
    if (values.empty()) return s;
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.max = v.back();
    const size_t n = v.size();
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
    if (n > 1) {
        double ss = 0;
        for (double x : v) ss += (x - s.mean) * (x - s.mean);
        s.std = std::sqrt(ss / static_cast<double>(n - 1));
    }
    s.cv = s.mean != 0 ? s.std / s.mean : 0;
    return s;
}

namespace {
constexpr std::pair<std::string_view, Status> kStatuses[] = {{"ok", Status::Ok},
                                                             {"OOM", Status::OOM},
                                                             {"failed", Status::Failed},
                                                             {"unsupported", Status::Unsupported},
                                                             {"cancelled", Status::Cancelled}};
}  // namespace

std::string_view toString(Status s) {
    for (const auto& [name, v] : kStatuses)
        if (v == s) return name;
    return "?";
}

std::optional<Status> parseStatus(std::string_view s) {
    for (const auto& [name, v] : kStatuses)
        if (name == s) return v;
    return std::nullopt;
}

const std::vector<Status>& allStatuses() {
    static const std::vector<Status> all = [] {
        std::vector<Status> v;
        for (const auto& [name, s] : kStatuses) v.push_back(s);
        return v;
    }();
    return all;
}

std::string namesOf(const std::vector<Status>& all) {
    std::string out;
    for (Status s : all) out += (out.empty() ? "" : ", ") + std::string(toString(s));
    return out;
}

std::string oneLineError(std::string_view what) {
    std::string line(what.substr(0, what.find('\n')));
    if (const size_t at = line.find("Exception raised from "); at != std::string::npos)
        line.resize(at);
    static const std::regex enforce(R"(^\[enforce fail at [^\]]*\]\s*(err == 0\.\s*)?)");
    line = std::regex_replace(line, enforce, "");
    static const std::regex cpu(R"(can't allocate memory: you tried to allocate ([0-9]+) bytes)");
    std::smatch m;
    if (std::regex_search(line, m, cpu))
        return fmt::format("out of memory on the CPU: tried to allocate {:.1f} GiB",
                           std::stod(m[1]) / 1073741824.0);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    return line;
}

}  // namespace ts
