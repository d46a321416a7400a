// 2-D pooling forward and backward (MAX, MAX_DETERMINISTIC, both AVERAGE modes) on FLOAT,
// DOUBLE, HALF or BFLOAT16 tensors (one type for all) that are each densely packed (NCHW,
// NHWC or any other order, the four need not match): one task per (n, c) image plane,
// the window bounds of every output row and column computed once per call, and no
// per-element index arithmetic beyond two strides. Where channels are innermost in
// every operand (NHWC), the channels of a window position are one contiguous run:
// forward takes one task per output row and backward one per image, with the channel
// loop innermost (fwd_channels_last, bwd_channels_last). Max windows without NaN take a
// branch-free path (unrolled for 2x2 and 3x3).
// The rules are the reference's (core/pool_problem.hpp): ties go to the first element
// in window order, NaN follows the propagation flag, averages are summed in double,
// backward sums every contribution to an input element in double in output order and
// blends once (non-overlapping max windows with beta = 0 store alpha * dy directly: the
// same value); results match the reference bit for bit. The kernels are templates on
// the storage type T (cpu/storage.hpp); maxima compare value_t<T> (float for the 16-bit
// types, which hold every such value exactly; double for DOUBLE). HALF planes stored as
// contiguous rows go through float buffers filled by the F16C block conversions
// (cpu/f16c.hpp) where the CPU has them, and HALF channel runs of the channels-innermost
// paths through the run helpers of cpu/storage.hpp (load_run / output_run / store_run):
// the same results without a branchy conversion an element. Other types, ranks, strided
// views and outputs that overlap an input are left to the reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/blend.hpp"
#include "core/impl_registry.hpp"
#include "cpu/dense_layout.hpp"
#include "cpu/f16c.hpp"
#include "cpu/storage.hpp"
#include "core/pool_problem.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

// Work (window positions visited) above which a call is split over threads.
constexpr int64_t kParallelMinWork = int64_t{1} << 15;

// The strides of `t` tile its elements exactly (no gaps, no overlap), in any order.
bool dense(const core::TensorDesc& t) {
    return t.vect_count == 1 && dense_strides(t.nb_dims, t.dims, t.strides);
}

bool same_view(const core::TensorDesc& a, const core::TensorDesc& b) {
    return same_strides(a.nb_dims, a.dims, a.strides, b.nb_dims, b.dims, b.strides);
}

// [first, last) bytes a dense tensor occupies.
struct Bytes {
    const char* lo;
    const char* hi;
};
Bytes bytes_of(const void* p, const core::TensorDesc& t) {
    const char* c = static_cast<const char*>(p);
    return {c, c + static_cast<size_t>(t.span_elements() * (core::dtype_bits(t.dtype) / 8))};
}
bool overlap(Bytes a, Bytes b) { return a.lo < b.hi && b.lo < a.hi; }

Status check_tensor(const core::TensorDesc& t, const char* name, const core::TensorDesc& x) {
    ODNN_RETURN_IF_ERROR(check_storage(t.dtype, name, x.dtype, "x"));
    ODNN_REQUIRE_SUPPORTED(t.nb_dims == 4, "%s is not 4-D", name);
    ODNN_REQUIRE_SUPPORTED(dense(t), "%s is not densely packed", name);
    return Status::ok();
}

Status check_geometry(const core::PoolGeom& g) {
    ODNN_REQUIRE_SUPPORTED(g.nsp == 2, "%d-D pooling (2-D only)", g.nsp);
    ODNN_REQUIRE_SUPPORTED(g.mode == CUDNN_POOLING_MAX || g.mode == CUDNN_POOLING_MAX_DETERMINISTIC ||
                               g.mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ||
                               g.mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                           "pooling mode %d", g.mode);
    return Status::ok();
}

// Window bounds along each spatial dim for every output position, and (AVERAGE modes)
// the divisor of every output: computed once per call.
struct Plan {
    int64_t H = 0, W = 0, OH = 0, OW = 0;
    std::vector<int64_t> h0, h1, w0, w1;  // clipped window [lo, hi) per output row / column
    std::vector<int64_t> ph, pw;          // window positions inside the padded input
    int64_t work = 0;

