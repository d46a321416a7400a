#include "core/dropout_problem.hpp"

#include <cmath>
#include <string>

#include "core/dtype.hpp"
#include "core/replay.hpp"

namespace odnn::core {

Status dropout(const Handle& h, const DropoutDesc& d, DropoutProblem& p, size_t reserve_bytes) {
    const char* xn = p.backward ? "dydesc" : "xdesc";
    const char* yn = p.backward ? "dxdesc" : "ydesc";
    ODNN_REQUIRE_PARAM(p.x.is_set(), "%s has not been set", xn);
    ODNN_REQUIRE_PARAM(p.y.is_set(), "%s has not been set", yn);
    bool same = p.x.nb_dims == p.y.nb_dims;
    for (int i = 0; same && i < p.x.nb_dims; ++i) same = p.x.dims[i] == p.y.dims[i];
    ODNN_REQUIRE_PARAM(same, "%s and %s have different dims", xn, yn);
    ODNN_REQUIRE_PARAM(p.x.dtype == p.y.dtype, "%s has data type %s but %s has %s", xn, dtype_name(p.x.dtype), yn,
                       dtype_name(p.y.dtype));
    ODNN_REQUIRE_SUPPORTED(p.x.dtype == CUDNN_DATA_FLOAT || p.x.dtype == CUDNN_DATA_DOUBLE ||
                               p.x.dtype == CUDNN_DATA_HALF || p.x.dtype == CUDNN_DATA_BFLOAT16,
                           "dropout does not support data type %s", dtype_name(p.x.dtype));
    ODNN_REQUIRE_PARAM(p.x_data != nullptr, "%s is NULL", p.backward ? "dy" : "x");
    ODNN_REQUIRE_PARAM(p.y_data != nullptr, "%s is NULL", p.backward ? "dx" : "y");
    auto need = dropout_reserve_space_size(p.x);
    if (!need.is_ok()) return need.status();
    ODNN_REQUIRE_PARAM(p.reserve != nullptr, "reserveSpace is NULL");
    ODNN_REQUIRE_PARAM(reserve_bytes >= need.value(),
                       "reserveSpaceSizeInBytes = %zu is less than cudnnDropoutGetReserveSpaceSize (%zu)",
                       reserve_bytes, need.value());
    const float prob = d.dropout;
    p.keep_all = !(prob > 0.0f);
    p.drop_all = prob >= 1.0f;
    p.scale = p.keep_all ? 1.0f : (p.drop_all ? 0.0f : 1.0f / (1.0f - prob));
    p.threshold = p.keep_all || p.drop_all ? 0u : static_cast<uint32_t>(std::floor(static_cast<double>(prob) * 4294967296.0));
    if (!p.backward && !p.keep_all) {
        ODNN_REQUIRE_PARAM(d.states != nullptr,
                           "the dropout descriptor has no states (cudnnSetDropoutDescriptor with states) but dropout = %g",
                           static_cast<double>(prob));
        p.states = d.states;
        if (h.backend == BackendKind::cpu) {
            // Host memory: tell initialised states from garbage.
            const DropoutStates* s = static_cast<const DropoutStates*>(d.states);
            ODNN_REQUIRE_PARAM(s->magic == kDropoutStatesMagic && s->version == kDropoutStatesVersion &&
                                   s->check == dropout_states_check(s->seed),
                               "the dropout states were not initialised by cudnnSetDropoutDescriptor");
        }
    }
    log_replay(h, p, d);
    return dispatch(h, p);
}

}  // namespace odnn::core
