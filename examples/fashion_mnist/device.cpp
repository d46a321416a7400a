#include "device.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(FMNIST_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace fmnist {
namespace {

constexpr size_t kAlign = 256;

#if defined(FMNIST_WITH_CUDA)
void cuda_check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw Error(std::string(what) + " failed: " + cudaGetErrorString(e));
}
#endif

// odnn's own functions, looked up at run time so that this program builds and runs
// against NVIDIA's cuDNN too (where they do not exist).
using GetHandleBackendFn = const char* (*)(cudnnHandle_t);
using GetVersionStringFn = const char* (*)();

std::string library_name() {
    if (auto fn = reinterpret_cast<GetVersionStringFn>(dlsym(RTLD_DEFAULT, "odnnGetVersionString")))
        return std::string("odnn ") + fn();
    const size_t v = cudnnGetVersion();
    char buf[64];
    std::snprintf(buf, sizeof buf, "NVIDIA cuDNN %zu.%zu.%zu", v / 10000, v % 10000 / 100, v % 100);
    return buf;
}

}  // namespace

void throw_cudnn_error(const char* call, cudnnStatus_t status) {
    std::string name(call);
    name = name.substr(0, name.find('('));
    char last[1024] = {0};
    cudnnGetLastErrorString(last, sizeof last);
    std::string msg = name + " failed: " + cudnnGetErrorString(status);
    if (last[0]) msg += std::string(": ") + last;
    throw Error(msg);
}

Memory::~Memory() {
    for (void* p : blocks_) {
#if defined(FMNIST_WITH_CUDA)
        if (device_) {
            cudaFree(p);
            continue;
        }
#endif
        std::free(p);
    }
}

void* Memory::alloc_bytes(size_t bytes) {
    const size_t size = (bytes + kAlign - 1) / kAlign * kAlign;
    void* p = nullptr;
#if defined(FMNIST_WITH_CUDA)
    if (device_) {
        cuda_check(cudaMalloc(&p, size ? size : kAlign), "cudaMalloc");
        blocks_.push_back(p);
        cuda_check(cudaMemset(p, 0, size), "cudaMemset");
        return p;
    }
#endif
    p = std::aligned_alloc(kAlign, size ? size : kAlign);
    if (!p) throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
    blocks_.push_back(p);
    std::memset(p, 0, size);
    return p;
}

float* Memory::alloc_floats(size_t count) { return static_cast<float*>(alloc_bytes(count * sizeof(float))); }

void Memory::release(void* p) {
    for (size_t i = 0; i < blocks_.size(); ++i) {
        if (blocks_[i] != p) continue;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
#if defined(FMNIST_WITH_CUDA)
        if (device_) {
            cudaFree(p);
            return;
        }
#endif
        std::free(p);
        return;
    }
}

void Memory::upload(void* dst, const void* src, size_t bytes) {
#if defined(FMNIST_WITH_CUDA)
    if (device_) return cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (to device)");
#endif
    std::memcpy(dst, src, bytes);
}

void Memory::download(void* dst, const void* src, size_t bytes) {
#if defined(FMNIST_WITH_CUDA)
    if (device_) return cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (to host)");
#endif
    std::memcpy(dst, src, bytes);
}

void Memory::synchronize() {
#if defined(FMNIST_WITH_CUDA)
    if (device_) cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#endif
}

cudnnHandle_t open_handle(DeviceChoice choice, Memory* memory, std::string* description) {
    const bool odnn = dlsym(RTLD_DEFAULT, "odnnGetHandleBackend") != nullptr;
    // A usable CUDA device, as this program's CUDA runtime sees it.
    bool have_device = false;
    std::string no_device = "this program was built without the CUDA runtime";
    std::string device_name;
#if defined(FMNIST_WITH_CUDA)
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    have_device = e == cudaSuccess && count > 0;
    if (have_device) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) device_name = prop.name;
    } else {
        no_device = e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(e)
                                     : "no CUDA device";
        cudaGetLastError();  // clear the sticky error of the failed query
    }
#endif
    // odnn picks the backend per handle at cudnnCreate, from ODNN_BACKEND or the hardware.
    if (choice == DeviceChoice::cpu) {
        if (!odnn)
            throw Error("--device cpu: the loaded libcudnn.so.9 is NVIDIA's cuDNN, which runs on GPUs only; "
                        "load odnn's library for the CPU");
        setenv("ODNN_BACKEND", "cpu", 1);
    } else if (choice == DeviceChoice::gpu) {
        if (!have_device) throw Error("--device gpu: " + no_device);
        if (odnn) setenv("ODNN_BACKEND", "cuda", 1);
    } else if (odnn && !have_device) {
        setenv("ODNN_BACKEND", "cpu", 0);  // an explicit ODNN_BACKEND still wins
    }
    if (!odnn && !have_device)
        throw Error("the loaded libcudnn.so.9 is NVIDIA's cuDNN, which needs a GPU, and " + no_device +
                    "; to run on the CPU, load odnn's library instead (e.g. LD_LIBRARY_PATH=<odnn build>/lib)");

    cudnnHandle_t handle = nullptr;
    FMNIST_CUDNN(cudnnCreate(&handle));
    bool gpu_handle = true;  // NVIDIA's cuDNN has GPU handles only
    if (odnn) {
        auto backend = reinterpret_cast<GetHandleBackendFn>(dlsym(RTLD_DEFAULT, "odnnGetHandleBackend"));
        const char* name = backend(handle);
        gpu_handle = name && std::strcmp(name, "cpu") != 0;
    }
    if (gpu_handle && !have_device) {
        cudnnDestroy(handle);
        throw Error("the cuDNN handle runs on a GPU, but " + no_device +
                    " so its memory cannot be reached; run with --device cpu (or ODNN_BACKEND=cpu)");
    }
    memory->set_device(gpu_handle);
    *description = library_name() + (gpu_handle ? ", GPU backend (" + device_name + "), device memory"
                                                 : std::string(", CPU backend, host memory"));
    return handle;
}

}  // namespace fmnist
