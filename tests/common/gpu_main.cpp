// main() of the GPU tests: exit 77 (ctest: skipped) when no CUDA device can be used.
#include <gtest/gtest.h>

#include <cstdio>

#include "cudnn.h"

int main(int argc, char** argv) {
    cudnnHandle_t h = nullptr;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) {
        char why[512];
        cudnnGetLastErrorString(why, sizeof why);
        std::printf("no usable CUDA device, skipping: %s\n", why);
        return 77;
    }
    cudnnDestroy(h);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
