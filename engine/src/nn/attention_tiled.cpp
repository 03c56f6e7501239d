// FlashAttention-2 (Dao, 2023), algorithms 1 and 2, in LibTorch ops: the reference for the
// CUDA kernels. Causal masks key j > query i, aligned at position 0 as in naiveAttention.
#include "nn/attention_tiled.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/attention.h"

namespace ts {

namespace {

at::ScalarType accType(const at::Tensor& t) {
    return t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

TiledTiles resolve(TiledTiles t, const at::Tensor& q) {
    const int64_t def = q.is_cuda() ? 512 : 64;
    if (t.block_m <= 0) t.block_m = def;
    if (t.block_n <= 0) t.block_n = def;
    return t;
}

// Sets S[i][j] = -inf where key j > query i (absolute positions i0 + i, j0 + j).
at::Tensor maskCausal(const at::Tensor& s, int64_t i0, int64_t j0) {
    const auto opts = s.options().dtype(at::kLong);
    const at::Tensor qi = at::arange(i0, i0 + s.size(-2), opts).unsqueeze(1);
    const at::Tensor kj = at::arange(j0, j0 + s.size(-1), opts).unsqueeze(0);
    return s.masked_fill(kj > qi, -std::numeric_limits<double>::infinity());
}

void checkInputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
                "tiled attention: expected 4-D (b, h, s, d) tensors");
    TORCH_CHECK(k.sizes() == v.sizes() && q.size(0) == k.size(0) && q.size(1) == k.size(1) &&
                    q.size(3) == k.size(3),
                "tiled attention: q, k, v shapes do not match");
}

}  // namespace

TiledForwardResult tiledForward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                bool causal, double scale, TiledTiles tiles) {
    checkInputs(q, k, v);
    tiles = resolve(tiles, q);
    const auto acc = accType(q);
    const int64_t sq = q.size(2), sk = k.size(2);
    at::Tensor out = at::empty(q.sizes(), q.options().dtype(acc));
    at::Tensor lse = at::empty({q.size(0), q.size(1), sq}, q.options().dtype(acc));
    const at::Tensor qa = q.to(acc), ka = k.to(acc), va = v.to(acc);
    for (int64_t i0 = 0; i0 < sq; i0 += tiles.block_m) {
        const int64_t bm = std::min(tiles.block_m, sq - i0);
        const at::Tensor qi = qa.narrow(2, i0, bm);
        at::Tensor m = at::full({q.size(0), q.size(1), bm},
                                -std::numeric_limits<double>::infinity(), qi.options());
        at::Tensor l = at::zeros_like(m);
        at::Tensor o = at::zeros_like(qi);
        // Causal: key tiles entirely past the last query row of this tile are skipped.
        const int64_t j_end = causal ? std::min(sk, i0 + bm) : sk;
        for (int64_t j0 = 0; j0 < j_end; j0 += tiles.block_n) {
            const int64_t bn = std::min(tiles.block_n, sk - j0);
            at::Tensor s = at::matmul(qi, ka.narrow(2, j0, bn).transpose(-2, -1)) * scale;
            if (causal && j0 + bn - 1 > i0) s = maskCausal(s, i0, j0);
            const at::Tensor m_new = at::maximum(m, std::get<0>(s.max(-1)));
            const at::Tensor p = at::exp(s - m_new.unsqueeze(-1));
            const at::Tensor corr = at::exp(m - m_new);
            l = corr * l + p.sum(-1);
            o = corr.unsqueeze(-1) * o + at::matmul(p, va.narrow(2, j0, bn));
            m = m_new;
        }
        out.narrow(2, i0, bm).copy_(o / l.unsqueeze(-1));
        lse.narrow(2, i0, bm).copy_(m + at::log(l));
    }
    return {out.to(q.scalar_type()), lse};
}

TiledBackwardResult tiledBackward(const at::Tensor& dout, const at::Tensor& q, const at::Tensor& k,
                                  const at::Tensor& v, const at::Tensor& out, const at::Tensor& lse,
                                  bool causal, double scale, TiledTiles tiles) {
    checkInputs(q, k, v);
    tiles = resolve(tiles, q);
    const auto acc = accType(q);
    const int64_t sq = q.size(2), sk = k.size(2);
    const at::Tensor qa = q.to(acc), ka = k.to(acc), va = v.to(acc), doa = dout.to(acc),
                     la = lse.to(acc);
    const at::Tensor dsum = (doa * out.to(acc)).sum(-1);  // D = rowsum(dO ∘ O)
    at::Tensor dq = at::zeros_like(qa), dk = at::zeros_like(ka), dv = at::zeros_like(va);
    for (int64_t j0 = 0; j0 < sk; j0 += tiles.block_n) {
        const int64_t bn = std::min(tiles.block_n, sk - j0);
        const at::Tensor kj = ka.narrow(2, j0, bn), vj = va.narrow(2, j0, bn);
        at::Tensor dkj = at::zeros_like(kj), dvj = at::zeros_like(vj);
        // Causal: query tiles that end before j0 see none of these keys.
        const int64_t i_begin = causal ? j0 / tiles.block_m * tiles.block_m : 0;
        for (int64_t i0 = i_begin; i0 < sq; i0 += tiles.block_m) {
            const int64_t bm = std::min(tiles.block_m, sq - i0);
            const at::Tensor qi = qa.narrow(2, i0, bm), doi = doa.narrow(2, i0, bm);
            at::Tensor s = at::matmul(qi, kj.transpose(-2, -1)) * scale;
            if (causal && j0 + bn - 1 > i0) s = maskCausal(s, i0, j0);
            const at::Tensor p = at::exp(s - la.narrow(2, i0, bm).unsqueeze(-1));
            dvj += at::matmul(p.transpose(-2, -1), doi);
            const at::Tensor dp = at::matmul(doi, vj.transpose(-2, -1));
            const at::Tensor ds = p * (dp - dsum.narrow(2, i0, bm).unsqueeze(-1));
            dq.narrow(2, i0, bm).add_(at::matmul(ds, kj), scale);
            dkj += at::matmul(ds.transpose(-2, -1), qi) * scale;
        }
        dk.narrow(2, j0, bn).copy_(dkj);
        dv.narrow(2, j0, bn).copy_(dvj);
    }
    const auto dt = q.scalar_type();
    return {dq.to(dt), dk.to(dt), dv.to(dt)};
}

namespace {

class TiledFunction : public torch::autograd::Function<TiledFunction> {
public:
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q,
                              const at::Tensor& k, const at::Tensor& v, bool causal) {
        const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
        TiledForwardResult r = tiledForward(q, k, v, causal, scale);
        ctx->save_for_backward({q, k, v, r.out, r.lse});
        ctx->saved_data["causal"] = causal;
        return r.out;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const bool causal = ctx->saved_data["causal"].toBool();
        const double scale = 1.0 / std::sqrt(static_cast<double>(saved[0].size(-1)));
        TiledBackwardResult g = tiledBackward(grads[0], saved[0], saved[1], saved[2], saved[3],
                                              saved[4], causal, scale);
        return {g.dq, g.dk, g.dv, at::Tensor()};
    }
};

}  // namespace

at::Tensor tiledAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          bool causal) {
    return TiledFunction::apply(q, k, v, causal);
}

}  // namespace ts
