// Trains a small CNN on Fashion-MNIST entirely through the cuDNN API:
//
//   x [N,1,28,28] -> conv 3x3 -> batch norm -> ReLU -> max pool 2x2     [N,C1,14,14]
//                 -> conv 3x3 -> batch norm -> ReLU -> max pool 2x2     [N,C2,7,7]
//                 -> dense layer as a 7x7 convolution, + bias           [N,10,1,1]
//                 -> log-softmax, cross-entropy loss
//
// Forward and backward of every layer are cuDNN calls; the gradient of the loss comes from
// cudnnSoftmaxBackward; SGD with momentum updates the weights with cudnnOpTensor and
// cudnnAddTensor. The host only prepares batches (normalized pixels, one-hot targets) and
// reads the log-probabilities back to count the loss and the accuracy.
//
// The same code runs on the CPU (odnn's CPU backend, host pointers) and on a GPU (device
// pointers); device.cpp decides which. Only <cudnn.h> is included, so the program builds
// against NVIDIA's cuDNN as well as odnn.
#include <cudnn.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dataset.hpp"
#include "device.hpp"

namespace fmnist {
namespace {

struct Options {
    std::string data_dir = kDefaultDataDir;
    DeviceChoice device = DeviceChoice::automatic;
    int epochs = 2;
    int batch = 128;
    int64_t train_images = 0;  // 0: all
    int64_t test_images = 0;   // 0: all
    int c1 = 16;
    int c2 = 32;
    double lr = 0.1;
    double momentum = 0.9;
    double weight_decay = 5e-4;
    uint32_t seed = 1;
    bool check_loss_falls = false;
    bool verbose = false;
    bool find_algorithms = true;
};

const char* kUsage =
    "usage: fashion_mnist [options]\n"
    "Trains a small CNN on Fashion-MNIST through the cuDNN API and reports test accuracy.\n"
    "  --data DIR            idx files (default /usr/share/datasets/fashion-mnist, Debian's\n"
    "                        package dataset-fashion-mnist)\n"
    "  --device auto|cpu|gpu where tensors live (default auto: the GPU when the cuDNN handle has one)\n"
    "  --epochs N            passes over the training set (default 2)\n"
    "  --batch N             mini-batch size (default 128)\n"
    "  --train-images N      use the first N training images (default all 60000)\n"
    "  --test-images N       evaluate on the first N test images (default all 10000)\n"
    "  --channels C1,C2      channels of the two convolutions (default 16,32)\n"
    "  --lr X                peak learning rate, cosine-decayed to 0 (default 0.1)\n"
    "  --momentum X          SGD momentum (default 0.9)\n"
    "  --weight-decay X      L2 weight decay on the convolution weights (default 5e-4)\n"
    "  --seed N              initialization and shuffling seed (default 1)\n"
    "  --check-loss-falls    exit 1 unless the loss falls (training loss, first vs last steps,\n"
    "                        and test loss before vs after training)\n"
    "  --no-find             take cuDNN's heuristic algorithm choice instead of timing the\n"
    "                        candidates (cudnnFind*AlgorithmEx)\n"
    "  --verbose             print the convolution algorithms cuDNN picks\n";

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "fashion_mnist: %s\n%s", msg.c_str(), kUsage);
    std::exit(2);
}

int64_t parse_int(const char* opt, const char* v, int64_t lo, int64_t hi) {
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        usage_error(std::string(opt) + ": expected an integer in [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "], got '" + v + "'");
    return x;
}

double parse_double(const char* opt, const char* v, double lo, double hi) {
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi))
        usage_error(std::string(opt) + ": expected a number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    "], got '" + v + "'");
    return x;
}

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (a == "--data") {
            o.data_dir = value();
        } else if (a == "--device") {
            const std::string v = value();
            if (v == "auto") o.device = DeviceChoice::automatic;
            else if (v == "cpu") o.device = DeviceChoice::cpu;
            else if (v == "gpu") o.device = DeviceChoice::gpu;
            else usage_error("--device: expected auto, cpu or gpu, got '" + v + "'");
        } else if (a == "--epochs") {
            o.epochs = static_cast<int>(parse_int("--epochs", value(), 1, 1000));
        } else if (a == "--batch") {
            o.batch = static_cast<int>(parse_int("--batch", value(), 1, 4096));
        } else if (a == "--train-images") {
            o.train_images = parse_int("--train-images", value(), 1, INT64_MAX);
        } else if (a == "--test-images") {
            o.test_images = parse_int("--test-images", value(), 1, INT64_MAX);
        } else if (a == "--channels") {
            const std::string v = value();
            const size_t comma = v.find(',');
            if (comma == std::string::npos) usage_error("--channels: expected C1,C2, got '" + v + "'");
            o.c1 = static_cast<int>(parse_int("--channels", v.substr(0, comma).c_str(), 1, 1024));
            o.c2 = static_cast<int>(parse_int("--channels", v.substr(comma + 1).c_str(), 1, 1024));
        } else if (a == "--lr") {
            o.lr = parse_double("--lr", value(), 0, 100);
        } else if (a == "--momentum") {
            o.momentum = parse_double("--momentum", value(), 0, 0.999);
        } else if (a == "--weight-decay") {
            o.weight_decay = parse_double("--weight-decay", value(), 0, 1);
        } else if (a == "--seed") {
            o.seed = static_cast<uint32_t>(parse_int("--seed", value(), 0, UINT32_MAX));
        } else if (a == "--check-loss-falls") {
            o.check_loss_falls = true;
        } else if (a == "--no-find") {
            o.find_algorithms = false;
        } else if (a == "--verbose") {
            o.verbose = true;
        } else {
            usage_error("unknown option '" + a + "'");
        }
    }
    return o;
}

