// Activation, pooling, LRN, op-tensor, reduce-tensor, tensor-transform, dropout and
// spatial-transformer descriptors through odnn's public API: what the oracle test
// (tests/oracle/oracle_ops_desc.cpp) cannot ask NVIDIA's library, because it crashes
// (NULL outputs, garbage or destroyed descriptors), needs a GPU (dropout with a
// handle), or because odnn differs on purpose (the checks marked "Divergence").
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/test_util.hpp"

namespace {

constexpr cudnnStatus_t kBad = CUDNN_STATUS_BAD_PARAM;

// Pointers that are not a live descriptor of the kind a function takes: NULL, garbage
// bytes, one destroyed already, and a live descriptor of another kind.
template <class D>
std::vector<std::pair<std::string, D>> bad_pointers(D destroyed) {
    static unsigned char garbage[4096];
    std::memset(garbage, 0xA5, sizeof garbage);
    static cudnnTensorDescriptor_t other = [] {
        cudnnTensorDescriptor_t t = nullptr;
        cudnnCreateTensorDescriptor(&t);
        return t;
    }();
    return {{"NULL", nullptr},
            {"garbage", reinterpret_cast<D>(garbage)},
            {"destroyed", destroyed},
            {"another kind", reinterpret_cast<D>(other)}};
}

// Every call in `calls` must refuse every bad descriptor pointer with BAD_PARAM.
template <class D>
void expect_refuses_bad_descriptors(D destroyed,
                                    const std::vector<std::pair<const char*, std::function<cudnnStatus_t(D)>>>& calls) {
    for (const auto& [name, call] : calls)
        for (const auto& [what, p] : bad_pointers(destroyed)) {
            SCOPED_TRACE(std::string(name) + " with a " + what + " descriptor");
            EXPECT_STATUS(kBad, call(p));
        }
}

// ---- Activation ----

TEST(ActivationDesc, DefaultsAndRoundTrip) {
    cudnnActivationDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateActivationDescriptor(&d));
    cudnnActivationMode_t mode;
    cudnnNanPropagation_t nan;
    double coef = -1, beta = -1;
    ASSERT_OK(cudnnGetActivationDescriptor(d, &mode, &nan, &coef));
    EXPECT_EQ(mode, CUDNN_ACTIVATION_SIGMOID);
    EXPECT_EQ(nan, CUDNN_NOT_PROPAGATE_NAN);
    EXPECT_EQ(coef, 0.0);
    ASSERT_OK(cudnnGetActivationDescriptorSwishBeta(d, &beta));
    EXPECT_EQ(beta, 1.0);
    for (int m = CUDNN_ACTIVATION_SIGMOID; m <= CUDNN_ACTIVATION_SWISH; ++m) {
        ASSERT_OK(cudnnSetActivationDescriptor(d, static_cast<cudnnActivationMode_t>(m), CUDNN_PROPAGATE_NAN, m * 0.5));
        ASSERT_OK(cudnnGetActivationDescriptor(d, &mode, &nan, &coef));
        EXPECT_EQ(mode, m);
        EXPECT_EQ(nan, CUDNN_PROPAGATE_NAN);
        EXPECT_EQ(coef, m * 0.5);
    }
    ASSERT_OK(cudnnSetActivationDescriptorSwishBeta(d, -2.5));
    ASSERT_OK(cudnnSetActivationDescriptor(d, CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_NOT_PROPAGATE_NAN, NAN));
    ASSERT_OK(cudnnGetActivationDescriptor(d, &mode, &nan, &coef));
    EXPECT_TRUE(std::isnan(coef));
    ASSERT_OK(cudnnGetActivationDescriptorSwishBeta(d, &beta));
    EXPECT_EQ(beta, -2.5);
    // A failed Set changes nothing.
    EXPECT_STATUS(kBad, cudnnSetActivationDescriptor(d, static_cast<cudnnActivationMode_t>(7), CUDNN_PROPAGATE_NAN, 1));
    EXPECT_STATUS(kBad,
                  cudnnSetActivationDescriptor(d, CUDNN_ACTIVATION_RELU, static_cast<cudnnNanPropagation_t>(2), 1));
    ASSERT_OK(cudnnGetActivationDescriptor(d, &mode, &nan, &coef));
    EXPECT_EQ(mode, CUDNN_ACTIVATION_CLIPPED_RELU);
    EXPECT_EQ(nan, CUDNN_NOT_PROPAGATE_NAN);
    ASSERT_OK(cudnnDestroyActivationDescriptor(d));
}

