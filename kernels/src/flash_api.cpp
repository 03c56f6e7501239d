// The LibTorch side of the attention kernels: checks device, dtype, shape and strides, fills
// the parameter structs and launches on the current stream. Without CUDA it still builds and
// says so.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <stdexcept>

#include "trainscope/kernels/flash_attention.h"

#ifdef TRAINSCOPE_FLASH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "flash.h"
#endif

namespace ts::kernels {

namespace {

std::string shapeOf(const at::Tensor& t) {
    std::string s = "(";
    for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
    return s + ")";
}

[[noreturn]] void bad(const std::string& msg) {
    throw std::invalid_argument("flash attention: " + msg);
}

// "16, 32, 64, 96, 128 or 256"
std::string builtHeadDims() {
    std::string s;
    const size_t n = std::size(kFlashHeadDims);
    for (size_t i = 0; i < n; ++i)
        s += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::to_string(kFlashHeadDims[i]);
    return s;
}

}  // namespace

bool flashKernelsBuilt() {
#ifdef TRAINSCOPE_FLASH_CUDA
    return true;
#else
    return false;
#endif
}

#ifdef TRAINSCOPE_FLASH_CUDA
namespace {
bool sm90Off() {
    const char* env = std::getenv("TRAINSCOPE_FLASH_SM90");
    return env && std::string(env) == "0";
}
constexpr bool kSm90Built =
#ifdef TRAINSCOPE_FLASH_SM90A
    true;
#else
    false;
#endif
}  // namespace

bool sm90KernelsOn(int major, int minor) {
    return kSm90Built && major == 9 && minor == 0 && !sm90Off();
}

bool sm90Usable() {
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        return false;
    return sm90KernelsOn(major, minor);
}
#endif

#if defined(TRAINSCOPE_FLASH_CUDA) && !defined(TRAINSCOPE_FLASH_SM90A)
// Built without sm_90a code (the CUDA architectures leave out 90): sm90KernelsOn() is false, so
// the launch code never calls these.
[[noreturn]] static void noSm90() {
    throw std::logic_error("flash attention: the sm_90a kernels are not built");
}
void launchFwdSm90Bf16(const FlashFwdParams&, bool, cudaStream_t) { noSm90(); }
void launchFwdSm90Fp16(const FlashFwdParams&, bool, cudaStream_t) { noSm90(); }
void launchBwdSm90Bf16(const FlashBwdParams&, cudaStream_t) { noSm90(); }
void launchBwdSm90Fp16(const FlashBwdParams&, cudaStream_t) { noSm90(); }
#endif

std::string flashKernelPath(int major, int minor) {
    if (!flashKernelsBuilt() || major < 8) return {};
#ifdef TRAINSCOPE_FLASH_CUDA
    if (sm90KernelsOn(major, minor))
        return "wgmma (sm_90a) for bf16/fp16 at head dims 64, 80 and 128, mma.sync at 16, 32, 96 "
               "and 256";
    if (kSm90Built && major == 9 && minor == 0)
        return "mma.sync (sm_80+); the wgmma kernels are off (TRAINSCOPE_FLASH_SM90=0)";
#endif
    return "mma.sync (sm_80+)";
}

#ifdef TRAINSCOPE_FLASH_CUDA
namespace {
// Whether q's dtype and device run the wgmma kernels.
bool onWgmma(const at::Tensor& q) {
    if (!q.is_cuda() || (q.scalar_type() != at::kBFloat16 && q.scalar_type() != at::kHalf))
        return false;
    const auto* prop = at::cuda::getDeviceProperties(q.device().index());
    return sm90KernelsOn(prop->major, prop->minor);
}
}  // namespace
#endif

int64_t flashPaddedHeadDim(int64_t d, const at::Tensor& q) {
#ifdef TRAINSCOPE_FLASH_CUDA
    if (d > 32 && d <= 128 && onWgmma(q)) {
        if (sm90InTile(static_cast<int>(d))) return d;  // inside the 128 tile, no copies
        return d <= 64 ? 64 : 128;
    }
#else
    (void)q;
#endif
    for (int64_t k : kFlashHeadDims)
        if (d <= k) return k;
    return 0;
}

std::string flashUnsupportedReason(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    if (!flashKernelsBuilt())
        return "this build has no CUDA attention kernels (not built with CUDA)";
    if (!q.defined() || !k.defined() || !v.defined()) return "undefined tensor";
    if (!q.is_cuda() || !k.is_cuda() || !v.is_cuda()) return "the kernels need CUDA tensors";
    if (q.device() != k.device() || q.device() != v.device()) return "q, k, v on different devices";
    const auto dt = q.scalar_type();
    if (dt != at::kFloat && dt != at::kBFloat16 && dt != at::kHalf)
        return std::string("dtype ") + c10::toString(dt) + " (fp32, bf16 or fp16 only)";
    if (k.scalar_type() != dt || v.scalar_type() != dt) return "q, k, v of different dtypes";
    if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
        return "expected (batch, heads, seq, head_dim) tensors, got " + shapeOf(q) + ", " +
               shapeOf(k) + ", " + shapeOf(v);
    const int64_t d = q.size(3);
    const bool in_tile =
#ifdef TRAINSCOPE_FLASH_CUDA
        sm90InTile(static_cast<int>(d)) && onWgmma(q);
#else
        false;
#endif
    if (!in_tile && std::find(std::begin(kFlashHeadDims), std::end(kFlashHeadDims), d) ==
                        std::end(kFlashHeadDims))
        return "head_dim " + std::to_string(d) + " (" + builtHeadDims() +
               " only; ts::flashAttention pads others up to " +
               std::to_string(kFlashHeadDims[std::size(kFlashHeadDims) - 1]) + ")";
    if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != q.size(1) ||
        v.size(1) != q.size(1) || k.size(3) != d || v.size(3) != d || v.size(2) != k.size(2))
        return "shapes do not match: q " + shapeOf(q) + ", k " + shapeOf(k) + ", v " + shapeOf(v);
    if (q.size(2) < 1 || k.size(2) < 1) return "empty sequence";
    if (q.size(0) * q.size(1) > 65535) return "batch × heads above 65535";
    if (q.size(2) > (int64_t{1} << 30) || k.size(2) > (int64_t{1} << 30))
        return "sequence too long";
#ifdef TRAINSCOPE_FLASH_CUDA
    const auto* prop = at::cuda::getDeviceProperties(q.device().index());
    if (prop->major < 8) return "the kernels need compute capability 8.0 or newer (sm_80, sm_90)";
#endif
    return {};
}

