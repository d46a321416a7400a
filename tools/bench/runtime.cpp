#include "runtime.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace odnn_bench {

// ---- cuDNN libraries ----

std::unique_ptr<CudnnLib> CudnnLib::open(const std::string& path, std::string* error) {
    void* dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        *error = std::string("cannot load ") + path + ": " + dlerror();
        return nullptr;
    }
    if (!dlsym(dl, "cudnnGetVersion") || !dlsym(dl, "cudnnCreate")) {
        *error = path + " is not a cuDNN library (no cudnnGetVersion / cudnnCreate)";
        dlclose(dl);
        return nullptr;
    }
    std::unique_ptr<CudnnLib> lib(new CudnnLib());
    lib->dl_ = dl;
    lib->path_ = path;
    lib->is_odnn_ = dlsym(dl, "odnnIsOdnn") != nullptr;
    return lib;
}

CudnnLib::~CudnnLib() {
    if (handle_) reinterpret_cast<decltype(&::cudnnDestroy)>(sym("cudnnDestroy"))(handle_);
    // Never dlclose: a library's threads or atexit handlers may still refer to it.
}

void* CudnnLib::sym(const char* name) const { return dlsym(dl_, name); }

void* CudnnLib::sym_checked(const char* name) const {
    void* p = dlsym(dl_, name);
    if (!p) {
        std::fprintf(stderr, "odnn bench: %s does not export %s\n", path_.c_str(), name);
        std::exit(1);
    }
    return p;
}

std::string CudnnLib::label() const {
    const size_t v = reinterpret_cast<decltype(&::cudnnGetVersion)>(sym("cudnnGetVersion"))();
    return std::string(is_odnn_ ? "odnn" : "nvidia") + "-" + std::to_string(v / 10000) + "." +
           std::to_string(v / 100 % 100);
}

bool CudnnLib::init(std::string* error) {
    const cudnnStatus_t s = reinterpret_cast<decltype(&::cudnnCreate)>(sym("cudnnCreate"))(&handle_);
    if (s != CUDNN_STATUS_SUCCESS) {
        char why[512] = "";
        if (auto f = reinterpret_cast<decltype(&::cudnnGetLastErrorString)>(sym("cudnnGetLastErrorString")))
            f(why, sizeof why);
        *error = path_ + ": cudnnCreate failed: " + std::to_string(s) + " " + why;
        handle_ = nullptr;
        return false;
    }
    on_gpu_ = true;
    if (is_odnn_) {
        auto backend = reinterpret_cast<const char* (*)(cudnnHandle_t)>(sym("odnnGetHandleBackend"));
        on_gpu_ = backend && std::strcmp(backend(handle_), "cuda") == 0;
    }
    return true;
}

// ---- CUDA runtime through dlopen ----

struct Cuda::Api {
    int (*Malloc)(void**, size_t);
    int (*Free)(void*);
    int (*Memcpy)(void*, const void*, size_t, int);
    int (*DeviceSynchronize)();
    int (*GetDeviceCount)(int*);
    int (*EventCreate)(void**);
    int (*EventRecord)(void*, void*);
    int (*EventSynchronize)(void*);
    int (*EventElapsedTime)(float*, void*, void*);
    int (*EventDestroy)(void*);
    int (*GetLastError)();
    const char* (*GetErrorString)(int);
    int (*DeviceGetAttribute)(int*, int, int);
};

namespace {
std::string g_cuda_why;
}  // namespace

