// A read-only view of bytes with bounds-checked reads: the ELF and PE readers take
// every offset and count from the file itself, so nothing is trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace odnn_tool {

class ByteView {
public:
    ByteView() = default;
    ByteView(const uint8_t* data, size_t size) : data_(data), size_(size) {}

    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }

    // True when [off, off + len) lies inside the view (overflow-safe).
    bool has(uint64_t off, uint64_t len) const { return off <= size_ && len <= size_ - off; }

    // Little- or big-endian unsigned integers of 1..8 bytes; false when out of range.
    bool uint(uint64_t off, unsigned bytes, bool big_endian, uint64_t* out) const {
        if (bytes == 0 || bytes > 8 || !has(off, bytes)) return false;
        uint64_t v = 0;
        for (unsigned i = 0; i < bytes; ++i) {
            const uint64_t b = data_[off + (big_endian ? i : bytes - 1 - i)];
            v = (v << 8) | b;
        }
        *out = v;
        return true;
    }
    bool u8(uint64_t off, uint8_t* out) const {
        if (!has(off, 1)) return false;
        *out = data_[off];
        return true;
    }
    bool u16le(uint64_t off, uint16_t* out) const {
        uint64_t v;
        if (!uint(off, 2, false, &v)) return false;
        *out = static_cast<uint16_t>(v);
        return true;
    }
    bool u32le(uint64_t off, uint32_t* out) const {
        uint64_t v;
        if (!uint(off, 4, false, &v)) return false;
        *out = static_cast<uint32_t>(v);
        return true;
    }
    bool u64le(uint64_t off, uint64_t* out) const { return uint(off, 8, false, out); }

    // A NUL-terminated string starting at off, at most max_len bytes long. Returns
    // false when off is outside the view or no NUL comes within max_len bytes / the view.
    bool cstr(uint64_t off, std::string* out, size_t max_len = 4096) const {
        if (off >= size_) return false;
        const size_t avail = size_ - static_cast<size_t>(off);
        const size_t lim = avail < max_len ? avail : max_len;
        const uint8_t* p = data_ + off;
        for (size_t i = 0; i < lim; ++i) {
            if (p[i] == 0) {
                out->assign(reinterpret_cast<const char*>(p), i);
                return true;
            }
        }
        return false;
    }

    ByteView sub(uint64_t off, uint64_t len) const {
        if (!has(off, len)) return ByteView();
        return ByteView(data_ + off, static_cast<size_t>(len));
    }

private:
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace odnn_tool
