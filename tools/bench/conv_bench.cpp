#include "conv_bench.hpp"

#include <cmath>
#include <cstring>

#include "data.hpp"

namespace odnn_bench {

namespace {

struct ConvShape {
    int nb;           // 4 or 5
    int x[5], w[5];   // logical N C (D) H W / K C/g (T) R S
    int pad[3], stride[3], dil[3];
    int groups;
};

ConvShape shape_of(const Problem& p) {
    ConvShape s{};
    const bool three_d = p.v.count("d") > 0;
    s.nb = three_d ? 5 : 4;
    s.groups = static_cast<int>(p.get("g", 1));
    const int n = static_cast<int>(p.get("n", 1)), c = static_cast<int>(p.get("c", 1)),
              k = static_cast<int>(p.get("k", 1));
    s.x[0] = n;
    s.x[1] = c;
    s.w[0] = k;
    s.w[1] = c / (s.groups > 0 ? s.groups : 1);
    const char* in_keys[3] = {"d", "h", "w"};
    const char* f_keys[3] = {"t", "r", "s"};
    const char* suffix[3] = {"_d", "_h", "_w"};
    const int first = three_d ? 0 : 1;
    for (int i = first; i < 3; ++i) {
        const int j = i - first;
        s.x[2 + j] = static_cast<int>(p.get(in_keys[i], 1));
        s.w[2 + j] = static_cast<int>(p.get(f_keys[i], 1));
        s.pad[j] = static_cast<int>(p.get(std::string("pad") + suffix[i], p.get("pad", 0)));
        s.stride[j] = static_cast<int>(p.get(std::string("stride") + suffix[i], p.get("stride", 1)));
        s.dil[j] = static_cast<int>(p.get(std::string("dil") + suffix[i], p.get("dil", 1)));
    }
    return s;
}

RunResult run_conv(CudnnLib& lib, const Problem& p, const Options& o) {
    RunResult r;
    const Dt t = dtype_of(p.dt);
    const ConvShape s = shape_of(p);
    const bool nhwc = p.layout == "nhwc";
    cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
    cudnnFilterDescriptor_t wd = nullptr;
    cudnnConvolutionDescriptor_t cd = nullptr;
    BENCH_CALL(lib, cudnnCreateTensorDescriptor, &xd);
    BENCH_CALL(lib, cudnnCreateTensorDescriptor, &yd);
    BENCH_CALL(lib, cudnnCreateFilterDescriptor, &wd);
    BENCH_CALL(lib, cudnnCreateConvolutionDescriptor, &cd);
    struct Cleanup {
        CudnnLib& lib;
        cudnnTensorDescriptor_t& xd;
        cudnnTensorDescriptor_t& yd;
        cudnnFilterDescriptor_t& wd;
        cudnnConvolutionDescriptor_t& cd;
        std::vector<Buffer*> bufs;
        ~Cleanup() {
            BENCH_CALL(lib, cudnnDestroyTensorDescriptor, xd);
            BENCH_CALL(lib, cudnnDestroyTensorDescriptor, yd);
            BENCH_CALL(lib, cudnnDestroyFilterDescriptor, wd);
            BENCH_CALL(lib, cudnnDestroyConvolutionDescriptor, cd);
            for (Buffer* b : bufs) release(b);
        }
    };
    Buffer bx, bw, by, bws;
    Cleanup cleanup{lib, xd, yd, wd, cd, {&bx, &bw, &by, &bws}};

    int xs[5], ys[5], ydims[5];
    strides_for(s.nb, s.x, nhwc, xs);
    BENCH_TRY("x descriptor", BENCH_CALL(lib, cudnnSetTensorNdDescriptor, xd, t.data, s.nb, s.x, xs));
    BENCH_TRY("filter descriptor", BENCH_CALL(lib, cudnnSetFilterNdDescriptor, wd, t.data,
                                              nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, s.nb, s.w));
    BENCH_TRY("convolution descriptor",
              BENCH_CALL(lib, cudnnSetConvolutionNdDescriptor, cd, s.nb - 2, s.pad, s.stride, s.dil,
                         CUDNN_CROSS_CORRELATION, t.compute));
    BENCH_TRY("group count", BENCH_CALL(lib, cudnnSetConvolutionGroupCount, cd, s.groups));
    const cudnnMathType_t math = p.math == "fma"         ? CUDNN_FMA_MATH
                                 : p.math == "tensor_op" ? CUDNN_TENSOR_OP_MATH
                                                         : CUDNN_DEFAULT_MATH;
    BENCH_TRY("math type", BENCH_CALL(lib, cudnnSetConvolutionMathType, cd, math));
    BENCH_TRY("output dims", BENCH_CALL(lib, cudnnGetConvolutionNdForwardOutputDim, cd, xd, wd, s.nb, ydims));
    strides_for(s.nb, ydims, nhwc, ys);
    BENCH_TRY("y descriptor", BENCH_CALL(lib, cudnnSetTensorNdDescriptor, yd, t.data, s.nb, ydims, ys));

    const size_t nx = count(s.nb, s.x), nw = count(s.nb, s.w), ny = count(s.nb, ydims);
    const bool gpu = lib.on_gpu();
    std::string err;
    if (!alloc(&bx, nx * t.bytes, gpu, &err) || !alloc(&bw, nw * t.bytes, gpu, &err) ||
        !alloc(&by, ny * t.bytes, gpu, &err)) {
        r.error = err;
        return r;
    }
    // Inputs of the direction: fwd (x, w) -> y; bwd_data (w, dy) -> dx; bwd_filter (x, dy) -> dw.
    const auto hx = make_data(nx, t, 1), hw = make_data(nw, t, 2), hy = make_data(ny, t, 3);
    upload(&bx, hx.data(), hx.size());
    upload(&bw, hw.data(), hw.size());
    upload(&by, hy.data(), hy.size());

    const float falpha = 1.0f, fbeta = 0.0f;
    const double dalpha = 1.0, dbeta = 0.0;
    const void* alpha = t.data == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&dalpha) : &falpha;
    const void* beta = t.data == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&dbeta) : &fbeta;
    const int want = o.algo >= 0 ? o.algo : static_cast<int>(p.get("algo", -1));
    size_t ws = 0;
    int algo = want;
    Buffer* out = nullptr;
    size_t out_count = 0;
    std::function<bool()> launch;
    cudnnStatus_t last = CUDNN_STATUS_SUCCESS;  // status of the latest launch, for messages
    if (p.dir == "fwd") {
        if (algo < 0) {
            cudnnConvolutionFwdAlgoPerf_t perf[16];
            int got = 0;
            if (o.find) {
                BENCH_TRY("cudnnFindConvolutionForwardAlgorithm",
                          BENCH_CALL(lib, cudnnFindConvolutionForwardAlgorithm, lib.handle(), xd, wd, cd, yd, 16, &got, perf));
            } else {
                BENCH_TRY("cudnnGetConvolutionForwardAlgorithm_v7",
                          BENCH_CALL(lib, cudnnGetConvolutionForwardAlgorithm_v7, lib.handle(), xd, wd, cd, yd, 16,
                                 &got, perf));
            }
            for (int i = 0; i < got && algo < 0; ++i)
                if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= o.workspace_limit)
                    algo = perf[i].algo;
        }
        BENCH_TRY("cudnnGetConvolutionForwardWorkspaceSize",
                  BENCH_CALL(lib, cudnnGetConvolutionForwardWorkspaceSize, lib.handle(), xd, wd, cd, yd,
                             static_cast<cudnnConvolutionFwdAlgo_t>(algo), &ws));
        out = &by;
        out_count = ny;
        launch = [&] {
            return (last = BENCH_CALL(lib, cudnnConvolutionForward, lib.handle(), alpha, xd, bx.ptr, wd, bw.ptr, cd,
                              static_cast<cudnnConvolutionFwdAlgo_t>(algo), bws.ptr, ws, beta, yd, by.ptr)) ==
                   CUDNN_STATUS_SUCCESS;
        };
    } else if (p.dir == "bwd_data") {
        if (algo < 0) {
            cudnnConvolutionBwdDataAlgoPerf_t perf[16];
            int got = 0;
            if (o.find) {
                BENCH_TRY("cudnnFindConvolutionBackwardDataAlgorithm",
                          BENCH_CALL(lib, cudnnFindConvolutionBackwardDataAlgorithm, lib.handle(), wd, yd, cd, xd, 16, &got, perf));
            } else {
                BENCH_TRY("cudnnGetConvolutionBackwardDataAlgorithm_v7",
                      BENCH_CALL(lib, cudnnGetConvolutionBackwardDataAlgorithm_v7, lib.handle(), wd, yd, cd, xd,
                                 16, &got, perf));
            }
            for (int i = 0; i < got && algo < 0; ++i)
                if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= o.workspace_limit)
                    algo = perf[i].algo;
        }
        BENCH_TRY("cudnnGetConvolutionBackwardDataWorkspaceSize",
                  BENCH_CALL(lib, cudnnGetConvolutionBackwardDataWorkspaceSize, lib.handle(), wd, yd, cd, xd,
                             static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &ws));
        out = &bx;
        out_count = nx;
        launch = [&] {
            return (last = BENCH_CALL(lib, cudnnConvolutionBackwardData, lib.handle(), alpha, wd, bw.ptr, yd, by.ptr, cd,
                              static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bws.ptr, ws, beta, xd, bx.ptr)) ==
                   CUDNN_STATUS_SUCCESS;
        };
    } else {
        if (algo < 0) {
            cudnnConvolutionBwdFilterAlgoPerf_t perf[16];
            int got = 0;
            if (o.find) {
                BENCH_TRY("cudnnFindConvolutionBackwardFilterAlgorithm",
                          BENCH_CALL(lib, cudnnFindConvolutionBackwardFilterAlgorithm, lib.handle(), xd, yd, cd, wd, 16, &got, perf));
            } else {
                BENCH_TRY("cudnnGetConvolutionBackwardFilterAlgorithm_v7",
                      BENCH_CALL(lib, cudnnGetConvolutionBackwardFilterAlgorithm_v7, lib.handle(), xd, yd, cd, wd,
                                 16, &got, perf));
            }
            for (int i = 0; i < got && algo < 0; ++i)
                if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= o.workspace_limit)
                    algo = perf[i].algo;
        }
        BENCH_TRY("cudnnGetConvolutionBackwardFilterWorkspaceSize",
                  BENCH_CALL(lib, cudnnGetConvolutionBackwardFilterWorkspaceSize, lib.handle(), xd, yd, cd, wd,
                             static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &ws));
        out = &bw;
        out_count = nw;
        launch = [&] {
            return (last = BENCH_CALL(lib, cudnnConvolutionBackwardFilter, lib.handle(), alpha, xd, bx.ptr, yd, by.ptr, cd,
                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bws.ptr, ws, beta, wd, bw.ptr)) ==
                   CUDNN_STATUS_SUCCESS;
        };
    }
    if (algo < 0) {
        r.error = "the library offers no algorithm for this problem";
        return r;
    }
    if (!alloc(&bws, ws, gpu, &err)) {
        r.error = err;
        return r;
    }
    r.algo = algo;
    r.workspace = ws;
    bool ok = false;
    // One checked run first: its failure message is worth more than a timing.
    if (!launch()) {
        r.error = status_text(lib, "convolution", last);
        return r;
    }
    r.ms = measure(gpu, o.warmup, o.reps, launch, &ok, o.overhead ? &r.overhead : nullptr);
    if (!ok) {
        r.error = "a timed run failed";
        return r;
    }
    if (o.check) {
        std::vector<unsigned char> raw(out_count * t.bytes);
        download(raw.data(), *out, raw.size());
        r.out = to_double(raw, t);
    }
    r.ok = true;
    return r;
}

