// The LibTorch side of the fused element-wise kernels: checks, parameter structs, and the
// choice between the CUDA launch (current stream) and the CPU reference.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "fused.h"
#include "trainscope/kernels/fused_ops.h"

#ifdef TRAINSCOPE_KERNELS_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace ts::kernels {

namespace {

[[noreturn]] void bad(const char* op, const std::string& msg) {
    throw std::invalid_argument(std::string(op) + ": " + msg);
}

Storage storageOf(const char* op, at::ScalarType t) {
    switch (t) {
        case at::kFloat:
            return Storage::F32;
        case at::kBFloat16:
            return Storage::BF16;
        case at::kHalf:
            return Storage::F16;
        default:
            bad(op, std::string("dtype ") + c10::toString(t) + " (fp32, bf16 or fp16 only)");
    }
}

// CUDA tensors need the CUDA build; every tensor of one call on one device.
bool onCuda(const char* op, std::initializer_list<const at::Tensor*> ts) {
    const at::Tensor& first = **ts.begin();
    for (const at::Tensor* t : ts)
        if (t->defined() && t->device() != first.device()) bad(op, "tensors on different devices");
    if (first.is_cpu()) return false;
    if (!first.is_cuda()) bad(op, "CPU or CUDA tensors only");
    if (!fusedKernelsBuilt()) bad(op, "this build has no CUDA kernels (not built with CUDA)");
    return true;
}

void needContiguous(const char* op, const at::Tensor& t, const char* name) {
    if (!t.is_contiguous()) bad(op, std::string(name) + " must be contiguous");
}

#ifdef TRAINSCOPE_KERNELS_CUDA
cudaStream_t streamOf(const at::Tensor& t) {
    return at::cuda::getCurrentCUDAStream(t.device().index());
}
#else
cudaStream_t streamOf(const at::Tensor&) { return nullptr; }
#endif
// The tensor's GPU is the current one for the launch (nothing to do for CPU tensors).
#define TS_ON_DEVICE(t)                                                                            \
    const c10::OptionalDeviceGuard guard_((t).is_cuda() ? std::optional<c10::Device>((t).device()) \
                                                        : std::nullopt)

}  // namespace

#ifndef TRAINSCOPE_KERNELS_CUDA
// Unreachable: onCuda refuses CUDA tensors in a build without the kernels.
void launchRmsNormFwd(const RmsNormFwdParams&, cudaStream_t) {}
int rmsNormBwdBlocks(int64_t) { return 1; }
void launchRmsNormBwd(const RmsNormBwdParams&, cudaStream_t) {}
void launchRope(const RopeParams&, cudaStream_t) {}
void launchSwigluFwd(const SwigluParams&, cudaStream_t) {}
void launchSwigluBwd(const SwigluParams&, cudaStream_t) {}
void launchSoftmaxFwd(const SoftmaxParams&, cudaStream_t) {}
void launchSoftmaxBwd(const SoftmaxParams&, cudaStream_t) {}
void launchCrossEntropyFwd(const CrossEntropyParams&, cudaStream_t) {}
void launchCrossEntropyBwd(const CrossEntropyParams&, cudaStream_t) {}
void launchAdamW(const AdamWParams&, cudaStream_t) {}
#endif

bool fusedKernelsBuilt() {
#ifdef TRAINSCOPE_KERNELS_CUDA
    return true;
#else
    return false;
#endif
}

RmsNormForward rmsNormForward(const at::Tensor& x, const at::Tensor& residual,
                              const at::Tensor& weight, double eps, at::ScalarType out_dtype) {
    constexpr const char* op = "fused RMSNorm";
    const bool cuda = onCuda(op, {&x, &residual, &weight});
    if (x.scalar_type() != at::kFloat || weight.scalar_type() != at::kFloat)
        bad(op, "x and the weight must be fp32");
    if (x.dim() < 1 || weight.dim() != 1 || weight.size(0) != x.size(-1))
        bad(op, "the weight must be (x.size(-1))");
    if (residual.defined() && residual.sizes() != x.sizes())
        bad(op, "the residual must have x's shape");
    needContiguous(op, x, "x");
    needContiguous(op, weight, "the weight");
    if (residual.defined()) needContiguous(op, residual, "the residual");
    TS_ON_DEVICE(x);
    RmsNormForward r;
    r.out = at::empty(x.sizes(), x.options().dtype(out_dtype));
    r.rstd = at::empty({x.numel() / std::max<int64_t>(x.size(-1), 1)}, x.options());
    RmsNormFwdParams p;
    p.x = x.data_ptr<float>();
    p.weight = weight.data_ptr<float>();
    p.out = r.out.data_ptr();
    p.rstd = r.rstd.data_ptr<float>();
    p.rows = r.rstd.numel();
    p.cols = static_cast<int>(x.size(-1));
    p.eps = static_cast<float>(eps);
    p.out_dtype = storageOf(op, out_dtype);
    if (residual.defined()) {
        r.sum = at::empty_like(x);
        p.residual = residual.data_ptr();
        p.residual_dtype = storageOf(op, residual.scalar_type());
        p.sum = r.sum.data_ptr<float>();
    }
    if (cuda)
        launchRmsNormFwd(p, streamOf(x));
    else
        rmsNormFwdRef(p);
    return r;
}

