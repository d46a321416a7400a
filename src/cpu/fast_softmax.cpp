// cudnnSoftmaxForward / Backward for FLOAT, DOUBLE, HALF and BFLOAT16 tensors (one type
// for every operand) that are densely packed and laid out alike, where the softmax's
// dims (C for CHANNEL, C, H, W... for INSTANCE) are one block of memory: NCHW and NHWC
// in both modes. Each call is then `outer` groups of `len`
// values `inner` apart (NCHW CHANNEL: inner = H * W; NHWC CHANNEL and INSTANCE: inner = 1),
// and a thread takes a group and a run of up to kChunk inner positions at a time (or,
// with inner = 1, kGroups whole groups), keeping their maxima and sums in arrays the
// inner loops run over. Values are computed in
// double and rounded once on store, as the reference does; only the order of the sum of
// exponentials can differ from it (memory order rather than the logical order of the
// reduced dims: NHWC INSTANCE), which can change that double sum in its last bits.
// The kernels are templates on the storage type (cpu/storage.hpp) and read and write a
// tile a span of rows at a time: the 16-bit types through float buffers, HALF with the
// F16C block conversions where the CPU has them; the same values either way. Other or
// mixed types, strided views and other layouts are left to the reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/activation_softmax.hpp"
#include "core/blend.hpp"
#include "core/impl_registry.hpp"
#include "cpu/dense_layout.hpp"
#include "cpu/storage.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

constexpr int64_t kChunk = 256;   // inner positions a thread handles together
constexpr int64_t kGroups = 16;   // groups of one value apart (inner = 1) a thread handles together
constexpr int64_t kParallelMin = int64_t{1} << 14;
constexpr int64_t kKeepMax = int64_t{1} << 16;  // exponentials a thread keeps (512 KiB)
constexpr int64_t kSpan = 1024;  // elements of a span, the rows of a tile read or written at a time
static_assert(kSpan >= kChunk && kSpan >= kGroups, "a span holds at least one row of a tile");

// The [outer][len][inner] view of a dense operand for the split's reduced dims, or
// false where those dims are not one contiguous block of memory.
struct Blocks {
    int64_t outer = 1, len = 1, inner = 1;
};

bool blocks_of(const core::Operand& o, const core::SoftmaxSplit& s, Blocks* b) {
    if (o.vect != 1 || !dense_strides(o.nb_dims, o.dims, o.strides)) return false;
    // The reduced dims of extent > 1 must tile [inner, inner * len) exactly.
    int64_t lo = -1, len = 1;
    for (int i = 0; i < s.nb_reduced; ++i) {
        const int d = s.reduced[i];
        if (o.dims[d] == 1) continue;
        len *= o.dims[d];
        if (lo < 0 || o.strides[d] < lo) lo = o.strides[d];
    }
    if (lo < 0) lo = 1;  // nothing reduced: groups of one
    for (int i = 0; i < s.nb_reduced; ++i) {
        const int d = s.reduced[i];
        if (o.dims[d] > 1 && (o.strides[d] < lo || o.strides[d] >= lo * len)) return false;
    }
    // ... and every kept dim lie wholly below or above that block.
    for (int i = 0; i < s.nb_kept; ++i) {
        const int d = s.kept[i];
        if (o.dims[d] == 1) continue;
        const bool below = o.strides[d] * o.dims[d] <= lo;
        const bool above = o.strides[d] >= lo * len;
        if (!below && !above) return false;
    }
    b->inner = lo;
    b->len = len;
    b->outer = o.count() / (len * lo);
    return true;
}

Status check_like(const core::Operand& o, const char* name, const core::Operand& ref, const char* ref_name) {
    ODNN_RETURN_IF_ERROR(check_storage(o.dtype, name, ref.dtype, ref_name));
    ODNN_REQUIRE_SUPPORTED(&o == &ref || same_strides(o.nb_dims, o.dims, o.strides, ref.nb_dims, ref.dims, ref.strides),
                           "%s and %s are laid out differently", name, ref_name);
    return Status::ok();
}