    explicit Plan(const core::PoolGeom& g) : H(g.in[0]), W(g.in[1]), OH(g.out[0]), OW(g.out[1]) {
        h0.resize(OH), h1.resize(OH), ph.resize(OH);
        w0.resize(OW), w1.resize(OW), pw.resize(OW);
        for (int64_t o = 0; o < OH; ++o) {
            g.window(0, o, &h0[o], &h1[o]);
            if (h1[o] < h0[o]) h1[o] = h0[o];
            ph[o] = g.padded_extent(0, o);
        }
        for (int64_t o = 0; o < OW; ++o) {
            g.window(1, o, &w0[o], &w1[o]);
            if (w1[o] < w0[o]) w1[o] = w0[o];
            pw[o] = g.padded_extent(1, o);
        }
        work = g.n * g.c * OH * OW * std::max<int64_t>(1, g.window_size());
    }
    // Divisor of output (oh, ow) by the mode; the window has `count` input positions.
    double divisor(int mode, int64_t oh, int64_t ow, int64_t count) const {
        if (mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING) return static_cast<double>(count);
        return static_cast<double>(ph[oh]) * static_cast<double>(pw[ow]);
    }
};

// The element a max window picks, as (h, w) in its plane; h < 0: none (empty window).
struct Pick {
    int64_t h = -1, w = -1;
};

// Max over rows [h0, h1) x columns [w0, w1) of a plane by the reference's rules (an
// empty window gives 0 and no pick).
template <class T, class V = value_t<T>>
inline V window_max(const T* x, int64_t sh, int64_t sw, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                    bool propagate, Pick* pick) {
    V best = 0;
    Pick at, first_nan;
    for (int64_t h = h0; h < h1; ++h) {
        const T* row = x + h * sh;
        for (int64_t w = w0; w < w1; ++w) {
            const V v = load(row[w * sw]);
            if (v != v) {
                if (propagate) {
                    *pick = {h, w};
                    return v;
                }
                if (first_nan.h < 0) first_nan = {h, w};
            } else if (at.h < 0 || v > best) {
                best = v;
                at = {h, w};
            }
        }
    }
    if (at.h < 0 && first_nan.h >= 0) {  // NaNs only
        *pick = first_nan;
        return NAN;
    }
    *pick = at;
    return best;
}

// The same for windows without NaN, branch-free: false (nothing stored) when the window
// holds a NaN, for window_max to decide. KH / KW > 0: the window is KH x KW (unrolled);
// 0: the extents come from the bounds.
template <int KH, int KW, class T, class V>
inline bool window_max_plain(const T* x, int64_t sh, int64_t sw, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                             V* out, Pick* pick) {
    const int64_t nh = KH > 0 ? KH : h1 - h0, nw = KW > 0 ? KW : w1 - w0;
    if (nh <= 0 || nw <= 0) {
        *out = 0;
        *pick = Pick();
        return true;
    }
    const T* base = x + h0 * sh + w0 * sw;
    V best = load(base[0]);
    int64_t br = 0, bs = 0;
    bool nan = false;
    for (int64_t r = 0; r < nh; ++r) {
        const T* row = base + r * sh;
        for (int64_t s = 0; s < nw; ++s) {
            const V v = load(row[s * sw]);
            nan |= v != v;
            const bool gt = v > best;  // strict: the first of equal values stays
            best = gt ? v : best;
            br = gt ? r : br;
            bs = gt ? s : bs;
        }
    }
    if (nan) return false;
    *out = best;
    *pick = {h0 + br, w0 + bs};
    return true;
}

// window_max through the branch-free kernels where the window has no NaN.
template <class T, class V = value_t<T>>
inline V pooled_max(const T* x, int64_t sh, int64_t sw, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                    bool propagate, Pick* pick) {
    V v;
    bool done;
    if (h1 - h0 == 2 && w1 - w0 == 2)
        done = window_max_plain<2, 2>(x, sh, sw, h0, h1, w0, w1, &v, pick);
    else if (h1 - h0 == 3 && w1 - w0 == 3)
        done = window_max_plain<3, 3>(x, sh, sw, h0, h1, w0, w1, &v, pick);
    else
        done = window_max_plain<0, 0>(x, sh, sw, h0, h1, w0, w1, &v, pick);
    return done ? v : window_max(x, sh, sw, h0, h1, w0, w1, propagate, pick);
}

// 2x2 windows at stride 2 along unit-stride rows r0 and r1 (the window's two rows), for n
// consecutive outputs whose windows lie inside the plane: the max of each and which of
// its four elements it is (0..3 in window order, the first of equal values). Vectorises;
// false when a NaN was seen (the outputs are then to be recomputed by the rules).
template <class T, class V>
inline bool max_2x2_s2_row(const T* __restrict r0, const T* __restrict r1, int64_t n, V* __restrict val,
                           int32_t* __restrict which) {
    int nan = 0;
    for (int64_t i = 0; i < n; ++i) {
        const V a = load(r0[2 * i]), b = load(r0[2 * i + 1]), c = load(r1[2 * i]), d = load(r1[2 * i + 1]);
        nan |= (a != a) | (b != b) | (c != c) | (d != d);
        V m = a;
        int32_t k = 0;
        bool gt = b > m;
        m = gt ? b : m;
        k = gt ? 1 : k;
        gt = c > m;
        m = gt ? c : m;
        k = gt ? 2 : k;
        gt = d > m;
        m = gt ? d : m;
        k = gt ? 3 : k;
        val[i] = m;
        which[i] = k;
    }
    return nan == 0;
}

