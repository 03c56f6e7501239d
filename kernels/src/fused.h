// Plain parameter structs for the fused element-wise kernels of the compiled mode (RMSNorm
// with the residual add, RoPE on the fused q/k/v projection, SwiGLU, cross-entropy): what the
// CUDA launches (fused_ops.cu) and the CPU reference (fused_ref.cpp) see. No LibTorch here;
// fused_api.cpp fills these from tensors.
//
// Note [fused element-wise kernels]:
// Each op is one pass over its tensors, computing in fp32 and rounding once to the storage
// type, where the eager model runs a chain of LibTorch kernels (RMSNorm: a cast, the norm, a
// cast; RoPE: two casts of the tables, four products, a difference, a sum, a stack, for q and
// again for k; SwiGLU: silu and a product). So the fused numbers differ from eager's by
// rounding alone: eager rounds each intermediate to bf16, we round once. Layouts are the
// model's: rows of the (batch·seq) tokens, contiguous.
//  - RMSNorm: out = (x + residual) · rstd · w, rstd = 1/sqrt(mean((x + residual)²) + eps).
//    The residual stream x is fp32 (the model's embedding and additions are), the residual
//    (a projection's output) and out may be autocast's dtype, so that the next linear's cast is
//    a no-op. The sum is written for the backward and the next residual add.
//    Backward: dsum = rstd · (g·w − x̂ · mean(g·w·x̂)) + grad_sum, x̂ = sum · rstd; the weight's
//    gradient Σ_rows g·x̂ is summed per block into dweight_partial (blocks × cols), which the
//    adapter reduces over blocks.
//  - RoPE: on qkv (batch, seq, 3, heads, head_dim), pairs (x0, x1) of q and k rotate by the
//    angle of their position: (x0·c − x1·s, x0·s + x1·c); v is untouched. Forward in place;
//    backward rotates back (the transpose) into a new buffer and copies v's gradient.
//  - SwiGLU: gu (rows, 2f) = [g | u] → h = silu(g) · u (rows, f). Backward: dg = dh·u·σ(g)·(1 +
//    g·(1 − σ(g))), du = dh·silu(g).
//  - Cross-entropy: per row lse = log Σ exp(logits), loss = lse − logits[target]; the mean is
//    taken by the adapter. Backward: dlogits = (softmax − onehot(target)) · dloss / rows, in the
//    logits' dtype: no fp32 copy of the logits is ever made.
//  - Softmax of the naive attention's scores (the course's scale, causal mask and softmax, which
//    autocast runs in fp32 over an fp32 copy): x = round(score · scale) (the scaling eager does
//    in the scores' dtype), keys after the query masked, p = exp(x − lse), probs = round(p) (the
//    cast autocast makes before the next matmul), lse = log Σ exp(x) kept per row. Backward
//    recomputes p from the scores and lse: ds = p · (dp − Σ dp·p), rounded, times the scale,
//    rounded (eager's cast back and its scaling's backward), 0 where masked.
#pragma once

#include <cstdint>

// Declared as the CUDA runtime declares it, so that the CPU reference builds without CUDA.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

