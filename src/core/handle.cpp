#include "core/handle.hpp"

#include <cstdlib>
#include <cstring>

#include "core/cuda_runtime.hpp"

namespace odnn::core {

const char* backend_name(BackendKind kind) { return kind == BackendKind::cuda ? "cuda" : "cpu"; }

StatusOr<BackendKind> choose_backend() {
    const char* forced = std::getenv("ODNN_BACKEND");
    if (forced && *forced) {
        if (std::strcmp(forced, "cpu") == 0) return BackendKind::cpu;
        if (std::strcmp(forced, "cuda") == 0) {
            if (!cuda_compiled())
                return make_status(CUDNN_STATUS_NOT_SUPPORTED,
                                   "ODNN_BACKEND=cuda, but this odnn was built without CUDA (ODNN_WITH_CUDA=OFF)");
            std::string why;
            const int n = cuda_device_count(&why);
            if (n <= 0)
                return make_status(CUDNN_STATUS_NOT_INITIALIZED,
                                   "ODNN_BACKEND=cuda, but no CUDA device is usable: %s", why.c_str());
            return BackendKind::cuda;
        }
        return make_status(CUDNN_STATUS_BAD_PARAM, "ODNN_BACKEND='%s' is not one of: cpu, cuda", forced);
    }
    if (cuda_compiled()) {
        std::string why;
        if (cuda_device_count(&why) > 0) return BackendKind::cuda;
    }
    return BackendKind::cpu;
}

}  // namespace odnn::core
