// FlashAttention-2 forward on Hopper's warpgroup MMA (wgmma, sm_90a), head dims 64 and 128.
// Same algorithm and numerics as flash_fwd.cuh (online softmax in base 2, O rescaled only when
// a row max grew, L = m·scale + log l); only the tensor-core instructions and the
// shared-memory layout differ.
//
// A block owns 128 query rows; its two warpgroups own 64 each. K/V tiles (128 keys at d 128,
// 64 at d 64) stream through shared memory (cp.async; K double-, V triple-buffered so that O += P V
// of one tile can still run while the next tile's copies start):
//   S  = Q Kᵀ  (64 × tile per warpgroup; A = Q, B = K, both K-major from shared memory)
//   P  = exp2(S·scale·log2e − m), masked, online
//   O += P V   (A = P from registers, B = V, MN-major)
//
// Note [head dims inside the tile]: a head dim d below the tile's D (kSm90InTileHeadDims: 80,
// the 2.7B preset's, in the 128 tile; Tr = sm90::InTile<…, d>) runs from q, k, v and dO as they
// are, with no copies padded to D. The loads zero-fill the columns at and past d in shared
// memory; the products over the head dim (S = Q Kᵀ here, Sᵀ and dPᵀ in the backward) stop at d
// rounded up to 16; the products whose N is the head dim (P V, dV, dK, dQ) still run all D
// columns, whose extra ones are zeros or unused; and only d columns of O, dK, dV and dQ's work
// buffer (d wide) are written. The zero padding of ts::flashAttention, in the kernels, less
// its copies and a third of the Q Kᵀ work.
#pragma once

#include <iterator>

#include "flash.h"
#include "flash_common.cuh"
#include "flash_sm90.cuh"
#include "flash_wgmma_ops.cuh"

