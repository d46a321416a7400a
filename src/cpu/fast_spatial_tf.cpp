// Spatial transformer sampler (cudnnSpatialTfSamplerForward / Backward) on the CPU for
// FLOAT, DOUBLE and HALF x, y and dx of one type (the descriptor's types), any strides:
// the reference's arithmetic (core/spatial_tf_problem.hpp, src/cpu/ref/ref_spatial_tf.cpp)
// term for term and in the same order, so the results are the reference's, but typed,
// plane by plane and over threads. Each output position's corners (weights, offsets,
// whether inside the image) are found once, not once a channel, for a batch of images
// at a time (at most 64 MiB of corners); then
//   forward  threads take (n, c) planes: the plane staged dense in value_t<T> (16-bit
//            types converted once, not four times an output), y from four corners;
//   dx       threads take (n, c) planes: the plane's contributions gathered into a double
//            plane in output order (the reference's order for every dx element), then
//            blended into dx;
//   dgrid    output rows one after another (one thread: see backward_dgrid), channel by
//            channel: each position's sum over channels in channel order.
// The grid generator (cudnnSpatialTfGridGeneratorForward / Backward) likewise: the
// reference's expressions in its order, typed, the normalised coordinates of a row and a
// column computed once, not once an element; forward over threads by grid rows, backward
// by images (each image's dtheta sums its positions in row-major order).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/blend.hpp"
#include "core/elem_access.hpp"
#include "core/impl_registry.hpp"
#include "core/spatial_tf_problem.hpp"
#include "cpu/storage.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

constexpr int64_t kParallelMin = int64_t{1} << 14;  // outputs (with channels) above which threads split

struct Dims {
    int64_t N, C, Hi, Wi, Ho, Wo;
};

Dims dims_of(const core::SpatialTfSamplerProblem& p) {
    return {p.x.dims[0], p.x.dims[1], p.x.dims[2], p.x.dims[3], p.y.dims[2], p.y.dims[3]};
}

