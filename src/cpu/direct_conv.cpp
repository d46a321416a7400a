// Direct convolutions: no workspace, no GEMM. Loops over output rows with the innermost
// loop along W (contiguous for NCHW-like data, so it vectorizes), accumulating in fp32
// (fp64 for DOUBLE, int32 for 8-bit data). Serves the implicit-GEMM ids that promise no
// workspace (forward IMPLICIT_GEMM, backward ALGO_0) for every shape, and every id for
// shapes where per-group GEMMs would be tiny (depthwise, a few channels per group).
// Depthwise convolutions on channels-last data get loops vectorized along channels.
// Each output element is produced by one thread: results are deterministic.
#include <algorithm>
#include <type_traits>
#include <cstring>
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

inline int64_t tap(const ConvProblem& p, int dim, int64_t f) { return p.flip ? p.filt[dim] - 1 - f : f; }

constexpr int kLanes = 16;

// Output columns ow whose input column ow * stride + off lies in [0, in_w).
inline void valid_range(int64_t off, int64_t stride, int64_t in_w, int64_t out_w, int64_t* lo, int64_t* hi) {
    *lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
    *hi = in_w - 1 - off < 0 ? 0 : std::min(out_w, (in_w - 1 - off) / stride + 1);
    if (*hi < *lo) *hi = *lo;
}

// Per filter column fs: the input offset (iw = ow * stride + off) and the range of output
// columns whose input column is inside the image. Computed once per call.
struct ColumnTaps {
    std::vector<int64_t> off, lo, hi;
    explicit ColumnTaps(const ConvProblem& p) {
        for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
            const int64_t o = tap(p, 2, fs) * p.dil[2] - p.pad[2];
            int64_t l, h;
            valid_range(o, p.stride[2], p.in[2], p.out[2], &l, &h);
            off.push_back(o);
            lo.push_back(l);
            hi.push_back(h);
        }
    }
};

bool float_storage(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

enum class Along { w, c };

// A run of `count` accumulators into output tensor t from element (n, c, d, h, w), along W
// or along C: typed stores for floating-point outputs without the fused epilogue, the
// element-wise blend otherwise.
template <class Acc>
void write_run(const ConvProblem& p, void* base, const ConvTensor& t, const Acc* acc, int64_t count, Along along,
               int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) {
    if constexpr (std::is_floating_point_v<Acc>) {
        const bool dbl = t.dtype == CUDNN_DATA_DOUBLE;
        if (!p.epi.enabled && t.vect == 1 && float_storage(t.dtype) && dbl == std::is_same_v<Acc, double>) {
            const int64_t stride = along == Along::w ? t.strides[4] : t.strides[1];
            with_storage(t.dtype, [&](auto tag) {
                using S = decltype(tag);
                if constexpr (std::is_same_v<S, double> == std::is_same_v<Acc, double>)
                    store_run(static_cast<S*>(base) + t.offset(n, c, d, h, w), stride, acc, count,
                              static_cast<Acc>(p.alpha), static_cast<Acc>(p.beta));
            });
            return;
        }
    }
    for (int64_t i = 0; i < count; ++i) {
        const double v = static_cast<double>(acc[i]);
        if (along == Along::w) blend_store(p, base, t, v, n, c, d, h, w + i);
        else blend_store(p, base, t, v, n, c + i, d, h, w);
    }
}

template <class Acc, class SX, class SW>
void fwd_rows(const ConvProblem& p) {
    const SX* x = static_cast<const SX*>(p.x_data);
    const SW* w = static_cast<const SW*>(p.w_data);
    const ConvTensor& xt = p.x;
    const int64_t cg = p.cg(), kg = p.kg();
    const int64_t rows = p.n * p.k * p.out[0] * p.out[1];
    const int64_t sw = xt.strides[4] * p.stride[2];
    const ColumnTaps cols(p);
    const ConvTensor& wt = p.w;
#pragma omp parallel if (p.flops() > 2e5)
    {
        std::vector<Acc> acc(static_cast<size_t>(p.out[2]));
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; ++row) {
            const int64_t n = row / (p.k * p.out[0] * p.out[1]), k = row / (p.out[0] * p.out[1]) % p.k;
            const int64_t od = row / p.out[1] % p.out[0], oh = row % p.out[1];
            const int64_t g = k / kg;
            std::fill(acc.begin(), acc.end(), Acc(0));
            for (int64_t cl = 0; cl < cg; ++cl) {
                const SX* xc = x + n * xt.strides[0] + (g * cg + cl) * xt.strides[1];
                for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
                    const int64_t id = od * p.stride[0] - p.pad[0] + tap(p, 0, ft) * p.dil[0];
                    if (id < 0 || id >= p.in[0]) continue;
                    for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                        const int64_t ih = oh * p.stride[1] - p.pad[1] + tap(p, 1, fr) * p.dil[1];
                        if (ih < 0 || ih >= p.in[1]) continue;
                        const SX* xr = xc + id * xt.strides[2] + ih * xt.strides[3];
                        const SW* wr = w + k * wt.strides[0] + cl * wt.strides[1] + ft * wt.strides[2] +
                                       fr * wt.strides[3];
                        for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                            const Acc wv = static_cast<Acc>(to_float(wr[fs * wt.strides[4]]));
                            const int64_t off = cols.off[static_cast<size_t>(fs)];
                            const int64_t lo = cols.lo[static_cast<size_t>(fs)], hi = cols.hi[static_cast<size_t>(fs)];
                            Acc* a = acc.data();
                            const SX* xs = xr + off * xt.strides[4];
                            if (sw == 1) {
                                for (int64_t ow = lo; ow < hi; ++ow) a[ow] += wv * static_cast<Acc>(to_float(xs[ow]));
                            } else {
                                for (int64_t ow = lo; ow < hi; ++ow)
                                    a[ow] += wv * static_cast<Acc>(to_float(xs[ow * sw]));
                            }
                        }
                    }
                }
            }
            write_run(p, p.y_data, p.y, acc.data(), p.out[2], Along::w, n, k, od, oh, 0);
        }
    }
}

