// Convolution problems of the case files in tests/problems/conv_*.txt. One problem
// per line, benchdnn-like:
//
//   conv <dir> key=value ...
//
//   dir     fwd | bwd_data | bwd_filter | bias_act (fused forward) | all (fwd, bwd_data, bwd_filter)
//   dt      f32 | f64 | f16 (fp32 compute) | f16c16 (fp16 compute) | bf16 | i8 (INT8 in and out) |
//           i8f32 (INT8 in, FLOAT out); default f32
//   layout  nchw | nhwc | strided (a permutation of the dims with gaps, from the line's seed)
//   wlayout nchw | nhwc (default: nhwc for nhwc images, else nchw)
//   n c k g           batch, input channels, output channels, groups
//   d h w / t r s     input and filter spatial sizes (d / t make the problem 3-d)
//   pad stride dil    one value for every spatial dim, or one per dim joined by 'x' (H x W,
//                     or D x H x W)
//   mode    xcorr (CUDNN_CROSS_CORRELATION, default) | conv (CUDNN_CONVOLUTION)
//   fill    int (small integers: every result exact, the default) | real (uniform
//           reals, compared with a tolerance from the data type and reduction length)
//   '#' starts a comment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace conv_test {

struct Case {
    std::string file;
    int line = 0;
    std::string text;
    std::string dir = "all";
    std::string dt = "f32";
    std::string layout = "nchw";
    std::string wlayout;
    int dims = 2;
    int64_t n = 1, c = 1, k = 1, g = 1;
    int64_t in[3] = {1, 1, 1};    // D, H, W
    int64_t filt[3] = {1, 1, 1};  // T, R, S
    int64_t pad[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
    bool conv_mode = false;
    bool real_fill = false;

    // "file:line: text" for messages.
    std::string where() const;
    // A short identifier usable as a test name.
    std::string name() const;
    uint64_t seed() const;
};

// Parses one line; returns false (and a reason) if it is not a valid case.
bool parse_case(const std::string& text, Case* out, std::string* why);
// Every case of every conv_*.txt file in `dir` (sorted by file name); throws on a bad line.
std::vector<Case> load_cases(const std::string& dir);

}  // namespace conv_test
