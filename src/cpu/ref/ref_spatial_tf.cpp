// Reference spatial transformer: affine grid generator and bilinear sampler, forward
// and backward, in double (formulas in core/spatial_tf_problem.hpp).
#include <vector>

#include "core/elem_access.hpp"
#include "core/spatial_tf_problem.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

class RefSpatialTfGrid final : public core::Impl<core::SpatialTfGridProblem> {
public:
    const char* name() const override { return "ref_spatial_tf_grid"; }
    Status execute(const core::Handle&, const core::SpatialTfGridProblem& p) const override {
        const int dt = static_cast<int>(p.dtype);
        for (int64_t n = 0; n < p.n; ++n) {
            if (!p.backward) {
                double th[6];
                for (int k = 0; k < 6; ++k) th[k] = core::load_elem(p.in, n * 6 + k, dt);
                for (int64_t h = 0; h < p.h; ++h)
                    for (int64_t w = 0; w < p.w; ++w) {
                        const double xw = core::tf_base_coord(w, p.w), yh = core::tf_base_coord(h, p.h);
                        const int64_t g = ((n * p.h + h) * p.w + w) * 2;
                        core::store_elem(p.out, g, dt, th[0] * xw + th[1] * yh + th[2]);
                        core::store_elem(p.out, g + 1, dt, th[3] * xw + th[4] * yh + th[5]);
                    }
            } else {
                double d[6] = {0, 0, 0, 0, 0, 0};
                for (int64_t h = 0; h < p.h; ++h)
                    for (int64_t w = 0; w < p.w; ++w) {
                        const double base[3] = {core::tf_base_coord(w, p.w), core::tf_base_coord(h, p.h), 1.0};
                        const int64_t g = ((n * p.h + h) * p.w + w) * 2;
                        for (int r = 0; r < 2; ++r) {
                            const double dg = core::load_elem(p.in, g + r, dt);
                            for (int k = 0; k < 3; ++k) d[r * 3 + k] += dg * base[k];
                        }
                    }
                for (int k = 0; k < 6; ++k) core::store_elem(p.out, n * 6 + k, dt, d[k]);
            }
        }
        return Status::ok();
    }
};

class RefSpatialTfSampler final : public core::Impl<core::SpatialTfSamplerProblem> {
public:
    const char* name() const override { return "ref_spatial_tf_sampler"; }
    Status execute(const core::Handle&, const core::SpatialTfSamplerProblem& p) const override {
        const int64_t N = p.x.dims[0], C = p.x.dims[1], Hi = p.x.dims[2], Wi = p.x.dims[3];
        const int64_t Ho = p.y.dims[2], Wo = p.y.dims[3];
        const int gdt = static_cast<int>(p.grid_dtype);
        auto xo = [&](const core::TensorDesc& t, int64_t n, int64_t c, int64_t h, int64_t w) {
            return n * t.strides[0] + c * t.strides[1] + h * t.strides[2] + w * t.strides[3];
        };
        // Input value, 0 outside the image.
        auto xv = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
            if (h < 0 || h >= Hi || w < 0 || w >= Wi) return 0.0;
            return core::load_elem(p.x_data, xo(p.x, n, c, h, w), p.x.dtype);
        };
        std::vector<double> dx;
        if (p.backward) dx.assign(static_cast<size_t>(N * C * Hi * Wi), 0.0);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t h = 0; h < Ho; ++h)
                for (int64_t w = 0; w < Wo; ++w) {
                    const int64_t g = ((n * Ho + h) * Wo + w) * 2;
                    core::Bilinear b{};
                    const bool any =
                        core::tf_bilinear(core::load_elem(p.grid, g, gdt), core::load_elem(p.grid, g + 1, gdt), Hi, Wi, &b);
                    const double w00 = (1 - b.wx1) * (1 - b.wy1), w01 = b.wx1 * (1 - b.wy1);
                    const double w10 = (1 - b.wx1) * b.wy1, w11 = b.wx1 * b.wy1;
                    double dgx = 0.0, dgy = 0.0;
                    for (int64_t c = 0; c < C; ++c) {
                        double v = 0.0, dyv = 0.0;
                        double x00 = 0, x01 = 0, x10 = 0, x11 = 0;
                        if (any) {
                            x00 = xv(n, c, b.y0, b.x0);
                            x01 = xv(n, c, b.y0, b.x0 + 1);
                            x10 = xv(n, c, b.y0 + 1, b.x0);
                            x11 = xv(n, c, b.y0 + 1, b.x0 + 1);
                            v = w00 * x00 + w01 * x01 + w10 * x10 + w11 * x11;
                        }
                        if (!p.backward) {
                            core::blend_store(p.y_data, xo(p.y, n, c, h, w), p.y.dtype, v, p.out.alpha, p.out.beta);
                            continue;
                        }
                        dyv = core::load_elem(p.dy_data, xo(p.y, n, c, h, w), p.y.dtype);
                        if (!any) continue;
                        auto scatter = [&](int64_t yy, int64_t xx, double wt) {
                            if (yy >= 0 && yy < Hi && xx >= 0 && xx < Wi)
                                dx[static_cast<size_t>(((n * C + c) * Hi + yy) * Wi + xx)] += wt * dyv;
                        };
                        scatter(b.y0, b.x0, w00);
                        scatter(b.y0, b.x0 + 1, w01);
                        scatter(b.y0 + 1, b.x0, w10);
                        scatter(b.y0 + 1, b.x0 + 1, w11);
                        dgx += dyv * ((1 - b.wy1) * (x01 - x00) + b.wy1 * (x11 - x10));
                        dgy += dyv * ((1 - b.wx1) * (x10 - x00) + b.wx1 * (x11 - x01));
                    }
                    if (p.backward) {
                        core::blend_store(p.dgrid, g, gdt, dgx * static_cast<double>(Wi - 1) * 0.5, p.grid_out.alpha,
                                          p.grid_out.beta);
                        core::blend_store(p.dgrid, g + 1, gdt, dgy * static_cast<double>(Hi - 1) * 0.5,
                                          p.grid_out.alpha, p.grid_out.beta);
                    }
                }
        if (p.backward)
            for (int64_t n = 0; n < N; ++n)
                for (int64_t c = 0; c < C; ++c)
                    for (int64_t h = 0; h < Hi; ++h)
                        for (int64_t w = 0; w < Wi; ++w)
                            core::blend_store(p.dx_data, xo(p.dx, n, c, h, w), p.dx.dtype,
                                              dx[static_cast<size_t>(((n * C + c) * Hi + h) * Wi + w)], p.out.alpha,
                                              p.out.beta);
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::SpatialTfGridProblem, RefSpatialTfGrid, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::SpatialTfSamplerProblem, RefSpatialTfSampler, core::kPriorityReference);

}  // namespace odnn::cpu
