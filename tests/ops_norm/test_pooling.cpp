// Pooling on the CPU backend: every case of cases/pooling.txt against the test's own
// oracle (forward and backward, every mode, NaN rules, alpha/beta, NaN-poisoned
// outputs), hand-checked windows, and finite-difference gradients.
#include <gtest/gtest.h>

#include "ops_norm/pool_runner.hpp"

namespace normtest {
namespace {

struct Handle {
    cudnnHandle_t h = nullptr;
    Handle() { EXPECT_EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS); }
    ~Handle() { cudnnDestroy(h); }
};

std::vector<double> blend(const std::vector<double>& r, double alpha, double beta, const std::vector<double>& prior) {
    std::vector<double> out(r.size());
    for (size_t i = 0; i < r.size(); ++i) out[i] = alpha * r[i] + (beta != 0 ? beta * prior[i] : 0.0);
    return out;
}

class PoolCases : public ::testing::TestWithParam<Case> {};

TEST_P(PoolCases, MatchesOracle) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where() + "  (seed " + std::to_string(c.seed()) + ")");
    PoolData d;
    pool_setup(d, c);
    Handle h;
    HostMemory mem;
    pool_run(d, h.h, mem);
    if (HasFatalFailure()) return;
    const std::vector<double> dy = d.backward ? d.dy->values() : std::vector<double>();
    const PoolOracle o = pool_oracle(d.spec, d.xdims, d.ydims, d.x->values(), d.backward ? &dy : nullptr);
    std::vector<double> want = blend(o.y, d.alpha, d.beta, d.y0);
    for (double& v : want) v = quantize(d.dt, v);
    EXPECT_EQ(d.y->changed_outside_view(d.ybytes0), 0u);
    if (!c.geti("nanx", 0)) EXPECT_EQ(d.y->nan_count(), 0);
    NORMTEST_EXPECT_CLOSE(d.y->values(), want, 2 * dt_eps(d.dt), 1e-12, "y");
    if (d.backward) {
        EXPECT_EQ(d.dx->changed_outside_view(d.dxbytes0), 0u);
        EXPECT_EQ(d.dx->nan_count(), 0);
        NORMTEST_EXPECT_CLOSE(d.dx->values(), blend(o.dx, d.dalpha, d.dbeta, d.dx0), 3 * dt_eps(d.dt), 1e-12, "dx");
    }
}

std::vector<Case> pool_cases() { return load_cases(ODNN_OPS_NORM_CASES_DIR, "pooling.txt", "pool"); }

INSTANTIATE_TEST_SUITE_P(File, PoolCases, ::testing::ValuesIn(pool_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name(); });

TEST(PoolCaseFile, EnoughProblems) { EXPECT_GE(pool_cases().size(), 40u); }

// ---- Hand-checked ----

struct Pool2d {
    cudnnPoolingDescriptor_t d = nullptr;
    Pool2d(cudnnPoolingMode_t mode, int win, int pad, int stride, cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN) {
        EXPECT_EQ(cudnnCreatePoolingDescriptor(&d), CUDNN_STATUS_SUCCESS);
        EXPECT_EQ(cudnnSetPooling2dDescriptor(d, mode, nan, win, win, pad, pad, stride, stride), CUDNN_STATUS_SUCCESS);
    }
    ~Pool2d() { cudnnDestroyPoolingDescriptor(d); }
};

TEST(Pooling, MaxBackwardRoutesGradientToTheArgmax) {
    Handle h;
    TensorPtr x = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 4, 4}, Layout::nchw);
    TensorPtr y = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 2, 2}, Layout::nchw);
    TensorPtr dy = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 2, 2}, Layout::nchw);
    TensorPtr dx = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 4, 4}, Layout::nchw);
    x->set_values({1, 9, 2, 3,   //
                   4, 5, 8, 7,   //
                   0, 1, 6, 6,   // tie in the last window: the first one wins
                   2, 3, 5, 6});
    dy->set_values({10, 20, 30, 40});
    y->poison();
    dx->poison();
    Pool2d p(CUDNN_POOLING_MAX, 2, 0, 2);
    const float one = 1, zero = 0;
    ASSERT_OK(cudnnPoolingForward(h.h, p.d, &one, x->desc, x->data(), &zero, y->desc, y->data()));
    EXPECT_EQ(y->values(), (std::vector<double>{9, 8, 3, 6}));
    ASSERT_OK(cudnnPoolingBackward(h.h, p.d, &one, y->desc, y->data(), dy->desc, dy->data(), x->desc, x->data(), &zero,
                                   dx->desc, dx->data()));
    EXPECT_EQ(dx->values(), (std::vector<double>{0, 10, 0, 0,   //
                                                 0, 0, 20, 0,   //
                                                 0, 0, 40, 0,   //
                                                 0, 30, 0, 0}));
}

TEST(Pooling, AverageCountsWithAndWithoutPadding) {
    Handle h;
    TensorPtr x = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 3, 3}, Layout::nchw);
    TensorPtr y = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 3, 3}, Layout::nchw);
    x->set_values(std::vector<double>(9, 1.0));
    const float one = 1, zero = 0;
    {
        Pool2d p(CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, 3, 1, 1);
        ASSERT_OK(cudnnPoolingForward(h.h, p.d, &one, x->desc, x->data(), &zero, y->desc, y->data()));
        const std::vector<double> v = y->values();
        const double want[9] = {4 / 9., 6 / 9., 4 / 9., 6 / 9., 1, 6 / 9., 4 / 9., 6 / 9., 4 / 9.};
        for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(static_cast<float>(v[i]), static_cast<float>(want[i])) << i;
    }
    {
        Pool2d p(CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, 3, 1, 1);
        ASSERT_OK(cudnnPoolingForward(h.h, p.d, &one, x->desc, x->data(), &zero, y->desc, y->data()));
        for (double v : y->values()) EXPECT_EQ(v, 1.0);
    }
}

