// ODNN_HD: a function for both the host and CUDA kernels (inline on the host alone).
#pragma once

#if defined(__CUDACC__)
#define ODNN_HD __host__ __device__ __forceinline__
#else
#define ODNN_HD inline
#endif
