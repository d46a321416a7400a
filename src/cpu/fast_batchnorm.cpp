// Spatial batch normalization (SPATIAL and SPATIAL_PERSISTENT; forward inference,
// forward training, backward; the plain calls and the Ex / generic-family calls with a
// fused activation or add) on FLOAT, HALF or BFLOAT16 data with FLOAT parameters, or
// DOUBLE data with DOUBLE parameters (cuDNN's pairs), when x and every other
// data tensor of the call are laid out alike and densely packed (NCHW, NHWC or any other
// dimension order without gaps).
//
// A packed tensor is then [outer][C][inner] in memory (NCHW: N x C x HW; NHWC: NHW x C
// x 1), the same for every operand, so the kernels walk plain pointers:
//   statistics    sums per channel in double, in fixed blocks of rows (partial sums
//                 added in block order: results do not depend on the thread count);
//                 long contiguous runs (NCHW) summed in 8 lanes, short ones (NHWC)
//                 accumulated across the channels of a row;
//   element-wise  the normalization, activation and blending in double per element,
//                 rounded once to the storage type.
// The kernels are templates on the data's storage type T (cpu/storage.hpp); parameters,
// saved statistics and running averages are param_t<T>. They take the data in spans of
// consecutive elements (load_run / store_run): the 16-bit types through float buffers,
// HALF with the F16C block conversions where the CPU has them; the same values either way.
// Mean and variance are two-pass, as in the reference (core/norm_problem.hpp gives
// the formulas); results agree with it to double rounding. Everything else
// (PER_ACTIVATION, other type pairs, strided views, differing layouts, partly overlapping
// buffers) is left to the reference.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/blend.hpp"
#include "core/impl_registry.hpp"
#include "cpu/dense_layout.hpp"
#include "cpu/storage.hpp"
#include "core/norm_math.hpp"
#include "core/norm_problem.hpp"

