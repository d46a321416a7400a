// Hand-computed values, properties and finite-difference gradients of the tensor ops,
// activation and softmax, through the public API on the CPU backend (double data where
// exactness matters).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/test_util.hpp"
#include "ops_tensor/runners.hpp"

namespace {

struct Known : ::testing::Test {
    cudnnHandle_t h = nullptr;
    std::vector<cudnnTensorDescriptor_t> descs;
    void SetUp() override { ASSERT_OK(cudnnCreate(&h)); }
    void TearDown() override {
        for (auto d : descs) cudnnDestroyTensorDescriptor(d);
        cudnnDestroy(h);
    }
    cudnnTensorDescriptor_t desc(int n, int c, int hh, int w, cudnnDataType_t dt = CUDNN_DATA_DOUBLE,
                                 cudnnTensorFormat_t f = CUDNN_TENSOR_NCHW) {
        cudnnTensorDescriptor_t d = nullptr;
        EXPECT_EQ(cudnnCreateTensorDescriptor(&d), CUDNN_STATUS_SUCCESS);
        EXPECT_EQ(cudnnSetTensor4dDescriptor(d, f, dt, n, c, hh, w), CUDNN_STATUS_SUCCESS);
        descs.push_back(d);
        return d;
    }
    std::vector<double> activation(cudnnActivationMode_t mode, double coef, double swish_beta,
                                   const std::vector<double>& x, cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN) {
        cudnnActivationDescriptor_t a = nullptr;
        EXPECT_EQ(cudnnCreateActivationDescriptor(&a), CUDNN_STATUS_SUCCESS);
        EXPECT_EQ(cudnnSetActivationDescriptor(a, mode, nan, coef), CUDNN_STATUS_SUCCESS);
        EXPECT_EQ(cudnnSetActivationDescriptorSwishBeta(a, swish_beta), CUDNN_STATUS_SUCCESS);
        auto d = desc(1, 1, 1, static_cast<int>(x.size()));
        std::vector<double> y(x.size(), NAN);
        const double one = 1, zero = 0;
        EXPECT_EQ(cudnnActivationForward(h, a, &one, d, x.data(), &zero, d, y.data()), CUDNN_STATUS_SUCCESS)
            << odnn_test::last_error();
        cudnnDestroyActivationDescriptor(a);
        return y;
    }
};

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << i;
        else EXPECT_NEAR(got[i], want[i], tol) << i;
    }
}

TEST_F(Known, ActivationValues) {
    const std::vector<double> x = {-2, -0.5, 0, 0.5, 3};
    expect_near_all(activation(CUDNN_ACTIVATION_RELU, 0, 1, x), {0, 0, 0, 0.5, 3}, 0);
    expect_near_all(activation(CUDNN_ACTIVATION_SIGMOID, 0, 1, {0, 3}), {0.5, 0.9525741268224334}, 1e-15);
    expect_near_all(activation(CUDNN_ACTIVATION_TANH, 0, 1, {0, 0.5}), {0, 0.46211715726000974}, 1e-15);
    expect_near_all(activation(CUDNN_ACTIVATION_CLIPPED_RELU, 1.0, 1, x), {0, 0, 0, 0.5, 1.0}, 0);
    expect_near_all(activation(CUDNN_ACTIVATION_ELU, 1.0, 1, x),
                    {-0.8646647167633873, -0.3934693402873666, 0, 0.5, 3}, 1e-15);
    expect_near_all(activation(CUDNN_ACTIVATION_ELU, 2.0, 1, {-2}), {2 * -0.8646647167633873}, 1e-15);
    expect_near_all(activation(CUDNN_ACTIVATION_SWISH, 0, 1.0, {3, -2}), {2.8577223804673, -0.2384058440442351},
                    1e-13);
    expect_near_all(activation(CUDNN_ACTIVATION_SWISH, 0, 2.0, {0.5}), {0.36552928931500245}, 1e-15);
    expect_near_all(activation(CUDNN_ACTIVATION_IDENTITY, 0, 1, x), x, 0);
}

