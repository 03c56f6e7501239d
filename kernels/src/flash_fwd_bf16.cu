// One dtype per file, so that the instantiations compile in parallel.
#include "flash_fwd.cuh"

namespace ts::kernels {
void launchFwdBf16(const FlashFwdParams& p, cudaStream_t stream) {
    dispatchFlashFwd<__nv_bfloat16>(p, stream);
}
}  // namespace ts::kernels
