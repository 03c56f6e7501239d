// The precision lab's runners: the course's sums recomputed with LibTorch tensors (as its
// script does) beside the torch-free arithmetic, and the autocast inspector, which runs a model
// once under autocast and records the dtype of every parameter, activation, the loss and the
// gradients.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "core/store.h"
#include "nn/autocast.h"
#include "nn/model.h"
#include "nn/optimizer.h"
#include "precision/precision.h"
#include "precision/precision_report.h"
#include "runtime/device.h"
#include "runtime/host_memory.h"
#include "runtime/step_ranges.h"

namespace ts {

namespace {

// Above this count the LibTorch check (one tiny op a step) would take seconds; it is skipped.
constexpr int64_t kMaxTorchCheckedCount = 200'000;

at::ScalarType scalarTypeOf(NumFormat f) {
    switch (f) {
        case NumFormat::FP16:
            return at::kHalf;
        case NumFormat::BF16:
            return at::kBFloat16;
        case NumFormat::FP32:
            break;
    }
    return at::kFloat;
}

// The course's script: s = torch.tensor(0, dtype=acc); s += torch.tensor(addend, dtype=x)
// (or s += x.type(torch.float32) for the explicit cast), `count` times.
double torchSum(const AccumulationVariant& v, double addend, int64_t count) {
    at::NoGradGuard no_grad;
    at::Tensor s = at::zeros({}, at::TensorOptions().dtype(scalarTypeOf(v.accumulator)));
    at::Tensor x =
        at::scalar_tensor(addend, at::TensorOptions().dtype(scalarTypeOf(v.addend_format)));
    if (v.explicit_cast) x = x.to(at::kFloat);
    for (int64_t i = 0; i < count; ++i) s.add_(x);
    return s.to(at::kDouble).item<double>();
}

std::string dtypeName(at::ScalarType t) {
    switch (t) {
        case at::kFloat:
            return "fp32";
        case at::kHalf:
            return "fp16";
        case at::kBFloat16:
            return "bf16";
        case at::kDouble:
            return "fp64";
        case at::kLong:
            return "int64";
        default:
            return std::string(c10::toString(t));
    }
}

std::string dtypeOf(const at::Tensor& t) {
    return t.defined() ? dtypeName(t.scalar_type()) : "none";
}

// Note [computed in]: what autocast ran each op in, measured. A thread-local RecordFunction
// callback (scopes FUNCTION, BACKWARD_FUNCTION and USER_SCOPE, with inputs and outputs) is
// installed for the inspector's run only. The experiment behind this (LibTorch 2.11, CPU, bf16
// autocast, the toy model Linear → ReLU → LayerNorm → Linear → cross entropy, then backward),
// as the callback saw it (bookkeeping ops left out):
//
//   fc1   aten::linear(fp32, fp32)
//           aten::to(fp32) → bf16, aten::to(fp32) → bf16      autocast casts x and the weight
//           aten::linear(bf16, bf16)                          ... and calls the op again
//             aten::matmul(bf16, bf16) → aten::mm(bf16, bf16) → bf16
//   relu  aten::relu(bf16) → aten::clamp_min(bf16) → bf16     once: not in the policy, it runs
//                                                             in whatever it is given
//   ln    aten::layer_norm(bf16, fp32, fp32)                  once: CPU autocast leaves it alone
//           aten::native_layer_norm(bf16, fp32, fp32) → bf16 (and fp32 mean, rstd)
//   fc2   as fc1 (only the weight is cast: the input is already bf16)
//   loss  aten::cross_entropy_loss(bf16, int64)
//           aten::to(bf16) → fp32                             the fp32 list: cast up
//           aten::cross_entropy_loss(fp32, int64) → log_softmax, nll_loss ... all fp32
//   backward (on the calling thread for the CPU; autograd nodes carry the forward op's sequence
//   number): MmBackward0 → aten::mm(bf16, bf16); NativeLayerNormBackward0 →
//   aten::native_layer_norm_backward(bf16, bf16, fp32, ...); ToCopyBackward0 → aten::to(bf16) →
//   fp32 (the cast's backward brings the weight's gradient back to fp32); LogSoftmaxBackward0,
//   NllLossBackward0 in fp32.
//
// So an op autocast casts for appears nested directly in an op of the same name, the inner
// call's inputs being what the kernel computed in; an op it leaves alone appears once. Each op
// record merges such a pair (cast = true). Casts' own ops (aten::to, _to_copy, copy_,
// empty_strided) and views (t, transpose, as_strided, view, resolve_conj, detach, ...) are
// bookkeeping: they and whatever runs inside them are not recorded. Modules are the enclosing
// RECORD_USER_SCOPE ranges (the toy's forward opens one per module, the LM's TS_RANGE names,
// the runner one for the loss), joined by "." ("layer.0.attention.scores"). A backward op
// belongs to the module of the forward op whose sequence number its autograd node carries.
// The callback is thread-local: ThreadLocalState (which autograd's worker threads take from the
// thread that called backward) carries thread-local callbacks, so a GPU's backward thread sees
// it too, and no other thread of the process is recorded. RecordFunction::inputs() needs the
// release (NDEBUG) layout LibTorch is built with, as this project's builds are.
class OpRecorder {
public:
    // One recording at a time (the callbacks find it through one pointer): a second inspector
    // run on another thread waits for the first.
    OpRecorder() : lock_(runMutex()) {
        stack().clear();
        instance_.store(this);
        handle_ = at::addThreadLocalCallback(
            at::RecordFunctionCallback(&OpRecorder::onStart, &OpRecorder::onEnd)
                .needsInputs(true)
                .needsOutputs(true)
                .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                         at::RecordScope::USER_SCOPE}));
    }
    ~OpRecorder() {
        at::removeCallback(handle_);
        instance_.store(nullptr);
    }
    OpRecorder(const OpRecorder&) = delete;
    OpRecorder& operator=(const OpRecorder&) = delete;