namespace odnn::cpu {

using core::NormOps;
using core::Status;

namespace {

// Elements per statistics block, and per call above which loops are split over threads.
constexpr int64_t kBlockElems = int64_t{1} << 15;
constexpr int64_t kParallelMin = int64_t{1} << 15;
// Runs at least this long are summed run by run; shorter ones across the channels of a row.
constexpr int64_t kRunMin = 32;
constexpr int kLanes = 8;
// Elements of a span, the unit the kernels read and write (cpu/storage.hpp's runs): the
// 16-bit types go through buffers of kSpan values; FLOAT and DOUBLE, read in place, take
// longer spans (less loop overhead). Both are whole lane groups.
constexpr int64_t kSpan = 512;
constexpr int64_t kSpanInPlace = 4096;
static_assert(kSpan % kLanes == 0 && kSpanInPlace % kLanes == 0, "spans hold whole lane groups");

template <class T>
constexpr int64_t span_elems = runs_in_place<T> ? kSpanInPlace : kSpan;

bool dense(const core::TensorDesc& t) {
    return t.vect_count == 1 && dense_strides(t.nb_dims, t.dims, t.strides);
}

bool same_view(const core::TensorDesc& a, const core::TensorDesc& b) {
    return same_strides(a.nb_dims, a.dims, a.strides, b.nb_dims, b.dims, b.strides);
}

// Parameter type for data of storage type T: FLOAT, or DOUBLE for DOUBLE data.
template <class T>
using param_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Data buffers of one view (`bytes` long) either are the same buffer or do not overlap.
bool apart_or_same(const void* a, const void* b, int64_t bytes) {
    return a == b || !spans_overlap(a, bytes, b, bytes);
}

Status check_common(const core::NormCommon& k, const core::TensorDesc& x) {
    ODNN_REQUIRE_SUPPORTED(k.g.per_channel, "PER_ACTIVATION mode");
    const cudnnDataType_t param = k.dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    ODNN_REQUIRE_SUPPORTED(storage_supported(k.dtype), "x is %s, not FLOAT, DOUBLE, HALF or BFLOAT16",
                           core::dtype_name(k.dtype));
    ODNN_REQUIRE_SUPPORTED(k.param_dtype == param, "x is %s with %s parameters; the fast path takes %s ones",
                           core::dtype_name(k.dtype), core::dtype_name(k.param_dtype), core::dtype_name(param));
    ODNN_REQUIRE_SUPPORTED(dense(x), "x is not densely packed");
    return Status::ok();
}

Status check_like_x(const core::TensorDesc& t, const char* name, const core::TensorDesc& x) {
    ODNN_REQUIRE_SUPPORTED(same_view(t, x), "%s is not laid out as x", name);
    return Status::ok();
}

// Element (o, c, i) of every data tensor lives at (o * C + c) * inner + i.
struct Layout {
    int64_t outer = 1, c = 1, inner = 1;
    int64_t total() const { return outer * c * inner; }
};

Layout layout_of(const core::NormGeometry& g, const core::TensorDesc& x) {
    Layout l;
    l.c = g.c;
    const int64_t total = g.n * g.c * g.s;
    if (g.c == 1) {  // one channel: any split works; N runs of the rest
        l.outer = g.n;
        l.inner = total / g.n;
    } else {  // dense: the dims inside C's stride fill exactly that stride
        l.inner = x.strides[1];
        l.outer = total / (g.c * l.inner);
    }
    return l;
}

// Per-channel parameter access (SPATIAL: 1 x C x 1 x 1, channel stride strides[1]).
template <class P>
struct Param {
    const P* p;
    int64_t stride;
    Param(const void* ptr, int64_t s) : p(static_cast<const P*>(ptr)), stride(s) {}
    double operator[](int64_t c) const { return static_cast<double>(p[c * stride]); }
};
template <class P>
struct ParamOut {
    P* p;
    int64_t stride;
    ParamOut(void* ptr, int64_t s) : p(static_cast<P*>(ptr)), stride(s) {}
    P& operator[](int64_t c) const { return p[c * stride]; }
};

// The inputs of a kernel, up to three tensors (null: not read), a span at a time in a
// thread's buffers: read(j, n) loads elements [j, j + n) of each (n <= span_elems<T>),
// and s[t][i] is then element j + i of input t.
template <class T>
struct Inputs {
    using V = value_t<T>;
    explicit Inputs(const std::array<const T*, 3>& p) : src(p) {}
    void read(int64_t j, int64_t n) {
        for (int t = 0; t < 3; ++t)
            if (src[t]) s[t] = load_run(src[t] + j, n, buf[t]);
    }
    std::array<const T*, 3> src;
    const V* s[3] = {};
    RunBuffer<T, kSpan> buf[3];
};

// K sums of f(i) over i < len, each in kLanes partial sums added in a fixed order. The
// elements come a span (of `span`) at a time: read(i0, n) readies [i0, i0 + n), and f(i, v)
// then gives element i0 + i. Spans are whole lane groups but the last, so the order is
// len's alone.
template <int K, class R, class F>
inline void lane_sums(int64_t len, int64_t span, R read, F f, double* out) {
    double acc[K][kLanes] = {};
    double tail[K] = {};
    for (int64_t i0 = 0; i0 < len; i0 += span) {
        const int64_t n = std::min(span, len - i0);
        read(i0, n);
        int64_t i = 0;
        for (; i + kLanes <= n; i += kLanes)
            for (int l = 0; l < kLanes; ++l) {
                double v[K];
                f(i + l, v);
                for (int k = 0; k < K; ++k) acc[k][l] += v[k];
            }
        for (; i < n; ++i) {
            double v[K];
            f(i, v);
            for (int k = 0; k < K; ++k) tail[k] += v[k];
        }
    }
    for (int k = 0; k < K; ++k) {
        double s = 0.0;
        for (int l = 0; l < kLanes; ++l) s += acc[k][l];
        out[k] += s + tail[k];
    }
}

// sums[c * K + k] = sum over the elements of channel c of f(c, s, i)[k], where s[t][i] is
// the element of input t (Inputs). The rows are cut into blocks that depend on the shape
// only; each block's partial sums are added in block order, so the result is the same
// whichever threads ran the blocks.
template <int K, class T, class F>
void channel_sums(const Layout& l, const std::array<const T*, 3>& in, F f, double* sums) {
    const int64_t row = l.c * l.inner;
    const int64_t rows_per_block = std::max<int64_t>(1, kBlockElems / std::max<int64_t>(1, row));
    const int64_t blocks = (l.outer + rows_per_block - 1) / rows_per_block;
    std::vector<double> part(static_cast<size_t>(blocks * l.c * K), 0.0);
    const bool parallel = l.total() > kParallelMin;
    if (l.inner >= kRunMin) {
        // One task per (block, channel): runs of `inner` contiguous elements.
#pragma omp parallel for schedule(static) if (parallel && blocks * l.c > 1)
        for (int64_t t = 0; t < blocks * l.c; ++t) {
            const int64_t b = t / l.c, c = t % l.c;
            double* acc = &part[static_cast<size_t>((b * l.c + c) * K)];
            const int64_t o_end = std::min(l.outer, (b + 1) * rows_per_block);
            Inputs<T> x(in);
            for (int64_t o = b * rows_per_block; o < o_end; ++o) {
                const int64_t base = (o * l.c + c) * l.inner;
                lane_sums<K>(
                    l.inner, span_elems<T>, [&](int64_t i0, int64_t n) { x.read(base + i0, n); },
                    [&](int64_t i, double* v) { f(c, x.s, i, v); }, acc);
            }
        }
    } else {
        // One task per block: every row adds its elements to the block's per-channel
        // sums (with inner == 1 the loop over channels vectorises), element by element
        // in the row's order for each channel. A span is `q` whole rows, or where a row
        // is longer than a span, the channels [c0, c0 + cw) of one.
        const int64_t q = std::max<int64_t>(1, span_elems<T> / row);
        const int64_t cw = std::min(l.c, std::max<int64_t>(1, span_elems<T> / l.inner));
#pragma omp parallel for schedule(static) if (parallel && blocks > 1)
        for (int64_t b = 0; b < blocks; ++b) {
            double* acc = &part[static_cast<size_t>(b * l.c * K)];
            const int64_t o_end = std::min(l.outer, (b + 1) * rows_per_block);
            Inputs<T> x(in);
            for (int64_t o = b * rows_per_block; o < o_end; o += q) {
                const int64_t rows = std::min(q, o_end - o);
                for (int64_t c0 = 0; c0 < l.c; c0 += cw) {
                    const int64_t c1 = std::min(l.c, c0 + cw), w = (c1 - c0) * l.inner;
                    x.read((o * l.c + c0) * l.inner, rows * w);
                    for (int64_t r = 0; r < rows; ++r)
                        for (int64_t i = 0; i < l.inner; ++i)
                            for (int64_t c = c0; c < c1; ++c) {
                                double v[K];
                                f(c, x.s, r * w + (c - c0) * l.inner + i, v);
                                for (int k = 0; k < K; ++k) acc[c * K + k] += v[k];
                            }
                }
            }
        }
    }
    std::fill(sums, sums + l.c * K, 0.0);
    for (int64_t b = 0; b < blocks; ++b)
        for (int64_t j = 0; j < l.c * K; ++j) sums[j] += part[static_cast<size_t>(b * l.c * K + j)];
}

// Mean and biased variance of every channel of x (two passes, as the reference).
template <class T>
void channel_stats(const Layout& l, const T* x, std::vector<double>& mean, std::vector<double>& var) {
    const double m = static_cast<double>(l.outer * l.inner);
    mean.assign(static_cast<size_t>(l.c), 0.0);
    var.assign(static_cast<size_t>(l.c), 0.0);
    const std::array<const T*, 3> in = {x, nullptr, nullptr};
    channel_sums<1>(l, in, [](int64_t, const auto* s, int64_t i, double* v) { v[0] = static_cast<double>(s[0][i]); },
                    mean.data());
    for (double& s : mean) s /= m;
    const double* mu = mean.data();
    channel_sums<1>(l, in, [mu](int64_t c, const auto* s, int64_t i, double* v) {
        const double d = static_cast<double>(s[0][i]) - mu[c];
        v[0] = d * d;
    }, var.data());
    for (double& s : var) s /= m;
}

// Elements [j, j + size()) of the data tensors: `rows` runs of n, element r * n + i of
// channel c0 + i * kDc (kDc = 1: rows along the channels; 0: a part of one channel's run).
template <int kDc>
struct Span {
    int64_t j, rows, n, c0;
    int64_t size() const { return rows * n; }
    // g(e, c) for every element e of the span, c its channel.
    template <class G>
    void each(G g) const {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t i = 0; i < n; ++i) g(r * n + i, c0 + i * kDc);
    }
};

// Calls f(span) for spans of at most span_elems<T> elements that together visit every
// element once: runs of `inner` per (row, channel), or (inner == 1) rows along the
// channels, several a span where they are short; split over threads by rows.
template <class T, class F>
void for_each_span(const Layout& l, F f) {
    const bool parallel = l.total() > kParallelMin;
    constexpr int64_t m = span_elems<T>;
    if (l.inner == 1) {
        const int64_t q = std::max<int64_t>(1, m / l.c), groups = (l.outer + q - 1) / q;
#pragma omp parallel for schedule(static) if (parallel && groups > 1)
        for (int64_t g = 0; g < groups; ++g) {
            const int64_t o = g * q, rows = std::min(q, l.outer - o);
            for (int64_t c0 = 0; c0 < l.c; c0 += m) f(Span<1>{o * l.c + c0, rows, std::min(m, l.c - c0), c0});
        }
    } else {
#pragma omp parallel for schedule(static) if (parallel && l.outer * l.c > 1)
        for (int64_t oc = 0; oc < l.outer * l.c; ++oc)
            for (int64_t i0 = 0; i0 < l.inner; i0 += m)
                f(Span<0>{oc * l.inner + i0, 1, std::min(m, l.inner - i0), oc % l.c});
    }
}

// y = alpha * act(k[c] * (x - mean[c]) + bias[c] [+ z]) (+ beta * y), k = inv_std * scale.
// A span's inputs are read before its outputs are written: y may be x or z.
template <class T>
void apply_forward(const core::NormCommon& kc, const Layout& l, const T* x, const T* z, T* y,
                   const core::Scale& out, const double* mean, const double* k, const double* bias) {
    using V = value_t<T>;
    const double alpha = out.alpha, beta = out.beta;
    if (kc.ops == NormOps::norm && beta == 0.0) {
        for_each_span<T>(l, [=](const auto& s) {
            RunBuffer<T, kSpan> xb, yb;
            const V* xs = load_run(x + s.j, s.size(), xb);
            V* ys = output_run(y + s.j, s.size(), false, yb);
            s.each([&](int64_t e, int64_t c) {
                ys[e] = store<V>(alpha * ((static_cast<double>(xs[e]) - mean[c]) * k[c] + bias[c]));
            });
            store_run(ys, y + s.j, s.size());
        });
        return;
    }
    const NormOps ops = kc.ops;
    const core::NormActivation act = kc.act;
    const bool add = ops == NormOps::add_act;
    for_each_span<T>(l, [=](const auto& s) {
        RunBuffer<T, kSpan> xb, zb, yb;
        const V* xs = load_run(x + s.j, s.size(), xb);
        const V* zs = add ? load_run(z + s.j, s.size(), zb) : nullptr;
        V* ys = output_run(y + s.j, s.size(), beta != 0.0, yb);
        s.each([&](int64_t e, int64_t c) {
            double v = (static_cast<double>(xs[e]) - mean[c]) * k[c] + bias[c];
            if (add) v += static_cast<double>(zs[e]);
            if (ops != NormOps::norm) v = core::norm_act_forward(act, v);
            ys[e] = blend(v, alpha, beta, ys[e]);
        });
        store_run(ys, y + s.j, s.size());
    });
}

// What both forward problems need: y (and z for the fused add) laid out like x, and y
// either x itself or apart from x and z.
template <class P>
Status check_forward(const P& p) {
    ODNN_RETURN_IF_ERROR(check_common(p.k, p.x));
    ODNN_RETURN_IF_ERROR(check_like_x(p.y, "y", p.x));
    const int64_t n = p.x.num_elements() * (core::dtype_bits(p.k.dtype) / 8);
    ODNN_REQUIRE_SUPPORTED(apart_or_same(p.x_data, p.y_data, n), "y partly overlaps x");
    if (p.k.ops == NormOps::add_act) {
        ODNN_RETURN_IF_ERROR(check_like_x(p.z, "z", p.x));
        ODNN_REQUIRE_SUPPORTED(apart_or_same(p.z_data, p.y_data, n), "y partly overlaps z");
    }
    return Status::ok();
}

// ---- Forward inference ----

class FastBnFwdInference final : public core::Impl<core::BnFwdInferenceProblem> {
public:
    const char* name() const override { return "fast_batchnorm_fwd_inference"; }
    Status check(const core::BnFwdInferenceProblem& p) const override {
        return check_forward(p);
    }
    Status execute(const core::Handle&, const core::BnFwdInferenceProblem& p) const override {
        with_storage(p.k.dtype, [&](auto tag) { run<decltype(tag)>(p); });
        return Status::ok();
    }

private:
    template <class T>
    static void run(const core::BnFwdInferenceProblem& p) {
        using P = param_t<T>;
        const Layout l = layout_of(p.k.g, p.x);
        const Param<P> scale(p.scale, p.scale_bias.strides[1]);
        const Param<P> bias(p.bias, p.scale_bias.strides[1]);
        const Param<P> mean(p.mean, p.mean_var.strides[1]);
        const Param<P> var(p.var, p.mean_var.strides[1]);
        std::vector<double> mu(l.c), k(l.c), b(l.c);
        for (int64_t c = 0; c < l.c; ++c) {
            mu[c] = mean[c];
            k[c] = 1.0 / std::sqrt(var[c] + p.k.epsilon) * scale[c];
            b[c] = bias[c];
        }
        apply_forward(p.k, l, static_cast<const T*>(p.x_data), static_cast<const T*>(p.z_data),
                      static_cast<T*>(p.y_data), p.out, mu.data(), k.data(), b.data());
    }
};

// ---- Forward training ----

class FastBnFwdTraining final : public core::Impl<core::BnFwdTrainingProblem> {
public:
    const char* name() const override { return "fast_batchnorm_fwd_training"; }
    Status check(const core::BnFwdTrainingProblem& p) const override {
        return check_forward(p);
    }
    Status execute(const core::Handle&, const core::BnFwdTrainingProblem& p) const override {
        with_storage(p.k.dtype, [&](auto tag) { run<decltype(tag)>(p); });
        return Status::ok();
    }

private:
    template <class T>
    static void run(const core::BnFwdTrainingProblem& p) {
        using P = param_t<T>;
        const Layout l = layout_of(p.k.g, p.x);
        const T* x = static_cast<const T*>(p.x_data);
        std::vector<double> mean, var;
        channel_stats(l, x, mean, var);
        const int64_t sb = p.scale_bias.strides[1], mv = p.mean_var.strides[1];
        const Param<P> scale(p.scale, sb);
        const Param<P> bias(p.bias, sb);
        const double m = static_cast<double>(l.outer * l.inner);
        // Unbiased variance for the running average; one element per channel: the biased (0).
        const double unbias = l.outer * l.inner > 1 ? m / (m - 1.0) : 1.0;
        std::vector<double> k(l.c), b(l.c);
        for (int64_t c = 0; c < l.c; ++c) {
            const double inv_std = 1.0 / std::sqrt(var[c] + p.k.epsilon);
            if (p.running_mean) {
                const ParamOut<P> rm(p.running_mean, mv);
                const ParamOut<P> rv(p.running_var, mv);
                rm[c] = static_cast<P>((1.0 - p.factor) * static_cast<double>(rm[c]) + p.factor * mean[c]);
                rv[c] = static_cast<P>((1.0 - p.factor) * static_cast<double>(rv[c]) + p.factor * var[c] * unbias);
            }
            if (p.save_mean) {
                ParamOut<P>(p.save_mean, mv)[c] = static_cast<P>(mean[c]);
                ParamOut<P>(p.save_inv_var, mv)[c] = static_cast<P>(inv_std);
            }
            k[c] = inv_std * scale[c];
            b[c] = bias[c];
        }
        apply_forward(p.k, l, x, static_cast<const T*>(p.z_data), static_cast<T*>(p.y_data), p.out,
                      mean.data(), k.data(), b.data());
    }
};

// ---- Backward ----

class FastBnBackward final : public core::Impl<core::BnBackwardProblem> {
public:
    const char* name() const override { return "fast_batchnorm_bwd"; }
    Status check(const core::BnBackwardProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_common(p.k, p.x));
        ODNN_RETURN_IF_ERROR(check_like_x(p.dy, "dy", p.x));
        ODNN_RETURN_IF_ERROR(check_like_x(p.dx, "dx", p.x));
        const bool act = p.k.ops != NormOps::norm, add = p.k.ops == NormOps::add_act;
        if (act) ODNN_RETURN_IF_ERROR(check_like_x(p.y, "y", p.x));
        if (add) ODNN_RETURN_IF_ERROR(check_like_x(p.dz, "dz", p.x));
        // Every element is read before it is written: an output may be an input, but
        // must not overlap one elsewhere.
        const int64_t n = p.x.num_elements() * (core::dtype_bits(p.k.dtype) / 8);
        const void* ins[] = {p.x_data, p.dy_data, act ? p.y_data : p.x_data};
        void* outs[] = {p.dx_data, add ? p.dz_data : p.dx_data};
        for (void* o : outs)
            for (const void* i : ins)
                ODNN_REQUIRE_SUPPORTED(apart_or_same(o, i, n), "an output partly overlaps an input");
        ODNN_REQUIRE_SUPPORTED(apart_or_same(outs[0], outs[1], n), "dx partly overlaps dz");
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::BnBackwardProblem& p) const override {
        with_storage(p.k.dtype, [&](auto tag) { run<decltype(tag)>(p); });
        return Status::ok();
    }

private:
    template <class T>
    static void run(const core::BnBackwardProblem& p) {
        using P = param_t<T>;
        const core::NormCommon& kc = p.k;
        const Layout l = layout_of(kc.g, p.x);
        const T* x = static_cast<const T*>(p.x_data);
        const T* dy = static_cast<const T*>(p.dy_data);
        const T* y = static_cast<const T*>(p.y_data);
        const int64_t sb = p.scale_bias.strides[1], mv = p.mean_var.strides[1];
        std::vector<double> mean(l.c), inv_std(l.c);
        if (p.saved_mean) {
            const Param<P> sm(p.saved_mean, mv);
            const Param<P> si(p.saved_inv_var, mv);
            for (int64_t c = 0; c < l.c; ++c) {
                mean[c] = sm[c];
                inv_std[c] = si[c];
            }
        } else {
            std::vector<double> var;
            channel_stats(l, x, mean, var);
            for (int64_t c = 0; c < l.c; ++c) inv_std[c] = 1.0 / std::sqrt(var[c] + kc.epsilon);
        }
        const double* mu = mean.data();
        const bool act = kc.ops != NormOps::norm;
        const core::NormActivation a = kc.act;
        // dy' = dy * act'(y): the gradient at the normalization's output.
        auto grad = [=](double dyv, double yv) { return act ? dyv * core::norm_act_grad_from_y(a, yv) : dyv; };
        // sums[2c] = sum dy', sums[2c + 1] = sum dy' * (x - mean); inputs dy, x (and y).
        std::vector<double> sums(static_cast<size_t>(2 * l.c));
        if (act)
            channel_sums<2, T>(l, {dy, x, y}, [=](int64_t c, const auto* s, int64_t i, double* v) {
                v[0] = grad(static_cast<double>(s[0][i]), static_cast<double>(s[2][i]));
                v[1] = v[0] * (static_cast<double>(s[1][i]) - mu[c]);
            }, sums.data());
        else
            channel_sums<2, T>(l, {dy, x, nullptr}, [=](int64_t c, const auto* s, int64_t i, double* v) {
                v[0] = static_cast<double>(s[0][i]);
                v[1] = v[0] * (static_cast<double>(s[1][i]) - mu[c]);
            }, sums.data());
        const Param<P> scale(p.scale, sb);
        const double inv_m = 1.0 / static_cast<double>(l.outer * l.inner);
        // dx = ks * (dy' - mean_dy - (x - mean) * kx), with xhat = (x - mean) * inv_std.
        std::vector<double> ks(l.c), mdy(l.c), kx(l.c);
        for (int64_t c = 0; c < l.c; ++c) {
            const double sum_dy = sums[2 * c], sum_dy_xhat = sums[2 * c + 1] * inv_std[c];
            ks[c] = scale[c] * inv_std[c];
            mdy[c] = sum_dy * inv_m;
            kx[c] = inv_std[c] * sum_dy_xhat * inv_m;
            const ParamOut<P> ds(p.dscale, sb), db(p.dbias, sb);
            const double pa = p.param.alpha, pb = p.param.beta;
            ds[c] = static_cast<P>(pb == 0.0 ? pa * sum_dy_xhat : pa * sum_dy_xhat + pb * static_cast<double>(ds[c]));
            db[c] = static_cast<P>(pb == 0.0 ? pa * sum_dy : pa * sum_dy + pb * static_cast<double>(db[c]));
        }
        using V = value_t<T>;
        T* dx = static_cast<T*>(p.dx_data);
        T* dz = static_cast<T*>(p.dz_data);
        const double alpha = p.data.alpha, beta = p.data.beta;
        const double *pks = ks.data(), *pmdy = mdy.data(), *pkx = kx.data();
        // A span's inputs are read before its outputs are written (an output may be an
        // input); dz, where it is dx, is blended onto dx's new values as stored.
        if (!act && beta == 0.0) {
            for_each_span<T>(l, [=](const auto& s) {
                RunBuffer<T, kSpan> db, xb, ob;
                const V* dys = load_run(dy + s.j, s.size(), db);
                const V* xs = load_run(x + s.j, s.size(), xb);
                V* dxs = output_run(dx + s.j, s.size(), false, ob);
                s.each([&](int64_t e, int64_t c) {
                    const double d = static_cast<double>(dys[e]);
                    dxs[e] = store<V>(alpha * (pks[c] * (d - pmdy[c] - (static_cast<double>(xs[e]) - mu[c]) * pkx[c])));
                });
                store_run(dxs, dx + s.j, s.size());
            });
            return;
        }
        const bool add = kc.ops == NormOps::add_act, dz_apart = add && dz != dx;
        for_each_span<T>(l, [=](const auto& s) {
            RunBuffer<T, kSpan> db, xb, yb, ob, zb;
            const V* dys = load_run(dy + s.j, s.size(), db);
            const V* xs = load_run(x + s.j, s.size(), xb);
            const V* ys = act ? load_run(y + s.j, s.size(), yb) : nullptr;
            V* dxs = output_run(dx + s.j, s.size(), beta != 0.0, ob);
            V* dzs = dz_apart ? output_run(dz + s.j, s.size(), beta != 0.0, zb) : dxs;
            s.each([&](int64_t e, int64_t c) {
                const double d = grad(static_cast<double>(dys[e]), act ? static_cast<double>(ys[e]) : 0.0);
                const double v = pks[c] * (d - pmdy[c] - (static_cast<double>(xs[e]) - mu[c]) * pkx[c]);
                dxs[e] = blend(v, alpha, beta, dxs[e]);
                if (add) dzs[e] = blend(d, alpha, beta, dz_apart ? dzs[e] : load(store<T>(dxs[e])));
            });
            store_run(dxs, dx + s.j, s.size());
            if (dz_apart) store_run(dzs, dz + s.j, s.size());
        });
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::BnFwdInferenceProblem, FastBnFwdInference, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::BnFwdTrainingProblem, FastBnFwdTraining, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::BnBackwardProblem, FastBnBackward, core::kPriorityFast);

}  // namespace odnn::cpu
