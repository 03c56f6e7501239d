// fp32 attention without tensor cores: the same algorithm in fp32 FMAs, so that fp32 keeps
// fp32 accuracy (tf32 tensor cores would not). Four threads (a quad) share one row, each
// holding a quarter of the head dim as float4s interleaved across the quad (conflict-free
// shared-memory reads); at d 256 eight threads share a row, so that a thread holds what it
// holds at d 128, and streamed tiles are 16 rows (static shared memory stays under 48 KB).
// Backward: the shared preprocess, then a key-parallel dK/dV loop and a query-parallel dQ
// loop that writes dQ directly (no atomics, so no conversion launch).
#include <cstdlib>
#include <string>

#include "flash.h"
#include "flash_bwd.cuh"
#include "flash_common.cuh"

namespace ts::kernels {
namespace {

constexpr int kRows = 32;  // rows (queries or keys) per block, one lane group each
// Threads per row (kLanes), rows of the streamed tile (kTile) and threads per block, per head dim.
template <int D>
constexpr int kLanes = D <= 128 ? 4 : 8;
template <int D>
constexpr int kTile = D <= 128 ? 32 : 16;
template <int D>
constexpr int kThreads = kLanes<D>* kRows;
// A thread's float4s of a row: D / (4 · kLanes).
template <int D>
constexpr int kPer = D / (4 * kLanes<D>);

__device__ __forceinline__ float dot4(const float4& a, const float4& b) {
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
__device__ __forceinline__ void axpy4(float4& y, float a, const float4& x) {
    y.x = fmaf(a, x.x, y.x), y.y = fmaf(a, x.y, y.y), y.z = fmaf(a, x.z, y.z),
    y.w = fmaf(a, x.w, y.w);
}

// Loads kTile rows × D floats into s (float4 units); rows >= valid become zeros.
template <int D>
__device__ __forceinline__ void loadRows(float4 (*s)[D / 4], const float* g, int64_t stride,
                                         int valid) {
    constexpr int kRow4 = D / 4;
    for (int i = threadIdx.x; i < kTile<D> * kRow4; i += kThreads<D>) {
        const int r = i / kRow4, c = i % kRow4;
        s[r][c] = r < valid ? *reinterpret_cast<const float4*>(g + r * stride + c * 4)
                            : make_float4(0, 0, 0, 0);
    }
}

// This thread's float4s of a row: i · kLanes + lane, i < kPer.
template <int D>
__device__ __forceinline__ int col4(int i, int lane) {
    return i * kLanes<D> + lane;
}

template <int D>
__device__ __forceinline__ void loadRow(float4 (&x)[kPer<D>], const float* g, int lane, float mul) {
#pragma unroll
    for (int i = 0; i < kPer<D>; ++i) {
        float4 t = *reinterpret_cast<const float4*>(g + col4<D>(i, lane) * 4);
        x[i] = make_float4(t.x * mul, t.y * mul, t.z * mul, t.w * mul);
    }
}

// Sum over the kLanes threads of a row.
template <int D>
__device__ __forceinline__ float laneSum(float x) {
    x = quadSum(x);
    if constexpr (kLanes<D> == 8) x += __shfl_xor_sync(0xffffffff, x, 4);
    return x;
}

template <int D>
__device__ __forceinline__ float rowDot(const float4 (&x)[kPer<D>], const float4* srow, int lane) {
    float acc = 0.f;
#pragma unroll
    for (int i = 0; i < kPer<D>; ++i) acc += dot4(x[i], srow[col4<D>(i, lane)]);
    return laneSum<D>(acc);
}

template <int D, bool Causal>
__global__ void __launch_bounds__(kThreads<D>) fwdFp32Kernel(const FlashFwdParams p) {
    __shared__ float4 sK[kTile<D>][D / 4], sV[kTile<D>][D / 4];
    const int ql = threadIdx.x % kLanes<D>;
    const int m_block = Causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int m0 = m_block * kRows, row = m0 + threadIdx.x / kLanes<D>;
    const int sq = p.seqlen_q, sk = p.seqlen_k;
    const float* q = static_cast<const float*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride;
    const float* k = static_cast<const float*>(p.k) + b * p.k_batch_stride + h * p.k_head_stride;
    const float* v = static_cast<const float*>(p.v) + b * p.v_batch_stride + h * p.v_head_stride;

    float4 qv[kPer<D>], acc[kPer<D>];
    for (int i = 0; i < kPer<D>; ++i) {
        qv[i] = make_float4(0, 0, 0, 0);
        acc[i] = make_float4(0, 0, 0, 0);
    }
    if (row < sq) loadRow<D>(qv, q + row * p.q_row_stride, ql, p.scale_log2);  // scores in base 2
    float m = -INFINITY, l = 0.f;
    int n_end = (sk + kTile<D> - 1) / kTile<D>;
    if (Causal) n_end = min(n_end, (min(m0 + kRows, sq) - 1) / kTile<D> + 1);
    for (int n = 0; n < n_end; ++n) {
        const int n0 = n * kTile<D>;
        __syncthreads();
        loadRows<D>(sK, k + n0 * p.k_row_stride, p.k_row_stride, sk - n0);
        loadRows<D>(sV, v + n0 * p.v_row_stride, p.v_row_stride, sk - n0);
        __syncthreads();
        float s[kTile<D>];
        float mx = m;
#pragma unroll
        for (int j = 0; j < kTile<D>; ++j) {
            s[j] = rowDot<D>(qv, sK[j], ql);
            if (n0 + j >= sk || (Causal && n0 + j > row)) s[j] = -INFINITY;
            mx = fmaxf(mx, s[j]);
        }
        const float ms = mx == -INFINITY ? 0.f : mx;
        const float corr = exp2f(m - ms);
        m = mx;
        // Sum the tile on its own, then add: two-level summation keeps fp32 rounding error
        // near LibTorch's blocked kernels on long rows.
        float4 part[kPer<D>];
        float lpart = 0.f;
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i) part[i] = make_float4(0, 0, 0, 0);
#pragma unroll
        for (int j = 0; j < kTile<D>; ++j) {
            const float pj = exp2f(s[j] - ms);
            lpart += pj;
#pragma unroll
            for (int i = 0; i < kPer<D>; ++i) axpy4(part[i], pj, sV[j][col4<D>(i, ql)]);
        }
        l = fmaf(l, corr, lpart);
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i)
            acc[i] = make_float4(fmaf(acc[i].x, corr, part[i].x), fmaf(acc[i].y, corr, part[i].y),
                                 fmaf(acc[i].z, corr, part[i].z), fmaf(acc[i].w, corr, part[i].w));
    }
    if (row < sq) {
        const float inv = l > 0.f ? 1.f / l : 0.f;
        float* o = static_cast<float*>(p.o) + b * p.o_batch_stride + h * p.o_head_stride +
                   row * p.o_row_stride;
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i)
            *reinterpret_cast<float4*>(o + col4<D>(i, ql) * 4) =
                make_float4(acc[i].x * inv, acc[i].y * inv, acc[i].z * inv, acc[i].w * inv);
        if (ql == 0)
            p.lse[static_cast<int64_t>(bh) * sq + row] =
                l > 0.f ? m * 0.6931471805599453f + logf(l) : INFINITY;
    }
}

