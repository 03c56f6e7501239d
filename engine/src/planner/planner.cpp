// The planner's arithmetic: per-layer FLOPs and communication of each strategy, its limits,
// the curves against batch or degree, the ring collectives and a whole model's step.
#include "planner/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/point.h"

namespace ts {

// Note [planner formulas]: what the planner computes, and from where.
//
// The setting is the course's (assignment 2, §8 "Analyzing Parallelism Strategies", as the
// 2026 handout poses data_parallel_calcs, fsdp_calcs, tp_calcs, fsdp_tp_calcs and
// alternate_ring_all_reduce): one layer is the SwiGLU MLP x1 = x·W1, x2 = x·W2,
// z = f(x1) * x2, y = z·W3 with W1, W2 of D×F and W3 of F×D; x holds B tokens. Only matmuls
// count, an (a,b)·(b,c) matmul is 2·a·b·c FLOPs, and every communicated element is b bytes
// (the course: fp16, b = 2). C is a device's FLOP/s and W the bytes/s it sends (egress). Ring
// collectives of S bytes over N devices take (N−1)/N · S/W (all-gather, reduce-scatter) and
// 2·(N−1)/N · S/W (all-reduce); a pass is communication bound when its communication time
// exceeds its compute time (the two overlap).
//
//   FLOPs of a layer: forward 3 matmuls = 6·B·D·F; backward 6 (dz, dx from dx1 and dx2,
//   dW1, dW2, dW3) = 12·B·D·F; a strategy that splits B over X and F over Y divides by X·Y.
//
//   DP (X):   forward no communication; backward all-reduce of dW1, dW2, dW3 (S = 3·D·F·b):
//             2·(X−1)/X · 3·D·F·b / W. Compute bound while 12(X−1)·D·F·b/(2·X·W) ≤
//             12·B·D·F/(X·C), i.e. N_DP ≤ 1 + 2·B·W/(b·C) (b = 2: 1 + B·W/C); per device
//             B/X ≥ (X−1)/X · b·C/(2·W).
//   FSDP (X): forward all-gather of W1, W2, W3: (X−1)/X · 3·D·F·b / W; backward all-gather
//             again and reduce-scatter of the gradients: 2·(X−1)/X · 3·D·F·b / W. Both passes
//             give N_FSDP ≤ 1 + 2·B·W/(b·C), as DP.
//   TP (Y):   W1, W2 column-parallel, W3 row-parallel: forward all-reduce of y (B·D·b bytes),
//             backward all-reduce of dx (the two contributions summed first): each
//             2·(Y−1)/Y · B·D·b / W. Forward: N_TP ≤ 1 + 3·F·W/(b·C) (b = 2: 1 + 3·F·W/(2C));
//             backward: N_TP ≤ 1 + 6·F·W/(b·C) (b = 2: 1 + 3·F·W/C). No batch in it.
//   DP × TP:  the TP all-reduces of (B/X)·D·b bytes over Y; backward also the DP all-reduce of
//             the TP shards' gradients (3·D·(F/Y)·b bytes) over X. Each axis alone gives DP's
//             and TP's limits.
//   FSDP × TP (the course's fsdp_tp_calcs): forward all-gather over X of the TP shards
//             (3·D·(F/Y)·b bytes): (X−1)/X · 3·D·F·b/(Y·W), and all-reduce over Y of
//             (B/X)·D·b bytes: 2·(Y−1)/Y · B·D·b/(X·W). Overlapped the time is the larger,
//             else the sum. With (X−1)/X ≈ 1 both are minimised where 3·F·X = 2·B·Y, i.e.
//             X_opt = √(2·B·N/(3·F)); then compute bound while N ≤ 6·B·F·W²/(b²·C²)
//             overlapped (b = 2: 3·B·F·W²/(2·C²)) and N ≤ 3·B·F·W²/(2·b²·C²) when the axes
//             share the links (b = 2: 3·B·F·W²/(8·C²)).
//   Alternate ring all-reduce (the course's §8.1 problem): every one of N−1 steps sends a whole
//             S-byte tensor: (N−1) · S/W.
//
// The same limits are in the scaling book (Austin et al., "How to Scale Your Model", part 5
// "How to Parallelize a Transformer for Training"), which models the MLP with two matrices
// (4·B·D·F forward), W as bidirectional ICI bandwidth and b = 2: DP and FSDP compute bound
// while B/X > C/W, TP while Y < F·W/C·M_Y, FSDP × TP down to B/N > α²/(M_X·M_Y·F) with
// α = C/W and X_opt = √(B/F · M_X/M_Y · N). Ours keep the course's three matrices and egress W,
// which moves the constants, not the shape. Step times multiply a layer by L; memory counts
// the layers' MLP weights (or, with a model, all its parameters) at p + g + o bytes each,
// divided by the degrees that shard them (FSDP: X; TP: Y; FSDP × TP: X·Y).

std::string_view toString(Strategy s) {
    switch (s) {
        case Strategy::DP:
            return "dp";
        case Strategy::FSDP:
            return "fsdp";
        case Strategy::TP:
            return "tp";
        case Strategy::DpTp:
            return "dp-tp";
        case Strategy::FsdpTp:
            return "fsdp-tp";
    }
    return "?";
}

std::string_view strategyTitle(Strategy s) {
    switch (s) {
        case Strategy::DP:
            return "DP";
        case Strategy::FSDP:
            return "FSDP";
        case Strategy::TP:
            return "TP";
        case Strategy::DpTp:
            return "DP × TP";
        case Strategy::FsdpTp:
            return "FSDP × TP";
    }
    return "?";
}

std::optional<Strategy> parseStrategy(std::string_view s) {
    for (Strategy x : allStrategies())
        if (toString(x) == s) return x;
    return std::nullopt;
}

const std::vector<Strategy>& allStrategies() {
    static const std::vector<Strategy> all = {Strategy::DP, Strategy::FSDP, Strategy::TP,
                                              Strategy::DpTp, Strategy::FsdpTp};
    return all;
}

std::vector<std::string> validatePlannerInputs(const PlannerInputs& in) {
    std::vector<std::string> out;
    auto positive = [&](double v, const char* what) {
        if (!std::isfinite(v) || v <= 0)
            out.push_back(fmt::format("{} must be a positive number, got {}", what, v));
    };
    positive(in.flops, "C (FLOP/s)");
    positive(in.bandwidth, "W (bytes/s)");
    if (!std::isfinite(in.batch_tokens) || in.batch_tokens < 1)
        out.push_back(fmt::format("batch B must be at least 1 token, got {}", in.batch_tokens));
    auto dim = [&](int64_t v, const char* what, int64_t hi) {
        if (v < 1 || v > hi) out.push_back(fmt::format("{} must be in 1..{}, got {}", what, hi, v));
    };
    dim(in.d_model, "d_model", kMaxPlannerDim);
    dim(in.d_ff, "d_ff", kMaxPlannerDim);
    dim(in.layers, "layers", 100'000);
    dim(in.dp, "the data-parallel degree (DP)", kMaxPlannerDegree);
    dim(in.tp, "the tensor-parallel degree (TP)", kMaxPlannerDegree);
    positive(in.comm_bytes, "bytes per communicated element");
    positive(in.param_bytes, "bytes per parameter");
    positive(in.grad_bytes, "bytes per gradient");
    if (!std::isfinite(in.optimizer_bytes) || in.optimizer_bytes < 0)
        out.push_back(
            fmt::format("bytes of optimizer state per parameter must be 0 or more, got {}",
                        in.optimizer_bytes));
    if (in.tp >= 1 && in.d_ff >= 1 && in.d_ff % in.tp != 0)
        out.push_back(fmt::format(
            "d_ff {} is not divisible by the tensor-parallel degree {} (TP splits W1, W2 and W3 "
            "along d_ff)",
            in.d_ff, in.tp));
    if (in.tp >= 1 && in.d_model >= 1 && in.d_model % in.tp != 0)
        out.push_back(fmt::format(
            "d_model {} is not divisible by the tensor-parallel degree {} (TP shards the "
            "activations along d_model)",
            in.d_model, in.tp));
    if (in.dp >= 1 && std::isfinite(in.batch_tokens) && in.batch_tokens >= 1 &&
        in.batch_tokens < static_cast<double>(in.dp))
        out.push_back(fmt::format(
            "batch B of {} tokens gives less than one token to each of the {} data-parallel "
            "devices",
            in.batch_tokens, in.dp));
    if (in.model) {
        for (const auto& e : validateModel(*in.model)) out.push_back("model: " + e);
        if (in.model->d_model != in.d_model || in.model->d_ff != in.d_ff ||
            in.model->num_layers != in.layers)
            out.push_back(fmt::format(
                "the model {} has d_model {}, d_ff {}, {} layers; the inputs say {}, {}, {}",
                in.model->name, in.model->d_model, in.model->d_ff, in.model->num_layers, in.d_model,
                in.d_ff, in.layers));
    }
    return out;
}

namespace {

// (n−1)/n: the share of a ring collective's data each device sends per byte of its result.
double plannerRingShare(double n) { return n > 1 ? (n - 1) / n : 0.0; }

struct PlannerPasses {
    PassCost forward, backward;
};

// One layer on one device at degrees X, Y (real, for the curves) and batch B.
PlannerPasses plannerPasses(const PlannerInputs& in, Strategy s, double X, double Y, double B) {
    const double D = static_cast<double>(in.d_model), F = static_cast<double>(in.d_ff),
                 b = in.comm_bytes, C = in.flops, W = in.bandwidth;
    const std::string join = in.overlap_axes ? "max" : "sum";
    PlannerPasses p;
    auto finish = [&](PassCost& c) { c.compute_s = c.flops / C; };
    switch (s) {
        case Strategy::DP:
            p.forward.flops = 6 * B * D * F / X;
            p.forward.flops_formula = "6·B·D·F/X";
            p.forward.comm_formula = "none";
            p.backward.flops = 12 * B * D * F / X;
            p.backward.flops_formula = "12·B·D·F/X";
            p.backward.comm_bytes = 2 * plannerRingShare(X) * 3 * D * F * b;
            p.backward.comm_s = p.backward.comm_bytes / W;
            p.backward.comm_formula = "all-reduce dW1, dW2, dW3: 2·(X−1)/X · 3·D·F·b / W";
            break;
        case Strategy::FSDP:
            p.forward.flops = 6 * B * D * F / X;
            p.forward.flops_formula = "6·B·D·F/X";
            p.forward.comm_bytes = plannerRingShare(X) * 3 * D * F * b;
            p.forward.comm_s = p.forward.comm_bytes / W;
            p.forward.comm_formula = "all-gather W1, W2, W3: (X−1)/X · 3·D·F·b / W";
            p.backward.flops = 12 * B * D * F / X;
            p.backward.flops_formula = "12·B·D·F/X";
            p.backward.comm_bytes = 2 * plannerRingShare(X) * 3 * D * F * b;
            p.backward.comm_s = p.backward.comm_bytes / W;
            p.backward.comm_formula =
                "all-gather W1, W2, W3 + reduce-scatter dW1, dW2, dW3: 2·(X−1)/X · 3·D·F·b / W";
            break;
        case Strategy::TP:
            p.forward.flops = 6 * B * D * F / Y;
            p.forward.flops_formula = "6·B·D·F/Y";
            p.forward.comm_bytes = 2 * plannerRingShare(Y) * B * D * b;
            p.forward.comm_s = p.forward.comm_bytes / W;
            p.forward.comm_formula = "all-reduce y: 2·(Y−1)/Y · B·D·b / W";
            p.backward.flops = 12 * B * D * F / Y;
            p.backward.flops_formula = "12·B·D·F/Y";
            p.backward.comm_bytes = p.forward.comm_bytes;
            p.backward.comm_s = p.forward.comm_s;
            p.backward.comm_formula = "all-reduce dx: 2·(Y−1)/Y · B·D·b / W";
            break;
        case Strategy::DpTp: {
            const double tp_bytes = 2 * plannerRingShare(Y) * (B / X) * D * b;
            const double dp_bytes = 2 * plannerRingShare(X) * 3 * D * (F / Y) * b;
            p.forward.flops = 6 * B * D * F / (X * Y);
            p.forward.flops_formula = "6·B·D·F/(X·Y)";
            p.forward.comm_bytes = tp_bytes;
            p.forward.comm_s = tp_bytes / W;
            p.forward.comm_formula = "TP all-reduce y: 2·(Y−1)/Y · (B/X)·D·b / W";
            p.backward.flops = 12 * B * D * F / (X * Y);
            p.backward.flops_formula = "12·B·D·F/(X·Y)";
            p.backward.comm_bytes = tp_bytes + dp_bytes;
            p.backward.comm_s =
                in.overlap_axes ? std::max(tp_bytes, dp_bytes) / W : (tp_bytes + dp_bytes) / W;
            p.backward.comm_formula =
                join +
                "(DP all-reduce of the shards' gradients: 2·(X−1)/X · "
                "3·D·(F/Y)·b / W, TP all-reduce dx: 2·(Y−1)/Y · (B/X)·D·b / W)";
            break;
        }
        case Strategy::FsdpTp: {
            const double tp_bytes = 2 * plannerRingShare(Y) * (B / X) * D * b;
            const double gather = plannerRingShare(X) * 3 * D * (F / Y) * b;
            p.forward.flops = 6 * B * D * F / (X * Y);
            p.forward.flops_formula = "6·B·D·F/(X·Y)";
            p.forward.comm_bytes = gather + tp_bytes;
            p.forward.comm_s =
                in.overlap_axes ? std::max(gather, tp_bytes) / W : (gather + tp_bytes) / W;
            p.forward.comm_formula =
                join +
                "(FSDP all-gather of the TP shards: (X−1)/X · 3·D·(F/Y)·b / W, "
                "TP all-reduce y: 2·(Y−1)/Y · (B/X)·D·b / W)";
            p.backward.flops = 12 * B * D * F / (X * Y);
            p.backward.flops_formula = "12·B·D·F/(X·Y)";
            p.backward.comm_bytes = 2 * gather + tp_bytes;
            p.backward.comm_s =
                in.overlap_axes ? std::max(2 * gather, tp_bytes) / W : (2 * gather + tp_bytes) / W;
            p.backward.comm_formula =
                join +
                "(FSDP all-gather + reduce-scatter: 2·(X−1)/X · 3·D·(F/Y)·b / W, TP all-reduce "
                "dx: 2·(Y−1)/Y · (B/X)·D·b / W)";
            break;
        }
    }
    finish(p.forward);
    finish(p.backward);
    return p;
}

// The degrees a strategy uses of the inputs' X and Y.
std::pair<int64_t, int64_t> plannerDegrees(const PlannerInputs& in, Strategy s) {
    switch (s) {
        case Strategy::DP:
        case Strategy::FSDP:
            return {in.dp, 1};
        case Strategy::TP:
            return {1, in.tp};
        case Strategy::DpTp:
        case Strategy::FsdpTp:
            return {in.dp, in.tp};
    }
    return {1, 1};
}

// The course's form of a limit when b = 2, after the general one.
std::string plannerCourseForm(const PlannerInputs& in, const std::string& general,
                              const std::string& course) {
    return in.comm_bytes == 2 ? general + "  (b = 2: " + course + ")" : general;
}

std::vector<PlannerLimit> plannerLimits(const PlannerInputs& in, Strategy s, int64_t x, int64_t y,
                                        double* x_opt) {
    const double B = in.batch_tokens, F = static_cast<double>(in.d_ff), b = in.comm_bytes,
                 C = in.flops, W = in.bandwidth;
    const double n_data = 1 + 2 * B * W / (b * C);
    const double n_tp_fwd = 1 + 3 * F * W / (b * C);
    const double n_tp_bwd = 1 + 6 * F * W / (b * C);
    const double X = static_cast<double>(x), Y = static_cast<double>(y);
    std::vector<PlannerLimit> out;
    auto dataLimits = [&](const char* name, const char* pass) {
        out.push_back({fmt::format("largest {} ({})", name, pass),
                       plannerCourseForm(in, fmt::format("{} ≤ 1 + 2·B·W/(b·C)", name),
                                         fmt::format("{} ≤ 1 + B·W/C", name)),
                       n_data, X <= n_data});
        const double min_b = plannerRingShare(X) * b * C / (2 * W);
        out.push_back({"smallest tokens per device B/X at this X",
                       plannerCourseForm(in, "B/X ≥ (X−1)/X · b·C/(2·W)", "B/X ≥ (X−1)/X · C/W"),
                       min_b, B / X >= min_b});
    };
    auto tpLimits = [&](const char* name) {
        out.push_back({fmt::format("largest {} (forward)", name),
                       plannerCourseForm(in, fmt::format("{} ≤ 1 + 3·F·W/(b·C)", name),
                                         fmt::format("{} ≤ 1 + 3·F·W/(2·C)", name)),
                       n_tp_fwd, Y <= n_tp_fwd});
        out.push_back({fmt::format("largest {} (backward)", name),
                       plannerCourseForm(in, fmt::format("{} ≤ 1 + 6·F·W/(b·C)", name),
                                         fmt::format("{} ≤ 1 + 3·F·W/C", name)),
                       n_tp_bwd, Y <= n_tp_bwd});
    };
    switch (s) {
        case Strategy::DP:
            dataLimits("N_DP", "backward");
            break;
        case Strategy::FSDP:
            dataLimits("N_FSDP", "forward and backward");
            break;
        case Strategy::TP:
            tpLimits("N_TP");
            break;
        case Strategy::DpTp:
            dataLimits("N_DP", "backward, DP axis alone");
            tpLimits("N_TP");
            break;
        case Strategy::FsdpTp: {
            const double N = X * Y;
            *x_opt = std::sqrt(2 * B * N / (3 * F));
            out.push_back(
                {"optimal FSDP degree for N = X·Y", "X_opt = √(2·B·N/(3·F))", *x_opt, true, false});
            if (in.overlap_axes) {
                const double n_max = 6 * B * F * W * W / (b * b * C * C);
                out.push_back({"largest N at X_opt (forward, axes overlapped)",
                               plannerCourseForm(in, "N ≤ 6·B·F·W²/(b²·C²)", "N ≤ 3·B·F·W²/(2·C²)"),
                               n_max, N <= n_max});
                const double min_b = b * b * C * C / (6 * F * W * W);
                out.push_back({"smallest tokens per device B/N at X_opt",
                               plannerCourseForm(in, "B/N ≥ b²·C²/(6·F·W²)", "B/N ≥ 2·C²/(3·F·W²)"),
                               min_b, B / N >= min_b});
            } else {
                const double n_max = 3 * B * F * W * W / (2 * b * b * C * C);
                out.push_back(
                    {"largest N at X_opt (forward, axes share the links)",
                     plannerCourseForm(in, "N ≤ 3·B·F·W²/(2·b²·C²)", "N ≤ 3·B·F·W²/(8·C²)"), n_max,
                     N <= n_max});
                const double min_b = 2 * b * b * C * C / (3 * F * W * W);
                out.push_back(
                    {"smallest tokens per device B/N at X_opt",
                     plannerCourseForm(in, "B/N ≥ 2·b²·C²/(3·F·W²)", "B/N ≥ 8·C²/(3·F·W²)"), min_b,
                     B / N >= min_b});
            }
            break;
        }
    }
    return out;
}

double plannerParameters(const PlannerInputs& in) {
    if (in.model) return static_cast<double>(parameterCount(*in.model));
    return static_cast<double>(in.layers) * 3.0 * static_cast<double>(in.d_model) *
           static_cast<double>(in.d_ff);
}

}  // namespace

StrategyPlan planStrategy(const PlannerInputs& in, Strategy s) {
    StrategyPlan p;
    p.strategy = s;
    std::tie(p.x, p.y) = plannerDegrees(in, s);
    const auto passes =
        plannerPasses(in, s, static_cast<double>(p.x), static_cast<double>(p.y), in.batch_tokens);
    p.forward = passes.forward;
    p.backward = passes.backward;
    const double L = static_cast<double>(in.layers);
    p.step_compute_s = L * (p.forward.compute_s + p.backward.compute_s);
    p.step_comm_s = L * (p.forward.comm_s + p.backward.comm_s);
    p.step_s = L * (std::max(p.forward.compute_s, p.forward.comm_s) +
                    std::max(p.backward.compute_s, p.backward.comm_s));
    p.comm_bound = p.forward.commBound() || p.backward.commBound();
    const double shards = s == Strategy::DP     ? 1.0
                          : s == Strategy::FSDP ? static_cast<double>(p.x)
                          : s == Strategy::FsdpTp
                              ? static_cast<double>(p.x) * static_cast<double>(p.y)
                              : static_cast<double>(p.y);
    p.memory_formula = s == Strategy::DP       ? "P·(p + g + o)"
                       : s == Strategy::FSDP   ? "P·(p + g + o) / X"
                       : s == Strategy::FsdpTp ? "P·(p + g + o) / (X·Y)"
                                               : "P·(p + g + o) / Y";
    p.params_per_device = plannerParameters(in) / shards;
    p.param_bytes = p.params_per_device * in.param_bytes;
    p.grad_bytes = p.params_per_device * in.grad_bytes;
    p.optimizer_bytes = p.params_per_device * in.optimizer_bytes;
    p.limits = plannerLimits(in, s, p.x, p.y, &p.x_opt);
    return p;
}

double ringAllReduceSeconds(double bytes, int64_t n, double bandwidth) {
    return 2 * plannerRingShare(static_cast<double>(n)) * bytes / bandwidth;
}

std::vector<CollectiveCost> ringCollectives(double bytes, int64_t n, double bandwidth) {
    const double share = plannerRingShare(static_cast<double>(n));
    const double N = static_cast<double>(n);
    return {
        {"all-gather (ring)", "(N−1)/N · S/W", share * bytes, share * bytes / bandwidth},
        {"reduce-scatter (ring)", "(N−1)/N · S/W", share * bytes, share * bytes / bandwidth},
        {"all-reduce (ring: reduce-scatter, then all-gather)", "2·(N−1)/N · S/W", 2 * share * bytes,
         ringAllReduceSeconds(bytes, n, bandwidth)},
        {"all-reduce (the course's alternate ring: whole tensors)", "(N−1) · S/W", (N - 1) * bytes,
         (N - 1) * bytes / bandwidth},
    };
}

PlannerCurve planCurve(const PlannerInputs& in, Strategy s, int points) {
    PlannerCurve c;
    c.strategy = s;
    points = std::max(points, 8);
    const auto [x, y] = plannerDegrees(in, s);
    const double X = static_cast<double>(x), Y = static_cast<double>(y);
    // The pass whose limit binds: DP's communication is all backward, FSDP's passes share one
    // limit, TP's forward is the tighter, FSDP × TP is the course's forward.
    const bool forward = s == Strategy::TP || s == Strategy::FsdpTp;
    c.pass = forward ? "forward" : "backward";
    auto at = [&](double v) {
        const PlannerPasses p = s == Strategy::TP ? plannerPasses(in, s, 1, v, in.batch_tokens)
                                                  : plannerPasses(in, s, X, Y, v * X * Y);
        return forward ? p.forward : p.backward;
    };
    double lo, hi;
    if (s == Strategy::TP) {
        c.x_label = "TP degree (N_TP)";
        c.current_x = Y;
        const double limit =
            1 + 3 * static_cast<double>(in.d_ff) * in.bandwidth / (in.comm_bytes * in.flops);
        lo = 1;
        hi = std::max({2 * Y, 2 * limit, 8.0});
    } else {
        c.x_label = "tokens per device (B/N)";
        c.current_x = in.batch_tokens / (X * Y);
        // Around the present batch and where the two times meet (found below): four decades
        // each side of the larger span.
        double guess = c.current_x;
        for (const auto& l : planStrategy(in, s).limits)
            if (l.what.rfind("smallest", 0) == 0 && l.value > 0) guess = l.value;
        lo = std::min(c.current_x, guess) / 100;
        hi = std::max(c.current_x, guess) * 100;
    }
    lo = std::max(lo, 1e-9);
    const double step = std::log(hi / lo) / (points - 1);
    for (int i = 0; i < points; ++i) {
        const double v = lo * std::exp(step * i);
        const PassCost p = at(v);
        c.x.push_back(v);
        c.compute_s.push_back(p.compute_s);
        c.comm_s.push_back(p.comm_s);
    }
    // The first sign change of comm − compute, refined by bisection on a log scale.
    for (int i = 1; i < points; ++i) {
        const double g0 = c.comm_s[i - 1] - c.compute_s[i - 1], g1 = c.comm_s[i] - c.compute_s[i];
        if ((g0 > 0) == (g1 > 0) || g0 == 0) continue;
        double a = c.x[i - 1], z = c.x[i];
        for (int k = 0; k < 80; ++k) {
            const double m = std::sqrt(a * z);
            const PassCost p = at(m);
            const double g = p.comm_s - p.compute_s;
            if ((g > 0) == (g0 > 0))
                a = m;
            else
                z = m;
        }
        c.crossover = std::sqrt(a * z);
        c.crossover_s = at(*c.crossover).compute_s;
        break;
    }
    const PassCost now = at(c.current_x);
    c.current_compute_s = now.compute_s;
    c.current_comm_s = now.comm_s;
    return c;
}

PlannerPrediction predictStep(const PlannerInputs& in, Strategy s) {
    if (!in.model) throw std::invalid_argument("a whole-model prediction needs a model (--size)");
    if (s != Strategy::DP && s != Strategy::FSDP)
        throw std::invalid_argument(fmt::format(
            "a whole-model prediction is made for DP and FSDP, not {}", strategyTitle(s)));
    PlannerPrediction p;
    p.strategy = s;
    p.devices = in.dp;
    p.model = in.model->name;
    p.parameters = static_cast<double>(parameterCount(*in.model));
    const double N = static_cast<double>(in.dp);
    p.tokens_per_device = in.batch_tokens / N;
    // stepFlops() is linear in the tokens at a fixed context length: one sequence's, scaled.
    PointConfig one;
    one.model = *in.model;
    one.batch_size = 1;
    one.mode = Mode::Train;
    const StepFlops f = stepFlops(one);
    const double per_token = 1.0 / static_cast<double>(in.model->context_length);
    p.forward_flops = f.forward * per_token * p.tokens_per_device;
    p.backward_flops = f.backward * per_token * p.tokens_per_device;
    p.forward_compute_s = p.forward_flops / in.flops;
    p.backward_compute_s = p.backward_flops / in.flops;
    p.compute_s = p.forward_compute_s + p.backward_compute_s;
    const double S = p.parameters * in.comm_bytes;
    const double share = plannerRingShare(N);
    if (s == Strategy::DP) {
        p.backward_comm_bytes = 2 * share * S;
        p.comm_formula = "backward: all-reduce of the gradients, 2·(N−1)/N · P·b / W";
    } else {
        p.forward_comm_bytes = share * S;
        p.backward_comm_bytes = 2 * share * S;
        p.comm_formula =
            "forward: all-gather of the weights, (N−1)/N · P·b / W; backward: all-gather + "
            "reduce-scatter, 2·(N−1)/N · P·b / W";
    }
    p.forward_comm_s = p.forward_comm_bytes / in.bandwidth;
    p.backward_comm_s = p.backward_comm_bytes / in.bandwidth;
    p.step_s = std::max(p.forward_compute_s, p.forward_comm_s) +
               std::max(p.backward_compute_s, p.backward_comm_s);
    p.step_serial_s = p.compute_s + p.forward_comm_s + p.backward_comm_s;
    const double held = s == Strategy::DP ? p.parameters : p.parameters / N;
    p.memory_bytes = held * (in.param_bytes + in.grad_bytes + in.optimizer_bytes);
    return p;
}

PlannerReport makePlannerReport(const PlannerInputs& in,
                                std::optional<MachineMeasurement> measured) {
    PlannerReport r;
    r.inputs = in;
    r.measured = std::move(measured);
    for (Strategy s : allStrategies()) r.plans.push_back(planStrategy(in, s));
    r.collective_bytes =
        3.0 * static_cast<double>(in.d_model) * static_cast<double>(in.d_ff) * in.comm_bytes;
    r.collectives = ringCollectives(r.collective_bytes, in.dp * in.tp, in.bandwidth);
    if (in.model)
        for (Strategy s : {Strategy::DP, Strategy::FSDP})
            r.predictions.push_back(predictStep(in, s));
    return r;
}

std::vector<std::string> validateMeasureSpec(const MeasureSpec& spec) {
    std::vector<std::string> out;
    if (spec.device != "cpu" && spec.device != "cuda")
        out.push_back(fmt::format("measure on 'cpu' or 'cuda', not '{}'", spec.device));
    if (spec.gemm_n < 0 || spec.gemm_n > 65536)
        out.push_back(
            fmt::format("the GEMM size must be in 1..65536 (0: the default), got {}", spec.gemm_n));
    if (spec.world < 0 || spec.world > 1024)
        out.push_back(fmt::format(
            "the all-reduce's ranks must be in 2..1024 (0: the default), got {}", spec.world));
    if (spec.world == 1) out.push_back("an all-reduce over 1 rank measures nothing: use 2 or more");
    if (spec.allreduce_bytes < 0 || spec.allreduce_bytes > (int64_t{4} << 30))
        out.push_back(fmt::format(
            "the all-reduce's size must be in 1 B..4 GiB (0: the default), got {} bytes",
            spec.allreduce_bytes));
    if (spec.warmup < 0 || spec.warmup > 1000)
        out.push_back(fmt::format("warm-up must be in 0..1000, got {}", spec.warmup));
    if (spec.iters < 1 || spec.iters > 10000)
        out.push_back(fmt::format("iterations must be in 1..10000, got {}", spec.iters));
    return out;
}

PlannerInputs withMeasurement(PlannerInputs in, const MachineMeasurement& m) {
    if (m.flops > 0) in.flops = m.flops;
    if (m.bandwidth() > 0) in.bandwidth = m.bandwidth();
    return in;
}

}  // namespace ts
