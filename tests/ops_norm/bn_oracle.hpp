// The test's own batch normalization, on tensors in logical NCHW order, in double:
// written from the formulas, independently of src/cpu/ref.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace normtest {

struct BnShape {
    int64_t n = 1, c = 1, s = 1;
    bool per_channel = true;
    int64_t features() const { return per_channel ? c : c * s; }
    int64_t count() const { return per_channel ? n * s : n; }
    int64_t total() const { return n * c * s; }
    // Feature of the i-th element (logical order n, c, spatial).
    int64_t feature(int64_t i) const {
        const int64_t ch = (i / s) % c, sp = i % s;
        return per_channel ? ch : ch * s + sp;
    }
};

// Activation modes as cudnnActivationMode_t values.
struct Act {
    int mode = 5;
    double coef = 0.0;
};

inline double act_forward(const Act& a, double v) {
    switch (a.mode) {
        case 0: return 1.0 / (1.0 + std::exp(-v));
        case 1: return v > 0 ? v : 0.0;
        case 2: return std::tanh(v);
        case 3: return v > 0 ? std::fmin(v, a.coef) : 0.0;
        case 4: return v > 0 ? v : a.coef * (std::exp(v) - 1.0);
        default: return v;
    }
}

// Derivative, from the output y = act(v).
inline double act_grad_y(const Act& a, double y) {
    switch (a.mode) {
        case 0: return y * (1.0 - y);
        case 1: return y > 0 ? 1.0 : 0.0;
        case 2: return 1.0 - y * y;
        case 3: return (y > 0 && y < a.coef) ? 1.0 : 0.0;
        case 4: return y > 0 ? 1.0 : y + a.coef;
        default: return 1.0;
    }
}

struct BnForward {
    std::vector<double> y, mean, var, inv_std;  // var is the biased batch variance
};

// ops: 0 normalization only, 1 + activation, 2 + z then activation. With `stats`
// false, `mean_in` / `var_in` are used (inference).
inline BnForward bn_forward(const BnShape& g, const std::vector<double>& x, const std::vector<double>& scale,
                            const std::vector<double>& bias, const std::vector<double>& z, int ops, const Act& act,
                            double eps, bool stats, const std::vector<double>& mean_in = {},
                            const std::vector<double>& var_in = {}) {
    BnForward r;
    const int64_t F = g.features();
    r.mean.assign(F, 0.0);
    r.var.assign(F, 0.0);
    if (stats) {
        std::vector<double> cnt(F, 0.0);
        for (int64_t i = 0; i < g.total(); ++i) {
            r.mean[g.feature(i)] += x[i];
            cnt[g.feature(i)] += 1;
        }
        for (int64_t f = 0; f < F; ++f) r.mean[f] /= cnt[f];
        for (int64_t i = 0; i < g.total(); ++i) {
            const double d = x[i] - r.mean[g.feature(i)];
            r.var[g.feature(i)] += d * d;
        }
        for (int64_t f = 0; f < F; ++f) r.var[f] /= cnt[f];
    } else {
        r.mean = mean_in;
        r.var = var_in;
    }
    r.inv_std.resize(F);
    for (int64_t f = 0; f < F; ++f) r.inv_std[f] = 1.0 / std::sqrt(r.var[f] + eps);
    r.y.resize(g.total());
    for (int64_t i = 0; i < g.total(); ++i) {
        const int64_t f = g.feature(i);
        double v = scale[f] * (x[i] - r.mean[f]) * r.inv_std[f] + bias[f];
        if (ops == 2) v += z[i];
        if (ops != 0) v = act_forward(act, v);
        r.y[i] = v;
    }
    return r;
}

struct BnBackward {
    std::vector<double> dx, dz, dscale, dbias;
};

// Gradients of L = sum(dy * y) given the forward's output y (for the activation).
inline BnBackward bn_backward(const BnShape& g, const std::vector<double>& x, const std::vector<double>& dy,
                              const std::vector<double>& y, const std::vector<double>& scale,
                              const std::vector<double>& mean, const std::vector<double>& inv_std, int ops,
                              const Act& act) {
    BnBackward r;
    const int64_t F = g.features(), T = g.total();
    const double M = static_cast<double>(g.count());
    std::vector<double> d(T);
    for (int64_t i = 0; i < T; ++i) d[i] = ops ? dy[i] * act_grad_y(act, y[i]) : dy[i];
    r.dscale.assign(F, 0.0);
    r.dbias.assign(F, 0.0);
    for (int64_t i = 0; i < T; ++i) {
        const int64_t f = g.feature(i);
        r.dbias[f] += d[i];
        r.dscale[f] += d[i] * (x[i] - mean[f]) * inv_std[f];
    }
    r.dx.resize(T);
    for (int64_t i = 0; i < T; ++i) {
        const int64_t f = g.feature(i);
        const double xhat = (x[i] - mean[f]) * inv_std[f];
        r.dx[i] = scale[f] * inv_std[f] / M * (M * d[i] - r.dbias[f] - xhat * r.dscale[f]);
    }
    r.dz = d;
    return r;
}

}  // namespace normtest