namespace ts::kernels {

template <int D_, int kBlockN_ = 128, int kMinBlocks_ = 1>
struct FwdSm90Traits {
    static constexpr int D = D_;
    static_assert(D == 64 || D == 128, "head dims 64 and 128");
    static constexpr int kCols = D;           // the head dim; less inside the tile (sm90::InTile)
    static constexpr int kThreads = 256;      // two warpgroups
    static constexpr int kBlockM = 128;       // query rows per block, 64 per warpgroup
    static constexpr int kBlockN = kBlockN_;  // keys per tile
    static constexpr int kMinBlocks = kMinBlocks_;
    static constexpr int kQBytes = kBlockM * D * 2;
    static constexpr int kKVBytes = kBlockN * D * 2;
    static constexpr int kOffQ = 0;
    static constexpr int kOffK = kQBytes;                           // [2] stages
    static constexpr int kOffV = kOffK + 2 * kKVBytes;              // [3] stages
    static constexpr int kSmemBytes = kOffV + 3 * kKVBytes + 1024;  // + slack to align to 1024
};

// Tile shapes per head dim (A/B on H100, docs/ATTENTION.md v5): d 128 takes K/V tiles of 128
// keys, one block per SM (193 KB); d 64 tiles of 64 keys, two blocks per SM (57 KB and at most
// 128 registers each): 8–13% faster at b 8 × 16 than 128-key tiles at one block per SM. d 128
// with 64-key tiles at two blocks per SM was 4–30% slower than its 128-key tiles.
template <int D>
struct FwdSm90For;
template <>
struct FwdSm90For<64> : FwdSm90Traits<64, 64, 2> {};
template <>
struct FwdSm90For<128> : FwdSm90Traits<128, 128, 1> {};

template <typename T, typename Tr, bool Causal>
__global__ void __launch_bounds__(256, Tr::kMinBlocks) flashFwdSm90Kernel(const FlashFwdParams p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int D = Tr::D, BM = Tr::kBlockM, BN = Tr::kBlockN, NT = Tr::kThreads, C = Tr::kCols;
    constexpr int kDSteps = (C + 15) / 16;  // 16-column steps of the head dim holding data
    constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const uint32_t raw = smemAddr(smem_raw);
    const uint32_t base = (raw + 1023) & ~1023u;
    const uint32_t sQ = base + Tr::kOffQ, sK = base + Tr::kOffK, sV = base + Tr::kOffV;

    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
    const BlockIndex bi = blockIndex(p, Causal);  // causal: the longest blocks first
    const int bh = bi.bh, m0 = bi.block * BM;
    const int sq = p.seqlen_q, sk = p.seqlen_k;
    const T* q = headBase<const T>(p.q, bi, p.q_batch_stride, p.q_head_stride);
    const T* k = headBase<const T>(p.k, bi, p.k_batch_stride, p.k_head_stride);
    const T* v = headBase<const T>(p.v, bi, p.v_batch_stride, p.v_head_stride);
    T* o = headBase<T>(p.o, bi, p.o_batch_stride, p.o_head_stride);

    const int n_tiles = (sk + BN - 1) / BN;
    // Causal: keys past the block's last row are masked for all of it.
    const int n_end = Causal ? min(n_tiles, (min(m0 + BM, sq) - 1) / BN + 1) : n_tiles;
    const int row0 = m0 + wg * 64 + warp * 16 + (lane >> 2);  // this thread's rows: row0, row0 + 8
    const int col_in = 2 * (lane & 3);

    sm90::loadSwizzled<T, D, BM, NT, C>(sQ, q + m0 * p.q_row_stride, p.q_row_stride, sq - m0, tid);
    if (n_end > 0) {
        sm90::loadSwizzled<T, D, BN, NT, C>(sK, k, p.k_row_stride, sk, tid);
        sm90::loadSwizzled<T, D, BN, NT, C>(sV, v, p.v_row_stride, sk, tid);
    }
    cpAsyncCommit();

    float acc[D / 2];  // O: 64 rows × D per warpgroup
#pragma unroll
    for (int i = 0; i < D / 2; ++i) acc[i] = 0.f;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
    uint32_t pa[BN / 16][4];

    for (int n = 0; n < n_end; ++n) {
        const uint32_t cK = sK + (n & 1) * Tr::kKVBytes, cV = sV + (n % 3) * Tr::kKVBytes;
        cpAsyncWait<0>();
        sm90::fenceProxyAsync();
        __syncthreads();  // tile n is in; every thread is done with S of tile n − 1 and P·V of n −
                          // 2
        if (n + 1 < n_end) {
            const int nn = (n + 1) * BN;
            sm90::loadSwizzled<T, D, BN, NT, C>(sK + ((n + 1) & 1) * Tr::kKVBytes,
                                                k + nn * p.k_row_stride, p.k_row_stride, sk - nn,
                                                tid);
            sm90::loadSwizzled<T, D, BN, NT, C>(sV + ((n + 1) % 3) * Tr::kKVBytes,
                                                v + nn * p.v_row_stride, p.v_row_stride, sk - nn,
                                                tid);
            cpAsyncCommit();
        }

        // S = Q Kᵀ (element i: key column (i / 4) * 8 + col_in + (i & 1), row row0 + ((i >> 1) & 1)
        // * 8)
        float s[BN / 2];
        sm90::fence();
#pragma unroll
        for (int kk = 0; kk < kDSteps; ++kk) {
            const uint32_t off_q = (kk / 4) * (BM * 128) + wg * 64 * 128 + (kk % 4) * 32;
            const uint32_t off_k = (kk / 4) * (BN * 128) + (kk % 4) * 32;
            wgmma::SS<BN, kBf16, 0, 0>::mma(s, sm90::desc(sQ + off_q, 16, 1024),
                                            sm90::desc(cK + off_k, 16, 1024), kk > 0);
        }
        sm90::commit();
        sm90::wait<0>();  // S, and the previous tile's P·V
        sm90::fenceRegs(s);
        sm90::fenceRegs(acc);
        sm90::fenceRegs(pa);

        const int n0 = n * BN;
        if (n0 + BN > sk || (Causal && n0 + BN - 1 > m0 + wg * 64)) {
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) {
                const int key = n0 + (i / 4) * 8 + col_in + (i & 1);
                const int row = row0 + ((i >> 1) & 1) * 8;
                if (key >= sk || (Causal && key > row)) s[i] = -INFINITY;
            }
        }

        // Online softmax, base 2, scale folded in; O rescaled only when a row max of the
        // warp's 16 rows grew.
        float corr[2];
        bool grew = false;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float mx = row_max[r];
#pragma unroll
            for (int nt = 0; nt < BN / 8; ++nt)
                mx = fmaxf(mx, fmaxf(s[nt * 4 + 2 * r], s[nt * 4 + 2 * r + 1]));
            mx = quadMax(mx);
            const float m_scaled = mx == -INFINITY ? 0.f : mx * p.scale_log2;
            const bool up = mx > row_max[r];
            corr[r] = up ? exp2Fast(row_max[r] * p.scale_log2 - m_scaled) : 1.f;
            grew |= up;
            row_max[r] = mx;
            float sum = 0.f;
#pragma unroll
            for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
                for (int e = 2 * r; e < 2 * r + 2; ++e) {
                    s[nt * 4 + e] = exp2Fast(fmaf(s[nt * 4 + e], p.scale_log2, -m_scaled));
                    sum += s[nt * 4 + e];
                }
            row_sum[r] = row_sum[r] * corr[r] + sum;  // per-thread partial; quad summed at the end
        }
        if (__any_sync(0xffffffff, grew)) {
#pragma unroll
            for (int i = 0; i < D / 2; ++i) acc[i] *= corr[(i >> 1) & 1];
        }
        accToA<T>(s, pa);
        // O += P V; left running into the next tile.
        sm90::fence();
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk)
            wgmma::RS<D, kBf16, 1>::mma(acc, pa[kk], sm90::desc(cV + kk * 2048, BN * 128, 1024), 1);
        sm90::commit();
    }
    sm90::wait<0>();
    sm90::fenceRegs(acc);
    sm90::fenceRegs(pa);

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const float l = quadSum(row_sum[r]);
        const float inv = l > 0.f ? 1.f / l : 0.f;
        const int row = row0 + r * 8;
        if (row < sq) {
            T* orow = o + row * p.o_row_stride + col_in;
#pragma unroll
            for (int nt = 0; nt < C / 8; ++nt)
                *reinterpret_cast<uint32_t*>(orow + nt * 8) =
                    pack2<T>(acc[nt * 4 + 2 * r] * inv, acc[nt * 4 + 2 * r + 1] * inv);
            if ((lane & 3) == 0)
                p.lse[static_cast<int64_t>(bh) * sq + row] =
                    l > 0.f ? row_max[r] * p.scale + logf(l) : INFINITY;
        }
    }
