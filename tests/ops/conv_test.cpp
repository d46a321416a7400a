// Numerics of the convolution family on the CPU backend (ops_conv_test) and on the CUDA
// backend (gpu_ops_conv_test, built with ODNN_CONV_TEST_CUDA: the buffers below are
// mirrored to device memory around every call, the pattern-filled gaps included, and
// compared on the host as on the CPU backend). Every case of the case files
// (tests/problems/conv_*.txt) runs every algorithm the library offers for it through the
// public API, and each result is compared with the reference implementation
// (src/cpu/ref/ref_conv.cpp, called directly, in double precision):
//   - integer-valued fills make every result exact (compared bit for bit); real fills
//     get a tolerance from the output type and the reduction length;
//   - with beta = 0 the output is poisoned with NaN first (it must never be read), and
//     every element must be written; bytes of the output buffer that the descriptor does
//     not address must stay untouched; the workspace is exactly what was reported, and
//     one byte less is refused with BAD_PARAM;
//   - several alpha / beta pairs per algorithm; the fused bias + activation forward too;
//   - a case whose compared outputs are mostly zeros fails (the check would be vacuous).
// Failures print the case line and its seed. Finite-difference gradient checks of both
// backward directions come at the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/conv_problem.hpp"
#include "core/handle.hpp"
#include "core/elem_access.hpp"
#include "core/impl_registry.hpp"
#include "core/memory.hpp"
#include "cudnn.h"
#include "ops/conv_cases.hpp"

namespace {

using conv_test::Case;
using odnn::core::ConvKind;
using odnn::core::ConvProblem;
using odnn::core::ConvTensor;

#ifdef ODNN_CONV_TEST_CUDA
constexpr bool kCuda = true;
#else
constexpr bool kCuda = false;
#endif

constexpr unsigned char kPattern = 0xA5;  // bytes outside addressed elements
constexpr size_t kGuard = 64;

#define CHECK_CUDNN(call)                                                                                    \
    do {                                                                                                     \
        const cudnnStatus_t s_ = (call);                                                                     \
        ASSERT_EQ(s_, CUDNN_STATUS_SUCCESS) << #call << ": " << cudnnGetErrorString(s_) << ": " << last_error(); \
    } while (0)

std::string last_error() {
    char buf[1024] = {};
    cudnnGetLastErrorString(buf, sizeof buf);
    return buf;
}

cudnnHandle_t handle() {
    static cudnnHandle_t h = [] {
        setenv("ODNN_BACKEND", kCuda ? "cuda" : "cpu", 0);
        cudnnHandle_t x = nullptr;
        if (cudnnCreate(&x) != CUDNN_STATUS_SUCCESS) std::abort();
        return x;
    }();
    return h;
}

const odnn::core::Handle& core_handle() { return *static_cast<odnn::core::Handle*>(handle()); }

// A workspace of exactly `bytes` in the backend's memory (its own host allocation on
// the CPU backend, where ASan sees any overrun).
class Work {
public:
    explicit Work(size_t bytes) {
        if (bytes == 0) return;
        if (kCuda) {
            EXPECT_TRUE(dev_.allocate(core_handle(), bytes).is_ok());
            ptr_ = dev_.get();
        } else {
            host_.reset(new unsigned char[bytes]);
            std::memset(host_.get(), 0x5A, bytes);
            ptr_ = host_.get();
        }
    }
    void* get() const { return ptr_; }

private:
    std::unique_ptr<unsigned char[]> host_;
    odnn::core::BackendBuffer dev_;
    void* ptr_ = nullptr;
};

const odnn::core::Impl<ConvProblem>* reference() {
    for (auto* impl : odnn::core::ImplRegistry<ConvProblem>::get().list(odnn::core::BackendKind::cpu))
        if (std::string(impl->name()) == "ref_conv") return impl;
    return nullptr;
}

struct Types {
    cudnnDataType_t x, w, y, compute;
};

Types types_of(const std::string& dt) {
    if (dt == "f64") return {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE};
    if (dt == "f16") return {CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    if (dt == "f16c16") return {CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF};
    if (dt == "bf16") return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT};
    if (dt == "i8") return {CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_INT32};
    if (dt == "i8f32") return {CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT, CUDNN_DATA_INT32};
    return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT};
}

size_t elem_bytes(cudnnDataType_t t) {
    switch (t) {
        case CUDNN_DATA_DOUBLE: return 8;
        case CUDNN_DATA_HALF:
        case CUDNN_DATA_BFLOAT16: return 2;
        case CUDNN_DATA_INT8:
        case CUDNN_DATA_UINT8: return 1;
        default: return 4;
    }
}

double unit_roundoff(cudnnDataType_t t) {
    switch (t) {
        case CUDNN_DATA_DOUBLE: return std::ldexp(1.0, -53);
        case CUDNN_DATA_HALF: return std::ldexp(1.0, -11);
        case CUDNN_DATA_BFLOAT16: return std::ldexp(1.0, -8);
        case CUDNN_DATA_INT8: return 0.5;  // absolute: rounding to an integer
        default: return std::ldexp(1.0, -24);
    }
}

// The value `v` after a round trip through type `t` (what a correct kernel stores).
double rounded(double v, cudnnDataType_t t) {
    unsigned char b[8];
    odnn::core::store_elem(b, 0, t, v);
    return odnn::core::load_elem(b, 0, t);
}

