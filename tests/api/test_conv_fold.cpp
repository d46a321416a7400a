// cudnnGetFoldedConvBackwardDataDescriptors through the public API: the folded pipeline
// (fold the filter, pad dy, a stride-1 backward data on the folded descriptors, unfold)
// must give what a direct strided backward data gives, for strides 1..3, filters 1..5,
// paddings, NCHW and NHWC data, NCHW and NHWC folded layouts, float and double, with
// alpha / beta carried by the unfold or by folding dx first. Data are small integers, so
// every result is exact and compared bit for bit; a host loop checks the direct call too.
// Cases that folding cannot express get NOT_SUPPORTED (or cuDNN's documented BAD_PARAM)
// with a message naming the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/test_util.hpp"

namespace {

bool mentions(const std::string& msg, const char* what) { return msg.find(what) != std::string::npos; }

struct Geometry {
    int n, c, h, w, k, r, s;
    int pad_h, pad_w, stride_h, stride_w, dil_h = 1, dil_w = 1, groups = 1;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
};

std::string describe(const Geometry& g, bool nhwc, bool dbl, cudnnTensorFormat_t tf) {
    char b[256];
    std::snprintf(b, sizeof b,
                  "n=%d c=%d h=%d w=%d k=%d r=%d s=%d pad=%d,%d stride=%d,%d dil=%d,%d g=%d mode=%s %s %s folded=%s",
                  g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.pad_h, g.pad_w, g.stride_h, g.stride_w, g.dil_h, g.dil_w,
                  g.groups, g.mode == CUDNN_CONVOLUTION ? "conv" : "xcorr", nhwc ? "nhwc" : "nchw",
                  dbl ? "f64" : "f32", tf == CUDNN_TENSOR_NHWC ? "nhwc" : "nchw");
    return b;
}

// Owns the descriptors of one problem and of its folded form.
class FoldTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_OK(cudnnCreate(&h));
        ASSERT_OK(cudnnCreateTensorDescriptor(&xd));
        ASSERT_OK(cudnnCreateTensorDescriptor(&yd));
        ASSERT_OK(cudnnCreateFilterDescriptor(&wd));
        ASSERT_OK(cudnnCreateConvolutionDescriptor(&cd));
        ASSERT_OK(cudnnCreateFilterDescriptor(&fwd));
        ASSERT_OK(cudnnCreateTensorDescriptor(&pyd));
        ASSERT_OK(cudnnCreateConvolutionDescriptor(&fcd));
        ASSERT_OK(cudnnCreateTensorDescriptor(&fxd));
        for (auto* t : {&t_wfold, &t_ypad, &t_xfold, &t_xunfold}) ASSERT_OK(cudnnCreateTensorTransformDescriptor(t));
    }
    void TearDown() override {
        for (auto t : {t_wfold, t_ypad, t_xfold, t_xunfold}) cudnnDestroyTensorTransformDescriptor(t);
        cudnnDestroyTensorDescriptor(fxd);
        cudnnDestroyConvolutionDescriptor(fcd);
        cudnnDestroyTensorDescriptor(pyd);
        cudnnDestroyFilterDescriptor(fwd);
        cudnnDestroyConvolutionDescriptor(cd);
        cudnnDestroyFilterDescriptor(wd);
        cudnnDestroyTensorDescriptor(yd);
        cudnnDestroyTensorDescriptor(xd);
        cudnnDestroy(h);
        odnn_test::last_error();
    }

    // Sets the original problem's descriptors; ho / wo receive dy's spatial size.
    void set(const Geometry& g, bool nhwc, cudnnDataType_t dt) {
        const cudnnTensorFormat_t f = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
        ASSERT_OK(cudnnSetTensor4dDescriptor(xd, f, dt, g.n, g.c, g.h, g.w));
        ASSERT_OK(cudnnSetFilter4dDescriptor(wd, dt, f, g.k, g.c / g.groups, g.r, g.s));
        ASSERT_OK(cudnnSetConvolution2dDescriptor(cd, g.pad_h, g.pad_w, g.stride_h, g.stride_w, g.dil_h, g.dil_w,
                                                  g.mode, dt));
        ASSERT_OK(cudnnSetConvolutionGroupCount(cd, g.groups));
        int n = 0, k = 0;
        ASSERT_OK(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &n, &k, &ho, &wo));
        ASSERT_OK(cudnnSetTensor4dDescriptor(yd, f, dt, n, k, ho, wo));
    }

    cudnnStatus_t get_folded(cudnnTensorFormat_t tf) {
        return cudnnGetFoldedConvBackwardDataDescriptors(h, wd, yd, cd, xd, tf, fwd, pyd, fcd, fxd, t_wfold, t_ypad,
                                                         t_xfold, t_xunfold);
    }

