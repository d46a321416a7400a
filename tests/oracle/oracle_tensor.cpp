// Tensor and filter descriptors, error strings, versions: odnn vs NVIDIA.
#include "oracle/oracle.hpp"

#include <string>

namespace {

using oracle::Lib;
using oracle::Trace;

// Appends what the descriptor reads back to the trace's last line, so that one line
// holds one experiment (a mismatch then shows in place instead of shifting the rest).
void read_back_tensor(const Lib& lib, Trace& t, cudnnTensorDescriptor_t d) {
    Trace r;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    int nb = -1, dims[8] = {}, strides[8] = {};
    cudnnStatus_t s = OCALL(lib, cudnnGetTensorNdDescriptor, d, 8, &dt, &nb, dims, strides);
    r.add("  getNd %d: dt=%d nb=%d dims=%d,%d,%d,%d,%d,%d,%d,%d strides=%d,%d,%d,%d,%d,%d,%d,%d", s, dt, nb, dims[0],
          dims[1], dims[2], dims[3], dims[4], dims[5], dims[6], dims[7], strides[0], strides[1], strides[2],
          strides[3], strides[4], strides[5], strides[6], strides[7]);
    int n = 0, c = 0, h = 0, w = 0, ns = 0, cs = 0, hs = 0, ws = 0;
    s = OCALL(lib, cudnnGetTensor4dDescriptor, d, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws);
    r.add("  get4d %d: dt=%d %d %d %d %d / %d %d %d %d", s, dt, n, c, h, w, ns, cs, hs, ws);
    size_t bytes = 0;
    s = OCALL(lib, cudnnGetTensorSizeInBytes, d, &bytes);
    r.add("  size %d: %zu", s, bytes);
    for (const std::string& l : r.lines) t.lines.back() += " |" + l;
}

void tensor_4d(const Lib& lib, Trace& t) {
    const int formats[] = {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_NCHW_VECT_C, 3, -1};
    const int shapes[][4] = {{2, 8, 3, 4}, {1, 1, 1, 1}, {3, 64, 5, 7}, {2, 6, 3, 4}, {0, 8, 3, 4},
                             {2, -8, 3, 4}, {1 << 15, 1 << 15, 2, 1}, {1 << 15, 1 << 15, 1, 1},
                             {46341, 46341, 1, 1}, {65535, 32768, 1, 1}};
    for (int f : formats)
        for (int dt = -1; dt <= 21; ++dt)
            for (const auto& sh : shapes) {
                cudnnTensorDescriptor_t d = nullptr;
                OCALL(lib, cudnnCreateTensorDescriptor, &d);
                cudnnStatus_t s = OCALL(lib, cudnnSetTensor4dDescriptor, d, static_cast<cudnnTensorFormat_t>(f),
                                        static_cast<cudnnDataType_t>(dt), sh[0], sh[1], sh[2], sh[3]);
                t.add("set4d f=%d dt=%d %d %d %d %d -> %d", f, dt, sh[0], sh[1], sh[2], sh[3], s);
                if (s == CUDNN_STATUS_SUCCESS) read_back_tensor(lib, t, d);
                OCALL(lib, cudnnDestroyTensorDescriptor, d);
            }
}

void tensor_4d_ex(const Lib& lib, Trace& t) {
    const int strides[][4] = {{96, 12, 4, 1}, {96, 1, 32, 8}, {0, 12, 4, 1}, {1, 1, 1, 1},
                              {96, 12, 4, 0}, {200, 20, 5, 1}, {1 << 30, 1 << 28, 1 << 26, 1 << 24}};
    for (int dt : {0, 1, 2, 3, 5, 9, 10})
        for (const auto& st : strides) {
            cudnnTensorDescriptor_t d = nullptr;
            OCALL(lib, cudnnCreateTensorDescriptor, &d);
            cudnnStatus_t s = OCALL(lib, cudnnSetTensor4dDescriptorEx, d, static_cast<cudnnDataType_t>(dt), 2, 8, 3,
                                    4, st[0], st[1], st[2], st[3]);
            t.add("set4dEx dt=%d strides %d %d %d %d -> %d", dt, st[0], st[1], st[2], st[3], s);
            if (s == CUDNN_STATUS_SUCCESS) read_back_tensor(lib, t, d);
            OCALL(lib, cudnnDestroyTensorDescriptor, d);
        }
}

void tensor_nd(const Lib& lib, Trace& t) {
    const int dims[9] = {2, 3, 4, 5, 2, 2, 2, 2, 2};
    for (int nb = -1; nb <= 9; ++nb) {
        int strides[9];
        int s = 1;
        for (int i = (nb > 0 ? nb : 0) - 1; i >= 0; --i) {
            strides[i] = s;
            s *= dims[i];
        }
        for (int dt : {0, 2, 8, 9, 11}) {
            cudnnTensorDescriptor_t d = nullptr;
            OCALL(lib, cudnnCreateTensorDescriptor, &d);
            cudnnStatus_t st = OCALL(lib, cudnnSetTensorNdDescriptor, d, static_cast<cudnnDataType_t>(dt), nb, dims,
                                     strides);
            t.add("setNd nb=%d dt=%d -> %d", nb, dt, st);
            if (st == CUDNN_STATUS_SUCCESS) read_back_tensor(lib, t, d);
            for (int f : {0, 1, 2, 5}) {
                // NVIDIA returns uninitialised strides for a 2-D NHWC tensor: not a behaviour to copy.
                if (f == CUDNN_TENSOR_NHWC && nb == 2) continue;
                st = OCALL(lib, cudnnSetTensorNdDescriptorEx, d, static_cast<cudnnTensorFormat_t>(f),
                           static_cast<cudnnDataType_t>(dt), nb, dims);
                t.add("setNdEx f=%d nb=%d dt=%d -> %d", f, nb, dt, st);
                if (st == CUDNN_STATUS_SUCCESS) read_back_tensor(lib, t, d);
            }
            OCALL(lib, cudnnDestroyTensorDescriptor, d);
        }
    }
    // Partial read-back, unset descriptors, bad dims.
    cudnnTensorDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateTensorDescriptor, &d);
    read_back_tensor(lib, t, d);
    const int bad[4] = {2, 0, 4, 5}, st4[4] = {60, 20, 5, 1};
    OSTATUS(t, lib, cudnnSetTensorNdDescriptor, d, CUDNN_DATA_FLOAT, 4, bad, st4);
    const int good[5] = {2, 3, 4, 5, 6};
    OSTATUS(t, lib, cudnnSetTensorNdDescriptorEx, d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 5, good);
    cudnnDataType_t dt;
    int nb = -1, da[8] = {}, sa[8] = {};
    cudnnStatus_t s = OCALL(lib, cudnnGetTensorNdDescriptor, d, 2, &dt, &nb, da, sa);
    t.add("getNd(2) %d nb=%d %d %d %d / %d %d %d", s, nb, da[0], da[1], da[2], sa[0], sa[1], sa[2]);
    s = OCALL(lib, cudnnGetTensorNdDescriptor, d, 0, &dt, &nb, da, sa);
    t.add("getNd(0) %d nb=%d", s, nb);
    s = OCALL(lib, cudnnGetTensorNdDescriptor, d, -1, &dt, &nb, da, sa);
    t.add("getNd(-1) %d nb=%d", s, nb);
    OCALL(lib, cudnnDestroyTensorDescriptor, d);
    OSTATUS(t, lib, cudnnDestroyTensorDescriptor, nullptr);
    OSTATUS(t, lib, cudnnCreateTensorDescriptor, nullptr);
}

