// Reference dropout forward and backward: element by element in x's logical order,
// the generator and the mask layout of core/dropout_problem.hpp.
#include <cstring>

#include "core/dropout_problem.hpp"
#include "core/elem_access.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

class RefDropout final : public core::Impl<core::DropoutProblem> {
public:
    const char* name() const override { return "ref_dropout"; }
    Status execute(const core::Handle&, const core::DropoutProblem& p) const override {
        const int64_t n = p.x.num_elements();
        const double scale = p.scale;
        auto off = [](const core::TensorDesc& t, int64_t i) {
            return core::strided_offset(i, t.nb_dims, t.dims, t.strides);
        };
        if (p.backward) {
            for (int64_t i = 0; i < n; ++i) {
                const bool keep = (p.reserve[i / 32] >> (i % 32)) & 1u;
                const double v = keep ? core::load_elem(p.x_data, off(p.x, i), p.x.dtype) * scale : 0.0;
                core::store_elem(p.y_data, off(p.y, i), p.y.dtype, v);
            }
            return Status::ok();
        }
        core::DropoutStates* st = static_cast<core::DropoutStates*>(p.states);
        const uint64_t seed = st ? st->seed : 0;
        const uint64_t start = st ? core::dropout_first_block(st->offset) : 0;
        std::memset(p.reserve, 0, static_cast<size_t>((n + 31) / 32) * 4);
        const int64_t quads = (n + 3) / 4;
        for (int64_t q = 0; q < quads; ++q) {
            uint32_t words[4] = {0, 0, 0, 0};
            if (!p.keep_all && !p.drop_all) core::dropout_block(seed, start + static_cast<uint64_t>(q), words);
            for (int w = 0; w < 4; ++w) {
                const int64_t i = 4 * q + w;
                if (i >= n) break;
                const bool keep = p.keep_all || (!p.drop_all && words[w] >= p.threshold);
                const double v = keep ? core::load_elem(p.x_data, off(p.x, i), p.x.dtype) * scale : 0.0;
                core::store_elem(p.y_data, off(p.y, i), p.y.dtype, v);
                if (keep) p.reserve[i / 32] |= 1u << (i % 32);
            }
        }
        if (st && !p.keep_all) st->offset = 4 * (start + static_cast<uint64_t>(quads));
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::DropoutProblem, RefDropout, core::kPriorityReference);

}  // namespace odnn::cpu
