// Head dim 96 (bf16, fp16), apart from the per-dtype files so that it compiles in parallel.
#include "flash_bwd.cuh"

namespace ts::kernels {
template void runFlashBwdHeadDim<__nv_bfloat16, 96>(const FlashBwdParams&, cudaStream_t);
template void runFlashBwdHeadDim<__half, 96>(const FlashBwdParams&, cudaStream_t);
}  // namespace ts::kernels
