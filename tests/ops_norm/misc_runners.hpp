// Runners (and the tests' own oracles) for dropout, LRN, divisive normalization and
// the spatial transformer: one case line through the public API on a handle, inputs
// from the case's seed, so the CPU tests and the GPU comparison share them.
//
// Case keys (besides dt, layout, n c [d] h w):
//   drop     p (probability), seed, reps (forward calls in a row), inplace (1: y is x and
//            dx is dy; one call)
//   lrn      ln la lb lk (lrnN, alpha, beta, k), alpha beta (scaling)
//   divnorm  as lrn, means (0: NULL means), dmeans (0: NULL dMeans)
//   stf      hi wi (input size; h w are the output's), theta (identity | random), alpha beta
//            (y / dx), galpha gbeta (dgrid)
#pragma once

#include <array>

#include "ops_norm/norm_testlib.hpp"

namespace normtest {

// ---- Dropout ----

// The test's own Philox4x32-10 (the generator the library documents).
inline std::array<uint32_t, 4> philox(uint64_t block, uint64_t seed) {
    uint32_t c[4] = {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0x6f646e6eu, 0u};
    uint32_t k[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
    for (int r = 0; r < 10; ++r) {
        if (r) {
            k[0] += 0x9E3779B9u;
            k[1] += 0xBB67AE85u;
        }
        const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c[0];
        const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c[2];
        const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0];
        const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1];
        c[0] = n0;
        c[1] = static_cast<uint32_t>(p1);
        c[2] = n2;
        c[3] = static_cast<uint32_t>(p0);
    }
    return {c[0], c[1], c[2], c[3]};
}

struct DropData {
    Case c;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    float p = 0.5f;
    unsigned long long seed = 0;
    int reps = 1;
    TensorPtr x, y, dy, dx, reserve, states;
    std::vector<std::vector<unsigned char>> y_runs, reserve_runs;  // per forward call
    size_t states_bytes = 0, reserve_bytes = 0;
    uint64_t offset_after = 0;
    bool inplace = false;
    std::vector<double> x0, dy0;  // x and dy before the calls
    Tensor& out() { return inplace ? *x : *y; }
    Tensor& grad() { return inplace ? *dy : *dx; }
};

inline void drop_setup(DropData& d, const Case& c) {
    d.c = c;
    d.dt = parse_dt(c.get("dt", "f32"));
    d.p = static_cast<float>(c.getd("p", 0.5));
    d.seed = static_cast<unsigned long long>(c.getd("seed", 1234));
    d.reps = c.geti("reps", 1);
    const Layout layout = parse_layout(c.get("layout", "nchw"));
    std::mt19937_64 rng(c.seed());
    d.x = Tensor::make(d.dt, c.dims(), layout, c.seed());
    d.x->fill_uniform(rng, 0.5, 2.0);  // never 0: a dropped element is recognisable
    d.y = Tensor::make(d.dt, c.dims(), layout, c.seed() >> 3);
    d.y->poison();
    d.dy = Tensor::make(d.dt, c.dims(), layout, c.seed() >> 5);
    d.dy->fill_uniform(rng, 0.5, 2.0);
    d.dx = Tensor::make(d.dt, c.dims(), layout, c.seed() >> 7);
    d.dx->poison();
    d.inplace = c.geti("inplace", 0) != 0;
    ASSERT_TRUE(!d.inplace || d.reps == 1) << "inplace takes one forward call";
    d.x0 = d.x->values();
    d.dy0 = d.dy->values();
}

inline void drop_run(DropData& d, cudnnHandle_t h, Memory& mem) {
    ASSERT_OK(cudnnDropoutGetStatesSize(h, &d.states_bytes));
    ASSERT_OK(cudnnDropoutGetReserveSpaceSize(d.x->desc, &d.reserve_bytes));
    d.states = Tensor::make(CUDNN_DATA_INT8, {1, 1, 1, static_cast<int>(d.states_bytes)}, Layout::nchw);
    d.reserve = Tensor::make(CUDNN_DATA_INT8, {1, 1, 1, static_cast<int>(d.reserve_bytes)}, Layout::nchw);
    d.reserve->poison();
    cudnnDropoutDescriptor_t dd;
    ASSERT_OK(cudnnCreateDropoutDescriptor(&dd));
    ASSERT_OK(cudnnSetDropoutDescriptor(dd, h, d.p, mem.ptr(*d.states), d.states_bytes, d.seed));
    for (int r = 0; r < d.reps; ++r) {
        ASSERT_OK(cudnnDropoutForward(h, dd, d.x->desc, mem.ptr(*d.x), d.out().desc, mem.ptr(d.out()),
                                      mem.ptr(*d.reserve), d.reserve_bytes));
        mem.pull(d.out());
        mem.pull(*d.reserve);
        d.y_runs.push_back(d.out().buf);
        d.reserve_runs.push_back(d.reserve->buf);
    }
    ASSERT_OK(cudnnDropoutBackward(h, dd, d.dy->desc, mem.ptr(*d.dy), d.grad().desc, mem.ptr(d.grad()),
                                   mem.ptr(*d.reserve), d.reserve_bytes));
    mem.pull(d.grad());
    mem.pull(*d.states);
    std::memcpy(&d.offset_after, d.states->buf.data() + 24, 8);  // DropoutStates::offset
    cudnnDestroyDropoutDescriptor(dd);
}

