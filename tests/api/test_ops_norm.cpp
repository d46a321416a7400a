// Bad input to batch normalization, the normalization family, pooling, LRN, divisive
// normalization, dropout and the spatial transformer: every call answers a status
// (BAD_PARAM for caller errors, NOT_SUPPORTED for valid requests odnn does not do),
// leaves a message, and writes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/test_util.hpp"

namespace {

cudnnTensorDescriptor_t tensor(cudnnDataType_t dt, std::vector<int> dims) {
    cudnnTensorDescriptor_t d = nullptr;
    EXPECT_EQ(cudnnCreateTensorDescriptor(&d), CUDNN_STATUS_SUCCESS);
    std::vector<int> strides(dims.size());
    int s = 1;
    for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
        strides[i] = s;
        s *= dims[i];
    }
    EXPECT_EQ(cudnnSetTensorNdDescriptor(d, dt, static_cast<int>(dims.size()), dims.data(), strides.data()),
              CUDNN_STATUS_SUCCESS);
    return d;
}

struct Fixture : ::testing::Test {
    cudnnHandle_t h = nullptr;
    cudnnTensorDescriptor_t x = nullptr, y = nullptr, p = nullptr, unset = nullptr, dead = nullptr;
    std::vector<float> xb = std::vector<float>(2 * 3 * 4 * 4, 1.0f), yb = std::vector<float>(2 * 3 * 4 * 4, 7.0f);
    std::vector<float> sb = std::vector<float>(3, 1.0f), bb = std::vector<float>(3, 0.0f);
    std::vector<float> mb = std::vector<float>(3, 0.0f), vb = std::vector<float>(3, 1.0f);
    const float one = 1.0f, zero = 0.0f;

    void SetUp() override {
        ASSERT_OK(cudnnCreate(&h));
        x = tensor(CUDNN_DATA_FLOAT, {2, 3, 4, 4});
        y = tensor(CUDNN_DATA_FLOAT, {2, 3, 4, 4});
        p = tensor(CUDNN_DATA_FLOAT, {1, 3, 1, 1});
        ASSERT_OK(cudnnCreateTensorDescriptor(&unset));
        ASSERT_OK(cudnnCreateTensorDescriptor(&dead));
        ASSERT_OK(cudnnDestroyTensorDescriptor(dead));
        for (float& v : xb) v = static_cast<float>(&v - xb.data()) * 0.1f;
    }
    void TearDown() override {
        for (auto d : {x, y, p, unset}) cudnnDestroyTensorDescriptor(d);
        cudnnDestroy(h);
    }
    bool y_untouched() const {
        for (float v : yb)
            if (v != 7.0f) return false;
        return true;
    }
    cudnnStatus_t inference(cudnnBatchNormMode_t mode, cudnnTensorDescriptor_t xd, cudnnTensorDescriptor_t yd,
                            cudnnTensorDescriptor_t pd, double eps, const void* mean) {
        return cudnnBatchNormalizationForwardInference(h, mode, &one, &zero, xd, xb.data(), yd, yb.data(), pd,
                                                       sb.data(), bb.data(), mean, vb.data(), eps);
    }
};

TEST_F(Fixture, BatchNormInferenceBadArguments) {
    ASSERT_OK(inference(CUDNN_BATCHNORM_SPATIAL, x, y, p, 1e-5, mb.data()));  // the valid call
    std::fill(yb.begin(), yb.end(), 7.0f);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(static_cast<cudnnBatchNormMode_t>(7), x, y, p, 1e-5, mb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, x, y, p, -1.0, mb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, x, y, p, NAN, mb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, x, y, p, 1e-5, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, nullptr, y, p, 1e-5, mb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, unset, y, p, 1e-5, mb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, dead, y, p, 1e-5, mb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, x, y, x, 1e-5, mb.data()));  // param dims
    // PER_ACTIVATION wants 1 x C x H x W parameters.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_PER_ACTIVATION, x, y, p, 1e-5, mb.data()));
    cudnnTensorDescriptor_t y_other = tensor(CUDNN_DATA_FLOAT, {2, 3, 4, 5});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, x, y_other, p, 1e-5, mb.data()));
    cudnnTensorDescriptor_t y_half = tensor(CUDNN_DATA_HALF, {2, 3, 4, 4});
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, inference(CUDNN_BATCHNORM_SPATIAL, x, y_half, p, 1e-5, mb.data()));
    cudnnTensorDescriptor_t p_double = tensor(CUDNN_DATA_DOUBLE, {1, 3, 1, 1});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, x, y, p_double, 1e-5, mb.data()));
    cudnnTensorDescriptor_t x3 = tensor(CUDNN_DATA_FLOAT, {2, 3, 16});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, x3, x3, p, 1e-5, mb.data()));
    cudnnTensorDescriptor_t xi = tensor(CUDNN_DATA_INT8, {2, 3, 4, 4});
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, inference(CUDNN_BATCHNORM_SPATIAL, xi, xi, p, 1e-5, mb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnBatchNormalizationForwardInference(nullptr, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, xb.data(), y,
                                                          yb.data(), p, sb.data(), bb.data(), mb.data(), vb.data(), 1e-5));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, nullptr, &zero, x, xb.data(), y,
                                                          yb.data(), p, sb.data(), bb.data(), mb.data(), vb.data(), 1e-5));
    EXPECT_TRUE(y_untouched());
    for (auto d : {y_other, y_half, p_double, x3, xi}) cudnnDestroyTensorDescriptor(d);
}

