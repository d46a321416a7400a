// cudnnTransformTensor (plain copies between layouts), cudnnAddTensor and cudnnOpTensor
// for FLOAT, HALF or BFLOAT16 operands (all of one type) in any strides, and
// cudnnReduceTensor for A and C of those types where A is packed row-major with the
// reduced dims in at most two runs (see FastReduce). The operands are walked together
// over the output's dims, simplified as the CUDA kernels do (core::ew_simplify: unit dims
// dropped, dims ordered by the output's strides, contiguous runs merged), one row of the
// innermost dim at a time. Rows whose operands step by 1 (or 0: a broadcast value) are
// loops the compiler vectorises; others are strided loops. The 16-bit types go through
// the run helpers of cpu/storage.hpp, kRun elements of a row at a time. Each value is
// computed in double and rounded once on store (double -> float -> 16 bits for HALF /
// BFLOAT16), as the reference does, so results are the reference's; beta = 0 never reads
// the output. Other data types, NCHW_VECT_C and folding / padding transforms are left to
// the reference.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/blend.hpp"
#include "core/impl_registry.hpp"
#include "core/tensor_ops.hpp"
#include "cpu/storage.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

// Elements above which a call is split over threads.
constexpr int64_t kParallelMin = int64_t{1} << 16;
constexpr int64_t kReduceChunk = 256;  // outputs a reduction task accumulates together
constexpr int64_t kRun = 512;          // elements of a 16-bit row converted at a time

// The fast paths' rule for operand `name`: FLOAT, HALF or BFLOAT16, not vectorised (the
// reduction's A and C may differ in type).
Status check_16_or_float(const core::Operand& o, const char* name) {
    ODNN_REQUIRE_SUPPORTED(
        o.dtype == CUDNN_DATA_FLOAT || o.dtype == CUDNN_DATA_HALF || o.dtype == CUDNN_DATA_BFLOAT16,
        "%s is not FLOAT, HALF or BFLOAT16", name);
    ODNN_REQUIRE_SUPPORTED(o.vect == 1, "%s is vectorised (NCHW_VECT_C)", name);
    return Status::ok();
}

// The element-wise paths' rule for an input: check_16_or_float, and of the type of the
// output `ref_name` (ref, checked by its own check_16_or_float).
Status check_elementwise(const core::Operand& o, const char* name, const core::Operand& ref, const char* ref_name) {
    ODNN_RETURN_IF_ERROR(check_16_or_float(o, name));
    ODNN_REQUIRE_SUPPORTED(o.dtype == ref.dtype, "%s and %s differ in type", name, ref_name);
    return Status::ok();
}

// Calls f(T{}) for the storage type of `t` (one of check_16_or_float's).
template <class F>
void with_type(int t, F&& f) {
    switch (t) {
        case CUDNN_DATA_HALF: f(Half{}); return;
        case CUDNN_DATA_BFLOAT16: f(Bf16{}); return;
        default: f(float{}); return;
    }
}

// Calls row(offsets, length, steps) for every row of the innermost dim of `g`, offsets
// and steps in elements, one per operand; rows are split evenly over threads.
template <class Row>
void for_rows(const core::EwGeometry& g, Row row) {
    const int nb = g.nb_dims, n = g.n_operands;
    const int64_t len = g.dims[nb - 1];
    const int64_t rows = g.count() / len;
    int64_t step[core::kMaxEwOperands];
    for (int k = 0; k < n; ++k) step[k] = g.strides[k][nb - 1];
#pragma omp parallel if (g.count() > kParallelMin)
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t r0 = rows * t / nt, r1 = rows * (t + 1) / nt;
        // Index of row r0 over the outer dims, and each operand's offset there.
        int64_t idx[core::kMaxOperandDims] = {};
        int64_t off[core::kMaxEwOperands] = {};
        int64_t r = r0;
        for (int d = nb - 2; d >= 0; --d) {
            idx[d] = r % g.dims[d];
            r /= g.dims[d];
        }
        for (int k = 0; k < n; ++k)
            for (int d = 0; d < nb - 1; ++d) off[k] += idx[d] * g.strides[k][d];
        for (int64_t i = r0; i < r1; ++i) {
            row(off, len, step);
            for (int d = nb - 2; d >= 0; --d) {  // next row: carry through the outer dims
                for (int k = 0; k < n; ++k) off[k] += g.strides[k][d];
                if (++idx[d] < g.dims[d]) break;
                for (int k = 0; k < n; ++k) off[k] -= idx[d] * g.strides[k][d];
                idx[d] = 0;
            }
        }
    }
}