// Key-parallel: each quad owns one key and sums dK, dV over the query tiles.
template <int D, bool Causal>
__global__ void __launch_bounds__(kThreads<D>) bwdDkDvFp32Kernel(const FlashBwdParams p) {
    __shared__ float4 sQ[kTile<D>][D / 4], sdO[kTile<D>][D / 4];
    __shared__ float sL[kTile<D>], sD[kTile<D>];
    const int ql = threadIdx.x % kLanes<D>;
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int n0 = blockIdx.x * kRows, key = n0 + threadIdx.x / kLanes<D>;
    const int sq = p.seqlen_q, sk = p.seqlen_k, sqp = p.seqlen_q_padded;
    const float* q = static_cast<const float*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride;
    const float* dout =
        static_cast<const float*>(p.dout) + b * p.do_batch_stride + h * p.do_head_stride;
    const float* lse2 = p.lse_log2 + static_cast<int64_t>(bh) * sqp;
    const float* dsum = p.dsum + static_cast<int64_t>(bh) * sqp;

    float4 kv[kPer<D>], vv[kPer<D>], dk[kPer<D>], dv[kPer<D>];
    for (int i = 0; i < kPer<D>; ++i) kv[i] = vv[i] = dk[i] = dv[i] = make_float4(0, 0, 0, 0);
    if (key < sk) {
        loadRow<D>(kv,
                   static_cast<const float*>(p.k) + b * p.k_batch_stride + h * p.k_head_stride +
                       key * p.k_row_stride,
                   ql, p.scale_log2);
        loadRow<D>(vv,
                   static_cast<const float*>(p.v) + b * p.v_batch_stride + h * p.v_head_stride +
                       key * p.v_row_stride,
                   ql, 1.f);
    }
    const int m_tiles = (sq + kTile<D> - 1) / kTile<D>;
    for (int mt = Causal ? n0 / kTile<D> : 0; mt < m_tiles; ++mt) {
        const int m0 = mt * kTile<D>;
        __syncthreads();
        loadRows<D>(sQ, q + m0 * p.q_row_stride, p.q_row_stride, sq - m0);
        loadRows<D>(sdO, dout + m0 * p.do_row_stride, p.do_row_stride, sq - m0);
        if (threadIdx.x < kTile<D>)
            sL[threadIdx.x] = lse2[m0 + threadIdx.x];
        else if (threadIdx.x < 2 * kTile<D>)
            sD[threadIdx.x - kTile<D>] = dsum[m0 + threadIdx.x - kTile<D>];
        __syncthreads();
        float4 pk[kPer<D>], pv[kPer<D>];  // this tile's sums (two-level summation)
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i) pk[i] = pv[i] = make_float4(0, 0, 0, 0);
#pragma unroll 4
        for (int r = 0; r < kTile<D>; ++r) {
            float pr = exp2f(rowDot<D>(kv, sQ[r], ql) - sL[r]);
            if (key >= sk || (Causal && key > m0 + r)) pr = 0.f;
            const float dp = rowDot<D>(vv, sdO[r], ql);
            const float ds = pr * (dp - sD[r]);
#pragma unroll
            for (int i = 0; i < kPer<D>; ++i) {
                axpy4(pv[i], pr, sdO[r][col4<D>(i, ql)]);
                axpy4(pk[i], ds, sQ[r][col4<D>(i, ql)]);
            }
        }
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i) {
            axpy4(dv[i], 1.f, pv[i]);
            axpy4(dk[i], 1.f, pk[i]);
        }
    }
    if (key < sk) {
        float* dkr = static_cast<float*>(p.dk) + b * p.dk_batch_stride + h * p.dk_head_stride +
                     key * p.dk_row_stride;
        float* dvr = static_cast<float*>(p.dv) + b * p.dv_batch_stride + h * p.dv_head_stride +
                     key * p.dv_row_stride;
        const float s = p.scale;
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i) {
            *reinterpret_cast<float4*>(dkr + col4<D>(i, ql) * 4) =
                make_float4(dk[i].x * s, dk[i].y * s, dk[i].z * s, dk[i].w * s);
            *reinterpret_cast<float4*>(dvr + col4<D>(i, ql) * 4) = dv[i];
        }
    }
}

