// odnn selftest: every implemented operation, on a few small problems (odd sizes, NCHW
// and NHWC, a padded-stride layout, several data types, alpha/beta blending), through
// the public cuDNN API of the library under test on its handle's backend (device memory
// on CUDA), compared with odnn's reference implementations.
//
// The reference is libodnn-selftest-ref.so (selftest_ref.cpp): odnn's own objects with
// every CPU operation forced onto src/cpu/ref. It is loaded beside the library under test
// and driven by the very same code below (same descriptors, scalars and input bytes), on
// a CPU handle with host memory. Outputs are poisoned with NaN before each call (an
// element left unwritten fails), bytes a padded tensor does not address must stay
// untouched, and a comparison whose reference is mostly zeros is refused as vacuous.
//
// Verdicts: pass; FAIL (wrong values, an error status, or NOT_SUPPORTED from a function
// the library lists as implemented on this backend); skip (NOT_SUPPORTED from a function
// the library lists as not implemented there). The exit code is 0 when nothing failed.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "data.hpp"
#include "odnn/odnn.h"
#include "runtime.hpp"
#include "selftest_check.hpp"

namespace odnn_tool {

namespace {

using odnn_bench::Buffer;
using odnn_bench::CudnnLib;
using odnn_bench::Dt;

const char* kUsage =
    "usage: odnn selftest [--backend cpu|cuda] [--lib PATH] [--op LIST] [--json] [--ref PATH]\n"
    "  Runs every implemented operation on a few small problems through the library's public\n"
    "  API, on its active backend, and compares each result with odnn's reference\n"
    "  implementations (src/cpu/ref). One line per operation and problem; exit code 0 when\n"
    "  everything passed, 1 when anything failed.\n"
    "  --backend B   run the library on the cpu or cuda backend (sets ODNN_BACKEND for it)\n"
    "  --lib PATH    test another cuDNN library (default: the odnn this tool runs with)\n"
    "  --op LIST     only these operations, e.g. conv,act,softmax (prefixes of the op column)\n"
    "  --json        machine-readable results\n"
    "  --ref PATH    the reference module (default: odnn/libodnn-selftest-ref.so beside\n"
    "                the odnn library this tool runs with)\n";

// ---------------------------------------------------------------- data

// Deterministic values: multiples of `step` in [lo, hi] (exact in every type used here).
std::vector<double> values(size_t n, unsigned seed, double lo = -1.0, double hi = 1.0, double step = 0.25) {
    std::vector<double> v(n);
    uint32_t x = seed * 2654435761u + 0x9e3779b9u;
    const long steps = static_cast<long>(std::floor((hi - lo) / step + 0.5)) + 1;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        v[i] = lo + step * static_cast<double>((x >> 8) % static_cast<uint32_t>(steps));
    }
    return v;
}

// As values(), with no zero (dropout: a dropped element is told from a kept zero).
std::vector<double> nonzero(size_t n, unsigned seed) {
    std::vector<double> v = values(n, seed);
    for (double& x : v)
        if (x == 0.0) x = 0.5;
    return v;
}

// Pairwise different values (max pooling and arg-max: no ties), multiples of 1/64
// within +-n/128: exact in FLOAT, and in HALF for n <= 2048.
std::vector<double> distinct(size_t n, unsigned seed) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = (static_cast<double>(i) - static_cast<double>(n) / 2) / 64.0;
    uint32_t x = seed * 2654435761u + 17u;
    for (size_t i = n; i > 1; --i) {  // Fisher-Yates with the LCG
        x = x * 1664525u + 1013904223u;
        std::swap(v[i - 1], v[(x >> 8) % i]);
    }
    return v;
}

enum class Layout { nchw, nhwc, padded };

const char* layout_name(Layout l) { return l == Layout::nchw ? "nchw" : l == Layout::nhwc ? "nhwc" : "padded"; }

size_t product(const std::vector<int>& d) {
    size_t n = 1;
    for (int x : d) n *= static_cast<size_t>(x);
    return n;
}

std::string dims_text(const std::vector<int>& d) {
    static const char* k4[] = {"n", "c", "h", "w"};
    static const char* k5[] = {"n", "c", "d", "h", "w"};
    std::string s;
    for (size_t i = 0; i < d.size(); ++i)
        s += std::string(i ? " " : "") + (d.size() == 5 ? k5[i] : d.size() == 4 ? k4[i] : "x") + "=" +
             std::to_string(d[i]);
    return s;
}

