// Batch normalization on the CPU backend: every case of cases/batchnorm.txt against
// the test's own oracle (forward training, running statistics, inference, backward
// with and without the saved statistics, alpha/beta, NaN-poisoned outputs); hand
// checked values; statistical properties; finite-difference gradients.
#include <gtest/gtest.h>

#include "ops_norm/bn_runner.hpp"

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

class BnCases : public ::testing::TestWithParam<Case> {};

TEST_P(BnCases, MatchesOracle) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where() + "  (seed " + std::to_string(c.seed()) + ")");
    BnData d;
    bn_setup(d, c);
    Handle h;
    HostMemory mem;
    bn_run(d, h.h, mem);
    if (HasFatalFailure()) return;

    const double e = dt_eps(d.dt), pe = dt_eps(d.pdt);
    const double tiny = dt_tiny(d.dt);  // the data outputs' absolute floor (subnormal spacing)
    const std::vector<double> x = d.x->values();
    const std::vector<double> z = d.z ? d.z->values() : std::vector<double>();
    const std::vector<double> scale = d.scale->values(), bias = d.bias->values();
    const BnForward f = bn_forward(d.g, x, scale, bias, z, d.ops, d.act, d.eps, true);

    // y, everywhere written, nothing outside the view touched.
    EXPECT_EQ(d.y->nan_count(), 0);
    EXPECT_EQ(d.y->changed_outside_view(d.ybytes0), 0u);
    NORMTEST_EXPECT_CLOSE(d.y->values(), blend(f.y, d.alpha, d.beta, d.y0), 3 * e, 1e-12 + tiny, "y");
    // Saved statistics and the running averages (unbiased variance).
    NORMTEST_EXPECT_CLOSE(d.smean->values(), f.mean, 3 * pe, 1e-12, "saved mean");
    NORMTEST_EXPECT_CLOSE(d.sistd->values(), f.inv_std, 3 * pe, 1e-12, "saved inverse std");
    const double M = static_cast<double>(d.g.count());
    std::vector<double> rm(f.mean.size()), rv(f.mean.size());
    for (size_t i = 0; i < rm.size(); ++i) {
        rm[i] = (1 - d.factor) * d.rmean0[i] + d.factor * f.mean[i];
        rv[i] = (1 - d.factor) * d.rvar0[i] + d.factor * f.var[i] * (M > 1 ? M / (M - 1) : 1.0);
    }
    NORMTEST_EXPECT_CLOSE(d.rmean_mid, rm, 3 * pe, 1e-12, "running mean");
    NORMTEST_EXPECT_CLOSE(d.rvar_mid, rv, 3 * pe, 1e-12, "running variance");

    // Inference with the running statistics the training call left.
    if (d.api == "norm" || d.ops == 0) {
        const BnForward fi = bn_forward(d.g, x, scale, bias, z, d.ops, d.act, d.eps, false, d.rmean_mid, d.rvar_mid);
        EXPECT_EQ(d.yinf->nan_count(), 0);
        NORMTEST_EXPECT_CLOSE(d.yinf->values(), blend(fi.y, d.alpha, d.beta, d.yinf0), 3 * e, 1e-12 + tiny,
                              "inference y");
    }

    // Backward with the saved statistics as the library stored them.
    const std::vector<double> dy = d.dy->values(), y = d.y->values();
    {
        const BnBackward b = bn_backward(d.g, x, dy, y, scale, d.smean->values(), d.sistd->values(), d.ops, d.act);
        const double gx = max_abs(b.dx) + 1e-30;
        EXPECT_EQ(d.dx->nan_count(), 0);
        EXPECT_EQ(d.dx->changed_outside_view(d.dxbytes0), 0u);
        NORMTEST_EXPECT_CLOSE(d.dx->values(), blend(b.dx, d.dalpha, d.dbeta, d.dx0), 3 * e, 1e-10 * gx + tiny, "dx");
        NORMTEST_EXPECT_CLOSE(d.dscale->values(), blend(b.dscale, d.palpha, d.pbeta, d.dscale0), 3 * pe,
                              1e-10 * (max_abs(b.dscale) + 1e-30), "dscale");
        NORMTEST_EXPECT_CLOSE(d.dbias->values(), blend(b.dbias, d.palpha, d.pbeta, d.dbias0), 3 * pe,
                              1e-10 * (max_abs(b.dbias) + 1e-30), "dbias");
        if (d.ops == 2) NORMTEST_EXPECT_CLOSE(d.dz->values(), blend(b.dz, d.dalpha, d.dbeta, d.dz0), 3 * e, 1e-12 + tiny, "dz");
    }
    // Recomputing mean and inverse std from x (exact statistics in the oracle).
    {
        const BnBackward b = bn_backward(d.g, x, dy, y, scale, f.mean, f.inv_std, d.ops, d.act);
        // The saved statistics were rounded to the parameter type: allow for that.
        const double tol = 3 * e + 8 * pe;
        NORMTEST_EXPECT_CLOSE(d.dx2->values(), blend(b.dx, d.dalpha, d.dbeta, d.dx0), tol,
                              1e-6 * (max_abs(b.dx) + 1e-30) + tiny, "dx (recomputed statistics)");
        NORMTEST_EXPECT_CLOSE(d.dscale2->values(), blend(b.dscale, d.palpha, d.pbeta, d.dscale0), tol,
                              1e-6 * (max_abs(b.dscale) + 1e-30), "dscale (recomputed statistics)");
        NORMTEST_EXPECT_CLOSE(d.dbias2->values(), blend(b.dbias, d.palpha, d.pbeta, d.dbias0), tol, 1e-12,
                              "dbias (recomputed statistics)");
    }
}