// Query-parallel: each quad owns one query row and sums dQ over the key tiles.
template <int D, bool Causal>
__global__ void __launch_bounds__(kThreads<D>) bwdDqFp32Kernel(const FlashBwdParams p) {
    __shared__ float4 sK[kTile<D>][D / 4], sV[kTile<D>][D / 4];
    const int ql = threadIdx.x % kLanes<D>;
    const int m_block = Causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int m0 = m_block * kRows, row = m0 + threadIdx.x / kLanes<D>;
    const int sq = p.seqlen_q, sk = p.seqlen_k;
    const float* k = static_cast<const float*>(p.k) + b * p.k_batch_stride + h * p.k_head_stride;
    const float* v = static_cast<const float*>(p.v) + b * p.v_batch_stride + h * p.v_head_stride;
    float4 qv[kPer<D>], dov[kPer<D>], dq[kPer<D>];
    for (int i = 0; i < kPer<D>; ++i) qv[i] = dov[i] = dq[i] = make_float4(0, 0, 0, 0);
    float lrow = INFINITY, drow = 0.f;  // rows past the end: P = 0
    if (row < sq) {
        loadRow<D>(qv,
                   static_cast<const float*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride +
                       row * p.q_row_stride,
                   ql, p.scale_log2);
        loadRow<D>(dov,
                   static_cast<const float*>(p.dout) + b * p.do_batch_stride +
                       h * p.do_head_stride + row * p.do_row_stride,
                   ql, 1.f);
        lrow = p.lse_log2[static_cast<int64_t>(bh) * p.seqlen_q_padded + row];
        drow = p.dsum[static_cast<int64_t>(bh) * p.seqlen_q_padded + row];
    }
    int n_end = (sk + kTile<D> - 1) / kTile<D>;
    if (Causal) n_end = min(n_end, (min(m0 + kRows, sq) - 1) / kTile<D> + 1);
    for (int n = 0; n < n_end; ++n) {
        const int n0 = n * kTile<D>;
        __syncthreads();
        loadRows<D>(sK, k + n0 * p.k_row_stride, p.k_row_stride, sk - n0);
        loadRows<D>(sV, v + n0 * p.v_row_stride, p.v_row_stride, sk - n0);
        __syncthreads();
        float4 part[kPer<D>];  // this tile's sum (two-level summation)
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i) part[i] = make_float4(0, 0, 0, 0);
#pragma unroll 4
        for (int j = 0; j < kTile<D>; ++j) {
            float pj = exp2f(rowDot<D>(qv, sK[j], ql) - lrow);
            if (n0 + j >= sk || (Causal && n0 + j > row)) pj = 0.f;
            const float ds = pj * (rowDot<D>(dov, sV[j], ql) - drow);
#pragma unroll
            for (int i = 0; i < kPer<D>; ++i) axpy4(part[i], ds, sK[j][col4<D>(i, ql)]);
        }
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i) axpy4(dq[i], 1.f, part[i]);
    }
    if (row < sq) {
        float* dqr = static_cast<float*>(p.dq) + b * p.dq_batch_stride + h * p.dq_head_stride +
                     row * p.dq_row_stride;
        const float s = p.scale;
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i)
            *reinterpret_cast<float4*>(dqr + col4<D>(i, ql) * 4) =
                make_float4(dq[i].x * s, dq[i].y * s, dq[i].z * s, dq[i].w * s);
    }
}

