// Status: the result of every internal operation. Codes are cuDNN's cudnnStatus_t
// values (a superset is never needed: the public enum already has fine-grained codes).
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "cudnn_graph.h"

namespace odnn::core {

class [[nodiscard]] Status {
public:
    Status() = default;
    Status(cudnnStatus_t code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status ok() { return Status(); }
    bool is_ok() const { return code_ == CUDNN_STATUS_SUCCESS; }
    cudnnStatus_t code() const { return code_; }
    const std::string& message() const { return message_; }

private:
    cudnnStatus_t code_ = CUDNN_STATUS_SUCCESS;
    std::string message_;
};

// printf-style constructor used by ODNN_REQUIRE.
Status make_status(cudnnStatus_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

template <class T>
class [[nodiscard]] StatusOr {
public:
    StatusOr(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
    StatusOr(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)
    bool is_ok() const { return std::holds_alternative<T>(v_); }
    Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }
    T& value() { return std::get<T>(v_); }
    const T& value() const { return std::get<T>(v_); }

private:
    std::variant<T, Status> v_;
};

}  // namespace odnn::core

// Return a Status naming the problem unless `cond` holds.
#define ODNN_REQUIRE(cond, code, ...)                            \
    do {                                                         \
        if (!(cond)) return ::odnn::core::make_status((code), __VA_ARGS__); \
    } while (0)

// Shorthands for the two answers a caller most often gets.
#define ODNN_REQUIRE_PARAM(cond, ...) ODNN_REQUIRE(cond, CUDNN_STATUS_BAD_PARAM, __VA_ARGS__)
#define ODNN_REQUIRE_SUPPORTED(cond, ...) ODNN_REQUIRE(cond, CUDNN_STATUS_NOT_SUPPORTED, __VA_ARGS__)

#define ODNN_RETURN_IF_ERROR(expr)                   \
    do {                                             \
        ::odnn::core::Status odnn_s_ = (expr);       \
        if (!odnn_s_.is_ok()) return odnn_s_;        \
    } while (0)
