// Launch geometry and the strided shape every generic element-wise kernel takes.
#pragma once

#include <cuda_runtime_api.h>

#include "core/tensor_desc.hpp"

namespace odnn::cuda {

// A strided view passed to kernels by value (up to 9 dims: 8 + a vector-lane dim).
struct Shape {
    int nb_dims;
    int64_t dims[core::kDimMax + 1];
    int64_t strides[core::kDimMax + 1];
};

inline Shape to_shape(const core::ScalarView& v) {
    Shape s;
    s.nb_dims = v.nb_dims;
    for (int i = 0; i < v.nb_dims; ++i) {
        s.dims[i] = v.dims[i];
        s.strides[i] = v.strides[i];
    }
    return s;
}

// Grid-stride loops: enough blocks to fill the GPU, capped.
inline unsigned grid_for(int64_t n, int block = 256) {
    const int64_t blocks = (n + block - 1) / block;
    return static_cast<unsigned>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

// Streaming multiprocessors of the device current at the first call (132 if unknown),
// read once: persistent and split launches size their grids by it.
inline int sm_count() {
    static const int n = [] {
        int dev = 0, v = 0;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) !=
                                                      cudaSuccess) {
            cudaGetLastError();
            return 132;
        }
        return v;
    }();
    return n;
}

#define ODNN_GRID_STRIDE_LOOP(i, n)                                                  \
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)

}  // namespace odnn::cuda
