#include "api/api_common.hpp"

namespace odnn::api {

cudnnStatus_t finish(const char* api, const Status& s, cudnnHandle_t handle) {
    if (s.is_ok()) {
        if (core::log_enabled(CUDNN_SEV_INFO)) core::log_message(CUDNN_SEV_INFO, s.code(), api, "ok", handle);
        return CUDNN_STATUS_SUCCESS;
    }
    core::set_last_error(std::string(api) + ": " + s.message());
    const cudnnSeverity_t sev = s.code() == CUDNN_STATUS_NOT_SUPPORTED ? CUDNN_SEV_WARNING : CUDNN_SEV_ERROR;
    if (core::log_enabled(sev)) core::log_message(sev, s.code(), api, s.message(), handle);
    return s.code();
}

Status check_object(const void* p, core::ObjKind kind, const char* arg) {
    ODNN_REQUIRE_PARAM(p != nullptr, "%s is NULL", arg);
    if (core::registry_contains(p, kind)) return Status::ok();
    core::ObjKind other;
    if (core::registry_kind_of(p, &other))
        return core::make_status(CUDNN_STATUS_BAD_PARAM, "%s (%p) is a %s, expected a %s", arg, p,
                                 core::obj_kind_name(other), core::obj_kind_name(kind));
    return core::make_status(CUDNN_STATUS_BAD_PARAM, "%s (%p) is not a live %s (never created, or destroyed)", arg,
                             p, core::obj_kind_name(kind));
}

}  // namespace odnn::api
