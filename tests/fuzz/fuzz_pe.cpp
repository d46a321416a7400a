// libFuzzer target: the PE/COFF reader (exports, imports, delay imports, version
// resource) and doctor's reading of a DLL on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "lib_inspect.hpp"
#include "pe_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace odnn_tool;
    const ByteView b(data, size);
    const PeFile f = parse_pe(b);
    size_t sink = f.exports.size() + f.export_dll_name.size();
    for (const PeImport& i : f.imports) sink += i.dll.size() + i.functions.size();
    uint32_t off;
    for (const PeSection& s : f.sections) sink += f.rva_to_offset(s.virtual_address, 1, &off);
    const LibraryInfo L = inspect_library_bytes(b, "cudnn64_9.dll");
    sink += L.versions.size() + L.exports.size();
    return static_cast<int>(sink & 0);
}
