#include "ops_tensor/runners.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "common/test_util.hpp"

namespace ops_test {

// ---- Test-side math ----

double act_value(int mode, double x, double coef, double swish_beta, bool propagate_nan) {
    switch (mode) {
        case CUDNN_ACTIVATION_SIGMOID: return 1.0 / (1.0 + std::exp(-x));
        case CUDNN_ACTIVATION_RELU:
            if (std::isnan(x)) return propagate_nan ? x : 0.0;
            return std::max(x, 0.0);
        case CUDNN_ACTIVATION_TANH: return std::tanh(x);
        case CUDNN_ACTIVATION_CLIPPED_RELU:
            if (std::isnan(x)) return propagate_nan ? x : 0.0;
            return std::min(std::max(x, 0.0), coef);
        case CUDNN_ACTIVATION_ELU: return x > 0 ? x : coef * (std::exp(x) - 1.0);
        case CUDNN_ACTIVATION_IDENTITY: return x;
        case CUDNN_ACTIVATION_SWISH: return x * (1.0 / (1.0 + std::exp(-swish_beta * x)));
    }
    throw std::runtime_error("act_value: bad mode");
}

double act_slope(int mode, double x, double y, double coef, double swish_beta, bool propagate_nan) {
    switch (mode) {
        case CUDNN_ACTIVATION_SIGMOID: return y * (1.0 - y);
        case CUDNN_ACTIVATION_RELU:
            if (std::isnan(x)) return propagate_nan ? x : 0.0;
            return x > 0 ? 1.0 : 0.0;
        case CUDNN_ACTIVATION_TANH: return 1.0 - y * y;
        case CUDNN_ACTIVATION_CLIPPED_RELU:
            if (std::isnan(x)) return propagate_nan ? x : 0.0;
            return x > 0 && x < coef ? 1.0 : 0.0;
        case CUDNN_ACTIVATION_ELU: return x > 0 ? 1.0 : coef * std::exp(x);
        case CUDNN_ACTIVATION_IDENTITY: return 1.0;
        case CUDNN_ACTIVATION_SWISH: {
            const double s = 1.0 / (1.0 + std::exp(-swish_beta * x));
            return s * (1.0 + swish_beta * x * (1.0 - s));
        }
    }
    throw std::runtime_error("act_slope: bad mode");
}

namespace {

double min_step(cudnnDataType_t dt) {  // spacing of the smallest subnormals
    switch (dt) {
        case CUDNN_DATA_HALF: return std::ldexp(1.0, -24);
        case CUDNN_DATA_BFLOAT16: return std::ldexp(1.0, -133);
        case CUDNN_DATA_FLOAT: return std::ldexp(1.0, -149);
        default: return 0.0;
    }
}

bool matches(double got, double e, double mag, cudnnDataType_t dt, double ulps) {
    if (std::isnan(mag)) mag = 0;  // NaN inputs that the op skipped
    if (dtype_is_float(dt)) {
        if (std::isnan(e)) return std::isnan(got);
        const double r = round_to(dt, e);
        if (std::isinf(r)) return got == r;
        const double tol = ulps * (dtype_eps(dt) * std::fabs(e) + min_step(dt)) + 1e-13 * mag;
        return std::fabs(got - e) <= tol;
    }
    const double r = round_to(dt, e);
    if (got == r) return true;
    // A value within rounding noise of .5 may go either way; looser checks allow one step.
    const double frac = e - std::floor(e);
    return std::fabs(got - r) <= 1.0 && (ulps > 1.0 || std::fabs(frac - 0.5) < 1e-9 * (1.0 + mag));
}

std::string idx_str(const std::vector<int64_t>& idx) {
    std::string s = "(";
    for (size_t i = 0; i < idx.size(); ++i) s += (i ? "," : "") + std::to_string(idx[i]);
    return s + ")";
}

}  // namespace

::testing::AssertionResult check_output(const HostTensor& before, const HostTensor& after, const Expectation& expect,
                                        double ulps, bool allow_mostly_zero) {
    std::ostringstream msg;
    int bad = 0;
    const size_t es = dtype_size(after.dt);
    const std::vector<bool> addressed = after.addressed();
    for (size_t off = 0; off < addressed.size(); ++off)
        if (!addressed[off] && std::memcmp(&before.bytes[off * es], &after.bytes[off * es], es) != 0 && bad++ < 5)
            msg << "\n  scalar " << off << " outside the view was written";
    int64_t checked = 0, nonzero = 0;
    for_each_index(after.dims, [&](const std::vector<int64_t>& idx) {
        const auto [e, mag] = expect(idx);
        const double got = after.at(idx);
        ++checked;
        nonzero += got != 0.0;
        if (!matches(got, e, mag, after.dt, ulps) && bad++ < 8)
            msg << "\n  at " << idx_str(idx) << ": got " << got << ", expected " << e << " (" << dtype_tag(after.dt)
                << ", terms " << mag << ")";
    });
    if (!allow_mostly_zero && nonzero * 10 < checked && bad++ < 9)
        msg << "\n  only " << nonzero << " of " << checked << " outputs are non-zero: the check proves little";
    if (bad) return ::testing::AssertionFailure() << bad << " mismatches" << msg.str();
    return ::testing::AssertionSuccess();
}

namespace {

struct TensorDescGuard {
    cudnnTensorDescriptor_t d = nullptr;
    explicit TensorDescGuard(const HostTensor& t) : d(make_desc(t)) {}
    ~TensorDescGuard() { cudnnDestroyTensorDescriptor(d); }
};

// alpha / beta in the type the library reads for an output of type `dt`.
struct Scalar {
    float f;
    double d;
    bool dbl;
    Scalar(double v, bool use_double) : f(static_cast<float>(v)), d(v), dbl(use_double) {}
    const void* ptr() const { return dbl ? static_cast<const void*>(&d) : &f; }
    double value() const { return dbl ? d : static_cast<double>(f); }
};

int parse_act_mode(const std::string& s) {
    static const std::map<std::string, int> m = {
        {"sigmoid", CUDNN_ACTIVATION_SIGMOID}, {"relu", CUDNN_ACTIVATION_RELU},
        {"tanh", CUDNN_ACTIVATION_TANH},       {"clipped_relu", CUDNN_ACTIVATION_CLIPPED_RELU},
        {"elu", CUDNN_ACTIVATION_ELU},         {"identity", CUDNN_ACTIVATION_IDENTITY},
        {"swish", CUDNN_ACTIVATION_SWISH}};
    return m.at(s);
}

void poison_some(HostTensor& t, int every) {  // every n-th element becomes NaN
    int64_t i = 0;
    for_each_index(t.dims, [&](const std::vector<int64_t>& idx) {
        if (i++ % every == 3) t.put(idx, NAN);
    });
}

const double kNaN = NAN;

// ---- Activation ----

void run_activation(const Case& c, cudnnHandle_t h, bool backward) {
    std::mt19937_64 rng(c.seed());
    const cudnnDataType_t dt = parse_dtype(c.str("dt", "f32"));
    const std::vector<int64_t> dims = c.list("dims");
    const std::string layout = c.str("layout", "nchw"), ylayout = c.str("ylayout", layout);
    const int mode = parse_act_mode(c.str("mode", "relu"));
    const bool prop = c.num("nan", 0) != 0;
    const double coef = c.num("coef", 1.5), sbeta = c.num("sbeta", 1.0);
    const bool inplace = c.num("inplace", 0) != 0;
    const bool dbl = dt == CUDNN_DATA_DOUBLE;
    const Scalar alpha(c.num("alpha", 1.0), dbl), beta(c.num("beta", 0.0), dbl);

    cudnnActivationDescriptor_t ad = nullptr;
    ASSERT_OK(cudnnCreateActivationDescriptor(&ad));
    std::unique_ptr<cudnnActivationStruct, void (*)(cudnnActivationDescriptor_t)> guard(
        ad, [](cudnnActivationDescriptor_t p) { cudnnDestroyActivationDescriptor(p); });
    ASSERT_OK(cudnnSetActivationDescriptor(ad, static_cast<cudnnActivationMode_t>(mode),
                                           prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, coef));
    ASSERT_OK(cudnnSetActivationDescriptorSwishBeta(ad, sbeta));

    HostTensor x = make_tensor(dt, dims, layout, rng, kNaN);
    fill_uniform(x, c.num("lo", -4.0), c.num("hi", 4.0), rng);
    if (c.num("nan_inputs", 0) != 0) poison_some(x, 7);
    TensorDescGuard xd(x);

    if (!backward) {
        HostTensor y = inplace ? x : make_tensor(dt, dims, ylayout, rng, kNaN);
        if (!inplace && beta.value() != 0) fill_uniform(y, -2.0, 2.0, rng);
        const HostTensor x0 = x, y0 = y;
        TensorDescGuard yd(y);
        void* yp = inplace ? x.data() : y.data();
        ASSERT_OK(cudnnActivationForward(h, ad, alpha.ptr(), xd.d, x.data(), beta.ptr(), yd.d, yp));
        const HostTensor& out = inplace ? x : y;
        EXPECT_TRUE(check_output(y0, out, [&](const std::vector<int64_t>& i) {
            const double f = alpha.value() * act_value(mode, x0.at(i), coef, sbeta, prop);
            const double b = beta.value() != 0 ? beta.value() * y0.at(i) : 0.0;
            return std::make_pair(f + b, std::fabs(f) + std::fabs(b));
        }, 1.0, true)) << c.where();
        return;
    }
    // Backward: y = f(x) as stored, dy random.
    HostTensor y = make_tensor(dt, dims, c.str("ylayout", layout), rng, kNaN);
    for_each_index(dims, [&](const std::vector<int64_t>& i) { y.put(i, act_value(mode, x.at(i), coef, sbeta, prop)); });
    HostTensor dy = make_tensor(dt, dims, c.str("dylayout", layout), rng, kNaN);
    fill_uniform(dy, -2.0, 2.0, rng);
    HostTensor dx = inplace ? dy : make_tensor(dt, dims, c.str("dxlayout", layout), rng, kNaN);
    if (!inplace && beta.value() != 0) fill_uniform(dx, -2.0, 2.0, rng);
    const HostTensor dy0 = dy, dx0 = dx;
    TensorDescGuard yd(y), dyd(dy), dxd(dx);
    void* dxp = inplace ? dy.data() : dx.data();
    ASSERT_OK(cudnnActivationBackward(h, ad, alpha.ptr(), yd.d, y.data(), dyd.d, dy.data(), xd.d, x.data(), beta.ptr(),
                                      dxd.d, dxp));
    const HostTensor& out = inplace ? dy : dx;
    EXPECT_TRUE(check_output(dx0, out, [&](const std::vector<int64_t>& i) {
        const double g = alpha.value() * dy0.at(i) * act_slope(mode, x.at(i), y.at(i), coef, sbeta, prop);
        const double b = beta.value() != 0 ? beta.value() * dx0.at(i) : 0.0;
        return std::make_pair(g + b, std::fabs(g) + std::fabs(b));
    }, 1.0, true)) << c.where();
}

// ---- Softmax ----

// Visits every softmax group: `kept` is an index with the reduced dims at 0; `members`
// lists the indices of its elements.
template <class F>
void for_each_group(const std::vector<int64_t>& dims, bool channel, F f) {
    std::vector<int64_t> outer = dims, inner = dims;
    for (size_t d = 0; d < dims.size(); ++d) {
        const bool reduced = channel ? d == 1 : d >= 1;
        (reduced ? outer : inner)[d] = 1;
    }
    for_each_index(outer, [&](const std::vector<int64_t>& o) {
        std::vector<std::vector<int64_t>> members;
        for_each_index(inner, [&](const std::vector<int64_t>& r) {
            std::vector<int64_t> i(dims.size());
            for (size_t d = 0; d < dims.size(); ++d) i[d] = o[d] + r[d];
            members.push_back(i);
        });
        f(members);
    });
}

std::map<std::vector<int64_t>, double> softmax_values(const HostTensor& x, bool channel, bool log_mode) {
    std::map<std::vector<int64_t>, double> out;
    for_each_group(x.dims, channel, [&](const std::vector<std::vector<int64_t>>& g) {
        double m = -INFINITY;
        for (const auto& i : g) m = std::max(m, x.at(i));
        double s = 0;
        for (const auto& i : g) s += std::exp(x.at(i) - m);
        for (const auto& i : g) out[i] = log_mode ? x.at(i) - m - std::log(s) : std::exp(x.at(i) - m) / s;
    });
    return out;
}

void run_softmax(const Case& c, cudnnHandle_t h, bool backward) {
    std::mt19937_64 rng(c.seed());
    const cudnnDataType_t dt = parse_dtype(c.str("dt", "f32"));
    const std::vector<int64_t> dims = c.list("dims");
    const std::string layout = c.str("layout", "nchw"), ylayout = c.str("ylayout", layout);
    const std::string algo_s = c.str("algo", "accurate"), mode_s = c.str("mode", "channel");
    const cudnnSoftmaxAlgorithm_t algo = algo_s == "fast" ? CUDNN_SOFTMAX_FAST
                                         : algo_s == "log" ? CUDNN_SOFTMAX_LOG
                                                           : CUDNN_SOFTMAX_ACCURATE;
    const bool channel = mode_s == "channel";
    const cudnnSoftmaxMode_t mode = channel ? CUDNN_SOFTMAX_MODE_CHANNEL : CUDNN_SOFTMAX_MODE_INSTANCE;
    const bool log_mode = algo == CUDNN_SOFTMAX_LOG;
    const bool inplace = c.num("inplace", 0) != 0;
    const bool dbl = dt == CUDNN_DATA_DOUBLE;
    const Scalar alpha(c.num("alpha", 1.0), dbl), beta(c.num("beta", 0.0), dbl);

    HostTensor x = make_tensor(dt, dims, layout, rng, kNaN);
    fill_uniform(x, c.num("lo", -5.0), c.num("hi", 5.0), rng);
    if (c.num("nan_inputs", 0) != 0) poison_some(x, 11);
    TensorDescGuard xd(x);
    if (!backward) {
        HostTensor y = inplace ? x : make_tensor(dt, dims, ylayout, rng, kNaN);
        if (!inplace && beta.value() != 0) fill_uniform(y, -2.0, 2.0, rng);
        const HostTensor y0 = y;
        const auto want = softmax_values(x, channel, log_mode);
        TensorDescGuard yd(y);
        void* yp = inplace ? x.data() : y.data();
        ASSERT_OK(cudnnSoftmaxForward(h, algo, mode, alpha.ptr(), xd.d, x.data(), beta.ptr(), yd.d, yp));
        const HostTensor& out = inplace ? x : y;
        EXPECT_TRUE(check_output(y0, out, [&](const std::vector<int64_t>& i) {
            const double f = alpha.value() * want.at(i);
            const double b = beta.value() != 0 ? beta.value() * y0.at(i) : 0.0;
            return std::make_pair(f + b, std::fabs(f) + std::fabs(b) + (log_mode ? 10.0 : 0.0));
        }, 1.0, true)) << c.where();
        return;
    }
    HostTensor y = make_tensor(dt, dims, ylayout, rng, kNaN);
    for (const auto& [i, v] : softmax_values(x, channel, log_mode)) y.put(i, v);
    HostTensor dy = make_tensor(dt, dims, c.str("dylayout", layout), rng, kNaN);
    fill_uniform(dy, -2.0, 2.0, rng);
    HostTensor dx = inplace ? dy : make_tensor(dt, dims, c.str("dxlayout", layout), rng, kNaN);
    if (!inplace && beta.value() != 0) fill_uniform(dx, -2.0, 2.0, rng);
    const HostTensor dy0 = dy, dx0 = dx;
    // dx = y (dy - sum(dy y)) for softmax, dy - exp(y) sum(dy) for log-softmax.
    std::map<std::vector<int64_t>, std::pair<double, double>> want;
    for_each_group(dims, channel, [&](const std::vector<std::vector<int64_t>>& g) {
        double s = 0, mag = 0;
        for (const auto& i : g) {
            s += log_mode ? dy0.at(i) : dy0.at(i) * y.at(i);
            mag += std::fabs(log_mode ? dy0.at(i) : dy0.at(i) * y.at(i));
        }
        for (const auto& i : g) {
            const double v = log_mode ? dy0.at(i) - std::exp(y.at(i)) * s : y.at(i) * (dy0.at(i) - s);
            want[i] = {v, mag + std::fabs(dy0.at(i))};
        }
    });
    TensorDescGuard yd(y), dyd(dy), dxd(dx);
    void* dxp = inplace ? dy.data() : dx.data();
    ASSERT_OK(cudnnSoftmaxBackward(h, algo, mode, alpha.ptr(), yd.d, y.data(), dyd.d, dy.data(), beta.ptr(), dxd.d, dxp));
    const HostTensor& out = inplace ? dy : dx;
    EXPECT_TRUE(check_output(dx0, out, [&](const std::vector<int64_t>& i) {
        const auto& [v, mag] = want.at(i);
        const double f = alpha.value() * v;
        const double b = beta.value() != 0 ? beta.value() * dx0.at(i) : 0.0;
        return std::make_pair(f + b, std::fabs(alpha.value()) * mag + std::fabs(b));
    }, 1.0, false)) << c.where();
}

// ---- Add and op-tensor ----

std::vector<int64_t> broadcast_index(const std::vector<int64_t>& i, const std::vector<int64_t>& small) {
    std::vector<int64_t> j = i;
    for (size_t d = 0; d < j.size(); ++d)
        if (small[d] == 1) j[d] = 0;
    return j;
}

void run_add(const Case& c, cudnnHandle_t h) {
    std::mt19937_64 rng(c.seed());
    const cudnnDataType_t dt = parse_dtype(c.str("dt", "f32"));
    const std::vector<int64_t> dims = c.list("dims"), bdims = c.has("bdims") ? c.list("bdims") : dims;
    const std::string layout = c.str("layout", "nchw");
    const bool dbl = dt == CUDNN_DATA_DOUBLE;
    const Scalar alpha(c.num("alpha", 1.0), dbl), beta(c.num("beta", 0.0), dbl);
    HostTensor a = make_tensor(dt, bdims, c.str("blayout", layout), rng, kNaN);
    fill_uniform(a, c.num("lo", -4.0), c.num("hi", 4.0), rng);
    HostTensor cc = make_tensor(dt, dims, layout, rng, dtype_is_float(dt) ? kNaN : 85.0);
    if (beta.value() != 0) fill_uniform(cc, -4.0, 4.0, rng);
    const HostTensor c0 = cc;
    TensorDescGuard ad(a), cd(cc);
    ASSERT_OK(cudnnAddTensor(h, alpha.ptr(), ad.d, a.data(), beta.ptr(), cd.d, cc.data()));
    EXPECT_TRUE(check_output(c0, cc, [&](const std::vector<int64_t>& i) {
        const double f = alpha.value() * a.at(broadcast_index(i, bdims));
        const double b = beta.value() != 0 ? beta.value() * c0.at(i) : 0.0;
        return std::make_pair(f + b, std::fabs(f) + std::fabs(b));
    }, 1.0, false)) << c.where();
}

void run_optensor(const Case& c, cudnnHandle_t h) {
    std::mt19937_64 rng(c.seed());
    const cudnnDataType_t dt = parse_dtype(c.str("dt", "f32"));
    const cudnnDataType_t ydt = parse_dtype(c.str("ydt", c.str("dt", "f32")));
    const std::vector<int64_t> dims = c.list("dims"), bdims = c.has("bdims") ? c.list("bdims") : dims;
    const std::string layout = c.str("layout", "nchw");
    static const std::map<std::string, cudnnOpTensorOp_t> ops = {
        {"add", CUDNN_OP_TENSOR_ADD}, {"mul", CUDNN_OP_TENSOR_MUL},   {"min", CUDNN_OP_TENSOR_MIN},
        {"max", CUDNN_OP_TENSOR_MAX}, {"sqrt", CUDNN_OP_TENSOR_SQRT}, {"not", CUDNN_OP_TENSOR_NOT}};
    const cudnnOpTensorOp_t op = ops.at(c.str("op", "add"));
    const bool unary = op == CUDNN_OP_TENSOR_SQRT || op == CUDNN_OP_TENSOR_NOT;
    const bool prop = c.num("nan", 0) != 0;
    const bool dbl = ydt == CUDNN_DATA_DOUBLE;
    const cudnnDataType_t comp = c.has("comp") ? parse_dtype(c.str("comp")) : dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    const Scalar alpha1(c.num("alpha", 1.0), dbl), alpha2(c.num("alpha2", 1.0), dbl), beta(c.num("beta", 0.0), dbl);
    const bool inplace = c.num("inplace", 0) != 0;

    cudnnOpTensorDescriptor_t od = nullptr;
    ASSERT_OK(cudnnCreateOpTensorDescriptor(&od));
    std::unique_ptr<cudnnOpTensorStruct, void (*)(cudnnOpTensorDescriptor_t)> guard(
        od, [](cudnnOpTensorDescriptor_t p) { cudnnDestroyOpTensorDescriptor(p); });
    ASSERT_OK(cudnnSetOpTensorDescriptor(od, op, comp, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN));

    HostTensor a = make_tensor(dt, dims, layout, rng, kNaN);
    fill_uniform(a, c.num("lo", -4.0), c.num("hi", 4.0), rng);
    HostTensor b = make_tensor(dt, bdims, c.str("blayout", layout), rng, kNaN);
    fill_uniform(b, c.num("lo", -4.0), c.num("hi", 4.0), rng);
    if (c.num("nan_inputs", 0) != 0) {
        poison_some(a, 5);
        poison_some(b, 7);
    }
    HostTensor cc = inplace ? a : make_tensor(ydt, dims, c.str("ylayout", layout), rng, dtype_is_float(ydt) ? kNaN : 85.0);
    if (!inplace && beta.value() != 0) fill_uniform(cc, -4.0, 4.0, rng);
    const HostTensor a0 = a, c0 = cc;
    TensorDescGuard adesc(a), bdesc(b), cdesc(cc);
    void* cp = inplace ? a.data() : cc.data();
    const bool no_b = unary && c.num("nob", 0) != 0;
    ASSERT_OK(cudnnOpTensor(h, od, alpha1.ptr(), adesc.d, a.data(), no_b ? nullptr : alpha2.ptr(),
                            no_b ? nullptr : bdesc.d, no_b ? nullptr : b.data(), beta.ptr(), cdesc.d, cp));
    const HostTensor& out = inplace ? a : cc;
    EXPECT_TRUE(check_output(c0, out, [&](const std::vector<int64_t>& i) {
        const double va = alpha1.value() * a0.at(i);
        const double vb = alpha2.value() * b.at(broadcast_index(i, bdims));
        double r = 0;
        switch (op) {
            case CUDNN_OP_TENSOR_ADD: r = va + vb; break;
            case CUDNN_OP_TENSOR_MUL: r = va * vb; break;
            case CUDNN_OP_TENSOR_MIN:
            case CUDNN_OP_TENSOR_MAX:
                if (std::isnan(va) || std::isnan(vb)) r = prop ? NAN : (std::isnan(va) ? vb : va);
                else r = op == CUDNN_OP_TENSOR_MIN ? std::min(va, vb) : std::max(va, vb);
                break;
            case CUDNN_OP_TENSOR_SQRT: r = std::sqrt(va); break;
            case CUDNN_OP_TENSOR_NOT: r = 1.0 - va; break;
        }
        const double bb = beta.value() != 0 ? beta.value() * c0.at(i) : 0.0;
        return std::make_pair(r + bb, std::fabs(va) + std::fabs(unary ? 0.0 : vb) + std::fabs(bb) + 1.0);
    }, 1.0, false)) << c.where();
}

// ---- Reduce ----

void run_reduce(const Case& c, cudnnHandle_t h) {
    std::mt19937_64 rng(c.seed());
    const cudnnDataType_t dt = parse_dtype(c.str("dt", "f32"));
    const cudnnDataType_t ydt = parse_dtype(c.str("ydt", c.str("dt", "f32")));
    const std::vector<int64_t> dims = c.list("dims"), cdims = c.list("bdims");
    const std::string layout = c.str("layout", "nchw");
    static const std::map<std::string, cudnnReduceTensorOp_t> ops = {
        {"add", CUDNN_REDUCE_TENSOR_ADD},     {"mul", CUDNN_REDUCE_TENSOR_MUL},
        {"min", CUDNN_REDUCE_TENSOR_MIN},     {"max", CUDNN_REDUCE_TENSOR_MAX},
        {"amax", CUDNN_REDUCE_TENSOR_AMAX},   {"avg", CUDNN_REDUCE_TENSOR_AVG},
        {"norm1", CUDNN_REDUCE_TENSOR_NORM1}, {"norm2", CUDNN_REDUCE_TENSOR_NORM2},
        {"mul_no_zeros", CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS}};
    const std::string op_s = c.str("op", "add");
    const cudnnReduceTensorOp_t op = ops.at(op_s);
    const bool prop = c.num("nan", 0) != 0;
    const bool want_idx = c.num("indices", 0) != 0;
    const bool dbl = ydt == CUDNN_DATA_DOUBLE;
    const Scalar alpha(c.num("alpha", 1.0), dbl), beta(c.num("beta", 0.0), dbl);

    cudnnReduceTensorDescriptor_t rd = nullptr;
    ASSERT_OK(cudnnCreateReduceTensorDescriptor(&rd));
    std::unique_ptr<cudnnReduceTensorStruct, void (*)(cudnnReduceTensorDescriptor_t)> guard(
        rd, [](cudnnReduceTensorDescriptor_t p) { cudnnDestroyReduceTensorDescriptor(p); });
    ASSERT_OK(cudnnSetReduceTensorDescriptor(rd, op, dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
                                             prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                             want_idx ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES
                                                      : CUDNN_REDUCE_TENSOR_NO_INDICES,
                                             CUDNN_32BIT_INDICES));
    HostTensor a = make_tensor(dt, dims, layout, rng, kNaN);
    // Products of many values stay representable near magnitude 1; integers make ties.
    const bool product = op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    fill_uniform(a, c.num("lo", product ? 0.5 : -4.0), c.num("hi", product ? 1.5 : 4.0), rng);
    if (c.num("ints", 0) != 0)
        for_each_index(dims, [&](const std::vector<int64_t>& i) { a.put(i, std::round(a.at(i))); });
    if (c.num("zeros", 0) != 0) {
        int64_t k = 0;
        for_each_index(dims, [&](const std::vector<int64_t>& i) {
            if (k++ % 3 == 0) a.put(i, 0.0);
        });
    }
    if (c.num("nan_inputs", 0) != 0) poison_some(a, 13);
    HostTensor cc = make_tensor(ydt, cdims, c.str("ylayout", layout), rng, kNaN);
    if (beta.value() != 0) fill_uniform(cc, -4.0, 4.0, rng);
    const HostTensor c0 = cc;
    TensorDescGuard ad(a), cd(cc);
    size_t ws = 0, is = 0;
    ASSERT_OK(cudnnGetReductionWorkspaceSize(h, rd, ad.d, cd.d, &ws));
    ASSERT_OK(cudnnGetReductionIndicesSize(h, rd, ad.d, cd.d, &is));
    const int64_t outputs = cc.count();
    const bool has_idx = want_idx && (op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX ||
                                      op == CUDNN_REDUCE_TENSOR_AMAX);
    EXPECT_EQ(is, has_idx ? static_cast<size_t>(outputs) * 4 : 0u);
    std::vector<unsigned char> wsbuf(ws + 1);
    std::vector<uint32_t> idx(static_cast<size_t>(outputs) + 1, 0xdeadbeefu);
    ASSERT_OK(cudnnReduceTensor(h, rd, has_idx ? idx.data() : nullptr, is, ws ? wsbuf.data() : nullptr, ws,
                                alpha.ptr(), ad.d, a.data(), beta.ptr(), cd.d, cc.data()));
    // Expected: per output, its elements in row-major order of the reduced dims.
    std::vector<int64_t> red = dims;  // extents of the reduced dims, 1 elsewhere
    for (size_t d = 0; d < dims.size(); ++d) red[d] = cdims[d] == 1 ? dims[d] : 1;
    std::map<std::vector<int64_t>, std::pair<double, double>> want;
    std::map<std::vector<int64_t>, uint32_t> want_i;
    for_each_index(cdims, [&](const std::vector<int64_t>& o) {
        std::vector<double> v;
        for_each_index(red, [&](const std::vector<int64_t>& r) {
            std::vector<int64_t> i = o;
            for (size_t d = 0; d < i.size(); ++d) i[d] += r[d];
            v.push_back(a.at(i));
        });
        double acc = 0, mag = 0;
        uint32_t best = 0;
        for (double e : v) mag += std::fabs(e);
        if (op_s == "add" || op_s == "avg") {
            for (double e : v) acc += e;
            if (op_s == "avg") acc /= static_cast<double>(v.size()), mag /= static_cast<double>(v.size());
        } else if (op_s == "mul" || op_s == "mul_no_zeros") {
            acc = 1;
            for (double e : v)
                if (op_s == "mul" || e != 0) acc *= e;
            mag = std::fabs(acc);
        } else if (op_s == "norm1") {
            for (double e : v) acc += std::fabs(e);
        } else if (op_s == "norm2") {
            for (double e : v) acc += e * e;
            acc = std::sqrt(acc);
            mag = acc;
        } else {  // min, max, amax: first best; NaN wins (PROPAGATE) or is skipped
            bool have = false;
            for (size_t k = 0; k < v.size(); ++k) {
                const double e = op_s == "amax" ? std::fabs(v[k]) : v[k];
                bool take;
                if (!have) take = true;
                else if (std::isnan(acc)) take = !prop && !std::isnan(e);
                else if (std::isnan(e)) take = prop;
                else take = op_s == "min" ? e < acc : e > acc;
                if (take) acc = e, best = static_cast<uint32_t>(k), have = true;
            }
            mag = std::fabs(acc);
        }
        want[o] = {acc, mag};
        want_i[o] = best;
    });
    EXPECT_TRUE(check_output(c0, cc, [&](const std::vector<int64_t>& i) {
        const auto& [v, mag] = want.at(i);
        const double f = alpha.value() * v;
        const double b = beta.value() != 0 ? beta.value() * c0.at(i) : 0.0;
        return std::make_pair(f + b, std::fabs(alpha.value()) * mag + std::fabs(b));
    }, 1.0, true)) << c.where();
    if (has_idx) {
        int64_t k = 0;
        int bad = 0;
        for_each_index(cdims, [&](const std::vector<int64_t>& o) {
            if (idx[static_cast<size_t>(k)] != want_i.at(o) && bad++ < 5)
                ADD_FAILURE() << c.where() << ": index of output " << k << " is " << idx[static_cast<size_t>(k)]
                              << ", expected " << want_i.at(o);
            ++k;
        });
        EXPECT_EQ(idx.back(), 0xdeadbeefu) << "wrote past the indices";
    }
}

// ---- Transforms ----

void run_transform(const Case& c, cudnnHandle_t h) {
    std::mt19937_64 rng(c.seed());
    const cudnnDataType_t dt = parse_dtype(c.str("dt", "f32"));
    const cudnnDataType_t ydt = parse_dtype(c.str("ydt", c.str("dt", "f32")));
    const std::vector<int64_t> dims = c.list("dims");
    const std::string layout = c.str("layout", "nchw");
    const bool dbl = ydt == CUDNN_DATA_DOUBLE;
    const Scalar alpha(c.num("alpha", 1.0), dbl), beta(c.num("beta", 0.0), dbl);
    HostTensor x = make_tensor(dt, dims, layout, rng, kNaN);
    fill_uniform(x, c.num("lo", -100.0), c.num("hi", 100.0), rng);
    HostTensor y = make_tensor(ydt, dims, c.str("ylayout", layout), rng, dtype_is_float(ydt) ? kNaN : 85.0);
    if (beta.value() != 0) fill_uniform(y, -50.0, 50.0, rng);
    const HostTensor y0 = y;
    TensorDescGuard xd(x), yd(y);
    ASSERT_OK(cudnnTransformTensor(h, alpha.ptr(), xd.d, x.data(), beta.ptr(), yd.d, y.data()));
    EXPECT_TRUE(check_output(y0, y, [&](const std::vector<int64_t>& i) {
        const double f = alpha.value() * x.at(i);
        const double b = beta.value() != 0 ? beta.value() * y0.at(i) : 0.0;
        return std::make_pair(f + b, std::fabs(f) + std::fabs(b));
    }, 1.0, false)) << c.where();
}

std::vector<int32_t> int_list(const Case& c, const std::string& k, size_t n, int32_t def) {
    std::vector<int32_t> v(n, def);
    if (!c.has(k)) return v;
    const std::vector<int64_t> l = c.list(k);
    for (size_t i = 0; i < n && i < l.size(); ++i) v[i] = static_cast<int32_t>(l[i]);
    return v;
}

// The transform computed in steps, as the test reads cuDNN's definition: FOLD pads x into
// P, then moves fold phases into channels (phase-major); UNFOLD moves them back out of
// the channels into U, then crops by the pads.
struct DenseT {
    std::vector<int64_t> dims;
    std::vector<double> v;
    explicit DenseT(std::vector<int64_t> d) : dims(std::move(d)) {
        int64_t n = 1;
        for (int64_t e : dims) n *= e;
        v.assign(static_cast<size_t>(n), 0.0);
    }
    double* at(const std::vector<int64_t>& i) {
        int64_t o = 0;
        for (size_t d = 0; d < dims.size(); ++d) {
            if (i[d] < 0 || i[d] >= dims[d]) return nullptr;
            o = o * dims[d] + i[d];
        }
        return &v[static_cast<size_t>(o)];
    }
};

DenseT transform_expected(const std::vector<int64_t>& xdims, const std::function<double(const std::vector<int64_t>&)>& x,
                          const std::vector<int32_t>& pb, const std::vector<int32_t>& pa, const std::vector<int64_t>& fold,
                          bool unfold) {
    const size_t nb = xdims.size();
    int64_t prod = 1;
    for (size_t d = 2; d < nb; ++d) prod *= fold[d];
    if (!unfold) {
        std::vector<int64_t> pd(nb);
        for (size_t d = 0; d < nb; ++d) pd[d] = xdims[d] + pb[d] + pa[d];
        DenseT p(pd);
        for_each_index(xdims, [&](const std::vector<int64_t>& i) {
            std::vector<int64_t> j = i;
            for (size_t d = 0; d < nb; ++d) j[d] += pb[d];
            if (double* e = p.at(j)) *e = x(i);
        });
        std::vector<int64_t> yd(nb);
        yd[0] = pd[0];
        yd[1] = pd[1] * prod;
        for (size_t d = 2; d < nb; ++d) yd[d] = (pd[d] + fold[d] - 1) / fold[d];
        DenseT y(yd);
        for_each_index(yd, [&](const std::vector<int64_t>& i) {
            int64_t phase = i[1] / pd[1];
            std::vector<int64_t> j = i;
            j[1] = i[1] % pd[1];
            for (size_t d = nb - 1; d >= 2; --d) {
                j[d] = i[d] * fold[d] + phase % fold[d];
                phase /= fold[d];
            }
            if (double* e = p.at(j)) *y.at(i) = *e;
        });
        return y;
    }
    std::vector<int64_t> ud(nb);
    ud[0] = xdims[0];
    ud[1] = xdims[1] / prod;
    for (size_t d = 2; d < nb; ++d) ud[d] = xdims[d] * fold[d];
    DenseT u(ud);
    for_each_index(xdims, [&](const std::vector<int64_t>& i) {
        int64_t phase = i[1] / ud[1];
        std::vector<int64_t> j = i;
        j[1] = i[1] % ud[1];
        for (size_t d = nb - 1; d >= 2; --d) {
            j[d] = i[d] * fold[d] + phase % fold[d];
            phase /= fold[d];
        }
        *u.at(j) = x(i);
    });
    std::vector<int64_t> yd(nb);
    for (size_t d = 0; d < nb; ++d) yd[d] = ud[d] - pb[d] - pa[d];
    DenseT y(yd);
    for_each_index(yd, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> j = i;
        for (size_t d = 0; d < nb; ++d) j[d] += pb[d];
        if (double* e = u.at(j)) *y.at(i) = *e;
    });
    return y;
}

cudnnTensorFormat_t parse_format(const std::string& s) {
    if (s == "nhwc") return CUDNN_TENSOR_NHWC;
    if (s == "vect") return CUDNN_TENSOR_NCHW_VECT_C;
    return CUDNN_TENSOR_NCHW;
}

void run_transform_ex(const Case& c, cudnnHandle_t h, bool filter) {
    std::mt19937_64 rng(c.seed());
    const cudnnDataType_t dt = parse_dtype(c.str("dt", "f32"));
    const std::vector<int64_t> dims = c.list("dims");
    const size_t nb = dims.size();
    const std::vector<int32_t> pb = int_list(c, "pad_before", nb, 0), pa = int_list(c, "pad_after", nb, 0);
    std::vector<uint32_t> fold(nb > 2 ? nb - 2 : 1, 1);
    std::vector<int64_t> fold_d(nb, 1);
    if (c.has("fold")) {
        const std::vector<int64_t> f = c.list("fold");
        for (size_t i = 0; i + 2 < nb && i < f.size(); ++i) fold[i] = static_cast<uint32_t>(f[i]), fold_d[i + 2] = f[i];
    }
    const bool unfold = c.str("dir", "fold") == "unfold";
    const cudnnTensorFormat_t yfmt = parse_format(c.str("yformat", "nchw"));
    const bool dbl = dt == CUDNN_DATA_DOUBLE;
    const Scalar alpha(c.num("alpha", 1.0), dbl), beta(c.num("beta", 0.0), dbl);

    cudnnTensorTransformDescriptor_t td = nullptr;
    ASSERT_OK(cudnnCreateTensorTransformDescriptor(&td));
    std::unique_ptr<cudnnTensorTransformStruct, void (*)(cudnnTensorTransformDescriptor_t)> guard(
        td, [](cudnnTensorTransformDescriptor_t p) { cudnnDestroyTensorTransformDescriptor(p); });
    ASSERT_OK(cudnnSetTensorTransformDescriptor(td, static_cast<uint32_t>(nb), yfmt, pb.data(), pa.data(), fold.data(),
                                                unfold ? CUDNN_TRANSFORM_UNFOLD : CUDNN_TRANSFORM_FOLD));
    HostTensor x = make_tensor(dt, dims, filter ? c.str("xformat", "nchw") : c.str("layout", "nchw"), rng, kNaN);
    fill_uniform(x, -100.0, 100.0, rng);
    const DenseT want = transform_expected(dims, [&](const std::vector<int64_t>& i) { return x.at(i); }, pb, pa, fold_d,
                                           unfold);
    // The destination: cudnnInitTransformDest for tensors; packed in yformat for filters.
    cudnnDataType_t ydt = dt;
    HostTensor y;
    if (!filter) {
        TensorDescGuard xd0(x);
        cudnnTensorDescriptor_t yd0 = nullptr;
        ASSERT_OK(cudnnCreateTensorDescriptor(&yd0));
        size_t bytes = 0;
        ASSERT_OK(cudnnInitTransformDest(td, xd0.d, yd0, &bytes));
        int n = 0;
        std::vector<int> gd(nb), gs(nb);
        ASSERT_OK(cudnnGetTensorNdDescriptor(yd0, static_cast<int>(nb), &ydt, &n, gd.data(), gs.data()));
        cudnnDestroyTensorDescriptor(yd0);
        ASSERT_EQ(static_cast<size_t>(n), nb);
        for (size_t d = 0; d < nb; ++d) ASSERT_EQ(gd[d], want.dims[d]) << c.where() << " dim " << d;
        std::string strides;
        for (size_t d = 0; d < nb; ++d) strides += (d ? "x" : "") + std::to_string(gs[d]);
        y = make_tensor(ydt, want.dims, yfmt == CUDNN_TENSOR_NCHW_VECT_C ? "nchw" : strides, rng, kNaN);
        size_t span = static_cast<size_t>(y.storage_scalars() - 8) * dtype_size(ydt);
        EXPECT_EQ(bytes, span) << c.where();
    } else {
        y = make_tensor(ydt, want.dims, yfmt == CUDNN_TENSOR_NHWC ? "nhwc" : "nchw", rng, kNaN);
    }
    if (beta.value() != 0) fill_uniform(y, -50.0, 50.0, rng);
    const HostTensor y0 = y;
    if (!filter) {
        TensorDescGuard xd(x), yd(y);
        ASSERT_OK(cudnnTransformTensorEx(h, td, alpha.ptr(), xd.d, x.data(), beta.ptr(), yd.d, y.data()));
    } else {
        cudnnFilterDescriptor_t xf = nullptr, yf = nullptr;
        ASSERT_OK(cudnnCreateFilterDescriptor(&xf));
        ASSERT_OK(cudnnCreateFilterDescriptor(&yf));
        std::vector<int> xdi(dims.begin(), dims.end()), ydi(want.dims.begin(), want.dims.end());
        ASSERT_OK(cudnnSetFilterNdDescriptor(xf, dt, parse_format(c.str("xformat", "nchw")), static_cast<int>(nb),
                                             xdi.data()));
        ASSERT_OK(cudnnSetFilterNdDescriptor(yf, ydt, yfmt, static_cast<int>(nb), ydi.data()));
        const cudnnStatus_t s = cudnnTransformFilter(h, td, alpha.ptr(), xf, x.data(), beta.ptr(), yf, y.data());
        cudnnDestroyFilterDescriptor(xf);
        cudnnDestroyFilterDescriptor(yf);
        ASSERT_OK(s);
    }
    DenseT w = want;
    EXPECT_TRUE(check_output(y0, y, [&](const std::vector<int64_t>& i) {
        const double f = alpha.value() * *w.at(i);
        const double b = beta.value() != 0 ? beta.value() * y0.at(i) : 0.0;
        return std::make_pair(f + b, std::fabs(f) + std::fabs(b));
    }, 1.0, true)) << c.where();
}

}  // namespace

void run_case(const Case& c, cudnnHandle_t h) {
    if (c.op == "act_fwd") return run_activation(c, h, false);
    if (c.op == "act_bwd") return run_activation(c, h, true);
    if (c.op == "softmax_fwd") return run_softmax(c, h, false);
    if (c.op == "softmax_bwd") return run_softmax(c, h, true);
    if (c.op == "add") return run_add(c, h);
    if (c.op == "optensor") return run_optensor(c, h);
    if (c.op == "reduce") return run_reduce(c, h);
    if (c.op == "transform") return run_transform(c, h);
    if (c.op == "transform_ex") return run_transform_ex(c, h, false);
    if (c.op == "transform_filter") return run_transform_ex(c, h, true);
    FAIL() << c.where() << ": unknown op " << c.op;
}

}  // namespace ops_test
