// cudnnSetTensor / cudnnScaleTensor on the CUDA backend, checked element by element
// against the CPU backend on the same data (same descriptors, same inputs).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/test_util.hpp"
#include "odnn/odnn.h"

namespace {

cudnnHandle_t make_handle(const char* backend) {
    setenv("ODNN_BACKEND", backend, 1);
    cudnnHandle_t h = nullptr;
    EXPECT_EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS) << odnn_test::last_error();
    setenv("ODNN_BACKEND", "cuda", 1);
    return h;
}

struct GpuFill : ::testing::Test {
    cudnnHandle_t gpu = nullptr, cpu = nullptr;
    cudnnTensorDescriptor_t d = nullptr;
    cudaStream_t stream = nullptr;
    void SetUp() override {
        gpu = make_handle("cuda");
        cpu = make_handle("cpu");
        ASSERT_STREQ(odnnGetHandleBackend(gpu), "cuda");
        ASSERT_STREQ(odnnGetHandleBackend(cpu), "cpu");
        ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
        ASSERT_OK(cudnnSetStream(gpu, stream));
        ASSERT_OK(cudnnCreateTensorDescriptor(&d));
    }
    void TearDown() override {
        cudnnDestroyTensorDescriptor(d);
        cudnnDestroy(gpu);
        cudnnDestroy(cpu);
        cudaStreamDestroy(stream);
    }

    // Runs `op` on both backends over the same initial bytes and compares every byte.
    template <class Op>
    void compare(const std::vector<unsigned char>& init, Op op) {
        std::vector<unsigned char> host = init;
        void* dev = nullptr;
        ASSERT_EQ(cudaMalloc(&dev, init.size()), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(dev, init.data(), init.size(), cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_OK(op(gpu, dev));
        ASSERT_OK(op(cpu, host.data()));
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        std::vector<unsigned char> back(init.size());
        ASSERT_EQ(cudaMemcpy(back.data(), dev, init.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        cudaFree(dev);
        size_t changed = 0;
        for (size_t i = 0; i < init.size(); ++i) {
            ASSERT_EQ(back[i], host[i]) << "byte " << i;
            changed += host[i] != init[i];
        }
        // Low bytes of small exact floats stay zero when scaled: ask for a tenth of the bytes.
        EXPECT_GT(changed, init.size() / 10) << "the operation barely changed the buffer";
    }
};

TEST_F(GpuFill, SetTensorMatchesCpu) {
    const int layouts[][4] = {{60, 20, 5, 1}, {60, 1, 15, 3}, {200, 50, 11, 2}};
    for (int dt : {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_INT8,
                   CUDNN_DATA_INT32, CUDNN_DATA_UINT8})
        for (const auto& st : layouts) {
            ASSERT_OK(cudnnSetTensor4dDescriptorEx(d, static_cast<cudnnDataType_t>(dt), 2, 3, 4, 5, st[0], st[1],
                                                   st[2], st[3]));
            size_t bytes = 0;
            ASSERT_OK(cudnnGetTensorSizeInBytes(d, &bytes));
            std::vector<unsigned char> init(bytes + 64, 0xa5);
            const unsigned char value[8] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0x3c, 0x1e, 0x40};
            compare(init, [&](cudnnHandle_t h, void* p) { return cudnnSetTensor(h, d, p, value); });
        }
}

TEST_F(GpuFill, ScaleTensorMatchesCpu) {
    for (int dt : {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_INT8,
                   CUDNN_DATA_INT32}) {
        ASSERT_OK(cudnnSetTensor4dDescriptorEx(d, static_cast<cudnnDataType_t>(dt), 4, 16, 9, 7, 16 * 9 * 7 + 5, 1,
                                               16 * 7, 16));
        size_t bytes = 0;
        ASSERT_OK(cudnnGetTensorSizeInBytes(d, &bytes));
        std::vector<unsigned char> init(bytes + 64);
        // Finite, moderate values for every type: small integers in each byte lane.
        for (size_t i = 0; i < init.size(); ++i) init[i] = static_cast<unsigned char>((i * 37) % 61 + 1);
        if (dt == CUDNN_DATA_FLOAT || dt == CUDNN_DATA_DOUBLE || dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16) {
            // Fill with proper small numbers of the type so scaling is meaningful.
            ASSERT_OK(cudnnSetTensor4dDescriptor(d, static_cast<cudnnDataType_t>(dt) == CUDNN_DATA_DOUBLE
                                                        ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC,
                                                 static_cast<cudnnDataType_t>(dt), 4, 16, 9, 7));
            ASSERT_OK(cudnnGetTensorSizeInBytes(d, &bytes));
            init.assign(bytes, 0);
            const size_t n = bytes / (dt == CUDNN_DATA_DOUBLE ? 8 : dt == CUDNN_DATA_FLOAT ? 4 : 2);
            for (size_t i = 0; i < n; ++i) {
                const float v = static_cast<float>(static_cast<int>(i % 23) - 11) * 0.5f;
                if (dt == CUDNN_DATA_DOUBLE) { const double x = v; std::memcpy(&init[i * 8], &x, 8); }
                else if (dt == CUDNN_DATA_FLOAT) std::memcpy(&init[i * 4], &v, 4);
                else if (dt == CUDNN_DATA_HALF) { const _Float16 x = static_cast<_Float16>(v); std::memcpy(&init[i * 2], &x, 2); }
                else { uint32_t b; std::memcpy(&b, &v, 4); const uint16_t x = static_cast<uint16_t>(b >> 16); std::memcpy(&init[i * 2], &x, 2); }
            }
        }
        const double dalpha = 1.5;
        const float falpha = 1.5f;
        compare(init, [&](cudnnHandle_t h, void* p) {
            return cudnnScaleTensor(h, d, p, dt == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&dalpha) : &falpha);
        });
    }
}

}  // namespace
