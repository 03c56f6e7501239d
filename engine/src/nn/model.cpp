#include "nn/model.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cmath>

#include "nn/attention.h"
#include "nn/autocast.h"
#include "nn/fused.h"
#include "nn/ranges.h"
#include "trainscope/kernels/fused_ops.h"

namespace ts {
namespace {

// Truncated normal at ±3σ, as the course initialises its layers.
at::Tensor truncNormal(at::IntArrayRef shape, double std, const at::TensorOptions& options) {
    return at::empty(shape, options).normal_(0.0, std).clamp_(-3.0 * std, 3.0 * std);
}

at::Tensor linearWeight(int64_t out, int64_t in, const at::TensorOptions& options) {
    return truncNormal({out, in}, std::sqrt(2.0 / static_cast<double>(in + out)), options);
}

}  // namespace

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
    const auto in_dtype = x.scalar_type();
    at::Tensor y = at::rms_norm(x.to(at::kFloat), {x.size(-1)}, weight, eps);
    return y.to(in_dtype);
}

at::Tensor applyRope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
    const int64_t seq = x.size(-2);
    at::Tensor c = cos.slice(0, 0, seq).to(x.scalar_type());
    at::Tensor s = sin.slice(0, 0, seq).to(x.scalar_type());
    at::Tensor pairs = x.unflatten(-1, {-1, 2});
    at::Tensor x0 = pairs.select(-1, 0), x1 = pairs.select(-1, 1);
    return at::stack({x0 * c - x1 * s, x0 * s + x1 * c}, -1).flatten(-2);
}

at::Tensor crossEntropy(const at::Tensor& logits, const at::Tensor& targets) {
    return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
}

TransformerBlockImpl::TransformerBlockImpl(const ModelConfig& cfg, const at::TensorOptions& options)
    : d_model_(cfg.d_model), num_heads_(cfg.num_heads), d_ff_(cfg.d_ff) {
    const int64_t d = cfg.d_model, f = cfg.d_ff;
    norm1_ = register_parameter("norm1", at::ones({d}, options));
    w_qkv_ = register_parameter("w_qkv", linearWeight(3 * d, d, options));
    w_o_ = register_parameter("w_o", linearWeight(d, d, options));
    norm2_ = register_parameter("norm2", at::ones({d}, options));
    w_13_ = register_parameter("w_13", linearWeight(2 * f, d, options));
    w_2_ = register_parameter("w_2", linearWeight(d, f, options));
}

// Note [profiler ranges]: RECORD_USER_SCOPE ranges name the parts of the model for the
// profiler lab (attention, mlp, norm; lm_head, loss). With no profiler listening a range is a
// check of a thread-local flag, and its name is not even built.
at::Tensor TransformerBlockImpl::forward(const at::Tensor& x, const at::Tensor& cos,
                                         const at::Tensor& sin, AttentionImpl attention) {
    const int64_t b = x.size(0), s = x.size(1), h = num_heads_, dh = d_model_ / num_heads_;
    at::Tensor normed1;
    {
        TS_RANGE("norm");
        normed1 = rmsNorm(x, norm1_);
    }
    at::Tensor y;
    {
        TS_RANGE("attention");
        at::Tensor qkv = at::linear(normed1, w_qkv_).view({b, s, 3, h, dh});
        at::Tensor q = qkv.select(2, 0).transpose(1, 2);
        at::Tensor k = qkv.select(2, 1).transpose(1, 2);
        at::Tensor v = qkv.select(2, 2).transpose(1, 2);
        q = applyRope(q, cos, sin);
        k = applyRope(k, cos, sin);
        at::Tensor a = attend(q, k, v, attention, /*causal=*/true);
        y = x + at::linear(a.transpose(1, 2).reshape({b, s, d_model_}), w_o_);
    }
    at::Tensor normed2;
    {
        TS_RANGE("norm");
        normed2 = rmsNorm(y, norm2_);
    }
    TS_RANGE("mlp");
    at::Tensor gu = at::linear(normed2, w_13_);
    auto halves = gu.chunk(2, -1);
    return y + at::linear(at::silu(halves[0]) * halves[1], w_2_);
}