// Descriptors of one case, owned.
struct Descs {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr, z = nullptr, bias = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnActivationDescriptor_t act = nullptr;
    ~Descs() {
        cudnnDestroyTensorDescriptor(x);
        cudnnDestroyTensorDescriptor(y);
        cudnnDestroyTensorDescriptor(z);
        cudnnDestroyTensorDescriptor(bias);
        cudnnDestroyFilterDescriptor(w);
        cudnnDestroyConvolutionDescriptor(conv);
        cudnnDestroyActivationDescriptor(act);
    }
};

// Strides of an N, C, spatial... tensor in the case's layout.
std::vector<int> strides_for(const std::string& layout, const std::vector<int>& dims, std::mt19937_64& rng) {
    const int nb = static_cast<int>(dims.size());
    std::vector<int> order;  // innermost first
    if (layout == "nhwc") {
        order.push_back(1);
        for (int i = nb - 1; i >= 2; --i) order.push_back(i);
        order.push_back(0);
    } else {
        for (int i = nb - 1; i >= 0; --i) order.push_back(i);
    }
    std::vector<int> gaps(static_cast<size_t>(nb), 0);
    if (layout == "strided") {
        std::shuffle(order.begin(), order.end(), rng);
        for (int& gap : gaps) gap = static_cast<int>(rng() % 3);
    }
    std::vector<int> strides(static_cast<size_t>(nb));
    int s = 1;
    for (int d : order) {
        strides[static_cast<size_t>(d)] = s;
        s *= dims[static_cast<size_t>(d)] + gaps[static_cast<size_t>(d)];
    }
    return strides;
}

void make_tensor(cudnnTensorDescriptor_t* d, cudnnDataType_t t, const std::vector<int>& dims,
                 const std::string& layout, std::mt19937_64& rng) {
    ASSERT_EQ(cudnnCreateTensorDescriptor(d), CUDNN_STATUS_SUCCESS);
    const std::vector<int> strides = strides_for(layout, dims, rng);
    CHECK_CUDNN(cudnnSetTensorNdDescriptor(*d, t, static_cast<int>(dims.size()), dims.data(), strides.data()));
}

void make_descs(const Case& c, Descs* d, std::mt19937_64& rng) {
    const Types ty = types_of(c.dt);
    const int nb = c.dims + 2;
    const int off = 3 - c.dims;
    std::vector<int> xdims = {static_cast<int>(c.n), static_cast<int>(c.c)};
    std::vector<int> wdims = {static_cast<int>(c.k), static_cast<int>(c.c / c.g)};
    std::vector<int> pads, strides, dils;
    for (int i = off; i < 3; ++i) {
        xdims.push_back(static_cast<int>(c.in[i]));
        wdims.push_back(static_cast<int>(c.filt[i]));
        pads.push_back(static_cast<int>(c.pad[i]));
        strides.push_back(static_cast<int>(c.stride[i]));
        dils.push_back(static_cast<int>(c.dil[i]));
    }
    make_tensor(&d->x, ty.x, xdims, c.layout, rng);
    ASSERT_EQ(cudnnCreateFilterDescriptor(&d->w), CUDNN_STATUS_SUCCESS);
    CHECK_CUDNN(cudnnSetFilterNdDescriptor(d->w, ty.w, c.wlayout == "nhwc" ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                           nb, wdims.data()));
    ASSERT_EQ(cudnnCreateConvolutionDescriptor(&d->conv), CUDNN_STATUS_SUCCESS);
    CHECK_CUDNN(cudnnSetConvolutionNdDescriptor(d->conv, c.dims, pads.data(), strides.data(), dils.data(),
                                                c.conv_mode ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                                ty.compute));
    CHECK_CUDNN(cudnnSetConvolutionGroupCount(d->conv, static_cast<int>(c.g)));
    // Odd lines ask for FMA math (what PyTorch sets for fp32 without TF32).
    if (c.line % 2) CHECK_CUDNN(cudnnSetConvolutionMathType(d->conv, CUDNN_FMA_MATH));
    std::vector<int> ydims(static_cast<size_t>(nb));
    CHECK_CUDNN(cudnnGetConvolutionNdForwardOutputDim(d->conv, d->x, d->w, nb, ydims.data()));
    make_tensor(&d->y, ty.y, ydims, c.layout, rng);
}

// A tensor's memory: the addressed elements inside a pattern-filled buffer.
struct Buffer {
    ConvTensor t;
    std::vector<unsigned char> mem;
    std::vector<int64_t> offsets;  // of the logical elements, canonical N, C, D, H, W order
    odnn::core::BackendBuffer dev;