TEST_F(Known, ActivationNanOption) {
    const std::vector<double> x = {NAN, -1, 2};
    expect_near_all(activation(CUDNN_ACTIVATION_RELU, 0, 1, x, CUDNN_NOT_PROPAGATE_NAN), {0, 0, 2}, 0);
    expect_near_all(activation(CUDNN_ACTIVATION_RELU, 0, 1, x, CUDNN_PROPAGATE_NAN), {NAN, 0, 2}, 0);
    expect_near_all(activation(CUDNN_ACTIVATION_CLIPPED_RELU, 1, 1, x, CUDNN_NOT_PROPAGATE_NAN), {0, 0, 1}, 0);
    expect_near_all(activation(CUDNN_ACTIVATION_CLIPPED_RELU, 1, 1, x, CUDNN_PROPAGATE_NAN), {NAN, 0, 1}, 0);
    // Smooth functions carry NaN whatever the option.
    expect_near_all(activation(CUDNN_ACTIVATION_TANH, 0, 1, {NAN}), {NAN}, 0);
}

TEST_F(Known, SoftmaxValues) {
    auto d = desc(1, 3, 1, 1);
    const double x[3] = {1, 2, 3}, one = 1, zero = 0;
    double y[3];
    for (auto mode : {CUDNN_SOFTMAX_MODE_CHANNEL, CUDNN_SOFTMAX_MODE_INSTANCE}) {
        for (auto algo : {CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_ACCURATE}) {
            ASSERT_OK(cudnnSoftmaxForward(h, algo, mode, &one, d, x, &zero, d, y));
            expect_near_all({y[0], y[1], y[2]}, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}, 1e-15);
        }
        ASSERT_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_LOG, mode, &one, d, x, &zero, d, y));
        expect_near_all({y[0], y[1], y[2]}, {-2.40760596444438, -1.4076059644443801, -0.4076059644443803}, 1e-14);
    }
    // Large inputs do not overflow (max-subtracted, also for FAST).
    const double big[3] = {1001, 1002, 1003};
    ASSERT_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_CHANNEL, &one, d, big, &zero, d, y));
    expect_near_all({y[0], y[1], y[2]}, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}, 1e-15);
}

TEST_F(Known, SoftmaxModesGroupDifferently) {
    // 1 x 2 x 1 x 2: CHANNEL normalises each w over c; INSTANCE the four values together.
    auto d = desc(1, 2, 1, 2);
    const double x[4] = {0, std::log(3.0), std::log(3.0), 0}, one = 1, zero = 0;  // (c0: w0 w1), (c1: w0 w1)
    double y[4];
    ASSERT_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, d, x, &zero, d, y));
    expect_near_all({y[0], y[1], y[2], y[3]}, {0.25, 0.75, 0.75, 0.25}, 1e-15);
    ASSERT_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, d, x, &zero, d, y));
    expect_near_all({y[0], y[1], y[2], y[3]}, {0.125, 0.375, 0.375, 0.125}, 1e-15);
}

TEST_F(Known, SoftmaxProperties) {
    // Random float data: every softmax sums to 1; log-softmax is the log of softmax.
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> u(-6, 6);
    for (auto fmt : {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC}) {
        auto d = desc(3, 7, 5, 4, CUDNN_DATA_FLOAT, fmt);
        std::vector<float> x(420), y(420, NAN), l(420, NAN);
        for (float& v : x) v = u(rng);
        const float one = 1, zero = 0;
        for (auto mode : {CUDNN_SOFTMAX_MODE_CHANNEL, CUDNN_SOFTMAX_MODE_INSTANCE}) {
            ASSERT_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, mode, &one, d, x.data(), &zero, d, y.data()));
            ASSERT_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_LOG, mode, &one, d, x.data(), &zero, d, l.data()));
            for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(std::log(y[i]), l[i], 2e-5) << i;
            // Sum per group, walking logical indices (n, c, h, w) in the descriptor's layout.
            auto at = [&](int n, int c, int hh, int w) {
                return fmt == CUDNN_TENSOR_NCHW ? y[((n * 7 + c) * 5 + hh) * 4 + w] : y[((n * 5 + hh) * 4 + w) * 7 + c];
            };
            for (int n = 0; n < 3; ++n) {
                if (mode == CUDNN_SOFTMAX_MODE_INSTANCE) {
                    double s = 0;
                    for (int c = 0; c < 7; ++c)
                        for (int hh = 0; hh < 5; ++hh)
                            for (int w = 0; w < 4; ++w) s += at(n, c, hh, w);
                    EXPECT_NEAR(s, 1.0, 1e-5);
                } else {
                    for (int hh = 0; hh < 5; ++hh)
                        for (int w = 0; w < 4; ++w) {
                            double s = 0;
                            for (int c = 0; c < 7; ++c) s += at(n, c, hh, w);
                            EXPECT_NEAR(s, 1.0, 1e-6);
                        }
                }
            }
        }
    }
}

