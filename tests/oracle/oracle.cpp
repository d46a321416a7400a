#include "oracle/oracle.hpp"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace oracle {

Lib::Lib(const char* path) : path_(path ? path : "") {
    if (path_.empty()) {
        error_ = "no path";
        return;
    }
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) error_ = dlerror();
}

void* Lib::sym(const char* name) const {
    void* p = dlsym(handle_, name);
    if (!p) {
        std::fprintf(stderr, "oracle: %s has no symbol %s\n", path_.c_str(), name);
        std::abort();  // a test bug or a missing export: stop loudly
    }
    return p;
}

const Lib& ours() {
    static const Lib lib(ODNN_LIB_PATH);
    return lib;
}

const Lib& nvidia() {
    static const Lib lib([] {
        const char* env = std::getenv("ODNN_ORACLE_CUDNN");
        return env && *env ? env : ODNN_NVIDIA_LIB_PATH;
    }());
    return lib;
}

void Trace::add(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    lines.emplace_back(buf);
}

cudnnStatus_t Trace::status(const char* label, cudnnStatus_t s) {
    add("%s: %d", label, static_cast<int>(s));
    return s;
}

void expect_same(const char* case_name, CaseFn fn) {
    ASSERT_TRUE(ours().loaded()) << "cannot load odnn: " << ours().error();
    if (!nvidia().loaded()) GTEST_SKIP() << "NVIDIA's cuDNN is not available: " << nvidia().error();
    Trace a, b;
    fn(ours(), a);
    fn(nvidia(), b);
    ASSERT_FALSE(b.lines.empty()) << case_name << ": the case recorded nothing";
    int shown = 0;
    const size_t n = a.lines.size() > b.lines.size() ? a.lines.size() : b.lines.size();
    for (size_t i = 0; i < n && shown < 25; ++i) {
        const std::string& x = i < a.lines.size() ? a.lines[i] : std::string("<missing>");
        const std::string& y = i < b.lines.size() ? b.lines[i] : std::string("<missing>");
        if (x != y) {
            ADD_FAILURE() << case_name << " step " << i << "\n  odnn:   " << x << "\n  NVIDIA: " << y;
            ++shown;
        }
    }
    EXPECT_EQ(a.lines.size(), b.lines.size()) << case_name << ": traces differ in length";
}

}  // namespace oracle
