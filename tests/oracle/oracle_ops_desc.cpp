// Activation, pooling, LRN, op-tensor, reduce-tensor, tensor-transform, dropout and
// spatial-transformer descriptors: odnn vs NVIDIA. One line per experiment, with what
// the descriptor reads back appended to it.
//
// Left out on purpose (tested against odnn alone in tests/api/test_ops_desc.cpp):
// - NULL where NVIDIA's library crashes (output pointers of most getters, the arrays of
//   cudnnSetPoolingNdDescriptor, cudnnCreateLRNDescriptor(NULL), cudnnSetLRNDescriptor
//   (NULL, ...), cudnnGetPooling2dForwardOutputDim's outputs, the direction output of
//   cudnnGetTensorTransformDescriptor, cudnnDropoutGetReserveSpaceSize's size);
// - read-backs after a pooling Set that failed on a window or stride: NVIDIA has by
//   then written part of the new values, odnn leaves the descriptor unchanged;
// - what a never-set activation / op-tensor / reduce-tensor descriptor holds in the
//   fields NVIDIA leaves uninitialised;
// - the divergences marked in tests/api/test_ops_desc.cpp (negative transform
//   format, spatial transformer nbDims/dims, pooling output of a padding that
//   overflows int);
// - dropout calls that need a handle: NVIDIA's cudnnCreate needs a GPU.
#include <cfloat>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "oracle/oracle.hpp"

namespace {

using oracle::Lib;
using oracle::Trace;

const double kNaN = __builtin_nan("");
const double kInf = __builtin_inf();

void append(Trace& t, const Trace& r) {
    for (const std::string& l : r.lines) t.lines.back() += " |" + l;
}

// ---- Activation ----

void read_back_activation(const Lib& lib, Trace& t, cudnnActivationDescriptor_t d, bool with_coef = true) {
    Trace r;
    auto mode = static_cast<cudnnActivationMode_t>(-9);
    auto nan = static_cast<cudnnNanPropagation_t>(-9);
    double coef = -9, beta = -9;
    cudnnStatus_t s = OCALL(lib, cudnnGetActivationDescriptor, d, &mode, &nan, &coef);
    if (with_coef)
        r.add(" get %d: mode=%d nan=%d coef=%.17g", s, mode, nan, coef);
    else
        r.add(" get %d: mode=%d nan=%d", s, mode, nan);
    s = OCALL(lib, cudnnGetActivationDescriptorSwishBeta, d, &beta);
    r.add(" beta %d: %.17g", s, beta);
    append(t, r);
}

void activation(const Lib& lib, Trace& t) {
    cudnnActivationDescriptor_t fresh = nullptr;
    OSTATUS(t, lib, cudnnCreateActivationDescriptor, &fresh);
    // NVIDIA leaves a fresh descriptor's fields uninitialised (an ASan build of this
    // test reads its 0xbe fill pattern): compare the statuses only.
    {
        cudnnActivationMode_t mode;
        cudnnNanPropagation_t nan;
        double coef, beta;
        t.lines.back() += " | get " + std::to_string(OCALL(lib, cudnnGetActivationDescriptor, fresh, &mode, &nan, &coef)) +
                          " | beta " + std::to_string(OCALL(lib, cudnnGetActivationDescriptorSwishBeta, fresh, &beta));
    }
    OCALL(lib, cudnnDestroyActivationDescriptor, fresh);

    const double coefs[] = {0.0, 1.0, 6.0, -1.0, 0.5, kNaN, kInf, -kInf, DBL_MAX, 1e-300, DBL_TRUE_MIN};
    for (int mode = -1; mode <= 8; ++mode)
        for (int nan = -1; nan <= 2; ++nan)
            for (double coef : coefs) {
                cudnnActivationDescriptor_t d = nullptr;
                OCALL(lib, cudnnCreateActivationDescriptor, &d);
                OCALL(lib, cudnnSetActivationDescriptor, d, CUDNN_ACTIVATION_TANH, CUDNN_PROPAGATE_NAN, 3.5);
                cudnnStatus_t s = OCALL(lib, cudnnSetActivationDescriptor, d, static_cast<cudnnActivationMode_t>(mode),
                                        static_cast<cudnnNanPropagation_t>(nan), coef);
                t.add("setAct mode=%d nan=%d coef=%.17g -> %d", mode, nan, coef, s);
                read_back_activation(lib, t, d);  // after a failure too: unchanged
                OCALL(lib, cudnnDestroyActivationDescriptor, d);
            }
    for (double beta : {1.0, 0.0, -1.0, 2.5, kNaN, kInf, -kInf, 1e300}) {
        cudnnActivationDescriptor_t d = nullptr;
        OCALL(lib, cudnnCreateActivationDescriptor, &d);
        OCALL(lib, cudnnSetActivationDescriptor, d, CUDNN_ACTIVATION_SWISH, CUDNN_NOT_PROPAGATE_NAN, 0.0);
        cudnnStatus_t s = OCALL(lib, cudnnSetActivationDescriptorSwishBeta, d, beta);
        t.add("setBeta %.17g -> %d", beta, s);
        read_back_activation(lib, t, d);
        // The beta survives a later Set of the activation, a failed one too.
        s = OCALL(lib, cudnnSetActivationDescriptor, d, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 1.0);
        t.add("then setAct relu -> %d", s);
        read_back_activation(lib, t, d);
        s = OCALL(lib, cudnnSetActivationDescriptor, d, static_cast<cudnnActivationMode_t>(7), CUDNN_PROPAGATE_NAN,
                  2.0);
        t.add("then setAct mode=7 -> %d", s);
        read_back_activation(lib, t, d);
        OCALL(lib, cudnnDestroyActivationDescriptor, d);
    }
    // Beta set on a fresh descriptor, then the activation.
    cudnnActivationDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateActivationDescriptor, &d);
    OSTATUS(t, lib, cudnnSetActivationDescriptorSwishBeta, d, 0.25);
    OSTATUS(t, lib, cudnnSetActivationDescriptor, d, CUDNN_ACTIVATION_ELU, CUDNN_PROPAGATE_NAN, 0.5);
    read_back_activation(lib, t, d);
    double beta = -9;
    OSTATUS(t, lib, cudnnGetActivationDescriptorSwishBeta, d, nullptr);
    OSTATUS(t, lib, cudnnGetActivationDescriptorSwishBeta, nullptr, &beta);
    OSTATUS(t, lib, cudnnSetActivationDescriptorSwishBeta, nullptr, 1.0);
    auto mode = static_cast<cudnnActivationMode_t>(-9);
    auto nan = static_cast<cudnnNanPropagation_t>(-9);
    double coef = -9;
    OSTATUS(t, lib, cudnnGetActivationDescriptor, nullptr, &mode, &nan, &coef);
    t.add("outputs untouched: %d %d %g %g", mode, nan, coef, beta);
    OSTATUS(t, lib, cudnnSetActivationDescriptor, nullptr, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0);
    OSTATUS(t, lib, cudnnSetActivationDescriptor, nullptr, static_cast<cudnnActivationMode_t>(9), CUDNN_PROPAGATE_NAN,
            0.0);
    OSTATUS(t, lib, cudnnCreateActivationDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyActivationDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyActivationDescriptor, d);
}