// ---- LRN and divisive normalization ----

struct LrnSpec {
    unsigned n = 5;
    double alpha = 1e-4, beta = 0.75, k = 2.0;
    int behind() const { return static_cast<int>((n - 1) / 2); }
    int ahead() const { return static_cast<int>(n - 1) - behind(); }
};

// Oracle on logical (n, c, spatial...) arrays. divisive: window over the spatial dims.
inline std::vector<double> lrn_oracle(const LrnSpec& s, const std::vector<int>& dims, const std::vector<double>& x,
                                      const std::vector<double>* means, const std::vector<double>* dy, bool divisive) {
    const int nd = static_cast<int>(dims.size());
    const int64_t total = static_cast<int64_t>(x.size());
    std::vector<double> u = x;
    if (means)
        for (int64_t i = 0; i < total; ++i) u[i] -= (*means)[i];
    auto coords = [&](int64_t i) {
        std::vector<int64_t> c(nd);
        for (int d = nd - 1; d >= 0; --d) {
            c[d] = i % dims[d];
            i /= dims[d];
        }
        return c;
    };
    auto linear = [&](const std::vector<int64_t>& c) {
        int64_t l = 0;
        for (int d = 0; d < nd; ++d) l = l * dims[d] + c[d];
        return l;
    };
    const double a = divisive ? s.alpha / std::pow(static_cast<double>(s.n), nd - 2) : s.alpha / s.n;
    // Sum of v over the window around i (lo before, hi after in each windowed dim).
    auto window_sum = [&](const std::vector<double>& v, int64_t i, int lo, int hi) {
        const std::vector<int64_t> c = coords(i);
        std::vector<int> wd;  // windowed dims
        if (divisive)
            for (int d = 2; d < nd; ++d) wd.push_back(d);
        else
            wd.push_back(1);
        int64_t count = 1;
        for (size_t k = 0; k < wd.size(); ++k) count *= lo + hi + 1;
        double sum = 0.0;
        for (int64_t k = 0; k < count; ++k) {
            std::vector<int64_t> q = c;
            int64_t rem = k;
            bool inside = true;
            for (int d : wd) {
                q[d] = c[d] - lo + rem % (lo + hi + 1);
                rem /= lo + hi + 1;
                inside = inside && q[d] >= 0 && q[d] < dims[d];
            }
            if (inside) sum += v[linear(q)];
        }
        return sum;
    };
    std::vector<double> u2(total), s2(total), out(total);
    for (int64_t i = 0; i < total; ++i) u2[i] = u[i] * u[i];
    for (int64_t i = 0; i < total; ++i) s2[i] = s.k + a * window_sum(u2, i, s.behind(), s.ahead());
    if (!dy) {
        for (int64_t i = 0; i < total; ++i) out[i] = u[i] * std::pow(s2[i], -s.beta);
        return out;
    }
    std::vector<double> t(total);
    for (int64_t i = 0; i < total; ++i) t[i] = (*dy)[i] * u[i] * std::pow(s2[i], -s.beta - 1);
    for (int64_t i = 0; i < total; ++i)
        out[i] = (*dy)[i] * std::pow(s2[i], -s.beta) - 2 * s.beta * a * u[i] * window_sum(t, i, s.ahead(), s.behind());
    return out;
}

struct LrnData {
    Case c;
    bool divisive = false;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    LrnSpec spec;
    double alpha = 1, beta = 0;
    TensorPtr x, means, y, dy, dx, dmeans, temp;
    std::vector<double> y0, dx0, dmeans0;
};

