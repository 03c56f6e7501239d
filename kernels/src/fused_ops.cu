// The fused element-wise kernels of the compiled mode (see Note [fused element-wise kernels] in
// fused.h). Memory-bound: one block per row for the reductions, a grid-stride loop elsewhere.
// See Note [vectorised fused kernels]: where the rows and pointers allow, each thread moves 16
// bytes (8 bytes of a 16-bit type in the norms) a load; the scalar kernels stay for the rest.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fused.h"

namespace ts::kernels {

namespace {

[[noreturn]] void cudaFail(cudaError_t err, const char* what) {
    throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorString(err) + " (" + what +
                             ")");
}
void checkLaunch(const char* what) {
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) cudaFail(err, what);
}

__device__ __forceinline__ float toF(float v) { return v; }
__device__ __forceinline__ float toF(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float toF(__half v) { return __half2float(v); }
template <typename T>
__device__ __forceinline__ T fromF(float v);
template <>
__device__ __forceinline__ float fromF<float>(float v) {
    return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromF<__nv_bfloat16>(float v) {
    return __float2bfloat16(v);
}
template <>
__device__ __forceinline__ __half fromF<__half>(float v) {
    return __float2half(v);
}

// Calls f(T{}) with the storage type for `s`.
template <typename F>
void withType(Storage s, F&& f) {
    switch (s) {
        case Storage::F32:
            f(float{});
            break;
        case Storage::BF16:
            f(__nv_bfloat16{});
            break;
        case Storage::F16:
            f(__half{});
            break;
    }
}

// Note [vectorised fused kernels]:
// At the leaderboard's shapes (32,768 tokens a rank, d_model 4096, d_ff 11,008, vocabulary
// 151,936) the one-element-a-thread kernels ran at a third to a half of the memory's bandwidth
// (a step's RMSNorm backward 1.7 ms a call where its bytes take 0.5; SwiGLU 1.3 ms where 0.5;
// RoPE 0.9 where 0.25): a 2- or 4-byte load per thread and a 64-bit division per element, and
// the norm's backward on two blocks an SM. The vectorised kernels compute the same numbers (the
// same fp32 arithmetic per element, rounded once) with:
//  - 16-byte loads and stores (8 values of a 16-bit type, 4 of fp32) in RoPE, SwiGLU and the
//    cross-entropy, and four values a load in the norms (fp32 x with a 16-bit residual or
//    gradient); the index arithmetic once per vector;
//  - the norms' row in registers between their two passes (up to kNormCache groups of four a
//    thread: a row of 4,096 at 256 threads), re-read from L1/L2 beyond that;
//  - the norm's backward on up to eight blocks an SM (more partial weight-gradient rows for
//    the adapter's sum: 8·SMs × cols fp32, a few MB);
//  - the cross-entropy's forward in one pass over the row (an online max and sum of exps, as
//    flash attention's softmax) instead of two.
// A kernel falls back to its scalar form when a row's length is not a multiple of the vector or
// a pointer is not 16-byte aligned (views at odd offsets); tst_fused_gpu checks both forms
// against the CPU reference.
constexpr int kRowThreads = 256;  // one block per row for the row reductions
constexpr int kNormCache = 4;     // the norms' groups of four kept in registers per thread

// Four consecutive values in one 16-byte (fp32) or 8-byte (16-bit) access, through the caches.
template <typename T>
__device__ __forceinline__ void ld4(const T* ptr, float (&v)[4]) {
    if constexpr (sizeof(T) == 4) {
        const float4 f = *reinterpret_cast<const float4*>(ptr);
        v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
    } else {
        const uint2 u = *reinterpret_cast<const uint2*>(ptr);
        const T* h = reinterpret_cast<const T*>(&u);
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = toF(h[k]);
    }
}
template <typename T>
__device__ __forceinline__ void st4(T* ptr, const float (&v)[4]) {
    if constexpr (sizeof(T) == 4) {
        *reinterpret_cast<float4*>(ptr) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
        uint2 u;
        T* h = reinterpret_cast<T*>(&u);
#pragma unroll
        for (int k = 0; k < 4; ++k) h[k] = fromF<T>(v[k]);
        *reinterpret_cast<uint2*>(ptr) = u;
    }
}

// 16 bytes: kVec<T> consecutive values.
template <typename T>
constexpr int kVec = 16 / static_cast<int>(sizeof(T));
template <typename T>
__device__ __forceinline__ void ld16(const T* ptr, float (&v)[kVec<T>]) {
    const uint4 u = *reinterpret_cast<const uint4*>(ptr);
    const T* h = reinterpret_cast<const T*>(&u);
#pragma unroll
    for (int k = 0; k < kVec<T>; ++k) v[k] = toF(h[k]);
}
template <typename T>
__device__ __forceinline__ void st16(T* ptr, const float (&v)[kVec<T>]) {
    uint4 u;
    T* h = reinterpret_cast<T*>(&u);
#pragma unroll
    for (int k = 0; k < kVec<T>; ++k) h[k] = fromF<T>(v[k]);
    *reinterpret_cast<uint4*>(ptr) = u;
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Sum over the block (kRowThreads threads); every thread gets the total.
__device__ __forceinline__ float blockSum(float v, float* scratch) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // scratch may still be read from the previous call
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float t = 0.f;
#pragma unroll
    for (int w = 0; w < kRowThreads / 32; ++w) t += scratch[w];
    return t;
}

__device__ __forceinline__ float blockMax(float v, float* scratch) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float t = -INFINITY;
#pragma unroll
    for (int w = 0; w < kRowThreads / 32; ++w) t = fmaxf(t, scratch[w]);
    return t;
}

// ---- RMSNorm -------------------------------------------------------------------------------

template <typename R, typename O, bool kResidual>
__global__ void __launch_bounds__(kRowThreads) rmsNormFwdKernel(const RmsNormFwdParams p) {
    __shared__ float scratch[kRowThreads / 32];
    const int64_t row = blockIdx.x;
    const int n = p.cols;
    const float* x = p.x + row * n;
    float* sum = kResidual ? p.sum + row * n : nullptr;
    float ss = 0.f;
    for (int c = threadIdx.x; c < n; c += kRowThreads) {
        float v = x[c];
        if constexpr (kResidual) {
            v += toF(static_cast<const R*>(p.residual)[row * n + c]);
            sum[c] = v;
        }
        ss += v * v;
    }
    const float rstd = rsqrtf(blockSum(ss, scratch) / n + p.eps);
    if (threadIdx.x == 0) p.rstd[row] = rstd;
    O* out = static_cast<O*>(p.out) + row * n;
    for (int c = threadIdx.x; c < n; c += kRowThreads) {
        const float v = kResidual ? sum[c] : x[c];  // this thread's own write above
        out[c] = fromF<O>(v * rstd * p.weight[c]);
    }
}

// Blocks stride over the rows; each thread owns the columns c ≡ threadIdx.x (mod kRowThreads)
// and sums their weight gradient in shared memory, written once per block at the end.
template <typename O, typename R, bool kResidual>
__global__ void __launch_bounds__(kRowThreads) rmsNormBwdKernel(const RmsNormBwdParams p) {
    extern __shared__ float dw[];  // [cols]
    __shared__ float scratch[kRowThreads / 32];
    const int n = p.cols;
    for (int c = threadIdx.x; c < n; c += kRowThreads) dw[c] = 0.f;
    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
        const float* x = p.x + row * n;
        const O* g = static_cast<const O*>(p.grad_out) + row * n;
        const float rstd = p.rstd[row];
        float dot = 0.f;
        for (int c = threadIdx.x; c < n; c += kRowThreads) {
            const float xh = x[c] * rstd, gv = toF(g[c]);
            dot += gv * p.weight[c] * xh;
            dw[c] += gv * xh;
        }
        const float mean = blockSum(dot, scratch) / n;
        float* dx = p.dx + row * n;
        for (int c = threadIdx.x; c < n; c += kRowThreads) {
            const float xh = x[c] * rstd;
            float d = rstd * (toF(g[c]) * p.weight[c] - xh * mean);
            if (p.grad_sum) d += p.grad_sum[row * n + c];
            dx[c] = d;
            if constexpr (kResidual) static_cast<R*>(p.dresidual)[row * n + c] = fromF<R>(d);
        }
    }
    for (int c = threadIdx.x; c < n; c += kRowThreads)
        p.dweight_partial[int64_t{blockIdx.x} * n + c] = dw[c];
}