namespace {
// A linear's weight: its low-precision copy where the model has one.
const at::Tensor& copyOr(const at::Tensor& weight, const at::Tensor& copy) {
    return copy.defined() ? copy : weight;
}
}  // namespace

// Note [fused model]:
// The compiled mode's model computes the same function as forward() with fewer launches:
//  - a residual add and the RMSNorm after it are one op (fusedAddRmsNorm), so the block's
//    second add meets the next block's first norm (or the final norm); the norms' outputs come
//    out in autocast's dtype, which makes the next linear's cast a no-op;
//  - RoPE rotates q and k in place inside the fused q/k/v projection (fusedRopeQkv);
//  - with our attention kernels, attention reads q, k, v there and writes (batch, seq, d)
//    (flashAttentionQkv): no transposes or copies, forward or backward; with the others, q, k
//    and v are views whose gradients are written into one tensor (splitQkv);
//  - SwiGLU is one op, and the loss is fusedCrossEntropy on the bf16 logits;
//  - the naive attention's scale, causal mask and softmax are one op (fusedNaiveAttention; in
//    eager they are five kernels each way, the softmax over an fp32 copy), as torch.compile
//    fuses them; its two matmuls stay;
//  - under autocast, the linears read bf16 copies of their weights that the optimizer keeps
//    (makeLowPrecisionCopies; see Note [low-precision weight copies] in kernels/src/fused_ops.cu)
//    instead of casting every weight forward and its gradient back.
// The GEMMs are LibTorch's, as in forward(). Each fused op computes
// in fp32 and rounds once, so the two differ by rounding (tests/nn/tst_fused.cpp holds them
// together on the CPU, tst_fused_gpu on the GPU).
std::pair<at::Tensor, at::Tensor> TransformerBlockImpl::forwardFused(
    const at::Tensor& x, const at::Tensor& normed, const at::Tensor& cos, const at::Tensor& sin,
    AttentionImpl attention, const at::Tensor& next_norm, at::ScalarType activations,
    KeptAttention* kept, bool first_pass) {
    const int64_t b = x.size(0), s = x.size(1), h = num_heads_;
    at::Tensor attn_out;
    {
        TS_RANGE("attention");
        const at::Tensor qkv =
            fusedRopeQkv(at::linear(normed, copyOr(w_qkv_, w_qkv_low_)), cos, sin, h);
        at::Tensor a = attention == AttentionImpl::Flash
                           ? flashAttentionQkv(qkv, h, kept, first_pass)
                           : at::Tensor();
        if (!a.defined()) {
            const auto [q, k, v] = splitQkv(qkv, h);
            a = (attention == AttentionImpl::Naive ? fusedNaiveAttention(q, k, v, /*causal=*/true)
                                                   : attend(q, k, v, attention, /*causal=*/true))
                    .transpose(1, 2)
                    .reshape({b, s, d_model_});
        }
        attn_out = at::linear(a, copyOr(w_o_, w_o_low_));
    }
    at::Tensor y, normed2;
    {
        TS_RANGE("norm");
        std::tie(y, normed2) = fusedAddRmsNorm(x, attn_out, norm2_, 1e-5, activations);
    }
    TS_RANGE("mlp");
    const at::Tensor m = at::linear(fusedSwiglu(at::linear(normed2, copyOr(w_13_, w_13_low_))),
                                    copyOr(w_2_, w_2_low_));
    return fusedAddRmsNorm(y, m, next_norm, 1e-5, activations);
}

TransformerLMImpl::TransformerLMImpl(const ModelConfig& cfg, AttentionImpl attention,
                                     const at::TensorOptions& options)
    : cfg_(cfg), attention_(attention) {
    embedding_ =
        register_parameter("embedding", truncNormal({cfg.vocab_size, cfg.d_model}, 1.0, options));
    for (int64_t i = 0; i < cfg.num_layers; ++i)
        blocks_.push_back(
            register_module("block" + std::to_string(i), TransformerBlock(cfg, options)));
    norm_final_ = register_parameter("norm_final", at::ones({cfg.d_model}, options));
    lm_head_ = register_parameter("lm_head", linearWeight(cfg.vocab_size, cfg.d_model, options));

    // θ_k = theta^(-2k/d) for pair k; angle = position · θ_k.
    const int64_t half = cfg.headDim() / 2;
    auto f64 = options.dtype(at::kDouble);
    at::Tensor k = at::arange(half, f64);
    at::Tensor inv_freq = at::pow(cfg.rope_theta, -2.0 * k / static_cast<double>(cfg.headDim()));
    at::Tensor pos = at::arange(cfg.context_length, f64);
    at::Tensor angles = at::outer(pos, inv_freq);
    rope_cos_ = register_buffer("rope_cos", angles.cos().to(at::kFloat));
    rope_sin_ = register_buffer("rope_sin", angles.sin().to(at::kFloat));
}

