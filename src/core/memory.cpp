#include "core/memory.hpp"

#include <cstring>

#include "core/cuda_runtime.hpp"

namespace odnn::core {

Status copy_from_host(const Handle& h, void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return Status::ok();
    if (h.backend == BackendKind::cuda) return cuda_memcpy(dst, src, bytes, CudaCopy::host_to_device, h.stream);
    std::memcpy(dst, src, bytes);
    return Status::ok();
}

Status copy_to_host(const Handle& h, void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return Status::ok();
    if (h.backend == BackendKind::cuda) return cuda_memcpy(dst, src, bytes, CudaCopy::device_to_host, h.stream);
    std::memcpy(dst, src, bytes);
    return Status::ok();
}

Status fill_bytes(const Handle& h, void* dst, int value, size_t bytes) {
    if (bytes == 0) return Status::ok();
    if (h.backend == BackendKind::cuda) return cuda_memset(dst, value, bytes, h.stream);
    std::memset(dst, value, bytes);
    return Status::ok();
}

Status synchronize(const Handle& h) {
    if (h.backend == BackendKind::cuda) return cuda_stream_synchronize(h.stream);
    return Status::ok();
}

}  // namespace odnn::core
