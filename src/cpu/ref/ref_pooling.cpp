// Reference pooling forward and backward, any rank, any strides, in double: walk every
// output window (rules in core/pool_problem.hpp); backward accumulates into a dense
// buffer, then blends into dx.
#include <cmath>
#include <vector>

#include "core/elem_access.hpp"
#include "core/pool_problem.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

struct Window {
    int64_t lo[core::kMaxPoolingDims], hi[core::kMaxPoolingDims];
    bool empty = false;
};

// Splits the logical index t of an output element into n, c and o[].
void split_output(const core::PoolGeom& g, int64_t t, int64_t* n, int64_t* c, int64_t* o) {
    for (int d = g.nsp - 1; d >= 0; --d) {
        o[d] = t % g.out[d];
        t /= g.out[d];
    }
    *c = t % g.c;
    *n = t / g.c;
}

Window window_of(const core::PoolGeom& g, const int64_t* o) {
    Window w;
    for (int d = 0; d < g.nsp; ++d) {
        g.window(d, o[d], &w.lo[d], &w.hi[d]);
        if (w.hi[d] <= w.lo[d]) w.empty = true;
    }
    return w;
}

// Calls f(spatial index within the (n, c) image, row-major) for every input position
// of the window, in window order.
template <class F>
void for_each_in(const core::PoolGeom& g, const Window& w, F&& f) {
    if (w.empty) return;
    int64_t i[core::kMaxPoolingDims];
    for (int d = 0; d < g.nsp; ++d) i[d] = w.lo[d];
    for (;;) {
        int64_t lin = 0;
        for (int d = 0; d < g.nsp; ++d) lin = lin * g.in[d] + i[d];
        f(lin);
        int d = g.nsp - 1;
        while (d >= 0 && ++i[d] == w.hi[d]) {
            i[d] = w.lo[d];
            --d;
        }
        if (d < 0) return;
    }
}

int64_t spatial_offset(const core::PoolGeom& g, const core::TensorDesc& t, int64_t lin) {
    int64_t off = 0;
    for (int d = g.nsp - 1; d >= 0; --d) {
        off += (lin % g.in[d]) * t.strides[d + 2];
        lin /= g.in[d];
    }
    return off;
}

int64_t output_offset(const core::PoolGeom& g, const core::TensorDesc& t, int64_t n, int64_t c, const int64_t* o) {
    int64_t off = n * t.strides[0] + c * t.strides[1];
    for (int d = 0; d < g.nsp; ++d) off += o[d] * t.strides[d + 2];
    return off;
}

double divisor(const core::PoolGeom& g, const int64_t* o, int64_t count) {
    if (g.mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING) return static_cast<double>(count);
    double v = 1.0;
    for (int d = 0; d < g.nsp; ++d) v *= static_cast<double>(g.padded_extent(d, o[d]));
    return v;
}

// Max of a window by the rules; *arg = spatial index of the chosen element (-1: none).
double window_max(const core::PoolGeom& g, const Window& w, const void* x, const core::TensorDesc& xd, int64_t base,
                  int64_t* arg) {
    double best = 0.0;
    bool found = false, nan_seen = false, done = false;
    int64_t first = -1;
    *arg = -1;
    for_each_in(g, w, [&](int64_t lin) {
        if (done) return;
        const double v = core::load_elem(x, base + spatial_offset(g, xd, lin), xd.dtype);
        if (first < 0) first = lin;
        if (std::isnan(v)) {
            if (g.propagate_nan) {
                best = v;
                *arg = lin;
                done = true;
            }
            nan_seen = true;
            return;
        }
        if (!found || v > best) {
            best = v;
            *arg = lin;
            found = true;
        }
    });
    if (done) return best;
    if (!found && nan_seen) {  // only NaNs
        *arg = first;
        return NAN;
    }
    return found ? best : 0.0;
}

