// Convolutions as GEMMs over OpenBLAS (sgemm / dgemm), im2col / col2im around them,
// OpenMP for the data movement. Two orientations, picked from the layout of the data:
//
//   channel-major (NCHW-like images)     pixel-major (NHWC-like images)
//   fwd   Y[k, p]  = W[k, r] col[r, p]    Y[p, k]  = col[p, r] W[k, r]^T
//   dgrad col[r, p] = W[k, r]^T dY[k, p]  col[p, r] = dY[p, k] W[k, r]   (then a gather)
//   wgrad dW[k, r] += dY[k, p] col[r, p]^T  dW[k, r] += dY[p, k]^T col[p, r]
//
// r runs over (c, t, r, s) channel-major and (t, r, s, c) pixel-major, so NCHW filters
// are used in place by the first and NHWC filters by the second. Pixels p are processed
// in chunks that bound the column buffer; small images are batched so that GEMMs stay
// wide. Where a tensor already is the GEMM operand (1x1 unit-stride convolutions, fp32
// data in the matching layout) it is used in place, and the GEMM writes the output in
// place with alpha / beta when the output layout allows. Half and bfloat16 data are
// converted to fp32 on the way in and rounded once on the way out.
//
// Every workspace buffer is sized by plan(), a pure function of the problem: the size
// reported by workspace_size() is exactly what execute() uses. The col2im of backward
// data is a gather (each dx element summed by one thread): results are deterministic.
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/conv_problem.hpp"
#include "core/dtype.hpp"
#include "core/elem_access.hpp"
#include "cpu/conv_common.hpp"

namespace odnn::cpu {

using core::ConvKind;
using core::ConvProblem;
using core::ConvTensor;
using core::Status;

namespace {

// Set per call (loops_threaded_around_blas) and read by the OpenMP `if` clauses below.
thread_local bool threaded = true;

constexpr int64_t kColBytes = int64_t{1} << 20;  // soft cap of the column buffer
constexpr int64_t kMinWidth = 256;               // GEMMs over fewer pixels are inefficient

inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                beta, c, static_cast<int>(ldc));
}

inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                 const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                beta, c, static_cast<int>(ldc));
}

bool channels_last(const ConvTensor& t) { return t.dims[1] > 1 && t.strides[1] == 1; }

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// What execute() does for a problem, and the workspace it needs.
struct Plan {
    bool dbl = false;        // compute type double (else float)
    bool pm = false;         // pixel-major orientation
    bool unit = false;       // 1x1 filter, unit stride, no padding
    bool w_native = false;   // the filter is the GEMM operand (wgrad: accumulator) in place
    bool x_operand = false;  // x (fwd / wgrad) is the GEMM operand in place
    bool dy_operand = false; // dy (dgrad / wgrad) is the GEMM operand in place
    bool out_direct = false; // the GEMM writes the output tensor in place
    int64_t chunk = 0;       // pixels per chunk (fwd, wgrad, pixel-major dgrad: whole images)
    int64_t imgs = 1;        // channel-major: whole images per chunk (1: chunks inside an image)
    int64_t cc = 0;          // channel-major dgrad: input channels per chunk
    int64_t w_elems = 0, col_elems = 0, io_elems = 0;

    size_t bytes() const {
        const int64_t sz = dbl ? 8 : 4;
        return static_cast<size_t>(round_up(w_elems * sz, 64) + round_up(col_elems * sz, 64) +
                                   round_up(io_elems * sz, 64));
    }
};

