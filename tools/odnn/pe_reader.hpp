// A small PE/COFF reader for Windows DLLs: headers, sections, the export table
// (DLL name and exported names), imports and delay-load imports (DLL names), and
// the fixed file version from the version resource. Bounds-checked throughout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "byte_view.hpp"

namespace odnn_tool {

struct PeSection {
    std::string name;
    uint32_t virtual_size = 0, virtual_address = 0, raw_size = 0, raw_offset = 0, characteristics = 0;
};

struct PeImport {
    std::string dll;
    bool delay_load = false;
    std::vector<std::string> functions;  // by name; ordinal imports are "#<n>"
};

struct PeFile {
    bool ok = false;
    std::string error;
    std::vector<std::string> problems;

    uint16_t machine = 0;  // 0x8664 x64, 0x14c i386, 0xaa64 arm64
    uint16_t characteristics = 0;
    bool is_dll = false;
    bool pe32_plus = false;
    uint64_t image_base = 0;
    uint64_t file_size = 0;
    std::vector<PeSection> sections;

    std::string export_dll_name;
    std::vector<std::string> exports;  // exported names
    uint32_t export_functions = 0;     // NumberOfFunctions (names + ordinals only)

    std::vector<PeImport> imports;

    bool has_file_version = false;
    uint16_t file_version[4] = {0, 0, 0, 0};  // e.g. 9.19.0.56
    bool has_product_version = false;
    uint16_t product_version[4] = {0, 0, 0, 0};

    bool rva_to_offset(uint32_t rva, uint32_t len, uint32_t* off) const;
    const char* machine_name() const;
};

struct PeLimits {
    uint32_t max_sections = 96;  // the Windows loader's limit
    uint32_t max_names = 1u << 20;
    uint32_t max_imports = 4096;
    uint32_t max_functions_per_import = 1u << 16;
};

bool looks_like_pe(ByteView bytes);
PeFile parse_pe(ByteView bytes, const PeLimits& limits = PeLimits());

}  // namespace odnn_tool
