// odnn-probe: the child process of `odnn doctor`. It loads one cuDNN library (or the
// CUDA driver) and calls into it, printing what happened as key=value lines, each
// flushed at once: if the library crashes or hangs, doctor still knows how far it got
// ("stage=..."). It links nothing but libc and libdl and has no RPATH, so what it
// loads by name is what a plain program would load.
#include <dlfcn.h>
#include <link.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

namespace {

void put(const char* key, const std::string& value) {
    std::string v;
    for (char c : value) {
        if (c == '\\') v += "\\\\";
        else if (c == '\n') v += "\\n";
        else if (c == '\r') v += "\\r";
        else v += c;
    }
    std::printf("%s=%s\n", key, v.c_str());
    std::fflush(stdout);
}
void put(const char* key, long long v) { put(key, std::to_string(v)); }
void stage(const char* s) { put("stage", s); }

template <class F>
F sym(void* h, const char* name) {
    return reinterpret_cast<F>(dlsym(h, name));
}

void print_maps() {
    FILE* f = std::fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[4096];
    std::set<std::string> seen;
    while (std::fgets(line, sizeof line, f)) {
        const char* p = std::strchr(line, '/');
        if (!p) continue;
        std::string path(p);
        while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
        const std::string base = path.substr(path.find_last_of('/') + 1);
        if (base.find("cudnn") == std::string::npos && base.find("cublas") == std::string::npos &&
            base.find("nvrtc") == std::string::npos && base.find("cudart") == std::string::npos &&
            base.find("libcuda.so") == std::string::npos)
            continue;
        if (seen.insert(path).second) put("mapped", path);
    }
    std::fclose(f);
}

void* open_lib(const char* what) {
    stage("dlopen");
    void* h = dlopen(what, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        put("dlopen", "fail");
        put("dlerror", e ? e : "(no message)");
        return nullptr;
    }
    put("dlopen", "ok");
    struct link_map* lm = nullptr;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) put("path", lm->l_name);
    return h;
}

using SizeFn = size_t (*)();
using IntFn = int (*)();
using StatusFn = int (*)();
using CStrFn = const char* (*)();
using ErrStrFn = const char* (*)(int);
using LastErrFn = void (*)(char*, size_t);
using PropFn = int (*)(int, int*);

std::string status_name(void* h, int s) {
    auto f = sym<ErrStrFn>(h, "cudnnGetErrorString");
    const char* n = f ? f(s) : nullptr;
    return n ? std::string(n) : std::to_string(s);
}

std::string last_error(void* h) {
    auto f = sym<LastErrFn>(h, "cudnnGetLastErrorString");
    if (!f) return "";
    char buf[1024] = {0};
    f(buf, sizeof buf);
    return buf;
}

int mode_lib(const char* what) {
    void* h = open_lib(what);
    if (!h) return 0;
    stage("versions");
    if (auto f = sym<IntFn>(h, "odnnIsOdnn")) put("odnn", f());
    if (auto f = sym<CStrFn>(h, "odnnGetVersionString")) put("odnn_version", f() ? f() : "");
    if (auto f = sym<CStrFn>(h, "odnnGetBuildInfo")) put("odnn_build", f() ? f() : "");
    if (auto f = sym<SizeFn>(h, "cudnnGetVersion")) put("version", static_cast<long long>(f()));
    else put("version", -1);
    if (auto f = sym<SizeFn>(h, "cudnnGetCudartVersion")) put("cudart", static_cast<long long>(f()));
    if (auto f = sym<SizeFn>(h, "cudnnGetMaxDeviceVersion")) put("max_device", static_cast<long long>(f()));
    if (auto f = sym<PropFn>(h, "cudnnGetProperty")) {
        int a = -1, b = -1, c = -1;
        if (f(0, &a) == 0 && f(1, &b) == 0 && f(2, &c) == 0)
            put("property", std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c));
    }
    // NVIDIA's shim loads its sub-libraries here and checks that they are of its version.
    const char* checks[][2] = {{"graph", "cudnnGraphVersionCheck"},
                               {"ops", "cudnnOpsVersionCheck"},
                               {"cnn", "cudnnCnnVersionCheck"},
                               {"adv", "cudnnAdvVersionCheck"}};
    for (auto& c : checks) {
        auto f = sym<StatusFn>(h, c[1]);
        if (!f) continue;
        stage(c[1]);
        const int s = f();
        const std::string key = std::string("check.") + c[0];
        put(key.c_str(), std::to_string(s) + " " + status_name(h, s) + (s ? " " + last_error(h) : ""));
    }
    stage("maps");
    print_maps();
    stage("done");
    return 0;
}

