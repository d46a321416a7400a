// Dropout, cross-channel LRN, divisive normalization and the spatial transformer on the
// CPU backend: case files against the tests' own oracles (the dropout mask against the
// test's own Philox), generator properties (fraction kept, same seed same mask, restore,
// offset advance), hand-checked grids, finite-difference gradients.
#include <gtest/gtest.h>

#include "ops_norm/misc_runners.hpp"

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

std::string case_name(const ::testing::TestParamInfo<Case>& i) { return i.param.name(); }

// ---- Dropout ----

class DropCases : public ::testing::TestWithParam<Case> {};

TEST_P(DropCases, MaskIsTheDocumentedGenerator) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where());
    DropData d;
    drop_setup(d, c);
    Handle h;
    HostMemory mem;
    drop_run(d, h.h, mem);
    if (HasFatalFailure()) return;
    const int64_t n = d.x->count();
    const bool keep_all = !(d.p > 0), drop_all = d.p >= 1;
    const uint32_t threshold = keep_all || drop_all ? 0 : static_cast<uint32_t>(std::floor(static_cast<double>(d.p) * 4294967296.0));
    const float scale = keep_all ? 1.0f : drop_all ? 0.0f : 1.0f / (1.0f - d.p);
    const int64_t quads = (n + 3) / 4;
    EXPECT_EQ(d.reserve_bytes, static_cast<size_t>((n + 31) / 32 * 4));
    uint64_t offset = 0;
    const std::vector<double>& x = d.x0;
    int64_t kept_total = 0;
    std::vector<bool> last_mask;
    for (int r = 0; r < d.reps; ++r) {
        const uint64_t start = (offset + 3) / 4;
        std::vector<uint32_t> words((n + 31) / 32, 0);
        std::vector<bool> mask(n);
        for (int64_t i = 0; i < n; ++i) {
            const bool keep = keep_all || (!drop_all && philox(start + i / 4, d.seed)[i % 4] >= threshold);
            mask[i] = keep;
            if (keep) words[i / 32] |= 1u << (i % 32);
            kept_total += keep;
        }
        std::vector<uint32_t> got(words.size());
        std::memcpy(got.data(), d.reserve_runs[r].data(), got.size() * 4);
        EXPECT_EQ(got, words) << "mask of call " << r;
        Tensor& y = d.out();
        y.buf = d.y_runs[r];
        for (int64_t i = 0; i < n; ++i) {
            const double want = mask[i] ? quantize(d.dt, x[i] * static_cast<double>(scale)) : 0.0;
            ASSERT_EQ(y.get(i), want) << "call " << r << " element " << i;
        }
        if (!keep_all) offset = 4 * (start + quads);
        last_mask = mask;
    }
    EXPECT_EQ(d.offset_after, offset);
    const std::vector<double>& dy = d.dy0;
    for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(d.grad().get(i), last_mask[i] ? quantize(d.dt, dy[i] * static_cast<double>(scale)) : 0.0) << "dx element " << i;
    // The fraction kept: within 5 standard deviations of 1 - p.
    const double total = static_cast<double>(n) * d.reps;
    const double q = keep_all ? 1.0 : drop_all ? 0.0 : 1.0 - d.p;
    EXPECT_NEAR(kept_total / total, q, 5 * std::sqrt(q * (1 - q) / total) + 1e-12);
}

INSTANTIATE_TEST_SUITE_P(File, DropCases, ::testing::ValuesIn(load_cases(ODNN_OPS_NORM_CASES_DIR, "dropout.txt", "drop")),
                         case_name);

