// Differentiable wrappers of the fused kernels (kernels/include/trainscope/kernels/fused_ops.h
// and flash_attention.h): one autograd node per fused op, whose backward is the op's fused
// backward kernel.
#include "nn/fused.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <array>
#include <cmath>
#include <vector>

#include "trainscope/kernels/flash_attention.h"
#include "trainscope/kernels/fused_ops.h"

namespace ts {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class RmsNormFn : public torch::autograd::Function<RmsNormFn> {
public:
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                              double eps, at::ScalarType out_dtype) {
        kernels::RmsNormForward r = kernels::rmsNormForward(x, {}, weight, eps, out_dtype);
        ctx->save_for_backward({x, r.rstd, weight});
        return r.out;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto s = ctx->get_saved_variables();
        kernels::RmsNormBackward g =
            kernels::rmsNormBackward(grads[0], {}, s[0], s[1], s[2], std::nullopt);
        return {g.dx, g.dweight, at::Tensor(), at::Tensor()};
    }
};

// Outputs (x + residual, norm): the sum's gradient (the residual stream's, from further on) and
// the norm's meet in one backward launch.
class AddRmsNormFn : public torch::autograd::Function<AddRmsNormFn> {
public:
    static variable_list forward(AutogradContext* ctx, const at::Tensor& x,
                                 const at::Tensor& residual, const at::Tensor& weight, double eps,
                                 at::ScalarType out_dtype) {
        kernels::RmsNormForward r = kernels::rmsNormForward(x, residual, weight, eps, out_dtype);
        ctx->save_for_backward({r.sum, r.rstd, weight});
        ctx->saved_data["residual_dtype"] = residual.scalar_type();
        ctx->set_materialize_grads(false);
        return {r.sum, r.out};
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto s = ctx->get_saved_variables();
        const auto residual_dtype = ctx->saved_data["residual_dtype"].toScalarType();
        at::Tensor grad_out = grads[1];
        if (!grad_out.defined()) grad_out = at::zeros_like(s[0]);  // only the sum was used
        kernels::RmsNormBackward g =
            kernels::rmsNormBackward(grad_out, grads[0], s[0], s[1], s[2], residual_dtype);
        return {g.dx, g.dresidual, g.dweight, at::Tensor(), at::Tensor()};
    }
};

// In place on qkv: marked dirty, so autograd records the rotation as qkv's new history.
class RopeQkvFn : public torch::autograd::Function<RopeQkvFn> {
public:
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& qkv, const at::Tensor& cos,
                              const at::Tensor& sin, int64_t heads) {
        kernels::ropeQkvInPlace(qkv, cos, sin, heads);
        ctx->mark_dirty({qkv});
        ctx->saved_data["cos"] = cos;
        ctx->saved_data["sin"] = sin;
        ctx->saved_data["heads"] = heads;
        return qkv;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        at::Tensor g = kernels::ropeQkvBackward(grads[0], ctx->saved_data["cos"].toTensor(),
                                                ctx->saved_data["sin"].toTensor(),
                                                ctx->saved_data["heads"].toInt());
        return {g, at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

class SwigluFn : public torch::autograd::Function<SwigluFn> {
public:
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gu) {
        ctx->save_for_backward({gu});
        return kernels::swigluForward(gu);
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        return {kernels::swigluBackward(grads[0], ctx->get_saved_variables()[0])};
    }
};

class AttentionSoftmaxFn : public torch::autograd::Function<AttentionSoftmaxFn> {
public:
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& scores, double scale,
                              bool causal) {
        kernels::SoftmaxForward r = kernels::attentionSoftmaxForward(scores, scale, causal);
        ctx->save_for_backward({scores, r.lse});
        ctx->saved_data["scale"] = scale;
        ctx->saved_data["causal"] = causal;
        return r.probs;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto s = ctx->get_saved_variables();
        return {kernels::attentionSoftmaxBackward(grads[0], s[0], s[1],
                                                  ctx->saved_data["scale"].toDouble(),
                                                  ctx->saved_data["causal"].toBool()),
                at::Tensor(), at::Tensor()};
    }
};

class CrossEntropyFn : public torch::autograd::Function<CrossEntropyFn> {
public:
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& logits,
                              const at::Tensor& targets) {
        kernels::CrossEntropyForward r = kernels::crossEntropyForward(logits, targets);
        ctx->save_for_backward({logits, targets, r.lse});
        return r.loss;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto s = ctx->get_saved_variables();
        return {kernels::crossEntropyBackward(grads[0], s[0], s[1], s[2]), at::Tensor()};
    }
};

// q, k, v (batch, heads, seq, head_dim) as views of a (batch, seq, 3·heads·head_dim) tensor.
struct QkvViews {
    at::Tensor q, k, v;
};
QkvViews qkvViews(const at::Tensor& qkv, int64_t heads) {
    const int64_t b = qkv.size(0), s = qkv.size(1), dh = qkv.size(2) / (3 * heads);
    const at::Tensor t = qkv.view({b, s, 3, heads, dh});
    return {t.select(2, 0).transpose(1, 2), t.select(2, 1).transpose(1, 2),
            t.select(2, 2).transpose(1, 2)};
}
// (batch, seq, heads·head_dim) seen as (batch, heads, seq, head_dim).
at::Tensor headsView(const at::Tensor& t, int64_t heads) {
    return t.view({t.size(0), t.size(1), heads, t.size(2) / heads}).transpose(1, 2);
}