std::vector<Case> bn_cases() { return load_cases(ODNN_OPS_NORM_CASES_DIR, "batchnorm.txt", "bn"); }

INSTANTIATE_TEST_SUITE_P(File, BnCases, ::testing::ValuesIn(bn_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name(); });

TEST(BnCaseFile, EnoughProblems) { EXPECT_GE(bn_cases().size(), 40u); }

// ---- Hand-checked values ----

TEST(BatchNorm, HandCheckedTrainingAndRunningStats) {
    // x = 1, 2, 3, 4 in one channel: mean 2.5, biased variance 1.25, unbiased 5/3.
    Handle h;
    TensorPtr x = Tensor::make(CUDNN_DATA_FLOAT, {4, 1, 1, 1}, Layout::nchw);
    TensorPtr y = Tensor::make(CUDNN_DATA_FLOAT, {4, 1, 1, 1}, Layout::nchw);
    x->set_values({1, 2, 3, 4});
    y->poison();
    TensorPtr p = param_tensor(CUDNN_DATA_FLOAT, {1, 1, 1, 1});
    float scale = 2.0f, bias = 0.5f, rm = 0.0f, rv = 1.0f, sm = NAN, si = NAN;
    const float one = 1.0f, zero = 0.0f;
    ASSERT_OK(cudnnBatchNormalizationForwardTraining(h.h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x->desc, x->data(),
                                                     y->desc, y->data(), p->desc, &scale, &bias, 0.1, &rm, &rv, 0.0,
                                                     &sm, &si));
    EXPECT_FLOAT_EQ(rm, 0.25f);                          // 0.9 * 0 + 0.1 * 2.5
    EXPECT_FLOAT_EQ(rv, 0.9f + 0.1f * 5.0f / 3.0f);      // unbiased variance 5/3
    EXPECT_FLOAT_EQ(sm, 2.5f);
    EXPECT_FLOAT_EQ(si, static_cast<float>(1.0 / std::sqrt(1.25)));
    const double istd = 1.0 / std::sqrt(1.25);
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(static_cast<float>(y->get(i)), static_cast<float>(2.0 * (i + 1 - 2.5) * istd + 0.5));
    // Inference with given statistics.
    const float mean = 1.0f, var = 3.0f;
    ASSERT_OK(cudnnBatchNormalizationForwardInference(h.h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x->desc, x->data(),
                                                      y->desc, y->data(), p->desc, &scale, &bias, &mean, &var, 1.0));
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(static_cast<float>(y->get(i)), static_cast<float>(2.0 * i / 2.0 + 0.5));
    // exponentialAverageFactor 1 replaces the running values (cuDNN's first-call use).
    ASSERT_OK(cudnnBatchNormalizationForwardTraining(h.h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, &one, &zero, x->desc,
                                                     x->data(), y->desc, y->data(), p->desc, &scale, &bias, 1.0, &rm,
                                                     &rv, 1e-5, nullptr, nullptr));
    EXPECT_FLOAT_EQ(rm, 2.5f);
    EXPECT_FLOAT_EQ(rv, 5.0f / 3.0f);
}