// CUDA runtime entry points the smoke test needs for device memory.
struct Cudart {
    void* h = nullptr;
    int (*malloc_)(void**, size_t) = nullptr;
    int (*free_)(void*) = nullptr;
    int (*memcpy_)(void*, const void*, size_t, int) = nullptr;
    int (*sync_)() = nullptr;
    bool load(int major) {
        const std::string names[] = {"libcudart.so." + std::to_string(major), "libcudart.so"};
        for (const std::string& n : names) {
            if (major <= 0 && n != "libcudart.so") continue;
            h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (h) {
                put("cudart_lib", n);
                break;
            }
        }
        if (!h) return false;
        malloc_ = sym<int (*)(void**, size_t)>(h, "cudaMalloc");
        free_ = sym<int (*)(void*)>(h, "cudaFree");
        memcpy_ = sym<int (*)(void*, const void*, size_t, int)>(h, "cudaMemcpy");
        sync_ = sym<int (*)()>(h, "cudaDeviceSynchronize");
        return malloc_ && free_ && memcpy_ && sync_;
    }
};

int mode_smoke(const char* what) {
    void* h = open_lib(what);
    if (!h) return 0;
    auto create = sym<int (*)(void**)>(h, "cudnnCreate");
    auto destroy = sym<int (*)(void*)>(h, "cudnnDestroy");
    auto tcreate = sym<int (*)(void**)>(h, "cudnnCreateTensorDescriptor");
    auto tset = sym<int (*)(void*, int, int, int, int, int, int)>(h, "cudnnSetTensor4dDescriptor");
    auto tdestroy = sym<int (*)(void*)>(h, "cudnnDestroyTensorDescriptor");
    auto settensor = sym<int (*)(void*, void*, void*, const void*)>(h, "cudnnSetTensor");
    auto scale = sym<int (*)(void*, void*, void*, const void*)>(h, "cudnnScaleTensor");
    if (!create || !destroy) {
        put("create", "missing");
        return 0;
    }
    stage("cudnnCreate");
    void* handle = nullptr;
    const int s = create(&handle);
    put("create", s);
    put("create_name", status_name(h, s));
    if (s != 0) {
        put("create_error", last_error(h));
        stage("done");
        return 0;
    }
    std::string backend;
    if (auto f = sym<const char* (*)(void*)>(h, "odnnGetHandleBackend")) {
        const char* b = f(handle);
        backend = b ? b : "";
        put("backend", backend);
    }
    if (!tcreate || !tset || !tdestroy || !settensor || !scale) {
        put("op", "missing");
        destroy(handle);
        stage("done");
        return 0;
    }
    // y (1x2x3x4 float) = 1.5, then y *= 2: every element 3.0, and the 8 floats after y untouched.
    const int n = 24, guard = 8;
    float host[n + guard];
    for (float& v : host) v = std::nanf("");
    for (int i = n; i < n + guard; ++i) host[i] = -7.0f;
    float* y = host;
    Cudart rt;
    void* dev = nullptr;
    const bool device = backend != "cpu";
    if (device) {
        stage("cudart");
        int major = 0;
        if (auto f = sym<SizeFn>(h, "cudnnGetCudartVersion")) major = static_cast<int>(f() / 1000);
        if (!rt.load(major)) {
            put("memory", "none");
            put("op_error", "libcudart.so." + std::to_string(major) +
                                " could not be loaded, so there is no device memory to run an operation on");
            destroy(handle);
            stage("done");
            return 0;
        }
        const int m = rt.malloc_(&dev, sizeof host);
        if (m != 0) {
            put("memory", "none");
            put("op_error", "cudaMalloc failed with CUDA error " + std::to_string(m));
            destroy(handle);
            stage("done");
            return 0;
        }
        rt.memcpy_(dev, host, sizeof host, 1);
        y = static_cast<float*>(dev);
        put("memory", "device");
    } else {
        put("memory", "host");
    }
    void* desc = nullptr;
    int st = tcreate(&desc);
    if (st == 0) st = tset(desc, 0 /*NCHW*/, 0 /*FLOAT*/, 1, 2, 3, 4);
    put("descriptor", st);
    if (st == 0) {
        stage("cudnnSetTensor");
        const float v = 1.5f, a = 2.0f;
        const int s1 = settensor(handle, desc, y, &v);
        put("settensor", s1);
        if (s1 != 0) put("settensor_error", status_name(h, s1) + " " + last_error(h));
        stage("cudnnScaleTensor");
        const int s2 = s1 == 0 ? scale(handle, desc, y, &a) : -1;
        put("scale", s2);
        if (s1 == 0 && s2 != 0) put("scale_error", status_name(h, s2) + " " + last_error(h));
        if (device) {
            rt.sync_();
            rt.memcpy_(host, dev, sizeof host, 2);
        }
        if (s1 == 0 && s2 == 0) {
            int bad = 0, first = -1;
            for (int i = 0; i < n + guard; ++i) {
                const float want = i < n ? 3.0f : -7.0f;
                if (!(host[i] == want)) {
                    ++bad;
                    if (first < 0) first = i;
                }
            }
            put("check", bad == 0 ? "ok" : "mismatch");
            if (bad)
                put("check_detail", std::to_string(bad) + " of " + std::to_string(n + guard) +
                                        " values wrong; first at index " + std::to_string(first) + ": " +
                                        std::to_string(host[first]));
        }
        tdestroy(desc);
    }
    if (device && dev) rt.free_(dev);
    stage("cudnnDestroy");
    put("destroy", destroy(handle));
    stage("done");
    return 0;
}