std::string real(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

// ---------------------------------------------------------------- one side of a run

struct Side {
    CudnnLib* lib = nullptr;
    bool gpu = false;
};

struct Tensor {
    cudnnTensorDescriptor_t desc = nullptr;
    Buffer buf;
    Dt t{};
    std::vector<int> dims, strides;
    std::vector<unsigned char> initial;  // the bytes uploaded
    size_t span = 0;                     // elements from the first to one past the last
    void* p() const { return buf.ptr; }
};

std::vector<unsigned char> poison_bytes(size_t n, const Dt& t) {
    if (t.data == CUDNN_DATA_INT8) return std::vector<unsigned char>(n, 0x55);
    return odnn_bench::from_double(std::vector<double>(n / t.bytes, NAN), t);
}

// Descriptors and memory of one case on one side; the first failing call is recorded.
class Run {
public:
    explicit Run(const Side& s) : side_(s) {}
    ~Run() {
        for (auto it = cleanup_.rbegin(); it != cleanup_.rend(); ++it) (*it)();
        for (auto& t : tensors_) {
            if (t->desc) BENCH_CALL(lib(), cudnnDestroyTensorDescriptor, t->desc);
            odnn_bench::release(&t->buf);
        }
        for (auto& b : scratch_) odnn_bench::release(b.get());
    }
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    CudnnLib& lib() { return *side_.lib; }
    cudnnHandle_t handle() { return side_.lib->handle(); }

    // false (and the failure recorded) unless st is SUCCESS.
    bool ok(cudnnStatus_t st, const char* fn) {
        if (st == CUDNN_STATUS_SUCCESS) return true;
        if (status == CUDNN_STATUS_SUCCESS) {
            status = st;
            function = fn;
            char why[512] = "";
            if (auto f = reinterpret_cast<decltype(&::cudnnGetLastErrorString)>(lib().sym("cudnnGetLastErrorString")))
                f(why, sizeof why);
            message = why;
        }
        return false;
    }
    // A harness failure (memory, copies): recorded like a failing call.
    bool fail(const std::string& what) {
        if (status == CUDNN_STATUS_SUCCESS) {
            status = CUDNN_STATUS_INTERNAL_ERROR;
            function = "selftest";
            message = what;
            harness = true;
        }
        return false;
    }

    // A tensor with `vals` in logical (row-major N, C, spatial) order; without vals,
    // poisoned (NaN; INT8 0x55). nullptr after a failure.
    Tensor* tensor(const Dt& t, const std::vector<int>& dims, Layout l, const std::vector<double>* vals) {
        auto x = std::make_unique<Tensor>();
        x->t = t;
        x->dims = dims;
        const int nb = static_cast<int>(dims.size());
        x->strides.assign(nb, 1);
        if (l == Layout::padded) {  // row-major with 3 unused elements after every row
            long long s = 1;
            for (int i = nb - 1; i >= 0; --i) {
                x->strides[i] = static_cast<int>(s);
                s *= dims[i] + (i == nb - 1 ? 3 : 0);
            }
        } else {
            odnn_bench::strides_for(nb, dims.data(), l == Layout::nhwc, x->strides.data());
        }
        x->span = 1;
        for (int i = 0; i < nb; ++i) x->span += static_cast<size_t>(dims[i] - 1) * x->strides[i];
        if (!ok(BENCH_CALL(lib(), cudnnCreateTensorDescriptor, &x->desc), "cudnnCreateTensorDescriptor")) return nullptr;
        Tensor* raw = x.get();
        tensors_.push_back(std::move(x));
        if (!ok(BENCH_CALL(lib(), cudnnSetTensorNdDescriptor, raw->desc, t.data, nb, dims.data(), raw->strides.data()),
                "cudnnSetTensorNdDescriptor"))
            return nullptr;
        raw->initial = poison_bytes(raw->span * t.bytes, t);
        if (vals) {
            const auto bytes = odnn_bench::from_double(*vals, t);
            for (size_t i = 0; i < vals->size(); ++i)
                std::memcpy(&raw->initial[offset(*raw, i) * t.bytes], &bytes[i * t.bytes], t.bytes);
        }
        return upload(raw) ? raw : nullptr;
    }
    // A packed buffer without a descriptor (filters, scale / bias / statistics, grids).
    Tensor* flat(const Dt& t, size_t n, const std::vector<double>* vals) {
        auto x = std::make_unique<Tensor>();
        x->t = t;
        x->dims = {static_cast<int>(n)};
        x->strides = {1};
        x->span = n;
        x->initial = vals ? odnn_bench::from_double(*vals, t) : poison_bytes(n * t.bytes, t);
        Tensor* raw = x.get();
        tensors_.push_back(std::move(x));
        return upload(raw) ? raw : nullptr;
    }
    // Zeroed scratch memory (workspace, states, reserve space); nullptr after a failure.
    void* bytes(size_t n) {
        scratch_.push_back(std::make_unique<Buffer>());
        std::string err;
        if (!odnn_bench::alloc(scratch_.back().get(), n, side_.gpu, &err)) {
            fail(err);
            return nullptr;
        }
        std::vector<unsigned char> z(n ? n : 1, 0);
        if (!odnn_bench::upload(scratch_.back().get(), z.data(), n)) {
            fail("copy to the device failed");
            return nullptr;
        }
        return scratch_.back()->ptr;
    }
    std::vector<unsigned char> download_bytes(const void* p, size_t n) {
        std::vector<unsigned char> out(n);
        for (auto& b : scratch_)
            if (b->ptr == p) {
                if (!odnn_bench::download(out.data(), *b, n)) fail("copy from the device failed");
                return out;
            }
        fail("unknown scratch buffer");
        return out;
    }
    // The logical values of x; bytes it does not address must be as uploaded.
    std::vector<double> read(Tensor* x) {
        std::vector<unsigned char> raw(x->span * x->t.bytes);
        if (side_.gpu) odnn_bench::Cuda::get()->sync();
        if (!odnn_bench::download(raw.data(), x->buf, raw.size())) {
            fail("copy from the device failed");
            return {};
        }
        const size_t n = product(x->dims);
        std::vector<unsigned char> picked(n * x->t.bytes);
        std::vector<bool> addressed(x->span, false);
        for (size_t i = 0; i < n; ++i) {
            const size_t o = offset(*x, i);
            addressed[o] = true;
            std::memcpy(&picked[i * x->t.bytes], &raw[o * x->t.bytes], x->t.bytes);
        }
        for (size_t o = 0; o < x->span; ++o)
            if (!addressed[o] && std::memcmp(&raw[o * x->t.bytes], &x->initial[o * x->t.bytes], x->t.bytes) != 0) {
                outside_write = true;
                break;
            }
        return odnn_bench::to_double(picked, x->t);
    }
    template <class F>
    void on_exit(F f) {
        cleanup_.push_back(f);
    }
    bool gpu() const { return side_.gpu; }

    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    std::string function, message;
    bool harness = false;
    bool outside_write = false;

private:
    static size_t offset(const Tensor& x, size_t linear) {
        size_t o = 0;
        for (int d = static_cast<int>(x.dims.size()) - 1; d >= 0; --d) {
            o += (linear % x.dims[d]) * x.strides[d];
            linear /= x.dims[d];
        }
        return o;
    }
    bool upload(Tensor* x) {
        std::string err;
        if (!odnn_bench::alloc(&x->buf, x->initial.size(), side_.gpu, &err)) return fail(err);
        if (!odnn_bench::upload(&x->buf, x->initial.data(), x->initial.size())) return fail("copy to the device failed");
        return true;
    }

    Side side_;
    std::vector<std::unique_ptr<Tensor>> tensors_;
    std::vector<std::unique_ptr<Buffer>> scratch_;
    std::vector<std::function<void()>> cleanup_;
};

// Scaling factors in the type the API reads: double for DOUBLE data, float otherwise.
struct Scalar {
    float f;
    double d;
    bool dbl;
    Scalar(double v, bool is_double) : f(static_cast<float>(v)), d(v), dbl(is_double) {}
    const void* p() const { return dbl ? static_cast<const void*>(&d) : static_cast<const void*>(&f); }
};

// ---------------------------------------------------------------- cases

struct Out {
    std::string name;
    std::vector<double> v;
    Tolerance tol;
};
using Outs = std::vector<Out>;

struct Case {
    std::string op;       // e.g. "conv fwd"
    std::string problem;  // the problem, in bench-like words
    std::string api;      // the cuDNN function whose support decides skip or fail
    std::function<bool(Run&, Outs&)> body;
    // Optional checks of the library's own outputs (no reference): "" or why it failed.
    std::function<std::string(const Outs&)> property;
    bool compare = true;  // false: outputs are not expected to match the reference
};

Dt dt_of(const std::string& dt) { return odnn_bench::dtype_of(dt); }
Dt param_dt(const std::string& dt) { return dt == "f64" ? dt_of("f64") : dt_of("f32"); }

// Reads a tensor into `outs` (with its tolerance); false after a failure.
bool output(Run& r, Outs& outs, const char* name, Tensor* x, const Tolerance& tol) {
    if (!x) return false;
    std::vector<double> v = r.read(x);
    if (r.status != CUDNN_STATUS_SUCCESS) return false;
    outs.push_back({name, std::move(v), tol});
    return true;
}

// ---- convolution ----

struct ConvSpec {
    std::string dt = "f32";
    Layout layout = Layout::nchw;
    int n, c, h, w, k, r, s;
    int pad_h = 0, pad_w = 0, stride = 1, dil = 1, g = 1;
    double alpha = 1, beta = 0;
    std::string text() const {
        std::string t = "dt=" + dt + " layout=" + layout_name(layout) + " n=" + std::to_string(n) + " c=" +
                        std::to_string(c) + " h=" + std::to_string(h) + " w=" + std::to_string(w) + " k=" +
                        std::to_string(k) + " r=" + std::to_string(r) + " s=" + std::to_string(s);
        t += pad_h == pad_w ? " pad=" + std::to_string(pad_h)
                            : " pad_h=" + std::to_string(pad_h) + " pad_w=" + std::to_string(pad_w);
        if (stride != 1) t += " stride=" + std::to_string(stride);
        if (dil != 1) t += " dil=" + std::to_string(dil);
        if (g != 1) t += " g=" + std::to_string(g);
        if (alpha != 1 || beta != 0) t += " alpha=" + real(alpha) + " beta=" + real(beta);
        return t;
    }
    int out(int in, int pad, int f) const { return (in + 2 * pad - ((f - 1) * dil + 1)) / stride + 1; }
    std::vector<int> xdims() const { return {n, c, h, w}; }
    std::vector<int> wdims() const { return {k, c / g, r, s}; }
    std::vector<int> ydims() const { return {n, k, out(h, pad_h, r), out(w, pad_w, s)}; }
};

struct ConvDescs {
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
};

bool conv_descs(Run& r, const ConvSpec& s, ConvDescs* d) {
    const Dt t = dt_of(s.dt);
    if (!r.ok(BENCH_CALL(r.lib(), cudnnCreateFilterDescriptor, &d->w), "cudnnCreateFilterDescriptor")) return false;
    {
        auto w = d->w;
        r.on_exit([&r, w] { BENCH_CALL(r.lib(), cudnnDestroyFilterDescriptor, w); });
    }
    if (!r.ok(BENCH_CALL(r.lib(), cudnnCreateConvolutionDescriptor, &d->conv), "cudnnCreateConvolutionDescriptor"))
        return false;
    {
        auto c = d->conv;
        r.on_exit([&r, c] { BENCH_CALL(r.lib(), cudnnDestroyConvolutionDescriptor, c); });
    }
    const auto wd = s.wdims();
    if (!r.ok(BENCH_CALL(r.lib(), cudnnSetFilterNdDescriptor, d->w, t.data,
                         s.layout == Layout::nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, 4, wd.data()),
              "cudnnSetFilterNdDescriptor"))
        return false;
    const int pad[2] = {s.pad_h, s.pad_w}, stride[2] = {s.stride, s.stride}, dil[2] = {s.dil, s.dil};
    if (!r.ok(BENCH_CALL(r.lib(), cudnnSetConvolutionNdDescriptor, d->conv, 2, pad, stride, dil,
                         CUDNN_CROSS_CORRELATION, t.compute == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT),
              "cudnnSetConvolutionNdDescriptor"))
        return false;
    return r.ok(BENCH_CALL(r.lib(), cudnnSetConvolutionGroupCount, d->conv, s.g), "cudnnSetConvolutionGroupCount");
}

// The algorithms the library under test offers for a direction (Get_v7, those with
// SUCCESS); an empty list with the failure recorded in `r` if the query fails.
std::vector<int> conv_algos(Run& r, const ConvSpec& s, const std::string& dir) {
    std::vector<int> out;
    ConvDescs d;
    if (!conv_descs(r, s, &d)) return out;
    const Dt t = dt_of(s.dt);
    Tensor* x = r.tensor(t, s.xdims(), s.layout, nullptr);
    Tensor* y = x ? r.tensor(t, s.ydims(), s.layout, nullptr) : nullptr;
    if (!y) return out;
    int got = 0;
    const size_t limit = size_t{256} << 20;
    if (dir == "fwd") {
        cudnnConvolutionFwdAlgoPerf_t perf[16];
        if (!r.ok(BENCH_CALL(r.lib(), cudnnGetConvolutionForwardAlgorithm_v7, r.handle(), x->desc, d.w, d.conv, y->desc,
                             16, &got, perf),
                  "cudnnGetConvolutionForwardAlgorithm_v7"))
            return out;
        for (int i = 0; i < got; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) out.push_back(perf[i].algo);
    } else if (dir == "bwd_data") {
        cudnnConvolutionBwdDataAlgoPerf_t perf[16];
        if (!r.ok(BENCH_CALL(r.lib(), cudnnGetConvolutionBackwardDataAlgorithm_v7, r.handle(), d.w, y->desc, d.conv,
                             x->desc, 16, &got, perf),
                  "cudnnGetConvolutionBackwardDataAlgorithm_v7"))
            return out;
        for (int i = 0; i < got; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) out.push_back(perf[i].algo);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[16];
        if (!r.ok(BENCH_CALL(r.lib(), cudnnGetConvolutionBackwardFilterAlgorithm_v7, r.handle(), x->desc, y->desc,
                             d.conv, d.w, 16, &got, perf),
                  "cudnnGetConvolutionBackwardFilterAlgorithm_v7"))
            return out;
        for (int i = 0; i < got; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) out.push_back(perf[i].algo);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

bool conv_body(Run& r, Outs& outs, const ConvSpec& s, const std::string& dir, int algo) {
    ConvDescs d;
    if (!conv_descs(r, s, &d)) return false;
    const Dt t = dt_of(s.dt);
    const auto xv = values(product(s.xdims()), 1), wv = values(product(s.wdims()), 2),
               yv = values(product(s.ydims()), 3);
    const auto prior = values(std::max({product(s.xdims()), product(s.wdims()), product(s.ydims())}), 4);
    const bool blend = s.beta != 0;
    const Scalar alpha(s.alpha, t.data == CUDNN_DATA_DOUBLE), beta(s.beta, t.data == CUDNN_DATA_DOUBLE);
    const double per_group_c = static_cast<double>(s.c) / s.g, per_group_k = static_cast<double>(s.k) / s.g;
    const auto yd = s.ydims();
    size_t ws = 0;
    if (dir == "fwd") {
        Tensor* x = r.tensor(t, s.xdims(), s.layout, &xv);
        Tensor* w = x ? r.flat(t, product(s.wdims()), &wv) : nullptr;
        std::vector<double> yp(prior.begin(), prior.begin() + product(yd));
        Tensor* y = w ? r.tensor(t, yd, s.layout, blend ? &yp : nullptr) : nullptr;
        if (!y) return false;
        if (!r.ok(BENCH_CALL(r.lib(), cudnnGetConvolutionForwardWorkspaceSize, r.handle(), x->desc, d.w, d.conv,
                             y->desc, static_cast<cudnnConvolutionFwdAlgo_t>(algo), &ws),
                  "cudnnGetConvolutionForwardWorkspaceSize"))
            return false;
        void* wsp = r.bytes(ws);
        if (!wsp) return false;
        if (!r.ok(BENCH_CALL(r.lib(), cudnnConvolutionForward, r.handle(), alpha.p(), x->desc, x->p(), d.w, w->p(),
                             d.conv, static_cast<cudnnConvolutionFwdAlgo_t>(algo), wsp, ws, beta.p(), y->desc, y->p()),
                  "cudnnConvolutionForward"))
            return false;
        const double terms = per_group_c * s.r * s.s;
        return output(r, outs, "y", y, tolerance_for(t.data, t.compute, terms, terms));
    }
    if (dir == "bwd_data") {
        Tensor* w = r.flat(t, product(s.wdims()), &wv);
        Tensor* dy = w ? r.tensor(t, yd, s.layout, &yv) : nullptr;
        std::vector<double> xp(prior.begin(), prior.begin() + product(s.xdims()));
        Tensor* dx = dy ? r.tensor(t, s.xdims(), s.layout, blend ? &xp : nullptr) : nullptr;
        if (!dx) return false;
        if (!r.ok(BENCH_CALL(r.lib(), cudnnGetConvolutionBackwardDataWorkspaceSize, r.handle(), d.w, dy->desc, d.conv,
                             dx->desc, static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &ws),
                  "cudnnGetConvolutionBackwardDataWorkspaceSize"))
            return false;
        void* wsp = r.bytes(ws);
        if (!wsp) return false;
        if (!r.ok(BENCH_CALL(r.lib(), cudnnConvolutionBackwardData, r.handle(), alpha.p(), d.w, w->p(), dy->desc,
                             dy->p(), d.conv, static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), wsp, ws, beta.p(),
                             dx->desc, dx->p()),
                  "cudnnConvolutionBackwardData"))
            return false;
        const double terms = per_group_k * s.r * s.s;
        return output(r, outs, "dx", dx, tolerance_for(t.data, t.compute, terms, terms));
    }
    Tensor* x = r.tensor(t, s.xdims(), s.layout, &xv);
    Tensor* dy = x ? r.tensor(t, yd, s.layout, &yv) : nullptr;
    std::vector<double> wp(prior.begin(), prior.begin() + product(s.wdims()));
    Tensor* dw = dy ? r.flat(t, product(s.wdims()), blend ? &wp : nullptr) : nullptr;
    if (!dw) return false;
    if (!r.ok(BENCH_CALL(r.lib(), cudnnGetConvolutionBackwardFilterWorkspaceSize, r.handle(), x->desc, dy->desc,
                         d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &ws),
              "cudnnGetConvolutionBackwardFilterWorkspaceSize"))
        return false;
    void* wsp = r.bytes(ws);
    if (!wsp) return false;
    if (!r.ok(BENCH_CALL(r.lib(), cudnnConvolutionBackwardFilter, r.handle(), alpha.p(), x->desc, x->p(), dy->desc,
                         dy->p(), d.conv, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), wsp, ws, beta.p(), d.w,
                         dw->p()),
              "cudnnConvolutionBackwardFilter"))
        return false;
    const double terms = static_cast<double>(s.n) * yd[2] * yd[3];
    return output(r, outs, "dw", dw, tolerance_for(t.data, t.compute, terms, terms));
}

// ---- the case list ----

struct Registry {
    std::vector<Case> cases;
    void add(std::string op, std::string problem, std::string api, std::function<bool(Run&, Outs&)> body) {
        Case c;
        c.op = std::move(op);
        c.problem = std::move(problem);
        c.api = std::move(api);
        c.body = std::move(body);
        cases.push_back(std::move(c));
    }
};

cudnnActivationMode_t act_mode(const std::string& m) {
    if (m == "sigmoid") return CUDNN_ACTIVATION_SIGMOID;
    if (m == "tanh") return CUDNN_ACTIVATION_TANH;
    if (m == "clipped_relu") return CUDNN_ACTIVATION_CLIPPED_RELU;
    if (m == "elu") return CUDNN_ACTIVATION_ELU;
    if (m == "identity") return CUDNN_ACTIVATION_IDENTITY;
    if (m == "swish") return CUDNN_ACTIVATION_SWISH;
    return CUDNN_ACTIVATION_RELU;
}

bool activation_desc(Run& r, cudnnActivationMode_t mode, double coef, cudnnActivationDescriptor_t* out) {
    if (!r.ok(BENCH_CALL(r.lib(), cudnnCreateActivationDescriptor, out), "cudnnCreateActivationDescriptor"))
        return false;
    auto d = *out;
    r.on_exit([&r, d] { BENCH_CALL(r.lib(), cudnnDestroyActivationDescriptor, d); });
    return r.ok(BENCH_CALL(r.lib(), cudnnSetActivationDescriptor, d, mode, CUDNN_NOT_PROPAGATE_NAN, coef),
                "cudnnSetActivationDescriptor");
}

void add_conv_cases(Registry& reg, const Side& test) {
    std::vector<ConvSpec> specs;
    {
        ConvSpec s{"f32", Layout::nchw, 2, 3, 7, 5, 4, 3, 3};
        s.pad_h = s.pad_w = 1;
        specs.push_back(s);
    }
    {
        ConvSpec s{"f32", Layout::nhwc, 1, 6, 6, 9, 4, 3, 3};
        s.pad_h = 1;
        s.pad_w = 0;
        s.stride = 2;
        s.g = 2;
        specs.push_back(s);
    }
    {
        ConvSpec s{"f16", Layout::nhwc, 2, 8, 5, 5, 8, 3, 3};
        s.pad_h = s.pad_w = 1;
        specs.push_back(s);
    }
    {
        ConvSpec s{"bf16", Layout::nchw, 1, 4, 6, 5, 3, 1, 1};
        specs.push_back(s);
    }
    {
        ConvSpec s{"f64", Layout::nchw, 1, 2, 5, 6, 3, 2, 2};
        s.dil = 2;
        s.alpha = 2;
        s.beta = 0.5;
        specs.push_back(s);
    }
    const char* apis[] = {"cudnnConvolutionForward", "cudnnConvolutionBackwardData", "cudnnConvolutionBackwardFilter"};
    const char* dirs[] = {"fwd", "bwd_data", "bwd_filter"};
    for (const ConvSpec& s : specs)
        for (int di = 0; di < 3; ++di) {
            const std::string dir = dirs[di];
            // The algorithms the library offers, asked on the library under test.
            Run q(test);
            const std::vector<int> algos = conv_algos(q, s, dir);
            if (q.status != CUDNN_STATUS_SUCCESS || algos.empty()) {
                // One case that reports why: the query's failure, or no algorithm at all.
                const cudnnStatus_t st = q.status;
                const std::string fn = q.function, msg = q.message;
                Case c;
                c.op = "conv " + dir;
                c.problem = s.text();
                c.api = apis[di];
                c.body = [st, fn, msg, s, dir](Run& r, Outs&) {
                    if (st != CUDNN_STATUS_SUCCESS) {
                        r.status = st;
                        r.function = fn;
                        r.message = msg;
                        return false;
                    }
                    // Nothing offered: say so as a failure of the direction's query.
                    r.status = CUDNN_STATUS_NOT_SUPPORTED;
                    r.function = "cudnnGet*Algorithm_v7";
                    r.message = "no algorithm with status SUCCESS is offered for this problem";
                    return false;
                };
                reg.cases.push_back(c);
                continue;
            }
            for (int algo : algos)
                reg.add("conv " + dir, s.text() + " algo=" + std::to_string(algo), apis[di],
                        [s, dir, algo](Run& r, Outs& o) { return conv_body(r, o, s, dir, algo); });
        }

    // Backward bias: db = sum over N, H, W of dy.
    for (auto p : {std::make_pair(std::string("f32"), Layout::nchw), std::make_pair(std::string("f16"), Layout::nhwc)}) {
        const std::string dt = p.first;
        const Layout l = p.second;
        const std::vector<int> dyd = {2, 5, 3, 7};
        reg.add("conv bias", "dt=" + dt + " layout=" + layout_name(l) + " " + dims_text(dyd), "cudnnConvolutionBackwardBias",
                [dt, l, dyd](Run& r, Outs& o) {
                    const Dt t = dt_of(dt);
                    const auto v = values(product(dyd), 5);
                    Tensor* dy = r.tensor(t, dyd, l, &v);
                    Tensor* db = dy ? r.tensor(t, {1, dyd[1], 1, 1}, Layout::nchw, nullptr) : nullptr;
                    if (!db) return false;
                    const Scalar one(1, t.data == CUDNN_DATA_DOUBLE), zero(0, t.data == CUDNN_DATA_DOUBLE);
                    if (!r.ok(BENCH_CALL(r.lib(), cudnnConvolutionBackwardBias, r.handle(), one.p(), dy->desc, dy->p(),
                                         zero.p(), db->desc, db->p()),
                              "cudnnConvolutionBackwardBias"))
                        return false;
                    const double terms = 2.0 * 3 * 7;
                    return output(r, o, "db", db, tolerance_for(t.data, t.compute, terms, terms));
                });
    }

    // Fused forward: y = relu(alpha1 * conv(x, w) + alpha2 * z + bias), on the first
    // algorithm offered.
    {
        ConvSpec s{"f32", Layout::nchw, 2, 3, 6, 5, 4, 3, 3};
        s.pad_h = s.pad_w = 1;
        Run q(test);
        const std::vector<int> algos = conv_algos(q, s, "fwd");
        const int algo = algos.empty() ? 1 : algos[0];
        reg.add("conv bias_act fwd", s.text() + " alpha2=0.5 act=relu algo=" + std::to_string(algo),
                "cudnnConvolutionBiasActivationForward", [s, algo](Run& r, Outs& o) {
                    ConvDescs d;
                    if (!conv_descs(r, s, &d)) return false;
                    const Dt t = dt_of(s.dt);
                    const auto xv = values(product(s.xdims()), 1), wv = values(product(s.wdims()), 2),
                               zv = values(product(s.ydims()), 3), bv = values(s.k, 6);
                    Tensor* x = r.tensor(t, s.xdims(), s.layout, &xv);
                    Tensor* w = x ? r.flat(t, product(s.wdims()), &wv) : nullptr;
                    Tensor* z = w ? r.tensor(t, s.ydims(), s.layout, &zv) : nullptr;
                    Tensor* b = z ? r.tensor(t, {1, s.k, 1, 1}, Layout::nchw, &bv) : nullptr;
                    Tensor* y = b ? r.tensor(t, s.ydims(), s.layout, nullptr) : nullptr;
                    cudnnActivationDescriptor_t act;
                    if (!y || !activation_desc(r, CUDNN_ACTIVATION_RELU, 0.0, &act)) return false;
                    size_t ws = 0;
                    if (!r.ok(BENCH_CALL(r.lib(), cudnnGetConvolutionForwardWorkspaceSize, r.handle(), x->desc, d.w,
                                         d.conv, y->desc, static_cast<cudnnConvolutionFwdAlgo_t>(algo), &ws),
                              "cudnnGetConvolutionForwardWorkspaceSize"))
                        return false;
                    void* wsp = r.bytes(ws);
                    const float one = 1.0f, half = 0.5f;
                    if (!wsp || !r.ok(BENCH_CALL(r.lib(), cudnnConvolutionBiasActivationForward, r.handle(), &one,
                                                 x->desc, x->p(), d.w, w->p(), d.conv,
                                                 static_cast<cudnnConvolutionFwdAlgo_t>(algo), wsp, ws, &half, z->desc,
                                                 z->p(), b->desc, b->p(), act, y->desc, y->p()),
                                      "cudnnConvolutionBiasActivationForward"))
                        return false;
                    const double terms = static_cast<double>(s.c) * s.r * s.s + 2;
                    return output(r, o, "y", y, tolerance_for(t.data, t.compute, terms, terms));
                });
    }
}

void add_activation_cases(Registry& reg) {
    struct A {
        const char* mode;
        double coef;
        const char* dt;
        Layout l;
        std::vector<int> dims;
    };
    const std::vector<int> d4 = {2, 3, 5, 7};
    std::vector<A> list;
    for (const char* m : {"relu", "sigmoid", "tanh", "clipped_relu", "elu", "swish", "identity"})
        list.push_back({m, std::string(m) == "clipped_relu" ? 0.5 : 1.0, "f32", Layout::nchw, d4});
    list.push_back({"relu", 0, "f16", Layout::nhwc, d4});
    list.push_back({"elu", 1.0, "f16", Layout::nhwc, {1, 4, 3, 5, 3}});
    list.push_back({"tanh", 0, "bf16", Layout::nchw, d4});
    list.push_back({"swish", 0, "f64", Layout::nhwc, d4});
    list.push_back({"sigmoid", 0, "f32", Layout::padded, d4});
    for (const A& a : list)
        for (const char* dir : {"fwd", "bwd"}) {
            const std::string problem = std::string("mode=") + a.mode + " dt=" + a.dt + " layout=" + layout_name(a.l) +
                                        " " + dims_text(a.dims) +
                                        (std::string(dir) == "bwd" ? " alpha=1 beta=0.5" : "");
            reg.add(std::string("act ") + dir, problem, std::string("cudnnActivation") + (dir[0] == 'f' ? "Forward" : "Backward"),
                    [a, dir](Run& r, Outs& o) {
                        const Dt t = dt_of(a.dt);
                        const size_t n = product(a.dims);
                        const auto xv = values(n, 11, -2, 2), dyv = values(n, 12), dxv = values(n, 13);
                        cudnnActivationDescriptor_t ad;
                        if (!activation_desc(r, act_mode(a.mode), a.coef, &ad)) return false;
                        Tensor* x = r.tensor(t, a.dims, a.l, &xv);
                        Tensor* y = x ? r.tensor(t, a.dims, a.l, nullptr) : nullptr;
                        if (!y) return false;
                        const bool dbl = t.data == CUDNN_DATA_DOUBLE;
                        const Scalar one(1, dbl), zero(0, dbl), half(0.5, dbl);
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnActivationForward, r.handle(), ad, one.p(), x->desc, x->p(),
                                             zero.p(), y->desc, y->p()),
                                  "cudnnActivationForward"))
                            return false;
                        const Tolerance tol = tolerance_for(t.data, t.compute, 8, 2);
                        if (dir[0] == 'f') return output(r, o, "y", y, tol);
                        Tensor* dy = r.tensor(t, a.dims, a.l, &dyv);
                        Tensor* dx = dy ? r.tensor(t, a.dims, a.l, &dxv) : nullptr;
                        if (!dx || !r.ok(BENCH_CALL(r.lib(), cudnnActivationBackward, r.handle(), ad, one.p(), y->desc,
                                                    y->p(), dy->desc, dy->p(), x->desc, x->p(), half.p(), dx->desc,
                                                    dx->p()),
                                         "cudnnActivationBackward"))
                            return false;
                        return output(r, o, "dx", dx, tol);
                    });
        }
}