// The same for 3x3 windows at stride 2 along rows r0, r1, r2 (which: 0..8 in window order).
template <class T, class V>
inline bool max_3x3_s2_row(const T* __restrict r0, const T* __restrict r1, const T* __restrict r2,
                           int64_t n, V* __restrict val, int32_t* __restrict which) {
    int nan = 0;
    for (int64_t i = 0; i < n; ++i) {
        const V v[9] = {load(r0[2 * i]), load(r0[2 * i + 1]), load(r0[2 * i + 2]),
                        load(r1[2 * i]), load(r1[2 * i + 1]), load(r1[2 * i + 2]),
                        load(r2[2 * i]), load(r2[2 * i + 1]), load(r2[2 * i + 2])};
        V m = v[0];
        int32_t k = 0;
        nan |= v[0] != v[0];
        for (int j = 1; j < 9; ++j) {
            nan |= v[j] != v[j];
            const bool gt = v[j] > m;
            m = gt ? v[j] : m;
            k = gt ? j : k;
        }
        val[i] = m;
        which[i] = k;
    }
    return nan == 0;
}

// Per-thread scratch of one plane's max pooling: values and picks of every output.
template <class V>
struct MaxScratch {
    std::vector<V> val;
    std::vector<Pick> pick;
    std::vector<int32_t> which;
    explicit MaxScratch(const Plan& plan)
        : val(static_cast<size_t>(plan.OH * plan.OW)), pick(val.size()), which(static_cast<size_t>(plan.OW)) {}
};

// Max pooling of one plane into s.val / s.pick (row-major over the outputs). 2x2 and 3x3
// windows at stride 2 over unit-stride rows take the vector row kernels where they lie
// inside the plane; everything else (and rows holding NaN) goes output by output.
template <class T, class V>
void plane_max(const core::PoolGeom& g, const Plan& plan, const T* xp, int64_t sh, int64_t sw, MaxScratch<V>& s) {
    const int64_t k = g.win[0];  // the row kernels' window: k x k, stride 2
    const bool rows = sw == 1 && (k == 2 || k == 3) && g.win[1] == k && g.stride[1] == 2;
    // Outputs [lo, hi) whose k-wide windows start at 2 * ow - pad >= 0 and end <= W.
    const int64_t pad = g.pad[1];
    const int64_t lo = rows ? std::min<int64_t>(plan.OW, (pad + 1) / 2) : 0;
    const int64_t hi = rows ? std::max(lo, std::min<int64_t>(plan.OW, core::floor_div(plan.W + pad - k, 2) + 1)) : 0;
    for (int64_t oh = 0; oh < plan.OH; ++oh) {
        const int64_t h0 = plan.h0[oh], h1 = plan.h1[oh];
        V* val = s.val.data() + oh * plan.OW;
        Pick* pick = s.pick.data() + oh * plan.OW;
        int64_t vec_lo = 0, vec_hi = 0;  // outputs the row kernel covered
        if (rows && h1 - h0 == k && hi > lo) {
            const T* r0 = xp + h0 * sh + (2 * lo - pad);
            const bool ok = k == 2 ? max_2x2_s2_row(r0, r0 + sh, hi - lo, val + lo, s.which.data())
                                   : max_3x3_s2_row(r0, r0 + sh, r0 + 2 * sh, hi - lo, val + lo, s.which.data());
            if (ok) {
                for (int64_t ow = lo; ow < hi; ++ow) {
                    const int32_t t = s.which[static_cast<size_t>(ow - lo)];
                    pick[ow] = {h0 + t / k, plan.w0[ow] + t % k};
                }
                vec_lo = lo;
                vec_hi = hi;
            }
        }
        for (int64_t ow = 0; ow < plan.OW; ++ow) {
            if (ow == vec_lo && vec_hi > vec_lo) {
                ow = vec_hi - 1;
                continue;
            }
            val[ow] = pooled_max(xp, sh, sw, h0, h1, plan.w0[ow], plan.w1[ow], g.propagate_nan, &pick[ow]);
        }
    }
}

// HALF planes through F16C (f16c::usable()): a task converts its plane's inputs to float
// buffers with the block conversions, runs the FLOAT plane code on them and converts the
// output buffer back. The values are the same: a HALF loads as the float it is exactly, and
// a float result rounds to HALF as store<Half> rounds (double -> float -> HALF); maxima
// compare float either way. Only where every operand's (h, w) planes are contiguous rows.
template <class T>
bool f16c_planes(std::initializer_list<const core::TensorDesc*> ts) {
    if (!std::is_same_v<T, Half> || !f16c::usable()) return false;
    for (const core::TensorDesc* t : ts)
        if (t->strides[3] != 1 || t->strides[2] != t->dims[3]) return false;
    return true;
}

