#include "api/not_supported.hpp"

#include <string>

#include "api/api_common.hpp"

namespace odnn::api {

int not_supported(const char* name) noexcept {
    return static_cast<int>(guard(name, [&]() -> Status {
        return Status(CUDNN_STATUS_NOT_SUPPORTED, std::string(name) + " is not implemented by odnn " +
                                                      std::to_string(ODNN_VERSION_MAJOR) + "." +
                                                      std::to_string(ODNN_VERSION_MINOR) +
                                                      " (see docs/API_COVERAGE.md)");
    }));
}

}  // namespace odnn::api