int mode_driver() {
    stage("dlopen");
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        put("libcuda", "fail");
        put("dlerror", e ? e : "");
        return 0;
    }
    put("libcuda", "ok");
    struct link_map* lm = nullptr;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) put("path", lm->l_name);
    auto init = sym<int (*)(unsigned)>(h, "cuInit");
    auto ver = sym<int (*)(int*)>(h, "cuDriverGetVersion");
    auto count = sym<int (*)(int*)>(h, "cuDeviceGetCount");
    auto get = sym<int (*)(int*, int)>(h, "cuDeviceGet");
    auto name = sym<int (*)(char*, int, int)>(h, "cuDeviceGetName");
    auto attr = sym<int (*)(int*, int, int)>(h, "cuDeviceGetAttribute");
    auto errname = sym<int (*)(int, const char**)>(h, "cuGetErrorName");
    if (ver) {
        int v = 0;
        if (ver(&v) == 0) put("driver_version", v);
    }
    if (!init) return 0;
    stage("cuInit");
    const int r = init(0);
    put("cuInit", r);
    if (r != 0 && errname) {
        const char* s = nullptr;
        if (errname(r, &s) == 0 && s) put("cuInit_name", s);
    }
    if (r != 0 || !count) return 0;
    int n = 0;
    count(&n);
    put("devices", n);
    for (int i = 0; i < n && i < 64; ++i) {
        int dev = 0;
        if (!get || get(&dev, i) != 0) continue;
        char nm[256] = {0};
        if (name) name(nm, sizeof nm, dev);
        int ma = 0, mi = 0;
        if (attr) {
            attr(&ma, 75, dev);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
            attr(&mi, 76, dev);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
        }
        const std::string k = "device." + std::to_string(i);
        put((k + ".name").c_str(), nm);
        put((k + ".cc").c_str(), std::to_string(ma) + "." + std::to_string(mi));
    }
    stage("done");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "lib") == 0) return mode_lib(argv[2]);
    if (argc == 3 && std::strcmp(argv[1], "smoke") == 0) return mode_smoke(argv[2]);
    if (argc == 2 && std::strcmp(argv[1], "driver") == 0) return mode_driver();
    std::fprintf(stderr,
                 "usage: odnn-probe lib PATH|NAME | smoke PATH | driver\n"
                 "(the child process of `odnn doctor`; it prints key=value lines)\n");
    return 2;
}
