// The convolution family through the public API: bad input gets cuDNN's status and a
// message naming the problem; algorithm queries, workspace protocol, the fused forward,
// backward bias and im2col on small hand-checked problems.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/test_util.hpp"

namespace {

class ConvApi : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_OK(cudnnCreate(&h));
        ASSERT_OK(cudnnCreateTensorDescriptor(&x));
        ASSERT_OK(cudnnCreateTensorDescriptor(&y));
        ASSERT_OK(cudnnCreateTensorDescriptor(&b));
        ASSERT_OK(cudnnCreateFilterDescriptor(&w));
        ASSERT_OK(cudnnCreateConvolutionDescriptor(&c));
        ASSERT_OK(cudnnCreateActivationDescriptor(&act));
        // x 2x4x6x6, w 6x4x3x3, pad 1 -> y 2x6x6x6.
        ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 6, 6));
        ASSERT_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 6, 6, 6));
        ASSERT_OK(cudnnSetTensor4dDescriptor(b, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 6, 1, 1));
        ASSERT_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 6, 4, 3, 3));
        ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        ASSERT_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
        xs.assign(2 * 4 * 36, 1.0f);
        ws.assign(2 * 6 * 36, 1.0f);  // large enough for w too
        ys.assign(2 * 6 * 36, 0.0f);
        work.assign(1 << 22, 0);
    }
    void TearDown() override {
        cudnnDestroyActivationDescriptor(act);
        cudnnDestroyConvolutionDescriptor(c);
        cudnnDestroyFilterDescriptor(w);
        cudnnDestroyTensorDescriptor(b);
        cudnnDestroyTensorDescriptor(y);
        cudnnDestroyTensorDescriptor(x);
        cudnnDestroy(h);
        odnn_test::last_error();
    }

    cudnnStatus_t fwd(cudnnConvolutionFwdAlgo_t algo, void* wsp, size_t wsb, const void* alpha = nullptr,
                      const void* beta = nullptr) {
        return cudnnConvolutionForward(h, alpha ? alpha : &one, x, xs.data(), w, ws.data(), c, algo, wsp, wsb,
                                       beta ? beta : &zero, y, ys.data());
    }
    size_t fwd_ws(cudnnConvolutionFwdAlgo_t algo) {
        size_t s = 0;
        EXPECT_EQ(cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, algo, &s), CUDNN_STATUS_SUCCESS);
        return s;
    }

    cudnnHandle_t h = nullptr;
    cudnnTensorDescriptor_t x = nullptr, y = nullptr, b = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t c = nullptr;
    cudnnActivationDescriptor_t act = nullptr;
    std::vector<float> xs, ws, ys;
    std::vector<unsigned char> work;
    const float one = 1.0f, zero = 0.0f;
};

bool mentions(const std::string& msg, const char* what) { return msg.find(what) != std::string::npos; }

TEST_F(ConvApi, MaxCounts) {
    int n = 0;
    ASSERT_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &n));
    EXPECT_EQ(n, CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    ASSERT_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &n));
    EXPECT_EQ(n, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
    ASSERT_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &n));
    EXPECT_EQ(n, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetConvolutionForwardAlgorithmMaxCount(nullptr, &n));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetConvolutionForwardAlgorithmMaxCount(h, nullptr));
}

TEST_F(ConvApi, ForwardWorksAndComputes) {
    const size_t need = fwd_ws(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    ASSERT_OK(fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work.data(), need));
    // All-ones data: an interior output sums 4 x 3 x 3 ones, a corner 4 x 2 x 2.
    EXPECT_EQ(ys[0], 16.0f);
    EXPECT_EQ(ys[7], 36.0f);
}

TEST_F(ConvApi, BetaZeroNeverReadsTheOutput) {
    std::fill(ys.begin(), ys.end(), std::numeric_limits<float>::quiet_NaN());
    for (int algo : {0, 1, 2}) {
        const auto a = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
        ASSERT_OK(fwd(a, work.data(), fwd_ws(a)));
        for (float v : ys) ASSERT_FALSE(std::isnan(v)) << "algo " << algo;
    }
}

