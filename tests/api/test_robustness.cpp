// Every exported function, called with all-zero arguments (NULL pointers, zero sizes,
// enum value 0) and with pointers to garbage, must return a status and never crash.
//
// How one call reaches all 220 signatures: on x86-64 System V, integer/pointer and
// floating-point arguments travel in separate registers, and the caller owns the
// stack. Calling through a pointer typed with 24 integer and 8 double parameters
// therefore hands any cuDNN function (at most ~25 scalar parameters) the values we
// chose for each of its own parameters, whatever their order.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/test_util.hpp"
#include "odnn/odnn.h"

#if defined(__x86_64__) && defined(__linux__)

namespace {

using U = uintptr_t;
using AnyFn = long (*)(U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, double, double,
                       double, double, double, double, double, double);

// Functions whose contract makes such a call meaningless or unsafe by design:
// they take no arguments or only report (checked elsewhere).
bool skip(const std::string& name) {
    return name == "cudnnGetVersion" || name == "cudnnGetMaxDeviceVersion" || name == "cudnnGetCudartVersion" ||
           name == "cudnnGetErrorString";
}

std::vector<std::pair<std::string, AnyFn>> all_functions() {
    std::vector<std::pair<std::string, AnyFn>> out;
    void* self = dlopen(odnn_test::loaded_cudnn_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(self, nullptr);
    for (int i = 0; i < odnnGetApiCount(); ++i) {
        odnnApiEntry e;
        EXPECT_EQ(odnnGetApiEntry(i, &e), CUDNN_STATUS_SUCCESS);
        if (skip(e.name)) continue;
        out.emplace_back(e.name, reinterpret_cast<AnyFn>(dlsym(self, e.name)));
    }
    dlclose(self);
    return out;
}

TEST(Robustness, EveryFunctionWithNullArguments) {
    int calls = 0;
    for (const auto& [name, fn] : all_functions()) {
        if (name == "cudnnGetLastErrorString") continue;  // void; NULL handled (tested in test_handle)
        const long s = fn(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          0);
        const int status = static_cast<int>(s);
        // All-NULL calls are errors, except the few functions for which "nothing" is valid input.
        const bool may_succeed = name.rfind("cudnnDestroy", 0) == 0 || name.rfind("cudnnBackendDestroy", 0) == 0 ||
                                 name.find("VersionCheck") != std::string::npos || name == "cudnnSetCallback";
        if (!may_succeed) EXPECT_NE(status, CUDNN_STATUS_SUCCESS) << name << " accepted all-NULL arguments";
        EXPECT_NE(std::string(cudnnGetErrorString(static_cast<cudnnStatus_t>(status))), "CUDNN_UNKNOWN_STATUS")
            << name << " returned " << status;
        ++calls;
    }
    EXPECT_EQ(calls, 215);
    cudnnSetCallback(0, nullptr, nullptr);
    odnn_test::last_error();
}

TEST(Robustness, EveryFunctionWithGarbagePointers) {
    // Each argument points into its own page-sized block of 0xA5 bytes: garbage
    // "descriptors" must be recognised as such, and whatever a function writes
    // through its output pointers must stay inside the block.
    constexpr size_t kBlock = 4096;
    std::vector<unsigned char> arena(32 * kBlock);
    for (const auto& [name, fn] : all_functions()) {
        if (name == "cudnnSetCallback" || name == "cudnnGetLastErrorString") continue;  // would install garbage
        std::memset(arena.data(), 0xA5, arena.size());
        U a[24];
        for (int i = 0; i < 24; ++i) a[i] = reinterpret_cast<U>(arena.data() + i * kBlock);
        const long s = fn(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
                          a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], 1.0, 1.0, 1.0, 1.0,
                          1.0, 1.0, 1.0, 1.0);
        const int status = static_cast<int>(s);
        const bool creates = name.rfind("cudnnCreate", 0) == 0 || name.rfind("cudnnBackendCreate", 0) == 0 ||
                             name == "cudnnGetProperty" || name.find("VersionCheck") != std::string::npos ||
                             name == "cudnnGetCallback";
        if (!creates) EXPECT_NE(status, CUDNN_STATUS_SUCCESS) << name << " accepted garbage pointers";
        EXPECT_NE(std::string(cudnnGetErrorString(static_cast<cudnnStatus_t>(status))), "CUDNN_UNKNOWN_STATUS")
            << name << " returned " << status;
        if (creates && status == CUDNN_STATUS_SUCCESS && name.rfind("cudnnCreate", 0) == 0) {
            // It created an object and stored the pointer in the first block: destroy it
            // through the matching Destroy function so the test leaks nothing.
            const std::string destroy = "cudnnDestroy" + name.substr(std::strlen("cudnnCreate"));
            void* self = dlopen(odnn_test::loaded_cudnn_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
            void* d = dlsym(self, destroy.c_str());
            if (d) reinterpret_cast<int (*)(void*)>(d)(*reinterpret_cast<void**>(a[0]));
            dlclose(self);
        }
    }
    odnn_test::last_error();
}

}  // namespace

#endif