cudnnDataType_t compute_dtype(const Plan& pl) { return pl.dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

Plan plan(const ConvProblem& p) {
    Plan pl;
    pl.dbl = p.x.dtype == CUDNN_DATA_DOUBLE;
    const cudnnDataType_t tdt = compute_dtype(pl);
    const int64_t sz = pl.dbl ? 8 : 4;
    const int64_t taps = p.filt_pixels(), kr = p.cg() * taps;
    const int64_t op = p.out_pixels(), ip = p.in_pixels(), np = p.n * op;
    pl.unit = taps == 1;
    for (int i = 0; i < 3; ++i) pl.unit = pl.unit && p.stride[i] == 1 && p.pad[i] == 0;
    const bool x_t = p.x.dtype == tdt, y_t = p.y.dtype == tdt, w_t = p.w.dtype == tdt;
    const int64_t col_cap = std::max<int64_t>(1, kColBytes / sz);

    switch (p.kind) {
        case ConvKind::fwd:
        case ConvKind::bwd_filter: {
            pl.pm = channels_last(p.x);
            pl.w_native = w_t && (taps == 1 || pl.pm == p.w_nhwc);
            if (pl.pm) {
                pl.x_operand = pl.unit && x_t && p.x.strides[1] == 1 && p.x.pixels_uniform() &&
                               p.x.strides[4] >= p.c;
                if (p.kind == ConvKind::fwd)
                    pl.out_direct = y_t && p.y.strides[1] == 1 && p.y.pixels_uniform() && p.y.strides[4] >= p.k;
                else
                    pl.dy_operand = y_t && p.y.strides[1] == 1 && p.y.pixels_uniform() && p.y.strides[4] >= p.k;
                const bool y_in_place = p.kind == ConvKind::fwd ? pl.out_direct : pl.dy_operand;
                int64_t per_px = (pl.x_operand ? 0 : kr) + (y_in_place ? 0 : (p.kind == ConvKind::fwd ? p.kg() : p.k));
                pl.chunk = per_px == 0 ? np : std::min(np, std::max<int64_t>(kMinWidth, col_cap / per_px));
                pl.col_elems = pl.x_operand ? 0 : pl.chunk * kr;
                pl.io_elems = y_in_place ? 0 : pl.chunk * (p.kind == ConvKind::fwd ? p.kg() : p.k);
            } else {
                // GEMMs at least kMinWidth pixels wide, wider while the column buffer
                // stays within its cap; small images are batched.
                const int64_t width = std::max(kMinWidth, col_cap / kr);
                // A 1x1 convolution whose images are usable in place runs per image unless
                // the images are tiny: batching would cost a copy of x and of the output.
                const bool in_place = pl.unit && x_t && p.x.spatial_packed() && p.x.strides[1] >= op &&
                                      (p.kind == ConvKind::fwd ? y_t && p.y.spatial_packed() && p.y.strides[1] >= op
                                                               : y_t && p.y.spatial_packed() && p.y.strides[1] >= op);
                pl.imgs = op >= width || (in_place && op >= kMinWidth / 2)
                              ? 1
                              : std::min(p.n, std::max<int64_t>(1, width / op));
                const bool one_img = pl.imgs == 1;
                pl.x_operand = pl.unit && one_img && x_t && p.x.spatial_packed() && p.x.strides[1] >= op;
                const bool y_ok = one_img && y_t && p.y.spatial_packed() && p.y.strides[1] >= op;
                pl.chunk = one_img ? std::min(op, width) : pl.imgs * op;
                if (p.kind == ConvKind::fwd) pl.out_direct = y_ok;
                else pl.dy_operand = y_ok;
                pl.col_elems = pl.x_operand ? 0 : kr * pl.chunk;
                if (p.kind == ConvKind::fwd) pl.io_elems = pl.out_direct ? 0 : p.kg() * pl.chunk;
                else pl.io_elems = pl.dy_operand ? 0 : p.k * pl.chunk;
            }
            if (p.kind == ConvKind::fwd) {
                pl.w_elems = pl.w_native ? 0 : p.k * kr;
            } else {
                pl.out_direct = pl.w_native;  // accumulate into dw in place
                pl.w_elems = pl.w_native ? 0 : p.k * kr;
            }
            break;
        }
        case ConvKind::bwd_data: {
            pl.pm = channels_last(p.y);
            pl.w_native = w_t && (taps == 1 || pl.pm == p.w_nhwc);
            pl.w_elems = pl.w_native ? 0 : p.k * kr;
            if (pl.pm) {
                pl.dy_operand = y_t && p.y.strides[1] == 1 && p.y.pixels_uniform() && p.y.strides[4] >= p.k;
                if (pl.unit)
                    pl.out_direct = x_t && p.x.strides[1] == 1 && p.x.pixels_uniform() && p.x.strides[4] >= p.c;
                const int64_t per_img = (pl.out_direct ? 0 : op * kr) + (pl.dy_operand ? 0 : op * p.k);
                pl.imgs = per_img == 0 ? p.n
                                       : std::min(p.n, std::max<int64_t>((kMinWidth + op - 1) / op, col_cap / per_img));
                pl.chunk = pl.imgs * op;
                pl.col_elems = pl.out_direct ? 0 : pl.chunk * kr;
                pl.io_elems = pl.dy_operand ? 0 : pl.chunk * p.k;
            } else {
                // Whole images per chunk (the gather needs every tap of an input pixel),
                // batched while small; input channels chunked to bound the columns.
                pl.imgs = std::min(p.n, std::max<int64_t>(1, kMinWidth / op));
                pl.chunk = pl.imgs * op;
                pl.dy_operand = pl.imgs == 1 && y_t && p.y.spatial_packed() && p.y.strides[1] >= op;
                if (pl.unit) {
                    pl.out_direct = pl.imgs == 1 && x_t && p.x.spatial_packed() && p.x.strides[1] >= ip;
                    pl.cc = p.cg();
                } else {
                    pl.cc = std::min(p.cg(), std::max<int64_t>(1, col_cap / (taps * pl.chunk)));
                }
                pl.col_elems = pl.out_direct ? 0 : pl.cc * taps * pl.chunk;
                pl.io_elems = pl.dy_operand ? 0 : p.k * pl.chunk;
            }
            break;
        }
    }
    return pl;
}

struct Pix {
    int64_t n, d, h, w;
};
inline Pix pixel_of(const ConvTensor& t, int64_t q) {
    const int64_t hw = t.dims[3] * t.dims[4], dhw = t.dims[2] * hw;
    Pix r;
    r.n = q / dhw;
    const int64_t pix = q % dhw;
    r.d = pix / hw;
    r.h = pix / t.dims[4] % t.dims[3];
    r.w = pix % t.dims[4];
    return r;
}

// A (rows x len) channel-major block (row stride ld) into channels [c0, c0 + rows) and
// global pixels [q0, q0 + len) of tensor t.
template <class T>
void write_cm(const ConvProblem& p, void* base, const ConvTensor& t, int64_t c0, int64_t rows, int64_t q0,
              int64_t len, const T* blk, int64_t ld) {
    if (p.epi.enabled) {
#pragma omp parallel for schedule(static) if (threaded && rows * len > 16384)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < len; ++j) {
                const Pix x = pixel_of(t, q0 + j);
                blend_store(p, base, t, static_cast<double>(blk[r * ld + j]), x.n, c0 + r, x.d, x.h, x.w);
            }
        return;
    }
    with_storage(t.dtype, [&](auto tag) {
        using S = decltype(tag);
        S* out = static_cast<S*>(base);
        const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
#pragma omp parallel for schedule(static) if (threaded && rows * len > 16384)
        for (int64_t r = 0; r < rows; ++r) {
            int64_t j = 0;
            while (j < len) {
                const Pix x = pixel_of(t, q0 + j);
                const int64_t seg = std::min(t.dims[4] - x.w, len - j);
                store_run(out + t.offset(x.n, c0 + r, x.d, x.h, x.w), t.strides[4], blk + r * ld + j, seg, alpha,
                          beta);
                j += seg;
            }
        }
    });
}