TEST_F(Known, AddTensorBroadcasts) {
    auto cd = desc(1, 2, 1, 2), bias = desc(1, 2, 1, 1), scalar = desc(1, 1, 1, 1);
    double c[4] = {1, 2, 3, 4};
    const double b[2] = {10, 20}, s = 5, one = 1, two = 2, zero = 0;
    ASSERT_OK(cudnnAddTensor(h, &one, bias, b, &one, cd, c));
    expect_near_all({c[0], c[1], c[2], c[3]}, {11, 12, 23, 24}, 0);
    ASSERT_OK(cudnnAddTensor(h, &two, bias, b, &zero, cd, c));
    expect_near_all({c[0], c[1], c[2], c[3]}, {20, 20, 40, 40}, 0);
    ASSERT_OK(cudnnAddTensor(h, &one, scalar, &s, &one, cd, c));
    expect_near_all({c[0], c[1], c[2], c[3]}, {25, 25, 45, 45}, 0);
}

TEST_F(Known, OpTensorValues) {
    cudnnOpTensorDescriptor_t od = nullptr;
    ASSERT_OK(cudnnCreateOpTensorDescriptor(&od));
    auto d = desc(1, 1, 1, 3);
    const double a[3] = {1, NAN, 3}, b[3] = {2, 2, NAN}, one = 1, zero = 0;
    double c[3];
    ASSERT_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_MIN, CUDNN_DATA_DOUBLE, CUDNN_NOT_PROPAGATE_NAN));
    ASSERT_OK(cudnnOpTensor(h, od, &one, d, a, &one, d, b, &zero, d, c));
    expect_near_all({c[0], c[1], c[2]}, {1, 2, 3}, 0);
    ASSERT_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_MAX, CUDNN_DATA_DOUBLE, CUDNN_PROPAGATE_NAN));
    ASSERT_OK(cudnnOpTensor(h, od, &one, d, a, &one, d, b, &zero, d, c));
    expect_near_all({c[0], c[1], c[2]}, {2, NAN, NAN}, 0);
    const double p[3] = {4, 9, 0.25}, half = 0.5;
    ASSERT_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_SQRT, CUDNN_DATA_DOUBLE, CUDNN_NOT_PROPAGATE_NAN));
    ASSERT_OK(cudnnOpTensor(h, od, &one, d, p, nullptr, nullptr, nullptr, &zero, d, c));  // B unused
    expect_near_all({c[0], c[1], c[2]}, {2, 3, 0.5}, 0);
    ASSERT_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_NOT, CUDNN_DATA_DOUBLE, CUDNN_NOT_PROPAGATE_NAN));
    ASSERT_OK(cudnnOpTensor(h, od, &half, d, p, &one, d, b, &zero, d, c));  // 1 - alpha1 * A
    expect_near_all({c[0], c[1], c[2]}, {-1, -3.5, 0.875}, 0);
    ASSERT_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_DOUBLE, CUDNN_NOT_PROPAGATE_NAN));
    auto bias = desc(1, 1, 1, 1);
    const double k = 3, two = 2;
    double acc[3] = {1, 1, 1};
    ASSERT_OK(cudnnOpTensor(h, od, &two, d, p, &one, bias, &k, &one, d, acc));  // 2 A * 3 + C
    expect_near_all({acc[0], acc[1], acc[2]}, {25, 55, 2.5}, 0);
    cudnnDestroyOpTensorDescriptor(od);
}

struct Reduced {
    std::vector<double> c;
    std::vector<uint32_t> idx;
};

