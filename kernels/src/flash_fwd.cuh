// FlashAttention-2 forward on tensor cores (bf16 / fp16 in, fp32 accumulate), mma.sync
// m16n8k16. One block owns kBlockM query rows, each warp 16 of them (Q fragments in registers)
// or 32 (Q re-read from shared memory); key/value tiles of kBlockN rows stream through shared
// memory (cp.async, two buffers) while the warp keeps the running row max m, row sum l and the
// output O. The launch picks the layout and the block order from the grid's size.
#pragma once

#include "flash.h"
#include "flash_common.cuh"

namespace ts::kernels {

template <int D_, int kNWarps_, int kMTiles_, int kBlockN_, int kMinBlocks_>
struct FwdTraits {
    static constexpr int D = D_;
    static constexpr int kNWarps = kNWarps_;
    static constexpr int kThreads = 32 * kNWarps;
    // Each warp owns kMTiles × 16 query rows: with 2, every K/V fragment read from shared
    // memory feeds two MMAs, halving shared-memory traffic per FLOP (it bounds version 1).
    static constexpr int kMTiles = kMTiles_;
    static constexpr int kBlockM = 16 * kMTiles * kNWarps;
    static constexpr int kBlockN = kBlockN_;
    static constexpr int kMinBlocks = kMinBlocks_;
    // With one m-tile, Q's fragments stay in registers; with two they would not fit, nor at
    // d 256 (64 registers next to a 128-register O).
    static constexpr bool kQInRegs = kMTiles == 1 && D <= 128;
    // Rows padded by 16 bytes: the 8 row addresses of an ldmatrix land in 8 distinct bank groups.
    static constexpr int kPitch = D + 8;
    static constexpr int kSmemBytes = (kBlockM + 4 * kBlockN) * kPitch * 2;  // Q, K[2], V[2]
    static_assert(D % 16 == 0, "k16 steps over the head dim");
    static_assert(kSmemBytes <= kSm80MaxSmemBytes, "runs on sm_80");
};

// Tile shapes per head dim (tuned on H100, sm_90; the same shapes fit sm_80's 164 KB).
// FwdTraitsFor: large grids, where throughput counts: two m-tiles per warp (shared-memory
// reads per MMA: 0.31 for d 128 with 64-key tiles, as FlashAttention-2's 128 × 64 tile).
// FwdTraitsSmall: grids of at most kSmallGridBlocksPerSm blocks per SM, where the longest
// causal block's latency counts: 16 rows per warp halve each warp's serial work (notes:
// docs/ATTENTION.md, v1 and v3).
template <int D>
struct FwdTraitsFor;
template <>
struct FwdTraitsFor<16> : FwdTraits<16, 4, 1, 128, 3> {};
template <>
struct FwdTraitsFor<32> : FwdTraits<32, 4, 1, 128, 3> {};
template <>
struct FwdTraitsFor<64> : FwdTraits<64, 4, 2, 128, 2> {};
template <>
struct FwdTraitsFor<96> : FwdTraits<96, 4, 2, 64, 2> {};  // d 128's shape, not tuned
template <>
struct FwdTraitsFor<128> : FwdTraits<128, 4, 2, 64, 2> {};
// d 256 (correctness first, not tuned): one m-tile, Q re-read from shared memory (kQInRegs),
// O alone is 128 registers per thread; 32-key tiles keep Q + K[2] + V[2] at 99 KB.
template <>
struct FwdTraitsFor<256> : FwdTraits<256, 4, 1, 32, 1> {};
// d 16 and 32 have one layout (one m-tile already); d 96 and 256 only the one above.
template <int D>
struct FwdTraitsSmall;
template <>
struct FwdTraitsSmall<64> : FwdTraits<64, 8, 1, 64, 1> {};
template <>
struct FwdTraitsSmall<128> : FwdTraits<128, 8, 1, 64, 1> {};

// Copies a tile of kRows rows × D (16-bit) into shared memory; rows >= valid are zero-filled.
// Thread t copies the 16-byte chunk (t % kChunks) of rows t / kChunks + i·kRowStep: one
// global pointer and one shared offset per thread, the per-chunk offsets are a running
// pointer and immediates (per-chunk addresses computed up front stayed live across the
// main loop and spilled).
// Where a row's chunks do not divide the threads (d 96: 12 of 128), the last threads idle.
template <typename T, int D, int kRows, int kThreads, int kPitch>
__device__ __forceinline__ void loadTile(T* smem, const T* gmem, int64_t row_stride, int valid,
                                         int tid) {
    constexpr int kChunks = D / 8;  // 16-byte pieces per row
    constexpr int kRowStep = kThreads / kChunks;
    static_assert(kRowStep > 0, "a row per pass");
    if (kThreads % kChunks != 0 && tid >= kRowStep * kChunks) return;
    constexpr int kIters = (kRows + kRowStep - 1) / kRowStep;
    const int r0 = tid / kChunks, col = (tid % kChunks) * 8;
    const T* src = gmem + r0 * row_stride + col;
    T* dst = smem + r0 * kPitch + col;
    const int left = valid - r0;  // rows of this thread's column still valid
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
        if (kRows % kRowStep == 0 || r0 + i * kRowStep < kRows) {
            const bool ok = i * kRowStep < left;
            cpAsync16(dst + i * kRowStep * kPitch, ok ? src : gmem, ok);
        }
        src += kRowStep * row_stride;
    }
}

