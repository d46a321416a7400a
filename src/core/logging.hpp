// Error reporting and logging: the per-thread last-error message behind
// cudnnGetLastErrorString, the CUDNN_LOGLEVEL_DBG / CUDNN_LOGDEST_DBG logger and
// the user callback installed with cudnnSetCallback.
#pragma once

#include <string>

#include "core/status.hpp"

namespace odnn::core {

const char* status_name(cudnnStatus_t code);

// Per-thread last error: set by every failing API call, cleared when read.
void set_last_error(const std::string& message);
std::string take_last_error();

// Logging. `api` is the cuDNN function name; `handle` may be null.
bool log_enabled(cudnnSeverity_t severity);
void log_message(cudnnSeverity_t severity, cudnnStatus_t status, const char* api, const std::string& message,
                 cudnnHandle_t handle = nullptr);

// cudnnSetCallback / cudnnGetCallback state.
void set_callback(unsigned mask, void* udata, cudnnCallback_t fn);
void get_callback(unsigned* mask, void** udata, cudnnCallback_t* fn);

// Re-reads CUDNN_LOGLEVEL_DBG / CUDNN_LOGDEST_DBG (done once lazily; tests call it).
void reload_log_config();

}  // namespace odnn::core