TEST(Pooling, NanPropagationFlag) {
    Handle h;
    TensorPtr x = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 2, 4}, Layout::nchw);
    TensorPtr y = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 1, 2}, Layout::nchw);
    x->set_values({1, NAN, NAN, NAN, 3, 2, NAN, NAN});
    const float one = 1, zero = 0;
    {
        Pool2d p(CUDNN_POOLING_MAX, 2, 0, 2, CUDNN_NOT_PROPAGATE_NAN);
        ASSERT_OK(cudnnPoolingForward(h.h, p.d, &one, x->desc, x->data(), &zero, y->desc, y->data()));
        EXPECT_EQ(y->get(0), 3.0);  // NaN skipped
        EXPECT_TRUE(std::isnan(y->get(1)));  // only NaNs
    }
    {
        Pool2d p(CUDNN_POOLING_MAX, 2, 0, 2, CUDNN_PROPAGATE_NAN);
        ASSERT_OK(cudnnPoolingForward(h.h, p.d, &one, x->desc, x->data(), &zero, y->desc, y->data()));
        EXPECT_TRUE(std::isnan(y->get(0)));
        EXPECT_TRUE(std::isnan(y->get(1)));
    }
}

TEST(Pooling, BetaZeroNeverReadsY) {
    Handle h;
    TensorPtr x = Tensor::make(CUDNN_DATA_HALF, {2, 3, 4, 4}, Layout::nhwc);
    TensorPtr y = Tensor::make(CUDNN_DATA_HALF, {2, 3, 2, 2}, Layout::nhwc);
    std::mt19937_64 rng(1);
    x->fill_uniform(rng, -1, 1);
    y->poison();
    Pool2d p(CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, 2, 0, 2);
    const float one = 1, zero = 0;
    ASSERT_OK(cudnnPoolingForward(h.h, p.d, &one, x->desc, x->data(), &zero, y->desc, y->data()));
    EXPECT_EQ(y->nan_count(), 0);
}

// ---- Finite differences ----

TEST(Pooling, BackwardMatchesFiniteDifferences) {
    struct P {
        cudnnPoolingMode_t mode;
        std::vector<int> dims, win, pad, stride;
    };
    const P problems[] = {
        {CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, {1, 2, 5, 4}, {3, 2}, {1, 1}, {2, 1}},
        {CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, {2, 1, 4, 5}, {3, 3}, {1, 1}, {1, 2}},
        {CUDNN_POOLING_MAX, {1, 2, 5, 5}, {3, 3}, {1, 1}, {2, 2}},
        {CUDNN_POOLING_MAX_DETERMINISTIC, {1, 1, 3, 4, 4}, {2, 2, 2}, {0, 1, 0}, {1, 2, 2}},
        {CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, {1, 2, 3, 3, 4}, {2, 3, 2}, {1, 1, 0}, {2, 1, 2}},
    };
    for (const P& pr : problems) {
        SCOPED_TRACE("mode " + std::to_string(pr.mode));
        Handle h;
        const int nsp = static_cast<int>(pr.dims.size()) - 2;
        cudnnPoolingDescriptor_t pd;
        ASSERT_OK(cudnnCreatePoolingDescriptor(&pd));
        ASSERT_OK(cudnnSetPoolingNdDescriptor(pd, pr.mode, CUDNN_NOT_PROPAGATE_NAN, nsp, pr.win.data(), pr.pad.data(),
                                              pr.stride.data()));
        TensorPtr x = Tensor::make(CUDNN_DATA_DOUBLE, pr.dims, Layout::nchw);
        std::vector<int> yd(pr.dims.size());
        ASSERT_OK(cudnnGetPoolingNdForwardOutputDim(pd, x->desc, static_cast<int>(yd.size()), yd.data()));
        TensorPtr y = Tensor::make(CUDNN_DATA_DOUBLE, yd, Layout::nchw);
        TensorPtr dy = Tensor::make(CUDNN_DATA_DOUBLE, yd, Layout::nchw);
        TensorPtr dx = Tensor::make(CUDNN_DATA_DOUBLE, pr.dims, Layout::nchw);
        // Distinct values spaced well beyond the step, so the argmax does not move.
        std::vector<double> xv(x->count());
        for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>((i * 37) % xv.size()) * 0.01;
        x->set_values(xv);
        std::mt19937_64 rng(9);
        dy->fill_uniform(rng, -1, 1);
        const double one = 1, zero = 0;
        auto loss = [&] {
            EXPECT_EQ(cudnnPoolingForward(h.h, pd, &one, x->desc, x->data(), &zero, y->desc, y->data()),
                      CUDNN_STATUS_SUCCESS);
            double l = 0;
            for (int64_t i = 0; i < y->count(); ++i) l += y->get(i) * dy->get(i);
            return l;
        };
        loss();
        ASSERT_OK(cudnnPoolingBackward(h.h, pd, &one, y->desc, y->data(), dy->desc, dy->data(), x->desc, x->data(),
                                       &zero, dx->desc, dx->data()));
        const double step = 1e-4;
        for (int64_t i = 0; i < x->count(); ++i) {
            x->set(i, xv[i] + step);
            const double lp = loss();
            x->set(i, xv[i] - step);
            const double lm = loss();
            x->set(i, xv[i]);
            EXPECT_NEAR(dx->get(i), (lp - lm) / (2 * step), 1e-8) << "element " << i;
        }
        cudnnDestroyPoolingDescriptor(pd);
    }
}

}  // namespace
}  // namespace normtest
