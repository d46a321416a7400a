// Cross-channel LRN forward and backward on the CPU for FLOAT tensors whose spatial dims
// form one run of equal steps (NCHW, NHWC and their 3-D / 5-D forms): the reference's
// formulas (core/pool_problem.hpp, src/cpu/ref/ref_lrn.cpp) term for term and in the same
// order - window sums in channel order, the same std::pow calls, one rounding on store -
// so the results are the reference's, but read in place (no dense double copies of the
// inputs) and split over threads by (image, channel). Backward keeps the reference's two
// passes (the window sums s and t = dy * x * s^(-beta-1) first, in double).
// Divisive normalization (FastDivNorm, below) on 4-D FLOAT tensors at any strides, the
// same way: the reference's terms in its order, one (n, c) image a thread at a time.
#include <omp.h>

#include <algorithm>
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

// Divisive normalization forward and backward (RefDivNorm's formulas, term for term and
// in its order): u = x - means, s = k + a * (the sum of u^2 over the spatial box, its
// positions in row-major order), y = u * s^(-beta); backward t = dy * u * s^(-beta-1),
// dx = dy * s^(-beta) - 2 beta a u * (the sum of t over the mirrored box), dMeans = -dx.
// Each (n, c) image is staged in dense double planes with a border of zeros as wide as
// the box: the box sums then need no bounds tests and run vectorised along a row, and
// each element still adds its positions in the reference's order (adding +0 to a sum
// that starts at +0 changes nothing: such a sum is never -0).
class FastDivNorm final : public core::Impl<core::DivNormProblem> {
public:
    const char* name() const override { return "fast_divisive_normalization"; }
    Status check(const core::DivNormProblem& p) const override {
        auto float4 = [](const core::TensorDesc& t) {
            return t.dtype == CUDNN_DATA_FLOAT && t.vect_count == 1 && t.nb_dims == 4;
        };
        ODNN_REQUIRE_SUPPORTED(float4(p.x), "x is not a 4-D FLOAT tensor");
        ODNN_REQUIRE_SUPPORTED(float4(p.out), "%s is not a 4-D FLOAT tensor", p.backward ? "dx" : "y");
        const char* on = p.backward ? "dx" : "y";
        // The reference copies its inputs before writing: it serves outputs over inputs.
        const struct {
            const char* name;
            const void* data;
        } inputs[] = {{"x", p.x_data}, {"means", p.means}, {"dy", p.backward ? p.dy_data : nullptr}};
        for (const auto& in : inputs) {
            if (in.data == nullptr) continue;
            ODNN_REQUIRE_SUPPORTED(!overlaps(p.out_data, p.out, in.data, p.x), "%s overlaps %s (in place)", on, in.name);
            ODNN_REQUIRE_SUPPORTED(!(p.dmeans && overlaps(p.dmeans, p.out, in.data, p.x)), "dMeans overlaps %s",
                                   in.name);
        }
        ODNN_REQUIRE_SUPPORTED(!(p.dmeans && overlaps(p.dmeans, p.out, p.out_data, p.out)), "dMeans overlaps dx");
        return Status::ok();
    }