// Forward of one plane, W along sxw / syw: y from x (TY is TX, or float buffers standing
// for a HALF plane), blended; maxima through plane_max into *scratch.
template <class TX, class TY>
void fwd_plane(const core::PoolGeom& g, const Plan& plan, const TX* xp, int64_t sxh, int64_t sxw, TY* yp,
               int64_t syh, int64_t syw, double alpha, double beta, MaxScratch<value_t<TX>>* scratch) {
    const bool is_max = g.is_max();
    if (is_max) plane_max(g, plan, xp, sxh, sxw, *scratch);
    for (int64_t oh = 0; oh < plan.OH; ++oh) {
        const int64_t h0 = plan.h0[oh], h1 = plan.h1[oh];
        TY* yrow = yp + oh * syh;
        for (int64_t ow = 0; ow < plan.OW; ++ow) {
            const int64_t w0 = plan.w0[ow], w1 = plan.w1[ow];
            double r;
            if (is_max) {
                r = static_cast<double>(scratch->val[static_cast<size_t>(oh * plan.OW + ow)]);
            } else {
                double sum = 0.0;
                for (int64_t h = h0; h < h1; ++h)
                    for (int64_t w = w0; w < w1; ++w) sum += static_cast<double>(load(xp[h * sxh + w * sxw]));
                const double div = plan.divisor(g.mode, oh, ow, (h1 - h0) * (w1 - w0));
                r = div > 0 ? sum / div : 0.0;
            }
            TY& out = yrow[ow * syw];
            out = blend(r, alpha, beta, out);
        }
    }
}

// The max of a non-empty window for C channels stored innermost (v(h, w) points at the C
// values of one position), by the reference's rules per channel: taps in window order,
// the first of equal values, the first NaN when NaN propagates, otherwise NaNs skipped
// unless the window holds nothing else (then its first NaN). best[c] is the value, at[c]
// the tap index in window order (row-major over the clipped window). Vectorises;
// channels_window_max_by picks the NaN rule.
template <bool Propagate, class X, class V>
void channels_window_max(X v, int64_t h0, int64_t h1, int64_t w0, int64_t w1, int64_t C, V* best, int32_t* at) {
    int32_t k = 0;
    for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w, ++k) {
            const auto* e = v(h, w);
            if (k == 0) {
                for (int64_t c = 0; c < C; ++c) best[c] = load(e[c]);
                std::fill(at, at + C, 0);
                continue;
            }
            for (int64_t c = 0; c < C; ++c) {
                const V a = best[c], x = load(e[c]);
                const bool take = Propagate ? a == a && (x != x || x > a) : x == x && (a != a || x > a);
                best[c] = take ? x : a;
                at[c] = take ? k : at[c];
            }
        }
}

template <class X, class V>
void channels_window_max_by(bool propagate, X v, int64_t h0, int64_t h1, int64_t w0, int64_t w1, int64_t C,
                            V* best, int32_t* at) {
    if (propagate)
        channels_window_max<true>(v, h0, h1, w0, w1, C, best, at);
    else
        channels_window_max<false>(v, h0, h1, w0, w1, C, best, at);
}

// out[c] = alpha * r[c] (+ beta * out[c], read only when beta != 0), in double, rounded once.
template <class T, class R>
void blend_channels(T* out, const R* r, int64_t C, double alpha, double beta) {
    if (beta == 0.0) {
        for (int64_t c = 0; c < C; ++c) out[c] = store<T>(alpha * static_cast<double>(r[c]));
    } else {
        for (int64_t c = 0; c < C; ++c)
            out[c] = store<T>(alpha * static_cast<double>(r[c]) + beta * static_cast<double>(load(out[c])));
    }
}

// The channels-innermost paths read and write HALF a channel run at a time through float
// buffers (load_run / output_run / store_run: F16C where usable); the other types are
// read and written in place (a BFLOAT16 load is a shift that vectorises as it is).
template <class T>
constexpr bool half_runs = std::is_same_v<T, Half>;

// The C channels at p, read: through buf for HALF, in place otherwise.
template <class T>
inline auto channel_run(const T* p, int64_t C, value_t<T>* buf) {
    if constexpr (half_runs<T>)
        return load_run(p, C, buf);
    else
        return p;
}

// blend_channels into the C channels at out, through buf for HALF.
template <class T, class R>
void blend_channel_run(T* out, const R* r, int64_t C, double alpha, double beta, value_t<T>* buf) {
    if constexpr (half_runs<T>) {
        value_t<T>* o = output_run(out, C, beta != 0.0, buf);
        blend_channels(o, r, C, alpha, beta);
        store_run(o, out, C);
    } else {
        blend_channels(out, r, C, alpha, beta);
    }
}

