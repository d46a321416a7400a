// The convolution-family functions without a handle: NVIDIA's cannot create one
// without a GPU, so what can be compared here is how both libraries answer calls whose
// handle is NULL while every other argument is valid (the handle is checked first).
// NVIDIA's 9.19 crashes (SIGSEGV) on cudnnGetConvolution{Forward,BackwardData,
// BackwardFilter}Algorithm_v7 and cudnnIm2Col with a NULL handle: those are checked
// against odnn alone (tests/api/test_conv_api.cpp, test_robustness.cpp).
#include <cstddef>

#include "oracle/oracle.hpp"

namespace {

using oracle::Lib;
using oracle::Trace;

void conv_calls_without_handle(const Lib& lib, Trace& t) {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr, b = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t c = nullptr;
    cudnnActivationDescriptor_t act = nullptr;
    OCALL(lib, cudnnCreateTensorDescriptor, &x);
    OCALL(lib, cudnnCreateTensorDescriptor, &y);
    OCALL(lib, cudnnCreateTensorDescriptor, &b);
    OCALL(lib, cudnnCreateFilterDescriptor, &w);
    OCALL(lib, cudnnCreateConvolutionDescriptor, &c);
    OCALL(lib, cudnnCreateActivationDescriptor, &act);
    OSTATUS(t, lib, cudnnSetTensor4dDescriptor, x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 8, 8);
    OSTATUS(t, lib, cudnnSetTensor4dDescriptor, y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 6, 8, 8);
    OSTATUS(t, lib, cudnnSetTensor4dDescriptor, b, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 6, 1, 1);
    OSTATUS(t, lib, cudnnSetFilter4dDescriptor, w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 6, 4, 3, 3);
    OSTATUS(t, lib, cudnnSetConvolution2dDescriptor, c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
            CUDNN_DATA_FLOAT);
    OSTATUS(t, lib, cudnnSetActivationDescriptor, act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0);
    float buf[2048] = {};
    const float one = 1.0f, zero = 0.0f;
    int count = -1;
    size_t ws = 0;
    cudnnConvolutionFwdAlgoPerf_t fp[8];
    cudnnConvolutionBwdDataAlgoPerf_t dp[8];
    cudnnConvolutionBwdFilterAlgoPerf_t wp[8];
    cudnnHandle_t h = nullptr;
    OSTATUS(t, lib, cudnnGetConvolutionForwardAlgorithmMaxCount, h, &count);
    OSTATUS(t, lib, cudnnGetConvolutionBackwardDataAlgorithmMaxCount, h, &count);
    OSTATUS(t, lib, cudnnGetConvolutionBackwardFilterAlgorithmMaxCount, h, &count);
    OSTATUS(t, lib, cudnnFindConvolutionForwardAlgorithm, h, x, w, c, y, 8, &count, fp);
    OSTATUS(t, lib, cudnnFindConvolutionBackwardDataAlgorithm, h, w, y, c, x, 8, &count, dp);
    OSTATUS(t, lib, cudnnFindConvolutionBackwardFilterAlgorithm, h, x, y, c, w, 8, &count, wp);
    OSTATUS(t, lib, cudnnFindConvolutionForwardAlgorithmEx, h, x, buf, w, buf, c, y, buf, 8, &count, fp, nullptr, 0);
    OSTATUS(t, lib, cudnnGetConvolutionForwardWorkspaceSize, h, x, w, c, y,
            CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &ws);
    OSTATUS(t, lib, cudnnGetConvolutionBackwardDataWorkspaceSize, h, w, y, c, x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
            &ws);
    OSTATUS(t, lib, cudnnGetConvolutionBackwardFilterWorkspaceSize, h, x, y, c, w,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, &ws);
    OSTATUS(t, lib, cudnnConvolutionForward, h, &one, x, buf, w, buf, c,
            CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, nullptr, 0, &zero, y, buf);
    OSTATUS(t, lib, cudnnConvolutionBackwardData, h, &one, w, buf, y, buf, c, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
            nullptr, 0, &zero, x, buf);
    OSTATUS(t, lib, cudnnConvolutionBackwardFilter, h, &one, x, buf, y, buf, c, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1,
            nullptr, 0, &zero, w, buf);
    OSTATUS(t, lib, cudnnConvolutionBackwardBias, h, &one, y, buf, &zero, b, buf);
    OSTATUS(t, lib, cudnnConvolutionBiasActivationForward, h, &one, x, buf, w, buf, c,
            CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, nullptr, 0, &zero, y, buf, b, buf, act, y, buf);
    OCALL(lib, cudnnDestroyActivationDescriptor, act);
    OCALL(lib, cudnnDestroyConvolutionDescriptor, c);
    OCALL(lib, cudnnDestroyFilterDescriptor, w);
    OCALL(lib, cudnnDestroyTensorDescriptor, b);
    OCALL(lib, cudnnDestroyTensorDescriptor, y);
    OCALL(lib, cudnnDestroyTensorDescriptor, x);
}

TEST(OracleConvOps, CallsWithoutHandle) { oracle::expect_same("conv_calls_without_handle", conv_calls_without_handle); }

}  // namespace