RmsNormBackward rmsNormBackward(const at::Tensor& grad_out_in, const at::Tensor& grad_sum_in,
                                const at::Tensor& x, const at::Tensor& rstd,
                                const at::Tensor& weight,
                                std::optional<at::ScalarType> residual_dtype) {
    constexpr const char* op = "fused RMSNorm backward";
    const at::Tensor grad_out = grad_out_in.contiguous();
    const at::Tensor grad_sum =
        grad_sum_in.defined() ? grad_sum_in.to(at::kFloat).contiguous() : grad_sum_in;
    const bool cuda = onCuda(op, {&x, &grad_out, &grad_sum, &rstd, &weight});
    if (grad_out.sizes() != x.sizes() || (grad_sum.defined() && grad_sum.sizes() != x.sizes()))
        bad(op, "gradients must have the input's shape");
    needContiguous(op, x, "the input");
    TS_ON_DEVICE(x);
    RmsNormBackward r;
    r.dx = at::empty_like(x);
    RmsNormBwdParams p;
    p.rows = rstd.numel();
    p.cols = static_cast<int>(x.size(-1));
    p.blocks = cuda ? rmsNormBwdBlocks(p.rows) : 1;
    at::Tensor partial = at::empty({p.blocks, p.cols}, x.options());
    p.grad_out = grad_out.data_ptr();
    p.out_dtype = storageOf(op, grad_out.scalar_type());
    p.grad_sum = grad_sum.defined() ? grad_sum.data_ptr<float>() : nullptr;
    p.x = x.data_ptr<float>();
    p.rstd = rstd.data_ptr<float>();
    p.weight = weight.data_ptr<float>();
    p.dx = r.dx.data_ptr<float>();
    p.dweight_partial = partial.data_ptr<float>();
    if (residual_dtype) {
        r.dresidual = at::empty(x.sizes(), x.options().dtype(*residual_dtype));
        p.dresidual = r.dresidual.data_ptr();
        p.residual_dtype = storageOf(op, *residual_dtype);
    }
    if (cuda)
        launchRmsNormBwd(p, streamOf(x));
    else
        rmsNormBwdRef(p);
    r.dweight = p.blocks == 1 ? partial.view({p.cols}) : partial.sum(0);
    return r;
}

namespace {
RopeParams ropeParams(const char* op, const at::Tensor& qkv, const at::Tensor& cos,
                      const at::Tensor& sin, int64_t heads) {
    if (qkv.dim() != 3 || heads < 1 || qkv.size(2) % (3 * heads) != 0)
        bad(op, "qkv must be (batch, seq, 3·heads·head_dim)");
    const int64_t d = qkv.size(2) / (3 * heads);
    if (d % 2 != 0) bad(op, "the head dim must be even");
    if (cos.scalar_type() != at::kFloat || sin.scalar_type() != at::kFloat || cos.dim() != 2 ||
        cos.sizes() != sin.sizes() || cos.size(0) < qkv.size(1) || cos.size(1) != d / 2)
        bad(op, "cos and sin must be fp32 (>= seq, head_dim / 2)");
    needContiguous(op, qkv, "qkv");
    needContiguous(op, cos, "cos");
    needContiguous(op, sin, "sin");
    RopeParams p;
    p.cos = cos.data_ptr<float>();
    p.sin = sin.data_ptr<float>();
    p.batch = qkv.size(0);
    p.seq = qkv.size(1);
    p.heads = static_cast<int>(heads);
    p.head_dim = static_cast<int>(d);
    p.dtype = storageOf(op, qkv.scalar_type());
    return p;
}
}  // namespace

