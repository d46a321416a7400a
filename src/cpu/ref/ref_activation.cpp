// Reference cudnnActivationForward / Backward: element by element in double over any
// strides (in place when x and y, or dy and dx, share a buffer and a layout).
#include "core/activation_softmax.hpp"
#include "core/elem_access.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

constexpr int64_t kParallelMin = 1 << 15;

class RefActivationFwd final : public core::Impl<core::ActivationFwdProblem> {
public:
    const char* name() const override { return "ref_activation_fwd"; }
    Status execute(const core::Handle&, const core::ActivationFwdProblem& p) const override {
        const int64_t n = p.y.count();
        const core::ActivationParams& a = p.act;
#pragma omp parallel for schedule(static) if (n > kParallelMin)
        for (int64_t i = 0; i < n; ++i) {
            const double x = core::load_elem(p.x_data, p.x.offset_of_linear(i), p.x.dtype);
            const double y = core::act_forward<double>(a.mode, a.propagate_nan, a.coef, a.swish_beta, x);
            core::blend_store(p.y_data, p.y.offset_of_linear(i), p.y.dtype, y, p.scale.alpha, p.scale.beta);
        }
        return Status::ok();
    }
};

class RefActivationBwd final : public core::Impl<core::ActivationBwdProblem> {
public:
    const char* name() const override { return "ref_activation_bwd"; }
    Status execute(const core::Handle&, const core::ActivationBwdProblem& p) const override {
        const int64_t n = p.dx.count();
        const core::ActivationParams& a = p.act;
#pragma omp parallel for schedule(static) if (n > kParallelMin)
        for (int64_t i = 0; i < n; ++i) {
            const double y = core::load_elem(p.y_data, p.y.offset_of_linear(i), p.y.dtype);
            const double dy = core::load_elem(p.dy_data, p.dy.offset_of_linear(i), p.dy.dtype);
            const double x = core::load_elem(p.x_data, p.x.offset_of_linear(i), p.x.dtype);
            const double dx = core::act_backward<double>(a.mode, a.propagate_nan, a.coef, a.swish_beta, x, y, dy);
            core::blend_store(p.dx_data, p.dx.offset_of_linear(i), p.dx.dtype, dx, p.scale.alpha, p.scale.beta);
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::ActivationFwdProblem, RefActivationFwd, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::ActivationBwdProblem, RefActivationBwd, core::kPriorityReference);

}  // namespace odnn::cpu
