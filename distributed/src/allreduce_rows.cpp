// The all-reduce benchmark's torch-free parts: names, sizes, checks and the merged row.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "trainscope/distributed/allreduce_bench.h"

namespace ts::dist {

const char* dtypeName(BenchDtype dtype) { return dtype == BenchDtype::BFloat16 ? "bf16" : "fp32"; }

std::optional<BenchDtype> parseDtype(const std::string& name) {
    if (name == "fp32" || name == "float32") return BenchDtype::Float32;
    if (name == "bf16" || name == "bfloat16") return BenchDtype::BFloat16;
    return std::nullopt;
}

int dtypeBytes(BenchDtype dtype) { return dtype == BenchDtype::BFloat16 ? 2 : 4; }

std::optional<int64_t> parseByteSize(const std::string& text) {
    size_t split = 0;
    while (split < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[split])) || text[split] == '.'))
        ++split;
    std::string number = text.substr(0, split), unit = text.substr(split);
    while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
    std::transform(unit.begin(), unit.end(), unit.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (number.empty() || number.front() == '.' ||
        std::count(number.begin(), number.end(), '.') > 1)
        return std::nullopt;
    double scale = 0;
    if (unit.empty() || unit == "b")
        scale = 1;
    else if (unit == "kb")
        scale = 1e3;
    else if (unit == "mb")
        scale = 1e6;
    else if (unit == "gb")
        scale = 1e9;
    else if (unit == "kib")
        scale = 1024.0;
    else if (unit == "mib")
        scale = 1024.0 * 1024;
    else if (unit == "gib")
        scale = 1024.0 * 1024 * 1024;
    else
        return std::nullopt;
    double value = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
    const double bytes = value * scale;
    if (!std::isfinite(bytes) || bytes >= 9.0e18 || bytes != std::floor(bytes)) return std::nullopt;
    return static_cast<int64_t>(bytes);
}

std::string formatByteSize(int64_t bytes) {
    struct Unit {
        int64_t size;
        const char* name;
    };
    for (const Unit u :
         {Unit{int64_t{1} << 30, "GiB"}, Unit{int64_t{1} << 20, "MiB"}, Unit{1000000000, "GB"},
          Unit{1000000, "MB"}, Unit{1024, "KiB"}, Unit{1000, "KB"}})
        if (bytes > 0 && bytes % u.size == 0) return std::to_string(bytes / u.size) + " " + u.name;
    return std::to_string(bytes) + " B";
}

std::vector<int64_t> defaultAllreduceSizes(CommBackend backend) {
    const int64_t mib = int64_t{1} << 20;
    std::vector<int64_t> sizes = {mib, 4 * mib, 16 * mib, 64 * mib};
    if (backend == CommBackend::Nccl) {
        sizes.push_back(256 * mib);
        sizes.push_back(1024 * mib);
    }
    return sizes;
}

std::string allreduceSpecProblem(const AllreduceSpec& spec) {
    if (spec.sizes.empty()) return "no sizes given";
    if (spec.dtypes.empty()) return "no dtypes given";
    for (int64_t s : spec.sizes) {
        if (s <= 0) return "a size must be more than 0 bytes (it is " + std::to_string(s) + ")";
        if (s > kMaxAllreduceBytes) return "size " + formatByteSize(s) + " is more than 4 GiB";
    }
    if (spec.warmup < 0) return "warm-up iterations must be 0 or more";
    if (spec.iters < 1) return "measured iterations must be at least 1";
    if (!(spec.link_gbps >= 0) || !std::isfinite(spec.link_gbps))
        return "the link bandwidth must be 0 (unknown) or more";
    return "";
}

double busFactor(int world_size) {
    return world_size > 0 ? 2.0 * (world_size - 1) / world_size : 0.0;
}

AllreduceRow allreduceRow(const AllreduceTiming& t, double link_gbps) {
    if (static_cast<int>(t.ranks.size()) != t.world_size || t.ranks.empty())
        throw std::invalid_argument("an all-reduce row needs every rank's times (" +
                                    std::to_string(t.ranks.size()) + " of " +
                                    std::to_string(t.world_size) + ")");
    AllreduceRow row;
    row.bytes = t.bytes;
    row.elements = t.elements;
    row.dtype = t.dtype;
    row.backend = t.backend;
    row.world_size = t.world_size;
    row.iters = t.iters;
    row.ranks = t.ranks;
    row.time_ms = 0;
    row.rank_mean_min_ms = std::numeric_limits<double>::infinity();
    row.fastest_ms = std::numeric_limits<double>::infinity();
    for (const RankTime& r : t.ranks) {
        row.time_ms = std::max(row.time_ms, r.mean_ms);
        row.rank_mean_min_ms = std::min(row.rank_mean_min_ms, r.mean_ms);
        row.fastest_ms = std::min(row.fastest_ms, r.min_ms);
        row.slowest_ms = std::max(row.slowest_ms, r.max_ms);
    }
    row.algbw_gbps =
        row.time_ms > 0 ? static_cast<double>(row.bytes) / (row.time_ms * 1e-3) / 1e9 : 0.0;
    row.busbw_gbps = row.algbw_gbps * busFactor(row.world_size);
    row.ideal_ms = link_gbps > 0 ? static_cast<double>(row.bytes) * busFactor(row.world_size) /
                                       (link_gbps * 1e9) * 1e3
                                 : 0.0;
    return row;
}

}  // namespace ts::dist
