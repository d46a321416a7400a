// Helpers shared by the API tests.
#pragma once

#include <string>

#include "cudnn.h"

namespace odnn_test {

// The last-error message of this thread (cudnnGetLastErrorString; reading clears it).
std::string last_error();

// Path of the libcudnn.so.9 this process actually mapped (to prove it is odnn's).
std::string loaded_cudnn_path();

}  // namespace odnn_test

// Expect a status and, on failure, show the message the library left.
#define EXPECT_STATUS(expected, call)                                                        \
    do {                                                                                     \
        const cudnnStatus_t odnn_got_ = (call);                                              \
        EXPECT_EQ(cudnnGetErrorString(expected), std::string(cudnnGetErrorString(odnn_got_))) \
            << #call << " -> " << odnn_test::last_error();                                   \
    } while (0)

#define ASSERT_OK(call)                                                                          \
    do {                                                                                         \
        const cudnnStatus_t odnn_got_ = (call);                                                  \
        ASSERT_EQ(odnn_got_, CUDNN_STATUS_SUCCESS)                                               \
            << #call << " -> " << cudnnGetErrorString(odnn_got_) << ": " << odnn_test::last_error(); \
    } while (0)