template <typename T, typename Tr, bool Causal>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks)
    flashFwdKernel(const FlashFwdParams p) {
    constexpr int D = Tr::D, BM = Tr::kBlockM, BN = Tr::kBlockN, P = Tr::kPitch, NT = Tr::kThreads;
    constexpr int MT = Tr::kMTiles;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* sQ = reinterpret_cast<T*>(smem_raw);
    T* sK = sQ + BM * P;      // [2][BN][P]
    T* sV = sK + 2 * BN * P;  // [2][BN][P]

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    // Causal blocks with more rows have more key tiles: start those first.
    const BlockIndex bi = blockIndex(p, Causal);
    const int bh = bi.bh, m0 = bi.block * BM;
    const int sq = p.seqlen_q, sk = p.seqlen_k;
    const T* q = headBase<const T>(p.q, bi, p.q_batch_stride, p.q_head_stride);
    const T* k = headBase<const T>(p.k, bi, p.k_batch_stride, p.k_head_stride);
    const T* v = headBase<const T>(p.v, bi, p.v_batch_stride, p.v_head_stride);
    T* o = headBase<T>(p.o, bi, p.o_batch_stride, p.o_head_stride);

    int n_end = (sk + BN - 1) / BN;
    if (Causal)
        n_end = min(n_end, (min(m0 + BM, sq) - 1) / BN + 1);  // tiles past the diagonal skipped

    loadTile<T, D, BM, NT, P>(sQ, q + m0 * p.q_row_stride, p.q_row_stride, sq - m0, tid);
    loadTile<T, D, BN, NT, P>(sK, k, p.k_row_stride, sk, tid);
    loadTile<T, D, BN, NT, P>(sV, v, p.v_row_stride, sk, tid);
    cpAsyncCommit();
    cpAsyncWait<0>();
    __syncthreads();

    const int wrow = warp * 16 * MT;  // first row of this warp within the block
    uint32_t qf[Tr::kQInRegs ? D / 16 : 1][4];
    if constexpr (Tr::kQInRegs) {
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
            ldmatrixX4(qf[kk], sQ + (wrow + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
    }

    float acc[MT][D / 8][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int i = 0; i < D / 8; ++i)
            acc[mt][i][0] = acc[mt][i][1] = acc[mt][i][2] = acc[mt][i][3] = 0.f;
    float row_max[MT][2], row_sum[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
        row_max[mt][0] = row_max[mt][1] = -INFINITY, row_sum[mt][0] = row_sum[mt][1] = 0.f;
    const int row0 = m0 + wrow + (lane >> 2);  // this thread's rows: row0 + 16·mt + {0, 8}
    const int col_in = 2 * (lane & 3);

    for (int n = 0; n < n_end; ++n) {
        const int buf = n & 1;
        if (n + 1 < n_end) {
            const int nn = (n + 1) * BN;
            loadTile<T, D, BN, NT, P>(sK + (buf ^ 1) * BN * P, k + nn * p.k_row_stride,
                                      p.k_row_stride, sk - nn, tid);
            loadTile<T, D, BN, NT, P>(sV + (buf ^ 1) * BN * P, v + nn * p.v_row_stride,
                                      p.v_row_stride, sk - nn, tid);
        }
        cpAsyncCommit();
        cpAsyncWait<1>();
        __syncthreads();
        const T* cK = sK + buf * BN * P;
        const T* cV = sV + buf * BN * P;

        // S = Q Kᵀ (16·MT rows × BN keys per warp)
        float s[MT][BN / 8][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int i = 0; i < BN / 8; ++i)
                s[mt][i][0] = s[mt][i][1] = s[mt][i][2] = s[mt][i][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            uint32_t qa[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                if constexpr (Tr::kQInRegs) {
#pragma unroll
                    for (int i = 0; i < 4; ++i) qa[mt][i] = qf[kk][i];
                } else {
                    ldmatrixX4(qa[mt],
                               sQ + (wrow + mt * 16 + (lane & 15)) * P + kk * 16 + (lane >> 4) * 8);
                }
            }
#pragma unroll
            for (int np = 0; np < BN / 16; ++np) {
                uint32_t bf[4];
                ldmatrixX4(bf, cK + (np * 16 + (lane & 7) + (lane >> 4) * 8) * P + kk * 16 +
                                   ((lane >> 3) & 1) * 8);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma16816<T>(s[mt][2 * np], qa[mt], bf[0], bf[1]);
                    mma16816<T>(s[mt][2 * np + 1], qa[mt], bf[2], bf[3]);
                }
            }
        }

        const int n0 = n * BN;
        if (n0 + BN > sk || (Causal && n0 + BN - 1 > m0)) {
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int key = n0 + nt * 8 + col_in + (e & 1);
                        const int row = row0 + mt * 16 + (e >> 1) * 8;
                        if (key >= sk || (Causal && key > row)) s[mt][nt][e] = -INFINITY;
                    }
        }

        // Online softmax, in base 2 with the scale folded in. O is rescaled only when a row
        // max of the warp's 16-row tile grew: along a long row the max settles, and most tiles
        // then skip the D/4 multiplies per row (exact: the factor would be 1).
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            float corr[2];
            bool grew = false;
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                float mx = row_max[mt][r];
#pragma unroll
                for (int nt = 0; nt < BN / 8; ++nt)
                    mx = fmaxf(mx, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
                mx = quadMax(mx);
                const float m_scaled = mx == -INFINITY ? 0.f : mx * p.scale_log2;
                const bool up = mx > row_max[mt][r];
                corr[r] = up ? exp2Fast(row_max[mt][r] * p.scale_log2 - m_scaled) : 1.f;
                grew |= up;
                row_max[mt][r] = mx;
                float sum = 0.f;
#pragma unroll
                for (int nt = 0; nt < BN / 8; ++nt) {
#pragma unroll
                    for (int e = 2 * r; e < 2 * r + 2; ++e) {
                        s[mt][nt][e] = exp2Fast(fmaf(s[mt][nt][e], p.scale_log2, -m_scaled));
                        sum += s[mt][nt][e];
                    }
                }
                row_sum[mt][r] =
                    row_sum[mt][r] * corr[r] + sum;  // per-thread partial; quad summed at the end
            }
            if (__any_sync(0xffffffff, grew)) {
#pragma unroll
                for (int dt = 0; dt < D / 8; ++dt) {
                    acc[mt][dt][0] *= corr[0];
                    acc[mt][dt][1] *= corr[0];
                    acc[mt][dt][2] *= corr[1];
                    acc[mt][dt][3] *= corr[1];
                }
            }
        }

        // O += P V: P's accumulator layout is already the A operand layout.
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
            uint32_t a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                a[mt][0] = pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
                a[mt][1] = pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
                a[mt][2] = pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
                a[mt][3] = pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
            }
#pragma unroll
            for (int dp = 0; dp < D / 16; ++dp) {
                uint32_t bf[4];
                ldmatrixX4T(bf, cV + (kk * 16 + (lane & 15)) * P + dp * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma16816<T>(acc[mt][2 * dp], a[mt], bf[0], bf[1]);
                    mma16816<T>(acc[mt][2 * dp + 1], a[mt], bf[2], bf[3]);
                }
            }
        }
        __syncthreads();  // this buffer is refilled next iteration
    }