void add_softmax_cases(Registry& reg) {
    struct S {
        const char* alg;
        const char* mode;
        const char* dt;
        Layout l;
        std::vector<int> dims;
    };
    std::vector<S> list;
    for (const char* alg : {"fast", "accurate", "log"})
        for (const char* mode : {"channel", "instance"}) list.push_back({alg, mode, "f32", Layout::nchw, {2, 5, 3, 3}});
    list.push_back({"accurate", "channel", "f16", Layout::nhwc, {2, 7, 3, 5}});
    list.push_back({"log", "instance", "f64", Layout::nhwc, {3, 4, 2, 3}});
    list.push_back({"accurate", "instance", "bf16", Layout::nchw, {2, 3, 1, 5}});
    for (const S& s : list)
        for (const char* dir : {"fwd", "bwd"}) {
            const std::string problem = std::string("alg=") + s.alg + " mode=" + s.mode + " dt=" + s.dt +
                                        " layout=" + layout_name(s.l) + " " + dims_text(s.dims);
            reg.add(std::string("softmax ") + dir, problem,
                    std::string("cudnnSoftmax") + (dir[0] == 'f' ? "Forward" : "Backward"), [s, dir](Run& r, Outs& o) {
                        const Dt t = dt_of(s.dt);
                        const size_t n = product(s.dims);
                        const std::string a = s.alg;
                        const cudnnSoftmaxAlgorithm_t alg =
                            a == "fast" ? CUDNN_SOFTMAX_FAST : a == "log" ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
                        const cudnnSoftmaxMode_t mode =
                            std::string(s.mode) == "channel" ? CUDNN_SOFTMAX_MODE_CHANNEL : CUDNN_SOFTMAX_MODE_INSTANCE;
                        const auto xv = values(n, 21, -2, 2), dyv = values(n, 22);
                        Tensor* x = r.tensor(t, s.dims, s.l, &xv);
                        Tensor* y = x ? r.tensor(t, s.dims, s.l, nullptr) : nullptr;
                        if (!y) return false;
                        const bool dbl = t.data == CUDNN_DATA_DOUBLE;
                        const Scalar one(1, dbl), zero(0, dbl);
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnSoftmaxForward, r.handle(), alg, mode, one.p(), x->desc,
                                             x->p(), zero.p(), y->desc, y->p()),
                                  "cudnnSoftmaxForward"))
                            return false;
                        const double len = mode == CUDNN_SOFTMAX_MODE_CHANNEL
                                               ? s.dims[1]
                                               : static_cast<double>(n) / s.dims[0];
                        const Tolerance tol = tolerance_for(t.data, t.compute, len + 8, 2);
                        if (dir[0] == 'f') return output(r, o, "y", y, tol);
                        Tensor* dy = r.tensor(t, s.dims, s.l, &dyv);
                        Tensor* dx = dy ? r.tensor(t, s.dims, s.l, nullptr) : nullptr;
                        if (!dx || !r.ok(BENCH_CALL(r.lib(), cudnnSoftmaxBackward, r.handle(), alg, mode, one.p(),
                                                    y->desc, y->p(), dy->desc, dy->p(), zero.p(), dx->desc, dx->p()),
                                         "cudnnSoftmaxBackward"))
                            return false;
                        return output(r, o, "dx", dx, tol);
                    });
        }
}

