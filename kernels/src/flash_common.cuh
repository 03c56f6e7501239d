// Device helpers shared by the attention kernels: error checks, async copies, ldmatrix and
// the m16n8k16 tensor-core instruction (sm_80+).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "flash.h"

namespace ts::kernels {

// Every CUDA call and launch is checked, with the file and line of the call.
[[noreturn]] inline void cudaFail(cudaError_t err, const char* what, const char* file, int line) {
    throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorString(err) + " (" + what +
                             ") at " + file + ":" + std::to_string(line));
}
#define TS_CUDA_CHECK(call)                                                                \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) ::ts::kernels::cudaFail(err_, #call, __FILE__, __LINE__); \
    } while (0)
#define TS_CUDA_CHECK_LAUNCH() TS_CUDA_CHECK(cudaGetLastError())

// Runtime flags become compile-time constants (one kernel per value).
#define TS_BOOL_SWITCH(cond, NAME, ...)  \
    [&] {                                \
        if (cond) {                      \
            constexpr bool NAME = true;  \
            return __VA_ARGS__();        \
        } else {                         \
            constexpr bool NAME = false; \
            return __VA_ARGS__();        \
        }                                \
    }()

// The head dims the kernels are built for (flash_api.cpp's check and ts::flashAttention's
// padding follow this list); a dim between two runs zero-padded in the next one up.
#define TS_HEADDIM_SWITCH(d, NAME, ...)                                                     \
    [&] {                                                                                   \
        switch (d) {                                                                        \
            case 16: {                                                                      \
                constexpr int NAME = 16;                                                    \
                return __VA_ARGS__();                                                       \
            }                                                                               \
            case 32: {                                                                      \
                constexpr int NAME = 32;                                                    \
                return __VA_ARGS__();                                                       \
            }                                                                               \
            case 64: {                                                                      \
                constexpr int NAME = 64;                                                    \
                return __VA_ARGS__();                                                       \
            }                                                                               \
            case 96: {                                                                      \
                constexpr int NAME = 96;                                                    \
                return __VA_ARGS__();                                                       \
            }                                                                               \
            case 128: {                                                                     \
                constexpr int NAME = 128;                                                   \
                return __VA_ARGS__();                                                       \
            }                                                                               \
            case 256: {                                                                     \
                constexpr int NAME = 256;                                                   \
                return __VA_ARGS__();                                                       \
            }                                                                               \
            default:                                                                        \
                throw std::invalid_argument("head_dim must be 16, 32, 64, 96, 128 or 256"); \
        }                                                                                   \
    }()

// The largest dynamic shared memory a block may ask for on sm_80 (163 KB; sm_90: 227 KB). Tile
// shapes that every sm_80+ GPU must run are checked against it at compile time.
constexpr int kSm80MaxSmemBytes = 163 * 1024;