Cuda* load_cuda() {
    static Cuda* instance = nullptr;
    std::string& why = g_cuda_why;
    static bool tried = false;
    if (tried) return instance;
    tried = true;
    void* dl = nullptr;
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so"})
        if ((dl = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!dl) {
        why = "no CUDA runtime (libcudart.so) found";
        return nullptr;
    }
    auto* api = new Cuda::Api();
#define BENCH_CUDA_SYM(field, name)                                       \
    api->field = reinterpret_cast<decltype(api->field)>(dlsym(dl, name)); \
    if (!api->field) {                                                    \
        why = std::string("libcudart lacks ") + name;                     \
        return nullptr;                                                   \
    }
    BENCH_CUDA_SYM(Malloc, "cudaMalloc")
    BENCH_CUDA_SYM(Free, "cudaFree")
    BENCH_CUDA_SYM(Memcpy, "cudaMemcpy")
    BENCH_CUDA_SYM(DeviceSynchronize, "cudaDeviceSynchronize")
    BENCH_CUDA_SYM(GetDeviceCount, "cudaGetDeviceCount")
    BENCH_CUDA_SYM(EventCreate, "cudaEventCreate")
    BENCH_CUDA_SYM(EventRecord, "cudaEventRecord")
    BENCH_CUDA_SYM(EventSynchronize, "cudaEventSynchronize")
    BENCH_CUDA_SYM(EventElapsedTime, "cudaEventElapsedTime")
    BENCH_CUDA_SYM(EventDestroy, "cudaEventDestroy")
    BENCH_CUDA_SYM(GetLastError, "cudaGetLastError")
    BENCH_CUDA_SYM(GetErrorString, "cudaGetErrorString")
    BENCH_CUDA_SYM(DeviceGetAttribute, "cudaDeviceGetAttribute")
#undef BENCH_CUDA_SYM
    int n = 0;
    const int e = api->GetDeviceCount(&n);
    if (e != 0 || n == 0) {
        why = std::string("no CUDA device: ") + api->GetErrorString(e);
        return nullptr;
    }
    instance = new Cuda();
    instance->api_ = api;
    int major = 0, minor = 0, sms = 0;
    api->DeviceGetAttribute(&major, 75, 0);  // cudaDevAttrComputeCapabilityMajor
    api->DeviceGetAttribute(&minor, 76, 0);  // cudaDevAttrComputeCapabilityMinor
    api->DeviceGetAttribute(&sms, 16, 0);    // cudaDevAttrMultiProcessorCount
    instance->name_ = "sm_" + std::to_string(major) + std::to_string(minor) + ", " + std::to_string(sms) + " SMs";
    return instance;
}

Cuda* Cuda::get(std::string* why_not) {
    Cuda* c = load_cuda();
    if (!c && why_not) *why_not = g_cuda_why;
    return c;
}

void* Cuda::malloc(size_t bytes) {
    void* p = nullptr;
    return api_->Malloc(&p, bytes) == 0 ? p : nullptr;
}
void Cuda::free(void* p) { api_->Free(p); }
bool Cuda::h2d(void* dst, const void* src, size_t bytes) { return api_->Memcpy(dst, src, bytes, 1) == 0; }
bool Cuda::d2h(void* dst, const void* src, size_t bytes) { return api_->Memcpy(dst, src, bytes, 2) == 0; }
bool Cuda::d2d(void* dst, const void* src, size_t bytes) { return api_->Memcpy(dst, src, bytes, 3) == 0; }
bool Cuda::sync() { return api_->DeviceSynchronize() == 0; }
std::string Cuda::last_error() const { return api_->GetErrorString(api_->GetLastError()); }

double Cuda::time_ms(const std::function<bool()>& fn) {
    void *start = nullptr, *stop = nullptr;
    api_->EventCreate(&start);
    api_->EventCreate(&stop);
    api_->EventRecord(start, nullptr);
    const bool ok = fn();
    api_->EventRecord(stop, nullptr);
    api_->EventSynchronize(stop);
    float ms = -1.0f;
    api_->EventElapsedTime(&ms, start, stop);
    api_->EventDestroy(start);
    api_->EventDestroy(stop);
    return ok ? ms : -1.0;
}

// ---- buffers and timing ----

bool alloc(Buffer* b, size_t bytes, bool gpu, std::string* error) {
    b->bytes = bytes;
    b->gpu = gpu;
    const size_t n = bytes ? bytes : 1;
    if (gpu) {
        Cuda* c = Cuda::get();
        b->ptr = c ? c->malloc(n) : nullptr;
    } else {
        b->ptr = std::aligned_alloc(256, (n + 255) / 256 * 256);
    }
    if (!b->ptr) *error = "cannot allocate " + std::to_string(bytes) + " bytes" + (gpu ? " on the GPU" : "");
    return b->ptr != nullptr;
}

void release(Buffer* b) {
    if (!b->ptr) return;
    if (b->gpu) Cuda::get()->free(b->ptr);
    else std::free(b->ptr);
    b->ptr = nullptr;
}

bool upload(Buffer* b, const void* host, size_t bytes) {
    if (b->gpu) return Cuda::get()->h2d(b->ptr, host, bytes);
    std::memcpy(b->ptr, host, bytes);
    return true;
}

bool download(void* host, const Buffer& b, size_t bytes) {
    if (b.gpu) return Cuda::get()->d2h(host, b.ptr, bytes);
    std::memcpy(host, b.ptr, bytes);
    return true;
}

double measure(bool gpu, int warmup, int reps, const std::function<bool()>& fn, bool* ok, Overhead* overhead) {
    *ok = true;
    for (int i = 0; i < warmup; ++i)
        if (!fn()) {
            *ok = false;
            return -1;
        }
    if (gpu && !Cuda::get()->sync()) {
        *ok = false;
        return -1;
    }
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        double ms;
        if (gpu) {
            ms = Cuda::get()->time_ms(fn);
        } else {
            const auto a = std::chrono::steady_clock::now();
            const bool good = fn();
            ms = good ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count() : -1;
        }
        if (ms < 0) {
            *ok = false;
            return -1;
        }
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    if (gpu && overhead) {
        std::vector<double> host;
        for (int i = 0; i < reps; ++i) {
            const auto a = std::chrono::steady_clock::now();
            if (!fn()) {
                *ok = false;
                return -1;
            }
            host.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
            if (!Cuda::get()->sync()) {
                *ok = false;
                return -1;
            }
        }
        std::sort(host.begin(), host.end());
        overhead->host_ms = host[host.size() / 2];
        bool good = true;
        const double all = Cuda::get()->time_ms([&] {
            for (int i = 0; i < reps && good; ++i) good = fn();
            return good;
        });
        if (all < 0) {
            *ok = false;
            return -1;
        }
        overhead->queued_ms = all / reps;
    }
    return t[t.size() / 2];
}

}  // namespace odnn_bench
