#include "common/test_util.hpp"

#include <dlfcn.h>

namespace odnn_test {

std::string last_error() {
    char buf[2048];
    cudnnGetLastErrorString(buf, sizeof buf);
    return buf;
}

std::string loaded_cudnn_path() {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&cudnnGetVersion), &info) == 0 || !info.dli_fname) return "";
    return info.dli_fname;
}

}  // namespace odnn_test
