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

}  // namespace odnn::core
