// libFuzzer target: the ELF reader and everything doctor derives from an ELF file
// (versions, exported API, names of run-time dependencies) on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "elf_reader.hpp"
#include "lib_inspect.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace odnn_tool;
    const ByteView b(data, size);
    ElfLimits lim;
    lim.max_symbols = 1u << 16;  // keep each input fast; the limits themselves are tested by the caps
    const ElfFile f = parse_elf(b, lim);
    size_t sink = 0;
    for (const ElfSymbol& s : f.dynsyms) {
        uint64_t off;
        sink += s.name.size() + s.version.size();
        if (f.vaddr_to_offset(s.value, s.size, &off)) sink += off & 1;
    }
    for (const ElfSection& s : f.sections) sink += s.name.size();
    sink += f.find_dynsym("cudnnGetVersion") != nullptr;
    const LibraryInfo L = inspect_library_bytes(b, "libcudnn_graph.so.9");
    sink += L.versions.size() + L.exports.size() + L.runtime_deps.size();
    return static_cast<int>(sink & 0);
}