inline void lrn_setup(LrnData& d, const Case& c) {
    d.c = c;
    d.divisive = c.op == "divnorm";
    d.dt = parse_dt(c.get("dt", "f32"));
    d.spec.n = static_cast<unsigned>(c.geti("ln", 5));
    d.spec.alpha = c.getd("la", 1e-4);
    d.spec.beta = c.getd("lb", 0.75);
    d.spec.k = c.getd("lk", 2.0);
    d.alpha = c.getd("alpha", 1);
    d.beta = c.getd("beta", 0);
    const Layout layout = parse_layout(c.get("layout", "nchw"));
    const std::vector<int> dims = c.dims();
    std::mt19937_64 rng(c.seed());
    d.x = Tensor::make(d.dt, dims, layout, c.seed());
    d.x->fill_uniform(rng, -2, 2);
    auto target = [&](TensorPtr& t, uint64_t s, std::vector<double>* prior) {
        t = Tensor::make(d.dt, dims, layout, s);
        if (d.beta != 0)
            t->fill_uniform(rng, -1, 1);
        else
            t->poison();
        *prior = t->values();
    };
    target(d.y, c.seed() >> 3, &d.y0);
    target(d.dx, c.seed() >> 5, &d.dx0);
    d.dy = Tensor::make(d.dt, dims, layout, c.seed() >> 7);
    d.dy->fill_uniform(rng, -1, 1);
    if (d.divisive) {
        // means, dy, temp share x's descriptor; dMeans shares dx's.
        d.dy = Tensor::make(d.dt, dims, layout, c.seed());
        d.dy->fill_uniform(rng, -1, 1);
        if (c.geti("means", 1)) {
            d.means = Tensor::make(d.dt, dims, layout, c.seed());
            d.means->fill_uniform(rng, -0.5, 0.5);
        }
        if (c.geti("dmeans", 1)) target(d.dmeans, c.seed() >> 5, &d.dmeans0);
        d.temp = Tensor::make(d.dt, dims, layout, c.seed());
    }
}

inline void lrn_run(LrnData& d, cudnnHandle_t h, Memory& mem) {
    cudnnLRNDescriptor_t ld;
    ASSERT_OK(cudnnCreateLRNDescriptor(&ld));
    ASSERT_OK(cudnnSetLRNDescriptor(ld, d.spec.n, d.spec.alpha, d.spec.beta, d.spec.k));
    const bool dbl = d.dt == CUDNN_DATA_DOUBLE;
    const float fa = static_cast<float>(d.alpha), fb = static_cast<float>(d.beta);
    const void* alpha = dbl ? static_cast<const void*>(&d.alpha) : &fa;
    const void* beta = dbl ? static_cast<const void*>(&d.beta) : &fb;
    if (!d.divisive) {
        ASSERT_OK(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, alpha, d.x->desc, mem.ptr(*d.x), beta,
                                              d.y->desc, mem.ptr(*d.y)));
        ASSERT_OK(cudnnLRNCrossChannelBackward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, alpha, d.y->desc, mem.ptr(*d.y),
                                               d.dy->desc, mem.ptr(*d.dy), d.x->desc, mem.ptr(*d.x), beta, d.dx->desc,
                                               mem.ptr(*d.dx)));
    } else {
        void* means = d.means ? mem.ptr(*d.means) : nullptr;
        void* tmp = mem.ptr(*d.temp);
        ASSERT_OK(cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, alpha, d.x->desc,
                                                    mem.ptr(*d.x), means, tmp, tmp, beta, d.y->desc, mem.ptr(*d.y)));
        ASSERT_OK(cudnnDivisiveNormalizationBackward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, alpha, d.x->desc,
                                                     mem.ptr(*d.x), means, mem.ptr(*d.dy), tmp, tmp, beta, d.dx->desc,
                                                     mem.ptr(*d.dx), d.dmeans ? mem.ptr(*d.dmeans) : nullptr));
        if (d.dmeans) mem.pull(*d.dmeans);
    }
    mem.pull(*d.y);
    mem.pull(*d.dx);
    cudnnDestroyLRNDescriptor(ld);
}

// ---- Spatial transformer ----

struct StfData {
    Case c;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    int n = 1, ch = 1, hi = 1, wi = 1, ho = 1, wo = 1;
    double alpha = 1, beta = 0, galpha = 1, gbeta = 0;
    TensorPtr theta, grid, x, y, dy, dx, dgrid, dtheta;  // theta N x 2 x 3, grids N x H x W x 2
    std::vector<double> y0, dx0, dgrid0;
};

