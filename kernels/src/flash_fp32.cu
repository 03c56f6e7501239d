// fp32 attention without tensor cores: the same algorithm in fp32 FMAs, so that fp32 keeps
// fp32 accuracy (tf32 tensor cores would not). Four threads (a quad) share one row, each
// holding a quarter of the head dim as float4s interleaved across the quad (conflict-free
// shared-memory reads); at d 256 eight threads share a row, so that a thread holds what it
// holds at d 128, and streamed tiles are 16 rows (static shared memory stays under 48 KB).
// Backward: the shared preprocess, then a key-parallel dK/dV loop and a query-parallel dQ
// loop that writes dQ directly (no atomics, so no conversion launch).
#include "flash.h"
#include "flash_bwd.cuh"
#include "flash_common.cuh"

namespace ts::kernels {
namespace {

constexpr int kRows = 32;  // rows (queries or keys) per block, one lane group each
// Threads per row (kLanes), rows of the streamed tile (kTile) and threads per block, per head dim.
template <int D> constexpr int kLanes = D <= 128 ? 4 : 8;
template <int D> constexpr int kTile = D <= 128 ? 32 : 16;
template <int D> constexpr int kThreads = kLanes<D> * kRows;
// A thread's float4s of a row: D / (4 · kLanes).
template <int D> constexpr int kPer = D / (4 * kLanes<D>);

__device__ __forceinline__ float dot4(const float4& a, const float4& b) {
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
__device__ __forceinline__ void axpy4(float4& y, float a, const float4& x) {
    y.x = fmaf(a, x.x, y.x), y.y = fmaf(a, x.y, y.y), y.z = fmaf(a, x.z, y.z), y.w = fmaf(a, x.w, y.w);
}

// Loads kTile rows × D floats into s (float4 units); rows >= valid become zeros.
template <int D>
__device__ __forceinline__ void loadRows(float4 (*s)[D / 4], const float* g, int64_t stride, int valid) {
    constexpr int kRow4 = D / 4;
    for (int i = threadIdx.x; i < kTile<D> * kRow4; i += kThreads<D>) {
        const int r = i / kRow4, c = i % kRow4;
        s[r][c] = r < valid ? *reinterpret_cast<const float4*>(g + r * stride + c * 4) : make_float4(0, 0, 0, 0);
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
        float* o = static_cast<float*>(p.o) + b * p.o_batch_stride + h * p.o_head_stride + row * p.o_row_stride;
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i)
            *reinterpret_cast<float4*>(o + col4<D>(i, ql) * 4) =
                make_float4(acc[i].x * inv, acc[i].y * inv, acc[i].z * inv, acc[i].w * inv);
        if (ql == 0)
            p.lse[static_cast<int64_t>(bh) * sq + row] = l > 0.f ? m * 0.6931471805599453f + logf(l) : INFINITY;
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
    const float* dout = static_cast<const float*>(p.dout) + b * p.do_batch_stride + h * p.do_head_stride;
    const float* lse2 = p.lse_log2 + static_cast<int64_t>(bh) * sqp;
    const float* dsum = p.dsum + static_cast<int64_t>(bh) * sqp;

    float4 kv[kPer<D>], vv[kPer<D>], dk[kPer<D>], dv[kPer<D>];
    for (int i = 0; i < kPer<D>; ++i) kv[i] = vv[i] = dk[i] = dv[i] = make_float4(0, 0, 0, 0);
    if (key < sk) {
        loadRow<D>(kv, static_cast<const float*>(p.k) + b * p.k_batch_stride + h * p.k_head_stride + key * p.k_row_stride, ql, p.scale_log2);
        loadRow<D>(vv, static_cast<const float*>(p.v) + b * p.v_batch_stride + h * p.v_head_stride + key * p.v_row_stride, ql, 1.f);
    }
    const int m_tiles = (sq + kTile<D> - 1) / kTile<D>;
    for (int mt = Causal ? n0 / kTile<D> : 0; mt < m_tiles; ++mt) {
        const int m0 = mt * kTile<D>;
        __syncthreads();
        loadRows<D>(sQ, q + m0 * p.q_row_stride, p.q_row_stride, sq - m0);
        loadRows<D>(sdO, dout + m0 * p.do_row_stride, p.do_row_stride, sq - m0);
        if (threadIdx.x < kTile<D>) sL[threadIdx.x] = lse2[m0 + threadIdx.x];
        else if (threadIdx.x < 2 * kTile<D>) sD[threadIdx.x - kTile<D>] = dsum[m0 + threadIdx.x - kTile<D>];
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
        float* dkr = static_cast<float*>(p.dk) + b * p.dk_batch_stride + h * p.dk_head_stride + key * p.dk_row_stride;
        float* dvr = static_cast<float*>(p.dv) + b * p.dv_batch_stride + h * p.dv_head_stride + key * p.dv_row_stride;
        const float s = p.scale;
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i) {
            *reinterpret_cast<float4*>(dkr + col4<D>(i, ql) * 4) = make_float4(dk[i].x * s, dk[i].y * s, dk[i].z * s, dk[i].w * s);
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
        loadRow<D>(qv, static_cast<const float*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride + row * p.q_row_stride, ql, p.scale_log2);
        loadRow<D>(dov, static_cast<const float*>(p.dout) + b * p.do_batch_stride + h * p.do_head_stride + row * p.do_row_stride, ql, 1.f);
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
        float* dqr = static_cast<float*>(p.dq) + b * p.dq_batch_stride + h * p.dq_head_stride + row * p.dq_row_stride;
        const float s = p.scale;
#pragma unroll
        for (int i = 0; i < kPer<D>; ++i)
            *reinterpret_cast<float4*>(dqr + col4<D>(i, ql) * 4) = make_float4(dq[i].x * s, dq[i].y * s, dq[i].z * s, dq[i].w * s);
    }
}

template <int D, bool Causal>
void runFwdFp32(const FlashFwdParams& p, cudaStream_t stream) {
    const dim3 grid((p.seqlen_q + kRows - 1) / kRows, p.batch * p.heads);
    fwdFp32Kernel<D, Causal><<<grid, kThreads<D>, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
}

template <int D, bool Causal>
void runBwdFp32(const FlashBwdParams& p, cudaStream_t stream) {
    runBwdPreprocess<float, D>(p, stream);
    const dim3 kgrid((p.seqlen_k + kRows - 1) / kRows, p.batch * p.heads);
    bwdDkDvFp32Kernel<D, Causal><<<kgrid, kThreads<D>, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
    const dim3 qgrid((p.seqlen_q + kRows - 1) / kRows, p.batch * p.heads);
    bwdDqFp32Kernel<D, Causal><<<qgrid, kThreads<D>, 0, stream>>>(p);
    TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launchFwdFp32(const FlashFwdParams& p, cudaStream_t stream) {
    TS_HEADDIM_SWITCH(p.head_dim, D, [&] {
        TS_BOOL_SWITCH(p.causal, C, [&] { runFwdFp32<D, C>(p, stream); });
    });
}

void launchBwdFp32(const FlashBwdParams& p, cudaStream_t stream) {
    TS_HEADDIM_SWITCH(p.head_dim, D, [&] {
        TS_BOOL_SWITCH(p.causal, C, [&] { runBwdFp32<D, C>(p, stream); });
    });
}

}  // namespace ts::kernels