void filters(const Lib& lib, Trace& t) {
    const int shapes[][5] = {{16, 8, 3, 3, 1}, {1, 1, 1, 1, 1}, {0, 8, 3, 3, 1}, {16, -1, 3, 3, 1}, {16, 6, 3, 3, 1},
                             {1 << 16, 1 << 16, 1, 1, 1}};
    for (int f : {0, 1, 2, 3})
        for (int dt = -1; dt <= 20; ++dt)
            for (const auto& sh : shapes) {
                // NVIDIA silently rounds C down to the vector width for NCHW_VECT_C
                // filters; odnn refuses such a C (docs/DIVERGENCES.md).
                const int vw = dt == CUDNN_DATA_INT8x32 ? 32 : 4;
                if (f == CUDNN_TENSOR_NCHW_VECT_C && sh[1] > 0 && sh[1] % vw != 0) continue;
                // ... and reads an INT8x32 NCHW_VECT_C filter's C back divided by 8.
                if (f == CUDNN_TENSOR_NCHW_VECT_C && dt == CUDNN_DATA_INT8x32) continue;
                cudnnFilterDescriptor_t d = nullptr;
                OCALL(lib, cudnnCreateFilterDescriptor, &d);
                cudnnStatus_t s = OCALL(lib, cudnnSetFilter4dDescriptor, d, static_cast<cudnnDataType_t>(dt),
                                        static_cast<cudnnTensorFormat_t>(f), sh[0], sh[1], sh[2], sh[3]);
                t.add("setF4d f=%d dt=%d %d %d %d %d -> %d", f, dt, sh[0], sh[1], sh[2], sh[3], s);
                if (s == CUDNN_STATUS_SUCCESS) {
                    cudnnDataType_t odt;
                    cudnnTensorFormat_t of;
                    int k, c, h, w, nb;
                    s = OCALL(lib, cudnnGetFilter4dDescriptor, d, &odt, &of, &k, &c, &h, &w);
                    t.lines.back() += " | get " + std::to_string(s) + ": " + std::to_string(odt) + " " +
                                      std::to_string(of) + " " + std::to_string(k) + " " + std::to_string(c) +
                                      " " + std::to_string(h) + " " + std::to_string(w);
                    size_t bytes = 0;
                    s = OCALL(lib, cudnnGetFilterSizeInBytes, d, &bytes);
                    t.lines.back() += " | size " + std::to_string(s) + ": " + std::to_string(bytes);
                    int da[8] = {};
                    s = OCALL(lib, cudnnGetFilterNdDescriptor, d, 8, &odt, &of, &nb, da);
                    t.lines.back() += " | getNd " + std::to_string(s) + ": nb=" + std::to_string(nb) + " " +
                                      std::to_string(da[0]) + " " + std::to_string(da[1]) + " " +
                                      std::to_string(da[2]) + " " + std::to_string(da[3]);
                }
                OCALL(lib, cudnnDestroyFilterDescriptor, d);
            }
    const int dims[9] = {4, 2, 3, 3, 3, 2, 2, 2, 2};
    for (int nb = 0; nb <= 9; ++nb) {
        cudnnFilterDescriptor_t d = nullptr;
        OCALL(lib, cudnnCreateFilterDescriptor, &d);
        cudnnStatus_t s = OCALL(lib, cudnnSetFilterNdDescriptor, d, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, nb, dims);
        t.add("setFNd nb=%d -> %d", nb, s);
        if (s == CUDNN_STATUS_SUCCESS) {
            cudnnDataType_t odt;
            cudnnTensorFormat_t of;
            int onb = -1, da[8] = {};
            s = OCALL(lib, cudnnGetFilterNdDescriptor, d, 3, &odt, &of, &onb, da);
            size_t bytes = 0;
            OCALL(lib, cudnnGetFilterSizeInBytes, d, &bytes);
            t.lines.back() += " | getNd(3) " + std::to_string(s) + ": nb=" + std::to_string(onb) + " " +
                              std::to_string(da[0]) + " " + std::to_string(da[1]) + " " + std::to_string(da[2]) +
                              " " + std::to_string(da[3]) + " size " + std::to_string(bytes);
        }
        OCALL(lib, cudnnDestroyFilterDescriptor, d);
    }
    OSTATUS(t, lib, cudnnDestroyFilterDescriptor, nullptr);
}