// Deterministic on every platform: std::mt19937 is specified bit for bit, the
// distributions of <random> are not.
struct Rng {
    std::mt19937 gen;
    explicit Rng(uint32_t seed) : gen(seed) {}
    double uniform() { return (gen() + 0.5) / 4294967296.0; }  // (0, 1)
    double normal() { return std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); }
    uint32_t below(uint32_t n) { return static_cast<uint32_t>((static_cast<uint64_t>(gen()) * n) >> 32); }
};

// ---- cuDNN descriptors, created once, set per batch size ----

cudnnTensorDescriptor_t make_tensor() {
    cudnnTensorDescriptor_t d;
    FMNIST_CUDNN(cudnnCreateTensorDescriptor(&d));
    return d;
}

void set4d(cudnnTensorDescriptor_t d, int n, int c, int h, int w) {
    FMNIST_CUDNN(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
}

// Parameters live in one buffer (and their gradients and momenta in two more of the same
// layout), so one cuDNN call updates them all. Segments start on 32-float boundaries.
struct ParamLayout {
    size_t w1, w2, w3;                  // convolution weights (decayed)
    size_t decayed;                     // end of the decayed part
    size_t b3, gamma1, beta1, gamma2, beta2;
    size_t total;
};

size_t align32(size_t x) { return (x + 31) / 32 * 32; }

// A convolution with the algorithms cuDNN suggests for the current batch size.
struct Conv {
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnConvolutionFwdAlgo_t fwd{};
    cudnnConvolutionBwdDataAlgo_t bwd_data{};
    cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
};

class Network {
public:
    Network(cudnnHandle_t h, Memory* mem, const Options& o, int max_batch);
    ~Network();

    // Forward pass of `n` images at x_ (host has uploaded them). Leaves log-probabilities
    // in logp_. Training mode uses batch statistics and updates the running ones.
    void forward(int n, bool training);
    // Backward pass from the one-hot targets the host uploaded to target(), then the SGD step.
    void backward_and_update(int n, float lr);

    float* x() { return x_; }
    float* target() { return target_; }
    const float* logp() const { return logp_; }
    void describe(FILE* f) const;
    // A workspace of at least `bytes` (grown, never shrunk).
    void* workspace_for(size_t bytes) {
        ensure_workspace(bytes);
        return workspace_;
    }

private:
    // The buffers of one convolution: input x, output y, gradient at the output dy,
    // weights w, their gradient dw, gradient at the input dx (null for the first layer).
    struct Operands {
        cudnnTensorDescriptor_t x_d;
        const float* x;
        cudnnTensorDescriptor_t y_d;
        float* y;
        float* dy;
        const float* w;
        float* dw;
        float* dx;
    };
    void set_batch(int n);
    void pick_algorithms(Conv* c, const Operands& b, bool find);
    void ensure_workspace(size_t bytes);
    void init_params();
    void build();
    void destroy_descriptors();

    cudnnHandle_t h_;
    Memory* mem_;
    Options o_;
    int max_batch_;
    int batch_ = -1;
    int64_t bn_updates_ = 0;

    ParamLayout lay_{};
    float* params_ = nullptr;
    float* grads_ = nullptr;
    float* momenta_ = nullptr;
    // Batch norm running statistics and the saved batch statistics of the last forward.
    float *mean1_, *var1_, *mean2_, *var2_, *save_mean1_, *save_istd1_, *save_mean2_, *save_istd2_;

    // Activations and their gradients.
    float *x_, *c1_, *b1_, *a1_, *p1_, *c2_, *b2_, *a2_, *p2_, *z_, *logp_, *target_;
    float *dz_, *dp2_, *da2_, *db2_, *dc2_, *dp1_, *da1_, *db1_, *dc1_;
    void* workspace_ = nullptr;
    size_t workspace_bytes_ = 0;

    cudnnTensorDescriptor_t x_d_ = nullptr, c1_d_ = nullptr, p1_d_ = nullptr, c2_d_ = nullptr, p2_d_ = nullptr,
                            z_d_ = nullptr;
    cudnnTensorDescriptor_t bn1_d_ = nullptr, bn2_d_ = nullptr, bias_d_ = nullptr, all_d_ = nullptr,
                            decayed_d_ = nullptr, rest_d_ = nullptr;
    Conv conv1_, conv2_, fc_;
    cudnnActivationDescriptor_t relu_ = nullptr;
    cudnnPoolingDescriptor_t pool_ = nullptr;
    cudnnOpTensorDescriptor_t add_ = nullptr;
};

constexpr double kBnEpsilon = 1e-5;
// Largest workspace an algorithm may ask for; others are passed over.
constexpr size_t kWorkspaceLimit = size_t{512} << 20;

Network::Network(cudnnHandle_t h, Memory* mem, const Options& o, int max_batch)
    : h_(h), mem_(mem), o_(o), max_batch_(max_batch) {
    try {
        build();
    } catch (...) {
        destroy_descriptors();  // buffers belong to *mem and go with it
        throw;
    }
}

void Network::build() {
    Memory* mem = mem_;
    const int c1 = o_.c1, c2 = o_.c2;
    size_t at = 0;
    auto seg = [&](size_t count) {
        const size_t start = at;
        at = align32(at + count);
        return start;
    };
    lay_.w1 = seg(size_t(c1) * 1 * 3 * 3);
    lay_.w2 = seg(size_t(c2) * c1 * 3 * 3);
    lay_.w3 = seg(size_t(kClasses) * c2 * 7 * 7);
    lay_.decayed = at;
    lay_.b3 = seg(kClasses);
    lay_.gamma1 = seg(c1);
    lay_.beta1 = seg(c1);
    lay_.gamma2 = seg(c2);
    lay_.beta2 = seg(c2);
    lay_.total = at;

    params_ = mem->alloc_floats(lay_.total);
    grads_ = mem->alloc_floats(lay_.total);  // padding between segments stays zero
    momenta_ = mem->alloc_floats(lay_.total);
    mean1_ = mem->alloc_floats(c1);
    var1_ = mem->alloc_floats(c1);
    save_mean1_ = mem->alloc_floats(c1);
    save_istd1_ = mem->alloc_floats(c1);
    mean2_ = mem->alloc_floats(c2);
    var2_ = mem->alloc_floats(c2);
    save_mean2_ = mem->alloc_floats(c2);
    save_istd2_ = mem->alloc_floats(c2);

    const size_t n = size_t(max_batch_);
    const size_t s1 = n * c1 * 28 * 28, q1 = n * c1 * 14 * 14, s2 = n * c2 * 14 * 14, q2 = n * c2 * 7 * 7;
    x_ = mem->alloc_floats(n * kPixels);
    c1_ = mem->alloc_floats(s1), b1_ = mem->alloc_floats(s1), a1_ = mem->alloc_floats(s1);
    p1_ = mem->alloc_floats(q1);
    c2_ = mem->alloc_floats(s2), b2_ = mem->alloc_floats(s2), a2_ = mem->alloc_floats(s2);
    p2_ = mem->alloc_floats(q2);
    z_ = mem->alloc_floats(n * kClasses), logp_ = mem->alloc_floats(n * kClasses);
    target_ = mem->alloc_floats(n * kClasses), dz_ = mem->alloc_floats(n * kClasses);
    dp2_ = mem->alloc_floats(q2);
    da2_ = mem->alloc_floats(s2), db2_ = mem->alloc_floats(s2), dc2_ = mem->alloc_floats(s2);
    dp1_ = mem->alloc_floats(q1);
    da1_ = mem->alloc_floats(s1), db1_ = mem->alloc_floats(s1), dc1_ = mem->alloc_floats(s1);

    for (auto* d : {&x_d_, &c1_d_, &p1_d_, &c2_d_, &p2_d_, &z_d_, &bn1_d_, &bn2_d_, &bias_d_, &all_d_, &decayed_d_,
                    &rest_d_})
        *d = make_tensor();
    set4d(bias_d_, 1, kClasses, 1, 1);
    set4d(all_d_, 1, static_cast<int>(lay_.total), 1, 1);
    set4d(decayed_d_, 1, static_cast<int>(lay_.decayed), 1, 1);
    set4d(rest_d_, 1, static_cast<int>(lay_.total - lay_.decayed), 1, 1);

    struct Shape {
        Conv* c;
        int k, ch, r, pad;
    } shapes[] = {{&conv1_, c1, 1, 3, 1}, {&conv2_, c2, c1, 3, 1}, {&fc_, kClasses, c2, 7, 0}};
    for (const Shape& s : shapes) {
        FMNIST_CUDNN(cudnnCreateFilterDescriptor(&s.c->w));
        FMNIST_CUDNN(cudnnSetFilter4dDescriptor(s.c->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.k, s.ch, s.r, s.r));
        FMNIST_CUDNN(cudnnCreateConvolutionDescriptor(&s.c->conv));
        FMNIST_CUDNN(cudnnSetConvolution2dDescriptor(s.c->conv, s.pad, s.pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                     CUDNN_DATA_FLOAT));
    }
    FMNIST_CUDNN(cudnnCreateActivationDescriptor(&relu_));
    FMNIST_CUDNN(cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    FMNIST_CUDNN(cudnnCreatePoolingDescriptor(&pool_));
    FMNIST_CUDNN(cudnnSetPooling2dDescriptor(pool_, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
    FMNIST_CUDNN(cudnnCreateOpTensorDescriptor(&add_));
    FMNIST_CUDNN(cudnnSetOpTensorDescriptor(add_, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));

    init_params();
    set_batch(max_batch_);
}

Network::~Network() { destroy_descriptors(); }

void Network::destroy_descriptors() {
    for (auto d : {x_d_, c1_d_, p1_d_, c2_d_, p2_d_, z_d_, bn1_d_, bn2_d_, bias_d_, all_d_, decayed_d_, rest_d_})
        if (d) cudnnDestroyTensorDescriptor(d);
    for (Conv* c : {&conv1_, &conv2_, &fc_}) {
        if (c->w) cudnnDestroyFilterDescriptor(c->w);
        if (c->conv) cudnnDestroyConvolutionDescriptor(c->conv);
    }
    if (relu_) cudnnDestroyActivationDescriptor(relu_);
    if (pool_) cudnnDestroyPoolingDescriptor(pool_);
    if (add_) cudnnDestroyOpTensorDescriptor(add_);
}

// He initialization for the convolutions followed by ReLU, LeCun for the last layer;
// batch norm starts as the identity (gamma 1, beta 0, running variance 1).
void Network::init_params() {
    Rng rng(o_.seed);
    std::vector<float> p(lay_.total, 0.0f);
    auto fill = [&](size_t at, size_t count, double fan_in, double gain) {
        const double sd = std::sqrt(gain / fan_in);
        for (size_t i = 0; i < count; ++i) p[at + i] = static_cast<float>(sd * rng.normal());
    };
    fill(lay_.w1, size_t(o_.c1) * 9, 9, 2.0);
    fill(lay_.w2, size_t(o_.c2) * o_.c1 * 9, 9.0 * o_.c1, 2.0);
    fill(lay_.w3, size_t(kClasses) * o_.c2 * 49, 49.0 * o_.c2, 1.0);
    std::fill(p.begin() + lay_.gamma1, p.begin() + lay_.gamma1 + o_.c1, 1.0f);
    std::fill(p.begin() + lay_.gamma2, p.begin() + lay_.gamma2 + o_.c2, 1.0f);
    mem_->upload(params_, p.data(), p.size() * sizeof(float));
    const std::vector<float> ones(std::max(o_.c1, o_.c2), 1.0f);
    mem_->upload(var1_, ones.data(), o_.c1 * sizeof(float));
    mem_->upload(var2_, ones.data(), o_.c2 * sizeof(float));
}

void Network::ensure_workspace(size_t bytes) {
    if (bytes <= workspace_bytes_) return;
    if (workspace_) mem_->release(workspace_);
    workspace_ = mem_->alloc_bytes(bytes);
    workspace_bytes_ = bytes;
}

// Picks one algorithm per direction. Candidates come from cuDNN's heuristics
// (cudnnGet*Algorithm_v7) and must need at most kWorkspaceLimit bytes of workspace. With
// `find`, cuDNN times them on the real buffers (cudnnFind*AlgorithmEx, what frameworks do
// in benchmark mode) and the fastest wins; otherwise the heuristics' first choice.
template <class Perf, class Get, class Size, class Find>
auto choose(const char* what, bool find, Get get, Size size, Find run_find, Network* net, size_t* ws)
    -> decltype(Perf{}.algo) {
    constexpr int kMax = 16;
    Perf perf[kMax];
    int got = 0;
    FMNIST_CUDNN(get(kMax, &got, perf));
    size_t largest = 0;
    bool any = false;
    decltype(Perf{}.algo) first{};
    for (int i = 0; i < got; ++i) {
        size_t need = 0;
        if (perf[i].status != CUDNN_STATUS_SUCCESS || size(perf[i].algo, &need) != CUDNN_STATUS_SUCCESS ||
            need > kWorkspaceLimit)
            continue;
        if (!any) first = perf[i].algo, *ws = std::max(*ws, need);
        any = true;
        largest = std::max(largest, need);
    }
    if (!any) throw Error(std::string("cuDNN offers no ") + what + " algorithm for this layer");
    if (!find) return first;
    void* workspace = net->workspace_for(largest);
    FMNIST_CUDNN(run_find(kMax, &got, perf, workspace, largest));
    for (int i = 0; i < got; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > largest) continue;
        size_t need = 0;
        FMNIST_CUDNN(size(perf[i].algo, &need));
        *ws = std::max(*ws, need);
        return perf[i].algo;
    }
    *ws = std::max(*ws, largest);
    return first;
}

void Network::pick_algorithms(Conv* c, const Operands& b, bool find) {
    cudnnHandle_t h = h_;
    size_t ws = 0;
    c->fwd = choose<cudnnConvolutionFwdAlgoPerf_t>(
        "forward convolution", find,
        [&](int n, int* got, cudnnConvolutionFwdAlgoPerf_t* r) {
            return cudnnGetConvolutionForwardAlgorithm_v7(h, b.x_d, c->w, c->conv, b.y_d, n, got, r);
        },
        [&](cudnnConvolutionFwdAlgo_t a, size_t* need) {
            return cudnnGetConvolutionForwardWorkspaceSize(h, b.x_d, c->w, c->conv, b.y_d, a, need);
        },
        [&](int n, int* got, cudnnConvolutionFwdAlgoPerf_t* r, void* w, size_t bytes) {
            return cudnnFindConvolutionForwardAlgorithmEx(h, b.x_d, b.x, c->w, b.w, c->conv, b.y_d, b.y, n, got, r, w,
                                                          bytes);
        },
        this, &ws);
    c->bwd_filter = choose<cudnnConvolutionBwdFilterAlgoPerf_t>(
        "backward-filter convolution", find,
        [&](int n, int* got, cudnnConvolutionBwdFilterAlgoPerf_t* r) {
            return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, b.x_d, b.y_d, c->conv, c->w, n, got, r);
        },
        [&](cudnnConvolutionBwdFilterAlgo_t a, size_t* need) {
            return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, b.x_d, b.y_d, c->conv, c->w, a, need);
        },
        [&](int n, int* got, cudnnConvolutionBwdFilterAlgoPerf_t* r, void* w, size_t bytes) {
            return cudnnFindConvolutionBackwardFilterAlgorithmEx(h, b.x_d, b.x, b.y_d, b.dy, c->conv, c->w, b.dw, n,
                                                                 got, r, w, bytes);
        },
        this, &ws);
    if (b.dx) {
        c->bwd_data = choose<cudnnConvolutionBwdDataAlgoPerf_t>(
            "backward-data convolution", find,
            [&](int n, int* got, cudnnConvolutionBwdDataAlgoPerf_t* r) {
                return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, c->w, b.y_d, c->conv, b.x_d, n, got, r);
            },
            [&](cudnnConvolutionBwdDataAlgo_t a, size_t* need) {
                return cudnnGetConvolutionBackwardDataWorkspaceSize(h, c->w, b.y_d, c->conv, b.x_d, a, need);
            },
            [&](int n, int* got, cudnnConvolutionBwdDataAlgoPerf_t* r, void* w, size_t bytes) {
                return cudnnFindConvolutionBackwardDataAlgorithmEx(h, c->w, b.w, b.y_d, b.dy, c->conv, b.x_d, b.dx, n,
                                                                   got, r, w, bytes);
            },
            this, &ws);
    }
    ensure_workspace(ws);
}