template <class Acc, class S>
void bwd_data_rows(const ConvProblem& p) {
    const S* dy = static_cast<const S*>(p.y_data);
    const S* w = static_cast<const S*>(p.w_data);
    const ConvTensor& yt = p.y;
    const int64_t cg = p.cg(), kg = p.kg();
    const int64_t rows = p.n * p.c * p.in[0] * p.in[1];
    const ColumnTaps cols(p);
    const ConvTensor& wt = p.w;
#pragma omp parallel if (p.flops() > 2e5)
    {
        std::vector<Acc> acc(static_cast<size_t>(p.in[2]));
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; ++row) {
            const int64_t n = row / (p.c * p.in[0] * p.in[1]), c = row / (p.in[0] * p.in[1]) % p.c;
            const int64_t id = row / p.in[1] % p.in[0], ih = row % p.in[1];
            const int64_t g = c / cg, cl = c % cg;
            std::fill(acc.begin(), acc.end(), Acc(0));
            for (int64_t kl = 0; kl < kg; ++kl) {
                const int64_t k = g * kg + kl;
                const S* dyk = dy + n * yt.strides[0] + k * yt.strides[1];
                for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
                    const int64_t nd = id + p.pad[0] - tap(p, 0, ft) * p.dil[0];
                    if (nd < 0 || nd % p.stride[0] != 0 || nd / p.stride[0] >= p.out[0]) continue;
                    for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                        const int64_t nh = ih + p.pad[1] - tap(p, 1, fr) * p.dil[1];
                        if (nh < 0 || nh % p.stride[1] != 0 || nh / p.stride[1] >= p.out[1]) continue;
                        const S* dyr = dyk + nd / p.stride[0] * yt.strides[2] + nh / p.stride[1] * yt.strides[3];
                        const S* wr = w + k * wt.strides[0] + cl * wt.strides[1] + ft * wt.strides[2] +
                                      fr * wt.strides[3];
                        for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                            const Acc wv = static_cast<Acc>(to_float(wr[fs * wt.strides[4]]));
                            const int64_t off = cols.off[static_cast<size_t>(fs)];  // iw = ow * stride + off
                            const int64_t lo = cols.lo[static_cast<size_t>(fs)], hi = cols.hi[static_cast<size_t>(fs)];
                            Acc* a = acc.data();
                            if (p.stride[2] == 1 && yt.strides[4] == 1) {
                                for (int64_t ow = lo; ow < hi; ++ow)
                                    a[ow + off] += wv * static_cast<Acc>(to_float(dyr[ow]));
                            } else {
                                for (int64_t ow = lo; ow < hi; ++ow)
                                    a[ow * p.stride[2] + off] += wv * static_cast<Acc>(to_float(dyr[ow * yt.strides[4]]));
                            }
                        }
                    }
                }
            }
            write_run(p, p.x_data, p.x, acc.data(), p.in[2], Along::w, n, c, id, ih, 0);
        }
    }
}