// Calls body(base, n, unit) for every tile of n <= kChunk lanes, in parallel: lane i's
// element k is at base + i * ls + k * ks. With inner > 1 a tile's lanes are neighbouring
// inner positions of one group (unit = true_type: ls = 1, ks = inner); with inner = 1
// they are kGroups whole groups (unit = false_type: ls = len, ks = 1), so the exponential
// chains of several groups overlap.
template <class Body>
void for_tiles(const Blocks& b, Body body) {
    const bool par = b.outer * b.len * b.inner > kParallelMin;
    if (b.inner > 1) {
        const int64_t runs = (b.inner + kChunk - 1) / kChunk, tiles = b.outer * runs;
#pragma omp parallel for schedule(static) if (par)
        for (int64_t t = 0; t < tiles; ++t) {
            const int64_t o = t / runs, i0 = (t % runs) * kChunk;
            body(o * b.len * b.inner + i0, std::min(kChunk, b.inner - i0), std::true_type{});
        }
    } else {
        const int64_t tiles = (b.outer + kGroups - 1) / kGroups;
#pragma omp parallel for schedule(static) if (par)
        for (int64_t t = 0; t < tiles; ++t)
            body(t * kGroups * b.len, std::min(kGroups, b.outer - t * kGroups), std::false_type{});
    }
}

// Lanes of a tile (for_tiles).
int64_t tile_lanes(const Blocks& b) { return b.inner > 1 ? std::min(b.inner, kChunk) : kGroups; }

// A tile of n lanes (for_tiles) in each operand: lane i's row k at i + k * stride (kUnit:
// stride = inner) or at i * stride + k (whole groups: stride = len).
template <bool kUnit>
struct Tile {
    int64_t n, stride;
    // Rows a span holds.
    int64_t span_rows() const { return std::max<int64_t>(1, kSpan / n); }
};

// Rows [k0, k0 + kn) of a tile's operand, element (i, k) being lane i's row k0 + k: in the
// tensor itself, or in a buffer laid out alike with the span's own strides.
template <class V, bool kUnit>
struct Rows {
    V* p;
    int64_t stride;
    V& operator()(int64_t i, int64_t k) const { return kUnit ? p[i + k * stride] : p[i * stride + k]; }
};

// Calls f(at, to, m) for the contiguous runs of rows [k0, k0 + kn) of tile t: m elements
// at offset `at` of the tile and `to` of a span's buffer (a row of the lanes, or a lane's
// rows).
template <bool kUnit, class F>
void for_runs(const Tile<kUnit>& t, int64_t k0, int64_t kn, F f) {
    if constexpr (kUnit) {
        for (int64_t k = 0; k < kn; ++k) f((k0 + k) * t.stride, k * t.n, t.n);
    } else {
        for (int64_t i = 0; i < t.n; ++i) f(i * t.stride + k0, i * kn, kn);
    }
}

// Rows [k0, k0 + kn) of tile t of the operand at g as value_t<T> (kn * n <= kSpan), by
// cpu/storage.hpp's runs: FLOAT and DOUBLE in place, the 16-bit types in buf.
template <class T, bool kUnit, class V = value_t<T>>
Rows<const V, kUnit> load_rows(const T* g, const Tile<kUnit>& t, int64_t k0, int64_t kn, V* buf) {
    if constexpr (runs_in_place<T>) {
        return {g + (kUnit ? k0 * t.stride : k0), t.stride};
    } else {
        for_runs(t, k0, kn, [&](int64_t at, int64_t to, int64_t m) { load_run(g + at, m, buf + to); });
        return {buf, kUnit ? t.n : kn};
    }
}

// The same rows of an output, holding its stored values when `read`; store_rows then
// stores them.
template <class T, bool kUnit, class V = value_t<T>>
Rows<V, kUnit> output_rows(T* g, const Tile<kUnit>& t, int64_t k0, int64_t kn, bool read, V* buf) {
    if constexpr (runs_in_place<T>) {
        return {g + (kUnit ? k0 * t.stride : k0), t.stride};
    } else {
        if (read) load_rows(g, t, k0, kn, buf);
        return {buf, kUnit ? t.n : kn};
    }
}