TEST(Dropout, SameSeedSameMaskRestoreContinues) {
    Handle h;
    TensorPtr x = Tensor::make(CUDNN_DATA_FLOAT, {2, 3, 8, 8}, Layout::nchw);
    TensorPtr y = Tensor::make(CUDNN_DATA_FLOAT, {2, 3, 8, 8}, Layout::nchw);
    std::mt19937_64 rng(4);
    x->fill_uniform(rng, 1, 2);
    size_t ss = 0, rs = 0;
    ASSERT_OK(cudnnDropoutGetStatesSize(h.h, &ss));
    ASSERT_OK(cudnnDropoutGetReserveSpaceSize(x->desc, &rs));
    std::vector<unsigned char> states(ss), r1(rs), r2(rs), r3(rs), r4(rs);
    cudnnDropoutDescriptor_t d;
    ASSERT_OK(cudnnCreateDropoutDescriptor(&d));
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h.h, 0.5f, states.data(), ss, 42));
    ASSERT_OK(cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), r1.data(), rs));
    const std::vector<unsigned char> snapshot = states;  // after one call
    ASSERT_OK(cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), r2.data(), rs));
    EXPECT_NE(r1, r2) << "the offset must advance between calls";
    // Re-seeding with the same seed starts over.
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h.h, 0.5f, states.data(), ss, 42));
    ASSERT_OK(cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), r3.data(), rs));
    EXPECT_EQ(r1, r3);
    // Restoring saved states continues from where they were.
    states = snapshot;
    ASSERT_OK(cudnnRestoreDropoutDescriptor(d, h.h, 0.5f, states.data(), ss, 42));
    ASSERT_OK(cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), r4.data(), rs));
    EXPECT_EQ(r2, r4);
    // Another seed, another mask.
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h.h, 0.5f, states.data(), ss, 43));
    ASSERT_OK(cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), r4.data(), rs));
    EXPECT_NE(r1, r4);
    cudnnDestroyDropoutDescriptor(d);
}

TEST(Dropout, BadArguments) {
    Handle h;
    TensorPtr x = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 4, 10}, Layout::nchw);
    TensorPtr y = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 4, 10}, Layout::nchw);
    TensorPtr other = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 5, 10}, Layout::nchw);
    size_t ss = 0, rs = 0;
    ASSERT_OK(cudnnDropoutGetStatesSize(h.h, &ss));
    ASSERT_OK(cudnnDropoutGetReserveSpaceSize(x->desc, &rs));
    std::vector<unsigned char> states(ss), reserve(rs);
    cudnnDropoutDescriptor_t d;
    ASSERT_OK(cudnnCreateDropoutDescriptor(&d));
    // No states but a probability: BAD_PARAM. Probability 0 needs none.
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h.h, 0.5f, nullptr, 0, 1));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), reserve.data(), rs));
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h.h, 0.0f, nullptr, 0, 1));
    ASSERT_OK(cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), reserve.data(), rs));
    ASSERT_OK(cudnnSetDropoutDescriptor(d, h.h, 0.5f, states.data(), ss, 1));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), reserve.data(), rs - 1));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), nullptr, rs));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDropoutForward(h.h, d, x->desc, x->data(), other->desc, other->data(), reserve.data(), rs));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDropoutForward(h.h, d, x->desc, nullptr, y->desc, y->data(), reserve.data(), rs));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDropoutBackward(h.h, d, x->desc, x->data(), y->desc, y->data(), reserve.data(), 0));
    // Garbage in the states buffer is recognised (host memory).
    std::vector<unsigned char> garbage(ss, 0xa5);
    ASSERT_OK(cudnnRestoreDropoutDescriptor(d, h.h, 0.5f, garbage.data(), ss, 1));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnDropoutForward(h.h, d, x->desc, x->data(), y->desc, y->data(), reserve.data(), rs));
    cudnnDestroyDropoutDescriptor(d);
}

// ---- LRN and divisive normalization ----

class LrnCases : public ::testing::TestWithParam<Case> {};

TEST_P(LrnCases, MatchesOracle) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where());
    LrnData d;
    lrn_setup(d, c);
    Handle h;
    HostMemory mem;
    lrn_run(d, h.h, mem);
    if (HasFatalFailure()) return;
    const std::vector<double> x = d.x->values(), dy = d.dy->values();
    std::vector<double> m;
    if (d.means) m = d.means->values();
    const std::vector<double>* mp = d.means ? &m : nullptr;
    const double e = dt_eps(d.dt);
    EXPECT_EQ(d.y->nan_count(), 0);
    EXPECT_EQ(d.dx->nan_count(), 0);
    NORMTEST_EXPECT_CLOSE(d.y->values(), blend(lrn_oracle(d.spec, c.dims(), x, mp, nullptr, d.divisive), d.alpha, d.beta, d.y0),
                          3 * e, 1e-12, "y");
    const std::vector<double> g = lrn_oracle(d.spec, c.dims(), x, mp, &dy, d.divisive);
    NORMTEST_EXPECT_CLOSE(d.dx->values(), blend(g, d.alpha, d.beta, d.dx0), 3 * e, 1e-12 + 3 * e * max_abs(g), "dx");
    if (d.dmeans) {
        std::vector<double> neg = g;
        for (double& v : neg) v = -v;
        NORMTEST_EXPECT_CLOSE(d.dmeans->values(), blend(neg, d.alpha, d.beta, d.dmeans0), 3 * e,
                              1e-12 + 3 * e * max_abs(g), "dMeans");
    }
}