// Raises a kernel's dynamic shared-memory limit once (above 48 KB it must be asked for).
template <typename Kernel>
inline void setSmem(Kernel kernel, int bytes) {
    if (bytes > 48 * 1024)
        TS_CUDA_CHECK(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

// Launch planning from the current device's size (cudaDeviceGetAttribute is a cheap host
// lookup, no device round trip).
struct DeviceSize {
    int sms = 0;
    int l2_bytes = 0;
};
inline DeviceSize deviceSize() {
    int dev = 0;
    DeviceSize ds;
    TS_CUDA_CHECK(cudaGetDevice(&dev));
    TS_CUDA_CHECK(cudaDeviceGetAttribute(&ds.sms, cudaDevAttrMultiProcessorCount, dev));
    TS_CUDA_CHECK(cudaDeviceGetAttribute(&ds.l2_bytes, cudaDevAttrL2CacheSize, dev));
    return ds;
}

// A grid of at most this many blocks per multiprocessor runs in a few waves: the order in
// which its blocks start decides when the last one ends (headsFastest).
constexpr int kSmallGridBlocksPerSm = 10;

inline bool smallGrid(const DeviceSize& ds, int64_t blocks) {
    return blocks <= int64_t{kSmallGridBlocksPerSm} * ds.sms;
}

// At most this many blocks per SM (one wave of the two-blocks-per-SM forward), the longest
// causal block's serial work sets the time: the forward then takes 16 rows per warp.
// Measured (H100, b 4 × h 1, causal, heads fastest): at 1.9 blocks per SM the 16-row layout
// was 17-27% faster, at 3.9 the 32-row layout 8-27% faster (docs/ATTENTION.md, v3).
constexpr int kLatencyGridBlocksPerSm = 2;
inline bool latencyGrid(const DeviceSize& ds, int64_t blocks) {
    return blocks <= int64_t{kLatencyGridBlocksPerSm} * ds.sms;
}

// Causal blocks differ in length. In (blocks, batch·heads) order the long blocks of the last
// heads start only after the short blocks of the first heads and, on a small grid, finish
// last. Heads-fastest order starts the longest blocks of every head first; each wave then
// touches all heads, so only when what every block streams (K, V forward; Q, dO backward)
// fits in L2 for all heads together.
inline bool headsFastest(const DeviceSize& ds, bool causal, int64_t blocks,
                         int64_t streamed_bytes_all_heads) {
    return causal && smallGrid(ds, blocks) && streamed_bytes_all_heads <= ds.l2_bytes;
}

// One forward launch: one block per kBlockM query rows of every (batch, head); heads_fastest:
// see headsFastest.
template <typename Tr, typename Kernel>
void launchFwdMain(Kernel kernel, const FlashFwdParams& p, bool heads_fastest,
                   cudaStream_t stream) {
    setSmem(kernel, Tr::kSmemBytes);
    const unsigned m_blocks = (p.seqlen_q + Tr::kBlockM - 1) / Tr::kBlockM, bh = p.batch * p.heads;
    FlashFwdParams pp = p;
    pp.heads_fastest = heads_fastest;
    const dim3 grid = heads_fastest ? dim3(bh, m_blocks) : dim3(m_blocks, bh);
    kernel<<<grid, Tr::kThreads, Tr::kSmemBytes, stream>>>(pp);
    TS_CUDA_CHECK_LAUNCH();
}

// The dQ/dK/dV loop of the backward; see flash_bwd.cuh.
// One launch of the dQ/dK/dV loop. Causal key block 0 is the longest; on small grids whose
// Q and dO (what every block streams) fit in L2 for all heads at once, heads go fastest so
// that every head's long blocks start first.
template <typename Tr, typename Kernel>
void launchBwdMain(Kernel kernel, const FlashBwdParams& p, int elem_bytes, cudaStream_t stream) {
    setSmem(kernel, Tr::kSmemBytes);
    const unsigned n_blocks = (p.seqlen_k + Tr::kBlockN - 1) / Tr::kBlockN, bh = p.batch * p.heads;
    const int64_t bytes = int64_t{bh} * 2 * p.seqlen_q * Tr::D * elem_bytes;
    FlashBwdParams pp = p;
    pp.heads_fastest = headsFastest(deviceSize(), p.causal, int64_t{n_blocks} * bh, bytes);
    const dim3 grid = pp.heads_fastest ? dim3(bh, n_blocks) : dim3(n_blocks, bh);
    kernel<<<grid, Tr::kThreads, Tr::kSmemBytes, stream>>>(pp);
    TS_CUDA_CHECK_LAUNCH();
}

// The (batch·head, block) of this thread block. Grid (blocks, batch·heads), or (batch·heads,
// blocks) when p.heads_fastest; longest_first reverses the block order (causal forward: the
// last query block has the most keys; causal backward's key block 0 is the longest already).
struct BlockIndex {
    int bh, b, h, block;
};
__device__ __forceinline__ BlockIndex blockIndex(const FlashFwdParams& p, bool longest_first) {
    BlockIndex i;
    i.bh = p.heads_fastest ? blockIdx.x : blockIdx.y;
    i.b = i.bh / p.heads;
    i.h = i.bh % p.heads;
    const int idx = p.heads_fastest ? blockIdx.y : blockIdx.x;
    const int count = p.heads_fastest ? gridDim.y : gridDim.x;
    i.block = longest_first ? count - 1 - idx : idx;
    return i;
}
// Start of this block's (batch, head) in a (batch, heads, seq, d) tensor.
template <typename T>
__device__ __forceinline__ T* headBase(const void* base, const BlockIndex& i, int64_t batch_stride,
                                       int64_t head_stride) {
    return static_cast<T*>(const_cast<void*>(base)) + i.b * batch_stride + i.h * head_stride;
}

__device__ __forceinline__ uint32_t smemAddr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy; when !pred the destination is zero-filled (src unread).
__device__ __forceinline__ void cpAsync16(void* dst, const void* src, bool pred) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smemAddr(dst)), "l"(src),
                 "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cpAsyncWait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Columns of a row of dQ's fp32 work buffer: the head dim, Tr::kCols where a kernel runs one
// inside a wider tile (sm90::InTile), else the tile's Tr::D.
template <typename Tr, typename = void>
struct DqWidth {
    static constexpr int value = Tr::D;
};
template <typename Tr>
struct DqWidth<Tr, std::void_t<decltype(Tr::kCols)>> {
    static constexpr int value = Tr::kCols;
};

// The prologue of the backward's dQ/dK/dV kernels (flash_bwd.cuh, flash_bwd_sm90.cuh): the
// block's Tr::kBlockN keys, its (batch, head) in the inputs and the work buffers, and the query
// tiles of Tr::kBlockM rows it visits. All inline: it compiles to what the kernels wrote out.
template <typename T, typename Tr>
struct BwdBlock {
    BlockIndex bi;
    int n0;                // first key of the block
    int sq, sk;            // p.seqlen_q, p.seqlen_k
    int m_begin, m_tiles;  // query tiles [m_begin, m_tiles); none when no query sees the keys
    const T *q, *k, *v, *dout;
    const float *lse2, *dsum;  // this head's seqlen_q_padded rows
    // dq_accum + dq_off: this head's (seqlen_q_padded, D) rows. Apart, not one pointer: so the
    // row address in dqRow folds as it did written inline (one pointer cost registers on sm_80).
    float* dq_accum;
    int64_t dq_off;

    __device__ __forceinline__ float* dqRow(int row) const {
        return dq_accum + dq_off + static_cast<int64_t>(row) * DqWidth<Tr>::value;
    }
    // L and D of the query tile from row m0 into stage buf of sL, sD ([2][kBlockM]; padded
    // buffers: no bounds check), 16 bytes per thread of the first kBlockM / 2.
    __device__ __forceinline__ void loadLD(float* sL, float* sD, int buf, int m0, int tid) const {
        constexpr int BM = Tr::kBlockM;
        if (tid < BM / 4)
            cpAsync16(sL + buf * BM + tid * 4, lse2 + m0 + tid * 4, true);
        else if (tid < BM / 2)
            cpAsync16(sD + buf * BM + (tid - BM / 4) * 4, dsum + m0 + (tid - BM / 4) * 4, true);
    }
};
template <typename T, typename Tr, bool Causal>
__device__ __forceinline__ BwdBlock<T, Tr> bwdBlock(const FlashBwdParams& p) {
    constexpr int BM = Tr::kBlockM;
    BwdBlock<T, Tr> w;
    // Key block 0 sees every query (causal: the longest); heads_fastest: see launchBwdMain.
    w.bi = blockIndex(p, false);
    w.n0 = w.bi.block * Tr::kBlockN;
    w.sq = p.seqlen_q;
    w.sk = p.seqlen_k;
    const int sqp = p.seqlen_q_padded;
    w.q = headBase<const T>(p.q, w.bi, p.q_batch_stride, p.q_head_stride);
    w.k = headBase<const T>(p.k, w.bi, p.k_batch_stride, p.k_head_stride);
    w.v = headBase<const T>(p.v, w.bi, p.v_batch_stride, p.v_head_stride);
    w.dout = headBase<const T>(p.dout, w.bi, p.do_batch_stride, p.do_head_stride);
    w.dq_accum = p.dq_accum;
    w.dq_off = static_cast<int64_t>(w.bi.bh) * sqp * DqWidth<Tr>::value;
    w.lse2 = p.lse_log2 + static_cast<int64_t>(w.bi.bh) * sqp;
    w.dsum = p.dsum + static_cast<int64_t>(w.bi.bh) * sqp;
    w.m_tiles = (w.sq + BM - 1) / BM;
    w.m_begin = Causal ? w.n0 / BM : 0;  // earlier queries see none of these keys
    return w;
}

__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smemAddr(p)));
}
__device__ __forceinline__ void ldmatrixX4T(uint32_t (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smemAddr(p)));
}