TEST(ActivationDesc, NullAndBadPointers) {
    EXPECT_STATUS(kBad, cudnnCreateActivationDescriptor(nullptr));
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroyActivationDescriptor(nullptr));
    cudnnActivationDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateActivationDescriptor(&d));
    cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
    cudnnNanPropagation_t nan = CUDNN_PROPAGATE_NAN;
    double coef = 0, beta = 0;
    // NVIDIA's library crashes on these NULL outputs.
    EXPECT_STATUS(kBad, cudnnGetActivationDescriptor(d, nullptr, &nan, &coef));
    EXPECT_STATUS(kBad, cudnnGetActivationDescriptor(d, &mode, nullptr, &coef));
    EXPECT_STATUS(kBad, cudnnGetActivationDescriptor(d, &mode, &nan, nullptr));
    EXPECT_STATUS(kBad, cudnnGetActivationDescriptorSwishBeta(d, nullptr));
    cudnnActivationDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateActivationDescriptor(&dead));
    ASSERT_OK(cudnnDestroyActivationDescriptor(dead));
    using D = cudnnActivationDescriptor_t;
    expect_refuses_bad_descriptors<D>(
        dead,
        {{"Set", [](D p) { return cudnnSetActivationDescriptor(p, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0); }},
         {"Get", [&](D p) { return cudnnGetActivationDescriptor(p, &mode, &nan, &coef); }},
         {"SetSwishBeta", [](D p) { return cudnnSetActivationDescriptorSwishBeta(p, 1.0); }},
         {"GetSwishBeta", [&](D p) { return cudnnGetActivationDescriptorSwishBeta(p, &beta); }}});
    for (const auto& [what, p] : bad_pointers<D>(dead))
        if (p) {
            SCOPED_TRACE(what);
            EXPECT_STATUS(kBad, cudnnDestroyActivationDescriptor(p));
        }
    ASSERT_OK(cudnnDestroyActivationDescriptor(d));
}

// ---- Pooling ----

struct Pool2d {
    cudnnPoolingMode_t mode;
    cudnnNanPropagation_t nan;
    int v[6];
};

Pool2d get2d(cudnnPoolingDescriptor_t d) {
    Pool2d p{};
    EXPECT_EQ(cudnnGetPooling2dDescriptor(d, &p.mode, &p.nan, &p.v[0], &p.v[1], &p.v[2], &p.v[3], &p.v[4], &p.v[5]),
              CUDNN_STATUS_SUCCESS);
    return p;
}

TEST(PoolingDesc, RoundTripAndStaleEntries) {
    cudnnPoolingDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreatePoolingDescriptor(&d));
    Pool2d p = get2d(d);  // fresh: zeros
    EXPECT_EQ(p.mode, CUDNN_POOLING_MAX);
    for (int v : p.v) EXPECT_EQ(v, 0);
    ASSERT_OK(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_PROPAGATE_NAN, 3, 2, 1,
                                          -1, 2, 1));
    p = get2d(d);
    EXPECT_EQ(p.mode, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
    EXPECT_EQ(p.nan, CUDNN_PROPAGATE_NAN);
    const int want[6] = {3, 2, 1, -1, 2, 1};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(p.v[i], want[i]) << i;
    // 3-D over 2-D, then 1-D: a Get of 3 dims shows what each Set left.
    const int w3[3] = {4, 5, 6}, p3[3] = {0, 1, 2}, s3[3] = {1, 2, 3};
    ASSERT_OK(cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_NOT_PROPAGATE_NAN, 3, w3, p3, s3));
    const int w1[1] = {7}, p1[1] = {3}, s1[1] = {4};
    ASSERT_OK(cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 1, w1, p1, s1));
    cudnnPoolingMode_t mode;
    cudnnNanPropagation_t nan;
    int nb = -1, wa[6], pa[6], sa[6];
    ASSERT_OK(cudnnGetPoolingNdDescriptor(d, 3, &mode, &nan, &nb, wa, pa, sa));
    EXPECT_EQ(nb, 1);
    EXPECT_EQ(wa[0], 7);
    EXPECT_EQ(wa[1], 5);
    EXPECT_EQ(wa[2], 6);
    EXPECT_EQ(sa[0], 4);
    EXPECT_EQ(sa[2], 3);
    // Up to 6 dims can be asked for, not more.
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnGetPoolingNdDescriptor(d, 7, &mode, &nan, &nb, wa, pa, sa));
    ASSERT_OK(cudnnGetPoolingNdDescriptor(d, 0, &mode, &nan, &nb, nullptr, nullptr, nullptr));
    ASSERT_OK(cudnnDestroyPoolingDescriptor(d));
}

TEST(PoolingDesc, FailedSetLeavesItUnchanged) {
    // NVIDIA writes the dims before a bad window or stride and then fails; odnn checks first.
    cudnnPoolingDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreatePoolingDescriptor(&d));
    ASSERT_OK(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 5, 4, 1, 2, 3, 1));
    EXPECT_STATUS(kBad, cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                                    CUDNN_NOT_PROPAGATE_NAN, 3, 3, 0, 0, 1, 0));
    EXPECT_STATUS(kBad, cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                                    CUDNN_NOT_PROPAGATE_NAN, 3, -3, 0, 0, 1, 1));
    const int w[3] = {2, 0, 2}, p[3] = {0, 0, 0}, s[3] = {1, 1, 1};
    EXPECT_STATUS(kBad, cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, w, p, s));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 7, w, p, s));
    const Pool2d got = get2d(d);
    EXPECT_EQ(got.mode, CUDNN_POOLING_MAX);
    EXPECT_EQ(got.nan, CUDNN_PROPAGATE_NAN);
    const int want[6] = {5, 4, 1, 2, 3, 1};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(got.v[i], want[i]) << i;
    cudnnPoolingMode_t mode;
    cudnnNanPropagation_t nan;
    int nb = -1, a[6], b[6], c[6];
    ASSERT_OK(cudnnGetPoolingNdDescriptor(d, 2, &mode, &nan, &nb, a, b, c));
    EXPECT_EQ(nb, 2);
    ASSERT_OK(cudnnDestroyPoolingDescriptor(d));
}