template <class T, bool kUnit, class V = value_t<T>>
void store_rows(const V* buf, T* g, const Tile<kUnit>& t, int64_t k0, int64_t kn) {
    if constexpr (!runs_in_place<T>)
        for_runs(t, k0, kn, [&](int64_t at, int64_t to, int64_t m) { store_run(buf + to, g + at, m); });
}

class FastSoftmaxFwd final : public core::Impl<core::SoftmaxFwdProblem> {
public:
    const char* name() const override { return "fast_softmax_fwd"; }
    Status check(const core::SoftmaxFwdProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_like(p.x, "x", p.x, "x"));
        ODNN_RETURN_IF_ERROR(check_like(p.y, "y", p.x, "x"));
        Blocks b;
        ODNN_REQUIRE_SUPPORTED(blocks_of(p.x, p.split, &b), "x is not dense with the softmax dims in one block");
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::SoftmaxFwdProblem& p) const override {
        with_storage(p.x.dtype, [&](auto tag) { run<decltype(tag)>(p); });
        return Status::ok();
    }

private:
    template <class T>
    static void run(const core::SoftmaxFwdProblem& p) {
        using V = value_t<T>;
        Blocks b;
        blocks_of(p.x, p.split, &b);
        const T* x = static_cast<const T*>(p.x_data);
        T* y = static_cast<T*>(p.y_data);
        const bool log_mode = p.algo == CUDNN_SOFTMAX_LOG;
        const double alpha = p.scale.alpha, beta = p.scale.beta;
        const int64_t len = b.len, inner = b.inner;
        // Softmax keeps the tile's exponentials for the last pass where they fit in a
        // thread's buffer (the reference computes each twice: the same values).
        const bool keep = !log_mode && len * tile_lanes(b) <= kKeepMax;
        for_tiles(b, [&](int64_t base, int64_t n, auto unit) {
            constexpr bool kUnit = decltype(unit)::value;
            const Tile<kUnit> t{n, kUnit ? inner : len};
            const int64_t kc = t.span_rows();
            thread_local std::vector<double> kept;
            if (keep && kept.size() < static_cast<size_t>(len * n)) kept.resize(static_cast<size_t>(len * n));
            double m[kChunk], sum[kChunk];
            for (int64_t i = 0; i < n; ++i) {
                m[i] = -INFINITY;
                sum[i] = 0.0;
            }
            RunBuffer<T, kSpan> xb, yb;
            const T* xg = x + base;
            T* yg = y + base;
            for (int64_t k0 = 0; k0 < len; k0 += kc) {
                const int64_t kn = std::min(kc, len - k0);
                const auto xs = load_rows(xg, t, k0, kn, xb);
                for (int64_t k = 0; k < kn; ++k)
                    for (int64_t i = 0; i < n; ++i) {
                        const double v = xs(i, k);
                        m[i] = v > m[i] ? v : m[i];
                    }
            }
            for (int64_t k0 = 0; k0 < len; k0 += kc) {
                const int64_t kn = std::min(kc, len - k0);
                const auto xs = load_rows(xg, t, k0, kn, xb);
                for (int64_t k = 0; k < kn; ++k) {
                    if (keep) {
                        double* e = kept.data() + (k0 + k) * n;
                        for (int64_t i = 0; i < n; ++i) {
                            e[i] = std::exp(static_cast<double>(xs(i, k)) - m[i]);
                            sum[i] += e[i];
                        }
                    } else {
                        for (int64_t i = 0; i < n; ++i) sum[i] += std::exp(static_cast<double>(xs(i, k)) - m[i]);
                    }
                }
            }
            if (log_mode)
                for (int64_t i = 0; i < n; ++i) sum[i] = std::log(sum[i]);  // (log of the sum)
            // The last pass reads x only where the exponentials were not kept.
            for (int64_t k0 = 0; k0 < len; k0 += kc) {
                const int64_t kn = std::min(kc, len - k0);
                const auto xs = keep ? Rows<const V, kUnit>{nullptr, 0} : load_rows(xg, t, k0, kn, xb);
                const auto ys = output_rows(yg, t, k0, kn, beta != 0.0, yb);
                for (int64_t k = 0; k < kn; ++k) {
                    const double* e = keep ? kept.data() + (k0 + k) * n : nullptr;
                    for (int64_t i = 0; i < n; ++i) {
                        double r;
                        if (e) {
                            r = e[i] / sum[i];
                        } else {
                            const double v = static_cast<double>(xs(i, k)) - m[i];
                            r = log_mode ? v - sum[i] : std::exp(v) / sum[i];
                        }
                        ys(i, k) = blend(r, alpha, beta, ys(i, k));
                    }
                }
                store_rows(yb, yg, t, k0, kn);
            }
        });
    }
};