Reduced reduce(cudnnHandle_t h, cudnnTensorDescriptor_t ad, const double* a, cudnnTensorDescriptor_t cd, size_t nc,
               cudnnReduceTensorOp_t op) {
    cudnnReduceTensorDescriptor_t rd = nullptr;
    EXPECT_EQ(cudnnCreateReduceTensorDescriptor(&rd), CUDNN_STATUS_SUCCESS);
    // Indices exist for MIN, MAX and AMAX only; asking for them with another op is refused.
    const bool idx = op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX || op == CUDNN_REDUCE_TENSOR_AMAX;
    EXPECT_EQ(cudnnSetReduceTensorDescriptor(rd, op, CUDNN_DATA_DOUBLE, CUDNN_NOT_PROPAGATE_NAN,
                                             idx ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES
                                                 : CUDNN_REDUCE_TENSOR_NO_INDICES,
                                             CUDNN_32BIT_INDICES),
              CUDNN_STATUS_SUCCESS);
    Reduced r{std::vector<double>(nc, NAN), std::vector<uint32_t>(nc, 99)};
    size_t ws = 0, is = 0;
    EXPECT_EQ(cudnnGetReductionWorkspaceSize(h, rd, ad, cd, &ws), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnGetReductionIndicesSize(h, rd, ad, cd, &is), CUDNN_STATUS_SUCCESS);
    std::vector<unsigned char> w(ws + 1);
    const double one = 1, zero = 0;
    EXPECT_EQ(cudnnReduceTensor(h, rd, r.idx.data(), nc * 4, w.data(), ws, &one, ad, a, &zero, cd, r.c.data()),
              CUDNN_STATUS_SUCCESS)
        << odnn_test::last_error();
    cudnnDestroyReduceTensorDescriptor(rd);
    return r;
}

TEST_F(Known, ReduceValues) {
    auto ad = desc(1, 1, 2, 3), cd = desc(1, 1, 2, 1), all = desc(1, 1, 1, 1);
    const double a[6] = {1, -5, 3, 4, 2, -6};
    expect_near_all(reduce(h, ad, a, cd, 2, CUDNN_REDUCE_TENSOR_ADD).c, {-1, 0}, 0);
    expect_near_all(reduce(h, ad, a, cd, 2, CUDNN_REDUCE_TENSOR_MUL).c, {-15, -48}, 0);
    expect_near_all(reduce(h, ad, a, cd, 2, CUDNN_REDUCE_TENSOR_AVG).c, {-1.0 / 3, 0}, 1e-15);
    expect_near_all(reduce(h, ad, a, cd, 2, CUDNN_REDUCE_TENSOR_NORM1).c, {9, 12}, 0);
    expect_near_all(reduce(h, ad, a, cd, 2, CUDNN_REDUCE_TENSOR_NORM2).c, {5.916079783099616, 7.483314773547883},
                    1e-15);
    Reduced r = reduce(h, ad, a, cd, 2, CUDNN_REDUCE_TENSOR_MIN);
    expect_near_all(r.c, {-5, -6}, 0);
    EXPECT_EQ(r.idx, (std::vector<uint32_t>{1, 2}));
    r = reduce(h, ad, a, cd, 2, CUDNN_REDUCE_TENSOR_MAX);
    expect_near_all(r.c, {3, 4}, 0);
    EXPECT_EQ(r.idx, (std::vector<uint32_t>{2, 0}));
    r = reduce(h, ad, a, cd, 2, CUDNN_REDUCE_TENSOR_AMAX);
    expect_near_all(r.c, {5, 6}, 0);
    EXPECT_EQ(r.idx, (std::vector<uint32_t>{1, 2}));
    // Over both dims: flattened row-major over (h, w); the first of equal values wins.
    r = reduce(h, ad, a, all, 1, CUDNN_REDUCE_TENSOR_MAX);
    expect_near_all(r.c, {4}, 0);
    EXPECT_EQ(r.idx, (std::vector<uint32_t>{3}));
    const double ties[6] = {2, -7, 7, 7, 1, -7};
    r = reduce(h, ad, ties, all, 1, CUDNN_REDUCE_TENSOR_AMAX);
    expect_near_all(r.c, {7}, 0);
    EXPECT_EQ(r.idx, (std::vector<uint32_t>{1}));
    // Reduce over h: each w keeps its own output.
    auto cw = desc(1, 1, 1, 3);
    r = reduce(h, ad, a, cw, 3, CUDNN_REDUCE_TENSOR_MIN);
    expect_near_all(r.c, {1, -5, -6}, 0);
    EXPECT_EQ(r.idx, (std::vector<uint32_t>{0, 0, 1}));
    const double z[6] = {0, 2, 3, 0, 0, 0};
    expect_near_all(reduce(h, ad, z, cd, 2, CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS).c, {6, 1}, 0);
}