// Forward with channels innermost in x and y (NHWC and the like, C > 1): one task per
// output row (n, oh); each window's taps in window order, the channel loop innermost
// (vectorised); maxima by channels_window_max, averages summed in double. Channel runs
// by channel_run / blend_channel_run (the thread's buffers xb, yb).
template <class T>
void fwd_channels_last(const core::PoolingFwdProblem& p, const Plan& plan) {
    using V = value_t<T>;
    const core::PoolGeom& g = p.g;
    const T* x = static_cast<const T*>(p.x_data);
    T* y = static_cast<T*>(p.y_data);
    const int64_t C = g.c, rows = g.n * plan.OH;
    const int64_t* sx = p.x.strides;
    const int64_t* sy = p.y.strides;
    const double alpha = p.out.alpha, beta = p.out.beta;
    const bool is_max = g.is_max(), propagate = g.propagate_nan;
#pragma omp parallel if (rows > 1 && plan.work > kParallelMinWork)
    {
        std::vector<V> best(static_cast<size_t>(C));
        std::vector<int32_t> at(static_cast<size_t>(C));
        std::vector<double> sum(static_cast<size_t>(C));
        std::vector<V> xb(half_runs<T> ? static_cast<size_t>(C) : 0), yb(xb.size());
        V* b = best.data();
        double* sm = sum.data();
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; ++row) {
            const int64_t n = row / plan.OH, oh = row % plan.OH;
            const int64_t h0 = plan.h0[oh], h1 = plan.h1[oh];
            const T* xn = x + n * sx[0];
            // The channels of input position (h, w), read (valid until the next call).
            auto pos = [&](int64_t h, int64_t w) { return channel_run(xn + h * sx[2] + w * sx[3], C, xb.data()); };
            T* yrow = y + n * sy[0] + oh * sy[2];
            for (int64_t ow = 0; ow < plan.OW; ++ow) {
                const int64_t w0 = plan.w0[ow], w1 = plan.w1[ow];
                T* out = yrow + ow * sy[3];
                if (is_max) {
                    if (h1 <= h0 || w1 <= w0)
                        std::fill(b, b + C, V(0));  // empty window: 0
                    else
                        channels_window_max_by(propagate, pos, h0, h1, w0, w1, C, b, at.data());
                    blend_channel_run(out, b, C, alpha, beta, yb.data());
                    continue;
                }
                std::fill(sm, sm + C, 0.0);
                for (int64_t h = h0; h < h1; ++h)
                    for (int64_t w = w0; w < w1; ++w) {
                        const auto* v = pos(h, w);
                        for (int64_t c = 0; c < C; ++c) sm[c] += static_cast<double>(load(v[c]));
                    }
                const double div = plan.divisor(g.mode, oh, ow, (h1 - h0) * (w1 - w0));
                for (int64_t c = 0; c < C; ++c) sm[c] = div > 0 ? sm[c] / div : 0.0;
                blend_channel_run(out, sm, C, alpha, beta, yb.data());
            }
        }
    }
}

class FastPoolingFwd final : public core::Impl<core::PoolingFwdProblem> {
public:
    const char* name() const override { return "fast_pooling_fwd_2d"; }
    Status check(const core::PoolingFwdProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_geometry(p.g));
        ODNN_RETURN_IF_ERROR(check_tensor(p.x, "x", p.x));
        ODNN_RETURN_IF_ERROR(check_tensor(p.y, "y", p.x));
        ODNN_REQUIRE_SUPPORTED(!overlap(bytes_of(p.x_data, p.x), bytes_of(p.y_data, p.y)), "y overlaps x");
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::PoolingFwdProblem& p) const override {
        with_storage(p.x.dtype, [&](auto tag) { run<decltype(tag)>(p); });
        return Status::ok();
    }

