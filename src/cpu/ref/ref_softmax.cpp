// Reference cudnnSoftmaxForward / Backward: one softmax (group) at a time, in double.
// FAST is computed like ACCURATE (max-subtracted): the same values where FAST does not
// overflow, and no overflow where it would.
#include <cmath>
#include <vector>

#include "core/activation_softmax.hpp"
#include "core/elem_access.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

class RefSoftmaxFwd final : public core::Impl<core::SoftmaxFwdProblem> {
public:
    const char* name() const override { return "ref_softmax_fwd"; }
    Status execute(const core::Handle&, const core::SoftmaxFwdProblem& p) const override {
        const core::SoftmaxSplit& s = p.split;
        const bool log_mode = p.algo == CUDNN_SOFTMAX_LOG;
#pragma omp parallel for schedule(dynamic, 4) if (s.groups * s.length > (1 << 15))
        for (int64_t g = 0; g < s.groups; ++g) {
            std::vector<double> v(static_cast<size_t>(s.length));
            double m = -INFINITY;
            for (int64_t k = 0; k < s.length; ++k) {
                v[k] = core::load_elem(p.x_data, s.offset(p.x, g, k), p.x.dtype);
                if (v[k] > m) m = v[k];
            }
            double sum = 0.0;
            for (int64_t k = 0; k < s.length; ++k) sum += std::exp(v[k] - m);
            for (int64_t k = 0; k < s.length; ++k) {
                const double y = log_mode ? v[k] - m - std::log(sum) : std::exp(v[k] - m) / sum;
                core::blend_store(p.y_data, s.offset(p.y, g, k), p.y.dtype, y, p.scale.alpha, p.scale.beta);
            }
        }
        return Status::ok();
    }
};

class RefSoftmaxBwd final : public core::Impl<core::SoftmaxBwdProblem> {
public:
    const char* name() const override { return "ref_softmax_bwd"; }
    Status execute(const core::Handle&, const core::SoftmaxBwdProblem& p) const override {
        const core::SoftmaxSplit& s = p.split;
        const bool log_mode = p.algo == CUDNN_SOFTMAX_LOG;
#pragma omp parallel for schedule(dynamic, 4) if (s.groups * s.length > (1 << 15))
        for (int64_t g = 0; g < s.groups; ++g) {
            std::vector<double> y(static_cast<size_t>(s.length)), dy(static_cast<size_t>(s.length));
            double sum = 0.0;
            for (int64_t k = 0; k < s.length; ++k) {
                y[k] = core::load_elem(p.y_data, s.offset(p.y, g, k), p.y.dtype);
                dy[k] = core::load_elem(p.dy_data, s.offset(p.dy, g, k), p.dy.dtype);
                sum += log_mode ? dy[k] : dy[k] * y[k];
            }
            for (int64_t k = 0; k < s.length; ++k) {
                // softmax: dx = y (dy - sum(dy y)); log-softmax: dx = dy - exp(y) sum(dy).
                const double dx = log_mode ? dy[k] - std::exp(y[k]) * sum : y[k] * (dy[k] - sum);
                core::blend_store(p.dx_data, s.offset(p.dx, g, k), p.dx.dtype, dx, p.scale.alpha, p.scale.beta);
            }
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::SoftmaxFwdProblem, RefSoftmaxFwd, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::SoftmaxBwdProblem, RefSoftmaxBwd, core::kPriorityReference);

}  // namespace odnn::cpu