#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float l = quadSum(row_sum[mt][r]);
            const float inv = l > 0.f ? 1.f / l : 0.f;
            const int row = row0 + mt * 16 + r * 8;
            if (row < sq) {
                T* orow = o + row * p.o_row_stride + col_in;
#pragma unroll
                for (int dt = 0; dt < D / 8; ++dt)
                    *reinterpret_cast<uint32_t*>(orow + dt * 8) =
                        pack2<T>(acc[mt][dt][2 * r] * inv, acc[mt][dt][2 * r + 1] * inv);
                if ((lane & 3) == 0)
                    p.lse[static_cast<int64_t>(bh) * sq + row] =
                        l > 0.f ? row_max[mt][r] * p.scale + logf(l) : INFINITY;
            }
        }
}

template <typename T, typename Tr, bool Causal>
void launchFlashFwd(const FlashFwdParams& p, bool heads_fastest, cudaStream_t stream) {
    launchFwdMain<Tr>(flashFwdKernel<T, Tr, Causal>, p, heads_fastest, stream);
}

template <typename T, int D, bool Causal>
void runFlashFwd(const FlashFwdParams& p, cudaStream_t stream) {
    const DeviceSize ds = deviceSize();
    const int64_t blocks =
        int64_t{(p.seqlen_q + FwdTraitsFor<D>::kBlockM - 1) / FwdTraitsFor<D>::kBlockM} * p.batch *
        p.heads;
    const int64_t kv_bytes =
        int64_t{p.batch} * p.heads * p.seqlen_k * D * 2 * static_cast<int64_t>(sizeof(T));
    const bool heads_fastest = headsFastest(ds, Causal, blocks, kv_bytes);
    if constexpr (D == 64 || D == 128) {
        if (sm90Usable()) {  // Hopper: the wgmma kernel (flash_fwd_sm90.cuh), also 128 rows per
                             // block
            if constexpr (std::is_same_v<T, __nv_bfloat16>)
                launchFwdSm90Bf16(p, heads_fastest, stream);
            else
                launchFwdSm90Fp16(p, heads_fastest, stream);
            return;
        }
        static_assert(FwdTraitsFor<D>::kBlockM == FwdTraitsSmall<D>::kBlockM,
                      "one grid size for both layouts");
        if (latencyGrid(ds, blocks))
            return launchFlashFwd<T, FwdTraitsSmall<D>, Causal>(p, heads_fastest, stream);
    }
    launchFlashFwd<T, FwdTraitsFor<D>, Causal>(p, heads_fastest, stream);
}

