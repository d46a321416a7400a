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

namespace {
Status no_cuda() { return Status(CUDNN_STATUS_NOT_SUPPORTED, "odnn was built without CUDA"); }
}  // namespace

Status cuda_memcpy(void*, const void*, size_t, CudaCopy, cudaStream_t) { return no_cuda(); }
Status cuda_memset(void*, int, size_t, cudaStream_t) { return no_cuda(); }
Status cuda_stream_synchronize(cudaStream_t) { return no_cuda(); }
Status cuda_check_launch(const char*) { return no_cuda(); }
Status cuda_malloc(void** p, size_t) {
    *p = nullptr;
    return no_cuda();
}
void cuda_free(void*) {}

}  // namespace odnn::core