// ---- Pooling ----

void read_back_pooling(const Lib& lib, Trace& t, cudnnPoolingDescriptor_t d, std::initializer_list<int> requests) {
    Trace r;
    auto mode = static_cast<cudnnPoolingMode_t>(-9);
    auto nan = static_cast<cudnnNanPropagation_t>(-9);
    int wh = -9, ww = -9, ph = -9, pw = -9, sh = -9, sw = -9;
    cudnnStatus_t s = OCALL(lib, cudnnGetPooling2dDescriptor, d, &mode, &nan, &wh, &ww, &ph, &pw, &sh, &sw);
    r.add(" get2d %d: %d %d w=%d,%d p=%d,%d s=%d,%d", s, mode, nan, wh, ww, ph, pw, sh, sw);
    for (int req : requests) {
        int nb = -9, wa[8], pa[8], sa[8];
        for (int i = 0; i < 8; ++i) wa[i] = pa[i] = sa[i] = -9;
        mode = static_cast<cudnnPoolingMode_t>(-9);
        nan = static_cast<cudnnNanPropagation_t>(-9);
        s = OCALL(lib, cudnnGetPoolingNdDescriptor, d, req, &mode, &nan, &nb, wa, pa, sa);
        std::string line = " getNd(" + std::to_string(req) + ") " + std::to_string(s) + ": " + std::to_string(mode) +
                           " " + std::to_string(nan) + " nb=" + std::to_string(nb) + " w=";
        for (int i = 0; i < 7; ++i) line += std::to_string(wa[i]) + ",";
        line += " p=";
        for (int i = 0; i < 7; ++i) line += std::to_string(pa[i]) + ",";
        line += " s=";
        for (int i = 0; i < 7; ++i) line += std::to_string(sa[i]) + ",";
        r.lines.push_back(line);
    }
    append(t, r);
}