TEST_F(Fixture, BatchNormTrainingAndBackwardBadArguments) {
    std::vector<float> rm(3, 0.0f), rv(3, 1.0f), sm(3), si(3), ds(3, 5.0f), db(3, 5.0f);
    auto train = [&](void* run_mean, void* run_var, void* save_mean, void* save_var, double eps) {
        return cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, xb.data(), y,
                                                      yb.data(), p, sb.data(), bb.data(), 0.1, run_mean, run_var, eps,
                                                      save_mean, save_var);
    };
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, train(rm.data(), nullptr, sm.data(), si.data(), 1e-5));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, train(rm.data(), rv.data(), nullptr, si.data(), 1e-5));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, train(rm.data(), rv.data(), sm.data(), si.data(), -1e-3));
    EXPECT_TRUE(y_untouched());
    EXPECT_EQ(rm, std::vector<float>(3, 0.0f));
    ASSERT_OK(train(nullptr, nullptr, nullptr, nullptr, 0.0));  // both optional pairs absent
    std::vector<float> dx(xb.size(), 3.0f);
    auto backward = [&](const void* mean, const void* ivar, void* dscale, cudnnTensorDescriptor_t dyd) {
        return cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, x, xb.data(), dyd,
                                               yb.data(), x, dx.data(), p, sb.data(), dscale, db.data(), 1e-5, mean,
                                               ivar);
    };
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, backward(sm.data(), nullptr, ds.data(), y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, backward(nullptr, nullptr, nullptr, y));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, backward(nullptr, nullptr, ds.data(), unset));
    EXPECT_EQ(dx, std::vector<float>(xb.size(), 3.0f));
    EXPECT_EQ(ds, std::vector<float>(3, 5.0f));
}

TEST_F(Fixture, BatchNormExBadArguments) {
    cudnnActivationDescriptor_t act;
    ASSERT_OK(cudnnCreateActivationDescriptor(&act));
    ASSERT_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    size_t ws = 0, rs = 0;
    // PyTorch's queries: z and y descriptors given though bnOps is BN, activation NULL.
    ASSERT_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
                                                                       CUDNN_BATCHNORM_OPS_BN, x, x, x, p, nullptr, &ws));
    ASSERT_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
                                                                   CUDNN_BATCHNORM_OPS_BN, nullptr, x, &rs));
    ASSERT_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
                                                                CUDNN_BATCHNORM_OPS_BN, x, x, x, nullptr, x, p, nullptr,
                                                                &ws));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                                              h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN, x, x, x, p, nullptr,
                                              nullptr));
    // Activation ops without an activation descriptor; add without z.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                                              h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, x, nullptr,
                                              x, p, nullptr, &ws));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                                              h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, x,
                                              nullptr, x, p, act, &ws));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                                              h, CUDNN_BATCHNORM_SPATIAL, static_cast<cudnnBatchNormOps_t>(9), x,
                                              nullptr, x, p, act, &ws));
    ASSERT_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_SWISH, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                                                  h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, x,
                                                  nullptr, x, p, act, &ws));
    // Fused activation backward needs y.
    std::vector<float> dx(xb.size(), 3.0f), ds(3), db(3), sm(3, 0.0f), si(3, 1.0f);
    ASSERT_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnBatchNormalizationBackwardEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one,
                                                    &zero, &one, &zero, x, xb.data(), y, nullptr, y, yb.data(), nullptr,
                                                    nullptr, x, dx.data(), p, sb.data(), nullptr, ds.data(), db.data(),
                                                    1e-5, sm.data(), si.data(), act, nullptr, 0, nullptr, 0));
    EXPECT_EQ(dx, std::vector<float>(xb.size(), 3.0f));
    cudnnDestroyActivationDescriptor(act);
}