template <class Acc, class S>
void bwd_filter_rows(const ConvProblem& p) {
    const S* x = static_cast<const S*>(p.x_data);
    const S* dy = static_cast<const S*>(p.y_data);
    const ConvTensor& xt = p.x;
    const ConvTensor& yt = p.y;
    const int64_t cg = p.cg(), kg = p.kg(), taps = p.filt_pixels();
    const int64_t pairs = p.k * cg;
    const bool contiguous = xt.strides[4] == 1 && yt.strides[4] == 1 && p.stride[2] == 1;
#pragma omp parallel if (p.flops() > 2e5)
    {
        std::vector<Acc> acc(static_cast<size_t>(taps));
#pragma omp for schedule(static)
        for (int64_t kc = 0; kc < pairs; ++kc) {
            const int64_t k = kc / cg, cl = kc % cg, c = k / kg * cg + cl;
            std::fill(acc.begin(), acc.end(), Acc(0));
            for (int64_t n = 0; n < p.n; ++n)
                for (int64_t od = 0; od < p.out[0]; ++od)
                    for (int64_t oh = 0; oh < p.out[1]; ++oh) {
                        const S* dyr = dy + n * yt.strides[0] + k * yt.strides[1] + od * yt.strides[2] +
                                       oh * yt.strides[3];
                        for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
                            const int64_t id = od * p.stride[0] - p.pad[0] + tap(p, 0, ft) * p.dil[0];
                            if (id < 0 || id >= p.in[0]) continue;
                            for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                                const int64_t ih = oh * p.stride[1] - p.pad[1] + tap(p, 1, fr) * p.dil[1];
                                if (ih < 0 || ih >= p.in[1]) continue;
                                const S* xr = x + n * xt.strides[0] + c * xt.strides[1] + id * xt.strides[2] +
                                              ih * xt.strides[3];
                                for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                                    const int64_t off = tap(p, 2, fs) * p.dil[2] - p.pad[2];
                                    int64_t lo, hi;
                                    valid_range(off, p.stride[2], p.in[2], p.out[2], &lo, &hi);
                                    // Fixed-order partial sums in kLanes lanes: vectorizes, stays deterministic.
                                    Acc part[kLanes] = {};
                                    int64_t ow = lo;
                                    if (contiguous) {
                                        const S* xo = xr + off;
                                        for (; ow + kLanes <= hi; ow += kLanes)
                                            for (int l = 0; l < kLanes; ++l)
                                                part[l] += static_cast<Acc>(to_float(dyr[ow + l])) *
                                                           static_cast<Acc>(to_float(xo[ow + l]));
                                    }
                                    Acc sum = 0;
                                    for (int l = 0; l < kLanes; ++l) sum += part[l];
                                    for (; ow < hi; ++ow)
                                        sum += static_cast<Acc>(to_float(dyr[ow * yt.strides[4]])) *
                                               static_cast<Acc>(
                                                   to_float(xr[(ow * p.stride[2] + off) * xt.strides[4]]));
                                    acc[static_cast<size_t>((ft * p.filt[1] + fr) * p.filt[2] + fs)] += sum;
                                }
                            }
                        }
                    }
            for (int64_t f = 0; f < taps; ++f) {
                const int64_t ft = f / (p.filt[1] * p.filt[2]), fr = f / p.filt[2] % p.filt[1], fs = f % p.filt[2];
                blend_store(p, p.w_data, p.w, static_cast<double>(acc[static_cast<size_t>(f)]), k, cl, ft, fr, fs);
            }
        }
    }
}