    void setPhase(const char* phase) { phase_.store(phase); }
    std::vector<AutocastOp> take() {
        std::lock_guard lock(mutex_);
        return std::move(ops_);
    }

private:
    enum class FrameKind { Scope, Node, Op, Skipped };
    struct Frame {
        FrameKind kind;
        std::string name;
        int64_t seq = -1;
        size_t op = 0;       // Op: the record
        int depth = 0;       // Op: the record's depth
        bool owner = false;  // Op: this call made the record (its end sets the output)
    };

    static bool isBookkeeping(std::string_view name) {
        static const std::unordered_set<std::string_view> kNames{"aten::empty",
                                                                 "aten::empty_like",
                                                                 "aten::empty_strided",
                                                                 "aten::to",
                                                                 "aten::_to_copy",
                                                                 "aten::copy_",
                                                                 "aten::view",
                                                                 "aten::_unsafe_view",
                                                                 "aten::reshape",
                                                                 "aten::_reshape_alias",
                                                                 "aten::as_strided",
                                                                 "aten::t",
                                                                 "aten::transpose",
                                                                 "aten::permute",
                                                                 "aten::expand",
                                                                 "aten::contiguous",
                                                                 "aten::resolve_conj",
                                                                 "aten::resolve_neg",
                                                                 "aten::detach",
                                                                 "aten::detach_",
                                                                 "aten::alias",
                                                                 "aten::resize_",
                                                                 "aten::zero_",
                                                                 "aten::fill_",
                                                                 "aten::zeros",
                                                                 "aten::ones_like",
                                                                 "aten::zeros_like",
                                                                 "aten::slice",
                                                                 "aten::select",
                                                                 "aten::unsqueeze",
                                                                 "aten::squeeze",
                                                                 "aten::unflatten",
                                                                 "aten::flatten",
                                                                 "aten::split",
                                                                 "aten::chunk",
                                                                 "aten::unbind",
                                                                 "aten::narrow",
                                                                 "aten::lift_fresh",
                                                                 "aten::result_type",
                                                                 "aten::item",
                                                                 "aten::_local_scalar_dense",
                                                                 "aten::is_nonzero",
                                                                 "aten::set_",
                                                                 "aten::clone"};
        return kNames.count(name) > 0;
    }

    static std::vector<Frame>& stack() {
        thread_local std::vector<Frame> frames;
        return frames;
    }

    static void addDtypes(const c10::IValue& v, std::vector<std::string>& out) {
        if (v.isTensor())
            out.push_back(dtypeOf(v.toTensor()));
        else if (v.isTensorList())
            for (const at::Tensor& t : v.toTensorVector()) out.push_back(dtypeOf(t));
        else if (v.isOptionalTensorList())
            for (const std::optional<at::Tensor> t : v.toOptionalTensorList())
                out.push_back(t ? dtypeOf(*t) : "none");
    }