public:
    template <class T>
    void check_pipeline(const Geometry& g, bool nhwc, cudnnTensorFormat_t tf);

protected:
    cudnnHandle_t h = nullptr;
    cudnnTensorDescriptor_t xd = nullptr, yd = nullptr, pyd = nullptr, fxd = nullptr;
    cudnnFilterDescriptor_t wd = nullptr, fwd = nullptr;
    cudnnConvolutionDescriptor_t cd = nullptr, fcd = nullptr;
    cudnnTensorTransformDescriptor_t t_wfold = nullptr, t_ypad = nullptr, t_xfold = nullptr, t_xunfold = nullptr;
    int ho = 0, wo = 0;
    std::mt19937 rng{20261201};
};

size_t tensor_elems(cudnnTensorDescriptor_t d, size_t elem) {
    size_t b = 0;
    EXPECT_EQ(cudnnGetTensorSizeInBytes(d, &b), CUDNN_STATUS_SUCCESS);
    return b / elem;
}

size_t filter_elems(cudnnFilterDescriptor_t d, size_t elem) {
    size_t b = 0;
    EXPECT_EQ(cudnnGetFilterSizeInBytes(d, &b), CUDNN_STATUS_SUCCESS);
    return b / elem;
}

// dx of a strided backward data by the definition (packed NCHW or NHWC, groups, dilation).
template <class T>
std::vector<double> host_dgrad(const Geometry& g, bool nhwc, int ho, int wo, const std::vector<T>& wv,
                               const std::vector<T>& dy) {
    const int cg = g.c / g.groups, kg = g.k / g.groups;
    auto xi = [&](int n, int c, int i, int j) {
        return nhwc ? ((static_cast<size_t>(n) * g.h + i) * g.w + j) * g.c + c
                    : ((static_cast<size_t>(n) * g.c + c) * g.h + i) * g.w + j;
    };
    auto yi = [&](int n, int k, int i, int j) {
        return nhwc ? ((static_cast<size_t>(n) * ho + i) * wo + j) * g.k + k
                    : ((static_cast<size_t>(n) * g.k + k) * ho + i) * wo + j;
    };
    auto wi = [&](int k, int c, int r, int s) {
        return nhwc ? ((static_cast<size_t>(k) * g.r + r) * g.s + s) * cg + c
                    : ((static_cast<size_t>(k) * cg + c) * g.r + r) * g.s + s;
    };
    std::vector<double> dx(static_cast<size_t>(g.n) * g.c * g.h * g.w, 0.0);
    for (int n = 0; n < g.n; ++n)
        for (int k = 0; k < g.k; ++k)
            for (int oh = 0; oh < ho; ++oh)
                for (int ow = 0; ow < wo; ++ow)
                    for (int cl = 0; cl < cg; ++cl)
                        for (int r = 0; r < g.r; ++r)
                            for (int s = 0; s < g.s; ++s) {
                                const int i = oh * g.stride_h - g.pad_h + r * g.dil_h;
                                const int j = ow * g.stride_w - g.pad_w + s * g.dil_w;
                                if (i < 0 || i >= g.h || j < 0 || j >= g.w) continue;
                                const int rr = g.mode == CUDNN_CONVOLUTION ? g.r - 1 - r : r;
                                const int ss = g.mode == CUDNN_CONVOLUTION ? g.s - 1 - s : s;
                                const int c = k / kg * cg + cl;
                                dx[xi(n, c, i, j)] += static_cast<double>(dy[yi(n, k, oh, ow)]) *
                                                      static_cast<double>(wv[wi(k, cl, rr, ss)]);
                            }
    return dx;
}

