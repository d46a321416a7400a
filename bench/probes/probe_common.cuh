// What the standalone probes in this folder share (not part of the library): a CUDA error
// check that returns from main, a grid-stride copy kernel (the probes' own copy rate),
// and a timer of 10 runs after 3 warm-ups.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#define CK(x)                                                            \
    do {                                                                 \
        cudaError_t e = (x);                                             \
        if (e != cudaSuccess) {                                          \
            printf("err %s line %d\n", cudaGetErrorString(e), __LINE__); \
            return 1;                                                    \
        }                                                                \
    } while (0)

__global__ void copyk(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = x[i];
}

// Mean milliseconds of f() over 10 runs after 3 warm-ups, timed with events on stream 0.
template <class F>
float time_ms(F&& f) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int w = 0; w < 3; ++w) f();
    cudaEventRecord(e0);
    for (int r = 0; r < 10; ++r) f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0.f;
    cudaEventElapsedTime(&ms, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return ms / 10;
}