inline void stf_setup(StfData& d, const Case& c) {
    d.c = c;
    d.dt = parse_dt(c.get("dt", "f32"));
    d.n = c.geti("n", 1);
    d.ch = c.geti("c", 1);
    d.hi = c.geti("hi", 5);
    d.wi = c.geti("wi", 5);
    d.ho = c.geti("h", 4);
    d.wo = c.geti("w", 4);
    d.alpha = c.getd("alpha", 1);
    d.beta = c.getd("beta", 0);
    d.galpha = c.getd("galpha", 1);
    d.gbeta = c.getd("gbeta", 0);
    std::mt19937_64 rng(c.seed());
    const Layout layout = parse_layout(c.get("layout", "nchw"));
    d.theta = Tensor::make(d.dt, {d.n, 2, 3, 1}, Layout::nchw);
    std::uniform_real_distribution<double> u(-0.3, 0.3);
    for (int k = 0; k < d.n; ++k) {
        const bool id = c.get("theta", "random") == "identity";
        const double t[6] = {1 + (id ? 0 : u(rng)), id ? 0 : u(rng), id ? 0 : u(rng),
                             id ? 0 : u(rng), 1 + (id ? 0 : u(rng)), id ? 0 : u(rng)};
        for (int j = 0; j < 6; ++j) d.theta->set(k * 6 + j, t[j]);
    }
    d.grid = Tensor::make(d.dt, {d.n, d.ho, d.wo, 2}, Layout::nchw);
    d.grid->poison();
    d.x = Tensor::make(d.dt, {d.n, d.ch, d.hi, d.wi}, layout, c.seed());
    d.x->fill_uniform(rng, -1, 1);
    auto target = [&](TensorPtr& t, const std::vector<int>& dims, bool blend, uint64_t s, std::vector<double>* prior,
                      Layout l) {
        t = Tensor::make(d.dt, dims, l, s);
        if (blend)
            t->fill_uniform(rng, -1, 1);
        else
            t->poison();
        *prior = t->values();
    };
    target(d.y, {d.n, d.ch, d.ho, d.wo}, d.beta != 0, c.seed() >> 3, &d.y0, layout);
    d.dy = Tensor::make(d.dt, {d.n, d.ch, d.ho, d.wo}, layout, c.seed() >> 5);
    d.dy->fill_uniform(rng, -1, 1);
    target(d.dx, {d.n, d.ch, d.hi, d.wi}, d.beta != 0, c.seed() >> 7, &d.dx0, layout);
    target(d.dgrid, {d.n, d.ho, d.wo, 2}, d.gbeta != 0, 0, &d.dgrid0, Layout::nchw);
    d.dtheta = Tensor::make(d.dt, {d.n, 2, 3, 1}, Layout::nchw);
    d.dtheta->poison();
}

inline void stf_run(StfData& d, cudnnHandle_t h, Memory& mem) {
    cudnnSpatialTransformerDescriptor_t st;
    ASSERT_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    const int dims[4] = {d.n, d.ch, d.ho, d.wo};
    ASSERT_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, d.dt, 4, dims));
    const bool dbl = d.dt == CUDNN_DATA_DOUBLE;
    const float f[4] = {static_cast<float>(d.alpha), static_cast<float>(d.beta), static_cast<float>(d.galpha),
                        static_cast<float>(d.gbeta)};
    const double g[4] = {d.alpha, d.beta, d.galpha, d.gbeta};
    auto sc = [&](int i) { return dbl ? static_cast<const void*>(&g[i]) : static_cast<const void*>(&f[i]); };
    ASSERT_OK(cudnnSpatialTfGridGeneratorForward(h, st, mem.ptr(*d.theta), mem.ptr(*d.grid)));
    ASSERT_OK(cudnnSpatialTfSamplerForward(h, st, sc(0), d.x->desc, mem.ptr(*d.x), mem.ptr(*d.grid), sc(1), d.y->desc,
                                           mem.ptr(*d.y)));
    ASSERT_OK(cudnnSpatialTfSamplerBackward(h, st, sc(0), d.x->desc, mem.ptr(*d.x), sc(1), d.dx->desc, mem.ptr(*d.dx),
                                            sc(2), d.dy->desc, mem.ptr(*d.dy), mem.ptr(*d.grid), sc(3),
                                            mem.ptr(*d.dgrid)));
    ASSERT_OK(cudnnSpatialTfGridGeneratorBackward(h, st, mem.ptr(*d.dgrid), mem.ptr(*d.dtheta)));
    for (Tensor* t : {d.grid.get(), d.y.get(), d.dx.get(), d.dgrid.get(), d.dtheta.get()}) mem.pull(*t);
    cudnnDestroySpatialTransformerDescriptor(st);
}

// Oracle: bilinear sampling with align_corners = True and zero padding.
struct StfOracle {
    std::vector<double> grid, y, dx, dgrid, dtheta;
};