    void init(const ConvTensor& tensor) {
        t = tensor;
        const size_t es = elem_bytes(t.dtype);
        mem.assign(static_cast<size_t>(t.span()) * es + kGuard, kPattern);
        offsets.clear();
        offsets.reserve(static_cast<size_t>(t.num_elements()));
        for (int64_t a = 0; a < t.dims[0]; ++a)
            for (int64_t b = 0; b < t.dims[1]; ++b)
                for (int64_t c = 0; c < t.dims[2]; ++c)
                    for (int64_t d = 0; d < t.dims[3]; ++d)
                        for (int64_t e = 0; e < t.dims[4]; ++e) offsets.push_back(t.offset(a, b, c, d, e));
    }
    double get(size_t i) const { return odnn::core::load_elem(mem.data(), offsets[i], t.dtype); }
    void set(size_t i, double v) { odnn::core::store_elem(mem.data(), offsets[i], t.dtype, v); }
    // The pointer calls get: the device mirror on CUDA.
    void* data() { return kCuda ? dev.get() : mem.data(); }
    void* host() { return mem.data(); }
    // Host -> device mirror (the whole buffer, gaps included) and back; no-ops on the CPU.
    void push() {
        if (!kCuda) return;
        if (!dev.get()) ASSERT_TRUE(dev.allocate(core_handle(), mem.size()).is_ok());
        ASSERT_TRUE(odnn::core::copy_from_host(core_handle(), dev.get(), mem.data(), mem.size()).is_ok());
    }
    void pull() {
        if (!kCuda) return;
        ASSERT_TRUE(odnn::core::copy_to_host(core_handle(), mem.data(), dev.get(), mem.size()).is_ok());
    }
    size_t size() const { return offsets.size(); }
    // Bytes the descriptor does not address, which no call may write.
    bool gaps_intact() const {
        const size_t es = elem_bytes(t.dtype);
        std::vector<bool> addressed(mem.size(), false);
        for (int64_t o : offsets)
            for (size_t b = 0; b < es; ++b) addressed[static_cast<size_t>(o) * es + b] = true;
        for (size_t i = 0; i < mem.size(); ++i)
            if (!addressed[i] && mem[i] != kPattern) return false;
        return true;
    }
};

void fill(Buffer& b, bool real, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    static const double ints[] = {-2, -1, 1, 2};
    for (size_t i = 0; i < b.size(); ++i) b.set(i, real ? u(rng) : ints[rng() % 4]);
}

void poison(Buffer& b) {
    for (size_t i = 0; i < b.size(); ++i) b.set(i, std::nan(""));
}

struct Scalars {
    double alpha, beta;
};
const Scalars kPairs[] = {{1.0, 0.0}, {0.5, -1.0}, {-2.0, 1.0}};

// One direction of one case: inputs, the reference result, and the checks.
class DirectionRun {
    struct Listed {
        int algo;
        cudnnStatus_t status;
        size_t memory;
        cudnnMathType_t math;
        cudnnDeterminism_t det;
        float time = -1.0f;
    };

public:
    DirectionRun(const Case& c, ConvKind kind, std::mt19937_64& rng) : c_(c), kind_(kind), rng_(rng) {}

    void run() {
        make_descs(c_, &d_, rng_);
        if (::testing::Test::HasFatalFailure()) return;
        auto st = odnn::core::make_conv_problem(kind_, *d_.x, *d_.w, *d_.conv, *d_.y, &p_);
        ASSERT_TRUE(st.is_ok()) << st.message();
        x_.init(p_.x);
        w_.init(p_.w);
        y_.init(p_.y);
        Buffer& out = output();
        // The two inputs of this direction.
        if (kind_ != ConvKind::bwd_data) fill(x_, c_.real_fill, rng_);
        if (kind_ != ConvKind::bwd_filter) fill(w_, c_.real_fill, rng_);
        if (kind_ != ConvKind::fwd) fill(y_, c_.real_fill, rng_);
        fill(out, false, rng_);  // the prior output, for beta != 0
        old_.resize(out.size());
        for (size_t i = 0; i < out.size(); ++i) old_[i] = out.get(i);
        compute_reference();
        if (::testing::Test::HasFatalFailure()) return;

        const int count = odnn::core::conv_algo_count(kind_);
        int ran = 0;
        for (int algo = 0; algo < count; ++algo) {
            size_t ws = 0;
            const cudnnStatus_t s = workspace_size(algo, &ws);
            ASSERT_TRUE(s == CUDNN_STATUS_SUCCESS || s == CUDNN_STATUS_NOT_SUPPORTED)
                << "algo " << algo << ": " << cudnnGetErrorString(s) << ": " << last_error();
            check_listed(algo, s, ws);
            if (s != CUDNN_STATUS_SUCCESS) continue;
            ++ran;
            run_algo(algo, ws, kPairs[0]);
            run_algo(algo, ws, kPairs[1 + (algo + c_.line) % 2]);
            if (::testing::Test::HasFatalFailure()) return;
        }
        EXPECT_GT(ran, 0) << "no algorithm supports this case";
        if (c_.line % 5 == 0) check_find();
        const int def = kind_ == ConvKind::fwd ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM : 1;
        size_t ws = 0;
        EXPECT_EQ(workspace_size(def, &ws), CUDNN_STATUS_SUCCESS) << "the framework default algo must always work";
        EXPECT_GE(nonzero_, compared_ / 2) << "mostly-zero outputs: " << nonzero_ << " of " << compared_
                                           << " compared values are nonzero";
    }