TEST_F(Known, TransformLayouts) {
    // NCHW 1x2x2x3 to NHWC: element (c, h, w) moves from c*6 + h*3 + w to (h*3 + w)*2 + c.
    auto x = desc(1, 2, 2, 3), y = desc(1, 2, 2, 3, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NHWC);
    double xs[12], ys[12];
    for (int i = 0; i < 12; ++i) xs[i] = i;
    const double one = 1, zero = 0;
    ASSERT_OK(cudnnTransformTensor(h, &one, x, xs, &zero, y, ys));
    expect_near_all(std::vector<double>(ys, ys + 12), {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11}, 0);
}

TEST_F(Known, FoldAndPad) {
    cudnnTensorTransformDescriptor_t t = nullptr;
    ASSERT_OK(cudnnCreateTensorTransformDescriptor(&t));
    const int32_t zero4[4] = {0, 0, 0, 0};
    const uint32_t f22[2] = {2, 2};
    const double one = 1, zero = 0;
    // Fold 1x1x2x2 by 2x2: the four phases become channels, (0,0) (0,1) (1,0) (1,1).
    ASSERT_OK(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, zero4, zero4, f22, CUDNN_TRANSFORM_FOLD));
    auto x = desc(1, 1, 2, 2);
    cudnnTensorDescriptor_t y = desc(1, 1, 1, 1);
    size_t bytes = 0;
    ASSERT_OK(cudnnInitTransformDest(t, x, y, &bytes));
    EXPECT_EQ(bytes, 4 * sizeof(double));
    const double xs[4] = {1, 2, 3, 4};
    double ys[4] = {NAN, NAN, NAN, NAN}, back[4] = {NAN, NAN, NAN, NAN};
    ASSERT_OK(cudnnTransformTensorEx(h, t, &one, x, xs, &zero, y, ys));
    expect_near_all(std::vector<double>(ys, ys + 4), {1, 2, 3, 4}, 0);
    // Unfold is the inverse.
    ASSERT_OK(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, zero4, zero4, f22, CUDNN_TRANSFORM_UNFOLD));
    ASSERT_OK(cudnnTransformTensorEx(h, t, &one, y, ys, &zero, x, back));
    expect_near_all(std::vector<double>(back, back + 4), {1, 2, 3, 4}, 0);
    // Padding: 1x1x1x1 padded by (1 before, 1 after) in h and (1, 0) in w gives 3x2 with the value at (1, 1).
    // (A NULL fold array would keep the 2 x 2 folds set above, as in cuDNN.)
    const int32_t pb[4] = {0, 0, 1, 1}, pa[4] = {0, 0, 1, 0};
    const uint32_t f11[2] = {1, 1};
    ASSERT_OK(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, pb, pa, f11, CUDNN_TRANSFORM_FOLD));
    auto one_el = desc(1, 1, 1, 1);
    cudnnTensorDescriptor_t padded = desc(1, 1, 1, 1);
    ASSERT_OK(cudnnInitTransformDest(t, one_el, padded, &bytes));
    EXPECT_EQ(bytes, 6 * sizeof(double));
    const double seven = 7;
    double ps[6];
    for (double& v : ps) v = NAN;
    ASSERT_OK(cudnnTransformTensorEx(h, t, &one, one_el, &seven, &zero, padded, ps));
    expect_near_all(std::vector<double>(ps, ps + 6), {0, 0, 0, 7, 0, 0}, 0);
    cudnnDestroyTensorTransformDescriptor(t);
}

// ---- Finite differences (double data) ----

