// Bench problems: one per line, benchdnn-like,
//   conv fwd dt=f16 layout=nhwc n=32 c=64 h=56 w=56 k=64 r=3 s=3 pad=1 stride=1 dil=1 g=1
//   copy dt=f32 n=268435456
//   act fwd mode=relu dt=bf16 layout=nhwc n=128 c=256 h=56 w=56
//   softmax bwd alg=accurate mode=channel ...     pool fwd mode=max r=3 s=3 pad=1 stride=2 ...
//   bn fwd_train mode=spatial ...                 optensor op=add ...      bias (cudnnAddTensor, 1xCx1x1)
//   lrn fwd size=5 alpha=0.0001 beta=0.75 k=2 ... dropout fwd p=0.5 ...
//   reduce op=add ... oh=1 ow=1 (the output's dims; 1 = reduced)   transform to=nhwc [ydt=f16] ...
//   scale ...   set ...
// or a line of the shared ResNet file format "n c h w k r s pad stride dil groups".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace odnn_bench {

struct Problem {
    std::string op;   // conv, copy, act, softmax, pool, bn, optensor, bias, lrn, dropout, reduce, transform, scale, set
    std::string dir;  // conv: fwd, bwd_data, bwd_filter; act/softmax/pool/lrn/dropout: fwd, bwd; bn: fwd_inf, fwd_train, bwd
    std::string dt = "f32";
    std::string layout = "nchw";
    std::string math = "default";  // conv: default, fma, tensor_op
    std::map<std::string, long long> v;    // integer parameters
    std::map<std::string, std::string> s;  // word parameters (mode=, alg=, op=)
    std::map<std::string, double> f;       // real parameters (dropout p=, lrn alpha= beta= k=)
    std::string word(const std::string& key, const std::string& fallback) const;
    long long get(const std::string& key, long long fallback) const;
    double real(const std::string& key, double fallback) const;
    std::string str() const;             // canonical one-line form (parseable)
};

// Parses one line; returns false with a message naming the problem.
bool parse_problem(const std::string& line, Problem* out, std::string* error);

// Reads a case file: '#' comments and blank lines skipped; errors name file:line.
bool read_problem_file(const std::string& path, std::vector<Problem>* out, std::string* error);

// The shortest decimal text that reads back as exactly `v` (problem strings carry reals).
std::string real_text(double v);

}  // namespace odnn_bench
