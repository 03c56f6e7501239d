// The accumulation experiment's arithmetic, without LibTorch: rounding to fp32 / fp16 / bf16,
// the ulp, and the course's sums with their explanation (where an add first rounds or stalls).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/point.h"
#include "precision/precision.h"

namespace ts {

namespace {

struct FormatBits {
    int precision;  // significand bits, the hidden one included
    int emin;       // exponent of the smallest normal number
    double max;     // the largest finite value
};

FormatBits bitsOf(NumFormat f) {
    switch (f) {
        case NumFormat::FP16:
            return {11, -14, 65504.0};
        case NumFormat::BF16:
            return {8, -126, std::ldexp(255.0 / 128.0, 127)};
        case NumFormat::FP32:
            break;
    }
    return {24, -126, static_cast<double>(std::numeric_limits<float>::max())};
}

// The exponent e of |x| = 1.m × 2^e, not below the format's smallest normal exponent (below
// it the spacing is the subnormal one).
int exponentIn(double x, const FormatBits& b) {
    if (x == 0 || !std::isfinite(x)) return b.emin;
    int e = 0;
    std::frexp(std::fabs(x), &e);  // |x| = m × 2^e, m in [0.5, 1)
    return std::max(e - 1, b.emin);
}

}  // namespace

std::string_view toString(NumFormat f) {
    switch (f) {
        case NumFormat::FP16:
            return "fp16";
        case NumFormat::BF16:
            return "bf16";
        case NumFormat::FP32:
            break;
    }
    return "fp32";
}

double roundTo(double x, NumFormat f) {
    // c10::Half and c10::BFloat16 are built from a float, so a double reaches them through
    // float first (torch.tensor(0.01, dtype=torch.float16) does the same).
    const float xf = static_cast<float>(x);
    if (f == NumFormat::FP32 || !std::isfinite(xf) || xf == 0.0f) return xf;
    const FormatBits b = bitsOf(f);
    const double quantum = std::ldexp(1.0, exponentIn(xf, b) - (b.precision - 1));
    // x / quantum is exact (a power of two); nearbyint rounds to nearest, ties to even.
    const double r = std::nearbyint(xf / quantum) * quantum;
    if (std::fabs(r) > b.max) return std::copysign(std::numeric_limits<double>::infinity(), x);
    return r;
}

double ulpOf(double x, NumFormat f) {
    const FormatBits b = bitsOf(f);
    return std::ldexp(1.0, exponentIn(x, b) - (b.precision - 1));
}

std::string AccumulationVariant::name() const {
    if (accumulator == addend_format)
        return fmt::format("{} += {}", toString(accumulator), toString(addend_format));
    return fmt::format("{} += {}{}", toString(accumulator), toString(addend_format),
                       explicit_cast ? " (cast)" : "");
}

std::vector<AccumulationVariant> accumulationVariants(bool fp16, bool bf16) {
    std::vector<AccumulationVariant> out{{NumFormat::FP32, NumFormat::FP32, false}};
    for (auto [on, low] : {std::pair{fp16, NumFormat::FP16}, std::pair{bf16, NumFormat::BF16}}) {
        if (!on) continue;
        out.push_back({low, low, false});
        out.push_back({NumFormat::FP32, low, false});
        out.push_back({NumFormat::FP32, low, true});
    }
    return out;
}

std::vector<std::string> validateAccumulationSpec(const AccumulationSpec& s) {
    std::vector<std::string> errors;
    if (!std::isfinite(s.addend))
        errors.push_back(fmt::format("addend {} is not a finite number", s.addend));
    else if (!std::isfinite(static_cast<float>(s.addend)))
        errors.push_back(fmt::format("addend {} does not fit in fp32", s.addend));
    if (s.count < 1 || s.count > kMaxAccumulationCount)
        errors.push_back(fmt::format("count {} is not in 1..{}", s.count, kMaxAccumulationCount));
    return errors;
}

AccumulationResult accumulate(const AccumulationVariant& v, double addend, int64_t count) {
    AccumulationResult r;
    r.variant = v;
    r.addend = addend;
    r.count = count;
    r.exact = static_cast<double>(count) * addend;
    // The addend as stored; widening it to fp32 (implicitly or by the cast) is exact.
    r.addend_stored = roundTo(addend, v.addend_format);
    const float fed = static_cast<float>(r.addend_stored);
    r.running_error_stride =
        std::max<int64_t>(1, (count + kMaxRunningErrorPoints - 1) / kMaxRunningErrorPoints);
    r.running_error.reserve(static_cast<size_t>(count / r.running_error_stride + 1));
    double sum = 0;  // always a value of the accumulator's format
    for (int64_t i = 1; i <= count; ++i) {
        // The add is done in float and the result rounded to the accumulator's format, as
        // c10::Half / c10::BFloat16 (and LibTorch's CPU kernels for them) do.
        const float added = static_cast<float>(sum) + fed;
        const double next = roundTo(added, v.accumulator);
        if (r.first_rounding_step == 0 && next - sum != static_cast<double>(fed))
            r.first_rounding_step = i;
        if (r.first_stall_step == 0 && next == sum) {
            r.first_stall_step = i;
            r.sum_at_stall = sum;
            r.ulp_at_stall = ulpOf(sum, v.accumulator);
        }
        sum = next;
        if (i % r.running_error_stride == 0)
            r.running_error.push_back(sum - static_cast<double>(i) * addend);
    }
    r.value = sum;
    r.error = sum - r.exact;
    r.ulp_end = ulpOf(sum, v.accumulator);
    return r;
}

const AutocastRecord* AutocastReport::find(std::string_view name) const {
    for (const auto& rec : records)
        if (rec.name == name) return &rec;
    return nullptr;
}

std::vector<const AutocastOp*> AutocastReport::opsOf(const AutocastRecord& record) const {
    std::vector<const AutocastOp*> out;
    if (record.kind == "grad") return out;
    const bool lm = record.kind == "transformer_lm";
    for (const auto& op : ops) {
        const AutocastRecord* owner = op.module.empty() ? nullptr : find(op.module);
        if (owner && owner->kind == "grad") owner = nullptr;
        if (owner == &record || (lm && !owner && op.module != "loss")) out.push_back(&op);
    }
    return out;
}

std::string AutocastReport::computedIn(const AutocastRecord& record) const {
    std::vector<std::string> seen;
    for (const AutocastOp* op : opsOf(record))
        if (op->phase == "forward" && op->depth == 0 && !op->computed_dtype.empty() &&
            std::find(seen.begin(), seen.end(), op->computed_dtype) == seen.end())
            seen.push_back(op->computed_dtype);
    std::string out;
    for (const auto& s : seen) out += (out.empty() ? "" : ", ") + s;
    return out;
}

std::vector<std::string> validateAutocastSpec(const AutocastSpec& s) {
    std::vector<std::string> errors;
    if (s.model != "toy" && !modelPreset(s.model))
        errors.push_back(fmt::format("model '{}' is neither toy nor a model size", s.model));
    if (s.dtype == Precision::FP32)
        errors.push_back("autocast dtype must be bf16 or fp16, not fp32");
    if (s.device != "cpu" && s.device.rfind("cuda", 0) != 0)
        errors.push_back(fmt::format("device '{}' is neither cpu nor cuda[:N]", s.device));
    for (auto [name, v] :
         {std::pair{"in features", s.in_features}, std::pair{"out features", s.out_features},
          std::pair{"batch", s.batch}, std::pair{"context length", s.context_length}})
        if (v < 1 || v > 65536) errors.push_back(fmt::format("{} {} is not in 1..65536", name, v));
    return errors;
}

std::vector<std::string> validateTrainNumericsSpec(const TrainNumericsSpec& s) {
    std::vector<std::string> errors;
    if (s.precisions.empty()) errors.push_back("no precision given");
    if (s.steps < 1 || s.steps > kMaxTrainNumericsSteps)
        errors.push_back(fmt::format("steps {} is not in 1..{}", s.steps, kMaxTrainNumericsSteps));
    if (!(s.lr > 0 && s.lr < kMaxLearningRate))
        errors.push_back(fmt::format("learning rate {} is not in (0, 10)", s.lr));
    if (!(s.init_scale >= 1 && s.init_scale <= kMaxInitialLossScale))
        errors.push_back(fmt::format("initial loss scale {} is not in 1..1e30", s.init_scale));
    if (s.device != "cpu" && s.device.rfind("cuda", 0) != 0)
        errors.push_back(fmt::format("device '{}' is neither cpu nor cuda[:N]", s.device));
    for (auto [name, v] : {std::pair{"in features", s.in_features},
                           std::pair{"out features", s.out_features}, std::pair{"batch", s.batch}})
        if (v < 1 || v > 65536) errors.push_back(fmt::format("{} {} is not in 1..65536", name, v));
    return errors;
}

int TrainNumericsCurve::skippedSteps() const {
    int n = 0;
    for (const auto& s : steps) n += s.skipped;
    return n;
}

double TrainNumericsCurve::finalLoss() const {
    return steps.empty() ? std::numeric_limits<double>::quiet_NaN() : steps.back().loss;
}

}  // namespace ts
