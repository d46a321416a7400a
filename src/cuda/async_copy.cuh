// Ampere-class asynchronous copies from global to shared memory (cp.async, sm_80 and
// later): 4, 8 or 16 bytes a thread, bypassing registers; a thread waits for its own
// copies (commit groups), a barrier then makes every thread's copies visible.
#pragma once

#include <cstdint>

namespace odnn::cuda {

// dst: a shared-memory address (__cvta_generic_to_shared); both addresses aligned to the size.
__device__ __forceinline__ void cp_async4(uint32_t dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async8(uint32_t dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(dst), "l"(src) : "memory");
}
// 16 bytes, not kept in L1.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
// C bytes (16, 8 or 4).
template <int C>
__device__ __forceinline__ void cp_async(uint32_t dst, const void* src) {
    static_assert(C == 16 || C == 8 || C == 4, "cp.async copies 4, 8 or 16 bytes");
    if constexpr (C == 16)
        cp_async16(dst, src);
    else if constexpr (C == 8)
        cp_async8(dst, src);
    else
        cp_async4(dst, src);
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
// Closes this thread's copies issued since the last commit into a group.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's groups are pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace odnn::cuda
