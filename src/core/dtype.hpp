// Data-type facts (sizes, names) and the scalar conversions every backend shares.
#pragma once

#include <cstdint>

#include "cudnn_graph.h"

namespace odnn::core {

// Largest enumerator of cudnnDataType_t that the API defines.
constexpr int kMaxDataType = 19;

bool dtype_is_known(cudnnDataType_t t);
const char* dtype_name(cudnnDataType_t t);
// Storage bits of one element (a vector type counts its whole vector: INT8x4 = 32).
int dtype_bits(cudnnDataType_t t);
// Elements packed in one vector for the *x4 / *x32 types, 1 otherwise.
int dtype_vector_count(cudnnDataType_t t);
bool dtype_is_float(cudnnDataType_t t);

}  // namespace odnn::core