template <class T>
void FoldTest::check_pipeline(const Geometry& g, bool nhwc, cudnnTensorFormat_t tf) {
    constexpr bool dbl = std::is_same_v<T, double>;
    const cudnnDataType_t dt = dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    SCOPED_TRACE(describe(g, nhwc, dbl, tf));
    set(g, nhwc, dt);
    if (HasFatalFailure()) return;
    ASSERT_OK(get_folded(tf));

    // The folded convolution has unit strides; the folded tensors are packed in tf.
    int pads[2], strides[2], dils[2], len = 0;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t ct;
    ASSERT_OK(cudnnGetConvolutionNdDescriptor(fcd, 2, &len, pads, strides, dils, &mode, &ct));
    ASSERT_EQ(len, 2);
    EXPECT_EQ(strides[0], 1);
    EXPECT_EQ(strides[1], 1);
    EXPECT_EQ(mode, g.mode);
    cudnnDataType_t fdt;
    cudnnTensorFormat_t ffmt;
    int fk, fc, fr, fs;
    ASSERT_OK(cudnnGetFilter4dDescriptor(fwd, &fdt, &ffmt, &fk, &fc, &fr, &fs));
    EXPECT_EQ(fdt, dt);
    EXPECT_EQ(ffmt, tf);
    EXPECT_EQ(fk, g.k);
    EXPECT_EQ(fc, g.c / g.groups * g.stride_h * g.stride_w);

    std::uniform_int_distribution<int> small(-3, 3);
    auto fill = [&](size_t count) {
        std::vector<T> v(count);
        for (auto& e : v) e = static_cast<T>(small(rng));
        return v;
    };
    const size_t nx = tensor_elems(xd, sizeof(T)), ny = tensor_elems(yd, sizeof(T)), nw = filter_elems(wd, sizeof(T));
    const std::vector<T> wv = fill(nw), dy = fill(ny), dx0 = fill(nx);
    const T alpha = 2, beta = -1, one = 1, zero = 0;
    const T nan = std::numeric_limits<T>::quiet_NaN();

    // Direct strided backward data: with beta (into dx0) and with beta = 0 (into NaNs).
    std::vector<unsigned char> work(1 << 22);
    std::vector<T> ref_beta = dx0, ref_zero(nx, nan);
    ASSERT_OK(cudnnConvolutionBackwardData(h, &alpha, wd, wv.data(), yd, dy.data(), cd,
                                           CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, work.data(), work.size(), &beta, xd,
                                           ref_beta.data()));
    ASSERT_OK(cudnnConvolutionBackwardData(h, &alpha, wd, wv.data(), yd, dy.data(), cd,
                                           CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, work.data(), work.size(), &zero, xd,
                                           ref_zero.data()));
    const std::vector<double> host = host_dgrad(g, nhwc, ho, wo, wv, dy);
    int zeros = 0;
    for (size_t i = 0; i < nx; ++i) {
        ASSERT_EQ(static_cast<double>(ref_zero[i]), 2.0 * host[i]) << "direct dgrad, element " << i;
        ASSERT_EQ(static_cast<double>(ref_beta[i]), 2.0 * host[i] - static_cast<double>(dx0[i])) << i;
        zeros += host[i] == 0.0;
    }
    ASSERT_LT(zeros, static_cast<int>(nx)) << "degenerate data: dx is all zeros";

    // Folded operands.
    std::vector<T> wf(filter_elems(fwd, sizeof(T)), nan), dyp(tensor_elems(pyd, sizeof(T)), nan);
    ASSERT_OK(cudnnTransformFilter(h, t_wfold, &one, wd, wv.data(), &zero, fwd, wf.data()));
    ASSERT_OK(cudnnTransformTensorEx(h, t_ypad, &one, yd, dy.data(), &zero, pyd, dyp.data()));
    const size_t nxf = tensor_elems(fxd, sizeof(T));
    size_t wsb = 0;
    ASSERT_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, fwd, pyd, fcd, fxd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                                           &wsb));
    std::vector<unsigned char> fwork(wsb + 1);

    // (a) folded dgrad with beta = 0 into NaNs, alpha and beta applied by the unfold.
    std::vector<T> dxf(nxf, nan);
    ASSERT_OK(cudnnConvolutionBackwardData(h, &one, fwd, wf.data(), pyd, dyp.data(), fcd,
                                           CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, fwork.data(), wsb, &zero, fxd,
                                           dxf.data()));
    std::vector<T> got = dx0;
    ASSERT_OK(cudnnTransformTensorEx(h, t_xunfold, &alpha, fxd, dxf.data(), &beta, xd, got.data()));
    for (size_t i = 0; i < nx; ++i) ASSERT_EQ(got[i], ref_beta[i]) << "unfold with beta, element " << i;
    std::vector<T> got0(nx, nan);
    ASSERT_OK(cudnnTransformTensorEx(h, t_xunfold, &alpha, fxd, dxf.data(), &zero, xd, got0.data()));
    for (size_t i = 0; i < nx; ++i) ASSERT_EQ(got0[i], ref_zero[i]) << "unfold with beta 0, element " << i;

    // (b) dx folded first, the folded dgrad blends with alpha and beta, a plain unfold.
    std::vector<T> dxf2(nxf, nan);
    ASSERT_OK(cudnnTransformTensorEx(h, t_xfold, &one, xd, dx0.data(), &zero, fxd, dxf2.data()));
    ASSERT_OK(cudnnConvolutionBackwardData(h, &alpha, fwd, wf.data(), pyd, dyp.data(), fcd,
                                           CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, fwork.data(), wsb, &beta, fxd,
                                           dxf2.data()));
    std::vector<T> got2(nx, nan);
    ASSERT_OK(cudnnTransformTensorEx(h, t_xunfold, &one, fxd, dxf2.data(), &zero, xd, got2.data()));
    for (size_t i = 0; i < nx; ++i) ASSERT_EQ(got2[i], ref_beta[i]) << "fold, blend, unfold: element " << i;
}