template <typename T, int D>
void runFlashFwdHeadDim(const FlashFwdParams& p, cudaStream_t stream) {
    TS_BOOL_SWITCH(p.causal, C, [&] { runFlashFwd<T, D, C>(p, stream); });
}
// Head dims 96 and 256 are compiled in files of their own (flash_fwd_hdim*.cu), in parallel
// with the per-dtype files that hold 16 to 128.
#define TS_FLASH_FWD_EXTERN(T, D) \
    extern template void runFlashFwdHeadDim<T, D>(const FlashFwdParams&, cudaStream_t);
TS_FLASH_FWD_EXTERN(__nv_bfloat16, 96)
TS_FLASH_FWD_EXTERN(__half, 96)
TS_FLASH_FWD_EXTERN(__nv_bfloat16, 256)
TS_FLASH_FWD_EXTERN(__half, 256)
#undef TS_FLASH_FWD_EXTERN

// A head dim that Hopper's kernels run inside their 128 tile (kSm90InTileHeadDims; the adapter
// lets it through only where sm90Usable()).
template <typename T>
void runFlashFwdInTile(const FlashFwdParams& p, cudaStream_t stream) {
    if (!sm90Usable())
        throw std::invalid_argument("head_dim " + std::to_string(p.head_dim) +
                                    " needs the sm_90a kernels");
    constexpr int kBlockM = 128;  // the wgmma forward's rows per block
    const int64_t blocks = int64_t{(p.seqlen_q + kBlockM - 1) / kBlockM} * p.batch * p.heads;
    const int64_t kv_bytes =
        int64_t{p.batch} * p.heads * p.seqlen_k * p.head_dim * 2 * static_cast<int64_t>(sizeof(T));
    const bool heads_fastest = headsFastest(deviceSize(), p.causal, blocks, kv_bytes);
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        launchFwdSm90Bf16(p, heads_fastest, stream);
    else
        launchFwdSm90Fp16(p, heads_fastest, stream);
}

template <typename T>
void dispatchFlashFwd(const FlashFwdParams& p, cudaStream_t stream) {
    if (sm90InTile(p.head_dim)) return runFlashFwdInTile<T>(p, stream);
    TS_HEADDIM_SWITCH(p.head_dim, D, [&] { runFlashFwdHeadDim<T, D>(p, stream); });
}

}  // namespace ts::kernels
