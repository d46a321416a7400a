// Reference batch normalization (forward inference, forward training, backward), for
// every mode, data type, layout and fused epilogue: plain loops per feature, in
// double, two-pass statistics. The formulas are spelled out in core/norm_problem.hpp.
#include <cmath>
#include <vector>

#include "core/elem_access.hpp"
#include "core/norm_math.hpp"
#include "core/norm_problem.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

double load_param(const void* p, const core::NormGeometry& g, const core::TensorDesc& d, int64_t f) {
    return core::load_elem(p, g.param_offset(d.strides, f), d.dtype);
}

void store_param(void* p, const core::NormGeometry& g, const core::TensorDesc& d, int64_t f, double v) {
    core::store_elem(p, g.param_offset(d.strides, f), d.dtype, v);
}

// Mean and biased variance of feature f of x.
void feature_stats(const core::NormGeometry& g, const core::TensorDesc& x, const void* xd, int64_t f, double* mean,
                   double* var) {
    const int64_t m_count = g.count();
    double sum = 0.0;
    for (int64_t m = 0; m < m_count; ++m) sum += core::load_elem(xd, g.offset(x.strides, m, f), x.dtype);
    const double mu = sum / static_cast<double>(m_count);
    double sq = 0.0;
    for (int64_t m = 0; m < m_count; ++m) {
        const double d = core::load_elem(xd, g.offset(x.strides, m, f), x.dtype) - mu;
        sq += d * d;
    }
    *mean = mu;
    *var = sq / static_cast<double>(m_count);
}

bool parallel_worth(const core::NormGeometry& g) { return g.features() > 1 && g.features() * g.count() > 32768; }

// y = alpha * act(a * x + b [+ z]) + beta * y over feature f.
void apply_forward(const core::NormCommon& k, const core::TensorDesc& x, const void* xd, const core::TensorDesc& z,
                   const void* zd, const core::TensorDesc& y, void* yd, const core::Scale& out, int64_t f,
                   double mean, double inv_std, double scale, double bias) {
    const core::NormGeometry& g = k.g;
    for (int64_t m = 0; m < g.count(); ++m) {
        double v = (core::load_elem(xd, g.offset(x.strides, m, f), k.dtype) - mean) * inv_std * scale + bias;
        if (k.ops == core::NormOps::add_act) v += core::load_elem(zd, g.offset(z.strides, m, f), k.dtype);
        if (k.ops != core::NormOps::norm) v = core::norm_act_forward(k.act, v);
        core::blend_store(yd, g.offset(y.strides, m, f), k.dtype, v, out.alpha, out.beta);
    }
}

class RefBnFwdInference final : public core::Impl<core::BnFwdInferenceProblem> {
public:
    const char* name() const override { return "ref_batchnorm_fwd_inference"; }
    Status execute(const core::Handle&, const core::BnFwdInferenceProblem& p) const override {
        const core::NormGeometry& g = p.k.g;
        const int64_t nf = g.features();
#pragma omp parallel for schedule(static) if (parallel_worth(g))
        for (int64_t f = 0; f < nf; ++f) {
            const double mean = load_param(p.mean, g, p.mean_var, f);
            const double var = load_param(p.var, g, p.mean_var, f);
            const double inv_std = 1.0 / std::sqrt(var + p.k.epsilon);
            apply_forward(p.k, p.x, p.x_data, p.z, p.z_data, p.y, p.y_data, p.out, f, mean, inv_std,
                          load_param(p.scale, g, p.scale_bias, f), load_param(p.bias, g, p.scale_bias, f));
        }
        return Status::ok();
    }
};