// The vectorised forms (See Note [vectorised fused kernels]): cols % 4 == 0, 16-aligned pointers.
// Thread t owns the groups of four columns g = t + j·kRowThreads; those with j < kNormCache stay
// in registers between the passes (an unrolled loop, so that they are registers), the rest are
// read again.
template <typename R, bool kResidual>
__device__ __forceinline__ void normInput(const RmsNormFwdParams& p, int64_t row, int g,
                                          float (&v)[4], float& ss) {
    const int64_t at = row * p.cols + 4 * g;
    ld4(p.x + at, v);
    if constexpr (kResidual) {
        float r[4];
        ld4(static_cast<const R*>(p.residual) + at, r);
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] += r[k];
        st4(p.sum + at, v);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) ss += v[k] * v[k];
}

template <typename O>
__device__ __forceinline__ void normOutput(const RmsNormFwdParams& p, int64_t row, int g,
                                           float (&v)[4], float rstd) {
    float w[4];
    ld4(p.weight + 4 * g, w);
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = v[k] * rstd * w[k];
    st4(static_cast<O*>(p.out) + row * p.cols + 4 * g, v);
}

template <typename R, typename O, bool kResidual>
__global__ void __launch_bounds__(kRowThreads) rmsNormFwdVecKernel(const RmsNormFwdParams p) {
    __shared__ float scratch[kRowThreads / 32];
    const int64_t row = blockIdx.x;
    const int groups = p.cols / 4;
    const int tail = threadIdx.x + kNormCache * kRowThreads;
    float keep[kNormCache][4];
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < kNormCache; ++j)
        if (const int g = threadIdx.x + j * kRowThreads; g < groups)
            normInput<R, kResidual>(p, row, g, keep[j], ss);
    for (int g = tail; g < groups; g += kRowThreads) {
        float v[4];
        normInput<R, kResidual>(p, row, g, v, ss);
    }
    const float rstd = rsqrtf(blockSum(ss, scratch) / p.cols + p.eps);
    if (threadIdx.x == 0) p.rstd[row] = rstd;