// Calls chunk(j0, n) over a row of len elements: the whole row at once for FLOAT, runs of
// kRun for the 16-bit types (converted through stack buffers).
template <class T, class Chunk>
void for_chunks(int64_t len, Chunk chunk) {
    if constexpr (runs_in_place<T>) {
        chunk(int64_t{0}, len);
    } else {
        for (int64_t j0 = 0; j0 < len; j0 += kRun) chunk(j0, std::min(kRun, len - j0));
    }
}

// out[j * so] = v(j), plus beta * out[j * so] unless beta = 0, for j < len; the unit-step
// case as its own loop, which the compiler vectorises (on `buf` for the 16-bit types).
template <class T, class V>
void blend_row(T* out, int64_t so, int64_t len, double beta, value_t<T>* buf, V v) {
    if (so == 1) {
        value_t<T>* o = output_run(out, len, beta != 0.0, buf);
        for (int64_t j = 0; j < len; ++j) o[j] = core::blend_float(v(j), 1.0, beta, o[j]);
        store_run(o, out, len);
    } else {
        for (int64_t j = 0; j < len; ++j) out[j * so] = blend<T>(v(j), 1.0, beta, out[j * so]);
    }
}

// Calls body(load) with load(j) = in[j * step] as a double for j < n, read the cheapest
// way for the step: 1 (a run, into `buf` for the 16-bit types), 0 (one broadcast value)
// or any other.
template <class T, class Body>
void with_input(const T* in, int64_t step, int64_t n, value_t<T>* buf, Body body) {
    if (step == 1) {
        const value_t<T>* r = load_run(in, n, buf);
        body([r](int64_t j) { return static_cast<double>(r[j]); });
    } else if (step == 0) {
        const double v = load(in[0]);
        body([v](int64_t) { return v; });
    } else {
        body([in, step](int64_t j) { return static_cast<double>(load(in[j * step])); });
    }
}

// out[j] = f(a[j]) (+ beta * out[j]) along one row; steps[0..1] of out and a.
template <class T, class F>
void unary_row(T* out, const T* a, int64_t len, const int64_t* step, double beta, F f) {
    for_chunks<T>(len, [&](int64_t j0, int64_t n) {
        RunBuffer<T, kRun> bo, ba;
        with_input(a + j0 * step[1], step[1], n, ba, [&](auto la) {
            blend_row(out + j0 * step[0], step[0], n, beta, bo, [&](int64_t j) { return f(la(j)); });
        });
    });
}

// out[j] = f(a[j], b[j]) (+ beta * out[j]) along one row; steps[0..2] of out, a and b.
template <class T, class F>
void binary_row(T* out, const T* a, const T* b, int64_t len, const int64_t* step, double beta, F f) {
    for_chunks<T>(len, [&](int64_t j0, int64_t n) {
        RunBuffer<T, kRun> bo, ba, bb;
        with_input(a + j0 * step[1], step[1], n, ba, [&](auto la) {
            with_input(b + j0 * step[2], step[2], n, bb, [&](auto lb) {
                blend_row(out + j0 * step[0], step[0], n, beta, bo, [&](int64_t j) { return f(la(j), lb(j)); });
            });
        });
    });
}

// out = alpha * in + beta * out, `in` laid out (or broadcast) over out's dims.
template <class T>
void scaled_copy(const core::Operand& out_op, T* out, const core::Operand& in_op, const T* in,
                 const core::Scale& s) {
    const core::Operand* ops[2] = {&out_op, &in_op};
    const core::EwGeometry g = core::ew_simplify(ops, 2);
    const double alpha = s.alpha, beta = s.beta;
    for_rows(g, [&](const int64_t* off, int64_t len, const int64_t* step) {
        unary_row(out + off[0], in + off[1], len, step, beta, [=](double v) { return alpha * v; });
    });
}

// ---- Transform (identity map: a copy between layouts) ----