std::vector<Case> lrn_cases() {
    std::vector<Case> v = load_cases(ODNN_OPS_NORM_CASES_DIR, "lrn.txt", "lrn");
    for (const Case& c : load_cases(ODNN_OPS_NORM_CASES_DIR, "lrn.txt", "divnorm")) v.push_back(c);
    return v;
}

INSTANTIATE_TEST_SUITE_P(File, LrnCases, ::testing::ValuesIn(lrn_cases()), case_name);

TEST(Lrn, HandChecked) {
    // One pixel, 3 channels, n = 3 (window c-1..c+1), alpha 3 (alpha / n = 1), beta 1, k 1:
    // s = 1 + sum of squares in the window.
    Handle h;
    TensorPtr x = Tensor::make(CUDNN_DATA_DOUBLE, {1, 3, 1, 1}, Layout::nchw);
    TensorPtr y = Tensor::make(CUDNN_DATA_DOUBLE, {1, 3, 1, 1}, Layout::nchw);
    x->set_values({1, 2, 3});
    cudnnLRNDescriptor_t ld;
    ASSERT_OK(cudnnCreateLRNDescriptor(&ld));
    ASSERT_OK(cudnnSetLRNDescriptor(ld, 3, 3.0, 1.0, 1.0));
    const double one = 1, zero = 0;
    ASSERT_OK(cudnnLRNCrossChannelForward(h.h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x->desc, x->data(), &zero, y->desc,
                                          y->data()));
    EXPECT_DOUBLE_EQ(y->get(0), 1.0 / (1 + 1 + 4));
    EXPECT_DOUBLE_EQ(y->get(1), 2.0 / (1 + 1 + 4 + 9));
    EXPECT_DOUBLE_EQ(y->get(2), 3.0 / (1 + 4 + 9));
    cudnnDestroyLRNDescriptor(ld);
}

