// cudnnSetTensor and cudnnScaleTensor on the CPU backend: every data type a legacy
// tensor holds, packed and strided layouts; elements outside the view stay untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/test_util.hpp"

namespace {

struct Fixture : ::testing::Test {
    cudnnHandle_t h = nullptr;
    cudnnTensorDescriptor_t d = nullptr;
    void SetUp() override {
        ASSERT_OK(cudnnCreate(&h));
        ASSERT_OK(cudnnCreateTensorDescriptor(&d));
    }
    void TearDown() override {
        cudnnDestroyTensorDescriptor(d);
        cudnnDestroy(h);
    }
};

// Offsets (in elements) of every element of a strided 4-D view, computed here
// independently of the library.
std::vector<int64_t> offsets(const int dims[4], const int strides[4]) {
    std::vector<int64_t> out;
    for (int n = 0; n < dims[0]; ++n)
        for (int c = 0; c < dims[1]; ++c)
            for (int h = 0; h < dims[2]; ++h)
                for (int w = 0; w < dims[3]; ++w)
                    out.push_back(int64_t{n} * strides[0] + int64_t{c} * strides[1] + int64_t{h} * strides[2] +
                                  int64_t{w} * strides[3]);
    return out;
}

template <class T>
void check_set(cudnnHandle_t h, cudnnTensorDescriptor_t d, cudnnDataType_t dt, T value, T poison) {
    const int dims[4] = {2, 3, 4, 5};
    const int layouts[][4] = {{60, 20, 5, 1}, {60, 1, 15, 3}, {200, 50, 11, 2}};
    for (const auto& st : layouts) {
        ASSERT_OK(cudnnSetTensor4dDescriptorEx(d, dt, 2, 3, 4, 5, st[0], st[1], st[2], st[3]));
        size_t bytes = 0;
        ASSERT_OK(cudnnGetTensorSizeInBytes(d, &bytes));
        std::vector<T> buf(bytes / sizeof(T) + 16, poison);  // slack past the end must stay poison too
        ASSERT_OK(cudnnSetTensor(h, d, buf.data(), &value));
        std::vector<bool> in_view(buf.size(), false);
        for (int64_t o : offsets(dims, st)) in_view[static_cast<size_t>(o)] = true;
        for (size_t i = 0; i < buf.size(); ++i) {
            const T expect = in_view[i] ? value : poison;
            ASSERT_EQ(std::memcmp(&buf[i], &expect, sizeof(T)), 0) << "dtype " << dt << " element " << i;
        }
    }
}

TEST_F(Fixture, SetTensorEveryType) {
    check_set<float>(h, d, CUDNN_DATA_FLOAT, -1.5f, NAN);
    check_set<double>(h, d, CUDNN_DATA_DOUBLE, 3.25, NAN);
    check_set<uint16_t>(h, d, CUDNN_DATA_HALF, 0x3c00, 0x7e00);
    check_set<uint16_t>(h, d, CUDNN_DATA_BFLOAT16, 0x4040, 0x7fc0);
    check_set<int8_t>(h, d, CUDNN_DATA_INT8, -7, 0x55);
    check_set<uint8_t>(h, d, CUDNN_DATA_UINT8, 200, 0x55);
    check_set<int32_t>(h, d, CUDNN_DATA_INT32, -123456, 0x55555555);
}

TEST_F(Fixture, SetTensorVectorLayout) {
    // NCHW_VECT_C INT8x4: C = 8 is 2 vectors of 4 channels; every byte is an element.
    ASSERT_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 2, 8, 3, 4));
    size_t bytes = 0;
    ASSERT_OK(cudnnGetTensorSizeInBytes(d, &bytes));
    EXPECT_EQ(bytes, 2u * 8 * 3 * 4);
    std::vector<int8_t> buf(bytes + 8, 0x11);
    const int8_t v = -3;
    ASSERT_OK(cudnnSetTensor(h, d, buf.data(), &v));
    for (size_t i = 0; i < buf.size(); ++i) EXPECT_EQ(buf[i], i < bytes ? v : 0x11) << i;
}

float bf16_round(float f) {  // test's own round-to-nearest-even to bfloat16
    uint32_t x;
    std::memcpy(&x, &f, 4);
    x = (x + 0x7fffu + ((x >> 16) & 1u)) & 0xffff0000u;
    std::memcpy(&f, &x, 4);
    return f;
}