// A (len x cols) pixel-major block into global pixels [q0, q0 + len), channels [c0, c0 + cols).
template <class T>
void write_pm(const ConvProblem& p, void* base, const ConvTensor& t, int64_t c0, int64_t cols, int64_t q0,
              int64_t len, const T* blk, int64_t ld) {
    if (p.epi.enabled) {
#pragma omp parallel for schedule(static) if (threaded && cols * len > 16384)
        for (int64_t j = 0; j < len; ++j) {
            const Pix x = pixel_of(t, q0 + j);
            for (int64_t c = 0; c < cols; ++c)
                blend_store(p, base, t, static_cast<double>(blk[j * ld + c]), x.n, c0 + c, x.d, x.h, x.w);
        }
        return;
    }
    with_storage(t.dtype, [&](auto tag) {
        using S = decltype(tag);
        S* out = static_cast<S*>(base);
        const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
#pragma omp parallel for schedule(static) if (threaded && cols * len > 16384)
        for (int64_t j = 0; j < len; ++j) {
            const Pix x = pixel_of(t, q0 + j);
            store_run(out + t.offset(x.n, c0, x.d, x.h, x.w), t.strides[1], blk + j * ld, cols, alpha, beta);
        }
    });
}

// After the GEMM wrote alpha * acc + beta' * y in place: the rest of the fused epilogue.
template <class T>
void epilogue_in_place(const ConvProblem& p, T* y, bool z_aliased, int64_t c0, int64_t rows, int64_t q0,
                       int64_t len, bool pm) {
    const ConvTensor& t = p.y;
    const int64_t total = rows * len;
#pragma omp parallel for schedule(static) if (threaded && total > 16384)
    for (int64_t i = 0; i < total; ++i) {
        const int64_t r = pm ? i % rows : i / len, j = pm ? i / rows : i % len;
        const Pix x = pixel_of(t, q0 + j);
        const int64_t off = t.offset(x.n, c0 + r, x.d, x.h, x.w);
        double v = static_cast<double>(y[off]);
        const core::ConvEpilogue& e = p.epi;
        if (!z_aliased && e.alpha2 != 0.0)
            v += e.alpha2 * core::load_elem(e.z, e.z_t.offset(x.n, c0 + r, x.d, x.h, x.w), e.z_t.dtype);
        v += core::load_elem(e.bias, e.bias_t.offset(0, c0 + r, 0, 0, 0), e.bias_t.dtype);
        if (e.relu && !(v > 0.0) && !(e.propagate_nan && std::isnan(v))) v = 0.0;
        y[off] = static_cast<T>(v);
    }
}

// ---------------------------------------------------------------------------
// Gathering operands.

// Spatial tap of filter position f along dim `dim` (CUDNN_CONVOLUTION flips the filter).
inline int64_t tap(const ConvProblem& p, int dim, int64_t f) { return p.flip ? p.filt[dim] - 1 - f : f; }