#else
    (void)p;  // built for other architectures: never launched there (sm90Usable)
#endif
}

template <typename T>
void launchFwdSm90(const FlashFwdParams& p, bool heads_fastest, cudaStream_t stream) {
    TS_BOOL_SWITCH(p.causal, C, [&] {
        auto go = [&](auto kernel, auto traits) {
            using Tr = decltype(traits);
            if constexpr (Tr::kMinBlocks >
                          1)  // two blocks need (nearly) all of the SM's shared memory
                TS_CUDA_CHECK(cudaFuncSetAttribute(kernel,
                                                   cudaFuncAttributePreferredSharedMemoryCarveout,
                                                   cudaSharedmemCarveoutMaxShared));
            launchFwdMain<Tr>(kernel, p, heads_fastest, stream);
        };
        using In80 = sm90::InTile<FwdSm90For<128>, 80>;
        static_assert(kSm90InTileHeadDims[0] == 80 && std::size(kSm90InTileHeadDims) == 1,
                      "one kernel per in-tile dim");
        if (p.head_dim == 128)
            go(flashFwdSm90Kernel<T, FwdSm90For<128>, C>, FwdSm90For<128>{});
        else if (p.head_dim == 64)
            go(flashFwdSm90Kernel<T, FwdSm90For<64>, C>, FwdSm90For<64>{});
        else if (p.head_dim == 80)
            go(flashFwdSm90Kernel<T, In80, C>, In80{});
        else
            throw std::invalid_argument("the sm_90a forward takes head dims 64, 80 and 128");
    });
}

}  // namespace ts::kernels
