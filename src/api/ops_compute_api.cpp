// cudnn_ops entry points that compute: transform (tensor, Ex, filter), add, op-tensor,
// reduce (with its size queries), activation and softmax, forward and backward.
// Arguments are looked up and NULL-checked here; the rules live in core/tensor_ops and
// core/activation_softmax.
#include "api/api_common.hpp"
#include "core/activation_softmax.hpp"
#include "core/handle.hpp"
#include "core/ops_desc.hpp"
#include "core/tensor_desc.hpp"
#include "core/tensor_ops.hpp"

using odnn::api::guard;
using odnn::core::Status;

extern "C" {

cudnnStatus_t CUDNNWINAPI cudnnTransformTensor(cudnnHandle_t handle, const void* alpha,
                                               const cudnnTensorDescriptor_t xDesc, const void* x, const void* beta,
                                               const cudnnTensorDescriptor_t yDesc, void* y) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(xd, xDesc, tensor);
        ODNN_LOOKUP(yd, yDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(alpha);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(x);
        ODNN_REQUIRE_NOT_NULL(y);
        return odnn::core::transform_tensor(*h, alpha, *xd, x, beta, *yd, y);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnTransformTensorEx(cudnnHandle_t handle, const cudnnTensorTransformDescriptor_t transDesc,
                                                 const void* alpha, const cudnnTensorDescriptor_t srcDesc,
                                                 const void* srcData, const void* beta,
                                                 const cudnnTensorDescriptor_t destDesc, void* destData) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(t, transDesc, tensor_transform);
        ODNN_LOOKUP(xd, srcDesc, tensor);
        ODNN_LOOKUP(yd, destDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(alpha);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(srcData);
        ODNN_REQUIRE_NOT_NULL(destData);
        return odnn::core::transform_tensor_ex(*h, *t, alpha, *xd, srcData, beta, *yd, destData);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnTransformFilter(cudnnHandle_t handle, const cudnnTensorTransformDescriptor_t transDesc,
                                               const void* alpha, const cudnnFilterDescriptor_t srcDesc,
                                               const void* srcData, const void* beta,
                                               const cudnnFilterDescriptor_t destDesc, void* destData) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(t, transDesc, tensor_transform);
        ODNN_LOOKUP(xd, srcDesc, filter);
        ODNN_LOOKUP(yd, destDesc, filter);
        ODNN_REQUIRE_NOT_NULL(alpha);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(srcData);
        ODNN_REQUIRE_NOT_NULL(destData);
        return odnn::core::transform_filter(*h, *t, alpha, *xd, srcData, beta, *yd, destData);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnInitTransformDest(const cudnnTensorTransformDescriptor_t transformDesc,
                                                 const cudnnTensorDescriptor_t srcDesc, cudnnTensorDescriptor_t destDesc,
                                                 size_t* destSizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(t, transformDesc, tensor_transform);
        ODNN_LOOKUP(xd, srcDesc, tensor);
        ODNN_LOOKUP(yd, destDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(destSizeInBytes);
        return odnn::core::init_transform_dest(*t, *xd, yd, destSizeInBytes);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnAddTensor(cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t aDesc,
                                         const void* A, const void* beta, const cudnnTensorDescriptor_t cDesc,
                                         void* C) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(ad, aDesc, tensor);
        ODNN_LOOKUP(cd, cDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(alpha);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(A);
        ODNN_REQUIRE_NOT_NULL(C);
        return odnn::core::add_tensor(*h, alpha, *ad, A, beta, *cd, C);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnOpTensor(cudnnHandle_t handle, const cudnnOpTensorDescriptor_t opTensorDesc,
                                        const void* alpha1, const cudnnTensorDescriptor_t aDesc, const void* A,
                                        const void* alpha2, const cudnnTensorDescriptor_t bDesc, const void* B,
                                        const void* beta, const cudnnTensorDescriptor_t cDesc, void* C) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(od, opTensorDesc, op_tensor);
        ODNN_LOOKUP(ad, aDesc, tensor);
        ODNN_LOOKUP(cd, cDesc, tensor);
        // SQRT and NOT read A only: B, bDesc and alpha2 may then be NULL.
        const odnn::core::TensorDesc* bd = nullptr;
        if (bDesc != nullptr) {
            ODNN_LOOKUP(b, bDesc, tensor);
            bd = b;
        }
        ODNN_REQUIRE_NOT_NULL(alpha1);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(A);
        ODNN_REQUIRE_NOT_NULL(C);
        return odnn::core::op_tensor(*h, *od, alpha1, *ad, A, alpha2, bd, B, beta, *cd, C);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetReductionIndicesSize(cudnnHandle_t handle,
                                                       const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                       const cudnnTensorDescriptor_t aDesc,
                                                       const cudnnTensorDescriptor_t cDesc, size_t* sizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        (void)h;
        ODNN_LOOKUP(rd, reduceTensorDesc, reduce_tensor);
        ODNN_LOOKUP(ad, aDesc, tensor);
        ODNN_LOOKUP(cd, cDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        return odnn::core::reduction_indices_size(*rd, *ad, *cd, sizeInBytes);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetReductionWorkspaceSize(cudnnHandle_t handle,
                                                         const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                         const cudnnTensorDescriptor_t aDesc,
                                                         const cudnnTensorDescriptor_t cDesc, size_t* sizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        (void)h;
        ODNN_LOOKUP(rd, reduceTensorDesc, reduce_tensor);
        ODNN_LOOKUP(ad, aDesc, tensor);
        ODNN_LOOKUP(cd, cDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        return odnn::core::reduction_workspace_size(*rd, *ad, *cd, sizeInBytes);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnReduceTensor(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                            void* indices, size_t indicesSizeInBytes, void* workspace,
                                            size_t workspaceSizeInBytes, const void* alpha,
                                            const cudnnTensorDescriptor_t aDesc, const void* A, const void* beta,
                                            const cudnnTensorDescriptor_t cDesc, void* C) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(rd, reduceTensorDesc, reduce_tensor);
        ODNN_LOOKUP(ad, aDesc, tensor);
        ODNN_LOOKUP(cd, cDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(alpha);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(A);
        ODNN_REQUIRE_NOT_NULL(C);
        return odnn::core::reduce_tensor(*h, *rd, indices, indicesSizeInBytes, workspace, workspaceSizeInBytes, alpha,
                                         *ad, A, beta, *cd, C);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc,
                                                 const void* alpha, const cudnnTensorDescriptor_t xDesc, const void* x,
                                                 const void* beta, const cudnnTensorDescriptor_t yDesc, void* y) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(act, activationDesc, activation);
        ODNN_LOOKUP(xd, xDesc, tensor);
        ODNN_LOOKUP(yd, yDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(alpha);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(x);
        ODNN_REQUIRE_NOT_NULL(y);
        return odnn::core::activation_forward(*h, *act, alpha, *xd, x, beta, *yd, y);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnActivationBackward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc,
                                                  const void* alpha, const cudnnTensorDescriptor_t yDesc,
                                                  const void* y, const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                                  const cudnnTensorDescriptor_t xDesc, const void* x, const void* beta,
                                                  const cudnnTensorDescriptor_t dxDesc, void* dx) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(act, activationDesc, activation);
        ODNN_LOOKUP(yd, yDesc, tensor);
        ODNN_LOOKUP(dyd, dyDesc, tensor);
        ODNN_LOOKUP(xd, xDesc, tensor);
        ODNN_LOOKUP(dxd, dxDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(alpha);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(y);
        ODNN_REQUIRE_NOT_NULL(dy);
        ODNN_REQUIRE_NOT_NULL(x);
        ODNN_REQUIRE_NOT_NULL(dx);
        return odnn::core::activation_backward(*h, *act, alpha, *yd, y, *dyd, dy, *xd, x, beta, *dxd, dx);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                              cudnnSoftmaxMode_t mode, const void* alpha,
                                              const cudnnTensorDescriptor_t xDesc, const void* x, const void* beta,
                                              const cudnnTensorDescriptor_t yDesc, void* y) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(xd, xDesc, tensor);
        ODNN_LOOKUP(yd, yDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(alpha);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(x);
        ODNN_REQUIRE_NOT_NULL(y);
        return odnn::core::softmax_forward(*h, algo, mode, alpha, *xd, x, beta, *yd, y);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                               cudnnSoftmaxMode_t mode, const void* alpha,
                                               const cudnnTensorDescriptor_t yDesc, const void* y,
                                               const cudnnTensorDescriptor_t dyDesc, const void* dy, const void* beta,
                                               const cudnnTensorDescriptor_t dxDesc, void* dx) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(yd, yDesc, tensor);
        ODNN_LOOKUP(dyd, dyDesc, tensor);
        ODNN_LOOKUP(dxd, dxDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(alpha);
        ODNN_REQUIRE_NOT_NULL(beta);
        ODNN_REQUIRE_NOT_NULL(y);
        ODNN_REQUIRE_NOT_NULL(dy);
        ODNN_REQUIRE_NOT_NULL(dx);
        return odnn::core::softmax_backward(*h, algo, mode, alpha, *yd, y, *dyd, dy, beta, *dxd, dx);
    }, handle);
}

}  // extern "C"
