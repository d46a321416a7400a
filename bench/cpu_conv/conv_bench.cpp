// CPU convolution timing against the BLAS it is built on. For each problem of a
// ResNet-style list (n c h w k r s pad stride dil groups per line), runs forward,
// backward data and backward filter through the public API with the algorithms
// frameworks use without searching (IMPLICIT_PRECOMP_GEMM, ALGO_1, ALGO_1), and an
// sgemm / dgemm of the same FLOPs (a cube, M = N = K); prints both rates and the ratio.
//
//   conv_bench [--file F] [--batch N] [--dtype f32|f64|f16|bf16] [--layout nchw|nhwc]
//              [--reps R] [--dirs fwd,bwd_data,bwd_filter] [--find] [--cputime]
//
// Not a test: numbers depend on the machine and its load. The project's bench tool is
// the reference for recorded results.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cudnn.h"

namespace {

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        cudnnStatus_t s_ = (call);                                                                    \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                             \
            char msg[512];                                                                            \
            cudnnGetLastErrorString(msg, sizeof msg);                                                 \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, cudnnGetErrorString(s_), msg); \
            std::exit(1);                                                                             \
        }                                                                                             \
    } while (0)

struct Layer {
    int n, c, h, w, k, r, s, pad, stride, dil, groups;
};

// Wall time, or with --cputime the process's CPU time: on a loaded machine, CPU time of a
// single-threaded run (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1) is the stable measure.
bool g_cputime = false;
double now() {
    if (g_cputime) {
        timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
double time_it(F&& f, int reps) {
    f();  // warm-up
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        const double t0 = now();
        f();
        t.push_back(now() - t0);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

double gemm_seconds(double flops, bool dbl, int reps) {
    const int m = std::max(16, static_cast<int>(std::cbrt(flops / 2.0)));
    std::vector<double> ad, bd, cd;
    std::vector<float> af, bf, cf;
    if (dbl) {
        ad.assign(static_cast<size_t>(m) * m, 0.5);
        bd = ad;
        cd.assign(ad.size(), 0.0);
    } else {
        af.assign(static_cast<size_t>(m) * m, 0.5f);
        bf = af;
        cf.assign(af.size(), 0.0f);
    }
    const double t = time_it(
        [&] {
            if (dbl)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, ad.data(), m, bd.data(), m, 0.0,
                            cd.data(), m);
            else
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, af.data(), m, bf.data(), m,
                            0.0f, cf.data(), m);
        },
        reps);
    return t * flops / (2.0 * m * m * static_cast<double>(m));  // scaled to exactly `flops`
}

}  // namespace