TEST_F(ConvApi, AlphaBetaBlend) {
    const float alpha = 0.5f, beta = 2.0f;
    std::fill(ys.begin(), ys.end(), 3.0f);
    ASSERT_OK(fwd(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, work.data(), fwd_ws(CUDNN_CONVOLUTION_FWD_ALGO_GEMM), &alpha, &beta));
    EXPECT_EQ(ys[0], 0.5f * 16.0f + 6.0f);
    EXPECT_EQ(ys[7], 0.5f * 36.0f + 6.0f);
}

TEST_F(ConvApi, BadDescriptors) {
    // Input channels do not match the filter's.
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 5, 6, 6));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "channels"));
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 6, 6));
    // Wrong output size.
    ASSERT_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 6, 5, 6));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "yDesc dim 2"));
    ASSERT_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 6, 6, 6));
    // Groups that do not divide the output channels.
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 16, 6, 6));
    ASSERT_OK(cudnnSetConvolutionGroupCount(c, 4));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "groupCount"));
    ASSERT_OK(cudnnSetConvolutionGroupCount(c, 1));
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 6, 6));
    // Mixed data types (NOT_SUPPORTED in cuDNN 9.19, measured).
    ASSERT_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 6, 4, 3, 3));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "same data type"));
    ASSERT_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 6, 4, 3, 3));
    // A compute type the data type has no configuration for.
    ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_DOUBLE));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "compute type"));
    ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    // A destroyed or foreign descriptor.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnConvolutionForward(h, &one, y, xs.data(), w, ws.data(), c,
                                          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &zero,
                                          reinterpret_cast<cudnnTensorDescriptor_t>(w), ys.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnConvolutionForward(nullptr, &one, x, xs.data(), w, ws.data(), c,
                                          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &zero, y, ys.data()));
}

TEST_F(ConvApi, RanksOtherThan4And5AreNotSupported) {
    cudnnTensorDescriptor_t x3 = nullptr, y3 = nullptr;
    cudnnFilterDescriptor_t w3 = nullptr;
    cudnnConvolutionDescriptor_t c1 = nullptr;
    ASSERT_OK(cudnnCreateTensorDescriptor(&x3));
    ASSERT_OK(cudnnCreateTensorDescriptor(&y3));
    ASSERT_OK(cudnnCreateFilterDescriptor(&w3));
    ASSERT_OK(cudnnCreateConvolutionDescriptor(&c1));
    const int xd[3] = {2, 4, 10}, xstr[3] = {40, 10, 1}, yd[3] = {2, 6, 8}, ystr[3] = {48, 8, 1}, wd[3] = {6, 4, 3};
    const int pad[1] = {0}, str[1] = {1}, dil[1] = {1};
    ASSERT_OK(cudnnSetTensorNdDescriptor(x3, CUDNN_DATA_FLOAT, 3, xd, xstr));
    ASSERT_OK(cudnnSetTensorNdDescriptor(y3, CUDNN_DATA_FLOAT, 3, yd, ystr));
    ASSERT_OK(cudnnSetFilterNdDescriptor(w3, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, wd));
    ASSERT_OK(cudnnSetConvolutionNdDescriptor(c1, 1, pad, str, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    size_t s = 0;
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnGetConvolutionForwardWorkspaceSize(h, x3, w3, c1, y3,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &s));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "1-d convolution as 2-d"));
    cudnnDestroyConvolutionDescriptor(c1);
    cudnnDestroyFilterDescriptor(w3);
    cudnnDestroyTensorDescriptor(y3);
    cudnnDestroyTensorDescriptor(x3);
}