    static std::string computedOf(const std::vector<std::string>& inputs) {
        std::vector<std::string> seen;
        for (const auto& d : inputs)
            if ((d == "fp32" || d == "bf16" || d == "fp16" || d == "fp64") &&
                std::find(seen.begin(), seen.end(), d) == seen.end())
                seen.push_back(d);
        std::string out;
        for (const auto& d : seen) out += (out.empty() ? "" : "+") + d;
        return out;
    }

    static std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction& fn) {
        const size_t depth = stack().size();
        try {
            record(fn);
        } catch (...) {
            // Whatever failed, the end callback pops one frame.
            stack().resize(depth);
            stack().push_back({FrameKind::Skipped, fn.name()});
        }
        return nullptr;
    }

    static void record(const at::RecordFunction& fn) {
        OpRecorder* self = instance_.load();
        auto& frames = stack();
        const std::string_view name = fn.name();
        switch (fn.scope()) {
            case at::RecordScope::USER_SCOPE:
                frames.push_back({FrameKind::Scope, std::string(name)});
                break;
            case at::RecordScope::BACKWARD_FUNCTION:
                frames.push_back({FrameKind::Node, std::string(name), fn.seqNr()});
                break;
            default: {
                if (!self || (!frames.empty() && frames.back().kind == FrameKind::Skipped) ||
                    name.rfind("aten::", 0) != 0 || isBookkeeping(name)) {
                    frames.push_back({FrameKind::Skipped, std::string(name)});
                    break;
                }
                std::vector<std::string> inputs;
#ifdef NDEBUG
                for (const c10::IValue& v : fn.inputs()) addDtypes(v, inputs);
#endif  // a Debug build of ours asserts on inputs() against a release LibTorch: no dtypes there
        // The nearest enclosing op and the module (user scopes, outermost first).
                const Frame* parent = nullptr;
                std::string module;
                int64_t node_seq = -1;
                std::string node;
                for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
                    if (it->kind == FrameKind::Op && !parent) parent = &*it;
                    if (it->kind == FrameKind::Node && node.empty()) {
                        node = it->name;
                        node_seq = it->seq;
                    }
                }
                for (const Frame& f : frames)
                    if (f.kind == FrameKind::Scope) module += (module.empty() ? "" : ".") + f.name;
                std::lock_guard lock(self->mutex_);
                if (parent && parent->name == name && self->ops_[parent->op].name == name &&
                    !self->ops_[parent->op].cast && parent->owner) {
                    // Autocast's second call: the inputs the kernel got.
                    AutocastOp& op = self->ops_[parent->op];
                    op.cast = true;
                    op.computed_dtype = computedOf(inputs);
                    if (fn.seqNr() >= 0) self->module_of_seq_.emplace(fn.seqNr(), op.module);
                    frames.push_back(
                        {FrameKind::Op, std::string(name), -1, parent->op, parent->depth, false});
                    break;
                }
                AutocastOp op;
                op.name = std::string(name);
                op.phase = self->phase_.load();
                op.depth = parent ? parent->depth + 1 : 0;
                op.input_dtypes = inputs;
                op.computed_dtype = computedOf(inputs);
                if (!node.empty()) {
                    op.autograd_node = node;
                    const auto m = self->module_of_seq_.find(node_seq);
                    op.module = m != self->module_of_seq_.end() ? m->second : std::string();
                } else {
                    op.module = module;
                    if (fn.seqNr() >= 0) self->module_of_seq_.emplace(fn.seqNr(), module);
                }
                self->ops_.push_back(std::move(op));
                frames.push_back({FrameKind::Op, std::string(name), -1, self->ops_.size() - 1,
                                  self->ops_.back().depth, true});
            }
        }
    }

    static void onEnd(const at::RecordFunction& fn, at::ObserverContext*) {
        auto& frames = stack();
        if (frames.empty()) return;
        const Frame f = std::move(frames.back());
        frames.pop_back();
        OpRecorder* self = instance_.load();
        if (f.kind != FrameKind::Op || !f.owner || !self) return;
        for (const c10::IValue& v : fn.outputs()) {
            std::vector<std::string> out;
            addDtypes(v, out);
            if (out.empty()) continue;
            std::lock_guard lock(self->mutex_);
            self->ops_[f.op].output_dtype = out.front();
            break;
        }
    }

    static std::mutex& runMutex() {
        static std::mutex m;
        return m;
    }

    static inline std::atomic<OpRecorder*> instance_{nullptr};
    std::unique_lock<std::mutex> lock_;
    at::CallbackHandle handle_ = at::INVALID_CALLBACK_HANDLE;
    std::atomic<const char*> phase_{"forward"};
    std::mutex mutex_;
    std::vector<AutocastOp> ops_;
    std::unordered_map<int64_t, std::string> module_of_seq_;
};

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

    // Each module runs in a RecordFunction user scope of its name (see Note [computed in]); with no
    // callback listening (training), a scope is one thread-local check.
    at::Tensor forward(const at::Tensor& x, std::vector<AutocastRecord>& rec) const {
        at::Tensor h1, h2, h3, logits;
        {
            RECORD_USER_SCOPE("fc1");
            h1 = at::linear(x, fc1);
        }
        rec.push_back({"fc1", "linear", dtypeOf(fc1), dtypeOf(x), dtypeOf(h1)});
        {
            RECORD_USER_SCOPE("relu");
            h2 = at::relu(h1);
        }
        rec.push_back({"relu", "relu", "", dtypeOf(h1), dtypeOf(h2)});
        {
            RECORD_USER_SCOPE("ln");
            h3 = at::layer_norm(h2, {10}, ln_weight, ln_bias);
        }
        rec.push_back({"ln", "layer_norm", dtypeOf(ln_weight), dtypeOf(h2), dtypeOf(h3)});
        {
            RECORD_USER_SCOPE("fc2");
            logits = at::linear(h3, fc2);
        }
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
    OpRecorder ops;
    {
        AutocastScope autocast(device.type(), spec.dtype);
        const at::Tensor logits = model.forward(x, report.records);
        {
            RECORD_USER_SCOPE("loss");
            loss = at::cross_entropy_loss(logits, y);
        }
        report.records.push_back({"loss", "cross_entropy", "", dtypeOf(logits), dtypeOf(loss)});
    }
    ops.setPhase("backward");
    loss.backward();  // outside autocast, as torch.autocast's documentation asks
    report.ops = ops.take();
    for (auto [name, p] :
         {std::pair{"fc1.weight", model.fc1}, std::pair{"ln.weight", model.ln_weight},
          std::pair{"ln.bias", model.ln_bias}, std::pair{"fc2.weight", model.fc2}})
        report.records.push_back(
            {std::string(name) + ".grad", "grad", dtypeOf(p), "", dtypeOf(p.grad())});
}