struct FilterShape {
    int r, s;
};
struct Strides {
    int h, w;
};
struct Pads {
    int h, w;
};

void sweep(FoldTest* t, bool nhwc, bool dbl, cudnnTensorFormat_t tf) {
    const FilterShape filters[] = {{1, 1}, {2, 3}, {3, 3}, {4, 2}, {5, 5}, {1, 4}, {3, 1}, {5, 2}};
    const Strides strides[] = {{1, 1}, {2, 2}, {3, 3}, {2, 1}, {1, 3}, {3, 2}};
    const Pads pads[] = {{0, 0}, {1, 2}, {2, 1}, {3, 0}};
    int run = 0;
    for (const auto& f : filters)
        for (const auto& st : strides)
            for (const auto& pd : pads) {
                Geometry g{2, 3, 9, 10, 4, f.r, f.s, pd.h, pd.w, st.h, st.w};
                // CUDNN_CONVOLUTION folds where the filter has one tap along every strided dim.
                if ((st.h == 1 || f.r == 1) && (st.w == 1 || f.s == 1) && (run & 1)) g.mode = CUDNN_CONVOLUTION;
                ++run;
                if (dbl) t->check_pipeline<double>(g, nhwc, tf);
                else t->check_pipeline<float>(g, nhwc, tf);
                if (::testing::Test::HasFatalFailure()) return;
            }
}

