// cudnn_ops entry points for tensor and filter descriptors, and cudnnSetTensor /
// cudnnScaleTensor.
#include "api/api_common.hpp"
#include "core/handle.hpp"
#include "core/ops.hpp"
#include "core/tensor_desc.hpp"

using odnn::api::guard;
using odnn::core::ObjKind;
using odnn::core::Status;

namespace {

Status require_set(const odnn::core::TensorDesc& d, const char* arg) {
    ODNN_REQUIRE_PARAM(d.is_set(), "%s has not been set (call cudnnSetTensor*Descriptor first)", arg);
    return Status::ok();
}

Status require_set(const odnn::core::FilterDesc& d, const char* arg) {
    ODNN_REQUIRE_PARAM(d.is_set(), "%s has not been set (call cudnnSetFilter*Descriptor first)", arg);
    return Status::ok();
}

}  // namespace

extern "C" {

cudnnStatus_t CUDNNWINAPI cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* tensorDesc) {
    return guard(__func__, [&] { return odnn::api::create_object(tensorDesc, ObjKind::tensor, "tensorDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc) {
    return guard(__func__, [&] { return odnn::api::destroy_object(tensorDesc, ObjKind::tensor, "tensorDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
                                                     cudnnDataType_t dataType, int n, int c, int h, int w) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, tensorDesc, tensor);
        return odnn::core::set_tensor_4d(*d, format, dataType, n, c, h, w);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType,
                                                       int n, int c, int h, int w, int nStride, int cStride,
                                                       int hStride, int wStride) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, tensorDesc, tensor);
        return odnn::core::set_tensor_4d_ex(*d, dataType, n, c, h, w, nStride, cStride, hStride, wStride);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t tensorDesc,
                                                     cudnnDataType_t* dataType, int* n, int* c, int* h, int* w,
                                                     int* nStride, int* cStride, int* hStride, int* wStride) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, tensorDesc, tensor);
        ODNN_REQUIRE_PARAM(dataType && n && c && h && w && nStride && cStride && hStride && wStride,
                           "an output pointer is NULL");
        // Like cuDNN: a descriptor of another rank gives its first four dims (zeros
        // past its rank); an unset one reads as all zeros.
        *dataType = d->dtype;
        int* dims[4] = {n, c, h, w};
        int* strides[4] = {nStride, cStride, hStride, wStride};
        for (int i = 0; i < 4; ++i) {
            *dims[i] = i < d->nb_dims ? static_cast<int>(d->dims[i]) : 0;
            *strides[i] = i < d->nb_dims ? static_cast<int>(d->strides[i]) : 0;
        }
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType,
                                                     int nbDims, const int dimA[], const int strideA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, tensorDesc, tensor);
        return odnn::core::set_tensor_nd(*d, dataType, nbDims, dimA, strideA);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
                                                       cudnnDataType_t dataType, int nbDims, const int dimA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, tensorDesc, tensor);
        return odnn::core::set_tensor_nd_ex(*d, format, dataType, nbDims, dimA);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensorDesc, int nbDimsRequested,
                                                     cudnnDataType_t* dataType, int* nbDims, int dimA[],
                                                     int strideA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, tensorDesc, tensor);
        ODNN_REQUIRE_PARAM(dataType && nbDims, "dataType and nbDims must not be NULL");
        ODNN_REQUIRE_PARAM(nbDimsRequested <= 0 || (dimA && strideA),
                           "dimA and strideA must not be NULL when nbDimsRequested > 0");
        *dataType = d->dtype;
        *nbDims = d->nb_dims;
        const int n = nbDimsRequested < d->nb_dims ? nbDimsRequested : d->nb_dims;
        for (int i = 0; i < n; ++i) {
            dimA[i] = static_cast<int>(d->dims[i]);
            strideA[i] = static_cast<int>(d->strides[i]);
        }
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetTensorSizeInBytes(const cudnnTensorDescriptor_t tensorDesc, size_t* size) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, tensorDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(size);
        *size = d->size_in_bytes();  // 0 for a descriptor never set, as in cuDNN
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* filterDesc) {
    return guard(__func__, [&] { return odnn::api::create_object(filterDesc, ObjKind::filter, "filterDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc) {
    return guard(__func__, [&] { return odnn::api::destroy_object(filterDesc, ObjKind::filter, "filterDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                                                     cudnnTensorFormat_t format, int k, int c, int h, int w) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(f, filterDesc, filter);
        const int dims[4] = {k, c, h, w};
        return odnn::core::set_filter_nd(*f, dataType, format, 4, dims);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetFilter4dDescriptor(const cudnnFilterDescriptor_t filterDesc,
                                                     cudnnDataType_t* dataType, cudnnTensorFormat_t* format, int* k,
                                                     int* c, int* h, int* w) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(f, filterDesc, filter);
        ODNN_RETURN_IF_ERROR(require_set(*f, "filterDesc"));
        ODNN_REQUIRE_PARAM(dataType && format && k && c && h && w, "an output pointer is NULL");
        ODNN_REQUIRE_PARAM(f->nb_dims == 4, "filterDesc has %d dimensions; use cudnnGetFilterNdDescriptor",
                           f->nb_dims);
        *dataType = f->dtype;
        *format = f->format;
        *k = static_cast<int>(f->dims[0]);
        *c = static_cast<int>(f->dims[1]);
        *h = static_cast<int>(f->dims[2]);
        *w = static_cast<int>(f->dims[3]);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                                                     cudnnTensorFormat_t format, int nbDims,
                                                     const int filterDimA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(f, filterDesc, filter);
        return odnn::core::set_filter_nd(*f, dataType, format, nbDims, filterDimA);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t filterDesc, int nbDimsRequested,
                                                     cudnnDataType_t* dataType, cudnnTensorFormat_t* format,
                                                     int* nbDims, int filterDimA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(f, filterDesc, filter);
        ODNN_RETURN_IF_ERROR(require_set(*f, "filterDesc"));
        ODNN_REQUIRE_PARAM(dataType && format && nbDims, "dataType, format and nbDims must not be NULL");
        ODNN_REQUIRE_PARAM(nbDimsRequested <= 0 || filterDimA, "filterDimA is NULL");
        *dataType = f->dtype;
        *format = f->format;
        *nbDims = f->nb_dims;
        const int n = nbDimsRequested < f->nb_dims ? nbDimsRequested : f->nb_dims;
        for (int i = 0; i < n; ++i) filterDimA[i] = static_cast<int>(f->dims[i]);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetFilterSizeInBytes(const cudnnFilterDescriptor_t filterDesc, size_t* size) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(f, filterDesc, filter);
        ODNN_REQUIRE_NOT_NULL(size);
        ODNN_RETURN_IF_ERROR(require_set(*f, "filterDesc"));
        *size = f->size_in_bytes();
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void* y,
                                         const void* valuePtr) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(d, yDesc, tensor);
        ODNN_RETURN_IF_ERROR(require_set(*d, "yDesc"));
        ODNN_REQUIRE_NOT_NULL(y);
        ODNN_REQUIRE_NOT_NULL(valuePtr);
        return odnn::core::set_tensor(*h, *d, y, valuePtr);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnScaleTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void* y,
                                           const void* alpha) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(d, yDesc, tensor);
        ODNN_RETURN_IF_ERROR(require_set(*d, "yDesc"));
        ODNN_REQUIRE_NOT_NULL(y);
        ODNN_REQUIRE_NOT_NULL(alpha);
        return odnn::core::scale_tensor(*h, *d, y, alpha);
    }, handle);
}

}  // extern "C"