inline StfOracle stf_oracle(const StfData& d) {
    StfOracle o;
    const std::vector<double> th = d.theta->values(), x = d.x->values(), dy = d.dy->values();
    auto base = [](int i, int size) { return size > 1 ? -1.0 + 2.0 * i / (size - 1) : 0.0; };
    o.grid.resize(static_cast<size_t>(d.n) * d.ho * d.wo * 2);
    for (int n = 0; n < d.n; ++n)
        for (int h = 0; h < d.ho; ++h)
            for (int w = 0; w < d.wo; ++w) {
                const double bx = base(w, d.wo), by = base(h, d.ho);
                const size_t g = ((static_cast<size_t>(n) * d.ho + h) * d.wo + w) * 2;
                o.grid[g] = th[n * 6 + 0] * bx + th[n * 6 + 1] * by + th[n * 6 + 2];
                o.grid[g + 1] = th[n * 6 + 3] * bx + th[n * 6 + 4] * by + th[n * 6 + 5];
            }
    // The sampler runs on the grid the library stored (rounded to its type).
    const std::vector<double> grid = d.grid->values();
    auto X = [&](int n, int c, int64_t yy, int64_t xx) {
        if (yy < 0 || yy >= d.hi || xx < 0 || xx >= d.wi) return 0.0;
        return x[((static_cast<size_t>(n) * d.ch + c) * d.hi + yy) * d.wi + xx];
    };
    o.y.assign(static_cast<size_t>(d.n) * d.ch * d.ho * d.wo, 0.0);
    o.dx.assign(x.size(), 0.0);
    o.dgrid.assign(grid.size(), 0.0);
    for (int n = 0; n < d.n; ++n)
        for (int h = 0; h < d.ho; ++h)
            for (int w = 0; w < d.wo; ++w) {
                const size_t g = ((static_cast<size_t>(n) * d.ho + h) * d.wo + w) * 2;
                const double ix = (grid[g] + 1) * (d.wi - 1) / 2, iy = (grid[g + 1] + 1) * (d.hi - 1) / 2;
                if (!(ix > -1 && ix < d.wi && iy > -1 && iy < d.hi)) continue;
                const int64_t x0 = static_cast<int64_t>(std::floor(ix)), y0 = static_cast<int64_t>(std::floor(iy));
                const double ax = ix - x0, ay = iy - y0;
                for (int c = 0; c < d.ch; ++c) {
                    const size_t yi = ((static_cast<size_t>(n) * d.ch + c) * d.ho + h) * d.wo + w;
                    const double v00 = X(n, c, y0, x0), v01 = X(n, c, y0, x0 + 1), v10 = X(n, c, y0 + 1, x0),
                                 v11 = X(n, c, y0 + 1, x0 + 1);
                    o.y[yi] = (1 - ax) * (1 - ay) * v00 + ax * (1 - ay) * v01 + (1 - ax) * ay * v10 + ax * ay * v11;
                    const double gdy = dy[yi];
                    const double wts[4] = {(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay};
                    const int64_t ys[4] = {y0, y0, y0 + 1, y0 + 1}, xs[4] = {x0, x0 + 1, x0, x0 + 1};
                    for (int k = 0; k < 4; ++k)
                        if (ys[k] >= 0 && ys[k] < d.hi && xs[k] >= 0 && xs[k] < d.wi)
                            o.dx[((static_cast<size_t>(n) * d.ch + c) * d.hi + ys[k]) * d.wi + xs[k]] += wts[k] * gdy;
                    o.dgrid[g] += gdy * ((1 - ay) * (v01 - v00) + ay * (v11 - v10)) * (d.wi - 1) / 2;
                    o.dgrid[g + 1] += gdy * ((1 - ax) * (v10 - v00) + ax * (v11 - v01)) * (d.hi - 1) / 2;
                }
            }
    // dtheta from the dgrid the library stored.
    const std::vector<double> dgrid = d.dgrid->values();
    o.dtheta.assign(static_cast<size_t>(d.n) * 6, 0.0);
    for (int n = 0; n < d.n; ++n)
        for (int h = 0; h < d.ho; ++h)
            for (int w = 0; w < d.wo; ++w) {
                const size_t g = ((static_cast<size_t>(n) * d.ho + h) * d.wo + w) * 2;
                const double b[3] = {base(w, d.wo), base(h, d.ho), 1.0};
                for (int r = 0; r < 2; ++r)
                    for (int k = 0; k < 3; ++k) o.dtheta[n * 6 + r * 3 + k] += dgrid[g + r] * b[k];
            }
    return o;
}

}  // namespace normtest