#pragma unroll
    for (int j = 0; j < kNormCache; ++j)
        if (const int g = threadIdx.x + j * kRowThreads; g < groups)
            normOutput<O>(p, row, g, keep[j], rstd);
    for (int g = tail; g < groups; g += kRowThreads) {
        float v[4];
        ld4((kResidual ? p.sum : p.x) + row * p.cols + 4 * g, v);  // this thread's own write
        normOutput<O>(p, row, g, v, rstd);
    }
}

// The backward's first pass over a group: Σ g·w·x̂ into dot, g·x̂ into the block's dw.
template <typename O>
__device__ __forceinline__ void normBwdFirst(const RmsNormBwdParams& p, int64_t row, int g,
                                             float rstd, float (&xv)[4], float (&gv)[4], float& dot,
                                             float* dw) {
    const int64_t at = row * p.cols + 4 * g;
    float w[4];
    ld4(p.x + at, xv);
    ld4(static_cast<const O*>(p.grad_out) + at, gv);
    ld4(p.weight + 4 * g, w);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const float xh = xv[k] * rstd;
        dot += gv[k] * w[k] * xh;
        dw[4 * g + k] += gv[k] * xh;
    }
}

template <typename R, bool kResidual>
__device__ __forceinline__ void normBwdSecond(const RmsNormBwdParams& p, int64_t row, int g,
                                              float rstd, float mean, const float (&xv)[4],
                                              const float (&gv)[4]) {
    const int64_t at = row * p.cols + 4 * g;
    float w[4], d[4];
    ld4(p.weight + 4 * g, w);
#pragma unroll
    for (int k = 0; k < 4; ++k) d[k] = rstd * (gv[k] * w[k] - xv[k] * rstd * mean);
    if (p.grad_sum) {
        float gs[4];
        ld4(p.grad_sum + at, gs);
#pragma unroll
        for (int k = 0; k < 4; ++k) d[k] += gs[k];
    }
    st4(p.dx + at, d);
    if constexpr (kResidual) st4(static_cast<R*>(p.dresidual) + at, d);
}

template <typename O, typename R, bool kResidual>
__global__ void __launch_bounds__(kRowThreads) rmsNormBwdVecKernel(const RmsNormBwdParams p) {
    extern __shared__ float dw[];  // [cols]: this block's weight gradient, each group its thread's
    __shared__ float scratch[kRowThreads / 32];
    const int groups = p.cols / 4;
    const int tail = threadIdx.x + kNormCache * kRowThreads;
    for (int g = threadIdx.x; g < groups; g += kRowThreads)
#pragma unroll
        for (int k = 0; k < 4; ++k) dw[4 * g + k] = 0.f;
    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
        const float rstd = p.rstd[row];
        float keep_x[kNormCache][4], keep_g[kNormCache][4];
        float dot = 0.f;
#pragma unroll
        for (int j = 0; j < kNormCache; ++j)
            if (const int g = threadIdx.x + j * kRowThreads; g < groups)
                normBwdFirst<O>(p, row, g, rstd, keep_x[j], keep_g[j], dot, dw);
        for (int g = tail; g < groups; g += kRowThreads) {
            float xv[4], gv[4];
            normBwdFirst<O>(p, row, g, rstd, xv, gv, dot, dw);
        }
        const float mean = blockSum(dot, scratch) / p.cols;
#pragma unroll
        for (int j = 0; j < kNormCache; ++j)
            if (const int g = threadIdx.x + j * kRowThreads; g < groups)
                normBwdSecond<R, kResidual>(p, row, g, rstd, mean, keep_x[j], keep_g[j]);
        for (int g = tail; g < groups; g += kRowThreads) {
            const int64_t at = row * p.cols + 4 * g;
            float xv[4], gv[4];
            ld4(p.x + at, xv);
            ld4(static_cast<const O*>(p.grad_out) + at, gv);
            normBwdSecond<R, kResidual>(p, row, g, rstd, mean, xv, gv);
        }
    }
    for (int g = threadIdx.x; g < groups; g += kRowThreads)
#pragma unroll
        for (int k = 0; k < 4; ++k)
            p.dweight_partial[int64_t{blockIdx.x} * p.cols + 4 * g + k] = dw[4 * g + k];
}

int smCount() {
    int dev = 0, sms = 0;
    if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) cudaFail(e, "cudaGetDevice");
    if (const cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        e != cudaSuccess)
        cudaFail(e, "cudaDeviceGetAttribute");
    return sms;
}

// ---- RoPE ----------------------------------------------------------------------------------

// One thread per (token, head, pair) of q and k; in the inverse pass also copies v.
template <typename T>
__global__ void ropeKernel(const RopeParams p) {
    const int half = p.head_dim / 2;
    const int64_t per_token = int64_t{2} * p.heads * half;  // q and k pairs of one token
    const int64_t total = p.batch * p.seq * per_token;
    const int64_t row_len = int64_t{3} * p.heads * p.head_dim;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t token = i / per_token;
        const int rest = static_cast<int>(i % per_token);  // (which of q/k, head, pair)
        const int k = rest % half;
        const int64_t pos = token % p.seq;
        const int64_t at = token * row_len + int64_t{rest / half} * p.head_dim + 2 * k;
        const T* s = static_cast<const T*>(p.src) + at;
        T* d = static_cast<T*>(p.dst) + at;
        const float x0 = toF(s[0]), x1 = toF(s[1]);
        const float c = p.cos[pos * half + k];
        const float sn = p.inverse ? -p.sin[pos * half + k] : p.sin[pos * half + k];
        d[0] = fromF<T>(x0 * c - x1 * sn);
        d[1] = fromF<T>(x0 * sn + x1 * c);
    }
    if (!p.inverse) return;
    const int64_t v_len = int64_t{p.heads} * p.head_dim, v_total = p.batch * p.seq * v_len;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < v_total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t at = (i / v_len) * row_len + 2 * v_len + i % v_len;
        static_cast<T*>(p.dst)[at] = static_cast<const T*>(p.src)[at];
    }
}