void pooling_set(const Lib& lib, Trace& t) {
    cudnnPoolingDescriptor_t fresh = nullptr;
    OSTATUS(t, lib, cudnnCreatePoolingDescriptor, &fresh);
    read_back_pooling(lib, t, fresh, {-1, 0, 1, 2, 3, 6, 7, 8});
    OCALL(lib, cudnnDestroyPoolingDescriptor, fresh);

    // Every mode and NaN option; a failure here leaves the descriptor unchanged.
    for (int mode = -1; mode <= 5; ++mode)
        for (int nan = -1; nan <= 2; ++nan) {
            cudnnPoolingDescriptor_t d = nullptr;
            OCALL(lib, cudnnCreatePoolingDescriptor, &d);
            OCALL(lib, cudnnSetPooling2dDescriptor, d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 5, 4, 1, 2, 3, 1);
            cudnnStatus_t s = OCALL(lib, cudnnSetPooling2dDescriptor, d, static_cast<cudnnPoolingMode_t>(mode),
                                    static_cast<cudnnNanPropagation_t>(nan), 3, 3, 1, 1, 2, 2);
            t.add("set2d mode=%d nan=%d -> %d", mode, nan, s);
            read_back_pooling(lib, t, d, {2});
            OCALL(lib, cudnnDestroyPoolingDescriptor, d);
        }
    // Window, padding, stride: zero, negative, huge.
    const int win[][2] = {{3, 3}, {1, 1}, {2, 5}, {0, 3}, {3, 0}, {-1, 3}, {3, -1}, {INT_MAX, 2}, {INT_MIN, 2}};
    const int pad[][2] = {{0, 0}, {1, 1}, {3, 3}, {5, 5}, {-1, 0}, {0, -1}, {INT_MAX, 0}, {INT_MIN, INT_MIN}};
    const int str[][2] = {{1, 1}, {2, 2}, {3, 1}, {0, 1}, {1, 0}, {-1, 1}, {1, -1}, {INT_MAX, 1}, {INT_MIN, 1}};
    for (const auto& w : win)
        for (const auto& p : pad)
            for (const auto& s2 : str)
                for (int mode : {CUDNN_POOLING_MAX, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING}) {
                    cudnnPoolingDescriptor_t d = nullptr;
                    OCALL(lib, cudnnCreatePoolingDescriptor, &d);
                    cudnnStatus_t s = OCALL(lib, cudnnSetPooling2dDescriptor, d, static_cast<cudnnPoolingMode_t>(mode),
                                            CUDNN_NOT_PROPAGATE_NAN, w[0], w[1], p[0], p[1], s2[0], s2[1]);
                    t.add("set2d mode=%d w=%d,%d p=%d,%d s=%d,%d -> %d", mode, w[0], w[1], p[0], p[1], s2[0], s2[1], s);
                    if (s == CUDNN_STATUS_SUCCESS) read_back_pooling(lib, t, d, {2});
                    OCALL(lib, cudnnDestroyPoolingDescriptor, d);
                }
    // Nd: every rank; entries past the new rank keep what an earlier Set wrote.
    const int wa[9] = {2, 3, 4, 5, 2, 3, 2, 2, 2}, pa[9] = {0, 1, 2, 1, -1, 0, 0, 0, 0},
              sa[9] = {1, 2, 3, 1, 1, 2, 1, 1, 1};
    for (int nb = -1; nb <= 9; ++nb)
        for (int mode : {-1, 0, 1, 2, 3, 4})
            for (int nan : {-1, 0, 1, 2}) {
                cudnnPoolingDescriptor_t d = nullptr;
                OCALL(lib, cudnnCreatePoolingDescriptor, &d);
                OCALL(lib, cudnnSetPooling2dDescriptor, d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 5, 4, 1, 2, 3, 1);
                cudnnStatus_t s = OCALL(lib, cudnnSetPoolingNdDescriptor, d, static_cast<cudnnPoolingMode_t>(mode),
                                        static_cast<cudnnNanPropagation_t>(nan), nb, wa, pa, sa);
                t.add("setNd nb=%d mode=%d nan=%d -> %d", nb, mode, nan, s);
                read_back_pooling(lib, t, d, {0, 1, 2, 3, 4, 6, 7});
                OCALL(lib, cudnnDestroyPoolingDescriptor, d);
            }
    // A bad window or stride in some dim (status only: NVIDIA has written the dims before it).
    for (int bad = 0; bad < 3; ++bad)
        for (int what = 0; what < 3; ++what) {
            int w3[3] = {2, 2, 2}, s3[3] = {1, 1, 1};
            const int p3[3] = {0, 0, 0};
            if (what == 0) w3[bad] = 0;
            if (what == 1) s3[bad] = 0;
            if (what == 2) s3[bad] = -3;
            cudnnPoolingDescriptor_t d = nullptr;
            OCALL(lib, cudnnCreatePoolingDescriptor, &d);
            cudnnStatus_t s =
                OCALL(lib, cudnnSetPoolingNdDescriptor, d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 3, w3, p3, s3);
            t.add("setNd3 bad dim %d kind %d -> %d", bad, what, s);
            OCALL(lib, cudnnDestroyPoolingDescriptor, d);
        }
    // Set Nd over Nd: 6-D, then 3-D, then 1-D.
    cudnnPoolingDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreatePoolingDescriptor, &d);
    const int w6[6] = {2, 3, 4, 5, 6, 7}, p6[6] = {1, 1, 1, 2, 2, 2}, s6[6] = {1, 2, 3, 4, 5, 6};
    OSTATUS(t, lib, cudnnSetPoolingNdDescriptor, d, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_PROPAGATE_NAN, 6, w6, p6,
            s6);
    read_back_pooling(lib, t, d, {6});
    OSTATUS(t, lib, cudnnSetPoolingNdDescriptor, d, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, s6, w6, p6);
    read_back_pooling(lib, t, d, {6});
    OSTATUS(t, lib, cudnnSetPoolingNdDescriptor, d, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
            CUDNN_NOT_PROPAGATE_NAN, 1, p6, s6, w6);
    read_back_pooling(lib, t, d, {6});
    OSTATUS(t, lib, cudnnSetPooling2dDescriptor, d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 9, 8, 7, 6, 5, 4);
    read_back_pooling(lib, t, d, {6});
    // NULL descriptors; arrays may be NULL when none is asked for.
    auto mode = static_cast<cudnnPoolingMode_t>(-9);
    auto nan = static_cast<cudnnNanPropagation_t>(-9);
    int a = -9, b = -9, c = -9, e = -9, f = -9, g = -9, nb = -9, arr[8] = {-9, -9, -9, -9, -9, -9, -9, -9};
    OSTATUS(t, lib, cudnnGetPoolingNdDescriptor, d, 0, &mode, &nan, &nb, nullptr, nullptr, nullptr);
    t.add("  -> %d %d nb=%d", mode, nan, nb);
    OSTATUS(t, lib, cudnnGetPoolingNdDescriptor, d, -5, &mode, &nan, &nb, nullptr, nullptr, nullptr);
    OSTATUS(t, lib, cudnnGetPoolingNdDescriptor, d, 7, &mode, &nan, &nb, arr, arr, arr);
    OSTATUS(t, lib, cudnnGetPoolingNdDescriptor, nullptr, 2, &mode, &nan, &nb, arr, arr, arr);
    OSTATUS(t, lib, cudnnGetPooling2dDescriptor, nullptr, &mode, &nan, &a, &b, &c, &e, &f, &g);
    t.add("outputs untouched: %d %d %d %d %d %d %d %d %d %d", mode, nan, nb, arr[0], a, b, c, e, f, g);
    OSTATUS(t, lib, cudnnSetPooling2dDescriptor, nullptr, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, 2, 0, 0, 1, 1);
    OSTATUS(t, lib, cudnnSetPoolingNdDescriptor, nullptr, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, wa, pa, sa);
    OSTATUS(t, lib, cudnnCreatePoolingDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyPoolingDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyPoolingDescriptor, d);
}

struct Pool {
    int nb;
    int w[6], p[6], s[6];
};

