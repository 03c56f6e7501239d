// FlashAttention-2 backward, dQ/dK/dV loop (launch 2 of 3), on Hopper's warpgroup MMA
// (wgmma, sm_90a), head dims 64 and 128. Launches 1 and 3 (preprocess, dQ conversion) and the
// numerics are those of flash_bwd.cuh; only the tensor-core instructions and the shared-memory
// layout differ.
//
// A block owns 128 keys; its two warpgroups own 64 each and loop over query tiles of 64:
//   Sᵀ  = K Qᵀ      (64 × 64; A = K, B = Q, both K-major from shared memory)
//   dPᵀ = V dOᵀ     (A = V, B = dO)
//   Pᵀ  = exp2(Sᵀ·scale·log2e − L·log2e), masked; dSᵀ = Pᵀ ∘ (dPᵀ − D)
//   dV += Pᵀ dO,  dK += dSᵀ Q   (A = Pᵀ, dSᵀ from registers, B = dO, Q MN-major)
//   dQ  = dS K      (64 queries × D/2 columns per warpgroup, over all 128 keys: A = dSᵀ from
//                    shared memory, MN-major; B = K, MN-major), added to the fp32 buffer.
// One wgmma reads a whole 64 × 16 (A) and 16 × N (B) operand from shared memory for the four
// warps together, so each byte read feeds four times the work of an m16n8k16 fragment, and
// wgmma runs asynchronously: Sᵀ and dPᵀ issue together, dV runs while dSᵀ is computed.
// Q, dO, L and D tiles are double-buffered with cp.async; two barriers per tile.
// Head dim 80 runs inside the 128 tile (see Note [head dims inside the tile], flash_fwd_sm90.cuh).
#pragma once

#include <iterator>

#include "flash.h"
#include "flash_common.cuh"
#include "flash_sm90.cuh"
#include "flash_wgmma_ops.cuh"