// An output position's four bilinear corners (00, 01, 10, 11: x0 / x0 + 1 by y0 / y0 + 1)
// in the reference's order: their weights, whether each lies in the image (else it reads
// as 0), and their offsets in a dense Hi x Wi plane and in x's plane (0 when outside).
struct Corners {
    double wx1 = 0.0, wy1 = 0.0;  // the fractional parts (x0 + 1's and y0 + 1's shares)
    double w[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t xoff[4] = {0, 0, 0, 0};
    int32_t doff[4] = {0, 0, 0, 0};
    bool in[4] = {false, false, false, false};
    bool any = false;
};

// Images [n0, n0 + nb): the corners are held for a batch of images at a time (at most
// kCornerBytes, one image at least), not for the whole call.
struct Batch {
    int64_t n0, nb;
};
constexpr int64_t kCornerBytes = int64_t{64} << 20;

// The corners of every output position (n, h, w) of the batch, row-major.
std::vector<Corners> corners_of(const core::SpatialTfSamplerProblem& p, const Dims& d, const Batch& bt) {
    const int64_t npos = bt.nb * d.Ho * d.Wo, first = bt.n0 * d.Ho * d.Wo;
    std::vector<Corners> cs(static_cast<size_t>(npos));
    const int gdt = static_cast<int>(p.grid_dtype);
#pragma omp parallel for schedule(static) if (npos > kParallelMin)
    for (int64_t k = 0; k < npos; ++k) {
        core::Bilinear b{};
        Corners& c = cs[static_cast<size_t>(k)];
        const int64_t g = 2 * (first + k);
        c.any = core::tf_bilinear(core::load_elem(p.grid, g, gdt), core::load_elem(p.grid, g + 1, gdt), d.Hi, d.Wi, &b);
        if (!c.any) continue;
        c.wx1 = b.wx1;
        c.wy1 = b.wy1;
        c.w[0] = (1 - b.wx1) * (1 - b.wy1);
        c.w[1] = b.wx1 * (1 - b.wy1);
        c.w[2] = (1 - b.wx1) * b.wy1;
        c.w[3] = b.wx1 * b.wy1;
        for (int q = 0; q < 4; ++q) {
            const int64_t yy = b.y0 + q / 2, xx = b.x0 + q % 2;
            c.in[q] = yy >= 0 && yy < d.Hi && xx >= 0 && xx < d.Wi;
            if (!c.in[q]) continue;
            c.xoff[q] = yy * p.x.strides[2] + xx * p.x.strides[3];
            c.doff[q] = static_cast<int32_t>(yy * d.Wi + xx);
        }
    }
    return cs;
}

// x's plane (n, c) as a dense Hi x Wi plane of value_t<T> in buf.
template <class T>
void stage_plane(const core::SpatialTfSamplerProblem& p, const Dims& d, int64_t n, int64_t c, value_t<T>* buf) {
    const T* xp = static_cast<const T*>(p.x_data) + n * p.x.strides[0] + c * p.x.strides[1];
    for (int64_t h = 0; h < d.Hi; ++h) {
        const T* row = xp + h * p.x.strides[2];
        value_t<T>* out = buf + h * d.Wi;
        if (p.x.strides[3] == 1) {
            const value_t<T>* v = load_run(row, d.Wi, out);
            if (v != out) std::copy(v, v + d.Wi, out);
        } else {
            for (int64_t w = 0; w < d.Wi; ++w) out[w] = load(row[w * p.x.strides[3]]);
        }
    }
}

// The sample at one position from a dense plane: the reference's sum, term for term.
template <class V>
double sample(const Corners& cr, const V* plane) {
    double x[4];
    for (int q = 0; q < 4; ++q) x[q] = cr.in[q] ? static_cast<double>(plane[cr.doff[q]]) : 0.0;
    return cr.w[0] * x[0] + cr.w[1] * x[1] + cr.w[2] * x[2] + cr.w[3] * x[3];
}

bool plane_fits(const Dims& d) { return d.Hi * d.Wi < (int64_t{1} << 31); }

template <class T>
void forward(const core::SpatialTfSamplerProblem& p, const Dims& d, const Batch& bt, const std::vector<Corners>& cs) {
    T* y = static_cast<T*>(p.y_data);
    const int64_t planes = bt.nb * d.C;
    const double alpha = p.out.alpha, beta = p.out.beta;
#pragma omp parallel if (planes * d.Ho * d.Wo > kParallelMin)
    {
        std::vector<value_t<T>> buf(static_cast<size_t>(d.Hi * d.Wi));
#pragma omp for schedule(static)
        for (int64_t nc = 0; nc < planes; ++nc) {
            const int64_t b = nc / d.C, c = nc - b * d.C, n = bt.n0 + b;
            stage_plane<T>(p, d, n, c, buf.data());
            T* yp = y + n * p.y.strides[0] + c * p.y.strides[1];
            const Corners* cr = cs.data() + b * d.Ho * d.Wo;
            for (int64_t h = 0; h < d.Ho; ++h)
                for (int64_t w = 0; w < d.Wo; ++w, ++cr) {
                    const double v = cr->any ? sample(*cr, buf.data()) : 0.0;
                    T& out = yp[h * p.y.strides[2] + w * p.y.strides[3]];
                    out = blend<T>(v, alpha, beta, out);
                }
        }
    }
}

template <class T>
void backward_dx(const core::SpatialTfSamplerProblem& p, const Dims& d, const Batch& bt,
                 const std::vector<Corners>& cs) {
    const T* dy = static_cast<const T*>(p.dy_data);
    T* dx = static_cast<T*>(p.dx_data);
    const int64_t planes = bt.nb * d.C;
    const double alpha = p.out.alpha, beta = p.out.beta;
#pragma omp parallel if (planes * d.Ho * d.Wo > kParallelMin)
    {
        std::vector<double> acc(static_cast<size_t>(d.Hi * d.Wi));
#pragma omp for schedule(static)
        for (int64_t nc = 0; nc < planes; ++nc) {
            const int64_t b = nc / d.C, c = nc - b * d.C, n = bt.n0 + b;
            std::fill(acc.begin(), acc.end(), 0.0);
            const T* dyp = dy + n * p.y.strides[0] + c * p.y.strides[1];
            const Corners* cr = cs.data() + b * d.Ho * d.Wo;
            for (int64_t h = 0; h < d.Ho; ++h)
                for (int64_t w = 0; w < d.Wo; ++w, ++cr) {
                    if (!cr->any) continue;
                    const double g = static_cast<double>(load(dyp[h * p.y.strides[2] + w * p.y.strides[3]]));
                    for (int q = 0; q < 4; ++q)
                        if (cr->in[q]) acc[static_cast<size_t>(cr->doff[q])] += cr->w[q] * g;
                }
            T* dxp = dx + n * p.dx.strides[0] + c * p.dx.strides[1];
            for (int64_t hh = 0; hh < d.Hi; ++hh)
                for (int64_t ww = 0; ww < d.Wi; ++ww) {
                    T& out = dxp[hh * p.dx.strides[2] + ww * p.dx.strides[3]];
                    out = blend<T>(acc[static_cast<size_t>(hh * d.Wi + ww)], alpha, beta, out);
                }
        }
    }
}

template <class T>
void backward_dgrid(const core::SpatialTfSamplerProblem& p, const Dims& d, const Batch& bt,
                    const std::vector<Corners>& cs) {
    const T* x = static_cast<const T*>(p.x_data);
    const T* dy = static_cast<const T*>(p.dy_data);
    const int gdt = static_cast<int>(p.grid_dtype);
    const int64_t rows = bt.nb * d.Ho;
    // One thread. With these rows split over an OpenMP region (parallel, then for), GCC
    // 13.3 at -O3 (a Release build with the GPU machine's compiler) produced wrong dgrid:
    // NaN or wrong values in every spatial_tf.txt case, the finite-difference dtheta off.
    // Right with GCC 12 (valgrind and UBSan clean there), with GCC 13.3 at -O1, and
    // without the region; the region is gone until the cause is found. The forward and
    // dx keep theirs: right with both compilers.
    {
        std::vector<double> dg(static_cast<size_t>(2 * d.Wo));
        for (int64_t bh = 0; bh < rows; ++bh) {
            const int64_t b = bh / d.Ho, h = bh - b * d.Ho, n = bt.n0 + b, nh = n * d.Ho + h;
            const Corners* row = cs.data() + bh * d.Wo;
            std::fill(dg.begin(), dg.end(), 0.0);
            // Channel by channel over the row (each position's sum still in channel order):
            // a channel's reads stay in two rows of its plane.
            for (int64_t c = 0; c < d.C; ++c) {
                const T* xp = x + n * p.x.strides[0] + c * p.x.strides[1];
                const T* dyr = dy + n * p.y.strides[0] + c * p.y.strides[1] + h * p.y.strides[2];
                for (int64_t w = 0; w < d.Wo; ++w) {
                    const Corners& cr = row[w];
                    if (!cr.any) continue;
                    const double g = static_cast<double>(load(dyr[w * p.y.strides[3]]));
                    double v[4];
                    for (int q = 0; q < 4; ++q) v[q] = cr.in[q] ? static_cast<double>(load(xp[cr.xoff[q]])) : 0.0;
                    dg[2 * w] += g * ((1 - cr.wy1) * (v[1] - v[0]) + cr.wy1 * (v[3] - v[2]));
                    dg[2 * w + 1] += g * ((1 - cr.wx1) * (v[2] - v[0]) + cr.wx1 * (v[3] - v[1]));
                }
            }
            for (int64_t w = 0; w < d.Wo; ++w) {
                const int64_t k = nh * d.Wo + w;
                core::blend_store(p.dgrid, 2 * k, gdt, dg[2 * w] * static_cast<double>(d.Wi - 1) * 0.5,
                                  p.grid_out.alpha, p.grid_out.beta);
                core::blend_store(p.dgrid, 2 * k + 1, gdt, dg[2 * w + 1] * static_cast<double>(d.Hi - 1) * 0.5,
                                  p.grid_out.alpha, p.grid_out.beta);
            }
        }
    }
}

class FastSpatialTfSampler final : public core::Impl<core::SpatialTfSamplerProblem> {
public:
    const char* name() const override { return "fast_spatial_tf_sampler"; }
    Status check(const core::SpatialTfSamplerProblem& p) const override {
        ODNN_REQUIRE_SUPPORTED(p.x.nb_dims == 4 && p.y.nb_dims == 4, "x or y is not 4-D");
        ODNN_REQUIRE_SUPPORTED(plane_fits(dims_of(p)), "an input plane of 2^31 elements or more");
        ODNN_RETURN_IF_ERROR(check_storage(p.x.dtype, "x", p.x.dtype, "x"));
        ODNN_RETURN_IF_ERROR(check_storage(p.y.dtype, p.backward ? "dy" : "y", p.x.dtype, "x"));
        if (p.backward) {
            ODNN_REQUIRE_SUPPORTED(p.dx.nb_dims == 4, "dx is not 4-D");
            ODNN_RETURN_IF_ERROR(check_storage(p.dx.dtype, "dx", p.x.dtype, "x"));
        }
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::SpatialTfSamplerProblem& p) const override {
        const Dims d = dims_of(p);
        const int64_t per_image = d.Ho * d.Wo * static_cast<int64_t>(sizeof(Corners));
        const int64_t nb = std::max<int64_t>(1, kCornerBytes / std::max<int64_t>(per_image, 1));
        for (int64_t n0 = 0; n0 < d.N; n0 += nb) {
            const Batch bt{n0, std::min(nb, d.N - n0)};
            const std::vector<Corners> cs = corners_of(p, d, bt);
            with_storage(p.x.dtype, [&](auto tag) {
                using T = decltype(tag);
                if (!p.backward) {
                    forward<T>(p, d, bt, cs);
                } else {
                    backward_dx<T>(p, d, bt, cs);
                    backward_dgrid<T>(p, d, bt, cs);
                }
            });
        }
        return Status::ok();
    }
};

// ---- Grid generator ----

template <class T>
void grid_forward(const core::SpatialTfGridProblem& p, const std::vector<double>& bx, const std::vector<double>& by) {
    const T* theta = static_cast<const T*>(p.in);
    T* grid = static_cast<T*>(p.out);
    const int64_t rows = p.n * p.h;
#pragma omp parallel for schedule(static) if (rows * p.w > kParallelMin)
    for (int64_t nh = 0; nh < rows; ++nh) {
        const int64_t n = nh / p.h, h = nh - n * p.h;
        double th[6];
        for (int k = 0; k < 6; ++k) th[k] = static_cast<double>(load(theta[n * 6 + k]));
        const double yh = by[static_cast<size_t>(h)];
        T* g = grid + nh * p.w * 2;
        for (int64_t w = 0; w < p.w; ++w) {
            const double xw = bx[static_cast<size_t>(w)];
            g[2 * w] = store<T>(th[0] * xw + th[1] * yh + th[2]);
            g[2 * w + 1] = store<T>(th[3] * xw + th[4] * yh + th[5]);
        }
    }
}

template <class T>
void grid_backward(const core::SpatialTfGridProblem& p, const std::vector<double>& bx, const std::vector<double>& by) {
    const T* dgrid = static_cast<const T*>(p.in);
    T* dtheta = static_cast<T*>(p.out);
#pragma omp parallel for schedule(static) if (p.n * p.h * p.w > kParallelMin)
    for (int64_t n = 0; n < p.n; ++n) {
        double d[6] = {0, 0, 0, 0, 0, 0};
        const T* g = dgrid + n * p.h * p.w * 2;
        for (int64_t h = 0; h < p.h; ++h) {
            const double yh = by[static_cast<size_t>(h)];
            for (int64_t w = 0; w < p.w; ++w, g += 2) {
                const double xw = bx[static_cast<size_t>(w)];
                const double g0 = static_cast<double>(load(g[0])), g1 = static_cast<double>(load(g[1]));
                d[0] += g0 * xw;
                d[1] += g0 * yh;
                d[2] += g0 * 1.0;
                d[3] += g1 * xw;
                d[4] += g1 * yh;
                d[5] += g1 * 1.0;
            }
        }
        for (int k = 0; k < 6; ++k) dtheta[n * 6 + k] = store<T>(d[k]);
    }
}

class FastSpatialTfGrid final : public core::Impl<core::SpatialTfGridProblem> {
public:
    const char* name() const override { return "fast_spatial_tf_grid"; }
    Status check(const core::SpatialTfGridProblem& p) const override {
        const int dt = static_cast<int>(p.dtype);
        return check_storage(dt, p.backward ? "dgrid" : "theta", dt, "the descriptor");
    }
    Status execute(const core::Handle&, const core::SpatialTfGridProblem& p) const override {
        std::vector<double> bx(static_cast<size_t>(p.w)), by(static_cast<size_t>(p.h));
        for (int64_t w = 0; w < p.w; ++w) bx[static_cast<size_t>(w)] = core::tf_base_coord(w, p.w);
        for (int64_t h = 0; h < p.h; ++h) by[static_cast<size_t>(h)] = core::tf_base_coord(h, p.h);
        with_storage(static_cast<int>(p.dtype), [&](auto tag) {
            using T = decltype(tag);
            if (p.backward)
                grid_backward<T>(p, bx, by);
            else
                grid_forward<T>(p, bx, by);
        });
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::SpatialTfSamplerProblem, FastSpatialTfSampler, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::SpatialTfGridProblem, FastSpatialTfGrid, core::kPriorityFast);

}  // namespace odnn::cpu
