// Built for sm_90a only (kernels/CMakeLists.txt); one dtype per file.
#include "flash_bwd_sm90.cuh"

namespace ts::kernels {
void launchBwdSm90Fp16(const FlashBwdParams& p, cudaStream_t stream) {
    launchBwdSm90<__half>(p, stream);
}
}  // namespace ts::kernels