    // cudnnConvolutionBiasActivationForward: y = act(alpha1 * conv + alpha2 * z + bias).
    void run_fused() {
        make_descs(c_, &d_, rng_);
        if (::testing::Test::HasFatalFailure()) return;
        auto st = odnn::core::make_conv_problem(ConvKind::fwd, *d_.x, *d_.w, *d_.conv, *d_.y, &p_);
        ASSERT_TRUE(st.is_ok()) << st.message();
        x_.init(p_.x);
        w_.init(p_.w);
        y_.init(p_.y);
        fill(x_, c_.real_fill, rng_);
        fill(w_, c_.real_fill, rng_);
        compute_reference();
        if (::testing::Test::HasFatalFailure()) return;
        // z has y's descriptor; bias is 1 x K x 1 x 1 of y's type.
        const int nb = c_.dims + 2;
        std::vector<int> bdims(static_cast<size_t>(nb), 1), bstrides(static_cast<size_t>(nb), 1);
        bdims[1] = static_cast<int>(c_.k);
        for (int i = 0; i < nb; ++i) bstrides[static_cast<size_t>(i)] = i == 0 ? static_cast<int>(c_.k) : 1;
        ASSERT_EQ(cudnnCreateTensorDescriptor(&d_.bias), CUDNN_STATUS_SUCCESS);
        const cudnnDataType_t bias_type = types_of(c_.dt).y == CUDNN_DATA_INT8 ? CUDNN_DATA_FLOAT : types_of(c_.dt).y;
        CHECK_CUDNN(cudnnSetTensorNdDescriptor(d_.bias, bias_type, nb, bdims.data(), bstrides.data()));
        ASSERT_EQ(cudnnCreateActivationDescriptor(&d_.act), CUDNN_STATUS_SUCCESS);
        Buffer z, bias;
        z.init(p_.y);
        fill(z, false, rng_);
        ConvTensor bt;
        bt.dtype = bias_type;
        bt.dims[1] = c_.k;
        bias.init(bt);
        fill(bias, false, rng_);
        int ran = 0;
        for (int algo = 0; algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++algo) {
            size_t ws = 0;
            if (workspace_size(algo, &ws) != CUDNN_STATUS_SUCCESS) continue;
            for (int mode = 0; mode < 2; ++mode) {
                const bool relu = mode == 0;
                if (!relu && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) continue;
                CHECK_CUDNN(cudnnSetActivationDescriptor(
                    d_.act, relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0));
                const bool in_place = (algo + mode + c_.line) % 2 == 0;  // z aliases y
                const double a1 = algo % 2 ? 0.5 : 1.0, a2 = (algo / 2) % 2 ? 1.0 : -0.5;
                // Prior y: the z values when in place, NaN otherwise (never read).
                for (size_t i = 0; i < y_.size(); ++i) y_.set(i, in_place ? z.get(i) : std::nan(""));
                Work work(ws);
                const double a1d = a1, a2d = a2;
                for (Buffer* b : {&x_, &w_, &y_, &z, &bias}) b->push();
                const float a1f = static_cast<float>(a1), a2f = static_cast<float>(a2);
                const bool dbl = p_.x.dtype == CUDNN_DATA_DOUBLE;
                const cudnnStatus_t s = cudnnConvolutionBiasActivationForward(
                    handle(), dbl ? static_cast<const void*>(&a1d) : &a1f, d_.x, x_.data(), d_.w, w_.data(), d_.conv,
                    static_cast<cudnnConvolutionFwdAlgo_t>(algo), work.get(), ws,
                    dbl ? static_cast<const void*>(&a2d) : &a2f, d_.y, in_place ? y_.data() : z.data(), d_.bias,
                    bias.data(), d_.act, d_.y, y_.data());
                ASSERT_EQ(s, CUDNN_STATUS_SUCCESS) << "algo " << algo << ": " << last_error();
                y_.pull();
                ++ran;
                std::vector<double> expect(y_.size());
                for (size_t i = 0; i < y_.size(); ++i) {
                    const int64_t k = static_cast<int64_t>(i) / (p_.out_pixels()) % c_.k;
                    double v = a1 * ref_[i] + a2 * z.get(i) + bias.get(static_cast<size_t>(k));
                    if (relu && !(v > 0)) v = 0;
                    expect[i] = v;
                }
                compare(y_, expect, std::abs(a1), 0.0, algo, relu ? "fused relu" : "fused identity");
                EXPECT_TRUE(y_.gaps_intact()) << "algo " << algo << " wrote outside y";
                if (::testing::Test::HasFailure()) return;
            }
        }
        EXPECT_GT(ran, 0);
    }

private:
    // Find / FindEx really run every algorithm: each supported one succeeds (or reports
    // INTERNAL_ERROR_UNEXPECTED_VALUE, cuDNN 9.19's answer, when the given workspace is too
    // small), results come fastest first.
    void check_find() {
        const int count = odnn::core::conv_algo_count(kind_);
        std::vector<size_t> need(static_cast<size_t>(count), 0);
        std::vector<bool> ok(static_cast<size_t>(count), false);
        size_t max_ws = 0;
        for (int a = 0; a < count; ++a) {
            ok[static_cast<size_t>(a)] = workspace_size(a, &need[static_cast<size_t>(a)]) == CUDNN_STATUS_SUCCESS;
            if (ok[static_cast<size_t>(a)]) max_ws = std::max(max_ws, need[static_cast<size_t>(a)]);
        }
        for (int variant = 0; variant < 3; ++variant) {
            // 0: FindEx with the largest workspace, 1: FindEx without workspace, 2: Find.
            const size_t ws = variant == 0 ? max_ws : 0;
            Work work(ws + 1);
            for (Buffer* b : {&x_, &w_, &y_}) b->push();
            std::vector<Listed> got = find(variant == 2, work.get(), ws);
            if (::testing::Test::HasFatalFailure()) return;
            ASSERT_EQ(static_cast<int>(got.size()), count);
            bool seen_failure = false;
            float last = -1.0f;
            std::vector<bool> listed(static_cast<size_t>(count), false);
            for (const Listed& l : got) {
                ASSERT_TRUE(l.algo >= 0 && l.algo < count);
                listed[static_cast<size_t>(l.algo)] = true;
                const size_t a = static_cast<size_t>(l.algo);
                cudnnStatus_t want = !ok[a] ? CUDNN_STATUS_NOT_SUPPORTED
                                     : (variant != 1 || need[a] == 0) ? CUDNN_STATUS_SUCCESS
                                                                       : CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE;
                EXPECT_EQ(l.status, want) << "find variant " << variant << " algo " << l.algo;
                if (l.status == CUDNN_STATUS_SUCCESS) {
                    EXPECT_FALSE(seen_failure) << "successful results must come first";
                    EXPECT_GE(l.time, last) << "results must be sorted by time";
                    last = l.time;
                    EXPECT_EQ(l.memory, need[a]);
                    EXPECT_TRUE(math_ok(l.math)) << "math type " << l.math;
                    EXPECT_EQ(l.det, CUDNN_DETERMINISTIC);
                } else {
                    seen_failure = true;
                }
            }
            for (int a = 0; a < count; ++a) EXPECT_TRUE(listed[static_cast<size_t>(a)]) << "algo " << a << " missing";
        }
    }

