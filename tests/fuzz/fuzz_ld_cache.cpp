// libFuzzer target: the ld.so.cache reader (both glibc formats) on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const odnn_tool::LdCache c = odnn_tool::parse_ld_cache(data, size);
    size_t sink = 0;
    for (const auto& e : c.entries) sink += e.name.size() + e.path.size() + odnn_tool::cache_entry_matches_host(e);
    return static_cast<int>(sink & 0);
}
