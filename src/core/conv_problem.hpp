// The convolution family as backend-independent problems: forward, backward data,
// backward filter (each with its algorithm id), the fused bias + activation epilogue
// of cudnnConvolutionBiasActivationForward, backward bias and im2col. The API layer
// (legacy descriptors today, backend graphs later) builds a ConvProblem; the handle's
// backend runs the first registered implementation that accepts it.
//
// Shapes are canonical: every problem is 3-D (D, H, W); a 2-D convolution has D = 1
// with a unit filter, stride, dilation and zero padding there, a 1-D one also H = 1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/conv_desc.hpp"
#include "core/handle.hpp"
#include "core/impl_registry.hpp"
#include "core/status.hpp"
#include "core/tensor_desc.hpp"

namespace odnn::core {

enum class ConvKind { fwd, bwd_data, bwd_filter };
const char* conv_kind_name(ConvKind k);

// Number of algorithm ids per direction (cudnnConvolution*Algo_t COUNT values).
int conv_algo_count(ConvKind k);
const char* conv_algo_name(ConvKind k, int algo);

// One tensor of a convolution, canonical N, C, D, H, W (filters: K, C/groups, T, R, S).
// Strides count scalar elements. With vect > 1 (NCHW_VECT_C) the strides count vectors
// of `vect` channels, and scalar (n, c, ...) sits at lane c % vect of vector c / vect.
struct ConvTensor {
    cudnnDataType_t dtype = CUDNN_DATA_FLOAT;  // scalar type (INT8 for INT8x4 / INT8x32)
    int64_t dims[5] = {1, 1, 1, 1, 1};
    int64_t strides[5] = {1, 1, 1, 1, 1};
    int vect = 1;

    int64_t offset(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
        if (vect == 1) return n * strides[0] + c * strides[1] + d * strides[2] + h * strides[3] + w * strides[4];
        return (n * strides[0] + (c / vect) * strides[1] + d * strides[2] + h * strides[3] + w * strides[4]) * vect +
               c % vect;
    }
    int64_t num_elements() const { return dims[0] * dims[1] * dims[2] * dims[3] * dims[4]; }
    // Scalars from the first addressed to one past the last.
    int64_t span() const;
    // Dense channel-innermost (NHWC-like) or spatial-innermost (NCHW-like) packing checks.
    bool spatial_packed() const;  // W stride 1, H stride W, D stride H*W
    bool pixels_uniform() const;  // pixel (n, d, h, w) at p * strides[4] for p counted N-D-H-W
};

// Fused epilogue of cudnnConvolutionBiasActivationForward:
//   y = act(alpha * conv(x, w) + alpha2 * z + bias)
struct ConvEpilogue {
    bool enabled = false;
    const void* z = nullptr;
    ConvTensor z_t;           // same dims as y
    double alpha2 = 0.0;
    const void* bias = nullptr;
    ConvTensor bias_t;        // 1 x K x 1 x 1 x 1
    bool relu = false;        // RELU, else IDENTITY
    bool propagate_nan = false;
};

struct ConvProblem {
    static constexpr const char* kOpName = "convolution";

    ConvKind kind = ConvKind::fwd;
    int algo = 0;
    int nb_spatial = 2;  // as the descriptors say (1..3)
    // Geometry: c and k are total channels; each group maps c/groups to k/groups.
    int64_t n = 1, c = 1, k = 1, groups = 1;
    int64_t in[3] = {1, 1, 1};    // x spatial D, H, W
    int64_t out[3] = {1, 1, 1};   // y spatial
    int64_t filt[3] = {1, 1, 1};  // filter T, R, S
    int64_t pad[3] = {0, 0, 0};
    int64_t stride[3] = {1, 1, 1};
    int64_t dil[3] = {1, 1, 1};
    bool flip = true;  // CUDNN_CONVOLUTION: the filter is applied spatially flipped

    // x / dx, w / dw, y / dy. Which one is written depends on `kind`.
    ConvTensor x, w, y;
    bool w_nhwc = false;  // filter stored K, T, R, S, C (filter format NHWC)
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;

    // Per call.
    void* x_data = nullptr;
    void* w_data = nullptr;
    void* y_data = nullptr;
    double alpha = 1.0, beta = 0.0;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
    ConvEpilogue epi;

