// One dtype per file, so that the instantiations compile in parallel.
#include "flash_fwd.cuh"

namespace ts::kernels {
void launchFwdFp16(const FlashFwdParams& p, cudaStream_t stream) {
    dispatchFlashFwd<__half>(p, stream);
}
}  // namespace ts::kernels
