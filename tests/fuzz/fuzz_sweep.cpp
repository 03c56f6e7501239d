// Sweep files and single points as people write them: sweepFromJson / pointFromJson, then what
// the CLI does with a sweep (count, expand, validate, the stored spec). A rejection must be
// std::invalid_argument or a JSON error; anything else (a crash, another exception) is a bug.
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_json.h"
#include "core/json.h"
#include "fuzz_common.h"

namespace {

void sweep(std::string_view text) {
    const ts::SweepSpec spec = ts::sweepFromJson(ts::parseJson(text));
    fuzz::reached("a parsed sweep");
    const size_t n = ts::sweepPointCount(spec);
    if (n > 500 && n <= ts::kMaxSweepPoints)
        return;                                 // valid but slow to expand: not what we look for
    const auto points = ts::expandSweep(spec);  // beyond the limit this must throw, not allocate
    fuzz::require(points.size() == n, "expandSweep gives sweepPointCount points");
    for (const auto& p : points)
        fuzz::reached(ts::validatePoint(p).empty() ? "a valid point" : "an invalid point");
    ts::benchSpecJson(spec, points.size());
}

void point(std::string_view text) {
    const ts::PointConfig c = ts::pointFromJson(ts::parseJson(text));
    fuzz::reached("a parsed point");
    ts::validatePoint(c);
    // What one build writes, it reads back as the same point.
    fuzz::require(ts::pointFromJson(ts::parseJson(ts::dumpJson(ts::toJson(c)))) == c ||
                      c.learning_rate != c.learning_rate ||
                      c.model.rope_theta != c.model.rope_theta,
                  "a point survives its JSON round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto text = fuzz::text(data, size);
    for (auto f : {sweep, point}) {
        try {
            f(text);
        } catch (const std::invalid_argument&) {
        } catch (const nlohmann::json::exception&) {
        }
    }
    return 0;
}