// Note [register-tiled fp32 attention]:
// The kernels above give each query (or key) row to a quad that splits the head dim: every
// product is a dot product finished with two shuffles, and every K/V element read from shared
// memory feeds one FMA per row. Short sequences (the course's context 256) leave those kernels
// short of warps and bound by shared-memory reads and shuffles. At head dim 64 these run each
// product as a small GEMM instead: a block holds 64 rows against 64-key (or 64-query) tiles,
// 256 threads as 16 row groups × 16 lanes; a thread computes a 4 × 4 register tile of the
// 64 × 64 score tile (rows tr + 16i, keys tc + 16j: adjacent lanes read adjacent rows, whose
// padded pitch puts them in different banks), 64 FMAs per 8 float4 reads over 4 head-dim
// columns; P (or dS) goes through shared memory, written and read by the same half-warp (its
// rows), and the products over keys give a thread 4 rows × 4 adjacent columns. Same numerics
// as above: fp32 FMAs, exp2 with the scale folded in, each tile's sums added to the running
// ones (two-level summation). TRAINSCOPE_FLASH_FP32_TILED=0 keeps the kernels above, for
// comparison.
namespace tiled {

constexpr int kB = 64;         // rows per block, and rows of every streamed tile
constexpr int kThreads = 256;  // 16 row groups × 16 lanes
constexpr int kP = kB + 4;     // pitch (floats) of the 64-column tiles: 16-byte rows, spread banks

template <int D>
struct Smem {
    static constexpr int kPD = D + 4;       // pitch of the D-column tiles
    static constexpr int kTile = kB * kPD;  // floats
};

// 64 rows × D floats into s (pitch D + 4), rows >= valid as zeros; float4 loads, coalesced.
template <int D>
__device__ __forceinline__ void loadTile(float* s, const float* g, int64_t stride, int valid) {
    constexpr int kRow4 = D / 4;
    for (int i = threadIdx.x; i < kB * kRow4; i += kThreads) {
        const int r = i / kRow4, c = (i % kRow4) * 4;
        const float4 v = r < valid ? *reinterpret_cast<const float4*>(g + r * stride + c)
                                   : make_float4(0, 0, 0, 0);
        *reinterpret_cast<float4*>(s + r * Smem<D>::kPD + c) = v;
    }
}

// acc[i][j] = Σ_d A[tr + 16i][d] · B[tc + 16j][d] over the D columns of two 64-row tiles.
template <int D>
__device__ __forceinline__ void scoreTile(float (&acc)[4][4], const float* sA, const float* sB,
                                          int tr, int tc) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
#pragma unroll 4
    for (int d = 0; d < D; d += 4) {
        float4 a[4], b[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
            a[i] = *reinterpret_cast<const float4*>(sA + (tr + 16 * i) * Smem<D>::kPD + d);
#pragma unroll
        for (int j = 0; j < 4; ++j)
            b[j] = *reinterpret_cast<const float4*>(sB + (tc + 16 * j) * Smem<D>::kPD + d);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] += dot4(a[i], b[j]);
    }
}

