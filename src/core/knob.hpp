// Tuning and test knobs read from the environment (ODNN_CONV_WGRAD=slices and the like):
// the routes they select are measured or tested alternatives, never required settings.
#pragma once

#include <cstdlib>
#include <cstring>

namespace odnn::core {

// Whether the environment variable `name` is set to exactly `value`.
inline bool knob_is(const char* name, const char* value) {
    const char* e = std::getenv(name);
    return e && std::strcmp(e, value) == 0;
}

}  // namespace odnn::core
