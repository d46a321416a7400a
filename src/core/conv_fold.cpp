#include "core/conv_fold.hpp"

#include <algorithm>
#include <climits>

#include "core/conv_problem.hpp"
#include "core/tensor_ops.hpp"

namespace odnn::core {

namespace {

constexpr const char* kDimName[2] = {"H", "W"};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Layout word of a descriptor for a transform's destFormat (informational only).
cudnnTensorFormat_t format_of(const TensorDesc& t) {
    return t.dims[1] > 1 && t.strides[1] == 1 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

}  // namespace

Status fold_conv_bwd_data(const FilterDesc& w, const TensorDesc& dy, const ConvDesc& conv, const TensorDesc& dx,
                          cudnnTensorFormat_t format, FoldedBwdData* out) {
    ODNN_REQUIRE_PARAM(static_cast<int>(format) >= 0 && static_cast<int>(format) <= CUDNN_TENSOR_NCHW_VECT_C,
                       "transformFormat = %d is not a cudnnTensorFormat_t value", static_cast<int>(format));
    ODNN_REQUIRE_SUPPORTED(format != CUDNN_TENSOR_NCHW_VECT_C,
                           "transformFormat NCHW_VECT_C: backward data has no vectorized data types");
    // The same checks (and statuses) as cudnnConvolutionBackwardData on these descriptors.
    ConvProblem p;
    ODNN_RETURN_IF_ERROR(make_conv_problem(ConvKind::bwd_data, dx, w, conv, dy, &p));
    ODNN_REQUIRE_PARAM(dx.nb_dims == 4,
                       "gradDesc has %d dimensions: folding handles 4-D tensors (2-D convolutions) only", dx.nb_dims);
    ODNN_REQUIRE_SUPPORTED(w.format != CUDNN_TENSOR_NCHW_VECT_C && dx.vect_count == 1 && dy.vect_count == 1,
                           "vectorized (NCHW_VECT_C) descriptors");

    const int64_t n = dx.dims[0], c = dx.dims[1], k = dy.dims[1];
    int64_t fold[2], rq[2], hq[2], hop[2], x_before[2], x_after[2], w_after[2], y_after[2];
    int pads[2], dils[2];
    bool folds = false;
    for (int i = 0; i < 2; ++i) {
        const int64_t s = conv.strides[i], pad = conv.pads[i], r = w.dims[2 + i];
        const int64_t h = dx.dims[2 + i], ho = dy.dims[2 + i];
        fold[i] = s;
        if (s == 1) {  // nothing to fold: the convolution keeps its padding and dilation here
            rq[i] = r;
            hq[i] = h;
            hop[i] = ho;
            x_before[i] = x_after[i] = w_after[i] = y_after[i] = 0;
            pads[i] = conv.pads[i];
            dils[i] = conv.dilations[i];
            continue;
        }
        folds = true;
        ODNN_REQUIRE_SUPPORTED(conv.dilations[i] == 1,
                               "dilation %d with stride %lld along %s: folding needs dilation 1 where it folds",
                               conv.dilations[i], static_cast<long long>(s), kDimName[i]);
        ODNN_REQUIRE_SUPPORTED(conv.mode == CUDNN_CROSS_CORRELATION || r == 1,
                               "CUDNN_CONVOLUTION mode with a %lld-tap filter and stride %lld along %s: the flipped "
                               "filter would need its folded phases reversed, which no fold transform does "
                               "(CUDNN_CROSS_CORRELATION folds)",
                               static_cast<long long>(r), static_cast<long long>(s), kDimName[i]);
        rq[i] = ceil_div(r, s);
        hq[i] = std::max(ho + rq[i] - 1, ceil_div(h + pad, s));
        hop[i] = hq[i] - rq[i] + 1;
        x_before[i] = pad;
        x_after[i] = hq[i] * s - h - pad;
        w_after[i] = rq[i] * s - r;
        y_after[i] = hop[i] - ho;
        pads[i] = 0;
        dils[i] = 1;
    }
    ODNN_REQUIRE_SUPPORTED(!folds || conv.group_count == 1,
                           "groupCount = %d with stride > 1: folded channels would interleave the groups",
                           conv.group_count);
    const int64_t phases = fold[0] * fold[1];
    for (int i = 0; i < 2; ++i)
        ODNN_REQUIRE_SUPPORTED(hq[i] * fold[i] <= INT_MAX && hop[i] <= INT_MAX,
                               "the folded sizes along %s do not fit in an int", kDimName[i]);
    ODNN_REQUIRE_SUPPORTED(c * phases <= INT_MAX, "%lld channels folded by %lld do not fit in an int",
                           static_cast<long long>(c), static_cast<long long>(phases));

    FoldedBwdData r;
    const auto i32 = [](int64_t v) { return static_cast<int>(v); };
    {
        const int dims[4] = {i32(k), i32(w.dims[1] * phases), i32(rq[0]), i32(rq[1])};
        ODNN_RETURN_IF_ERROR(set_filter_nd(r.folded_filter, w.dtype, format, 4, dims));
    }
    {
        const int dims[4] = {i32(n), i32(k), i32(hop[0]), i32(hop[1])};
        ODNN_RETURN_IF_ERROR(set_tensor_nd_ex(r.padded_diff, format, dy.dtype, 4, dims));
    }
    {
        const int dims[4] = {i32(n), i32(c * phases), i32(hq[0]), i32(hq[1])};
        ODNN_RETURN_IF_ERROR(set_tensor_nd_ex(r.folded_grad, format, dx.dtype, 4, dims));
    }
    r.folded_conv = conv;  // group count, math and reorder types carry over
    {
        const int ones[2] = {1, 1};
        ODNN_RETURN_IF_ERROR(set_conv_nd(r.folded_conv, 2, pads, ones, dils, conv.mode, conv.compute_type));
    }
    const int32_t zero[4] = {0, 0, 0, 0};
    const uint32_t no_fold[2] = {1, 1};
    const uint32_t folds_u[2] = {static_cast<uint32_t>(fold[0]), static_cast<uint32_t>(fold[1])};
    {
        const int32_t after[4] = {0, 0, i32(w_after[0]), i32(w_after[1])};
        ODNN_RETURN_IF_ERROR(
            set_tensor_transform(r.filter_fold, 4, format, zero, after, folds_u, CUDNN_TRANSFORM_FOLD));
    }
    {
        const int32_t after[4] = {0, 0, i32(y_after[0]), i32(y_after[1])};
        ODNN_RETURN_IF_ERROR(set_tensor_transform(r.diff_pad, 4, format, zero, after, no_fold, CUDNN_TRANSFORM_FOLD));
    }
    {
        const int32_t before[4] = {0, 0, i32(x_before[0]), i32(x_before[1])};
        const int32_t after[4] = {0, 0, i32(x_after[0]), i32(x_after[1])};
        ODNN_RETURN_IF_ERROR(
            set_tensor_transform(r.grad_fold, 4, format, before, after, folds_u, CUDNN_TRANSFORM_FOLD));
        ODNN_RETURN_IF_ERROR(
            set_tensor_transform(r.grad_unfold, 4, format_of(dx), before, after, folds_u, CUDNN_TRANSFORM_UNFOLD));
    }

    // Self-check: the transforms give exactly the descriptors' dims.
    TensorDesc t;
    size_t bytes = 0;
    ODNN_RETURN_IF_ERROR(init_transform_dest(r.diff_pad, dy, &t, &bytes));
    bool same = true;
    for (int i = 0; i < 4; ++i) same = same && t.dims[i] == r.padded_diff.dims[i];
    ODNN_RETURN_IF_ERROR(init_transform_dest(r.grad_fold, dx, &t, &bytes));
    for (int i = 0; i < 4; ++i) same = same && t.dims[i] == r.folded_grad.dims[i];
    ODNN_REQUIRE(same, CUDNN_STATUS_INTERNAL_ERROR, "folded descriptors inconsistent with their transforms");
    *out = r;
    return Status::ok();
}

}  // namespace odnn::core
