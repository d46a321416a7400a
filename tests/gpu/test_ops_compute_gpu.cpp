// Transform, add, op-tensor, reduce, activation and softmax on the CUDA backend, compared
// element by element with the CPU backend on the same inputs. The problems cover every
// kernel path: packed same-layout tensors (flat vector kernel, with and without aligned
// pointers, with tails), broadcast biases, strided views, softmax rows / columns / long
// columns / any strides, split reductions, padding and folding.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_util.hpp"
#include "odnn/odnn.h"

namespace {

// ---- Host values of each data type ----

size_t scalar_size(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_FLOAT: case CUDNN_DATA_INT32: return 4;
        case CUDNN_DATA_DOUBLE: return 8;
        case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
        default: return 1;
    }
}

double decode(cudnnDataType_t dt, const unsigned char* p) {
    switch (dt) {
        case CUDNN_DATA_FLOAT: { float f; std::memcpy(&f, p, 4); return f; }
        case CUDNN_DATA_DOUBLE: { double d; std::memcpy(&d, p, 8); return d; }
        case CUDNN_DATA_HALF: { _Float16 h; std::memcpy(&h, p, 2); return static_cast<double>(h); }
        case CUDNN_DATA_BFLOAT16: {
            uint16_t b;
            std::memcpy(&b, p, 2);
            const uint32_t u = static_cast<uint32_t>(b) << 16;
            float f;
            std::memcpy(&f, &u, 4);
            return f;
        }
        case CUDNN_DATA_INT32: { int32_t i; std::memcpy(&i, p, 4); return i; }
        case CUDNN_DATA_UINT8: return *p;
        default: return static_cast<int8_t>(*p);
    }
}

void encode(cudnnDataType_t dt, unsigned char* p, double v) {
    switch (dt) {
        case CUDNN_DATA_FLOAT: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
        case CUDNN_DATA_DOUBLE: std::memcpy(p, &v, 8); break;
        case CUDNN_DATA_HALF: { const _Float16 h = static_cast<_Float16>(v); std::memcpy(p, &h, 2); break; }
        case CUDNN_DATA_BFLOAT16: {
            const float f = static_cast<float>(v);
            uint32_t u;
            std::memcpy(&u, &f, 4);
            const uint16_t b = std::isnan(f) ? 0x7fc0 : static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
            std::memcpy(p, &b, 2);
            break;
        }
        case CUDNN_DATA_INT32: { const int32_t i = static_cast<int32_t>(std::lround(v)); std::memcpy(p, &i, 4); break; }
        case CUDNN_DATA_UINT8: *p = static_cast<uint8_t>(std::lround(std::fmin(255, std::fmax(0, v)))); break;
        default: *p = static_cast<uint8_t>(static_cast<int8_t>(std::lround(std::fmin(127, std::fmax(-128, v))))); break;
    }
}

double eps_of(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_DOUBLE: return 1e-15;
        case CUDNN_DATA_FLOAT: return 1.2e-7;
        case CUDNN_DATA_HALF: return 9.8e-4;
        case CUDNN_DATA_BFLOAT16: return 7.9e-3;
        default: return 0;
    }
}

double min_step(cudnnDataType_t dt) {
    return dt == CUDNN_DATA_HALF ? 6e-8 : dt == CUDNN_DATA_BFLOAT16 || dt == CUDNN_DATA_FLOAT ? 1e-38 : 0;
}

// ---- A tensor: descriptor plus host bytes ----

struct Tensor {
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    std::vector<int> dims, strides;
    cudnnTensorFormat_t vect_format = CUDNN_TENSOR_NCHW;  // NCHW_VECT_C for the vector types
    size_t scalars = 0;                                   // buffer length, gaps and slack included
    std::vector<unsigned char> bytes;
    cudnnTensorDescriptor_t desc = nullptr;
    int offset = 0;  // scalars the data pointer is moved by (misaligned pointers)

    Tensor() = default;
    Tensor(const Tensor&) = delete;
    Tensor& operator=(const Tensor&) = delete;
    ~Tensor() {
        if (desc) cudnnDestroyTensorDescriptor(desc);
    }
};