void inspectLm(const AutocastSpec& spec, const c10::Device& device, AutocastReport& report) {
    ModelConfig cfg = *modelPreset(spec.model);
    cfg.context_length = spec.context_length;
    const auto o = at::TensorOptions().device(device).dtype(at::kFloat);
    TransformerLM model(cfg, AttentionImpl::Naive, o);
    const at::Tensor tokens =
        at::randint(cfg.vocab_size, {spec.batch, spec.context_length}, o.dtype(at::kLong));
    const at::Tensor targets =
        at::randint(cfg.vocab_size, {spec.batch, spec.context_length}, o.dtype(at::kLong));
    at::Tensor loss;
    OpRecorder ops;
    {
        AutocastScope autocast(device.type(), spec.dtype);
        const at::Tensor logits = model->forward(tokens);
        report.records.push_back(
            {"lm", "transformer_lm", "fp32", dtypeOf(tokens), dtypeOf(logits)});
        {
            RECORD_USER_SCOPE("loss");
            loss = crossEntropy(logits, targets);
        }
        report.records.push_back({"loss", "cross_entropy", "", dtypeOf(logits), dtypeOf(loss)});
    }
    ops.setPhase("backward");
    loss.backward();
    report.ops = ops.take();
    for (const auto& p : model->named_parameters())
        report.records.push_back(
            {p.key() + ".grad", "grad", dtypeOf(p.value()), "", dtypeOf(p.value().grad())});
}

// Non-zero fp32 gradient elements that fp16 rounds to zero.
int64_t fp16Underflow(const at::Tensor& g) {
    return (g.ne(0) & g.to(at::kHalf).eq(0)).sum().item<int64_t>();
}