class RefBnFwdTraining final : public core::Impl<core::BnFwdTrainingProblem> {
public:
    const char* name() const override { return "ref_batchnorm_fwd_training"; }
    Status execute(const core::Handle&, const core::BnFwdTrainingProblem& p) const override {
        const core::NormGeometry& g = p.k.g;
        const int64_t nf = g.features();
        const double m_count = static_cast<double>(g.count());
        // Unbiased variance for the running average; with one element per feature
        // the biased one (0) is used instead of dividing by zero.
        const double unbias = g.count() > 1 ? m_count / (m_count - 1.0) : 1.0;
#pragma omp parallel for schedule(static) if (parallel_worth(g))
        for (int64_t f = 0; f < nf; ++f) {
            double mean = 0.0, var = 0.0;
            feature_stats(g, p.x, p.x_data, f, &mean, &var);
            const double inv_std = 1.0 / std::sqrt(var + p.k.epsilon);
            if (p.running_mean) {
                const double rm = load_param(p.running_mean, g, p.mean_var, f);
                const double rv = load_param(p.running_var, g, p.mean_var, f);
                store_param(p.running_mean, g, p.mean_var, f, (1.0 - p.factor) * rm + p.factor * mean);
                store_param(p.running_var, g, p.mean_var, f, (1.0 - p.factor) * rv + p.factor * var * unbias);
            }
            if (p.save_mean) {
                store_param(p.save_mean, g, p.mean_var, f, mean);
                store_param(p.save_inv_var, g, p.mean_var, f, inv_std);
            }
            apply_forward(p.k, p.x, p.x_data, p.z, p.z_data, p.y, p.y_data, p.out, f, mean, inv_std,
                          load_param(p.scale, g, p.scale_bias, f), load_param(p.bias, g, p.scale_bias, f));
        }
        return Status::ok();
    }
};

class RefBnBackward final : public core::Impl<core::BnBackwardProblem> {
public:
    const char* name() const override { return "ref_batchnorm_bwd"; }
    Status execute(const core::Handle&, const core::BnBackwardProblem& p) const override {
        const core::NormGeometry& g = p.k.g;
        const core::NormCommon& k = p.k;
        const int64_t nf = g.features();
        const int64_t mc = g.count();
#pragma omp parallel for schedule(static) if (parallel_worth(g))
        for (int64_t f = 0; f < nf; ++f) {
            double mean = 0.0, inv_std = 0.0;
            if (p.saved_mean) {
                mean = load_param(p.saved_mean, g, p.mean_var, f);
                inv_std = load_param(p.saved_inv_var, g, p.mean_var, f);
            } else {
                double var = 0.0;
                feature_stats(g, p.x, p.x_data, f, &mean, &var);
                inv_std = 1.0 / std::sqrt(var + k.epsilon);
            }
            // dy' = dy * act'(y): the gradient at the normalization's output.
            auto dyp = [&](int64_t m) {
                double d = core::load_elem(p.dy_data, g.offset(p.dy.strides, m, f), k.dtype);
                if (k.ops != core::NormOps::norm)
                    d *= core::norm_act_grad_from_y(k.act, core::load_elem(p.y_data, g.offset(p.y.strides, m, f), k.dtype));
                return d;
            };
            double sum_dy = 0.0, sum_dy_xhat = 0.0;
            for (int64_t m = 0; m < mc; ++m) {
                const double d = dyp(m);
                const double xhat = (core::load_elem(p.x_data, g.offset(p.x.strides, m, f), k.dtype) - mean) * inv_std;
                sum_dy += d;
                sum_dy_xhat += d * xhat;
            }
            const double scale = load_param(p.scale, g, p.scale_bias, f);
            const double inv_m = 1.0 / static_cast<double>(mc);
            for (int64_t m = 0; m < mc; ++m) {
                const double d = dyp(m);
                const double xhat = (core::load_elem(p.x_data, g.offset(p.x.strides, m, f), k.dtype) - mean) * inv_std;
                const double dx = scale * inv_std * (d - sum_dy * inv_m - xhat * sum_dy_xhat * inv_m);
                core::blend_store(p.dx_data, g.offset(p.dx.strides, m, f), k.dtype, dx, p.data.alpha, p.data.beta);
                if (k.ops == core::NormOps::add_act)
                    core::blend_store(p.dz_data, g.offset(p.dz.strides, m, f), k.dtype, d, p.data.alpha, p.data.beta);
            }
            const int64_t po = g.param_offset(p.scale_bias.strides, f);
            core::blend_store(p.dscale, po, p.scale_bias.dtype, sum_dy_xhat, p.param.alpha, p.param.beta);
            core::blend_store(p.dbias, po, p.scale_bias.dtype, sum_dy, p.param.alpha, p.param.beta);
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::BnFwdInferenceProblem, RefBnFwdInference, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::BnFwdTrainingProblem, RefBnFwdTraining, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::BnBackwardProblem, RefBnBackward, core::kPriorityReference);

}  // namespace odnn::cpu
