#include "core/conv_problem.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/dtype.hpp"
#include "core/memory.hpp"
#include "core/replay.hpp"

namespace odnn::core {

// ---------------------------------------------------------------------------
// Names

const char* conv_kind_name(ConvKind k) {
    switch (k) {
        case ConvKind::fwd: return "fwd";
        case ConvKind::bwd_data: return "bwd_data";
        case ConvKind::bwd_filter: return "bwd_filter";
    }
    return "?";
}

int conv_algo_count(ConvKind k) {
    switch (k) {
        case ConvKind::fwd: return CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
        case ConvKind::bwd_data: return CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
        case ConvKind::bwd_filter: return CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    }
    return 0;
}

const char* conv_algo_name(ConvKind k, int algo) {
    static const char* const fwd[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM",     "DIRECT",
                                      "FFT",           "FFT_TILING",            "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char* const bwd_data[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char* const bwd_filter[] = {"ALGO_0",   "ALGO_1",           "FFT",       "ALGO_3",
                                             "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
    if (algo < 0 || algo >= conv_algo_count(k)) return "unknown";
    switch (k) {
        case ConvKind::fwd: return fwd[algo];
        case ConvKind::bwd_data: return bwd_data[algo];
        case ConvKind::bwd_filter: return bwd_filter[algo];
    }
    return "unknown";
}

// ---------------------------------------------------------------------------
// ConvTensor / ConvProblem

int64_t ConvTensor::span() const {
    int64_t last = 0;
    for (int i = 0; i < 5; ++i) {
        const int64_t extent = (i == 1 && vect > 1) ? dims[1] / vect : dims[i];
        last += (extent - 1) * strides[i];
    }
    return (last + 1) * vect;
}

bool ConvTensor::spatial_packed() const {
    if (vect != 1) return false;
    return (dims[4] == 1 || strides[4] == 1) && (dims[3] == 1 || strides[3] == dims[4]) &&
           (dims[2] == 1 || strides[2] == dims[3] * dims[4]);
}

bool ConvTensor::pixels_uniform() const {
    if (vect != 1) return false;
    const int64_t p = strides[4];
    return (dims[3] == 1 || strides[3] == dims[4] * p) && (dims[2] == 1 || strides[2] == dims[3] * dims[4] * p) &&
           (dims[0] == 1 || strides[0] == dims[2] * dims[3] * dims[4] * p);
}

int64_t ConvProblem::reduction_length() const {
    switch (kind) {
        case ConvKind::fwd: return cg() * filt_pixels();
        case ConvKind::bwd_data: return kg() * filt_pixels();
        case ConvKind::bwd_filter: return n * out_pixels();
    }
    return 0;
}

double ConvProblem::flops() const {
    return 2.0 * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(out_pixels()) *
           static_cast<double>(cg()) * static_cast<double>(filt_pixels());
}

const void* ConvProblem::output_data() const {
    switch (kind) {
        case ConvKind::fwd: return y_data;
        case ConvKind::bwd_data: return x_data;
        case ConvKind::bwd_filter: return w_data;
    }
    return nullptr;
}

double decode_scalar(const void* p, cudnnDataType_t data_type) {
    if (data_type == CUDNN_DATA_DOUBLE) return *static_cast<const double*>(p);
    return static_cast<double>(*static_cast<const float*>(p));
}

// ---------------------------------------------------------------------------
// Building a problem from descriptors

namespace {

bool is_float_type(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

bool is_int8_family(cudnnDataType_t t) {
    return t == CUDNN_DATA_INT8 || t == CUDNN_DATA_UINT8 || t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_UINT8x4 ||
           t == CUDNN_DATA_INT8x32;
}

cudnnDataType_t scalar_type(cudnnDataType_t t) {
    switch (t) {
        case CUDNN_DATA_INT8x4:
        case CUDNN_DATA_INT8x32: return CUDNN_DATA_INT8;
        case CUDNN_DATA_UINT8x4: return CUDNN_DATA_UINT8;
        default: return t;
    }
}

// Tensor (N, C, spatial...) -> canonical 5-D.
Status to_conv_tensor(const TensorDesc& d, const char* arg, ConvTensor* t) {
    const int vc = dtype_vector_count(d.dtype);
    ODNN_REQUIRE_SUPPORTED(vc == 1 || d.vect_count == vc,
                           "%s: vector data type %s is supported in format CUDNN_TENSOR_NCHW_VECT_C only", arg,
                           dtype_name(d.dtype));
    t->dtype = scalar_type(d.dtype);
    t->vect = d.vect_count;
    const int ns = d.nb_dims - 2;
    t->dims[0] = d.dims[0];
    t->dims[1] = d.dims[1];
    t->strides[0] = d.strides[0];
    t->strides[1] = d.strides[1];
    for (int i = 0; i < 3; ++i) {
        const int src = i - (3 - ns);  // right-aligned: 2-D fills H, W
        t->dims[2 + i] = src >= 0 ? d.dims[2 + src] : 1;
        t->strides[2 + i] = src >= 0 ? d.strides[2 + src] : 1;
    }
    return Status::ok();
}

// Filter (K, C/g, spatial...) in its format -> canonical 5-D with explicit strides.
void filter_to_conv_tensor(const FilterDesc& f, ConvTensor* t, bool* nhwc) {
    const int ns = f.nb_dims - 2;
    t->dtype = scalar_type(f.dtype);
    int64_t dims[5];
    dims[0] = f.dims[0];
    dims[1] = f.dims[1];
    for (int i = 0; i < 3; ++i) {
        const int src = i - (3 - ns);
        dims[2 + i] = src >= 0 ? f.dims[2 + src] : 1;
    }
    for (int i = 0; i < 5; ++i) t->dims[i] = dims[i];
    *nhwc = false;
    t->vect = 1;
    if (f.format == CUDNN_TENSOR_NHWC) {
        *nhwc = true;
        t->strides[1] = 1;
        t->strides[4] = dims[1];
        t->strides[3] = dims[4] * dims[1];
        t->strides[2] = dims[3] * dims[4] * dims[1];
        t->strides[0] = dims[2] * dims[3] * dims[4] * dims[1];
    } else {
        const int vc = f.format == CUDNN_TENSOR_NCHW_VECT_C ? dtype_vector_count(f.dtype) : 1;
        t->vect = vc;
        const int64_t cv = dims[1] / vc;
        t->strides[4] = 1;
        t->strides[3] = dims[4];
        t->strides[2] = dims[3] * dims[4];
        t->strides[1] = dims[2] * dims[3] * dims[4];
        t->strides[0] = cv * dims[2] * dims[3] * dims[4];
    }
}

Status check_data_types(ConvKind kind, const TensorDesc& x, const FilterDesc& w, const TensorDesc& y,
                        const ConvDesc& cd) {
    const char* yname = kind == ConvKind::fwd ? "yDesc" : "dyDesc";
    const char* xname = kind == ConvKind::bwd_data ? "dxDesc" : "xDesc";
    if (is_float_type(x.dtype) || is_float_type(w.dtype)) {
        ODNN_REQUIRE_SUPPORTED(x.dtype == w.dtype && x.dtype == y.dtype,
                           "%s (%s), wDesc (%s) and %s (%s) must have the same data type", xname,
                           dtype_name(x.dtype), dtype_name(w.dtype), yname, dtype_name(y.dtype));
        const cudnnDataType_t ct = cd.compute_type;
        bool ok = false;
        switch (x.dtype) {
            case CUDNN_DATA_FLOAT: ok = ct == CUDNN_DATA_FLOAT; break;
            case CUDNN_DATA_DOUBLE: ok = ct == CUDNN_DATA_DOUBLE; break;
            case CUDNN_DATA_HALF: ok = ct == CUDNN_DATA_HALF || ct == CUDNN_DATA_FLOAT; break;
            case CUDNN_DATA_BFLOAT16: ok = ct == CUDNN_DATA_FLOAT; break;
            default: break;
        }
        ODNN_REQUIRE_SUPPORTED(ok, "data type %s with compute type %s is not a supported configuration",
                               dtype_name(x.dtype), dtype_name(ct));
        return Status::ok();
    }
    ODNN_REQUIRE_SUPPORTED(is_int8_family(x.dtype) && is_int8_family(w.dtype),
                           "convolution of %s data with %s filters is not supported", dtype_name(x.dtype),
                           dtype_name(w.dtype));
    ODNN_REQUIRE_SUPPORTED(kind == ConvKind::fwd, "%s of 8-bit integer data is not supported (forward only)",
                           kind == ConvKind::bwd_data ? "backward data" : "backward filter");
    ODNN_REQUIRE_SUPPORTED(cd.compute_type == CUDNN_DATA_INT32,
                           "8-bit integer convolution needs compute type INT32, got %s", dtype_name(cd.compute_type));
    const int xv = dtype_vector_count(x.dtype), wv = dtype_vector_count(w.dtype);
    ODNN_REQUIRE_SUPPORTED(scalar_type(w.dtype) == CUDNN_DATA_INT8,
                           "wDesc: 8-bit filters must be INT8, INT8x4 or INT8x32");
    ODNN_REQUIRE_SUPPORTED(xv == wv, "xDesc (%s) and wDesc (%s) must have the same vector width", dtype_name(x.dtype),
                       dtype_name(w.dtype));
    ODNN_REQUIRE_SUPPORTED(wv == 1 || w.format == CUDNN_TENSOR_NCHW_VECT_C,
                       "wDesc: %s filters need format CUDNN_TENSOR_NCHW_VECT_C", dtype_name(w.dtype));
    const bool y_int = y.dtype == CUDNN_DATA_INT8 || y.dtype == CUDNN_DATA_INT8x4 || y.dtype == CUDNN_DATA_INT8x32;
    ODNN_REQUIRE_SUPPORTED(y.dtype == CUDNN_DATA_FLOAT || y_int,
                           "yDesc: an 8-bit convolution writes INT8 or FLOAT, got %s", dtype_name(y.dtype));
    ODNN_REQUIRE_SUPPORTED(!y_int || dtype_vector_count(y.dtype) == xv,
                       "yDesc (%s) must have xDesc's (%s) vector width", dtype_name(y.dtype), dtype_name(x.dtype));
    return Status::ok();
}

}  // namespace

Status make_conv_problem(ConvKind kind, const TensorDesc& x, const FilterDesc& w, const ConvDesc& cd,
                         const TensorDesc& y, ConvProblem* p) {
    const char* yname = kind == ConvKind::fwd ? "yDesc" : "dyDesc";
    const char* xname = kind == ConvKind::bwd_data ? "dxDesc" : "xDesc";
    const char* wname = kind == ConvKind::bwd_filter ? "dwDesc" : "wDesc";
    ODNN_REQUIRE_PARAM(cd.is_set(), "convDesc has not been set (call cudnnSetConvolution*Descriptor first)");
    ODNN_REQUIRE_PARAM(x.is_set(), "%s has not been set", xname);
    ODNN_REQUIRE_PARAM(w.is_set(), "%s has not been set", wname);
    ODNN_REQUIRE_PARAM(y.is_set(), "%s has not been set", yname);
    ODNN_REQUIRE_PARAM(x.nb_dims == y.nb_dims, "%s has %d dims but %s has %d", xname, x.nb_dims, yname, y.nb_dims);
    ODNN_REQUIRE_PARAM(x.nb_dims == w.nb_dims, "%s has %d dims but %s has %d", xname, x.nb_dims, wname, w.nb_dims);
    ODNN_REQUIRE_PARAM(x.nb_dims >= 3, "%s has %d dims; a convolution needs at least 3", xname, x.nb_dims);
    ODNN_REQUIRE_PARAM(x.nb_dims == cd.nb_spatial + 2,
                       "%s has %d dims but convDesc has %d spatial dims (the tensors need %d)", xname, x.nb_dims,
                       cd.nb_spatial, cd.nb_spatial + 2);
    ODNN_REQUIRE_SUPPORTED(x.nb_dims == 4 || x.nb_dims == 5,
                           "%d-d tensors: convolutions take 4-d (2 spatial dims) or 5-d (3 spatial dims) tensors; "
                           "express a 1-d convolution as 2-d with a unit dimension",
                           x.nb_dims);
    ODNN_RETURN_IF_ERROR(check_data_types(kind, x, w, y, cd));
    const int64_t groups = cd.group_count;
    ODNN_REQUIRE_PARAM(x.dims[1] == w.dims[1] * groups,
                       "%s has %lld channels but %s has %lld x groupCount %lld", xname,
                       static_cast<long long>(x.dims[1]), wname, static_cast<long long>(w.dims[1]),
                       static_cast<long long>(groups));
    ODNN_REQUIRE_PARAM(w.dims[0] % groups == 0, "%s: output channels (%lld) are not a multiple of groupCount (%lld)",
                       wname, static_cast<long long>(w.dims[0]), static_cast<long long>(groups));
    ODNN_REQUIRE_PARAM(y.dims[0] == x.dims[0], "%s batch (%lld) differs from %s batch (%lld)", yname,
                       static_cast<long long>(y.dims[0]), xname, static_cast<long long>(x.dims[0]));
    ODNN_REQUIRE_PARAM(y.dims[1] == w.dims[0], "%s has %lld channels but %s has %lld output channels", yname,
                       static_cast<long long>(y.dims[1]), wname, static_cast<long long>(w.dims[0]));
    int out[kDimMax];
    ODNN_RETURN_IF_ERROR(conv_forward_output_dims(cd, x, w, x.nb_dims, out));
    for (int i = 2; i < x.nb_dims; ++i)
        ODNN_REQUIRE_PARAM(y.dims[i] == out[i], "%s dim %d is %lld but the convolution gives %d", yname, i,
                           static_cast<long long>(y.dims[i]), out[i]);

    ConvProblem t;
    t.kind = kind;
    t.nb_spatial = cd.nb_spatial;
    t.n = x.dims[0];
    t.c = x.dims[1];
    t.k = w.dims[0];
    t.groups = groups;
    ODNN_RETURN_IF_ERROR(to_conv_tensor(x, xname, &t.x));
    ODNN_RETURN_IF_ERROR(to_conv_tensor(y, yname, &t.y));
    filter_to_conv_tensor(w, &t.w, &t.w_nhwc);
    const int ns = cd.nb_spatial;
    for (int i = 0; i < 3; ++i) {
        const int src = i - (3 - ns);
        t.in[i] = t.x.dims[2 + i];
        t.out[i] = t.y.dims[2 + i];
        t.filt[i] = t.w.dims[2 + i];
        t.pad[i] = src >= 0 ? cd.pads[src] : 0;
        t.stride[i] = src >= 0 ? cd.strides[src] : 1;
        t.dil[i] = src >= 0 ? cd.dilations[src] : 1;
    }
    t.flip = cd.mode == CUDNN_CONVOLUTION;
    t.compute = cd.compute_type;
    t.math = cd.math_type;
    *p = t;
    return Status::ok();
}

Status set_conv_epilogue(ConvProblem* p, const TensorDesc& y, const TensorDesc& z, const void* z_data, double alpha2,
                         const TensorDesc& bias, const void* bias_data, cudnnActivationMode_t mode,
                         cudnnNanPropagation_t nan_opt) {
    ODNN_REQUIRE_PARAM(z.is_set(), "zDesc has not been set");
    ODNN_REQUIRE_PARAM(bias.is_set(), "biasDesc has not been set");
    ODNN_REQUIRE_SUPPORTED(mode == CUDNN_ACTIVATION_RELU || mode == CUDNN_ACTIVATION_IDENTITY,
                           "activation mode %d: cudnnConvolutionBiasActivationForward supports RELU and IDENTITY",
                           static_cast<int>(mode));
    ODNN_REQUIRE_PARAM(z.nb_dims == y.nb_dims, "zDesc has %d dims but yDesc has %d", z.nb_dims, y.nb_dims);
    for (int i = 0; i < y.nb_dims; ++i)
        ODNN_REQUIRE_PARAM(z.dims[i] == y.dims[i], "zDesc dim %d is %lld but yDesc's is %lld", i,
                           static_cast<long long>(z.dims[i]), static_cast<long long>(y.dims[i]));
    ODNN_REQUIRE_PARAM(z.dtype == y.dtype, "zDesc (%s) must have yDesc's data type (%s)", dtype_name(z.dtype),
                       dtype_name(y.dtype));
    // A bias of another shape is NOT_SUPPORTED_SHAPE in cuDNN 9.19 (measured).
    ODNN_REQUIRE(bias.nb_dims == y.nb_dims, CUDNN_STATUS_NOT_SUPPORTED_SHAPE, "biasDesc has %d dims but yDesc has %d",
                 bias.nb_dims, y.nb_dims);
    for (int i = 0; i < bias.nb_dims; ++i) {
        const int64_t want = i == 1 ? y.dims[1] : 1;
        ODNN_REQUIRE(bias.dims[i] == want, CUDNN_STATUS_NOT_SUPPORTED_SHAPE,
                     "biasDesc dim %d is %lld; it must be %lld (bias is 1 x K x 1 x 1)", i,
                     static_cast<long long>(bias.dims[i]), static_cast<long long>(want));
    }
    ODNN_REQUIRE_PARAM(bias.dtype == y.dtype || bias.dtype == CUDNN_DATA_FLOAT,
                       "biasDesc (%s) must have yDesc's data type (%s) or FLOAT", dtype_name(bias.dtype),
                       dtype_name(y.dtype));
    ConvEpilogue e;
    e.enabled = true;
    ODNN_RETURN_IF_ERROR(to_conv_tensor(z, "zDesc", &e.z_t));
    ODNN_RETURN_IF_ERROR(to_conv_tensor(bias, "biasDesc", &e.bias_t));
    e.z = z_data;
    e.alpha2 = alpha2;
    e.bias = bias_data;
    e.relu = mode == CUDNN_ACTIVATION_RELU;
    e.propagate_nan = nan_opt == CUDNN_PROPAGATE_NAN;
    p->epi = e;
    return Status::ok();
}

const char* conv_config_name(const ConvProblem& p) {
    switch (p.x.dtype) {
        case CUDNN_DATA_FLOAT: return "FLOAT_CONFIG";
        case CUDNN_DATA_DOUBLE: return "DOUBLE_CONFIG";
        case CUDNN_DATA_HALF: return p.compute == CUDNN_DATA_HALF ? "TRUE_HALF_CONFIG" : "PSEUDO_HALF_CONFIG";
        case CUDNN_DATA_BFLOAT16: return "PSEUDO_BFLOAT16_CONFIG";
        default: break;
    }
    const bool ext = p.y.dtype == CUDNN_DATA_FLOAT;
    if (p.x.vect == 32) return ext ? "INT8x32_EXT_CONFIG" : "INT8x32_CONFIG";
    if (p.x.vect == 4) {
        if (p.x.dtype == CUDNN_DATA_UINT8) return ext ? "UINT8x4_EXT_CONFIG" : "UINT8x4_CONFIG";
        return ext ? "INT8x4_EXT_CONFIG" : "INT8x4_CONFIG";
    }
    if (p.x.dtype == CUDNN_DATA_UINT8) return ext ? "UINT8_EXT_CONFIG" : "UINT8_CONFIG";
    return ext ? "INT8_EXT_CONFIG" : "INT8_CONFIG";
}

// ---------------------------------------------------------------------------
// Which algorithm ids cuDNN offers for a problem: the support tables measured on NVIDIA's
// cuDNN 9.19 (H200), where they restrict an id to a family of problems:
//   - every id but the implicit GEMMs needs NCHW images and filters (packed spatial dims);
//     3-d channels-last problems get IMPLICIT_PRECOMP_GEMM / ALGO_1 only;
//   - GEMM: 2-d, not TRUE_HALF; forward DIRECT, WINOGRAD (fused, forward and backward
//     data), backward-filter WINOGRAD and FFT_TILING: never;
//   - FFT: 2-d, unit stride and dilation, filter larger than padding, input + 2 x padding
//     <= 256, FLOAT or PSEUDO_HALF; FFT_TILING: unit dilation, filter larger than padding,
//     FLOAT or PSEUDO_HALF (also DOUBLE in 3-d);
//   - WINOGRAD_NONFUSED: 2-d, unit stride and dilation, 3x3 or 5x5, not DOUBLE;
//   - backward-filter ALGO_0 and ALGO_3: not TRUE_HALF; ALGO_3 also unit dilation;
//   - 8-bit data: forward implicit GEMMs only, channels-last images and filters, input
//     channels a multiple of 4, INT32 compute.
// An id outside its direction's enum is NOT_SUPPORTED, as in cuDNN. All supported ids run
// on the implementations listed in src/cpu/conv_common.hpp.

namespace {

bool unit_stride_dilation(const ConvProblem& p) {
    for (int i = 0; i < 3; ++i)
        if (p.stride[i] != 1 || p.dil[i] != 1) return false;
    return true;
}

bool unit_dilation(const ConvProblem& p) { return p.dil[0] == 1 && p.dil[1] == 1 && p.dil[2] == 1; }

bool filter_larger_than_pad(const ConvProblem& p) {
    for (int i = 3 - p.nb_spatial; i < 3; ++i)
        if (p.filt[i] <= p.pad[i]) return false;
    return true;
}

bool fft_small_enough(const ConvProblem& p) {
    for (int i = 1; i < 3; ++i)
        if (p.in[i] + 2 * p.pad[i] > 256) return false;
    return true;
}

bool nchw_family(const ConvProblem& p) {
    return !p.w_nhwc && p.w.vect == 1 && p.x.spatial_packed() && p.y.spatial_packed() &&
           (p.c == 1 || p.x.strides[1] != 1) && (p.k == 1 || p.y.strides[1] != 1);
}

bool filter_is(const ConvProblem& p, int64_t r) { return p.filt[1] == r && p.filt[2] == r; }

}  // namespace

Status conv_algo_supported(const ConvProblem& p, int algo) {
    const char* kname = p.kind == ConvKind::fwd ? "cudnnConvolutionFwdAlgo_t"
                        : p.kind == ConvKind::bwd_data ? "cudnnConvolutionBwdDataAlgo_t"
                                                        : "cudnnConvolutionBwdFilterAlgo_t";
    ODNN_REQUIRE_SUPPORTED(algo >= 0 && algo < conv_algo_count(p.kind), "algo %d is not a %s value", algo, kname);
    const char* aname = conv_algo_name(p.kind, algo);
    const cudnnDataType_t dt = p.x.dtype;
    const bool two_d = p.nb_spatial == 2;
    const bool true_half = dt == CUDNN_DATA_HALF && p.compute == CUDNN_DATA_HALF;
    const bool nchw = nchw_family(p);
    const char* config = conv_config_name(p);

    if (!is_float_type(dt)) {
        ODNN_REQUIRE_SUPPORTED(p.kind == ConvKind::fwd && (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
                                                           algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM),
                               "algo %s does not support %s (only IMPLICIT_GEMM and IMPLICIT_PRECOMP_GEMM do)",
                               aname, config);
        if (p.x.vect == 1) {
            ODNN_REQUIRE_SUPPORTED(p.w_nhwc && (p.c == 1 || p.x.strides[1] == 1),
                                   "%s needs channels-last (NHWC) images and filters", config);
            ODNN_REQUIRE_SUPPORTED(p.c % 4 == 0, "%s needs input channels (%lld) that are a multiple of 4", config,
                                   static_cast<long long>(p.c));
        }
        return Status::ok();
    }

    auto need = [&](bool cond, const char* what) -> Status {
        if (cond) return Status::ok();
        return make_status(CUDNN_STATUS_NOT_SUPPORTED, "algo %s does not support this %s %d-d problem: it needs %s",
                           aname, config, p.nb_spatial, what);
    };
    auto implicit = [&]() -> Status {
        return need(two_d || nchw, "NCHW data in 3-d (channels-last 3-d runs on IMPLICIT_PRECOMP_GEMM / ALGO_1)");
    };
    auto fft = [&]() -> Status {
        ODNN_RETURN_IF_ERROR(need(two_d, "2-d data"));
        ODNN_RETURN_IF_ERROR(need(dt == CUDNN_DATA_FLOAT || (dt == CUDNN_DATA_HALF && !true_half),
                                  "FLOAT or PSEUDO_HALF data"));
        ODNN_RETURN_IF_ERROR(need(nchw, "NCHW images and filters"));
        ODNN_RETURN_IF_ERROR(need(unit_stride_dilation(p), "unit strides and dilations"));
        ODNN_RETURN_IF_ERROR(need(filter_larger_than_pad(p), "each filter dim larger than its padding"));
        return need(fft_small_enough(p), "input + 2 x padding <= 256");
    };
    auto fft_tiling = [&]() -> Status {
        ODNN_RETURN_IF_ERROR(need(dt == CUDNN_DATA_FLOAT || (dt == CUDNN_DATA_HALF && !true_half) ||
                                      (dt == CUDNN_DATA_DOUBLE && !two_d),
                                  "FLOAT or PSEUDO_HALF data (DOUBLE in 3-d)"));
        ODNN_RETURN_IF_ERROR(need(nchw, "NCHW images and filters"));
        ODNN_RETURN_IF_ERROR(need(unit_dilation(p), "unit dilations"));
        ODNN_RETURN_IF_ERROR(need(filter_larger_than_pad(p), "each filter dim larger than its padding"));
        return need(!two_d || (p.filt[1] <= 32 && p.filt[2] <= 32), "filters of at most 32x32");
    };
    auto winograd_nonfused = [&]() -> Status {
        ODNN_RETURN_IF_ERROR(need(two_d, "2-d data"));
        ODNN_RETURN_IF_ERROR(need(dt != CUDNN_DATA_DOUBLE, "FLOAT, HALF or BFLOAT16 data"));
        ODNN_RETURN_IF_ERROR(need(nchw, "NCHW images and filters"));
        ODNN_RETURN_IF_ERROR(need(unit_stride_dilation(p), "unit strides and dilations"));
        return need(filter_is(p, 3) || filter_is(p, 5), "3x3 or 5x5 filters");
    };
    auto never = [&]() -> Status {
        return make_status(CUDNN_STATUS_NOT_SUPPORTED, "%s algo %s is not implemented (as in cuDNN 9.19)",
                           conv_kind_name(p.kind), aname);
    };

    switch (p.kind) {
        case ConvKind::fwd:
            switch (algo) {
                case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return implicit();
                case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return Status::ok();
                case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
                    ODNN_RETURN_IF_ERROR(need(two_d && nchw, "2-d NCHW images and filters"));
                    return need(!true_half, "a configuration other than TRUE_HALF");
                case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return fft();
                case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return fft_tiling();
                case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return winograd_nonfused();
                default: return never();  // DIRECT, WINOGRAD
            }
        case ConvKind::bwd_data:
            switch (algo) {
                case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return implicit();
                case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return Status::ok();
                case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return fft();
                case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return fft_tiling();
                case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return winograd_nonfused();
                default: return never();  // WINOGRAD
            }
        case ConvKind::bwd_filter:
            switch (algo) {
                case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0:
                    ODNN_RETURN_IF_ERROR(implicit());
                    return need(!true_half, "a configuration other than TRUE_HALF");
                case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return Status::ok();
                case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return fft();
                case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3:
                    ODNN_RETURN_IF_ERROR(need(nchw, "NCHW images and filters"));
                    ODNN_RETURN_IF_ERROR(need(unit_dilation(p), "unit dilations"));
                    return need(!true_half, "a configuration other than TRUE_HALF");
                case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return winograd_nonfused();
                default: return never();  // WINOGRAD, FFT_TILING
            }
    }
    return never();
}

// ---------------------------------------------------------------------------
// Selection, workspace, execution

StatusOr<const Impl<ConvProblem>*> conv_select(const Handle& h, const ConvProblem& p, size_t workspace_limit) {
    ODNN_RETURN_IF_ERROR(conv_algo_supported(p, p.algo));
    return ImplRegistry<ConvProblem>::get().select(h.backend, p, workspace_limit);
}

StatusOr<size_t> conv_workspace_size(const Handle& h, const ConvProblem& p) {
    auto impl = conv_select(h, p);
    if (!impl.is_ok()) return impl.status();
    return impl.value()->workspace_size(p);
}

Status conv_execute(const Handle& h, const ConvProblem& p) {
    log_replay(h, p);
    // The fused forward's workspace is what cudnnGetConvolutionForwardWorkspaceSize gives
    // for the plain forward, which knows no epilogue: where the first implementation's fused
    // path needs more, the first one that fits runs it (none fitting: the error below).
    auto selected = conv_select(h, p, p.epi.enabled ? p.workspace_bytes : SIZE_MAX);
    if (p.epi.enabled && !selected.is_ok()) selected = conv_select(h, p);
    if (!selected.is_ok()) return selected.status();
    const Impl<ConvProblem>* impl = selected.value();
    const size_t need = impl->workspace_size(p);
    ODNN_REQUIRE_PARAM(p.workspace_bytes >= need,
                       "workSpaceSizeInBytes = %zu is less than the %zu bytes %s algo %s needs (ask "
                       "cudnnGetConvolution*WorkspaceSize)",
                       p.workspace_bytes, need, conv_kind_name(p.kind), conv_algo_name(p.kind, p.algo));
    ODNN_REQUIRE_PARAM(need == 0 || p.workspace != nullptr, "workSpace is NULL but algo %s needs %zu bytes",
                       conv_algo_name(p.kind, p.algo), need);
    if (dispatch_verbose())
        std::fprintf(stderr, "odnn dispatch: %s %s algo %s runs on %s\n", ConvProblem::kOpName,
                     conv_kind_name(p.kind), conv_algo_name(p.kind, p.algo), impl->name());
    return impl->execute(h, p);
}

// ---------------------------------------------------------------------------
// Algorithm ranking

namespace {

// Heuristic preference per direction: the GEMM-based ids first (our fastest paths),
// the zero-workspace direct ids last.
const int kFwdOrder[] = {1, 2, 7, 6, 5, 4, 0, 3};
const int kBwdDataOrder[] = {1, 5, 4, 3, 2, 0};
const int kBwdFilterOrder[] = {1, 3, 5, 6, 2, 0, 4};

std::vector<int> preference(ConvKind k) {
    switch (k) {
        case ConvKind::fwd: return std::vector<int>(std::begin(kFwdOrder), std::end(kFwdOrder));
        case ConvKind::bwd_data: return std::vector<int>(std::begin(kBwdDataOrder), std::end(kBwdDataOrder));
        case ConvKind::bwd_filter: return std::vector<int>(std::begin(kBwdFilterOrder), std::end(kBwdFilterOrder));
    }
    return {};
}

// Every implementation is deterministic. One that computes with FMAs in fp32 or wider
// (no down-conversion, no tensor cores) reports, as cuDNN does for such algorithms, the
// descriptor's math type, except that a request for tensor-op math reports
// CUDNN_FMA_MATH; a tensor-core kernel reports CUDNN_TENSOR_OP_MATH.
ConvAlgoPerf base_perf(const ConvProblem& p, int algo, const Impl<ConvProblem>* impl) {
    ConvAlgoPerf r;
    r.algo = algo;
    r.determinism = CUDNN_DETERMINISTIC;
    r.math = p.math == CUDNN_DEFAULT_MATH ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    if (impl != nullptr) {
        ConvProblem q = p;
        q.algo = algo;
        if (impl->tensor_cores(q)) r.math = CUDNN_TENSOR_OP_MATH;
    }
    return r;
}

// Successes first (fastest first after a search); failures after them, in id order
// after a search, as cuDNN lists them.
void sort_results(std::vector<ConvAlgoPerf>& v, bool by_time) {
    std::stable_sort(v.begin(), v.end(), [&](const ConvAlgoPerf& a, const ConvAlgoPerf& b) {
        const bool oa = a.status == CUDNN_STATUS_SUCCESS, ob = b.status == CUDNN_STATUS_SUCCESS;
        if (oa != ob) return oa;
        if (by_time && oa) return a.time_ms < b.time_ms;
        if (by_time && !oa) return a.algo < b.algo;
        return false;
    });
}

}  // namespace

void conv_get_algorithms(const Handle& h, const ConvProblem& p, ConvAlgoPerf* out, int count) {
    std::vector<ConvAlgoPerf> v;
    for (int algo : preference(p.kind)) {
        ConvProblem q = p;
        q.algo = algo;
        auto impl = conv_select(h, q);
        ConvAlgoPerf r = base_perf(p, algo, impl.is_ok() ? impl.value() : nullptr);
        if (impl.is_ok()) {
            r.status = CUDNN_STATUS_SUCCESS;
            r.memory = impl.value()->workspace_size(q);
        } else {
            r.status = impl.status().code();
        }
        v.push_back(r);
    }
    sort_results(v, false);
    for (int i = 0; i < count && i < static_cast<int>(v.size()); ++i) out[i] = v[static_cast<size_t>(i)];
}

Status conv_find_algorithms(const Handle& h, const ConvProblem& p, size_t workspace_limit, ConvAlgoPerf* out,
                            int count) {
    using clock = std::chrono::steady_clock;
    std::vector<ConvAlgoPerf> v;
    // Algorithms that share an implementation (and its workspace) run the same code:
    // it is timed once and the time reported for each of them.
    std::map<std::pair<const Impl<ConvProblem>*, size_t>, std::pair<cudnnStatus_t, float>> timed;
    for (int algo : preference(p.kind)) {
        ConvProblem q = p;
        q.algo = algo;
        auto impl = conv_select(h, q);
        ConvAlgoPerf r = base_perf(p, algo, impl.is_ok() ? impl.value() : nullptr);
        if (!impl.is_ok()) {
            r.status = impl.status().code();
            v.push_back(r);
            continue;
        }
        const size_t need = impl.value()->workspace_size(q);
        r.memory = need;
        if (need > workspace_limit) {
            // What cuDNN 9.19's FindEx reports for an algorithm the given workspace cannot
            // hold (measured; its documentation says ALLOC_FAILED).
            r.status = CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE;
            v.push_back(r);
            continue;
        }
        const auto key = std::make_pair(impl.value(), need);
        auto it = timed.find(key);
        if (it == timed.end()) {
            BackendBuffer scratch;
            if (q.workspace == nullptr || q.workspace_bytes < need) {
                Status s = scratch.allocate(h, need);
                if (!s.is_ok()) {
                    r.status = s.code();
                    v.push_back(r);
                    continue;
                }
                q.workspace = scratch.get();
                q.workspace_bytes = need;
            }
            // One run to warm up (and to learn the status), then repeat while cheap.
            Status s = conv_execute(h, q);
            float best = -1.0f;
            if (s.is_ok()) {
                double total = 0.0;
                int reps = 0;
                while (reps < 3 && (reps == 0 || total < 0.02)) {
                    const auto t0 = clock::now();
                    s = conv_execute(h, q);
                    if (s.is_ok()) s = synchronize(h);
                    const double dt = std::chrono::duration<double>(clock::now() - t0).count();
                    if (!s.is_ok()) break;
                    total += dt;
                    ++reps;
                    const float ms = static_cast<float>(dt * 1e3);
                    if (best < 0 || ms < best) best = ms;
                }
            }
            it = timed.emplace(key, std::make_pair(s.is_ok() ? CUDNN_STATUS_SUCCESS : s.code(), best)).first;
        }
        r.status = it->second.first;
        r.time_ms = r.status == CUDNN_STATUS_SUCCESS ? it->second.second : -1.0f;
        v.push_back(r);
    }
    sort_results(v, true);
    for (int i = 0; i < count && i < static_cast<int>(v.size()); ++i) out[i] = v[static_cast<size_t>(i)];
    return Status::ok();
}

// ---------------------------------------------------------------------------
// Backward bias

Status make_bias_grad_problem(const TensorDesc& dy, const TensorDesc& db, ConvBiasGradProblem* p) {
    ODNN_REQUIRE_PARAM(dy.is_set(), "dyDesc has not been set");
    ODNN_REQUIRE_PARAM(db.is_set(), "dbDesc has not been set");
    ODNN_REQUIRE_SUPPORTED(dy.nb_dims == 4 || dy.nb_dims == 5, "dyDesc has %d dims; 4 or 5 are supported",
                           dy.nb_dims);
    ODNN_REQUIRE_PARAM(db.nb_dims == dy.nb_dims, "dbDesc has %d dims but dyDesc has %d", db.nb_dims, dy.nb_dims);
    for (int i = 0; i < db.nb_dims; ++i) {
        const int64_t want = i == 1 ? dy.dims[1] : 1;
        ODNN_REQUIRE_PARAM(db.dims[i] == want, "dbDesc dim %d is %lld; it must be %lld (db is 1 x C x 1 x 1)", i,
                           static_cast<long long>(db.dims[i]), static_cast<long long>(want));
    }
    ODNN_REQUIRE_PARAM(dy.dtype == db.dtype, "dyDesc (%s) and dbDesc (%s) must have the same data type",
                       dtype_name(dy.dtype), dtype_name(db.dtype));
    ODNN_REQUIRE_SUPPORTED(is_float_type(dy.dtype), "cudnnConvolutionBackwardBias does not support data type %s",
                           dtype_name(dy.dtype));
    ConvBiasGradProblem t;
    ODNN_RETURN_IF_ERROR(to_conv_tensor(dy, "dyDesc", &t.dy));
    ODNN_RETURN_IF_ERROR(to_conv_tensor(db, "dbDesc", &t.db));
    *p = t;
    return Status::ok();
}

}  // namespace odnn::core
