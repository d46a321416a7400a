// Reference convolutions: the executable specification of the conv family. Plain
// loops over every output element, each a sum in double precision, reading and
// writing any supported data type through load_elem / store_elem. Shares no code with
// the fast paths (src/cpu/gemm_conv.cpp, src/cpu/direct_conv.cpp), which are tested
// against it. Registered last: it accepts every problem and needs no workspace.
#include <cmath>

#include "core/conv_problem.hpp"
#include "core/dtype.hpp"
#include "core/elem_access.hpp"

namespace odnn::cpu {

using core::ConvKind;
using core::ConvProblem;
using core::ConvTensor;
using core::Status;

namespace {

double load(const void* base, const ConvTensor& t, int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) {
    return core::load_elem(base, t.offset(n, c, d, h, w), t.dtype);
}

// The value written to an output element: alpha * acc + beta * old (old is read only
// when beta != 0), or the fused bias-activation epilogue.
double blend(const ConvProblem& p, double acc, const void* out, const ConvTensor& t, int64_t off, int64_t n,
             int64_t c, int64_t d, int64_t h, int64_t w) {
    if (p.epi.enabled) {
        double v = p.alpha * acc;
        if (p.epi.alpha2 != 0.0) v += p.epi.alpha2 * load(p.epi.z, p.epi.z_t, n, c, d, h, w);
        v += load(p.epi.bias, p.epi.bias_t, 0, c, 0, 0, 0);
        if (p.epi.relu) v = (v > 0.0 || (p.epi.propagate_nan && std::isnan(v))) ? v : 0.0;
        return v;
    }
    double v = p.alpha * acc;
    if (p.beta != 0.0) v += p.beta * core::load_elem(out, off, t.dtype);
    return v;
}

// Filter tap index used at spatial position `i` of the filter for dim `dim`.
inline int64_t tap(const ConvProblem& p, int dim, int64_t i) { return p.flip ? p.filt[dim] - 1 - i : i; }

void ref_fwd(const ConvProblem& p) {
    const int64_t cg = p.cg(), kg = p.kg();
    const int64_t total = p.n * p.k * p.out[0];
#pragma omp parallel for schedule(static) if (p.flops() > 1e5)
    for (int64_t nkd = 0; nkd < total; ++nkd) {
        const int64_t n = nkd / (p.k * p.out[0]);
        const int64_t k = nkd / p.out[0] % p.k;
        const int64_t od = nkd % p.out[0];
        const int64_t g = k / kg;
        for (int64_t oh = 0; oh < p.out[1]; ++oh)
            for (int64_t ow = 0; ow < p.out[2]; ++ow) {
                double acc = 0.0;
                for (int64_t c = 0; c < cg; ++c)
                    for (int64_t t = 0; t < p.filt[0]; ++t) {
                        const int64_t id = od * p.stride[0] - p.pad[0] + t * p.dil[0];
                        if (id < 0 || id >= p.in[0]) continue;
                        for (int64_t r = 0; r < p.filt[1]; ++r) {
                            const int64_t ih = oh * p.stride[1] - p.pad[1] + r * p.dil[1];
                            if (ih < 0 || ih >= p.in[1]) continue;
                            for (int64_t s = 0; s < p.filt[2]; ++s) {
                                const int64_t iw = ow * p.stride[2] - p.pad[2] + s * p.dil[2];
                                if (iw < 0 || iw >= p.in[2]) continue;
                                acc += load(p.x_data, p.x, n, g * cg + c, id, ih, iw) *
                                       load(p.w_data, p.w, k, c, tap(p, 0, t), tap(p, 1, r), tap(p, 2, s));
                            }
                        }
                    }
                const int64_t off = p.y.offset(n, k, od, oh, ow);
                core::store_elem(p.y_data, off, p.y.dtype, blend(p, acc, p.y_data, p.y, off, n, k, od, oh, ow));
            }
    }
}

void ref_bwd_data(const ConvProblem& p) {
    const int64_t cg = p.cg(), kg = p.kg();
    const int64_t total = p.n * p.c * p.in[0];
#pragma omp parallel for schedule(static) if (p.flops() > 1e5)
    for (int64_t ncd = 0; ncd < total; ++ncd) {
        const int64_t n = ncd / (p.c * p.in[0]);
        const int64_t c = ncd / p.in[0] % p.c;
        const int64_t id = ncd % p.in[0];
        const int64_t g = c / cg, cl = c % cg;
        for (int64_t ih = 0; ih < p.in[1]; ++ih)
            for (int64_t iw = 0; iw < p.in[2]; ++iw) {
                double acc = 0.0;
                for (int64_t kl = 0; kl < kg; ++kl) {
                    const int64_t k = g * kg + kl;
                    for (int64_t t = 0; t < p.filt[0]; ++t) {
                        const int64_t nd = id + p.pad[0] - t * p.dil[0];
                        if (nd < 0 || nd % p.stride[0] != 0 || nd / p.stride[0] >= p.out[0]) continue;
                        for (int64_t r = 0; r < p.filt[1]; ++r) {
                            const int64_t nh = ih + p.pad[1] - r * p.dil[1];
                            if (nh < 0 || nh % p.stride[1] != 0 || nh / p.stride[1] >= p.out[1]) continue;
                            for (int64_t s = 0; s < p.filt[2]; ++s) {
                                const int64_t nw = iw + p.pad[2] - s * p.dil[2];
                                if (nw < 0 || nw % p.stride[2] != 0 || nw / p.stride[2] >= p.out[2]) continue;
                                acc += load(p.y_data, p.y, n, k, nd / p.stride[0], nh / p.stride[1],
                                            nw / p.stride[2]) *
                                       load(p.w_data, p.w, k, cl, tap(p, 0, t), tap(p, 1, r), tap(p, 2, s));
                            }
                        }
                    }
                }
                const int64_t off = p.x.offset(n, c, id, ih, iw);
                core::store_elem(p.x_data, off, p.x.dtype, blend(p, acc, p.x_data, p.x, off, n, c, id, ih, iw));
            }
    }
}

void ref_bwd_filter(const ConvProblem& p) {
    const int64_t cg = p.cg(), kg = p.kg();
    const int64_t total = p.k * cg;
#pragma omp parallel for schedule(static) if (p.flops() > 1e5)
    for (int64_t kc = 0; kc < total; ++kc) {
        const int64_t k = kc / cg, cl = kc % cg;
        const int64_t c = k / kg * cg + cl;
        for (int64_t t = 0; t < p.filt[0]; ++t)
            for (int64_t r = 0; r < p.filt[1]; ++r)
                for (int64_t s = 0; s < p.filt[2]; ++s) {
                    double acc = 0.0;
                    for (int64_t n = 0; n < p.n; ++n)
                        for (int64_t od = 0; od < p.out[0]; ++od) {
                            const int64_t id = od * p.stride[0] - p.pad[0] + t * p.dil[0];
                            if (id < 0 || id >= p.in[0]) continue;
                            for (int64_t oh = 0; oh < p.out[1]; ++oh) {
                                const int64_t ih = oh * p.stride[1] - p.pad[1] + r * p.dil[1];
                                if (ih < 0 || ih >= p.in[1]) continue;
                                for (int64_t ow = 0; ow < p.out[2]; ++ow) {
                                    const int64_t iw = ow * p.stride[2] - p.pad[2] + s * p.dil[2];
                                    if (iw < 0 || iw >= p.in[2]) continue;
                                    acc += load(p.x_data, p.x, n, c, id, ih, iw) *
                                           load(p.y_data, p.y, n, k, od, oh, ow);
                                }
                            }
                        }
                    const int64_t ft = tap(p, 0, t), fr = tap(p, 1, r), fs = tap(p, 2, s);
                    const int64_t off = p.w.offset(k, cl, ft, fr, fs);
                    core::store_elem(p.w_data, off, p.w.dtype, blend(p, acc, p.w_data, p.w, off, k, cl, ft, fr, fs));
                }
    }
}

class RefConv final : public core::Impl<ConvProblem> {
public:
    const char* name() const override { return "ref_conv"; }
    Status execute(const core::Handle&, const ConvProblem& p) const override {
        switch (p.kind) {
            case ConvKind::fwd: ref_fwd(p); break;
            case ConvKind::bwd_data: ref_bwd_data(p); break;
            case ConvKind::bwd_filter: ref_bwd_filter(p); break;
        }
        return Status::ok();
    }
};

class RefConvBiasGrad final : public core::Impl<core::ConvBiasGradProblem> {
public:
    const char* name() const override { return "ref_conv_bias_grad"; }
    Status execute(const core::Handle&, const core::ConvBiasGradProblem& p) const override {
        const ConvTensor& t = p.dy;
#pragma omp parallel for schedule(static) if (t.num_elements() > 65536)
        for (int64_t k = 0; k < t.dims[1]; ++k) {
            double acc = 0.0;
            for (int64_t n = 0; n < t.dims[0]; ++n)
                for (int64_t d = 0; d < t.dims[2]; ++d)
                    for (int64_t h = 0; h < t.dims[3]; ++h)
                        for (int64_t w = 0; w < t.dims[4]; ++w) acc += load(p.dy_data, t, n, k, d, h, w);
            const int64_t off = p.db.offset(0, k, 0, 0, 0);
            double v = p.alpha * acc;
            if (p.beta != 0.0) v += p.beta * core::load_elem(p.db_data, off, p.db.dtype);
            core::store_elem(p.db_data, off, p.db.dtype, v);
        }
        return Status::ok();
    }
};

// Matrix row (n, od, oh, ow), column (c, t, r, s) over all C channels, stored column-major
// (as cuDNN 9.19 does, measured); the taps are ordered as the filter's so that
// y = col x w^T holds in either convolution mode.
class RefIm2Col final : public core::Impl<core::Im2ColProblem> {
public:
    const char* name() const override { return "ref_im2col"; }
    Status execute(const core::Handle&, const core::Im2ColProblem& q) const override {
        const ConvProblem& p = q.conv;
        const int64_t cols = p.c * p.filt_pixels();
        const int64_t rows = p.n * p.out_pixels();
#pragma omp parallel for schedule(static) if (rows * cols > 65536)
        for (int64_t row = 0; row < rows; ++row) {
            const int64_t n = row / p.out_pixels();
            const int64_t od = row / (p.out[1] * p.out[2]) % p.out[0];
            const int64_t oh = row / p.out[2] % p.out[1];
            const int64_t ow = row % p.out[2];
            for (int64_t col = 0; col < cols; ++col) {
                const int64_t c = col / p.filt_pixels();
                const int64_t ft = col / (p.filt[1] * p.filt[2]) % p.filt[0];
                const int64_t fr = col / p.filt[2] % p.filt[1];
                const int64_t fs = col % p.filt[2];
                const int64_t t = tap(p, 0, ft), r = tap(p, 1, fr), s = tap(p, 2, fs);
                const int64_t id = od * p.stride[0] - p.pad[0] + t * p.dil[0];
                const int64_t ih = oh * p.stride[1] - p.pad[1] + r * p.dil[1];
                const int64_t iw = ow * p.stride[2] - p.pad[2] + s * p.dil[2];
                double v = 0.0;
                if (id >= 0 && id < p.in[0] && ih >= 0 && ih < p.in[1] && iw >= 0 && iw < p.in[2])
                    v = load(p.x_data, p.x, n, c, id, ih, iw);
                core::store_elem(q.col, col * rows + row, p.x.dtype, v);
            }
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, ConvProblem, RefConv, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::ConvBiasGradProblem, RefConvBiasGrad, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::Im2ColProblem, RefIm2Col, core::kPriorityReference);

}  // namespace odnn::cpu