void add_pooling_cases(Registry& reg) {
    struct P {
        const char* mode;
        const char* dt;
        Layout l;
        std::vector<int> dims, win, pad, stride;
    };
    const std::vector<P> list = {
        {"max", "f32", Layout::nchw, {2, 3, 9, 7}, {3, 3}, {1, 1}, {2, 2}},
        {"max", "f16", Layout::nhwc, {1, 4, 7, 6}, {2, 3}, {0, 1}, {2, 1}},
        {"avg_in", "f16", Layout::nhwc, {2, 3, 6, 6}, {2, 2}, {0, 0}, {2, 2}},
        {"avg_ex", "f32", Layout::nhwc, {1, 5, 5, 7}, {3, 3}, {1, 1}, {1, 1}},
        {"avg_in", "f64", Layout::nchw, {2, 2, 5, 5}, {3, 2}, {1, 0}, {2, 2}},
        {"max_det", "f32", Layout::nchw, {1, 2, 4, 6, 5}, {2, 2, 2}, {0, 1, 0}, {2, 2, 2}},
    };
    for (const P& p : list)
        for (const char* dir : {"fwd", "bwd"}) {
            std::string problem = std::string("mode=") + p.mode + " dt=" + p.dt + " layout=" + layout_name(p.l) + " " +
                                  dims_text(p.dims) + " win=";
            for (size_t i = 0; i < p.win.size(); ++i) problem += (i ? "x" : "") + std::to_string(p.win[i]);
            problem += " pad=";
            for (size_t i = 0; i < p.pad.size(); ++i) problem += (i ? "x" : "") + std::to_string(p.pad[i]);
            problem += " stride=";
            for (size_t i = 0; i < p.stride.size(); ++i) problem += (i ? "x" : "") + std::to_string(p.stride[i]);
            reg.add(std::string("pool ") + dir, problem,
                    std::string("cudnnPooling") + (dir[0] == 'f' ? "Forward" : "Backward"), [p, dir](Run& r, Outs& o) {
                        const Dt t = dt_of(p.dt);
                        const std::string m = p.mode;
                        const cudnnPoolingMode_t mode = m == "max"       ? CUDNN_POOLING_MAX
                                                        : m == "max_det" ? CUDNN_POOLING_MAX_DETERMINISTIC
                                                        : m == "avg_in"  ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                         : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
                        cudnnPoolingDescriptor_t pd;
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnCreatePoolingDescriptor, &pd), "cudnnCreatePoolingDescriptor"))
                            return false;
                        r.on_exit([&r, pd] { BENCH_CALL(r.lib(), cudnnDestroyPoolingDescriptor, pd); });
                        const int nsp = static_cast<int>(p.win.size());
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnSetPoolingNdDescriptor, pd, mode, CUDNN_NOT_PROPAGATE_NAN,
                                             nsp, p.win.data(), p.pad.data(), p.stride.data()),
                                  "cudnnSetPoolingNdDescriptor"))
                            return false;
                        const size_t n = product(p.dims);
                        // max: no ties, so the arg-max (and the backward's route) is unique
                        const auto xv = m.rfind("max", 0) == 0 ? distinct(n, 31) : values(n, 31);
                        Tensor* x = r.tensor(t, p.dims, p.l, &xv);
                        if (!x) return false;
                        std::vector<int> yd(p.dims.size());
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnGetPoolingNdForwardOutputDim, pd, x->desc,
                                             static_cast<int>(yd.size()), yd.data()),
                                  "cudnnGetPoolingNdForwardOutputDim"))
                            return false;
                        Tensor* y = r.tensor(t, yd, p.l, nullptr);
                        if (!y) return false;
                        const bool dbl = t.data == CUDNN_DATA_DOUBLE;
                        const Scalar one(1, dbl), zero(0, dbl);
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnPoolingForward, r.handle(), pd, one.p(), x->desc, x->p(),
                                             zero.p(), y->desc, y->p()),
                                  "cudnnPoolingForward"))
                            return false;
                        double window = 1;
                        for (int w : p.win) window *= w;
                        const Tolerance tol = tolerance_for(t.data, t.compute, window, 1);
                        if (dir[0] == 'f') return output(r, o, "y", y, tol);
                        const auto dyv = values(product(yd), 32);
                        Tensor* dy = r.tensor(t, yd, p.l, &dyv);
                        Tensor* dx = dy ? r.tensor(t, p.dims, p.l, nullptr) : nullptr;
                        if (!dx || !r.ok(BENCH_CALL(r.lib(), cudnnPoolingBackward, r.handle(), pd, one.p(), y->desc,
                                                    y->p(), dy->desc, dy->p(), x->desc, x->p(), zero.p(), dx->desc,
                                                    dx->p()),
                                         "cudnnPoolingBackward"))
                            return false;
                        // Overlapping windows add several gradients into one dx.
                        return output(r, o, "dx", dx, tolerance_for(t.data, t.compute, window, window));
                    });
        }
}

bool lrn_desc(Run& r, unsigned n, double alpha, double beta, double k, cudnnLRNDescriptor_t* out) {
    if (!r.ok(BENCH_CALL(r.lib(), cudnnCreateLRNDescriptor, out), "cudnnCreateLRNDescriptor")) return false;
    auto d = *out;
    r.on_exit([&r, d] { BENCH_CALL(r.lib(), cudnnDestroyLRNDescriptor, d); });
    return r.ok(BENCH_CALL(r.lib(), cudnnSetLRNDescriptor, d, n, alpha, beta, k), "cudnnSetLRNDescriptor");
}

void add_lrn_cases(Registry& reg) {
    struct L {
        unsigned size;
        double alpha, beta, k;
        const char* dt;
        Layout l;
        std::vector<int> dims;
    };
    // alpha large enough that the normalisation is not a near-identity
    const std::vector<L> list = {{5, 0.5, 0.75, 2.0, "f32", Layout::nchw, {2, 7, 3, 5}},
                                 {3, 1.0, 0.5, 1.0, "f16", Layout::nhwc, {1, 6, 4, 3}},
                                 {4, 0.25, 0.75, 1.5, "f64", Layout::nchw, {2, 5, 2, 3}}};
    for (const L& a : list)
        for (const char* dir : {"fwd", "bwd"}) {
            const std::string problem = "size=" + std::to_string(a.size) + " alpha=" + real(a.alpha) + " beta=" +
                                        real(a.beta) + " k=" + real(a.k) + " dt=" + a.dt + " layout=" +
                                        layout_name(a.l) + " " + dims_text(a.dims);
            reg.add(std::string("lrn ") + dir, problem,
                    std::string("cudnnLRNCrossChannel") + (dir[0] == 'f' ? "Forward" : "Backward"),
                    [a, dir](Run& r, Outs& o) {
                        const Dt t = dt_of(a.dt);
                        const size_t n = product(a.dims);
                        cudnnLRNDescriptor_t ld;
                        if (!lrn_desc(r, a.size, a.alpha, a.beta, a.k, &ld)) return false;
                        const auto xv = values(n, 41, -2, 2), dyv = values(n, 42);
                        Tensor* x = r.tensor(t, a.dims, a.l, &xv);
                        Tensor* y = x ? r.tensor(t, a.dims, a.l, nullptr) : nullptr;
                        if (!y) return false;
                        const bool dbl = t.data == CUDNN_DATA_DOUBLE;
                        const Scalar one(1, dbl), zero(0, dbl);
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnLRNCrossChannelForward, r.handle(), ld,
                                             CUDNN_LRN_CROSS_CHANNEL_DIM1, one.p(), x->desc, x->p(), zero.p(), y->desc,
                                             y->p()),
                                  "cudnnLRNCrossChannelForward"))
                            return false;
                        const Tolerance tol = tolerance_for(t.data, t.compute, a.size + 16.0, 4);
                        if (dir[0] == 'f') return output(r, o, "y", y, tol);
                        Tensor* dy = r.tensor(t, a.dims, a.l, &dyv);
                        Tensor* dx = dy ? r.tensor(t, a.dims, a.l, nullptr) : nullptr;
                        if (!dx || !r.ok(BENCH_CALL(r.lib(), cudnnLRNCrossChannelBackward, r.handle(), ld,
                                                    CUDNN_LRN_CROSS_CHANNEL_DIM1, one.p(), y->desc, y->p(), dy->desc,
                                                    dy->p(), x->desc, x->p(), zero.p(), dx->desc, dx->p()),
                                         "cudnnLRNCrossChannelBackward"))
                            return false;
                        return output(r, o, "dx", dx, tol);
                    });
        }
    // Divisive normalization (precomputed means), forward and backward.
    for (const char* dir : {"fwd", "bwd"}) {
        const std::vector<int> dims = {2, 3, 5, 4};
        reg.add(std::string("divnorm ") + dir, "size=3 alpha=0.5 beta=0.75 k=1 dt=f32 layout=nchw " + dims_text(dims),
                std::string("cudnnDivisiveNormalization") + (dir[0] == 'f' ? "Forward" : "Backward"),
                [dims, dir](Run& r, Outs& o) {
                    const Dt t = dt_of("f32");
                    const size_t n = product(dims);
                    cudnnLRNDescriptor_t ld;
                    if (!lrn_desc(r, 3, 0.5, 0.75, 1.0, &ld)) return false;
                    const auto xv = values(n, 51, -2, 2), mv = values(n, 52, -0.5, 0.5), dyv = values(n, 53);
                    Tensor* x = r.tensor(t, dims, Layout::nchw, &xv);
                    Tensor* means = x ? r.tensor(t, dims, Layout::nchw, &mv) : nullptr;
                    Tensor* t1 = means ? r.tensor(t, dims, Layout::nchw, nullptr) : nullptr;
                    Tensor* t2 = t1 ? r.tensor(t, dims, Layout::nchw, nullptr) : nullptr;
                    Tensor* out = t2 ? r.tensor(t, dims, Layout::nchw, nullptr) : nullptr;
                    if (!out) return false;
                    const float one = 1, zero = 0;
                    const Tolerance tol = tolerance_for(t.data, t.compute, 9 + 16.0, 4);
                    if (dir[0] == 'f') {
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnDivisiveNormalizationForward, r.handle(), ld,
                                             CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, x->desc, x->p(), means->p(),
                                             t1->p(), t2->p(), &zero, out->desc, out->p()),
                                  "cudnnDivisiveNormalizationForward"))
                            return false;
                        return output(r, o, "y", out, tol);
                    }
                    Tensor* dy = r.tensor(t, dims, Layout::nchw, &dyv);
                    Tensor* dmeans = dy ? r.tensor(t, dims, Layout::nchw, nullptr) : nullptr;
                    if (!dmeans || !r.ok(BENCH_CALL(r.lib(), cudnnDivisiveNormalizationBackward, r.handle(), ld,
                                                    CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, x->desc, x->p(), means->p(),
                                                    dy->p(), t1->p(), t2->p(), &zero, out->desc, out->p(), dmeans->p()),
                                         "cudnnDivisiveNormalizationBackward"))
                        return false;
                    return output(r, o, "dx", out, tol) && output(r, o, "dMeans", dmeans, tol);
                });
    }
}

