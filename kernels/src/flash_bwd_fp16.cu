// One dtype per file, so that the instantiations compile in parallel.
#include "flash_bwd.cuh"

namespace ts::kernels {
void launchBwdFp16(const FlashBwdParams& p, cudaStream_t stream) {
    dispatchFlashBwd<__half>(p, stream);
}
}  // namespace ts::kernels
