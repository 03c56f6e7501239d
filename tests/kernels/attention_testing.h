// Shared by the attention tests: the float64 reference and error measures.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace ts::test {

struct Reference {
    at::Tensor out, lse, dq, dk, dv;  // float64
};

// Naive attention in float64 on the inputs as given (already rounded to their dtype), with
// its row logsumexp and autograd gradients for upstream gradient `dout`.
inline Reference float64Reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& dout, bool causal) {
    at::Tensor q64 = q.detach().to(at::kDouble).requires_grad_(true);
    at::Tensor k64 = k.detach().to(at::kDouble).requires_grad_(true);
    at::Tensor v64 = v.detach().to(at::kDouble).requires_grad_(true);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    at::Tensor s = at::matmul(q64, k64.transpose(-2, -1)) * scale;
    if (causal) {
        at::Tensor mask = at::ones({q.size(2), k.size(2)}, q64.options().dtype(at::kBool)).triu(1);
        s = s.masked_fill(mask, -std::numeric_limits<double>::infinity());
    }
    at::Tensor out = at::matmul(at::softmax(s, -1), v64);
    out.backward(dout.detach().to(at::kDouble));
    return {out.detach(), at::logsumexp(s.detach(), -1), q64.grad(), k64.grad(), v64.grad()};
}

inline double maxAbsErr(const at::Tensor& a, const at::Tensor& ref) {
    return (a.to(at::kDouble) - ref.to(at::kDouble)).abs().max().item<double>();
}

inline bool allFinite(const at::Tensor& t) { return at::isfinite(t).all().item<bool>(); }

// Rounding error of `dt` at the reference's magnitudes (flash-attention's test floor).
inline double roundingFloor(const at::Tensor& ref, at::ScalarType dt) {
    const at::Tensor r = ref.to(dt);
    return 2.0 * ((r + 0.3 - 0.3) - r).abs().max().item<double>();
}

}  // namespace ts::test
