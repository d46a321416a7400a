// The fused NCHW batch-norm launch's tiling (src/cuda/batchnorm.cu, fused_nchw): how many
// tiles a channel is cut into, and at which steps each tile is summed and applied. Plain
// C++ (host-device), so the unit tests check their invariants on machines without a GPU:
// a rule that broke them hung the GPU.
//
// The launch runs `grid` resident blocks; tile t = c Q + q (channel c, piece q) is taken
// at step t / grid by block t % grid, and a tile's apply waits for its whole channel's
// statistics. Its progress needs every channel's tiles within two consecutive steps,
// which Q <= grid guarantees.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/host_device.hpp"

namespace odnn::cuda {

// Tiles a channel of `nvec` vectors, C = `c` channels: a tile at most one round (`round`
// vectors) where that allows at most min(`max_tiles`, nvec, grid) tiles, and the launch at
// least `min_steps` steps; among up to twice the fewest tiles that allows, the count
// whose last step is fullest (C Q tiles over `grid` blocks a step). All arguments >= 1
// but min_steps >= 0.
inline int fused_tiles(int64_t c, int64_t nvec, int64_t round, int64_t grid, int64_t min_steps, int64_t max_tiles) {
    auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
    const int64_t qmax = std::min({max_tiles, nvec, grid});
    const int64_t qmin = std::clamp<int64_t>(std::max(ceil_div(nvec, round), ceil_div(min_steps * grid, c)), 1, qmax);
    int64_t best = qmin;
    double best_fill = 0.0;
    for (int64_t q = qmin; q <= std::min(2 * qmin, qmax); ++q) {
        const double fill = static_cast<double>(c * q) / static_cast<double>(ceil_div(c * q, grid) * grid);
        if (fill > best_fill + 1e-9) best_fill = fill, best = q;
    }
    return static_cast<int>(best);
}

// The launch's schedule. Statistics step j is tiles j grid .. j grid + grid - 1 (block b
// takes tile j grid + b); launch step i sums statistics step i and applies step i - lag
// (none where negative), so every apply comes after the steps that sum its channel (the
// unit tests check it).
ODNN_HD int64_t fused_stats_step(int64_t i) { return i; }
ODNN_HD int64_t fused_apply_step(int lag, int64_t i) { return i - lag; }
// Launch steps for stat_steps statistics steps (>= 1).
ODNN_HD int64_t fused_launch_steps(int lag, int64_t stat_steps) { return stat_steps + lag; }

}  // namespace odnn::cuda