class FastSoftmaxBwd final : public core::Impl<core::SoftmaxBwdProblem> {
public:
    const char* name() const override { return "fast_softmax_bwd"; }
    Status check(const core::SoftmaxBwdProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_like(p.dx, "dx", p.dx, "dx"));
        ODNN_RETURN_IF_ERROR(check_like(p.y, "y", p.dx, "dx"));
        ODNN_RETURN_IF_ERROR(check_like(p.dy, "dy", p.dx, "dx"));
        Blocks b;
        ODNN_REQUIRE_SUPPORTED(blocks_of(p.dx, p.split, &b), "dx is not dense with the softmax dims in one block");
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::SoftmaxBwdProblem& p) const override {
        with_storage(p.dx.dtype, [&](auto tag) { run<decltype(tag)>(p); });
        return Status::ok();
    }

private:
    template <class T>
    static void run(const core::SoftmaxBwdProblem& p) {
        Blocks b;
        blocks_of(p.dx, p.split, &b);
        const T* y = static_cast<const T*>(p.y_data);
        const T* dy = static_cast<const T*>(p.dy_data);
        T* dx = static_cast<T*>(p.dx_data);
        const bool log_mode = p.algo == CUDNN_SOFTMAX_LOG;
        const double alpha = p.scale.alpha, beta = p.scale.beta;
        const int64_t len = b.len, inner = b.inner;
        for_tiles(b, [&](int64_t base, int64_t n, auto unit) {
            constexpr bool kUnit = decltype(unit)::value;
            const Tile<kUnit> t{n, kUnit ? inner : len};
            const int64_t kc = t.span_rows();
            double sum[kChunk];
            for (int64_t i = 0; i < n; ++i) sum[i] = 0.0;
            RunBuffer<T, kSpan> yb, db, ob;
            const T* yg = y + base;
            const T* dyg = dy + base;
            T* dxg = dx + base;
            for (int64_t k0 = 0; k0 < len; k0 += kc) {
                const int64_t kn = std::min(kc, len - k0);
                const auto dys = load_rows(dyg, t, k0, kn, db);
                if (log_mode) {
                    for (int64_t k = 0; k < kn; ++k)
                        for (int64_t i = 0; i < n; ++i) sum[i] += static_cast<double>(dys(i, k));
                } else {
                    const auto ys = load_rows(yg, t, k0, kn, yb);
                    for (int64_t k = 0; k < kn; ++k)
                        for (int64_t i = 0; i < n; ++i)
                            sum[i] += static_cast<double>(dys(i, k)) * static_cast<double>(ys(i, k));
                }
            }
            // A span's y and dy are read before its dx is written (dx may be either).
            for (int64_t k0 = 0; k0 < len; k0 += kc) {
                const int64_t kn = std::min(kc, len - k0);
                const auto ys = load_rows(yg, t, k0, kn, yb);
                const auto dys = load_rows(dyg, t, k0, kn, db);
                const auto dxs = output_rows(dxg, t, k0, kn, beta != 0.0, ob);
                for (int64_t k = 0; k < kn; ++k)
                    for (int64_t i = 0; i < n; ++i) {
                        const double yv = ys(i, k), g = dys(i, k);
                        // softmax: dx = y (dy - sum(dy y)); log-softmax: dx = dy - exp(y) sum(dy).
                        const double v = log_mode ? g - std::exp(yv) * sum[i] : yv * (g - sum[i]);
                        dxs(i, k) = blend(v, alpha, beta, dxs(i, k));
                    }
                store_rows(ob, dxg, t, k0, kn);
            }
        });
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::SoftmaxFwdProblem, FastSoftmaxFwd, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::SoftmaxBwdProblem, FastSoftmaxBwd, core::kPriorityFast);

}  // namespace odnn::cpu
