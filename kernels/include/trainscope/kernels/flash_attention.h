// This project's FlashAttention-2 CUDA kernels, behind a LibTorch adapter that checks the
// tensors and fills the kernels' parameter structs. Layout (batch, heads, seq, head_dim);
// q and k/v may have different lengths; head_dim one of kFlashHeadDims (on Hopper in bf16 / fp16
// also 80, flashPaddedHeadDim); fp32, bf16 or fp16.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

namespace ts::kernels {

// The head dims the kernels are built for, ascending (TS_HEADDIM_SWITCH in flash_common.cuh
// lists the same). ts::flashAttention runs any other head dim up to the last zero-padded to
// the next one up (engine/src/nn/attention_flash.cpp).
inline constexpr int64_t kFlashHeadDims[] = {16, 32, 64, 96, 128, 256};

// Whether this build has the kernels (a CUDA toolkit and a CUDA LibTorch were found).
bool flashKernelsBuilt();

// Which kernels run on a GPU of this compute capability, in words: on sm_90 (H100, H200) the
// wgmma kernels for bf16 / fp16 at head dims 64, 80 and 128 and the mma.sync kernels at the other
// head dims (16, 32, 96, 256); elsewhere (sm_80+) the mma.sync kernels at every head dim. fp32
// always runs the FMA kernels (flash_fp32.cu). Environment TRAINSCOPE_FLASH_SM90=0 turns the
// wgmma kernels off. Empty when this build has no kernels or the GPU is too old.
std::string flashKernelPath(int compute_major, int compute_minor);

// The head dim that runs head dim d fastest for q (its dtype and device): the next built one
// up, except on Hopper with the wgmma kernels (bf16 / fp16), where d 80 (the 2.7B preset's)
// runs as it is, inside their 128 tile (see Note [head dims inside the tile] in
// kernels/src/flash_fwd_sm90.cuh), and any other d in (32, 128] padded to 64 or 128, their dims:
// at d 80 the wgmma kernel at 128 beat the mma.sync one at 96 (docs/ATTENTION.md). d itself
// where the kernels take it as it is (flashUnsupportedReason then accepts it); 0 above 256.
int64_t flashPaddedHeadDim(int64_t d, const at::Tensor& q);

// Why flashForward would refuse these inputs, or empty if it would run them.
std::string flashUnsupportedReason(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

struct FlashForwardResult {
    at::Tensor out;  // like q
    at::Tensor
        lse;  // (batch, heads, seqlen_q) fp32, natural-log row logsumexp of the scaled scores
};

// Forward. `out` / `lse`, when given, are written in place (tests poison them first).
// `scale` defaults to 1/sqrt(head_dim). Throws std::invalid_argument on bad inputs and
// std::runtime_error on a CUDA error.
FlashForwardResult flashForward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                bool causal, std::optional<double> scale = std::nullopt,
                                at::Tensor out = {}, at::Tensor lse = {});

struct FlashBackwardResult {
    at::Tensor dq, dk, dv;
};

// Backward from the forward's out and lse: preprocess, dQ/dK/dV loop, dQ conversion.
FlashBackwardResult flashBackward(const at::Tensor& dout, const at::Tensor& q, const at::Tensor& k,
                                  const at::Tensor& v, const at::Tensor& out, const at::Tensor& lse,
                                  bool causal, std::optional<double> scale = std::nullopt,
                                  at::Tensor dq = {}, at::Tensor dk = {}, at::Tensor dv = {});

}  // namespace ts::kernels
