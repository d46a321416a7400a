#include "core/tensor_desc.hpp"

#include <limits>

#include "core/dtype.hpp"

namespace odnn::core {

namespace {

bool format_is_known(cudnnTensorFormat_t f) {
    return f == CUDNN_TENSOR_NCHW || f == CUDNN_TENSOR_NHWC || f == CUDNN_TENSOR_NCHW_VECT_C;
}

// Legacy tensor descriptors take FLOAT .. BFLOAT16 (0..9); newer types (INT64, FP8,
// ...) exist only in the backend API, and cuDNN answers BAD_PARAM for them here.
Status check_dtype(cudnnDataType_t dtype) {
    ODNN_REQUIRE_PARAM(dtype_is_known(dtype), "dataType %d is not a cudnnDataType_t value", static_cast<int>(dtype));
    ODNN_REQUIRE_PARAM(static_cast<int>(dtype) <= CUDNN_DATA_BFLOAT16,
                       "dataType %s is not supported by legacy tensor descriptors (backend API only)",
                       dtype_name(dtype));
    return Status::ok();
}

// Product of dims with overflow detection.
bool checked_product(int nb, const int64_t* dims, int64_t* out) {
    int64_t p = 1;
    for (int i = 0; i < nb; ++i) {
        if (dims[i] != 0 && p > std::numeric_limits<int64_t>::max() / dims[i]) return false;
        p *= dims[i];
    }
    *out = p;
    return true;
}

Status check_dims(int nb_dims, const int64_t* dims) {
    for (int i = 0; i < nb_dims; ++i)
        ODNN_REQUIRE_PARAM(dims[i] > 0, "dimA[%d] = %lld: every dimension must be positive", i,
                           static_cast<long long>(dims[i]));
    int64_t n = 0;
    ODNN_REQUIRE_SUPPORTED(checked_product(nb_dims, dims, &n) && n <= kMaxTensorElements,
                           "the tensor has more than 2^31-1 elements, the limit of a legacy tensor descriptor");
    return Status::ok();
}

// NCHW_VECT_C needs a vector type (INT8x4, UINT8x4: C % 4 == 0; INT8x32: C % 32 == 0).
// Vector types in other layouts are accepted: each element is then a whole vector.
Status check_vect(cudnnTensorFormat_t format, cudnnDataType_t dtype, int64_t c, int* vect_count) {
    const int vc = dtype_vector_count(dtype);
    *vect_count = 1;
    if (format != CUDNN_TENSOR_NCHW_VECT_C) return Status::ok();
    ODNN_REQUIRE_PARAM(vc > 1, "format CUDNN_TENSOR_NCHW_VECT_C needs data type INT8x4, UINT8x4 or INT8x32, got %s",
                       dtype_name(dtype));
    ODNN_REQUIRE_PARAM(c % vc == 0, "format CUDNN_TENSOR_NCHW_VECT_C with %s needs C (%lld) divisible by %d",
                       dtype_name(dtype), static_cast<long long>(c), vc);
    *vect_count = vc;
    return Status::ok();
}

}  // namespace

int64_t TensorDesc::num_elements() const {
    int64_t n = 1;
    for (int i = 0; i < nb_dims; ++i) n *= dims[i];
    return nb_dims ? n : 0;
}

int64_t TensorDesc::span_elements() const {
    if (!nb_dims) return 0;
    int64_t last = 0;
    for (int i = 0; i < nb_dims; ++i) {
        const int64_t extent = (i == 1 && vect_count > 1) ? dims[i] / vect_count : dims[i];
        last += (extent - 1) * strides[i];
    }
    return last + 1;
}

// Span in storage elements (vectors for vector types) times the storage size.
size_t TensorDesc::size_in_bytes() const {
    return static_cast<size_t>((span_elements() * dtype_bits(dtype) + 7) / 8);
}

int64_t ScalarView::num_elements() const {
    int64_t n = 1;
    for (int i = 0; i < nb_dims; ++i) n *= dims[i];
    return n;
}

ScalarView scalar_view(const TensorDesc& d) {
    ScalarView v;
    const int vc = dtype_vector_count(d.dtype);
    v.dtype = vc == 1 ? d.dtype : (d.dtype == CUDNN_DATA_UINT8x4 ? CUDNN_DATA_UINT8 : CUDNN_DATA_INT8);
    v.nb_dims = d.nb_dims;
    for (int i = 0; i < d.nb_dims; ++i) {
        v.dims[i] = d.dims[i];
        v.strides[i] = d.strides[i] * vc;
    }
    if (vc > 1) {
        if (d.vect_count > 1) v.dims[1] = d.dims[1] / vc;
        v.dims[d.nb_dims] = vc;
        v.strides[d.nb_dims] = 1;
        v.nb_dims = d.nb_dims + 1;
    }
    return v;
}

void packed_strides(cudnnTensorFormat_t format, int nb_dims, const int64_t* dims, int64_t* strides) {
    if (format == CUDNN_TENSOR_NHWC && nb_dims >= 3) {
        // Order from innermost: C, then the last spatial dim ... first spatial, then N.
        int64_t s = 1;
        strides[1] = s;
        s *= dims[1];
        for (int i = nb_dims - 1; i >= 2; --i) {
            strides[i] = s;
            s *= dims[i];
        }
        strides[0] = s;
        return;
    }
    int64_t s = 1;
    for (int i = nb_dims - 1; i >= 0; --i) {
        strides[i] = s;
        s *= dims[i];
    }
}

Status set_tensor_4d(TensorDesc& d, cudnnTensorFormat_t format, cudnnDataType_t dtype, int n, int c, int h, int w) {
    ODNN_REQUIRE_PARAM(format_is_known(format), "format %d is not a cudnnTensorFormat_t value",
                       static_cast<int>(format));
    ODNN_RETURN_IF_ERROR(check_dtype(dtype));
    const int64_t dims[4] = {n, c, h, w};
    ODNN_REQUIRE_PARAM(n > 0 && c > 0 && h > 0 && w > 0, "n=%d c=%d h=%d w=%d: every dimension must be positive", n,
                       c, h, w);
    int vect = 1;
    ODNN_RETURN_IF_ERROR(check_vect(format, dtype, c, &vect));
    const int64_t storage_dims[4] = {n, c / vect, h, w};  // the limit counts vectors
    ODNN_RETURN_IF_ERROR(check_dims(4, storage_dims));
    TensorDesc t;
    t.dtype = dtype;
    t.nb_dims = 4;
    t.format = format;
    t.vect_count = vect;
    for (int i = 0; i < 4; ++i) t.dims[i] = dims[i];
    if (format == CUDNN_TENSOR_NCHW_VECT_C) {
        // Strides count vectors: NCHW over (n, c / vect, h, w).
        const int64_t vdims[4] = {n, c / vect, h, w};
        packed_strides(CUDNN_TENSOR_NCHW, 4, vdims, t.strides);
    } else {
        packed_strides(format, 4, t.dims, t.strides);
    }
    d = t;
    return Status::ok();
}

Status set_tensor_4d_ex(TensorDesc& d, cudnnDataType_t dtype, int n, int c, int h, int w, int ns, int cs, int hs,
                        int ws) {
    const int dims[4] = {n, c, h, w};
    const int strides[4] = {ns, cs, hs, ws};
    return set_tensor_nd(d, dtype, 4, dims, strides);
}

Status set_tensor_nd(TensorDesc& d, cudnnDataType_t dtype, int nb_dims, const int* dims, const int* strides) {
    ODNN_REQUIRE_PARAM(dims != nullptr, "dimA is NULL");
    ODNN_REQUIRE_PARAM(strides != nullptr, "strideA is NULL");
    ODNN_RETURN_IF_ERROR(check_dtype(dtype));
    ODNN_REQUIRE_PARAM(nb_dims >= 2, "nbDims = %d: a tensor descriptor has at least 2 dimensions", nb_dims);
    ODNN_REQUIRE_SUPPORTED(nb_dims <= kDimMax, "nbDims = %d exceeds CUDNN_DIM_MAX (%d)", nb_dims, kDimMax);
    TensorDesc t;
    t.dtype = dtype;
    t.nb_dims = nb_dims;
    for (int i = 0; i < nb_dims; ++i) {
        t.dims[i] = dims[i];
        // cuDNN accepts negative strides; odnn refuses them (docs/DIVERGENCES.md).
        ODNN_REQUIRE_PARAM(strides[i] != 0, "strideA[%d] = 0: strides must be non-zero", i);
        ODNN_REQUIRE_PARAM(strides[i] > 0, "strideA[%d] = %d: odnn does not support negative strides", i,
                           strides[i]);
        t.strides[i] = strides[i];
    }
    ODNN_RETURN_IF_ERROR(check_dims(nb_dims, t.dims));
    ODNN_REQUIRE_SUPPORTED(t.span_elements() <= kMaxTensorElements,
                           "the strides address more than 2^31-1 elements, the limit of a legacy tensor descriptor");
    d = t;
    return Status::ok();
}

Status set_tensor_nd_ex(TensorDesc& d, cudnnTensorFormat_t format, cudnnDataType_t dtype, int nb_dims,
                        const int* dims) {
    ODNN_REQUIRE_PARAM(dims != nullptr, "dimA is NULL");
    ODNN_REQUIRE_PARAM(format_is_known(format), "format %d is not a cudnnTensorFormat_t value",
                       static_cast<int>(format));
    ODNN_RETURN_IF_ERROR(check_dtype(dtype));
    ODNN_REQUIRE_PARAM(format != CUDNN_TENSOR_NCHW_VECT_C || nb_dims == 4,
                       "CUDNN_TENSOR_NCHW_VECT_C needs a 4-D tensor (nbDims = %d)", nb_dims);
    ODNN_REQUIRE_PARAM(nb_dims >= 2, "nbDims = %d: a tensor descriptor has at least 2 dimensions", nb_dims);
    ODNN_REQUIRE_SUPPORTED(nb_dims <= kDimMax, "nbDims = %d exceeds CUDNN_DIM_MAX (%d)", nb_dims, kDimMax);
    TensorDesc t;
    t.dtype = dtype;
    t.nb_dims = nb_dims;
    t.format = format;
    for (int i = 0; i < nb_dims; ++i) t.dims[i] = dims[i];
    ODNN_RETURN_IF_ERROR(check_dims(nb_dims, t.dims));
    int vect = 1;
    ODNN_RETURN_IF_ERROR(check_vect(format, dtype, t.dims[1], &vect));
    if (format == CUDNN_TENSOR_NCHW_VECT_C) return set_tensor_4d(d, format, dtype, dims[0], dims[1], dims[2], dims[3]);
    packed_strides(format, nb_dims, t.dims, t.strides);
    t.vect_count = vect;
    d = t;
    return Status::ok();
}

int64_t FilterDesc::num_elements() const {
    int64_t n = 1;
    for (int i = 0; i < nb_dims; ++i) n *= dims[i];
    return nb_dims ? n : 0;
}

// NCHW_VECT_C filters count scalars in C, other layouts count whole vectors.
size_t FilterDesc::size_in_bytes() const {
    const int per = format == CUDNN_TENSOR_NCHW_VECT_C ? dtype_vector_count(dtype) : 1;
    return static_cast<size_t>((num_elements() * dtype_bits(dtype) / per + 7) / 8);
}

Status set_filter_nd(FilterDesc& f, cudnnDataType_t dtype, cudnnTensorFormat_t format, int nb_dims, const int* dims) {
    ODNN_REQUIRE_PARAM(dims != nullptr, "filterDimA is NULL");
    ODNN_REQUIRE_PARAM(format_is_known(format), "format %d is not a cudnnTensorFormat_t value",
                       static_cast<int>(format));
    ODNN_RETURN_IF_ERROR(check_dtype(dtype));
    ODNN_REQUIRE_PARAM(dtype != CUDNN_DATA_INT32, "dataType INT32 is not a filter data type");
    ODNN_REQUIRE_PARAM(nb_dims >= 3, "nbDims = %d: a filter has at least 3 dimensions (K, C, spatial...)", nb_dims);
    ODNN_REQUIRE_SUPPORTED(nb_dims <= kDimMax, "nbDims = %d exceeds CUDNN_DIM_MAX (%d)", nb_dims, kDimMax);
    FilterDesc t;
    t.dtype = dtype;
    t.format = format;
    t.nb_dims = nb_dims;
    for (int i = 0; i < nb_dims; ++i) {
        t.dims[i] = dims[i];
        ODNN_REQUIRE_PARAM(dims[i] > 0, "filterDimA[%d] = %d: every dimension must be positive", i, dims[i]);
    }
    int vect = 1;
    ODNN_RETURN_IF_ERROR(check_vect(format, dtype, t.dims[1], &vect));
    f = t;
    return Status::ok();
}

}  // namespace odnn::core
