// The fused element-wise kernels of the compiled mode (see Note [fused element-wise kernels] in
// fused.h). Memory-bound and small at the course's sizes (a row is 768 to 2,560 values, a step
// has ~1,000 to 16,000 rows): one block per row for the reductions, one thread per element or
// pair elsewhere; what counts is one launch instead of several, not the last byte per second.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
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

constexpr int kRowThreads = 256;  // one block per row for the row reductions

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
    withType(p.out_dtype, [&](auto o) {
        using O = decltype(o);
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
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(rows, int64_t{2} * sms)));
}

void launchRmsNormBwd(const RmsNormBwdParams& p, cudaStream_t stream) {
    if (p.rows == 0) return;
    const size_t smem = sizeof(float) * static_cast<size_t>(p.cols);
    if (smem > 48 * 1024) throw std::invalid_argument("RMSNorm backward: more than 12,288 columns");
    withType(p.out_dtype, [&](auto o) {
        using O = decltype(o);
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
    withType(p.dtype,
             [&](auto t) { ropeKernel<decltype(t)><<<strideBlocks(n), 256, 0, stream>>>(p); });
    checkLaunch("RoPE");
}

void launchSwigluFwd(const SwigluParams& p, cudaStream_t stream) {
    if (p.rows * p.f == 0) return;
    withType(p.dtype, [&](auto t) {
        swigluFwdKernel<decltype(t)><<<strideBlocks(p.rows * p.f), 256, 0, stream>>>(p);
    });
    checkLaunch("SwiGLU forward");
}

void launchSwigluBwd(const SwigluParams& p, cudaStream_t stream) {
    if (p.rows * p.f == 0) return;
    withType(p.dtype, [&](auto t) {
        swigluBwdKernel<decltype(t)><<<strideBlocks(p.rows * p.f), 256, 0, stream>>>(p);
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
        crossEntropyFwdKernel<decltype(t)>
            <<<static_cast<unsigned>(p.rows), kRowThreads, 0, stream>>>(p);
    });
    checkLaunch("cross-entropy forward");
}

void launchCrossEntropyBwd(const CrossEntropyParams& p, cudaStream_t stream) {
    if (p.rows == 0) return;
    withType(p.dtype, [&](auto t) {
        crossEntropyBwdKernel<decltype(t)><<<strideBlocks(p.rows * p.vocab), 256, 0, stream>>>(p);
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