private:
    template <class T>
    static void run(const core::PoolingFwdProblem& p) {
        using V = value_t<T>;
        const core::PoolGeom& g = p.g;
        const Plan plan(g);
        if (g.c > 1 && p.x.strides[1] == 1 && p.y.strides[1] == 1) {
            fwd_channels_last<T>(p, plan);
            return;
        }
        const T* x = static_cast<const T*>(p.x_data);
        T* y = static_cast<T*>(p.y_data);
        const int64_t sxh = p.x.strides[2], sxw = p.x.strides[3], syh = p.y.strides[2], syw = p.y.strides[3];
        const double alpha = p.out.alpha, beta = p.out.beta;
        const int64_t planes = g.n * g.c;
        const bool half_planes = f16c_planes<T>({&p.x, &p.y});
#pragma omp parallel if (planes > 1 && plan.work > kParallelMinWork)
        {
            std::unique_ptr<MaxScratch<V>> scratch(g.is_max() ? new MaxScratch<V>(plan) : nullptr);
            std::vector<float> xb(half_planes ? static_cast<size_t>(plan.H * plan.W) : 0);
            std::vector<float> yb(half_planes ? static_cast<size_t>(plan.OH * plan.OW) : 0);
#pragma omp for schedule(static)
            for (int64_t nc = 0; nc < planes; ++nc) {
                const int64_t n = nc / g.c, c = nc % g.c;
                const T* xp = x + n * p.x.strides[0] + c * p.x.strides[1];
                T* yp = y + n * p.y.strides[0] + c * p.y.strides[1];
                if constexpr (std::is_same_v<T, Half>) {
                    if (half_planes) {
                        f16c::to_float(half_bits(xp), xb.data(), plan.H * plan.W);
                        if (beta != 0.0) f16c::to_float(half_bits(yp), yb.data(), plan.OH * plan.OW);
                        fwd_plane(g, plan, xb.data(), plan.W, 1, yb.data(), plan.OW, 1, alpha, beta, scratch.get());
                        f16c::to_half(yb.data(), half_bits(yp), plan.OH * plan.OW);
                        continue;
                    }
                }
                fwd_plane(g, plan, xp, sxh, sxw, yp, syh, syw, alpha, beta, scratch.get());
            }
        }
    }
};

// Backward with channels innermost in x, dy and dx (C > 1): one task per image. Each
// window picks per channel by the forward's rules (the tap index kept beside the value,
// the channel loop innermost), every contribution is summed in double in output order
// into the image's accumulator [h][w][c], which is blended into dx once at the end (x
// and dy of the image are read before its dx is written: either may be dx). Channel runs
// as in fwd_channels_last (buffers xb, db, ob).
template <class T>
void bwd_channels_last(const core::PoolingBwdProblem& p, const Plan& plan) {
    using V = value_t<T>;
    const core::PoolGeom& g = p.g;
    const T* x = static_cast<const T*>(p.x_data);
    const T* dy = static_cast<const T*>(p.dy_data);
    T* dx = static_cast<T*>(p.dx_data);
    const int64_t C = g.c, H = plan.H, W = plan.W;
    const int64_t* sx = p.x.strides;
    const int64_t* sdy = p.dy.strides;
    const int64_t* sdx = p.dx.strides;
    const double alpha = p.out.alpha, beta = p.out.beta;
    const bool is_max = g.is_max(), propagate = g.propagate_nan;
#pragma omp parallel if (g.n > 1 && plan.work > kParallelMinWork)
    {
        std::vector<double> acc(static_cast<size_t>(H * W * C));
        std::vector<V> best(static_cast<size_t>(C));
        std::vector<int32_t> at(static_cast<size_t>(C));
        std::vector<double> share(static_cast<size_t>(C));
        std::vector<V> xb(half_runs<T> ? static_cast<size_t>(C) : 0), db(xb.size()), ob(xb.size());
        int32_t* t = at.data();
        double* sh = share.data();
#pragma omp for schedule(static)
        for (int64_t n = 0; n < g.n; ++n) {
            std::fill(acc.begin(), acc.end(), 0.0);
            const T* xn = x + n * sx[0];
            const T* dyn = dy + n * sdy[0];
            auto pos = [&](int64_t h, int64_t w) { return channel_run(xn + h * sx[2] + w * sx[3], C, xb.data()); };
            for (int64_t oh = 0; oh < plan.OH; ++oh) {
                const int64_t h0 = plan.h0[oh], h1 = plan.h1[oh];
                for (int64_t ow = 0; ow < plan.OW; ++ow) {
                    const int64_t w0 = plan.w0[ow], w1 = plan.w1[ow], ww = w1 - w0;
                    if (h1 <= h0 || ww <= 0) continue;  // empty window: no gradient
                    const auto* d = channel_run(dyn + oh * sdy[2] + ow * sdy[3], C, db.data());
                    if (!is_max) {
                        const double div = plan.divisor(g.mode, oh, ow, (h1 - h0) * ww);
                        if (!(div > 0)) continue;
                        for (int64_t c = 0; c < C; ++c) sh[c] = static_cast<double>(load(d[c])) / div;
                        for (int64_t h = h0; h < h1; ++h)
                            for (int64_t w = w0; w < w1; ++w) {
                                double* a = acc.data() + (h * W + w) * C;
                                for (int64_t c = 0; c < C; ++c) a[c] += sh[c];
                            }
                        continue;
                    }
                    channels_window_max_by(propagate, pos, h0, h1, w0, w1, C, best.data(), t);
                    for (int64_t c = 0; c < C; ++c) {
                        const int64_t h = h0 + t[c] / ww, w = w0 + t[c] % ww;
                        acc[static_cast<size_t>((h * W + w) * C + c)] += static_cast<double>(load(d[c]));
                    }
                }
            }
            T* dxn = dx + n * sdx[0];
            for (int64_t h = 0; h < H; ++h)
                for (int64_t w = 0; w < W; ++w)
                    blend_channel_run(dxn + h * sdx[2] + w * sdx[3], acc.data() + (h * W + w) * C, C, alpha, beta,
                                      ob.data());
        }
    }
}

