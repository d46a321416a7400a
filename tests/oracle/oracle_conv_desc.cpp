// Convolution descriptors and the forward output-shape queries: odnn vs NVIDIA.
#include <string>

#include "oracle/oracle.hpp"

namespace {

using oracle::Lib;
using oracle::Trace;

std::string read_back(const Lib& lib, cudnnConvolutionDescriptor_t d) {
    int len = -1, pad[8] = {}, str[8] = {}, dil[8] = {};
    cudnnConvolutionMode_t mode = CUDNN_CONVOLUTION;
    cudnnDataType_t ct = CUDNN_DATA_FLOAT;
    cudnnStatus_t s = OCALL(lib, cudnnGetConvolutionNdDescriptor, d, 6, &len, pad, str, dil, &mode, &ct);
    std::string out = " | getNd " + std::to_string(s) + ": len=" + std::to_string(len);
    // Entries past the rank are unspecified (NVIDIA returns stale values there).
    for (int i = 0; i < (s == CUDNN_STATUS_SUCCESS ? len : 0); ++i)
        out += " (" + std::to_string(pad[i]) + "," + std::to_string(str[i]) + "," + std::to_string(dil[i]) + ")";
    out += " mode=" + std::to_string(mode) + " ct=" + std::to_string(ct);
    for (int req : {-1, 7}) {
        s = OCALL(lib, cudnnGetConvolutionNdDescriptor, d, req, &len, pad, str, dil, &mode, &ct);
        out += " | getNd(" + std::to_string(req) + ") " + std::to_string(s);
    }
    int ph, pw, u, v, dh, dw;
    s = OCALL(lib, cudnnGetConvolution2dDescriptor, d, &ph, &pw, &u, &v, &dh, &dw, &mode, &ct);
    out += " | get2d " + std::to_string(s);
    if (s == CUDNN_STATUS_SUCCESS)
        out += ": " + std::to_string(ph) + " " + std::to_string(pw) + " " + std::to_string(u) + " " +
               std::to_string(v) + " " + std::to_string(dh) + " " + std::to_string(dw);
    int g = -1;
    cudnnMathType_t m = CUDNN_DEFAULT_MATH;
    cudnnReorderType_t r = CUDNN_DEFAULT_REORDER;
    OCALL(lib, cudnnGetConvolutionGroupCount, d, &g);
    OCALL(lib, cudnnGetConvolutionMathType, d, &m);
    OCALL(lib, cudnnGetConvolutionReorderType, d, &r);
    out += " | g=" + std::to_string(g) + " math=" + std::to_string(m) + " reorder=" + std::to_string(r);
    return out;
}

// NVIDIA stores some fields of a failed set before it validates the rest; odnn leaves
// the descriptor untouched on failure (docs/DIVERGENCES.md). So read-backs are
// compared after successes only, and each experiment starts from a known state.
void baseline(const Lib& lib, cudnnConvolutionDescriptor_t d) {
    OCALL(lib, cudnnSetConvolution2dDescriptor, d, 3, 2, 1, 2, 2, 3, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
}

std::string after(const Lib& lib, cudnnConvolutionDescriptor_t d, cudnnStatus_t s) {
    return s == CUDNN_STATUS_SUCCESS ? read_back(lib, d) : std::string();
}

void conv_descriptors(const Lib& lib, Trace& t) {
    cudnnConvolutionDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateConvolutionDescriptor, &d);
    t.add("fresh%s", read_back(lib, d).c_str());
    const int sets2d[][6] = {{1, 1, 1, 1, 1, 1}, {0, 0, 2, 2, 1, 1}, {3, 2, 1, 2, 2, 3}, {-1, 0, 1, 1, 1, 1},
                             {0, 0, 0, 1, 1, 1}, {0, 0, 1, -1, 1, 1}, {0, 0, 1, 1, 0, 1}, {0, 0, 1, 1, 1, -2},
                             {100000, 0, 1, 1, 1, 1}};
    for (const auto& p : sets2d)
        for (int mode : {0, 1, 2, -1})
            for (int ct : {0, 1, 2, 3, 4, 9, 10, 12, 30}) {
                baseline(lib, d);
                cudnnStatus_t s = OCALL(lib, cudnnSetConvolution2dDescriptor, d, p[0], p[1], p[2], p[3], p[4], p[5],
                                        static_cast<cudnnConvolutionMode_t>(mode), static_cast<cudnnDataType_t>(ct));
                t.add("set2d %d %d %d %d %d %d mode=%d ct=%d -> %d%s", p[0], p[1], p[2], p[3], p[4], p[5], mode, ct,
                      s, after(lib, d, s).c_str());
            }
    const int pads[8] = {1, 2, 0, 1, 0, 0, 0, 0}, strides[8] = {1, 2, 3, 1, 1, 1, 1, 1},
              dils[8] = {1, 1, 2, 1, 1, 1, 1, 1};
    for (int len = -1; len <= 8; ++len) {
        baseline(lib, d);
        cudnnStatus_t s = OCALL(lib, cudnnSetConvolutionNdDescriptor, d, len, pads, strides, dils,
                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
        t.add("setNd len=%d -> %d%s", len, s, after(lib, d, s).c_str());
    }
    for (int g : {1, 2, 0, -3, 1 << 20}) {
        cudnnStatus_t s = OCALL(lib, cudnnSetConvolutionGroupCount, d, g);
        t.add("groups %d -> %d%s", g, s, after(lib, d, s).c_str());
    }
    for (int m = -1; m <= 4; ++m) {
        cudnnStatus_t s = OCALL(lib, cudnnSetConvolutionMathType, d, static_cast<cudnnMathType_t>(m));
        t.add("math %d -> %d%s", m, s, after(lib, d, s).c_str());
    }
    for (int r = -1; r <= 2; ++r) {
        cudnnStatus_t s = OCALL(lib, cudnnSetConvolutionReorderType, d, static_cast<cudnnReorderType_t>(r));
        t.add("reorder %d -> %d%s", r, s, after(lib, d, s).c_str());
    }
    OCALL(lib, cudnnDestroyConvolutionDescriptor, d);
    OSTATUS(t, lib, cudnnDestroyConvolutionDescriptor, nullptr);
}

void output_dims(const Lib& lib, Trace& t) {
    cudnnConvolutionDescriptor_t c = nullptr;
    cudnnTensorDescriptor_t x = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    OCALL(lib, cudnnCreateConvolutionDescriptor, &c);
    OCALL(lib, cudnnCreateTensorDescriptor, &x);
    OCALL(lib, cudnnCreateFilterDescriptor, &w);
    // in, filter, pad, stride, dil, groups
    const int cases[][8] = {{56, 3, 1, 1, 1, 1, 64, 64},  {56, 3, 1, 2, 1, 1, 64, 64},  {7, 7, 3, 2, 1, 1, 3, 64},
                            {5, 3, 0, 1, 3, 1, 8, 8},      {2, 3, 0, 1, 1, 1, 8, 8},     {9, 3, 4, 5, 2, 1, 8, 8},
                            {10, 3, 1, 1, 1, 4, 8, 8},     {10, 3, 1, 1, 1, 3, 8, 8},    {10, 3, 1, 1, 1, 8, 8, 1},
                            {1, 1, 0, 1, 1, 1, 1, 1},      {3, 5, 1, 1, 1, 1, 4, 4}};
    for (const auto& k : cases) {
        const int in = k[0], f = k[1], pad = k[2], str = k[3], dil = k[4], g = k[5], cin = k[6], cout = k[7];
        OCALL(lib, cudnnSetTensor4dDescriptor, x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, cin, in, in + 1);
        const int fc = g > 0 && cin % g == 0 ? cin / g : cin;
        OCALL(lib, cudnnSetFilter4dDescriptor, w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, cout, fc, f, f);
        OCALL(lib, cudnnSetConvolution2dDescriptor, c, pad, pad, str, str, dil, dil, CUDNN_CROSS_CORRELATION,
              CUDNN_DATA_FLOAT);
        OCALL(lib, cudnnSetConvolutionGroupCount, c, g);
        int n = -1, oc = -1, oh = -1, ow = -1;
        cudnnStatus_t s = OCALL(lib, cudnnGetConvolution2dForwardOutputDim, c, x, w, &n, &oc, &oh, &ow);
        int nd[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
        cudnnStatus_t s2 = OCALL(lib, cudnnGetConvolutionNdForwardOutputDim, c, x, w, 4, nd);
        // On failure NVIDIA leaves some outputs half-written; only successful results are compared.
        if (s != CUDNN_STATUS_SUCCESS) n = oc = oh = ow = -1;
        if (s2 != CUDNN_STATUS_SUCCESS) nd[0] = nd[1] = nd[2] = nd[3] = -1;
        t.add("out in=%d f=%d pad=%d str=%d dil=%d g=%d cin=%d cout=%d -> %d: %d %d %d %d | nd %d: %d %d %d %d", in, f,
              pad, str, dil, g, cin, cout, s, n, oc, oh, ow, s2, nd[0], nd[1], nd[2], nd[3]);
    }
    // Mismatched ranks between the tensor, the filter and the convolution.
    const int d5[5] = {2, 4, 6, 6, 6}, f5[5] = {4, 4, 3, 3, 3};
    OCALL(lib, cudnnSetTensorNdDescriptorEx, x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 5, d5);
    int nd[8] = {};
    OSTATUS(t, lib, cudnnGetConvolutionNdForwardOutputDim, c, x, w, 5, nd);
    OCALL(lib, cudnnSetFilterNdDescriptor, w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, f5);
    OSTATUS(t, lib, cudnnGetConvolutionNdForwardOutputDim, c, x, w, 5, nd);
    const int p3[3] = {1, 1, 1}, s3[3] = {1, 1, 1};
    OCALL(lib, cudnnSetConvolutionGroupCount, c, 1);
    OCALL(lib, cudnnSetConvolutionNdDescriptor, c, 3, p3, s3, s3, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT);
    cudnnStatus_t s = OCALL(lib, cudnnGetConvolutionNdForwardOutputDim, c, x, w, 5, nd);
    if (s == CUDNN_STATUS_SUCCESS) t.add("3d -> %d: %d %d %d %d %d", s, nd[0], nd[1], nd[2], nd[3], nd[4]);
    else t.add("3d -> %d", s);
    for (int nb = -1; nb <= 9; ++nb) {
        int o[9] = {-1, -1, -1, -1, -1, -1, -1, -1, -1};
        s = OCALL(lib, cudnnGetConvolutionNdForwardOutputDim, c, x, w, nb, o);
        // NVIDIA writes N and C even when nbDims < 2 (past the caller's array); odnn
        // writes exactly nbDims entries. Compare the first nbDims.
        std::string vals;
        for (int i = 0; i < (s == CUDNN_STATUS_SUCCESS ? nb : 0); ++i) vals += " " + std::to_string(o[i]);
        t.add("3d nbDims=%d -> %d:%s", nb, s, vals.c_str());
    }
    OCALL(lib, cudnnDestroyConvolutionDescriptor, c);
    OCALL(lib, cudnnDestroyTensorDescriptor, x);
    OCALL(lib, cudnnDestroyFilterDescriptor, w);
}

TEST(Oracle, ConvolutionDescriptors) { oracle::expect_same("conv_descriptors", conv_descriptors); }
TEST(Oracle, ConvolutionOutputDims) { oracle::expect_same("output_dims", output_dims); }

}  // namespace
