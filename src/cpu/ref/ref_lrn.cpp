// Reference cross-channel LRN and divisive normalization, forward and backward, in
// double (formulas in core/pool_problem.hpp): dense copies of the inputs, the window
// sums s for every element, then the outputs.
#include <cmath>
#include <vector>

#include "core/elem_access.hpp"
#include "core/pool_problem.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

// Logical (row-major) element i of a tensor -> its offset.
int64_t offset_of(const core::TensorDesc& t, int64_t i) { return core::strided_offset(i, t.nb_dims, t.dims, t.strides); }

std::vector<double> dense(const core::TensorDesc& t, const void* data) {
    std::vector<double> v(static_cast<size_t>(t.num_elements()));
    for (int64_t i = 0; i < t.num_elements(); ++i) v[static_cast<size_t>(i)] = core::load_elem(data, offset_of(t, i), t.dtype);
    return v;
}

void store_dense(const core::TensorDesc& t, void* data, const std::vector<double>& v, const core::Scale& s) {
    for (int64_t i = 0; i < t.num_elements(); ++i)
        core::blend_store(data, offset_of(t, i), t.dtype, v[static_cast<size_t>(i)], s.alpha, s.beta);
}

class RefLrn final : public core::Impl<core::LrnProblem> {
public:
    const char* name() const override { return "ref_lrn_cross_channel"; }
    Status execute(const core::Handle&, const core::LrnProblem& p) const override {
        const core::TensorDesc& xd = p.x;
        const int64_t C = xd.dims[1], N = xd.dims[0];
        const int64_t S = xd.num_elements() / (N * C);
        const core::LrnWindow w(p.lrn.n);
        const double a = p.lrn.alpha / p.lrn.n, beta = p.lrn.beta, k = p.lrn.k;
        const std::vector<double> x = dense(xd, p.x_data);
        auto at = [&](int64_t n, int64_t c, int64_t sp) { return static_cast<size_t>((n * C + c) * S + sp); };
        std::vector<double> s(x.size());
        for (int64_t n = 0; n < N; ++n)
            for (int64_t c = 0; c < C; ++c)
                for (int64_t sp = 0; sp < S; ++sp) {
                    double sum = 0.0;
                    for (int64_t j = c - w.behind; j <= c + w.ahead; ++j)
                        if (j >= 0 && j < C) sum += x[at(n, j, sp)] * x[at(n, j, sp)];
                    s[at(n, c, sp)] = k + a * sum;
                }
        std::vector<double> out(x.size());
        if (!p.backward) {
            for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * std::pow(s[i], -beta);
            store_dense(p.y, p.out_data, out, p.out);
            return Status::ok();
        }
        const std::vector<double> dy = dense(p.dy, p.dy_data);
        std::vector<double> t(x.size());  // dy_j * x_j * s_j^(-beta-1)
        for (size_t i = 0; i < x.size(); ++i) t[i] = dy[i] * x[i] * std::pow(s[i], -beta - 1.0);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t c = 0; c < C; ++c)
                for (int64_t sp = 0; sp < S; ++sp) {
                    double sum = 0.0;
                    for (int64_t j = c - w.ahead; j <= c + w.behind; ++j)
                        if (j >= 0 && j < C) sum += t[at(n, j, sp)];
                    const size_t i = at(n, c, sp);
                    out[i] = dy[i] * std::pow(s[i], -beta) - 2.0 * beta * a * x[i] * sum;
                }
        store_dense(p.dx, p.out_data, out, p.out);
        return Status::ok();
    }
};

class RefDivNorm final : public core::Impl<core::DivNormProblem> {
public:
    const char* name() const override { return "ref_divisive_normalization"; }
    Status execute(const core::Handle&, const core::DivNormProblem& p) const override {
        const core::TensorDesc& xd = p.x;
        const int nsp = xd.nb_dims - 2;
        const int64_t images = xd.dims[0] * xd.dims[1];
        int64_t S = 1;
        for (int d = 0; d < nsp; ++d) S *= xd.dims[d + 2];
        const core::LrnWindow w(p.lrn.n);
        const double a = p.lrn.alpha / std::pow(static_cast<double>(p.lrn.n), nsp), beta = p.lrn.beta, k = p.lrn.k;
        std::vector<double> u = dense(xd, p.x_data);
        if (p.means) {
            const std::vector<double> m = dense(xd, p.means);
            for (size_t i = 0; i < u.size(); ++i) u[i] -= m[i];
        }
        // Sum of v over the spatial box [i - lo, i + hi] (per dim) of image img.
        auto box_sum = [&](const std::vector<double>& v, int64_t img, int64_t sp, int lo, int hi) {
            int64_t idx[3], cur[3];
            int64_t rem = sp;
            for (int d = nsp - 1; d >= 0; --d) {
                idx[d] = rem % xd.dims[d + 2];
                rem /= xd.dims[d + 2];
            }
            for (int d = 0; d < nsp; ++d) cur[d] = idx[d] - lo;
            double sum = 0.0;
            for (;;) {
                bool inside = true;
                int64_t lin = 0;
                for (int d = 0; d < nsp; ++d) {
                    inside = inside && cur[d] >= 0 && cur[d] < xd.dims[d + 2];
                    lin = lin * xd.dims[d + 2] + cur[d];
                }
                if (inside) sum += v[static_cast<size_t>(img * S + lin)];
                int d = nsp - 1;
                while (d >= 0 && ++cur[d] > idx[d] + hi) {
                    cur[d] = idx[d] - lo;
                    --d;
                }
                if (d < 0) return sum;
            }
        };
        std::vector<double> u2(u.size());
        for (size_t i = 0; i < u.size(); ++i) u2[i] = u[i] * u[i];
        std::vector<double> s(u.size());
        for (int64_t img = 0; img < images; ++img)
            for (int64_t sp = 0; sp < S; ++sp) s[static_cast<size_t>(img * S + sp)] = k + a * box_sum(u2, img, sp, w.behind, w.ahead);
        std::vector<double> out(u.size());
        if (!p.backward) {
            for (size_t i = 0; i < u.size(); ++i) out[i] = u[i] * std::pow(s[i], -beta);
            store_dense(p.out, p.out_data, out, p.out_scale);
            return Status::ok();
        }
        const std::vector<double> dy = dense(xd, p.dy_data);
        std::vector<double> t(u.size());
        for (size_t i = 0; i < u.size(); ++i) t[i] = dy[i] * u[i] * std::pow(s[i], -beta - 1.0);
        for (int64_t img = 0; img < images; ++img)
            for (int64_t sp = 0; sp < S; ++sp) {
                const size_t i = static_cast<size_t>(img * S + sp);
                out[i] = dy[i] * std::pow(s[i], -beta) - 2.0 * beta * a * u[i] * box_sum(t, img, sp, w.ahead, w.behind);
            }
        store_dense(p.out, p.out_data, out, p.out_scale);
        if (p.dmeans) {
            for (double& v : out) v = -v;
            store_dense(p.out, p.dmeans, out, p.out_scale);
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::LrnProblem, RefLrn, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::DivNormProblem, RefDivNorm, core::kPriorityReference);

}  // namespace odnn::cpu