TEST_F(Fixture, BatchNormWorkspaceTooSmall) {
    // The CPU backend needs no workspace: any size works there; a NULL workspace of
    // size 0 is the common case. Check the query answers and the call accepts it.
    size_t ws = 123;
    ASSERT_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                       CUDNN_BATCHNORM_OPS_BN, x, nullptr, y, p, nullptr,
                                                                       &ws));
    std::vector<float> sm(3), si(3);
    std::vector<unsigned char> work(ws + 1);
    ASSERT_OK(cudnnBatchNormalizationForwardTrainingEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN, &one, &zero,
                                                       x, xb.data(), nullptr, nullptr, y, yb.data(), p, sb.data(),
                                                       bb.data(), 1.0, nullptr, nullptr, 1e-5, sm.data(), si.data(),
                                                       nullptr, ws ? work.data() : nullptr, ws, nullptr, 0));
}

TEST_F(Fixture, DeriveDescriptors) {
    cudnnTensorDescriptor_t d, e;
    ASSERT_OK(cudnnCreateTensorDescriptor(&d));
    ASSERT_OK(cudnnCreateTensorDescriptor(&e));
    cudnnTensorDescriptor_t xh = tensor(CUDNN_DATA_BFLOAT16, {2, 5, 3, 4, 6});
    ASSERT_OK(cudnnDeriveBNTensorDescriptor(d, xh, CUDNN_BATCHNORM_PER_ACTIVATION));
    int nb = 0, dims[8], strides[8];
    cudnnDataType_t dt;
    ASSERT_OK(cudnnGetTensorNdDescriptor(d, 8, &dt, &nb, dims, strides));
    EXPECT_EQ(dt, CUDNN_DATA_FLOAT);
    EXPECT_EQ(nb, 5);
    EXPECT_EQ(std::vector<int>(dims, dims + 5), (std::vector<int>{1, 5, 3, 4, 6}));
    EXPECT_EQ(std::vector<int>(strides, strides + 5), (std::vector<int>{360, 72, 24, 6, 1}));
    ASSERT_OK(cudnnDeriveNormTensorDescriptor(d, e, xh, CUDNN_NORM_PER_CHANNEL, 1));
    ASSERT_OK(cudnnGetTensorNdDescriptor(e, 8, &dt, &nb, dims, strides));
    EXPECT_EQ(std::vector<int>(dims, dims + 5), (std::vector<int>{1, 5, 1, 1, 1}));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnDeriveNormTensorDescriptor(d, e, xh, CUDNN_NORM_PER_CHANNEL, 2));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDeriveBNTensorDescriptor(d, xh, static_cast<cudnnBatchNormMode_t>(3)));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDeriveBNTensorDescriptor(d, unset, CUDNN_BATCHNORM_SPATIAL));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDeriveBNTensorDescriptor(nullptr, x, CUDNN_BATCHNORM_SPATIAL));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDeriveBNTensorDescriptor(d, nullptr, CUDNN_BATCHNORM_SPATIAL));
    // A failed derive leaves the descriptor as it was.
    ASSERT_OK(cudnnGetTensorNdDescriptor(e, 8, &dt, &nb, dims, strides));
    EXPECT_EQ(std::vector<int>(dims, dims + 5), (std::vector<int>{1, 5, 1, 1, 1}));
    for (auto t : {d, e, xh}) cudnnDestroyTensorDescriptor(t);
}

