// Every opaque object handed to the caller (handle, descriptors) is registered here
// while it lives. An API call checks its arguments against the registry before it
// dereferences them, so a garbage pointer, a descriptor of the wrong kind or one
// already destroyed gets BAD_PARAM instead of a crash.
#pragma once

#include <cstdint>

namespace odnn::core {

enum class ObjKind : uint8_t {
    handle,
    tensor,
    filter,
    convolution,
    activation,
    pooling,
    lrn,
    op_tensor,
    reduce_tensor,
    tensor_transform,
    dropout,
    spatial_transformer,
    ctc_loss,
    rnn,
    rnn_data,
    seq_data,
    attention,
    fused_ops_const_param_pack,
    fused_ops_variant_param_pack,
    fused_ops_plan,
    backend_descriptor,
};

const char* obj_kind_name(ObjKind kind);

void registry_add(const void* p, ObjKind kind);
// Returns false when p was not registered as `kind`.
bool registry_remove(const void* p, ObjKind kind);
bool registry_contains(const void* p, ObjKind kind);
// The kind a live pointer has, for messages; returns false when p is not live.
bool registry_kind_of(const void* p, ObjKind* kind);

}  // namespace odnn::core
