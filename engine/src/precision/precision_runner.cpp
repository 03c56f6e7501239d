// The precision lab's runners: the course's sums recomputed with LibTorch tensors (as its
// script does) beside the torch-free arithmetic, and the autocast inspector, which runs a model
// once under autocast and records the dtype of every parameter, activation, the loss and the
// gradients.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "core/store.h"
#include "nn/autocast.h"
#include "nn/model.h"
#include "nn/optimizer.h"
#include "precision/precision.h"
#include "precision/precision_report.h"
#include "runtime/device.h"

namespace ts {

namespace {

// Above this count the LibTorch check (one tiny op a step) would take seconds; it is skipped.
constexpr int64_t kMaxTorchCheckedCount = 200'000;

at::ScalarType scalarTypeOf(NumFormat f) {
    switch (f) {
        case NumFormat::FP16: return at::kHalf;
        case NumFormat::BF16: return at::kBFloat16;
        case NumFormat::FP32: break;
    }
    return at::kFloat;
}

// The course's script: s = torch.tensor(0, dtype=acc); s += torch.tensor(addend, dtype=x)
// (or s += x.type(torch.float32) for the explicit cast), `count` times.
double torchSum(const AccumulationVariant& v, double addend, int64_t count) {
    at::NoGradGuard no_grad;
    at::Tensor s = at::zeros({}, at::TensorOptions().dtype(scalarTypeOf(v.accumulator)));
    at::Tensor x = at::scalar_tensor(addend, at::TensorOptions().dtype(scalarTypeOf(v.addend_format)));
    if (v.explicit_cast) x = x.to(at::kFloat);
    for (int64_t i = 0; i < count; ++i) s.add_(x);
    return s.to(at::kDouble).item<double>();
}

std::string dtypeName(at::ScalarType t) {
    switch (t) {
        case at::kFloat: return "fp32";
        case at::kHalf: return "fp16";
        case at::kBFloat16: return "bf16";
        case at::kDouble: return "fp64";
        case at::kLong: return "int64";
        default: return std::string(c10::toString(t));
    }
}

std::string dtypeOf(const at::Tensor& t) { return t.defined() ? dtypeName(t.scalar_type()) : "none"; }

// Note [the toy model]: the course's ToyModel (Linear(in, 10, bias=False) → ReLU →
// LayerNorm(10) → Linear(10, out, bias=False)) written as the aten ops its modules call.
// Autocast decides per op (at::linear, at::layer_norm, ...), not per module, so calling the ops
// directly gives exactly what nn.Module would, and lets each step's dtypes be recorded.
struct ToyModel {
    at::Tensor fc1, ln_weight, ln_bias, fc2;

    ToyModel(int64_t in, int64_t out, const at::TensorOptions& o) {
        fc1 = (at::randn({10, in}, o) / std::sqrt(static_cast<double>(in))).set_requires_grad(true);
        ln_weight = at::ones({10}, o).set_requires_grad(true);
        ln_bias = at::zeros({10}, o).set_requires_grad(true);
        fc2 = (at::randn({out, 10}, o) / std::sqrt(10.0)).set_requires_grad(true);
    }