// col[row, j] (row = (c, t, r, s) of group g, j over global output pixels [q0, q0 + len)).
template <class S, class T>
void im2col_cm(const ConvProblem& p, const S* x, int64_t g, int64_t q0, int64_t len, T* col) {
    const int64_t taps = p.filt_pixels(), rows = p.cg() * taps;
    const int64_t ohw = p.out[1] * p.out[2], op = p.out[0] * ohw;
    const ConvTensor& xt = p.x;
#pragma omp parallel for schedule(static) if (threaded && rows * len > 32768)
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t cl = row / taps, f = row % taps;
        const int64_t t = tap(p, 0, f / (p.filt[1] * p.filt[2])), r = tap(p, 1, f / p.filt[2] % p.filt[1]),
                      s = tap(p, 2, f % p.filt[2]);
        const S* src_c = x + (g * p.cg() + cl) * xt.strides[1];
        T* dst = col + row * len;
        const int64_t ws = xt.strides[4] * p.stride[2];
        int64_t j = 0;
        while (j < len) {
            const int64_t q = q0 + j, n = q / op, pix = q % op;
            const int64_t od = pix / ohw, oh = pix / p.out[2] % p.out[1], ow0 = pix % p.out[2];
            const int64_t seg = std::min(p.out[2] - ow0, len - j);
            const int64_t id = od * p.stride[0] - p.pad[0] + t * p.dil[0];
            const int64_t ih = oh * p.stride[1] - p.pad[1] + r * p.dil[1];
            T* d = dst + j;
            if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1]) {
                std::fill(d, d + seg, T(0));
            } else {
                // ow with iw = ow * stride - pad + s * dil inside [0, in_w): [lo, hi)
                const int64_t off = s * p.dil[2] - p.pad[2];
                int64_t lo = off >= 0 ? 0 : (-off + p.stride[2] - 1) / p.stride[2];
                int64_t hi = p.in[2] - 1 - off < 0 ? 0 : (p.in[2] - 1 - off) / p.stride[2] + 1;
                lo = std::min(std::max(lo, ow0), ow0 + seg);
                hi = std::max(std::min(hi, ow0 + seg), lo);
                const S* src = src_c + n * xt.strides[0] + id * xt.strides[2] + ih * xt.strides[3] +
                               (lo * p.stride[2] + off) * xt.strides[4];
                std::fill(d, d + (lo - ow0), T(0));
                T* dm = d + (lo - ow0);
                const int64_t m = hi - lo;
                if (ws == 1) {
                    for (int64_t i = 0; i < m; ++i) dm[i] = static_cast<T>(to_float(src[i]));
                } else {
                    for (int64_t i = 0; i < m; ++i) dm[i] = static_cast<T>(to_float(src[i * ws]));
                }
                std::fill(dm + m, d + seg, T(0));
            }
            j += seg;
        }
    }
}

// col[j, (t, r, s, c)] for global output pixels [q0, q0 + len), group g.
template <class S, class T>
void im2col_pm(const ConvProblem& p, const S* x, int64_t g, int64_t q0, int64_t len, T* col) {
    const int64_t taps = p.filt_pixels(), cg = p.cg(), kr = cg * taps;
    const int64_t ohw = p.out[1] * p.out[2], op = p.out[0] * ohw;
    const ConvTensor& xt = p.x;
    const int64_t sc = xt.strides[1];
#pragma omp parallel for schedule(static) if (threaded && len * kr > 32768)
    for (int64_t j = 0; j < len; ++j) {
        const int64_t q = q0 + j, n = q / op, pix = q % op;
        const int64_t od = pix / ohw, oh = pix / p.out[2] % p.out[1], ow = pix % p.out[2];
        T* dst = col + j * kr;
        for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
            const int64_t id = od * p.stride[0] - p.pad[0] + tap(p, 0, ft) * p.dil[0];
            for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                const int64_t ih = oh * p.stride[1] - p.pad[1] + tap(p, 1, fr) * p.dil[1];
                for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                    const int64_t iw = ow * p.stride[2] - p.pad[2] + tap(p, 2, fs) * p.dil[2];
                    T* d = dst + ((ft * p.filt[1] + fr) * p.filt[2] + fs) * cg;
                    if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] || iw < 0 || iw >= p.in[2]) {
                        std::fill(d, d + cg, T(0));
                        continue;
                    }
                    const S* src = x + n * xt.strides[0] + g * cg * sc + id * xt.strides[2] + ih * xt.strides[3] +
                                   iw * xt.strides[4];
                    if (sc == 1) {
                        for (int64_t c = 0; c < cg; ++c) d[c] = static_cast<T>(to_float(src[c]));
                    } else {
                        for (int64_t c = 0; c < cg; ++c) d[c] = static_cast<T>(to_float(src[c * sc]));
                    }
                }
            }
        }
    }
}

// Tensor t (N, C, pixels) into a dense block: channel-major io[c, j] (ld len) or
// pixel-major io[j, c] (ld C), for global pixels [q0, q0 + len), all channels.
template <class S, class T>
void gather_dense(const ConvTensor& t, const S* src, int64_t q0, int64_t len, bool pm, T* io) {
    const int64_t ch = t.dims[1];
    if (pm) {
#pragma omp parallel for schedule(static) if (threaded && len * ch > 32768)
        for (int64_t j = 0; j < len; ++j) {
            const Pix x = pixel_of(t, q0 + j);
            const S* s = src + t.offset(x.n, 0, x.d, x.h, x.w);
            for (int64_t c = 0; c < ch; ++c) io[j * ch + c] = static_cast<T>(to_float(s[c * t.strides[1]]));
        }
    } else {
#pragma omp parallel for schedule(static) if (threaded && len * ch > 32768)
        for (int64_t c = 0; c < ch; ++c) {
            int64_t j = 0;
            while (j < len) {
                const Pix x = pixel_of(t, q0 + j);
                const int64_t seg = std::min(t.dims[4] - x.w, len - j);
                const S* s = src + t.offset(x.n, c, x.d, x.h, x.w);
                T* d = io + c * len + j;
                for (int64_t i = 0; i < seg; ++i) d[i] = static_cast<T>(to_float(s[i * t.strides[4]]));
                j += seg;
            }
        }
    }
}