// Backward of one plane, W along the last stride of each: dx from x and dy (TX; TO is TX,
// or float buffers standing for a HALF plane). Every read of x and dy comes before the
// first write of dx (either may be dx). Max windows that do not overlap (stride >= window)
// give each input element at most one gradient: with beta = 0 (`direct`), dx is zero but
// at the picks, where it is alpha * dy, exactly what summing would give. Otherwise every
// contribution is summed in double in output order into acc, then blended once.
template <class TX, class TO>
void bwd_plane(const core::PoolGeom& g, const Plan& plan, const TX* xp, int64_t sxh, int64_t sxw, const TX* dyp,
               int64_t sdyh, int64_t sdyw, TO* dxp, int64_t sdxh, int64_t sdxw, double alpha, double beta,
               bool direct, double* __restrict acc, MaxScratch<value_t<TX>>* scratch, TO* __restrict grads) {
    const bool is_max = g.is_max();
    if (is_max) plane_max(g, plan, xp, sxh, sxw, *scratch);
    if (direct) {
        for (int64_t oh = 0, o = 0; oh < plan.OH; ++oh)
            for (int64_t ow = 0; ow < plan.OW; ++ow, ++o)
                grads[o] = store<TO>(alpha * static_cast<double>(load(dyp[oh * sdyh + ow * sdyw])));
        const TO zero = store<TO>(0.0);
        for (int64_t h = 0; h < plan.H; ++h) {
            TO* row = dxp + h * sdxh;
            for (int64_t w = 0; w < plan.W; ++w) row[w * sdxw] = zero;
        }
        for (int64_t o = 0; o < plan.OH * plan.OW; ++o) {
            const Pick& pk = scratch->pick[static_cast<size_t>(o)];
            if (pk.h >= 0) dxp[pk.h * sdxh + pk.w * sdxw] = grads[o];
        }
        return;
    }
    std::fill(acc, acc + plan.H * plan.W, 0.0);
    for (int64_t oh = 0; oh < plan.OH; ++oh) {
        const int64_t h0 = plan.h0[oh], h1 = plan.h1[oh];
        for (int64_t ow = 0; ow < plan.OW; ++ow) {
            const int64_t w0 = plan.w0[ow], w1 = plan.w1[ow];
            const double d = static_cast<double>(load(dyp[oh * sdyh + ow * sdyw]));
            if (is_max) {
                const Pick& pk = scratch->pick[static_cast<size_t>(oh * plan.OW + ow)];
                if (pk.h >= 0) acc[static_cast<size_t>(pk.h * plan.W + pk.w)] += d;
            } else {
                const double div = plan.divisor(g.mode, oh, ow, (h1 - h0) * (w1 - w0));
                if (div > 0) {
                    const double share = d / div;
                    for (int64_t h = h0; h < h1; ++h)
                        for (int64_t w = w0; w < w1; ++w) acc[static_cast<size_t>(h * plan.W + w)] += share;
                }
            }
        }
    }
    for (int64_t h = 0; h < plan.H; ++h) {
        const double* a = acc + h * plan.W;
        TO* row = dxp + h * sdxh;
        if (beta == 0.0) {
            for (int64_t w = 0; w < plan.W; ++w) row[w * sdxw] = store<TO>(alpha * a[w]);
        } else {
            for (int64_t w = 0; w < plan.W; ++w)
                row[w * sdxw] = store<TO>(alpha * a[w] + beta * static_cast<double>(load(row[w * sdxw])));
        }
    }
}

// A thread's scratch for bwd_plane: the accumulator, the max picks, the direct path's
// gradients, and (HALF through F16C) the float buffers of x, dy and dx.
template <class T>
struct BwdScratch {
    std::vector<double> acc;
    std::unique_ptr<MaxScratch<value_t<T>>> scratch;
    std::vector<T> grads;
    std::vector<float> grads_f, xb, db, ob;
    BwdScratch(const Plan& plan, bool is_max, bool direct, bool half) {
        const size_t image = static_cast<size_t>(plan.H * plan.W), outs = static_cast<size_t>(plan.OH * plan.OW);
        acc.resize(direct ? 0 : image);
        if (is_max) scratch.reset(new MaxScratch<value_t<T>>(plan));
        if (!half) {
            grads.resize(direct ? outs : 0);
            return;
        }
        grads_f.resize(direct ? outs : 0);
        xb.resize(image);
        db.resize(outs);
        ob.resize(image);
    }
};