TEST(PoolingDesc, OutputDims) {
    cudnnPoolingDescriptor_t d = nullptr;
    cudnnTensorDescriptor_t x = nullptr;
    ASSERT_OK(cudnnCreatePoolingDescriptor(&d));
    ASSERT_OK(cudnnCreateTensorDescriptor(&x));
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 10, 11));
    ASSERT_OK(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 3, 3, 1, 1, 2, 2));
    int n, c, h, w, o[4];
    ASSERT_OK(cudnnGetPooling2dForwardOutputDim(d, x, &n, &c, &h, &w));
    EXPECT_EQ(n, 2);
    EXPECT_EQ(c, 3);
    EXPECT_EQ(h, 5);  // 1 + (10 + 2 - 3) / 2
    EXPECT_EQ(w, 6);  // 1 + (11 + 2 - 3) / 2
    ASSERT_OK(cudnnGetPoolingNdForwardOutputDim(d, x, 4, o));
    EXPECT_EQ(o[2], 5);
    EXPECT_EQ(o[3], 6);
    // NULL outputs (NVIDIA's library crashes on these): a status, nothing written.
    n = c = h = w = -9;
    EXPECT_STATUS(kBad, cudnnGetPooling2dForwardOutputDim(d, x, nullptr, &c, &h, &w));
    EXPECT_STATUS(kBad, cudnnGetPooling2dForwardOutputDim(d, x, &n, nullptr, &h, &w));
    EXPECT_STATUS(kBad, cudnnGetPooling2dForwardOutputDim(d, x, &n, &c, nullptr, &w));
    EXPECT_STATUS(kBad, cudnnGetPooling2dForwardOutputDim(d, x, &n, &c, &h, nullptr));
    EXPECT_EQ(n, -9);
    EXPECT_EQ(w, -9);
    EXPECT_STATUS(kBad, cudnnGetPoolingNdForwardOutputDim(d, x, 4, nullptr));
    // Divergence: a padding whose output size overflows int is refused (NVIDIA wraps around).
    ASSERT_OK(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 3, 3, INT_MAX, 0, 1, 1));
    EXPECT_STATUS(kBad, cudnnGetPoolingNdForwardOutputDim(d, x, 4, o));
    EXPECT_STATUS(kBad, cudnnGetPooling2dForwardOutputDim(d, x, &n, &c, &h, &w));
    EXPECT_EQ(h, 0);
    ASSERT_OK(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 3, 3, 1073741819, 0, 1, 1));
    ASSERT_OK(cudnnGetPoolingNdForwardOutputDim(d, x, 4, o));
    EXPECT_EQ(o[2], 2147483646);  // 1 + 10 + 2 * 1073741819 - 3, still an int
    // A destroyed tensor is refused.
    cudnnTensorDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateTensorDescriptor(&dead));
    ASSERT_OK(cudnnDestroyTensorDescriptor(dead));
    EXPECT_STATUS(kBad, cudnnGetPoolingNdForwardOutputDim(d, dead, 4, o));
    EXPECT_STATUS(kBad, cudnnGetPooling2dForwardOutputDim(d, dead, &n, &c, &h, &w));
    ASSERT_OK(cudnnDestroyTensorDescriptor(x));
    ASSERT_OK(cudnnDestroyPoolingDescriptor(d));
}

TEST(PoolingDesc, NullAndBadPointers) {
    EXPECT_STATUS(kBad, cudnnCreatePoolingDescriptor(nullptr));
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroyPoolingDescriptor(nullptr));
    cudnnPoolingDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreatePoolingDescriptor(&d));
    const int w[2] = {2, 2}, p[2] = {0, 0}, s[2] = {1, 1};
    // NULL arrays and outputs: NVIDIA's library crashes on each.
    EXPECT_STATUS(kBad, cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, nullptr, p, s));
    EXPECT_STATUS(kBad, cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, w, nullptr, s));
    EXPECT_STATUS(kBad, cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, w, p, nullptr));
    cudnnPoolingMode_t mode;
    cudnnNanPropagation_t nan;
    int a, b, c, e, f, g, h, nb, arr[6];
    EXPECT_STATUS(kBad, cudnnGetPooling2dDescriptor(d, nullptr, &nan, &a, &b, &c, &e, &f, &g));
    EXPECT_STATUS(kBad, cudnnGetPooling2dDescriptor(d, &mode, &nan, &a, &b, &c, &e, &f, nullptr));
    EXPECT_STATUS(kBad, cudnnGetPoolingNdDescriptor(d, 2, nullptr, &nan, &nb, arr, arr, arr));
    EXPECT_STATUS(kBad, cudnnGetPoolingNdDescriptor(d, 2, &mode, &nan, nullptr, arr, arr, arr));
    EXPECT_STATUS(kBad, cudnnGetPoolingNdDescriptor(d, 2, &mode, &nan, &nb, nullptr, arr, arr));
    cudnnTensorDescriptor_t x = nullptr;
    ASSERT_OK(cudnnCreateTensorDescriptor(&x));
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 4, 4));
    cudnnPoolingDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreatePoolingDescriptor(&dead));
    ASSERT_OK(cudnnDestroyPoolingDescriptor(dead));
    using D = cudnnPoolingDescriptor_t;
    expect_refuses_bad_descriptors<D>(
        dead,
        {{"Set2d",
          [](D q) { return cudnnSetPooling2dDescriptor(q, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, 2, 0, 0, 1, 1); }},
         {"SetNd",
          [&](D q) { return cudnnSetPoolingNdDescriptor(q, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, w, p, s); }},
         {"Get2d", [&](D q) { return cudnnGetPooling2dDescriptor(q, &mode, &nan, &a, &b, &c, &e, &f, &g); }},
         {"GetNd", [&](D q) { return cudnnGetPoolingNdDescriptor(q, 2, &mode, &nan, &nb, arr, arr, arr); }},
         {"Output2d", [&](D q) { return cudnnGetPooling2dForwardOutputDim(q, x, &a, &b, &c, &h); }},
         {"OutputNd", [&](D q) { return cudnnGetPoolingNdForwardOutputDim(q, x, 4, arr); }}});
    for (const auto& [what, q] : bad_pointers<D>(dead))
        if (q) {
            SCOPED_TRACE(what);
            EXPECT_STATUS(kBad, cudnnDestroyPoolingDescriptor(q));
        }
    ASSERT_OK(cudnnDestroyTensorDescriptor(x));
    ASSERT_OK(cudnnDestroyPoolingDescriptor(d));
}

