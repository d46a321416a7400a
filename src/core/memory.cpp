#include "core/memory.hpp"

#include <cstdlib>
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

Status copy_bytes(const Handle& h, void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return Status::ok();
    if (h.backend == BackendKind::cuda) return cuda_memcpy(dst, src, bytes, CudaCopy::device_to_device, h.stream);
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

Status BackendBuffer::allocate(const Handle& h, size_t bytes) {
    release();
    if (bytes == 0) return Status::ok();
    if (h.backend == BackendKind::cuda) {
        ODNN_RETURN_IF_ERROR(cuda_malloc(&p_, bytes));
        device_ = true;
        const Status s = cuda_memset(p_, 0, bytes, h.stream);
        if (s.is_ok()) return cuda_stream_synchronize(h.stream);
        return s;
    }
    p_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    ODNN_REQUIRE(p_ != nullptr, CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %zu bytes of host memory", bytes);
    std::memset(p_, 0, bytes);
    return Status::ok();
}

void BackendBuffer::release() {
    if (device_) {
        cuda_free(p_);
    } else {
        std::free(p_);
    }
    p_ = nullptr;
    device_ = false;
}

}  // namespace odnn::core