// layout: "nchw", "nhwc", "gaps" (nchw with padded rows), "cnhw" (N innermost-ish: dim 0
// innermost), or "vect" (NCHW_VECT_C, INT8x4).
void make(Tensor& t, cudnnDataType_t dt, std::vector<int> dims, const std::string& layout, int offset = 0) {
    t.dt = dt;
    t.dims = dims;
    t.offset = offset;
    const int nb = static_cast<int>(dims.size());
    t.strides.assign(dims.size(), 0);
    ASSERT_EQ(cudnnCreateTensorDescriptor(&t.desc), CUDNN_STATUS_SUCCESS);
    if (layout == "vect") {
        ASSERT_EQ(cudnnSetTensor4dDescriptor(t.desc, CUDNN_TENSOR_NCHW_VECT_C, dt, dims[0], dims[1], dims[2], dims[3]),
                  CUDNN_STATUS_SUCCESS);
        size_t b = 0;
        ASSERT_EQ(cudnnGetTensorSizeInBytes(t.desc, &b), CUDNN_STATUS_SUCCESS);
        t.scalars = b + 16;
    } else {
        std::vector<int> order;  // innermost first
        if (layout == "nhwc" && nb >= 3) {
            order.push_back(1);
            for (int d = nb - 1; d >= 2; --d) order.push_back(d);
            order.push_back(0);
        } else if (layout == "cnhw") {
            order.push_back(0);
            for (int d = nb - 1; d >= 1; --d) order.push_back(d);
        } else {
            for (int d = nb - 1; d >= 0; --d) order.push_back(d);
        }
        long s = 1;
        for (size_t k = 0; k < order.size(); ++k) {
            t.strides[order[k]] = static_cast<int>(s);
            s *= dims[order[k]] + (layout == "gaps" && k < 2 ? 3 : 0);
        }
        ASSERT_EQ(cudnnSetTensorNdDescriptor(t.desc, dt, nb, t.dims.data(), t.strides.data()), CUDNN_STATUS_SUCCESS)
            << odnn_test::last_error();
        size_t b = 0;
        ASSERT_EQ(cudnnGetTensorSizeInBytes(t.desc, &b), CUDNN_STATUS_SUCCESS);
        t.scalars = b / scalar_size(dt) + 16;
    }
    t.scalars += offset;
    t.bytes.assign(t.scalars * scalar_size(dt), 0);
}

void fill(Tensor& t, double lo, double hi, std::mt19937_64& rng, double nan_fraction = 0) {
    std::uniform_real_distribution<double> u(lo, hi), p(0, 1);
    for (size_t i = 0; i < t.scalars; ++i)
        encode(t.dt, &t.bytes[i * scalar_size(t.dt)], nan_fraction > 0 && p(rng) < nan_fraction ? NAN : u(rng));
}

void poison(Tensor& t) {
    for (size_t i = 0; i < t.scalars; ++i) encode(t.dt, &t.bytes[i * scalar_size(t.dt)], NAN);
}

cudnnHandle_t make_handle(const char* backend) {
    setenv("ODNN_BACKEND", backend, 1);
    cudnnHandle_t h = nullptr;
    EXPECT_EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS) << odnn_test::last_error();
    setenv("ODNN_BACKEND", "cuda", 1);
    return h;
}

struct GpuOps : ::testing::Test {
    cudnnHandle_t gpu = nullptr, cpu = nullptr;
    cudaStream_t stream = nullptr;
    void SetUp() override {
        gpu = make_handle("cuda");
        cpu = make_handle("cpu");
        ASSERT_STREQ(odnnGetHandleBackend(gpu), "cuda");
        ASSERT_STREQ(odnnGetHandleBackend(cpu), "cpu");
        ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
        ASSERT_EQ(cudnnSetStream(gpu, stream), CUDNN_STATUS_SUCCESS);
    }
    void TearDown() override {
        cudnnDestroy(gpu);
        cudnnDestroy(cpu);
        cudaStreamDestroy(stream);
    }