// The filter as (K x kr) in the orientation's order: channel-major (c, t, r, s) or
// pixel-major (t, r, s, c).
template <class S, class T>
void pack_filter(const ConvProblem& p, const S* w, bool pm, T* out) {
    const int64_t taps = p.filt_pixels(), cg = p.cg(), kr = cg * taps;
#pragma omp parallel for schedule(static) if (threaded && p.k * kr > 32768)
    for (int64_t k = 0; k < p.k; ++k)
        for (int64_t c = 0; c < cg; ++c)
            for (int64_t f = 0; f < taps; ++f) {
                const int64_t ft = f / (p.filt[1] * p.filt[2]), fr = f / p.filt[2] % p.filt[1], fs = f % p.filt[2];
                const T v = static_cast<T>(to_float(w[p.w.offset(k, c, ft, fr, fs)]));
                out[k * kr + (pm ? f * cg + c : c * taps + f)] = v;
            }
}

// dw from the (K x kr) accumulator in the orientation's order.
template <class T>
void write_filter(const ConvProblem& p, const T* acc, bool pm) {
    const int64_t taps = p.filt_pixels(), cg = p.cg(), kr = cg * taps;
#pragma omp parallel for schedule(static) if (threaded && p.k * kr > 16384)
    for (int64_t k = 0; k < p.k; ++k)
        for (int64_t c = 0; c < cg; ++c)
            for (int64_t f = 0; f < taps; ++f) {
                const int64_t ft = f / (p.filt[1] * p.filt[2]), fr = f / p.filt[2] % p.filt[1], fs = f % p.filt[2];
                const double v = static_cast<double>(acc[k * kr + (pm ? f * cg + c : c * taps + f)]);
                blend_store(p, p.w_data, p.w, v, k, c, ft, fr, fs);
            }
}

// dx from dgrad columns: dx[c, i] = sum over taps of col at the output pixel that tap
// reaches from i. Channel-major col rows (cl, t, r, s) over one image's output pixels.
template <class S, class T>
void col2im_cm(const ConvProblem& p, const T* col, int64_t ld, int64_t n0, int64_t imgs, int64_t c0, int64_t cc) {
    const int64_t taps = p.filt_pixels(), op = p.out_pixels(), ohw = p.out[1] * p.out[2];
    const int64_t rows = imgs * cc * p.in[0] * p.in[1];
#pragma omp parallel if (threaded && rows * p.in[2] * taps > 32768)
    {
        std::vector<T> acc(static_cast<size_t>(p.in[2]));
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; ++row) {
            const int64_t nl = row / (cc * p.in[0] * p.in[1]), cl = row / (p.in[0] * p.in[1]) % cc;
            const int64_t id = row / p.in[1] % p.in[0], ih = row % p.in[1];
            std::fill(acc.begin(), acc.end(), T(0));
            for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
                const int64_t nd = id + p.pad[0] - tap(p, 0, ft) * p.dil[0];
                if (nd < 0 || nd % p.stride[0] != 0 || nd / p.stride[0] >= p.out[0]) continue;
                const int64_t od = nd / p.stride[0];
                for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                    const int64_t nh = ih + p.pad[1] - tap(p, 1, fr) * p.dil[1];
                    if (nh < 0 || nh % p.stride[1] != 0 || nh / p.stride[1] >= p.out[1]) continue;
                    const int64_t oh = nh / p.stride[1];
                    for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                        const int64_t f = (ft * p.filt[1] + fr) * p.filt[2] + fs;
                        const T* src = col + (cl * taps + f) * ld + nl * op + od * ohw + oh * p.out[2];
                        const int64_t off = tap(p, 2, fs) * p.dil[2] - p.pad[2];  // iw = ow * stride + off
                        int64_t lo = off >= 0 ? 0 : (-off + p.stride[2] - 1) / p.stride[2];
                        const int64_t hi =
                            std::min(p.out[2], p.in[2] - 1 - off < 0 ? 0 : (p.in[2] - 1 - off) / p.stride[2] + 1);
                        T* a = acc.data();
                        if (p.stride[2] == 1) {
                            for (int64_t ow = lo; ow < hi; ++ow) a[ow + off] += src[ow];
                        } else {
                            for (int64_t ow = lo; ow < hi; ++ow) a[ow * p.stride[2] + off] += src[ow];
                        }
                    }
                }
            }
            S* o = static_cast<S*>(p.x_data) + p.x.offset(n0 + nl, c0 + cl, id, ih, 0);
            store_run(o, p.x.strides[4], acc.data(), p.in[2], static_cast<T>(p.alpha), static_cast<T>(p.beta));
        }
    }
}

