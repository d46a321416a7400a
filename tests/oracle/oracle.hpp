// Differential tests against NVIDIA's cuDNN. The same sequence of API calls runs
// through odnn's libcudnn.so.9 and NVIDIA's (both dlopen'ed with RTLD_LOCAL in this
// process, which links neither), each recording what it observes (status codes,
// values read back) into a Trace; the traces must be equal. Descriptor calls need
// no GPU, so these run on every machine that has NVIDIA's library; elsewhere they
// are skipped.
//
// A case must not pass NULL where NVIDIA's library crashes on it (see
// shared facts: cudnnCreateLRNDescriptor, cudnnGetFilterSizeInBytes, ...): those
// are tested against odnn alone in tests/api.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudnn.h"

namespace oracle {

class Lib {
public:
    explicit Lib(const char* path);
    bool loaded() const { return handle_ != nullptr; }
    const std::string& path() const { return path_; }
    const std::string& error() const { return error_; }
    void* sym(const char* name) const;

private:
    void* handle_ = nullptr;
    std::string path_;
    std::string error_;
};

// The two libraries (loaded once per process).
const Lib& ours();
const Lib& nvidia();

struct Trace {
    std::vector<std::string> lines;
    void add(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
    // Records "label: STATUS_NAME" and returns the status.
    cudnnStatus_t status(const char* label, cudnnStatus_t s);
};

using CaseFn = void (*)(const Lib& lib, Trace& t);

// Runs `fn` on both libraries and expects identical traces (skips without NVIDIA's).
void expect_same(const char* case_name, CaseFn fn);

}  // namespace oracle

// Call `name` in `lib` through the prototype our own headers declare.
#define OCALL(lib, name, ...) (reinterpret_cast<decltype(&::name)>((lib).sym(#name)))(__VA_ARGS__)
// Call and record the status under the call's text.
#define OSTATUS(t, lib, name, ...) (t).status(#name "(" #__VA_ARGS__ ")", OCALL(lib, name, __VA_ARGS__))
