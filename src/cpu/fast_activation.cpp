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

#include "core/activation_softmax.hpp"
#include "core/impl_registry.hpp"
#include "cpu/dense_layout.hpp"
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

// ---- Forward ----

// y[i] = alpha * f(x[i]) (+ beta * y[i], read only when beta != 0).
template <class T, class F>
void forward_loop(const T* x, T* y, int64_t n, double alpha, double beta, int64_t par_min, F f) {
    if (beta == 0.0) {
#pragma omp parallel for schedule(static) if (n > par_min)
        for (int64_t i = 0; i < n; ++i) y[i] = store<T>(alpha * f(static_cast<double>(load(x[i]))));
    } else {
#pragma omp parallel for schedule(static) if (n > par_min)
        for (int64_t i = 0; i < n; ++i)
            y[i] = store<T>(alpha * f(static_cast<double>(load(x[i]))) + beta * static_cast<double>(load(y[i])));
    }
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

// dx[i] = alpha * g(i) (+ beta * dx[i], read only when beta != 0); g reads x, y, dy at i
// (before dx[i] is written, so dx may be dy, x or y itself).
template <class T, class G>
void backward_loop(T* dx, int64_t n, double alpha, double beta, int64_t par_min, G g) {
    if (beta == 0.0) {
#pragma omp parallel for schedule(static) if (n > par_min)
        for (int64_t i = 0; i < n; ++i) dx[i] = store<T>(alpha * g(i));
    } else {
#pragma omp parallel for schedule(static) if (n > par_min)
        for (int64_t i = 0; i < n; ++i) dx[i] = store<T>(alpha * g(i) + beta * static_cast<double>(load(dx[i])));
    }
}

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
    auto X = [=](int64_t i) { return static_cast<double>(load(x[i])); };
    auto Y = [=](int64_t i) { return static_cast<double>(load(y[i])); };
    auto DY = [=](int64_t i) { return static_cast<double>(load(dy[i])); };
    switch (a.mode) {
        case CUDNN_ACTIVATION_RELU:
            if (prop)
                backward_loop(dx, n, alpha, beta, kParallelMinCheap, [=](int64_t i) {
                    const double v = X(i), d = DY(i);
                    return v != v ? v : (v > 0.0 ? d : 0.0);
                });
            else
                backward_loop(dx, n, alpha, beta, kParallelMinCheap, [=](int64_t i) {
                    const double d = DY(i);  // loaded unconditionally: the select vectorises
                    return X(i) > 0.0 ? d : 0.0;
                });
            return;
        case CUDNN_ACTIVATION_CLIPPED_RELU:
            backward_loop(dx, n, alpha, beta, kParallelMinCheap, [=](int64_t i) {
                const double v = X(i), d = DY(i);
                if (v != v) return prop ? v : 0.0;
                return (v > 0.0 && v < coef) ? d : 0.0;
            });
            return;
        case CUDNN_ACTIVATION_IDENTITY:
            backward_loop(dx, n, alpha, beta, kParallelMinCheap, [=](int64_t i) { return DY(i); });
            return;
        case CUDNN_ACTIVATION_SIGMOID:
            backward_loop(dx, n, alpha, beta, kParallelMinCheap, [=](int64_t i) {
                const double v = Y(i);
                return DY(i) * v * (1.0 - v);
            });
            return;
        case CUDNN_ACTIVATION_TANH:
            backward_loop(dx, n, alpha, beta, kParallelMinCheap, [=](int64_t i) {
                const double v = Y(i);
                return DY(i) * (1.0 - v * v);
            });
            return;
        case CUDNN_ACTIVATION_ELU:
            backward_loop(dx, n, alpha, beta, kParallelMinCostly, [=](int64_t i) {
                return core::act_backward<double>(CUDNN_ACTIVATION_ELU, false, coef, 1.0, X(i), 0.0, DY(i));
            });
            return;
        case CUDNN_ACTIVATION_SWISH:
            backward_loop(dx, n, alpha, beta, kParallelMinCostly, [=](int64_t i) {
                return core::act_backward<double>(CUDNN_ACTIVATION_SWISH, false, 0.0, sb, X(i), 0.0, DY(i));
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