void pooling_output_dims(const Lib& lib, Trace& t) {
    // Input tensors: 3-D, 4-D (NCHW float, NHWC half, NCHW_VECT_C int8x4, strided), 5-D, 8-D, unset.
    std::vector<std::pair<std::string, cudnnTensorDescriptor_t>> xs;
    auto make = [&](const char* name) {
        cudnnTensorDescriptor_t x = nullptr;
        OCALL(lib, cudnnCreateTensorDescriptor, &x);
        xs.emplace_back(name, x);
        return x;
    };
    const int d3[3] = {2, 3, 10}, s3[3] = {30, 10, 1};
    OCALL(lib, cudnnSetTensorNdDescriptor, make("x3"), CUDNN_DATA_FLOAT, 3, d3, s3);
    OCALL(lib, cudnnSetTensor4dDescriptor, make("x4"), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 10, 11);
    OCALL(lib, cudnnSetTensor4dDescriptor, make("x4nhwc"), CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 1, 5, 7, 9);
    OCALL(lib, cudnnSetTensor4dDescriptor, make("x4vect"), CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 2, 8, 6, 6);
    OCALL(lib, cudnnSetTensor4dDescriptorEx, make("x4strided"), CUDNN_DATA_DOUBLE, 2, 3, 4, 5, 200, 50, 10, 2);
    const int d5[5] = {2, 3, 10, 11, 12}, s5[5] = {3960, 1320, 132, 12, 1};
    OCALL(lib, cudnnSetTensorNdDescriptor, make("x5"), CUDNN_DATA_FLOAT, 5, d5, s5);
    const int d8[8] = {2, 3, 4, 5, 6, 7, 8, 9};
    int s8[8];
    s8[7] = 1;
    for (int i = 6; i >= 0; --i) s8[i] = s8[i + 1] * d8[i + 1];
    OCALL(lib, cudnnSetTensorNdDescriptor, make("x8"), CUDNN_DATA_FLOAT, 8, d8, s8);
    make("unset");

    const Pool pools[] = {
        {2, {3, 3}, {1, 1}, {2, 2}},
        {2, {2, 2}, {0, 0}, {2, 2}},
        {2, {3, 3}, {0, 0}, {1, 1}},
        {2, {5, 4}, {2, 1}, {3, 2}},
        {2, {10, 11}, {0, 0}, {1, 1}},
        {2, {11, 3}, {0, 0}, {2, 2}},
        {2, {12, 3}, {0, 0}, {1, 1}},
        {2, {13, 3}, {0, 0}, {4, 2}},
        {2, {3, 12}, {0, 0}, {2, 2}},
        {2, {3, 13}, {0, 0}, {3, 3}},
        {2, {3, 3}, {-1, -1}, {1, 1}},
        {2, {3, 3}, {-2, 0}, {1, 1}},
        {2, {3, 3}, {-5, -5}, {1, 1}},
        {2, {3, 3}, {5, 5}, {1, 1}},
        {2, {20, 20}, {5, 5}, {7, 7}},
        {2, {1, 1}, {0, 0}, {INT_MAX, INT_MAX}},
        {2, {INT_MAX, 2}, {1, 0}, {1, 1}},
        {2, {3, 3}, {1073741824, 0}, {1, 1}},
        {1, {3}, {0}, {1}},
        {1, {2}, {1}, {2}},
        {3, {2, 2, 2}, {1, 1, 1}, {2, 2, 2}},
        {3, {11, 2, 2}, {0, 0, 0}, {1, 1, 1}},
        {4, {2, 2, 2, 2}, {1, 1, 1, 1}, {2, 2, 2, 2}},
        {6, {2, 2, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1}, {2, 2, 2, 2, 2, 2}},
        {6, {1, 2, 3, 4, 5, 6}, {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}},
    };
    auto run = [&](cudnnPoolingDescriptor_t p, const std::string& pname) {
        for (const auto& x : xs) {
            int n = -9, c = -9, h = -9, w = -9;
            cudnnStatus_t s = OCALL(lib, cudnnGetPooling2dForwardOutputDim, p, x.second, &n, &c, &h, &w);
            t.add("%s %s: 2d %d: %d %d %d %d", pname.c_str(), x.first.c_str(), s, n, c, h, w);
            for (int nb : {-1, 0, 3, 4, 5, 6, 8, 9}) {
                int o[10];
                for (int& v : o) v = -9;
                s = OCALL(lib, cudnnGetPoolingNdForwardOutputDim, p, x.second, nb, o);
                t.lines.back() += " | nd(" + std::to_string(nb) + ") " + std::to_string(s) + ":";
                for (int i = 0; i < 9; ++i) t.lines.back() += " " + std::to_string(o[i]);
            }
        }
    };
    cudnnPoolingDescriptor_t unset = nullptr;
    OCALL(lib, cudnnCreatePoolingDescriptor, &unset);
    run(unset, "unset pool");
    for (const Pool& pl : pools) {
        cudnnPoolingDescriptor_t p = nullptr;
        OCALL(lib, cudnnCreatePoolingDescriptor, &p);
        cudnnStatus_t s = OCALL(lib, cudnnSetPoolingNdDescriptor, p, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, pl.nb,
                                pl.w, pl.p, pl.s);
        std::string name = "pool nb=" + std::to_string(pl.nb) + " w0=" + std::to_string(pl.w[0]) +
                           " p0=" + std::to_string(pl.p[0]) + " s0=" + std::to_string(pl.s[0]) +
                           " set=" + std::to_string(s);
        run(p, name);
        OCALL(lib, cudnnDestroyPoolingDescriptor, p);
    }
    // NULL descriptors: the 2-D form still writes its outputs.
    cudnnPoolingDescriptor_t p = nullptr;
    OCALL(lib, cudnnCreatePoolingDescriptor, &p);
    OCALL(lib, cudnnSetPooling2dDescriptor, p, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2);
    int n = -9, c = -9, h = -9, w = -9, o[4] = {-9, -9, -9, -9};
    OSTATUS(t, lib, cudnnGetPooling2dForwardOutputDim, nullptr, xs[1].second, &n, &c, &h, &w);
    t.add("  -> %d %d %d %d", n, c, h, w);
    n = c = h = w = -9;
    OSTATUS(t, lib, cudnnGetPooling2dForwardOutputDim, p, nullptr, &n, &c, &h, &w);
    t.add("  -> %d %d %d %d", n, c, h, w);
    OSTATUS(t, lib, cudnnGetPoolingNdForwardOutputDim, nullptr, xs[1].second, 4, o);
    OSTATUS(t, lib, cudnnGetPoolingNdForwardOutputDim, p, nullptr, 4, o);
    OSTATUS(t, lib, cudnnGetPoolingNdForwardOutputDim, p, xs[1].second, 0, nullptr);
    t.add("  -> %d %d %d %d", o[0], o[1], o[2], o[3]);
    OCALL(lib, cudnnDestroyPoolingDescriptor, p);
    OCALL(lib, cudnnDestroyPoolingDescriptor, unset);
    for (const auto& x : xs) OCALL(lib, cudnnDestroyTensorDescriptor, x.second);
}