namespace ts::kernels {

template <int D_>
struct BwdSm90Traits {
    static constexpr int D = D_;
    static_assert(D == 64 || D == 128, "head dims 64 and 128");
    static constexpr int kCols = D;       // the head dim; less inside the tile (sm90::InTile)
    static constexpr int kThreads = 256;  // two warpgroups
    static constexpr int kBlockN = 128;   // keys per block, 64 per warpgroup
    static constexpr int kBlockM = 64;    // queries per tile
    static constexpr int kMinBlocks = 1;
    static constexpr int kKVBytes = kBlockN * D * 2;
    static constexpr int kQBytes = kBlockM * D * 2;
    static constexpr int kOffK = 0;
    static constexpr int kOffV = kKVBytes;
    static constexpr int kOffQ = 2 * kKVBytes;                    // [2] stages
    static constexpr int kOffdO = kOffQ + 2 * kQBytes;            // [2] stages
    static constexpr int kOffdS = kOffdO + 2 * kQBytes;           // dSᵀ: 128 keys × 64 queries
    static constexpr int kOffL = kOffdS + kBlockN * kBlockM * 2;  // [2][kBlockM] fp32
    static constexpr int kOffD = kOffL + 2 * kBlockM * 4;         // [2][kBlockM] fp32
    static constexpr int kSmemBytes = kOffD + 2 * kBlockM * 4 + 1024;  // + slack to align to 1024
    static constexpr int kDqCols = D / 2;                              // dQ columns per warpgroup
    static_assert(kSeqPad % kBlockM == 0, "padded work buffers cover whole tiles");
};

template <typename T, typename Tr, bool Causal>
__global__ void __launch_bounds__(256, 1) flashBwdSm90Kernel(const FlashBwdParams p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int D = Tr::D, BM = Tr::kBlockM, BN = Tr::kBlockN, NT = Tr::kThreads,
                  DQ = Tr::kDqCols;
    constexpr int C = Tr::kCols, kDSteps = (C + 15) / 16;  // head dim; 16-column steps holding data
    constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const uint32_t raw = smemAddr(smem_raw);
    const uint32_t base = (raw + 1023) & ~1023u;  // swizzled tiles start 1024-byte aligned
    unsigned char* gbase = smem_raw + (base - raw);
    const uint32_t sK = base + Tr::kOffK, sV = base + Tr::kOffV, sQ = base + Tr::kOffQ,
                   sdO = base + Tr::kOffdO;
    const uint32_t sdS = base + Tr::kOffdS;
    float* sL = reinterpret_cast<float*>(gbase + Tr::kOffL);
    float* sD = reinterpret_cast<float*>(gbase + Tr::kOffD);

    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
    const auto blk = bwdBlock<T, Tr, Causal>(p);
    const int sq = blk.sq, sk = blk.sk;
    const int row_in = warp * 16 + (lane >> 2);  // first row of this thread in a 64-row tile
    const int wkey0 = blk.n0 + wg * 64;          // first key of this warpgroup
    const int key0 = wkey0 + row_in;             // this thread's keys: key0 and key0 + 8
    const int col_in = 2 * (lane & 3);

    float dv[D / 2], dk[D / 2];  // 64 keys × D per warpgroup, wgmma accumulator layout
#pragma unroll
    for (int i = 0; i < D / 2; ++i) dv[i] = dk[i] = 0.f;

    auto loadQTile = [&](int mt, int buf) {
        const int m0 = mt * BM;
        sm90::loadSwizzled<T, D, BM, NT, C>(sQ + buf * Tr::kQBytes, blk.q + m0 * p.q_row_stride,
                                            p.q_row_stride, sq - m0, tid);
        sm90::loadSwizzled<T, D, BM, NT, C>(sdO + buf * Tr::kQBytes,
                                            blk.dout + m0 * p.do_row_stride, p.do_row_stride,
                                            sq - m0, tid);
        blk.loadLD(sL, sD, buf, m0, tid);
    };

    if (blk.m_begin < blk.m_tiles) {
        sm90::loadSwizzled<T, D, BN, NT, C>(sK, blk.k + blk.n0 * p.k_row_stride, p.k_row_stride,
                                            sk - blk.n0, tid);
        sm90::loadSwizzled<T, D, BN, NT, C>(sV, blk.v + blk.n0 * p.v_row_stride, p.v_row_stride,
                                            sk - blk.n0, tid);
        loadQTile(blk.m_begin, 0);
        cpAsyncCommit();

        for (int mt = blk.m_begin; mt < blk.m_tiles; ++mt) {
            const int buf = (mt - blk.m_begin) & 1;
            const int m0 = mt * BM;
            cpAsyncWait<0>();
            sm90::fenceProxyAsync();
            __syncthreads();  // this tile is in; every thread is done with the previous one
            if (mt + 1 < blk.m_tiles) {
                loadQTile(mt + 1, buf ^ 1);
                cpAsyncCommit();
            }
            const uint32_t cQ = sQ + buf * Tr::kQBytes, cdO = sdO + buf * Tr::kQBytes;
            const float* cL = sL + buf * BM;
            const float* cD = sD + buf * BM;

            // Sᵀ = K Qᵀ, then dPᵀ = V dOᵀ: two groups in flight.
            float st[BM / 2], dpt[BM / 2];
            sm90::fence();
#pragma unroll
            for (int kk = 0; kk < kDSteps; ++kk) {
                const uint32_t off_kv = (kk / 4) * (BN * 128) + wg * 64 * 128 + (kk % 4) * 32;
                const uint32_t off_q = (kk / 4) * (BM * 128) + (kk % 4) * 32;
                wgmma::SS<BM, kBf16, 0, 0>::mma(st, sm90::desc(sK + off_kv, 16, 1024),
                                                sm90::desc(cQ + off_q, 16, 1024), kk > 0);
            }
            sm90::commit();
#pragma unroll
            for (int kk = 0; kk < kDSteps; ++kk) {
                const uint32_t off_kv = (kk / 4) * (BN * 128) + wg * 64 * 128 + (kk % 4) * 32;
                const uint32_t off_q = (kk / 4) * (BM * 128) + (kk % 4) * 32;
                wgmma::SS<BM, kBf16, 0, 0>::mma(dpt, sm90::desc(sV + off_kv, 16, 1024),
                                                sm90::desc(cdO + off_q, 16, 1024), kk > 0);
            }
            sm90::commit();
            sm90::wait<1>();  // Sᵀ is in
            sm90::fenceRegs(st);

            // Pᵀ = exp(S·scale − L) recomputed (accumulator element i: query column
            // (i / 4) * 8 + col_in + (i & 1), key row key0 + ((i >> 1) & 1) * 8).
#pragma unroll
            for (int i = 0; i < BM / 2; ++i)
                st[i] = exp2Fast(fmaf(st[i], p.scale_log2, -cL[(i / 4) * 8 + col_in + (i & 1)]));
            const bool need_mask = wkey0 + 64 > sk || (Causal && wkey0 + 63 > m0);
            if (need_mask) {
#pragma unroll
                for (int i = 0; i < BM / 2; ++i) {
                    const int qc = m0 + (i / 4) * 8 + col_in + (i & 1);
                    const int key = key0 + ((i >> 1) & 1) * 8;
                    if (key >= sk || (Causal && key > qc)) st[i] = 0.f;
                }
            }
            // Pᵀ as A fragments (queries are the K dimension of dV += Pᵀ dO).
            uint32_t pa[BM / 16][4];
            accToA<T>(st, pa);
            sm90::fence();
#pragma unroll
            for (int kq = 0; kq < BM / 16; ++kq)
                wgmma::RS<D, kBf16, 1>::mma(dv, pa[kq], sm90::desc(cdO + kq * 2048, BM * 128, 1024),
                                            1);
            sm90::commit();
            sm90::wait<1>();  // dPᵀ is in (dV may still run)
            sm90::fenceRegs(dpt);

            // dSᵀ = Pᵀ ∘ (dPᵀ − D); to shared memory for dQ (rows keys, 64 queries per row).
#pragma unroll
            for (int i = 0; i < BM / 2; ++i)
                dpt[i] = st[i] * (dpt[i] - cD[(i / 4) * 8 + col_in + (i & 1)]);
            uint32_t sa[BM / 16][4];
            accToA<T>(dpt, sa);
#pragma unroll
            for (int kq = 0; kq < BM / 16; ++kq) {
                const int row = wg * 64 + row_in;
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    const uint32_t addr = sdS + sm90::swizzledElem(BN, row + (r & 1) * 8,
                                                                   kq * 16 + (r >> 1) * 8 + col_in);
                    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(sa[kq][r])
                                 : "memory");
                }
            }
            sm90::fence();
#pragma unroll
            for (int kq = 0; kq < BM / 16; ++kq)
                wgmma::RS<D, kBf16, 1>::mma(dk, sa[kq], sm90::desc(cQ + kq * 2048, BM * 128, 1024),
                                            1);
            sm90::commit();
            sm90::fenceProxyAsync();
            sm90::namedBarrier(1, NT);  // dSᵀ of both warpgroups is in shared memory

            // dQ (64 queries × this warpgroup's DQ columns) = dS K over the block's 128 keys.
            float dq[DQ / 2];
            const uint32_t off_kcols = D == 128 ? wg * (BN * 128) : wg * (DQ * 2);
            sm90::fence();
#pragma unroll
            for (int kk = 0; kk < BN / 16; ++kk)
                wgmma::SS<DQ, kBf16, 1, 1>::mma(
                    dq, sm90::desc(sdS + kk * 2048, BN * 128, 1024),
                    sm90::desc(sK + off_kcols + kk * 2048, BN * 128, 1024), kk > 0);
            sm90::commit();
            sm90::wait<0>();
            sm90::fenceRegs(dq);
            sm90::fenceRegs(dv);
            sm90::fenceRegs(dk);
            sm90::fenceRegs(pa);
            sm90::fenceRegs(sa);
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                float* dst = blk.dqRow(m0 + row_in + r * 8) + wg * DQ + col_in;
#pragma unroll
                for (int n8 = 0; n8 < DQ / 8; ++n8)
                    if (C == D || wg * DQ + n8 * 8 < C)  // warpgroup-uniform
                        atomicAdd2(dst + n8 * 8, dq[n8 * 4 + 2 * r], dq[n8 * 4 + 2 * r + 1]);
            }
        }
    }

    // dK, dV for this warpgroup's keys; zeros for keys no query attends to.
    T* dkp = headBase<T>(p.dk, blk.bi, p.dk_batch_stride, p.dk_head_stride);
    T* dvp = headBase<T>(p.dv, blk.bi, p.dv_batch_stride, p.dv_head_stride);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int key = key0 + r * 8;
        if (key < sk) {
            T* dkrow = dkp + key * p.dk_row_stride + col_in;
            T* dvrow = dvp + key * p.dv_row_stride + col_in;
#pragma unroll
            for (int n8 = 0; n8 < C / 8; ++n8) {
                *reinterpret_cast<uint32_t*>(dkrow + n8 * 8) =
                    pack2<T>(dk[n8 * 4 + 2 * r] * p.scale, dk[n8 * 4 + 2 * r + 1] * p.scale);
                *reinterpret_cast<uint32_t*>(dvrow + n8 * 8) =
                    pack2<T>(dv[n8 * 4 + 2 * r], dv[n8 * 4 + 2 * r + 1]);
            }
        }
    }
#else
    (void)p;  // built for other architectures: never launched there (sm90Usable)
#endif
}

template <typename T>
void launchBwdSm90(const FlashBwdParams& p, cudaStream_t stream) {
    TS_BOOL_SWITCH(p.causal, C, [&] {
        if (p.head_dim == 128) {
            using Tr = BwdSm90Traits<128>;
            launchBwdMain<Tr>(flashBwdSm90Kernel<T, Tr, C>, p, sizeof(T), stream);
        } else if (p.head_dim == 64) {
            using Tr = BwdSm90Traits<64>;
            launchBwdMain<Tr>(flashBwdSm90Kernel<T, Tr, C>, p, sizeof(T), stream);
        } else if (p.head_dim == 80) {
            static_assert(kSm90InTileHeadDims[0] == 80 && std::size(kSm90InTileHeadDims) == 1,
                          "one kernel per in-tile dim");
            using Tr = sm90::InTile<BwdSm90Traits<128>, 80>;
            launchBwdMain<Tr>(flashBwdSm90Kernel<T, Tr, C>, p, sizeof(T), stream);
        } else {
            throw std::invalid_argument("the sm_90a backward takes head dims 64, 80 and 128");
        }
    });
}

}  // namespace ts::kernels
