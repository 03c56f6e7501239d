// This project's FlashAttention-2 CUDA kernels (kernels/) as a differentiable LibTorch
// function: the forward keeps O and the row logsumexp L; the backward runs the kernels'
// three launches from them.
#include <ATen/ATen.h>
#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <stdexcept>

#include "nn/attention.h"
#include "trainscope/kernels/flash_attention.h"

namespace ts {

namespace {

class FlashFunction : public torch::autograd::Function<FlashFunction> {
public:
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                              const at::Tensor& v, bool causal) {
        kernels::FlashForwardResult r = kernels::flashForward(q, k, v, causal);
        ctx->save_for_backward({q, k, v, r.out, r.lse});
        ctx->saved_data["causal"] = causal;
        return r.out;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto s = ctx->get_saved_variables();
        const bool causal = ctx->saved_data["causal"].toBool();
        kernels::FlashBackwardResult g = kernels::flashBackward(grads[0], s[0], s[1], s[2], s[3], s[4], causal);
        return {g.dq, g.dk, g.dv, at::Tensor()};
    }
};

}  // namespace

at::Tensor flashAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal) {
    // Under autocast the projections may come out in different dtypes: compute in q's.
    const at::Tensor kk = k.scalar_type() == q.scalar_type() ? k : k.to(q.scalar_type());
    const at::Tensor vv = v.scalar_type() == q.scalar_type() ? v : v.to(q.scalar_type());
    if (const std::string why = kernels::flashUnsupportedReason(q, kk, vv); !why.empty())
        throw std::invalid_argument("flash attention backend: " + why);
    // An op for the profiler, carrying the sequence number the autograd node is about to take,
    // so that its backward (on autograd's thread) finds the forward's ranges (Note
    // [attribution] in profiler.h).
    at::RecordFunction op(at::RecordScope::FUNCTION);
    if (op.isActive()) op.before("trainscope::flash_attention", at::sequence_number::peek());
    return FlashFunction::apply(q, kk, vv, causal);
}

}  // namespace ts
