// Pooling (cudnnPoolingForward / Backward), cross-channel LRN
// (cudnnLRNCrossChannelForward / Backward) and divisive normalization
// (cudnnDivisiveNormalizationForward / Backward): the problems both backends run,
// window geometry shared by host and device code, and the rules that build them.
//
// Pooling semantics (both backends), per output position o and spatial dim d the
// window starts at o * stride - pad and spans `window` inputs; positions outside the
// input are padding:
//   MAX / MAX_DETERMINISTIC  the largest input in the window; ties go to the first in
//       window order (row-major). NaN: with CUDNN_PROPAGATE_NAN the first NaN wins;
//       otherwise NaNs are skipped, and a window of NaNs only gives NaN. Backward
//       routes dy to that element (deterministically, in both modes).
//   AVERAGE_COUNT_INCLUDE_PADDING  sum / (window positions inside the padded input,
//       i.e. [-pad, in + pad)): the full window unless y is larger than the floor rule
//       gives (ceil-mode callers).
//   AVERAGE_COUNT_EXCLUDE_PADDING  sum / (window positions inside the input).
//   A window with no input position gives 0 and routes no gradient.
//   y may have any spatial size (the floor rule is cudnnGetPoolingNdForwardOutputDim's).
//
// LRN (cross-channel, n = lrnN, window [c - floor((n-1)/2), c + n - 1 - floor((n-1)/2)]
// clipped to the channels):  s_c = k + alpha / n * sum_window x^2,  y_c = x_c * s_c^-beta.
// Divisive normalization (PRECOMPUTED_MEANS): u = x - means (means NULL: 0), the same
// window over every spatial dim (zero outside), s = k + alpha / n^dims * sum_window u^2,
// y = u * s^-beta; backward gives dx and dMeans = -dx (before alpha / beta).
#pragma once

#include <cstdint>

#include "core/blend.hpp"
#include "core/handle.hpp"
#include "core/impl_registry.hpp"
#include "core/ops_desc.hpp"
#include "core/tensor_desc.hpp"

namespace odnn::core {

// ---- Pooling ----

struct PoolGeom {
    int nsp = 0;  // spatial dims
    int mode = CUDNN_POOLING_MAX;
    bool propagate_nan = false;
    int64_t n = 0, c = 0;
    int64_t in[kMaxPoolingDims] = {};
    int64_t out[kMaxPoolingDims] = {};
    int win[kMaxPoolingDims] = {};
    int pad[kMaxPoolingDims] = {};
    int stride[kMaxPoolingDims] = {};

    ODNN_HD bool is_max() const { return mode == CUDNN_POOLING_MAX || mode == CUDNN_POOLING_MAX_DETERMINISTIC; }
    ODNN_HD int64_t window_size() const {
        int64_t w = 1;
        for (int d = 0; d < nsp; ++d) w *= win[d];
        return w;
    }
    // Window of output position o along dim d, clipped to the input: [*lo, *hi).
    ODNN_HD void window(int d, int64_t o, int64_t* lo, int64_t* hi) const {
        const int64_t s = o * stride[d] - pad[d];
        const int64_t e = s + win[d];
        *lo = s < 0 ? 0 : s;
        *hi = e > in[d] ? in[d] : e;
    }
    // Positions of the window along dim d inside the padded input [-pad, in + pad).
    ODNN_HD int64_t padded_extent(int d, int64_t o) const {
        const int64_t s = o * stride[d] - pad[d];
        int64_t e = s + win[d];
        const int64_t lo = s < -pad[d] ? -pad[d] : s;
        if (e > in[d] + pad[d]) e = in[d] + pad[d];
        return e > lo ? e - lo : 0;
    }
};

// floor(a / b) and ceil(a / b) for b > 0 and any sign of a.
ODNN_HD int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
ODNN_HD int64_t ceil_div_signed(int64_t a, int64_t b) { return -floor_div(-a, b); }

// Output positions along dim d whose window contains input position i: [*lo, *hi].
ODNN_HD void pool_outputs_covering(const PoolGeom& g, int d, int64_t i, int64_t* lo, int64_t* hi) {
    int64_t l = ceil_div_signed(i + g.pad[d] - g.win[d] + 1, g.stride[d]);
    int64_t h = floor_div(i + g.pad[d], g.stride[d]);
    if (l < 0) l = 0;
    if (h > g.out[d] - 1) h = g.out[d] - 1;
    *lo = l;
    *hi = h;
}

struct PoolingFwdProblem {
    static constexpr const char* kOpName = "pooling forward";
    PoolGeom g;
    TensorDesc x, y;
    const void* x_data = nullptr;
    void* y_data = nullptr;
    Scale out;
};

struct PoolingBwdProblem {
    static constexpr const char* kOpName = "pooling backward";
    PoolGeom g;
    TensorDesc y, dy, x, dx;
    const void* y_data = nullptr;
    const void* dy_data = nullptr;
    const void* x_data = nullptr;
    void* dx_data = nullptr;
    Scale out;
};

// Validate (descriptors copied into the problem by the API layer), fill the geometry, dispatch.
Status pooling_forward(const Handle& h, const PoolingDesc& pool, PoolingFwdProblem& p);
Status pooling_backward(const Handle& h, const PoolingDesc& pool, PoolingBwdProblem& p);

// ---- LRN and divisive normalization ----

// The window of the LRN (over channels) and of divisive normalization (over each
// spatial dim) around position i: [i - behind, i + ahead].
struct LrnWindow {
    int behind = 2, ahead = 2;
    ODNN_HD explicit LrnWindow(unsigned n = 5) : behind(static_cast<int>((n - 1) / 2)), ahead(static_cast<int>(n - 1 - (n - 1) / 2)) {}
};

struct LrnProblem {
    static constexpr const char* kOpName = "LRN cross-channel";
    bool backward = false;
    LrnDesc lrn;
    TensorDesc x, y, dy, dx;  // forward: x -> y; backward: y, dy, x -> dx
    const void* x_data = nullptr;
    const void* y_data = nullptr;
    const void* dy_data = nullptr;
    void* out_data = nullptr;  // y (forward) or dx (backward)
    Scale out;
};

struct DivNormProblem {
    static constexpr const char* kOpName = "divisive normalization";
    bool backward = false;
    LrnDesc lrn;
    TensorDesc x, out;  // x describes x, means, dy; out describes y (forward) or dx and dMeans (backward)
    const void* x_data = nullptr;
    const void* means = nullptr;  // NULL: zero
    const void* dy_data = nullptr;
    void* out_data = nullptr;     // y or dx
    void* dmeans = nullptr;       // backward, optional
    Scale out_scale;
};

Status lrn_cross_channel(const Handle& h, LrnProblem& p);
Status divisive_normalization(const Handle& h, DivNormProblem& p);

}  // namespace odnn::core