// x as the reference stores it unscaled: FLOAT moved (a signalling NaN stays signalling),
// the 16-bit types through float (their NaNs as the reference's).
template <class T>
T copied(T x) {
    if constexpr (runs_in_place<T>)
        return x;
    else
        return store<T>(load(x));
}

// y = x exactly (alpha = 1, beta = 0) where the layouts transpose: y's innermost dim a
// (step 1 in y) is strided in x, and x is contiguous along another dim b. Copied in 16 x 16
// tiles of (a, b): sixteen 64-byte runs of x along b in, sixteen of y along a out, so both
// sides move whole cache lines instead of y's row gathering one element per x line (the
// row walk reached 37% of memcpy on NCHW -> NHWC; 8 x 8 tiles, half lines, measured
// slower than 16 x 16 in the same process). FLOAT values are moved, not recomputed: the
// same floats as alpha * x + 0 in double, except that a signalling NaN stays signalling;
// the 16-bit types' runs go through float as the reference's values do.
// False when the layouts do not transpose (the row walk handles them).
template <class T>
bool transpose_copy(const core::Operand& y_op, T* y, const core::Operand& x_op, const T* x) {
    const core::Operand* ops[2] = {&y_op, &x_op};
    const core::EwGeometry g = core::ew_simplify(ops, 2);
    const int nb = g.nb_dims, a = nb - 1;
    if (nb < 2 || g.strides[0][a] != 1 || g.strides[1][a] == 1) return false;
    int b = -1;
    for (int d = 0; d < a; ++d)
        if (g.strides[1][d] == 1) b = d;
    if (b < 0) return false;
    constexpr int64_t kTA = 16, kTB = 16;  // a tile: 16 runs of y along a, 16 of x along b
    const int64_t na = g.dims[a], nbb = g.dims[b];
    const int64_t xa = g.strides[1][a], yb = g.strides[0][b];
    // The other dims, outermost first; tasks are (outer index, tile row along b).
    int other[core::kMaxOperandDims], no = 0;
    int64_t outer = 1;
    for (int d = 0; d < a; ++d)
        if (d != b) {
            other[no++] = d;
            outer *= g.dims[d];
        }
    const int64_t tiles_b = (nbb + kTB - 1) / kTB;
    const int64_t tasks = outer * tiles_b;
#pragma omp parallel for schedule(static) if (g.count() > kParallelMin)
    for (int64_t t = 0; t < tasks; ++t) {
        int64_t o = t / tiles_b, ox = 0, oy = 0;
        for (int k = no - 1; k >= 0; --k) {
            const int d = other[k];
            const int64_t i = o % g.dims[d];
            o /= g.dims[d];
            ox += i * g.strides[1][d];
            oy += i * g.strides[0][d];
        }
        const int64_t b0 = (t % tiles_b) * kTB, bn = std::min(kTB, nbb - b0);
        const T* xs = x + ox + b0;
        T* ys = y + oy + b0 * yb;
        int64_t a0 = 0;
        if (bn == kTB) {
            for (; a0 + kTA <= na; a0 += kTA) {
                value_t<T> tile[kTA][kTB];  // [a][b]: read as runs of x along b
                RunBuffer<T, kTA> buf;
                for (int64_t i = 0; i < kTA; ++i) {
                    const value_t<T>* r = load_run(xs + (a0 + i) * xa, kTB, buf);
                    for (int64_t j = 0; j < kTB; ++j) tile[i][j] = r[j];
                }
                for (int64_t j = 0; j < kTB; ++j) {  // written as runs of y along a
                    value_t<T>* w = output_run(ys + j * yb + a0, kTA, false, buf);
                    for (int64_t i = 0; i < kTA; ++i) w[i] = tile[i][j];
                    store_run(w, ys + j * yb + a0, kTA);
                }
            }
        }
        for (int64_t j = 0; j < bn; ++j)  // what is left: partial tiles
            for (int64_t i = a0; i < na; ++i) ys[j * yb + i] = copied(xs[i * xa + j]);
    }
    return true;
}