    std::vector<Listed> find(bool no_data, void* ws, size_t wsb) {
        std::vector<Listed> out;
        int returned = 0;
        cudnnStatus_t st;
        if (kind_ == ConvKind::fwd) {
            cudnnConvolutionFwdAlgoPerf_t perf[8];
            st = no_data ? cudnnFindConvolutionForwardAlgorithm(handle(), d_.x, d_.w, d_.conv, d_.y, 8, &returned, perf)
                         : cudnnFindConvolutionForwardAlgorithmEx(handle(), d_.x, x_.data(), d_.w, w_.data(), d_.conv,
                                                                  d_.y, y_.data(), 8, &returned, perf, ws, wsb);
            for (int i = 0; i < returned; ++i)
                out.push_back({perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType, perf[i].determinism, perf[i].time});
        } else if (kind_ == ConvKind::bwd_data) {
            cudnnConvolutionBwdDataAlgoPerf_t perf[8];
            st = no_data ? cudnnFindConvolutionBackwardDataAlgorithm(handle(), d_.w, d_.y, d_.conv, d_.x, 8, &returned,
                                                                     perf)
                         : cudnnFindConvolutionBackwardDataAlgorithmEx(handle(), d_.w, w_.data(), d_.y, y_.data(),
                                                                       d_.conv, d_.x, x_.data(), 8, &returned, perf,
                                                                       ws, wsb);
            for (int i = 0; i < returned; ++i)
                out.push_back({perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType, perf[i].determinism, perf[i].time});
        } else {
            cudnnConvolutionBwdFilterAlgoPerf_t perf[8];
            st = no_data ? cudnnFindConvolutionBackwardFilterAlgorithm(handle(), d_.x, d_.y, d_.conv, d_.w, 8,
                                                                       &returned, perf)
                         : cudnnFindConvolutionBackwardFilterAlgorithmEx(handle(), d_.x, x_.data(), d_.y, y_.data(),
                                                                         d_.conv, d_.w, w_.data(), 8, &returned, perf,
                                                                         ws, wsb);
            for (int i = 0; i < returned; ++i)
                out.push_back({perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType, perf[i].determinism, perf[i].time});
        }
        EXPECT_EQ(st, CUDNN_STATUS_SUCCESS) << last_error();
        return out;
    }

    // The math type reported with every result: the descriptor's (FMA on odd lines), or
    // TENSOR_OP for a tensor-core kernel (CUDA: 16-bit data, and FLOAT through TF32),
    // which FMA math and fp64 data never get (PyTorch asserts FMA for fp32 without TF32).
    cudnnMathType_t expected_math() const { return c_.line % 2 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH; }
    bool math_ok(cudnnMathType_t m) const {
        if (m == expected_math()) return true;
        return tensor_cores_allowed() && m == CUDNN_TENSOR_OP_MATH;
    }
    bool tensor_cores_allowed() const {
        const cudnnDataType_t dt = p_.x.dtype;
        const bool tc_type = dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16 || dt == CUDNN_DATA_FLOAT;
        return kCuda && tc_type && expected_math() != CUDNN_FMA_MATH;
    }

    Buffer& output() { return kind_ == ConvKind::fwd ? y_ : kind_ == ConvKind::bwd_data ? x_ : w_; }

    cudnnStatus_t workspace_size(int algo, size_t* ws) {
        switch (kind_) {
            case ConvKind::fwd:
                return cudnnGetConvolutionForwardWorkspaceSize(handle(), d_.x, d_.w, d_.conv, d_.y,
                                                               static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws);
            case ConvKind::bwd_data:
                return cudnnGetConvolutionBackwardDataWorkspaceSize(
                    handle(), d_.w, d_.y, d_.conv, d_.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws);
            case ConvKind::bwd_filter:
                return cudnnGetConvolutionBackwardFilterWorkspaceSize(
                    handle(), d_.x, d_.y, d_.conv, d_.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws);
        }
        return CUDNN_STATUS_INTERNAL_ERROR;
    }