// Pixel-major: col rows are output pixels of images [n0, n0 + imgs), columns (t, r, s, c).
template <class S, class T>
void col2im_pm(const ConvProblem& p, const T* col, int64_t g, int64_t n0, int64_t imgs) {
    const int64_t cg = p.cg(), taps = p.filt_pixels(), kr = cg * taps;
    const int64_t op = p.out_pixels(), ohw = p.out[1] * p.out[2];
    const int64_t rows = imgs * p.in[0] * p.in[1];
#pragma omp parallel if (threaded && rows * p.in[2] * kr > 32768)
    {
        std::vector<T> acc(static_cast<size_t>(p.in[2] * cg));
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; ++row) {
            const int64_t nl = row / (p.in[0] * p.in[1]), id = row / p.in[1] % p.in[0], ih = row % p.in[1];
            std::fill(acc.begin(), acc.end(), T(0));
            for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
                const int64_t nd = id + p.pad[0] - tap(p, 0, ft) * p.dil[0];
                if (nd < 0 || nd % p.stride[0] != 0 || nd / p.stride[0] >= p.out[0]) continue;
                const int64_t od = nd / p.stride[0];
                for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                    const int64_t nh = ih + p.pad[1] - tap(p, 1, fr) * p.dil[1];
                    if (nh < 0 || nh % p.stride[1] != 0 || nh / p.stride[1] >= p.out[1]) continue;
                    const int64_t oh = nh / p.stride[1];
                    for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                        const int64_t f = (ft * p.filt[1] + fr) * p.filt[2] + fs;
                        const int64_t off = tap(p, 2, fs) * p.dil[2] - p.pad[2];
                        const int64_t lo = off >= 0 ? 0 : (-off + p.stride[2] - 1) / p.stride[2];
                        const int64_t hi = std::min(p.out[2], p.in[2] - 1 - off < 0 ? 0 : (p.in[2] - 1 - off) / p.stride[2] + 1);
                        for (int64_t ow = lo; ow < hi; ++ow) {
                            const T* src = col + (nl * op + od * ohw + oh * p.out[2] + ow) * kr + f * cg;
                            T* a = acc.data() + (ow * p.stride[2] + off) * cg;
                            for (int64_t c = 0; c < cg; ++c) a[c] += src[c];
                        }
                    }
                }
            }
            for (int64_t iw = 0; iw < p.in[2]; ++iw) {
                S* o = static_cast<S*>(p.x_data) + p.x.offset(n0 + nl, g * cg, id, ih, iw);
                store_run(o, p.x.strides[1], acc.data() + iw * cg, cg, static_cast<T>(p.alpha),
                          static_cast<T>(p.beta));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The three directions, for compute type T (float or double).

template <class T>
struct Buffers {
    T* w = nullptr;
    T* col = nullptr;
    T* io = nullptr;
};

template <class T>
Buffers<T> carve(const Plan& pl, void* ws) {
    Buffers<T> b;
    unsigned char* at = static_cast<unsigned char*>(ws);
    auto take = [&](int64_t elems) -> T* {
        if (elems == 0) return nullptr;
        T* r = reinterpret_cast<T*>(at);
        at += round_up(elems * static_cast<int64_t>(sizeof(T)), 64);
        return r;
    };
    b.w = take(pl.w_elems);
    b.col = take(pl.col_elems);
    b.io = take(pl.io_elems);
    return b;
}

// The filter operand: in place, or packed into the workspace.
template <class T>
const T* filter_operand(const ConvProblem& p, const Plan& pl, const Buffers<T>& b) {
    if (pl.w_native) return static_cast<const T*>(p.w_data);
    with_storage(p.w.dtype, [&](auto s) { pack_filter(p, static_cast<const decltype(s)*>(p.w_data), pl.pm, b.w); });
    return b.w;
}

template <class T>
void run_fwd(const ConvProblem& p, const Plan& pl, const Buffers<T>& b) {
    const int64_t cg = p.cg(), kg = p.kg(), kr = cg * p.filt_pixels();
    const int64_t op = p.out_pixels(), np = p.n * op;
    const T* w = filter_operand(p, pl, b);
    const bool z_aliased = p.epi.enabled && p.epi.z == p.y_data && p.epi.z_t.dtype == p.y.dtype &&
                           std::equal(p.epi.z_t.strides, p.epi.z_t.strides + 5, p.y.strides);
    // With the output written in place, the GEMM's beta carries beta (or alpha2 for an aliased z).
    const T gemm_alpha = static_cast<T>(pl.out_direct ? p.alpha : 1.0);
    const T gemm_beta = static_cast<T>(!pl.out_direct ? 0.0 : p.epi.enabled ? (z_aliased ? p.epi.alpha2 : 0.0) : p.beta);
    T* y = static_cast<T*>(p.y_data);
    int64_t q0 = 0;
    while (q0 < np) {
        const int64_t len = pl.pm || pl.imgs > 1 ? std::min(pl.chunk, np - q0)
                                                 : std::min(pl.chunk, op - q0 % op);
        const int64_t n = q0 / op, p0 = q0 % op;
        for (int64_t g = 0; g < p.groups; ++g) {
            const T* wg = w + g * kg * kr;
            if (pl.pm) {
                const T* a;
                int64_t lda;
                if (pl.x_operand) {
                    a = static_cast<const T*>(p.x_data) + q0 * p.x.strides[4] + g * cg;
                    lda = p.x.strides[4];
                } else {
                    with_storage(p.x.dtype, [&](auto s) {
                        im2col_pm(p, static_cast<const decltype(s)*>(p.x_data), g, q0, len, b.col);
                    });
                    a = b.col;
                    lda = kr;
                }
                T* c = pl.out_direct ? y + q0 * p.y.strides[4] + g * kg : b.io;
                const int64_t ldc = pl.out_direct ? p.y.strides[4] : kg;
                gemm(false, true, len, kg, kr, gemm_alpha, a, lda, wg, kr, gemm_beta, c, ldc);
                if (!pl.out_direct) write_pm(p, p.y_data, p.y, g * kg, kg, q0, len, b.io, kg);
                else if (p.epi.enabled) epilogue_in_place(p, y, z_aliased, g * kg, kg, q0, len, true);
            } else {
                const T* bm;
                int64_t ldb;
                if (pl.x_operand) {
                    bm = static_cast<const T*>(p.x_data) + n * p.x.strides[0] + g * cg * p.x.strides[1] + p0;
                    ldb = p.x.strides[1];
                } else {
                    with_storage(p.x.dtype, [&](auto s) {
                        im2col_cm(p, static_cast<const decltype(s)*>(p.x_data), g, q0, len, b.col);
                    });
                    bm = b.col;
                    ldb = len;
                }
                T* c = pl.out_direct ? y + n * p.y.strides[0] + g * kg * p.y.strides[1] + p0 : b.io;
                const int64_t ldc = pl.out_direct ? p.y.strides[1] : len;
                gemm(false, false, kg, len, kr, gemm_alpha, wg, kr, bm, ldb, gemm_beta, c, ldc);
                if (!pl.out_direct) write_cm(p, p.y_data, p.y, g * kg, kg, q0, len, b.io, len);
                else if (p.epi.enabled) epilogue_in_place(p, y, z_aliased, g * kg, kg, q0, len, false);
            }
        }
        q0 += len;
    }
}

template <class T>
void run_bwd_data(const ConvProblem& p, const Plan& pl, const Buffers<T>& b) {
    const int64_t cg = p.cg(), kg = p.kg(), taps = p.filt_pixels(), kr = cg * taps;
    const int64_t op = p.out_pixels(), ip = p.in_pixels();
    const T* w = filter_operand(p, pl, b);
    if (pl.pm) {
        for (int64_t n0 = 0; n0 < p.n; n0 += pl.imgs) {
            const int64_t imgs = std::min(pl.imgs, p.n - n0), len = imgs * op, q0 = n0 * op;
            const T* dy;
            int64_t lddy;
            if (pl.dy_operand) {
                dy = static_cast<const T*>(p.y_data) + q0 * p.y.strides[4];
                lddy = p.y.strides[4];
            } else {
                with_storage(p.y.dtype, [&](auto s) {
                    gather_dense(p.y, static_cast<const decltype(s)*>(p.y_data), q0, len, true, b.io);
                });
                dy = b.io;
                lddy = p.k;
            }
            for (int64_t g = 0; g < p.groups; ++g) {
                const T* wg = w + g * kg * kr;
                if (pl.unit && pl.out_direct) {
                    T* dx = static_cast<T*>(p.x_data) + q0 * p.x.strides[4] + g * cg;
                    gemm(false, false, len, cg, kg, static_cast<T>(p.alpha), dy + g * kg, lddy, wg, kr,
                         static_cast<T>(p.beta), dx, p.x.strides[4]);
                } else if (pl.unit) {
                    gemm(false, false, len, cg, kg, T(1), dy + g * kg, lddy, wg, kr, T(0), b.col, cg);
                    write_pm(p, p.x_data, p.x, g * cg, cg, q0, len, b.col, cg);
                } else {
                    gemm(false, false, len, kr, kg, T(1), dy + g * kg, lddy, wg, kr, T(0), b.col, kr);
                    with_storage(p.x.dtype, [&](auto tag) { col2im_pm<decltype(tag), T>(p, b.col, g, n0, imgs); });
                }
            }
        }
        return;
    }
    for (int64_t n0 = 0; n0 < p.n; n0 += pl.imgs) {
        const int64_t imgs = std::min(pl.imgs, p.n - n0), len = imgs * op;
        const T* dy;
        int64_t lddy;
        if (pl.dy_operand) {
            dy = static_cast<const T*>(p.y_data) + n0 * p.y.strides[0];
            lddy = p.y.strides[1];
        } else {
            with_storage(p.y.dtype, [&](auto s) {
                gather_dense(p.y, static_cast<const decltype(s)*>(p.y_data), n0 * op, len, false, b.io);
            });
            dy = b.io;
            lddy = len;
        }
        for (int64_t g = 0; g < p.groups; ++g) {
            const T* wg = w + g * kg * kr;
            const T* dyg = dy + g * kg * lddy;
            if (pl.unit && pl.out_direct) {
                T* dx = static_cast<T*>(p.x_data) + n0 * p.x.strides[0] + g * cg * p.x.strides[1];
                gemm(true, false, cg, ip, kg, static_cast<T>(p.alpha), wg, kr, dyg, lddy, static_cast<T>(p.beta), dx,
                     p.x.strides[1]);
                continue;
            }
            for (int64_t c0 = 0; c0 < cg; c0 += pl.cc) {
                const int64_t cc = std::min(pl.cc, cg - c0);
                gemm(true, false, cc * taps, len, kg, T(1), wg + c0 * taps, kr, dyg, lddy, T(0), b.col, len);
                if (pl.unit) {
                    write_cm(p, p.x_data, p.x, g * cg + c0, cc, n0 * ip, len, b.col, len);
                } else {
                    with_storage(p.x.dtype, [&](auto tag) {
                        col2im_cm<decltype(tag), T>(p, b.col, len, n0, imgs, g * cg + c0, cc);
                    });
                }
            }
        }
    }
}

template <class T>
void run_bwd_filter(const ConvProblem& p, const Plan& pl, const Buffers<T>& b) {
    const int64_t cg = p.cg(), kg = p.kg(), kr = cg * p.filt_pixels();
    const int64_t op = p.out_pixels(), np = p.n * op;
    T* acc = pl.out_direct ? static_cast<T*>(p.w_data) : b.w;
    const T alpha = static_cast<T>(pl.out_direct ? p.alpha : 1.0);
    bool first = true;
    int64_t q0 = 0;
    while (q0 < np) {
        const int64_t len = pl.pm || pl.imgs > 1 ? std::min(pl.chunk, np - q0)
                                                 : std::min(pl.chunk, op - q0 % op);
        const int64_t n = q0 / op, p0 = q0 % op;
        const T beta = first ? static_cast<T>(pl.out_direct ? p.beta : 0.0) : T(1);
        // dy for this chunk, all K channels.
        const T* dy;
        int64_t lddy;
        if (pl.dy_operand) {
            dy = static_cast<const T*>(p.y_data) +
                 (pl.pm ? q0 * p.y.strides[4] : n * p.y.strides[0] + p0);
            lddy = pl.pm ? p.y.strides[4] : p.y.strides[1];
        } else {
            with_storage(p.y.dtype, [&](auto s) {
                gather_dense(p.y, static_cast<const decltype(s)*>(p.y_data), q0, len, pl.pm, b.io);
            });
            dy = b.io;
            lddy = pl.pm ? p.k : len;
        }
        for (int64_t g = 0; g < p.groups; ++g) {
            T* accg = acc + g * kg * kr;
            if (pl.pm) {
                const T* col;
                int64_t ldcol;
                if (pl.x_operand) {
                    col = static_cast<const T*>(p.x_data) + q0 * p.x.strides[4] + g * cg;
                    ldcol = p.x.strides[4];
                } else {
                    with_storage(p.x.dtype, [&](auto s) {
                        im2col_pm(p, static_cast<const decltype(s)*>(p.x_data), g, q0, len, b.col);
                    });
                    col = b.col;
                    ldcol = kr;
                }
                gemm(true, false, kg, kr, len, alpha, dy + g * kg, lddy, col, ldcol, beta, accg, kr);
            } else {
                const T* col;
                int64_t ldcol;
                if (pl.x_operand) {
                    col = static_cast<const T*>(p.x_data) + n * p.x.strides[0] + g * cg * p.x.strides[1] + p0;
                    ldcol = p.x.strides[1];
                } else {
                    with_storage(p.x.dtype, [&](auto s) {
                        im2col_cm(p, static_cast<const decltype(s)*>(p.x_data), g, q0, len, b.col);
                    });
                    col = b.col;
                    ldcol = len;
                }
                gemm(false, true, kg, kr, len, alpha, dy + g * kg * lddy, lddy, col, ldcol, beta, accg, kr);
            }
        }
        first = false;
        q0 += len;
    }
    if (!pl.out_direct) write_filter(p, b.w, pl.pm);
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

class GemmConv final : public core::Impl<ConvProblem> {
public:
    const char* name() const override { return "cpu_gemm_conv"; }

    Status check(const ConvProblem& p) const override {
        ODNN_REQUIRE_SUPPORTED(!algo_is_direct(p), "algo %s runs on cpu_direct_conv",
                               core::conv_algo_name(p.kind, p.algo));
        const cudnnDataType_t t = p.x.dtype;
        ODNN_REQUIRE_SUPPORTED(t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF ||
                                   t == CUDNN_DATA_BFLOAT16,
                               "data type %s", core::dtype_name(t));
        ODNN_REQUIRE_SUPPORTED(p.w.dtype == t && p.y.dtype == t, "mixed data types");
        ODNN_REQUIRE_SUPPORTED(p.x.vect == 1 && p.y.vect == 1 && p.w.vect == 1, "vectorized layouts");
        ODNN_REQUIRE_SUPPORTED(fits_int(p.n * p.out_pixels()) && fits_int(p.n * p.in_pixels()) &&
                                   fits_int(p.c * p.filt_pixels()) && fits_int(p.x.strides[0]) &&
                                   fits_int(p.y.strides[0]),
                               "sizes beyond 32-bit BLAS indices");
        return Status::ok();
    }

    size_t workspace_size(const ConvProblem& p) const override { return plan(p).bytes(); }

    Status execute(const core::Handle&, const ConvProblem& p) const override {
        const Plan pl = plan(p);
        if (pl.dbl) run<double>(p, pl);
        else run<float>(p, pl);
        return Status::ok();
    }

private:
    template <class T>
    static void run(const ConvProblem& p, const Plan& pl) {
        threaded = loops_threaded_around_blas();
        const Buffers<T> b = carve<T>(pl, p.workspace);
        switch (p.kind) {
            case ConvKind::fwd: run_fwd<T>(p, pl, b); break;
            case ConvKind::bwd_data: run_bwd_data<T>(p, pl, b); break;
            case ConvKind::bwd_filter: run_bwd_filter<T>(p, pl, b); break;
        }
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, ConvProblem, GemmConv, core::kPriorityGeneric);

}  // namespace odnn::cpu