void ropeQkvInPlace(const at::Tensor& qkv, const at::Tensor& cos, const at::Tensor& sin,
                    int64_t heads) {
    constexpr const char* op = "fused RoPE";
    const bool cuda = onCuda(op, {&qkv, &cos, &sin});
    RopeParams p = ropeParams(op, qkv, cos, sin, heads);
    TS_ON_DEVICE(qkv);
    p.src = qkv.data_ptr();
    p.dst = qkv.data_ptr();
    if (cuda)
        launchRope(p, streamOf(qkv));
    else
        ropeRef(p);
}

at::Tensor ropeQkvBackward(const at::Tensor& grad_in, const at::Tensor& cos, const at::Tensor& sin,
                           int64_t heads) {
    constexpr const char* op = "fused RoPE backward";
    const at::Tensor grad = grad_in.contiguous();
    const bool cuda = onCuda(op, {&grad, &cos, &sin});
    RopeParams p = ropeParams(op, grad, cos, sin, heads);
    TS_ON_DEVICE(grad);
    at::Tensor out = at::empty_like(grad);
    p.src = grad.data_ptr();
    p.dst = out.data_ptr();
    p.inverse = true;
    if (cuda)
        launchRope(p, streamOf(grad));
    else
        ropeRef(p);
    return out;
}

namespace {
SwigluParams swigluParams(const char* op, const at::Tensor& gu) {
    if (gu.dim() < 1 || gu.size(-1) % 2 != 0) bad(op, "gu's last dimension must be even ([g | u])");
    needContiguous(op, gu, "gu");
    SwigluParams p;
    p.f = static_cast<int>(gu.size(-1) / 2);
    p.rows = gu.numel() / std::max<int64_t>(gu.size(-1), 1);
    p.dtype = storageOf(op, gu.scalar_type());
    p.gu = gu.data_ptr();
    return p;
}
std::vector<int64_t> halfLast(const at::Tensor& gu) {
    std::vector<int64_t> s(gu.sizes().begin(), gu.sizes().end());
    s.back() /= 2;
    return s;
}
}  // namespace

at::Tensor swigluForward(const at::Tensor& gu) {
    constexpr const char* op = "fused SwiGLU";
    const bool cuda = onCuda(op, {&gu});
    SwigluParams p = swigluParams(op, gu);
    TS_ON_DEVICE(gu);
    at::Tensor h = at::empty(halfLast(gu), gu.options());
    p.h = h.data_ptr();
    if (cuda)
        launchSwigluFwd(p, streamOf(gu));
    else
        swigluFwdRef(p);
    return h;
}

at::Tensor swigluBackward(const at::Tensor& grad_h_in, const at::Tensor& gu) {
    constexpr const char* op = "fused SwiGLU backward";
    const at::Tensor grad_h = grad_h_in.to(gu.scalar_type()).contiguous();
    const bool cuda = onCuda(op, {&gu, &grad_h});
    SwigluParams p = swigluParams(op, gu);
    if (grad_h.sizes() != at::IntArrayRef(halfLast(gu))) bad(op, "the gradient must be (..., f)");
    TS_ON_DEVICE(gu);
    at::Tensor dgu = at::empty_like(gu);
    p.grad_h = grad_h.data_ptr();
    p.grad_gu = dgu.data_ptr();
    if (cuda)
        launchSwigluBwd(p, streamOf(gu));
    else
        swigluBwdRef(p);
    return dgu;
}

namespace {
SoftmaxParams softmaxParams(const char* op, const at::Tensor& scores, double scale, bool causal) {
    if (scores.dim() < 2) bad(op, "scores must be (..., queries, keys)");
    needContiguous(op, scores, "scores");
    if (scores.size(-1) > std::numeric_limits<int>::max()) bad(op, "too many keys");
    SoftmaxParams p;
    p.dtype = storageOf(op, scores.scalar_type());
    p.cols = static_cast<int>(scores.size(-1));
    p.queries = std::max<int64_t>(scores.size(-2), 1);
    p.rows = scores.numel() / std::max<int64_t>(scores.size(-1), 1);
    p.scale = static_cast<float>(scale);
    p.causal = causal;
    p.scores = scores.data_ptr();
    return p;
}
}  // namespace