TEST(BatchNorm, OutputHasZeroMeanUnitVariancePerChannel) {
    for (auto layout : {Layout::nchw, Layout::nhwc, Layout::strided})
        for (int mode : {CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_PER_ACTIVATION}) {
            Handle h;
            const std::vector<int> dims = {5, 3, 4, 7};
            TensorPtr x = Tensor::make(CUDNN_DATA_DOUBLE, dims, layout, 77);
            TensorPtr y = Tensor::make(CUDNN_DATA_DOUBLE, dims, layout, 78);
            std::mt19937_64 rng(5);
            x->fill_uniform(rng, 10.0, 30.0);  // mean far from 0
            y->poison();
            std::vector<int> pd = {1, 3, 1, 1};
            if (mode == CUDNN_BATCHNORM_PER_ACTIVATION) pd = {1, 3, 4, 7};
            TensorPtr p = param_tensor(CUDNN_DATA_DOUBLE, pd);
            std::vector<double> scale(p->count(), 1.0), bias(p->count(), 0.0);
            const double one = 1.0, zero = 0.0;
            ASSERT_OK(cudnnBatchNormalizationForwardTraining(
                h.h, static_cast<cudnnBatchNormMode_t>(mode), &one, &zero, x->desc, x->data(), y->desc, y->data(),
                p->desc, scale.data(), bias.data(), 0.0, nullptr, nullptr, 0.0, nullptr, nullptr));
            BnShape g;
            g.n = 5, g.c = 3, g.s = 28, g.per_channel = mode != CUDNN_BATCHNORM_PER_ACTIVATION;
            std::vector<double> sum(g.features(), 0.0), sq(g.features(), 0.0);
            for (int64_t i = 0; i < g.total(); ++i) {
                sum[g.feature(i)] += y->get(i);
                sq[g.feature(i)] += y->get(i) * y->get(i);
            }
            for (int64_t f = 0; f < g.features(); ++f) {
                EXPECT_NEAR(sum[f] / g.count(), 0.0, 1e-12);
                EXPECT_NEAR(sq[f] / g.count(), 1.0, 1e-12);
            }
        }
}

// ---- Finite differences: L = sum(w * y) through forward training ----

struct FdProblem {
    std::vector<int> dims;
    int mode;
    int ops;
    int act;
};