TEST_F(ConvApi, AlgorithmIds) {
    size_t s = 0;
    // Ids outside the enum: NOT_SUPPORTED, as in cuDNN 9.19.
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnGetConvolutionForwardWorkspaceSize(
                                                  h, x, w, c, y, static_cast<cudnnConvolutionFwdAlgo_t>(99), &s));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnGetConvolutionForwardWorkspaceSize(
                                                  h, x, w, c, y, static_cast<cudnnConvolutionFwdAlgo_t>(-1), &s));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, &s));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "DIRECT"));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, fwd(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, work.data(), work.size()));
    // Every supported id computes the same result.
    std::vector<float> ref;
    for (int algo = 0; algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++algo) {
        const auto a = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
        if (cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, a, &s) != CUDNN_STATUS_SUCCESS) continue;
        ASSERT_OK(fwd(a, work.data(), s));
        if (ref.empty()) ref = ys;
        EXPECT_EQ(ref, ys) << "algo " << algo;
    }
    // Fused WINOGRAD is not offered (as on Hopper); WINOGRAD_NONFUSED takes 3x3 and 5x5.
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, &s));
    ASSERT_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 6, 4, 5, 5));
    ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 2, 2, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnGetConvolutionForwardWorkspaceSize(
                                            h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, &s));
    ASSERT_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 6, 4, 7, 7));
    ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 3, 3, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnGetConvolutionForwardWorkspaceSize(
                                                  h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, &s));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "3x3 or 5x5"));
    // Channels-last data: only the implicit GEMMs.
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 2, 4, 6, 6));
    ASSERT_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 2, 6, 6, 6));
    ASSERT_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 6, 4, 3, 3));
    ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, &s));
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS,
                  cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, &s));
    // Backward-filter WINOGRAD does not exist in cuDNN either.
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x, y, c, w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD,
                                                                 &s));
}

TEST_F(ConvApi, WorkspaceProtocol) {
    const size_t need = fwd_ws(CUDNN_CONVOLUTION_FWD_ALGO_GEMM);
    ASSERT_GT(need, 0u);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, fwd(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, work.data(), need - 1));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "workSpaceSizeInBytes"));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, fwd(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, nullptr, need));
    ASSERT_OK(fwd(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, work.data(), need));
    // The zero-workspace ids.
    EXPECT_EQ(fwd_ws(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM), 0u);
    ASSERT_OK(fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0));
    size_t s = 1;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetConvolutionForwardWorkspaceSize(
                                              h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, nullptr));
    ASSERT_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, w, y, c, x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, &s));
    EXPECT_EQ(s, 0u);
    ASSERT_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x, y, c, w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, &s));
    EXPECT_EQ(s, 0u);
}

TEST_F(ConvApi, GetV7) {
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int n = -1;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, -1, &n, perf));
    ASSERT_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, 0, &n, perf));  // as cuDNN: nothing asked
    EXPECT_EQ(n, 0);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, 8, nullptr, perf));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, 8, &n, nullptr));
    ASSERT_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, 3, &n, perf));
    EXPECT_EQ(n, 3);
    ASSERT_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, 8, &n, perf));
    ASSERT_EQ(n, 8);
    // PyTorch's default is the first entry: it must be usable and report its exact
    // workspace. The math type is the descriptor's (DEFAULT here), as in cuDNN.
    EXPECT_EQ(perf[0].algo, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    EXPECT_EQ(perf[0].status, CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(perf[0].memory, fwd_ws(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM));
    EXPECT_EQ(perf[0].mathType, CUDNN_DEFAULT_MATH);
    EXPECT_EQ(perf[0].determinism, CUDNN_DETERMINISTIC);
    // PyTorch without TF32 sets FMA math and asserts every fp32 result it uses reports it;
    // a tensor-op request also reports FMA (no tensor cores on the CPU).
    for (cudnnMathType_t m : {CUDNN_FMA_MATH, CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION}) {
        ASSERT_OK(cudnnSetConvolutionMathType(c, m));
        ASSERT_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, 8, &n, perf));
        for (int i = 0; i < n; ++i) EXPECT_EQ(perf[i].mathType, CUDNN_FMA_MATH);
    }
    ASSERT_OK(cudnnSetConvolutionMathType(c, CUDNN_DEFAULT_MATH));
    bool failed = false;
    for (int i = 0; i < n; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS) failed = true;
        else EXPECT_FALSE(failed) << "supported algorithms come first";
        if (perf[i].algo == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT) EXPECT_EQ(perf[i].status, CUDNN_STATUS_NOT_SUPPORTED);
    }
    cudnnConvolutionBwdDataAlgoPerf_t dperf[6];
    ASSERT_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w, y, c, x, 6, &n, dperf));
    EXPECT_EQ(n, 6);
    EXPECT_EQ(dperf[0].algo, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
    cudnnConvolutionBwdFilterAlgoPerf_t fperf[7];
    ASSERT_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x, y, c, w, 7, &n, fperf));
    EXPECT_EQ(n, 7);
    EXPECT_EQ(fperf[0].algo, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
}