void Network::set_batch(int n) {
    if (n == batch_) return;
    batch_ = n;
    set4d(x_d_, n, 1, 28, 28);
    set4d(c1_d_, n, o_.c1, 28, 28);
    set4d(p1_d_, n, o_.c1, 14, 14);
    set4d(c2_d_, n, o_.c2, 14, 14);
    set4d(p2_d_, n, o_.c2, 7, 7);
    set4d(z_d_, n, kClasses, 1, 1);
    FMNIST_CUDNN(cudnnDeriveBNTensorDescriptor(bn1_d_, c1_d_, CUDNN_BATCHNORM_SPATIAL));
    FMNIST_CUDNN(cudnnDeriveBNTensorDescriptor(bn2_d_, c2_d_, CUDNN_BATCHNORM_SPATIAL));
    // Timing the candidates pays off for the full batches that training repeats; a last,
    // partial batch takes the heuristics' choice.
    const bool find = n == max_batch_ && o_.find_algorithms;
    pick_algorithms(&conv1_, {x_d_, x_, c1_d_, c1_, dc1_, params_ + lay_.w1, grads_ + lay_.w1, nullptr}, find);
    pick_algorithms(&conv2_, {p1_d_, p1_, c2_d_, c2_, dc2_, params_ + lay_.w2, grads_ + lay_.w2, dp1_}, find);
    pick_algorithms(&fc_, {p2_d_, p2_, z_d_, z_, dz_, params_ + lay_.w3, grads_ + lay_.w3, dp2_}, find);
}

