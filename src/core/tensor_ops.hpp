// Problems of the tensor arithmetic ops of cudnn_ops: transform (plain, Ex with padding
// and folding, filters), add (broadcast bias), op-tensor, reduce. The API layer calls the
// builders below, which validate like cuDNN 9 and dispatch to the handle's backend.
//
// Every operand is an `Operand`: a logical view of a tensor (its dims, strides in storage
// elements, scalar type) that both backends and the CUDA kernels read the same way.
// Broadcast inputs are expanded to the output's dims with stride 0 on broadcast dims.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>

#include "core/blend.hpp"
#include "core/handle.hpp"
#include "core/host_device.hpp"
#include "core/impl_registry.hpp"
#include "core/ops_desc.hpp"
#include "core/tensor_desc.hpp"

namespace odnn::core {

// A tensor's dims plus, for vector types outside NCHW_VECT_C, one lane dim.
constexpr int kMaxOperandDims = kDimMax + 1;

struct Operand {
    int dtype = CUDNN_DATA_FLOAT;  // scalar cudnnDataType_t: INT8 / UINT8 for the vector types
    int nb_dims = 0;
    int64_t dims[kMaxOperandDims] = {};
    // Storage elements: scalars, or (vect > 1) vectors of `vect` channels. 0 = broadcast.
    int64_t strides[kMaxOperandDims] = {};
    // NCHW_VECT_C: dim 1 counts scalar channels; channel c lives in lane c % vect of
    // vector c / vect (cuDNN's layout).
    int vect = 1;

    ODNN_HD int64_t count() const {
        int64_t n = 1;
        for (int i = 0; i < nb_dims; ++i) n *= dims[i];
        return n;
    }
    // The loops below run over every possible dim with constant indices (ODNN_UNROLL):
    // indexed with a run-time dim, a kernel's Operand (and the index arrays) went to local
    // memory in every thread (scripts/sass.py's `stack` column).
    //
    // Scalar offset of the element at logical index `idx`.
    ODNN_HD int64_t offset(const int64_t* idx) const {
        int64_t o = 0;
        ODNN_UNROLL
        for (int d = 0; d < kMaxOperandDims; ++d)
            if (d < nb_dims) o += (d == 1 && vect > 1 ? idx[d] / vect : idx[d]) * strides[d];
        return vect > 1 ? o * vect + idx[1] % vect : o;
    }
    // The logical index of the `linear`-th element, counted row-major over dims.
    ODNN_HD void index_of(int64_t linear, int64_t* idx) const {
        ODNN_UNROLL
        for (int d = kMaxOperandDims - 1; d >= 0; --d) {
            if (d >= nb_dims) continue;
            idx[d] = linear % dims[d];
            linear /= dims[d];
        }
    }
    // Scalar offset of the `linear`-th element, counted row-major over dims.
    ODNN_HD int64_t offset_of_linear(int64_t linear) const {
        int64_t idx[kMaxOperandDims] = {};
        index_of(linear, idx);
        return offset(idx);
    }
};

Operand operand_of(const TensorDesc& d);
// A filter packed in its format: NCHW = K, C, spatial row-major; NHWC = K, spatial, C;
// NCHW_VECT_C = K, C / vect, spatial, vect.
Operand operand_of(const FilterDesc& f);
// `a` seen with `out`'s dims: stride 0 where a has extent 1 and out does not.
Operand broadcast_to(const Operand& a, const Operand& out);
bool same_dims(const Operand& a, const Operand& b);
bool same_layout(const Operand& a, const Operand& b);  // same dims, strides and vect

// ---- Element-wise geometry (shared by the CUDA fast paths; unit-tested) ----

constexpr int kMaxEwOperands = 4;

// Operands iterated together over the output's dims (operand 0 is the output). dims are
// ordered by the output's strides (outermost first), unit dims dropped, and dims merged
// wherever every operand is contiguous across them. An element's offset in operand k is
// sum(idx[d] * strides[k][d]) for idx counted row-major over dims.
struct EwGeometry {
    int nb_dims = 0;
    int n_operands = 0;
    int64_t dims[kMaxOperandDims] = {};
    int64_t strides[kMaxEwOperands][kMaxOperandDims] = {};
    int64_t count() const;
};
// Operands must not use NCHW_VECT_C (vect == 1) and must all have the output's dims.
EwGeometry ew_simplify(const Operand* const* operands, int n);

// The flat fast path: the output dense (no gaps), every full input laid out exactly as the
// output, and at most one broadcast input whose element for output position i (memory
// order) is (i / inner) % mid.
struct EwFlat {
    bool ok = false;
    int bcast = -1;  // operand index of the broadcast input, -1 if none
    int64_t inner = 1;
    int64_t mid = 1;
};
EwFlat ew_flat(const EwGeometry& g);

// ---- Transform ----

// cudnnTransformTensorEx's mapping from a y element to the x element it copies. FOLD:
// y = fold(pad(x)); UNFOLD: y = crop(unfold(x)), its inverse. Folding by f_d along each
// spatial dim moves the f_d phases into channels, phase-major:
//   y[n, (b * Cp) + c, h', w'] = pad(x)[n, c, h' * fh + bh, w' * fw + bw], b = bh * fw + bw
// where Cp is the padded channel count. Positions with no x element are 0.
struct TransformMap {
    bool identity = true;
    bool unfold = false;
    int nb_dims = 0;
    int64_t pad_before[kDimMax] = {};
    int64_t fold[kDimMax] = {};   // 1 on N, C and unfolded dims
    int64_t x_dims[kDimMax] = {};  // bounds of the x side
    int64_t c_unit = 1;           // channels per phase block: padded C (fold) / x C / prod(fold) (unfold)