class FastTransform final : public core::Impl<core::TransformTensorProblem> {
public:
    const char* name() const override { return "fast_transform_tensor"; }
    Status check(const core::TransformTensorProblem& p) const override {
        ODNN_REQUIRE_SUPPORTED(p.map.identity, "a padding or folding transform");
        ODNN_RETURN_IF_ERROR(check_16_or_float(p.y, "y"));
        ODNN_RETURN_IF_ERROR(check_elementwise(p.x, "x", p.y, "y"));
        ODNN_REQUIRE_SUPPORTED(core::same_dims(p.x, p.y), "x and y dims differ");
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::TransformTensorProblem& p) const override {
        with_type(p.y.dtype, [&](auto tag) {
            using T = decltype(tag);
            T* y = static_cast<T*>(p.y_data);
            const T* x = static_cast<const T*>(p.x_data);
            if (p.scale.alpha == 1.0 && p.scale.beta == 0.0 && static_cast<const void*>(x) != y &&
                transpose_copy(p.y, y, p.x, x))
                return;
            scaled_copy(p.y, y, p.x, x, p.scale);
        });
        return Status::ok();
    }
};

// ---- Add: C = alpha * A + beta * C, A broadcast ----

class FastAdd final : public core::Impl<core::AddTensorProblem> {
public:
    const char* name() const override { return "fast_add_tensor"; }
    Status check(const core::AddTensorProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_16_or_float(p.c, "C"));
        ODNN_RETURN_IF_ERROR(check_elementwise(p.a, "A", p.c, "C"));
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::AddTensorProblem& p) const override {
        with_type(p.c.dtype, [&](auto tag) {
            using T = decltype(tag);
            scaled_copy(p.c, static_cast<T*>(p.c_data), p.a, static_cast<const T*>(p.a_data), p.scale);
        });
        return Status::ok();
    }
};

// ---- Op-tensor: C = op(alpha1 * A, alpha2 * B) + beta * C, B broadcast ----

template <class T>
void op_tensor(const core::OpTensorProblem& p) {
    T* c = static_cast<T*>(p.c_data);
    const T* a = static_cast<const T*>(p.a_data);
    const double a1 = p.alpha1, a2 = p.alpha2, beta = p.beta;
    const bool nan = p.propagate_nan;
    if (p.unary()) {
        const core::Operand* ops[2] = {&p.c, &p.a};
        const core::EwGeometry g = core::ew_simplify(ops, 2);
        auto run = [&](auto f) {
            for_rows(g, [&](const int64_t* off, int64_t len, const int64_t* step) {
                unary_row(c + off[0], a + off[1], len, step, beta, f);
            });
        };
        if (p.op == CUDNN_OP_TENSOR_SQRT)
            run([=](double v) { return core::op_tensor_apply<double>(CUDNN_OP_TENSOR_SQRT, nan, a1 * v, 0.0); });
        else
            run([=](double v) { return core::op_tensor_apply<double>(CUDNN_OP_TENSOR_NOT, nan, a1 * v, 0.0); });
        return;
    }
    const T* b = static_cast<const T*>(p.b_data);
    const core::Operand* ops[3] = {&p.c, &p.a, &p.b};
    const core::EwGeometry g = core::ew_simplify(ops, 3);
    auto run = [&](auto f) {
        for_rows(g, [&](const int64_t* off, int64_t len, const int64_t* step) {
            binary_row(c + off[0], a + off[1], b + off[2], len, step, beta, f);
        });
    };
    switch (p.op) {
        case CUDNN_OP_TENSOR_ADD: run([=](double x, double y) { return a1 * x + a2 * y; }); break;
        case CUDNN_OP_TENSOR_MUL: run([=](double x, double y) { return (a1 * x) * (a2 * y); }); break;
        case CUDNN_OP_TENSOR_MIN:
            run([=](double x, double y) {
                return core::op_tensor_apply<double>(CUDNN_OP_TENSOR_MIN, nan, a1 * x, a2 * y);
            });
            break;
        default:  // MAX
            run([=](double x, double y) {
                return core::op_tensor_apply<double>(CUDNN_OP_TENSOR_MAX, nan, a1 * x, a2 * y);
            });
            break;
    }
}