    at::Tensor forward(const at::Tensor& x, std::vector<AutocastRecord>& rec) const {
        const at::Tensor h1 = at::linear(x, fc1);
        rec.push_back({"fc1", "linear", dtypeOf(fc1), dtypeOf(x), dtypeOf(h1)});
        const at::Tensor h2 = at::relu(h1);
        rec.push_back({"relu", "relu", "", dtypeOf(h1), dtypeOf(h2)});
        const at::Tensor h3 = at::layer_norm(h2, {10}, ln_weight, ln_bias);
        rec.push_back({"ln", "layer_norm", dtypeOf(ln_weight), dtypeOf(h2), dtypeOf(h3)});
        const at::Tensor logits = at::linear(h3, fc2);
        rec.push_back({"fc2", "linear", dtypeOf(fc2), dtypeOf(h3), dtypeOf(logits)});
        return logits;
    }
};

void inspectToy(const AutocastSpec& spec, const c10::Device& device, AutocastReport& report) {
    const auto o = at::TensorOptions().device(device).dtype(at::kFloat);
    ToyModel model(spec.in_features, spec.out_features, o);
    const at::Tensor x = at::randn({spec.batch, spec.in_features}, o);
    const at::Tensor y = at::randint(spec.out_features, {spec.batch}, o.dtype(at::kLong));
    at::Tensor loss;
    {
        AutocastScope autocast(device.type(), spec.dtype);
        const at::Tensor logits = model.forward(x, report.records);
        loss = at::cross_entropy_loss(logits, y);
        report.records.push_back({"loss", "cross_entropy", "", dtypeOf(logits), dtypeOf(loss)});
    }
    loss.backward();  // outside autocast, as torch.autocast's documentation asks
    for (auto [name, p] : {std::pair{"fc1.weight", model.fc1}, std::pair{"ln.weight", model.ln_weight},
                           std::pair{"ln.bias", model.ln_bias}, std::pair{"fc2.weight", model.fc2}})
        report.records.push_back({std::string(name) + ".grad", "grad", dtypeOf(p), "", dtypeOf(p.grad())});
}

void inspectLm(const AutocastSpec& spec, const c10::Device& device, AutocastReport& report) {
    ModelConfig cfg = *modelPreset(spec.model);
    cfg.context_length = spec.context_length;
    const auto o = at::TensorOptions().device(device).dtype(at::kFloat);
    TransformerLM model(cfg, AttentionImpl::Naive, o);
    const at::Tensor tokens = at::randint(cfg.vocab_size, {spec.batch, spec.context_length}, o.dtype(at::kLong));
    const at::Tensor targets = at::randint(cfg.vocab_size, {spec.batch, spec.context_length}, o.dtype(at::kLong));
    at::Tensor loss;
    {
        AutocastScope autocast(device.type(), spec.dtype);
        const at::Tensor logits = model->forward(tokens);
        report.records.push_back({"lm", "transformer_lm", "fp32", dtypeOf(tokens), dtypeOf(logits)});
        loss = crossEntropy(logits, targets);
        report.records.push_back({"loss", "cross_entropy", "", dtypeOf(logits), dtypeOf(loss)});
    }
    loss.backward();
    for (const auto& p : model->named_parameters())
        report.records.push_back({p.key() + ".grad", "grad", dtypeOf(p.value()), "", dtypeOf(p.value().grad())});
}

// Non-zero fp32 gradient elements that fp16 rounds to zero.
int64_t fp16Underflow(const at::Tensor& g) {
    return (g.ne(0) & g.to(at::kHalf).eq(0)).sum().item<int64_t>();
}

TrainNumericsCurve trainOnce(const TrainNumericsSpec& spec, Precision precision, const c10::Device& device,
                             const CancelToken& cancel) {
    TrainNumericsCurve curve;
    curve.precision = precision;
    // The same seed for every precision: the same weights, data and teacher.
    at::manual_seed(spec.seed);
    const auto o = at::TensorOptions().device(device).dtype(at::kFloat);
    ToyModel model(spec.in_features, spec.out_features, o);
    const at::Tensor x = at::randn({spec.batch, spec.in_features}, o);
    const at::Tensor teacher = at::randn({spec.out_features, spec.in_features}, o);
    const at::Tensor y = at::linear(x, teacher).argmax(1);
    const std::vector<at::Tensor> params{model.fc1, model.ln_weight, model.ln_bias, model.fc2};
    for (const auto& p : params) curve.grad_elements += p.numel();
    FusedAdamW optimizer(params, spec.lr);
    std::optional<GradScaler> scaler;
    if (precision == Precision::FP16) scaler.emplace(o, spec.init_scale);
    std::vector<AutocastRecord> unused;
    for (int step = 1; step <= spec.steps && !cancel.cancelled(); ++step) {
        optimizer.zeroGrad();
        at::Tensor loss;
        {
            AutocastScope autocast(device.type(), precision);
            loss = at::cross_entropy_loss(model.forward(x, unused), y);
            unused.clear();
        }
        TrainNumericsStep rec;
        rec.step = step;
        rec.loss = loss.item<double>();
        rec.loss_scale = scaler ? scaler->currentScale() : 0.0;
        if (scaler) scaler->scale(loss).backward();
        else loss.backward();
        for (const auto& p : params)
            rec.fp16_underflow += fp16Underflow(scaler ? p.grad() / rec.loss_scale : p.grad());
        if (scaler) {
            scaler->step(optimizer, params);
            rec.skipped = scaler->currentScale() < rec.loss_scale;  // the scale backs off only on overflow
        } else {
            optimizer.step();
        }
        curve.steps.push_back(rec);
    }
    if (cancel.cancelled()) curve.status = Status::Cancelled;
    return curve;
}

}  // namespace

std::vector<TrainNumericsCurve> runTrainNumerics(const TrainNumericsSpec& spec, Observer& observer,
                                                 const CancelToken& cancel, ResultStore* store, int64_t run_id) {
    if (const auto errors = validateTrainNumericsSpec(spec); !errors.empty())
        throw std::invalid_argument(errors.front());
    ProgressMeter meter(observer);
    std::vector<TrainNumericsCurve> out;
    for (size_t i = 0; i < spec.precisions.size(); ++i) {
        TrainNumericsCurve curve;
        try {
            curve = trainOnce(spec, spec.precisions[i], parseDevice(spec.device), cancel);
        } catch (const std::exception& e) {
            curve.precision = spec.precisions[i];
            curve.status = Status::Failed;
            const std::string what = e.what();
            curve.error = what.substr(0, what.find('\n'));
            observer.log(LogLevel::Error, fmt::format("{}: {}", toString(curve.precision), curve.error));
        }
        if (store) storeTrainNumerics(*store, run_id, static_cast<int>(i), curve);
        out.push_back(std::move(curve));
        meter.report(static_cast<double>(i + 1), static_cast<double>(spec.precisions.size()));
        if (cancel.cancelled()) break;
    }
    return out;
}

std::vector<AccumulationResult> runAccumulation(const AccumulationSpec& spec, Observer& observer, ResultStore* store,
                                                int64_t run_id) {
    if (const auto errors = validateAccumulationSpec(spec); !errors.empty()) throw std::invalid_argument(errors.front());
    const auto variants = accumulationVariants(spec.fp16, spec.bf16);
    ProgressMeter meter(observer);
    std::vector<AccumulationResult> out;
    for (size_t i = 0; i < variants.size(); ++i) {
        AccumulationResult r = accumulate(variants[i], spec.addend, spec.count);
        if (spec.check_torch && spec.count <= kMaxTorchCheckedCount) {
            r.torch_value = torchSum(variants[i], spec.addend, spec.count);
            r.torch_checked = true;
            if (r.torch_value != r.value)
                observer.log(LogLevel::Warning, fmt::format("{}: LibTorch sums to {}, the arithmetic here to {}",
                                                            r.variant.name(), r.torch_value, r.value));
        }
        if (store) storeAccumulation(*store, run_id, static_cast<int>(i), r);
        out.push_back(std::move(r));
        meter.report(static_cast<double>(i + 1), static_cast<double>(variants.size()));
    }
    return out;
}

AutocastReport runAutocastInspector(const AutocastSpec& spec, Observer& observer, ResultStore* store,
                                    int64_t run_id) {
    if (const auto errors = validateAutocastSpec(spec); !errors.empty()) throw std::invalid_argument(errors.front());
    AutocastReport report;
    report.spec = spec;
    try {
        const c10::Device device = parseDevice(spec.device);
        at::manual_seed(spec.seed);
        if (spec.model == "toy") inspectToy(spec, device, report);
        else inspectLm(spec, device, report);
    } catch (const std::exception& e) {
        report.status = Status::Failed;
        const std::string what = e.what();
        report.error = what.substr(0, what.find('\n'));
        observer.log(LogLevel::Error, report.error);
    }
    if (store) storeAutocast(*store, run_id, 0, report);
    observer.progress(1.0, 0.0);
    return report;
}

}  // namespace ts