    // Runs `op` on both backends with the tensors' bytes as inputs (tensors listed in
    // `outs` are compared afterwards; `rel` is the compute tolerance on top of one unit
    // of the output type). Extra raw buffers (workspace, indices) go in `raw`, sized in
    // bytes; raw buffers listed in `raw_outs` must match exactly.
    using Op = std::function<cudnnStatus_t(cudnnHandle_t, std::vector<void*>& t, std::vector<void*>& raw)>;
    void compare(const std::string& what, std::vector<Tensor*> ts, std::vector<int> outs, double rel, const Op& op,
                 std::vector<size_t> raw_sizes = {}, std::vector<int> raw_outs = {}) {
        SCOPED_TRACE(what);
        std::vector<void*> dev(ts.size()), devp(ts.size()), host(ts.size());
        std::vector<std::vector<unsigned char>> hbuf(ts.size());
        for (size_t k = 0; k < ts.size(); ++k) {
            ASSERT_EQ(cudaMalloc(&dev[k], ts[k]->bytes.size()), cudaSuccess);
            ASSERT_EQ(cudaMemcpy(dev[k], ts[k]->bytes.data(), ts[k]->bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
            hbuf[k] = ts[k]->bytes;
            const size_t shift = ts[k]->offset * scalar_size(ts[k]->dt);
            devp[k] = static_cast<unsigned char*>(dev[k]) + shift;
            host[k] = hbuf[k].data() + shift;
        }
        std::vector<void*> rdev(raw_sizes.size()), rhost(raw_sizes.size());
        std::vector<std::vector<unsigned char>> rbuf(raw_sizes.size());
        for (size_t k = 0; k < raw_sizes.size(); ++k) {
            rbuf[k].assign(raw_sizes[k] + 8, 0xcd);
            ASSERT_EQ(cudaMalloc(&rdev[k], rbuf[k].size()), cudaSuccess);
            ASSERT_EQ(cudaMemcpy(rdev[k], rbuf[k].data(), rbuf[k].size(), cudaMemcpyHostToDevice), cudaSuccess);
            rhost[k] = raw_sizes[k] ? rbuf[k].data() : nullptr;
            if (!raw_sizes[k]) rdev[k] = nullptr;
        }
        ASSERT_EQ(op(gpu, devp, rdev), CUDNN_STATUS_SUCCESS) << "cuda: " << odnn_test::last_error();
        ASSERT_EQ(op(cpu, host, rhost), CUDNN_STATUS_SUCCESS) << "cpu: " << odnn_test::last_error();
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        for (int k : outs) {
            std::vector<unsigned char> back(ts[k]->bytes.size());
            ASSERT_EQ(cudaMemcpy(back.data(), dev[k], back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
            const cudnnDataType_t dt = ts[k]->dt;
            const size_t es = scalar_size(dt);
            double scale = 0;
            for (size_t i = 0; i < ts[k]->scalars; ++i) {
                const double r = decode(dt, &hbuf[k][i * es]);
                if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
            }
            int bad = 0;
            size_t changed = 0;
            for (size_t i = 0; i < ts[k]->scalars; ++i) {
                const double g = decode(dt, &back[i * es]), r = decode(dt, &hbuf[k][i * es]);
                changed += std::memcmp(&hbuf[k][i * es], &ts[k]->bytes[i * es], es) != 0;
                bool ok;
                if (std::isnan(r) || std::isnan(g)) ok = std::isnan(r) && std::isnan(g);
                else if (std::isinf(r) || std::isinf(g)) ok = r == g;
                else if (eps_of(dt) == 0) ok = std::fabs(g - r) <= 1;
                // One unit of the output type, the compute tolerance relative to the value and
                // (for cancellations) to the tensor's largest value, and a subnormal step.
                else ok = std::fabs(g - r) <= eps_of(dt) * std::fabs(r) + rel * (std::fabs(r) + 0.1 * scale) + min_step(dt);
                if (!ok && bad++ < 8)
                    ADD_FAILURE() << "tensor " << k << " scalar " << i << ": cuda " << g << ", cpu " << r;
            }
            EXPECT_GT(changed, 0u) << "the CPU backend wrote nothing into tensor " << k;
        }
        for (int k : raw_outs) {
            std::vector<unsigned char> back(rbuf[k].size());
            ASSERT_EQ(cudaMemcpy(back.data(), rdev[k], back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
            EXPECT_EQ(back, rbuf[k]) << "raw buffer " << k;
        }
        for (void* p : dev) cudaFree(p);
        for (void* p : rdev) cudaFree(p);
    }
};

const cudnnDataType_t kFloatTypes[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_DOUBLE};

std::string name_of(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_FLOAT: return "f32";
        case CUDNN_DATA_HALF: return "f16";
        case CUDNN_DATA_BFLOAT16: return "bf16";
        case CUDNN_DATA_DOUBLE: return "f64";
        case CUDNN_DATA_INT8: return "i8";
        default: return std::to_string(static_cast<int>(dt));
    }
}

// Scaling factors in the type the library reads for `dt`.
struct Scalars {
    float f[3];
    double d[3];
    bool dbl;
    Scalars(double a, double b, double c, cudnnDataType_t dt) : f{float(a), float(b), float(c)}, d{a, b, c}, dbl(dt == CUDNN_DATA_DOUBLE) {}
    const void* operator[](int i) const { return dbl ? static_cast<const void*>(&d[i]) : &f[i]; }
};

// ---- Activation ----

TEST_F(GpuOps, ActivationMatchesCpu) {
    std::mt19937_64 rng(1);
    const cudnnActivationMode_t modes[] = {CUDNN_ACTIVATION_SIGMOID, CUDNN_ACTIVATION_RELU,  CUDNN_ACTIVATION_TANH,
                                           CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_ACTIVATION_ELU,
                                           CUDNN_ACTIVATION_IDENTITY, CUDNN_ACTIVATION_SWISH};
    struct Shape {
        std::vector<int> dims;
        const char* layout;
        int offset;
    };
    const Shape shapes[] = {{{3, 17, 31, 29}, "nchw", 0},   // flat, vector tail
                            {{2, 16, 8, 8}, "nhwc", 0},     // flat, whole vectors
                            {{2, 16, 8, 8}, "nchw", 1},     // flat, misaligned: scalar path
                            {{2, 5, 7, 3}, "gaps", 0},      // strided
                            {{2, 3, 4, 5, 6}, "nhwc", 0}};  // 5-D
    cudnnActivationDescriptor_t ad;
    ASSERT_OK(cudnnCreateActivationDescriptor(&ad));
    for (auto mode : modes)
        for (auto dt : kFloatTypes)
            for (const Shape& s : shapes)
                for (int variant = 0; variant < 3; ++variant) {  // 0: plain, 1: alpha / beta, 2: NaN inputs, propagate
                    const bool prop = variant == 2;
                    ASSERT_OK(cudnnSetActivationDescriptor(ad, mode, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                                           mode == CUDNN_ACTIVATION_CLIPPED_RELU ? 1.25 : 0.8));
                    ASSERT_OK(cudnnSetActivationDescriptorSwishBeta(ad, 1.7));
                    const Scalars sc(variant == 1 ? 0.75 : 1.0, variant == 1 ? -0.5 : 0.0, 0, dt);
                    Tensor x, y, dy, dx;
                    make(x, dt, s.dims, s.layout, s.offset);
                    make(y, dt, s.dims, s.layout, s.offset);
                    make(dy, dt, s.dims, s.layout, s.offset);
                    make(dx, dt, s.dims, s.layout, s.offset);
                    fill(x, -4, 4, rng, prop ? 0.05 : 0);
                    fill(y, 0.05, 0.95, rng);  // a valid sigmoid / tanh output range
                    fill(dy, -2, 2, rng);
                    if (variant == 1) fill(dx, -1, 1, rng); else poison(dx);
                    Tensor yout;
                    make(yout, dt, s.dims, s.layout, s.offset);
                    if (variant == 1) fill(yout, -1, 1, rng); else poison(yout);
                    const std::string what = "activation mode " + std::to_string(mode) + " " + name_of(dt) + " " +
                                             s.layout + " offset " + std::to_string(s.offset) + " variant " +
                                             std::to_string(variant);
                    compare(what + " fwd", {&x, &yout}, {1}, 2e-6, [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                        return cudnnActivationForward(h, ad, sc[0], x.desc, p[0], sc[1], yout.desc, p[1]);
                    });
                    compare(what + " bwd", {&y, &dy, &x, &dx}, {3}, 2e-6,
                            [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                                return cudnnActivationBackward(h, ad, sc[0], y.desc, p[0], dy.desc, p[1], x.desc, p[2],
                                                               sc[1], dx.desc, p[3]);
                            });
                }
    // In place: y = x, dx = dy.
    ASSERT_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_ELU, CUDNN_NOT_PROPAGATE_NAN, 1.0));
    for (auto dt : kFloatTypes) {
        Tensor x, y, dy;
        make(x, dt, {4, 12, 9, 7}, "nhwc");
        make(y, dt, {4, 12, 9, 7}, "nhwc");
        make(dy, dt, {4, 12, 9, 7}, "nhwc");
        fill(x, -3, 3, rng);
        fill(y, -1, 3, rng);
        fill(dy, -1, 1, rng);
        const Scalars sc(1, 0, 0, dt);
        compare("activation in place " + name_of(dt), {&x}, {0}, 2e-6, [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
            return cudnnActivationForward(h, ad, sc[0], x.desc, p[0], sc[1], x.desc, p[0]);
        });
        compare("activation bwd in place " + name_of(dt), {&y, &dy, &x}, {1}, 2e-6,
                [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                    return cudnnActivationBackward(h, ad, sc[0], y.desc, p[0], dy.desc, p[1], x.desc, p[2], sc[1], dy.desc, p[1]);
                });
    }
    cudnnDestroyActivationDescriptor(ad);
}

// ---- Softmax ----

TEST_F(GpuOps, SoftmaxMatchesCpu) {
    std::mt19937_64 rng(2);
    struct Shape {
        std::vector<int> dims;
        const char* layout;
        cudnnSoftmaxMode_t mode;
        const char* path;
        int offset = 0;  // scalars every pointer is moved by (misaligned 16-bit pairs)
    };
    const Shape shapes[] = {
        // Register column kernels (FLOAT / HALF / BFLOAT16, C <= 256; DOUBLE takes the
        // shared-memory tile): odd H*W (one position a lane), even H*W (16-bit pairs) with a
        // partial last tile, every slot used (C = 64, 256) or not (37, 100), misaligned pairs.
        {{2, 37, 9, 11}, "nchw", CUDNN_SOFTMAX_MODE_CHANNEL, "column registers, odd inner, tail"},
        {{3, 64, 8, 8}, "nchw", CUDNN_SOFTMAX_MODE_CHANNEL, "column registers, small slots full"},
        {{2, 256, 6, 10}, "nchw", CUDNN_SOFTMAX_MODE_CHANNEL, "column registers, large slots full, tail"},
        {{2, 100, 5, 6}, "nchw", CUDNN_SOFTMAX_MODE_CHANNEL, "column registers, large slots partial"},
        {{2, 256, 4, 8}, "nchw", CUDNN_SOFTMAX_MODE_CHANNEL, "column registers, misaligned", 1},
        {{2, 300, 3, 5}, "nchw", CUDNN_SOFTMAX_MODE_CHANNEL, "column tile over 48 KiB of shared memory"},
        {{2, 37, 9, 11}, "nhwc", CUDNN_SOFTMAX_MODE_CHANNEL, "row warp, scalar"},
        {{4, 64, 5, 3}, "nhwc", CUDNN_SOFTMAX_MODE_CHANNEL, "row warp, vectors"},
        {{2, 1000, 1, 3}, "nhwc", CUDNN_SOFTMAX_MODE_CHANNEL, "row warp, long"},
        {{2, 1500, 2, 2}, "nhwc", CUDNN_SOFTMAX_MODE_CHANNEL, "row block"},
        {{2, 2000, 3, 2}, "nchw", CUDNN_SOFTMAX_MODE_CHANNEL, "long column"},
        {{3, 20, 10, 10}, "nchw", CUDNN_SOFTMAX_MODE_INSTANCE, "row block (instance)"},
        {{3, 5, 6, 7}, "nhwc", CUDNN_SOFTMAX_MODE_INSTANCE, "row warp (instance)"},
        {{6, 5, 4, 3}, "cnhw", CUDNN_SOFTMAX_MODE_INSTANCE, "column (instance, N innermost)"},
        {{2, 5, 7, 3}, "gaps", CUDNN_SOFTMAX_MODE_CHANNEL, "generic"},
        {{2, 5, 7, 3}, "gaps", CUDNN_SOFTMAX_MODE_INSTANCE, "generic (instance)"},
        {{16, 10}, "nchw", CUDNN_SOFTMAX_MODE_CHANNEL, "2-D"},
        {{2, 6, 3, 4, 5}, "nchw", CUDNN_SOFTMAX_MODE_CHANNEL, "5-D column"},
    };
    const cudnnSoftmaxAlgorithm_t algos[] = {CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_LOG};
    for (const Shape& s : shapes)
        for (auto dt : kFloatTypes)
            for (auto algo : algos)
                for (int variant = 0; variant < 2; ++variant) {
                    const Scalars sc(variant ? 1.5 : 1.0, variant ? 0.5 : 0.0, 0, dt);
                    Tensor x, y, dy, dx;
                    make(x, dt, s.dims, s.layout, s.offset);
                    make(y, dt, s.dims, s.layout, s.offset);
                    make(dy, dt, s.dims, s.layout, s.offset);
                    make(dx, dt, s.dims, s.layout, s.offset);
                    fill(x, -6, 6, rng);
                    fill(dy, -1, 1, rng);
                    if (variant) fill(y, -1, 1, rng), fill(dx, -1, 1, rng);
                    else poison(y), poison(dx);
                    const std::string what = std::string("softmax ") + s.path + " " + name_of(dt) + " algo " +
                                             std::to_string(algo) + " variant " + std::to_string(variant);
                    compare(what + " fwd", {&x, &y}, {1}, 2e-5, [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                        return cudnnSoftmaxForward(h, algo, s.mode, sc[0], x.desc, p[0], sc[1], y.desc, p[1]);
                    });
                    // Backward from a valid forward result (computed on the CPU, shared by both).
                    Tensor yv;
                    make(yv, dt, s.dims, s.layout, s.offset);
                    poison(yv);
                    const Scalars one(1, 0, 0, dt);
                    const size_t shift = s.offset * scalar_size(dt);
                    ASSERT_OK(cudnnSoftmaxForward(cpu, algo, s.mode, one[0], x.desc, x.bytes.data() + shift, one[1],
                                                  yv.desc, yv.bytes.data() + shift));
                    compare(what + " bwd", {&yv, &dy, &dx}, {2}, 2e-5,
                            [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                                return cudnnSoftmaxBackward(h, algo, s.mode, sc[0], yv.desc, p[0], dy.desc, p[1], sc[1],
                                                            dx.desc, p[2]);
                            });
                }
    // In place (x == y; dx == dy), every data type and two channel counts.
    for (auto dt : kFloatTypes)
        for (int c : {24, 64})
            for (auto mode : {CUDNN_SOFTMAX_MODE_CHANNEL, CUDNN_SOFTMAX_MODE_INSTANCE})
                for (const char* layout : {"nchw", "nhwc"}) {
                    SCOPED_TRACE(std::string(name_of(dt)) + " c=" + std::to_string(c));
                    Tensor x, y, dy;
                    make(x, dt, {3, c, 5, 7}, layout);
                    make(y, dt, {3, c, 5, 7}, layout);
                    make(dy, dt, {3, c, 5, 7}, layout);
                    fill(x, -4, 4, rng);
                    fill(dy, -1, 1, rng);
                    const Scalars one(1, 0, 0, dt);
                    poison(y);
                    ASSERT_OK(cudnnSoftmaxForward(cpu, CUDNN_SOFTMAX_ACCURATE, mode, one[0], x.desc, x.bytes.data(),
                                                  one[1], y.desc, y.bytes.data()));
                    compare(std::string("softmax in place ") + layout, {&x}, {0}, 2e-5,
                            [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                                return cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, mode, one[0], x.desc, p[0],
                                                           one[1], x.desc, p[0]);
                            });
                    compare(std::string("softmax bwd in place ") + layout, {&y, &dy}, {1}, 2e-5,
                            [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                                return cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_ACCURATE, mode, one[0], y.desc, p[0],
                                                            dy.desc, p[1], one[1], dy.desc, p[1]);
                            });
                }
}

// ---- Add and op-tensor ----

TEST_F(GpuOps, AddTensorMatchesCpu) {
    std::mt19937_64 rng(3);
    struct Case {
        std::vector<int> c, a;
        const char* layout;
        int offset;
    };
    const Case cases[] = {
        {{4, 24, 9, 7}, {1, 24, 1, 1}, "nchw", 0},    // bias, a vector's lanes share it (inner 63: per lane)
        {{4, 24, 8, 8}, {1, 24, 1, 1}, "nchw", 0},    // inner 64: one bias per vector
        {{4, 24, 8, 8}, {1, 24, 1, 1}, "nhwc", 0},    // inner 1, C % 8 == 0: contiguous bias vectors
        {{4, 13, 8, 8}, {1, 13, 1, 1}, "nhwc", 0},    // inner 1, odd C
        {{4, 24, 8, 8}, {1, 1, 1, 1}, "nchw", 0},     // scalar
        {{4, 24, 8, 8}, {4, 24, 8, 8}, "nchw", 1},    // full, misaligned
        {{4, 24, 8, 8}, {1, 24, 8, 8}, "nchw", 0},    // 1xCxHxW
        {{4, 24, 8, 8}, {1, 1, 8, 8}, "nhwc", 0},     // two runs in NHWC: strided kernel
        {{4, 6, 5, 7}, {1, 6, 1, 1}, "gaps", 0},      // strided
        {{2, 8, 3, 4, 5}, {1, 8, 1, 1, 1}, "nhwc", 0},  // 5-D
    };
    for (const Case& k : cases)
        for (cudnnDataType_t dt : {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_DOUBLE,
                                   CUDNN_DATA_INT8})
            for (double beta : {0.0, 1.0}) {
                Tensor a, c;
                make(a, dt, k.a, k.layout, k.offset);
                make(c, dt, k.c, k.layout, k.offset);
                // INT8 values round to integers: keep A away from 0, or a one-element bias can
                // round to 0 and leave C unchanged (the "wrote nothing" check would then fire).
                fill(a, dt == CUDNN_DATA_INT8 ? 1 : -4, 4, rng);
                if (beta != 0) fill(c, -4, 4, rng);
                else if (dt == CUDNN_DATA_INT8) fill(c, 50, 50, rng);
                else poison(c);
                const Scalars sc(dt == CUDNN_DATA_INT8 ? 3.0 : 0.75, beta, 0, dt);
                compare("add " + name_of(dt) + " " + k.layout + " beta " + std::to_string(beta), {&a, &c}, {1}, 2e-6,
                        [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                            return cudnnAddTensor(h, sc[0], a.desc, p[0], sc[1], c.desc, p[1]);
                        });
            }
}

TEST_F(GpuOps, OpTensorMatchesCpu) {
    std::mt19937_64 rng(4);
    cudnnOpTensorDescriptor_t od;
    ASSERT_OK(cudnnCreateOpTensorDescriptor(&od));
    struct Case {
        std::vector<int> c, b;
        const char* layout;
        int offset;
    };
    const Case shapes[] = {{{3, 16, 9, 11}, {3, 16, 9, 11}, "nchw", 0},
                           {{3, 16, 8, 8}, {1, 16, 1, 1}, "nhwc", 0},
                           {{3, 16, 8, 8}, {1, 16, 1, 1}, "nchw", 0},
                           {{3, 16, 8, 8}, {1, 1, 1, 1}, "nchw", 1},
                           {{3, 5, 6, 7}, {1, 5, 6, 7}, "gaps", 0}};
    const cudnnOpTensorOp_t ops[] = {CUDNN_OP_TENSOR_ADD, CUDNN_OP_TENSOR_MUL, CUDNN_OP_TENSOR_MIN,
                                     CUDNN_OP_TENSOR_MAX, CUDNN_OP_TENSOR_SQRT, CUDNN_OP_TENSOR_NOT};
    // (A and B, C) from cuDNN's table; the same-type ones run typed kernels, the others in double.
    const std::pair<cudnnDataType_t, cudnnDataType_t> types[] = {
        {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},      {CUDNN_DATA_HALF, CUDNN_DATA_HALF},
        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16}, {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE},
        {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},       {CUDNN_DATA_INT8, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16},   {CUDNN_DATA_INT8, CUDNN_DATA_INT8}};
    for (const Case& s : shapes)
        for (auto op : ops)
            for (const auto& [ab, cdt] : types)
                for (int variant = 0; variant < 2; ++variant) {
                    const bool prop = variant == 1;
                    ASSERT_OK(cudnnSetOpTensorDescriptor(od, op, cdt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
                                                         prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN));
                    Tensor a, b, c;
                    make(a, ab, s.c, s.layout, s.offset);
                    make(b, ab, s.b, s.layout, s.offset);
                    make(c, cdt, s.c, s.layout, s.offset);
                    const bool ints = ab == CUDNN_DATA_INT8;
                    const double nan_frac = prop && !ints ? 0.05 : 0;
                    fill(a, op == CUDNN_OP_TENSOR_SQRT ? 0 : -4, 4, rng, nan_frac);
                    fill(b, -4, 4, rng, nan_frac);
                    if (variant) fill(c, -2, 2, rng);
                    else if (cdt == CUDNN_DATA_INT8) fill(c, 50, 50, rng);
                    else poison(c);
                    const Scalars sc(0.5, ints ? 2.0 : -1.5, variant ? 0.25 : 0.0, cdt);
                    compare("op " + std::to_string(op) + " " + name_of(ab) + "->" + name_of(cdt) + " " + s.layout +
                                " variant " + std::to_string(variant),
                            {&a, &b, &c}, {2}, 2e-6, [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                                return cudnnOpTensor(h, od, sc[0], a.desc, p[0], sc[1], b.desc, p[1], sc[2], c.desc, p[2]);
                            });
                }
    cudnnDestroyOpTensorDescriptor(od);
}

