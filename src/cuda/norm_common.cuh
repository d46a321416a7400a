// Device plumbing the normalization, pooling, dropout and sampler kernels share:
// storage <-> compute conversions per data type, aligned vector access, dispatch over
// the floating-point data types, stream-ordered scratch memory, and CUDA errors as
// Status.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>

#include "core/dtype.hpp"
#include "core/fast_div.hpp"
#include "core/status.hpp"

namespace odnn::cuda {

// Storage type T, compute type C (float for FLOAT / HALF / BFLOAT16, double for DOUBLE).
template <class T>
struct Io;
template <>
struct Io<float> {
    using C = float;
    static constexpr int kVec = 4;  // 16-byte vectors
    static __device__ __forceinline__ float in(float v) { return v; }
    static __device__ __forceinline__ float out(float v) { return v; }
};
template <>
struct Io<double> {
    using C = double;
    static constexpr int kVec = 2;
    static __device__ __forceinline__ double in(double v) { return v; }
    static __device__ __forceinline__ double out(double v) { return v; }
};
template <>
struct Io<__half> {
    using C = float;
    static constexpr int kVec = 8;
    static __device__ __forceinline__ float in(__half v) { return __half2float(v); }
    static __device__ __forceinline__ __half out(float v) { return __float2half_rn(v); }
};
template <>
struct Io<__nv_bfloat16> {
    using C = float;
    static constexpr int kVec = 8;
    static __device__ __forceinline__ float in(__nv_bfloat16 v) { return __bfloat162float(v); }
    static __device__ __forceinline__ __nv_bfloat16 out(float v) { return __float2bfloat16_rn(v); }
};

template <>
struct Io<int8_t> {  // pooling forward only: saturating, round to nearest even, NaN -> 0
    using C = float;
    static constexpr int kVec = 4;
    static __device__ __forceinline__ float in(int8_t v) { return static_cast<float>(v); }
    static __device__ __forceinline__ int8_t out(float v) {
        if (v != v) return 0;
        v = fminf(fmaxf(v, -128.0f), 127.0f);
        return static_cast<int8_t>(__float2int_rn(v));
    }
};

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
    T v[V];
};

template <class T, int V>
__device__ __forceinline__ Vec<T, V> load_vec(const T* p) {
    return *reinterpret_cast<const Vec<T, V>*>(p);
}
template <class T, int V>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, V>& v) {
    *reinterpret_cast<Vec<T, V>*>(p) = v;
}

inline bool aligned_to(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <class T>
struct Tag {
    using type = T;
};

// Calls f(Tag<T>{}) with T the storage type of `dt` (FLOAT, DOUBLE, HALF, BFLOAT16).
template <class F>
core::Status with_float_type(cudnnDataType_t dt, F&& f) {
    switch (dt) {
        case CUDNN_DATA_FLOAT: return f(Tag<float>{});
        case CUDNN_DATA_DOUBLE: return f(Tag<double>{});
        case CUDNN_DATA_HALF: return f(Tag<__half>{});
        case CUDNN_DATA_BFLOAT16: return f(Tag<__nv_bfloat16>{});
        default:
            return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "the CUDA kernel does not take data type %s",
                                     core::dtype_name(dt));
    }
}

inline core::Status cuda_status(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return core::Status::ok();
    return core::make_status(e == cudaErrorMemoryAllocation ? CUDNN_STATUS_ALLOC_FAILED
                                                            : CUDNN_STATUS_EXECUTION_FAILED_CUDART,
                             "%s failed: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

inline core::Status launched(const char* kernel) { return cuda_status(cudaGetLastError(), kernel); }

// The library's own stream-ordered memory pool on the current device, created on first
// use and kept for the process. Its release threshold keeps up to 64 MB mapped across
// synchronizations: the device's default pool (threshold 0) hands its memory back at
// every synchronization, so a call after each cudaStreamSynchronize mapped its scratch
// again. Null where pools are missing (the caller falls back).
inline cudaMemPool_t scratch_pool() {
    constexpr int kMaxDevices = 64;
    static std::once_flag once[kMaxDevices];
    static cudaMemPool_t pools[kMaxDevices] = {};
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
        cudaGetLastError();
        return nullptr;
    }
    std::call_once(once[dev], [dev] {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes = cudaMemHandleTypeNone;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        cudaMemPool_t pool = nullptr;
        if (cudaMemPoolCreate(&pool, &props) == cudaSuccess) {
            uint64_t keep = uint64_t{64} << 20;
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
            pools[dev] = pool;
        }
        cudaGetLastError();
    });
    return pools[dev];
}

// Device memory for one call, ordered on its stream: from scratch_pool(), else the
// device's default pool (cudaMallocAsync), else plain cudaMalloc.
class DeviceScratch {
public:
    DeviceScratch() = default;
    DeviceScratch(const DeviceScratch&) = delete;
    DeviceScratch& operator=(const DeviceScratch&) = delete;
    ~DeviceScratch() {
        if (!p_) return;
        if (async_) {
            cudaFreeAsync(p_, stream_);
        } else {
            cudaStreamSynchronize(stream_);
            cudaFree(p_);
        }
    }
    core::Status allocate(size_t bytes, cudaStream_t stream) {
        stream_ = stream;
        if (bytes == 0) return core::Status::ok();
        cudaError_t e = cudaErrorNotSupported;
        if (cudaMemPool_t pool = scratch_pool()) e = cudaMallocFromPoolAsync(&p_, bytes, pool, stream);
        if (e != cudaSuccess) {
            cudaGetLastError();
            e = cudaMallocAsync(&p_, bytes, stream);
        }
        if (e == cudaSuccess) {
            async_ = true;
            return core::Status::ok();
        }
        cudaGetLastError();
        p_ = nullptr;
        e = cudaMalloc(&p_, bytes);
        if (e != cudaSuccess) {
            cudaGetLastError();
            p_ = nullptr;
        }
        return cuda_status(e, "allocating scratch memory");
    }
    void* get() const { return p_; }

private:
    void* p_ = nullptr;
    cudaStream_t stream_ = nullptr;
    bool async_ = false;
};

// Rounds a byte offset up to 256 (cudaMalloc's alignment) when carving a workspace.
inline size_t align256(size_t b) { return (b + 255) / 256 * 256; }

}  // namespace odnn::cuda