void Network::describe(FILE* f) const {
    std::fprintf(f, "convolution algorithms (fwd / bwd data / bwd filter) at batch %d, workspace %zu bytes:\n",
                 batch_, workspace_bytes_);
    const Conv* convs[] = {&conv1_, &conv2_, &fc_};
    const char* names[] = {"conv1", "conv2", "dense"};
    for (int i = 0; i < 3; ++i)
        std::fprintf(f, "  %-5s %d / %s / %d\n", names[i], static_cast<int>(convs[i]->fwd),
                     i == 0 ? "-" : std::to_string(static_cast<int>(convs[i]->bwd_data)).c_str(),
                     static_cast<int>(convs[i]->bwd_filter));
}

void Network::forward(int n, bool training) {
    set_batch(n);
    const float one = 1.0f, zero = 0.0f;
    float* P = params_;
    // The cumulative average over the first steps, then an exponential one (cuDNN's
    // documented use of exponentialAverageFactor).
    const double factor = training ? std::max(1.0 / double(1 + bn_updates_), 0.1) : 0.0;
    if (training) ++bn_updates_;

    auto block = [&](Conv& conv, cudnnTensorDescriptor_t in_d, const float* in, cudnnTensorDescriptor_t c_d,
                     float* c, float* b, float* a, cudnnTensorDescriptor_t p_d, float* p, cudnnTensorDescriptor_t bn_d,
                     size_t w, size_t gamma, size_t beta, float* mean, float* var, float* save_mean,
                     float* save_istd) {
        FMNIST_CUDNN(cudnnConvolutionForward(h_, &one, in_d, in, conv.w, P + w, conv.conv, conv.fwd, workspace_,
                                             workspace_bytes_, &zero, c_d, c));
        if (training)
            FMNIST_CUDNN(cudnnBatchNormalizationForwardTraining(h_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, c_d, c,
                                                                c_d, b, bn_d, P + gamma, P + beta, factor, mean,
                                                                var, kBnEpsilon, save_mean, save_istd));
        else
            FMNIST_CUDNN(cudnnBatchNormalizationForwardInference(h_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, c_d, c,
                                                                 c_d, b, bn_d, P + gamma, P + beta, mean, var,
                                                                 kBnEpsilon));
        FMNIST_CUDNN(cudnnActivationForward(h_, relu_, &one, c_d, b, &zero, c_d, a));
        FMNIST_CUDNN(cudnnPoolingForward(h_, pool_, &one, c_d, a, &zero, p_d, p));
    };
    block(conv1_, x_d_, x_, c1_d_, c1_, b1_, a1_, p1_d_, p1_, bn1_d_, lay_.w1, lay_.gamma1, lay_.beta1, mean1_,
          var1_, save_mean1_, save_istd1_);
    block(conv2_, p1_d_, p1_, c2_d_, c2_, b2_, a2_, p2_d_, p2_, bn2_d_, lay_.w2, lay_.gamma2, lay_.beta2, mean2_,
          var2_, save_mean2_, save_istd2_);
    FMNIST_CUDNN(cudnnConvolutionForward(h_, &one, p2_d_, p2_, fc_.w, P + lay_.w3, fc_.conv, fc_.fwd, workspace_,
                                         workspace_bytes_, &zero, z_d_, z_));
    FMNIST_CUDNN(cudnnAddTensor(h_, &one, bias_d_, P + lay_.b3, &one, z_d_, z_));
    FMNIST_CUDNN(cudnnSoftmaxForward(h_, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, z_d_, z_, &zero, z_d_,
                                     logp_));
}

