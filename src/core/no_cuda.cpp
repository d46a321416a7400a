// CPU-only build: the CUDA runtime services report that CUDA is absent.
#include "core/cuda_runtime.hpp"

namespace odnn::core {

bool cuda_compiled() { return false; }
int cuda_device_count(std::string* why) {
    if (why) *why = "odnn was built without CUDA";
    return 0;
}
int cuda_current_device() { return -1; }
size_t cuda_runtime_build_version() { return 0; }
std::string cuda_describe_devices() { return "none (built without CUDA)"; }

}  // namespace odnn::core
