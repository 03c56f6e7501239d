// FlashAttention-2 backward on tensor cores, in three launches:
//   1. preprocess: D = rowsum(dO ∘ O), L·log2(e) padded with +inf (so padded rows get P = 0),
//      and the fp32 dQ accumulator cleared;
//   2. the main loop: one block per kBlockN keys, dK and dV in registers, looping over query
//      tiles; P is recomputed from L, dS = P ∘ (dP − D); dQ is accumulated into an fp32
//      buffer with atomic adds. d ≤ 128: 16 keys per warp, each warp both dK and dV; d 128 on
//      sm_90: pairs of warps on 32 keys, one computing dV, the other dK (flashBwdSplitKernel);
//      d 256: two warps per 16 keys, each dK and dV for half the head dim (see Note [d 256
//      backward]);
//   3. convert dQ: scale and cast to the output dtype.
// Each warp computes Sᵀ = K Qᵀ for its own keys, so Pᵀ and dSᵀ come out of the accumulators
// in the A-operand layout of dV += Pᵀ dO and dK += dSᵀ Q. dQ = dS K sums over the keys of
// all warps, so dSᵀ goes through shared memory first.
#pragma once

#include <iterator>

#include "flash.h"
#include "flash_common.cuh"
#include "flash_fwd.cuh"