#ifdef TRAINSCOPE_FLASH_CUDA
namespace {

// The kernels read rows with 16-byte loads: last dim contiguous, rows and base aligned.
at::Tensor aligned(const at::Tensor& t) {
    const int64_t vec = 16 / t.element_size();
    const bool ok = t.stride(3) == 1 && t.stride(2) % vec == 0 && t.stride(1) % vec == 0 &&
                    t.stride(0) % vec == 0 && reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
    return ok ? t : t.contiguous();
}

void checkOut(const at::Tensor& out, const at::Tensor& like, const char* name) {
    if (out.sizes() != like.sizes() || out.scalar_type() != like.scalar_type() ||
        out.device() != like.device())
        bad(std::string(name) + " must match " + shapeOf(like) + " " +
            c10::toString(like.scalar_type()));
    const int64_t vec = 16 / out.element_size();
    if (out.stride(3) != 1 || out.stride(2) % 2 != 0 ||
        reinterpret_cast<uintptr_t>(out.data_ptr()) % 16 != 0 ||
        (out.scalar_type() == at::kFloat && out.stride(2) % vec != 0))
        bad(std::string(name) + " needs a contiguous, aligned last dimension");
}

DType dtypeOf(const at::Tensor& t) {
    switch (t.scalar_type()) {
        case at::kFloat:
            return DType::FP32;
        case at::kBFloat16:
            return DType::BF16;
        default:
            return DType::FP16;
    }
}

void fillCommon(FlashFwdParams& p, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                const at::Tensor& o, bool causal, double scale) {
    p.q = q.data_ptr();
    p.k = k.data_ptr();
    p.v = v.data_ptr();
    p.o = o.data_ptr();
    p.q_batch_stride = q.stride(0), p.q_head_stride = q.stride(1), p.q_row_stride = q.stride(2);
    p.k_batch_stride = k.stride(0), p.k_head_stride = k.stride(1), p.k_row_stride = k.stride(2);
    p.v_batch_stride = v.stride(0), p.v_head_stride = v.stride(1), p.v_row_stride = v.stride(2);
    p.o_batch_stride = o.stride(0), p.o_head_stride = o.stride(1), p.o_row_stride = o.stride(2);
    p.batch = static_cast<int>(q.size(0));
    p.heads = static_cast<int>(q.size(1));
    p.seqlen_q = static_cast<int>(q.size(2));
    p.seqlen_k = static_cast<int>(k.size(2));
    p.head_dim = static_cast<int>(q.size(3));
    p.scale = static_cast<float>(scale);
    p.scale_log2 = static_cast<float>(scale * 1.4426950408889634);
    p.causal = causal;
    p.dtype = dtypeOf(q);
}

}  // namespace
#endif

