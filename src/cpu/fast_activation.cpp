// cudnnActivationForward / Backward for FLOAT, DOUBLE, HALF and BFLOAT16 tensors (one type
// for every operand) that are all laid out alike and densely packed (NCHW, NHWC or any
// other dimension order without gaps): memory order is then the same element order for
// every operand, and one flat loop over the buffer covers the call (in place too). Each
// value is computed in double and rounded once on store, as the reference does, so
// results are the reference's. RELU, CLIPPED_RELU, IDENTITY and the backward of SIGMOID
// / TANH are plain arithmetic the compiler vectorises; the other modes call exp / tanh
// per element. The loops are templates on the storage type (cpu/storage.hpp: 16-bit
// values load as floats, results round through float as the reference's store does).
// Everything else (other or mixed data types, strided views, operands in different
// layouts) is left to the reference.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/activation_softmax.hpp"
#include "core/impl_registry.hpp"
#include "cpu/dense_layout.hpp"
#include "cpu/f16c.hpp"
#include "cpu/storage.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

// Elements above which a call is split over threads: memory-bound modes need more work
// per thread than the transcendental ones to pay for the fork.
constexpr int64_t kParallelMinCheap = int64_t{1} << 16;
constexpr int64_t kParallelMinCostly = int64_t{1} << 12;

// The strides of `o` tile exactly count() elements (no gaps, no overlap), in any order.
bool dense(const core::Operand& o) { return o.vect == 1 && dense_strides(o.nb_dims, o.dims, o.strides); }

// Same strides wherever the extent exceeds 1 (extent-1 dims address nothing).
bool same_order(const core::Operand& a, const core::Operand& b) {
    return same_strides(a.nb_dims, a.dims, a.strides, b.nb_dims, b.dims, b.strides);
}

Status check_operand(const core::Operand& o, const char* name, const core::Operand& ref, const char* ref_name) {
    ODNN_RETURN_IF_ERROR(check_storage(o.dtype, name, ref.dtype, ref_name));
    ODNN_REQUIRE_SUPPORTED(dense(o), "%s is not densely packed", name);
    ODNN_REQUIRE_SUPPORTED(&o == &ref || same_order(o, ref), "%s and %s are laid out differently", name, ref_name);
    return Status::ok();
}

bool known_mode(int m) {
    return m == CUDNN_ACTIVATION_SIGMOID || m == CUDNN_ACTIVATION_RELU || m == CUDNN_ACTIVATION_TANH ||
           m == CUDNN_ACTIVATION_CLIPPED_RELU || m == CUDNN_ACTIVATION_ELU || m == CUDNN_ACTIVATION_SWISH ||
           m == CUDNN_ACTIVATION_IDENTITY;
}

// ---- The element loop ----

// HALF with F16C (f16c::usable()): the loops below take blocks of kHalfBlock elements,
// converted to float buffers and back with the block conversions (the same bits as
// load / store), so the arithmetic between them has no conversion branches and vectorises.
// Every operand's block is read before the output's is written (in place works).
constexpr int64_t kHalfBlock = 512;

// Calls body(i0, m) for the blocks [i0, i0 + m) of n elements, over threads above par_min.
template <class B>
void for_half_blocks(int64_t n, int64_t par_min, B body) {
    const int64_t blocks = (n + kHalfBlock - 1) / kHalfBlock;
#pragma omp parallel for schedule(static) if (n > par_min)
    for (int64_t b = 0; b < blocks; ++b) body(b * kHalfBlock, std::min(kHalfBlock, n - b * kHalfBlock));
}

