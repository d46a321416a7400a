// Runners of the element-wise and normalization problems (act, softmax, pool, bn,
// optensor, bias, lrn, divnorm, dropout, stf, reduce, transform, scale, set): descriptors and data in
// the library, launch, read back.
#include <cstring>
#include <deque>
#include <functional>

#include "conv_bench.hpp"
#include "data.hpp"

namespace odnn_bench {

namespace {

struct TShape {
    int nb;
    int dims[5];
};

TShape tensor_shape(const Problem& p) {
    TShape s{};
    const bool three_d = p.v.count("d") > 0;
    s.nb = three_d ? 5 : 4;
    int i = 0;
    s.dims[i++] = static_cast<int>(p.get("n", 1));
    s.dims[i++] = static_cast<int>(p.get("c", 1));
    if (three_d) s.dims[i++] = static_cast<int>(p.get("d", 1));
    s.dims[i++] = static_cast<int>(p.get("h", 1));
    s.dims[i++] = static_cast<int>(p.get("w", 1));
    return s;
}

// Descriptors and buffers of one run, released together.
struct Run {
    CudnnLib& lib;
    std::vector<cudnnTensorDescriptor_t> tensors;
    std::deque<Buffer> buffers;  // a deque: the Buffer pointers handed out stay valid
    explicit Run(CudnnLib& l) : lib(l) {}
    ~Run() {
        for (auto t : tensors) BENCH_CALL(lib, cudnnDestroyTensorDescriptor, t);
        for (auto& b : buffers) release(&b);
    }
    cudnnStatus_t tensor(const Dt& t, int nb, const int* dims, bool nhwc, cudnnTensorDescriptor_t* out) {
        int strides[8];
        strides_for(nb, dims, nhwc, strides);
        BENCH_CALL(lib, cudnnCreateTensorDescriptor, out);
        tensors.push_back(*out);
        return BENCH_CALL(lib, cudnnSetTensorNdDescriptor, *out, t.data, nb, dims, strides);
    }
    // `bytes` bytes, uninitialized (a workspace).
    Buffer* bytes(size_t n, std::string* err) {
        buffers.emplace_back();
        Buffer* b = &buffers.back();
        return alloc(b, n, lib.on_gpu(), err) ? b : nullptr;
    }
    // A buffer of `n` elements filled with the bench's deterministic data.
    Buffer* buffer(size_t n, const Dt& t, unsigned seed, std::string* err) {
        buffers.emplace_back();
        Buffer* b = &buffers.back();
        if (!alloc(b, n * t.bytes, lib.on_gpu(), err)) return nullptr;
        const auto host = make_data(n, t, seed);
        upload(b, host.data(), host.size());
        return b;
    }
    Buffer* filled(size_t n, const Dt& t, double value, std::string* err) {
        buffers.emplace_back();
        Buffer* b = &buffers.back();
        if (!alloc(b, n * t.bytes, lib.on_gpu(), err)) return nullptr;
        std::vector<unsigned char> host(n * t.bytes);
        for (size_t i = 0; i < n; ++i) {
            if (t.data == CUDNN_DATA_DOUBLE) std::memcpy(&host[i * 8], &value, 8);
            else { const float f = static_cast<float>(value); std::memcpy(&host[i * 4], &f, 4); }
        }
        upload(b, host.data(), host.size());
        return b;
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

cudnnPoolingMode_t pool_mode(const std::string& m) {
    if (m == "max_det") return CUDNN_POOLING_MAX_DETERMINISTIC;
    if (m == "avg_in") return CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    if (m == "avg_ex") return CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    return CUDNN_POOLING_MAX;
}

cudnnBatchNormMode_t bn_mode(const std::string& m) {
    if (m == "persistent") return CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    if (m == "per_act") return CUDNN_BATCHNORM_PER_ACTIVATION;
    return CUDNN_BATCHNORM_SPATIAL;
}

// Pooling output dims for the problem's window (2-D r s / 3-D t r s), pad and stride.
// Per-dim pad_d / pad_h / pad_w and stride_* override pad= and stride=.
void pool_window(const Problem& p, int nsp, int* win, int* pad, int* stride) {
    const char* keys[3] = {"t", "r", "s"};
    const char* suffix[3] = {"_d", "_h", "_w"};
    for (int i = 0; i < nsp; ++i) {
        const int k = 3 - nsp + i;
        win[i] = static_cast<int>(p.get(keys[k], 2));
        pad[i] = static_cast<int>(p.get(std::string("pad") + suffix[k], p.get("pad", 0)));
        stride[i] = static_cast<int>(p.get(std::string("stride") + suffix[k], p.get("stride", win[i])));
    }
}

// The output dims of a reduce problem: on= oc= (od=) oh= ow=, the input's where absent.
void reduce_dims(const Problem& p, const TShape& s, int* out) {
    const char* keys[5] = {"on", "oc", "od", "oh", "ow"};
    int j = 0;
    for (int i = 0; i < 5; ++i) {
        if (i == 2 && s.nb == 4) continue;
        out[j] = static_cast<int>(p.get(keys[i], s.dims[j]));
        ++j;
    }
}

cudnnReduceTensorOp_t reduce_op(const std::string& w) {
    if (w == "mul") return CUDNN_REDUCE_TENSOR_MUL;
    if (w == "min") return CUDNN_REDUCE_TENSOR_MIN;
    if (w == "max") return CUDNN_REDUCE_TENSOR_MAX;
    if (w == "amax") return CUDNN_REDUCE_TENSOR_AMAX;
    if (w == "avg") return CUDNN_REDUCE_TENSOR_AVG;
    if (w == "norm1") return CUDNN_REDUCE_TENSOR_NORM1;
    if (w == "norm2") return CUDNN_REDUCE_TENSOR_NORM2;
    if (w == "mul_nz") return CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    return CUDNN_REDUCE_TENSOR_ADD;
}

// The type reduce writes C in: A's, except INT8 A, which reduces into FLOAT.
Dt reduce_out_type(const Problem& p) { return dtype_of(p.dt == "i8" ? "f32" : p.dt); }

}  // namespace

RunResult run_op(CudnnLib& lib, const Problem& p, const Options& o) {
    RunResult r;
    const Dt t = dtype_of(p.dt);
    const bool nhwc = p.layout == "nhwc";
    const TShape s = tensor_shape(p);
    const size_t n = count(s.nb, s.dims);
    Run run(lib);
    std::string err;
    const float f1 = 1.0f, f0 = 0.0f;
    const double d1 = 1.0, d0 = 0.0;
    const void* one = t.data == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d1) : &f1;
    const void* zero = t.data == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d0) : &f0;
    cudnnTensorDescriptor_t xd, yd;
    BENCH_TRY("x descriptor", run.tensor(t, s.nb, s.dims, nhwc, &xd));
    Buffer* x = run.buffer(n, t, 1, &err);
    Buffer* out = nullptr;
    size_t out_count = n;
    Dt out_t = t;             // element type of `out`
    bool comparable = true;   // false: outputs depend on the library's RNG (dropout)
    std::function<bool()> launch;
    cudnnStatus_t last = CUDNN_STATUS_SUCCESS;  // status of the latest launch, for messages
    auto ok = [&last](cudnnStatus_t st) {
        last = st;
        return st == CUDNN_STATUS_SUCCESS;
    };
    // Times `launch` into r.ms (and r.overhead with --overhead); false, with r.error set,
    // where a timed run failed.
    auto timed = [&] {
        bool good = false;
        r.ms = measure(lib.on_gpu(), o.warmup, o.reps, launch, &good, o.overhead ? &r.overhead : nullptr);
        if (!good) r.error = "a timed run failed";
        return good;
    };

