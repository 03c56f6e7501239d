// Built for sm_90a only (kernels/CMakeLists.txt); one dtype per file.
#include "flash_bwd_sm90.cuh"

namespace ts::kernels {
void launchBwdSm90Bf16(const FlashBwdParams& p, cudaStream_t stream) {
    launchBwdSm90<__nv_bfloat16>(p, stream);
}
}  // namespace ts::kernels