TEST_F(ConvApi, FindRunsEveryAlgorithm) {
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int n = -1;
    ASSERT_OK(cudnnFindConvolutionForwardAlgorithm(h, x, w, c, y, 8, &n, perf));
    ASSERT_EQ(n, 8);
    int ok = 0;
    for (int i = 0; i < n; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) {
            ++ok;
            EXPECT_GE(perf[i].time, 0.0f);
            if (i > 0) EXPECT_GE(perf[i].time, perf[i - 1].time);
        }
    EXPECT_GE(ok, 3);
    // FindEx with no workspace: algorithms that need some fail (with cuDNN 9.19's status).
    ASSERT_OK(cudnnFindConvolutionForwardAlgorithmEx(h, x, xs.data(), w, ws.data(), c, y, ys.data(), 8, &n, perf,
                                                     nullptr, 0));
    for (int i = 0; i < n; ++i) {
        if (perf[i].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) EXPECT_EQ(perf[i].status, CUDNN_STATUS_SUCCESS);
        if (perf[i].algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM)
            EXPECT_EQ(perf[i].status, CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE);
    }
    ASSERT_OK(cudnnFindConvolutionForwardAlgorithmEx(h, x, xs.data(), w, ws.data(), c, y, ys.data(), 1, &n, perf,
                                                     work.data(), work.size()));
    EXPECT_EQ(n, 1);
    EXPECT_EQ(perf[0].status, CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnFindConvolutionForwardAlgorithmEx(h, x, nullptr, w, ws.data(), c, y, ys.data(), 8, &n, perf,
                                                         nullptr, 0));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnFindConvolutionForwardAlgorithmEx(h, x, xs.data(), w, ws.data(), c, y,
                                                                                ys.data(), 8, &n, perf, nullptr, 64));
    cudnnConvolutionBwdDataAlgoPerf_t dperf[6];
    ASSERT_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, w, y, c, x, 6, &n, dperf));
    EXPECT_EQ(dperf[0].status, CUDNN_STATUS_SUCCESS);
    cudnnConvolutionBwdFilterAlgoPerf_t fperf[7];
    ASSERT_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, x, y, c, w, 7, &n, fperf));
    EXPECT_EQ(fperf[0].status, CUDNN_STATUS_SUCCESS);
}

TEST_F(ConvApi, FrameworkDefaultsAlwaysWork) {
    // deterministic=True, benchmark=False in PyTorch: these three run without any query.
    for (cudnnDataType_t t : {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_DOUBLE}) {
        for (cudnnTensorFormat_t f : {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC}) {
            ASSERT_OK(cudnnSetTensor4dDescriptor(x, f, t, 2, 4, 6, 6));
            ASSERT_OK(cudnnSetTensor4dDescriptor(y, f, t, 2, 6, 6, 6));
            ASSERT_OK(cudnnSetFilter4dDescriptor(w, t, f, 6, 4, 3, 3));
            ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                      t == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT));
            std::vector<double> bx(2 * 4 * 36, 0.0), bw(6 * 4 * 9, 0.0), by(2 * 6 * 36, 0.0);
            const double d1 = 1.0, d0 = 0.0;
            const void* a = t == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d1) : &one;
            const void* z = t == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d0) : &zero;
            size_t s = 0;
            ASSERT_OK(cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y,
                                                              CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &s));
            ASSERT_OK(cudnnConvolutionForward(h, a, x, bx.data(), w, bw.data(), c,
                                              CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work.data(), s, z, y,
                                              by.data()));
            ASSERT_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, w, y, c, x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, &s));
            ASSERT_OK(cudnnConvolutionBackwardData(h, a, w, bw.data(), y, by.data(), c, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                                   work.data(), s, z, x, bx.data()));
            ASSERT_OK(
                cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x, y, c, w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, &s));
            ASSERT_OK(cudnnConvolutionBackwardFilter(h, a, x, bx.data(), y, by.data(), c,
                                                     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, work.data(), s, z, w,
                                                     bw.data()));
        }
    }
}