// The loop of both directions: dx[i] = alpha * g(x[i], y[i], dy[i]) (+ beta * dx[i], read
// only when beta != 0); x is read only with kX and y only with kY (else g gets 0), each
// before dx[i] is written, so dx may be dy, x or y itself. The forward passes its x as dy.
template <bool kX, bool kY, class T, class G>
void blend_loop(const T* x, const T* y, const T* dy, T* dx, int64_t n, double alpha, double beta,
                int64_t par_min, G g) {
    if constexpr (std::is_same_v<T, Half>) {
        if (f16c::usable()) {
            for_half_blocks(n, par_min, [&](int64_t i0, int64_t m) {
                float xf[kHalfBlock], yf[kHalfBlock], df[kHalfBlock], rf[kHalfBlock];
                if (kX) f16c::to_float(half_bits(x + i0), xf, m);
                if (kY) f16c::to_float(half_bits(y + i0), yf, m);
                f16c::to_float(half_bits(dy + i0), df, m);
                auto at = [&](int64_t k) {
                    return g(kX ? static_cast<double>(xf[k]) : 0.0, kY ? static_cast<double>(yf[k]) : 0.0,
                             static_cast<double>(df[k]));
                };
                if (beta == 0.0) {
                    for (int64_t k = 0; k < m; ++k) rf[k] = static_cast<float>(alpha * at(k));
                } else {
                    f16c::to_float(half_bits(dx + i0), rf, m);
                    for (int64_t k = 0; k < m; ++k)
                        rf[k] = static_cast<float>(alpha * at(k) + beta * static_cast<double>(rf[k]));
                }
                f16c::to_half(rf, half_bits(dx + i0), m);
            });
            return;
        }
    }
    auto at = [=](int64_t i) {
        return g(kX ? static_cast<double>(load(x[i])) : 0.0, kY ? static_cast<double>(load(y[i])) : 0.0,
                 static_cast<double>(load(dy[i])));
    };
    if (beta == 0.0) {
#pragma omp parallel for schedule(static) if (n > par_min)
        for (int64_t i = 0; i < n; ++i) dx[i] = store<T>(alpha * at(i));
    } else {
#pragma omp parallel for schedule(static) if (n > par_min)
        for (int64_t i = 0; i < n; ++i) dx[i] = store<T>(alpha * at(i) + beta * static_cast<double>(load(dx[i])));
    }
}

// y[i] = alpha * f(x[i]) (+ beta * y[i], read only when beta != 0).
template <class T, class F>
void forward_loop(const T* x, T* y, int64_t n, double alpha, double beta, int64_t par_min, F f) {
    blend_loop<false, false>(x, x, x, y, n, alpha, beta, par_min, [f](double, double, double v) { return f(v); });
}

template <class T>
void forward(const core::ActivationFwdProblem& p) {
    const T* x = static_cast<const T*>(p.x_data);
    T* y = static_cast<T*>(p.y_data);
    const int64_t n = p.y.count();
    const double alpha = p.scale.alpha, beta = p.scale.beta;
    const core::ActivationParams& a = p.act;
    const double coef = a.coef, sb = a.swish_beta;
    const bool prop = a.propagate_nan;
    switch (a.mode) {
        case CUDNN_ACTIVATION_RELU:
            if (prop)
                forward_loop(x, y, n, alpha, beta, kParallelMinCheap,
                             [](double v) { return (v > 0.0 || v != v) ? v : 0.0; });
            else
                forward_loop(x, y, n, alpha, beta, kParallelMinCheap, [](double v) { return v > 0.0 ? v : 0.0; });
            return;
        case CUDNN_ACTIVATION_CLIPPED_RELU:
            forward_loop(x, y, n, alpha, beta, kParallelMinCheap, [=](double v) {
                if (v != v) return prop ? v : 0.0;
                const double r = v > 0.0 ? v : 0.0;
                return r > coef ? coef : r;
            });
            return;
        case CUDNN_ACTIVATION_IDENTITY:
            forward_loop(x, y, n, alpha, beta, kParallelMinCheap, [](double v) { return v; });
            return;
        case CUDNN_ACTIVATION_SIGMOID:
            forward_loop(x, y, n, alpha, beta, kParallelMinCostly, [](double v) {
                return core::act_forward<double>(CUDNN_ACTIVATION_SIGMOID, false, 0.0, 1.0, v);
            });
            return;
        case CUDNN_ACTIVATION_TANH:
            forward_loop(x, y, n, alpha, beta, kParallelMinCostly, [](double v) {
                return core::act_forward<double>(CUDNN_ACTIVATION_TANH, false, 0.0, 1.0, v);
            });
            return;
        case CUDNN_ACTIVATION_ELU:
            forward_loop(x, y, n, alpha, beta, kParallelMinCostly, [=](double v) {
                return core::act_forward<double>(CUDNN_ACTIVATION_ELU, false, coef, 1.0, v);
            });
            return;
        case CUDNN_ACTIVATION_SWISH:
            forward_loop(x, y, n, alpha, beta, kParallelMinCostly, [=](double v) {
                return core::act_forward<double>(CUDNN_ACTIVATION_SWISH, false, 0.0, sb, v);
            });
            return;
    }
}

