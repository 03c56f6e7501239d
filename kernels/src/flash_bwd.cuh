// FlashAttention-2 backward on tensor cores, in three launches:
//   1. preprocess: D = rowsum(dO ∘ O), and L·log2(e) padded with +inf (so padded rows get P = 0);
//   2. the main loop: one block per kBlockN keys (16 per warp), dK and dV in registers, looping
//      over query tiles; P is recomputed from L, dS = P ∘ (dP − D); dQ is accumulated into an
//      fp32 buffer with atomic adds;
//   3. convert dQ: scale and cast to the output dtype.
// Each warp computes Sᵀ = K Qᵀ for its own keys, so Pᵀ and dSᵀ come out of the accumulators
// in the A-operand layout of dV += Pᵀ dO and dK += dSᵀ Q. dQ = dS K sums over the keys of
// all warps, so dSᵀ goes through shared memory first.
#pragma once

#include "flash.h"
#include "flash_common.cuh"
#include "flash_fwd.cuh"

namespace ts::kernels {

template <int D_, int kNWarps_, int kBlockM_, bool kKVInRegs_, int kMinBlocks_>
struct BwdTraits {
    static constexpr int D = D_;
    static constexpr int kNWarps = kNWarps_;
    static constexpr int kThreads = 32 * kNWarps;
    static constexpr int kBlockN = 16 * kNWarps;  // keys per block
    static constexpr int kBlockM = kBlockM_;      // queries per tile
    static constexpr bool kKVInRegs = kKVInRegs_;  // K, V fragments kept in registers
    static constexpr int kMinBlocks = kMinBlocks_;
    static constexpr int kPitch = D + 8;
    static constexpr int kPitchS = kBlockM + 8;
    // dQ tile (kBlockM × D) split among the warps: row groups of 16 × column groups.
    static constexpr int kRowGroups = kBlockM / 16;
    static constexpr int kColGroups = kNWarps / kRowGroups;
    static constexpr int kDqCols = D / kColGroups;
    static_assert(kNWarps % kRowGroups == 0 && kDqCols % 16 == 0, "dQ split");
    static_assert(kSeqPad % kBlockM == 0, "padded work buffers cover whole tiles");
    static constexpr int kSmemBytes =
        (2 * kBlockN * kPitch + 4 * kBlockM * kPitch + kBlockN * kPitchS) * 2 + 4 * kBlockM * 4;
};

template <int D> struct BwdTraitsFor;
template <> struct BwdTraitsFor<16> : BwdTraits<16, 4, 64, true, 2> {};
template <> struct BwdTraitsFor<32> : BwdTraits<32, 4, 64, true, 2> {};
template <> struct BwdTraitsFor<64> : BwdTraits<64, 8, 64, true, 1> {};
template <> struct BwdTraitsFor<128> : BwdTraits<128, 8, 32, false, 1> {};

// Launch 1. One group of D/kVec threads per row, 16-byte loads.
template <typename T, int D>
__global__ void __launch_bounds__(256) bwdPreprocessKernel(const FlashBwdParams p) {
    constexpr int kVec = 16 / sizeof(T);
    constexpr int G = D / kVec;
    constexpr int kRows = 256 / G;
    const int row = blockIdx.x * kRows + threadIdx.x / G, c = threadIdx.x % G;
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int sq = p.seqlen_q;
    float acc = 0.f;
    if (row < sq) {
        const T* dorow = static_cast<const T*>(p.dout) + b * p.do_batch_stride + h * p.do_head_stride +
                         row * p.do_row_stride + c * kVec;
        const T* orow = static_cast<const T*>(p.o) + b * p.o_batch_stride + h * p.o_head_stride +
                        row * p.o_row_stride + c * kVec;
        const uint4 dv = *reinterpret_cast<const uint4*>(dorow);
        const uint4 ov = *reinterpret_cast<const uint4*>(orow);
        const T* de = reinterpret_cast<const T*>(&dv);
        const T* oe = reinterpret_cast<const T*>(&ov);
#pragma unroll
        for (int i = 0; i < kVec; ++i) acc += toFloat(de[i]) * toFloat(oe[i]);
    }
#pragma unroll
    for (int off = G / 2; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffff, acc, off);
    if (c == 0 && row < p.seqlen_q_padded) {
        const int64_t i = static_cast<int64_t>(bh) * p.seqlen_q_padded + row;
        p.dsum[i] = row < sq ? acc : 0.f;
        p.lse_log2[i] = row < sq ? p.lse[static_cast<int64_t>(bh) * sq + row] * 1.4426950408889634f : INFINITY;
    }
}

template <typename T, int D>
void runBwdPreprocess(const FlashBwdParams& p, cudaStream_t stream) {
    constexpr int kRows = 256 / (D / (16 / sizeof(T)));
    const dim3 grid((p.seqlen_q_padded + kRows - 1) / kRows, p.batch * p.heads);
    bwdPreprocessKernel<T, D><<<grid, 256, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
}

// Launch 2.
template <typename T, typename Tr, bool Causal>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks) flashBwdKernel(const FlashBwdParams p) {
    constexpr int D = Tr::D, BM = Tr::kBlockM, BN = Tr::kBlockN, P = Tr::kPitch, PS = Tr::kPitchS;
    constexpr int NT = Tr::kThreads;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* sK = reinterpret_cast<T*>(smem_raw);
    T* sV = sK + BN * P;
    T* sQ = sV + BN * P;        // [2][BM][P]
    T* sdO = sQ + 2 * BM * P;   // [2][BM][P]
    T* sdS = sdO + 2 * BM * P;  // [BN][PS]: dSᵀ, keys × queries
    float* sL = reinterpret_cast<float*>(sdS + BN * PS);  // [2][BM]
    float* sD = sL + 2 * BM;                               // [2][BM]

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int n0 = blockIdx.x * BN;
    const int sq = p.seqlen_q, sk = p.seqlen_k, sqp = p.seqlen_q_padded;
    const T* q = static_cast<const T*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride;
    const T* k = static_cast<const T*>(p.k) + b * p.k_batch_stride + h * p.k_head_stride;
    const T* v = static_cast<const T*>(p.v) + b * p.v_batch_stride + h * p.v_head_stride;
    const T* dout = static_cast<const T*>(p.dout) + b * p.do_batch_stride + h * p.do_head_stride;
    float* dq_accum = p.dq_accum + static_cast<int64_t>(bh) * sqp * D;
    const float* lse2 = p.lse_log2 + static_cast<int64_t>(bh) * sqp;
    const float* dsum = p.dsum + static_cast<int64_t>(bh) * sqp;

    const int m_tiles = (sq + BM - 1) / BM;
    const int m_begin = Causal ? n0 / BM : 0;  // earlier queries see none of these keys
    const int key0 = n0 + warp * 16 + (lane >> 2);  // this thread's keys: key0 and key0 + 8
    const int col_in = 2 * (lane & 3);

    float dk[D / 8][4], dv[D / 8][4];
#pragma unroll
    for (int i = 0; i < D / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) dk[i][e] = dv[i][e] = 0.f;

    auto loadQTile = [&](int mt, int buf) {
        const int m0 = mt * BM;
        loadTile<T, D, BM, NT, P>(sQ + buf * BM * P, q + m0 * p.q_row_stride, p.q_row_stride, sq - m0, tid);
        loadTile<T, D, BM, NT, P>(sdO + buf * BM * P, dout + m0 * p.do_row_stride, p.do_row_stride, sq - m0, tid);
        if (tid < BM / 4) cpAsync16(sL + buf * BM + tid * 4, lse2 + m0 + tid * 4, true);
        else if (tid < BM / 2) cpAsync16(sD + buf * BM + (tid - BM / 4) * 4, dsum + m0 + (tid - BM / 4) * 4, true);
    };

    if (m_begin < m_tiles) {
        loadTile<T, D, BN, NT, P>(sK, k + n0 * p.k_row_stride, p.k_row_stride, sk - n0, tid);
        loadTile<T, D, BN, NT, P>(sV, v + n0 * p.v_row_stride, p.v_row_stride, sk - n0, tid);
        cpAsyncCommit();
        loadQTile(m_begin, 0);
        cpAsyncCommit();
        cpAsyncWait<1>();
        __syncthreads();

        uint32_t kf[Tr::kKVInRegs ? D / 16 : 1][4], vf[Tr::kKVInRegs ? D / 16 : 1][4];
        if constexpr (Tr::kKVInRegs) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                ldmatrixX4(kf[kk], sK + (warp * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
                ldmatrixX4(vf[kk], sV + (warp * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
            }
        }

        for (int mt = m_begin; mt < m_tiles; ++mt) {
            const int buf = (mt - m_begin) & 1;
            const int m0 = mt * BM;
            if (mt + 1 < m_tiles) loadQTile(mt + 1, buf ^ 1);
            cpAsyncCommit();
            cpAsyncWait<1>();
            __syncthreads();
            const T* cQ = sQ + buf * BM * P;
            const T* cdO = sdO + buf * BM * P;
            const float* cL = sL + buf * BM;
            const float* cD = sD + buf * BM;

            // Sᵀ = K Qᵀ and dPᵀ = V dOᵀ (16 keys × BM queries per warp)
            float st[BM / 8][4], dpt[BM / 8][4];
#pragma unroll
            for (int i = 0; i < BM / 8; ++i)
#pragma unroll
                for (int e = 0; e < 4; ++e) st[i][e] = dpt[i][e] = 0.f;
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                uint32_t ka[4], va[4];
                if constexpr (Tr::kKVInRegs) {
#pragma unroll
                    for (int i = 0; i < 4; ++i) ka[i] = kf[kk][i], va[i] = vf[kk][i];
                } else {
                    ldmatrixX4(ka, sK + (warp * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
                    ldmatrixX4(va, sV + (warp * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
                }
#pragma unroll
                for (int qp = 0; qp < BM / 16; ++qp) {
                    const int off = (qp * 16 + (lane & 7) + (lane >> 4) * 8) * P + kk * 16 + ((lane >> 3) & 1) * 8;
                    uint32_t bq[4], bd[4];
                    ldmatrixX4(bq, cQ + off);
                    ldmatrixX4(bd, cdO + off);
                    mma16816<T>(st[2 * qp], ka, bq[0], bq[1]);
                    mma16816<T>(st[2 * qp + 1], ka, bq[2], bq[3]);
                    mma16816<T>(dpt[2 * qp], va, bd[0], bd[1]);
                    mma16816<T>(dpt[2 * qp + 1], va, bd[2], bd[3]);
                }
            }

            // Pᵀ = exp(S·scale − L) recomputed; dSᵀ = Pᵀ ∘ (dPᵀ − D).
            const bool need_mask = n0 + BN > sk || (Causal && n0 + BN - 1 > m0);
#pragma unroll
            for (int qt = 0; qt < BM / 8; ++qt)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int qc = qt * 8 + col_in + (e & 1);
                    const int key = key0 + (e >> 1) * 8;
                    float pv = exp2f(fmaf(st[qt][e], p.scale_log2, -cL[qc]));
                    if (need_mask && (key >= sk || (Causal && key > m0 + qc))) pv = 0.f;
                    st[qt][e] = pv;
                    dpt[qt][e] = pv * (dpt[qt][e] - cD[qc]);
                }

            // dV += Pᵀ dO, dK += dSᵀ Q (B operands: rows of dO and Q, transposed by ldmatrix)
#pragma unroll
            for (int kq = 0; kq < BM / 16; ++kq) {
                const uint32_t pa[4] = {pack2<T>(st[2 * kq][0], st[2 * kq][1]), pack2<T>(st[2 * kq][2], st[2 * kq][3]),
                                        pack2<T>(st[2 * kq + 1][0], st[2 * kq + 1][1]),
                                        pack2<T>(st[2 * kq + 1][2], st[2 * kq + 1][3])};
                const uint32_t sa[4] = {pack2<T>(dpt[2 * kq][0], dpt[2 * kq][1]),
                                        pack2<T>(dpt[2 * kq][2], dpt[2 * kq][3]),
                                        pack2<T>(dpt[2 * kq + 1][0], dpt[2 * kq + 1][1]),
                                        pack2<T>(dpt[2 * kq + 1][2], dpt[2 * kq + 1][3])};
                // dSᵀ to shared memory for dQ: rows key, columns query.
                T* srow = sdS + (warp * 16 + (lane >> 2)) * PS + kq * 16 + col_in;
                *reinterpret_cast<uint32_t*>(srow) = sa[0];
                *reinterpret_cast<uint32_t*>(srow + 8 * PS) = sa[1];
                *reinterpret_cast<uint32_t*>(srow + 8) = sa[2];
                *reinterpret_cast<uint32_t*>(srow + 8 * PS + 8) = sa[3];
#pragma unroll
                for (int dp = 0; dp < D / 16; ++dp) {
                    const int off = (kq * 16 + (lane & 15)) * P + dp * 16 + (lane >> 4) * 8;
                    uint32_t bd[4], bq[4];
                    ldmatrixX4T(bd, cdO + off);
                    mma16816<T>(dv[2 * dp], pa, bd[0], bd[1]);
                    mma16816<T>(dv[2 * dp + 1], pa, bd[2], bd[3]);
                    ldmatrixX4T(bq, cQ + off);
                    mma16816<T>(dk[2 * dp], sa, bq[0], bq[1]);
                    mma16816<T>(dk[2 * dp + 1], sa, bq[2], bq[3]);
                }
            }
            __syncthreads();  // dSᵀ complete

            // dQ (BM × D) += dS K over this block's keys; each warp one 16 × kDqCols piece.
            constexpr int C = Tr::kDqCols;
            const int rg = warp % Tr::kRowGroups, cg = warp / Tr::kRowGroups;
            float dq[C / 8][4];
#pragma unroll
            for (int i = 0; i < C / 8; ++i) dq[i][0] = dq[i][1] = dq[i][2] = dq[i][3] = 0.f;
#pragma unroll
            for (int kk = 0; kk < BN / 16; ++kk) {
                uint32_t a[4];
                ldmatrixX4T(a, sdS + (kk * 16 + (lane & 7) + (lane >> 4) * 8) * PS + rg * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                for (int dp = 0; dp < C / 16; ++dp) {
                    uint32_t bk[4];
                    ldmatrixX4T(bk, sK + (kk * 16 + (lane & 15)) * P + cg * C + dp * 16 + (lane >> 4) * 8);
                    mma16816<T>(dq[2 * dp], a, bk[0], bk[1]);
                    mma16816<T>(dq[2 * dp + 1], a, bk[2], bk[3]);
                }
            }
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int row = m0 + rg * 16 + (lane >> 2) + r * 8;
                if (row < sq) {
                    float* dst = dq_accum + static_cast<int64_t>(row) * D + cg * C + col_in;
#pragma unroll
                    for (int dt = 0; dt < C / 8; ++dt) {
                        atomicAdd(dst + dt * 8, dq[dt][2 * r]);
                        atomicAdd(dst + dt * 8 + 1, dq[dt][2 * r + 1]);
                    }
                }
            }
        }
    }

    // dK, dV for this block's keys; zeros for keys no query attends to.
    T* dkp = static_cast<T*>(p.dk) + b * p.dk_batch_stride + h * p.dk_head_stride;
    T* dvp = static_cast<T*>(p.dv) + b * p.dv_batch_stride + h * p.dv_head_stride;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int key = key0 + r * 8;
        if (key < sk) {
            T* dkrow = dkp + key * p.dk_row_stride + col_in;
            T* dvrow = dvp + key * p.dv_row_stride + col_in;
#pragma unroll
            for (int dt = 0; dt < D / 8; ++dt) {
                *reinterpret_cast<uint32_t*>(dkrow + dt * 8) =
                    pack2<T>(dk[dt][2 * r] * p.scale, dk[dt][2 * r + 1] * p.scale);
                *reinterpret_cast<uint32_t*>(dvrow + dt * 8) = pack2<T>(dv[dt][2 * r], dv[dt][2 * r + 1]);
            }
        }
    }
}

// Launch 3: dQ = dq_accum · scale, cast; four columns per thread.
template <typename T>
__global__ void __launch_bounds__(256) bwdConvertDqKernel(const FlashBwdParams p) {
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int D = p.head_dim;
    const int64_t i = (static_cast<int64_t>(blockIdx.x) * 256 + threadIdx.x) * 4;
    if (i >= static_cast<int64_t>(p.seqlen_q) * D) return;
    const int row = static_cast<int>(i / D), col = static_cast<int>(i % D);
    const float4 a = *reinterpret_cast<const float4*>(p.dq_accum + static_cast<int64_t>(bh) * p.seqlen_q_padded * D + i);
    T* dst = static_cast<T*>(p.dq) + b * p.dq_batch_stride + h * p.dq_head_stride + row * p.dq_row_stride + col;
    dst[0] = fromFloat<T>(a.x * p.scale);
    dst[1] = fromFloat<T>(a.y * p.scale);
    dst[2] = fromFloat<T>(a.z * p.scale);
    dst[3] = fromFloat<T>(a.w * p.scale);
}

template <typename T, int D, bool Causal>
void runFlashBwd(const FlashBwdParams& p, cudaStream_t stream) {
    runBwdPreprocess<T, D>(p, stream);
    using Tr = BwdTraitsFor<D>;
    auto kernel = flashBwdKernel<T, Tr, Causal>;
    setSmem(kernel, Tr::kSmemBytes);
    const dim3 grid((p.seqlen_k + Tr::kBlockN - 1) / Tr::kBlockN, p.batch * p.heads);
    kernel<<<grid, Tr::kThreads, Tr::kSmemBytes, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
    const int64_t n4 = static_cast<int64_t>(p.seqlen_q) * D / 4;
    const dim3 cgrid(static_cast<unsigned>((n4 + 255) / 256), p.batch * p.heads);
    bwdConvertDqKernel<T><<<cgrid, 256, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
}

template <typename T>
void dispatchFlashBwd(const FlashBwdParams& p, cudaStream_t stream) {
    TS_HEADDIM_SWITCH(p.head_dim, D, [&] {
        TS_BOOL_SWITCH(p.causal, C, [&] { runFlashBwd<T, D, C>(p, stream); });
    });
}

}  // namespace ts::kernels
