// One dtype per file, so that the instantiations compile in parallel.
#include "flash_bwd.cuh"

namespace ts::kernels {
void launchBwdBf16(const FlashBwdParams& p, cudaStream_t stream) {
    dispatchFlashBwd<__nv_bfloat16>(p, stream);
}
}  // namespace ts::kernels