// ---- LRN ----

TEST(LrnDesc, DefaultsLimitsAndPointers) {
    cudnnLRNDescriptor_t d = nullptr;
    EXPECT_STATUS(kBad, cudnnCreateLRNDescriptor(nullptr));  // NVIDIA's library crashes
    ASSERT_OK(cudnnCreateLRNDescriptor(&d));
    unsigned n = 0;
    double a = 0, b = 0, k = 0;
    ASSERT_OK(cudnnGetLRNDescriptor(d, &n, &a, &b, &k));
    EXPECT_EQ(n, 5u);
    EXPECT_EQ(a, 1e-4);
    EXPECT_EQ(b, 0.75);
    EXPECT_EQ(k, 2.0);
    ASSERT_OK(cudnnSetLRNDescriptor(d, CUDNN_LRN_MAX_N, -3.0, CUDNN_LRN_MIN_BETA, CUDNN_LRN_MIN_K));
    EXPECT_STATUS(kBad, cudnnSetLRNDescriptor(d, CUDNN_LRN_MIN_N - 1, 1.0, 1.0, 1.0));
    EXPECT_STATUS(kBad, cudnnSetLRNDescriptor(d, CUDNN_LRN_MAX_N + 1, 1.0, 1.0, 1.0));
    EXPECT_STATUS(kBad, cudnnSetLRNDescriptor(d, 5, 1.0, CUDNN_LRN_MIN_BETA * 0.999, 1.0));
    EXPECT_STATUS(kBad, cudnnSetLRNDescriptor(d, 5, 1.0, 1.0, CUDNN_LRN_MIN_K * 0.999));
    ASSERT_OK(cudnnGetLRNDescriptor(d, &n, &a, &b, &k));
    EXPECT_EQ(n, unsigned{CUDNN_LRN_MAX_N});
    EXPECT_EQ(a, -3.0);
    EXPECT_EQ(b, CUDNN_LRN_MIN_BETA);
    EXPECT_EQ(k, CUDNN_LRN_MIN_K);
    ASSERT_OK(cudnnGetLRNDescriptor(d, nullptr, nullptr, nullptr, nullptr));
    cudnnLRNDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateLRNDescriptor(&dead));
    ASSERT_OK(cudnnDestroyLRNDescriptor(dead));
    using D = cudnnLRNDescriptor_t;
    // NULL for Set: NVIDIA's library crashes.
    expect_refuses_bad_descriptors<D>(dead, {{"Set", [](D p) { return cudnnSetLRNDescriptor(p, 5, 1e-4, 0.75, 2.0); }},
                                             {"Get", [&](D p) { return cudnnGetLRNDescriptor(p, &n, &a, &b, &k); }}});
    for (const auto& [what, p] : bad_pointers<D>(dead))
        if (p) {
            SCOPED_TRACE(what);
            EXPECT_STATUS(kBad, cudnnDestroyLRNDescriptor(p));
        }
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroyLRNDescriptor(nullptr));
    ASSERT_OK(cudnnDestroyLRNDescriptor(d));
}

// ---- Op-tensor and reduce-tensor ----