using FoldSweep = FoldTest;

}  // namespace

TEST_F(FoldSweep, FloatNchwIntoNchw) { sweep(this, false, false, CUDNN_TENSOR_NCHW); }
TEST_F(FoldSweep, FloatNhwcIntoNhwc) { sweep(this, true, false, CUDNN_TENSOR_NHWC); }
TEST_F(FoldSweep, FloatNchwIntoNhwc) { sweep(this, false, false, CUDNN_TENSOR_NHWC); }
TEST_F(FoldSweep, DoubleNchwIntoNchw) { sweep(this, false, true, CUDNN_TENSOR_NCHW); }
TEST_F(FoldSweep, DoubleNhwcIntoNchw) { sweep(this, true, true, CUDNN_TENSOR_NCHW); }

// Dims with stride 1 keep their dilation; groups survive when nothing folds; a larger
// batch and channel counts.
TEST_F(FoldSweep, DilationAndGroupsWhereNothingFolds) {
    Geometry dil{2, 3, 11, 12, 4, 3, 2, 2, 1, 1, 2};
    dil.dil_h = 2;  // stride 1 along H
    check_pipeline<float>(dil, false, CUDNN_TENSOR_NCHW);
    Geometry grp{2, 6, 8, 8, 4, 3, 3, 1, 1, 1, 1};
    grp.groups = 2;
    grp.dil_w = 2;
    check_pipeline<double>(grp, true, CUDNN_TENSOR_NHWC);
    Geometry big{3, 16, 15, 13, 24, 3, 3, 1, 1, 2, 2};
    check_pipeline<float>(big, true, CUDNN_TENSOR_NCHW);
}

// The folded shapes of a typical downsampling layer.
TEST_F(FoldTest, ShapesOfAStrideTwoLayer) {
    set(Geometry{1, 3, 8, 8, 4, 3, 3, 1, 1, 2, 2}, false, CUDNN_DATA_FLOAT);  // dy 4x4
    ASSERT_OK(get_folded(CUDNN_TENSOR_NCHW));
    cudnnDataType_t dt;
    int n, c, hh, ww, sn, sc, sh, sw;
    ASSERT_OK(cudnnGetTensor4dDescriptor(fxd, &dt, &n, &c, &hh, &ww, &sn, &sc, &sh, &sw));
    // Filter 3 -> 2 taps per phase; folded dx max(4 + 2 - 1, ceil((8 + 1) / 2)) = 5.
    EXPECT_EQ(n, 1);
    EXPECT_EQ(c, 12);
    EXPECT_EQ(hh, 5);
    EXPECT_EQ(ww, 5);
    EXPECT_EQ(sw, 1);  // packed NCHW
    ASSERT_OK(cudnnGetTensor4dDescriptor(pyd, &dt, &n, &c, &hh, &ww, &sn, &sc, &sh, &sw));
    EXPECT_EQ(c, 4);
    EXPECT_EQ(hh, 4);  // 5 - 2 + 1: no padding needed here
    cudnnTensorFormat_t f;
    int k, r, s;
    ASSERT_OK(cudnnGetFilter4dDescriptor(fwd, &dt, &f, &k, &c, &r, &s));
    EXPECT_EQ(k, 4);
    EXPECT_EQ(c, 12);
    EXPECT_EQ(r, 2);
    EXPECT_EQ(s, 2);
    int pads[2], strides[2], dils[2], len;
    cudnnConvolutionMode_t mode;
    ASSERT_OK(cudnnGetConvolutionNdDescriptor(fcd, 2, &len, pads, strides, dils, &mode, &dt));
    EXPECT_EQ(pads[0], 0);
    EXPECT_EQ(pads[1], 0);
    cudnnTensorFormat_t tf;
    int before[4], after[4];
    uint32_t fold[2];
    cudnnFoldingDirection_t dir;
    ASSERT_OK(cudnnGetTensorTransformDescriptor(t_xunfold, 4, &tf, before, after, fold, &dir));
    EXPECT_EQ(dir, CUDNN_TRANSFORM_UNFOLD);
    EXPECT_EQ(before[2], 1);
    EXPECT_EQ(after[2], 5 * 2 - 8 - 1);
    EXPECT_EQ(fold[0], 2u);
    EXPECT_EQ(fold[1], 2u);
    ASSERT_OK(cudnnGetTensorTransformDescriptor(t_xfold, 4, &tf, before, after, fold, &dir));
    EXPECT_EQ(dir, CUDNN_TRANSFORM_FOLD);
}

