// The library context behind cudnnHandle_t.
#pragma once

#include "core/status.hpp"

namespace odnn::core {

enum class BackendKind { cpu, cuda };

const char* backend_name(BackendKind kind);

class Handle {
public:
    BackendKind backend = BackendKind::cpu;
    cudaStream_t stream = nullptr;  // CUDA backend only; the CPU backend runs synchronously
    int device = -1;                // CUDA device the handle was created on
};

// Picks the backend for a new handle: ODNN_BACKEND=cpu|cuda forces one, otherwise
// CUDA when built with it and a device is present, else CPU.
StatusOr<BackendKind> choose_backend();

}  // namespace odnn::core

// The opaque type of the public API is our handle.
struct cudnnContext final : odnn::core::Handle {};