class FastOpTensor final : public core::Impl<core::OpTensorProblem> {
public:
    const char* name() const override { return "fast_op_tensor"; }
    Status check(const core::OpTensorProblem& p) const override {
        const int op = p.op;
        ODNN_REQUIRE_SUPPORTED(op == CUDNN_OP_TENSOR_ADD || op == CUDNN_OP_TENSOR_MUL || op == CUDNN_OP_TENSOR_MIN ||
                                   op == CUDNN_OP_TENSOR_MAX || op == CUDNN_OP_TENSOR_SQRT || op == CUDNN_OP_TENSOR_NOT,
                               "op %d", op);
        ODNN_RETURN_IF_ERROR(check_16_or_float(p.c, "C"));
        ODNN_RETURN_IF_ERROR(check_elementwise(p.a, "A", p.c, "C"));
        if (!p.unary()) ODNN_RETURN_IF_ERROR(check_elementwise(p.b, "B", p.c, "C"));
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::OpTensorProblem& p) const override {
        with_type(p.c.dtype, [&](auto tag) { op_tensor<decltype(tag)>(p); });
        return Status::ok();
    }
};

// ---- Reduce: C = alpha * reduce(A) + beta * C over up to two blocks of A's dims ----

// A packed row-major (its non-unit dims in order, each stride the product of the dims
// after it) with the reduced dims in at most two runs: A is then
// outer x len1 x mid x len2 x inner (len1, len2 reduced; len1 = 1 for one run, e.g. over
// H, W or over C of NCHW; two runs for N, H, W of NCHW, the per-channel sums). Element k
// of a reduction is k1 * len2 + k2, counting the reduced dims row-major just as the
// reference does (same order of sums, same indices); C's element (o * mid + m) * inner
// + i, row-major over its dims. C any strides.
struct ReduceBlocks {
    int64_t outer = 1, len1 = 1, mid = 1, len2 = 1, inner = 1;
};

bool reduce_blocks(const core::ReduceTensorProblem& p, ReduceBlocks* b) {
    const core::Operand& a = p.a;
    // Runs from the innermost dim out: inner (kept), len2 (reduced), mid, len1, outer.
    int64_t* ext[5] = {&b->inner, &b->len2, &b->mid, &b->len1, &b->outer};
    int64_t expect = 1;
    int run = 0;
    for (int d = a.nb_dims - 1; d >= 0; --d) {
        if (a.dims[d] == 1) continue;
        if (a.strides[d] != expect) return false;
        expect *= a.dims[d];
        const bool reduced = p.c.dims[d] == 1;
        while ((run % 2 == 1) != reduced)
            if (++run > 4) return false;  // a third run of reduced dims
        *ext[run] *= a.dims[d];
    }
    return true;
}

class FastReduce final : public core::Impl<core::ReduceTensorProblem> {
public:
    const char* name() const override { return "fast_reduce_tensor"; }
    Status check(const core::ReduceTensorProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_16_or_float(p.a, "A"));
        ODNN_RETURN_IF_ERROR(check_16_or_float(p.c, "C"));
        ReduceBlocks b;
        ODNN_REQUIRE_SUPPORTED(reduce_blocks(p, &b),
                               "A is not packed row-major with the reduced dims in at most two runs");
        ODNN_REQUIRE_SUPPORTED(p.reduce_length() <= UINT32_MAX, "more than 2^32 elements per reduction");
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::ReduceTensorProblem& p) const override {
        with_type(p.a.dtype, [&](auto tag) { reduce<decltype(tag)>(p); });
        return Status::ok();
    }