// Depthwise (one input channel per group) on channels-last x and y: the innermost loops
// run along the output channels of a pixel.
bool depthwise_channels_last(const ConvProblem& p) {
    return p.cg() == 1 && p.x.strides[1] == 1 && p.y.strides[1] == 1 && p.c > 1;
}

template <class Acc, class S>
void fwd_depthwise_cl(const ConvProblem& p) {
    const S* x = static_cast<const S*>(p.x_data);
    const S* w = static_cast<const S*>(p.w_data);
    const ConvTensor& xt = p.x;
    const int64_t kg = p.kg(), taps = p.filt_pixels();
    const int64_t rows = p.n * p.out[0] * p.out[1];
#pragma omp parallel if (p.flops() > 2e5)
    {
        // The filter transposed to (taps x K): contiguous along channels.
        std::vector<Acc> wt(static_cast<size_t>(taps * p.k));
        for (int64_t k = 0; k < p.k; ++k)
            for (int64_t f = 0; f < taps; ++f)
                wt[static_cast<size_t>(f * p.k + k)] = static_cast<Acc>(
                    to_float(w[p.w.offset(k, 0, f / (p.filt[1] * p.filt[2]), f / p.filt[2] % p.filt[1], f % p.filt[2])]));
        std::vector<Acc> acc(static_cast<size_t>(p.k));
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; ++row) {
            const int64_t n = row / (p.out[0] * p.out[1]), od = row / p.out[1] % p.out[0], oh = row % p.out[1];
            for (int64_t ow = 0; ow < p.out[2]; ++ow) {
                std::fill(acc.begin(), acc.end(), Acc(0));
                for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
                    const int64_t id = od * p.stride[0] - p.pad[0] + tap(p, 0, ft) * p.dil[0];
                    if (id < 0 || id >= p.in[0]) continue;
                    for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                        const int64_t ih = oh * p.stride[1] - p.pad[1] + tap(p, 1, fr) * p.dil[1];
                        if (ih < 0 || ih >= p.in[1]) continue;
                        for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                            const int64_t iw = ow * p.stride[2] - p.pad[2] + tap(p, 2, fs) * p.dil[2];
                            if (iw < 0 || iw >= p.in[2]) continue;
                            const S* xp = x + n * xt.strides[0] + id * xt.strides[2] + ih * xt.strides[3] +
                                          iw * xt.strides[4];
                            const Acc* wf = wt.data() + ((ft * p.filt[1] + fr) * p.filt[2] + fs) * p.k;
                            Acc* a = acc.data();
                            if (kg == 1) {
                                for (int64_t k = 0; k < p.k; ++k) a[k] += wf[k] * static_cast<Acc>(to_float(xp[k]));
                            } else {
                                for (int64_t k = 0; k < p.k; ++k)
                                    a[k] += wf[k] * static_cast<Acc>(to_float(xp[k / kg]));
                            }
                        }
                    }
                }
                write_run(p, p.y_data, p.y, acc.data(), p.k, Along::c, n, 0, od, oh, ow);
            }
        }
    }
}

