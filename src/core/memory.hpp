// Moving bytes between the host and the memory a handle's data pointers live in
// (host memory on the CPU backend, device memory on CUDA, on the handle's stream).
#pragma once

#include <cstddef>

#include "core/handle.hpp"

namespace odnn::core {

Status copy_from_host(const Handle& h, void* dst, const void* src, size_t bytes);
Status copy_to_host(const Handle& h, void* dst, const void* src, size_t bytes);
Status fill_bytes(const Handle& h, void* dst, int value, size_t bytes);
// Between two buffers of the handle's memory (not overlapping).
Status copy_bytes(const Handle& h, void* dst, const void* src, size_t bytes);
// Memory a handle's data pointers may point to, owned: 64-byte aligned host memory on
// the CPU backend, device memory on CUDA; zero-filled.
class BackendBuffer {
public:
    BackendBuffer() = default;
    BackendBuffer(const BackendBuffer&) = delete;
    BackendBuffer& operator=(const BackendBuffer&) = delete;
    ~BackendBuffer() { release(); }
    Status allocate(const Handle& h, size_t bytes);
    void* get() const { return p_; }

private:
    void release();
    void* p_ = nullptr;
    bool device_ = false;
};

// Waits for work queued on the handle's stream (no-op on the CPU backend).
Status synchronize(const Handle& h);

}  // namespace odnn::core
