#include "shimkeeper/store/elf_header.hpp"

#include "shimkeeper/util/fd.hpp"

#include <array>
#include <cerrno>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

namespace shimkeeper::store {

namespace {

constexpr std::size_t k_max_interpreter = 4096;
constexpr std::uint16_t k_max_program_headers = 4096;

// Reads an unsigned little- or big-endian integer of `size` bytes at `offset`.
std::uint64_t read_uint(const unsigned char* data, std::size_t size, bool little) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < size; ++i) {
        std::size_t index = little ? size - 1 - i : i;
        value = (value << 8) | data[index];
    }
    return value;
}

bool read_at(int fd, void* buffer, std::size_t size, std::uint64_t offset) {
    ssize_t n = ::pread(fd, buffer, size, static_cast<off_t>(offset));
    return n == static_cast<ssize_t>(size);
}

} // namespace

util::Expected<std::optional<ElfInfo>> read_elf_info(const std::filesystem::path& file) {
    util::Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io, "cannot open " + file.string(), errno));
    }
    std::array<unsigned char, 64> header{};
    ssize_t n = ::pread(fd.get(), header.data(), header.size(), 0);
    if (n < EI_NIDENT + 4 || header[EI_MAG0] != ELFMAG0 || header[EI_MAG1] != ELFMAG1 ||
        header[EI_MAG2] != ELFMAG2 || header[EI_MAG3] != ELFMAG3) {
        return std::nullopt;
    }
    ElfInfo info;
    const bool little = header[EI_DATA] == ELFDATA2LSB;
    info.is_64_bit = header[EI_CLASS] == ELFCLASS64;
    info.machine = static_cast<std::uint16_t>(read_uint(&header[18], 2, little));
    // Program headers: offsets differ between ELFCLASS32 and ELFCLASS64.
    const std::uint64_t phoff =
        info.is_64_bit ? read_uint(&header[32], 8, little) : read_uint(&header[28], 4, little);
    const std::size_t phentsize = read_uint(&header[info.is_64_bit ? 54 : 42], 2, little);
    const std::size_t phnum = read_uint(&header[info.is_64_bit ? 56 : 44], 2, little);
    if (n < 64 || phentsize < (info.is_64_bit ? 56u : 32u) || phnum > k_max_program_headers) {
        return info;
    }
    std::array<unsigned char, 56> phdr{};
    for (std::size_t i = 0; i < phnum; ++i) {
        if (!read_at(fd.get(), phdr.data(), info.is_64_bit ? 56 : 32, phoff + i * phentsize)) {
            break;
        }
        if (read_uint(phdr.data(), 4, little) != PT_INTERP) {
            continue;
        }
        std::uint64_t offset =
            info.is_64_bit ? read_uint(&phdr[8], 8, little) : read_uint(&phdr[4], 4, little);
        std::uint64_t size =
            info.is_64_bit ? read_uint(&phdr[32], 8, little) : read_uint(&phdr[16], 4, little);
        if (size == 0 || size > k_max_interpreter) {
            break;
        }
        std::string interpreter(size, '\0');
        if (read_at(fd.get(), interpreter.data(), size, offset)) {
            interpreter.resize(interpreter.find('\0') == std::string::npos
                                   ? interpreter.size()
                                   : interpreter.find('\0'));
            info.interpreter = interpreter;
        }
        break;
    }
    return info;
}

std::uint16_t native_elf_machine() {
#if defined(__x86_64__)
    return EM_X86_64;
#elif defined(__aarch64__)
    return EM_AARCH64;
#elif defined(__i386__)
    return EM_386;
#elif defined(__arm__)
    return EM_ARM;
#elif defined(__riscv)
    return EM_RISCV;
#elif defined(__powerpc64__)
    return EM_PPC64;
#elif defined(__s390x__)
    return EM_S390;
#elif defined(__loongarch__)
    return EM_LOONGARCH;
#else
#error "add this architecture's e_machine to native_elf_machine()"
#endif
}

std::string elf_machine_name(std::uint16_t machine) {
    switch (machine) {
    case EM_X86_64:
        return "x86_64";
    case EM_AARCH64:
        return "aarch64";
    case EM_386:
        return "i386";
    case EM_ARM:
        return "arm";
    case EM_RISCV:
        return "riscv64";
    case EM_PPC64:
        return "ppc64le";
    case EM_S390:
        return "s390x";
    case EM_LOONGARCH:
        return "loongarch64";
    case EM_MIPS:
        return "mips";
    default:
        return "ELF machine " + std::to_string(machine);
    }
}

} // namespace shimkeeper::store