// part[i] += Σ_k W[tr + 16i][k] · M[k][4tc .. 4tc + 3] over 64 k: W a 64 × 64 tile (pitch kP),
// M a 64-row D-column tile; D = 64: the thread's 4 adjacent columns.
template <int D>
__device__ __forceinline__ void weightedRows(float4 (&part)[4], const float* sW, const float* sM,
                                             int tr, int tc) {
    static_assert(D == 64, "16 lanes × 4 columns");
#pragma unroll 2
    for (int k = 0; k < kB; k += 4) {
        float4 w[4], m[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
            w[i] = *reinterpret_cast<const float4*>(sW + (tr + 16 * i) * kP + k);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
            m[kk] = *reinterpret_cast<const float4*>(sM + (k + kk) * Smem<D>::kPD + 4 * tc);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            axpy4(part[i], w[i].x, m[0]);
            axpy4(part[i], w[i].y, m[1]);
            axpy4(part[i], w[i].z, m[2]);
            axpy4(part[i], w[i].w, m[3]);
        }
    }
}

// Max / sum over the 16 lanes of a row group (a half-warp).
__device__ __forceinline__ float rowMax16(float x) {
#pragma unroll
    for (int o = 1; o < 16; o *= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, o));
    return x;
}
__device__ __forceinline__ float rowSum16(float x) {
#pragma unroll
    for (int o = 1; o < 16; o *= 2) x += __shfl_xor_sync(0xffffffff, x, o);
    return x;
}

__device__ __forceinline__ float4 scaled(const float4& v, float s) {
    return make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
}

template <int D, bool Causal>
__global__ void __launch_bounds__(kThreads) fwdKernel(const FlashFwdParams p) {
    extern __shared__ float4 smem4[];
    float* sQ = reinterpret_cast<float*>(smem4);
    float* sK = sQ + Smem<D>::kTile;
    float* sV = sK + Smem<D>::kTile;
    float* sP = sV + Smem<D>::kTile;  // 64 × kP
    const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
    const int m_block = Causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;  // longest first
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int m0 = m_block * kB, sq = p.seqlen_q, sk = p.seqlen_k;
    const float* q = static_cast<const float*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride;
    const float* k = static_cast<const float*>(p.k) + b * p.k_batch_stride + h * p.k_head_stride;
    const float* v = static_cast<const float*>(p.v) + b * p.v_batch_stride + h * p.v_head_stride;
    loadTile<D>(sQ, q + m0 * p.q_row_stride, p.q_row_stride, sq - m0);

    float4 o[4];
    float m[4], l[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) o[i] = make_float4(0, 0, 0, 0), m[i] = -INFINITY, l[i] = 0.f;
    int n_end = (sk + kB - 1) / kB;
    if (Causal) n_end = min(n_end, (min(m0 + kB, sq) - 1) / kB + 1);
    for (int n = 0; n < n_end; ++n) {
        const int n0 = n * kB;
        __syncthreads();  // everyone is done with the previous K, V and P
        loadTile<D>(sK, k + n0 * p.k_row_stride, p.k_row_stride, sk - n0);
        loadTile<D>(sV, v + n0 * p.v_row_stride, p.v_row_stride, sk - n0);
        __syncthreads();
        float s[4][4];
        scoreTile<D>(s, sQ, sK, tr, tc);
        float corr[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int row = m0 + tr + 16 * i;
            float mx = m[i];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int key = n0 + tc + 16 * j;
                s[i][j] *= p.scale_log2;  // base 2
                if (key >= sk || (Causal && key > row)) s[i][j] = -INFINITY;
                mx = fmaxf(mx, s[i][j]);
            }
            mx = rowMax16(mx);
            const float ms = mx == -INFINITY ? 0.f : mx;
            corr[i] = exp2f(m[i] - ms);
            m[i] = mx;
            float lpart = 0.f;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float pj = exp2f(s[i][j] - ms);
                lpart += pj;
                sP[(tr + 16 * i) * kP + tc + 16 * j] = pj;
            }
            l[i] = fmaf(l[i], corr[i],
                        lpart);  // per lane; the row group's lanes are summed at the end
        }
        __syncwarp();  // a row of P is written and read by its half-warp
        float4 part[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) part[i] = make_float4(0, 0, 0, 0);
        weightedRows<D>(part, sP, sV, tr, tc);