    // false when y element `yi` has no source (padding): it then reads as 0. The loops run
    // over every possible dim with constant indices (Operand::offset's note).
    ODNN_HD bool source(const int64_t* yi, int64_t* xi) const {
        if (identity) {  // nb_dims: the operands' (a vector type's lane dim included)
            ODNN_UNROLL
            for (int d = 0; d < kMaxOperandDims; ++d)
                if (d < nb_dims) xi[d] = yi[d];
            return true;
        }
        if (!unfold) {
            int64_t blk = yi[1] / c_unit;
            int64_t p[kDimMax] = {};
            p[0] = yi[0];
            p[1] = yi[1] % c_unit;
            ODNN_UNROLL
            for (int d = kDimMax - 1; d >= 2; --d) {
                if (d >= nb_dims) continue;
                p[d] = yi[d] * fold[d] + blk % fold[d];
                blk /= fold[d];
            }
            ODNN_UNROLL
            for (int d = 0; d < kDimMax; ++d) {
                if (d >= nb_dims) continue;
                xi[d] = p[d] - pad_before[d];
                if (xi[d] < 0 || xi[d] >= x_dims[d]) return false;
            }
            return true;
        }
        int64_t u[kDimMax] = {};
        ODNN_UNROLL
        for (int d = 0; d < kDimMax; ++d)
            if (d < nb_dims) u[d] = yi[d] + pad_before[d];
        if (u[0] < 0 || u[0] >= x_dims[0] || u[1] < 0 || u[1] >= c_unit) return false;
        int64_t blk = 0;
        xi[0] = u[0];
        ODNN_UNROLL
        for (int d = 2; d < kDimMax; ++d) {
            if (d >= nb_dims) continue;
            if (u[d] < 0 || u[d] >= x_dims[d] * fold[d]) return false;
            xi[d] = u[d] / fold[d];
            blk = blk * fold[d] + u[d] % fold[d];
        }
        xi[1] = blk * c_unit + u[1];
        return true;
    }
};

// y = alpha * map(x) + beta * y, any layouts (and element types) on either side.
struct TransformTensorProblem {
    static constexpr const char* kOpName = "cudnnTransformTensor";
    Operand x, y;
    const void* x_data = nullptr;
    void* y_data = nullptr;
    Scale scale;
    TransformMap map;
};

// ---- Add ----

// C = alpha * A + beta * C, A broadcast over C (each dim of A is C's or 1).
struct AddTensorProblem {
    static constexpr const char* kOpName = "cudnnAddTensor";
    Operand a;  // broadcast to c's dims
    Operand c;
    const void* a_data = nullptr;
    void* c_data = nullptr;
    Scale scale;
};

// ---- Op-tensor ----

// C = op(alpha1 * A, alpha2 * B) + beta * C, B broadcast over C; SQRT and NOT read A only.
struct OpTensorProblem {
    static constexpr const char* kOpName = "cudnnOpTensor";
    cudnnOpTensorOp_t op = CUDNN_OP_TENSOR_ADD;
    bool propagate_nan = false;
    bool double_compute = false;  // DOUBLE compute type; else FLOAT
    Operand a, b, c;              // b broadcast to c's dims (unused by unary ops)
    const void* a_data = nullptr;
    const void* b_data = nullptr;
    void* c_data = nullptr;
    double alpha1 = 1.0, alpha2 = 1.0, beta = 0.0;

