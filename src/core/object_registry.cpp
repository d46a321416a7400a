#include "core/object_registry.hpp"

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace odnn::core {

namespace {

struct Registry {
    std::shared_mutex mu;
    std::unordered_map<const void*, ObjKind> live;
};

Registry& registry() {
    static Registry* r = new Registry();  // outlives static destructors of client code
    return *r;
}

}  // namespace

const char* obj_kind_name(ObjKind kind) {
    switch (kind) {
        case ObjKind::handle: return "cudnnHandle_t";
        case ObjKind::tensor: return "cudnnTensorDescriptor_t";
        case ObjKind::filter: return "cudnnFilterDescriptor_t";
        case ObjKind::convolution: return "cudnnConvolutionDescriptor_t";
        case ObjKind::activation: return "cudnnActivationDescriptor_t";
        case ObjKind::pooling: return "cudnnPoolingDescriptor_t";
        case ObjKind::lrn: return "cudnnLRNDescriptor_t";
        case ObjKind::op_tensor: return "cudnnOpTensorDescriptor_t";
        case ObjKind::reduce_tensor: return "cudnnReduceTensorDescriptor_t";
        case ObjKind::tensor_transform: return "cudnnTensorTransformDescriptor_t";
        case ObjKind::dropout: return "cudnnDropoutDescriptor_t";
        case ObjKind::spatial_transformer: return "cudnnSpatialTransformerDescriptor_t";
        case ObjKind::ctc_loss: return "cudnnCTCLossDescriptor_t";
        case ObjKind::rnn: return "cudnnRNNDescriptor_t";
        case ObjKind::rnn_data: return "cudnnRNNDataDescriptor_t";
        case ObjKind::seq_data: return "cudnnSeqDataDescriptor_t";
        case ObjKind::attention: return "cudnnAttnDescriptor_t";
        case ObjKind::fused_ops_const_param_pack: return "cudnnFusedOpsConstParamPack_t";
        case ObjKind::fused_ops_variant_param_pack: return "cudnnFusedOpsVariantParamPack_t";
        case ObjKind::fused_ops_plan: return "cudnnFusedOpsPlan_t";
        case ObjKind::backend_descriptor: return "cudnnBackendDescriptor_t";
    }
    return "object";
}

void registry_add(const void* p, ObjKind kind) {
    Registry& r = registry();
    std::unique_lock<std::shared_mutex> lock(r.mu);
    r.live[p] = kind;
}

bool registry_remove(const void* p, ObjKind kind) {
    Registry& r = registry();
    std::unique_lock<std::shared_mutex> lock(r.mu);
    auto it = r.live.find(p);
    if (it == r.live.end() || it->second != kind) return false;
    r.live.erase(it);
    return true;
}

bool registry_contains(const void* p, ObjKind kind) {
    Registry& r = registry();
    std::shared_lock<std::shared_mutex> lock(r.mu);
    auto it = r.live.find(p);
    return it != r.live.end() && it->second == kind;
}

bool registry_kind_of(const void* p, ObjKind* kind) {
    Registry& r = registry();
    std::shared_lock<std::shared_mutex> lock(r.mu);
    auto it = r.live.find(p);
    if (it == r.live.end()) return false;
    *kind = it->second;
    return true;
}

}  // namespace odnn::core
