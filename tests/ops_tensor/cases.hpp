// Problems of the case files in tests/ops_tensor/cases/*.txt, one per line:
//
//   <op> key=value ...
//
// op: act_fwd act_bwd softmax_fwd softmax_bwd add optensor reduce transform transform_ex
// transform_filter. A value with commas expands the line into one case per value
// (every combination when several keys have lists). Keys each op reads:
//   dt, ydt (output type; default dt), dims (AxBxC...), bdims (B of add / optensor, C of
//   reduce), layout / ylayout / blayout (nchw, nhwc, strided, or explicit strides
//   "s0xs1x..."), alpha, beta, alpha2, mode, algo, op (optensor / reduce op), nan (1 =
//   PROPAGATE_NAN), nan_inputs (1 = some inputs are NaN), coef, sbeta, inplace, indices,
//   pad_before, pad_after, fold, dir (fold / unfold), lo / hi (input range).
// '#' starts a comment.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ops_test {

struct Case {
    std::string file;
    int line = 0;
    std::string op;
    std::map<std::string, std::string> kv;

    std::string text() const;  // the expanded line
    std::string where() const;
    std::string name() const;  // usable as a test name
    uint64_t seed() const;
    bool has(const std::string& k) const { return kv.count(k) != 0; }
    std::string str(const std::string& k, const std::string& def = "") const;
    double num(const std::string& k, double def) const;
    std::vector<int64_t> list(const std::string& k) const;  // "2x3x4"
};

std::vector<Case> expand_line(const std::string& file, int line, const std::string& text);
std::vector<Case> load_cases(const std::string& dir);

}  // namespace ops_test