namespace {

// The precision autocast had when a checkpoint ran its segment (the backward's thread has its
// own autocast state: the recompute must compute as the forward did).
Precision autocastPrecision(at::DeviceType type) {
    if (!at::autocast::is_autocast_enabled(type)) return Precision::FP32;
    return at::autocast::get_autocast_dtype(type) == at::kBFloat16 ? Precision::BF16
                                                                   : Precision::FP16;
}

// See Note [activation checkpointing] (core/point.h): blocks [begin, end) of a model as one node of
// the graph. Its forward runs them without recording (Function::apply runs it in no-grad mode)
// and keeps only their input; its backward runs them again with autograd, under the
// forward's autocast, and back-propagates the output's gradient through that recompute
// (reentrant), which accumulates the segment's weights' gradients and gives the input's.
struct SegmentCheckpoint : public torch::autograd::Function<SegmentCheckpoint> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                              int64_t model, int64_t begin, int64_t end) {
        ctx->saved_data["model"] = model;
        ctx->saved_data["begin"] = begin;
        ctx->saved_data["end"] = end;
        ctx->saved_data["precision"] = static_cast<int64_t>(autocastPrecision(x.device().type()));
        ctx->save_for_backward({x});
        auto* m = reinterpret_cast<TransformerLMImpl*>(model);
        const bool outer = m->checkpointFirstPass();
        m->setCheckpointFirstPass(true);
        at::Tensor out;
        try {
            out = m->runBlocks(x, static_cast<size_t>(begin), static_cast<size_t>(end));
        } catch (...) {
            m->setCheckpointFirstPass(outer);
            throw;
        }
        m->setCheckpointFirstPass(outer);
        return out;
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        at::Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(true);
        auto* model = reinterpret_cast<TransformerLMImpl*>(ctx->saved_data["model"].toInt());
        const auto precision = static_cast<Precision>(ctx->saved_data["precision"].toInt());
        at::Tensor out;
        {
            at::AutoGradMode grad(true);
            AutocastScope autocast(x.device().type(), precision);
            model->setCheckpointFirstPass(false);  // a recompute records
            TS_RANGE("recompute");
            out = model->runBlocks(x, static_cast<size_t>(ctx->saved_data["begin"].toInt()),
                                   static_cast<size_t>(ctx->saved_data["end"].toInt()));
        }
        torch::autograd::backward({out}, {grads[0]});
        return {x.grad(), at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

}  // namespace

at::Tensor TransformerLMImpl::runBlocks(const at::Tensor& x, size_t begin, size_t end) {
    const bool recording = at::GradMode::is_enabled() && x.requires_grad();
    auto checkpoint = [&](const at::Tensor& in, size_t b, size_t e) {
        return SegmentCheckpoint::apply(in, reinterpret_cast<int64_t>(this),
                                        static_cast<int64_t>(b), static_cast<int64_t>(e));
    };
    if (recording && checkpoint_.kind == Checkpointing::Kind::Nested && end - begin > 1) {
        // Halved, each half a checkpoint; a half's recompute halves again.
        const size_t mid = begin + (end - begin) / 2;
        return checkpoint(checkpoint(x, begin, mid), mid, end);
    }
    if (fused_) return runFusedBlocks(x, begin, end);
    at::Tensor h = x;
    for (size_t i = begin; i < end; ++i) {
        TS_RANGE("layer." + std::to_string(i));
        if (unit_hooks_.enter) unit_hooks_.enter(i + 1);
        h = blocks_[i]->forward(h, rope_cos_, rope_sin_, attention_);
        if (unit_hooks_.leave) h = unit_hooks_.leave(i + 1, h);
    }
    return h;
}

void TransformerLMImpl::setUnitHooks(UnitHooks hooks) { unit_hooks_ = std::move(hooks); }

std::vector<std::vector<at::Tensor*>> TransformerLMImpl::unitWeights() {
    std::vector<std::vector<at::Tensor*>> units{{&embedding_}};
    for (auto& b : blocks_) units.push_back(b->linearWeights());
    units.push_back({&lm_head_});
    return units;
}

std::vector<at::Tensor*> TransformerLMImpl::replicatedWeights() {
    std::vector<at::Tensor*> out;
    for (auto& b : blocks_)
        for (at::Tensor* w : b->normWeights()) out.push_back(w);
    out.push_back(&norm_final_);
    return out;
}

at::Tensor TransformerLMImpl::forward(const at::Tensor& tokens) {
    if (fused_) return forwardFused(tokens);
    at::Tensor x = forwardHidden(tokens);
    TS_RANGE("lm_head");
    const size_t head = blocks_.size() + 1;
    if (unit_hooks_.enter) unit_hooks_.enter(head);
    at::Tensor logits = at::linear(x, lm_head_);
    return unit_hooks_.leave ? unit_hooks_.leave(head, logits) : logits;
}

at::Tensor TransformerLMImpl::forwardLoss(const at::Tensor& tokens, const at::Tensor& targets) {
    at::Tensor x = fused_ ? forwardFusedHidden(tokens) : forwardHidden(tokens);
    TS_RANGE("lm_head");
    const size_t head = blocks_.size() + 1;
    if (unit_hooks_.enter) unit_hooks_.enter(head);
    at::Tensor loss = linearCrossEntropy(x, lm_head_, targets);
    return unit_hooks_.leave ? unit_hooks_.leave(head, loss) : loss;
}

at::Tensor TransformerLMImpl::forwardHidden(const at::Tensor& tokens) {
    TORCH_CHECK(tokens.size(1) <= cfg_.context_length, "sequence of ", tokens.size(1),
                " tokens is longer than the context length ", cfg_.context_length);
    at::Tensor x;
    {
        TS_RANGE("embedding");
        if (unit_hooks_.enter) unit_hooks_.enter(0);
        x = at::embedding(embedding_, tokens);
        if (unit_hooks_.leave) x = unit_hooks_.leave(0, x);
    }
    // Every k blocks (or ⌈√N⌉) a checkpoint: segments from here, whose recompute runs its blocks
    // one by one; nested checkpoints split inside runBlocks.
    const int64_t k = checkpointSegment(checkpoint_, static_cast<int64_t>(blocks_.size()));
    if (k > 0 && at::GradMode::is_enabled() && x.requires_grad()) {
        const size_t n = blocks_.size(), step = static_cast<size_t>(k);
        for (size_t b = 0; b < n; b += step)
            x = SegmentCheckpoint::apply(x, reinterpret_cast<int64_t>(this),
                                         static_cast<int64_t>(b),
                                         static_cast<int64_t>(std::min(n, b + step)));
    } else {
        x = runBlocks(x, 0, blocks_.size());
    }
    TS_RANGE("norm");
    return rmsNorm(x, norm_final_);
}

namespace {

// See Note [fused LM head and loss].
struct LinearCrossEntropy : public torch::autograd::Function<LinearCrossEntropy> {
    static int64_t chunkRows(int64_t vocab, int64_t chunk_logits) {
        return std::max<int64_t>(1, chunk_logits / std::max<int64_t>(vocab, 1));
    }
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                              const at::Tensor& weight, const at::Tensor& targets,
                              int64_t chunk_logits) {
        const auto type = x.device().type();
        // The GEMMs' dtype: autocast's where it is on (the backward's thread may not have it).
        const at::ScalarType dtype = at::autocast::is_autocast_enabled(type)
                                         ? at::autocast::get_autocast_dtype(type)
                                         : x.scalar_type();
        const at::Tensor x2 = x.reshape({-1, x.size(-1)});
        const at::Tensor t = targets.reshape({-1});
        const at::Tensor w = weight.to(dtype);
        const int64_t n = x2.size(0), rows = chunkRows(weight.size(0), chunk_logits);
        at::Tensor lse = at::empty({n}, x.options().dtype(at::kFloat));
        at::Tensor total = at::zeros({}, x.options().dtype(at::kFloat));
        for (int64_t b = 0; b < n; b += rows) {
            const int64_t m = std::min(rows, n - b);
            // The chunk's logits in the GEMM's dtype, read once by the fused cross-entropy (its
            // fp32 arithmetic, no fp32 copy of them; See Note [fused element-wise kernels]).
            const at::Tensor logits = at::mm(x2.narrow(0, b, m).to(dtype), w.t());
            const kernels::CrossEntropyForward ce =
                kernels::crossEntropyForward(logits, t.narrow(0, b, m).contiguous());
            lse.narrow(0, b, m).copy_(ce.lse);
            total += ce.loss * static_cast<double>(m);
        }
        ctx->save_for_backward({x, weight, targets, lse});
        ctx->saved_data["dtype"] = static_cast<int64_t>(dtype);
        ctx->saved_data["rows"] = rows;
        return (total / static_cast<double>(n)).to(x.scalar_type());
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const at::Tensor &x = saved[0], &weight = saved[1], &targets = saved[2], &lse = saved[3];
        const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
        const at::Tensor x2 = x.reshape({-1, x.size(-1)});
        const at::Tensor t = targets.reshape({-1});
        const at::Tensor w = weight.to(dtype);
        const int64_t n = x2.size(0), rows = ctx->saved_data["rows"].toInt();
        const at::Tensor dloss = grads[0].to(at::kFloat);
        at::Tensor grad_x = at::empty_like(x2);
        at::Tensor grad_w = at::zeros(weight.sizes(), weight.options().dtype(at::kFloat));
        for (int64_t b = 0; b < n; b += rows) {
            const int64_t m = std::min(rows, n - b);
            const at::Tensor xc = x2.narrow(0, b, m).to(dtype);
            // (softmax − one-hot) · dloss / n in the logits' dtype: the kernel divides by the
            // chunk's m rows, so it is given dloss · m / n.
            const at::Tensor g = kernels::crossEntropyBackward(
                dloss * (static_cast<double>(m) / static_cast<double>(n)), at::mm(xc, w.t()),
                t.narrow(0, b, m).contiguous(), lse.narrow(0, b, m).contiguous());
            grad_x.narrow(0, b, m).copy_(at::mm(g, w));
            grad_w.add_(at::mm(g.t(), xc));
        }
        return {grad_x.view(x.sizes()), grad_w.to(weight.scalar_type()), at::Tensor(),
                at::Tensor()};
    }
};

}  // namespace