#pragma unroll
        for (int i = 0; i < 4; ++i)
            o[i] = make_float4(fmaf(o[i].x, corr[i], part[i].x), fmaf(o[i].y, corr[i], part[i].y),
                               fmaf(o[i].z, corr[i], part[i].z), fmaf(o[i].w, corr[i], part[i].w));
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int row = m0 + tr + 16 * i;
        const float lsum = rowSum16(l[i]);
        if (row < sq) {
            const float inv = lsum > 0.f ? 1.f / lsum : 0.f;
            float* orow = static_cast<float*>(p.o) + b * p.o_batch_stride + h * p.o_head_stride +
                          row * p.o_row_stride;
            *reinterpret_cast<float4*>(orow + 4 * tc) = scaled(o[i], inv);
            if (tc == 0)
                p.lse[static_cast<int64_t>(bh) * sq + row] =
                    lsum > 0.f ? m[i] * 0.6931471805599453f + logf(lsum) : INFINITY;
        }
    }
}

// Key-parallel dK, dV: a block owns 64 keys and loops over the query tiles.
template <int D, bool Causal>
__global__ void __launch_bounds__(kThreads, 2) bwdDkDvKernel(const FlashBwdParams p) {
    extern __shared__ float4 smem4[];
    float* sK = reinterpret_cast<float*>(smem4);
    float* sV = sK + Smem<D>::kTile;
    float* sQ = sV + Smem<D>::kTile;
    float* sdO = sQ + Smem<D>::kTile;
    float* sP = sdO + Smem<D>::kTile;  // Pᵀ: 64 keys × kP queries
    float* sdS = sP + kB * kP;         // dSᵀ
    float* sL = sdS + kB * kP;         // [kB]
    float* sD = sL + kB;               // [kB]
    const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int n0 = blockIdx.x * kB, sq = p.seqlen_q, sk = p.seqlen_k, sqp = p.seqlen_q_padded;
    const float* q = static_cast<const float*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride;
    const float* dout =
        static_cast<const float*>(p.dout) + b * p.do_batch_stride + h * p.do_head_stride;
    const float* lse2 = p.lse_log2 + static_cast<int64_t>(bh) * sqp;
    const float* dsum = p.dsum + static_cast<int64_t>(bh) * sqp;
    loadTile<D>(sK,
                static_cast<const float*>(p.k) + b * p.k_batch_stride + h * p.k_head_stride +
                    n0 * p.k_row_stride,
                p.k_row_stride, sk - n0);
    loadTile<D>(sV,
                static_cast<const float*>(p.v) + b * p.v_batch_stride + h * p.v_head_stride +
                    n0 * p.v_row_stride,
                p.v_row_stride, sk - n0);

    float4 dk[4], dv[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) dk[i] = dv[i] = make_float4(0, 0, 0, 0);
    const int m_tiles = (sq + kB - 1) / kB;
    for (int mt = Causal ? n0 / kB : 0; mt < m_tiles; ++mt) {
        const int m0 = mt * kB;
        __syncthreads();  // everyone is done with the previous Q, dO, Pᵀ, dSᵀ
        loadTile<D>(sQ, q + m0 * p.q_row_stride, p.q_row_stride, sq - m0);
        loadTile<D>(sdO, dout + m0 * p.do_row_stride, p.do_row_stride, sq - m0);
        if (threadIdx.x < kB)
            sL[threadIdx.x] = lse2[m0 + threadIdx.x];  // padded buffers: no bounds check
        else if (threadIdx.x < 2 * kB)
            sD[threadIdx.x - kB] = dsum[m0 + threadIdx.x - kB];
        __syncthreads();
        // Sᵀ, then dPᵀ (keys tr + 16i, queries tc + 16j): one at a time in registers, Pᵀ kept in
        // shared memory between them (each thread reads back what it wrote), so that two blocks
        // fit an SM (128 registers).
        float t[4][4];
        scoreTile<D>(t, sK, sQ, tr, tc);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int key = n0 + tr + 16 * i;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int qc = tc + 16 * j;
                float pr = exp2f(
                    fmaf(t[i][j], p.scale_log2, -sL[qc]));  // queries past the end: L = +inf, P = 0
                if (key >= sk || (Causal && key > m0 + qc)) pr = 0.f;
                sP[(tr + 16 * i) * kP + qc] = pr;
            }
        }
        scoreTile<D>(t, sV, sdO, tr, tc);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int qc = tc + 16 * j;
                sdS[(tr + 16 * i) * kP + qc] = sP[(tr + 16 * i) * kP + qc] * (t[i][j] - sD[qc]);
            }
        __syncwarp();         // rows of Pᵀ, dSᵀ: written and read by their half-warp
        float4 pv[4], pk[4];  // this tile's sums (two-level summation)