void add_batchnorm_cases(Registry& reg) {
    struct B {
        const char* mode;
        const char* dt;
        Layout l;
        std::vector<int> dims;
    };
    const std::vector<B> list = {{"spatial", "f32", Layout::nchw, {2, 3, 5, 7}},
                                 {"per_act", "f32", Layout::nhwc, {4, 3, 2, 3}},
                                 {"persistent", "f16", Layout::nhwc, {3, 4, 3, 5}},
                                 {"spatial", "bf16", Layout::nchw, {2, 5, 3, 3}},
                                 {"per_act", "f64", Layout::nchw, {5, 2, 3, 2}}};
    for (const B& b : list)
        for (const char* dir : {"fwd_inf", "fwd_train", "bwd"}) {
            const std::string d = dir;
            const std::string api = d == "fwd_inf"     ? "cudnnBatchNormalizationForwardInference"
                                    : d == "fwd_train" ? "cudnnBatchNormalizationForwardTraining"
                                                       : "cudnnBatchNormalizationBackward";
            reg.add("bn " + d, std::string("mode=") + b.mode + " dt=" + b.dt + " layout=" + layout_name(b.l) + " " +
                                   dims_text(b.dims) + " eps=1e-05" + (d == "fwd_train" ? " factor=0.25" : ""),
                    api, [b, d](Run& r, Outs& o) {
                        const Dt t = dt_of(b.dt), pt = param_dt(b.dt);
                        const std::string m = b.mode;
                        const cudnnBatchNormMode_t mode = m == "per_act"      ? CUDNN_BATCHNORM_PER_ACTIVATION
                                                          : m == "persistent" ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT
                                                                              : CUDNN_BATCHNORM_SPATIAL;
                        const size_t n = product(b.dims);
                        const size_t np = mode == CUDNN_BATCHNORM_PER_ACTIVATION ? n / b.dims[0] : b.dims[1];
                        const double count = static_cast<double>(n) / np;
                        const auto xv = values(n, 61, -2, 2), dyv = values(n, 62);
                        const auto sv = values(np, 63, 0.5, 2), bv = values(np, 64), mv = values(np, 65, -0.5, 0.5),
                                   vv = values(np, 66, 0.25, 2);
                        Tensor* x = r.tensor(t, b.dims, b.l, &xv);
                        Tensor* y = x ? r.tensor(t, b.dims, b.l, nullptr) : nullptr;
                        if (!y) return false;
                        cudnnTensorDescriptor_t pd;
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnCreateTensorDescriptor, &pd), "cudnnCreateTensorDescriptor"))
                            return false;
                        r.on_exit([&r, pd] { BENCH_CALL(r.lib(), cudnnDestroyTensorDescriptor, pd); });
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnDeriveBNTensorDescriptor, pd, x->desc, mode),
                                  "cudnnDeriveBNTensorDescriptor"))
                            return false;
                        Tensor* scale = r.flat(pt, np, &sv);
                        Tensor* bias = scale ? r.flat(pt, np, &bv) : nullptr;
                        Tensor* mean = bias ? r.flat(pt, np, &mv) : nullptr;
                        Tensor* var = mean ? r.flat(pt, np, &vv) : nullptr;
                        if (!var) return false;
                        const bool dbl = t.data == CUDNN_DATA_DOUBLE;
                        const Scalar one(1, dbl), zero(0, dbl);
                        const double eps = 1e-5;
                        const Tolerance data_tol = tolerance_for(t.data, t.compute, count + 16, 8);
                        const Tolerance param_tol = tolerance_for(pt.data, t.compute, count + 16, 8);
                        if (d == "fwd_inf") {
                            if (!r.ok(BENCH_CALL(r.lib(), cudnnBatchNormalizationForwardInference, r.handle(), mode,
                                                 one.p(), zero.p(), x->desc, x->p(), y->desc, y->p(), pd, scale->p(),
                                                 bias->p(), mean->p(), var->p(), eps),
                                      "cudnnBatchNormalizationForwardInference"))
                                return false;
                            return output(r, o, "y", y, data_tol);
                        }
                        Tensor* smean = r.flat(pt, np, nullptr);
                        Tensor* sinv = smean ? r.flat(pt, np, nullptr) : nullptr;
                        if (!sinv || !r.ok(BENCH_CALL(r.lib(), cudnnBatchNormalizationForwardTraining, r.handle(), mode,
                                                      one.p(), zero.p(), x->desc, x->p(), y->desc, y->p(), pd,
                                                      scale->p(), bias->p(), 0.25, mean->p(), var->p(), eps, smean->p(),
                                                      sinv->p()),
                                           "cudnnBatchNormalizationForwardTraining"))
                            return false;
                        if (d == "fwd_train")
                            return output(r, o, "y", y, data_tol) && output(r, o, "runningMean", mean, param_tol) &&
                                   output(r, o, "runningVariance", var, param_tol) &&
                                   output(r, o, "saveMean", smean, param_tol) &&
                                   output(r, o, "saveInvVariance", sinv, param_tol);
                        Tensor* dy = r.tensor(t, b.dims, b.l, &dyv);
                        Tensor* dx = dy ? r.tensor(t, b.dims, b.l, nullptr) : nullptr;
                        Tensor* dscale = dx ? r.flat(pt, np, nullptr) : nullptr;
                        Tensor* dbias = dscale ? r.flat(pt, np, nullptr) : nullptr;
                        if (!dbias || !r.ok(BENCH_CALL(r.lib(), cudnnBatchNormalizationBackward, r.handle(), mode,
                                                       one.p(), zero.p(), one.p(), zero.p(), x->desc, x->p(), dy->desc,
                                                       dy->p(), dx->desc, dx->p(), pd, scale->p(), dscale->p(),
                                                       dbias->p(), eps, smean->p(), sinv->p()),
                                            "cudnnBatchNormalizationBackward"))
                            return false;
                        const Tolerance sum_tol = tolerance_for(pt.data, t.compute, count + 16, count * 2);
                        return output(r, o, "dx", dx, data_tol) && output(r, o, "dBnScale", dscale, sum_tol) &&
                               output(r, o, "dBnBias", dbias, sum_tol);
                    });
        }
}

void add_dropout_cases(Registry& reg, bool compare_with_reference) {
    struct D {
        double p;
        const char* dt;
        Layout l;
        std::vector<int> dims;
    };
    const std::vector<D> list = {{0.5, "f32", Layout::nchw, {2, 7, 9, 5}}, {0.25, "f16", Layout::nhwc, {3, 5, 6, 7}},
                                 {0.75, "bf16", Layout::nchw, {1, 4, 7, 9}}};
    for (const D& dd : list) {
        const std::string problem = "p=" + real(dd.p) + " seed=1234 dt=" + dd.dt + " layout=" + layout_name(dd.l) +
                                    " " + dims_text(dd.dims);
        const size_t n = product(dd.dims);
        const auto xv = nonzero(n, 71), dyv = nonzero(n, 72);
        Case c;
        c.op = "dropout fwd+bwd";
        c.problem = problem;
        c.api = "cudnnDropoutForward";
        c.compare = compare_with_reference;
        c.body = [dd, xv, dyv](Run& r, Outs& o) {
            const Dt t = dt_of(dd.dt);
            size_t states_bytes = 0, reserve_bytes = 0;
            if (!r.ok(BENCH_CALL(r.lib(), cudnnDropoutGetStatesSize, r.handle(), &states_bytes),
                      "cudnnDropoutGetStatesSize"))
                return false;
            Tensor* x = r.tensor(t, dd.dims, dd.l, &xv);
            if (!x || !r.ok(BENCH_CALL(r.lib(), cudnnDropoutGetReserveSpaceSize, x->desc, &reserve_bytes),
                            "cudnnDropoutGetReserveSpaceSize"))
                return false;
            // Twice from the same seed, each with its own states: the masks must agree.
            Tensor* ys[2] = {nullptr, nullptr};
            void* reserve[2] = {nullptr, nullptr};
            cudnnDropoutDescriptor_t desc[2];
            for (int k = 0; k < 2; ++k) {
                void* states = r.bytes(states_bytes);
                reserve[k] = states ? r.bytes(reserve_bytes) : nullptr;
                ys[k] = reserve[k] ? r.tensor(t, dd.dims, dd.l, nullptr) : nullptr;
                if (!ys[k]) return false;
                if (!r.ok(BENCH_CALL(r.lib(), cudnnCreateDropoutDescriptor, &desc[k]), "cudnnCreateDropoutDescriptor"))
                    return false;
                auto dk = desc[k];
                r.on_exit([&r, dk] { BENCH_CALL(r.lib(), cudnnDestroyDropoutDescriptor, dk); });
                if (!r.ok(BENCH_CALL(r.lib(), cudnnSetDropoutDescriptor, desc[k], r.handle(), static_cast<float>(dd.p),
                                     states, states_bytes, 1234ull),
                          "cudnnSetDropoutDescriptor") ||
                    !r.ok(BENCH_CALL(r.lib(), cudnnDropoutForward, r.handle(), desc[k], x->desc, x->p(), ys[k]->desc,
                                     ys[k]->p(), reserve[k], reserve_bytes),
                          "cudnnDropoutForward"))
                    return false;
            }
            Tensor* dy = r.tensor(t, dd.dims, dd.l, &dyv);
            Tensor* dx = dy ? r.tensor(t, dd.dims, dd.l, nullptr) : nullptr;
            if (!dx || !r.ok(BENCH_CALL(r.lib(), cudnnDropoutBackward, r.handle(), desc[0], dy->desc, dy->p(),
                                        dx->desc, dx->p(), reserve[0], reserve_bytes),
                             "cudnnDropoutBackward"))
                return false;
            const Tolerance exact{0, 0};
            const Tolerance tol = tolerance_for(t.data, CUDNN_DATA_FLOAT, 1, 4);
            return output(r, o, "y", ys[0], tol) && output(r, o, "dx", dx, tol) && output(r, o, "y_again", ys[1], exact);
        };
        // Independent of any reference: every y is 0 or x / (1 - p); the second forward
        // from the same seed gives the same y; dx is dy / (1 - p) exactly where y kept x;
        // the fraction dropped is p within 6 standard deviations.
        c.property = [dd, xv, dyv](const Outs& o) -> std::string {
            const std::vector<double>& y = o[0].v;
            const std::vector<double>& dx = o[1].v;
            const std::vector<double>& y2 = o[2].v;
            const double s = 1.0 / (1.0 - static_cast<float>(dd.p));
            const Tolerance tol = o[0].tol;
            size_t dropped = 0;
            char buf[200];
            for (size_t i = 0; i < y.size(); ++i) {
                if (!(y[i] == y2[i])) {
                    std::snprintf(buf, sizeof buf, "the same seed gave another mask: y[%zu] = %g, then %g", i, y[i], y2[i]);
                    return buf;
                }
                const bool kept = y[i] != 0.0;
                dropped += !kept;
                const double want_y = kept ? xv[i] * s : 0.0, want_dx = kept ? dyv[i] * s : 0.0;
                if (std::fabs(y[i] - want_y) > tol.abs + tol.rel * std::fabs(want_y)) {
                    std::snprintf(buf, sizeof buf, "y[%zu] = %g is neither 0 nor x / (1 - p) = %g", i, y[i], xv[i] * s);
                    return buf;
                }
                if (std::fabs(dx[i] - want_dx) > tol.abs + tol.rel * std::fabs(want_dx)) {
                    std::snprintf(buf, sizeof buf, "dx[%zu] = %g, but the forward %s it (expected %g)", i, dx[i],
                                  kept ? "kept" : "dropped", want_dx);
                    return buf;
                }
            }
            const double n = static_cast<double>(y.size()), mean = n * dd.p, sd = std::sqrt(n * dd.p * (1 - dd.p));
            if (std::fabs(static_cast<double>(dropped) - mean) > 6 * sd) {
                std::snprintf(buf, sizeof buf, "%zu of %.0f dropped, expected about %.0f (p = %g)", dropped, n, mean, dd.p);
                return buf;
            }
            return "";
        };
        reg.cases.push_back(c);
    }
}

