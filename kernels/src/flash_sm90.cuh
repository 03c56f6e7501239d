// Hopper (sm_90a) building blocks for the attention kernels: shared-memory matrix descriptors
// for wgmma, its fences, and tiles stored with the 128-byte swizzle that the descriptors name.
//
// Tile layout (what every sm_90a kernel here stores in shared memory): a tile of R rows × D
// 16-bit columns is kept as D/64 column chunks of R rows × 128 bytes; inside a chunk, row r
// holds its 8 16-byte pieces in the order piece ^ (r % 8) (the 128-byte swizzle), so that
// rows read together hit different banks. Chunks start 1024-byte aligned. One such tile
// serves wgmma both ways:
//   K-major: rows are M or N, columns are K (e.g. K for Sᵀ = K Qᵀ, columns = head dim);
//   MN-major: rows are K, columns are N or M (e.g. dO for dV += Pᵀ dO: rows = queries = K).
#pragma once

#include <cstdint>

#include "flash_common.cuh"

namespace ts::kernels::sm90 {

// Byte offset of the 16-byte piece `piece` (0 .. D/8-1) of row `row` in a swizzled tile of
// `rows` rows.
__device__ __forceinline__ uint32_t swizzledOffset(int rows, int row, int piece) {
    return static_cast<uint32_t>((piece >> 3) * rows * 128 + row * 128 +
                                 (((piece & 7) ^ (row & 7)) << 4));
}

// Byte offset of the 16-bit element (row, col) in a swizzled tile of `rows` rows.
__device__ __forceinline__ uint32_t swizzledElem(int rows, int row, int col) {
    return swizzledOffset(rows, row, col >> 3) + (col & 7) * 2;
}

// Copies a rows × D tile (row_stride in elements) into a swizzled shared-memory tile with
// 16-byte cp.async; rows at or past `valid`, and columns at or past kCols (a head dim inside
// the tile, see Note [head dims inside the tile]), are zero-filled without reading global memory.
template <typename T, int D, int kRows, int kThreads, int kCols = D>
__device__ __forceinline__ void loadSwizzled(uint32_t smem, const T* gmem, int64_t row_stride,
                                             int valid, int tid) {
    static_assert(kCols % 8 == 0 && kCols <= D, "whole 16-byte pieces");
    constexpr int kPieces = D / 8;
    static_assert(kThreads % kPieces == 0, "whole rows per pass");
    constexpr int kRowStep = kThreads / kPieces;
    static_assert(kRows % kRowStep == 0, "whole passes");
    const int r0 = tid / kPieces, piece = tid % kPieces;
    const T* src = gmem + r0 * row_stride + piece * 8;
#pragma unroll
    for (int i = 0; i < kRows / kRowStep; ++i) {
        const int r = r0 + i * kRowStep;
        const bool ok = r < valid && (kCols == D || piece < kCols / 8);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                         smem + swizzledOffset(kRows, r, piece)),
                     "l"(ok ? src : gmem), "r"(ok ? 16 : 0));
        src += kRowStep * row_stride;
    }
}

// Traits Base (a D-column tile) running head dim kCols_ < D inside it (Note [head dims inside
// the tile] in flash_fwd_sm90.cuh).
template <typename Base, int kCols_>
struct InTile : Base {
    static constexpr int kCols = kCols_;
    static_assert(kCols_ % 8 == 0 && kCols_ < Base::D, "a multiple of 8 below the tile's head dim");
};

// Shared-memory matrix descriptor, 128-byte swizzle. K-major: sbo = 1024 (the next 8 rows),
// lbo unused. MN-major: sbo = 1024 (the next 8 K rows), lbo = the next 64 MN columns (the
// next chunk).
__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
    uint64_t d = 0;
    d |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
    d |= static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16;
    d |= static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32;
    d |= uint64_t{1} << 62;  // 128-byte swizzle
    return d;
}

__device__ __forceinline__ void fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator registers across wgmma issue and wait.
template <int N>
__device__ __forceinline__ void fenceRegs(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fenceRegs(uint32_t (&r)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(r[i][j])::"memory");
}
// Generic-proxy writes to shared memory (st.shared, cp.async) made visible to wgmma, which
// reads through the async proxy. Before the barrier that publishes them.
__device__ __forceinline__ void fenceProxyAsync() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void namedBarrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace ts::kernels::sm90
