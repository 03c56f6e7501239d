// The fused kernels' computations on the CPU, element by element in fp32 with one rounding to
// the storage type, as the CUDA kernels do (see Note [fused element-wise kernels] in fused.h).
// Slow and plain on purpose: the CPU path of the adapter, and what the CPU tests hold against
// LibTorch's own ops.
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fused.h"

namespace ts::kernels {

namespace {

float load(const void* base, Storage s, int64_t i) {
    switch (s) {
        case Storage::F32:
            return static_cast<const float*>(base)[i];
        case Storage::BF16:
            return static_cast<float>(static_cast<const c10::BFloat16*>(base)[i]);
        case Storage::F16:
            return static_cast<float>(static_cast<const c10::Half*>(base)[i]);
    }
    return 0.f;
}

void store(void* base, Storage s, int64_t i, float v) {
    switch (s) {
        case Storage::F32:
            static_cast<float*>(base)[i] = v;
            break;
        case Storage::BF16:
            static_cast<c10::BFloat16*>(base)[i] = c10::BFloat16(v);
            break;
        case Storage::F16:
            static_cast<c10::Half*>(base)[i] = c10::Half(v);
            break;
    }
}

float sigmoid(float g) { return 1.f / (1.f + std::exp(-g)); }

}  // namespace

void rmsNormFwdRef(const RmsNormFwdParams& p) {
    const int n = p.cols;
    for (int64_t r = 0; r < p.rows; ++r) {
        float ss = 0.f;
        for (int c = 0; c < n; ++c) {
            float v = p.x[r * n + c];
            if (p.residual) {
                v += load(p.residual, p.residual_dtype, r * n + c);
                p.sum[r * n + c] = v;
            }
            ss += v * v;
        }
        const float rstd = 1.f / std::sqrt(ss / n + p.eps);
        p.rstd[r] = rstd;
        const float* src = p.residual ? p.sum : p.x;
        for (int c = 0; c < n; ++c)
            store(p.out, p.out_dtype, r * n + c, src[r * n + c] * rstd * p.weight[c]);
    }
}

void rmsNormBwdRef(const RmsNormBwdParams& p) {
    if (p.blocks != 1) throw std::invalid_argument("RMSNorm backward reference: one block");
    const int n = p.cols;
    std::vector<float> dw(static_cast<size_t>(n), 0.f);
    for (int64_t r = 0; r < p.rows; ++r) {
        const float rstd = p.rstd[r];
        float dot = 0.f;
        for (int c = 0; c < n; ++c) {
            const float xh = p.x[r * n + c] * rstd, g = load(p.grad_out, p.out_dtype, r * n + c);
            dot += g * p.weight[c] * xh;
            dw[static_cast<size_t>(c)] += g * xh;
        }
        const float mean = dot / n;
        for (int c = 0; c < n; ++c) {
            const int64_t i = r * n + c;
            float d =
                rstd * (load(p.grad_out, p.out_dtype, i) * p.weight[c] - p.x[i] * rstd * mean);
            if (p.grad_sum) d += p.grad_sum[i];
            p.dx[i] = d;
            if (p.dresidual) store(p.dresidual, p.residual_dtype, i, d);
        }
    }
    for (int c = 0; c < n; ++c) p.dweight_partial[c] = dw[static_cast<size_t>(c)];
}

void ropeRef(const RopeParams& p) {
    const int half = p.head_dim / 2;
    const int64_t row_len = int64_t{3} * p.heads * p.head_dim;
    for (int64_t t = 0; t < p.batch * p.seq; ++t) {
        const int64_t pos = t % p.seq;
        for (int part = 0; part < 2 * p.heads; ++part)  // q's heads, then k's
            for (int k = 0; k < half; ++k) {
                const int64_t at = t * row_len + int64_t{part} * p.head_dim + 2 * k;
                const float x0 = load(p.src, p.dtype, at), x1 = load(p.src, p.dtype, at + 1);
                const float c = p.cos[pos * half + k],
                            s = (p.inverse ? -1.f : 1.f) * p.sin[pos * half + k];
                store(p.dst, p.dtype, at, x0 * c - x1 * s);
                store(p.dst, p.dtype, at + 1, x0 * s + x1 * c);
            }
        if (p.inverse)
            for (int64_t i = 2 * p.heads * p.head_dim; i < row_len; ++i)
                store(p.dst, p.dtype, t * row_len + i, load(p.src, p.dtype, t * row_len + i));
    }
}

void swigluFwdRef(const SwigluParams& p) {
    for (int64_t r = 0; r < p.rows; ++r)
        for (int c = 0; c < p.f; ++c) {
            const float g = load(p.gu, p.dtype, r * 2 * p.f + c),
                        u = load(p.gu, p.dtype, r * 2 * p.f + p.f + c);
            store(p.h, p.dtype, r * p.f + c, g * sigmoid(g) * u);
        }
}

void swigluBwdRef(const SwigluParams& p) {
    for (int64_t r = 0; r < p.rows; ++r)
        for (int c = 0; c < p.f; ++c) {
            const int64_t gi = r * 2 * p.f + c, ui = gi + p.f;
            const float g = load(p.gu, p.dtype, gi), u = load(p.gu, p.dtype, ui);
            const float dh = load(p.grad_h, p.dtype, r * p.f + c), sg = sigmoid(g);
            store(p.grad_gu, p.dtype, gi, dh * u * sg * (1.f + g * (1.f - sg)));
            store(p.grad_gu, p.dtype, ui, dh * g * sg);
        }
}

namespace {

// The scaled score as eager has it: the product rounded to the scores' dtype.
float scaledScore(const SoftmaxParams& p, int64_t i) {
    const float x = load(p.scores, p.dtype, i) * p.scale;
    switch (p.dtype) {
        case Storage::F32:
            return x;
        case Storage::BF16:
            return static_cast<float>(c10::BFloat16(x));
        case Storage::F16:
            return static_cast<float>(c10::Half(x));
    }
    return x;
}

int softmaxLimit(const SoftmaxParams& p, int64_t r) {
    return p.causal ? static_cast<int>(std::min<int64_t>(p.cols, r % p.queries + 1)) : p.cols;
}

}  // namespace

void softmaxFwdRef(const SoftmaxParams& p) {
    for (int64_t r = 0; r < p.rows; ++r) {
        const int64_t base = r * p.cols;
        const int limit = softmaxLimit(p, r);
        float m = -std::numeric_limits<float>::infinity();
        for (int c = 0; c < limit; ++c) m = std::max(m, scaledScore(p, base + c));
        float s = 0.f;
        for (int c = 0; c < limit; ++c) s += std::exp(scaledScore(p, base + c) - m);
        const float lse = m + std::log(s);
        p.lse[r] = lse;
        for (int c = 0; c < p.cols; ++c)
            store(p.probs, p.dtype, base + c,
                  c < limit ? std::exp(scaledScore(p, base + c) - lse) : 0.f);
    }
}

void softmaxBwdRef(const SoftmaxParams& p) {
    for (int64_t r = 0; r < p.rows; ++r) {
        const int64_t base = r * p.cols;
        const int limit = softmaxLimit(p, r);
        float dot = 0.f;
        for (int c = 0; c < limit; ++c)
            dot += load(p.grad_probs, p.dtype, base + c) *
                   std::exp(scaledScore(p, base + c) - p.lse[r]);
        for (int c = 0; c < p.cols; ++c) {
            float g = 0.f;
            if (c < limit) {
                const float pr = std::exp(scaledScore(p, base + c) - p.lse[r]);
                store(p.grad_scores, p.dtype, base + c,
                      pr * (load(p.grad_probs, p.dtype, base + c) - dot));
                g = load(p.grad_scores, p.dtype, base + c) *
                    p.scale;  // eager's rounding, then its scaling
            }
            store(p.grad_scores, p.dtype, base + c, g);
        }
    }
}

void crossEntropyFwdRef(const CrossEntropyParams& p) {
    for (int64_t r = 0; r < p.rows; ++r) {
        const int64_t base = r * p.row_stride;
        float m = -std::numeric_limits<float>::infinity();
        for (int c = 0; c < p.vocab; ++c) m = std::max(m, load(p.logits, p.dtype, base + c));
        float s = 0.f;
        for (int c = 0; c < p.vocab; ++c) s += std::exp(load(p.logits, p.dtype, base + c) - m);
        const float lse = m + std::log(s);
        p.lse[r] = lse;
        const int64_t t = p.targets[r];
        p.loss[r] = t >= 0 && t < p.vocab ? lse - load(p.logits, p.dtype, base + t)
                                          : std::numeric_limits<float>::quiet_NaN();
    }
}

void crossEntropyBwdRef(const CrossEntropyParams& p) {
    const float scale = *p.grad_loss / static_cast<float>(p.rows);
    for (int64_t r = 0; r < p.rows; ++r)
        for (int c = 0; c < p.vocab; ++c) {
            const float prob = std::exp(load(p.logits, p.dtype, r * p.row_stride + c) - p.lse[r]);
            store(p.grad_logits, p.dtype, r * p.vocab + c,
                  (prob - (c == p.targets[r] ? 1.f : 0.f)) * scale);
        }
}

void adamWRef(const AdamWParams& p) {
    for (int t = 0; t < p.count; ++t) {
        const AdamWTensor& a = p.t[t];
        const float step = *a.step;
        const float bias1 = 1.f - std::pow(p.beta1, step),
                    bias2_sqrt = std::sqrt(1.f - std::pow(p.beta2, step));
        const float step_size = p.lr / bias1, decay = 1.f - p.lr * p.weight_decay;
        for (int64_t i = 0; i < a.numel; ++i) {
            const float g = load(a.grad, p.grad_dtype, i);
            const float m = p.beta1 * a.exp_avg[i] + (1.f - p.beta1) * g;
            const float v = p.beta2 * a.exp_avg_sq[i] + (1.f - p.beta2) * g * g;
            a.exp_avg[i] = m;
            a.exp_avg_sq[i] = v;
            const float w =
                a.param[i] * decay - step_size * m / (std::sqrt(v) / bias2_sqrt + p.eps);
            a.param[i] = w;
            if (p.has_copy) store(a.copy, p.copy_dtype, i, w);
        }
    }
}

}  // namespace ts::kernels