FlashForwardResult flashForward(const at::Tensor& q_in, const at::Tensor& k_in,
                                const at::Tensor& v_in, bool causal, std::optional<double> scale,
                                at::Tensor out, at::Tensor lse) {
    if (const std::string why = flashUnsupportedReason(q_in, k_in, v_in); !why.empty()) bad(why);
#ifdef TRAINSCOPE_FLASH_CUDA
    const c10::cuda::CUDAGuard guard(q_in.device());
    const at::Tensor q = aligned(q_in), k = aligned(k_in), v = aligned(v_in);
    if (out.defined())
        checkOut(out, q, "out");
    else
        out = at::empty_like(q, at::MemoryFormat::Contiguous);
    const auto lse_opts = q.options().dtype(at::kFloat);
    if (lse.defined()) {
        if (lse.sizes() != at::IntArrayRef{q.size(0), q.size(1), q.size(2)} ||
            lse.scalar_type() != at::kFloat || !lse.is_contiguous() || lse.device() != q.device())
            bad("lse must be a contiguous fp32 tensor of shape (batch, heads, seqlen_q)");
    } else {
        lse = at::empty({q.size(0), q.size(1), q.size(2)}, lse_opts);
    }
    FlashFwdParams p;
    fillCommon(p, q, k, v, out, causal,
               scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3)))));
    p.lse = lse.data_ptr<float>();
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    switch (p.dtype) {
        case DType::BF16:
            launchFwdBf16(p, stream);
            break;
        case DType::FP16:
            launchFwdFp16(p, stream);
            break;
        case DType::FP32:
            launchFwdFp32(p, stream);
            break;
    }
    return {out, lse};
#else
    (void)causal, (void)scale, (void)out, (void)lse;
    bad("not built with CUDA");
#endif
}

FlashBackwardResult flashBackward(const at::Tensor& dout_in, const at::Tensor& q_in,
                                  const at::Tensor& k_in, const at::Tensor& v_in,
                                  const at::Tensor& out_in, const at::Tensor& lse, bool causal,
                                  std::optional<double> scale, at::Tensor dq, at::Tensor dk,
                                  at::Tensor dv) {
    if (const std::string why = flashUnsupportedReason(q_in, k_in, v_in); !why.empty()) bad(why);
#ifdef TRAINSCOPE_FLASH_CUDA
    if (dout_in.sizes() != q_in.sizes() || out_in.sizes() != q_in.sizes() ||
        dout_in.scalar_type() != q_in.scalar_type() || out_in.scalar_type() != q_in.scalar_type())
        bad("dout and out must match q " + shapeOf(q_in));
    if (lse.sizes() != at::IntArrayRef{q_in.size(0), q_in.size(1), q_in.size(2)} ||
        lse.scalar_type() != at::kFloat || !lse.is_contiguous())
        bad("lse must be the forward's contiguous fp32 (batch, heads, seqlen_q) tensor");
    const c10::cuda::CUDAGuard guard(q_in.device());
    const at::Tensor q = aligned(q_in), k = aligned(k_in), v = aligned(v_in);
    const at::Tensor dout = aligned(dout_in), out = aligned(out_in);
    if (dq.defined())
        checkOut(dq, q, "dq");
    else
        dq = at::empty_like(q, at::MemoryFormat::Contiguous);
    if (dk.defined())
        checkOut(dk, k, "dk");
    else
        dk = at::empty_like(k, at::MemoryFormat::Contiguous);
    if (dv.defined())
        checkOut(dv, v, "dv");
    else
        dv = at::empty_like(v, at::MemoryFormat::Contiguous);

    FlashBwdParams p;
    fillCommon(p, q, k, v, out, causal,
               scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3)))));
    p.lse = lse.data_ptr<float>();
    p.dout = dout.data_ptr();
    p.dq = dq.data_ptr();
    p.dk = dk.data_ptr();
    p.dv = dv.data_ptr();
    p.do_batch_stride = dout.stride(0), p.do_head_stride = dout.stride(1),
    p.do_row_stride = dout.stride(2);
    p.dq_batch_stride = dq.stride(0), p.dq_head_stride = dq.stride(1),
    p.dq_row_stride = dq.stride(2);
    p.dk_batch_stride = dk.stride(0), p.dk_head_stride = dk.stride(1),
    p.dk_row_stride = dk.stride(2);
    p.dv_batch_stride = dv.stride(0), p.dv_head_stride = dv.stride(1),
    p.dv_row_stride = dv.stride(2);
    const int64_t bh = q.size(0) * q.size(1);
    p.seqlen_q_padded = static_cast<int>((q.size(2) + kSeqPad - 1) / kSeqPad * kSeqPad);
    const auto f32 = q.options().dtype(at::kFloat);
    at::Tensor dsum = at::empty({bh, p.seqlen_q_padded}, f32);
    at::Tensor lse2 = at::empty({bh, p.seqlen_q_padded}, f32);
    at::Tensor dq_accum;
    if (p.dtype != DType::FP32) {
        dq_accum =
            at::empty({bh, p.seqlen_q_padded, q.size(3)}, f32);  // cleared by the preprocess launch
        p.dq_accum = dq_accum.data_ptr<float>();
    }
    p.dsum = dsum.data_ptr<float>();
    p.lse_log2 = lse2.data_ptr<float>();
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    switch (p.dtype) {
        case DType::BF16:
            launchBwdBf16(p, stream);
            break;
        case DType::FP16:
            launchBwdFp16(p, stream);
            break;
        case DType::FP32:
            launchBwdFp32(p, stream);
            break;
    }
    return {dq, dk, dv};
#else
    (void)dout_in, (void)out_in, (void)lse, (void)causal, (void)scale, (void)dq, (void)dk, (void)dv;
    bad("not built with CUDA");
#endif
}

}  // namespace ts::kernels
