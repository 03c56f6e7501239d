// Head dim 256 (bf16, fp16), apart from the per-dtype files so that it compiles in parallel.
#include "flash_fwd.cuh"

namespace ts::kernels {
template void runFlashFwdHeadDim<__nv_bfloat16, 256>(const FlashFwdParams&, cudaStream_t);
template void runFlashFwdHeadDim<__half, 256>(const FlashFwdParams&, cudaStream_t);
}  // namespace ts::kernels
