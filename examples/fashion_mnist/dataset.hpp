// Fashion-MNIST in idx format (the files of Debian's dataset-fashion-mnist), read with zlib.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fmnist {

constexpr int kRows = 28;
constexpr int kCols = 28;
constexpr int kPixels = kRows * kCols;
constexpr int kClasses = 10;

// Where Debian's package puts the files.
constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

struct Split {
    std::vector<uint8_t> images;  // count * kPixels, row-major 28x28 per image
    std::vector<uint8_t> labels;  // count, each in [0, kClasses)
    int64_t count = 0;
};

// Reads `<dir>/<prefix>-images-idx3-ubyte.gz` and `<dir>/<prefix>-labels-idx1-ubyte.gz`
// (or the same names without .gz) where prefix is "train" or "t10k". On failure returns
// false and sets *error to one message that names the file and what is wrong with it.
bool load_split(const std::string& dir, const std::string& prefix, Split* out, std::string* error);

}  // namespace fmnist