TEST(OpTensorDesc, RoundTripAndPointers) {
    EXPECT_STATUS(kBad, cudnnCreateOpTensorDescriptor(nullptr));
    cudnnOpTensorDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateOpTensorDescriptor(&d));
    cudnnOpTensorOp_t op;
    cudnnDataType_t dt;
    cudnnNanPropagation_t nan;
    ASSERT_OK(cudnnGetOpTensorDescriptor(d, &op, &dt, &nan));
    EXPECT_EQ(op, CUDNN_OP_TENSOR_ADD);
    EXPECT_EQ(dt, CUDNN_DATA_FLOAT);
    EXPECT_EQ(nan, CUDNN_NOT_PROPAGATE_NAN);
    ASSERT_OK(cudnnSetOpTensorDescriptor(d, CUDNN_OP_TENSOR_NOT, CUDNN_DATA_BFLOAT16, CUDNN_PROPAGATE_NAN));
    EXPECT_STATUS(kBad, cudnnSetOpTensorDescriptor(d, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_INT8, CUDNN_PROPAGATE_NAN));
    ASSERT_OK(cudnnGetOpTensorDescriptor(d, &op, &dt, &nan));
    EXPECT_EQ(op, CUDNN_OP_TENSOR_NOT);
    EXPECT_EQ(dt, CUDNN_DATA_BFLOAT16);
    EXPECT_EQ(nan, CUDNN_PROPAGATE_NAN);
    EXPECT_STATUS(kBad, cudnnGetOpTensorDescriptor(d, nullptr, &dt, &nan));
    EXPECT_STATUS(kBad, cudnnGetOpTensorDescriptor(d, &op, nullptr, &nan));
    EXPECT_STATUS(kBad, cudnnGetOpTensorDescriptor(d, &op, &dt, nullptr));
    cudnnOpTensorDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateOpTensorDescriptor(&dead));
    ASSERT_OK(cudnnDestroyOpTensorDescriptor(dead));
    using D = cudnnOpTensorDescriptor_t;
    expect_refuses_bad_descriptors<D>(
        dead, {{"Set",
                [](D p) {
                    return cudnnSetOpTensorDescriptor(p, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN);
                }},
               {"Get", [&](D p) { return cudnnGetOpTensorDescriptor(p, &op, &dt, &nan); }}});
    for (const auto& [what, p] : bad_pointers<D>(dead))
        if (p) {
            SCOPED_TRACE(what);
            EXPECT_STATUS(kBad, cudnnDestroyOpTensorDescriptor(p));
        }
    ASSERT_OK(cudnnDestroyOpTensorDescriptor(d));
}

TEST(ReduceTensorDesc, RoundTripAndPointers) {
    EXPECT_STATUS(kBad, cudnnCreateReduceTensorDescriptor(nullptr));
    cudnnReduceTensorDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateReduceTensorDescriptor(&d));
    cudnnReduceTensorOp_t op;
    cudnnDataType_t dt;
    cudnnNanPropagation_t nan;
    cudnnReduceTensorIndices_t ind;
    cudnnIndicesType_t it;
    ASSERT_OK(cudnnGetReduceTensorDescriptor(d, &op, &dt, &nan, &ind, &it));
    EXPECT_EQ(op, CUDNN_REDUCE_TENSOR_ADD);
    EXPECT_EQ(dt, CUDNN_DATA_FLOAT);
    EXPECT_EQ(ind, CUDNN_REDUCE_TENSOR_NO_INDICES);
    EXPECT_EQ(it, CUDNN_32BIT_INDICES);
    ASSERT_OK(cudnnSetReduceTensorDescriptor(d, CUDNN_REDUCE_TENSOR_AMAX, CUDNN_DATA_HALF, CUDNN_PROPAGATE_NAN,
                                             CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_8BIT_INDICES));
    EXPECT_STATUS(kBad,
                  cudnnSetReduceTensorDescriptor(d, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_BFLOAT16, CUDNN_PROPAGATE_NAN,
                                                 CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
    ASSERT_OK(cudnnGetReduceTensorDescriptor(d, &op, &dt, &nan, &ind, &it));
    EXPECT_EQ(op, CUDNN_REDUCE_TENSOR_AMAX);
    EXPECT_EQ(dt, CUDNN_DATA_HALF);
    EXPECT_EQ(nan, CUDNN_PROPAGATE_NAN);
    EXPECT_EQ(ind, CUDNN_REDUCE_TENSOR_FLATTENED_INDICES);
    EXPECT_EQ(it, CUDNN_8BIT_INDICES);
    EXPECT_STATUS(kBad, cudnnGetReduceTensorDescriptor(d, nullptr, &dt, &nan, &ind, &it));
    EXPECT_STATUS(kBad, cudnnGetReduceTensorDescriptor(d, &op, nullptr, &nan, &ind, &it));
    EXPECT_STATUS(kBad, cudnnGetReduceTensorDescriptor(d, &op, &dt, nullptr, &ind, &it));
    EXPECT_STATUS(kBad, cudnnGetReduceTensorDescriptor(d, &op, &dt, &nan, nullptr, &it));
    EXPECT_STATUS(kBad, cudnnGetReduceTensorDescriptor(d, &op, &dt, &nan, &ind, nullptr));
    cudnnReduceTensorDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateReduceTensorDescriptor(&dead));
    ASSERT_OK(cudnnDestroyReduceTensorDescriptor(dead));
    using D = cudnnReduceTensorDescriptor_t;
    expect_refuses_bad_descriptors<D>(
        dead, {{"Set",
                [](D p) {
                    return cudnnSetReduceTensorDescriptor(p, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT,
                                                          CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
                                                          CUDNN_32BIT_INDICES);
                }},
               {"Get", [&](D p) { return cudnnGetReduceTensorDescriptor(p, &op, &dt, &nan, &ind, &it); }}});
    for (const auto& [what, p] : bad_pointers<D>(dead))
        if (p) {
            SCOPED_TRACE(what);
            EXPECT_STATUS(kBad, cudnnDestroyReduceTensorDescriptor(p));
        }
    ASSERT_OK(cudnnDestroyReduceTensorDescriptor(d));
}

// ---- Tensor transform ----

