// CUDA runtime services for the backend-independent core (built with CUDA only).
#include "core/cuda_runtime.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace odnn::core {

namespace {

Status cuda_error(cudaError_t e, const char* what) {
    return make_status(CUDNN_STATUS_EXECUTION_FAILED_CUDART, "%s failed: %s (%s)", what, cudaGetErrorName(e),
                       cudaGetErrorString(e));
}

}  // namespace

bool cuda_compiled() { return true; }

int cuda_device_count(std::string* why) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
        cudaGetLastError();  // clear the sticky-free error so later calls start clean
        return 0;
    }
    if (n == 0 && why) *why = "cudaGetDeviceCount found no device";
    return n;
}

int cuda_current_device() {
    int d = -1;
    return cudaGetDevice(&d) == cudaSuccess ? d : -1;
}

size_t cuda_runtime_build_version() { return CUDART_VERSION; }

std::string cuda_describe_devices() {
    std::string why;
    const int n = cuda_device_count(&why);
    if (n <= 0) return "none (" + why + ")";
    std::string out;
    for (int i = 0; i < n; ++i) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
        out += "device " + std::to_string(i) + ": " + p.name + ", compute capability " + std::to_string(p.major) +
               "." + std::to_string(p.minor) + ", " + std::to_string(p.totalGlobalMem >> 20) + " MiB, " +
               std::to_string(p.multiProcessorCount) + " SMs\n";
    }
    int drv = 0;
    cudaDriverGetVersion(&drv);
    out += "driver supports CUDA " + std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10) + "\n";
    return out;
}

Status cuda_memcpy(void* dst, const void* src, size_t bytes, CudaCopy kind, cudaStream_t stream) {
    const cudaMemcpyKind k = kind == CudaCopy::host_to_device   ? cudaMemcpyHostToDevice
                             : kind == CudaCopy::device_to_host ? cudaMemcpyDeviceToHost
                                                                : cudaMemcpyDeviceToDevice;
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, k, stream);
    if (e != cudaSuccess) return cuda_error(e, "cudaMemcpyAsync");
    // Host source buffers are usually temporaries of the caller: wait until copied.
    if (kind != CudaCopy::device_to_device) {
        e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess) return cuda_error(e, "cudaStreamSynchronize");
    }
    return Status::ok();
}

Status cuda_memset(void* dst, int value, size_t bytes, cudaStream_t stream) {
    const cudaError_t e = cudaMemsetAsync(dst, value, bytes, stream);
    return e == cudaSuccess ? Status::ok() : cuda_error(e, "cudaMemsetAsync");
}

Status cuda_stream_synchronize(cudaStream_t stream) {
    const cudaError_t e = cudaStreamSynchronize(stream);
    return e == cudaSuccess ? Status::ok() : cuda_error(e, "cudaStreamSynchronize");
}

Status cuda_malloc(void** p, size_t bytes) {
    *p = nullptr;
    const cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess) return Status::ok();
    *p = nullptr;
    cudaGetLastError();
    return make_status(e == cudaErrorMemoryAllocation ? CUDNN_STATUS_ALLOC_FAILED : CUDNN_STATUS_EXECUTION_FAILED_CUDART,
                       "cudaMalloc of %zu bytes failed: %s", bytes, cudaGetErrorString(e));
}

void cuda_free(void* p) {
    if (p) cudaFree(p);
}

Status cuda_check_launch(const char* kernel) {
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? Status::ok() : cuda_error(e, kernel);
}

}  // namespace odnn::core
