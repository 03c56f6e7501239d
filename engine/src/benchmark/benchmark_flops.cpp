// A benchmark result's throughput (the point's FLOPs over its measured time, against the GPU's
// peak: core/point.h), its compilation time and its noise. Torch-free.
#include <fmt/format.h>

#include <cctype>

#include "benchmark/benchmark.h"

namespace ts {

std::optional<double> achievedTflops(const BenchResult& r) {
    if (r.status != Status::Ok || r.forward.count == 0) return std::nullopt;
    // The user's model named as module:callable may be anything, so the course model's FLOPs
    // would be a guess; a course checkout's BasicsTransformerLM is that model.
    if (r.config.source == Source::Python && r.config.python.code.find(':') != std::string::npos)
        return std::nullopt;
    const StepFlops f = stepFlops(r.config);
    const double ms = r.forward.mean + (r.config.mode == Mode::Forward ? 0.0 : r.backward.mean);
    if (ms <= 0) return std::nullopt;
    return f.total() / (ms / 1000.0) / 1e12;
}

std::optional<double> peakShare(const BenchResult& r) {
    if (r.config.device.rfind("cuda", 0) != 0) return std::nullopt;
    const auto achieved = achievedTflops(r);
    const auto peak = densePeakTflops(r.environment.device_name, r.config.precision);
    if (!achieved || !peak) return std::nullopt;
    return *achieved / *peak;
}

std::optional<double> compileSeconds(const BenchResult& r) {
    if (r.config.exec == ExecMode::Eager || r.first_step_ms <= 0 || r.total.count == 0)
        return std::nullopt;
    return std::max(0.0, r.first_step_ms - r.total.mean) / 1000.0;
}

std::optional<NoiseFlag> noiseFlag(const BenchResult& r) {
    const Stats& t = r.total;
    if (r.status != Status::Ok || t.count < 2 || t.mean <= 0 || t.cv <= kNoisyCv)
        return std::nullopt;
    NoiseFlag f;
    f.cv = t.cv;
    const bool gpu = r.config.device.rfind("cuda", 0) == 0;
    if (t.count < 5)
        f.cause = fmt::format("too few steps ({} measured): measure more", t.count);
    else if (t.max > 1.5 * t.median)
        f.cause =
            fmt::format("outliers (slowest step {:.1f} ms, median {:.1f} ms): other load on the {}",
                        t.max, t.median, gpu ? "GPU or the host" : "host");
    else if (gpu && t.mean < 30.0)
        f.cause = fmt::format(
            "launch-bound ({:.1f} ms steps: the CPU's kernel launches set the pace)", t.mean);
    else if (!gpu)
        f.cause = "the CPU is shared (other processes, frequency scaling)";
    else
        f.cause = "a steady spread between steps";
    return f;
}

std::string noiseText(const BenchResult& r) {
    const auto f = noiseFlag(r);
    return f ? fmt::format("CV {:.0f}%: {}", 100 * f->cv, f->cause) : std::string();
}

}  // namespace ts