SoftmaxForward attentionSoftmaxForward(const at::Tensor& scores, double scale, bool causal) {
    constexpr const char* op = "fused attention softmax";
    const bool cuda = onCuda(op, {&scores});
    SoftmaxParams p = softmaxParams(op, scores, scale, causal);
    TS_ON_DEVICE(scores);
    SoftmaxForward r{at::empty_like(scores),
                     at::empty({p.rows}, scores.options().dtype(at::kFloat))};
    p.probs = r.probs.data_ptr();
    p.lse = r.lse.data_ptr<float>();
    if (cuda)
        launchSoftmaxFwd(p, streamOf(scores));
    else
        softmaxFwdRef(p);
    return r;
}

at::Tensor attentionSoftmaxBackward(const at::Tensor& grad_probs_in, const at::Tensor& scores,
                                    const at::Tensor& lse, double scale, bool causal) {
    constexpr const char* op = "fused attention softmax backward";
    const at::Tensor grad_probs = grad_probs_in.to(scores.scalar_type()).contiguous();
    const bool cuda = onCuda(op, {&scores, &grad_probs, &lse});
    SoftmaxParams p = softmaxParams(op, scores, scale, causal);
    if (grad_probs.sizes() != scores.sizes()) bad(op, "the gradient must have the scores' shape");
    if (lse.scalar_type() != at::kFloat || lse.numel() != p.rows || !lse.is_contiguous())
        bad(op, "lse must be the forward's (rows) fp32");
    TS_ON_DEVICE(scores);
    at::Tensor grad_scores = at::empty_like(scores);
    p.grad_probs = grad_probs.data_ptr();
    p.grad_scores = grad_scores.data_ptr();
    p.lse = const_cast<float*>(lse.data_ptr<float>());
    if (cuda)
        launchSoftmaxBwd(p, streamOf(scores));
    else
        softmaxBwdRef(p);
    return grad_scores;
}

namespace {
CrossEntropyParams ceParams(const char* op, const at::Tensor& logits, const at::Tensor& targets) {
    if (logits.dim() != 2 || logits.stride(1) != 1)
        bad(op, "logits must be (rows, vocab), rows contiguous");
    if (targets.dim() != 1 || targets.size(0) != logits.size(0) ||
        targets.scalar_type() != at::kLong)
        bad(op, "targets must be (rows) int64");
    needContiguous(op, targets, "targets");
    if (logits.size(1) < 1) bad(op, "empty vocabulary");
    CrossEntropyParams p;
    p.logits = logits.data_ptr();
    p.targets = targets.data_ptr<int64_t>();
    p.rows = logits.size(0);
    p.row_stride = logits.stride(0);
    p.vocab = static_cast<int>(logits.size(1));
    p.dtype = storageOf(op, logits.scalar_type());
    return p;
}
}  // namespace

CrossEntropyForward crossEntropyForward(const at::Tensor& logits, const at::Tensor& targets) {
    constexpr const char* op = "fused cross-entropy";
    const bool cuda = onCuda(op, {&logits, &targets});
    CrossEntropyParams p = ceParams(op, logits, targets);
    TS_ON_DEVICE(logits);
    const auto f32 = logits.options().dtype(at::kFloat);
    at::Tensor rows = at::empty({p.rows}, f32);
    CrossEntropyForward r;
    r.lse = at::empty({p.rows}, f32);
    p.loss = rows.data_ptr<float>();
    p.lse = r.lse.data_ptr<float>();
    if (cuda)
        launchCrossEntropyFwd(p, streamOf(logits));
    else
        crossEntropyFwdRef(p);
    r.loss = rows.mean();
    return r;
}

at::Tensor crossEntropyBackward(const at::Tensor& grad_loss_in, const at::Tensor& logits,
                                const at::Tensor& targets, const at::Tensor& lse) {
    constexpr const char* op = "fused cross-entropy backward";
    const at::Tensor grad_loss = grad_loss_in.to(at::kFloat).contiguous();
    const bool cuda = onCuda(op, {&logits, &targets, &lse, &grad_loss});
    CrossEntropyParams p = ceParams(op, logits, targets);
    if (grad_loss.numel() != 1) bad(op, "the loss's gradient must be one value");
    if (lse.numel() != p.rows || lse.scalar_type() != at::kFloat)
        bad(op, "lse must be the forward's (rows) fp32");
    TS_ON_DEVICE(logits);
    at::Tensor dlogits = at::empty(logits.sizes(), logits.options());
    p.lse = const_cast<float*>(lse.data_ptr<float>());
    p.grad_loss = grad_loss.data_ptr<float>();
    p.grad_logits = dlogits.data_ptr();
    if (cuda)
        launchCrossEntropyBwd(p, streamOf(logits));
    else
        crossEntropyBwdRef(p);
    return dlogits;
}