    bool unary() const { return op == CUDNN_OP_TENSOR_SQRT || op == CUDNN_OP_TENSOR_NOT; }
};

// Math of both backends' element-wise code: float in CUDA kernels, double in the reference.
ODNN_HD float hd_sqrt(float v) { return sqrtf(v); }
ODNN_HD double hd_sqrt(double v) { return sqrt(v); }
ODNN_HD float hd_exp(float v) { return expf(v); }
ODNN_HD double hd_exp(double v) { return exp(v); }
ODNN_HD float hd_expm1(float v) { return expm1f(v); }
ODNN_HD double hd_expm1(double v) { return expm1(v); }
ODNN_HD float hd_log(float v) { return logf(v); }
ODNN_HD double hd_log(double v) { return log(v); }
ODNN_HD float hd_tanh(float v) { return tanhf(v); }
ODNN_HD double hd_tanh(double v) { return tanh(v); }

// The op on two scaled operands (NaN rule of MIN / MAX from the descriptor).
template <class T>
ODNN_HD T op_tensor_apply(int op, bool propagate_nan, T a, T b) {
    switch (op) {
        case CUDNN_OP_TENSOR_ADD: return a + b;
        case CUDNN_OP_TENSOR_MUL: return a * b;
        case CUDNN_OP_TENSOR_MIN:
            if (a != a || b != b) return propagate_nan ? (a != a ? a : b) : (a != a ? b : a);
            return b < a ? b : a;
        case CUDNN_OP_TENSOR_MAX:
            if (a != a || b != b) return propagate_nan ? (a != a ? a : b) : (a != a ? b : a);
            return b > a ? b : a;
        case CUDNN_OP_TENSOR_SQRT: return hd_sqrt(a);
        case CUDNN_OP_TENSOR_NOT: return T(1) - a;
        default: return a;
    }
}

// ---- Reduce ----

// C = alpha * reduce(A) + beta * C over the dims where C has extent 1 and A does not.
// Indices (MIN, MAX, AMAX with FLATTENED_INDICES) are the position of the chosen element
// among the reduced ones, row-major over the reduced dims; the first one wins a tie.
struct ReduceTensorProblem {
    static constexpr const char* kOpName = "cudnnReduceTensor";
    cudnnReduceTensorOp_t op = CUDNN_REDUCE_TENSOR_ADD;
    bool propagate_nan = false;
    bool want_indices = false;
    Operand a, c;
    const void* a_data = nullptr;
    void* c_data = nullptr;
    uint32_t* indices = nullptr;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
    Scale scale;

