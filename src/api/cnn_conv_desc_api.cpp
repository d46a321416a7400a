// cudnn_cnn entry points for the convolution descriptor and output-shape queries.
#include "api/api_common.hpp"
#include "core/conv_desc.hpp"

using odnn::api::guard;
using odnn::core::ObjKind;
using odnn::core::Status;

extern "C" {

cudnnStatus_t CUDNNWINAPI cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* convDesc) {
    return guard(__func__, [&] { return odnn::api::create_object(convDesc, ObjKind::convolution, "convDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc) {
    return guard(__func__, [&] { return odnn::api::destroy_object(convDesc, ObjKind::convolution, "convDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t mathType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        return odnn::core::set_conv_math_type(*c, mathType);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
                                                      cudnnMathType_t* mathType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        ODNN_REQUIRE_NOT_NULL(mathType);
        *mathType = c->math_type;
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        return odnn::core::set_conv_group_count(*c, groupCount);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int* groupCount) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        ODNN_REQUIRE_NOT_NULL(groupCount);
        *groupCount = c->group_count;
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionReorderType(cudnnConvolutionDescriptor_t convDesc,
                                                         cudnnReorderType_t reorderType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        return odnn::core::set_conv_reorder_type(*c, reorderType);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionReorderType(cudnnConvolutionDescriptor_t convDesc,
                                                         cudnnReorderType_t* reorderType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        ODNN_REQUIRE_NOT_NULL(reorderType);
        *reorderType = c->reorder_type;
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w,
                                                          int u, int v, int dilation_h, int dilation_w,
                                                          cudnnConvolutionMode_t mode, cudnnDataType_t computeType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        const int pads[2] = {pad_h, pad_w}, strides[2] = {u, v}, dil[2] = {dilation_h, dilation_w};
        return odnn::core::set_conv_nd(*c, 2, pads, strides, dil, mode, computeType);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolution2dDescriptor(const cudnnConvolutionDescriptor_t convDesc, int* pad_h,
                                                          int* pad_w, int* u, int* v, int* dilation_h,
                                                          int* dilation_w, cudnnConvolutionMode_t* mode,
                                                          cudnnDataType_t* computeType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        ODNN_REQUIRE_PARAM(pad_h && pad_w && u && v && dilation_h && dilation_w && mode && computeType,
                           "an output pointer is NULL");
        // Any rank reads back its first two spatial dims (zeros for a 1-D one), as in cuDNN.
        *pad_h = c->pads[0];
        *pad_w = c->pads[1];
        *u = c->strides[0];
        *v = c->strides[1];
        *dilation_h = c->dilations[0];
        *dilation_w = c->dilations[1];
        *mode = c->mode;
        *computeType = c->compute_type;
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc, int arrayLength,
                                                          const int padA[], const int filterStrideA[],
                                                          const int dilationA[], cudnnConvolutionMode_t mode,
                                                          cudnnDataType_t computeType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        return odnn::core::set_conv_nd(*c, arrayLength, padA, filterStrideA, dilationA, mode, computeType);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t convDesc,
                                                          int arrayLengthRequested, int* arrayLength, int padA[],
                                                          int strideA[], int dilationA[],
                                                          cudnnConvolutionMode_t* mode, cudnnDataType_t* computeType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(c, convDesc, convolution);
        ODNN_REQUIRE_PARAM(arrayLength && mode && computeType, "arrayLength, mode and computeType must not be NULL");
        ODNN_REQUIRE_PARAM(arrayLengthRequested >= 0, "arrayLengthRequested = %d is negative", arrayLengthRequested);
        ODNN_REQUIRE_SUPPORTED(arrayLengthRequested <= odnn::core::kMaxConvSpatialDims,
                               "arrayLengthRequested = %d exceeds %d spatial dimensions", arrayLengthRequested,
                               odnn::core::kMaxConvSpatialDims);
        ODNN_REQUIRE_PARAM(arrayLengthRequested == 0 || (padA && strideA && dilationA),
                           "padA, strideA and dilationA must not be NULL when arrayLengthRequested > 0");
        *arrayLength = c->nb_spatial;
        // Entries past the descriptor's rank read as 0, as in cuDNN.
        for (int i = 0; i < arrayLengthRequested; ++i) {
            padA[i] = i < c->nb_spatial ? c->pads[i] : 0;
            strideA[i] = i < c->nb_spatial ? c->strides[i] : 0;
            dilationA[i] = i < c->nb_spatial ? c->dilations[i] : 0;
        }
        *mode = c->mode;
        *computeType = c->compute_type;
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                                const cudnnTensorDescriptor_t inputTensorDesc,
                                                                const cudnnFilterDescriptor_t filterDesc, int* n,
                                                                int* c, int* h, int* w) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(cd, convDesc, convolution);
        ODNN_LOOKUP(x, inputTensorDesc, tensor);
        ODNN_LOOKUP(f, filterDesc, filter);
        ODNN_REQUIRE_PARAM(n && c && h && w, "n, c, h and w must not be NULL");
        ODNN_REQUIRE_PARAM(x->nb_dims == 4, "inputTensorDesc has %d dims; the 2d query needs 4", x->nb_dims);
        int out[4];
        ODNN_RETURN_IF_ERROR(odnn::core::conv_forward_output_dims(*cd, *x, *f, 4, out));
        *n = out[0];
        *c = out[1];
        *h = out[2];
        *w = out[3];
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                                const cudnnTensorDescriptor_t inputTensorDesc,
                                                                const cudnnFilterDescriptor_t filterDesc, int nbDims,
                                                                int tensorOuputDimA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(cd, convDesc, convolution);
        ODNN_LOOKUP(x, inputTensorDesc, tensor);
        ODNN_LOOKUP(f, filterDesc, filter);
        ODNN_REQUIRE_NOT_NULL(tensorOuputDimA);
        return odnn::core::conv_forward_output_dims(*cd, *x, *f, nbDims, tensorOuputDimA);
    });
}

}  // extern "C"
