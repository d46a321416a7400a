// Cross-channel LRN forward and backward on the CPU for FLOAT tensors whose spatial dims
// form one run of equal steps (NCHW, NHWC and their 3-D / 5-D forms): the reference's
// formulas (core/pool_problem.hpp, src/cpu/ref/ref_lrn.cpp) term for term and in the same
// order - window sums in channel order, the same std::pow calls, one rounding on store -
// so the results are the reference's, but read in place (no dense double copies of the
// inputs) and split over threads by (image, channel). Backward keeps the reference's two
// passes (the window sums s and t = dy * x * s^(-beta-1) first, in double).
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/blend.hpp"
#include "core/impl_registry.hpp"
#include "core/pool_problem.hpp"
#include "cpu/dense_layout.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

// Offsets of element (n, c, sp): n * sn + c * sc + sp * ss, sp the spatial index
// row-major; false where the spatial dims do not step as one run.
struct NcsView {
    int64_t sn = 0, sc = 0, ss = 0;
};

bool ncs_view(const core::TensorDesc& t, NcsView* v) {
    if (t.dtype != CUDNN_DATA_FLOAT || t.vect_count != 1 || t.nb_dims < 3) return false;
    int64_t ss = 0, run = 0;  // sp's step (the innermost non-unit spatial stride), the run so far
    for (int d = t.nb_dims - 1; d >= 2; --d) {
        if (t.dims[d] == 1) continue;
        if (ss == 0) ss = run = t.strides[d];
        else if (t.strides[d] != run) return false;
        run *= t.dims[d];
    }
    v->sn = t.strides[0];
    v->sc = t.strides[1];
    v->ss = ss == 0 ? 1 : ss;
    return true;
}

constexpr int64_t kParallelMin = int64_t{1} << 14;

// Whether the bytes of two FLOAT views overlap (the output written over an input: the
// reference copies its inputs first, so it serves that case).
bool overlaps(const void* a, const core::TensorDesc& ta, const void* b, const core::TensorDesc& tb) {
    constexpr int64_t e = sizeof(float);
    return spans_overlap(a, ta.span_elements() * e, b, tb.span_elements() * e);
}

class FastLrn final : public core::Impl<core::LrnProblem> {
public:
    const char* name() const override { return "fast_lrn_cross_channel"; }
    Status check(const core::LrnProblem& p) const override {
        NcsView v;
        ODNN_REQUIRE_SUPPORTED(ncs_view(p.x, &v), "x is not FLOAT with its spatial dims in one run");
        const core::TensorDesc& od = p.backward ? p.dx : p.y;
        const char* on = p.backward ? "dx" : "y";
        if (p.backward) ODNN_REQUIRE_SUPPORTED(ncs_view(p.dy, &v), "dy is not FLOAT with its spatial dims in one run");
        ODNN_REQUIRE_SUPPORTED(ncs_view(od, &v), "%s is not FLOAT with its spatial dims in one run", on);
        ODNN_REQUIRE_SUPPORTED(!overlaps(p.out_data, od, p.x_data, p.x), "%s overlaps x (in place)", on);
        ODNN_REQUIRE_SUPPORTED(!(p.backward && overlaps(p.out_data, od, p.dy_data, p.dy)), "dx overlaps dy (in place)");
        return Status::ok();
    }

    Status execute(const core::Handle&, const core::LrnProblem& p) const override {
        const core::TensorDesc& xd = p.x;
        const int64_t N = xd.dims[0], C = xd.dims[1];
        const int64_t S = xd.num_elements() / (N * C);
        const core::LrnWindow w(p.lrn.n);
        const double a = p.lrn.alpha / p.lrn.n, beta = p.lrn.beta, k = p.lrn.k;
        const double alpha_o = p.out.alpha, beta_o = p.out.beta;
        NcsView xv, ov;
        ncs_view(xd, &xv);
        ncs_view(p.backward ? p.dx : p.y, &ov);
        const float* x = static_cast<const float*>(p.x_data);
        float* out = static_cast<float*>(p.out_data);
        const bool par = N * C * S > kParallelMin;
        auto xat = [&](int64_t n, int64_t c, int64_t sp) { return static_cast<double>(x[n * xv.sn + c * xv.sc + sp * xv.ss]); };
        // k + a * (sum of x^2 over the window of channel c), channels in order.
        auto window_s = [&](int64_t n, int64_t c, int64_t sp) {
            double sum = 0.0;
            for (int64_t j = c - w.behind; j <= c + w.ahead; ++j)
                if (j >= 0 && j < C) sum += xat(n, j, sp) * xat(n, j, sp);
            return k + a * sum;
        };
        if (!p.backward) {
#pragma omp parallel for collapse(2) schedule(static) if (par)
            for (int64_t n = 0; n < N; ++n)
                for (int64_t c = 0; c < C; ++c)
                    for (int64_t sp = 0; sp < S; ++sp) {
                        const double r = xat(n, c, sp) * std::pow(window_s(n, c, sp), -beta);
                        float& dst = out[n * ov.sn + c * ov.sc + sp * ov.ss];
                        dst = core::blend_float(r, alpha_o, beta_o, dst);
                    }
            return Status::ok();
        }
        NcsView dv;
        ncs_view(p.dy, &dv);
        const float* dy = static_cast<const float*>(p.dy_data);
        auto dyat = [&](int64_t n, int64_t c, int64_t sp) { return static_cast<double>(dy[n * dv.sn + c * dv.sc + sp * dv.ss]); };
        // Dense (n, c, sp) scratch: s, and t = dy * x * s^(-beta-1).
        std::vector<double> s(static_cast<size_t>(N * C * S)), t(s.size());
        auto at = [&](int64_t n, int64_t c, int64_t sp) { return static_cast<size_t>((n * C + c) * S + sp); };
#pragma omp parallel for collapse(2) schedule(static) if (par)
        for (int64_t n = 0; n < N; ++n)
            for (int64_t c = 0; c < C; ++c)
                for (int64_t sp = 0; sp < S; ++sp) {
                    const size_t i = at(n, c, sp);
                    s[i] = window_s(n, c, sp);
                    t[i] = dyat(n, c, sp) * xat(n, c, sp) * std::pow(s[i], -beta - 1.0);
                }
#pragma omp parallel for collapse(2) schedule(static) if (par)
        for (int64_t n = 0; n < N; ++n)
            for (int64_t c = 0; c < C; ++c)
                for (int64_t sp = 0; sp < S; ++sp) {
                    double sum = 0.0;
                    for (int64_t j = c - w.ahead; j <= c + w.behind; ++j)
                        if (j >= 0 && j < C) sum += t[at(n, j, sp)];
                    const size_t i = at(n, c, sp);
                    const double r = dyat(n, c, sp) * std::pow(s[i], -beta) - 2.0 * beta * a * xat(n, c, sp) * sum;
                    float& dst = out[n * ov.sn + c * ov.sc + sp * ov.ss];
                    dst = core::blend_float(r, alpha_o, beta_o, dst);
                }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::LrnProblem, FastLrn, core::kPriorityFast);

}  // namespace odnn::cpu