TEST_F(ConvApi, BackwardBias) {
    std::vector<float> dy(2 * 6 * 36);
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>(i / 36 % 6 + 1);  // channel k holds k + 1
    std::vector<float> db(6, 10.0f);
    const float alpha = 0.5f, beta = 1.0f;
    ASSERT_OK(cudnnConvolutionBackwardBias(h, &alpha, y, dy.data(), &beta, b, db.data()));
    for (int k = 0; k < 6; ++k) EXPECT_EQ(db[static_cast<size_t>(k)], 0.5f * 72.0f * static_cast<float>(k + 1) + 10.0f);
    std::fill(db.begin(), db.end(), std::numeric_limits<float>::quiet_NaN());
    ASSERT_OK(cudnnConvolutionBackwardBias(h, &one, y, dy.data(), &zero, b, db.data()));
    EXPECT_EQ(db[0], 72.0f);
    // db must be 1 x K x 1 x 1 of dy's type.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnConvolutionBackwardBias(h, &one, y, dy.data(), &zero, x, db.data()));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "dbDesc"));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnConvolutionBackwardBias(h, &one, y, nullptr, &zero, b, db.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnConvolutionBackwardBias(h, nullptr, y, dy.data(), &zero, b, db.data()));
}

TEST_F(ConvApi, BiasActivationForward) {
    std::vector<float> z(ys.size(), -20.0f), bias(6);
    for (int k = 0; k < 6; ++k) bias[static_cast<size_t>(k)] = static_cast<float>(k);
    const float a1 = 1.0f, a2 = 1.0f;
    const size_t s = fwd_ws(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    ASSERT_OK(cudnnConvolutionBiasActivationForward(h, &a1, x, xs.data(), w, ws.data(), c,
                                                    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work.data(), s,
                                                    &a2, y, z.data(), b, bias.data(), act, y, ys.data()));
    // Corner: relu(16 - 20 + k) = 0 for k < 4; interior: 36 - 20 + k.
    EXPECT_EQ(ys[0], 0.0f);
    EXPECT_EQ(ys[5 * 36 + 0], 1.0f);
    EXPECT_EQ(ys[5 * 36 + 7], 21.0f);
    // z may be y itself.
    std::fill(ys.begin(), ys.end(), 1.0f);
    ASSERT_OK(cudnnConvolutionBiasActivationForward(h, &a1, x, xs.data(), w, ws.data(), c,
                                                    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work.data(), s,
                                                    &a2, y, ys.data(), b, bias.data(), act, y, ys.data()));
    EXPECT_EQ(ys[7], 37.0f);
    // Only RELU and IDENTITY (with any algorithm, as cuDNN 9.19 on Hopper).
    ASSERT_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_SIGMOID, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnConvolutionBiasActivationForward(h, &a1, x, xs.data(), w, ws.data(), c,
                                                        CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work.data(),
                                                        s, &a2, y, z.data(), b, bias.data(), act, y, ys.data()));
    ASSERT_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    ASSERT_OK(cudnnConvolutionBiasActivationForward(h, &a1, x, xs.data(), w, ws.data(), c,
                                                    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &a2, y,
                                                    z.data(), b, bias.data(), act, y, ys.data()));
    EXPECT_EQ(ys[0], -4.0f);
    // A bias that is not 1 x K x 1 x 1: NOT_SUPPORTED_SHAPE, as in cuDNN 9.19.
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED_SHAPE,
                  cudnnConvolutionBiasActivationForward(h, &a1, x, xs.data(), w, ws.data(), c,
                                                        CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work.data(),
                                                        s, &a2, y, z.data(), y, bias.data(), act, y, ys.data()));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "biasDesc"));
}