TEST(TensorTransformDesc, RoundTripNullsAndPointers) {
    EXPECT_STATUS(kBad, cudnnCreateTensorTransformDescriptor(nullptr));
    cudnnTensorTransformDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateTensorTransformDescriptor(&d));
    const int32_t before[4] = {0, 0, 1, 2}, after[4] = {0, 0, 3, -4};
    const uint32_t fold[2] = {2, 3};
    ASSERT_OK(cudnnSetTensorTransformDescriptor(d, 4, CUDNN_TENSOR_NHWC, before, after, fold, CUDNN_TRANSFORM_UNFOLD));
    cudnnTensorFormat_t f;
    cudnnFoldingDirection_t dir;
    int32_t b[4], a[4];
    uint32_t fo[2];
    ASSERT_OK(cudnnGetTensorTransformDescriptor(d, 4, &f, b, a, fo, &dir));
    EXPECT_EQ(f, CUDNN_TENSOR_NHWC);
    EXPECT_EQ(dir, CUDNN_TRANSFORM_UNFOLD);
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(b[i], before[i]);
        EXPECT_EQ(a[i], after[i]);
    }
    EXPECT_EQ(fo[0], 2u);
    EXPECT_EQ(fo[1], 3u);
    // Every output may be NULL (NVIDIA crashes on a NULL direction; odnn skips it like the others).
    ASSERT_OK(cudnnGetTensorTransformDescriptor(d, 4, nullptr, nullptr, nullptr, nullptr, nullptr));
    EXPECT_STATUS(kBad, cudnnGetTensorTransformDescriptor(d, 2, &f, b, a, fo, &dir));
    EXPECT_STATUS(kBad, cudnnGetTensorTransformDescriptor(d, 9, &f, b, a, fo, &dir));
    // Divergence: a negative format is refused (NVIDIA keeps it); the descriptor is unchanged.
    EXPECT_STATUS(kBad, cudnnSetTensorTransformDescriptor(d, 4, static_cast<cudnnTensorFormat_t>(-1), before, after,
                                                          fold, CUDNN_TRANSFORM_FOLD));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnSetTensorTransformDescriptor(d, 4, static_cast<cudnnTensorFormat_t>(3), before, after, fold,
                                                    CUDNN_TRANSFORM_FOLD));
    ASSERT_OK(cudnnGetTensorTransformDescriptor(d, 4, &f, b, a, fo, &dir));
    EXPECT_EQ(f, CUDNN_TENSOR_NHWC);
    EXPECT_EQ(dir, CUDNN_TRANSFORM_UNFOLD);
    cudnnTensorTransformDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateTensorTransformDescriptor(&dead));
    ASSERT_OK(cudnnDestroyTensorTransformDescriptor(dead));
    using D = cudnnTensorTransformDescriptor_t;
    expect_refuses_bad_descriptors<D>(
        dead, {{"Set",
                [&](D p) {
                    return cudnnSetTensorTransformDescriptor(p, 4, CUDNN_TENSOR_NCHW, before, after, fold,
                                                             CUDNN_TRANSFORM_FOLD);
                }},
               {"Get", [&](D p) { return cudnnGetTensorTransformDescriptor(p, 4, &f, b, a, fo, &dir); }}});
    for (const auto& [what, p] : bad_pointers<D>(dead))
        if (p) {
            SCOPED_TRACE(what);
            EXPECT_STATUS(kBad, cudnnDestroyTensorTransformDescriptor(p));
        }
    ASSERT_OK(cudnnDestroyTensorTransformDescriptor(d));
}

// ---- Dropout ----

// odnn's states layout (core/ops_desc.hpp): magic "ODNNDROP", version, seed, offset, check.
struct StatesHeader {
    uint64_t magic;
    uint32_t version;
    uint32_t reserved;
    uint64_t seed;
    uint64_t offset;
    uint64_t check;
};

struct Dropout : ::testing::Test {
    cudnnHandle_t h = nullptr;
    cudnnDropoutDescriptor_t d = nullptr;
    size_t states_size = 0;
    void SetUp() override {
        ASSERT_OK(cudnnCreate(&h));
        ASSERT_OK(cudnnCreateDropoutDescriptor(&d));
        ASSERT_OK(cudnnDropoutGetStatesSize(h, &states_size));
    }
    void TearDown() override {
        cudnnDestroyDropoutDescriptor(d);
        cudnnDestroy(h);
    }
    void expect_get(float p, const void* states, unsigned long long seed) {
        float gp = -1;
        void* gs = reinterpret_cast<void*>(0x1);
        unsigned long long gseed = 1;
        ASSERT_OK(cudnnGetDropoutDescriptor(d, h, &gp, &gs, &gseed));
        if (std::isnan(p))
            EXPECT_TRUE(std::isnan(gp));
        else
            EXPECT_EQ(gp, p);
        EXPECT_EQ(gs, states);
        EXPECT_EQ(gseed, seed);
    }
};

TEST_F(Dropout, StatesSizeAndFreshDescriptor) {
    EXPECT_EQ(states_size, 64u);
    expect_get(0.0f, nullptr, 0);
    EXPECT_STATUS(kBad, cudnnDropoutGetStatesSize(h, nullptr));  // NVIDIA's library crashes
    EXPECT_STATUS(kBad, cudnnDropoutGetStatesSize(nullptr, &states_size));
}

