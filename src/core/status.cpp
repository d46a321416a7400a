#include "core/status.hpp"

#include <cstdarg>
#include <cstdio>

namespace odnn::core {

Status make_status(cudnnStatus_t code, const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return Status(code, buf);
}

}  // namespace odnn::core