    Status execute(const core::Handle&, const core::DivNormProblem& p) const override {
        const core::TensorDesc &xd = p.x, &od = p.out;
        const int64_t N = xd.dims[0], C = xd.dims[1], H = xd.dims[2], W = xd.dims[3];
        const core::LrnWindow w(p.lrn.n);
        const double a = p.lrn.alpha / std::pow(static_cast<double>(p.lrn.n), 2), beta = p.lrn.beta, k = p.lrn.k;
        const double alpha_o = p.out_scale.alpha, beta_o = p.out_scale.beta;
        const int64_t B = std::max(w.behind, w.ahead), PW = W + 2 * B, plane = (H + 2 * B) * PW;
        const float* x = static_cast<const float*>(p.x_data);
        const float* m = static_cast<const float*>(p.means);
        const float* dy = static_cast<const float*>(p.dy_data);
        float* out = static_cast<float*>(p.out_data);
        float* dm = static_cast<float*>(p.dmeans);
        auto xo = [&](int64_t h, int64_t ww) { return h * xd.strides[2] + ww * xd.strides[3]; };
        auto oo = [&](int64_t h, int64_t ww) { return h * od.strides[2] + ww * od.strides[3]; };
#pragma omp parallel if (N * C * H * W > kParallelMin)
        {
            // u and s dense; v the padded plane of the values summed (u^2, then t); acc a row's sums.
            std::vector<double> u(static_cast<size_t>(H * W)), s(u.size()), v(static_cast<size_t>(plane), 0.0),
                acc(static_cast<size_t>(W));
            // acc = the box sums of v over row h, the box from lo before to hi after.
            auto box_row = [&](int64_t h, int lo, int hi) {
                std::fill(acc.begin(), acc.end(), 0.0);
                for (int64_t dh = -lo; dh <= hi; ++dh) {
                    const double* row = v.data() + (h + dh + B) * PW + B;
                    for (int64_t dw = -lo; dw <= hi; ++dw)
                        for (int64_t c = 0; c < W; ++c) acc[static_cast<size_t>(c)] += row[c + dw];
                }
            };
            auto interior = [&](int64_t h, int64_t c) -> double& { return v[static_cast<size_t>((h + B) * PW + B + c)]; };
#pragma omp for schedule(static)
            for (int64_t img = 0; img < N * C; ++img) {
                const int64_t n = img / C, c = img - n * C;
                const int64_t xb = n * xd.strides[0] + c * xd.strides[1], ob = n * od.strides[0] + c * od.strides[1];
                for (int64_t h = 0; h < H; ++h)
                    for (int64_t q = 0; q < W; ++q) {
                        double uv = static_cast<double>(x[xb + xo(h, q)]);
                        if (m) uv -= static_cast<double>(m[xb + xo(h, q)]);
                        u[static_cast<size_t>(h * W + q)] = uv;
                        interior(h, q) = uv * uv;
                    }
                for (int64_t h = 0; h < H; ++h) {
                    box_row(h, w.behind, w.ahead);
                    for (int64_t q = 0; q < W; ++q) s[static_cast<size_t>(h * W + q)] = k + a * acc[static_cast<size_t>(q)];
                }
                if (!p.backward) {
                    for (int64_t h = 0; h < H; ++h)
                        for (int64_t q = 0; q < W; ++q) {
                            const size_t i = static_cast<size_t>(h * W + q);
                            float& dst = out[ob + oo(h, q)];
                            dst = core::blend_float(u[i] * std::pow(s[i], -beta), alpha_o, beta_o, dst);
                        }
                    continue;
                }
                for (int64_t h = 0; h < H; ++h)
                    for (int64_t q = 0; q < W; ++q) {
                        const size_t i = static_cast<size_t>(h * W + q);
                        interior(h, q) = static_cast<double>(dy[xb + xo(h, q)]) * u[i] * std::pow(s[i], -beta - 1.0);
                    }
                for (int64_t h = 0; h < H; ++h) {
                    box_row(h, w.ahead, w.behind);
                    for (int64_t q = 0; q < W; ++q) {
                        const size_t i = static_cast<size_t>(h * W + q);
                        const double r = static_cast<double>(dy[xb + xo(h, q)]) * std::pow(s[i], -beta) -
                                         2.0 * beta * a * u[i] * acc[static_cast<size_t>(q)];
                        float& dst = out[ob + oo(h, q)];
                        dst = core::blend_float(r, alpha_o, beta_o, dst);
                        if (dm) {
                            float& dmm = dm[ob + oo(h, q)];
                            dmm = core::blend_float(-r, alpha_o, beta_o, dmm);
                        }
                    }
                }
            }
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::LrnProblem, FastLrn, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::DivNormProblem, FastDivNorm, core::kPriorityFast);

}  // namespace odnn::cpu