// Vectorised (See Note [vectorised fused kernels]): one thread per kVec<T> values of a head of q or
// k (head_dim % kVec == 0, 16-aligned buffers), their kVec/2 pairs' cos and sin read as one
// float4 (bf16, fp16) or float2 (fp32).
template <typename T>
__global__ void ropeVecKernel(const RopeParams p) {
    constexpr int V = kVec<T>, P = V / 2;
    const int half = p.head_dim / 2;
    const int64_t row_len = int64_t{3} * p.heads * p.head_dim;
    const int64_t qk_vecs = int64_t{2} * p.heads * p.head_dim / V;  // of one token
    const int64_t total = p.batch * p.seq * qk_vecs;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t token = i / qk_vecs;
        const int e = static_cast<int>(i - token * qk_vecs) * V;  // in the token's [q | k]
        const int64_t pos = token % p.seq;
        const int k0 = (e % p.head_dim) / 2;
        const int64_t at = token * row_len + e;
        float x[V], c[P], sn[P];
        ld16(static_cast<const T*>(p.src) + at, x);
        const float* cs = p.cos + pos * half + k0;
        const float* ss = p.sin + pos * half + k0;
        if constexpr (P == 4) {
            const float4 a = *reinterpret_cast<const float4*>(cs);
            const float4 b = *reinterpret_cast<const float4*>(ss);
            c[0] = a.x, c[1] = a.y, c[2] = a.z, c[3] = a.w;
            sn[0] = b.x, sn[1] = b.y, sn[2] = b.z, sn[3] = b.w;
        } else {
            const float2 a = *reinterpret_cast<const float2*>(cs);
            const float2 b = *reinterpret_cast<const float2*>(ss);
            c[0] = a.x, c[1] = a.y;
            sn[0] = b.x, sn[1] = b.y;
        }
        float y[V];
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const float s_k = p.inverse ? -sn[k] : sn[k];
            y[2 * k] = x[2 * k] * c[k] - x[2 * k + 1] * s_k;
            y[2 * k + 1] = x[2 * k] * s_k + x[2 * k + 1] * c[k];
        }
        st16(static_cast<T*>(p.dst) + at, y);
    }
    if (!p.inverse) return;
    const int64_t v_vecs = int64_t{p.heads} * p.head_dim / V, v_total = p.batch * p.seq * v_vecs;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < v_total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t token = i / v_vecs;
        const int64_t at =
            token * row_len + int64_t{2} * p.heads * p.head_dim + (i - token * v_vecs) * V;
        *reinterpret_cast<uint4*>(static_cast<T*>(p.dst) + at) =
            *reinterpret_cast<const uint4*>(static_cast<const T*>(p.src) + at);
    }
}

// ---- SwiGLU --------------------------------------------------------------------------------

__device__ __forceinline__ float sigmoid(float g) { return 1.f / (1.f + __expf(-g)); }

template <typename T>
__global__ void swigluFwdKernel(const SwigluParams p) {
    const int64_t total = p.rows * p.f;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t r = i / p.f, c = i % p.f;
        const T* gu = static_cast<const T*>(p.gu) + r * 2 * p.f;
        const float g = toF(gu[c]), u = toF(gu[p.f + c]);
        static_cast<T*>(p.h)[i] = fromF<T>(g * sigmoid(g) * u);
    }
}

template <typename T>
__global__ void swigluBwdKernel(const SwigluParams p) {
    const int64_t total = p.rows * p.f;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t r = i / p.f, c = i % p.f;
        const T* gu = static_cast<const T*>(p.gu) + r * 2 * p.f;
        T* dgu = static_cast<T*>(p.grad_gu) + r * 2 * p.f;
        const float g = toF(gu[c]), u = toF(gu[p.f + c]),
                    dh = toF(static_cast<const T*>(p.grad_h)[i]);
        const float sg = sigmoid(g);
        dgu[c] = fromF<T>(dh * u * sg * (1.f + g * (1.f - sg)));
        dgu[p.f + c] = fromF<T>(dh * g * sg);
    }
}

// Vectorised (See Note [vectorised fused kernels]): kVec<T> values of a row a thread (f % kVec ==
// 0, 16-aligned buffers).
template <typename T>
__global__ void swigluFwdVecKernel(const SwigluParams p) {
    constexpr int V = kVec<T>;
    const int64_t vecs = p.f / V, total = p.rows * vecs;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t r = i / vecs, c = (i - r * vecs) * V;
        const T* gu = static_cast<const T*>(p.gu) + r * 2 * p.f;
        float g[V], u[V], h[V];
        ld16(gu + c, g);
        ld16(gu + p.f + c, u);
#pragma unroll
        for (int k = 0; k < V; ++k) h[k] = g[k] * sigmoid(g[k]) * u[k];
        st16(static_cast<T*>(p.h) + r * p.f + c, h);
    }
}

