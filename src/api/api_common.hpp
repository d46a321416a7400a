// Shared plumbing of the extern "C" entry points: the guard every body runs in,
// and the create / destroy / look-up of the opaque objects behind the API's handles.
#pragma once

#include <new>
#include <type_traits>

#include "core/logging.hpp"
#include "core/object_registry.hpp"
#include "core/status.hpp"

namespace odnn::api {

using core::Status;

// Turns the body's Status into a cudnnStatus_t: records the message as the thread's
// last error, logs it, and never lets an exception cross the C boundary.
cudnnStatus_t finish(const char* api, const Status& s, cudnnHandle_t handle = nullptr);

template <class Body>
cudnnStatus_t guard(const char* api, Body&& body, cudnnHandle_t handle = nullptr) noexcept {
    try {
        return finish(api, body(), handle);
    } catch (const std::bad_alloc&) {
        return finish(api, Status(CUDNN_STATUS_ALLOC_FAILED, "host memory allocation failed"), handle);
    } catch (const std::exception& e) {
        return finish(api, Status(CUDNN_STATUS_INTERNAL_ERROR, std::string("internal error: ") + e.what()), handle);
    } catch (...) {
        return finish(api, Status(CUDNN_STATUS_INTERNAL_ERROR, "internal error: unknown exception"), handle);
    }
}

// Looks up a caller-supplied object pointer: NULL, a dangling or foreign pointer, or
// an object of another kind all give BAD_PARAM naming the argument.
Status check_object(const void* p, core::ObjKind kind, const char* arg);

template <class T>
core::StatusOr<T*> lookup(T* p, core::ObjKind kind, const char* arg) {
    Status s = check_object(p, kind, arg);
    if (!s.is_ok()) return s;
    return p;
}

// Allocates a new object, registers it and stores it in *out.
template <class T>
Status create_object(T** out, core::ObjKind kind, const char* arg) {
    ODNN_REQUIRE_PARAM(out != nullptr, "%s is NULL", arg);
    T* obj = new T();
    core::registry_add(obj, kind);
    *out = obj;
    return Status::ok();
}

// Destroys an object; NULL is accepted and does nothing, as in cuDNN.
template <class T>
Status destroy_object(T* p, core::ObjKind kind, const char* arg) {
    if (p == nullptr) return Status::ok();
    ODNN_REQUIRE_PARAM(core::registry_remove(p, kind), "%s (%p) is not a live %s", arg, static_cast<const void*>(p),
                       core::obj_kind_name(kind));
    delete p;
    return Status::ok();
}

}  // namespace odnn::api

// Bind `var` to the looked-up object or return the failure.
#define ODNN_LOOKUP(var, ptr, kind)                                              \
    auto var##_or_ = ::odnn::api::lookup((ptr), ::odnn::core::ObjKind::kind, #ptr); \
    if (!var##_or_.is_ok()) return var##_or_.status();                           \
    auto* var = var##_or_.value()

#define ODNN_REQUIRE_NOT_NULL(ptr) ODNN_REQUIRE(((ptr) != nullptr), CUDNN_STATUS_BAD_PARAM, "%s is NULL", #ptr)
