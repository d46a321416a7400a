// Where the tensors live. The training code calls cuDNN the same way on either: with a
// GPU handle its pointers are device memory (cudaMalloc), with odnn's CPU backend they
// are host memory. This tiny layer is the only place that knows which.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace fmnist {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class DeviceChoice { automatic, cpu, gpu };

class Memory {
public:
    Memory() = default;
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;
    ~Memory();

    void set_device(bool device) { device_ = device; }
    bool device() const { return device_; }

    // Zero-filled, 256-byte aligned; freed with the Memory (or by release()).
    float* alloc_floats(size_t count);
    void* alloc_bytes(size_t bytes);
    void release(void* p);
    void upload(void* dst, const void* src, size_t bytes);
    void download(void* dst, const void* src, size_t bytes);
    // Waits for the handle's work (a no-op on the CPU backend, whose calls are synchronous).
    void synchronize();

private:
    bool device_ = false;
    std::vector<void*> blocks_;
};

// Creates the cuDNN handle for `choice` and sets *memory to the matching kind. Fills
// *description with one line saying which library, backend and memory are used.
// Throws Error with a message saying what to do when the choice cannot be met.
cudnnHandle_t open_handle(DeviceChoice choice, Memory* memory, std::string* description);

// "cudnnFoo failed: CUDNN_STATUS_...: <last error message of the library>".
[[noreturn]] void throw_cudnn_error(const char* call, cudnnStatus_t status);

}  // namespace fmnist

// Checks a cuDNN call; on failure throws fmnist::Error naming the function.
#define FMNIST_CUDNN(call)                                                       \
    do {                                                                         \
        const cudnnStatus_t fmnist_status_ = (call);                             \
        if (fmnist_status_ != CUDNN_STATUS_SUCCESS)                              \
            ::fmnist::throw_cudnn_error(#call, fmnist_status_);                  \
    } while (0)