template <typename T>
__global__ void swigluBwdVecKernel(const SwigluParams p) {
    constexpr int V = kVec<T>;
    const int64_t vecs = p.f / V, total = p.rows * vecs;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t r = i / vecs, c = (i - r * vecs) * V;
        const T* gu = static_cast<const T*>(p.gu) + r * 2 * p.f;
        T* dgu = static_cast<T*>(p.grad_gu) + r * 2 * p.f;
        float g[V], u[V], dh[V], dg[V], du[V];
        ld16(gu + c, g);
        ld16(gu + p.f + c, u);
        ld16(static_cast<const T*>(p.grad_h) + r * p.f + c, dh);
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const float sg = sigmoid(g[k]);
            dg[k] = dh[k] * u[k] * sg * (1.f + g[k] * (1.f - sg));
            du[k] = dh[k] * g[k] * sg;
        }
        st16(dgu + c, dg);
        st16(dgu + p.f + c, du);
    }
}

// ---- Softmax of the naive attention's scores ----------------------------------------------

// One warp a row (a row is a query's keys: 256 at the course's context), eight rows a block.
constexpr int kSoftmaxWarps = 8;

// The scaled score as eager has it: the product rounded to the scores' dtype.
template <typename T>
__device__ __forceinline__ float scaledScore(const T* s, int c, float scale) {
    return toF(fromF<T>(toF(s[c]) * scale));
}

// The keys a row attends to: all, or (causal) those up to its query.
__device__ __forceinline__ int softmaxLimit(const SoftmaxParams& p, int64_t row) {
    const int64_t q = row % p.queries + 1;
    return p.causal && q < p.cols ? static_cast<int>(q) : p.cols;
}

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <typename T>
__global__ void __launch_bounds__(kSoftmaxWarps * 32) softmaxFwdKernel(const SoftmaxParams p) {
    const int lane = threadIdx.x % 32;
    const int64_t row = int64_t{blockIdx.x} * kSoftmaxWarps + threadIdx.x / 32;
    if (row >= p.rows) return;
    const T* s = static_cast<const T*>(p.scores) + row * p.cols;
    T* out = static_cast<T*>(p.probs) + row * p.cols;
    const int limit = softmaxLimit(p, row);
    // Online max and sum over this lane's keys, then merged across the warp.
    float m = -INFINITY, sum = 0.f;
    for (int c = lane; c < limit; c += 32) {
        const float x = scaledScore(s, c, p.scale);
        if (x > m) {
            sum = sum * expf(m - x) + 1.f;
            m = x;
        } else {
            sum += expf(x - m);
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o),
                    s2 = __shfl_xor_sync(0xffffffffu, sum, o);
        const float mm = fmaxf(m, m2);
        sum = mm == -INFINITY ? 0.f : sum * expf(m - mm) + s2 * expf(m2 - mm);
        m = mm;
    }
    const float lse = m + logf(sum);  // limit >= 1: every row has a key
    if (lane == 0) p.lse[row] = lse;
    for (int c = lane; c < p.cols; c += 32)
        out[c] = fromF<T>(c < limit ? expf(scaledScore(s, c, p.scale) - lse) : 0.f);
}

template <typename T>
__global__ void __launch_bounds__(kSoftmaxWarps * 32) softmaxBwdKernel(const SoftmaxParams p) {
    const int lane = threadIdx.x % 32;
    const int64_t row = int64_t{blockIdx.x} * kSoftmaxWarps + threadIdx.x / 32;
    if (row >= p.rows) return;
    const T* s = static_cast<const T*>(p.scores) + row * p.cols;
    const T* dp = static_cast<const T*>(p.grad_probs) + row * p.cols;
    T* ds = static_cast<T*>(p.grad_scores) + row * p.cols;
    const int limit = softmaxLimit(p, row);
    const float lse = p.lse[row];
    float dot = 0.f;
    for (int c = lane; c < limit; c += 32)
        dot += toF(dp[c]) * expf(scaledScore(s, c, p.scale) - lse);
    dot = warpSum(dot);
    for (int c = lane; c < p.cols; c += 32) {
        float g = 0.f;
        if (c < limit) {
            const float pr = expf(scaledScore(s, c, p.scale) - lse);
            g = toF(fromF<T>(pr * (toF(dp[c]) - dot))) * p.scale;
        }
        ds[c] = fromF<T>(g);
    }
}

// ---- Cross-entropy -------------------------------------------------------------------------

template <typename T>
__global__ void __launch_bounds__(kRowThreads) crossEntropyFwdKernel(const CrossEntropyParams p) {
    __shared__ float scratch[kRowThreads / 32];
    const int64_t row = blockIdx.x;
    const T* l = static_cast<const T*>(p.logits) + row * p.row_stride;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < p.vocab; c += kRowThreads) m = fmaxf(m, toF(l[c]));
    m = blockMax(m, scratch);
    float s = 0.f;
    for (int c = threadIdx.x; c < p.vocab; c += kRowThreads) s += __expf(toF(l[c]) - m);
    s = blockSum(s, scratch);
    if (threadIdx.x == 0) {
        const float lse = m + logf(s);
        p.lse[row] = lse;
        const int64_t t = p.targets[row];  // out of range: NaN, never a read outside the row
        p.loss[row] = t >= 0 && t < p.vocab ? lse - toF(l[t]) : NAN;
    }
}