// D = A·B + D, m16n8k16, fp32 accumulators.
template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
}

// Two floats packed into one register of two 16-bit values (lo first).
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    } else {
        __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    }
}

// Accumulators of an m16 × N tile per warp (mma.sync's and wgmma's D layout, N/8 n8 tiles of 4
// floats) as the A fragments of a next product whose K is that N: k16 step kk takes n8 tiles
// 2kk and 2kk + 1. This is how P and dS feed P·V, Pᵀ·dO and dSᵀ·Q without shared memory.
template <typename T, int N>
__device__ __forceinline__ void accToA(const float (&acc)[N], uint32_t (&a)[N / 8][4]) {
#pragma unroll
    for (int kk = 0; kk < N / 8; ++kk)
#pragma unroll
        for (int r = 0; r < 4; ++r)
            a[kk][r] = pack2<T>(acc[8 * kk + 2 * r], acc[8 * kk + 2 * r + 1]);
}

template <typename T>
__device__ __forceinline__ float toFloat(T x) {
    if constexpr (std::is_same_v<T, float>)
        return x;
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
        return __bfloat162float(x);
    else
        return __half2float(x);
}
template <typename T>
__device__ __forceinline__ T fromFloat(float x) {
    if constexpr (std::is_same_v<T, float>)
        return x;
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
        return __float2bfloat16_rn(x);
    else
        return __float2half_rn(x);
}

// 2^x on the special-function unit, subnormal results flushed to zero (-inf gives 0). Same
// 2-ulp accuracy as exp2f on normal results; exp2f without -use_fast_math wraps the same
// instruction in a compare and two predicated multiplies to keep subnormal results, which P
// (rounded to bf16/fp16 for the next product) has no use for. FlashAttention's own kernels,
// built with -use_fast_math, compile exp2f to this instruction.
__device__ __forceinline__ float exp2Fast(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// dst[0] += a, dst[1] += b in global memory (8-byte aligned): one vector reduction on sm_90.
__device__ __forceinline__ void atomicAdd2(float* dst, float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float2*>(dst), make_float2(a, b));
#else
    atomicAdd(dst, a);
    atomicAdd(dst + 1, b);
#endif
}

__device__ __forceinline__ float quadMax(float x) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffff, x, 2));
}
__device__ __forceinline__ float quadSum(float x) {
    x += __shfl_xor_sync(0xffffffff, x, 1);
    return x + __shfl_xor_sync(0xffffffff, x, 2);
}

}  // namespace ts::kernels