int main(int argc, char** argv) {
    std::string file = "/work/shared/bench/resnet50_conv.txt", dtype = "f32", layout = "nchw",
                dirs = "fwd,bwd_data,bwd_filter";
    int batch = 8, reps = 5;
    bool find = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--file") file = next();
        else if (a == "--batch") batch = std::atoi(next().c_str());
        else if (a == "--dtype") dtype = next();
        else if (a == "--layout") layout = next();
        else if (a == "--reps") reps = std::atoi(next().c_str());
        else if (a == "--dirs") dirs = next();
        else if (a == "--find") find = true;
        else if (a == "--cputime") g_cputime = true;
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    const cudnnDataType_t dt = dtype == "f64"    ? CUDNN_DATA_DOUBLE
                               : dtype == "f16"  ? CUDNN_DATA_HALF
                               : dtype == "bf16" ? CUDNN_DATA_BFLOAT16
                                                 : CUDNN_DATA_FLOAT;
    const bool dbl = dt == CUDNN_DATA_DOUBLE;
    const size_t esz = dbl ? 8 : dt == CUDNN_DATA_FLOAT ? 4 : 2;
    const cudnnTensorFormat_t fmt = layout == "nhwc" ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;

    std::vector<Layer> layers;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ss(line);
        Layer l;
        if (ss >> l.n >> l.c >> l.h >> l.w >> l.k >> l.r >> l.s >> l.pad >> l.stride >> l.dil >> l.groups) {
            l.n = batch;
            layers.push_back(l);
        }
    }
    if (layers.empty()) {
        std::fprintf(stderr, "no problems in %s\n", file.c_str());
        return 1;
    }

    cudnnHandle_t h;
    CHECK(cudnnCreate(&h));
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK(cudnnCreateTensorDescriptor(&xd));
    CHECK(cudnnCreateTensorDescriptor(&yd));
    CHECK(cudnnCreateFilterDescriptor(&wd));
    CHECK(cudnnCreateConvolutionDescriptor(&cd));
    std::printf("# %s, batch %d, %s %s, median of %d; gemm: same FLOPs as one cube sgemm/dgemm\n", file.c_str(), batch,
                dtype.c_str(), layout.c_str(), reps);
    std::printf("%-40s %-10s %9s %9s %9s %6s %s\n", "layer (n c h w k r s pad stride)", "dir", "ms", "GFLOP/s",
                "gemm", "ratio", "workspace");
    double tot_flops = 0, tot_conv = 0, tot_gemm = 0;
    for (const Layer& l : layers) {
        CHECK(cudnnSetTensor4dDescriptor(xd, fmt, dt, l.n, l.c, l.h, l.w));
        CHECK(cudnnSetFilter4dDescriptor(wd, dt, fmt, l.k, l.c / l.groups, l.r, l.s));
        CHECK(cudnnSetConvolution2dDescriptor(cd, l.pad, l.pad, l.stride, l.stride, l.dil, l.dil,
                                              CUDNN_CROSS_CORRELATION, dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT));
        CHECK(cudnnSetConvolutionGroupCount(cd, l.groups));
        int on, oc, oh, ow;
        CHECK(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow));
        CHECK(cudnnSetTensor4dDescriptor(yd, fmt, dt, on, oc, oh, ow));
        const double flops = 2.0 * on * oc * oh * ow * (l.c / l.groups) * l.r * l.s;
        std::vector<unsigned char> x(static_cast<size_t>(l.n) * l.c * l.h * l.w * esz),
            w(static_cast<size_t>(l.k) * (l.c / l.groups) * l.r * l.s * esz),
            y(static_cast<size_t>(on) * oc * oh * ow * esz);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<unsigned char>((i * 7) % 61);
        for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<unsigned char>((i * 13) % 59);
        for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<unsigned char>((i * 5) % 53);
        // The top byte of every element: finite, moderate values (no denormals, no NaN).
        const unsigned char top = dt == CUDNN_DATA_HALF ? 0x3c : 0x3f;
        for (size_t i = 0; i < x.size(); i += esz) x[i + esz - 1] = top;
        for (size_t i = 0; i < w.size(); i += esz) w[i + esz - 1] = top;
        for (size_t i = 0; i < y.size(); i += esz) y[i + esz - 1] = top;
        const double one_d = 1.0, zero_d = 0.0;
        const float one_f = 1.0f, zero_f = 0.0f;
        const void* one = dbl ? static_cast<const void*>(&one_d) : &one_f;
        const void* zero = dbl ? static_cast<const void*>(&zero_d) : &zero_f;
        const double gemm_s = gemm_seconds(flops, dbl, reps);
        char name[64];
        std::snprintf(name, sizeof name, "%d %d %d %d %d %d %d %d %d", l.n, l.c, l.h, l.w, l.k, l.r, l.s, l.pad,
                      l.stride);
        for (const char* dir : {"fwd", "bwd_data", "bwd_filter"}) {
            if (dirs.find(dir) == std::string::npos) continue;
            const std::string d = dir;
            size_t wsb = 0;
            int algo = 1;
            if (find) {
                int got = 0;
                if (d == "fwd") {
                    cudnnConvolutionFwdAlgoPerf_t p[8];
                    CHECK(cudnnFindConvolutionForwardAlgorithm(h, xd, wd, cd, yd, 8, &got, p));
                    algo = p[0].algo;
                } else if (d == "bwd_data") {
                    cudnnConvolutionBwdDataAlgoPerf_t p[8];
                    CHECK(cudnnFindConvolutionBackwardDataAlgorithm(h, wd, yd, cd, xd, 8, &got, p));
                    algo = p[0].algo;
                } else {
                    cudnnConvolutionBwdFilterAlgoPerf_t p[8];
                    CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(h, xd, yd, cd, wd, 8, &got, p));
                    algo = p[0].algo;
                }
            }
            if (d == "fwd")
                CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd,
                                                              static_cast<cudnnConvolutionFwdAlgo_t>(algo), &wsb));
            else if (d == "bwd_data")
                CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
                    h, wd, yd, cd, xd, static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &wsb));
            else
                CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
                    h, xd, yd, cd, wd, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &wsb));
            std::vector<unsigned char> ws(wsb + 1);
            const double t = time_it(
                [&] {
                    if (d == "fwd")
                        CHECK(cudnnConvolutionForward(h, one, xd, x.data(), wd, w.data(), cd,
                                                      static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws.data(), wsb,
                                                      zero, yd, y.data()));
                    else if (d == "bwd_data")
                        CHECK(cudnnConvolutionBackwardData(h, one, wd, w.data(), yd, y.data(), cd,
                                                           static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws.data(),
                                                           wsb, zero, xd, x.data()));
                    else
                        CHECK(cudnnConvolutionBackwardFilter(h, one, xd, x.data(), yd, y.data(), cd,
                                                             static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo),
                                                             ws.data(), wsb, zero, wd, w.data()));
                },
                reps);
            tot_flops += flops;
            tot_conv += t;
            tot_gemm += gemm_s;
            std::printf("%-40s %-10s %9.3f %9.1f %9.1f %6.2f %zu (algo %d)\n", name, dir, t * 1e3, flops / t * 1e-9,
                        flops / gemm_s * 1e-9, gemm_s / t, wsb, algo);
            std::fflush(stdout);
        }
    }
    std::printf("# total: conv %.1f GFLOP/s, gemm %.1f GFLOP/s, ratio %.2f\n", tot_flops / tot_conv * 1e-9,
                tot_flops / tot_gemm * 1e-9, tot_gemm / tot_conv);
    cudnnDestroyConvolutionDescriptor(cd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroy(h);
    return 0;
}