class RefPoolingFwd final : public core::Impl<core::PoolingFwdProblem> {
public:
    const char* name() const override { return "ref_pooling_fwd"; }
    Status execute(const core::Handle&, const core::PoolingFwdProblem& p) const override {
        const core::PoolGeom& g = p.g;
        int64_t total = g.n * g.c;
        for (int d = 0; d < g.nsp; ++d) total *= g.out[d];
#pragma omp parallel for schedule(static) if (total > 16384)
        for (int64_t t = 0; t < total; ++t) {
            int64_t n, c, o[core::kMaxPoolingDims];
            split_output(g, t, &n, &c, o);
            const Window w = window_of(g, o);
            const int64_t base = n * p.x.strides[0] + c * p.x.strides[1];
            double r;
            if (g.is_max()) {
                int64_t arg;
                r = window_max(g, w, p.x_data, p.x, base, &arg);
            } else {
                double sum = 0.0;
                int64_t count = 0;
                for_each_in(g, w, [&](int64_t lin) {
                    sum += core::load_elem(p.x_data, base + spatial_offset(g, p.x, lin), p.x.dtype);
                    ++count;
                });
                const double div = divisor(g, o, count);
                r = div > 0 ? sum / div : 0.0;
            }
            core::blend_store(p.y_data, output_offset(g, p.y, n, c, o), p.y.dtype, r, p.out.alpha, p.out.beta);
        }
        return Status::ok();
    }
};

class RefPoolingBwd final : public core::Impl<core::PoolingBwdProblem> {
public:
    const char* name() const override { return "ref_pooling_bwd"; }
    Status execute(const core::Handle&, const core::PoolingBwdProblem& p) const override {
        const core::PoolGeom& g = p.g;
        int64_t image = 1, total = g.n * g.c;
        for (int d = 0; d < g.nsp; ++d) {
            image *= g.in[d];
            total *= g.out[d];
        }
        std::vector<double> acc(static_cast<size_t>(g.n * g.c * image), 0.0);
        // Each (n, c) image is independent: parallel over images keeps the sums exact.
#pragma omp parallel for schedule(static) if (g.n * g.c > 1 && total > 16384)
        for (int64_t nc = 0; nc < g.n * g.c; ++nc) {
            const int64_t per = total / (g.n * g.c);
            for (int64_t t = nc * per; t < (nc + 1) * per; ++t) {
                int64_t n, c, o[core::kMaxPoolingDims];
                split_output(g, t, &n, &c, o);
                const Window w = window_of(g, o);
                const double dy = core::load_elem(p.dy_data, output_offset(g, p.dy, n, c, o), p.dy.dtype);
                double* img = &acc[static_cast<size_t>(nc * image)];
                if (g.is_max()) {
                    int64_t arg;
                    window_max(g, w, p.x_data, p.x, n * p.x.strides[0] + c * p.x.strides[1], &arg);
                    if (arg >= 0) img[arg] += dy;
                } else {
                    int64_t count = 0;
                    for_each_in(g, w, [&](int64_t) { ++count; });
                    const double div = divisor(g, o, count);
                    if (div > 0) for_each_in(g, w, [&](int64_t lin) { img[lin] += dy / div; });
                }
            }
        }
        const int64_t nx = g.n * g.c * image;
#pragma omp parallel for schedule(static) if (nx > 65536)
        for (int64_t i = 0; i < nx; ++i) {
            const int64_t nc = i / image, lin = i % image;
            const int64_t off = (nc / g.c) * p.dx.strides[0] + (nc % g.c) * p.dx.strides[1] + spatial_offset(g, p.dx, lin);
            core::blend_store(p.dx_data, off, p.dx.dtype, acc[static_cast<size_t>(i)], p.out.alpha, p.out.beta);
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::PoolingFwdProblem, RefPoolingFwd, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::PoolingBwdProblem, RefPoolingBwd, core::kPriorityReference);

}  // namespace odnn::cpu