    int64_t cg() const { return c / groups; }
    int64_t kg() const { return k / groups; }
    int64_t in_pixels() const { return in[0] * in[1] * in[2]; }
    int64_t out_pixels() const { return out[0] * out[1] * out[2]; }
    int64_t filt_pixels() const { return filt[0] * filt[1] * filt[2]; }
    // The reduction length of one output element of this direction.
    int64_t reduction_length() const;
    bool depthwise() const { return groups == c && groups > 1; }
    // 2 * MACs of the direction, for reports.
    double flops() const;
    const void* output_data() const;
};

// The data-type configuration a problem runs in (cuDNN's *_CONFIG names).
const char* conv_config_name(const ConvProblem& p);

// Builds a problem from legacy descriptors: checks ranks, shapes, data types and groups
// as cuDNN does (BAD_PARAM for inconsistent descriptors, NOT_SUPPORTED for consistent
// ones no implementation handles). Pointers, scalars and workspace are set by the caller.
Status make_conv_problem(ConvKind kind, const TensorDesc& x, const FilterDesc& w, const ConvDesc& cd,
                         const TensorDesc& y, ConvProblem* p);

// Adds cudnnConvolutionBiasActivationForward's epilogue to a forward problem whose algo
// is set: z has y's shape and type, bias is 1 x K x 1 x 1 (y's type or FLOAT), the
// activation is RELU or IDENTITY (with any algorithm, as cuDNN 9.19 on Hopper).
Status set_conv_epilogue(ConvProblem* p, const TensorDesc& y, const TensorDesc& z, const void* z_data, double alpha2,
                         const TensorDesc& bias, const void* bias_data, cudnnActivationMode_t mode,
                         cudnnNanPropagation_t nan_opt);

// Whether cuDNN offers `algo` for this problem (its documented support tables); the
// reason is in the Status otherwise. Does not look at the implementations.
Status conv_algo_supported(const ConvProblem& p, int algo);

// The implementation that runs `p` (with p.algo) on `h`'s backend, and its workspace.
// (workspace_limit: as ImplRegistry::select)
StatusOr<const Impl<ConvProblem>*> conv_select(const Handle& h, const ConvProblem& p,
                                               size_t workspace_limit = SIZE_MAX);
StatusOr<size_t> conv_workspace_size(const Handle& h, const ConvProblem& p);

// Runs the problem: checks the algorithm, the workspace (BAD_PARAM when the caller gives
// less than conv_workspace_size) and dispatches. Scalars are already decoded.
Status conv_execute(const Handle& h, const ConvProblem& p);

// Algorithm ranking for Get_v7 and Find.
struct ConvAlgoPerf {
    int algo = 0;
    cudnnStatus_t status = CUDNN_STATUS_NOT_SUPPORTED;
    float time_ms = -1.0f;
    size_t memory = 0;
    cudnnDeterminism_t determinism = CUDNN_DETERMINISTIC;
    cudnnMathType_t math = CUDNN_FMA_MATH;
};

// Heuristic order (no execution): supported algorithms first, best expected first.
void conv_get_algorithms(const Handle& h, const ConvProblem& p, ConvAlgoPerf* out, int count);
// Runs and times every algorithm. With `workspace` NULL and `workspace_limit` = SIZE_MAX the
// workspace is allocated per algorithm; otherwise an algorithm needing more than the limit
// reports INTERNAL_ERROR_UNEXPECTED_VALUE (cuDNN 9.19's answer). p's data pointers must
// be valid; the output is overwritten.
Status conv_find_algorithms(const Handle& h, const ConvProblem& p, size_t workspace_limit, ConvAlgoPerf* out,
                            int count);

// ---- cudnnConvolutionBackwardBias: db = alpha * sum over N and spatial of dy + beta * db ----
struct ConvBiasGradProblem {
    static constexpr const char* kOpName = "cudnnConvolutionBackwardBias";
    ConvTensor dy;  // N, K, D, H, W
    ConvTensor db;  // strides[1] addresses the K entries
    const void* dy_data = nullptr;
    void* db_data = nullptr;
    double alpha = 1.0, beta = 0.0;
};
Status make_bias_grad_problem(const TensorDesc& dy, const TensorDesc& db, ConvBiasGradProblem* p);

// ---- cudnnIm2Col: the GEMM operand of a forward convolution as cuDNN lays it out: a
// column-major matrix of N * out-pixels rows and C * filter-taps columns, i.e. element
// (tap (c, t, r, s), pixel (n, od, oh, ow)) at tap * N * P + n * P + pixel; the data type
// is x's; CUDNN_CONVOLUTION flips the taps. ----
struct Im2ColProblem {
    static constexpr const char* kOpName = "cudnnIm2Col";
    ConvProblem conv;  // geometry and x; y is implied
    void* col = nullptr;
};

// Scalars (alpha, beta) are double for DOUBLE data and float otherwise (cuDNN's rule).
double decode_scalar(const void* p, cudnnDataType_t data_type);

}  // namespace odnn::core