private:
    template <class T>
    static void reduce(const core::ReduceTensorProblem& p) {
        ReduceBlocks b;
        reduce_blocks(p, &b);
        const T* a = static_cast<const T*>(p.a_data);
        const int op = p.op;
        const bool nan = p.propagate_nan;
        const int64_t len1 = b.len1, len2 = b.len2, len = len1 * len2, inner = b.inner, mid = b.mid;
        const int64_t s_m = len2 * inner, s_1 = mid * s_m, s_o = len1 * s_1;  // strides of m, k1, o
        // A task sweeps kReduceChunk reductions at once (independent chains): consecutive i
        // where inner > 1 (A read in unit steps), else consecutive m (s_m apart).
        const bool lanes_i = inner > 1;
        const int64_t lane_n = lanes_i ? inner : mid, runs = (lane_n + kReduceChunk - 1) / kReduceChunk;
        const int64_t tiles = (lanes_i ? b.outer * mid : b.outer) * runs;
#pragma omp parallel for schedule(static) if (b.outer * len * mid * inner > kParallelMin)
        for (int64_t t = 0; t < tiles; ++t) {
            const int64_t g = t / runs, j0 = (t % runs) * kReduceChunk;
            const int64_t n = std::min<int64_t>(kReduceChunk, lane_n - j0);
            // g = o * mid + m (lanes over i) or o (lanes over m); u0: C's first element.
            const int64_t base = lanes_i ? g / mid * s_o + g % mid * s_m + j0 : g * s_o + j0 * s_m;
            const int64_t u0 = lanes_i ? g * inner + j0 : g * mid + j0;
            const int64_t lane_step = lanes_i ? 1 : s_m;
            const T* ag = a + base;
            double acc[kReduceChunk];
            uint32_t best[kReduceChunk];
            RunBuffer<T, kReduceChunk> buf;
            // Products start at 1 (all zeros give MUL_NO_ZEROS its empty product), sums at 0;
            // MIN / MAX / AMAX start at element 0.
            const bool pick = op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX ||
                              op == CUDNN_REDUCE_TENSOR_AMAX;
            for (int64_t i = 0; i < n; ++i) {
                best[i] = 0;
                if (pick) {
                    const double v = load(ag[i * lane_step]);
                    acc[i] = op == CUDNN_REDUCE_TENSOR_AMAX ? std::fabs(v) : v;
                } else {
                    acc[i] = op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS ? 1.0 : 0.0;
                }
            }
            // acc[i] <- step(acc[i], best[i], element k of reduction i), the op chosen outside
            // the loops.
            // (The unit-step lanes as their own loop, which the compiler vectorises.)
            auto sweep = [&](auto step) {
                for (int64_t k1 = 0; k1 < len1; ++k1)
                    for (int64_t k2 = k1 == 0 && pick ? 1 : 0; k2 < len2; ++k2) {
                        const int64_t k = k1 * len2 + k2;
                        const T* ar = ag + k1 * s_1 + k2 * inner;
                        if (lane_step == 1) {
                            const value_t<T>* r = load_run(ar, n, buf);  // 16-bit: F16C where usable
                            for (int64_t i = 0; i < n; ++i) step(acc[i], best[i], static_cast<double>(r[i]), k);
                        } else {
                            for (int64_t i = 0; i < n; ++i)
                                step(acc[i], best[i], static_cast<double>(load(ar[i * lane_step])), k);
                        }
                    }
            };
            using u32 = uint32_t;
            switch (op) {
                case CUDNN_REDUCE_TENSOR_ADD:
                case CUDNN_REDUCE_TENSOR_AVG: sweep([](double& s, u32&, double v, int64_t) { s += v; }); break;
                case CUDNN_REDUCE_TENSOR_MUL: sweep([](double& s, u32&, double v, int64_t) { s *= v; }); break;
                case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS:
                    sweep([](double& s, u32&, double v, int64_t) {
                        if (v != 0.0) s *= v;
                    });
                    break;
                case CUDNN_REDUCE_TENSOR_NORM1: sweep([](double& s, u32&, double v, int64_t) { s += std::fabs(v); }); break;
                case CUDNN_REDUCE_TENSOR_NORM2: sweep([](double& s, u32&, double v, int64_t) { s += v * v; }); break;
                default:  // MIN, MAX, AMAX
                    sweep([&](double& s, u32& bi, double v, int64_t k) {
                        const double c = op == CUDNN_REDUCE_TENSOR_AMAX ? std::fabs(v) : v;
                        const u32 ki = static_cast<u32>(k);
                        if (core::reduce_better(op, nan, c, ki, s, bi)) {
                            s = c;
                            bi = ki;
                        }
                    });
            }
            for (int64_t i = 0; i < n; ++i) {
                double r = acc[i];
                if (op == CUDNN_REDUCE_TENSOR_AVG) r /= static_cast<double>(len);
                if (op == CUDNN_REDUCE_TENSOR_NORM2) r = std::sqrt(r);
                const int64_t out = u0 + i;  // C's element, row-major over its dims
                core::blend_store(p.c_data, p.c.offset_of_linear(out), p.c.dtype, r, p.scale.alpha, p.scale.beta);
                if (p.want_indices) p.indices[out] = best[i];
            }
        }
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::TransformTensorProblem, FastTransform, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::AddTensorProblem, FastAdd, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::OpTensorProblem, FastOpTensor, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::ReduceTensorProblem, FastReduce, core::kPriorityFast);

}  // namespace odnn::cpu