// ---- Reduce ----

TEST_F(GpuOps, ReduceMatchesCpu) {
    std::mt19937_64 rng(5);
    cudnnReduceTensorDescriptor_t rd;
    ASSERT_OK(cudnnCreateReduceTensorDescriptor(&rd));
    struct Case {
        std::vector<int> a, c;
        const char* layout;
    };
    const Case shapes[] = {{{3, 16, 9, 11}, {1, 16, 1, 1}, "nchw"},  {{3, 16, 9, 11}, {3, 1, 9, 11}, "nhwc"},
                           {{3, 16, 9, 11}, {1, 1, 1, 1}, "gaps"},   {{1, 1, 300, 400}, {1, 1, 1, 1}, "nchw"},
                           {{4, 70000}, {4, 1}, "nchw"},            {{4, 70000}, {1, 70000}, "nchw"},
                           {{2, 3, 4, 5, 6}, {2, 1, 4, 1, 6}, "nhwc"}};
    const cudnnReduceTensorOp_t ops[] = {CUDNN_REDUCE_TENSOR_ADD,   CUDNN_REDUCE_TENSOR_MUL,  CUDNN_REDUCE_TENSOR_MIN,
                                         CUDNN_REDUCE_TENSOR_MAX,   CUDNN_REDUCE_TENSOR_AMAX, CUDNN_REDUCE_TENSOR_AVG,
                                         CUDNN_REDUCE_TENSOR_NORM1, CUDNN_REDUCE_TENSOR_NORM2,
                                         CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS};
    const std::pair<cudnnDataType_t, cudnnDataType_t> types[] = {{CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
                                                                 {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE},
                                                                 {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},
                                                                 {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16}};
    for (const Case& s : shapes)
        for (auto op : ops)
            for (const auto& [adt, cdt] : types)
                for (int variant = 0; variant < 2; ++variant) {
                    const bool idx = op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX ||
                                     op == CUDNN_REDUCE_TENSOR_AMAX;
                    ASSERT_OK(cudnnSetReduceTensorDescriptor(
                        rd, op, cdt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
                        variant ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                        idx ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES : CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
                    Tensor a, c;
                    make(a, adt, s.a, s.layout);
                    make(c, cdt, s.c, s.layout);
                    const bool product = op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
                    // Products of many factors near 1; small integers make ties for the indices.
                    fill(a, product ? 0.999 : -8, product ? 1.001 : 8, rng, variant && idx ? 0.01 : 0);
                    if (!product && adt != CUDNN_DATA_HALF && adt != CUDNN_DATA_BFLOAT16 && idx)
                        for (size_t i = 0; i < a.scalars; ++i) {
                            const size_t es = scalar_size(adt);
                            const double v = decode(adt, &a.bytes[i * es]);
                            if (!std::isnan(v)) encode(adt, &a.bytes[i * es], std::round(v));
                        }
                    if (variant) fill(c, -1, 1, rng); else poison(c);
                    size_t ws = 0, is = 0;
                    ASSERT_OK(cudnnGetReductionWorkspaceSize(gpu, rd, a.desc, c.desc, &ws));
                    ASSERT_OK(cudnnGetReductionIndicesSize(gpu, rd, a.desc, c.desc, &is));
                    const Scalars sc(variant ? 2.0 : 1.0, variant ? 0.5 : 0.0, 0, cdt);
                    std::vector<int> raw_outs;
                    if (is) raw_outs.push_back(0);
                    compare("reduce " + std::to_string(op) + " " + name_of(adt) + "->" + name_of(cdt) + " " + s.layout +
                                " a " + std::to_string(s.a.size()) + "-D variant " + std::to_string(variant),
                            {&a, &c}, {1}, 1e-9,
                            [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>& raw) {
                                return cudnnReduceTensor(h, rd, raw[0], is, raw[1], ws, sc[0], a.desc, p[0], sc[1],
                                                         c.desc, p[1]);
                            },
                            {is, ws}, raw_outs);
                }
    cudnnDestroyReduceTensorDescriptor(rd);
}

// ---- Transforms ----

TEST_F(GpuOps, TransformMatchesCpu) {
    std::mt19937_64 rng(6);
    struct Case {
        cudnnDataType_t x, y;
        const char* xl;
        const char* yl;
        std::vector<int> dims;
    };
    const Case cases[] = {
        {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, "nchw", "nhwc", {3, 17, 9, 11}},
        {CUDNN_DATA_HALF, CUDNN_DATA_HALF, "nhwc", "nchw", {3, 17, 9, 11}},
        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, "nchw", "nchw", {3, 17, 9, 11}},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, "gaps", "nchw", {3, 5, 9, 11}},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, "nchw", "nchw", {3, 17, 9, 11}},
        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, "nchw", "nhwc", {3, 17, 9, 11}},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, "nhwc", "nchw", {3, 17, 9, 11}},
        {CUDNN_DATA_INT8, CUDNN_DATA_INT8x4, "nchw", "vect", {2, 16, 5, 7}},
        {CUDNN_DATA_INT8x4, CUDNN_DATA_INT8, "vect", "nhwc", {2, 16, 5, 7}},
    };
    for (const Case& k : cases)
        for (int variant = 0; variant < 2; ++variant) {
            Tensor x, y;
            make(x, k.x, k.dims, k.xl);
            make(y, k.y, k.dims, k.yl);
            fill(x, -100, 100, rng);
            if (variant) fill(y, -50, 50, rng);
            else if (scalar_size(k.y) == 1) fill(y, 7, 7, rng);
            else poison(y);
            const Scalars sc(variant ? 0.5 : 1.0, variant ? 0.25 : 0.0, 0, k.y);
            compare("transform " + name_of(k.x) + " " + k.xl + " -> " + name_of(k.y) + " " + k.yl, {&x, &y}, {1}, 2e-6,
                    [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
                        return cudnnTransformTensor(h, sc[0], x.desc, p[0], sc[1], y.desc, p[1]);
                    });
        }
    // Padding and folding (cudnnTransformTensorEx) and filters.
    cudnnTensorTransformDescriptor_t td;
    ASSERT_OK(cudnnCreateTensorTransformDescriptor(&td));
    struct Ex {
        std::vector<int> dims;
        int32_t pb[4], pa[4];
        uint32_t fold[2];
        cudnnFoldingDirection_t dir;
    };
    const Ex exs[] = {{{2, 3, 8, 6}, {0, 0, 0, 0}, {0, 0, 0, 0}, {2, 2}, CUDNN_TRANSFORM_FOLD},
                      {{2, 3, 7, 5}, {0, 1, 1, 0}, {0, 0, 0, 1}, {2, 3}, CUDNN_TRANSFORM_FOLD},
                      {{2, 12, 3, 4}, {0, 0, 0, 0}, {0, 0, 0, 0}, {2, 2}, CUDNN_TRANSFORM_UNFOLD},
                      {{2, 3, 5, 5}, {1, 0, 2, 1}, {0, 2, 1, 3}, {1, 1}, CUDNN_TRANSFORM_FOLD}};
    for (const Ex& e : exs) {
        ASSERT_OK(cudnnSetTensorTransformDescriptor(td, 4, CUDNN_TENSOR_NCHW, e.pb, e.pa, e.fold, e.dir));
        Tensor x, y;
        make(x, CUDNN_DATA_FLOAT, e.dims, "nchw");
        fill(x, -10, 10, rng);
        cudnnTensorDescriptor_t yd;
        ASSERT_OK(cudnnCreateTensorDescriptor(&yd));
        size_t bytes = 0;
        ASSERT_OK(cudnnInitTransformDest(td, x.desc, yd, &bytes));
        cudnnDataType_t dt;
        int nb, yd_dims[4], yd_strides[4];
        ASSERT_OK(cudnnGetTensorNdDescriptor(yd, 4, &dt, &nb, yd_dims, yd_strides));
        cudnnDestroyTensorDescriptor(yd);
        make(y, CUDNN_DATA_FLOAT, std::vector<int>(yd_dims, yd_dims + 4), "nhwc");
        poison(y);
        const Scalars sc(1, 0, 0, CUDNN_DATA_FLOAT);
        compare("transformEx", {&x, &y}, {1}, 0, [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
            return cudnnTransformTensorEx(h, td, sc[0], x.desc, p[0], sc[1], y.desc, p[1]);
        });
    }
    // A filter from KCRS to KRSC.
    const int32_t z[4] = {0, 0, 0, 0};
    const uint32_t f11[2] = {1, 1};
    ASSERT_OK(cudnnSetTensorTransformDescriptor(td, 4, CUDNN_TENSOR_NHWC, z, z, f11, CUDNN_TRANSFORM_FOLD));
    cudnnFilterDescriptor_t fx, fy;
    ASSERT_OK(cudnnCreateFilterDescriptor(&fx));
    ASSERT_OK(cudnnCreateFilterDescriptor(&fy));
    ASSERT_OK(cudnnSetFilter4dDescriptor(fx, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 16, 8, 3, 3));
    ASSERT_OK(cudnnSetFilter4dDescriptor(fy, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 16, 8, 3, 3));
    Tensor wx, wy;
    make(wx, CUDNN_DATA_FLOAT, {16, 8, 3, 3}, "nchw");
    make(wy, CUDNN_DATA_FLOAT, {16, 8, 3, 3}, "nhwc");
    fill(wx, -1, 1, rng);
    poison(wy);
    const Scalars sc(1, 0, 0, CUDNN_DATA_FLOAT);
    compare("transform filter", {&wx, &wy}, {1}, 0, [&](cudnnHandle_t h, std::vector<void*>& p, std::vector<void*>&) {
        return cudnnTransformFilter(h, td, sc[0], fx, p[0], sc[1], fy, p[1]);
    });
    cudnnDestroyFilterDescriptor(fx);
    cudnnDestroyFilterDescriptor(fy);
    cudnnDestroyTensorTransformDescriptor(td);
}

}  // namespace
