// cudnnReorderFilterAndBias through the public API. odnn's convolutions read INT8x32
// NCHW_VECT_C filters in the plain layout whatever the convolution's reorder type, so the
// reordered filter equals the filter byte for byte, and the bias too when reorderBias is
// set; with reorderBias = 0 the bias output is not written. Bad arguments get BAD_PARAM
// (or NOT_SUPPORTED for 3-D filters) with a message naming them, and write nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/test_util.hpp"

namespace {

class ReorderTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_OK(cudnnCreate(&h));
        ASSERT_OK(cudnnCreateFilterDescriptor(&wd));
        ASSERT_OK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, kK, kC, 3, 3));
        std::mt19937 rng(7);
        w.resize(kK * kC * 9);
        for (auto& v : w) v = static_cast<int8_t>(rng() & 0xff);
        b.resize(kK);
        for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.5f - 3.25f;
        w_out.assign(w.size(), int8_t{0x5a});
        b_out.assign(b.size(), -777.0f);
    }
    void TearDown() override {
        cudnnDestroyFilterDescriptor(wd);
        cudnnDestroy(h);
    }
    bool outputs_untouched() const {
        for (int8_t v : w_out)
            if (v != 0x5a) return false;
        for (float v : b_out)
            if (v != -777.0f) return false;
        return true;
    }

    static constexpr int kK = 40, kC = 64;
    cudnnHandle_t h = nullptr;
    cudnnFilterDescriptor_t wd = nullptr;
    std::vector<int8_t> w, w_out;
    std::vector<float> b, b_out;
};

TEST_F(ReorderTest, FilterAndBiasAreCopied) {
    for (cudnnReorderType_t type : {CUDNN_DEFAULT_REORDER, CUDNN_NO_REORDER}) {
        w_out.assign(w.size(), int8_t{0x5a});
        b_out.assign(b.size(), -777.0f);
        ASSERT_OK(cudnnReorderFilterAndBias(h, wd, type, w.data(), w_out.data(), 1, b.data(), b_out.data()));
        EXPECT_EQ(0, std::memcmp(w.data(), w_out.data(), w.size())) << "reorderType " << type;
        EXPECT_EQ(b, b_out) << "reorderType " << type;
    }
}

TEST_F(ReorderTest, BiasLeftAloneWithoutReorderBias) {
    ASSERT_OK(cudnnReorderFilterAndBias(h, wd, CUDNN_DEFAULT_REORDER, w.data(), w_out.data(), 0, nullptr, nullptr));
    EXPECT_EQ(0, std::memcmp(w.data(), w_out.data(), w.size()));
    ASSERT_OK(cudnnReorderFilterAndBias(h, wd, CUDNN_DEFAULT_REORDER, w.data(), w_out.data(), 0, b.data(),
                                        b_out.data()));
    for (float v : b_out) EXPECT_EQ(v, -777.0f);
}

TEST_F(ReorderTest, InPlaceKeepsTheData) {
    std::vector<int8_t> copy = w;
    std::vector<float> bcopy = b;
    ASSERT_OK(cudnnReorderFilterAndBias(h, wd, CUDNN_DEFAULT_REORDER, w.data(), w.data(), 1, b.data(), b.data()));
    EXPECT_EQ(copy, w);
    EXPECT_EQ(bcopy, b);
}

TEST_F(ReorderTest, BadArguments) {
    auto call = [&](cudnnHandle_t hh, cudnnFilterDescriptor_t f, int type, const void* src, void* dst, int rb,
                    const void* bs, void* bd) {
        return cudnnReorderFilterAndBias(hh, f, static_cast<cudnnReorderType_t>(type), src, dst, rb, bs, bd);
    };
    auto expect = [&](cudnnStatus_t want, cudnnStatus_t got, const char* word) {
        const std::string msg = odnn_test::last_error();
        EXPECT_EQ(std::string(cudnnGetErrorString(want)), cudnnGetErrorString(got)) << msg;
        EXPECT_NE(msg.find(word), std::string::npos) << "message '" << msg << "' should name " << word;
        EXPECT_TRUE(outputs_untouched()) << word;
    };
    expect(CUDNN_STATUS_BAD_PARAM, call(nullptr, wd, 0, w.data(), w_out.data(), 1, b.data(), b_out.data()),
           "handle");
    expect(CUDNN_STATUS_BAD_PARAM, call(h, nullptr, 0, w.data(), w_out.data(), 1, b.data(), b_out.data()),
           "filterDesc");
    expect(CUDNN_STATUS_BAD_PARAM, call(h, wd, 7, w.data(), w_out.data(), 1, b.data(), b_out.data()),
           "reorderType");
    expect(CUDNN_STATUS_BAD_PARAM, call(h, wd, 0, nullptr, w_out.data(), 1, b.data(), b_out.data()), "filterData");
    expect(CUDNN_STATUS_BAD_PARAM, call(h, wd, 0, w.data(), nullptr, 1, b.data(), b_out.data()),
           "reorderedFilterData");
    expect(CUDNN_STATUS_BAD_PARAM, call(h, wd, 0, w.data(), w_out.data(), 1, nullptr, b_out.data()), "biasData");
    expect(CUDNN_STATUS_BAD_PARAM, call(h, wd, 0, w.data(), w_out.data(), 1, b.data(), nullptr),
           "reorderedBiasData");

    cudnnFilterDescriptor_t other = nullptr;
    ASSERT_OK(cudnnCreateFilterDescriptor(&other));
    expect(CUDNN_STATUS_BAD_PARAM, call(h, other, 0, w.data(), w_out.data(), 1, b.data(), b_out.data()),
           "has not been set");
    ASSERT_OK(cudnnSetFilter4dDescriptor(other, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, kK, kC, 3, 3));
    expect(CUDNN_STATUS_BAD_PARAM, call(h, other, 0, w.data(), w_out.data(), 1, b.data(), b_out.data()), "INT8x32");
    ASSERT_OK(cudnnSetFilter4dDescriptor(other, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW_VECT_C, kK, kC, 3, 3));
    expect(CUDNN_STATUS_BAD_PARAM, call(h, other, 0, w.data(), w_out.data(), 1, b.data(), b_out.data()), "INT8x32");
    const int dims5[5] = {kK, kC, 1, 3, 3};
    ASSERT_OK(cudnnSetFilterNdDescriptor(other, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, 5, dims5));
    expect(CUDNN_STATUS_NOT_SUPPORTED, call(h, other, 0, w.data(), w_out.data(), 1, b.data(), b_out.data()),
           "2-D filters");
    cudnnDestroyFilterDescriptor(other);
}

}  // namespace