TEST_F(Dropout, SetInitialisesStatesFromTheSeed) {
    std::vector<unsigned char> s1(states_size + 32, 0xEE), s2(states_size + 32, 0x11), s3(states_size, 0x22);
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h, 0.5f, s1.data(), s1.size(), 1234));
    expect_get(0.5f, s1.data(), 1234);
    StatesHeader hd;
    std::memcpy(&hd, s1.data(), sizeof hd);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(&hd.magic), 8), "ODNNDROP");
    EXPECT_EQ(hd.seed, 1234u);
    EXPECT_EQ(hd.offset, 0u);
    EXPECT_NE(hd.check, 0u);
    for (size_t i = states_size; i < s1.size(); ++i) ASSERT_EQ(s1[i], 0xEE) << "byte " << i << " past the states";
    // The same seed gives the same states, whatever the buffer held and the probability.
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h, 0.25f, s2.data(), states_size, 1234));
    EXPECT_EQ(0, std::memcmp(s1.data(), s2.data(), states_size));
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h, 0.0f, s3.data(), s3.size(), 1234));
    EXPECT_EQ(0, std::memcmp(s1.data(), s3.data(), states_size));
    // Another seed, other states.
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h, 0.5f, s2.data(), states_size, 1235));
    EXPECT_NE(0, std::memcmp(s1.data(), s2.data(), states_size));
}

TEST_F(Dropout, NullStatesAndSizes) {
    // As cuDNN: NULL states are accepted (a descriptor with no RNG, e.g. dropout 0).
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h, 0.0f, nullptr, 0, 7));
    expect_get(0.0f, nullptr, 7);
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h, 0.5f, nullptr, 0, 8));
    expect_get(0.5f, nullptr, 8);
    // Too small a buffer: refused, and (unlike NVIDIA, which records the new dropout and
    // seed first) the descriptor keeps what it had.
    std::vector<unsigned char> s(states_size, 0x33);
    EXPECT_STATUS(kBad, cudnnSetDropoutDescriptor(d, h, 0.3f, s.data(), states_size - 1, 9));
    EXPECT_STATUS(kBad, cudnnSetDropoutDescriptor(d, h, 0.0f, s.data(), 0, 9));
    expect_get(0.5f, nullptr, 8);
    for (unsigned char c : s) ASSERT_EQ(c, 0x33);
    // Any dropout value is kept, as in cuDNN.
    for (float p : {1.0f, -0.5f, 1.5f, NAN, INFINITY}) {
        ASSERT_OK(cudnnSetDropoutDescriptor(d, h, p, s.data(), s.size(), 10));
        expect_get(p, s.data(), 10);
    }
}

TEST_F(Dropout, RestoreLeavesTheStatesAlone) {
    std::vector<unsigned char> s(states_size);
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h, 0.5f, s.data(), s.size(), 99));
    const std::vector<unsigned char> before = s;
    cudnnDropoutDescriptor_t r = nullptr;
    ASSERT_OK(cudnnCreateDropoutDescriptor(&r));
    ASSERT_OK(cudnnRestoreDropoutDescriptor(r, h, 0.7f, s.data(), s.size(), 12345));
    EXPECT_EQ(s, before);
    float p;
    void* st;
    unsigned long long seed;
    ASSERT_OK(cudnnGetDropoutDescriptor(r, h, &p, &st, &seed));
    EXPECT_EQ(p, 0.7f);
    EXPECT_EQ(st, s.data());
    EXPECT_EQ(seed, 12345u);
    // The size is checked even for NULL states (as cuDNN); a failed restore changes nothing.
    EXPECT_STATUS(kBad, cudnnRestoreDropoutDescriptor(r, h, 0.1f, nullptr, 0, 1));
    EXPECT_STATUS(kBad, cudnnRestoreDropoutDescriptor(r, h, 0.1f, s.data(), states_size - 1, 1));
    ASSERT_OK(cudnnGetDropoutDescriptor(r, h, &p, &st, &seed));
    EXPECT_EQ(p, 0.7f);
    EXPECT_EQ(seed, 12345u);
    ASSERT_OK(cudnnRestoreDropoutDescriptor(r, h, 0.1f, nullptr, states_size, 2));
    ASSERT_OK(cudnnDestroyDropoutDescriptor(r));
}

TEST_F(Dropout, ReserveSpaceSize) {
    cudnnTensorDescriptor_t x = nullptr;
    ASSERT_OK(cudnnCreateTensorDescriptor(&x));
    size_t size = 0;
    ASSERT_OK(cudnnDropoutGetReserveSpaceSize(x, &size));  // unset: one word
    EXPECT_EQ(size, 4u);
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5));
    ASSERT_OK(cudnnDropoutGetReserveSpaceSize(x, &size));
    EXPECT_EQ(size, 16u);  // 120 bits in 32-bit words
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 2, 8, 4, 5));
    ASSERT_OK(cudnnDropoutGetReserveSpaceSize(x, &size));
    EXPECT_EQ(size, 12u);                                              // 80 vectors
    EXPECT_STATUS(kBad, cudnnDropoutGetReserveSpaceSize(x, nullptr));  // NVIDIA's library crashes
    ASSERT_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_INT8, 2, 8, 4, 5));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, cudnnDropoutGetReserveSpaceSize(x, &size));
    ASSERT_OK(cudnnDestroyTensorDescriptor(x));
    EXPECT_STATUS(kBad, cudnnDropoutGetReserveSpaceSize(x, &size));  // destroyed
}