void Network::backward_and_update(int n, float lr) {
    const float one = 1.0f, zero = 0.0f;
    float* P = params_;
    float* G = grads_;
    // Loss = -mean_i logp[i, label_i], so dLoss/dlogp = -onehot / n. The log-softmax
    // backward maps dy to dy - exp(logp) * sum(dy); with dy = onehot and alpha = -1/n that
    // is (softmax - onehot) / n, the gradient at the logits.
    const float minus_inv_n = -1.0f / static_cast<float>(n);
    FMNIST_CUDNN(cudnnSoftmaxBackward(h_, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &minus_inv_n, z_d_, logp_,
                                      z_d_, target_, &zero, z_d_, dz_));
    // Dense layer.
    FMNIST_CUDNN(cudnnConvolutionBackwardBias(h_, &one, z_d_, dz_, &zero, bias_d_, G + lay_.b3));
    FMNIST_CUDNN(cudnnConvolutionBackwardFilter(h_, &one, p2_d_, p2_, z_d_, dz_, fc_.conv, fc_.bwd_filter, workspace_,
                                                workspace_bytes_, &zero, fc_.w, G + lay_.w3));
    FMNIST_CUDNN(cudnnConvolutionBackwardData(h_, &one, fc_.w, P + lay_.w3, z_d_, dz_, fc_.conv, fc_.bwd_data,
                                              workspace_, workspace_bytes_, &zero, p2_d_, dp2_));
    // Block 2: pool, ReLU, batch norm, convolution.
    FMNIST_CUDNN(cudnnPoolingBackward(h_, pool_, &one, p2_d_, p2_, p2_d_, dp2_, c2_d_, a2_, &zero, c2_d_, da2_));
    FMNIST_CUDNN(cudnnActivationBackward(h_, relu_, &one, c2_d_, a2_, c2_d_, da2_, c2_d_, b2_, &zero, c2_d_, db2_));
    FMNIST_CUDNN(cudnnBatchNormalizationBackward(h_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, c2_d_, c2_,
                                                 c2_d_, db2_, c2_d_, dc2_, bn2_d_, P + lay_.gamma2, G + lay_.gamma2,
                                                 G + lay_.beta2, kBnEpsilon, save_mean2_, save_istd2_));
    FMNIST_CUDNN(cudnnConvolutionBackwardFilter(h_, &one, p1_d_, p1_, c2_d_, dc2_, conv2_.conv, conv2_.bwd_filter,
                                                workspace_, workspace_bytes_, &zero, conv2_.w, G + lay_.w2));
    FMNIST_CUDNN(cudnnConvolutionBackwardData(h_, &one, conv2_.w, P + lay_.w2, c2_d_, dc2_, conv2_.conv,
                                              conv2_.bwd_data, workspace_, workspace_bytes_, &zero, p1_d_, dp1_));
    // Block 1 (no gradient needed for the input images).
    FMNIST_CUDNN(cudnnPoolingBackward(h_, pool_, &one, p1_d_, p1_, p1_d_, dp1_, c1_d_, a1_, &zero, c1_d_, da1_));
    FMNIST_CUDNN(cudnnActivationBackward(h_, relu_, &one, c1_d_, a1_, c1_d_, da1_, c1_d_, b1_, &zero, c1_d_, db1_));
    FMNIST_CUDNN(cudnnBatchNormalizationBackward(h_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, c1_d_, c1_,
                                                 c1_d_, db1_, c1_d_, dc1_, bn1_d_, P + lay_.gamma1, G + lay_.gamma1,
                                                 G + lay_.beta1, kBnEpsilon, save_mean1_, save_istd1_));
    FMNIST_CUDNN(cudnnConvolutionBackwardFilter(h_, &one, x_d_, x_, c1_d_, dc1_, conv1_.conv, conv1_.bwd_filter,
                                                workspace_, workspace_bytes_, &zero, conv1_.w, G + lay_.w1));

    // SGD with momentum: v = mu v + g (+ wd w on the convolution weights); w = w - lr v.
    const float mu = static_cast<float>(o_.momentum), wd = static_cast<float>(o_.weight_decay), minus_lr = -lr;
    FMNIST_CUDNN(cudnnOpTensor(h_, add_, &one, decayed_d_, G, &wd, decayed_d_, P, &mu, decayed_d_, momenta_));
    FMNIST_CUDNN(cudnnAddTensor(h_, &one, rest_d_, G + lay_.decayed, &mu, rest_d_, momenta_ + lay_.decayed));
    FMNIST_CUDNN(cudnnAddTensor(h_, &minus_lr, all_d_, momenta_, &one, all_d_, P));
}

