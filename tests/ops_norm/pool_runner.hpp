// Runs one pooling case (tests/ops_norm/cases/pooling.txt) through the public API:
// forward, then backward (floating-point types). Also the test's own pooling oracle.
//
// Case keys: dt (f32 f64 f16 bf16 i8), layout, n c [d] h w, mode (max maxdet avg_in
// avg_ex), win pad stride (one value for every spatial dim, or per dim joined by x),
// nan (propagate NaN), alpha beta (y), dalpha dbeta (dx), ceil (y one larger than
// the floor rule in every spatial dim), ties (small-integer x: many equal values),
// nanx (NaN in some x elements: every nanstep-th from nanat, default every 7th from 0),
// xpad / dxpad (x's / dx's rows that many elements longer than W: padded row strides).
#pragma once

#include "ops_norm/norm_testlib.hpp"

namespace normtest {

inline std::vector<int> per_dim(const std::string& s, int nsp, int def) {
    std::vector<int> v;
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, 'x'))
        if (!part.empty()) v.push_back(std::stoi(part));
    if (v.empty()) v.push_back(def);
    while (static_cast<int>(v.size()) < nsp) v.push_back(v.back());
    return v;
}

struct PoolSpec {
    int mode = CUDNN_POOLING_MAX;
    bool propagate = false;
    std::vector<int> win, pad, stride;
};

// Oracle: y (logical order) and, for dy, dx.
struct PoolOracle {
    std::vector<double> y, dx;
};

inline PoolOracle pool_oracle(const PoolSpec& s, const std::vector<int>& xd, const std::vector<int>& yd,
                              const std::vector<double>& x, const std::vector<double>* dy) {
    const int nsp = static_cast<int>(xd.size()) - 2;
    int64_t img_in = 1, img_out = 1, wsize = 1;
    for (int d = 0; d < nsp; ++d) {
        img_in *= xd[d + 2];
        img_out *= yd[d + 2];
        wsize *= s.win[d];
    }
    const int64_t images = static_cast<int64_t>(xd[0]) * xd[1];
    PoolOracle r;
    r.y.assign(images * img_out, 0.0);
    if (dy) r.dx.assign(images * img_in, 0.0);
    for (int64_t im = 0; im < images; ++im)
        for (int64_t o = 0; o < img_out; ++o) {
            std::vector<int64_t> oc(nsp);
            for (int d = nsp - 1, rem = static_cast<int>(o); d >= 0; --d) {
                oc[d] = rem % yd[d + 2];
                rem /= yd[d + 2];
            }
            std::vector<int64_t> members;  // input positions of the window, window order
            int64_t padded = 0;
            for (int64_t k = 0; k < wsize; ++k) {
                int64_t rem = k, lin = 0;
                bool inside = true, in_padded = true;
                std::vector<int64_t> pos(nsp);
                for (int d = nsp - 1; d >= 0; --d) {
                    pos[d] = oc[d] * s.stride[d] - s.pad[d] + rem % s.win[d];
                    rem /= s.win[d];
                }
                for (int d = 0; d < nsp; ++d) {
                    inside = inside && pos[d] >= 0 && pos[d] < xd[d + 2];
                    in_padded = in_padded && pos[d] >= -s.pad[d] && pos[d] < xd[d + 2] + s.pad[d];
                    lin = lin * xd[d + 2] + pos[d];
                }
                padded += in_padded ? 1 : 0;
                if (inside) members.push_back(im * img_in + lin);
            }
            double v = 0.0;
            int64_t arg = -1;
            const bool is_max = s.mode == CUDNN_POOLING_MAX || s.mode == CUDNN_POOLING_MAX_DETERMINISTIC;
            if (is_max && !members.empty()) {
                int64_t first_nan = -1, best = -1;
                for (int64_t m : members) {
                    if (std::isnan(x[m])) {
                        if (first_nan < 0) first_nan = m;
                    } else if (best < 0 || x[m] > x[best]) {
                        best = m;
                    }
                }
                if (s.propagate && first_nan >= 0) arg = first_nan;
                else if (best >= 0) arg = best;
                else arg = members.front();
                v = (best < 0 || (s.propagate && first_nan >= 0)) ? NAN : x[arg];
            } else if (!is_max) {
                double sum = 0.0;
                for (int64_t m : members) sum += x[m];
                const double div = s.mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
                                       ? static_cast<double>(members.size())
                                       : static_cast<double>(padded);
                v = div > 0 ? sum / div : 0.0;
                if (dy && div > 0)
                    for (int64_t m : members) r.dx[m] += (*dy)[im * img_out + o] / div;
            }
            r.y[im * img_out + o] = v;
            if (dy && is_max && arg >= 0) r.dx[arg] += (*dy)[im * img_out + o];
        }
    return r;
}

inline int parse_pool_mode(const std::string& s) {
    if (s == "maxdet") return CUDNN_POOLING_MAX_DETERMINISTIC;
    if (s == "avg_in") return CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    if (s == "avg_ex") return CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    return CUDNN_POOLING_MAX;
}

struct PoolData {
    Case c;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    PoolSpec spec;
    std::vector<int> xdims, ydims;
    double alpha = 1, beta = 0, dalpha = 1, dbeta = 0;
    TensorPtr x, y, dy, dx;
    std::vector<double> y0, dx0;
    std::vector<unsigned char> ybytes0, dxbytes0;
    bool backward = true;
};

