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

// The environment variable `name` where it is set and not empty, else nullptr (a path or a
// name the caller reads as it is).
inline const char* knob_str(const char* name) {
    const char* e = std::getenv(name);
    return e && *e ? e : nullptr;
}

// The environment variable `name` as a decimal integer; `fallback` where it is unset or
// not a number. Callers check the range they accept.
inline long knob_long(const char* name, long fallback) {
    const char* e = std::getenv(name);
    if (!e || !*e) return fallback;
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    return *end == '\0' ? v : fallback;
}

}  // namespace odnn::core
