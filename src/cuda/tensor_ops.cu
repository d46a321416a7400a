// CUDA transform / add / op-tensor / reduce.
//
// Bytes moved (n output elements of s bytes; beta != 0 adds one read of the output):
//   transform, plain      read x, write y                         n (sx + sy)
//   transform, pad / fold read the x elements used, write y      <= n (sx + sy)
//   add (bias)            read C, write C; the bias is read from cache      2 n s (beta != 0)
//   op-tensor             read A and B (B broadcast: from cache), write C  3 n s (full B)
//   reduce                read A once; with a split reduction (workspace) 16 bytes per
//                         partial result in and out
// Add and op-tensor on FLOAT / HALF / BFLOAT16 / DOUBLE run typed element-wise kernels
// (flat 16-byte vectors for packed same-layout operands, a bias found by multiply-shift
// division); other type combinations and transforms with padding, folding or
// NCHW_VECT_C run type-erased kernels (double arithmetic).
//
// Ceilings at 128x256x56x56 (1.03e8 elements, 4.2 TB/s copy bandwidth):
//   add (bias, beta = 1)   2 tensors: f32 822 MB -> 0.196 ms, bf16 411 MB -> 0.098 ms
//   op-tensor, full B      3 tensors: f32 1233 MB -> 0.294 ms, bf16 617 MB -> 0.147 ms
// What limited op-tensor (0.75 ms f32, 0.57 ms bf16, 39% / 26% of copy): the two-input
// flat kernel spilled its operand array to the stack (see cuda/ew_common.cuh); it now
// keeps them in registers.
#include "core/tensor_ops.hpp"
#include "cuda/ew_common.cuh"