TEST_F(Known, ActivationBackwardMatchesFiniteDifferences) {
    const int n = 64;
    auto d = desc(1, 1, 1, n);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-3, 3);
    std::vector<double> x(n), dy(n);
    for (int i = 0; i < n; ++i) {
        x[i] = u(rng);
        // Keep clear of the kinks of RELU / CLIPPED_RELU (0 and the ceiling 1.5).
        if (std::fabs(x[i]) < 0.01 || std::fabs(x[i] - 1.5) < 0.01) x[i] += 0.05;
        dy[i] = u(rng);
    }
    for (auto mode : {CUDNN_ACTIVATION_SIGMOID, CUDNN_ACTIVATION_RELU, CUDNN_ACTIVATION_TANH,
                      CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_ACTIVATION_ELU, CUDNN_ACTIVATION_IDENTITY,
                      CUDNN_ACTIVATION_SWISH}) {
        SCOPED_TRACE(mode);
        const double coef = 1.5, sb = 0.7, eps = 1e-6;
        cudnnActivationDescriptor_t a = nullptr;
        ASSERT_OK(cudnnCreateActivationDescriptor(&a));
        ASSERT_OK(cudnnSetActivationDescriptor(a, mode, CUDNN_NOT_PROPAGATE_NAN, coef));
        ASSERT_OK(cudnnSetActivationDescriptorSwishBeta(a, sb));
        std::vector<double> y = activation(mode, coef, sb, x), dx(n, NAN);
        std::vector<double> xp = x, xm = x;
        for (int i = 0; i < n; ++i) xp[i] += eps, xm[i] -= eps;
        const std::vector<double> yp = activation(mode, coef, sb, xp), ym = activation(mode, coef, sb, xm);
        const double one = 1, zero = 0;
        ASSERT_OK(cudnnActivationBackward(h, a, &one, d, y.data(), d, dy.data(), d, x.data(), &zero, d, dx.data()));
        for (int i = 0; i < n; ++i) EXPECT_NEAR(dx[i], dy[i] * (yp[i] - ym[i]) / (2 * eps), 1e-6) << "x = " << x[i];
        cudnnDestroyActivationDescriptor(a);
    }
}

TEST_F(Known, SoftmaxBackwardMatchesFiniteDifferences) {
    // L(x) = sum(dy * softmax(x)); dL/dx . v against (L(x + e v) - L(x - e v)) / 2e.
    auto d = desc(2, 5, 3, 2);
    const int n = 60;
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-2, 2);
    std::vector<double> x(n), dy(n), v(n);
    for (int i = 0; i < n; ++i) x[i] = u(rng), dy[i] = u(rng), v[i] = u(rng);
    const double one = 1, zero = 0, eps = 1e-6;
    auto loss = [&](cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, double step) {
        std::vector<double> xs(n), y(n);
        for (int i = 0; i < n; ++i) xs[i] = x[i] + step * v[i];
        EXPECT_EQ(cudnnSoftmaxForward(h, algo, mode, &one, d, xs.data(), &zero, d, y.data()), CUDNN_STATUS_SUCCESS);
        double l = 0;
        for (int i = 0; i < n; ++i) l += dy[i] * y[i];
        return l;
    };
    for (auto mode : {CUDNN_SOFTMAX_MODE_CHANNEL, CUDNN_SOFTMAX_MODE_INSTANCE})
        for (auto algo : {CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_LOG}) {
            SCOPED_TRACE(std::to_string(mode) + " " + std::to_string(algo));
            std::vector<double> y(n), dx(n, NAN);
            ASSERT_OK(cudnnSoftmaxForward(h, algo, mode, &one, d, x.data(), &zero, d, y.data()));
            ASSERT_OK(cudnnSoftmaxBackward(h, algo, mode, &one, d, y.data(), d, dy.data(), &zero, d, dx.data()));
            double dot = 0;
            for (int i = 0; i < n; ++i) dot += dx[i] * v[i];
            const double fd = (loss(algo, mode, eps) - loss(algo, mode, -eps)) / (2 * eps);
            EXPECT_NEAR(dot, fd, 1e-6 * (1 + std::fabs(fd)));
        }
}

}  // namespace