class FastPoolingBwd final : public core::Impl<core::PoolingBwdProblem> {
public:
    const char* name() const override { return "fast_pooling_bwd_2d"; }
    Status check(const core::PoolingBwdProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_geometry(p.g));
        ODNN_RETURN_IF_ERROR(check_tensor(p.x, "x", p.x));
        ODNN_RETURN_IF_ERROR(check_tensor(p.dy, "dy", p.x));
        ODNN_RETURN_IF_ERROR(check_tensor(p.dx, "dx", p.x));
        // dx is written plane by plane after that plane's x and dy were read: it may be
        // one of them, viewed alike, but not overlap them otherwise. y is not read.
        const Bytes dx = bytes_of(p.dx_data, p.dx);
        ODNN_REQUIRE_SUPPORTED(!overlap(dx, bytes_of(p.x_data, p.x)) ||
                                   (p.dx_data == p.x_data && same_view(p.dx, p.x)),
                               "dx overlaps x");
        ODNN_REQUIRE_SUPPORTED(!overlap(dx, bytes_of(p.dy_data, p.dy)) ||
                                   (p.dx_data == p.dy_data && same_view(p.dx, p.dy)),
                               "dx overlaps dy");
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::PoolingBwdProblem& p) const override {
        with_storage(p.x.dtype, [&](auto tag) { run<decltype(tag)>(p); });
        return Status::ok();
    }

private:
    template <class T>
    static void run(const core::PoolingBwdProblem& p) {
        const core::PoolGeom& g = p.g;
        const Plan plan(g);
        if (g.c > 1 && p.x.strides[1] == 1 && p.dy.strides[1] == 1 && p.dx.strides[1] == 1) {
            bwd_channels_last<T>(p, plan);
            return;
        }
        const T* x = static_cast<const T*>(p.x_data);
        const T* dy = static_cast<const T*>(p.dy_data);
        T* dx = static_cast<T*>(p.dx_data);
        const int64_t sxh = p.x.strides[2], sxw = p.x.strides[3];
        const int64_t sdyh = p.dy.strides[2], sdyw = p.dy.strides[3];
        const int64_t sdxh = p.dx.strides[2], sdxw = p.dx.strides[3];
        const double alpha = p.out.alpha, beta = p.out.beta;
        const bool is_max = g.is_max();
        const int64_t planes = g.n * g.c;
        const int64_t image = plan.H * plan.W;
        // Non-overlapping max windows with beta = 0 store alpha * dy at the picks (bwd_plane).
        const bool direct = is_max && beta == 0.0 && g.stride[0] >= g.win[0] && g.stride[1] >= g.win[1];
        const bool half_planes = f16c_planes<T>({&p.x, &p.dy, &p.dx});
#pragma omp parallel if (planes > 1 && plan.work > kParallelMinWork)
        {
            BwdScratch<T> s(plan, is_max, direct, half_planes);
#pragma omp for schedule(static)
            for (int64_t nc = 0; nc < planes; ++nc) {
                const int64_t n = nc / g.c, c = nc % g.c;
                const T* xp = x + n * p.x.strides[0] + c * p.x.strides[1];
                const T* dyp = dy + n * p.dy.strides[0] + c * p.dy.strides[1];
                T* dxp = dx + n * p.dx.strides[0] + c * p.dx.strides[1];
                if constexpr (std::is_same_v<T, Half>) {
                    if (half_planes) {
                        // Both inputs are read into the buffers before dx is written (either may be dx).
                        f16c::to_float(half_bits(xp), s.xb.data(), image);
                        f16c::to_float(half_bits(dyp), s.db.data(), plan.OH * plan.OW);
                        if (beta != 0.0) f16c::to_float(half_bits(dxp), s.ob.data(), image);
                        bwd_plane(g, plan, s.xb.data(), plan.W, 1, s.db.data(), plan.OW, 1, s.ob.data(), plan.W, 1,
                                  alpha, beta, direct, s.acc.data(), s.scratch.get(), s.grads_f.data());
                        f16c::to_half(s.ob.data(), half_bits(dxp), image);
                        continue;
                    }
                }
                bwd_plane(g, plan, xp, sxh, sxw, dyp, sdyh, sdyw, dxp, sdxh, sdxw, alpha, beta, direct, s.acc.data(),
                          s.scratch.get(), s.grads.data());
            }
        }
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::PoolingFwdProblem, FastPoolingFwd, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::PoolingBwdProblem, FastPoolingBwd, core::kPriorityFast);

}  // namespace odnn::cpu