template <class Acc, class S>
void bwd_data_depthwise_cl(const ConvProblem& p) {
    const S* dy = static_cast<const S*>(p.y_data);
    const S* w = static_cast<const S*>(p.w_data);
    const ConvTensor& yt = p.y;
    const int64_t kg = p.kg(), taps = p.filt_pixels();
    const int64_t rows = p.n * p.in[0] * p.in[1];
#pragma omp parallel if (p.flops() > 2e5)
    {
        std::vector<Acc> wt(static_cast<size_t>(taps * p.k));
        for (int64_t k = 0; k < p.k; ++k)
            for (int64_t f = 0; f < taps; ++f)
                wt[static_cast<size_t>(f * p.k + k)] = static_cast<Acc>(
                    to_float(w[p.w.offset(k, 0, f / (p.filt[1] * p.filt[2]), f / p.filt[2] % p.filt[1], f % p.filt[2])]));
        std::vector<Acc> acc(static_cast<size_t>(p.c));
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; ++row) {
            const int64_t n = row / (p.in[0] * p.in[1]), id = row / p.in[1] % p.in[0], ih = row % p.in[1];
            for (int64_t iw = 0; iw < p.in[2]; ++iw) {
                std::fill(acc.begin(), acc.end(), Acc(0));
                for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
                    const int64_t nd = id + p.pad[0] - tap(p, 0, ft) * p.dil[0];
                    if (nd < 0 || nd % p.stride[0] != 0 || nd / p.stride[0] >= p.out[0]) continue;
                    for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                        const int64_t nh = ih + p.pad[1] - tap(p, 1, fr) * p.dil[1];
                        if (nh < 0 || nh % p.stride[1] != 0 || nh / p.stride[1] >= p.out[1]) continue;
                        for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                            const int64_t nw = iw + p.pad[2] - tap(p, 2, fs) * p.dil[2];
                            if (nw < 0 || nw % p.stride[2] != 0 || nw / p.stride[2] >= p.out[2]) continue;
                            const S* dp = dy + n * yt.strides[0] + nd / p.stride[0] * yt.strides[2] +
                                          nh / p.stride[1] * yt.strides[3] + nw / p.stride[2] * yt.strides[4];
                            const Acc* wf = wt.data() + ((ft * p.filt[1] + fr) * p.filt[2] + fs) * p.k;
                            Acc* a = acc.data();
                            if (kg == 1) {
                                for (int64_t c = 0; c < p.c; ++c) a[c] += wf[c] * static_cast<Acc>(to_float(dp[c]));
                            } else {
                                for (int64_t k = 0; k < p.k; ++k)
                                    a[k / kg] += wf[k] * static_cast<Acc>(to_float(dp[k]));
                            }
                        }
                    }
                }
                write_run(p, p.x_data, p.x, acc.data(), p.c, Along::c, n, 0, id, ih, iw);
            }
        }
    }
}

// Depthwise backward filter on channels-last data: each thread owns a block of output
// channels and sums over all pixels in a fixed order (deterministic), vectorized along
// the block.
template <class Acc, class S>
void bwd_filter_depthwise_cl(const ConvProblem& p) {
    const S* x = static_cast<const S*>(p.x_data);
    const S* dy = static_cast<const S*>(p.y_data);
    const ConvTensor& xt = p.x;
    const ConvTensor& yt = p.y;
    const int64_t kg = p.kg(), taps = p.filt_pixels();
    const int64_t blocks = (p.k + kLanes - 1) / kLanes;
#pragma omp parallel if (p.flops() > 2e5)
    {
        std::vector<Acc> acc(static_cast<size_t>(taps * kLanes));
#pragma omp for schedule(static)
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t k0 = b * kLanes, nk = std::min<int64_t>(kLanes, p.k - k0);
            std::fill(acc.begin(), acc.end(), Acc(0));
            for (int64_t n = 0; n < p.n; ++n)
                for (int64_t od = 0; od < p.out[0]; ++od)
                    for (int64_t oh = 0; oh < p.out[1]; ++oh)
                        for (int64_t ow = 0; ow < p.out[2]; ++ow) {
                            const S* dp = dy + n * yt.strides[0] + k0 + od * yt.strides[2] + oh * yt.strides[3] +
                                          ow * yt.strides[4];
                            for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
                                const int64_t id = od * p.stride[0] - p.pad[0] + tap(p, 0, ft) * p.dil[0];
                                if (id < 0 || id >= p.in[0]) continue;
                                for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                                    const int64_t ih = oh * p.stride[1] - p.pad[1] + tap(p, 1, fr) * p.dil[1];
                                    if (ih < 0 || ih >= p.in[1]) continue;
                                    for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                                        const int64_t iw = ow * p.stride[2] - p.pad[2] + tap(p, 2, fs) * p.dil[2];
                                        if (iw < 0 || iw >= p.in[2]) continue;
                                        const S* xp = x + n * xt.strides[0] + id * xt.strides[2] +
                                                      ih * xt.strides[3] + iw * xt.strides[4];
                                        Acc* a = acc.data() + ((ft * p.filt[1] + fr) * p.filt[2] + fs) * kLanes;
                                        if (kg == 1 && nk == kLanes) {
                                            const S* xk = xp + k0;
                                            for (int l = 0; l < kLanes; ++l)
                                                a[l] += static_cast<Acc>(to_float(dp[l])) *
                                                        static_cast<Acc>(to_float(xk[l]));
                                        } else {
                                            for (int64_t l = 0; l < nk; ++l)
                                                a[l] += static_cast<Acc>(to_float(dp[l])) *
                                                        static_cast<Acc>(to_float(xp[(k0 + l) / kg]));
                                        }
                                    }
                                }
                            }
                        }
            for (int64_t l = 0; l < nk; ++l)
                for (int64_t f = 0; f < taps; ++f) {
                    const int64_t ft = f / (p.filt[1] * p.filt[2]), fr = f / p.filt[2] % p.filt[1],
                                  fs = f % p.filt[2];
                    blend_store(p, p.w_data, p.w, static_cast<double>(acc[static_cast<size_t>(f * kLanes + l)]),
                                k0 + l, 0, ft, fr, fs);
                }
        }
    }
}