namespace ts::kernels {

// Storage types of the tensors the fused kernels read and write (they compute in fp32).
enum class Storage { F32, BF16, F16 };

struct RmsNormFwdParams {
    const float* x = nullptr;        // (rows, cols)
    const void* residual = nullptr;  // (rows, cols) in residual_dtype, or null (plain norm)
    const float* weight = nullptr;   // (cols)
    float* sum = nullptr;            // (rows, cols): x + residual; null without a residual
    void* out = nullptr;             // (rows, cols) in out_dtype
    float* rstd = nullptr;           // (rows)
    int64_t rows = 0;
    int cols = 0;
    float eps = 1e-5f;
    Storage residual_dtype = Storage::F32, out_dtype = Storage::F32;
};

struct RmsNormBwdParams {
    const void* grad_out = nullptr;    // (rows, cols) in out_dtype
    const float* grad_sum = nullptr;   // (rows, cols) or null: a gradient reaching the sum itself
    const float* x = nullptr;          // the normalised input (x + residual), (rows, cols)
    const float* rstd = nullptr;       // (rows)
    const float* weight = nullptr;     // (cols)
    float* dx = nullptr;               // (rows, cols)
    void* dresidual = nullptr;         // (rows, cols) in residual_dtype, or null
    float* dweight_partial = nullptr;  // (blocks, cols)
    int blocks = 1;                    // the launch's grid (CPU reference: 1)
    int64_t rows = 0;
    int cols = 0;
    Storage out_dtype = Storage::F32, residual_dtype = Storage::F32;
};

struct RopeParams {
    const void* src = nullptr;   // (batch, seq, 3, heads, head_dim), contiguous
    void* dst = nullptr;         // the same layout; == src for the forward (in place)
    const float* cos = nullptr;  // (>= seq, head_dim / 2), contiguous
    const float* sin = nullptr;
    int64_t batch = 0, seq = 0;
    int heads = 0, head_dim = 0;
    bool inverse = false;  // backward: rotate by −angle, and copy v's part
    Storage dtype = Storage::F32;
};

struct SwigluParams {
    const void* gu = nullptr;      // (rows, 2f)
    void* h = nullptr;             // forward: (rows, f)
    const void* grad_h = nullptr;  // backward: (rows, f)
    void* grad_gu = nullptr;       // backward: (rows, 2f)
    int64_t rows = 0;
    int f = 0;
    Storage dtype = Storage::F32;
};

struct SoftmaxParams {
    const void* scores = nullptr;      // (rows, cols) contiguous: q·kᵀ, unscaled
    void* probs = nullptr;             // forward: (rows, cols)
    float* lse = nullptr;              // forward writes, backward reads: (rows)
    const void* grad_probs = nullptr;  // backward: (rows, cols)
    void* grad_scores = nullptr;       // backward: (rows, cols)
    int64_t rows = 0, queries = 1;     // row r is query r % queries (rows = batch·heads·queries)
    int cols = 0;
    float scale = 1.f;
    bool causal = false;  // key c of query q masked when c > q
    Storage dtype = Storage::F32;
};

struct CrossEntropyParams {
    const void* logits = nullptr;      // (rows, vocab), rows `row_stride` apart
    const int64_t* targets = nullptr;  // (rows), each in [0, vocab)
    float* loss = nullptr;             // forward: (rows)
    float* lse = nullptr;              // forward writes, backward reads: (rows)
    const float* grad_loss =
        nullptr;                  // backward: the mean loss's gradient (one value, on the device)
    void* grad_logits = nullptr;  // backward: (rows, vocab), contiguous
    int64_t rows = 0, row_stride = 0;
    int vocab = 0;
    Storage dtype = Storage::F32;
};

// AdamW over many tensors in one launch (the optimizer of the compiled mode's model, Note
// [low-precision weight copies] in fused_ops.cu): fp32 parameters and moments, gradients in
// grad_dtype (fp32, or the dtype of the parameters' low-precision copies, whose gradients they
// are), and the updated parameters also written to those copies when `copy` is set. The
// arithmetic is LibTorch's _fused_adamw_ (fp32, the step count read on the device).
constexpr int kAdamWMaxTensors = 24;
constexpr int kAdamWChunk = 4096;  // elements per block
struct AdamWTensor {
    float* param = nullptr;
    const void* grad = nullptr;
    float* exp_avg = nullptr;
    float* exp_avg_sq = nullptr;
    const float* step = nullptr;  // the step number this update is (already advanced)
    void* copy = nullptr;         // or null
    int64_t numel = 0;
    bool vec4 = false;  // numel % 4 == 0 and every pointer aligned to 4 values: vector accesses
};
struct AdamWParams {
    AdamWTensor t[kAdamWMaxTensors];
    int64_t block_start[kAdamWMaxTensors + 1] = {};  // first block of each tensor; [count] = grid
    int count = 0;
    Storage grad_dtype = Storage::F32, copy_dtype = Storage::BF16;
    bool has_copy = false;  // every tensor of the launch has a copy, or none
    float lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
};

// CUDA launches on `stream` (fused_ops.cu); throw std::runtime_error on a CUDA error.
// rmsNormBwdBlocks: the grid the backward launch uses for `rows` (dweight_partial's rows).
void launchRmsNormFwd(const RmsNormFwdParams& p, cudaStream_t stream);
int rmsNormBwdBlocks(int64_t rows);
void launchRmsNormBwd(const RmsNormBwdParams& p, cudaStream_t stream);
void launchRope(const RopeParams& p, cudaStream_t stream);
void launchSwigluFwd(const SwigluParams& p, cudaStream_t stream);
void launchSwigluBwd(const SwigluParams& p, cudaStream_t stream);
void launchSoftmaxFwd(const SoftmaxParams& p, cudaStream_t stream);
void launchSoftmaxBwd(const SoftmaxParams& p, cudaStream_t stream);
void launchCrossEntropyFwd(const CrossEntropyParams& p, cudaStream_t stream);
void launchCrossEntropyBwd(const CrossEntropyParams& p, cudaStream_t stream);
void launchAdamW(const AdamWParams& p, cudaStream_t stream);

// The same computations on the CPU, element by element in fp32 (fused_ref.cpp): the CPU path
// of the adapter and the reference the CPU tests hold against LibTorch's ops.
void rmsNormFwdRef(const RmsNormFwdParams& p);
void rmsNormBwdRef(const RmsNormBwdParams& p);  // p.blocks must be 1
void ropeRef(const RopeParams& p);
void swigluFwdRef(const SwigluParams& p);
void swigluBwdRef(const SwigluParams& p);
void softmaxFwdRef(const SoftmaxParams& p);
void softmaxBwdRef(const SoftmaxParams& p);
void crossEntropyFwdRef(const CrossEntropyParams& p);
void crossEntropyBwdRef(const CrossEntropyParams& p);
void adamWRef(const AdamWParams& p);

}  // namespace ts::kernels