TEST_F(Fixture, NormalizationFamilyBadArguments) {
    std::vector<float> rm(3, 0.0f), rv(3, 1.0f);
    auto infer = [&](cudnnNormMode_t mode, cudnnNormAlgo_t algo, int groups) {
        return cudnnNormalizationForwardInference(h, mode, CUDNN_NORM_OPS_NORM, algo, &one, &zero, x, xb.data(), p,
                                                  sb.data(), bb.data(), p, rm.data(), rv.data(), nullptr, nullptr,
                                                  nullptr, y, yb.data(), 1e-5, groups);
    };
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, infer(CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_ALGO_STANDARD, 2));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, infer(static_cast<cudnnNormMode_t>(5), CUDNN_NORM_ALGO_STANDARD, 1));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, infer(CUDNN_NORM_PER_CHANNEL, static_cast<cudnnNormAlgo_t>(5), 1));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, infer(CUDNN_NORM_PER_ACTIVATION, CUDNN_NORM_ALGO_STANDARD, 1));
    EXPECT_TRUE(y_untouched());
    ASSERT_OK(infer(CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_ALGO_PERSIST, 1));
    size_t size = 0;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetNormalizationTrainingReserveSpaceSize(h, CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_OPS_NORM,
                                                                CUDNN_NORM_ALGO_STANDARD, nullptr, x, nullptr, 1));
    ASSERT_OK(cudnnGetNormalizationTrainingReserveSpaceSize(h, CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_OPS_NORM,
                                                            CUDNN_NORM_ALGO_STANDARD, nullptr, x, &size, 1));
    EXPECT_EQ(size, 0u);
}

TEST_F(Fixture, PoolingBadArguments) {
    cudnnPoolingDescriptor_t pd;
    ASSERT_OK(cudnnCreatePoolingDescriptor(&pd));
    cudnnTensorDescriptor_t yp = tensor(CUDNN_DATA_FLOAT, {2, 3, 2, 2});
    std::vector<float> ypb(2 * 3 * 2 * 2, 7.0f);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingForward(h, pd, &one, x, xb.data(), &zero, yp, ypb.data()));  // unset
    ASSERT_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
    ASSERT_OK(cudnnPoolingForward(h, pd, &one, x, xb.data(), &zero, yp, ypb.data()));
    std::fill(ypb.begin(), ypb.end(), 7.0f);
    cudnnTensorDescriptor_t wrong_c = tensor(CUDNN_DATA_FLOAT, {2, 4, 2, 2});
    cudnnTensorDescriptor_t wrong_t = tensor(CUDNN_DATA_HALF, {2, 3, 2, 2});
    cudnnTensorDescriptor_t x5 = tensor(CUDNN_DATA_FLOAT, {2, 3, 4, 4, 4});
    cudnnTensorDescriptor_t xi32 = tensor(CUDNN_DATA_INT32, {2, 3, 4, 4});
    cudnnTensorDescriptor_t yi32 = tensor(CUDNN_DATA_INT32, {2, 3, 2, 2});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingForward(h, pd, &one, x, xb.data(), &zero, wrong_c, ypb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingForward(h, pd, &one, x, xb.data(), &zero, wrong_t, ypb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingForward(h, pd, &one, x5, xb.data(), &zero, yp, ypb.data()));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnPoolingForward(h, pd, &one, xi32, xb.data(), &zero, yi32, ypb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingForward(h, pd, &one, x, nullptr, &zero, yp, ypb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingForward(h, pd, nullptr, x, xb.data(), &zero, yp, ypb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingForward(h, nullptr, &one, x, xb.data(), &zero, yp, ypb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnPoolingForward(h, reinterpret_cast<cudnnPoolingDescriptor_t>(x), &one, x, xb.data(), &zero, yp,
                                      ypb.data()));
    for (float v : ypb) EXPECT_EQ(v, 7.0f);
    std::vector<float> dx(xb.size(), 3.0f);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingBackward(h, pd, &one, yp, ypb.data(), x, ypb.data(), x, xb.data(),
                                                               &zero, x, dx.data()));  // dy dims
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingBackward(h, pd, &one, yp, ypb.data(), yp, ypb.data(), x, xb.data(),
                                                               &zero, yp, dx.data()));  // dx dims
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnPoolingBackward(h, pd, &one, yp, ypb.data(), yp, nullptr, x, xb.data(),
                                                               &zero, x, dx.data()));
    for (float v : dx) EXPECT_EQ(v, 3.0f);
    for (auto d : {yp, wrong_c, wrong_t, x5, xi32, yi32}) cudnnDestroyTensorDescriptor(d);
    cudnnDestroyPoolingDescriptor(pd);
}