TEST_F(FoldTest, UnsupportedFoldsNameTheProblem) {
    Geometry dil{1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2};
    dil.dil_h = 2;
    set(dil, false, CUDNN_DATA_FLOAT);
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, get_folded(CUDNN_TENSOR_NCHW));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "dilation"));

    Geometry grp{1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2};
    grp.groups = 2;
    set(grp, false, CUDNN_DATA_FLOAT);
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, get_folded(CUDNN_TENSOR_NCHW));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "groupCount"));

    Geometry conv{1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 1};
    conv.mode = CUDNN_CONVOLUTION;
    set(conv, false, CUDNN_DATA_FLOAT);
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, get_folded(CUDNN_TENSOR_NCHW));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "CUDNN_CONVOLUTION"));

    // Outputs are untouched by a failed call.
    cudnnDataType_t dt;
    int n = -1, c = -1, hh, ww, sn, sc, sh, sw;
    ASSERT_OK(cudnnGetTensor4dDescriptor(fxd, &dt, &n, &c, &hh, &ww, &sn, &sc, &sh, &sw));
    EXPECT_EQ(n, 0);  // never set: reads as zeros
    EXPECT_EQ(c, 0);

    set(Geometry{1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2}, false, CUDNN_DATA_FLOAT);
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, get_folded(CUDNN_TENSOR_NCHW_VECT_C));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, get_folded(static_cast<cudnnTensorFormat_t>(7)));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "transformFormat"));
}

TEST_F(FoldTest, BadInputIsBadParam) {
    set(Geometry{1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2}, false, CUDNN_DATA_FLOAT);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetFoldedConvBackwardDataDescriptors(h, wd, yd, cd, xd, CUDNN_TENSOR_NCHW, fwd, pyd, fcd, fxd,
                                                            t_wfold, t_ypad, nullptr, t_xunfold));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "gradFoldTransDesc"));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetFoldedConvBackwardDataDescriptors(nullptr, wd, yd, cd, xd, CUDNN_TENSOR_NCHW, fwd, pyd, fcd,
                                                            fxd, t_wfold, t_ypad, t_xfold, t_xunfold));
    // dy of the wrong size (the convolution gives 5x5).
    ASSERT_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 4, 6, 6));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, get_folded(CUDNN_TENSOR_NCHW));

    // A 3-D convolution: cuDNN documents BAD_PARAM for tensors of more than 4 dims.
    const int xdims[5] = {1, 2, 6, 6, 6}, ydims[5] = {1, 2, 3, 3, 3}, wdims[5] = {2, 2, 2, 2, 2};
    const int xstr[5] = {432, 216, 36, 6, 1}, ystr[5] = {54, 27, 9, 3, 1};
    const int pad[3] = {0, 0, 0}, stride[3] = {2, 2, 2}, dil[3] = {1, 1, 1};
    ASSERT_OK(cudnnSetTensorNdDescriptor(xd, CUDNN_DATA_FLOAT, 5, xdims, xstr));
    ASSERT_OK(cudnnSetTensorNdDescriptor(yd, CUDNN_DATA_FLOAT, 5, ydims, ystr));
    ASSERT_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, wdims));
    ASSERT_OK(cudnnSetConvolutionNdDescriptor(cd, 3, pad, stride, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, get_folded(CUDNN_TENSOR_NCHW));
    EXPECT_TRUE(mentions(odnn_test::last_error(), "4-D"));
}