TEST_F(Dropout, NullAndBadPointers) {
    EXPECT_STATUS(kBad, cudnnCreateDropoutDescriptor(nullptr));
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroyDropoutDescriptor(nullptr));
    float p;
    void* st;
    unsigned long long seed;
    std::vector<unsigned char> s(states_size);
    EXPECT_STATUS(kBad, cudnnGetDropoutDescriptor(d, h, nullptr, &st, &seed));
    EXPECT_STATUS(kBad, cudnnGetDropoutDescriptor(d, h, &p, nullptr, &seed));
    EXPECT_STATUS(kBad, cudnnGetDropoutDescriptor(d, h, &p, &st, nullptr));
    // Bad handles.
    cudnnHandle_t dead_handle = nullptr;
    ASSERT_OK(cudnnCreate(&dead_handle));
    ASSERT_OK(cudnnDestroy(dead_handle));
    for (cudnnHandle_t bad : {cudnnHandle_t{nullptr}, dead_handle, reinterpret_cast<cudnnHandle_t>(d)}) {
        EXPECT_STATUS(kBad, cudnnDropoutGetStatesSize(bad, &states_size));
        EXPECT_STATUS(kBad, cudnnSetDropoutDescriptor(d, bad, 0.5f, s.data(), s.size(), 1));
        EXPECT_STATUS(kBad, cudnnRestoreDropoutDescriptor(d, bad, 0.5f, s.data(), s.size(), 1));
        EXPECT_STATUS(kBad, cudnnGetDropoutDescriptor(d, bad, &p, &st, &seed));
    }
    cudnnDropoutDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateDropoutDescriptor(&dead));
    ASSERT_OK(cudnnDestroyDropoutDescriptor(dead));
    using D = cudnnDropoutDescriptor_t;
    expect_refuses_bad_descriptors<D>(
        dead, {{"Set", [&](D q) { return cudnnSetDropoutDescriptor(q, h, 0.5f, s.data(), s.size(), 1); }},
               {"Restore", [&](D q) { return cudnnRestoreDropoutDescriptor(q, h, 0.5f, s.data(), s.size(), 1); }},
               {"Get", [&](D q) { return cudnnGetDropoutDescriptor(q, h, &p, &st, &seed); }}});
    for (const auto& [what, q] : bad_pointers<D>(dead))
        if (q) {
            SCOPED_TRACE(what);
            EXPECT_STATUS(kBad, cudnnDestroyDropoutDescriptor(q));
        }
}

// ---- Spatial transformer ----

TEST(SpatialTransformerDesc, SetAndPointers) {
    EXPECT_STATUS(kBad, cudnnCreateSpatialTransformerDescriptor(nullptr));
    cudnnSpatialTransformerDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateSpatialTransformerDescriptor(&d));
    const int dims[4] = {2, 3, 8, 9};
    ASSERT_OK(cudnnSetSpatialTransformerNdDescriptor(d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_HALF, 4, dims));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnSetSpatialTransformerNdDescriptor(d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_INT8, 4, dims));
    EXPECT_STATUS(
        kBad, cudnnSetSpatialTransformerNdDescriptor(d, static_cast<cudnnSamplerType_t>(1), CUDNN_DATA_FLOAT, 4, dims));
    EXPECT_STATUS(kBad,
                  cudnnSetSpatialTransformerNdDescriptor(d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, nullptr));
    // Divergence: NVIDIA accepts any nbDims and non-positive dims here.
    const int big[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    EXPECT_STATUS(kBad, cudnnSetSpatialTransformerNdDescriptor(d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 0, big));
    EXPECT_STATUS(kBad, cudnnSetSpatialTransformerNdDescriptor(d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, -1, big));
    EXPECT_STATUS(kBad, cudnnSetSpatialTransformerNdDescriptor(d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 9, big));
    const int zero[4] = {2, 0, 8, 9}, neg[4] = {2, 3, -8, 9};
    EXPECT_STATUS(kBad, cudnnSetSpatialTransformerNdDescriptor(d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, zero));
    EXPECT_STATUS(kBad, cudnnSetSpatialTransformerNdDescriptor(d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, neg));
    ASSERT_OK(cudnnSetSpatialTransformerNdDescriptor(d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 8, big));
    cudnnSpatialTransformerDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateSpatialTransformerDescriptor(&dead));
    ASSERT_OK(cudnnDestroySpatialTransformerDescriptor(dead));
    using D = cudnnSpatialTransformerDescriptor_t;
    expect_refuses_bad_descriptors<D>(dead, {{"SetNd", [&](D p) {
                                                  return cudnnSetSpatialTransformerNdDescriptor(
                                                      p, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims);
                                              }}});
    for (const auto& [what, p] : bad_pointers<D>(dead))
        if (p) {
            SCOPED_TRACE(what);
            EXPECT_STATUS(kBad, cudnnDestroySpatialTransformerDescriptor(p));
        }
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroySpatialTransformerDescriptor(nullptr));
    ASSERT_OK(cudnnDestroySpatialTransformerDescriptor(d));
}

}  // namespace
