// Just enough ELF reading to explain, before and after exec, why a shim cannot run here:
// the machine it was built for, and the dynamic loader (PT_INTERP) it needs.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace shimkeeper::store {

struct ElfInfo {
    std::uint16_t machine = 0; // e_machine (EM_X86_64, EM_AARCH64, ...)
    bool is_64_bit = false;
    std::optional<std::string> interpreter; // PT_INTERP, absent for static binaries
};

// nullopt when the file does not start with the ELF magic; an error when it cannot be read.
util::Expected<std::optional<ElfInfo>> read_elf_info(const std::filesystem::path& file);

// e_machine of the binaries this node runs natively (the one shimkeeper was built for).
std::uint16_t native_elf_machine();

// "x86_64", "aarch64", ... or "ELF machine 1234".
std::string elf_machine_name(std::uint16_t machine);

} // namespace shimkeeper::store