TEST(BatchNorm, BackwardMatchesFiniteDifferences) {
    const FdProblem problems[] = {
        {{3, 2, 2, 3}, CUDNN_BATCHNORM_SPATIAL, 0, CUDNN_ACTIVATION_IDENTITY},
        {{4, 2, 3, 1}, CUDNN_BATCHNORM_PER_ACTIVATION, 0, CUDNN_ACTIVATION_IDENTITY},
        {{2, 3, 2, 2}, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, 1, CUDNN_ACTIVATION_ELU},
        {{2, 2, 2, 3}, CUDNN_BATCHNORM_SPATIAL, 2, CUDNN_ACTIVATION_SIGMOID},
        {{3, 2, 1, 2, 2}, CUDNN_BATCHNORM_SPATIAL, 2, CUDNN_ACTIVATION_TANH},
    };
    for (const FdProblem& pr : problems) {
        SCOPED_TRACE("mode " + std::to_string(pr.mode) + " ops " + std::to_string(pr.ops));
        Handle h;
        TensorPtr x = Tensor::make(CUDNN_DATA_DOUBLE, pr.dims, Layout::nchw);
        TensorPtr z = Tensor::make(CUDNN_DATA_DOUBLE, pr.dims, Layout::nchw);
        TensorPtr y = Tensor::make(CUDNN_DATA_DOUBLE, pr.dims, Layout::nchw);
        TensorPtr dx = Tensor::make(CUDNN_DATA_DOUBLE, pr.dims, Layout::nchw);
        TensorPtr dz = Tensor::make(CUDNN_DATA_DOUBLE, pr.dims, Layout::nchw);
        std::mt19937_64 rng(11);
        x->fill_uniform(rng, -1.0, 2.0);
        z->fill_uniform(rng, -0.5, 0.5);
        const std::vector<double> w = [&] {
            std::vector<double> v(x->count());
            std::uniform_real_distribution<double> u(-1, 1);
            for (double& e : v) e = u(rng);
            return v;
        }();
        cudnnTensorDescriptor_t pd;
        ASSERT_OK(cudnnCreateTensorDescriptor(&pd));
        ASSERT_OK(cudnnDeriveBNTensorDescriptor(pd, x->desc, static_cast<cudnnBatchNormMode_t>(pr.mode)));
        size_t pbytes = 0;
        ASSERT_OK(cudnnGetTensorSizeInBytes(pd, &pbytes));
        const size_t np = pbytes / 8;
        std::vector<double> scale(np), bias(np), sm(np), si(np), dscale(np), dbias(np);
        std::uniform_real_distribution<double> u(0.5, 1.5);
        for (size_t i = 0; i < np; ++i) scale[i] = u(rng), bias[i] = u(rng) - 1.0;
        cudnnActivationDescriptor_t act;
        ASSERT_OK(cudnnCreateActivationDescriptor(&act));
        ASSERT_OK(cudnnSetActivationDescriptor(act, static_cast<cudnnActivationMode_t>(pr.act), CUDNN_NOT_PROPAGATE_NAN, 0.7));
        const double one = 1.0, zero = 0.0, eps = 1e-3;
        const auto mode = static_cast<cudnnBatchNormMode_t>(pr.mode);
        const auto ops = static_cast<cudnnBatchNormOps_t>(pr.ops);
        auto loss = [&](bool save) {
            y->poison();
            EXPECT_EQ(cudnnBatchNormalizationForwardTrainingEx(
                          h.h, mode, ops, &one, &zero, x->desc, x->data(), z->desc, z->data(), y->desc, y->data(), pd,
                          scale.data(), bias.data(), 0.0, nullptr, nullptr, eps, save ? sm.data() : nullptr,
                          save ? si.data() : nullptr, act, nullptr, 0, nullptr, 0),
                      CUDNN_STATUS_SUCCESS)
                << odnn_test::last_error();
            double l = 0.0;
            for (int64_t i = 0; i < y->count(); ++i) l += w[i] * y->get(i);
            return l;
        };
        loss(true);
        TensorPtr dy = Tensor::make(CUDNN_DATA_DOUBLE, pr.dims, Layout::nchw);
        dy->set_values(w);
        ASSERT_OK(cudnnBatchNormalizationBackwardEx(h.h, mode, ops, &one, &zero, &one, &zero, x->desc, x->data(),
                                                    y->desc, y->data(), dy->desc, dy->data(), dz->desc, dz->data(),
                                                    dx->desc, dx->data(), pd, scale.data(), bias.data(), dscale.data(),
                                                    dbias.data(), eps, sm.data(), si.data(), act, nullptr, 0, nullptr,
                                                    0));
        const double hstep = 1e-5;
        auto fd = [&](double& v) {
            const double keep = v;
            v = keep + hstep;
            const double lp = loss(false);
            v = keep - hstep;
            const double lm = loss(false);
            v = keep;
            return (lp - lm) / (2 * hstep);
        };
        std::vector<double> xv = x->values(), zv = z->values();
        for (int64_t i = 0; i < x->count(); ++i) {
            double v = xv[i];
            const double keep = v;
            x->set(i, keep + hstep);
            const double lp = loss(false);
            x->set(i, keep - hstep);
            const double lm = loss(false);
            x->set(i, keep);
            EXPECT_NEAR(dx->get(i), (lp - lm) / (2 * hstep), 1e-6) << "dx " << i;
            if (pr.ops == 2) {
                const double kz = zv[i];
                z->set(i, kz + hstep);
                const double zp = loss(false);
                z->set(i, kz - hstep);
                const double zm = loss(false);
                z->set(i, kz);
                EXPECT_NEAR(dz->get(i), (zp - zm) / (2 * hstep), 1e-6) << "dz " << i;
            }
        }
        for (size_t i = 0; i < np; ++i) {
            EXPECT_NEAR(dscale[i], fd(scale[i]), 1e-6) << "dscale " << i;
            EXPECT_NEAR(dbias[i], fd(bias[i]), 1e-6) << "dbias " << i;
        }
        cudnnDestroyActivationDescriptor(act);
        cudnnDestroyTensorDescriptor(pd);
    }
}

// In-place: y may be x, dx may be dy (as cuDNN allows).
TEST(BatchNorm, InPlace) {
    Handle h;
    const std::vector<int> dims = {3, 4, 5, 2};
    TensorPtr x = Tensor::make(CUDNN_DATA_FLOAT, dims, Layout::nhwc);
    TensorPtr y = Tensor::make(CUDNN_DATA_FLOAT, dims, Layout::nhwc);
    std::mt19937_64 rng(3);
    x->fill_uniform(rng, -1, 1);
    y->buf = x->buf;
    TensorPtr p = param_tensor(CUDNN_DATA_FLOAT, {1, 4, 1, 1});
    std::vector<float> scale(4, 1.5f), bias(4, 0.25f), sm(4), si(4);
    const float one = 1, zero = 0;
    ASSERT_OK(cudnnBatchNormalizationForwardTraining(h.h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x->desc, x->data(),
                                                     y->desc, y->data(), p->desc, scale.data(), bias.data(), 0.5,
                                                     nullptr, nullptr, 1e-5, sm.data(), si.data()));
    ASSERT_OK(cudnnBatchNormalizationForwardTraining(h.h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x->desc, x->data(),
                                                     x->desc, x->data(), p->desc, scale.data(), bias.data(), 0.5,
                                                     nullptr, nullptr, 1e-5, sm.data(), si.data()));
    EXPECT_EQ(x->buf, y->buf);
}

}  // namespace
}  // namespace normtest