TEST(Lrn, BackwardMatchesFiniteDifferences) {
    for (bool divisive : {false, true}) {
        SCOPED_TRACE(divisive ? "divisive" : "lrn");
        Handle h;
        const std::vector<int> dims = divisive ? std::vector<int>{1, 2, 4, 3} : std::vector<int>{2, 5, 2, 2};
        TensorPtr x = Tensor::make(CUDNN_DATA_DOUBLE, dims, Layout::nchw);
        TensorPtr m = Tensor::make(CUDNN_DATA_DOUBLE, dims, Layout::nchw);
        TensorPtr y = Tensor::make(CUDNN_DATA_DOUBLE, dims, Layout::nchw);
        TensorPtr dy = Tensor::make(CUDNN_DATA_DOUBLE, dims, Layout::nchw);
        TensorPtr dx = Tensor::make(CUDNN_DATA_DOUBLE, dims, Layout::nchw);
        TensorPtr dm = Tensor::make(CUDNN_DATA_DOUBLE, dims, Layout::nchw);
        TensorPtr tmp = Tensor::make(CUDNN_DATA_DOUBLE, dims, Layout::nchw);
        std::mt19937_64 rng(2);
        x->fill_uniform(rng, -1.5, 1.5);
        m->fill_uniform(rng, -0.3, 0.3);
        dy->fill_uniform(rng, -1, 1);
        cudnnLRNDescriptor_t ld;
        ASSERT_OK(cudnnCreateLRNDescriptor(&ld));
        ASSERT_OK(cudnnSetLRNDescriptor(ld, 3, 0.9, 0.75, 1.2));
        const double one = 1, zero = 0;
        auto fwd = [&] {
            if (divisive)
                EXPECT_EQ(cudnnDivisiveNormalizationForward(h.h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, x->desc,
                                                            x->data(), m->data(), tmp->data(), tmp->data(), &zero,
                                                            y->desc, y->data()),
                          CUDNN_STATUS_SUCCESS);
            else
                EXPECT_EQ(cudnnLRNCrossChannelForward(h.h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x->desc, x->data(),
                                                      &zero, y->desc, y->data()),
                          CUDNN_STATUS_SUCCESS);
            double l = 0;
            for (int64_t i = 0; i < y->count(); ++i) l += y->get(i) * dy->get(i);
            return l;
        };
        fwd();
        if (divisive)
            ASSERT_OK(cudnnDivisiveNormalizationBackward(h.h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, x->desc,
                                                         x->data(), m->data(), dy->data(), tmp->data(), tmp->data(),
                                                         &zero, dx->desc, dx->data(), dm->data()));
        else
            ASSERT_OK(cudnnLRNCrossChannelBackward(h.h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, y->desc, y->data(),
                                                   dy->desc, dy->data(), x->desc, x->data(), &zero, dx->desc,
                                                   dx->data()));
        const double step = 1e-6;
        for (int64_t i = 0; i < x->count(); ++i) {
            const double v = x->get(i);
            x->set(i, v + step);
            const double lp = fwd();
            x->set(i, v - step);
            const double lm = fwd();
            x->set(i, v);
            EXPECT_NEAR(dx->get(i), (lp - lm) / (2 * step), 1e-7) << "dx " << i;
            if (divisive) {
                const double mv = m->get(i);
                m->set(i, mv + step);
                const double mp = fwd();
                m->set(i, mv - step);
                const double mm = fwd();
                m->set(i, mv);
                EXPECT_NEAR(dm->get(i), (mp - mm) / (2 * step), 1e-7) << "dMeans " << i;
            }
        }
        cudnnDestroyLRNDescriptor(ld);
    }
}

// ---- Spatial transformer ----

class StfCases : public ::testing::TestWithParam<Case> {};

TEST_P(StfCases, MatchesOracle) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where());
    StfData d;
    stf_setup(d, c);
    Handle h;
    HostMemory mem;
    stf_run(d, h.h, mem);
    if (HasFatalFailure()) return;
    const StfOracle o = stf_oracle(d);
    const double e = dt_eps(d.dt);
    NORMTEST_EXPECT_CLOSE(d.grid->values(), o.grid, 3 * e, 3 * e, "grid");
    NORMTEST_EXPECT_CLOSE(d.y->values(), blend(o.y, d.alpha, d.beta, d.y0), 3 * e, 3 * e, "y");
    NORMTEST_EXPECT_CLOSE(d.dx->values(), blend(o.dx, d.alpha, d.beta, d.dx0), 3 * e, 3 * e, "dx");
    NORMTEST_EXPECT_CLOSE(d.dgrid->values(), blend(o.dgrid, d.galpha, d.gbeta, d.dgrid0), 3 * e,
                          3 * e * (1 + max_abs(o.dgrid)), "dgrid");
    NORMTEST_EXPECT_CLOSE(d.dtheta->values(), o.dtheta, 3 * e, 3 * e * (1 + max_abs(o.dtheta)), "dtheta");
}

INSTANTIATE_TEST_SUITE_P(File, StfCases,
                         ::testing::ValuesIn(load_cases(ODNN_OPS_NORM_CASES_DIR, "spatial_tf.txt", "stf")), case_name);