    // Reduced dims (extent > 1 in A, 1 in C), in A's order, and kept dims.
    int nb_reduced = 0;
    int reduced[kDimMax] = {};
    int nb_kept = 0;
    int kept[kDimMax] = {};
    int64_t outputs() const;       // elements of C
    int64_t reduce_length() const;  // elements reduced into each
};

// Partial results in the CUDA workspace: how many chunks each output's reduction is split
// into (1: none) and the bytes they take. The same on both backends, so a workspace sized
// by cudnnGetReductionWorkspaceSize works everywhere.
struct ReducePartial {
    double value;
    uint32_t index;
    uint32_t unused;
};
int64_t reduce_splits(int64_t outputs, int64_t length);
size_t reduce_workspace_size(int64_t outputs, int64_t length);
bool reduce_has_indices(cudnnReduceTensorOp_t op);

// Combining rule of MIN / MAX / AMAX candidates (value already |v| for AMAX): true when
// (v, i) beats (best, bi). A NaN wins under PROPAGATE_NAN and loses otherwise; ties go to
// the smaller index, so any combining order gives the same answer.
ODNN_HD bool reduce_better(int op, bool propagate_nan, double v, uint32_t i, double best, uint32_t bi) {
    const bool vn = v != v, bn = best != best;
    if (vn || bn) {
        if (vn && bn) return i < bi;
        return propagate_nan ? vn : bn;
    }
    if (v == best) return i < bi;
    return op == CUDNN_REDUCE_TENSOR_MIN ? v < best : v > best;
}

// ---- Builders: validate like cuDNN, build the problem, dispatch ----

Status transform_tensor(const Handle& h, const void* alpha, const TensorDesc& x, const void* x_data,
                        const void* beta, const TensorDesc& y, void* y_data);
Status transform_tensor_ex(const Handle& h, const TensorTransformDesc& t, const void* alpha, const TensorDesc& x,
                           const void* x_data, const void* beta, const TensorDesc& y, void* y_data);
Status transform_filter(const Handle& h, const TensorTransformDesc& t, const void* alpha, const FilterDesc& x,
                        const void* x_data, const void* beta, const FilterDesc& y, void* y_data);
// cudnnReorderFilterAndBias: odnn's convolutions read INT8x32 NCHW_VECT_C filters (and
// their FLOAT bias) in the plain layout whatever the descriptor's reorder type, so the
// reordered filter is the filter: a byte copy, and the bias's too when `reorder_bias` != 0
// (docs/DIVERGENCES.md).
Status reorder_filter_and_bias(const Handle& h, const FilterDesc& w, cudnnReorderType_t type, const void* w_data,
                               void* w_out, int reorder_bias, const void* b_data, void* b_out);
// The packed destination descriptor of a transform of `src`, and its size.
Status init_transform_dest(const TensorTransformDesc& t, const TensorDesc& src, TensorDesc* dest, size_t* bytes);

Status add_tensor(const Handle& h, const void* alpha, const TensorDesc& a, const void* a_data, const void* beta,
                  const TensorDesc& c, void* c_data);
// b / b_data may be null for SQRT and NOT.
Status op_tensor(const Handle& h, const OpTensorDesc& d, const void* alpha1, const TensorDesc& a, const void* a_data,
                 const void* alpha2, const TensorDesc* b, const void* b_data, const void* beta, const TensorDesc& c,
                 void* c_data);

Status reduction_indices_size(const ReduceTensorDesc& d, const TensorDesc& a, const TensorDesc& c, size_t* bytes);
Status reduction_workspace_size(const ReduceTensorDesc& d, const TensorDesc& a, const TensorDesc& c, size_t* bytes);
Status reduce_tensor(const Handle& h, const ReduceTensorDesc& d, void* indices, size_t indices_bytes, void* workspace,
                     size_t workspace_bytes, const void* alpha, const TensorDesc& a, const void* a_data,
                     const void* beta, const TensorDesc& c, void* c_data);

}  // namespace odnn::core