inline void pool_setup(PoolData& d, const Case& c) {
    d.c = c;
    d.dt = parse_dt(c.get("dt", "f32"));
    d.xdims = c.dims();
    const int nsp = static_cast<int>(d.xdims.size()) - 2;
    d.spec.mode = parse_pool_mode(c.get("mode", "max"));
    d.spec.propagate = c.geti("nan", 0) != 0;
    d.spec.win = per_dim(c.get("win", "2"), nsp, 2);
    d.spec.pad = per_dim(c.get("pad", "0"), nsp, 0);
    d.spec.stride = per_dim(c.get("stride", "2"), nsp, 2);
    d.alpha = c.getd("alpha", 1);
    d.beta = c.getd("beta", 0);
    d.dalpha = c.getd("dalpha", 1);
    d.dbeta = c.getd("dbeta", 0);
    d.backward = d.dt != CUDNN_DATA_INT8;
    d.ydims = d.xdims;
    for (int i = 0; i < nsp; ++i)
        d.ydims[i + 2] = 1 + (d.xdims[i + 2] + 2 * d.spec.pad[i] - d.spec.win[i]) / d.spec.stride[i] + c.geti("ceil", 0);
    std::mt19937_64 rng(c.seed());
    const Layout layout = parse_layout(c.get("layout", "nchw"));
    d.x = Tensor::make(d.dt, d.xdims, layout, c.seed(), c.geti("xpad", 0));
    if (c.geti("ties", 0) || d.dt == CUDNN_DATA_INT8) {
        std::uniform_int_distribution<int> u(-3, 3);
        for (int64_t i = 0; i < d.x->count(); ++i) d.x->set(i, u(rng) * (d.dt == CUDNN_DATA_INT8 ? 7 : 1));
    } else {
        d.x->fill_uniform(rng, -2.0, 2.0);
    }
    if (c.geti("nanx", 0)) {
        const int64_t step = std::max<int64_t>(1, c.geti("nanstep", 7));
        for (int64_t i = c.geti("nanat", 0); i < d.x->count(); i += step) d.x->set(i, NAN);
    }
    auto blend_target = [&](TensorPtr& t, bool blend, std::vector<double>* prior, std::vector<unsigned char>* bytes) {
        if (blend) {
            if (d.dt == CUDNN_DATA_INT8) {
                std::uniform_int_distribution<int> u(-20, 20);
                for (int64_t i = 0; i < t->count(); ++i) t->set(i, u(rng));
            } else {
                t->fill_uniform(rng, -1.0, 1.0);
            }
        } else {
            t->poison();
        }
        *prior = t->values();
        *bytes = t->buf;
    };
    d.y = Tensor::make(d.dt, d.ydims, layout, c.seed() >> 3);
    blend_target(d.y, d.beta != 0 || d.dt == CUDNN_DATA_INT8, &d.y0, &d.ybytes0);
    if (d.backward) {
        d.dy = Tensor::make(d.dt, d.ydims, layout, c.seed() >> 5);
        d.dy->fill_uniform(rng, -1.0, 1.0);
        d.dx = Tensor::make(d.dt, d.xdims, layout, c.seed() >> 7, c.geti("dxpad", 0));
        blend_target(d.dx, d.dbeta != 0, &d.dx0, &d.dxbytes0);
    }
}

inline void pool_run(PoolData& d, cudnnHandle_t h, Memory& mem) {
    const int nsp = static_cast<int>(d.xdims.size()) - 2;
    cudnnPoolingDescriptor_t pd = nullptr;
    ASSERT_EQ(cudnnCreatePoolingDescriptor(&pd), CUDNN_STATUS_SUCCESS);
    ASSERT_OK(cudnnSetPoolingNdDescriptor(pd, static_cast<cudnnPoolingMode_t>(d.spec.mode),
                                          d.spec.propagate ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, nsp,
                                          d.spec.win.data(), d.spec.pad.data(), d.spec.stride.data()));
    // The floor rule, as the library computes it.
    std::vector<int> floor_dims(d.xdims.size());
    ASSERT_OK(cudnnGetPoolingNdForwardOutputDim(pd, d.x->desc, static_cast<int>(d.xdims.size()), floor_dims.data()));
    for (size_t i = 0; i < d.xdims.size(); ++i)
        EXPECT_EQ(floor_dims[i] + (i >= 2 ? d.c.geti("ceil", 0) : 0), d.ydims[i]) << "dim " << i;
    const bool dbl = d.dt == CUDNN_DATA_DOUBLE;
    const float fa = static_cast<float>(d.alpha), fb = static_cast<float>(d.beta);
    const float fda = static_cast<float>(d.dalpha), fdb = static_cast<float>(d.dbeta);
    ASSERT_OK(cudnnPoolingForward(h, pd, dbl ? static_cast<const void*>(&d.alpha) : &fa, d.x->desc, mem.ptr(*d.x),
                                  dbl ? static_cast<const void*>(&d.beta) : &fb, d.y->desc, mem.ptr(*d.y)));
    mem.pull(*d.y);
    if (d.backward) {
        ASSERT_OK(cudnnPoolingBackward(h, pd, dbl ? static_cast<const void*>(&d.dalpha) : &fda, d.y->desc,
                                       mem.ptr(*d.y), d.dy->desc, mem.ptr(*d.dy), d.x->desc, mem.ptr(*d.x),
                                       dbl ? static_cast<const void*>(&d.dbeta) : &fdb, d.dx->desc, mem.ptr(*d.dx)));
        mem.pull(*d.dx);
    }
    cudnnDestroyPoolingDescriptor(pd);
}

}  // namespace normtest