class FastActivationFwd final : public core::Impl<core::ActivationFwdProblem> {
public:
    const char* name() const override { return "fast_activation_fwd"; }
    Status check(const core::ActivationFwdProblem& p) const override {
        ODNN_REQUIRE_SUPPORTED(known_mode(p.act.mode), "activation mode %d", p.act.mode);
        ODNN_RETURN_IF_ERROR(check_operand(p.y, "y", p.y, "y"));
        ODNN_RETURN_IF_ERROR(check_operand(p.x, "x", p.y, "y"));
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::ActivationFwdProblem& p) const override {
        with_storage(p.y.dtype, [&](auto tag) { forward<decltype(tag)>(p); });
        return Status::ok();
    }
};

// ---- Backward ----

template <class T>
void backward(const core::ActivationBwdProblem& p) {
    const T* x = static_cast<const T*>(p.x_data);
    const T* y = static_cast<const T*>(p.y_data);
    const T* dy = static_cast<const T*>(p.dy_data);
    T* dx = static_cast<T*>(p.dx_data);
    const int64_t n = p.dx.count();
    const double alpha = p.scale.alpha, beta = p.scale.beta;
    const core::ActivationParams& a = p.act;
    const double coef = a.coef, sb = a.swish_beta;
    const bool prop = a.propagate_nan;
    auto run = [&](auto with_x, auto with_y, int64_t par_min, auto g) {
        blend_loop<decltype(with_x)::value, decltype(with_y)::value>(x, y, dy, dx, n, alpha, beta, par_min, g);
    };
    const std::true_type on;
    const std::false_type off;
    switch (a.mode) {
        case CUDNN_ACTIVATION_RELU:
            if (prop)
                run(on, off, kParallelMinCheap,
                    [](double v, double, double d) { return v != v ? v : (v > 0.0 ? d : 0.0); });
            else  // dy read unconditionally: the select vectorises
                run(on, off, kParallelMinCheap, [](double v, double, double d) { return v > 0.0 ? d : 0.0; });
            return;
        case CUDNN_ACTIVATION_CLIPPED_RELU:
            run(on, off, kParallelMinCheap, [=](double v, double, double d) {
                if (v != v) return prop ? v : 0.0;
                return (v > 0.0 && v < coef) ? d : 0.0;
            });
            return;
        case CUDNN_ACTIVATION_IDENTITY:
            run(off, off, kParallelMinCheap, [](double, double, double d) { return d; });
            return;
        case CUDNN_ACTIVATION_SIGMOID:
            run(off, on, kParallelMinCheap, [](double, double v, double d) { return d * v * (1.0 - v); });
            return;
        case CUDNN_ACTIVATION_TANH:
            run(off, on, kParallelMinCheap, [](double, double v, double d) { return d * (1.0 - v * v); });
            return;
        case CUDNN_ACTIVATION_ELU:
            run(on, off, kParallelMinCostly, [=](double v, double, double d) {
                return core::act_backward<double>(CUDNN_ACTIVATION_ELU, false, coef, 1.0, v, 0.0, d);
            });
            return;
        case CUDNN_ACTIVATION_SWISH:
            run(on, off, kParallelMinCostly, [=](double v, double, double d) {
                return core::act_backward<double>(CUDNN_ACTIVATION_SWISH, false, 0.0, sb, v, 0.0, d);
            });
            return;
    }
}

class FastActivationBwd final : public core::Impl<core::ActivationBwdProblem> {
public:
    const char* name() const override { return "fast_activation_bwd"; }
    Status check(const core::ActivationBwdProblem& p) const override {
        ODNN_REQUIRE_SUPPORTED(known_mode(p.act.mode), "activation mode %d", p.act.mode);
        ODNN_RETURN_IF_ERROR(check_operand(p.dx, "dx", p.dx, "dx"));
        ODNN_RETURN_IF_ERROR(check_operand(p.dy, "dy", p.dx, "dx"));
        ODNN_RETURN_IF_ERROR(check_operand(p.x, "x", p.dx, "dx"));
        ODNN_RETURN_IF_ERROR(check_operand(p.y, "y", p.dx, "dx"));
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::ActivationBwdProblem& p) const override {
        with_storage(p.dx.dtype, [&](auto tag) { backward<decltype(tag)>(p); });
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::ActivationFwdProblem, FastActivationFwd, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::ActivationBwdProblem, FastActivationBwd, core::kPriorityFast);

}  // namespace odnn::cpu
