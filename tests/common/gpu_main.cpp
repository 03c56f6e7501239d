// main() for GPU tests: reports SKIPPED (exit 77, CTest's SKIP_RETURN_CODE) without a GPU.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cstdio>

int main(int argc, char** argv) {
    if (!torch::cuda::is_available()) {
        std::printf("SKIPPED: no CUDA device available\n");
        return 77;
    }
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
