#include "core/impl_registry.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace odnn::core {

bool dispatch_verbose() {
    static const bool on = [] {
        const char* v = std::getenv("ODNN_VERBOSE");
        return v && std::strstr(v, "dispatch") != nullptr;
    }();
    return on;
}

void dispatch_note(const char* op, const char* impl, const std::string& why) {
    std::fprintf(stderr, "odnn dispatch: %s: skipped %s: %s\n", op, impl, why.c_str());
}

}  // namespace odnn::core