    if (p.op == "act") {
        yd = xd;
        Buffer* y = run.buffer(n, t, 2, &err);
        Buffer* dy = run.buffer(n, t, 3, &err);
        Buffer* dx = run.buffer(n, t, 4, &err);
        if (!x || !y || !dy || !dx) { r.error = err; return r; }
        cudnnActivationDescriptor_t ad;
        BENCH_CALL(lib, cudnnCreateActivationDescriptor, &ad);
        struct Guard { CudnnLib& l; cudnnActivationDescriptor_t d; ~Guard() { BENCH_CALL(l, cudnnDestroyActivationDescriptor, d); } } g{lib, ad};
        const cudnnActivationMode_t m = act_mode(p.word("mode", "relu"));
        BENCH_TRY("activation descriptor", BENCH_CALL(lib, cudnnSetActivationDescriptor, ad, m, CUDNN_NOT_PROPAGATE_NAN,
                                                      m == CUDNN_ACTIVATION_CLIPPED_RELU ? 6.0 : 1.0));
        if (p.dir == "fwd") {
            out = y;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnActivationForward, lib.handle(), ad, one, xd, x->ptr, zero, yd, y->ptr)); };
        } else {
            out = dx;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnActivationBackward, lib.handle(), ad, one, yd, y->ptr, yd, dy->ptr, xd, x->ptr, zero, xd, dx->ptr)); };
        }
        r.error.clear();
        if (!launch()) { r.error = status_text(lib, "activation", last); return r; }
        if (!timed()) return r;
    } else if (p.op == "softmax") {
        yd = xd;
        Buffer* y = run.buffer(n, t, 2, &err);
        Buffer* dy = run.buffer(n, t, 3, &err);
        Buffer* dx = run.buffer(n, t, 4, &err);
        if (!x || !y || !dy || !dx) { r.error = err; return r; }
        const std::string a = p.word("alg", "accurate");
        const cudnnSoftmaxAlgorithm_t alg = a == "fast" ? CUDNN_SOFTMAX_FAST : a == "log" ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
        const cudnnSoftmaxMode_t mode = p.word("mode", "channel") == "instance" ? CUDNN_SOFTMAX_MODE_INSTANCE : CUDNN_SOFTMAX_MODE_CHANNEL;
        if (p.dir == "fwd") {
            out = y;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnSoftmaxForward, lib.handle(), alg, mode, one, xd, x->ptr, zero, yd, y->ptr)); };
        } else {
            out = dx;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnSoftmaxBackward, lib.handle(), alg, mode, one, yd, y->ptr, yd, dy->ptr, zero, xd, dx->ptr)); };
        }
        if (!launch()) { r.error = status_text(lib, "softmax", last); return r; }
        if (!timed()) return r;
    } else if (p.op == "pool") {
        const int nsp = s.nb - 2;
        int win[3], pad[3], stride[3], ydims[5];
        pool_window(p, nsp, win, pad, stride);
        cudnnPoolingDescriptor_t pd;
        BENCH_CALL(lib, cudnnCreatePoolingDescriptor, &pd);
        struct Guard { CudnnLib& l; cudnnPoolingDescriptor_t d; ~Guard() { BENCH_CALL(l, cudnnDestroyPoolingDescriptor, d); } } g{lib, pd};
        BENCH_TRY("pooling descriptor", BENCH_CALL(lib, cudnnSetPoolingNdDescriptor, pd, pool_mode(p.word("mode", "max")),
                                                   CUDNN_NOT_PROPAGATE_NAN, nsp, win, pad, stride));
        BENCH_TRY("pooling output dims", BENCH_CALL(lib, cudnnGetPoolingNdForwardOutputDim, pd, xd, s.nb, ydims));
        BENCH_TRY("y descriptor", run.tensor(t, s.nb, ydims, nhwc, &yd));
        const size_t ny = count(s.nb, ydims);
        Buffer* y = run.buffer(ny, t, 2, &err);
        Buffer* dy = run.buffer(ny, t, 3, &err);
        Buffer* dx = run.buffer(n, t, 4, &err);
        if (!x || !y || !dy || !dx) { r.error = err; return r; }
        if (p.dir == "fwd") {
            out = y;
            out_count = ny;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnPoolingForward, lib.handle(), pd, one, xd, x->ptr, zero, yd, y->ptr)); };
        } else {
            // y must be the forward result of x for max pooling's argmax to be meaningful.
            if (!ok(BENCH_CALL(lib, cudnnPoolingForward, lib.handle(), pd, one, xd, x->ptr, zero, yd, y->ptr))) {
                r.error = status_text(lib, "pooling forward (for backward)", last);
                return r;
            }
            out = dx;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnPoolingBackward, lib.handle(), pd, one, yd, y->ptr, yd, dy->ptr, xd, x->ptr, zero, xd, dx->ptr)); };
        }
        if (!launch()) { r.error = status_text(lib, "pooling", last); return r; }
        if (!timed()) return r;
    } else if (p.op == "bn") {
        yd = xd;
        const cudnnBatchNormMode_t mode = bn_mode(p.word("mode", "spatial"));
        cudnnTensorDescriptor_t pdsc;
        BENCH_CALL(lib, cudnnCreateTensorDescriptor, &pdsc);
        run.tensors.push_back(pdsc);
        BENCH_TRY("cudnnDeriveBNTensorDescriptor", BENCH_CALL(lib, cudnnDeriveBNTensorDescriptor, pdsc, xd, mode));
        const Dt pt = t.data == CUDNN_DATA_DOUBLE ? dtype_of("f64") : dtype_of("f32");
        const size_t np = mode == CUDNN_BATCHNORM_PER_ACTIVATION ? n / s.dims[0] : static_cast<size_t>(s.dims[1]);
        Buffer* y = run.buffer(n, t, 2, &err);
        Buffer* dy = run.buffer(n, t, 3, &err);
        Buffer* dx = run.buffer(n, t, 4, &err);
        Buffer* scale = run.filled(np, pt, 1.5, &err);
        Buffer* bias = run.filled(np, pt, 0.25, &err);
        Buffer* mean = run.filled(np, pt, 0.0, &err);
        Buffer* var = run.filled(np, pt, 1.0, &err);
        Buffer* smean = run.filled(np, pt, 0.0, &err);
        Buffer* sinv = run.filled(np, pt, 1.0, &err);
        Buffer* dscale = run.filled(np, pt, 0.0, &err);
        Buffer* dbias = run.filled(np, pt, 0.0, &err);
        if (!x || !y || !dy || !dx || !dbias) { r.error = err; return r; }
        const double eps = 1e-5;
        // api=ex: the Ex calls with a workspace and reserve of the queried sizes.
        const bool ex = p.word("api", "legacy") == "ex";
        if (ex && p.dir == "fwd_inf") {
            r.error = "api=ex: inference has no Ex call (fwd_train and bwd do)";
            return r;
        }
        size_t ws = 0, rs = 0;
        Buffer* work = nullptr;
        Buffer* reserve = nullptr;
        if (ex) {
            const cudnnBatchNormOps_t bn = CUDNN_BATCHNORM_OPS_BN;
            if (p.dir == "fwd_train")
                BENCH_TRY("cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize",
                          BENCH_CALL(lib, cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize, lib.handle(), mode, bn, xd, nullptr, yd, pdsc, nullptr, &ws));
            else
                BENCH_TRY("cudnnGetBatchNormalizationBackwardExWorkspaceSize",
                          BENCH_CALL(lib, cudnnGetBatchNormalizationBackwardExWorkspaceSize, lib.handle(), mode, bn, xd, nullptr, xd, nullptr, xd, pdsc, nullptr, &ws));
            BENCH_TRY("cudnnGetBatchNormalizationTrainingExReserveSpaceSize",
                      BENCH_CALL(lib, cudnnGetBatchNormalizationTrainingExReserveSpaceSize, lib.handle(), mode, bn, nullptr, xd, &rs));
            work = run.bytes(ws, &err);
            reserve = run.bytes(rs, &err);
            if (!work || !reserve) { r.error = err; return r; }
            r.workspace = ws;
        }
        if (p.dir == "fwd_inf") {
            out = y;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnBatchNormalizationForwardInference, lib.handle(), mode, one, zero, xd, x->ptr, yd, y->ptr, pdsc, scale->ptr, bias->ptr, mean->ptr, var->ptr, eps)); };
        } else if (p.dir == "fwd_train" && ex) {
            out = y;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnBatchNormalizationForwardTrainingEx, lib.handle(), mode, CUDNN_BATCHNORM_OPS_BN, one, zero, xd, x->ptr, nullptr, nullptr, yd, y->ptr, pdsc, scale->ptr, bias->ptr, 0.1, mean->ptr, var->ptr, eps, smean->ptr, sinv->ptr, nullptr, work->ptr, ws, reserve->ptr, rs)); };
        } else if (p.dir == "fwd_train") {
            out = y;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnBatchNormalizationForwardTraining, lib.handle(), mode, one, zero, xd, x->ptr, yd, y->ptr, pdsc, scale->ptr, bias->ptr, 0.1, mean->ptr, var->ptr, eps, smean->ptr, sinv->ptr)); };
        } else {
            // Saved statistics of x, as training would leave them.
            if (!ok(BENCH_CALL(lib, cudnnBatchNormalizationForwardTraining, lib.handle(), mode, one, zero, xd, x->ptr, yd, y->ptr, pdsc, scale->ptr, bias->ptr, 0.1, mean->ptr, var->ptr, eps, smean->ptr, sinv->ptr))) {
                r.error = status_text(lib, "batch-norm forward (for backward)", last);
                return r;
            }
            out = dx;
            if (ex)
                launch = [&] { return ok(BENCH_CALL(lib, cudnnBatchNormalizationBackwardEx, lib.handle(), mode, CUDNN_BATCHNORM_OPS_BN, one, zero, one, zero, xd, x->ptr, nullptr, nullptr, xd, dy->ptr, nullptr, nullptr, xd, dx->ptr, pdsc, scale->ptr, nullptr, dscale->ptr, dbias->ptr, eps, smean->ptr, sinv->ptr, nullptr, work->ptr, ws, reserve->ptr, rs)); };
            else
                launch = [&] { return ok(BENCH_CALL(lib, cudnnBatchNormalizationBackward, lib.handle(), mode, one, zero, one, zero, xd, x->ptr, xd, dy->ptr, xd, dx->ptr, pdsc, scale->ptr, dscale->ptr, dbias->ptr, eps, smean->ptr, sinv->ptr)); };
        }
        if (!launch()) { r.error = status_text(lib, "batch norm", last); return r; }
        if (!timed()) return r;
    } else if (p.op == "optensor" || p.op == "bias") {
        Buffer* b = nullptr;
        Buffer* c = run.buffer(n, t, 3, &err);
        cudnnTensorDescriptor_t bd = xd;
        if (p.op == "bias") {
            int bdims[5] = {1, s.dims[1], 1, 1, 1};
            BENCH_TRY("bias descriptor", run.tensor(t, s.nb, bdims, nhwc, &bd));
            b = run.buffer(static_cast<size_t>(s.dims[1]), t, 2, &err);
        } else {
            b = run.buffer(n, t, 2, &err);
        }
        if (!x || !b || !c) { r.error = err; return r; }
        out = c;
        if (p.op == "bias") {
            // C = 1 * bias + 1 * C: the in-place accumulate frameworks use.
            launch = [&] { return ok(BENCH_CALL(lib, cudnnAddTensor, lib.handle(), one, bd, b->ptr, one, xd, c->ptr)); };
        } else {
            const std::string w = p.word("op", "add");
            const cudnnOpTensorOp_t op = w == "mul" ? CUDNN_OP_TENSOR_MUL : w == "min" ? CUDNN_OP_TENSOR_MIN : w == "max" ? CUDNN_OP_TENSOR_MAX
                                         : w == "sqrt" ? CUDNN_OP_TENSOR_SQRT : w == "not" ? CUDNN_OP_TENSOR_NOT : CUDNN_OP_TENSOR_ADD;
            cudnnOpTensorDescriptor_t od;
            BENCH_CALL(lib, cudnnCreateOpTensorDescriptor, &od);
            struct Guard { CudnnLib& l; cudnnOpTensorDescriptor_t d; ~Guard() { BENCH_CALL(l, cudnnDestroyOpTensorDescriptor, d); } } g{lib, od};
            BENCH_TRY("op-tensor descriptor", BENCH_CALL(lib, cudnnSetOpTensorDescriptor, od, op, t.compute == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
            launch = [&] { return ok(BENCH_CALL(lib, cudnnOpTensor, lib.handle(), od, one, xd, x->ptr, one, bd, b->ptr, zero, xd, c->ptr)); };
            if (!launch()) { r.error = status_text(lib, "op tensor", last); return r; }
            if (!timed()) return r;
        }
        if (p.op == "bias") {
            if (!launch()) { r.error = status_text(lib, "add tensor", last); return r; }
            if (!timed()) return r;
            // C accumulated an unknown number of times: compare after one fresh run.
            const auto fresh = make_data(n, t, 3);
            upload(c, fresh.data(), fresh.size());
            launch();
        }
    } else if (p.op == "lrn" || p.op == "divnorm") {
        // Divisive normalization without means (NULL: zero) or dMeans; its temp and temp2
        // are x-sized scratch, as cuDNN asks.
        const bool div = p.op == "divnorm";
        yd = xd;
        Buffer* y = run.buffer(n, t, 2, &err);
        Buffer* dy = run.buffer(n, t, 3, &err);
        Buffer* dx = run.buffer(n, t, 4, &err);
        Buffer* tmp = div ? run.buffer(n, t, 5, &err) : dx;
        Buffer* tmp2 = div ? run.buffer(n, t, 6, &err) : dx;
        if (!x || !y || !dy || !dx || !tmp || !tmp2) { r.error = err; return r; }
        cudnnLRNDescriptor_t ld;
        BENCH_CALL(lib, cudnnCreateLRNDescriptor, &ld);
        struct Guard { CudnnLib& l; cudnnLRNDescriptor_t d; ~Guard() { BENCH_CALL(l, cudnnDestroyLRNDescriptor, d); } } g{lib, ld};
        BENCH_TRY("LRN descriptor", BENCH_CALL(lib, cudnnSetLRNDescriptor, ld, static_cast<unsigned>(p.get("size", 5)),
                                               p.real("alpha", 1e-4), p.real("beta", 0.75), p.real("k", 2.0)));
        const cudnnLRNMode_t mode = CUDNN_LRN_CROSS_CHANNEL_DIM1;
        const cudnnDivNormMode_t dmode = CUDNN_DIVNORM_PRECOMPUTED_MEANS;
        auto fwd = [&] {
            if (div) return ok(BENCH_CALL(lib, cudnnDivisiveNormalizationForward, lib.handle(), ld, dmode, one, xd, x->ptr, nullptr, tmp->ptr, tmp2->ptr, zero, yd, y->ptr));
            return ok(BENCH_CALL(lib, cudnnLRNCrossChannelForward, lib.handle(), ld, mode, one, xd, x->ptr, zero, yd, y->ptr));
        };
        const char* what = div ? "divisive normalization" : "LRN";
        if (p.dir == "fwd") {
            out = y;
            launch = fwd;
        } else {
            if (!div && !fwd()) { r.error = status_text(lib, "LRN forward (for backward)", last); return r; }
            out = dx;
            launch = [&] {
                if (div) return ok(BENCH_CALL(lib, cudnnDivisiveNormalizationBackward, lib.handle(), ld, dmode, one, xd, x->ptr, nullptr, dy->ptr, tmp->ptr, tmp2->ptr, zero, xd, dx->ptr, nullptr));
                return ok(BENCH_CALL(lib, cudnnLRNCrossChannelBackward, lib.handle(), ld, mode, one, yd, y->ptr, yd, dy->ptr, xd, x->ptr, zero, xd, dx->ptr));
            };
        }
        if (!launch()) { r.error = status_text(lib, what, last); return r; }
        if (!timed()) return r;
    } else if (p.op == "dropout") {
        yd = xd;
        Buffer* y = run.buffer(n, t, 2, &err);
        Buffer* dy = run.buffer(n, t, 3, &err);
        Buffer* dx = run.buffer(n, t, 4, &err);
        if (!x || !y || !dy || !dx) { r.error = err; return r; }
        size_t states_bytes = 0, reserve_bytes = 0;
        BENCH_TRY("cudnnDropoutGetStatesSize", BENCH_CALL(lib, cudnnDropoutGetStatesSize, lib.handle(), &states_bytes));
        BENCH_TRY("cudnnDropoutGetReserveSpaceSize", BENCH_CALL(lib, cudnnDropoutGetReserveSpaceSize, xd, &reserve_bytes));
        run.buffers.emplace_back();
        Buffer* states = &run.buffers.back();
        run.buffers.emplace_back();
        Buffer* reserve = &run.buffers.back();
        if (!alloc(states, states_bytes, lib.on_gpu(), &err) || !alloc(reserve, reserve_bytes, lib.on_gpu(), &err)) {
            r.error = err;
            return r;
        }
        cudnnDropoutDescriptor_t dd;
        BENCH_CALL(lib, cudnnCreateDropoutDescriptor, &dd);
        struct Guard { CudnnLib& l; cudnnDropoutDescriptor_t d; ~Guard() { BENCH_CALL(l, cudnnDestroyDropoutDescriptor, d); } } g{lib, dd};
        BENCH_TRY("dropout descriptor", BENCH_CALL(lib, cudnnSetDropoutDescriptor, dd, lib.handle(), static_cast<float>(p.real("p", 0.5)),
                                                   states->ptr, states_bytes, 1234ull));
        auto fwd = [&] { return ok(BENCH_CALL(lib, cudnnDropoutForward, lib.handle(), dd, xd, x->ptr, yd, y->ptr, reserve->ptr, reserve_bytes)); };
        if (p.dir == "fwd") {
            out = y;
            launch = fwd;
        } else {
            if (!fwd()) { r.error = status_text(lib, "dropout forward (for backward)", last); return r; }
            out = dx;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnDropoutBackward, lib.handle(), dd, yd, dy->ptr, xd, dx->ptr, reserve->ptr, reserve_bytes)); };
        }
        // Each library draws its own mask: outputs are not comparable across libraries.
        comparable = false;
        if (!launch()) { r.error = status_text(lib, "dropout", last); return r; }
        if (!timed()) return r;
    } else if (p.op == "stf") {
        // The sampler over x, its output the size of x, on the grid of an affine theta near
        // the identity (a slight rotation, scale and shift) generated once, untimed.
        yd = xd;
        const size_t ngrid = static_cast<size_t>(s.dims[0]) * s.dims[2] * s.dims[3] * 2;
        Buffer* y = run.buffer(n, t, 2, &err);
        Buffer* dy = run.buffer(n, t, 3, &err);
        Buffer* dx = run.buffer(n, t, 4, &err);
        Buffer* grid = run.buffer(ngrid, t, 5, &err);
        Buffer* dgrid = run.buffer(ngrid, t, 6, &err);
        if (!x || !y || !dy || !dx || !grid || !dgrid) { r.error = err; return r; }
        std::vector<double> th;
        for (int i = 0; i < s.dims[0]; ++i) th.insert(th.end(), {0.9, 0.1, 0.05, -0.1, 0.9, -0.05});
        const auto theta_host = from_double(th, t);
        run.buffers.emplace_back();
        Buffer* theta = &run.buffers.back();
        if (!alloc(theta, theta_host.size(), lib.on_gpu(), &err)) { r.error = err; return r; }
        upload(theta, theta_host.data(), theta_host.size());
        cudnnSpatialTransformerDescriptor_t st;
        BENCH_CALL(lib, cudnnCreateSpatialTransformerDescriptor, &st);
        struct Guard { CudnnLib& l; cudnnSpatialTransformerDescriptor_t d; ~Guard() { BENCH_CALL(l, cudnnDestroySpatialTransformerDescriptor, d); } } g{lib, st};
        BENCH_TRY("spatial transformer descriptor", BENCH_CALL(lib, cudnnSetSpatialTransformerNdDescriptor, st, CUDNN_SAMPLER_BILINEAR, t.data, 4, s.dims));
        if (!ok(BENCH_CALL(lib, cudnnSpatialTfGridGeneratorForward, lib.handle(), st, theta->ptr, grid->ptr))) {
            r.error = status_text(lib, "grid generator", last);
            return r;
        }
        if (p.dir == "grid_fwd") {  // the grid generator alone: theta -> grid
            out = grid;
            out_count = ngrid;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnSpatialTfGridGeneratorForward, lib.handle(), st, theta->ptr, grid->ptr)); };
        } else if (p.dir == "grid_bwd") {  // dgrid -> dtheta
            out_count = static_cast<size_t>(s.dims[0]) * 6;
            out = run.buffer(out_count, t, 7, &err);
            if (!out) { r.error = err; return r; }
            launch = [&] { return ok(BENCH_CALL(lib, cudnnSpatialTfGridGeneratorBackward, lib.handle(), st, dgrid->ptr, out->ptr)); };
        } else if (p.dir == "fwd") {
            out = y;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnSpatialTfSamplerForward, lib.handle(), st, one, xd, x->ptr, grid->ptr, zero, yd, y->ptr)); };
        } else {
            out = dx;
            launch = [&] { return ok(BENCH_CALL(lib, cudnnSpatialTfSamplerBackward, lib.handle(), st, one, xd, x->ptr, zero, xd, dx->ptr, one, yd, dy->ptr, grid->ptr, zero, dgrid->ptr)); };
        }
        if (!launch()) { r.error = status_text(lib, p.dir.rfind("grid", 0) == 0 ? "grid generator" : "spatial transformer sampler", last); return r; }
        if (!timed()) return r;
    } else if (p.op == "reduce") {
        int cdims[5];
        reduce_dims(p, s, cdims);
        out_t = reduce_out_type(p);
        cudnnTensorDescriptor_t cd;
        BENCH_TRY("C descriptor", run.tensor(out_t, s.nb, cdims, nhwc, &cd));
        out_count = count(s.nb, cdims);
        Buffer* c = run.buffer(out_count, out_t, 2, &err);
        if (!x || !c) { r.error = err; return r; }
        const bool indices = p.get("indices", 0) == 1;
        cudnnReduceTensorDescriptor_t rd;
        BENCH_CALL(lib, cudnnCreateReduceTensorDescriptor, &rd);
        struct Guard { CudnnLib& l; cudnnReduceTensorDescriptor_t d; ~Guard() { BENCH_CALL(l, cudnnDestroyReduceTensorDescriptor, d); } } g{lib, rd};
        BENCH_TRY("reduce descriptor", BENCH_CALL(lib, cudnnSetReduceTensorDescriptor, rd, reduce_op(p.word("op", "add")),
                                                  t.data == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                                  indices ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES : CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
        size_t ws_bytes = 0, ind_bytes = 0;
        BENCH_TRY("cudnnGetReductionWorkspaceSize", BENCH_CALL(lib, cudnnGetReductionWorkspaceSize, lib.handle(), rd, xd, cd, &ws_bytes));
        BENCH_TRY("cudnnGetReductionIndicesSize", BENCH_CALL(lib, cudnnGetReductionIndicesSize, lib.handle(), rd, xd, cd, &ind_bytes));
        run.buffers.emplace_back();
        Buffer* ws = &run.buffers.back();
        run.buffers.emplace_back();
        Buffer* ind = &run.buffers.back();
        if (!alloc(ws, ws_bytes, lib.on_gpu(), &err) || !alloc(ind, ind_bytes, lib.on_gpu(), &err)) { r.error = err; return r; }
        const void* c_one = out_t.data == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d1) : &f1;
        const void* c_zero = out_t.data == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d0) : &f0;
        out = c;
        launch = [&, c_one, c_zero, cd, ws_bytes, ind_bytes] {
            return ok(BENCH_CALL(lib, cudnnReduceTensor, lib.handle(), rd, ind->ptr, ind_bytes, ws->ptr, ws_bytes, c_one, xd, x->ptr, c_zero, cd, c->ptr));
        };
        if (!launch()) { r.error = status_text(lib, "reduce tensor", last); return r; }
        if (!timed()) return r;
    } else if (p.op == "transform") {
        out_t = dtype_of(p.word("ydt", p.dt));
        BENCH_TRY("y descriptor", run.tensor(out_t, s.nb, s.dims, p.word("to", "nchw") == "nhwc", &yd));
        Buffer* y = run.buffer(n, out_t, 2, &err);
        if (!x || !y) { r.error = err; return r; }
        // Scalars follow y's type: double for DOUBLE y, float otherwise.
        const void* y_one = out_t.data == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d1) : &f1;
        const void* y_zero = out_t.data == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d0) : &f0;
        out = y;
        launch = [&, y_one, y_zero, yd] { return ok(BENCH_CALL(lib, cudnnTransformTensor, lib.handle(), y_one, xd, x->ptr, y_zero, yd, y->ptr)); };
        if (!launch()) { r.error = status_text(lib, "transform tensor", last); return r; }
        if (!timed()) return r;
    } else if (p.op == "scale" || p.op == "set") {
        if (!x) { r.error = err; return r; }
        out = x;
        // scale: alpha = -1 keeps the magnitudes (no drift to denormals over the repetitions);
        // set: the value in x's own element type.
        const float fm1 = -1.0f;
        const double dm1 = -1.0;
        const auto value = from_double({0.5 * (t.data == CUDNN_DATA_INT8 ? 4 : 1)}, t);
        const void* arg = p.op == "set" ? static_cast<const void*>(value.data())
                          : t.data == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&dm1) : &fm1;
        if (p.op == "scale") launch = [&, arg] { return ok(BENCH_CALL(lib, cudnnScaleTensor, lib.handle(), xd, x->ptr, arg)); };
        else launch = [&, arg] { return ok(BENCH_CALL(lib, cudnnSetTensor, lib.handle(), xd, x->ptr, arg)); };
        if (!launch()) { r.error = status_text(lib, p.op == "set" ? "set tensor" : "scale tensor", last); return r; }
        if (!timed()) return r;
    }
    if (o.check && out && comparable) {
        std::vector<unsigned char> raw(out_count * out_t.bytes);
        download(raw.data(), *out, raw.size());
        r.out = to_double(raw, out_t);
    }
    r.ok = true;
    return r;
}