void add_spatial_tf_cases(Registry& reg) {
    for (const char* dt : {"f32", "f64"})
        for (const char* which : {"grid fwd", "sampler fwd", "grid bwd", "sampler bwd"}) {
            const std::vector<int> dims = {2, 3, 5, 6};
            const std::string w = which;
            const std::string api = w == "grid fwd"      ? "cudnnSpatialTfGridGeneratorForward"
                                    : w == "sampler fwd" ? "cudnnSpatialTfSamplerForward"
                                    : w == "grid bwd"    ? "cudnnSpatialTfGridGeneratorBackward"
                                                         : "cudnnSpatialTfSamplerBackward";
            reg.add("spatial_tf " + w, std::string("sampler=bilinear dt=") + dt + " layout=nchw " + dims_text(dims), api,
                    [dt = std::string(dt), w, dims](Run& r, Outs& o) {
                        const Dt t = dt_of(dt);
                        const bool dbl = t.data == CUDNN_DATA_DOUBLE;
                        cudnnSpatialTransformerDescriptor_t st;
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnCreateSpatialTransformerDescriptor, &st),
                                  "cudnnCreateSpatialTransformerDescriptor"))
                            return false;
                        r.on_exit([&r, st] { BENCH_CALL(r.lib(), cudnnDestroySpatialTransformerDescriptor, st); });
                        if (!r.ok(BENCH_CALL(r.lib(), cudnnSetSpatialTransformerNdDescriptor, st, CUDNN_SAMPLER_BILINEAR,
                                             t.data, 4, dims.data()),
                                  "cudnnSetSpatialTransformerNdDescriptor"))
                            return false;
                        const size_t ng = static_cast<size_t>(dims[0]) * dims[2] * dims[3] * 2;
                        const Tolerance tol = tolerance_for(t.data, t.compute, 16, 4);
                        if (w == "grid fwd" || w == "grid bwd") {
                            // theta: a rotation-like map plus a shift, per image
                            const std::vector<double> th = {0.75, -0.25, 0.125, 0.25, 0.75, -0.125,
                                                            1.0,  0.5,   0.0,   -0.5, 1.0,  0.25};
                            if (w == "grid fwd") {
                                Tensor* theta = r.flat(t, th.size(), &th);
                                Tensor* grid = theta ? r.flat(t, ng, nullptr) : nullptr;
                                if (!grid || !r.ok(BENCH_CALL(r.lib(), cudnnSpatialTfGridGeneratorForward, r.handle(), st,
                                                              theta->p(), grid->p()),
                                                   "cudnnSpatialTfGridGeneratorForward"))
                                    return false;
                                return output(r, o, "grid", grid, tol);
                            }
                            const auto dg = values(ng, 81);
                            Tensor* dgrid = r.flat(t, ng, &dg);
                            Tensor* dtheta = dgrid ? r.flat(t, 12, nullptr) : nullptr;
                            if (!dtheta || !r.ok(BENCH_CALL(r.lib(), cudnnSpatialTfGridGeneratorBackward, r.handle(),
                                                            st, dgrid->p(), dtheta->p()),
                                                 "cudnnSpatialTfGridGeneratorBackward"))
                                return false;
                            const double terms = static_cast<double>(dims[2]) * dims[3];
                            return output(r, o, "dtheta", dtheta, tolerance_for(t.data, t.compute, terms, terms));
                        }
                        // A grid inside and a little outside [-1, 1] (bilinear weights, borders).
                        const auto gv = values(ng, 82, -1.125, 1.125, 1.0 / 16);
                        const auto xv = values(product(dims), 83);
                        Tensor* grid = r.flat(t, ng, &gv);
                        Tensor* x = grid ? r.tensor(t, dims, Layout::nchw, &xv) : nullptr;
                        Tensor* y = x ? r.tensor(t, dims, Layout::nchw, nullptr) : nullptr;
                        if (!y) return false;
                        const Scalar one(1, dbl), zero(0, dbl);
                        if (w == "sampler fwd") {
                            if (!r.ok(BENCH_CALL(r.lib(), cudnnSpatialTfSamplerForward, r.handle(), st, one.p(), x->desc,
                                                 x->p(), grid->p(), zero.p(), y->desc, y->p()),
                                      "cudnnSpatialTfSamplerForward"))
                                return false;
                            return output(r, o, "y", y, tol);
                        }
                        const auto dyv = values(product(dims), 84);
                        Tensor* dy = r.tensor(t, dims, Layout::nchw, &dyv);
                        Tensor* dx = dy ? r.tensor(t, dims, Layout::nchw, nullptr) : nullptr;
                        Tensor* dgrid = dx ? r.flat(t, ng, nullptr) : nullptr;
                        if (!dgrid || !r.ok(BENCH_CALL(r.lib(), cudnnSpatialTfSamplerBackward, r.handle(), st, one.p(),
                                                       x->desc, x->p(), zero.p(), dx->desc, dx->p(), one.p(), dy->desc,
                                                       dy->p(), grid->p(), zero.p(), dgrid->p()),
                                            "cudnnSpatialTfSamplerBackward"))
                            return false;
                        const double terms = 4.0 * dims[1] * 4;  // scattered bilinear contributions
                        return output(r, o, "dx", dx, tolerance_for(t.data, t.compute, terms, terms)) &&
                               output(r, o, "dgrid", dgrid, tolerance_for(t.data, t.compute, terms, terms));
                    });
        }
}

