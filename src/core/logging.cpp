#include "core/logging.hpp"

#include <sys/time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

namespace odnn::core {

const char* status_name(cudnnStatus_t code) {
    switch (static_cast<int>(code)) {
#define ODNN_NAME(v, n) \
    case v:             \
        return n;
        ODNN_NAME(0, "CUDNN_STATUS_SUCCESS")
        ODNN_NAME(1001, "CUDNN_STATUS_NOT_INITIALIZED")
        ODNN_NAME(1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH")
        ODNN_NAME(1003, "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH")
        ODNN_NAME(1004, "CUDNN_STATUS_DEPRECATED")
        ODNN_NAME(1005, "CUDNN_STATUS_LICENSE_ERROR")
        ODNN_NAME(1006, "CUDNN_STATUS_RUNTIME_IN_PROGRESS")
        ODNN_NAME(1007, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW")
        ODNN_NAME(1008, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED")
        ODNN_NAME(2000, "CUDNN_STATUS_BAD_PARAM")
        ODNN_NAME(2001, "CUDNN_STATUS_INVALID_VALUE")
        ODNN_NAME(2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER")
        ODNN_NAME(2003, "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER")
        ODNN_NAME(2004, "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED")
        ODNN_NAME(2005, "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND")
        ODNN_NAME(2006, "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT")
        ODNN_NAME(2007, "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH")
        ODNN_NAME(2008, "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH")
        ODNN_NAME(2009, "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES")
        ODNN_NAME(2010, "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE")
        ODNN_NAME(2011, "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH")
        ODNN_NAME(2012, "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE")
        ODNN_NAME(3000, "CUDNN_STATUS_NOT_SUPPORTED")
        ODNN_NAME(3001, "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN")
        ODNN_NAME(3002, "CUDNN_STATUS_NOT_SUPPORTED_SHAPE")
        ODNN_NAME(3003, "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE")
        ODNN_NAME(3004, "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT")
        ODNN_NAME(3005, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER")
        ODNN_NAME(3006, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART")
        ODNN_NAME(3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH")
        ODNN_NAME(3008, "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING")
        ODNN_NAME(3009, "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE")
        ODNN_NAME(3010, "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT")
        ODNN_NAME(3011, "CUDNN_STATUS_NOT_SUPPORTED_PADDING")
        ODNN_NAME(3012, "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM")
        ODNN_NAME(3013, "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API")
        ODNN_NAME(3014, "CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE")
        ODNN_NAME(4000, "CUDNN_STATUS_INTERNAL_ERROR")
        ODNN_NAME(4001, "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED")
        ODNN_NAME(4002, "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE")
        ODNN_NAME(4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED")
        ODNN_NAME(4004, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED")
        ODNN_NAME(4005, "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM")
        ODNN_NAME(4006, "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED")
        ODNN_NAME(5000, "CUDNN_STATUS_EXECUTION_FAILED")
        ODNN_NAME(5001, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER")
        ODNN_NAME(5002, "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS")
        ODNN_NAME(5003, "CUDNN_STATUS_EXECUTION_FAILED_CUDART")
        ODNN_NAME(5004, "CUDNN_STATUS_EXECUTION_FAILED_CURAND")
#undef ODNN_NAME
        default:
            return "CUDNN_UNKNOWN_STATUS";
    }
}

namespace {

thread_local std::string t_last_error;

struct LogConfig {
    std::mutex mu;
    bool loaded = false;
    int level = 0;  // 0 off, 1 errors, 2 + warnings, 3 + info
    FILE* dest = nullptr;
    bool owns_dest = false;
    unsigned cb_mask = 0;
    void* cb_udata = nullptr;
    cudnnCallback_t cb_fn = nullptr;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

LogConfig& config() {
    static LogConfig* c = new LogConfig();  // never destroyed: logging may run during exit
    return *c;
}

// Atomic mirrors of "anything to do?", read on every API call without the lock:
// the log level (-1 until the environment is read) and the severities the user
// callback asked for (0 without a callback).
std::atomic<int> g_active_level{-1};
std::atomic<unsigned> g_callback_mask{0};

int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    return std::atoi(v);
}

void load_locked(LogConfig& c) {
    if (c.owns_dest && c.dest) std::fclose(c.dest);
    c.dest = nullptr;
    c.owns_dest = false;
    int level = env_int("CUDNN_LOGLEVEL_DBG", -1);
    if (level < 0) {
        // The pre-9 switches, still honoured by cuDNN 9.
        level = 0;
        if (env_int("CUDNN_LOGERR_DBG", 0)) level = 1;
        if (env_int("CUDNN_LOGWARN_DBG", 0)) level = 2;
        if (env_int("CUDNN_LOGINFO_DBG", 0)) level = 3;
    }
    c.level = level < 0 ? 0 : (level > 3 ? 3 : level);
    const char* dest = std::getenv("CUDNN_LOGDEST_DBG");
    if (!dest || !*dest || std::strcmp(dest, "stderr") == 0) {
        c.dest = stderr;
    } else if (std::strcmp(dest, "stdout") == 0) {
        c.dest = stdout;
    } else if (std::strcmp(dest, "NULL") == 0) {
        c.dest = nullptr;
    } else {
        // cuDNN expands %i to the process id in the file name.
        std::string path;
        for (const char* p = dest; *p; ++p) {
            if (p[0] == '%' && p[1] == 'i') {
                path += std::to_string(::getpid());
                ++p;
            } else {
                path += *p;
            }
        }
        c.dest = std::fopen(path.c_str(), "a");
        c.owns_dest = c.dest != nullptr;
        if (!c.dest) c.dest = stderr;
    }
    c.loaded = true;
    g_active_level.store(c.level, std::memory_order_release);
}

int severity_level(cudnnSeverity_t s) {
    switch (s) {
        case CUDNN_SEV_FATAL:
        case CUDNN_SEV_ERROR:
            return 1;
        case CUDNN_SEV_WARNING:
            return 2;
        default:
            return 3;
    }
}

}  // namespace

void set_last_error(const std::string& message) { t_last_error = message; }

std::string take_last_error() {
    std::string out;
    out.swap(t_last_error);
    return out;
}

void reload_log_config() {
    LogConfig& c = config();
    std::lock_guard<std::mutex> lock(c.mu);
    load_locked(c);
}

bool log_enabled(cudnnSeverity_t severity) {
    int lvl = g_active_level.load(std::memory_order_acquire);
    if (lvl < 0) {
        LogConfig& c = config();
        std::lock_guard<std::mutex> lock(c.mu);
        if (!c.loaded) load_locked(c);
        lvl = c.level;
    }
    const unsigned bit = 1u << static_cast<unsigned>(severity);
    return severity_level(severity) <= lvl || (g_callback_mask.load(std::memory_order_acquire) & bit) != 0;
}

void log_message(cudnnSeverity_t severity, cudnnStatus_t status, const char* api, const std::string& message,
                 cudnnHandle_t handle) {
    if (!log_enabled(severity)) return;
    LogConfig& c = config();
    std::lock_guard<std::mutex> lock(c.mu);
    struct timeval tv;
    gettimeofday(&tv, nullptr);
    const auto since = std::chrono::steady_clock::now() - c.start;
    const unsigned delta_ms =
        static_cast<unsigned>(std::chrono::duration_cast<std::chrono::milliseconds>(since).count());
    unsigned bit = 1u << static_cast<unsigned>(severity);
    if (c.cb_fn && (c.cb_mask & bit)) {
        cudnnDebug_t dbg;
        std::memset(&dbg, 0, sizeof dbg);
        dbg.cudnn_version = CUDNN_VERSION;
        dbg.cudnnStatus = status;
        dbg.time_sec = static_cast<unsigned>(tv.tv_sec);
        dbg.time_usec = static_cast<unsigned>(tv.tv_usec);
        dbg.time_delta = delta_ms / 1000u;  // seconds, per the API
        dbg.handle = handle;
        dbg.stream = nullptr;
        dbg.pid = static_cast<unsigned long long>(::getpid());
        dbg.tid = static_cast<unsigned long long>(::syscall(SYS_gettid));
        dbg.cudaDeviceId = -1;
        std::string text = std::string(api) + ": " + message;
        c.cb_fn(severity, c.cb_udata, &dbg, text.c_str());
        return;
    }
    if (severity_level(severity) > c.level || !c.dest) return;
    const char tag = severity_level(severity) == 1 ? 'E' : (severity_level(severity) == 2 ? 'W' : 'I');
    char when[64];
    struct tm tmv;
    localtime_r(&tv.tv_sec, &tmv);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tmv);
    std::fprintf(c.dest, "%c! odnn (cuDNN API v%d) %s(): %s%s%s\n%c! time %s.%06ld (+%u ms); pid %d; tid %ld; handle %p\n\n",
                 tag, CUDNN_VERSION, api, status == CUDNN_STATUS_SUCCESS ? "" : status_name(status),
                 status == CUDNN_STATUS_SUCCESS ? "" : ": ", message.c_str(), tag | 0x20, when,
                 static_cast<long>(tv.tv_usec), delta_ms, static_cast<int>(::getpid()),
                 static_cast<long>(::syscall(SYS_gettid)), static_cast<void*>(handle));
    std::fflush(c.dest);
}

void set_callback(unsigned mask, void* udata, cudnnCallback_t fn) {
    LogConfig& c = config();
    std::lock_guard<std::mutex> lock(c.mu);
    c.cb_mask = mask;
    c.cb_udata = udata;
    c.cb_fn = fn;
    g_callback_mask.store(fn ? mask : 0u, std::memory_order_release);
}

void get_callback(unsigned* mask, void** udata, cudnnCallback_t* fn) {
    LogConfig& c = config();
    std::lock_guard<std::mutex> lock(c.mu);
    if (mask) *mask = c.cb_mask;
    if (udata) *udata = c.cb_udata;
    if (fn) *fn = c.cb_fn;
}

}  // namespace odnn::core