double op_bytes(const Problem& p) {
    const TShape s = tensor_shape(p);
    const double tensor = static_cast<double>(count(s.nb, s.dims)) * dtype_of(p.dt).bytes;
    // One read of every input plus one write of every output (the anchors' convention).
    if (p.op == "act") return p.dir == "fwd" ? 2 * tensor : 4 * tensor;      // bwd: y, dy, x -> dx
    if (p.op == "softmax") return p.dir == "fwd" ? 2 * tensor : 3 * tensor;  // bwd: y, dy -> dx
    if (p.op == "bn") return p.dir == "bwd" ? 3 * tensor : 2 * tensor;       // bwd: x, dy -> dx
    if (p.op == "optensor") return p.word("op", "add") == "sqrt" || p.word("op", "add") == "not" ? 2 * tensor : 3 * tensor;
    if (p.op == "lrn") return p.dir == "fwd" ? 2 * tensor : 4 * tensor;      // bwd: y, dy, x -> dx
    if (p.op == "divnorm") return p.dir == "fwd" ? 2 * tensor : 3 * tensor;  // bwd: x, dy -> dx (no means)
    if (p.op == "dropout") return 2 * tensor + static_cast<double>(count(s.nb, s.dims)) / 8;  // + the mask bits
    if (p.op == "stf") {  // fwd: x, grid -> y; bwd: x, dy, grid -> dx, dgrid; grid_fwd / grid_bwd: the grid once
        const double grid = static_cast<double>(s.dims[0]) * s.dims[2] * s.dims[3] * 2 * dtype_of(p.dt).bytes;
        if (p.dir == "grid_fwd" || p.dir == "grid_bwd") return grid;
        return p.dir == "fwd" ? 2 * tensor + grid : 3 * tensor + 2 * grid;
    }
    if (p.op == "scale") return 2 * tensor;
    if (p.op == "set") return tensor;
    if (p.op == "transform") return tensor + static_cast<double>(count(s.nb, s.dims)) * dtype_of(p.word("ydt", p.dt)).bytes;
    if (p.op == "reduce") {
        int cdims[5];
        reduce_dims(p, s, cdims);
        const double outs = static_cast<double>(count(s.nb, cdims));
        return tensor + outs * reduce_out_type(p).bytes + (p.get("indices", 0) == 1 ? outs * 4 : 0);
    }
    if (p.op == "bias") return 2 * tensor;                                     // read C, write C
    if (p.op == "pool") {
        const int nsp = s.nb - 2;
        int win[3], pad[3], stride[3];
        pool_window(p, nsp, win, pad, stride);
        double out = static_cast<double>(s.dims[0]) * s.dims[1];
        for (int i = 0; i < nsp; ++i) out *= 1 + (s.dims[2 + i] + 2 * pad[i] - win[i]) / stride[i];
        const double ty = out * dtype_of(p.dt).bytes;
        return p.dir == "fwd" ? tensor + ty : 2 * tensor + 2 * ty;  // bwd: y, dy, x -> dx
    }
    return 2 * tensor;
}

}  // namespace odnn_bench