namespace ts::kernels {

// Note [d 256 backward]:
// ~~~~~~~~~~~~~~~~~~~~~~
// Each warp of flashBwdKernel keeps dK and dV for its 16 keys over the whole head dim in
// registers: 2 · D/2 floats per thread, 128 at d 128 (already the most that fits next to Sᵀ,
// dPᵀ and the fragments) and 256 at d 256, which cannot fit. At d 256 the kernel runs with
// kDSplit = 2: two warps share 16 keys, both compute Sᵀ = K Qᵀ and dPᵀ = V dOᵀ over the full
// head dim (the same values; only the first writes dSᵀ for dQ), and each accumulates dK and dV
// for its half of the columns, so a warp's accumulators are d 128's again. The price is the
// Sᵀ and dPᵀ products computed twice (7 instead of 5 matrix products per tile); no exchange
// between warps and no new kernel. With 8 warps a block owns 64 keys, query tiles are 32 rows
// (138 KB of shared memory: fits sm_80's 163 KB), dQ is split as for the other dims.
template <int D_, int kNWarps_, int kBlockM_, bool kKVInRegs_, int kMinBlocks_, int kDSplit_ = 1>
struct BwdTraits {
    static constexpr int D = D_;
    static constexpr int kNWarps = kNWarps_;
    static constexpr int kThreads = 32 * kNWarps;
    // Warps per 16 keys, each with dK and dV for D / kDSplit columns (see Note [d 256 backward]).
    static constexpr int kDSplit = kDSplit_;
    static constexpr int kKeyGroups = kNWarps / kDSplit;
    static constexpr int kDkCols = D / kDSplit;
    static constexpr int kBlockN = 16 * kKeyGroups;  // keys per block
    static constexpr int kBlockM = kBlockM_;         // queries per tile
    static constexpr bool kKVInRegs = kKVInRegs_;    // K, V fragments kept in registers
    static constexpr int kMinBlocks = kMinBlocks_;
    static_assert(kNWarps % kDSplit == 0 && kDkCols % 16 == 0 && D % 16 == 0, "dK/dV split");
    static_assert(kDSplit == 1 || !kKVInRegs, "split warps read K, V from shared memory");
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
    static_assert(kSmemBytes <= kSm80MaxSmemBytes, "runs on sm_80");
};

template <int D>
struct BwdTraitsFor;
template <>
struct BwdTraitsFor<16> : BwdTraits<16, 4, 64, true, 2> {};
template <>
struct BwdTraitsFor<32> : BwdTraits<32, 4, 64, true, 2> {};
template <>
struct BwdTraitsFor<64> : BwdTraits<64, 8, 64, true, 1> {};
template <>
struct BwdTraitsFor<96> : BwdTraits<96, 8, 64, false, 1> {};
template <>
struct BwdTraitsFor<128> : BwdTraits<128, 8, 32, false, 1> {};
template <>
struct BwdTraitsFor<256> : BwdTraits<256, 8, 32, false, 1, 2> {};

// Launch 1. One group of G threads per row (a power of two of at most a warp, for the
// shuffle sum), each summing kPer 16-byte pieces G apart.
template <typename T, int D>
struct BwdPreprocessShape {
    static constexpr int kVec = 16 / sizeof(T);
    static constexpr int kPieces = D / kVec;  // 16-byte pieces per row
    static constexpr int G = kPieces % 32 == 0   ? 32
                             : kPieces % 16 == 0 ? 16
                             : kPieces % 8 == 0  ? 8
                             : kPieces % 4 == 0  ? 4
                             : kPieces % 2 == 0  ? 2
                                                 : 1;
    static constexpr int kPer = kPieces / G;
    static constexpr int kRows = 256 / G;
};
template <typename T, int D>
__global__ void __launch_bounds__(256) bwdPreprocessKernel(const FlashBwdParams p) {
    using S = BwdPreprocessShape<T, D>;
    constexpr int kVec = S::kVec, G = S::G, kRows = S::kRows;
    const int row = blockIdx.x * kRows + threadIdx.x / G, c = threadIdx.x % G;
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int sq = p.seqlen_q;
    float acc = 0.f;
    if (row < sq) {
        const T* dorow = static_cast<const T*>(p.dout) + b * p.do_batch_stride +
                         h * p.do_head_stride + row * p.do_row_stride + c * kVec;
        const T* orow = static_cast<const T*>(p.o) + b * p.o_batch_stride + h * p.o_head_stride +
                        row * p.o_row_stride + c * kVec;
#pragma unroll
        for (int j = 0; j < S::kPer; ++j) {
            const uint4 dv = *reinterpret_cast<const uint4*>(dorow + j * G * kVec);
            const uint4 ov = *reinterpret_cast<const uint4*>(orow + j * G * kVec);
            const T* de = reinterpret_cast<const T*>(&dv);
            const T* oe = reinterpret_cast<const T*>(&ov);
#pragma unroll
            for (int i = 0; i < kVec; ++i) acc += toFloat(de[i]) * toFloat(oe[i]);
        }
    }
#pragma unroll
    for (int off = G / 2; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffff, acc, off);
    // dQ's fp32 accumulator starts at zero: cleared here rather than by a separate fill launch.
    if (p.dq_accum && row < p.seqlen_q_padded) {
        float4* z = reinterpret_cast<float4*>(
            p.dq_accum + (static_cast<int64_t>(bh) * p.seqlen_q_padded + row) * D);
#pragma unroll
        for (int i = c; i < D / 4; i += G) z[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    if (c == 0 && row < p.seqlen_q_padded) {
        const int64_t i = static_cast<int64_t>(bh) * p.seqlen_q_padded + row;
        p.dsum[i] = row < sq ? acc : 0.f;
        p.lse_log2[i] =
            row < sq ? p.lse[static_cast<int64_t>(bh) * sq + row] * 1.4426950408889634f : INFINITY;
    }
}

template <typename T, int D>
void runBwdPreprocess(const FlashBwdParams& p, cudaStream_t stream) {
    constexpr int kRows = BwdPreprocessShape<T, D>::kRows;
    const dim3 grid((p.seqlen_q_padded + kRows - 1) / kRows, p.batch * p.heads);
    bwdPreprocessKernel<T, D><<<grid, 256, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
}

// Launch 2.
template <typename T, typename Tr, bool Causal>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks)
    flashBwdKernel(const FlashBwdParams p) {
    constexpr int D = Tr::D, BM = Tr::kBlockM, BN = Tr::kBlockN, P = Tr::kPitch, PS = Tr::kPitchS;
    constexpr int NT = Tr::kThreads;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* sK = reinterpret_cast<T*>(smem_raw);
    T* sV = sK + BN * P;
    T* sQ = sV + BN * P;                                  // [2][BM][P]
    T* sdO = sQ + 2 * BM * P;                             // [2][BM][P]
    T* sdS = sdO + 2 * BM * P;                            // [BN][PS]: dSᵀ, keys × queries
    float* sL = reinterpret_cast<float*>(sdS + BN * PS);  // [2][BM]
    float* sD = sL + 2 * BM;                              // [2][BM]

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    // kw: the warp's 16 keys within the block; dc0: its first dK/dV column (see Note [d 256
    // backward]).
    constexpr int DK = Tr::kDkCols;
    const int kw = Tr::kDSplit == 1 ? warp : warp % Tr::kKeyGroups;
    const int dc0 = Tr::kDSplit == 1 ? 0 : warp / Tr::kKeyGroups * DK;
    const auto blk = bwdBlock<T, Tr, Causal>(p);
    const int sq = blk.sq, sk = blk.sk;
    const int key0 = blk.n0 + kw * 16 + (lane >> 2);  // this thread's keys: key0 and key0 + 8
    const int col_in = 2 * (lane & 3);

    float dk[DK / 8][4], dv[DK / 8][4];
#pragma unroll
    for (int i = 0; i < DK / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) dk[i][e] = dv[i][e] = 0.f;

    auto loadQTile = [&](int mt, int buf) {
        const int m0 = mt * BM;
        loadTile<T, D, BM, NT, P>(sQ + buf * BM * P, blk.q + m0 * p.q_row_stride, p.q_row_stride,
                                  sq - m0, tid);
        loadTile<T, D, BM, NT, P>(sdO + buf * BM * P, blk.dout + m0 * p.do_row_stride,
                                  p.do_row_stride, sq - m0, tid);
        blk.loadLD(sL, sD, buf, m0, tid);
    };

    if (blk.m_begin < blk.m_tiles) {
        loadTile<T, D, BN, NT, P>(sK, blk.k + blk.n0 * p.k_row_stride, p.k_row_stride, sk - blk.n0,
                                  tid);
        loadTile<T, D, BN, NT, P>(sV, blk.v + blk.n0 * p.v_row_stride, p.v_row_stride, sk - blk.n0,
                                  tid);
        cpAsyncCommit();
        loadQTile(blk.m_begin, 0);
        cpAsyncCommit();
        cpAsyncWait<1>();
        __syncthreads();

        uint32_t kf[Tr::kKVInRegs ? D / 16 : 1][4], vf[Tr::kKVInRegs ? D / 16 : 1][4];
        if constexpr (Tr::kKVInRegs) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                ldmatrixX4(kf[kk], sK + (kw * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
                ldmatrixX4(vf[kk], sV + (kw * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
            }
        }

        for (int mt = blk.m_begin; mt < blk.m_tiles; ++mt) {
            const int buf = (mt - blk.m_begin) & 1;
            const int m0 = mt * BM;
            if (mt + 1 < blk.m_tiles) loadQTile(mt + 1, buf ^ 1);
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
                    ldmatrixX4(ka, sK + (kw * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
                    ldmatrixX4(va, sV + (kw * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
                }
#pragma unroll
                for (int qp = 0; qp < BM / 16; ++qp) {
                    const int off = (qp * 16 + (lane & 7) + (lane >> 4) * 8) * P + kk * 16 +
                                    ((lane >> 3) & 1) * 8;
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
            const bool need_mask = blk.n0 + BN > sk || (Causal && blk.n0 + BN - 1 > m0);
#pragma unroll
            for (int qt = 0; qt < BM / 8; ++qt)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    st[qt][e] =
                        exp2Fast(fmaf(st[qt][e], p.scale_log2, -cL[qt * 8 + col_in + (e & 1)]));
            if (need_mask) {  // a branch: inline, the compares ran (predicated) on every tile
#pragma unroll
                for (int qt = 0; qt < BM / 8; ++qt)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int qc = qt * 8 + col_in + (e & 1);
                        const int key = key0 + (e >> 1) * 8;
                        if (key >= sk || (Causal && key > m0 + qc)) st[qt][e] = 0.f;
                    }
            }
#pragma unroll
            for (int qt = 0; qt < BM / 8; ++qt)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    dpt[qt][e] = st[qt][e] * (dpt[qt][e] - cD[qt * 8 + col_in + (e & 1)]);

                    // dV += Pᵀ dO, dK += dSᵀ Q (B operands: rows of dO and Q, transposed by
                    // ldmatrix)
#pragma unroll
            for (int kq = 0; kq < BM / 16; ++kq) {
                const uint32_t pa[4] = {pack2<T>(st[2 * kq][0], st[2 * kq][1]),
                                        pack2<T>(st[2 * kq][2], st[2 * kq][3]),
                                        pack2<T>(st[2 * kq + 1][0], st[2 * kq + 1][1]),
                                        pack2<T>(st[2 * kq + 1][2], st[2 * kq + 1][3])};
                const uint32_t sa[4] = {pack2<T>(dpt[2 * kq][0], dpt[2 * kq][1]),
                                        pack2<T>(dpt[2 * kq][2], dpt[2 * kq][3]),
                                        pack2<T>(dpt[2 * kq + 1][0], dpt[2 * kq + 1][1]),
                                        pack2<T>(dpt[2 * kq + 1][2], dpt[2 * kq + 1][3])};
                // dSᵀ to shared memory for dQ: rows key, columns query (once per 16 keys).
                if (Tr::kDSplit == 1 || dc0 == 0) {
                    T* srow = sdS + (kw * 16 + (lane >> 2)) * PS + kq * 16 + col_in;
                    *reinterpret_cast<uint32_t*>(srow) = sa[0];
                    *reinterpret_cast<uint32_t*>(srow + 8 * PS) = sa[1];
                    *reinterpret_cast<uint32_t*>(srow + 8) = sa[2];
                    *reinterpret_cast<uint32_t*>(srow + 8 * PS + 8) = sa[3];
                }
#pragma unroll
                for (int dp = 0; dp < DK / 16; ++dp) {
                    const int off = (kq * 16 + (lane & 15)) * P + dc0 + dp * 16 + (lane >> 4) * 8;
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
                ldmatrixX4T(a, sdS + (kk * 16 + (lane & 7) + (lane >> 4) * 8) * PS + rg * 16 +
                                   ((lane >> 3) & 1) * 8);
#pragma unroll
                for (int dp = 0; dp < C / 16; ++dp) {
                    uint32_t bk[4];
                    ldmatrixX4T(
                        bk, sK + (kk * 16 + (lane & 15)) * P + cg * C + dp * 16 + (lane >> 4) * 8);
                    mma16816<T>(dq[2 * dp], a, bk[0], bk[1]);
                    mma16816<T>(dq[2 * dp + 1], a, bk[2], bk[3]);
                }
            }
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int row = m0 + rg * 16 + (lane >> 2) + r * 8;
                if (row < sq) {
                    float* dst = blk.dqRow(row) + cg * C + col_in;
#pragma unroll
                    for (int dt = 0; dt < C / 8; ++dt)
                        atomicAdd2(dst + dt * 8, dq[dt][2 * r], dq[dt][2 * r + 1]);
                }
            }
        }
    }

    // dK, dV for this block's keys; zeros for keys no query attends to.
    T* dkp = headBase<T>(p.dk, blk.bi, p.dk_batch_stride, p.dk_head_stride);
    T* dvp = headBase<T>(p.dv, blk.bi, p.dv_batch_stride, p.dv_head_stride);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int key = key0 + r * 8;
        if (key < sk) {
            T* dkrow = dkp + key * p.dk_row_stride + dc0 + col_in;
            T* dvrow = dvp + key * p.dv_row_stride + dc0 + col_in;
#pragma unroll
            for (int dt = 0; dt < DK / 8; ++dt) {
                *reinterpret_cast<uint32_t*>(dkrow + dt * 8) =
                    pack2<T>(dk[dt][2 * r] * p.scale, dk[dt][2 * r + 1] * p.scale);
                *reinterpret_cast<uint32_t*>(dvrow + dt * 8) =
                    pack2<T>(dv[dt][2 * r], dv[dt][2 * r + 1]);
            }
        }
    }
}

// Launch 2, warp-specialised (d 128). Eight warps own 128 keys as four pairs of 32; in each
// pair one warp computes Sᵀ = K Qᵀ, Pᵀ and dV += Pᵀ dO, the other dPᵀ = V dOᵀ, dSᵀ and
// dK += dSᵀ Q. A warp thus holds one 32-key × D accumulator (dV or dK) where the version above
// holds two of 16 keys, so every Q / dO fragment it reads from shared memory feeds two MMAs
// instead of one, and query tiles grow to 64 rows. Pᵀ goes to the partner in fp32 through
// shared memory (dS = P ∘ (dP − D) keeps fp32 P, as before). The dS warp signals dSᵀ with a
// non-blocking barrier arrive, so the dV warps start on dQ while it computes dK. Shared-memory
// bytes per MMA, the exchange counted, 0.41 ldmatrix.x4's worth against 0.66 for the version
// above (docs/ATTENTION.md, v3 and v4: predicted and measured).
template <int D_, int kBlockM_>
struct BwdSplitTraits {
    static constexpr int D = D_;
    static constexpr int kNWarps = 8;
    static constexpr int kThreads = 32 * kNWarps;
    static constexpr int kPairs = kNWarps / 2;
    static constexpr int kPairKeys = 32;  // two m16 tiles
    static constexpr int kBlockN = kPairs * kPairKeys;
    static constexpr int kBlockM = kBlockM_;
    static constexpr int kMinBlocks = 1;
    static constexpr int kPitch = D + 8;
    static constexpr int kPitchS = kBlockM + 8;
    // dQ tile (kBlockM × D): warps in row groups of 32 rows × column groups.
    static constexpr int kRowGroups = kBlockM / 32;
    static constexpr int kColGroups = kNWarps / kRowGroups;
    static constexpr int kDqCols = D / kColGroups;
    static_assert(kBlockM % 32 == 0 && kNWarps % kRowGroups == 0 && kDqCols % 16 == 0, "dQ split");
    static_assert(kSeqPad % kBlockM == 0, "padded work buffers cover whole tiles");
    // Pᵀ exchange, per pair: 32 keys × kBlockM fp32, in accumulator order (one float4 per lane
    // and m16n8 tile).
    static constexpr int kXBytes = kPairs * kPairKeys * kBlockM * 4;
    static constexpr int kSmemBytes =
        (2 * kBlockN * kPitch + 4 * kBlockM * kPitch + kBlockN * kPitchS) * 2 + kXBytes +
        4 * kBlockM * 4;
};

template <typename T, typename Tr, bool Causal>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks)
    flashBwdSplitKernel(const FlashBwdParams p) {
    constexpr int D = Tr::D, BM = Tr::kBlockM, BN = Tr::kBlockN, P = Tr::kPitch, PS = Tr::kPitchS;
    constexpr int NT = Tr::kThreads, NQ = BM / 8;  // n8 tiles of queries
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* sK = reinterpret_cast<T*>(smem_raw);
    T* sV = sK + BN * P;
    T* sQ = sV + BN * P;                                         // [2][BM][P]
    T* sdO = sQ + 2 * BM * P;                                    // [2][BM][P]
    T* sdS = sdO + 2 * BM * P;                                   // [BN][PS]: dSᵀ, keys × queries
    float4* sX = reinterpret_cast<float4*>(sdS + BN * PS);       // [pairs][2][NQ][32]: Pᵀ
    float* sL = reinterpret_cast<float*>(sX) + Tr::kXBytes / 4;  // [2][BM]
    float* sD = sL + 2 * BM;                                     // [2][BM]

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int role = warp / Tr::kPairs, pair = warp % Tr::kPairs;  // role 0: P, dV; role 1: dS, dK
    const auto blk = bwdBlock<T, Tr, Causal>(p);
    const int sq = blk.sq, sk = blk.sk;
    const int pk0 = pair * Tr::kPairKeys;         // the pair's first key within the block
    const int key0 = blk.n0 + pk0 + (lane >> 2);  // this thread's keys: key0 + 16·mi + 8·(e / 2)
    const int col_in = 2 * (lane & 3);
    float4* xp = sX + pair * 2 * NQ * 32 + lane;  // this lane's Pᵀ slots: xp[(mi·NQ + nt)·32]

    // dV (role 0) or dK (role 1) for the pair's 32 keys: one array, so that the two roles'
    // loops do not both keep one live.
    float acc[2][D / 8][4];
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int i = 0; i < D / 8; ++i)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mi][i][e] = 0.f;

    auto loadQTile = [&](int mt, int buf) {
        const int m0 = mt * BM;
        loadTile<T, D, BM, NT, P>(sQ + buf * BM * P, blk.q + m0 * p.q_row_stride, p.q_row_stride,
                                  sq - m0, tid);
        loadTile<T, D, BM, NT, P>(sdO + buf * BM * P, blk.dout + m0 * p.do_row_stride,
                                  p.do_row_stride, sq - m0, tid);
        blk.loadLD(sL, sD, buf, m0, tid);
    };

    // Loop top: the next tile's copy in flight, this tile's complete and visible.
    // Warps leave a tile at different times (role 1 goes on to dK while role 0 starts dQ), so
    // the next tile's copy starts only after the barrier: every warp is done with its buffer.
    auto beginTile = [&](int mt) {
        cpAsyncWait<0>();
        __syncthreads();
        if (mt + 1 < blk.m_tiles) loadQTile(mt + 1, (mt + 1 - blk.m_begin) & 1);
        cpAsyncCommit();
    };

    // 32 keys × BM queries: acc2 = A_pair · Bᵀ over D, A = K or V rows (keys), B = Q or dO rows.
    auto keyQueryProduct = [&](float(&s)[2][NQ][4], const T* sA, const T* sB) {
#pragma unroll
        for (int mi = 0; mi < 2; ++mi)
#pragma unroll
            for (int i = 0; i < NQ; ++i)
                s[mi][i][0] = s[mi][i][1] = s[mi][i][2] = s[mi][i][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            uint32_t a[2][4];
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
                ldmatrixX4(a[mi],
                           sA + (pk0 + mi * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
#pragma unroll
            for (int qp = 0; qp < BM / 16; ++qp) {
                uint32_t bq[4];
                ldmatrixX4(bq, sB + (qp * 16 + (lane & 7) + (lane >> 4) * 8) * P + kk * 16 +
                                   ((lane >> 3) & 1) * 8);
#pragma unroll
                for (int mi = 0; mi < 2; ++mi) {
                    mma16816<T>(s[mi][2 * qp], a[mi], bq[0], bq[1]);
                    mma16816<T>(s[mi][2 * qp + 1], a[mi], bq[2], bq[3]);
                }
            }
        }
    };

    // acc (32 keys × D) += Xᵀ B, Xᵀ the packed A fragments (keys × queries), B rows = queries.
    auto keyDimProduct = [&](const uint32_t(&xa)[BM / 16][2][4], const T* sB) {
#pragma unroll
        for (int kq = 0; kq < BM / 16; ++kq)
#pragma unroll
            for (int dp = 0; dp < D / 16; ++dp) {
                uint32_t bd[4];
                ldmatrixX4T(bd, sB + (kq * 16 + (lane & 15)) * P + dp * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int mi = 0; mi < 2; ++mi) {
                    mma16816<T>(acc[mi][2 * dp], xa[kq][mi], bd[0], bd[1]);
                    mma16816<T>(acc[mi][2 * dp + 1], xa[kq][mi], bd[2], bd[3]);
                }
            }
    };

    auto pack = [&](uint32_t(&xa)[BM / 16][2][4], const float(&s)[2][NQ][4]) {
#pragma unroll
        for (int kq = 0; kq < BM / 16; ++kq)
#pragma unroll
            for (int mi = 0; mi < 2; ++mi) {
                xa[kq][mi][0] = pack2<T>(s[mi][2 * kq][0], s[mi][2 * kq][1]);
                xa[kq][mi][1] = pack2<T>(s[mi][2 * kq][2], s[mi][2 * kq][3]);
                xa[kq][mi][2] = pack2<T>(s[mi][2 * kq + 1][0], s[mi][2 * kq + 1][1]);
                xa[kq][mi][3] = pack2<T>(s[mi][2 * kq + 1][2], s[mi][2 * kq + 1][3]);
            }
    };

    // dQ (BM × D) += dS K over the block's 128 keys; each warp 32 rows × kDqCols, into fp32.
    auto dqProduct = [&](int m0) {
        constexpr int C = Tr::kDqCols;
        const int rg = warp % Tr::kRowGroups, cg = warp / Tr::kRowGroups;
        float dq[2][C / 8][4];
#pragma unroll
        for (int mi = 0; mi < 2; ++mi)
#pragma unroll
            for (int i = 0; i < C / 8; ++i)
                dq[mi][i][0] = dq[mi][i][1] = dq[mi][i][2] = dq[mi][i][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
            uint32_t a[2][4];
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
                ldmatrixX4T(a[mi], sdS + (kk * 16 + (lane & 7) + (lane >> 4) * 8) * PS + rg * 32 +
                                       mi * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
            for (int dp = 0; dp < C / 16; ++dp) {
                uint32_t bk[4];
                ldmatrixX4T(bk,
                            sK + (kk * 16 + (lane & 15)) * P + cg * C + dp * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int mi = 0; mi < 2; ++mi) {
                    mma16816<T>(dq[mi][2 * dp], a[mi], bk[0], bk[1]);
                    mma16816<T>(dq[mi][2 * dp + 1], a[mi], bk[2], bk[3]);
                }
            }
        }
        // Rows up to the padded length exist in dq_accum (padded rows add zeros: P = 0 there).
#pragma unroll
        for (int mi = 0; mi < 2; ++mi)
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int row = m0 + rg * 32 + mi * 16 + (lane >> 2) + r * 8;
                float* dst = blk.dqRow(row) + cg * C + col_in;
#pragma unroll
                for (int dt = 0; dt < C / 8; ++dt)
                    atomicAdd2(dst + dt * 8, dq[mi][dt][2 * r], dq[mi][dt][2 * r + 1]);
            }
    };

    auto pairSync = [&] { asm volatile("bar.sync %0, 64;\n" ::"r"(1 + pair) : "memory"); };
    // Barrier 5: dSᵀ written (role 1 arrives without waiting, role 0 waits); 6: role 1 alone.
    auto dsArrive = [] { asm volatile("bar.arrive 5, %0;\n" ::"n"(Tr::kThreads) : "memory"); };
    auto dsWait = [] { asm volatile("bar.sync 5, %0;\n" ::"n"(Tr::kThreads) : "memory"); };
    auto role1Sync = [] { asm volatile("bar.sync 6, %0;\n" ::"n"(Tr::kThreads / 2) : "memory"); };

    if (blk.m_begin < blk.m_tiles) {
        loadTile<T, D, BN, NT, P>(sK, blk.k + blk.n0 * p.k_row_stride, p.k_row_stride, sk - blk.n0,
                                  tid);
        loadTile<T, D, BN, NT, P>(sV, blk.v + blk.n0 * p.v_row_stride, p.v_row_stride, sk - blk.n0,
                                  tid);
        cpAsyncCommit();
        loadQTile(blk.m_begin, 0);
        cpAsyncCommit();

        // One loop per role (warp-uniform), with the same barriers in the same order.
        if (role == 0) {
            for (int mt = blk.m_begin; mt < blk.m_tiles; ++mt) {
                beginTile(mt);
                const int buf = (mt - blk.m_begin) & 1, m0 = mt * BM;
                const T* cQ = sQ + buf * BM * P;
                const T* cdO = sdO + buf * BM * P;
                const float* cL = sL + buf * BM;
                float s[2][NQ][4];
                keyQueryProduct(s, sK, cQ);  // Sᵀ
                // Pᵀ = exp(S·scale − L), 0 where masked; to the partner in fp32.
                const bool need_mask = blk.n0 + pk0 + Tr::kPairKeys > sk ||
                                       (Causal && blk.n0 + pk0 + Tr::kPairKeys - 1 > m0);
#pragma unroll
                for (int nt = 0; nt < NQ; ++nt) {
                    const float l0 = cL[nt * 8 + col_in], l1 = cL[nt * 8 + col_in + 1];
#pragma unroll
                    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            s[mi][nt][e] =
                                exp2Fast(fmaf(s[mi][nt][e], p.scale_log2, -(e & 1 ? l1 : l0)));
                }
                if (need_mask) {  // a branch: inline, the compares ran (predicated) on every tile
#pragma unroll
                    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                        for (int nt = 0; nt < NQ; ++nt)
#pragma unroll
                            for (int e = 0; e < 4; ++e) {
                                const int key = key0 + mi * 16 + (e >> 1) * 8,
                                          qr = m0 + nt * 8 + col_in + (e & 1);
                                if (key >= sk || (Causal && key > qr)) s[mi][nt][e] = 0.f;
                            }
                }
#pragma unroll
                for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                    for (int nt = 0; nt < NQ; ++nt)
                        xp[(mi * NQ + nt) * 32] =
                            make_float4(s[mi][nt][0], s[mi][nt][1], s[mi][nt][2], s[mi][nt][3]);
                pairSync();
                uint32_t pa[BM / 16][2][4];
                pack(pa, s);
                keyDimProduct(pa, cdO);  // dV += Pᵀ dO
                dsWait();                // every dSᵀ written
                dqProduct(m0);
            }
        } else {
            for (int mt = blk.m_begin; mt < blk.m_tiles; ++mt) {
                beginTile(mt);
                const int buf = (mt - blk.m_begin) & 1, m0 = mt * BM;
                const T* cQ = sQ + buf * BM * P;
                const T* cdO = sdO + buf * BM * P;
                const float* cD = sD + buf * BM;
                float s[2][NQ][4];
                keyQueryProduct(s, sV, cdO);  // dPᵀ
#pragma unroll
                for (int nt = 0; nt < NQ; ++nt) {  // dPᵀ − D while the partner computes Pᵀ
                    const float d0 = cD[nt * 8 + col_in], d1 = cD[nt * 8 + col_in + 1];
#pragma unroll
                    for (int mi = 0; mi < 2; ++mi) {
                        s[mi][nt][0] -= d0;
                        s[mi][nt][1] -= d1;
                        s[mi][nt][2] -= d0;
                        s[mi][nt][3] -= d1;
                    }
                }
                pairSync();
                // dSᵀ = Pᵀ ∘ (dPᵀ − D), to shared memory (rows keys) for dQ.
#pragma unroll
                for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                    for (int nt = 0; nt < NQ; ++nt) {
                        const float4 pv = xp[(mi * NQ + nt) * 32];
                        s[mi][nt][0] *= pv.x;
                        s[mi][nt][1] *= pv.y;
                        s[mi][nt][2] *= pv.z;
                        s[mi][nt][3] *= pv.w;
                    }
                uint32_t sa[BM / 16][2][4];
                pack(sa, s);
#pragma unroll
                for (int kq = 0; kq < BM / 16; ++kq)
#pragma unroll
                    for (int mi = 0; mi < 2; ++mi) {
                        T* srow = sdS + (pk0 + mi * 16 + (lane >> 2)) * PS + kq * 16 + col_in;
                        *reinterpret_cast<uint32_t*>(srow) = sa[kq][mi][0];
                        *reinterpret_cast<uint32_t*>(srow + 8 * PS) = sa[kq][mi][1];
                        *reinterpret_cast<uint32_t*>(srow + 8) = sa[kq][mi][2];
                        *reinterpret_cast<uint32_t*>(srow + 8 * PS + 8) = sa[kq][mi][3];
                    }
                dsArrive();             // role 0 may start dQ while this warp does dK
                keyDimProduct(sa, cQ);  // dK += dSᵀ Q
                role1Sync();            // every dSᵀ written
                dqProduct(m0);
            }
        }
    }

    // Role 0 writes dV, role 1 dK (scaled), for the pair's keys; zeros for keys no query sees.
    T* dst = role == 0 ? headBase<T>(p.dv, blk.bi, p.dv_batch_stride, p.dv_head_stride)
                       : headBase<T>(p.dk, blk.bi, p.dk_batch_stride, p.dk_head_stride);
    const int64_t row_stride = role == 0 ? p.dv_row_stride : p.dk_row_stride;
    const float sc = role == 0 ? 1.f : p.scale;
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const int key = key0 + mi * 16 + r * 8;
            if (key < sk) {
                T* row = dst + key * row_stride + col_in;
#pragma unroll
                for (int dt = 0; dt < D / 8; ++dt)
                    *reinterpret_cast<uint32_t*>(row + dt * 8) =
                        pack2<T>(acc[mi][dt][2 * r] * sc, acc[mi][dt][2 * r + 1] * sc);
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
    const float4 a = *reinterpret_cast<const float4*>(
        p.dq_accum + static_cast<int64_t>(bh) * p.seqlen_q_padded * D + i);
    T* dst = static_cast<T*>(p.dq) + b * p.dq_batch_stride + h * p.dq_head_stride +
             row * p.dq_row_stride + col;
    dst[0] = fromFloat<T>(a.x * p.scale);
    dst[1] = fromFloat<T>(a.y * p.scale);
    dst[2] = fromFloat<T>(a.z * p.scale);
    dst[3] = fromFloat<T>(a.w * p.scale);
}

template <typename T>
void launchBwdConvertDq(const FlashBwdParams& p, cudaStream_t stream) {
    const int64_t n4 = static_cast<int64_t>(p.seqlen_q) * p.head_dim / 4;
    const dim3 cgrid(static_cast<unsigned>((n4 + 255) / 256), p.batch * p.heads);
    bwdConvertDqKernel<T><<<cgrid, 256, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
}

// The warp-specialised kernel (d 128) needs 187 KB of shared memory: sm_90 has 227 KB per
// block, sm_80 164 KB (that gets the one-warp-per-16-keys kernel).
template <int D>
struct BwdSplitFor {
    static constexpr bool kUse = false;
};
template <>
struct BwdSplitFor<128> : BwdSplitTraits<128, 64> {
    static constexpr bool kUse = true;
};

template <typename T, int D, bool Causal>
void runFlashBwd(const FlashBwdParams& p, cudaStream_t stream) {
    runBwdPreprocess<T, D>(p, stream);
    // Which dQ/dK/dV loop: Hopper's wgmma kernel; else, for d 128 where 187 KB of shared memory
    // can be had, the warp-specialised kernel; else the one-warp-per-16-keys kernel.
    bool launched = false;
    if constexpr (D == 64 || D == 128) {
        if (sm90Usable()) {
            if constexpr (std::is_same_v<T, __nv_bfloat16>)
                launchBwdSm90Bf16(p, stream);
            else
                launchBwdSm90Fp16(p, stream);
            launched = true;
        }
    }
    if constexpr (BwdSplitFor<D>::kUse) {
        int dev = 0, optin = 0;
        TS_CUDA_CHECK(cudaGetDevice(&dev));
        TS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if (!launched && optin >= BwdSplitFor<D>::kSmemBytes) {
            using Tr = BwdSplitFor<D>;
            launchBwdMain<Tr>(flashBwdSplitKernel<T, Tr, Causal>, p, sizeof(T), stream);
            launched = true;
        }
    }
    if (!launched) {
        using Tr = BwdTraitsFor<D>;
        launchBwdMain<Tr>(flashBwdKernel<T, Tr, Causal>, p, sizeof(T), stream);
    }
    launchBwdConvertDq<T>(p, stream);
}

template <typename T, int D>
void runFlashBwdHeadDim(const FlashBwdParams& p, cudaStream_t stream) {
    TS_BOOL_SWITCH(p.causal, C, [&] { runFlashBwd<T, D, C>(p, stream); });
}
// Head dims 96 and 256 are compiled in files of their own (flash_bwd_hdim*.cu), in parallel
// with the per-dtype files that hold 16 to 128.
#define TS_FLASH_BWD_EXTERN(T, D) \
    extern template void runFlashBwdHeadDim<T, D>(const FlashBwdParams&, cudaStream_t);
TS_FLASH_BWD_EXTERN(__nv_bfloat16, 96)
TS_FLASH_BWD_EXTERN(__half, 96)
TS_FLASH_BWD_EXTERN(__nv_bfloat16, 256)
TS_FLASH_BWD_EXTERN(__half, 256)
#undef TS_FLASH_BWD_EXTERN

// A head dim that Hopper's kernels run inside their 128 tile (kSm90InTileHeadDims; the adapter
// lets it through only where sm90Usable()): the three launches, dQ's work buffer d wide.
template <typename T>
void runFlashBwdInTile(const FlashBwdParams& p, cudaStream_t stream) {
    if (!sm90Usable())
        throw std::invalid_argument("head_dim " + std::to_string(p.head_dim) +
                                    " needs the sm_90a kernels");
    static_assert(kSm90InTileHeadDims[0] == 80 && std::size(kSm90InTileHeadDims) == 1,
                  "one preprocess per in-tile dim");
    runBwdPreprocess<T, 80>(p, stream);
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        launchBwdSm90Bf16(p, stream);
    else
        launchBwdSm90Fp16(p, stream);
    launchBwdConvertDq<T>(p, stream);
}

template <typename T>
void dispatchFlashBwd(const FlashBwdParams& p, cudaStream_t stream) {
    if (sm90InTile(p.head_dim)) return runFlashBwdInTile<T>(p, stream);
    TS_HEADDIM_SWITCH(p.head_dim, D, [&] { runFlashBwdHeadDim<T, D>(p, stream); });
}

}  // namespace ts::kernels
