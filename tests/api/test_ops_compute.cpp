// Bad input to the computing cudnn_ops functions (transform, add, op-tensor, reduce,
// activation, softmax): the status cuDNN documents for each, and nothing written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/test_util.hpp"
#include "odnn/odnn.h"

namespace {

struct OpsCompute : ::testing::Test {
    cudnnHandle_t h = nullptr;
    std::vector<cudnnTensorDescriptor_t> descs;
    cudnnActivationDescriptor_t act = nullptr;
    cudnnOpTensorDescriptor_t op = nullptr;
    cudnnReduceTensorDescriptor_t red = nullptr;
    cudnnTensorTransformDescriptor_t tr = nullptr;
    // Outputs start as a pattern that every failed call must leave alone.
    std::vector<float> x = std::vector<float>(4096, 1.0f), y = std::vector<float>(4096, 7.0f);
    const float one = 1.0f, zero = 0.0f;
    const double done = 1.0, dzero = 0.0;

    void SetUp() override {
        ASSERT_OK(cudnnCreate(&h));
        ASSERT_OK(cudnnCreateActivationDescriptor(&act));
        ASSERT_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
        ASSERT_OK(cudnnCreateOpTensorDescriptor(&op));
        ASSERT_OK(cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
        ASSERT_OK(cudnnCreateReduceTensorDescriptor(&red));
        ASSERT_OK(cudnnSetReduceTensorDescriptor(red, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                                 CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
        ASSERT_OK(cudnnCreateTensorTransformDescriptor(&tr));
    }
    void TearDown() override {
        for (auto d : descs) cudnnDestroyTensorDescriptor(d);
        cudnnDestroyActivationDescriptor(act);
        cudnnDestroyOpTensorDescriptor(op);
        cudnnDestroyReduceTensorDescriptor(red);
        cudnnDestroyTensorTransformDescriptor(tr);
        cudnnDestroy(h);
    }
    cudnnTensorDescriptor_t desc(std::vector<int> dims, cudnnDataType_t dt = CUDNN_DATA_FLOAT,
                                 cudnnTensorFormat_t f = CUDNN_TENSOR_NCHW) {
        cudnnTensorDescriptor_t d = nullptr;
        EXPECT_EQ(cudnnCreateTensorDescriptor(&d), CUDNN_STATUS_SUCCESS);
        descs.push_back(d);
        if (!dims.empty())
            EXPECT_EQ(cudnnSetTensorNdDescriptorEx(d, f, dt, static_cast<int>(dims.size()), dims.data()),
                      CUDNN_STATUS_SUCCESS)
                << odnn_test::last_error();
        return d;
    }
    cudnnTensorDescriptor_t strided(std::vector<int> dims, std::vector<int> strides,
                                    cudnnDataType_t dt = CUDNN_DATA_FLOAT) {
        cudnnTensorDescriptor_t d = desc({});
        EXPECT_EQ(cudnnSetTensorNdDescriptor(d, dt, static_cast<int>(dims.size()), dims.data(), strides.data()),
                  CUDNN_STATUS_SUCCESS);
        return d;
    }
    void expect_untouched() {
        for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], 7.0f) << "y[" << i << "] written by a failed call";
    }
};

TEST_F(OpsCompute, NullArguments) {
    auto d = desc({2, 3, 4, 5});
    float* X = x.data();
    float* Y = y.data();
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensor(nullptr, &one, d, X, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensor(h, nullptr, d, X, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensor(h, &one, d, X, nullptr, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensor(h, &one, nullptr, X, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensor(h, &one, d, nullptr, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensor(h, &one, d, X, &zero, d, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensorEx(h, nullptr, &one, d, X, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnAddTensor(h, &one, d, nullptr, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnAddTensor(h, &one, d, X, &zero, nullptr, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnOpTensor(h, nullptr, &one, d, X, &one, d, X, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnOpTensor(h, op, &one, d, X, &one, d, nullptr, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnOpTensor(h, op, &one, d, X, nullptr, d, X, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnOpTensor(h, op, &one, d, X, &one, nullptr, X, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationForward(h, nullptr, &one, d, X, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationForward(h, act, &one, d, X, &zero, d, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationBackward(h, act, &one, d, X, d, X, d, nullptr, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationBackward(h, act, &one, d, X, nullptr, X, d, X, &zero, d, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, d, X, &zero, d,
                                      nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, d, X, d, nullptr,
                                       &zero, d, Y));
    size_t sz = 0;
    auto c = desc({1, 3, 1, 1});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetReductionWorkspaceSize(h, red, d, c, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetReductionIndicesSize(h, nullptr, d, c, &sz));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetReductionIndicesSize(nullptr, red, d, c, &sz));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnReduceTensor(h, red, nullptr, 0, nullptr, 0, &one, d, nullptr, &zero, c, Y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnInitTransformDest(tr, d, c, nullptr));
    expect_untouched();
}

TEST_F(OpsCompute, UnsetDescriptors) {
    auto d = desc({2, 3, 4, 5}), unset = desc({});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensor(h, &one, unset, x.data(), &zero, d, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnAddTensor(h, &one, d, x.data(), &zero, unset, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationForward(h, act, &one, unset, x.data(), &zero, d, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
                                                              d, x.data(), &zero, unset, y.data()));
    // A transform descriptor never set.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensorEx(h, tr, &one, d, x.data(), &zero, d, y.data()));
    size_t sz = 0;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnInitTransformDest(tr, d, unset, &sz));
    expect_untouched();
}

TEST_F(OpsCompute, ShapeMismatches) {
    auto a = desc({2, 3, 4, 5}), b = desc({2, 3, 5, 4}), c3 = desc({2, 3, 20});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensor(h, &one, a, x.data(), &zero, b, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationForward(h, act, &one, a, x.data(), &zero, b, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationBackward(h, act, &one, a, x.data(), a, x.data(), b, x.data(),
                                                                  &zero, a, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSoftmaxForward(h, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, a,
                                                              x.data(), &zero, c3, y.data()));
    // Add: each dim of A is C's or 1, same rank.
    auto bias_bad = desc({1, 2, 1, 1}), bias3 = desc({1, 3, 1});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnAddTensor(h, &one, bias_bad, x.data(), &one, a, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnAddTensor(h, &one, bias3, x.data(), &one, a, y.data()));
    // Op-tensor: A must have C's shape; B broadcasts.
    auto small = desc({1, 3, 1, 1});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnOpTensor(h, op, &one, small, x.data(), &one, a, x.data(), &zero, a, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnOpTensor(h, op, &one, a, x.data(), &one, bias_bad, x.data(), &zero, a, y.data()));
    // Reduce: same rank, each dim of C is A's or 1, and something must be reduced.
    size_t ws = 0;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetReductionWorkspaceSize(h, red, a, bias_bad, &ws));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetReductionWorkspaceSize(h, red, a, c3, &ws));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnReduceTensor(h, red, nullptr, 0, nullptr, 0, &one, a, x.data(), &zero, a, y.data()));
    expect_untouched();
}

TEST_F(OpsCompute, DataTypeRules) {
    auto f = desc({2, 3, 4, 5}), hf = desc({2, 3, 4, 5}, CUDNN_DATA_HALF), i8 = desc({2, 3, 4, 5}, CUDNN_DATA_INT8),
         dd = desc({2, 3, 4, 5}, CUDNN_DATA_DOUBLE);
    // Activation and softmax: x and y of one type; integer data is not supported.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationForward(h, act, &one, f, x.data(), &zero, hf, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnActivationForward(h, act, &one, i8, x.data(), &zero, i8, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                                              &one, f, x.data(), &zero, hf, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE,
                                                                  CUDNN_SOFTMAX_MODE_CHANNEL, &one, i8, x.data(),
                                                                  &zero, i8, y.data()));
    // Add: A and C of one type.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnAddTensor(h, &one, hf, x.data(), &one, f, y.data()));
    // Op-tensor: A and B of one type, (A, C) from cuDNN's table, and its compute type.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnOpTensor(h, op, &one, f, x.data(), &one, hf, x.data(), &zero, f, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnOpTensor(h, op, &one, hf, x.data(), &one, hf, x.data(), &zero, dd, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnOpTensor(h, op, &one, i8, x.data(), &one, i8, x.data(), &zero, hf, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnOpTensor(h, op, &done, dd, x.data(), &done, dd, x.data(), &dzero, dd, y.data()));
    ASSERT_OK(cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_DOUBLE, CUDNN_NOT_PROPAGATE_NAN));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnOpTensor(h, op, &one, f, x.data(), &one, f, x.data(), &zero, f, y.data()));
    ASSERT_OK(cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_HALF, CUDNN_NOT_PROPAGATE_NAN));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnOpTensor(h, op, &one, hf, x.data(), &one, hf, x.data(), &zero, hf, y.data()));
    // Reduce: DOUBLE needs A, C and the compute type DOUBLE.
    auto c = desc({1, 3, 1, 1}), cd = desc({1, 3, 1, 1}, CUDNN_DATA_DOUBLE);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnReduceTensor(h, red, nullptr, 0, nullptr, 0, &one, dd, x.data(), &zero, cd, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnReduceTensor(h, red, nullptr, 0, nullptr, 0, &one, f, x.data(), &zero, cd, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnReduceTensor(h, red, nullptr, 0, nullptr, 0, &one, f, x.data(), &zero, desc({1, 3, 1, 1}, CUDNN_DATA_INT8), y.data()));
    expect_untouched();
}

TEST_F(OpsCompute, RankLimits) {
    // Add and op-tensor take up to 5 dimensions (cuDNN: NOT_SUPPORTED beyond).
    auto six = desc({2, 2, 2, 2, 2, 2}), bias6 = desc({1, 2, 1, 1, 1, 1});
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnAddTensor(h, &one, bias6, x.data(), &one, six, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnOpTensor(h, op, &one, six, x.data(), &one, bias6, x.data(), &zero, six, y.data()));
    // Activation and softmax take any rank.
    ASSERT_OK(cudnnActivationForward(h, act, &one, six, x.data(), &zero, six, y.data()));
}

TEST_F(OpsCompute, EnumsAndInPlace) {
    auto a = desc({2, 3, 4, 5});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSoftmaxForward(h, static_cast<cudnnSoftmaxAlgorithm_t>(3),
                                                              CUDNN_SOFTMAX_MODE_CHANNEL, &one, a, x.data(), &zero, a,
                                                              y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_ACCURATE,
                                                               static_cast<cudnnSoftmaxMode_t>(-1), &one, a, x.data(),
                                                               a, x.data(), &zero, a, y.data()));
    // In place needs identical descriptors (strides).
    auto nhwc = desc({2, 3, 4, 5}, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationForward(h, act, &one, a, y.data(), &zero, nhwc, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                                              &one, a, y.data(), &zero, nhwc, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnActivationBackward(h, act, &one, a, x.data(), a, y.data(), a, x.data(),
                                                                  &zero, nhwc, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensor(h, &one, a, y.data(), &zero, nhwc, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnOpTensor(h, op, &one, a, y.data(), &one, a, x.data(), &zero, nhwc, y.data()));
    expect_untouched();
    // The same layout in place works.
    ASSERT_OK(cudnnActivationForward(h, act, &one, a, y.data(), &zero, a, y.data()));
    EXPECT_EQ(y[0], 7.0f);
}

TEST_F(OpsCompute, ReduceIndicesAndWorkspace) {
    auto a = desc({1, 1, 300, 400}), c = desc({1, 1, 1, 1});
    std::vector<float> big(120000, 1.0f);
    size_t ws = 0, is = 0;
    ASSERT_OK(cudnnGetReductionWorkspaceSize(h, red, a, c, &ws));
    ASSERT_OK(cudnnGetReductionIndicesSize(h, red, a, c, &is));
    EXPECT_GT(ws, 0u) << "a long reduction into one output is split through the workspace";
    EXPECT_EQ(is, 0u);
    std::vector<unsigned char> w(ws);
    EXPECT_STATUS(CUDNN_STATUS_INVALID_VALUE,
                  cudnnReduceTensor(h, red, nullptr, 0, w.data(), ws - 1, &one, a, big.data(), &zero, c, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnReduceTensor(h, red, nullptr, 0, nullptr, ws, &one, a, big.data(), &zero, c, y.data()));
    // Indices: MIN / MAX / AMAX only, 32-bit only, and room for one per output.
    ASSERT_OK(cudnnSetReduceTensorDescriptor(red, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                             CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    ASSERT_OK(cudnnGetReductionIndicesSize(h, red, a, c, &is));
    EXPECT_EQ(is, 0u);
    uint32_t idx[2] = {5, 5};
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnReduceTensor(h, red, idx, 8, w.data(), ws, &one, a, big.data(), &zero, c, y.data()));
    ASSERT_OK(cudnnSetReduceTensorDescriptor(red, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                             CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_16BIT_INDICES));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnReduceTensor(h, red, idx, 8, w.data(), ws, &one, a, big.data(), &zero, c, y.data()));
    ASSERT_OK(cudnnSetReduceTensorDescriptor(red, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                             CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    ASSERT_OK(cudnnGetReductionIndicesSize(h, red, a, c, &is));
    EXPECT_EQ(is, 4u);
    EXPECT_STATUS(CUDNN_STATUS_INVALID_VALUE,
                  cudnnReduceTensor(h, red, idx, 3, w.data(), ws, &one, a, big.data(), &zero, c, y.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnReduceTensor(h, red, nullptr, 4, w.data(), ws, &one, a, big.data(), &zero, c, y.data()));
    EXPECT_EQ(idx[0], 5u);
    expect_untouched();
    ASSERT_OK(cudnnReduceTensor(h, red, idx, 4, w.data(), ws, &one, a, big.data(), &zero, c, y.data()));
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(idx[0], 0u);
    EXPECT_EQ(idx[1], 5u);
}

TEST_F(OpsCompute, TransformExRules) {
    auto a = desc({2, 3, 4, 4});
    const int32_t z[4] = {0, 0, 0, 0};
    const uint32_t f22[2] = {2, 2};
    ASSERT_OK(cudnnSetTensorTransformDescriptor(tr, 4, CUDNN_TENSOR_NCHW, z, z, f22, CUDNN_TRANSFORM_FOLD));
    // The destination must have the transformed dims (2 x 12 x 2 x 2).
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensorEx(h, tr, &one, a, x.data(), &zero, a, y.data()));
    auto folded = desc({2, 12, 2, 2});
    ASSERT_OK(cudnnTransformTensorEx(h, tr, &one, a, x.data(), &zero, folded, y.data()));
    std::fill(y.begin(), y.end(), 7.0f);
    // Unfolding needs C divisible by the product of the folds.
    ASSERT_OK(cudnnSetTensorTransformDescriptor(tr, 4, CUDNN_TENSOR_NCHW, z, z, f22, CUDNN_TRANSFORM_UNFOLD));
    size_t sz = 0;
    auto dest = desc({});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnInitTransformDest(tr, a, dest, &sz));
    // The transform's rank must be the tensor's.
    ASSERT_OK(cudnnSetTensorTransformDescriptor(tr, 5, CUDNN_TENSOR_NCHW, nullptr, nullptr, nullptr,
                                                CUDNN_TRANSFORM_FOLD));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnInitTransformDest(tr, a, dest, &sz));
    // Folds whose product overflows a tensor are refused, not wrapped.
    const uint32_t huge[2] = {65536, 65536};
    ASSERT_OK(cudnnSetTensorTransformDescriptor(tr, 4, CUDNN_TENSOR_NCHW, z, z, huge, CUDNN_TRANSFORM_FOLD));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnInitTransformDest(tr, a, dest, &sz));
    // In place is refused.
    ASSERT_OK(cudnnSetTensorTransformDescriptor(tr, 4, CUDNN_TENSOR_NCHW, z, z, f22, CUDNN_TRANSFORM_FOLD));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnTransformTensorEx(h, tr, &one, a, y.data(), &zero, folded, y.data()));
    expect_untouched();
    // NCHW_VECT_C destination: INT8 becomes INT8x4 (C padded from 3 to 4 by padAfter).
    auto i8 = desc({2, 3, 4, 4}, CUDNN_DATA_INT8);
    const int32_t pa[4] = {0, 1, 0, 0};
    const uint32_t f11[2] = {1, 1};
    ASSERT_OK(cudnnSetTensorTransformDescriptor(tr, 4, CUDNN_TENSOR_NCHW_VECT_C, z, pa, f11, CUDNN_TRANSFORM_FOLD));
    ASSERT_OK(cudnnInitTransformDest(tr, i8, dest, &sz));
    cudnnDataType_t dt;
    int n, c, hh, w, ns, cs, hs, ws;
    ASSERT_OK(cudnnGetTensor4dDescriptor(dest, &dt, &n, &c, &hh, &w, &ns, &cs, &hs, &ws));
    EXPECT_EQ(dt, CUDNN_DATA_INT8x4);
    EXPECT_EQ(c, 4);
    EXPECT_EQ(sz, 2u * 4 * 4 * 4);
}

TEST_F(OpsCompute, ReportedAsImplemented) {
    const char* names[] = {"cudnnTransformTensor",  "cudnnTransformTensorEx", "cudnnTransformFilter",
                           "cudnnInitTransformDest", "cudnnAddTensor",        "cudnnOpTensor",
                           "cudnnReduceTensor",     "cudnnGetReductionIndicesSize", "cudnnGetReductionWorkspaceSize",
                           "cudnnActivationForward", "cudnnActivationBackward", "cudnnSoftmaxForward",
                           "cudnnSoftmaxBackward"};
    for (const char* name : names) {
        bool found = false;
        for (int i = 0; i < odnnGetApiCount(); ++i) {
            odnnApiEntry e;
            ASSERT_OK(odnnGetApiEntry(i, &e));
            if (std::strcmp(e.name, name) != 0) continue;
            found = true;
            EXPECT_TRUE(e.implemented) << name;
            EXPECT_TRUE(e.cpu) << name;
        }
        EXPECT_TRUE(found) << name;
    }
}

}  // namespace