    // Get_v7 must agree with the workspace query on status and memory, and report
    // determinism and the descriptor's math type (PyTorch asserts FMA for fp32 without
    // TF32, after setting FMA on the descriptor).
    void check_listed(int algo, cudnnStatus_t s, size_t ws) {
        if (listed_.empty()) {
            int returned = 0;
            listed_.resize(8);
            cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
            if (kind_ == ConvKind::fwd) {
                cudnnConvolutionFwdAlgoPerf_t perf[8];
                st = cudnnGetConvolutionForwardAlgorithm_v7(handle(), d_.x, d_.w, d_.conv, d_.y, 8, &returned, perf);
                for (int i = 0; i < returned; ++i) listed_[static_cast<size_t>(i)] = {perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType, perf[i].determinism};
            } else if (kind_ == ConvKind::bwd_data) {
                cudnnConvolutionBwdDataAlgoPerf_t perf[8];
                st = cudnnGetConvolutionBackwardDataAlgorithm_v7(handle(), d_.w, d_.y, d_.conv, d_.x, 8, &returned,
                                                                 perf);
                for (int i = 0; i < returned; ++i) listed_[static_cast<size_t>(i)] = {perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType, perf[i].determinism};
            } else {
                cudnnConvolutionBwdFilterAlgoPerf_t perf[8];
                st = cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle(), d_.x, d_.y, d_.conv, d_.w, 8, &returned,
                                                                   perf);
                for (int i = 0; i < returned; ++i) listed_[static_cast<size_t>(i)] = {perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType, perf[i].determinism};
            }
            ASSERT_EQ(st, CUDNN_STATUS_SUCCESS) << last_error();
            ASSERT_EQ(returned, odnn::core::conv_algo_count(kind_));
            listed_.resize(static_cast<size_t>(returned));
        }
        for (const Listed& l : listed_) {
            if (l.algo != algo) continue;
            EXPECT_EQ(l.status, s) << "Get_v7 and the workspace query disagree on algo " << algo;
            if (s == CUDNN_STATUS_SUCCESS) {
                EXPECT_EQ(l.memory, ws) << "Get_v7 memory of algo " << algo;
                EXPECT_TRUE(math_ok(l.math)) << "math type " << l.math;
                EXPECT_EQ(l.det, CUDNN_DETERMINISTIC);
            }
            return;
        }
        ADD_FAILURE() << "algo " << algo << " missing from Get_v7";
    }

    // The reference, unscaled, into a packed double tensor (alpha = 1, beta = 0).
    void compute_reference() {
        const auto* ref = reference();
        ASSERT_NE(ref, nullptr);
        ConvProblem r = p_;
        ConvTensor& t = kind_ == ConvKind::fwd ? r.y : kind_ == ConvKind::bwd_data ? r.x : r.w;
        t.dtype = CUDNN_DATA_DOUBLE;
        t.vect = 1;
        int64_t s = 1;
        for (int i = 4; i >= 0; --i) {
            t.strides[i] = s;
            s *= t.dims[i];
        }
        ref_.assign(static_cast<size_t>(s), std::nan(""));
        r.x_data = x_.host();
        r.w_data = w_.host();
        r.y_data = y_.host();
        void** out = kind_ == ConvKind::fwd ? &r.y_data : kind_ == ConvKind::bwd_data ? &r.x_data : &r.w_data;
        *out = ref_.data();
        r.alpha = 1.0;
        r.beta = 0.0;
        r.epi = {};
        ASSERT_TRUE(ref->execute(core_handle(), r).is_ok());
    }

    cudnnStatus_t call(int algo, void* ws, size_t wsb, const Scalars& sc) {
        const bool dbl = p_.x.dtype == CUDNN_DATA_DOUBLE;
        const float af = static_cast<float>(sc.alpha), bf = static_cast<float>(sc.beta);
        const void* a = dbl ? static_cast<const void*>(&sc.alpha) : &af;
        const void* b = dbl ? static_cast<const void*>(&sc.beta) : &bf;
        switch (kind_) {
            case ConvKind::fwd:
                return cudnnConvolutionForward(handle(), a, d_.x, x_.data(), d_.w, w_.data(), d_.conv,
                                               static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws, wsb, b, d_.y,
                                               y_.data());
            case ConvKind::bwd_data:
                return cudnnConvolutionBackwardData(handle(), a, d_.w, w_.data(), d_.y, y_.data(), d_.conv,
                                                    static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws, wsb, b,
                                                    d_.x, x_.data());
            case ConvKind::bwd_filter:
                return cudnnConvolutionBackwardFilter(handle(), a, d_.x, x_.data(), d_.y, y_.data(), d_.conv,
                                                      static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws, wsb, b,
                                                      d_.w, w_.data());
        }
        return CUDNN_STATUS_INTERNAL_ERROR;
    }

    void run_algo(int algo, size_t ws, const Scalars& sc) {
        Buffer& out = output();
        if (sc.beta == 0.0) {
            poison(out);
        } else {
            for (size_t i = 0; i < out.size(); ++i) out.set(i, old_[i]);
        }
        // Exactly the reported workspace, in its own allocation (ASan sees any overrun).
        Work work(ws);
        for (Buffer* b : {&x_, &w_, &y_}) b->push();
        if (ws > 0 && sc.beta == 0.0) {
            EXPECT_EQ(call(algo, work.get(), ws - 1, sc), CUDNN_STATUS_BAD_PARAM)
                << "algo " << algo << " accepted a workspace one byte short";
        }
        const cudnnStatus_t s = call(algo, work.get(), ws, sc);
        ASSERT_EQ(s, CUDNN_STATUS_SUCCESS) << "algo " << algo << ": " << cudnnGetErrorString(s) << ": "
                                           << last_error();
        out.pull();
        std::vector<double> expect(out.size());
        for (size_t i = 0; i < out.size(); ++i)
            expect[i] = sc.alpha * ref_[i] + (sc.beta != 0.0 ? sc.beta * old_[i] : 0.0);
        std::ostringstream what;
        what << "alpha=" << sc.alpha << " beta=" << sc.beta;
        compare(out, expect, std::abs(sc.alpha), std::abs(sc.beta), algo, what.str());
        EXPECT_TRUE(out.gaps_intact()) << "algo " << algo << " wrote outside the addressed elements";
    }

    void compare(const Buffer& out, const std::vector<double>& expect, double alpha, double beta, int algo,
                 const std::string& what) {
        const cudnnDataType_t ot = out.t.dtype;
        const Types ty = types_of(c_.dt);
        // (FLOAT through TF32 on CUDA: each product carries the operands' rounding to 10
        // fraction bits, truncated or to nearest.)
        const bool tf32 = ty.x == CUDNN_DATA_FLOAT && tensor_cores_allowed();
        const double acc_eps = ty.x == CUDNN_DATA_DOUBLE ? std::ldexp(1.0, -52)
                               : tf32                    ? std::ldexp(1.0, -9)
                                                         : std::ldexp(1.0, -23);
        const double red = static_cast<double>(p_.reduction_length());
        int bad = 0;
        for (size_t i = 0; i < out.size(); ++i) {
            const double want = rounded(expect[i], ot);
            const double got = out.get(i);
            ++compared_;
            if (want != 0.0) ++nonzero_;
            bool ok;
            if (!c_.real_fill) {
                ok = got == want || (std::isnan(got) && std::isnan(want));
            } else {
                // Output rounding, plus accumulation error of a sum of `red` products of
                // magnitude <= 1 (fills are in [-1, 1]; fused terms are small integers).
                const double tol = 2.0 * unit_roundoff(ot) * std::abs(want) + 4.0 * red * acc_eps * alpha +
                                   unit_roundoff(ot) * beta * 2.0 + 1e-300;
                ok = std::abs(got - want) <= tol;
            }
            if (!ok && bad++ < 5)
                ADD_FAILURE() << kind_name() << " algo " << algo << " (" << what << "): element " << i
                              << " got " << got << " want " << want;
        }
        if (bad) ADD_FAILURE() << kind_name() << " algo " << algo << ": " << bad << " of " << out.size()
                               << " elements differ";
    }

    const char* kind_name() const { return odnn::core::conv_kind_name(kind_); }


    const Case& c_;
    ConvKind kind_;
    std::mt19937_64& rng_;
    Descs d_;
    ConvProblem p_;
    Buffer x_, w_, y_;
    std::vector<double> old_, ref_;
    std::vector<Listed> listed_;
    size_t compared_ = 0, nonzero_ = 0;
};

