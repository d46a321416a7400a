// ODNN_HD: a function for both the host and CUDA kernels (inline on the host alone).
// ODNN_UNROLL: unroll the loop that follows in device code (a loop over a fixed bound
// whose index picks array elements: unrolled, they stay in registers).
#pragma once

#if defined(__CUDACC__)
#define ODNN_HD __host__ __device__ __forceinline__
#define ODNN_UNROLL _Pragma("unroll")
#else
#define ODNN_HD inline
#define ODNN_UNROLL
#endif