TEST_F(Fixture, LrnAndDivisiveBadArguments) {
    cudnnLRNDescriptor_t ld;
    ASSERT_OK(cudnnCreateLRNDescriptor(&ld));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnLRNCrossChannelForward(h, ld, static_cast<cudnnLRNMode_t>(1), &one, x,
                                                                      xb.data(), &zero, y, yb.data()));
    cudnnTensorDescriptor_t x2 = tensor(CUDNN_DATA_FLOAT, {6, 16});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x2,
                                                                      xb.data(), &zero, x2, yb.data()));
    cudnnTensorDescriptor_t yh = tensor(CUDNN_DATA_HALF, {2, 3, 4, 4});
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x,
                                                                          xb.data(), &zero, yh, yb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnLRNCrossChannelForward(h, nullptr, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x,
                                                                      xb.data(), &zero, y, yb.data()));
    std::vector<float> tmp(xb.size());
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, x, xb.data(), nullptr,
                                                    nullptr, tmp.data(), &zero, y, yb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDivisiveNormalizationForward(h, ld, static_cast<cudnnDivNormMode_t>(1), &one, x, xb.data(),
                                                    nullptr, tmp.data(), tmp.data(), &zero, y, yb.data()));
    cudnnTensorDescriptor_t x3 = tensor(CUDNN_DATA_FLOAT, {2, 3, 16});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, x3, xb.data(), nullptr,
                                                    tmp.data(), tmp.data(), &zero, x3, yb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDivisiveNormalizationBackward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, x, xb.data(), nullptr,
                                                     nullptr, tmp.data(), tmp.data(), &zero, y, yb.data(), nullptr));
    EXPECT_TRUE(y_untouched());
    for (auto d : {x2, yh, x3}) cudnnDestroyTensorDescriptor(d);
    cudnnDestroyLRNDescriptor(ld);
}

TEST_F(Fixture, SpatialTransformerBadArguments) {
    cudnnSpatialTransformerDescriptor_t st;
    ASSERT_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    float theta[12] = {};
    std::vector<float> grid(2 * 4 * 4 * 2, 5.0f);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSpatialTfGridGeneratorForward(h, st, theta, grid.data()));  // unset
    const int dims5[5] = {2, 3, 4, 4, 4};
    ASSERT_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 5, dims5));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnSpatialTfGridGeneratorForward(h, st, theta, grid.data()));
    const int dims[4] = {2, 3, 4, 4};
    ASSERT_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSpatialTfGridGeneratorForward(h, st, nullptr, grid.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSpatialTfGridGeneratorBackward(h, st, grid.data(), nullptr));
    for (float v : grid) EXPECT_EQ(v, 5.0f);
    cudnnTensorDescriptor_t ybad = tensor(CUDNN_DATA_FLOAT, {2, 3, 4, 5});
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSpatialTfSamplerForward(h, st, &one, x, xb.data(), grid.data(), &zero, ybad, yb.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSpatialTfSamplerForward(h, st, &one, x, xb.data(), nullptr, &zero, y, yb.data()));
    std::vector<float> dx(xb.size(), 3.0f), dgrid(grid.size(), 3.0f);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSpatialTfSamplerBackward(h, st, &one, x, xb.data(), &zero, x, dx.data(), nullptr, y, yb.data(),
                                                grid.data(), &zero, dgrid.data()));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSpatialTfSamplerBackward(h, st, &one, x, xb.data(), &zero, x, dx.data(), &one, y, yb.data(),
                                                grid.data(), &zero, nullptr));
    EXPECT_TRUE(y_untouched());
    for (float v : dx) EXPECT_EQ(v, 3.0f);
    cudnnDestroyTensorDescriptor(ybad);
    cudnnDestroySpatialTransformerDescriptor(st);
}

TEST_F(Fixture, EveryNewFunctionLeavesAMessage) {
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, inference(CUDNN_BATCHNORM_SPATIAL, x, y, p, -1.0, mb.data()));
    // (EXPECT_STATUS read the message; a fresh failure leaves one naming the problem.)
    EXPECT_NE(inference(CUDNN_BATCHNORM_SPATIAL, x, y, p, -1.0, mb.data()), CUDNN_STATUS_SUCCESS);
    EXPECT_NE(odnn_test::last_error().find("epsilon"), std::string::npos);
}

}  // namespace