TEST_F(ConvApi, Im2Col) {
    // x 1x2x3x3 holding 0..17, 2x2 filter, no padding: 4 output pixels, 2 x 2 x 2 taps,
    // stored tap-major as cuDNN 9.19 does (values measured on NVIDIA's library).
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 3));
    ASSERT_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 2, 2, 2));
    std::vector<float> in(18);
    for (int i = 0; i < 18; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i);
    const float xcorr[32] = {0, 1, 3,  4,  1,  2,  4,  5,  3,  4,  6,  7,  4,  5,  7,  8,
                             9, 10, 12, 13, 10, 11, 13, 14, 12, 13, 15, 16, 13, 14, 16, 17};
    const float conv[32] = {4,  5,  7,  8,  3,  4,  6,  7,  1,  2,  4,  5,  0, 1,  3,  4,
                            13, 14, 16, 17, 12, 13, 15, 16, 10, 11, 13, 14, 9, 10, 12, 13};
    for (cudnnConvolutionMode_t mode : {CUDNN_CROSS_CORRELATION, CUDNN_CONVOLUTION}) {
        ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 1, mode, CUDNN_DATA_FLOAT));
        std::vector<float> col(40, -1.0f);
        ASSERT_OK(cudnnIm2Col(h, x, in.data(), w, c, col.data()));
        const float* want = mode == CUDNN_CROSS_CORRELATION ? xcorr : conv;
        for (int i = 0; i < 32; ++i) EXPECT_EQ(col[static_cast<size_t>(i)], want[i]) << "mode " << mode << " at " << i;
        EXPECT_EQ(col[32], -1.0f);
    }
    // Padding: the first tap of a 1-padded 2x2 filter over the 3x3 image (4x4 outputs).
    ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    std::vector<float> col(128, -1.0f);
    ASSERT_OK(cudnnIm2Col(h, x, in.data(), w, c, col.data()));
    const float tap0[16] = {0, 0, 0, 0, 0, 0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8};
    for (int i = 0; i < 16; ++i) EXPECT_EQ(col[static_cast<size_t>(i)], tap0[i]) << i;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnIm2Col(h, x, in.data(), w, c, nullptr));
}

TEST_F(ConvApi, BackwardBadInput) {
    const size_t big = work.size();
    // dgrad / wgrad check the same descriptor rules (here: dy with the wrong channel count).
    ASSERT_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 5, 6, 6));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnConvolutionBackwardData(h, &one, w, ws.data(), y, ys.data(), c, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                               work.data(), big, &zero, x, xs.data()));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "dyDesc"));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnConvolutionBackwardFilter(h, &one, x, xs.data(), y, ys.data(), c,
                                                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, work.data(), big, &zero, w,
                                                 ws.data()));
    ASSERT_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 6, 6, 6));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnConvolutionBackwardData(h, &one, w, ws.data(), y, ys.data(), c,
                                               static_cast<cudnnConvolutionBwdDataAlgo_t>(6), work.data(), big, &zero,
                                               x, xs.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnConvolutionBackwardFilter(h, &one, x, xs.data(), y, ys.data(), c,
                                                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, work.data(), big, nullptr, w,
                                                 ws.data()));
    // 8-bit data has no backward passes.
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NHWC, CUDNN_DATA_INT8, 2, 4, 6, 6));
    ASSERT_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NHWC, CUDNN_DATA_INT8, 2, 6, 6, 6));
    ASSERT_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_INT8, CUDNN_TENSOR_NHWC, 6, 4, 3, 3));
    ASSERT_OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_INT32));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnConvolutionBackwardData(h, &one, w, ws.data(), y, ys.data(), c, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                               work.data(), big, &zero, x, xs.data()));
    size_t s = 0;
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnGetConvolutionForwardWorkspaceSize(
                                            h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &s));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, &s));
}

// The folded pipeline itself is tested in test_conv_fold.cpp.
TEST_F(ConvApi, FoldedDescriptorsNeedTheirOutputs) {
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, c, x, CUDNN_TENSOR_NCHW, nullptr, nullptr, nullptr,
                                                            nullptr, nullptr, nullptr, nullptr, nullptr));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "foldedFilterDesc"));
}

}  // namespace