TEST_F(Fixture, ScaleTensorFloatTypes) {
    const int st[4] = {100, 25, 6, 1};  // padded rows: gaps must keep their poison
    const int dims[4] = {2, 3, 4, 5};
    ASSERT_OK(cudnnSetTensor4dDescriptorEx(d, CUDNN_DATA_FLOAT, 2, 3, 4, 5, st[0], st[1], st[2], st[3]));
    std::vector<float> f(200, NAN);
    int k = 0;
    for (int64_t o : offsets(dims, st)) f[static_cast<size_t>(o)] = static_cast<float>(k++ % 17) - 8.0f;
    std::vector<float> ref = f;
    const float alpha = 0.75f;
    ASSERT_OK(cudnnScaleTensor(h, d, f.data(), &alpha));
    for (int64_t o : offsets(dims, st)) ref[static_cast<size_t>(o)] *= alpha;
    for (size_t i = 0; i < f.size(); ++i) {
        if (std::isnan(ref[i])) EXPECT_TRUE(std::isnan(f[i])) << i;
        else EXPECT_EQ(f[i], ref[i]) << i;
    }

    ASSERT_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_DOUBLE, 1, 2, 3, 4));
    std::vector<double> g(24);
    for (int i = 0; i < 24; ++i) g[i] = i - 11.5;
    const double dalpha = -2.5;  // DOUBLE tensors take a double alpha
    ASSERT_OK(cudnnScaleTensor(h, d, g.data(), &dalpha));
    for (int i = 0; i < 24; ++i) EXPECT_EQ(g[i], (i - 11.5) * -2.5);

    ASSERT_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 1, 2, 3, 4));
    std::vector<uint16_t> b(24);
    for (int i = 0; i < 24; ++i) {
        const float v = bf16_round(static_cast<float>(i) * 1.37f - 9.0f);
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        b[i] = static_cast<uint16_t>(bits >> 16);
    }
    std::vector<uint16_t> b0 = b;
    const float a = 3.0f;
    ASSERT_OK(cudnnScaleTensor(h, d, b.data(), &a));
    for (int i = 0; i < 24; ++i) {
        uint32_t bits = static_cast<uint32_t>(b0[i]) << 16;
        float v;
        std::memcpy(&v, &bits, 4);
        const float expect = bf16_round(v * 3.0f);
        bits = static_cast<uint32_t>(b[i]) << 16;
        std::memcpy(&v, &bits, 4);
        EXPECT_EQ(v, expect) << i;
    }
}

TEST_F(Fixture, ScaleTensorHalfMatchesCompilerFloat16) {
    ASSERT_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 1, 1, 1, 4096));
    std::vector<_Float16> x(4096);
    for (int i = 0; i < 4096; ++i) x[i] = static_cast<_Float16>((i - 2048) * 0.0371f);
    std::vector<_Float16> y = x;
    const float a = 1.7f;
    ASSERT_OK(cudnnScaleTensor(h, d, y.data(), &a));
    for (int i = 0; i < 4096; ++i) {
        const _Float16 expect = static_cast<_Float16>(static_cast<float>(x[i]) * a);
        EXPECT_EQ(static_cast<float>(y[i]), static_cast<float>(expect)) << i;
    }
}

TEST_F(Fixture, ScaleTensorIntegersSaturate) {
    ASSERT_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_INT8, 1, 1, 1, 5));
    int8_t v[5] = {-100, -3, 0, 3, 100};
    const float a = 2.5f;
    ASSERT_OK(cudnnScaleTensor(h, d, v, &a));
    const int8_t expect[5] = {-128, -8, 0, 8, 127};  // -7.5 and 7.5 round to even
    for (int i = 0; i < 5; ++i) EXPECT_EQ(v[i], expect[i]) << i;
}

TEST_F(Fixture, BadArguments) {
    float buf[4] = {};
    const float one = 1.0f;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensor(h, d, buf, &one));  // descriptor never set
    ASSERT_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 2, 2));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensor(nullptr, d, buf, &one));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensor(h, nullptr, buf, &one));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensor(h, d, nullptr, &one));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensor(h, d, buf, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnScaleTensor(h, d, buf, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnScaleTensor(h, d, nullptr, &one));
    cudnnTensorDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateTensorDescriptor(&dead));
    ASSERT_OK(cudnnDestroyTensorDescriptor(dead));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensor(h, dead, buf, &one));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDestroyTensorDescriptor(dead));
    for (float f : buf) EXPECT_EQ(f, 0.0f);  // nothing was written by failed calls
}

TEST_F(Fixture, DescriptorRejectsWhatOdnnDivergesOn) {
    // Negative strides are accepted by NVIDIA's library but refused by odnn (docs/DIVERGENCES.md).
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensor4dDescriptorEx(d, CUDNN_DATA_FLOAT, 2, 3, 4, 5, -60, 20, 5, 1));
    const int dims[4] = {2, 3, 4, 5}, strides[4] = {60, 20, 5, 1};
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, 4, nullptr, strides));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetTensorNdDescriptorEx(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, nullptr));
    size_t sz;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetTensorSizeInBytes(d, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetTensorSizeInBytes(nullptr, &sz));
    cudnnFilterDescriptor_t f;
    ASSERT_OK(cudnnCreateFilterDescriptor(&f));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetFilterSizeInBytes(f, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetFilterNdDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, nullptr));
    // NCHW_VECT_C filters whose C is not a multiple of the vector width are refused.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSetFilter4dDescriptor(f, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW_VECT_C, 4, 6, 3, 3));
    ASSERT_OK(cudnnDestroyFilterDescriptor(f));
}

}  // namespace