std::vector<Case> all_cases() {
    try {
        return conv_test::load_cases(ODNN_PROBLEMS_DIR);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "conv case files: %s\n", e.what());
        std::abort();
    }
}

class ConvCase : public ::testing::TestWithParam<Case> {};

TEST_P(ConvCase, MatchesReference) {
    const Case& c = GetParam();
    uint64_t seed = c.seed();
    if (const char* s = std::getenv("ODNN_TEST_SEED")) seed ^= std::strtoull(s, nullptr, 0);
    SCOPED_TRACE("case " + c.where() + "  seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const bool int8 = c.dt == "i8" || c.dt == "i8f32";
    std::vector<ConvKind> kinds;
    if (c.dir == "fwd" || c.dir == "all") kinds.push_back(ConvKind::fwd);
    if ((c.dir == "bwd_data" || c.dir == "all") && !int8) kinds.push_back(ConvKind::bwd_data);
    if ((c.dir == "bwd_filter" || c.dir == "all") && !int8) kinds.push_back(ConvKind::bwd_filter);
    for (ConvKind k : kinds) {
        SCOPED_TRACE(odnn::core::conv_kind_name(k));
        DirectionRun(c, k, rng).run();
        if (::testing::Test::HasFatalFailure()) return;
    }
    if (c.dir == "bias_act") DirectionRun(c, ConvKind::fwd, rng).run_fused();
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name(); }

INSTANTIATE_TEST_SUITE_P(Files, ConvCase, ::testing::ValuesIn(all_cases()), case_name);

TEST(ConvCaseFiles, EnoughProblems) { EXPECT_GE(all_cases().size(), 300u); }

#ifndef ODNN_CONV_TEST_CUDA  // the CPU build checks the reference's gradients; the GPU is checked against it
// ---------------------------------------------------------------------------
// Finite-difference gradient checks: L(x, w) = <conv(x, w), r>. Convolution is linear in
// each argument, so central differences are exact up to rounding; in double precision
// they must match the backward results to ~1e-9 relative.

class ConvGrad : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvGrad, BackwardMatchesFiniteDifferences) {
    Case c;
    std::string why;
    ASSERT_TRUE(conv_test::parse_case(GetParam(), &c, &why)) << why;
    c.dt = "f64";
    c.real_fill = true;
    SCOPED_TRACE(c.text);
    std::mt19937_64 rng(c.seed());
    Descs d;
    make_descs(c, &d, rng);
    if (::testing::Test::HasFatalFailure()) return;
    ConvProblem p;
    ASSERT_TRUE(odnn::core::make_conv_problem(ConvKind::fwd, *d.x, *d.w, *d.conv, *d.y, &p).is_ok());
    Buffer x, w, y, r, dx, dw;
    x.init(p.x);
    w.init(p.w);
    y.init(p.y);
    r.init(p.y);
    dx.init(p.x);
    dw.init(p.w);
    fill(x, true, rng);
    fill(w, true, rng);
    fill(r, true, rng);
    const double one = 1.0, zero = 0.0;
    auto loss = [&]() {
        size_t need = 0;
        EXPECT_EQ(cudnnGetConvolutionForwardWorkspaceSize(handle(), d.x, d.w, d.conv, d.y,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &need),
                  CUDNN_STATUS_SUCCESS);
        std::vector<unsigned char> ws(need + 1);
        EXPECT_EQ(cudnnConvolutionForward(handle(), &one, d.x, x.data(), d.w, w.data(), d.conv,
                                          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, ws.data(), need, &zero,
                                          d.y, y.data()),
                  CUDNN_STATUS_SUCCESS);
        double l = 0;
        for (size_t i = 0; i < y.size(); ++i) l += y.get(i) * r.get(i);
        return l;
    };
    for (int algo = 0; algo < 2; ++algo) {
        size_t need = 0;
        // ALGO_0 is not offered for every layout (3-d channels-last / strided, as in cuDNN).
        if (cudnnGetConvolutionBackwardDataWorkspaceSize(handle(), d.w, d.y, d.conv, d.x,
                                                         static_cast<cudnnConvolutionBwdDataAlgo_t>(algo),
                                                         &need) != CUDNN_STATUS_SUCCESS ||
            cudnnGetConvolutionBackwardFilterWorkspaceSize(handle(), d.x, d.y, d.conv, d.w,
                                                           static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo),
                                                           &need) != CUDNN_STATUS_SUCCESS) {
            ASSERT_EQ(algo, 0) << "ALGO_1 must always be offered";
            continue;
        }
        ASSERT_EQ(cudnnGetConvolutionBackwardDataWorkspaceSize(handle(), d.w, d.y, d.conv, d.x,
                                                               static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &need),
                  CUDNN_STATUS_SUCCESS);
        std::vector<unsigned char> ws(need + 1);
        ASSERT_EQ(cudnnConvolutionBackwardData(handle(), &one, d.w, w.data(), d.y, r.data(), d.conv,
                                               static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws.data(), need,
                                               &zero, d.x, dx.data()),
                  CUDNN_STATUS_SUCCESS)
            << last_error();
        ASSERT_EQ(cudnnGetConvolutionBackwardFilterWorkspaceSize(
                      handle(), d.x, d.y, d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &need),
                  CUDNN_STATUS_SUCCESS);
        ws.resize(need + 1);
        ASSERT_EQ(cudnnConvolutionBackwardFilter(handle(), &one, d.x, x.data(), d.y, r.data(), d.conv,
                                                 static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws.data(), need,
                                                 &zero, d.w, dw.data()),
                  CUDNN_STATUS_SUCCESS)
            << last_error();
        const double h = 0.5;  // exact for a linear function; a large step keeps rounding small
        auto check = [&](Buffer& in, const Buffer& grad, const char* name) {
            // Every element of small tensors, a random sample of larger ones.
            std::vector<size_t> idx;
            for (size_t i = 0; i < in.size(); ++i) idx.push_back(i);
            std::shuffle(idx.begin(), idx.end(), rng);
            if (idx.size() > 40) idx.resize(40);
            for (size_t i : idx) {
                const double v = in.get(i);
                in.set(i, v + h);
                const double lp = loss();
                in.set(i, v - h);
                const double lm = loss();
                in.set(i, v);
                const double fd = (lp - lm) / (2 * h);
                EXPECT_NEAR(grad.get(i), fd, 1e-9 * (1.0 + std::abs(fd))) << name << "[" << i << "] algo " << algo;
                if (::testing::Test::HasFailure()) return;
            }
        };
        check(x, dx, "dx");
        check(w, dw, "dw");
    }
}

INSTANTIATE_TEST_SUITE_P(
    Small, ConvGrad,
    ::testing::Values("conv all n=2 c=3 h=5 w=6 k=4 r=3 s=3 pad=1 stride=1",
                      "conv all n=1 c=4 h=7 w=7 k=2 r=3 s=2 pad=1x0 stride=2 dil=1 mode=conv",
                      "conv all n=2 c=4 h=6 w=5 k=6 r=2 s=3 pad=2 stride=1 dil=2 g=2",
                      "conv all n=1 c=3 h=6 w=6 k=3 r=3 s=3 pad=1 stride=3 g=3 layout=nhwc",
                      "conv all n=1 c=2 d=4 h=4 w=5 k=3 t=2 r=3 s=2 pad=1 stride=2x1x1 layout=strided",
                      "conv all n=3 c=2 h=1 w=9 k=2 r=1 s=4 pad=0x2 stride=1x3 dil=1x2"));
#endif

}  // namespace