at::Tensor linearCrossEntropy(const at::Tensor& x, const at::Tensor& weight,
                              const at::Tensor& targets, int64_t chunk_logits) {
    return LinearCrossEntropy::apply(x, weight, targets, chunk_logits);
}

}  // namespace ts

namespace ts {

at::Tensor TransformerLMImpl::forwardFused(const at::Tensor& tokens) {
    const at::Tensor normed = forwardFusedHidden(tokens);
    TS_RANGE("lm_head");
    const size_t head = blocks_.size() + 1;
    if (unit_hooks_.enter) unit_hooks_.enter(head);
    at::Tensor logits = at::linear(normed, copyOr(lm_head_, lm_head_low_));
    return unit_hooks_.leave ? unit_hooks_.leave(head, logits) : logits;
}

namespace {
// The dtype the fused model's norms write: the one its linears compute in.
at::ScalarType linearDtype(const at::Tensor& x) {
    const auto type = x.device().type();
    return at::autocast::is_autocast_enabled(type) ? at::autocast::get_autocast_dtype(type)
                                                   : x.scalar_type();
}
}  // namespace

at::Tensor TransformerLMImpl::forwardFusedHidden(const at::Tensor& tokens) {
    at::Tensor x;
    {
        TS_RANGE("embedding");
        if (unit_hooks_.enter) unit_hooks_.enter(0);
        // The fused norms take the residual stream in fp32 (bf16 weights give a bf16 embedding).
        x = at::embedding(embedding_, tokens).to(at::kFloat);
        if (unit_hooks_.leave) x = unit_hooks_.leave(0, x);
    }
    const at::ScalarType act = linearDtype(x);
    for (auto& kept : kept_) kept = KeptAttention{};  // a step's own (a forward alone leaves some)
    const int64_t k = checkpointSegment(checkpoint_, static_cast<int64_t>(blocks_.size()));
    const bool recording = at::GradMode::is_enabled() && x.requires_grad();
    if (recording && checkpoint_.kind != Checkpointing::Kind::None) {
        // Checkpoint segments (see Note [activation checkpointing]); each recomputes its first
        // norm from its input, so one more norm a segment than without.
        if (checkpoint_.kind == Checkpointing::Kind::Nested) {
            x = runBlocks(x, 0, blocks_.size());
        } else {
            const size_t n = blocks_.size(), step = static_cast<size_t>(k);
            for (size_t b = 0; b < n; b += step)
                x = SegmentCheckpoint::apply(x, reinterpret_cast<int64_t>(this),
                                             static_cast<int64_t>(b),
                                             static_cast<int64_t>(std::min(n, b + step)));
        }
        TS_RANGE("norm");
        return fusedRmsNorm(x, norm_final_, 1e-5, act);
    }
    at::Tensor normed;
    {
        TS_RANGE("norm");
        normed = fusedRmsNorm(x, blocks_.empty() ? norm_final_ : blocks_[0]->firstNormWeight(),
                              1e-5, act);
    }
    for (size_t i = 0; i < blocks_.size(); ++i) {
        TS_RANGE("layer." + std::to_string(i));
        const at::Tensor& next =
            i + 1 < blocks_.size() ? blocks_[i + 1]->firstNormWeight() : norm_final_;
        if (unit_hooks_.enter) unit_hooks_.enter(i + 1);
        std::tie(x, normed) =
            blocks_[i]->forwardFused(x, normed, rope_cos_, rope_sin_, attention_, next, act);
        if (unit_hooks_.leave) {
            // Both outputs: the block's backward starts once both gradients are in.
            x = unit_hooks_.leave(i + 1, x);
            normed = unit_hooks_.leave(i + 1, normed);
        }
    }
    return normed;
}

at::Tensor TransformerLMImpl::runFusedBlocks(const at::Tensor& x, size_t begin, size_t end) {
    if (begin >= end) return x;
    const at::ScalarType act = linearDtype(x);
    at::Tensor h = x, normed;
    {
        TS_RANGE("norm");
        normed = fusedRmsNorm(h, blocks_[begin]->firstNormWeight(), 1e-5, act);
    }
    for (size_t i = begin; i < end; ++i) {
        TS_RANGE("layer." + std::to_string(i));
        const at::Tensor& next =
            i + 1 < blocks_.size() ? blocks_[i + 1]->firstNormWeight() : norm_final_;
        if (unit_hooks_.enter) unit_hooks_.enter(i + 1);
        KeptAttention* kept = kept_.empty() ? nullptr : &kept_[i];
        std::tie(h, normed) = blocks_[i]->forwardFused(h, normed, rope_cos_, rope_sin_, attention_,
                                                       next, act, kept, first_pass_);
        if (unit_hooks_.leave) {
            h = unit_hooks_.leave(i + 1, h);
            normed = unit_hooks_.leave(i + 1, normed);
        }
    }
    return h;  // the next norm's output is computed again by whoever goes on from h
}

std::vector<std::pair<at::Tensor, at::Tensor>> TransformerLMImpl::makeLowPrecisionCopies(
    at::ScalarType dtype) {
    TORCH_CHECK(copies_.empty(), "the low-precision copies are made once");
    const auto add = [&](at::Tensor& w, at::Tensor& copy) {
        copy = w.detach().to(dtype).requires_grad_(true);
        copies_.emplace_back(w, copy);
    };
    for (auto& b : blocks_) {
        const auto weights = b->linearWeights(), copies = b->linearWeightCopies();
        for (size_t i = 0; i < weights.size(); ++i) add(*weights[i], *copies[i]);
    }
    add(lm_head_, lm_head_low_);
    return copies_;
}

void TransformerLMImpl::refreshLowPrecisionCopies() {
    at::NoGradGuard no_grad;
    for (auto& [w, copy] : copies_) copy.copy_(w);
}

}  // namespace ts
