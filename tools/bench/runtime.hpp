// What the bench needs from the libraries it measures and from the machine:
// cuDNN libraries loaded side by side (dlopen RTLD_LOCAL), memory and timers on
// the host or, through a dlopen'ed CUDA runtime, on the GPU.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cudnn.h"

namespace odnn_bench {

// One cuDNN library, its functions resolved by name with the prototypes of our headers.
class CudnnLib {
public:
    static std::unique_ptr<CudnnLib> open(const std::string& path, std::string* error);
    ~CudnnLib();
    const std::string& path() const { return path_; }
    std::string label() const;  // "odnn" / "nvidia" + version
    bool is_odnn() const { return is_odnn_; }
    void* sym(const char* name) const;  // nullptr if absent
    // Like sym(), but a missing function is fatal for the bench run (named on stderr).
    void* sym_checked(const char* name) const;

    cudnnHandle_t handle() const { return handle_; }
    bool on_gpu() const { return on_gpu_; }  // where its data pointers live
    // Creates the library's handle; false with a message on failure.
    bool init(std::string* error);

private:
    void* dl_ = nullptr;
    std::string path_;
    bool is_odnn_ = false;
    bool on_gpu_ = true;
    cudnnHandle_t handle_ = nullptr;
};

// Call `name` in `lib` through the prototype our headers declare.
#define BENCH_CALL(lib, name, ...) (reinterpret_cast<decltype(&::name)>((lib).sym_checked(#name)))(__VA_ARGS__)

// The CUDA runtime, dlopen'ed (the bench itself links no CUDA library).
class Cuda {
public:
    // The process-wide instance; nullptr (with the reason) when no runtime or no device.
    static Cuda* get(std::string* why_not = nullptr);
    void* malloc(size_t bytes);
    void free(void* p);
    bool h2d(void* dst, const void* src, size_t bytes);
    bool d2h(void* dst, const void* src, size_t bytes);
    bool d2d(void* dst, const void* src, size_t bytes);
    bool sync();
    // Event-timed `fn` (work enqueued on the default stream), in ms; < 0 on failure.
    double time_ms(const std::function<bool()>& fn);
    const std::string& device_name() const { return name_; }
    std::string last_error() const;

    struct Api;

private:
    Api* api_ = nullptr;
    std::string name_;
    std::string why_not_;
    friend Cuda* load_cuda();
};

struct Buffer {
    void* ptr = nullptr;
    size_t bytes = 0;
    bool gpu = false;
};

// Memory in the place a library expects it.
bool alloc(Buffer* b, size_t bytes, bool gpu, std::string* error);
void release(Buffer* b);
bool upload(Buffer* b, const void* host, size_t bytes);
bool download(void* host, const Buffer& b, size_t bytes);

// Where a GPU call's time goes besides its kernels (bench --overhead): the median host
// time of one call (its return, not its work), and the time a call of `reps` calls
// issued back to back with no synchronization between them (host work and launch gaps
// hidden behind the GPU's queue). -1: not measured.
struct Overhead {
    double host_ms = -1;
    double queued_ms = -1;
};

// Median time in ms of `reps` runs of fn (after `warmup`), on GPU or CPU clocks; with
// `overhead` (GPU only) also its parts above.
double measure(bool gpu, int warmup, int reps, const std::function<bool()>& fn, bool* ok,
               Overhead* overhead = nullptr);

}  // namespace odnn_bench