// ---- LRN ----

void read_back_lrn(const Lib& lib, Trace& t, cudnnLRNDescriptor_t d) {
    unsigned n = 99;
    double a = -9, b = -9, k = -9;
    cudnnStatus_t s = OCALL(lib, cudnnGetLRNDescriptor, d, &n, &a, &b, &k);
    Trace r;
    r.add(" get %d: %u %.17g %.17g %.17g", s, n, a, b, k);
    append(t, r);
}

void lrn(const Lib& lib, Trace& t) {
    cudnnLRNDescriptor_t fresh = nullptr;
    OSTATUS(t, lib, cudnnCreateLRNDescriptor, &fresh);
    read_back_lrn(lib, t, fresh);
    const unsigned ns[] = {0u, 1u, 2u, 5u, 15u, 16u, 17u, 1000u, UINT_MAX};
    const double alphas[] = {1e-4, 0.0, -1.0, 1e300, kNaN, kInf};
    const double betas[] = {0.75, CUDNN_LRN_MIN_BETA, 0.00999, 0.0, -1.0, 2.0, kNaN, kInf, -kInf};
    const double ks[] = {2.0, CUDNN_LRN_MIN_K, 9.99e-6, 0.0, -1.0, 1.0, kNaN, kInf, -kInf};
    for (unsigned n : ns)
        for (double a : alphas)
            for (double b : betas)
                for (double k : ks) {
                    cudnnLRNDescriptor_t d = nullptr;
                    OCALL(lib, cudnnCreateLRNDescriptor, &d);
                    OCALL(lib, cudnnSetLRNDescriptor, d, 3u, 0.5, 0.5, 0.5);
                    cudnnStatus_t s = OCALL(lib, cudnnSetLRNDescriptor, d, n, a, b, k);
                    t.add("setLRN n=%u a=%.17g b=%.17g k=%.17g -> %d", n, a, b, k, s);
                    read_back_lrn(lib, t, d);
                    OCALL(lib, cudnnDestroyLRNDescriptor, d);
                }
    // Every output of the getter is optional.
    OCALL(lib, cudnnSetLRNDescriptor, fresh, 7u, 0.125, 0.5, 3.0);
    for (int mask = 0; mask < 16; ++mask) {
        unsigned n = 99;
        double a = -9, b = -9, k = -9;
        cudnnStatus_t s = OCALL(lib, cudnnGetLRNDescriptor, fresh, (mask & 1) ? &n : nullptr, (mask & 2) ? &a : nullptr,
                                (mask & 4) ? &b : nullptr, (mask & 8) ? &k : nullptr);
        t.add("getLRN mask=%d -> %d: %u %g %g %g", mask, s, n, a, b, k);
    }
    unsigned n = 99;
    double a = -9, b = -9, k = -9;
    OSTATUS(t, lib, cudnnGetLRNDescriptor, nullptr, &n, &a, &b, &k);
    t.add("outputs untouched: %u %g %g %g", n, a, b, k);
    OSTATUS(t, lib, cudnnDestroyLRNDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyLRNDescriptor, fresh);
}

// ---- Op-tensor and reduce-tensor ----

void op_tensor(const Lib& lib, Trace& t) {
    for (int op = -1; op <= 7; ++op)
        for (int dt = -1; dt <= 22; ++dt)
            for (int nan = -1; nan <= 2; ++nan) {
                cudnnOpTensorDescriptor_t d = nullptr;
                OCALL(lib, cudnnCreateOpTensorDescriptor, &d);
                OCALL(lib, cudnnSetOpTensorDescriptor, d, CUDNN_OP_TENSOR_MAX, CUDNN_DATA_DOUBLE, CUDNN_PROPAGATE_NAN);
                cudnnStatus_t s = OCALL(lib, cudnnSetOpTensorDescriptor, d, static_cast<cudnnOpTensorOp_t>(op),
                                        static_cast<cudnnDataType_t>(dt), static_cast<cudnnNanPropagation_t>(nan));
                auto rop = static_cast<cudnnOpTensorOp_t>(-9);
                auto rdt = static_cast<cudnnDataType_t>(-9);
                auto rnan = static_cast<cudnnNanPropagation_t>(-9);
                cudnnStatus_t g = OCALL(lib, cudnnGetOpTensorDescriptor, d, &rop, &rdt, &rnan);
                t.add("setOp op=%d dt=%d nan=%d -> %d | get %d: %d %d %d", op, dt, nan, s, g, rop, rdt, rnan);
                OCALL(lib, cudnnDestroyOpTensorDescriptor, d);
            }
    auto rop = static_cast<cudnnOpTensorOp_t>(-9);
    auto rdt = static_cast<cudnnDataType_t>(-9);
    auto rnan = static_cast<cudnnNanPropagation_t>(-9);
    OSTATUS(t, lib, cudnnGetOpTensorDescriptor, nullptr, &rop, &rdt, &rnan);
    t.add("outputs untouched: %d %d %d", rop, rdt, rnan);
    OSTATUS(t, lib, cudnnSetOpTensorDescriptor, nullptr, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN);
    OSTATUS(t, lib, cudnnCreateOpTensorDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyOpTensorDescriptor, nullptr);
}

