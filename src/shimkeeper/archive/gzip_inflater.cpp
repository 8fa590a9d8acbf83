#include "shimkeeper/archive/gzip_inflater.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <unistd.h>

namespace shimkeeper::archive {

namespace fs = std::filesystem;

namespace {

// Reads of the compressed file, and the inflated blocks handed to libarchive: igzip is fastest
// with an output buffer of a few hundred KiB, and both stay a fixed size whatever the artifact.
constexpr std::size_t k_in_size = 128 * 1024;
constexpr std::size_t k_out_size = 256 * 1024;

const char* isal_problem(int status) {
    switch (status) {
    case ISAL_INVALID_BLOCK:
        return "an invalid deflate block";
    case ISAL_INVALID_SYMBOL:
        return "an invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
        return "a back-reference before the start of the data";
    case ISAL_INVALID_WRAPPER:
        return "an invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
        return "a compression method other than deflate";
    case ISAL_INCORRECT_CHECKSUM:
        return "a CRC-32 that does not match its data";
    default:
        return "an error igzip does not name";
    }
}

la_ssize_t read_inflated(struct archive* reader, void* data, const void** block) {
    auto* inflater = static_cast<GzipInflater*>(data);
    auto next = inflater->next_block();
    if (!next) {
        archive_set_error(reader, EBADMSG, "%s", next.error().message().c_str());
        return ARCHIVE_FATAL;
    }
    *block = next->data();
    return static_cast<la_ssize_t>(next->size());
}

} // namespace

bool is_gzip_magic(const std::string& magic) {
    return magic.starts_with("\x1f\x8b\x08");
}

GzipInflater::GzipInflater(fs::path file, util::Fd fd)
    : m_file(std::move(file)), m_fd(std::move(fd)), m_in(k_in_size), m_out(k_out_size),
      m_state(std::make_unique<inflate_state>()) {
    isal_inflate_init(m_state.get());
    m_state->crc_flag = ISAL_GZIP; // igzip reads the header and checks the trailer's CRC and size
    m_state->next_in = m_in.data();
    m_state->avail_in = 0;
}

GzipInflater::~GzipInflater() = default;

util::Expected<std::unique_ptr<GzipInflater>> GzipInflater::open(const fs::path& file) {
    util::Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot open artifact " + file.string(), errno));
    }
    return std::unique_ptr<GzipInflater>(new GzipInflater(file, std::move(fd)));
}

int GzipInflater::attach(struct archive* reader) {
    return archive_read_open(reader, this, nullptr, read_inflated, nullptr);
}

util::Expected<bool> GzipInflater::refill() {
    if (m_end_of_file) {
        return false;
    }
    std::size_t left = m_state->avail_in;
    if (left == m_in.size()) {
        return true; // full: nothing to read yet
    }
    std::memmove(m_in.data(), m_state->next_in, left);
    m_state->next_in = m_in.data();
    for (;;) {
        ssize_t n = ::read(m_fd.get(), m_in.data() + left, m_in.size() - left);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return std::unexpected(util::Error::from_errno(
                util::ErrorCode::io, "cannot read artifact " + m_file.string(), errno));
        }
        m_state->avail_in = static_cast<std::uint32_t>(left + static_cast<std::size_t>(n));
        m_end_of_file = n == 0;
        return n > 0;
    }
}

// After a member's trailer: another member follows only if its header does.
util::Expected<bool> GzipInflater::next_member_follows() {
    if (m_state->avail_in < 3) {
        TRY(refill());
    }
    const std::string head(reinterpret_cast<const char*>(m_state->next_in),
                           std::min<std::size_t>(m_state->avail_in, 3));
    return is_gzip_magic(head);
}

util::Error GzipInflater::corrupt(int isal_status) const {
    return util::Error(util::ErrorCode::archive,
                       "not valid gzip data: " + std::string(isal_problem(isal_status)) +
                           " within its first " + std::to_string(m_consumed) + " compressed bytes");
}

util::Expected<std::span<const unsigned char>> GzipInflater::next_block() {
    auto failed = [this](util::Error error) {
        m_failure = error;
        return std::unexpected(std::move(error));
    };
    if (m_done) {
        return std::span<const unsigned char>();
    }
    m_state->next_out = m_out.data();
    m_state->avail_out = static_cast<std::uint32_t>(m_out.size());
    while (m_state->avail_out == m_out.size()) {
        if (m_state->block_state == ISAL_BLOCK_FINISH) {
            auto follows = next_member_follows();
            if (!follows) {
                return failed(follows.error());
            }
            if (!*follows) {
                m_done = true;
                break;
            }
            // A reset forgets the input and output too: both are given back.
            unsigned char* in = m_state->next_in;
            std::uint32_t avail = m_state->avail_in;
            isal_inflate_reset(m_state.get());
            m_state->crc_flag = ISAL_GZIP;
            m_state->next_in = in;
            m_state->avail_in = avail;
            m_state->next_out = m_out.data();
            m_state->avail_out = static_cast<std::uint32_t>(m_out.size());
        }
        if (m_state->avail_in == 0 && !m_end_of_file) {
            auto more = refill();
            if (!more) {
                return failed(more.error());
            }
        }
        std::uint32_t before = m_state->avail_in;
        int status = isal_inflate(m_state.get());
        m_consumed += before - m_state->avail_in;
        if (status < 0) {
            return failed(corrupt(status));
        }
        // igzip returns with output room left only once it has used all its input (or the
        // member ended): with none to come and nothing made, the member cannot end.
        if (m_end_of_file && m_state->avail_in == 0 && m_state->avail_out == m_out.size() &&
            m_state->block_state != ISAL_BLOCK_FINISH) {
            return failed(util::Error(util::ErrorCode::archive,
                                      "the gzip data ends after " + std::to_string(m_consumed) +
                                          " compressed bytes, before its end: the file is "
                                          "truncated"));
        }
    }
    return std::span<const unsigned char>(m_out.data(), m_out.size() - m_state->avail_out);
}

} // namespace shimkeeper::archive