namespace odnn::cuda {

using core::Status;

namespace {

// ---- Functors ----

template <class A>
struct ScaleF {  // alpha * in (transform, add)
    static constexpr int kInputs = 1;
    A alpha, beta;
    __device__ __forceinline__ A operator()(const A* in) const { return alpha * in[0]; }
};

template <class A>
struct OpBinaryF {
    static constexpr int kInputs = 2;
    int op;
    bool propagate_nan;
    A alpha1, alpha2, beta;
    __device__ __forceinline__ A operator()(const A* in) const {
        return core::op_tensor_apply<A>(op, propagate_nan, alpha1 * in[0], alpha2 * in[1]);
    }
};

template <class A>
struct OpUnaryF {
    static constexpr int kInputs = 1;
    int op;
    bool propagate_nan;
    A alpha1, beta;
    __device__ __forceinline__ A operator()(const A* in) const { return core::op_tensor_apply<A>(op, propagate_nan, alpha1 * in[0], A(0)); }
};

EwOperands operands(const core::Operand* out, void* out_data, std::initializer_list<const core::Operand*> ins,
                    std::initializer_list<const void*> data) {
    EwOperands e;
    e.ops[0] = out;
    e.data[0] = out_data;
    e.n = 1;
    auto d = data.begin();
    for (const core::Operand* o : ins) {
        e.ops[e.n] = o;
        e.data[e.n++] = *d++;
    }
    return e;
}

// ---- Transform ----

__global__ void __launch_bounds__(kEwBlock) transform_map_kernel(core::Operand x, core::Operand y, const void* xd,
                                                                 void* yd, core::TransformMap map, double alpha,
                                                                 double beta, int64_t n) {
    ODNN_GRID_STRIDE_LOOP(i, n) {
        int64_t yi[core::kMaxOperandDims] = {}, xi[core::kMaxOperandDims] = {};
        y.index_of(i, yi);
        const double v = map.source(yi, xi) ? core::load_elem(xd, x.offset(xi), x.dtype) : 0.0;
        core::blend_store(yd, y.offset(yi), y.dtype, v, alpha, beta);
    }
}

template <class T>
Status transform_typed(const core::Handle& h, const core::TransformTensorProblem& p) {
    using A = typename AccOf<T>::type;
    return launch_ew<T, T>(operands(&p.y, p.y_data, {&p.x}, {p.x_data}),
                           ScaleF<A>{static_cast<A>(p.scale.alpha), static_cast<A>(p.scale.beta)}, h.stream,
                           "cuda_transform_tensor");
}

class CudaTransform final : public core::Impl<core::TransformTensorProblem> {
public:
    const char* name() const override { return "cuda_transform_tensor"; }
    Status execute(const core::Handle& h, const core::TransformTensorProblem& p) const override {
        if (p.map.identity && p.x.vect == 1 && p.y.vect == 1) {
            if (p.x.dtype == p.y.dtype) {
                switch (p.y.dtype) {
                    case CUDNN_DATA_FLOAT: return transform_typed<float>(h, p);
                    case CUDNN_DATA_DOUBLE: return transform_typed<double>(h, p);
                    case CUDNN_DATA_HALF: return transform_typed<__half>(h, p);
                    case CUDNN_DATA_BFLOAT16: return transform_typed<__nv_bfloat16>(h, p);
                    default: break;
                }
            }
            return launch_ew_generic(operands(&p.y, p.y_data, {&p.x}, {p.x_data}),
                                     ScaleF<double>{p.scale.alpha, p.scale.beta}, h.stream, "cuda_transform_tensor");
        }
        const int64_t n = p.y.count();
        transform_map_kernel<<<grid_for(n, kEwBlock), kEwBlock, 0, h.stream>>>(p.x, p.y, p.x_data, p.y_data, p.map,
                                                                              p.scale.alpha, p.scale.beta, n);
        return core::cuda_check_launch("cuda_transform_tensor");
    }
};

// ---- Add ----

template <class T>
Status add_typed(const core::Handle& h, const core::AddTensorProblem& p) {
    using A = typename AccOf<T>::type;
    return launch_ew<T, T>(operands(&p.c, p.c_data, {&p.a}, {p.a_data}),
                           ScaleF<A>{static_cast<A>(p.scale.alpha), static_cast<A>(p.scale.beta)}, h.stream,
                           "cuda_add_tensor");
}

class CudaAdd final : public core::Impl<core::AddTensorProblem> {
public:
    const char* name() const override { return "cuda_add_tensor"; }
    Status execute(const core::Handle& h, const core::AddTensorProblem& p) const override {
        switch (p.c.dtype) {
            case CUDNN_DATA_FLOAT: return add_typed<float>(h, p);
            case CUDNN_DATA_DOUBLE: return add_typed<double>(h, p);
            case CUDNN_DATA_HALF: return add_typed<__half>(h, p);
            case CUDNN_DATA_BFLOAT16: return add_typed<__nv_bfloat16>(h, p);
            default:
                return launch_ew_generic(operands(&p.c, p.c_data, {&p.a}, {p.a_data}),
                                         ScaleF<double>{p.scale.alpha, p.scale.beta}, h.stream, "cuda_add_tensor");
        }
    }
};

// ---- Op-tensor ----

template <class T>
Status op_typed(const core::Handle& h, const core::OpTensorProblem& p) {
    using A = typename AccOf<T>::type;
    if (p.unary())
        return launch_ew<T, T>(operands(&p.c, p.c_data, {&p.a}, {p.a_data}),
                               OpUnaryF<A>{p.op, p.propagate_nan, static_cast<A>(p.alpha1), static_cast<A>(p.beta)},
                               h.stream, "cuda_op_tensor");
    return launch_ew<T, T>(operands(&p.c, p.c_data, {&p.a, &p.b}, {p.a_data, p.b_data}),
                           OpBinaryF<A>{p.op, p.propagate_nan, static_cast<A>(p.alpha1), static_cast<A>(p.alpha2),
                                        static_cast<A>(p.beta)},
                           h.stream, "cuda_op_tensor");
}

class CudaOpTensor final : public core::Impl<core::OpTensorProblem> {
public:
    const char* name() const override { return "cuda_op_tensor"; }
    Status execute(const core::Handle& h, const core::OpTensorProblem& p) const override {
        if (p.a.dtype == p.c.dtype) {
            switch (p.c.dtype) {
                case CUDNN_DATA_FLOAT: return op_typed<float>(h, p);
                case CUDNN_DATA_DOUBLE: return op_typed<double>(h, p);
                case CUDNN_DATA_HALF: return op_typed<__half>(h, p);
                case CUDNN_DATA_BFLOAT16: return op_typed<__nv_bfloat16>(h, p);
                default: break;
            }
        }
        // Mixed types (e.g. HALF A and B into FLOAT C) and INT8: in double.
        if (p.unary())
            return launch_ew_generic(operands(&p.c, p.c_data, {&p.a}, {p.a_data}),
                                     OpUnaryF<double>{p.op, p.propagate_nan, p.alpha1, p.beta}, h.stream,
                                     "cuda_op_tensor");
        return launch_ew_generic(operands(&p.c, p.c_data, {&p.a, &p.b}, {p.a_data, p.b_data}),
                                 OpBinaryF<double>{p.op, p.propagate_nan, p.alpha1, p.alpha2, p.beta}, h.stream,
                                 "cuda_op_tensor");
    }
};

// ---- Reduce ----

struct ReduceArgs {
    core::Operand a, c;
    const void* a_data;
    void* c_data;
    uint32_t* indices;
    core::ReducePartial* partial;  // splits > 1
    int op;
    bool propagate_nan;
    double alpha, beta;
    unsigned reduced_mask;  // bit d set: dim d is reduced (the problem's ascending list)
    int64_t length, outputs, splits, chunk;
};

constexpr uint32_t kNoIndex = 0xffffffffu;  // an empty min / max candidate

struct Acc {
    double v;
    uint32_t i;
};

__device__ __forceinline__ Acc acc_identity(int op) {
    const bool product = op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    return Acc{product ? 1.0 : 0.0, kNoIndex};
}

__device__ __forceinline__ Acc acc_combine(int op, bool prop, Acc x, Acc y) {
    switch (op) {
        case CUDNN_REDUCE_TENSOR_MUL:
        case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: return Acc{x.v * y.v, kNoIndex};
        case CUDNN_REDUCE_TENSOR_MIN:
        case CUDNN_REDUCE_TENSOR_MAX:
        case CUDNN_REDUCE_TENSOR_AMAX:
            if (y.i == kNoIndex) return x;
            if (x.i == kNoIndex) return y;
            return core::reduce_better(op, prop, y.v, y.i, x.v, x.i) ? y : x;
        default: return Acc{x.v + y.v, kNoIndex};  // ADD, AVG, NORM1, NORM2: sums
    }
}

// One element into the accumulator (its value already read).
__device__ __forceinline__ Acc acc_add(int op, bool prop, Acc x, double v, uint32_t k) {
    switch (op) {
        case CUDNN_REDUCE_TENSOR_MUL: return Acc{x.v * v, kNoIndex};
        case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: return Acc{v != 0.0 ? x.v * v : x.v, kNoIndex};
        case CUDNN_REDUCE_TENSOR_NORM1: return Acc{x.v + fabs(v), kNoIndex};
        case CUDNN_REDUCE_TENSOR_NORM2: return Acc{x.v + v * v, kNoIndex};
        case CUDNN_REDUCE_TENSOR_AMAX: return acc_combine(op, prop, x, Acc{fabs(v), k});
        case CUDNN_REDUCE_TENSOR_MIN:
        case CUDNN_REDUCE_TENSOR_MAX: return acc_combine(op, prop, x, Acc{v, k});
        default: return Acc{x.v + v, kNoIndex};
    }
}

// Kept coordinates of output o (reduced dims at 0) -> offsets in A and C.
__device__ void output_offsets(const ReduceArgs& r, int64_t o, int64_t* a_off, int64_t* c_off) {
    int64_t idx[core::kMaxOperandDims] = {};
    r.c.index_of(o, idx);
    *a_off = r.a.offset(idx);
    *c_off = r.c.offset(idx);
}

__device__ void finish_output(const ReduceArgs& r, int64_t o, int64_t c_off, Acc acc) {
    double v = acc.v;
    if (r.op == CUDNN_REDUCE_TENSOR_AVG) v /= static_cast<double>(r.length);
    if (r.op == CUDNN_REDUCE_TENSOR_NORM2) v = sqrt(v);
    core::blend_store(r.c_data, c_off, r.c.dtype, v, r.alpha, r.beta);
    if (r.indices) r.indices[o] = acc.i == kNoIndex ? 0 : acc.i;
}

// One warp per (output, chunk): lanes stride over the chunk, then combine in a fixed
// tree, so the result does not depend on scheduling.
__global__ void __launch_bounds__(256) reduce_kernel(ReduceArgs r) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
    for (int64_t item = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32;
         item < r.outputs * r.splits; item += warps) {
        const int64_t o = item / r.splits, s = item % r.splits;
        int64_t a_base, c_off;
        output_offsets(r, o, &a_base, &c_off);
        const int64_t k0 = s * r.chunk, k1 = min(r.length, k0 + r.chunk);
        Acc acc = acc_identity(r.op);
        for (int64_t k = k0 + lane; k < k1; k += 32) {
            int64_t rem = k, off = a_base;
            ODNN_UNROLL
            for (int d = core::kMaxOperandDims - 1; d >= 0; --d) {
                if (!((r.reduced_mask >> d) & 1u)) continue;
                off += (rem % r.a.dims[d]) * r.a.strides[d];
                rem /= r.a.dims[d];
            }
            acc = acc_add(r.op, r.propagate_nan, acc, core::load_elem(r.a_data, off, r.a.dtype),
                          static_cast<uint32_t>(k));
        }
        for (int delta = 16; delta > 0; delta >>= 1) {
            Acc other;
            other.v = __shfl_down_sync(0xffffffffu, acc.v, delta);
            other.i = __shfl_down_sync(0xffffffffu, acc.i, delta);
            acc = acc_combine(r.op, r.propagate_nan, acc, other);
        }
        if (lane == 0) {
            if (r.splits == 1) finish_output(r, o, c_off, acc);
            else r.partial[item] = core::ReducePartial{acc.v, acc.i, 0};
        }
    }
}

__global__ void reduce_finish_kernel(ReduceArgs r) {
    ODNN_GRID_STRIDE_LOOP(o, r.outputs) {
        int64_t a_base, c_off;
        output_offsets(r, o, &a_base, &c_off);
        Acc acc = acc_identity(r.op);
        for (int64_t s = 0; s < r.splits; ++s) {
            const core::ReducePartial& p = r.partial[o * r.splits + s];
            acc = acc_combine(r.op, r.propagate_nan, acc, Acc{p.value, p.index});
        }
        finish_output(r, o, c_off, acc);
    }
}

class CudaReduce final : public core::Impl<core::ReduceTensorProblem> {
public:
    const char* name() const override { return "cuda_reduce_tensor"; }
    Status execute(const core::Handle& h, const core::ReduceTensorProblem& p) const override {
        ReduceArgs r;
        r.a = p.a;
        r.c = p.c;
        r.a_data = p.a_data;
        r.c_data = p.c_data;
        r.indices = p.indices;
        r.op = p.op;
        r.propagate_nan = p.propagate_nan;
        r.alpha = p.scale.alpha;
        r.beta = p.scale.beta;
        r.reduced_mask = 0;
        for (int i = 0; i < p.nb_reduced; ++i) r.reduced_mask |= 1u << p.reduced[i];
        r.length = p.reduce_length();
        r.outputs = p.outputs();
        r.splits = core::reduce_splits(r.outputs, r.length);
        // A misaligned workspace runs unsplit (slower, same answer).
        if (r.splits > 1 && !aligned(p.workspace, alignof(core::ReducePartial))) r.splits = 1;
        r.partial = r.splits > 1 ? static_cast<core::ReducePartial*>(p.workspace) : nullptr;
        r.chunk = (r.length + r.splits - 1) / r.splits;
        const int64_t threads = r.outputs * r.splits * 32;
        reduce_kernel<<<grid_for(threads, 256), 256, 0, h.stream>>>(r);
        ODNN_RETURN_IF_ERROR(core::cuda_check_launch("cuda_reduce_tensor"));
        if (r.splits > 1) {
            reduce_finish_kernel<<<grid_for(r.outputs, 256), 256, 0, h.stream>>>(r);
            ODNN_RETURN_IF_ERROR(core::cuda_check_launch("cuda_reduce_tensor_finish"));
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::TransformTensorProblem, CudaTransform, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::AddTensorProblem, CudaAdd, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::OpTensorProblem, CudaOpTensor, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::ReduceTensorProblem, CudaReduce, core::kPriorityGeneric);

}  // namespace odnn::cuda
