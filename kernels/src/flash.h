// Plain parameter structs for the attention kernels: what the launch code and the kernels
// see. No LibTorch here (flash_api.cpp fills these from tensors), so the .cu files compile
// with nvcc alone and quickly.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ts::kernels {

enum class DType { FP32, BF16, FP16 };

// Layout (batch, heads, seq, head_dim); the last dimension is contiguous, the other three
// strides are in elements. Causal masks key j > query i (aligned at position 0).
struct FlashFwdParams {
    const void* q = nullptr;
    const void* k = nullptr;
    const void* v = nullptr;
    void* o = nullptr;
    float* lse = nullptr;  // (batch, heads, seqlen_q), natural log, contiguous
    int64_t q_batch_stride = 0, q_head_stride = 0, q_row_stride = 0;
    int64_t k_batch_stride = 0, k_head_stride = 0, k_row_stride = 0;
    int64_t v_batch_stride = 0, v_head_stride = 0, v_row_stride = 0;
    int64_t o_batch_stride = 0, o_head_stride = 0, o_row_stride = 0;
    int batch = 0, heads = 0, seqlen_q = 0, seqlen_k = 0, head_dim = 0;
    float scale = 1.f;       // softmax scale, usually 1/sqrt(head_dim)
    float scale_log2 = 1.f;  // scale * log2(e): the kernels use exp2
    bool causal = false;
    DType dtype = DType::BF16;
    // Set by the launch code, not the caller: grid (batch·heads, row blocks) instead of
    // (row blocks, batch·heads), so that the longest causal blocks of every head start first.
    bool heads_fastest = false;
};

struct FlashBwdParams : FlashFwdParams {
    const void* dout = nullptr;
    void* dq = nullptr;
    void* dk = nullptr;
    void* dv = nullptr;
    // Work buffers, (batch*heads, seqlen_q_padded[, head_dim]), fp32, contiguous:
    float* dq_accum = nullptr;  // cleared by the preprocess launch; the dQ/dK/dV loop adds into it
    float* dsum = nullptr;      // rowsum(dO * O), 0 on padded rows
    float* lse_log2 = nullptr;  // lse * log2(e), +inf on padded rows (so P = 0 there)
    int seqlen_q_padded = 0;    // seqlen_q rounded up to kSeqPad
    int64_t do_batch_stride = 0, do_head_stride = 0, do_row_stride = 0;
    int64_t dq_batch_stride = 0, dq_head_stride = 0, dq_row_stride = 0;
    int64_t dk_batch_stride = 0, dk_head_stride = 0, dk_row_stride = 0;
    int64_t dv_batch_stride = 0, dv_head_stride = 0, dv_row_stride = 0;
};

// Head dims that Hopper's wgmma kernels (bf16 / fp16) run inside their 128-column tile: q, k,
// v, dO are read as they are, the tile's columns past d are zero-filled in shared memory, the
// products over the head dim stop at d rounded up to 16, and only d columns are written (Note
// [head dims inside the tile] in flash_fwd_sm90.cuh). Other head dims that are not built run
// from copies zero-padded to a built one (ts::flashAttention). 80: the 2.7B preset's.
constexpr int kSm90InTileHeadDims[] = {80};
constexpr bool sm90InTile(int d) {
    for (int x : kSm90InTileHeadDims)
        if (x == d) return true;
    return false;
}

// Query rows of the backward work buffers are padded to this, so that the dQ/dK/dV loop
// reads whole tiles without bounds checks.
constexpr int kSeqPad = 128;

// One entry per dtype; each dispatches on head dim and causal (flash_*.cu).
void launchFwdBf16(const FlashFwdParams& p, cudaStream_t stream);
void launchFwdFp16(const FlashFwdParams& p, cudaStream_t stream);
void launchFwdFp32(const FlashFwdParams& p, cudaStream_t stream);
// The three backward launches: preprocess (D and the padded LSE), the dQ/dK/dV loop, dQ
// conversion.
void launchBwdBf16(const FlashBwdParams& p, cudaStream_t stream);
void launchBwdFp16(const FlashBwdParams& p, cudaStream_t stream);
void launchBwdFp32(const FlashBwdParams& p, cudaStream_t stream);
// Whether the Hopper kernels run on a GPU of this compute capability: built (the CUDA
// architectures include 90), compute capability 9.0, and TRAINSCOPE_FLASH_SM90 is not "0" (then
// the mma.sync kernels run: for A/B comparisons and tests of both paths). sm90Usable(): the
// current device. Defined in flash_api.cpp.
bool sm90KernelsOn(int compute_major, int compute_minor);
bool sm90Usable();
// Hopper's wgmma kernels (sm_90a; head dims 64 and 128, and kSm90InTileHeadDims in the 128 tile):
// the forward, and the backward's dQ/dK/dV loop alone, in files built only for sm_90a
// (flash_*_sm90_*.cu); called by launchFwd* / launchBwd* where sm90Usable().
void launchFwdSm90Bf16(const FlashFwdParams& p, bool heads_fastest, cudaStream_t stream);
void launchFwdSm90Fp16(const FlashFwdParams& p, bool heads_fastest, cudaStream_t stream);
void launchBwdSm90Bf16(const FlashBwdParams& p, cudaStream_t stream);
void launchBwdSm90Fp16(const FlashBwdParams& p, cudaStream_t stream);

}  // namespace ts::kernels
