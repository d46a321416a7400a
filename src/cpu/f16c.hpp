// HALF <-> FLOAT conversion of whole buffers with the x86 F16C instructions (vcvtph2ps /
// vcvtps2ph), for the CPU fast paths' HALF loops. The scalar conversions
// (core::half_to_float / float_to_half) branch on every element, and where a loop selects
// between values (ReLU, clipping) GCC merges the select into those branches: random-sign
// data then mispredicts one branch an element (docs/PERFORMANCE.md). The block forms here
// give the same bits as the scalar ones for every input, NaNs included (half NaN -> the
// quiet float NaN of its sign; float NaN -> 0x7e00), so a kernel may take either.
//
// The instructions live in f16c_convert.cpp alone, compiled with -mf16c: nothing else of
// the library is built for AVX, and that file defines only these functions (no inline or
// template code that another object could share). Call them only where usable() is true.
#pragma once

#include <cstdint>

namespace odnn::cpu::f16c {

// Whether this CPU has F16C (and the AVX state it needs) and ODNN_CPU_F16C is not "off"
// (the knob compares the scalar path). Read once.
bool usable();

// f[i] = core::half_to_float(h[i]) for i < n.
void to_float(const uint16_t* h, float* f, int64_t n);

// h[i] = core::float_to_half(f[i]) for i < n (round to nearest even).
void to_half(const float* f, uint16_t* h, int64_t n);

}  // namespace odnn::cpu::f16c