RunResult run_copy(CudnnLib& lib, const Problem& p, const Options& o) {
    RunResult r;
    const size_t bytes = static_cast<size_t>(p.get("n", 1)) * dtype_of(p.dt).bytes;
    const bool gpu = lib.on_gpu();
    Buffer a, b;
    std::string err;
    if (!alloc(&a, bytes, gpu, &err) || !alloc(&b, bytes, gpu, &err)) {
        r.error = err;
        release(&a);
        release(&b);
        return r;
    }
    bool ok = false;
    r.ms = measure(gpu, o.warmup, o.reps,
                   [&] {
                       if (gpu) return Cuda::get()->d2d(b.ptr, a.ptr, bytes);
                       std::memcpy(b.ptr, a.ptr, bytes);
                       return true;
                   },
                   &ok);
    release(&a);
    release(&b);
    r.ok = ok;
    if (!ok) r.error = "copy failed";
    return r;
}

}  // namespace

RunResult run_problem(CudnnLib& lib, const Problem& p, const Options& o) {
    if (p.op == "conv") return run_conv(lib, p, o);
    if (p.op == "copy") return run_copy(lib, p, o);
    return run_op(lib, p, o);
}

double problem_flops(const Problem& p) {
    if (p.op != "conv") return 0;
    const ConvShape s = shape_of(p);
    double out_spatial = 1, filt = 1;
    for (int i = 2; i < s.nb; ++i) {
        const int ext = (s.w[i] - 1) * s.dil[i - 2] + 1;
        out_spatial *= 1 + (s.x[i] + 2 * s.pad[i - 2] - ext) / s.stride[i - 2];
        filt *= s.w[i];
    }
    return 2.0 * s.x[0] * s.w[0] * s.w[1] * filt * out_spatial;
}

double problem_bytes(const Problem& p) {
    const double e = dtype_of(p.dt).bytes;
    if (p.op == "copy") return 2.0 * static_cast<double>(p.get("n", 1)) * e;  // read + write
    if (p.op != "conv") return op_bytes(p);
    const ConvShape s = shape_of(p);
    double out_spatial = 1;
    for (int i = 2; i < s.nb; ++i) {
        const int ext = (s.w[i] - 1) * s.dil[i - 2] + 1;
        out_spatial *= 1 + (s.x[i] + 2 * s.pad[i - 2] - ext) / s.stride[i - 2];
    }
    return e * (static_cast<double>(count(s.nb, s.x)) + count(s.nb, s.w) + static_cast<double>(s.x[0]) * s.w[0] * out_spatial);
}

}  // namespace odnn_bench