TrainNumericsCurve trainOnce(const TrainNumericsSpec& spec, Precision precision,
                             const c10::Device& device, const CancelToken& cancel,
                             Observer& observer) {
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
    // See Note [capture ranges]: every training step is a measured one (no warm-up).
    StepRanges ranges(device, spec.cuda_profiler_range, &observer);
    for (int step = 1; step <= spec.steps && !cancel.cancelled(); ++step) {
        const StepRanges::Step step_range = ranges.step(step - 1, false);
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
        if (scaler)
            scaler->scale(loss).backward();
        else
            loss.backward();
        for (const auto& p : params)
            rec.fp16_underflow += fp16Underflow(scaler ? p.grad() / rec.loss_scale : p.grad());
        if (scaler) {
            scaler->step(optimizer, params);
            rec.skipped =
                scaler->currentScale() < rec.loss_scale;  // the scale backs off only on overflow
        } else {
            optimizer.step();
        }
        curve.steps.push_back(rec);
    }
    ranges.finish();
    if (cancel.cancelled()) curve.status = Status::Cancelled;
    return curve;
}

}  // namespace

std::vector<TrainNumericsCurve> runTrainNumerics(const TrainNumericsSpec& spec, Observer& observer,
                                                 const CancelToken& cancel, ResultStore* store,
                                                 int64_t run_id) {
    if (const auto errors = validateTrainNumericsSpec(spec); !errors.empty())
        throw std::invalid_argument(errors.front());
    ProgressMeter meter(observer);
    std::vector<TrainNumericsCurve> out;
    for (size_t i = 0; i < spec.precisions.size(); ++i) {
        TrainNumericsCurve curve;
        try {
            curve = trainOnce(spec, spec.precisions[i], parseDevice(spec.device), cancel, observer);
        } catch (const std::exception& e) {
            curve.precision = spec.precisions[i];
            curve.status = Status::Failed;
            const std::string what = e.what();
            curve.error = what.substr(0, what.find('\n'));
            observer.log(LogLevel::Error,
                         fmt::format("{}: {}", toString(curve.precision), curve.error));
        }
        if (store) storeTrainNumerics(*store, run_id, static_cast<int>(i), curve);
        out.push_back(std::move(curve));
        meter.report(static_cast<double>(i + 1), static_cast<double>(spec.precisions.size()));
        if (cancel.cancelled()) break;
    }
    return out;
}

std::vector<AccumulationResult> runAccumulation(const AccumulationSpec& spec, Observer& observer,
                                                ResultStore* store, int64_t run_id) {
    if (const auto errors = validateAccumulationSpec(spec); !errors.empty())
        throw std::invalid_argument(errors.front());
    const auto variants = accumulationVariants(spec.fp16, spec.bf16);
    ProgressMeter meter(observer);
    std::vector<AccumulationResult> out;
    for (size_t i = 0; i < variants.size(); ++i) {
        AccumulationResult r = accumulate(variants[i], spec.addend, spec.count);
        if (spec.check_torch && spec.count <= kMaxTorchCheckedCount) {
            r.torch_value = torchSum(variants[i], spec.addend, spec.count);
            r.torch_checked = true;
            if (r.torch_value != r.value)
                observer.log(LogLevel::Warning,
                             fmt::format("{}: LibTorch sums to {}, the arithmetic here to {}",
                                         r.variant.name(), r.torch_value, r.value));
        }
        if (store) storeAccumulation(*store, run_id, static_cast<int>(i), r);
        out.push_back(std::move(r));
        meter.report(static_cast<double>(i + 1), static_cast<double>(variants.size()));
    }
    return out;
}

std::string autocastHostMemoryProblem(const AutocastSpec& spec) {
    if (spec.model == "toy" || spec.device != "cpu" || !modelPreset(spec.model)) return {};
    PointConfig point;
    point.model = *modelPreset(spec.model);
    point.model.context_length = spec.context_length;
    point.batch_size = spec.batch;
    point.mode = Mode::ForwardBackward;  // one forward and one backward, no optimizer
    point.device = spec.device;
    if (auto p = deviceMemoryProblem(point, systemMemoryBytes(), "this machine's memory");
        !p.empty())
        return p;
    return hostMemoryProblem(point, availableMemoryBytes());
}

AutocastReport runAutocastInspector(const AutocastSpec& spec, Observer& observer,
                                    ResultStore* store, int64_t run_id) {
    if (const auto errors = validateAutocastSpec(spec); !errors.empty())
        throw std::invalid_argument(errors.front());
    if (const auto problem = autocastHostMemoryProblem(spec); !problem.empty())
        throw std::invalid_argument(problem);
    AutocastReport report;
    report.spec = spec;
    try {
        const c10::Device device = parseDevice(spec.device);
        at::manual_seed(spec.seed);
        if (spec.model == "toy")
            inspectToy(spec, device, report);
        else
            inspectLm(spec, device, report);
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