void reduce_tensor(const Lib& lib, Trace& t) {
    for (int op = -1; op <= 10; ++op)
        for (int dt : {-1, 0, 1, 2, 3, 4, 5, 8, 9, 10, 12, 19, 22})
            for (int nan = -1; nan <= 2; ++nan)
                for (int ind = -1; ind <= 2; ++ind)
                    for (int it = -1; it <= 4; ++it) {
                        cudnnReduceTensorDescriptor_t d = nullptr;
                        OCALL(lib, cudnnCreateReduceTensorDescriptor, &d);
                        OCALL(lib, cudnnSetReduceTensorDescriptor, d, CUDNN_REDUCE_TENSOR_NORM2, CUDNN_DATA_DOUBLE,
                              CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_16BIT_INDICES);
                        cudnnStatus_t s =
                            OCALL(lib, cudnnSetReduceTensorDescriptor, d, static_cast<cudnnReduceTensorOp_t>(op),
                                  static_cast<cudnnDataType_t>(dt), static_cast<cudnnNanPropagation_t>(nan),
                                  static_cast<cudnnReduceTensorIndices_t>(ind), static_cast<cudnnIndicesType_t>(it));
                        auto rop = static_cast<cudnnReduceTensorOp_t>(-9);
                        auto rdt = static_cast<cudnnDataType_t>(-9);
                        auto rnan = static_cast<cudnnNanPropagation_t>(-9);
                        auto rind = static_cast<cudnnReduceTensorIndices_t>(-9);
                        auto rit = static_cast<cudnnIndicesType_t>(-9);
                        cudnnStatus_t g = OCALL(lib, cudnnGetReduceTensorDescriptor, d, &rop, &rdt, &rnan, &rind, &rit);
                        t.add("setReduce op=%d dt=%d nan=%d ind=%d it=%d -> %d | get %d: %d %d %d %d %d", op, dt, nan,
                              ind, it, s, g, rop, rdt, rnan, rind, rit);
                        OCALL(lib, cudnnDestroyReduceTensorDescriptor, d);
                    }
    auto rop = static_cast<cudnnReduceTensorOp_t>(-9);
    auto rdt = static_cast<cudnnDataType_t>(-9);
    auto rnan = static_cast<cudnnNanPropagation_t>(-9);
    auto rind = static_cast<cudnnReduceTensorIndices_t>(-9);
    auto rit = static_cast<cudnnIndicesType_t>(-9);
    OSTATUS(t, lib, cudnnGetReduceTensorDescriptor, nullptr, &rop, &rdt, &rnan, &rind, &rit);
    t.add("outputs untouched: %d %d %d %d %d", rop, rdt, rnan, rind, rit);
    OSTATUS(t, lib, cudnnSetReduceTensorDescriptor, nullptr, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT,
            CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES);
    OSTATUS(t, lib, cudnnCreateReduceTensorDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyReduceTensorDescriptor, nullptr);
}

// ---- Tensor transform ----

void read_back_transform(const Lib& lib, Trace& t, cudnnTensorTransformDescriptor_t d, uint32_t req) {
    auto f = static_cast<cudnnTensorFormat_t>(-9);
    auto dir = static_cast<cudnnFoldingDirection_t>(-9);
    int32_t pb[10], pa[10];
    uint32_t fo[10];
    for (int i = 0; i < 10; ++i) {
        pb[i] = pa[i] = -9;
        fo[i] = 99;
    }
    cudnnStatus_t s = OCALL(lib, cudnnGetTensorTransformDescriptor, d, req, &f, pb, pa, fo, &dir);
    std::string line = " get(" + std::to_string(req) + ") " + std::to_string(s) + ": f=" + std::to_string(f) +
                       " dir=" + std::to_string(dir) + " pb=";
    for (int i = 0; i < 9; ++i) line += std::to_string(pb[i]) + ",";
    line += " pa=";
    for (int i = 0; i < 9; ++i) line += std::to_string(pa[i]) + ",";
    line += " fold=";
    for (int i = 0; i < 9; ++i) line += std::to_string(fo[i]) + ",";
    t.lines.back() += " |" + line;
}

void tensor_transform(const Lib& lib, Trace& t) {
    cudnnTensorTransformDescriptor_t fresh = nullptr;
    OSTATUS(t, lib, cudnnCreateTensorTransformDescriptor, &fresh);
    for (uint32_t req : {0u, 1u, 2u, 3u, 4u, 5u, 8u, 9u, 100u, 0xFFFFFFFFu}) read_back_transform(lib, t, fresh, req);

    const int32_t pb[9] = {0, 0, 1, 2, -1, 3, 4, 5, 6}, pa[9] = {0, 0, 3, 4, 5, -6, 7, 8, 9};
    const uint32_t fo[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const int32_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    const uint32_t uones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    // Negative formats are left out: NVIDIA keeps them, odnn refuses them.
    for (uint32_t nb : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 0x80000000u, 0xFFFFFFFFu})
        for (int f : {0, 1, 2, 3, 4, 100, INT_MAX})
            for (int dir : {-1, 0, 1, 2, 100, INT_MIN}) {
                cudnnTensorTransformDescriptor_t d = nullptr;
                OCALL(lib, cudnnCreateTensorTransformDescriptor, &d);
                OCALL(lib, cudnnSetTensorTransformDescriptor, d, 8u, CUDNN_TENSOR_NHWC, ones, ones, uones,
                      CUDNN_TRANSFORM_UNFOLD);
                cudnnStatus_t s =
                    OCALL(lib, cudnnSetTensorTransformDescriptor, d, nb, static_cast<cudnnTensorFormat_t>(f), pb, pa,
                          fo, static_cast<cudnnFoldingDirection_t>(dir));
                t.add("setTransform nb=%u f=%d dir=%d -> %d", nb, f, dir, s);
                read_back_transform(lib, t, d, 8);  // a failed Set leaves it unchanged
                if (nb >= 3 && nb <= 8) read_back_transform(lib, t, d, nb);
                OCALL(lib, cudnnDestroyTensorTransformDescriptor, d);
            }
    // NULL arrays are skipped; entries past the rank keep what was there.
    const int32_t neg[8] = {-1, 0, -5, INT_MIN, INT_MAX, -3, 2, 1};
    const uint32_t big[6] = {0, 5, 0xFFFFFFFFu, 7, 0x80000000u, 1};
    for (uint32_t nb : {2u, 3u, 4u, 6u, 8u})
        for (int mask = 0; mask < 8; ++mask) {
            cudnnTensorTransformDescriptor_t d = nullptr;
            OCALL(lib, cudnnCreateTensorTransformDescriptor, &d);
            OCALL(lib, cudnnSetTensorTransformDescriptor, d, 8u, CUDNN_TENSOR_NHWC, pb + 1, pa + 1, fo + 1,
                  CUDNN_TRANSFORM_UNFOLD);
            cudnnStatus_t s = OCALL(lib, cudnnSetTensorTransformDescriptor, d, nb, CUDNN_TENSOR_NCHW_VECT_C,
                                    (mask & 1) ? neg : nullptr, (mask & 2) ? pb : nullptr, (mask & 4) ? big : nullptr,
                                    CUDNN_TRANSFORM_FOLD);
            t.add("setTransform nb=%u arrays=%d -> %d", nb, mask, s);
            read_back_transform(lib, t, d, 8);
            OCALL(lib, cudnnDestroyTensorTransformDescriptor, d);
        }
    // Optional outputs of the getter (all but the direction, on which NVIDIA crashes).
    OCALL(lib, cudnnSetTensorTransformDescriptor, fresh, 5u, CUDNN_TENSOR_NHWC, pb, pa, fo, CUDNN_TRANSFORM_UNFOLD);
    for (int mask = 0; mask < 16; ++mask) {
        auto f = static_cast<cudnnTensorFormat_t>(-9);
        auto dir = static_cast<cudnnFoldingDirection_t>(-9);
        int32_t b[8] = {-9, -9, -9, -9, -9, -9, -9, -9}, a[8] = {-9, -9, -9, -9, -9, -9, -9, -9};
        uint32_t fold[8] = {99, 99, 99, 99, 99, 99, 99, 99};
        cudnnStatus_t s = OCALL(lib, cudnnGetTensorTransformDescriptor, fresh, 5u, (mask & 1) ? &f : nullptr,
                                (mask & 2) ? b : nullptr, (mask & 4) ? a : nullptr, (mask & 8) ? fold : nullptr, &dir);
        t.add("getTransform mask=%d -> %d: f=%d dir=%d b=%d,%d,%d,%d,%d,%d a=%d,%d,%d,%d,%d,%d fold=%u,%u,%u,%u", mask,
              s, f, dir, b[0], b[1], b[2], b[3], b[4], b[5], a[0], a[1], a[2], a[3], a[4], a[5], fold[0], fold[1],
              fold[2], fold[3]);
    }
    auto f = static_cast<cudnnTensorFormat_t>(-9);
    auto dir = static_cast<cudnnFoldingDirection_t>(-9);
    int32_t b[8], a[8];
    uint32_t fold[8];
    OSTATUS(t, lib, cudnnGetTensorTransformDescriptor, nullptr, 4u, &f, b, a, fold, &dir);
    t.add("outputs untouched: %d %d", f, dir);
    OSTATUS(t, lib, cudnnSetTensorTransformDescriptor, nullptr, 4u, CUDNN_TENSOR_NCHW, pb, pa, fo,
            CUDNN_TRANSFORM_FOLD);
    OSTATUS(t, lib, cudnnCreateTensorTransformDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyTensorTransformDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyTensorTransformDescriptor, fresh);
}