template <typename T>
__global__ void crossEntropyBwdKernel(const CrossEntropyParams p) {
    const float scale = *p.grad_loss / static_cast<float>(p.rows);
    const int64_t total = p.rows * p.vocab;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t r = i / p.vocab;
        const int c = static_cast<int>(i % p.vocab);
        const float prob =
            __expf(toF(static_cast<const T*>(p.logits)[r * p.row_stride + c]) - p.lse[r]);
        static_cast<T*>(p.grad_logits)[i] =
            fromF<T>((prob - (c == p.targets[r] ? 1.f : 0.f)) * scale);
    }
}

// Vectorised (See Note [vectorised fused kernels]): vocab and row_stride multiples of kVec<T>,
// 16-aligned logits. The forward reads the row once: each thread keeps a running max and the sum
// of exps below it, rescaled when the max grows; the block combines them.
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    crossEntropyFwdVecKernel(const CrossEntropyParams p) {
    constexpr int V = kVec<T>;
    __shared__ float scratch[kRowThreads / 32];
    const int64_t row = blockIdx.x;
    const T* l = static_cast<const T*>(p.logits) + row * p.row_stride;
    float m = -INFINITY, s = 0.f;
    for (int c = threadIdx.x * V; c < p.vocab; c += kRowThreads * V) {
        float v[V];
        ld16(l + c, v);
        float mv = v[0];
#pragma unroll
        for (int k = 1; k < V; ++k) mv = fmaxf(mv, v[k]);
        if (mv > m) {
            s *= __expf(m - mv);  // 0 while m is -inf
            m = mv;
        }
#pragma unroll
        for (int k = 0; k < V; ++k) s += __expf(v[k] - m);
    }
    const float mx = blockMax(m, scratch);
    s = blockSum(m == -INFINITY ? 0.f : s * __expf(m - mx), scratch);
    if (threadIdx.x == 0) {
        const float lse = mx + logf(s);
        p.lse[row] = lse;
        const int64_t t = p.targets[row];  // out of range: NaN, never a read outside the row
        p.loss[row] = t >= 0 && t < p.vocab ? lse - toF(l[t]) : NAN;
    }
}

template <typename T>
__global__ void crossEntropyBwdVecKernel(const CrossEntropyParams p) {
    constexpr int V = kVec<T>;
    const float scale = *p.grad_loss / static_cast<float>(p.rows);
    const int64_t vecs = p.vocab / V, total = p.rows * vecs;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
         i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t r = i / vecs;
        const int c = static_cast<int>(i - r * vecs) * V;
        const float lse = p.lse[r];
        const int64_t t = p.targets[r];
        float v[V];
        ld16(static_cast<const T*>(p.logits) + r * p.row_stride + c, v);
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] = (__expf(v[k] - lse) - (c + k == t ? 1.f : 0.f)) * scale;
        st16(static_cast<T*>(p.grad_logits) + r * p.vocab + c, v);
    }
}

// ---- AdamW with low-precision weight copies -----------------------------------------------

// Note [low-precision weight copies]:
// Under autocast every linear casts its fp32 weight to bf16 in every forward (the compiled
// mode captures with autocast's cache off), and the backward casts the weight's bf16 gradient
// back to fp32: two passes over every weight per step, 8 of them per block, 12 bytes per
// parameter (about 10 ms a step for 2.7B on an H100). The compiled mode's model keeps a bf16
// copy of each linear weight instead; the linears read the copies, their gradients stay bf16,
// and this kernel reads those gradients, updates the fp32 parameters and writes the new copies
// in the same pass. The gradient is the same number eager computes (its fp32 gradient is the
// cast of this bf16 one) and the copy is the same cast of the updated weight, so the step is
// eager's, with the casts folded into the optimizer.
// Four consecutive values, in one 16-byte (fp32) or 8-byte (16-bit) access; streaming (each
// value is touched once a step: no point keeping it in the caches).
template <typename T>
__device__ __forceinline__ void load4(const T* ptr, float (&v)[4]) {
    if constexpr (sizeof(T) == 4) {
        const float4 f = __ldcs(reinterpret_cast<const float4*>(ptr));
        v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
    } else {
        const uint2 u = __ldcs(reinterpret_cast<const uint2*>(ptr));
        const T* h = reinterpret_cast<const T*>(&u);
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = toF(h[k]);
    }
}
template <typename T>
__device__ __forceinline__ void store4(T* ptr, const float (&v)[4]) {
    if constexpr (sizeof(T) == 4) {
        __stcs(reinterpret_cast<float4*>(ptr), make_float4(v[0], v[1], v[2], v[3]));
    } else {
        uint2 u;
        T* h = reinterpret_cast<T*>(&u);
#pragma unroll
        for (int k = 0; k < 4; ++k) h[k] = fromF<T>(v[k]);
        __stcs(reinterpret_cast<uint2*>(ptr), u);
    }
}