void strings_and_versions(const Lib& lib, Trace& t) {
    for (int code = -1; code < 6000; ++code)
        t.add("%d %s", code, OCALL(lib, cudnnGetErrorString, static_cast<cudnnStatus_t>(code)));
    t.add("version %zu", OCALL(lib, cudnnGetVersion));
    for (int p = -1; p <= 3; ++p) {
        int v = -7;
        cudnnStatus_t s = OCALL(lib, cudnnGetProperty, static_cast<libraryPropertyType>(p), &v);
        t.add("property %d -> %d, %d", p, s, v);
    }
    OSTATUS(t, lib, cudnnGetProperty, MAJOR_VERSION, nullptr);
    OSTATUS(t, lib, cudnnGraphVersionCheck);
    OSTATUS(t, lib, cudnnOpsVersionCheck);
    OSTATUS(t, lib, cudnnCnnVersionCheck);
    OSTATUS(t, lib, cudnnAdvVersionCheck);
    OSTATUS(t, lib, cudnnCreate, nullptr);
    OSTATUS(t, lib, cudnnDestroy, nullptr);
    // The last-error buffer: filled by a failure, emptied by reading it.
    char buf[256] = "x";
    OCALL(lib, cudnnGetLastErrorString, buf, sizeof buf);  // drain
    cudnnTensorDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateTensorDescriptor, &d);
    OCALL(lib, cudnnSetTensor4dDescriptor, d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -2, 3, 4);
    OCALL(lib, cudnnGetLastErrorString, buf, sizeof buf);
    t.add("message after failure is non-empty: %d", buf[0] != '\0');
    OCALL(lib, cudnnGetLastErrorString, buf, sizeof buf);
    t.add("message after reading it is empty: %d", buf[0] == '\0');
    OCALL(lib, cudnnSetTensor4dDescriptor, d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -2, 3, 4);
    OCALL(lib, cudnnSetTensor4dDescriptor, d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4);
    OCALL(lib, cudnnGetLastErrorString, buf, sizeof buf);
    t.add("a success keeps the message: %d", buf[0] != '\0');
    OCALL(lib, cudnnDestroyTensorDescriptor, d);
}

TEST(Oracle, Tensor4d) { oracle::expect_same("tensor_4d", tensor_4d); }
TEST(Oracle, Tensor4dEx) { oracle::expect_same("tensor_4d_ex", tensor_4d_ex); }
TEST(Oracle, TensorNd) { oracle::expect_same("tensor_nd", tensor_nd); }
TEST(Oracle, Filters) { oracle::expect_same("filters", filters); }
TEST(Oracle, StringsAndVersions) { oracle::expect_same("strings_and_versions", strings_and_versions); }

}  // namespace
