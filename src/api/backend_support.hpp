#pragma once

namespace odnn::api {

// Whether an implemented API function works on each backend. Functions that only
// manage descriptors or handles work everywhere; functions that run an operation
// work where that operation has registered implementations.
void backend_support(const char* name, bool* cpu, bool* cuda);

}  // namespace odnn::api