template <typename G, typename C, bool kCopy>
__global__ void __launch_bounds__(256) adamWKernel(const AdamWParams p) {
    int t = 0;
    while (t + 1 < p.count && static_cast<int64_t>(blockIdx.x) >= p.block_start[t + 1]) ++t;
    const AdamWTensor& a = p.t[t];
    const int64_t begin = (static_cast<int64_t>(blockIdx.x) - p.block_start[t]) * kAdamWChunk;
    const int64_t end = min(begin + kAdamWChunk, a.numel);
    const float step = *a.step;
    const float bias1 = 1.f - powf(p.beta1, step), bias2_sqrt = sqrtf(1.f - powf(p.beta2, step));
    const float step_size = p.lr / bias1, decay = 1.f - p.lr * p.weight_decay;
    const G* grad = static_cast<const G*>(a.grad);
    if (a.vec4) {
        // Memory-bound: 4 values per access (every pointer aligned, numel % 4 == 0), and two such
        // groups per thread with all their loads issued before any use (more bytes in flight).
        constexpr int kGroups = 2;
        const int64_t stride = 4 * int64_t{blockDim.x};
        for (int64_t i0 = begin + 4 * threadIdx.x; i0 < end; i0 += kGroups * stride) {
            float g[kGroups][4], w[kGroups][4], m[kGroups][4], v[kGroups][4];
#pragma unroll
            for (int u = 0; u < kGroups; ++u) {
                const int64_t i = i0 + u * stride;
                if (i >= end) break;
                load4(grad + i, g[u]);
                load4(a.param + i, w[u]);
                load4(a.exp_avg + i, m[u]);
                load4(a.exp_avg_sq + i, v[u]);
            }
#pragma unroll
            for (int u = 0; u < kGroups; ++u) {
                const int64_t i = i0 + u * stride;
                if (i >= end) break;
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    m[u][k] = p.beta1 * m[u][k] + (1.f - p.beta1) * g[u][k];
                    v[u][k] = p.beta2 * v[u][k] + (1.f - p.beta2) * g[u][k] * g[u][k];
                    w[u][k] = w[u][k] * decay -
                              step_size * m[u][k] / (sqrtf(v[u][k]) / bias2_sqrt + p.eps);
                }
                store4(a.exp_avg + i, m[u]);
                store4(a.exp_avg_sq + i, v[u]);
                store4(a.param + i, w[u]);
                if constexpr (kCopy) store4(static_cast<C*>(a.copy) + i, w[u]);
            }
        }
        return;
    }
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        const float g = toF(grad[i]);
        const float m = p.beta1 * a.exp_avg[i] + (1.f - p.beta1) * g;
        const float v = p.beta2 * a.exp_avg_sq[i] + (1.f - p.beta2) * g * g;
        a.exp_avg[i] = m;
        a.exp_avg_sq[i] = v;
        const float w = a.param[i] * decay - step_size * m / (sqrtf(v) / bias2_sqrt + p.eps);
        a.param[i] = w;
        if constexpr (kCopy) static_cast<C*>(a.copy)[i] = fromF<C>(w);
    }
}

// A grid-stride launch over `n` items: enough blocks to fill the GPU a few times over.
unsigned strideBlocks(int64_t n) {
    static const int sms = smCount();
    const int64_t want = (n + 255) / 256;
    return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(want, int64_t{sms} * 16)));
}

}  // namespace

void launchRmsNormFwd(const RmsNormFwdParams& p, cudaStream_t stream) {
    if (p.rows == 0) return;
    const bool vec = p.cols % 4 == 0 && aligned16(p.x) && aligned16(p.out) && aligned16(p.weight) &&
                     (!p.residual || (aligned16(p.residual) && aligned16(p.sum)));
    withType(p.out_dtype, [&](auto o) {
        using O = decltype(o);
        if (vec) {
            if (!p.residual) {
                rmsNormFwdVecKernel<float, O, false>
                    <<<static_cast<unsigned>(p.rows), kRowThreads, 0, stream>>>(p);
                return;
            }
            withType(p.residual_dtype, [&](auto r) {
                rmsNormFwdVecKernel<decltype(r), O, true>
                    <<<static_cast<unsigned>(p.rows), kRowThreads, 0, stream>>>(p);
            });
            return;
        }
        if (!p.residual) {
            rmsNormFwdKernel<float, O, false>
                <<<static_cast<unsigned>(p.rows), kRowThreads, 0, stream>>>(p);
            return;
        }
        withType(p.residual_dtype, [&](auto r) {
            using R = decltype(r);
            rmsNormFwdKernel<R, O, true>
                <<<static_cast<unsigned>(p.rows), kRowThreads, 0, stream>>>(p);
        });
    });
    checkLaunch("RMSNorm forward");
}

int rmsNormBwdBlocks(int64_t rows) {
    static const int sms = smCount();
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(rows, int64_t{8} * sms)));
}

void launchRmsNormBwd(const RmsNormBwdParams& p, cudaStream_t stream) {
    if (p.rows == 0) return;
    const size_t smem = sizeof(float) * static_cast<size_t>(p.cols);
    if (smem > 48 * 1024) throw std::invalid_argument("RMSNorm backward: more than 12,288 columns");
    const bool vec = p.cols % 4 == 0 && aligned16(p.grad_out) && aligned16(p.x) &&
                     aligned16(p.weight) && aligned16(p.dx) &&
                     (!p.grad_sum || aligned16(p.grad_sum)) &&
                     (!p.dresidual || aligned16(p.dresidual));
    withType(p.out_dtype, [&](auto o) {
        using O = decltype(o);
        if (vec) {
            if (!p.dresidual) {
                rmsNormBwdVecKernel<O, float, false><<<p.blocks, kRowThreads, smem, stream>>>(p);
                return;
            }
            withType(p.residual_dtype, [&](auto r) {
                rmsNormBwdVecKernel<O, decltype(r), true>
                    <<<p.blocks, kRowThreads, smem, stream>>>(p);
            });
            return;
        }
        if (!p.dresidual) {
            rmsNormBwdKernel<O, float, false><<<p.blocks, kRowThreads, smem, stream>>>(p);
            return;
        }
        withType(p.residual_dtype, [&](auto r) {
            using R = decltype(r);
            rmsNormBwdKernel<O, R, true><<<p.blocks, kRowThreads, smem, stream>>>(p);
        });
    });
    checkLaunch("RMSNorm backward");
}

