// Built for sm_90a only (kernels/CMakeLists.txt); one dtype per file.
#include "flash_fwd_sm90.cuh"

namespace ts::kernels {
void launchFwdSm90Bf16(const FlashFwdParams& p, bool heads_fastest, cudaStream_t stream) {
    launchFwdSm90<__nv_bfloat16>(p, heads_fastest, stream);
}
}  // namespace ts::kernels