void adamWStep(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
               const std::vector<at::Tensor>& exp_avgs, const std::vector<at::Tensor>& exp_avg_sqs,
               const std::vector<at::Tensor>& steps, const std::vector<at::Tensor>& copies,
               const AdamWSettings& settings) {
    constexpr const char* op = "fused AdamW";
    const size_t n = params.size();
    if (grads.size() != n || exp_avgs.size() != n || exp_avg_sqs.size() != n || steps.size() != n ||
        copies.size() != n)
        bad(op, "one gradient, moment pair, step and copy slot per parameter");
    if (n == 0) return;
    const bool cuda = onCuda(op, {&params[0]});
    for (size_t i = 0; i < n; ++i) {
        const at::Tensor* ts[] = {&params[i], &exp_avgs[i], &exp_avg_sqs[i], &steps[i]};
        for (const at::Tensor* t : ts)
            if (t->scalar_type() != at::kFloat || !t->is_contiguous() ||
                t->device() != params[0].device())
                bad(op,
                    "parameters, moments and steps must be contiguous fp32 tensors on one device");
        if (exp_avgs[i].numel() != params[i].numel() ||
            exp_avg_sqs[i].numel() != params[i].numel() || steps[i].numel() != 1 ||
            grads[i].numel() != params[i].numel() || !grads[i].is_contiguous() ||
            grads[i].device() != params[0].device())
            bad(op, "each gradient and moment must match its parameter; each step is one value");
        const at::ScalarType want = copies[i].defined() ? copies[i].scalar_type() : at::kFloat;
        if (grads[i].scalar_type() != want)
            bad(op, "a gradient must be fp32, or its copy's dtype where there is a copy");
        if (copies[i].defined() &&
            (copies[i].numel() != params[i].numel() || !copies[i].is_contiguous() ||
             copies[i].device() != params[0].device()))
            bad(op, "each copy must be a contiguous tensor of its parameter's size");
    }
    TS_ON_DEVICE(params[0]);
    // One launch per group of tensors with the same gradient and copy dtypes, at most
    // kAdamWMaxTensors tensors each.
    std::vector<bool> done(n, false);
    for (size_t first = 0; first < n; ++first) {
        if (done[first]) continue;
        AdamWParams p;
        p.grad_dtype = storageOf(op, grads[first].scalar_type());
        p.has_copy = copies[first].defined();
        if (p.has_copy) p.copy_dtype = storageOf(op, copies[first].scalar_type());
        p.lr = static_cast<float>(settings.lr);
        p.beta1 = static_cast<float>(settings.beta1);
        p.beta2 = static_cast<float>(settings.beta2);
        p.eps = static_cast<float>(settings.eps);
        p.weight_decay = static_cast<float>(settings.weight_decay);
        for (size_t i = first; i < n && p.count < kAdamWMaxTensors; ++i) {
            if (done[i] || grads[i].scalar_type() != grads[first].scalar_type() ||
                copies[i].defined() != p.has_copy ||
                (p.has_copy && copies[i].scalar_type() != copies[first].scalar_type()))
                continue;
            done[i] = true;
            AdamWTensor& t = p.t[p.count];
            t.param = params[i].data_ptr<float>();
            t.grad = grads[i].data_ptr();
            t.exp_avg = exp_avgs[i].data_ptr<float>();
            t.exp_avg_sq = exp_avg_sqs[i].data_ptr<float>();
            t.step = steps[i].data_ptr<float>();
            t.copy = p.has_copy ? copies[i].data_ptr() : nullptr;
            t.numel = params[i].numel();
            const auto aligned4 = [](const void* ptr, size_t elem) {
                return reinterpret_cast<uintptr_t>(ptr) % (4 * elem) == 0;
            };
            const size_t g_elem = grads[i].element_size();
            t.vec4 = t.numel % 4 == 0 && aligned4(t.param, 4) && aligned4(t.exp_avg, 4) &&
                     aligned4(t.exp_avg_sq, 4) && aligned4(t.grad, g_elem) &&
                     (!t.copy || aligned4(t.copy, copies[i].element_size()));
            p.block_start[p.count + 1] =
                p.block_start[p.count] + (t.numel + kAdamWChunk - 1) / kAdamWChunk;
            ++p.count;
        }
        if (cuda)
            launchAdamW(p, streamOf(params[0]));
        else
            adamWRef(p);
    }
}

}  // namespace ts::kernels
