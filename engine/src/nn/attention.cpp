#include "nn/attention.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>

#include <array>
#include <cmath>
#include <limits>

#include "nn/ranges.h"

namespace ts {

namespace {

// Enables exactly one of LibTorch's fused attention backends for its lifetime.
class SdpaBackendScope {
public:
    explicit SdpaBackendScope(AttentionImpl impl) {
        auto& c = at::globalContext();
        prev_ = {c.userEnabledFlashSDP(), c.userEnabledMemEfficientSDP(), c.userEnabledCuDNNSDP(),
                 c.userEnabledMathSDP()};
        if (impl == AttentionImpl::Sdpa) return;
        active_ = true;
        set(impl == AttentionImpl::SdpaFlash, impl == AttentionImpl::SdpaEfficient,
            impl == AttentionImpl::SdpaCudnn, impl == AttentionImpl::SdpaMath);
    }
    ~SdpaBackendScope() {
        if (active_) set(prev_[0], prev_[1], prev_[2], prev_[3]);
    }
    SdpaBackendScope(const SdpaBackendScope&) = delete;
    SdpaBackendScope& operator=(const SdpaBackendScope&) = delete;

private:
    static void set(bool flash, bool efficient, bool cudnn, bool math) {
        auto& c = at::globalContext();
        c.setSDPUseFlash(flash);
        c.setSDPUseMemEfficient(efficient);
        c.setSDPUseCuDNN(cudnn);
        c.setSDPUseMath(math);
    }
    std::array<bool, 4> prev_{};
    bool active_ = false;
};

}  // namespace

at::Tensor naiveAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          bool causal) {
    // The profiler's ranges for the course's three parts (see Note [profiler ranges]).
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    at::Tensor scores, probs;
    {
        TS_RANGE("scores");
        scores = at::matmul(q, k.transpose(-2, -1)) * scale;
        if (causal) {
            const int64_t sq = q.size(-2), sk = k.size(-2);
            at::Tensor mask = at::ones({sq, sk}, q.options().dtype(at::kBool)).triu(1);
            scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
        }
    }
    {
        TS_RANGE("softmax");
        probs = at::softmax(scores, -1);
    }
    TS_RANGE("values");
    return at::matmul(probs, v);
}

at::Tensor sdpaAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         bool causal) {
    return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                            /*is_causal=*/causal);
}

at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, AttentionImpl impl,
                  bool causal) {
    if (impl == AttentionImpl::Naive) return naiveAttention(q, k, v, causal);  // ranges of its own
    // The other implementations are one call: the profiler lab's "fused" part.
    TS_RANGE("fused");
    switch (impl) {
        case AttentionImpl::Naive:
            return naiveAttention(q, k, v, causal);
        case AttentionImpl::Tiled:
            return tiledAttention(q, k, v, causal);
        case AttentionImpl::Flash:
            return flashAttention(q, k, v, causal);
        case AttentionImpl::Sdpa:
        case AttentionImpl::SdpaFlash:
        case AttentionImpl::SdpaEfficient:
        case AttentionImpl::SdpaCudnn:
        case AttentionImpl::SdpaMath: {
            SdpaBackendScope scope(impl);
            return sdpaAttention(q, k, v, causal);
        }
    }
    return naiveAttention(q, k, v, causal);
}

}  // namespace ts