void launchRope(const RopeParams& p, cudaStream_t stream) {
    const int64_t n = p.batch * p.seq * p.heads * p.head_dim;  // q and k pairs = one per 2 of 2·h·d
    if (n == 0) return;
    withType(p.dtype, [&](auto t) {
        using T = decltype(t);
        if (p.head_dim % kVec<T> == 0 && aligned16(p.src) && aligned16(p.dst) && aligned16(p.cos) &&
            aligned16(p.sin))
            ropeVecKernel<T><<<strideBlocks(2 * n / kVec<T>), 256, 0, stream>>>(p);
        else
            ropeKernel<T><<<strideBlocks(n), 256, 0, stream>>>(p);
    });
    checkLaunch("RoPE");
}

void launchSwigluFwd(const SwigluParams& p, cudaStream_t stream) {
    if (p.rows * p.f == 0) return;
    withType(p.dtype, [&](auto t) {
        using T = decltype(t);
        if (p.f % kVec<T> == 0 && aligned16(p.gu) && aligned16(p.h))
            swigluFwdVecKernel<T><<<strideBlocks(p.rows * p.f / kVec<T>), 256, 0, stream>>>(p);
        else
            swigluFwdKernel<T><<<strideBlocks(p.rows * p.f), 256, 0, stream>>>(p);
    });
    checkLaunch("SwiGLU forward");
}

void launchSwigluBwd(const SwigluParams& p, cudaStream_t stream) {
    if (p.rows * p.f == 0) return;
    withType(p.dtype, [&](auto t) {
        using T = decltype(t);
        if (p.f % kVec<T> == 0 && aligned16(p.gu) && aligned16(p.grad_h) && aligned16(p.grad_gu))
            swigluBwdVecKernel<T><<<strideBlocks(p.rows * p.f / kVec<T>), 256, 0, stream>>>(p);
        else
            swigluBwdKernel<T><<<strideBlocks(p.rows * p.f), 256, 0, stream>>>(p);
    });
    checkLaunch("SwiGLU backward");
}

void launchSoftmaxFwd(const SoftmaxParams& p, cudaStream_t stream) {
    if (p.rows * p.cols == 0) return;
    const unsigned blocks = static_cast<unsigned>((p.rows + kSoftmaxWarps - 1) / kSoftmaxWarps);
    withType(p.dtype, [&](auto t) {
        softmaxFwdKernel<decltype(t)><<<blocks, kSoftmaxWarps * 32, 0, stream>>>(p);
    });
    checkLaunch("softmax forward");
}

void launchSoftmaxBwd(const SoftmaxParams& p, cudaStream_t stream) {
    if (p.rows * p.cols == 0) return;
    const unsigned blocks = static_cast<unsigned>((p.rows + kSoftmaxWarps - 1) / kSoftmaxWarps);
    withType(p.dtype, [&](auto t) {
        softmaxBwdKernel<decltype(t)><<<blocks, kSoftmaxWarps * 32, 0, stream>>>(p);
    });
    checkLaunch("softmax backward");
}

void launchCrossEntropyFwd(const CrossEntropyParams& p, cudaStream_t stream) {
    if (p.rows == 0) return;
    withType(p.dtype, [&](auto t) {
        using T = decltype(t);
        if (p.vocab % kVec<T> == 0 && p.row_stride % kVec<T> == 0 && aligned16(p.logits))
            crossEntropyFwdVecKernel<T>
                <<<static_cast<unsigned>(p.rows), kRowThreads, 0, stream>>>(p);
        else
            crossEntropyFwdKernel<T><<<static_cast<unsigned>(p.rows), kRowThreads, 0, stream>>>(p);
    });
    checkLaunch("cross-entropy forward");
}

void launchCrossEntropyBwd(const CrossEntropyParams& p, cudaStream_t stream) {
    if (p.rows == 0) return;
    withType(p.dtype, [&](auto t) {
        using T = decltype(t);
        if (p.vocab % kVec<T> == 0 && p.row_stride % kVec<T> == 0 && aligned16(p.logits) &&
            aligned16(p.grad_logits))
            crossEntropyBwdVecKernel<T>
                <<<strideBlocks(p.rows * p.vocab / kVec<T>), 256, 0, stream>>>(p);
        else
            crossEntropyBwdKernel<T><<<strideBlocks(p.rows * p.vocab), 256, 0, stream>>>(p);
    });
    checkLaunch("cross-entropy backward");
}

void launchAdamW(const AdamWParams& p, cudaStream_t stream) {
    const int64_t blocks = p.block_start[p.count];
    if (blocks == 0) return;
    withType(p.grad_dtype, [&](auto g) {
        using G = decltype(g);
        if (!p.has_copy) {
            adamWKernel<G, float, false><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p);
            return;
        }
        withType(p.copy_dtype, [&](auto c) {
            adamWKernel<G, decltype(c), true><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p);
        });
    });
    checkLaunch("AdamW");
}

}  // namespace ts::kernels