#pragma unroll
        for (int i = 0; i < 4; ++i) pv[i] = pk[i] = make_float4(0, 0, 0, 0);
        weightedRows<D>(pv, sP, sdO, tr, tc);  // dV += Pᵀ dO
        weightedRows<D>(pk, sdS, sQ, tr, tc);  // dK += dSᵀ Q
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            axpy4(dv[i], 1.f, pv[i]);
            axpy4(dk[i], 1.f, pk[i]);
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int key = n0 + tr + 16 * i;
        if (key < sk) {
            float* dkr = static_cast<float*>(p.dk) + b * p.dk_batch_stride + h * p.dk_head_stride +
                         key * p.dk_row_stride;
            float* dvr = static_cast<float*>(p.dv) + b * p.dv_batch_stride + h * p.dv_head_stride +
                         key * p.dv_row_stride;
            *reinterpret_cast<float4*>(dkr + 4 * tc) = scaled(dk[i], p.scale);
            *reinterpret_cast<float4*>(dvr + 4 * tc) = dv[i];
        }
    }
}

// Query-parallel dQ: a block owns 64 queries and loops over the key tiles.
template <int D, bool Causal>
__global__ void __launch_bounds__(kThreads) bwdDqKernel(const FlashBwdParams p) {
    extern __shared__ float4 smem4[];
    float* sQ = reinterpret_cast<float*>(smem4);
    float* sdO = sQ + Smem<D>::kTile;
    float* sK = sdO + Smem<D>::kTile;
    float* sV = sK + Smem<D>::kTile;
    float* sdS = sV + Smem<D>::kTile;  // 64 queries × kP keys
    const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
    const int m_block = Causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;  // longest first
    const int bh = blockIdx.y, b = bh / p.heads, h = bh % p.heads;
    const int m0 = m_block * kB, sq = p.seqlen_q, sk = p.seqlen_k, sqp = p.seqlen_q_padded;
    const float* k = static_cast<const float*>(p.k) + b * p.k_batch_stride + h * p.k_head_stride;
    const float* v = static_cast<const float*>(p.v) + b * p.v_batch_stride + h * p.v_head_stride;
    loadTile<D>(sQ,
                static_cast<const float*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride +
                    m0 * p.q_row_stride,
                p.q_row_stride, sq - m0);
    loadTile<D>(sdO,
                static_cast<const float*>(p.dout) + b * p.do_batch_stride + h * p.do_head_stride +
                    m0 * p.do_row_stride,
                p.do_row_stride, sq - m0);
    float lrow[4], drow[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // padded buffers: +inf and 0 past the end
        lrow[i] = p.lse_log2[static_cast<int64_t>(bh) * sqp + m0 + tr + 16 * i];
        drow[i] = p.dsum[static_cast<int64_t>(bh) * sqp + m0 + tr + 16 * i];
    }
    float4 dq[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) dq[i] = make_float4(0, 0, 0, 0);
    int n_end = (sk + kB - 1) / kB;
    if (Causal) n_end = min(n_end, (min(m0 + kB, sq) - 1) / kB + 1);
    for (int n = 0; n < n_end; ++n) {
        const int n0 = n * kB;
        __syncthreads();  // everyone is done with the previous K, V, dS
        loadTile<D>(sK, k + n0 * p.k_row_stride, p.k_row_stride, sk - n0);
        loadTile<D>(sV, v + n0 * p.v_row_stride, p.v_row_stride, sk - n0);
        __syncthreads();
        float s[4][4], dp[4][4];  // queries tr + 16i, keys tc + 16j
        scoreTile<D>(s, sQ, sK, tr, tc);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int row = m0 + tr + 16 * i;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int key = n0 + tc + 16 * j;
                s[i][j] = exp2f(fmaf(s[i][j], p.scale_log2, -lrow[i]));  // P
                if (key >= sk || (Causal && key > row)) s[i][j] = 0.f;
            }
        }
        scoreTile<D>(dp, sdO, sV, tr, tc);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                sdS[(tr + 16 * i) * kP + tc + 16 * j] = s[i][j] * (dp[i][j] - drow[i]);
        __syncwarp();
        float4 part[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) part[i] = make_float4(0, 0, 0, 0);
        weightedRows<D>(part, sdS, sK, tr, tc);  // dQ += dS K