// ---- host side: batches, metrics, progress ----

struct Batcher {
    const Split& split;
    std::vector<float> pixels;   // n x 784, normalized
    std::vector<float> onehot;   // n x 10
    explicit Batcher(const Split& s, int max_batch)
        : split(s), pixels(size_t(max_batch) * kPixels), onehot(size_t(max_batch) * kClasses) {}
    // Mean and standard deviation of the Fashion-MNIST training pixels (in [0, 1]).
    static constexpr float kMean = 0.2860f, kStd = 0.3530f;
    void fill(const int64_t* index, int n) {
        std::fill(onehot.begin(), onehot.begin() + n * kClasses, 0.0f);
        for (int i = 0; i < n; ++i) {
            const uint8_t* src = split.images.data() + index[i] * kPixels;
            float* dst = pixels.data() + size_t(i) * kPixels;
            for (int p = 0; p < kPixels; ++p) dst[p] = (src[p] / 255.0f - kMean) / kStd;
            onehot[size_t(i) * kClasses + split.labels[index[i]]] = 1.0f;
        }
    }
};

struct Tally {
    double loss = 0;
    int64_t correct = 0, seen = 0;
    void add(const float* logp, const uint8_t* labels, const int64_t* index, int n) {
        for (int i = 0; i < n; ++i) {
            const float* row = logp + size_t(i) * kClasses;
            const int label = labels[index[i]];
            loss -= row[label];
            correct += std::max_element(row, row + kClasses) - row == label;
        }
        seen += n;
    }
    double mean_loss() const { return seen ? loss / double(seen) : 0; }
    double accuracy() const { return seen ? 100.0 * double(correct) / double(seen) : 0; }
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class Progress {
public:
    explicit Progress(bool tty) : tty_(tty) {}
    void show(int epoch, int epochs, int64_t done, int64_t total, const Tally& t, double ips, bool final) {
        if (!tty_ && !final) return;
        if (tty_ && !final && seconds_since(last_) < 0.1) return;
        last_ = Clock::now();
        constexpr int kWidth = 24;
        const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
        char bar[kWidth + 1];
        for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '.';
        bar[kWidth] = 0;
        std::printf("%sepoch %d/%d [%s] %6lld/%lld  loss %.4f  acc %6.2f%%  %6.0f img/s", tty_ ? "\r" : "", epoch,
                    epochs, bar, static_cast<long long>(done), static_cast<long long>(total), t.mean_loss(),
                    t.accuracy(), ips);
        std::fflush(stdout);
    }

private:
    bool tty_;
    Clock::time_point last_{};
};

// A linear warm-up over the first steps (the dense layer sums 49*C2 non-negative inputs, so
// early full-size steps overshoot), then a cosine decay to zero.
double learning_rate(double peak, int64_t step, int64_t total) {
    const int64_t warmup = std::max<int64_t>(1, std::min<int64_t>(total / 2, 100));
    if (step < warmup) return peak * double(step + 1) / double(warmup);
    return 0.5 * peak * (1.0 + std::cos(3.141592653589793 * double(step - warmup) / double(total - warmup)));
}

Tally evaluate(Network& net, Memory& mem, const Split& test, int64_t count, int batch) {
    Batcher b(test, batch);
    std::vector<int64_t> index(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) index[size_t(i)] = i;
    std::vector<float> logp(size_t(batch) * kClasses);
    Tally t;
    for (int64_t at = 0; at < count; at += batch) {
        const int n = static_cast<int>(std::min<int64_t>(batch, count - at));
        b.fill(&index[size_t(at)], n);
        mem.upload(net.x(), b.pixels.data(), size_t(n) * kPixels * sizeof(float));
        net.forward(n, false);
        mem.download(logp.data(), net.logp(), size_t(n) * kClasses * sizeof(float));
        t.add(logp.data(), test.labels.data(), &index[size_t(at)], n);
    }
    return t;
}

int run(const Options& o) {
    Split train, test;
    std::string error;
    if (!load_split(o.data_dir, "train", &train, &error) || !load_split(o.data_dir, "t10k", &test, &error))
        throw Error(error);
    const int64_t n_train = o.train_images ? std::min(o.train_images, train.count) : train.count;
    const int64_t n_test = o.test_images ? std::min(o.test_images, test.count) : test.count;

    Memory mem;
    std::string where;
    cudnnHandle_t handle = open_handle(o.device, &mem, &where);
    struct HandleGuard {
        cudnnHandle_t h;
        ~HandleGuard() { cudnnDestroy(h); }
    } guard{handle};

    const int batch = static_cast<int>(std::min<int64_t>(o.batch, std::max(n_train, n_test)));
    std::printf("Fashion-MNIST: %lld training and %lld test images from %s\n", static_cast<long long>(n_train),
                static_cast<long long>(n_test), o.data_dir.c_str());
    std::printf("cuDNN: %s\n", where.c_str());
    std::printf("network: conv3x3(%d)-bn-relu-pool, conv3x3(%d)-bn-relu-pool, dense(10); batch %d, %d epoch%s, "
                "SGD lr %g momentum %g, seed %u\n",
                o.c1, o.c2, batch, o.epochs, o.epochs == 1 ? "" : "s", o.lr, o.momentum, o.seed);
    std::fflush(stdout);

    Network net(handle, &mem, o, batch);
    if (o.verbose) net.describe(stdout);

    double test_loss_before = 0;
    if (o.check_loss_falls) test_loss_before = evaluate(net, mem, test, n_test, batch).mean_loss();

    Rng rng(o.seed ^ 0x9e3779b9u);
    std::vector<int64_t> order(static_cast<size_t>(n_train));
    for (int64_t i = 0; i < n_train; ++i) order[size_t(i)] = i;
    Batcher batcher(train, batch);
    std::vector<float> logp(size_t(batch) * kClasses);
    Progress progress(isatty(fileno(stdout)) != 0);
    const int64_t steps_per_epoch = (n_train + batch - 1) / batch;
    const int64_t total_steps = steps_per_epoch * o.epochs;
    std::vector<double> step_loss;  // mean loss of each training step, for --check-loss-falls

    int64_t step = 0;
    double train_seconds = 0;
    Tally final_test;
    const auto start = Clock::now();
    for (int epoch = 1; epoch <= o.epochs; ++epoch) {
        for (int64_t i = n_train - 1; i > 0; --i)
            std::swap(order[size_t(i)], order[rng.below(static_cast<uint32_t>(i + 1))]);
        Tally t;
        const auto epoch_start = Clock::now();
        for (int64_t at = 0; at < n_train; at += batch, ++step) {
            const int n = static_cast<int>(std::min<int64_t>(batch, n_train - at));
            batcher.fill(&order[size_t(at)], n);
            mem.upload(net.x(), batcher.pixels.data(), size_t(n) * kPixels * sizeof(float));
            mem.upload(net.target(), batcher.onehot.data(), size_t(n) * kClasses * sizeof(float));
            const double lr = learning_rate(o.lr, step, total_steps);
            net.forward(n, true);
            net.backward_and_update(n, static_cast<float>(lr));
            mem.download(logp.data(), net.logp(), size_t(n) * kClasses * sizeof(float));
            const double before = t.loss;
            t.add(logp.data(), train.labels.data(), &order[size_t(at)], n);
            step_loss.push_back((t.loss - before) / n);
            const double secs = seconds_since(epoch_start);
            progress.show(epoch, o.epochs, at + n, n_train, t, secs > 0 ? double(t.seen) / secs : 0, false);
        }
        mem.synchronize();
        const double secs = seconds_since(epoch_start);
        train_seconds += secs;
        progress.show(epoch, o.epochs, n_train, n_train, t, double(n_train) / secs, true);
        final_test = evaluate(net, mem, test, n_test, batch);
        std::printf("  | test loss %.4f  acc %6.2f%%  (%.1f s)\n", final_test.mean_loss(), final_test.accuracy(), secs);
        std::fflush(stdout);
    }
    const double total = seconds_since(start);
    std::printf("test accuracy %.2f%% after %d epoch%s; training %.1f s (%.0f img/s), total with evaluation %.1f s\n",
                final_test.accuracy(), o.epochs, o.epochs == 1 ? "" : "s", train_seconds,
                double(n_train) * o.epochs / train_seconds, total);

    if (o.check_loss_falls) {
        // Mean training loss over the first and the last quarter of the steps (at least one each).
        const size_t q = std::max<size_t>(1, step_loss.size() / 4);
        double first = 0, last = 0;
        for (size_t i = 0; i < q; ++i) first += step_loss[i], last += step_loss[step_loss.size() - 1 - i];
        first /= double(q), last /= double(q);
        const double test_after = final_test.mean_loss();
        const bool train_falls = step_loss.size() >= 2 && last < 0.8 * first;
        const bool test_falls = test_after < 0.8 * test_loss_before;
        std::printf("loss check: training loss %.4f (first %zu steps) -> %.4f (last %zu): %s; "
                    "test loss %.4f (before training) -> %.4f: %s\n",
                    first, q, last, q, train_falls ? "falls" : "DOES NOT FALL by 20%", test_loss_before, test_after,
                    test_falls ? "falls" : "DOES NOT FALL by 20%");
        if (!train_falls || !test_falls) {
            std::fprintf(stderr, "fashion_mnist: loss check failed\n");
            return 1;
        }
    }
    return 0;
}

}  // namespace
}  // namespace fmnist

int main(int argc, char** argv) {
    const fmnist::Options o = fmnist::parse_args(argc, argv);
    try {
        return fmnist::run(o);
    } catch (const fmnist::Error& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "fashion_mnist: error: %s\n", e.what());
    } catch (const std::bad_alloc&) {
        std::fflush(stdout);
        std::fprintf(stderr, "fashion_mnist: error: out of memory\n");
    }
    return 1;
}
