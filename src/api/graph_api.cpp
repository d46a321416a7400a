// cudnn_graph entry points: version and error reporting, the handle, logging
// callbacks. (The backend descriptor API lives in backend_api.cpp.)
#include <cstring>
#include <string>

#include "api/api_common.hpp"
#include "api/api_table.hpp"
#include "api/backend_support.hpp"
#include "core/cuda_runtime.hpp"
#include "core/handle.hpp"
#include "odnn/odnn.h"

using odnn::api::guard;
using odnn::core::Status;

extern "C" {

size_t CUDNNWINAPI cudnnGetVersion(void) { return CUDNN_VERSION; }

// The newest compute capability (major*100 + minor*10) this build serves. With PTX
// for the newest architecture compiled in, later devices run through the JIT, so
// the answer is the same as NVIDIA's 9.19 (sm_121); a CPU-only build runs anywhere.
size_t CUDNNWINAPI cudnnGetMaxDeviceVersion(void) { return CUDNN_MAX_DEVICE_VERSION; }

size_t CUDNNWINAPI cudnnGetCudartVersion(void) { return odnn::core::cuda_runtime_build_version(); }

const char* CUDNNWINAPI cudnnGetErrorString(cudnnStatus_t status) { return odnn::core::status_name(status); }

void CUDNNWINAPI cudnnGetLastErrorString(char* message, size_t max_size) {
    if (message == nullptr || max_size == 0) return;
    const std::string last = odnn::core::take_last_error();
    const size_t n = last.size() < max_size - 1 ? last.size() : max_size - 1;
    std::memcpy(message, last.data(), n);
    message[n] = '\0';
}

cudnnStatus_t CUDNNWINAPI cudnnGetProperty(libraryPropertyType type, int* value) {
    return guard(__func__, [&]() -> Status {
        ODNN_REQUIRE_NOT_NULL(value);
        switch (static_cast<int>(type)) {
            case MAJOR_VERSION: *value = CUDNN_MAJOR; break;
            case MINOR_VERSION: *value = CUDNN_MINOR; break;
            case PATCH_LEVEL: *value = CUDNN_PATCHLEVEL; break;
            default:
                return odnn::core::make_status(CUDNN_STATUS_BAD_PARAM,
                                               "type %d is not MAJOR_VERSION, MINOR_VERSION or PATCH_LEVEL",
                                               static_cast<int>(type));
        }
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnCreate(cudnnHandle_t* handle) {
    return guard(__func__, [&]() -> Status {
        ODNN_REQUIRE_NOT_NULL(handle);
        auto backend = odnn::core::choose_backend();
        if (!backend.is_ok()) return backend.status();
        cudnnContext* h = nullptr;
        ODNN_RETURN_IF_ERROR(odnn::api::create_object(&h, odnn::core::ObjKind::handle, "handle"));
        h->backend = backend.value();
        h->device = h->backend == odnn::core::BackendKind::cuda ? odnn::core::cuda_current_device() : -1;
        *handle = h;
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroy(cudnnHandle_t handle) {
    return guard(__func__, [&]() -> Status {
        return odnn::api::destroy_object(handle, odnn::core::ObjKind::handle, "handle");
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        h->stream = streamId;
        return Status::ok();
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetStream(cudnnHandle_t handle, cudaStream_t* streamId) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_REQUIRE_NOT_NULL(streamId);
        *streamId = h->stream;
        return Status::ok();
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnQueryRuntimeError(cudnnHandle_t handle, cudnnStatus_t* rstatus,
                                                 cudnnErrQueryMode_t mode, struct cudnnRuntimeTag_t* tag) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        (void)h;
        ODNN_REQUIRE_NOT_NULL(rstatus);
        ODNN_REQUIRE_PARAM(mode == CUDNN_ERRQUERY_RAWCODE || mode == CUDNN_ERRQUERY_NONBLOCKING ||
                               mode == CUDNN_ERRQUERY_BLOCKING,
                           "mode %d is not a cudnnErrQueryMode_t value", static_cast<int>(mode));
        ODNN_REQUIRE_PARAM(tag == nullptr, "tag must be NULL (it is reserved)");
        // odnn kernels report errors synchronously through their return status: no
        // error is ever left pending on the device.
        *rstatus = CUDNN_STATUS_SUCCESS;
        return Status::ok();
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnSetCallback(unsigned mask, void* udata, cudnnCallback_t fptr) {
    return guard(__func__, [&]() -> Status {
        odnn::core::set_callback(mask, udata, fptr);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetCallback(unsigned* mask, void** udata, cudnnCallback_t* fptr) {
    return guard(__func__, [&]() -> Status {
        ODNN_REQUIRE_PARAM(mask && udata && fptr, "mask, udata and fptr must not be NULL");
        odnn::core::get_callback(mask, udata, fptr);
        return Status::ok();
    });
}

// odnn is one library: every sub-library is always present and of the same version.
cudnnStatus_t CUDNNWINAPI cudnnGraphVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t CUDNNWINAPI cudnnOpsVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t CUDNNWINAPI cudnnCnnVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t CUDNNWINAPI cudnnAdvVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }

// ---- odnn extensions (include/odnn/odnn.h) ----

int odnnIsOdnn(void) { return 1; }

const char* odnnGetVersionString(void) {
    static const std::string v = std::to_string(ODNN_VERSION_MAJOR) + "." + std::to_string(ODNN_VERSION_MINOR) +
                                 "." + std::to_string(ODNN_VERSION_PATCH);
    return v.c_str();
}

const char* odnnGetBuildInfo(void) {
    static const std::string info = [] {
        std::string s;
        s += "odnn_version=" + std::string(odnnGetVersionString()) + "\n";
        s += "cudnn_api=" + std::to_string(CUDNN_VERSION) + "\n";
        s += std::string("cuda=") + (odnn::core::cuda_compiled() ? "on" : "off") + "\n";
        s += "cuda_runtime=" + std::to_string(odnn::core::cuda_runtime_build_version()) + "\n";
#ifdef ODNN_CUDA_ARCHS_STRING
        s += "cuda_archs=" ODNN_CUDA_ARCHS_STRING "\n";
#endif
#ifdef ODNN_SANITIZE_BUILD
        s += "sanitizers=address,undefined\n";
#endif
        s += "backends=cpu";
        if (odnn::core::cuda_compiled()) s += ",cuda";
        s += "\n";
        return s;
    }();
    return info.c_str();
}

const char* odnnGetDeviceInfo(void) {
    static const std::string info = [] {
        std::string d = odnn::core::cuda_describe_devices();
        if (!d.empty() && d.back() != '\n') d += "\n";
        return d;
    }();
    return info.c_str();
}

int odnnGetApiCount(void) { return odnn::api::kApiCount; }

cudnnStatus_t odnnGetApiEntry(int index, odnnApiEntry* entry) {
    return guard(__func__, [&]() -> Status {
        ODNN_REQUIRE_NOT_NULL(entry);
        ODNN_REQUIRE_PARAM(index >= 0 && index < odnn::api::kApiCount, "index %d is outside [0, %d)", index,
                           odnn::api::kApiCount);
        const auto& e = odnn::api::kApiTable[index];
        entry->name = e.name;
        entry->sublibrary = e.sublibrary;
        entry->implemented = e.implemented() ? 1 : 0;
        bool cpu = false, cuda = false;
        if (e.implemented()) odnn::api::backend_support(e.name, &cpu, &cuda);
        entry->cpu = cpu ? 1 : 0;
        entry->cuda = cuda ? 1 : 0;
        return Status::ok();
    });
}

const char* odnnGetHandleBackend(cudnnHandle_t handle) {
    if (!odnn::core::registry_contains(handle, odnn::core::ObjKind::handle)) return nullptr;
    return odnn::core::backend_name(handle->backend);
}

}  // extern "C"
