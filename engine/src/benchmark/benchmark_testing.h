// Test hooks of the engine, for tests only.
#pragma once

namespace ts::testing {

// Makes the benchmark throw LibTorch's out-of-memory error at measured-or-warm-up step
// `step` (0-based) of the next point that runs, as a CUDA allocation failure would; -1 off.
void injectOomAtStep(int step);

}  // namespace ts::testing