void add_tensor_op_cases(Registry& reg) {
    const std::vector<int> d4 = {2, 3, 5, 7};
    // cudnnAddTensor: C = alpha * A + beta * C
    struct Add {
        const char* dt;
        Layout l;
        std::vector<int> a;
        double alpha, beta;
    };
    for (const Add& a : std::vector<Add>{{"f32", Layout::nchw, {1, 3, 1, 1}, 1, 1},
                                         {"f16", Layout::nhwc, {2, 3, 5, 7}, 0.5, 0.25},
                                         {"f64", Layout::nhwc, {1, 3, 5, 7}, 2, 0},
                                         {"bf16", Layout::padded, {1, 3, 1, 1}, -1, 1}}) {
        reg.add("add", std::string("dt=") + a.dt + " layout=" + layout_name(a.l) + " " + dims_text(d4) + " A=" +
                           std::to_string(a.a[0]) + "x" + std::to_string(a.a[1]) + "x" + std::to_string(a.a[2]) + "x" +
                           std::to_string(a.a[3]) + " alpha=" + real(a.alpha) + " beta=" + real(a.beta),
                "cudnnAddTensor", [a, d4](Run& r, Outs& o) {
                    const Dt t = dt_of(a.dt);
                    const auto av = values(product(a.a), 91), cv = values(product(d4), 92);
                    Tensor* A = r.tensor(t, a.a, a.l == Layout::padded ? Layout::nchw : a.l, &av);
                    Tensor* C = A ? r.tensor(t, d4, a.l, a.beta != 0 ? &cv : nullptr) : nullptr;
                    if (!C) return false;
                    const bool dbl = t.data == CUDNN_DATA_DOUBLE;
                    const Scalar alpha(a.alpha, dbl), beta(a.beta, dbl);
                    if (!r.ok(BENCH_CALL(r.lib(), cudnnAddTensor, r.handle(), alpha.p(), A->desc, A->p(), beta.p(),
                                         C->desc, C->p()),
                              "cudnnAddTensor"))
                        return false;
                    return output(r, o, "C", C, tolerance_for(t.data, t.compute, 2, 4));
                });
    }
    // cudnnOpTensor: C = op(alpha1 * A, alpha2 * B) + beta * C
    struct Op {
        const char* op;
        const char* dt;
        Layout l;
        std::vector<int> b;
        double beta;
    };
    for (const Op& p : std::vector<Op>{{"add", "f32", Layout::nchw, {1, 3, 1, 1}, 0.5},
                                       {"mul", "f32", Layout::nhwc, {2, 3, 5, 7}, 0},
                                       {"min", "f16", Layout::nhwc, {1, 3, 5, 1}, 0},
                                       {"max", "bf16", Layout::nchw, {2, 3, 5, 7}, 1},
                                       {"sqrt", "f64", Layout::nchw, {2, 3, 5, 7}, 0},
                                       {"not", "f32", Layout::padded, {2, 3, 5, 7}, 0},
                                       {"add", "f64", Layout::nhwc, {2, 1, 1, 7}, 0.25}}) {
        reg.add("optensor", std::string("op=") + p.op + " dt=" + p.dt + " layout=" + layout_name(p.l) + " " +
                                dims_text(d4) + " B=" + std::to_string(p.b[0]) + "x" + std::to_string(p.b[1]) + "x" +
                                std::to_string(p.b[2]) + "x" + std::to_string(p.b[3]) + " alpha1=1.5 alpha2=-0.5 beta=" +
                                real(p.beta),
                "cudnnOpTensor", [p, d4](Run& r, Outs& o) {
                    const Dt t = dt_of(p.dt);
                    const std::string w = p.op;
                    const cudnnOpTensorOp_t op = w == "mul"    ? CUDNN_OP_TENSOR_MUL
                                                 : w == "min"  ? CUDNN_OP_TENSOR_MIN
                                                 : w == "max"  ? CUDNN_OP_TENSOR_MAX
                                                 : w == "sqrt" ? CUDNN_OP_TENSOR_SQRT
                                                 : w == "not"  ? CUDNN_OP_TENSOR_NOT
                                                               : CUDNN_OP_TENSOR_ADD;
                    // sqrt: A >= 0 (alpha1 > 0), so the results are real
                    const auto av = w == "sqrt" ? values(product(d4), 93, 0, 2) : values(product(d4), 93);
                    const auto bv = values(product(p.b), 94), cv = values(product(d4), 95);
                    Tensor* A = r.tensor(t, d4, p.l, &av);
                    Tensor* B = A ? r.tensor(t, p.b, p.l == Layout::padded ? Layout::nchw : p.l, &bv) : nullptr;
                    Tensor* C = B ? r.tensor(t, d4, p.l, p.beta != 0 ? &cv : nullptr) : nullptr;
                    if (!C) return false;
                    cudnnOpTensorDescriptor_t od;
                    if (!r.ok(BENCH_CALL(r.lib(), cudnnCreateOpTensorDescriptor, &od), "cudnnCreateOpTensorDescriptor"))
                        return false;
                    r.on_exit([&r, od] { BENCH_CALL(r.lib(), cudnnDestroyOpTensorDescriptor, od); });
                    const bool dbl = t.data == CUDNN_DATA_DOUBLE;
                    if (!r.ok(BENCH_CALL(r.lib(), cudnnSetOpTensorDescriptor, od, op,
                                         dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN),
                              "cudnnSetOpTensorDescriptor"))
                        return false;
                    const Scalar a1(1.5, dbl), a2(-0.5, dbl), beta(p.beta, dbl);
                    if (!r.ok(BENCH_CALL(r.lib(), cudnnOpTensor, r.handle(), od, a1.p(), A->desc, A->p(), a2.p(),
                                         B->desc, B->p(), beta.p(), C->desc, C->p()),
                              "cudnnOpTensor"))
                        return false;
                    return output(r, o, "C", C, tolerance_for(t.data, t.compute, 4, 4));
                });
    }
    // cudnnTransformTensor: layout and type conversion with scaling
    struct Tr {
        const char* xdt;
        Layout xl;
        const char* ydt;
        Layout yl;
        double alpha, beta;
    };
    for (const Tr& tr : std::vector<Tr>{{"f32", Layout::nchw, "f32", Layout::nhwc, 1, 0},
                                        {"f16", Layout::nhwc, "f32", Layout::nchw, 2, 0},
                                        {"f32", Layout::padded, "bf16", Layout::nhwc, 0.5, 0.5},
                                        {"f64", Layout::nhwc, "f64", Layout::padded, -1, 0}}) {
        reg.add("transform", std::string("dt=") + tr.xdt + " layout=" + layout_name(tr.xl) + " ydt=" + tr.ydt + " to=" +
                                 layout_name(tr.yl) + " " + dims_text(d4) + " alpha=" + real(tr.alpha) + " beta=" +
                                 real(tr.beta),
                "cudnnTransformTensor", [tr, d4](Run& r, Outs& o) {
                    const Dt xt = dt_of(tr.xdt), yt = dt_of(tr.ydt);
                    const auto xv = values(product(d4), 101), yv = values(product(d4), 102);
                    Tensor* x = r.tensor(xt, d4, tr.xl, &xv);
                    Tensor* y = x ? r.tensor(yt, d4, tr.yl, tr.beta != 0 ? &yv : nullptr) : nullptr;
                    if (!y) return false;
                    const bool dbl = yt.data == CUDNN_DATA_DOUBLE;
                    const Scalar alpha(tr.alpha, dbl), beta(tr.beta, dbl);
                    if (!r.ok(BENCH_CALL(r.lib(), cudnnTransformTensor, r.handle(), alpha.p(), x->desc, x->p(), beta.p(),
                                         y->desc, y->p()),
                              "cudnnTransformTensor"))
                        return false;
                    return output(r, o, "y", y, tolerance_for(yt.data, yt.compute, 2, 2));
                });
    }
    // cudnnReduceTensor
    struct Red {
        const char* op;
        const char* dt;
        Layout l;
        std::vector<int> a, c;
        bool indices;
    };
    for (const Red& rd : std::vector<Red>{{"add", "f32", Layout::nchw, {2, 3, 5, 7}, {2, 3, 1, 1}, false},
                                          {"max", "f32", Layout::nhwc, {2, 5, 3, 7}, {2, 1, 3, 7}, true},
                                          {"amax", "f16", Layout::nchw, {3, 4, 5, 2}, {1, 4, 1, 2}, true},
                                          {"min", "f32", Layout::nchw, {2, 3, 4, 5}, {1, 1, 1, 1}, true},
                                          {"avg", "f64", Layout::nhwc, {4, 3, 2, 5}, {1, 3, 2, 5}, false},
                                          {"norm1", "f32", Layout::nhwc, {2, 6, 3, 3}, {2, 1, 1, 1}, false},
                                          {"norm2", "bf16", Layout::nchw, {2, 3, 4, 5}, {1, 3, 1, 5}, false},
                                          {"mul", "f32", Layout::nchw, {2, 3, 2, 3}, {2, 3, 1, 1}, false},
                                          {"mul_nz", "f64", Layout::nchw, {2, 3, 2, 3}, {1, 3, 2, 1}, false}}) {
        std::string problem = std::string("op=") + rd.op + " dt=" + rd.dt + " layout=" + layout_name(rd.l) + " " +
                              dims_text(rd.a) + " C=";
        for (size_t i = 0; i < rd.c.size(); ++i) problem += (i ? "x" : "") + std::to_string(rd.c[i]);
        if (rd.indices) problem += " indices=1";
        reg.add("reduce", problem, "cudnnReduceTensor", [rd](Run& r, Outs& o) {
            const Dt t = dt_of(rd.dt);
            const std::string w = rd.op;
            const cudnnReduceTensorOp_t op = w == "mul"      ? CUDNN_REDUCE_TENSOR_MUL
                                             : w == "min"    ? CUDNN_REDUCE_TENSOR_MIN
                                             : w == "max"    ? CUDNN_REDUCE_TENSOR_MAX
                                             : w == "amax"   ? CUDNN_REDUCE_TENSOR_AMAX
                                             : w == "avg"    ? CUDNN_REDUCE_TENSOR_AVG
                                             : w == "norm1"  ? CUDNN_REDUCE_TENSOR_NORM1
                                             : w == "norm2"  ? CUDNN_REDUCE_TENSOR_NORM2
                                             : w == "mul_nz" ? CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS
                                                             : CUDNN_REDUCE_TENSOR_ADD;
            const size_t n = product(rd.a);
            // products: values near 1 keep them in range; arg-max/min: no ties
            const auto av = rd.indices ? distinct(n, 111)
                            : (w == "mul" || w == "mul_nz") ? values(n, 111, 0.5, 1.5)
                                                            : values(n, 111);
            Tensor* A = r.tensor(t, rd.a, rd.l, &av);
            Tensor* C = A ? r.tensor(t, rd.c, rd.l, nullptr) : nullptr;
            if (!C) return false;
            cudnnReduceTensorDescriptor_t dsc;
            if (!r.ok(BENCH_CALL(r.lib(), cudnnCreateReduceTensorDescriptor, &dsc), "cudnnCreateReduceTensorDescriptor"))
                return false;
            r.on_exit([&r, dsc] { BENCH_CALL(r.lib(), cudnnDestroyReduceTensorDescriptor, dsc); });
            const bool dbl = t.data == CUDNN_DATA_DOUBLE;
            if (!r.ok(BENCH_CALL(r.lib(), cudnnSetReduceTensorDescriptor, dsc, op, dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
                                 CUDNN_NOT_PROPAGATE_NAN,
                                 rd.indices ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES : CUDNN_REDUCE_TENSOR_NO_INDICES,
                                 CUDNN_32BIT_INDICES),
                      "cudnnSetReduceTensorDescriptor"))
                return false;
            size_t ws = 0, is = 0;
            if (!r.ok(BENCH_CALL(r.lib(), cudnnGetReductionWorkspaceSize, r.handle(), dsc, A->desc, C->desc, &ws),
                      "cudnnGetReductionWorkspaceSize") ||
                !r.ok(BENCH_CALL(r.lib(), cudnnGetReductionIndicesSize, r.handle(), dsc, A->desc, C->desc, &is),
                      "cudnnGetReductionIndicesSize"))
                return false;
            void* wsp = r.bytes(ws);
            void* ind = wsp ? r.bytes(is) : nullptr;
            if (!ind) return false;
            const Scalar one(1, dbl), zero(0, dbl);
            if (!r.ok(BENCH_CALL(r.lib(), cudnnReduceTensor, r.handle(), dsc, ind, is, wsp, ws, one.p(), A->desc, A->p(),
                                 zero.p(), C->desc, C->p()),
                      "cudnnReduceTensor"))
                return false;
            const double len = static_cast<double>(n) / product(rd.c);
            if (!output(r, o, "C", C, tolerance_for(t.data, t.compute, len, w == "mul" || w == "mul_nz" ? 4 : len)))
                return false;
            if (!rd.indices) return true;
            const size_t nc = product(rd.c);
            const auto raw = r.download_bytes(ind, nc * 4);
            if (r.status != CUDNN_STATUS_SUCCESS) return false;
            std::vector<double> idx(nc);
            for (size_t i = 0; i < nc; ++i) {
                uint32_t v;
                std::memcpy(&v, &raw[i * 4], 4);
                idx[i] = v;
            }
            o.push_back({"indices", idx, Tolerance{0, 0}});
            return true;
        });
    }
    // cudnnSetTensor, cudnnScaleTensor
    for (auto p : {std::make_pair(std::string("f32"), Layout::padded), std::make_pair(std::string("f16"), Layout::nhwc),
                   std::make_pair(std::string("f64"), Layout::nchw)}) {
        const std::string dt = p.first;
        const Layout l = p.second;
        reg.add("set", "value=0.75 dt=" + dt + " layout=" + layout_name(l) + " " + dims_text(d4), "cudnnSetTensor",
                [dt, l, d4](Run& r, Outs& o) {
                    const Dt t = dt_of(dt);
                    Tensor* y = r.tensor(t, d4, l, nullptr);
                    if (!y) return false;
                    const auto v = odnn_bench::from_double({0.75}, t);
                    if (!r.ok(BENCH_CALL(r.lib(), cudnnSetTensor, r.handle(), y->desc, y->p(), v.data()), "cudnnSetTensor"))
                        return false;
                    return output(r, o, "y", y, Tolerance{0, 0});
                });
        reg.add("scale", "alpha=-1.5 dt=" + dt + " layout=" + layout_name(l) + " " + dims_text(d4), "cudnnScaleTensor",
                [dt, l, d4](Run& r, Outs& o) {
                    const Dt t = dt_of(dt);
                    const auto yv = values(product(d4), 121);
                    Tensor* y = r.tensor(t, d4, l, &yv);
                    if (!y) return false;
                    const Scalar alpha(-1.5, t.data == CUDNN_DATA_DOUBLE);
                    if (!r.ok(BENCH_CALL(r.lib(), cudnnScaleTensor, r.handle(), y->desc, y->p(), alpha.p()),
                              "cudnnScaleTensor"))
                        return false;
                    return output(r, o, "y", y, tolerance_for(t.data, t.compute, 1, 2));
                });
    }
}

// ---------------------------------------------------------------- running

struct Result {
    std::string op, problem, verdict, detail, impl;
    double max_abs = -1, max_rel = -1, ratio = -1;
};

std::string json_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            o += ' ';
            continue;
        }
        o += c;
    }
    return o;
}

std::string status_name(CudnnLib& lib, cudnnStatus_t s) {
    auto f = reinterpret_cast<decltype(&::cudnnGetErrorString)>(lib.sym("cudnnGetErrorString"));
    return f ? f(s) : std::to_string(static_cast<int>(s));
}

bool not_supported(cudnnStatus_t s) { return s >= 3000 && s < 4000; }

// Sets an environment variable for the life of the object (the library reads
// ODNN_BACKEND and the log settings when its first handle is created).
class EnvOverride {
public:
    void set(const char* name, const char* value) {
        const char* old = std::getenv(name);
        saved_.push_back({name, old ? std::string(old) : std::string(), old != nullptr});
        if (value) setenv(name, value, 1);
        else unsetenv(name);
    }
    ~EnvOverride() {
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
            if (it->had) setenv(it->name.c_str(), it->value.c_str(), 1);
            else unsetenv(it->name.c_str());
        }
    }

private:
    struct Saved {
        std::string name, value;
        bool had;
    };
    std::vector<Saved> saved_;
};

std::string own_library_path() {
    Dl_info self;
    if (dladdr(reinterpret_cast<void*>(&cudnnGetVersion), &self) && self.dli_fname) return self.dli_fname;
    return "libcudnn.so.9";
}

std::string dir_of(const std::string& p) {
    const size_t s = p.rfind('/');
    return s == std::string::npos ? "." : p.substr(0, s);
}

}  // namespace

