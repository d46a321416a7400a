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

// The dynamic shared memory a kernel built with sm_90 code may take on the current device
// (the opt-in limit less its static shared memory), granted, with the largest shared-memory
// carveout preferred (else the driver may keep one block an SM) and, with `clusters`,
// non-portable cluster sizes allowed; 0 when the device runs older code or an attribute
// is refused. For kernels that need sm_90 (bulk copies, clusters): callers hold the result
// in a static, one per instance.
inline size_t sm90_dyn_smem(const void* fn, bool clusters) {
    cudaFuncAttributes at{};
    int dev = 0, optin = 0;
    if (cudaFuncGetAttributes(&at, fn) != cudaSuccess || at.binaryVersion < 90 || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        optin <= static_cast<int>(at.sharedSizeBytes)) {
        cudaGetLastError();
        return 0;
    }
    const int dyn = optin - static_cast<int>(at.sharedSizeBytes);
    if (cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn) != cudaSuccess ||
        (clusters && cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) ||
        cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared) !=
            cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return static_cast<size_t>(dyn);
}

#define ODNN_GRID_STRIDE_LOOP(i, n)                                                  \
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)

}  // namespace odnn::cuda
