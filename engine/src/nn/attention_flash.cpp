// This project's FlashAttention-2 CUDA kernels (kernels/) as a differentiable LibTorch
// function: the forward keeps O and the row logsumexp L; the backward runs the kernels'
// three launches from them.
#include <ATen/ATen.h>
#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string>

#include "nn/attention.h"
#include "trainscope/kernels/flash_attention.h"

namespace ts {

namespace {

class FlashFunction : public torch::autograd::Function<FlashFunction> {
public:
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q,
                              const at::Tensor& k, const at::Tensor& v, bool causal, double scale) {
        kernels::FlashForwardResult r = kernels::flashForward(q, k, v, causal, scale);
        ctx->save_for_backward({q, k, v, r.out, r.lse});
        ctx->saved_data["causal"] = causal;
        ctx->saved_data["scale"] = scale;
        return r.out;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto s = ctx->get_saved_variables();
        const bool causal = ctx->saved_data["causal"].toBool();
        const double scale = ctx->saved_data["scale"].toDouble();
        kernels::FlashBackwardResult g =
            kernels::flashBackward(grads[0], s[0], s[1], s[2], s[3], s[4], causal, scale);
        return {g.dq, g.dk, g.dv, at::Tensor(), at::Tensor()};
    }
};

// The built head dim (kernels::kFlashHeadDims: 16, 32, 64, 96, 128, 256) that runs head dim d
// of q, d zero-padded to it (kernels::flashPaddedHeadDim). Above the last there is none.
int64_t kernelHeadDim(int64_t d, const at::Tensor& q) {
    if (const int64_t k = kernels::flashPaddedHeadDim(d, q); k > 0) return k;
    throw std::invalid_argument("flash attention backend: head_dim " + std::to_string(d) +
                                " (at most " +
                                std::to_string(std::end(kernels::kFlashHeadDims)[-1]) + ")");
}

}  // namespace

at::Tensor flashAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          bool causal) {
    // Under autocast the projections may come out in different dtypes: compute in q's.
    at::Tensor qq = q;
    at::Tensor kk = k.scalar_type() == q.scalar_type() ? k : k.to(q.scalar_type());
    at::Tensor vv = v.scalar_type() == q.scalar_type() ? v : v.to(q.scalar_type());
    // A head dim the kernels are not built for (2.7B's 80, 160) runs zero-padded to a built one
    // (80 → 96, or 128 on Hopper; 160 → 256): a zero column adds nothing to QKᵀ and V's zero
    // columns make output columns that are cut off; the scale stays 1/√d. Autograd differentiates
    // the padding and the cut.
    const int64_t d = q.dim() == 4 ? q.size(3) : 0;
    const int64_t padded = d > 0 ? kernelHeadDim(d, q) : d;
    const double scale = d > 0 ? 1.0 / std::sqrt(static_cast<double>(d)) : 1.0;
    if (padded != d && k.dim() == 4 && v.dim() == 4 && k.size(3) == d && v.size(3) == d) {
        qq = at::constant_pad_nd(qq, {0, padded - d});
        kk = at::constant_pad_nd(kk, {0, padded - d});
        vv = at::constant_pad_nd(vv, {0, padded - d});
    }
    if (const std::string why = kernels::flashUnsupportedReason(qq, kk, vv); !why.empty())
        throw std::invalid_argument("flash attention backend: " + why);
    // An op for the profiler, carrying the sequence number the autograd node is about to take,
    // so that its backward (on autograd's thread) finds the forward's ranges (Note
    // [attribution] in profiler.h).
    at::RecordFunction op(at::RecordScope::FUNCTION);
    if (op.isActive()) op.before("trainscope::flash_attention", at::sequence_number::peek());
    at::Tensor out = FlashFunction::apply(qq, kk, vv, causal, scale);
    return padded != d && out.size(3) != d ? out.narrow(3, 0, d) : out;
}

}  // namespace ts