bool float_type(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

template <class Acc, class S>
void run_float(const ConvProblem& p) {
    switch (p.kind) {
        case ConvKind::fwd:
            if (depthwise_channels_last(p)) fwd_depthwise_cl<Acc, S>(p);
            else fwd_rows<Acc, S, S>(p);
            break;
        case ConvKind::bwd_data:
            if (depthwise_channels_last(p)) bwd_data_depthwise_cl<Acc, S>(p);
            else bwd_data_rows<Acc, S>(p);
            break;
        case ConvKind::bwd_filter:
            if (depthwise_channels_last(p)) bwd_filter_depthwise_cl<Acc, S>(p);
            else bwd_filter_rows<Acc, S>(p);
            break;
    }
}

class DirectConv final : public core::Impl<ConvProblem> {
public:
    const char* name() const override { return "cpu_direct_conv"; }

    Status check(const ConvProblem& p) const override {
        ODNN_REQUIRE_SUPPORTED(p.x.vect == 1 && p.y.vect == 1 && p.w.vect == 1, "vectorized layouts");
        if (float_type(p.x.dtype)) {
            ODNN_REQUIRE_SUPPORTED(algo_is_direct(p) || prefers_direct(p),
                                   "algo %s on this shape runs on cpu_gemm_conv",
                                   core::conv_algo_name(p.kind, p.algo));
            return Status::ok();
        }
        ODNN_REQUIRE_SUPPORTED(p.kind == ConvKind::fwd && (p.x.dtype == CUDNN_DATA_INT8 || p.x.dtype == CUDNN_DATA_UINT8) &&
                                   p.w.dtype == CUDNN_DATA_INT8,
                               "data type %s", core::dtype_name(p.x.dtype));
        return Status::ok();
    }

    Status execute(const core::Handle&, const ConvProblem& p) const override {
        switch (p.x.dtype) {
            case CUDNN_DATA_DOUBLE: run_float<double, double>(p); break;
            case CUDNN_DATA_HALF: run_float<float, HalfBits>(p); break;
            case CUDNN_DATA_BFLOAT16: run_float<float, Bf16Bits>(p); break;
            case CUDNN_DATA_FLOAT: run_float<float, float>(p); break;
            case CUDNN_DATA_INT8: fwd_rows<int32_t, int8_t, int8_t>(p); break;
            case CUDNN_DATA_UINT8: fwd_rows<int32_t, uint8_t, int8_t>(p); break;
            default:
                return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "cpu_direct_conv: data type %s",
                                         core::dtype_name(p.x.dtype));
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, ConvProblem, DirectConv, core::kPriorityFast);

}  // namespace odnn::cpu