// Note [one gradient for q, k and v]:
// q, k and v as views of the fused projection; autograd's own backward of three select views
// is three zero-filled tensors of qkv's size with each gradient copied into its third, then two
// sums of them: about 11 passes over qkv's size a layer (5.5 GB a step for 2.7B). This one
// writes the three gradients into one tensor, a pass over it.
class SplitQkvFn : public torch::autograd::Function<SplitQkvFn> {
public:
    static variable_list forward(AutogradContext* ctx, const at::Tensor& qkv, int64_t heads) {
        ctx->saved_data["heads"] = heads;
        ctx->saved_data["sizes"] = qkv.sizes().vec();
        const QkvViews v = qkvViews(qkv, heads);
        return {v.q, v.k, v.v};
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const int64_t heads = ctx->saved_data["heads"].toInt();
        const std::vector<int64_t> sizes = ctx->saved_data["sizes"].toIntVector();
        const at::Tensor* any = nullptr;
        for (const at::Tensor& g : grads)
            if (g.defined() && !any) any = &g;
        if (!any) return {at::Tensor(), at::Tensor()};
        at::Tensor dqkv =
            at::empty(sizes, any->options().memory_format(at::MemoryFormat::Contiguous));
        QkvViews d = qkvViews(dqkv, heads);
        at::Tensor* dst[3] = {&d.q, &d.k, &d.v};
        for (int i = 0; i < 3; ++i) {
            if (grads[i].defined())
                dst[i]->copy_(grads[i]);
            else
                dst[i]->zero_();
        }
        return {dqkv, at::Tensor()};
    }
};

class FlashQkvFn : public torch::autograd::Function<FlashQkvFn> {
public:
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& qkv, int64_t heads,
                              int64_t kept_slot, bool first_pass) {
        // See Note [attention kept through a checkpoint].
        auto* kept = reinterpret_cast<KeptAttention*>(kept_slot);
        at::Tensor out, lse;
        if (kept && kept->out.defined()) {
            out = kept->out;
            lse = kept->lse;
            if (!first_pass) *kept = KeptAttention{};  // the recompute takes it
        } else {
            const QkvViews in = qkvViews(qkv, heads);
            const double scale = 1.0 / std::sqrt(static_cast<double>(in.q.size(3)));
            out = at::empty({qkv.size(0), qkv.size(1), qkv.size(2) / 3}, qkv.options());
            lse = kernels::flashForward(in.q, in.k, in.v, /*causal=*/true, scale,
                                        headsView(out, heads))
                      .lse;
            if (kept && first_pass) *kept = KeptAttention{out, lse};
        }
        ctx->save_for_backward({qkv, out, lse});
        ctx->saved_data["heads"] = heads;
        return out;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto s = ctx->get_saved_variables();
        const int64_t heads = ctx->saved_data["heads"].toInt();
        const QkvViews in = qkvViews(s[0], heads);
        const double scale = 1.0 / std::sqrt(static_cast<double>(in.q.size(3)));
        at::Tensor dqkv = at::empty_like(s[0]);
        const QkvViews d = qkvViews(dqkv, heads);
        kernels::flashBackward(headsView(grads[0].contiguous(), heads), in.q, in.k, in.v,
                               headsView(s[1], heads), s[2],
                               /*causal=*/true, scale, d.q, d.k, d.v);
        return {dqkv, at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

}  // namespace

at::Tensor fusedRmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps,
                        at::ScalarType out_dtype) {
    return RmsNormFn::apply(x, weight, eps, out_dtype);
}

std::pair<at::Tensor, at::Tensor> fusedAddRmsNorm(const at::Tensor& x, const at::Tensor& residual,
                                                  const at::Tensor& weight, double eps,
                                                  at::ScalarType out_dtype) {
    variable_list r = AddRmsNormFn::apply(x, residual, weight, eps, out_dtype);
    return {r[0], r[1]};
}

at::Tensor fusedRopeQkv(const at::Tensor& qkv, const at::Tensor& cos, const at::Tensor& sin,
                        int64_t heads) {
    return RopeQkvFn::apply(qkv, cos, sin, heads);
}

at::Tensor fusedSwiglu(const at::Tensor& gu) { return SwigluFn::apply(gu); }

std::array<at::Tensor, 3> splitQkv(const at::Tensor& qkv, int64_t heads) {
    const variable_list r = SplitQkvFn::apply(qkv, heads);
    return {r[0], r[1], r[2]};
}

at::Tensor fusedNaiveAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               bool causal) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    const at::Tensor scores = at::matmul(q, k.transpose(-2, -1)).contiguous();
    return at::matmul(AttentionSoftmaxFn::apply(scores, scale, causal), v);
}

at::Tensor fusedCrossEntropy(const at::Tensor& logits, const at::Tensor& targets) {
    return CrossEntropyFn::apply(logits.reshape({-1, logits.size(-1)}),
                                 targets.reshape({-1}).contiguous());
}

at::Tensor flashAttentionQkv(const at::Tensor& qkv, int64_t heads, KeptAttention* kept,
                             bool first_pass) {
    if (qkv.dim() != 3 || qkv.size(2) % (3 * heads) != 0 || !qkv.is_contiguous()) return {};
    const QkvViews in = qkvViews(qkv, heads);
    // Only where the kernels run this head dim as it is (no padding: flashAttention pads).
    if (kernels::flashPaddedHeadDim(in.q.size(3), in.q) != in.q.size(3) ||
        !kernels::flashUnsupportedReason(in.q, in.k, in.v).empty())
        return {};
    return FlashQkvFn::apply(qkv, heads, reinterpret_cast<int64_t>(kept), first_pass);
}

}  // namespace ts
