// Depthwise 2-D convolutions (one input channel per group, any channel multiplier), the
// three directions, with loops the compiler vectorizes and no workspace:
//
//   planar data (NCHW, strided)  one task per image plane: the plane is copied, padded and
//                                split into its column phases (stride s: s arrays of
//                                every s-th column), so every tap of a row is a contiguous
//                                multiply-add run, whatever the stride. Backward data
//                                scatters the same way into a padded, phase-split plane;
//                                backward filter sums over images per channel.
//   channels-last data (NHWC)    one task per output (dgrad: input) row; the innermost
//                                loop runs along the channels. Backward filter sums rows
//                                into per-slot partials added in slot order.
//
// Sums run in a fixed order (the slots of conv_common.hpp, never the thread timing):
// results are deterministic. Accumulation in fp32 (fp64 for DOUBLE).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/conv_problem.hpp"
#include "core/dtype.hpp"
#include "cpu/conv_common.hpp"

namespace odnn::cpu {

using core::ConvKind;
using core::ConvProblem;
using core::ConvTensor;
using core::Status;

namespace {

constexpr int kLanes = 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Spatial offset (in input pixels, before padding) of filter position f along dim.
inline int64_t tap_offset(const ConvProblem& p, int dim, int64_t f) {
    return (p.flip ? p.filt[dim] - 1 - f : f) * p.dil[dim];
}

// Output columns ow whose input column ow * stride + off lies in [0, in_w).
inline void valid_range(int64_t off, int64_t stride, int64_t in_w, int64_t out_w, int64_t* lo, int64_t* hi) {
    *lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
    *hi = in_w - 1 - off < 0 ? 0 : std::min(out_w, (in_w - 1 - off) / stride + 1);
    if (*hi < *lo) *hi = *lo;
}

// `count` values into tensor t from (n, c, 0, h, w) along W (stride_elems = t.strides[4]) or
// along C (t.strides[1]): typed stores, or the element-wise blend with the fused epilogue.
template <class Acc>
void store(const ConvProblem& p, void* base, const ConvTensor& t, const Acc* v, int64_t count, bool along_c,
           int64_t n, int64_t c, int64_t h, int64_t w) {
    if (p.epi.enabled || (t.dtype == CUDNN_DATA_DOUBLE) != std::is_same_v<Acc, double>) {
        for (int64_t i = 0; i < count; ++i)
            blend_store(p, base, t, static_cast<double>(v[i]), n, along_c ? c + i : c, 0, h, along_c ? w : w + i);
        return;
    }
    with_storage(t.dtype, [&](auto tag) {
        using S = decltype(tag);
        if constexpr (std::is_same_v<S, double> == std::is_same_v<Acc, double>)
            store_run(static_cast<S*>(base) + t.offset(n, c, 0, h, w), along_c ? t.strides[1] : t.strides[4], v,
                      count, static_cast<Acc>(p.alpha), static_cast<Acc>(p.beta));
    });
}

template <class Acc, class S>
inline Acc load(const S* base, int64_t off) {
    return static_cast<Acc>(to_float(base[off]));
}

// The filter as taps x K (weight of output channel k at tap f: wt[f * K + k]).
template <class Acc, class S>
std::vector<Acc> filter_by_tap(const ConvProblem& p) {
    const S* w = static_cast<const S*>(p.w_data);
    const int64_t taps = p.filt[1] * p.filt[2];
    std::vector<Acc> wt(static_cast<size_t>(taps * p.k));
    for (int64_t k = 0; k < p.k; ++k)
        for (int64_t f = 0; f < taps; ++f)
            wt[static_cast<size_t>(f * p.k + k)] = load<Acc>(w, p.w.offset(k, 0, 0, f / p.filt[2], f % p.filt[2]));
    return wt;
}

// ---------------------------------------------------------------------------
// Vector kernels: compiled for AVX-512, AVX2 + FMA and the x86-64 baseline, the best one
// the CPU has picked when the library loads (the rest of the library is baseline code).

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(ODNN_SANITIZE_BUILD)
#define ODNN_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ODNN_VECTOR_CLONES
#endif

// y[i] += a * x[i]
ODNN_VECTOR_CLONES void axpy(float* __restrict y, const float* __restrict x, float a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}
ODNN_VECTOR_CLONES void axpy(double* __restrict y, const double* __restrict x, double a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// sum a[i] * b[i] in kLanes fixed-order partial sums (vectorizes, deterministic).
template <class T>
inline T dot_body(const T* __restrict a, const T* __restrict b, int64_t n) {
    T part[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) part[l] += a[i + l] * b[i + l];
    T sum = 0;
    for (int l = 0; l < kLanes; ++l) sum += part[l];
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
}
ODNN_VECTOR_CLONES float dot(const float* __restrict a, const float* __restrict b, int64_t n) {
    return dot_body(a, b, n);
}
ODNN_VECTOR_CLONES double dot(const double* __restrict a, const double* __restrict b, int64_t n) {
    return dot_body(a, b, n);
}

// Channels-last rows: acc[i * astep + k] += w[k] * x[i * xstep + k] for i < count, k < K.
ODNN_VECTOR_CLONES void mul_add_rows(float* __restrict acc, int64_t astep, const float* __restrict w,
                                     const float* __restrict x, int64_t xstep, int64_t count, int64_t K) {
    for (int64_t i = 0; i < count; ++i)
        for (int64_t k = 0; k < K; ++k) acc[i * astep + k] += w[k] * x[i * xstep + k];
}
ODNN_VECTOR_CLONES void mul_add_rows(double* __restrict acc, int64_t astep, const double* __restrict w,
                                     const double* __restrict x, int64_t xstep, int64_t count, int64_t K) {
    for (int64_t i = 0; i < count; ++i)
        for (int64_t k = 0; k < K; ++k) acc[i * astep + k] += w[k] * x[i * xstep + k];
}

// acc[k] += a[i * as + k] * b[i * bs + k] summed over i < count, in order of i.
ODNN_VECTOR_CLONES void dot_rows(float* __restrict acc, const float* __restrict a, int64_t as,
                                 const float* __restrict b, int64_t bs, int64_t count, int64_t K) {
    for (int64_t i = 0; i < count; ++i)
        for (int64_t k = 0; k < K; ++k) acc[k] += a[i * as + k] * b[i * bs + k];
}
ODNN_VECTOR_CLONES void dot_rows(double* __restrict acc, const double* __restrict a, int64_t as,
                                 const double* __restrict b, int64_t bs, int64_t count, int64_t K) {
    for (int64_t i = 0; i < count; ++i)
        for (int64_t k = 0; k < K; ++k) acc[k] += a[i * as + k] * b[i * bs + k];
}

// ---------------------------------------------------------------------------
// Planar data.
//
// A plane (x, or the dx being summed), zero-padded, is split into its stride phases: phase
// (a, b) holds the padded rows a, a + sh, ... and columns b, b + sw, ... as rows of wq
// values. Every tap (padded offsets ro, co) then reads the same phase at one shift for
// all outputs: output (oh, ow) at "wide" index oh * wq + ow (ow < wq; those past the
// output width are computed and dropped) reads phase element shift(ro, co) + oh * wq + ow.
// One contiguous multiply-add run per tap covers the whole plane.
struct Phases {
    int64_t sh = 1, sw = 1, hq = 0, wq = 0, one = 0;  // `one`: elements of a phase (with slack)
    int64_t size() const { return sh * sw * one; }
    int64_t at(int64_t u, int64_t v) const { return ((u % sh) * sw + v % sw) * one + (u / sh) * wq + v / sw; }
};

Phases phases_of(const ConvProblem& p) {
    Phases g;
    g.sh = p.stride[1];
    g.sw = p.stride[2];
    g.hq = ceil_div(p.in[1] + 2 * p.pad[1], g.sh);
    g.wq = ceil_div(p.in[2] + 2 * p.pad[2], g.sw);
    g.one = (g.hq + 1) * g.wq;  // a row of slack: wide runs may read past the last row
    return g;
}

// Phase column b of a padded row holds input columns iw = j * sw + b - pad for j in [lo, hi).
inline void phase_columns(const ConvProblem& p, const Phases& g, int64_t b, int64_t* lo, int64_t* hi) {
    const int64_t first = p.pad[2] - b;
    *lo = first <= 0 ? 0 : ceil_div(first, g.sw);
    *hi = std::max(*lo, std::min(g.wq, ceil_div(p.in[2] + p.pad[2] - b, g.sw)));
}

// Plane (n, c) of x into its phases, padding and slack zero; returns whether every value
// is finite.
template <class Acc, class S>
bool load_plane(const ConvProblem& p, const Phases& g, const S* x, int64_t n, int64_t c, Acc* buf) {
    const ConvTensor& t = p.x;
    int bad = 0;  // set by an infinite or NaN value
    for (int64_t a = 0; a < g.sh; ++a)
        for (int64_t b = 0; b < g.sw; ++b) {
            int64_t lo, hi;
            phase_columns(p, g, b, &lo, &hi);
            const int64_t step = g.sw * t.strides[4];
            Acc* phase = buf + (a * g.sw + b) * g.one;
            for (int64_t q = 0; q <= g.hq; ++q) {  // phase rows, then the slack row
                Acc* dst = phase + q * g.wq;
                const int64_t ih = q * g.sh + a - p.pad[1];
                if (q == g.hq || ih < 0 || ih >= p.in[1] || lo == hi) {
                    std::fill(dst, dst + g.wq, Acc(0));
                    continue;
                }
                std::fill(dst, dst + lo, Acc(0));
                std::fill(dst + hi, dst + g.wq, Acc(0));
                const S* src = x + t.offset(n, c, 0, ih, lo * g.sw + b - p.pad[2]);
                if (step == 1) {
                    for (int64_t j = lo; j < hi; ++j) {
                        const Acc v = load<Acc>(src, j - lo);
                        dst[j] = v;
                        bad |= !(v - v == Acc(0));
                    }
                } else {
                    for (int64_t j = lo; j < hi; ++j) {
                        const Acc v = load<Acc>(src, (j - lo) * step);
                        dst[j] = v;
                        bad |= !(v - v == Acc(0));
                    }
                }
            }
        }
    return bad == 0;
}

// Wide runs go in chunks that keep the sums and the taps' inputs in the L1 cache.
constexpr int64_t kChunk = 2048;

struct Taps {
    std::vector<int64_t> ro, co;  // padded offsets of filter rows / columns
    explicit Taps(const ConvProblem& p) {
        for (int64_t r = 0; r < p.filt[1]; ++r) ro.push_back(tap_offset(p, 1, r));
        for (int64_t s = 0; s < p.filt[2]; ++s) co.push_back(tap_offset(p, 2, s));
    }
};

// Per-thread buffers of `elems` values, allocated before the parallel region.
template <class Acc>
std::vector<std::vector<Acc>> thread_buffers(int64_t elems) {
    std::vector<std::vector<Acc>> b(static_cast<size_t>(conv_slots()));
    for (int i = 0; i < conv_threads(); ++i) b[static_cast<size_t>(i)].resize(static_cast<size_t>(elems));
    return b;
}

template <class Acc, class S>
void fwd_planar(const ConvProblem& p) {
    const S* x = static_cast<const S*>(p.x_data);
    const int64_t mult = p.kg();
    const std::vector<Acc> wt = filter_by_tap<Acc, S>(p);
    const Phases g = phases_of(p);
    const Taps taps(p);
    const int64_t wide = p.out[1] * g.wq;
    auto bufs = thread_buffers<Acc>(g.size() + wide);
    parallel_tasks(p.n * p.c, [&](int64_t task, int slot) {
        const int64_t n = task / p.c, c = task % p.c;
        Acc* buf = bufs[static_cast<size_t>(slot)].data();
        Acc* acc = buf + g.size();
        load_plane(p, g, x, n, c, buf);
        for (int64_t m = 0; m < mult; ++m) {
            const int64_t k = c * mult + m;
            std::fill(acc, acc + wide, Acc(0));
            for (int64_t i0 = 0; i0 < wide; i0 += kChunk) {
                const int64_t len = std::min(kChunk, wide - i0);
                for (int64_t r = 0; r < p.filt[1]; ++r)
                    for (int64_t s = 0; s < p.filt[2]; ++s)
                        axpy(acc + i0,
                             buf + g.at(taps.ro[static_cast<size_t>(r)], taps.co[static_cast<size_t>(s)]) + i0,
                             wt[static_cast<size_t>((r * p.filt[2] + s) * p.k + k)], len);
            }
            for (int64_t oh = 0; oh < p.out[1]; ++oh) store(p, p.y_data, p.y, acc + oh * g.wq, p.out[2], false, n, k, oh, 0);
        }
    });
}

template <class Acc, class S>
void bwd_data_planar(const ConvProblem& p) {
    const S* dy = static_cast<const S*>(p.y_data);
    const ConvTensor& yt = p.y;
    const int64_t mult = p.kg();
    const std::vector<Acc> wt = filter_by_tap<Acc, S>(p);
    // The padded dx plane in phases, summed into by every tap of every dy element.
    const Phases g = phases_of(p);
    const Taps taps(p);
    const int64_t wide = p.out[1] * g.wq, ftaps = p.filt[1] * p.filt[2];
    auto bufs = thread_buffers<Acc>(g.size() + wide + p.in[2]);
    parallel_tasks(p.n * p.c, [&](int64_t task, int slot) {
        const int64_t n = task / p.c, c = task % p.c;
        Acc* buf = bufs[static_cast<size_t>(slot)].data();
        Acc* dyw = buf + g.size();  // dy of channel k, wide rows (zeros past the output width)
        Acc* row = dyw + wide;
        std::fill(buf, buf + g.size(), Acc(0));
        std::fill(dyw, dyw + wide, Acc(0));
        for (int64_t m = 0; m < mult; ++m) {
            const int64_t k = c * mult + m;
            for (int64_t oh = 0; oh < p.out[1]; ++oh) {
                const S* src = dy + yt.offset(n, k, 0, oh, 0);
                for (int64_t ow = 0; ow < p.out[2]; ++ow) dyw[oh * g.wq + ow] = load<Acc>(src, ow * yt.strides[4]);
            }
            // Wide runs add w * 0 past the output width: exact unless w is not finite.
            bool finite = true;
            for (int64_t f = 0; f < ftaps; ++f) finite = finite && std::isfinite(wt[static_cast<size_t>(f * p.k + k)]);
            for (int64_t i0 = 0; i0 < (finite ? wide : 1); i0 += kChunk) {
                const int64_t len = std::min(kChunk, wide - i0);
                for (int64_t r = 0; r < p.filt[1]; ++r)
                    for (int64_t s = 0; s < p.filt[2]; ++s) {
                        Acc* dst = buf + g.at(taps.ro[static_cast<size_t>(r)], taps.co[static_cast<size_t>(s)]);
                        const Acc wv = wt[static_cast<size_t>((r * p.filt[2] + s) * p.k + k)];
                        if (finite) {
                            axpy(dst + i0, dyw + i0, wv, len);
                        } else {
                            for (int64_t oh = 0; oh < p.out[1]; ++oh)
                                axpy(dst + oh * g.wq, dyw + oh * g.wq, wv, p.out[2]);
                        }
                    }
            }
        }
        for (int64_t ih = 0; ih < p.in[1]; ++ih) {
            const int64_t u = ih + p.pad[1];
            for (int64_t b = 0; b < g.sw; ++b) {
                int64_t lo, hi;
                phase_columns(p, g, b, &lo, &hi);
                const Acc* src = buf + g.at(u, b);
                Acc* dst = row + (lo * g.sw + b - p.pad[2]);
                for (int64_t j = lo; j < hi; ++j) dst[(j - lo) * g.sw] = src[j];
            }
            store(p, p.x_data, p.x, row, p.in[2], false, n, c, ih, 0);
        }
    });
}

template <class Acc, class S>
void bwd_filter_planar(const ConvProblem& p) {
    const S* x = static_cast<const S*>(p.x_data);
    const S* dy = static_cast<const S*>(p.y_data);
    const ConvTensor& yt = p.y;
    const int64_t mult = p.kg(), ftaps = p.filt[1] * p.filt[2];
    const Phases g = phases_of(p);
    const Taps taps(p);
    const int64_t wide = p.out[1] * g.wq;
    auto bufs = thread_buffers<Acc>(g.size() + wide + mult * ftaps);
    parallel_tasks(p.c, [&](int64_t c, int slot) {
        Acc* buf = bufs[static_cast<size_t>(slot)].data();
        Acc* dyw = buf + g.size();
        Acc* sums = dyw + wide;
        std::fill(sums, sums + mult * ftaps, Acc(0));
        std::fill(dyw, dyw + wide, Acc(0));
        for (int64_t n = 0; n < p.n; ++n) {
            // Wide runs multiply x values past the output width by 0: exact unless x is not finite.
            const bool finite = load_plane(p, g, x, n, c, buf);
            for (int64_t m = 0; m < mult; ++m) {
                const int64_t k = c * mult + m;
                for (int64_t oh = 0; oh < p.out[1]; ++oh) {
                    const S* src = dy + yt.offset(n, k, 0, oh, 0);
                    for (int64_t ow = 0; ow < p.out[2]; ++ow) dyw[oh * g.wq + ow] = load<Acc>(src, ow * yt.strides[4]);
                }
                for (int64_t i0 = 0; i0 < (finite ? wide : 1); i0 += kChunk) {
                    const int64_t len = std::min(kChunk, wide - i0);
                    for (int64_t r = 0; r < p.filt[1]; ++r)
                        for (int64_t s = 0; s < p.filt[2]; ++s) {
                            const Acc* xr =
                                buf + g.at(taps.ro[static_cast<size_t>(r)], taps.co[static_cast<size_t>(s)]);
                            Acc sum = 0;
                            if (finite) {
                                sum = dot(dyw + i0, xr + i0, len);
                            } else {
                                for (int64_t oh = 0; oh < p.out[1]; ++oh)
                                    sum += dot(dyw + oh * g.wq, xr + oh * g.wq, p.out[2]);
                            }
                            sums[m * ftaps + r * p.filt[2] + s] += sum;
                        }
                }
            }
        }
        for (int64_t m = 0; m < mult; ++m)
            for (int64_t f = 0; f < ftaps; ++f)
                blend_store(p, p.w_data, p.w, static_cast<double>(sums[m * ftaps + f]), c * mult + m, 0, 0,
                            f / p.filt[2], f % p.filt[2]);
    });
}

// ---------------------------------------------------------------------------
// Channels-last data: x and y with unit channel stride.

template <class Acc, class S>
void fwd_cl(const ConvProblem& p) {
    const S* x = static_cast<const S*>(p.x_data);
    const ConvTensor& xt = p.x;
    const int64_t mult = p.kg(), K = p.k;
    const std::vector<Acc> wt = filter_by_tap<Acc, S>(p);
    const int nt = conv_threads();
    std::vector<std::vector<Acc>> bufs(static_cast<size_t>(conv_slots()));
    for (int i = 0; i < nt; ++i) bufs[static_cast<size_t>(i)].resize(static_cast<size_t>(p.out[2] * K));
    parallel_tasks(p.n * p.out[1], [&](int64_t task, int slot) {
        const int64_t n = task / p.out[1], oh = task % p.out[1];
        Acc* acc = bufs[static_cast<size_t>(slot)].data();
        std::fill(acc, acc + p.out[2] * K, Acc(0));
        for (int64_t r = 0; r < p.filt[1]; ++r) {
            const int64_t ih = oh * p.stride[1] - p.pad[1] + tap_offset(p, 1, r);
            if (ih < 0 || ih >= p.in[1]) continue;
            for (int64_t s = 0; s < p.filt[2]; ++s) {
                const int64_t off = tap_offset(p, 2, s) - p.pad[2];
                int64_t lo, hi;
                valid_range(off, p.stride[2], p.in[2], p.out[2], &lo, &hi);
                const Acc* wf = wt.data() + (r * p.filt[2] + s) * K;
                const S* xrow = x + xt.offset(n, 0, 0, ih, 0) + off * xt.strides[4];
                const int64_t xstep = p.stride[2] * xt.strides[4];
                if constexpr (std::is_same_v<S, Acc>) {
                    if (mult == 1) {
                        mul_add_rows(acc + lo * K, K, wf, xrow + lo * xstep, xstep, hi - lo, K);
                        continue;
                    }
                }
                for (int64_t ow = lo; ow < hi; ++ow) {
                    const S* xp = xrow + ow * xstep;
                    Acc* a = acc + ow * K;
                    if (mult == 1) {
                        for (int64_t k = 0; k < K; ++k) a[k] += wf[k] * load<Acc>(xp, k);
                    } else {
                        for (int64_t k = 0; k < K; ++k) a[k] += wf[k] * load<Acc>(xp, k / mult);
                    }
                }
            }
        }
        for (int64_t ow = 0; ow < p.out[2]; ++ow) store(p, p.y_data, p.y, acc + ow * K, K, true, n, 0, oh, ow);
    });
}

template <class Acc, class S>
void bwd_data_cl(const ConvProblem& p) {
    const S* dy = static_cast<const S*>(p.y_data);
    const ConvTensor& yt = p.y;
    const int64_t mult = p.kg(), K = p.k, C = p.c;
    const std::vector<Acc> wt = filter_by_tap<Acc, S>(p);
    const int nt = conv_threads();
    std::vector<std::vector<Acc>> bufs(static_cast<size_t>(conv_slots()));
    for (int i = 0; i < nt; ++i) bufs[static_cast<size_t>(i)].resize(static_cast<size_t>(p.in[2] * C));
    parallel_tasks(p.n * p.in[1], [&](int64_t task, int slot) {
        const int64_t n = task / p.in[1], ih = task % p.in[1];
        Acc* acc = bufs[static_cast<size_t>(slot)].data();
        std::fill(acc, acc + p.in[2] * C, Acc(0));
        for (int64_t r = 0; r < p.filt[1]; ++r) {
            const int64_t nh = ih + p.pad[1] - tap_offset(p, 1, r);
            if (nh < 0 || nh % p.stride[1] != 0 || nh / p.stride[1] >= p.out[1]) continue;
            const int64_t oh = nh / p.stride[1];
            for (int64_t s = 0; s < p.filt[2]; ++s) {
                const int64_t off = tap_offset(p, 2, s) - p.pad[2];  // iw = ow * stride + off
                int64_t lo, hi;
                valid_range(off, p.stride[2], p.in[2], p.out[2], &lo, &hi);
                const Acc* wf = wt.data() + (r * p.filt[2] + s) * K;
                const S* dyrow = dy + yt.offset(n, 0, 0, oh, 0);
                if constexpr (std::is_same_v<S, Acc>) {
                    if (mult == 1 && hi > lo) {
                        mul_add_rows(acc + (lo * p.stride[2] + off) * C, p.stride[2] * C, wf, dyrow + lo * yt.strides[4],
                                     yt.strides[4], hi - lo, K);
                        continue;
                    }
                }
                for (int64_t ow = lo; ow < hi; ++ow) {
                    const S* dp = dyrow + ow * yt.strides[4];
                    Acc* a = acc + (ow * p.stride[2] + off) * C;
                    if (mult == 1) {
                        for (int64_t k = 0; k < K; ++k) a[k] += wf[k] * load<Acc>(dp, k);
                    } else {
                        for (int64_t k = 0; k < K; ++k) a[k / mult] += wf[k] * load<Acc>(dp, k);
                    }
                }
            }
        }
        for (int64_t iw = 0; iw < p.in[2]; ++iw) store(p, p.x_data, p.x, acc + iw * C, C, true, n, 0, ih, iw);
    });
}

template <class Acc, class S>
void bwd_filter_cl(const ConvProblem& p) {
    const S* x = static_cast<const S*>(p.x_data);
    const S* dy = static_cast<const S*>(p.y_data);
    const ConvTensor& xt = p.x;
    const ConvTensor& yt = p.y;
    const int64_t mult = p.kg(), K = p.k, taps = p.filt[1] * p.filt[2];
    const int64_t rows = p.n * p.out[1];
    // Slot s sums output rows [ceil(s R / S), ceil((s + 1) R / S)); the slots are added in order.
    const int64_t slots = conv_slots();
    auto first_row = [&](int64_t s) { return ceil_div(s * rows, slots); };
    std::vector<Acc> parts(static_cast<size_t>(slots * taps * K), Acc(0));
    parallel_tasks(slots, [&](int64_t s, int) {
        Acc* acc = parts.data() + s * taps * K;
        for (int64_t row = first_row(s); row < first_row(s + 1); ++row) {
            const int64_t n = row / p.out[1], oh = row % p.out[1];
            for (int64_t r = 0; r < p.filt[1]; ++r) {
                const int64_t ih = oh * p.stride[1] - p.pad[1] + tap_offset(p, 1, r);
                if (ih < 0 || ih >= p.in[1]) continue;
                for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                    const int64_t off = tap_offset(p, 2, fs) - p.pad[2];
                    int64_t lo, hi;
                    valid_range(off, p.stride[2], p.in[2], p.out[2], &lo, &hi);
                    Acc* a = acc + (r * p.filt[2] + fs) * K;
                    const S* dyrow = dy + yt.offset(n, 0, 0, oh, 0);
                    const S* xrow = x + xt.offset(n, 0, 0, ih, 0) + off * xt.strides[4];
                    const int64_t xstep = p.stride[2] * xt.strides[4];
                    if constexpr (std::is_same_v<S, Acc>) {
                        if (mult == 1) {
                            dot_rows(a, dyrow + lo * yt.strides[4], yt.strides[4], xrow + lo * xstep, xstep, hi - lo, K);
                            continue;
                        }
                    }
                    for (int64_t ow = lo; ow < hi; ++ow) {
                        const S* dp = dyrow + ow * yt.strides[4];
                        const S* xp = xrow + ow * xstep;
                        if (mult == 1) {
                            for (int64_t k = 0; k < K; ++k) a[k] += load<Acc>(dp, k) * load<Acc>(xp, k);
                        } else {
                            for (int64_t k = 0; k < K; ++k) a[k] += load<Acc>(dp, k) * load<Acc>(xp, k / mult);
                        }
                    }
                }
            }
        }
    });
    Acc* sum = parts.data();
    for (int64_t s = 1; s < slots; ++s) {
        const Acc* part = parts.data() + s * taps * K;
        for (int64_t i = 0; i < taps * K; ++i) sum[i] += part[i];
    }
    for (int64_t k = 0; k < K; ++k)
        for (int64_t f = 0; f < taps; ++f)
            blend_store(p, p.w_data, p.w, static_cast<double>(sum[f * K + k]), k, 0, 0, f / p.filt[2], f % p.filt[2]);
}

bool float_type(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

bool channels_last(const ConvProblem& p) { return p.x.strides[1] == 1 && p.y.strides[1] == 1 && p.c > 1; }

template <class Acc, class S>
void run(const ConvProblem& p) {
    const bool cl = channels_last(p);
    switch (p.kind) {
        case ConvKind::fwd: cl ? fwd_cl<Acc, S>(p) : fwd_planar<Acc, S>(p); break;
        case ConvKind::bwd_data: cl ? bwd_data_cl<Acc, S>(p) : bwd_data_planar<Acc, S>(p); break;
        case ConvKind::bwd_filter: cl ? bwd_filter_cl<Acc, S>(p) : bwd_filter_planar<Acc, S>(p); break;
    }
}

class DepthwiseConv final : public core::Impl<ConvProblem> {
public:
    const char* name() const override { return "cpu_depthwise_conv"; }

    Status check(const ConvProblem& p) const override {
        ODNN_REQUIRE_SUPPORTED(p.cg() == 1 && p.groups == p.c, "not depthwise (%lld channels per group)",
                               static_cast<long long>(p.cg()));
        ODNN_REQUIRE_SUPPORTED(p.in[0] == 1 && p.out[0] == 1 && p.filt[0] == 1, "3-D convolution");
        ODNN_REQUIRE_SUPPORTED(float_type(p.x.dtype) && p.w.dtype == p.x.dtype && p.y.dtype == p.x.dtype,
                               "data type %s", core::dtype_name(p.x.dtype));
        ODNN_REQUIRE_SUPPORTED(p.x.vect == 1 && p.y.vect == 1 && p.w.vect == 1, "vectorized layouts");
        return Status::ok();
    }

    Status execute(const core::Handle&, const ConvProblem& p) const override {
        switch (p.x.dtype) {
            case CUDNN_DATA_DOUBLE: run<double, double>(p); break;
            case CUDNN_DATA_HALF: run<float, HalfBits>(p); break;
            case CUDNN_DATA_BFLOAT16: run<float, Bf16Bits>(p); break;
            default: run<float, float>(p); break;
        }
        return Status::ok();
    }
};

}  // namespace

// Above cpu_direct_conv, which it replaces for 2-D depthwise problems.
ODNN_REGISTER_IMPL(cpu, ConvProblem, DepthwiseConv, core::kPriorityFast + 10);

}  // namespace odnn::cpu