// ---- Dropout (what needs no handle) ----

void dropout(const Lib& lib, Trace& t) {
    cudnnDropoutDescriptor_t d = nullptr;
    OSTATUS(t, lib, cudnnCreateDropoutDescriptor, &d);
    size_t size = 77;
    OSTATUS(t, lib, cudnnDropoutGetStatesSize, nullptr, &size);
    OSTATUS(t, lib, cudnnDropoutGetStatesSize, nullptr, nullptr);
    t.add("  size untouched: %zu", size);
    // Reserve space: one bit per element, in 32-bit words.
    cudnnTensorDescriptor_t x = nullptr;
    OCALL(lib, cudnnCreateTensorDescriptor, &x);
    size = 77;
    cudnnStatus_t s = OCALL(lib, cudnnDropoutGetReserveSpaceSize, x, &size);
    t.add("reserve unset -> %d %zu", s, size);
    for (int dt = -1; dt <= 22; ++dt)
        for (int fmt : {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_NCHW_VECT_C}) {
            cudnnTensorDescriptor_t y = nullptr;
            OCALL(lib, cudnnCreateTensorDescriptor, &y);
            const int c = dt == CUDNN_DATA_INT8x32 ? 64 : 8;
            cudnnStatus_t ss = OCALL(lib, cudnnSetTensor4dDescriptor, y, static_cast<cudnnTensorFormat_t>(fmt),
                                     static_cast<cudnnDataType_t>(dt), 3, c, 5, 7);
            size = 77;
            s = OCALL(lib, cudnnDropoutGetReserveSpaceSize, y, &size);
            t.add("reserve dt=%d fmt=%d (set %d) -> %d %zu", dt, fmt, ss, s, size);
            OCALL(lib, cudnnDestroyTensorDescriptor, y);
        }
    const int shapes[][4] = {{1, 1, 1, 1},   {1, 1, 1, 31},         {1, 1, 1, 32},     {1, 1, 1, 33},  {1, 1, 1, 63},
                             {1, 1, 1, 64},  {1, 1, 1, 65},         {1, 1, 1, 96},     {1, 1, 1, 129}, {2, 3, 4, 5},
                             {7, 9, 11, 13}, {1000, 1000, 100, 10}, {1, 1, 1, INT_MAX}};
    for (const auto& sh : shapes)
        for (int dt : {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF}) {
            cudnnStatus_t ss = OCALL(lib, cudnnSetTensor4dDescriptor, x, CUDNN_TENSOR_NCHW,
                                     static_cast<cudnnDataType_t>(dt), sh[0], sh[1], sh[2], sh[3]);
            size = 77;
            s = OCALL(lib, cudnnDropoutGetReserveSpaceSize, x, &size);
            t.add("reserve dt=%d %d %d %d %d (set %d) -> %d %zu", dt, sh[0], sh[1], sh[2], sh[3], ss, s, size);
        }
    const int dims[8] = {2, 3, 4, 5, 6, 2, 2, 2};
    for (int nb = 2; nb <= 8; ++nb) {
        int strides[8];
        int st = 3;  // not packed: the count is of elements, not of the span
        for (int i = nb - 1; i >= 0; --i) {
            strides[i] = st;
            st *= dims[i] + 1;
        }
        cudnnStatus_t ss = OCALL(lib, cudnnSetTensorNdDescriptor, x, CUDNN_DATA_DOUBLE, nb, dims, strides);
        size = 77;
        s = OCALL(lib, cudnnDropoutGetReserveSpaceSize, x, &size);
        t.add("reserve nd nb=%d (set %d) -> %d %zu", nb, ss, s, size);
    }
    OSTATUS(t, lib, cudnnDropoutGetReserveSpaceSize, nullptr, &size);
    OCALL(lib, cudnnDestroyTensorDescriptor, x);
    // Every call that takes a handle refuses a NULL one and leaves its outputs alone.
    char states[256];
    float p = -1.0f;
    void* st = reinterpret_cast<void*>(0x7);
    unsigned long long seed = 5;
    OSTATUS(t, lib, cudnnGetDropoutDescriptor, d, nullptr, &p, &st, &seed);
    t.add("  outputs untouched: %g %p %llu", p, st, seed);
    OSTATUS(t, lib, cudnnSetDropoutDescriptor, d, nullptr, 0.5f, states, sizeof states, 42ull);
    OSTATUS(t, lib, cudnnSetDropoutDescriptor, d, nullptr, 0.0f, nullptr, 0, 42ull);
    OSTATUS(t, lib, cudnnSetDropoutDescriptor, d, nullptr, 1.5f, states, sizeof states, 42ull);
    OSTATUS(t, lib, cudnnRestoreDropoutDescriptor, d, nullptr, 0.5f, states, sizeof states, 42ull);
    OSTATUS(t, lib, cudnnRestoreDropoutDescriptor, d, nullptr, 0.5f, nullptr, 0, 42ull);
    OSTATUS(t, lib, cudnnGetDropoutDescriptor, nullptr, nullptr, &p, &st, &seed);
    OSTATUS(t, lib, cudnnSetDropoutDescriptor, nullptr, nullptr, 0.5f, states, sizeof states, 42ull);
    OSTATUS(t, lib, cudnnRestoreDropoutDescriptor, nullptr, nullptr, 0.5f, states, sizeof states, 42ull);
    OSTATUS(t, lib, cudnnCreateDropoutDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyDropoutDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroyDropoutDescriptor, d);
}

