#include "selftest_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace odnn_tool {

double unit_roundoff(cudnnDataType_t t) {
    switch (t) {
        case CUDNN_DATA_DOUBLE: return std::ldexp(1.0, -53);
        case CUDNN_DATA_FLOAT: return std::ldexp(1.0, -24);
        case CUDNN_DATA_HALF: return std::ldexp(1.0, -11);
        case CUDNN_DATA_BFLOAT16: return std::ldexp(1.0, -8);
        default: return 0.5;
    }
}

Tolerance tolerance_for(cudnnDataType_t out, cudnnDataType_t compute, double terms, double scale) {
    const double uo = unit_roundoff(out);
    const double uc = unit_roundoff(compute);
    const bool integer_out = uo >= 0.5;
    Tolerance t;
    // Accumulation in `compute` (a kernel) against double (the reference): a few units of
    // roundoff per term, on the terms' magnitude; then the output's rounding, which may
    // fall on either side of a tie between two results that differ in the last bits.
    const double acc = 4.0 * std::max(terms, 1.0) * (integer_out ? 0.0 : uc);
    t.rel = (integer_out ? 0.0 : 2.0 * uo) + acc;
    t.abs = integer_out ? 1.0 : acc * std::max(scale, 1.0);  // results near zero after cancellation
    return t;
}

Comparison compare_values(const std::vector<double>& got, const std::vector<double>& ref, const Tolerance& tol,
                          double max_zero_fraction) {
    Comparison c;
    c.count = ref.size();
    char buf[256];
    if (got.size() != ref.size()) {
        std::snprintf(buf, sizeof buf, "%zu values, the reference has %zu", got.size(), ref.size());
        c.why = buf;
        return c;
    }
    if (ref.empty()) {
        c.why = "no values to compare";
        return c;
    }
    size_t zeros = 0, first_bad = ref.size();
    for (size_t i = 0; i < ref.size(); ++i) {
        const double g = got[i], r = ref[i];
        if (r == 0.0) ++zeros;
        if (std::isnan(r)) {
            if (!std::isnan(g)) {
                ++c.mismatches;
                if (first_bad == ref.size()) first_bad = i;
            }
            continue;
        }
        if (!std::isfinite(g) || !std::isfinite(r)) {
            if (g != r) {  // same infinity is fine; NaN got, or a different infinity, is not
                ++c.mismatches;
                if (first_bad == ref.size()) first_bad = i;
                c.worst_ratio = INFINITY;
                c.worst_index = i;
            }
            continue;
        }
        const double err = std::fabs(g - r);
        const double allowed = tol.abs + tol.rel * std::fabs(r);
        const double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
        c.max_abs_err = std::max(c.max_abs_err, err);
        c.max_rel_err = std::max(c.max_rel_err, err / std::max(std::fabs(r), 1.0));
        if (ratio > c.worst_ratio) {
            c.worst_ratio = ratio;
            c.worst_index = i;
        }
        if (err > allowed) {
            ++c.mismatches;
            if (first_bad == ref.size()) first_bad = i;
        }
    }
    if (c.mismatches) {
        const size_t i = std::isfinite(c.worst_ratio) ? c.worst_index : first_bad;
        std::snprintf(buf, sizeof buf, "%zu of %zu values outside the tolerance; worst at [%zu]: %.9g, reference %.9g",
                      c.mismatches, c.count, i, got[i], ref[i]);
        c.why = buf;
        return c;
    }
    if (ref.size() > 4 && static_cast<double>(zeros) >= max_zero_fraction * static_cast<double>(ref.size())) {
        std::snprintf(buf, sizeof buf, "vacuous: %zu of %zu reference values are zero", zeros, ref.size());
        c.why = buf;
        return c;
    }
    c.pass = true;
    return c;
}

}  // namespace odnn_tool