int cmd_selftest(const Args& args) {
    std::string backend, lib_path, ref_path;
    std::vector<std::string> ops;
    bool json = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const char* what) -> const std::string* {
            if (i + 1 >= args.size()) {
                std::fprintf(stderr, "odnn selftest: %s needs a value\n", what);
                return nullptr;
            }
            return &args[++i];
        };
        const std::string* v = nullptr;
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--backend") {
            if (!(v = value("--backend"))) return 2;
            if (*v != "cpu" && *v != "cuda") {
                std::fprintf(stderr, "odnn selftest: --backend %s: expected cpu or cuda\n", v->c_str());
                return 2;
            }
            backend = *v;
        } else if (a == "--lib") {
            if (!(v = value("--lib"))) return 2;
            lib_path = *v;
        } else if (a == "--ref") {
            if (!(v = value("--ref"))) return 2;
            ref_path = *v;
        } else if (a == "--op") {
            if (!(v = value("--op"))) return 2;
            std::stringstream in(*v);
            for (std::string t; std::getline(in, t, ',');)
                if (!t.empty()) ops.push_back(t);
            if (ops.empty()) {
                std::fprintf(stderr, "odnn selftest: --op needs at least one operation\n");
                return 2;
            }
        } else {
            std::fprintf(stderr, "odnn selftest: unknown argument '%s'\n%s", a.c_str(), kUsage);
            return 2;
        }
    }
    const std::string own = own_library_path();
    if (lib_path.empty()) lib_path = own;
    if (ref_path.empty()) ref_path = dir_of(own) + "/odnn/libodnn-selftest-ref.so";

    // The library under test, on the backend asked for.
    std::string err;
    auto test_lib = CudnnLib::open(lib_path, &err);
    if (!test_lib) {
        std::fprintf(stderr, "odnn selftest: %s\n", err.c_str());
        return 1;
    }
    {
        EnvOverride env;
        if (!backend.empty()) env.set("ODNN_BACKEND", backend.c_str());
        if (!test_lib->init(&err)) {
            std::fprintf(stderr, "odnn selftest: %s\n", err.c_str());
            return 1;
        }
    }
    std::string test_backend = "gpu";
    if (test_lib->is_odnn()) {
        auto f = reinterpret_cast<const char* (*)(cudnnHandle_t)>(test_lib->sym("odnnGetHandleBackend"));
        if (f && f(test_lib->handle())) test_backend = f(test_lib->handle());
    }
    if (!backend.empty() && test_lib->is_odnn() && test_backend != backend) {
        std::fprintf(stderr, "odnn selftest: asked for the %s backend, the library's handle runs on %s\n",
                     backend.c_str(), test_backend.c_str());
        return 1;
    }
    if (test_lib->on_gpu()) {
        std::string why;
        if (!odnn_bench::Cuda::get(&why)) {
            std::fprintf(stderr, "odnn selftest: the library runs on the GPU, but selftest cannot reach it: %s\n",
                         why.c_str());
            return 1;
        }
    }
    // What the library says it implements, per backend (odnn only).
    std::map<std::string, std::pair<int, int>> coverage;  // name -> (cpu, cuda)
    if (test_lib->is_odnn()) {
        auto count = reinterpret_cast<int (*)()>(test_lib->sym("odnnGetApiCount"));
        auto entry = reinterpret_cast<cudnnStatus_t (*)(int, odnnApiEntry*)>(test_lib->sym("odnnGetApiEntry"));
        if (count && entry)
            for (int i = 0, n = count(); i < n; ++i) {
                odnnApiEntry e;
                if (entry(i, &e) == CUDNN_STATUS_SUCCESS && e.name) coverage[e.name] = {e.cpu, e.cuda};
            }
    }

    // The reference: a CPU handle, with the log silent (its calls are not the user's).
    auto ref_lib = CudnnLib::open(ref_path, &err);
    if (!ref_lib) {
        std::fprintf(stderr, "odnn selftest: the reference module: %s (pass its path with --ref)\n", err.c_str());
        return 1;
    }
    auto ref_ready = reinterpret_cast<int (*)()>(ref_lib->sym("odnnSelftestRefReady"));
    auto ref_impl = reinterpret_cast<const char* (*)()>(ref_lib->sym("odnnSelftestRefLastImpl"));
    if (!ref_ready || !ref_impl || !ref_ready()) {
        std::fprintf(stderr, "odnn selftest: %s is not odnn's selftest reference module\n", ref_path.c_str());
        return 1;
    }
    {
        EnvOverride env;
        env.set("ODNN_BACKEND", "cpu");
        env.set("CUDNN_LOGLEVEL_DBG", "0");
        env.set("CUDNN_LOGERR_DBG", nullptr);
        env.set("CUDNN_LOGWARN_DBG", nullptr);
        env.set("CUDNN_LOGINFO_DBG", nullptr);
        if (!ref_lib->init(&err)) {
            std::fprintf(stderr, "odnn selftest: the reference module: %s\n", err.c_str());
            return 1;
        }
    }

    const Side test{test_lib.get(), test_lib->on_gpu()};
    const Side ref{ref_lib.get(), false};
    Registry reg;
    // Convolution cases ask the library for its algorithms: only when conv is wanted.
    bool want_conv = ops.empty();
    for (const std::string& o : ops) want_conv = want_conv || o.compare(0, 4, "conv") == 0 || std::string("conv").compare(0, o.size(), o) == 0;
    if (want_conv) add_conv_cases(reg, test);
    add_tensor_op_cases(reg);
    add_activation_cases(reg);
    add_softmax_cases(reg);
    add_pooling_cases(reg);
    add_lrn_cases(reg);
    add_batchnorm_cases(reg);
    // odnn's dropout mask depends only on (seed, offset, element), the same on every
    // backend: its outputs must match the reference's. Another library draws its own.
    add_dropout_cases(reg, test_lib->is_odnn());
    add_spatial_tf_cases(reg);

    std::vector<Result> results;
    std::set<std::string> matched_ops;
    // The reference module knows which implementation this build's dispatch picks; that
    // is the library under test's only when it is this build's libcudnn itself.
    char* own_real = realpath(own.c_str(), nullptr);
    char* lib_real = realpath(lib_path.c_str(), nullptr);
    const bool same_build = own_real && lib_real && std::strcmp(own_real, lib_real) == 0;
    std::free(own_real);
    std::free(lib_real);
    const bool cpu_odnn = same_build && test_backend == "cpu";
    for (const Case& c : reg.cases) {
        if (!ops.empty()) {
            bool want = false;
            for (const std::string& o : ops)
                if (c.op.compare(0, o.size(), o) == 0) {
                    want = true;
                    matched_ops.insert(o);
                }
            if (!want) continue;
        }
        Result res;
        res.op = c.op;
        res.problem = c.problem;
        Outs got, want;
        bool ok_test;
        {
            Run t(test);
            ok_test = c.body(t, got);
            if (ok_test && t.outside_write) {
                res.verdict = "FAIL";
                res.detail = "wrote outside the described elements of a padded tensor";
                results.push_back(res);
                continue;
            }
            if (!ok_test) {
                const auto cov = coverage.find(c.api);
                const bool listed = cov != coverage.end();
                const bool implemented = listed && (test_backend == "cpu" ? cov->second.first : cov->second.second);
                const std::string what = t.function + ": " + status_name(*test_lib, t.status) +
                                         (t.message.empty() ? "" : " (" + t.message + ")");
                if (!t.harness && not_supported(t.status) && (listed ? !implemented : !test_lib->is_odnn())) {
                    res.verdict = "skip";
                    res.detail = listed ? "not supported on this backend: " + c.api + " is not implemented for " +
                                              test_backend
                                        : "not supported by this library: " + what;
                } else {
                    res.verdict = "FAIL";
                    res.detail = (not_supported(t.status) && implemented
                                      ? "answers " + status_name(*test_lib, t.status) + " though the library lists " +
                                            c.api + " as implemented on " + test_backend + ": "
                                      : std::string()) +
                                 what;
                }
                results.push_back(res);
                continue;
            }
        }
        std::string why;
        if (c.property) why = c.property(got);
        if (c.compare && why.empty()) {
            ref_impl();  // clear
            Run r(ref);
            if (!c.body(r, want)) {
                why = "the reference failed: " + r.function + ": " + status_name(*ref_lib, r.status) +
                      (r.message.empty() ? "" : " (" + r.message + ")");
            } else {
                const std::string impl = ref_impl();
                if (cpu_odnn) res.impl = impl;
                else if (same_build) res.impl = test_backend;
                if (want.size() != got.size()) why = "the reference gave another number of outputs";
                for (size_t i = 0; i < got.size() && why.empty(); ++i) {
                    const Comparison cmp = compare_values(got[i].v, want[i].v, got[i].tol);
                    if (cmp.worst_ratio > res.ratio) {
                        res.ratio = cmp.worst_ratio;
                    }
                    res.max_abs = std::max(res.max_abs, cmp.max_abs_err);
                    res.max_rel = std::max(res.max_rel, cmp.max_rel_err);
                    if (!cmp.pass) why = got[i].name + ": " + cmp.why;
                }
            }
        } else if (!c.compare && why.empty()) {
            res.impl = "(not compared: properties only)";
        }
        res.verdict = why.empty() ? "pass" : "FAIL";
        res.detail = why;
        results.push_back(res);
    }
    for (const std::string& o : ops)
        if (!matched_ops.count(o)) {
            std::fprintf(stderr, "odnn selftest: --op %s matches no operation\n", o.c_str());
            return 2;
        }

    int passed = 0, failed = 0, skipped = 0;
    for (const Result& r : results) (r.verdict == "pass" ? passed : r.verdict == "skip" ? skipped : failed)++;
    if (json) {
        std::printf("{\n  \"schema\": \"odnn-selftest/1\",\n  \"library\": \"%s\",\n  \"label\": \"%s\",\n"
                    "  \"backend\": \"%s\",\n  \"reference\": \"%s\",\n  \"passed\": %d,\n  \"failed\": %d,\n"
                    "  \"skipped\": %d,\n  \"exit_code\": %d,\n  \"results\": [\n",
                    json_escape(lib_path).c_str(), json_escape(test_lib->label()).c_str(), test_backend.c_str(),
                    json_escape(ref_path).c_str(), passed, failed, skipped, failed ? 1 : 0);
        for (size_t i = 0; i < results.size(); ++i) {
            const Result& r = results[i];
            std::printf("    {\"op\": \"%s\", \"problem\": \"%s\", \"verdict\": \"%s\", \"max_abs_err\": %.6g, "
                        "\"max_rel_err\": %.6g, \"tolerance_ratio\": %.6g, \"implementation\": \"%s\", "
                        "\"detail\": \"%s\"}%s\n",
                        json_escape(r.op).c_str(), json_escape(r.problem).c_str(), r.verdict.c_str(), r.max_abs,
                        r.max_rel, std::isfinite(r.ratio) ? r.ratio : 1e300, json_escape(r.impl).c_str(),
                        json_escape(r.detail).c_str(), i + 1 < results.size() ? "," : "");
        }
        std::printf("  ]\n}\n");
    } else {
        std::printf("odnn selftest: %s (%s, backend %s)\n  reference: %s (src/cpu/ref on the CPU)\n\n",
                    lib_path.c_str(), test_lib->label().c_str(), test_backend.c_str(), ref_path.c_str());
        std::printf("%-5s %-18s %-84s %9s %6s  %s\n", "", "op", "problem", "max err", "/tol", "implementation / detail");
        for (const Result& r : results) {
            char err_s[32] = "-", ratio_s[32] = "-";
            if (r.max_abs >= 0) std::snprintf(err_s, sizeof err_s, "%.2g", r.max_rel);
            if (r.ratio >= 0) std::snprintf(ratio_s, sizeof ratio_s, "%.2f", r.ratio);
            std::string tail = r.impl;
            if (cpu_odnn && r.impl.rfind("ref_", 0) == 0) tail += " (is the reference: checks the API path)";
            if (!r.detail.empty()) tail = (tail.empty() ? "" : tail + ": ") + r.detail;
            std::printf("%-5s %-18s %-84s %9s %6s  %s\n", r.verdict.c_str(), r.op.c_str(), r.problem.c_str(), err_s,
                        ratio_s, tail.c_str());
        }
        std::printf("\n%d passed, %d failed, %d skipped (not supported on this backend)\n", passed, failed, skipped);
        std::printf("max err: max |result - reference| / max(|reference|, 1); /tol: the worst element's error over "
                    "its tolerance (<= 1 passes)\n");
        if (failed) std::printf("verdict: FAIL\n");
        else std::printf("verdict: pass\n");
    }
    return failed ? 1 : 0;
}

}  // namespace odnn_tool