// ---- Spatial transformer ----

void spatial_transformer(const Lib& lib, Trace& t) {
    cudnnSpatialTransformerDescriptor_t d = nullptr;
    OSTATUS(t, lib, cudnnCreateSpatialTransformerDescriptor, &d);
    const int dims[9] = {2, 3, 4, 5, 6, 7, 8, 9, 10};
    for (int sampler = -1; sampler <= 2; ++sampler)
        for (int dt = -1; dt <= 22; ++dt)
            for (int nb = -1; nb <= 9; ++nb) {
                const bool valid_enums = sampler == CUDNN_SAMPLER_BILINEAR &&
                                         (dt == CUDNN_DATA_FLOAT || dt == CUDNN_DATA_DOUBLE || dt == CUDNN_DATA_HALF);
                // NVIDIA accepts any nbDims; odnn refuses ranks it cannot hold.
                if (valid_enums && (nb < 1 || nb > CUDNN_DIM_MAX)) continue;
                cudnnStatus_t s =
                    OCALL(lib, cudnnSetSpatialTransformerNdDescriptor, d, static_cast<cudnnSamplerType_t>(sampler),
                          static_cast<cudnnDataType_t>(dt), nb, dims);
                t.add("setST sampler=%d dt=%d nb=%d -> %d", sampler, dt, nb, s);
            }
    // Large dims are fine at this point; the ops check them.
    const int big[][4] = {{1, 1, 1, 1}, {INT_MAX, INT_MAX, INT_MAX, INT_MAX}, {65536, 1, 65536, 2}, {64, 3, 224, 224}};
    for (const auto& b : big)
        t.add("setST dims %d %d %d %d -> %d", b[0], b[1], b[2], b[3],
              OCALL(lib, cudnnSetSpatialTransformerNdDescriptor, d, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, b));
    // Bad dims with bad enums: the enums decide.
    const int zero[4] = {0, 3, -4, 5};
    for (int dt : {static_cast<int>(CUDNN_DATA_INT8), static_cast<int>(CUDNN_DATA_BFLOAT16), -1})
        t.add("setST zero dims dt=%d -> %d", dt,
              OCALL(lib, cudnnSetSpatialTransformerNdDescriptor, d, CUDNN_SAMPLER_BILINEAR,
                    static_cast<cudnnDataType_t>(dt), 4, zero));
    for (int dt : {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, CUDNN_DATA_BFLOAT16})
        for (int sampler : {0, 1})
            t.add("setST NULL dims sampler=%d dt=%d -> %d", sampler, dt,
                  OCALL(lib, cudnnSetSpatialTransformerNdDescriptor, d, static_cast<cudnnSamplerType_t>(sampler),
                        static_cast<cudnnDataType_t>(dt), 4, nullptr));
    OSTATUS(t, lib, cudnnSetSpatialTransformerNdDescriptor, nullptr, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims);
    OSTATUS(t, lib, cudnnCreateSpatialTransformerDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroySpatialTransformerDescriptor, nullptr);
    OSTATUS(t, lib, cudnnDestroySpatialTransformerDescriptor, d);
}

TEST(Oracle, Activation) { oracle::expect_same("activation", activation); }
TEST(Oracle, PoolingSet) { oracle::expect_same("pooling_set", pooling_set); }
TEST(Oracle, PoolingOutputDims) { oracle::expect_same("pooling_output_dims", pooling_output_dims); }
TEST(Oracle, Lrn) { oracle::expect_same("lrn", lrn); }
TEST(Oracle, OpTensor) { oracle::expect_same("op_tensor", op_tensor); }
TEST(Oracle, ReduceTensor) { oracle::expect_same("reduce_tensor", reduce_tensor); }
TEST(Oracle, TensorTransform) { oracle::expect_same("tensor_transform", tensor_transform); }
TEST(Oracle, Dropout) { oracle::expect_same("dropout", dropout); }
TEST(Oracle, SpatialTransformer) { oracle::expect_same("spatial_transformer", spatial_transformer); }

}  // namespace
