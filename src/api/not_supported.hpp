#pragma once

namespace odnn::api {

// The answer of every cuDNN function odnn does not implement yet: records
// "<name> is not implemented by odnn" as the last error and returns NOT_SUPPORTED.
int not_supported(const char* name) noexcept;

}  // namespace odnn::api
