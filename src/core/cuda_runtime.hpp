// The few CUDA runtime services the backend-independent core needs. Defined in
// src/cuda/cuda_runtime.cpp when built with CUDA, in src/core/no_cuda.cpp otherwise.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.hpp"

namespace odnn::core {

bool cuda_compiled();
// Number of usable devices; 0 (with the reason in *why) when none.
int cuda_device_count(std::string* why);
// Current device of the calling thread, -1 on failure.
int cuda_current_device();
// Version of the CUDA runtime odnn was built with (e.g. 13000), 0 without CUDA.
size_t cuda_runtime_build_version();
// Description of CUDA devices for `odnn info`.
std::string cuda_describe_devices();

enum class CudaCopy { host_to_device, device_to_host, device_to_device };
// Stream-ordered copies; device_to_host waits for the copy to finish.
Status cuda_memcpy(void* dst, const void* src, size_t bytes, CudaCopy kind, cudaStream_t stream);
Status cuda_memset(void* dst, int value, size_t bytes, cudaStream_t stream);
Status cuda_stream_synchronize(cudaStream_t stream);
// Device memory (cudaMalloc / cudaFree; cuda_free(nullptr) does nothing).
Status cuda_malloc(void** p, size_t bytes);
void cuda_free(void* p);
// Status of the last kernel launch (names the kernel in the message).
Status cuda_check_launch(const char* kernel);

}  // namespace odnn::core
