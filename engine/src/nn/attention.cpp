#include "attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace ts {

at::Tensor naiveAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          bool causal) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * scale;
    if (causal) {
        const int64_t sq = q.size(-2), sk = k.size(-2);
        at::Tensor mask = at::ones({sq, sk}, q.options().dtype(at::kBool)).triu(1);
        scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
    }
    return at::matmul(at::softmax(scores, -1), v);
}

at::Tensor sdpaAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         bool causal) {
    return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                            /*is_causal=*/causal);
}

at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  Attention backend, bool causal) {
    switch (backend) {
        case Attention::Naive: return naiveAttention(q, k, v, causal);
        case Attention::Sdpa: return sdpaAttention(q, k, v, causal);
        case Attention::Tiled: return tiledAttention(q, k, v, causal);
        case Attention::Flash: return flashAttention(q, k, v, causal);
    }
    return naiveAttention(q, k, v, causal);
}

}  // namespace ts