#pragma unroll
        for (int i = 0; i < 4; ++i) axpy4(dq[i], 1.f, part[i]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int row = m0 + tr + 16 * i;
        if (row < sq) {
            float* dqr = static_cast<float*>(p.dq) + b * p.dq_batch_stride + h * p.dq_head_stride +
                         row * p.dq_row_stride;
            *reinterpret_cast<float4*>(dqr + 4 * tc) = scaled(dq[i], p.scale);
        }
    }
}

constexpr int kFwdSmem = (3 * Smem<64>::kTile + kB * kP) * 4;
constexpr int kDkDvSmem = (4 * Smem<64>::kTile + 2 * kB * kP + 2 * kB) * 4;
constexpr int kDqSmem = (4 * Smem<64>::kTile + kB * kP) * 4;
static_assert(kDkDvSmem <= kSm80MaxSmemBytes, "runs on sm_80");

bool off() {
    const char* env = std::getenv("TRAINSCOPE_FLASH_FP32_TILED");
    return env && std::string(env) == "0";
}

}  // namespace tiled

template <int D, bool Causal>
void runFwdFp32(const FlashFwdParams& p, cudaStream_t stream) {
    if constexpr (D == 64) {
        if (!tiled::off()) {
            auto kernel = tiled::fwdKernel<D, Causal>;
            setSmem(kernel, tiled::kFwdSmem);
            const dim3 grid((p.seqlen_q + tiled::kB - 1) / tiled::kB, p.batch * p.heads);
            kernel<<<grid, tiled::kThreads, tiled::kFwdSmem, stream>>>(p);
            TS_CUDA_CHECK_LAUNCH();
            return;
        }
    }
    const dim3 grid((p.seqlen_q + kRows - 1) / kRows, p.batch * p.heads);
    fwdFp32Kernel<D, Causal><<<grid, kThreads<D>, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
}

template <int D, bool Causal>
void runBwdFp32(const FlashBwdParams& p, cudaStream_t stream) {
    runBwdPreprocess<float, D>(p, stream);
    if constexpr (D == 64) {
        if (!tiled::off()) {
            static_assert(kSeqPad % tiled::kB == 0, "L and D read without bounds checks");
            auto dkdv = tiled::bwdDkDvKernel<D, Causal>;
            auto dq = tiled::bwdDqKernel<D, Causal>;
            setSmem(dkdv, tiled::kDkDvSmem);
            setSmem(dq, tiled::kDqSmem);
            const dim3 kgrid((p.seqlen_k + tiled::kB - 1) / tiled::kB, p.batch * p.heads);
            dkdv<<<kgrid, tiled::kThreads, tiled::kDkDvSmem, stream>>>(p);
            TS_CUDA_CHECK_LAUNCH();
            const dim3 qgrid((p.seqlen_q + tiled::kB - 1) / tiled::kB, p.batch * p.heads);
            dq<<<qgrid, tiled::kThreads, tiled::kDqSmem, stream>>>(p);
            TS_CUDA_CHECK_LAUNCH();
            return;
        }
    }
    const dim3 kgrid((p.seqlen_k + kRows - 1) / kRows, p.batch * p.heads);
    bwdDkDvFp32Kernel<D, Causal><<<kgrid, kThreads<D>, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
    const dim3 qgrid((p.seqlen_q + kRows - 1) / kRows, p.batch * p.heads);
    bwdDqFp32Kernel<D, Causal><<<qgrid, kThreads<D>, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launchFwdFp32(const FlashFwdParams& p, cudaStream_t stream) {
    TS_HEADDIM_SWITCH(p.head_dim, D,
                      [&] { TS_BOOL_SWITCH(p.causal, C, [&] { runFwdFp32<D, C>(p, stream); }); });
}

void launchBwdFp32(const FlashBwdParams& p, cudaStream_t stream) {
    TS_HEADDIM_SWITCH(p.head_dim, D,
                      [&] { TS_BOOL_SWITCH(p.causal, C, [&] { runBwdFp32<D, C>(p, stream); }); });
}

}  // namespace ts::kernels