TEST(SpatialTf, IdentityThetaGivesTheBaseGridAndCopiesX) {
    Handle h;
    cudnnSpatialTransformerDescriptor_t st;
    ASSERT_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    const int dims[4] = {1, 1, 3, 5};
    ASSERT_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims));
    const float theta[6] = {1, 0, 0, 0, 1, 0};
    std::vector<float> grid(3 * 5 * 2);
    ASSERT_OK(cudnnSpatialTfGridGeneratorForward(h.h, st, theta, grid.data()));
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 5; ++c) {
            EXPECT_FLOAT_EQ(grid[(r * 5 + c) * 2], -1.0f + 0.5f * c);
            EXPECT_FLOAT_EQ(grid[(r * 5 + c) * 2 + 1], -1.0f + 1.0f * r);
        }
    TensorPtr x = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 3, 5}, Layout::nchw);
    TensorPtr y = Tensor::make(CUDNN_DATA_FLOAT, {1, 1, 3, 5}, Layout::nchw);
    std::mt19937_64 rng(8);
    x->fill_uniform(rng, -1, 1);
    const float one = 1, zero = 0;
    ASSERT_OK(cudnnSpatialTfSamplerForward(h.h, st, &one, x->desc, x->data(), grid.data(), &zero, y->desc, y->data()));
    for (int64_t i = 0; i < x->count(); ++i) EXPECT_NEAR(y->get(i), x->get(i), 1e-6) << i;
    cudnnDestroySpatialTransformerDescriptor(st);
}

TEST(SpatialTf, BackwardMatchesFiniteDifferences) {
    Handle h;
    const int N = 2, C = 2, Hi = 4, Wi = 5, Ho = 3, Wo = 4;
    cudnnSpatialTransformerDescriptor_t st;
    ASSERT_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    const int dims[4] = {N, C, Ho, Wo};
    ASSERT_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_DOUBLE, 4, dims));
    TensorPtr x = Tensor::make(CUDNN_DATA_DOUBLE, {N, C, Hi, Wi}, Layout::nchw);
    TensorPtr y = Tensor::make(CUDNN_DATA_DOUBLE, {N, C, Ho, Wo}, Layout::nchw);
    TensorPtr dy = Tensor::make(CUDNN_DATA_DOUBLE, {N, C, Ho, Wo}, Layout::nchw);
    TensorPtr dx = Tensor::make(CUDNN_DATA_DOUBLE, {N, C, Hi, Wi}, Layout::nchw);
    std::mt19937_64 rng(12);
    x->fill_uniform(rng, -1, 1);
    dy->fill_uniform(rng, -1, 1);
    std::vector<double> theta = {0.9, 0.13, 0.071, -0.11, 0.83, -0.053, 1.1, -0.07, 0.031, 0.09, 0.95, 0.021};
    std::vector<double> grid(N * Ho * Wo * 2), dgrid(grid.size()), dtheta(12);
    const double one = 1, zero = 0;
    auto loss = [&] {
        EXPECT_EQ(cudnnSpatialTfGridGeneratorForward(h.h, st, theta.data(), grid.data()), CUDNN_STATUS_SUCCESS);
        EXPECT_EQ(cudnnSpatialTfSamplerForward(h.h, st, &one, x->desc, x->data(), grid.data(), &zero, y->desc, y->data()),
                  CUDNN_STATUS_SUCCESS);
        double l = 0;
        for (int64_t i = 0; i < y->count(); ++i) l += y->get(i) * dy->get(i);
        return l;
    };
    loss();
    ASSERT_OK(cudnnSpatialTfSamplerBackward(h.h, st, &one, x->desc, x->data(), &zero, dx->desc, dx->data(), &one, dy->desc,
                                            dy->data(), grid.data(), &zero, dgrid.data()));
    ASSERT_OK(cudnnSpatialTfGridGeneratorBackward(h.h, st, dgrid.data(), dtheta.data()));
    const double step = 1e-6;
    for (int64_t i = 0; i < x->count(); ++i) {
        const double v = x->get(i);
        x->set(i, v + step);
        const double lp = loss();
        x->set(i, v - step);
        const double lm = loss();
        x->set(i, v);
        EXPECT_NEAR(dx->get(i), (lp - lm) / (2 * step), 1e-7) << "dx " << i;
    }
    for (int k = 0; k < 12; ++k) {
        const double v = theta[k];
        theta[k] = v + step;
        const double lp = loss();
        theta[k] = v - step;
        const double lm = loss();
        theta[k] = v;
        EXPECT_NEAR(dtheta[k], (lp - lm) / (2 * step), 1e-6) << "dtheta " << k;
    }
    cudnnDestroySpatialTransformerDescriptor(st);
}

}  // namespace
}  // namespace normtest
