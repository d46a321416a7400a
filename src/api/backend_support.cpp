#include "api/backend_support.hpp"

#include <cstring>

#include "core/cuda_runtime.hpp"
#include "core/conv_problem.hpp"
#include "core/impl_registry.hpp"
#include "core/ops.hpp"
#include "core/norm_problem.hpp"
#include "core/pool_problem.hpp"
#include "core/dropout_problem.hpp"
#include "core/spatial_tf_problem.hpp"
#include "core/tensor_ops.hpp"
#include "core/activation_softmax.hpp"

namespace odnn::api {

namespace {

template <class Problem>
void from_registry(bool* cpu, bool* cuda) {
    auto& r = core::ImplRegistry<Problem>::get();
    *cpu = !r.list(core::BackendKind::cpu).empty();
    *cuda = core::cuda_compiled() && !r.list(core::BackendKind::cuda).empty();
}

struct OpEntry {
    const char* name;
    void (*support)(bool*, bool*);
};

// One line per API function that runs an operation through the registry.
const OpEntry kOps[] = {
    {"cudnnSetTensor", from_registry<core::SetTensorProblem>},
    {"cudnnScaleTensor", from_registry<core::ScaleTensorProblem>},
    {"cudnnTransformTensor", from_registry<core::TransformTensorProblem>},
    {"cudnnTransformTensorEx", from_registry<core::TransformTensorProblem>},
    {"cudnnTransformFilter", from_registry<core::TransformTensorProblem>},
    {"cudnnAddTensor", from_registry<core::AddTensorProblem>},
    {"cudnnOpTensor", from_registry<core::OpTensorProblem>},
    {"cudnnReduceTensor", from_registry<core::ReduceTensorProblem>},
    {"cudnnActivationForward", from_registry<core::ActivationFwdProblem>},
    {"cudnnActivationBackward", from_registry<core::ActivationBwdProblem>},
    {"cudnnSoftmaxForward", from_registry<core::SoftmaxFwdProblem>},
    {"cudnnSoftmaxBackward", from_registry<core::SoftmaxBwdProblem>},
    {"cudnnConvolutionForward", from_registry<core::ConvProblem>},
    {"cudnnConvolutionBiasActivationForward", from_registry<core::ConvProblem>},
    {"cudnnConvolutionBackwardData", from_registry<core::ConvProblem>},
    {"cudnnConvolutionBackwardFilter", from_registry<core::ConvProblem>},
    {"cudnnConvolutionBackwardBias", from_registry<core::ConvBiasGradProblem>},
    {"cudnnIm2Col", from_registry<core::Im2ColProblem>},
    {"cudnnFindConvolutionForwardAlgorithm", from_registry<core::ConvProblem>},
    {"cudnnFindConvolutionForwardAlgorithmEx", from_registry<core::ConvProblem>},
    {"cudnnFindConvolutionBackwardDataAlgorithm", from_registry<core::ConvProblem>},
    {"cudnnFindConvolutionBackwardDataAlgorithmEx", from_registry<core::ConvProblem>},
    {"cudnnFindConvolutionBackwardFilterAlgorithm", from_registry<core::ConvProblem>},
    {"cudnnFindConvolutionBackwardFilterAlgorithmEx", from_registry<core::ConvProblem>},
    {"cudnnGetConvolutionForwardAlgorithm_v7", from_registry<core::ConvProblem>},
    {"cudnnGetConvolutionBackwardDataAlgorithm_v7", from_registry<core::ConvProblem>},
    {"cudnnGetConvolutionBackwardFilterAlgorithm_v7", from_registry<core::ConvProblem>},
    {"cudnnGetConvolutionForwardWorkspaceSize", from_registry<core::ConvProblem>},
    {"cudnnGetConvolutionBackwardDataWorkspaceSize", from_registry<core::ConvProblem>},
    {"cudnnGetConvolutionBackwardFilterWorkspaceSize", from_registry<core::ConvProblem>},
    {"cudnnBatchNormalizationForwardInference", from_registry<core::BnFwdInferenceProblem>},
    {"cudnnBatchNormalizationForwardTraining", from_registry<core::BnFwdTrainingProblem>},
    {"cudnnBatchNormalizationForwardTrainingEx", from_registry<core::BnFwdTrainingProblem>},
    {"cudnnBatchNormalizationBackward", from_registry<core::BnBackwardProblem>},
    {"cudnnBatchNormalizationBackwardEx", from_registry<core::BnBackwardProblem>},
    {"cudnnNormalizationForwardInference", from_registry<core::BnFwdInferenceProblem>},
    {"cudnnNormalizationForwardTraining", from_registry<core::BnFwdTrainingProblem>},
    {"cudnnNormalizationBackward", from_registry<core::BnBackwardProblem>},
    {"cudnnPoolingForward", from_registry<core::PoolingFwdProblem>},
    {"cudnnPoolingBackward", from_registry<core::PoolingBwdProblem>},
    {"cudnnLRNCrossChannelForward", from_registry<core::LrnProblem>},
    {"cudnnLRNCrossChannelBackward", from_registry<core::LrnProblem>},
    {"cudnnDivisiveNormalizationForward", from_registry<core::DivNormProblem>},
    {"cudnnDivisiveNormalizationBackward", from_registry<core::DivNormProblem>},
    {"cudnnDropoutForward", from_registry<core::DropoutProblem>},
    {"cudnnDropoutBackward", from_registry<core::DropoutProblem>},
    {"cudnnSpatialTfGridGeneratorForward", from_registry<core::SpatialTfGridProblem>},
    {"cudnnSpatialTfGridGeneratorBackward", from_registry<core::SpatialTfGridProblem>},
    {"cudnnSpatialTfSamplerForward", from_registry<core::SpatialTfSamplerProblem>},
    {"cudnnSpatialTfSamplerBackward", from_registry<core::SpatialTfSamplerProblem>},
};

}  // namespace

void backend_support(const char* name, bool* cpu, bool* cuda) {
    for (const OpEntry& e : kOps)
        if (std::strcmp(e.name, name) == 0) return e.support(cpu, cuda);
    *cpu = true;
    *cuda = core::cuda_compiled();
}

}  // namespace odnn::api
