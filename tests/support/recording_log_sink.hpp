// A LogSink for logic tests: keeps every record, so a test can assert on the fields a record
// carries (what the journal would index) without a journal.
#pragma once

#include "shimkeeper/util/log.hpp"

#include <memory>
#include <string>
#include <vector>

namespace shimkeeper::testing {

class RecordingLogSink final : public util::LogSink {
public:
    void write(const util::LogRecord& record) override { records.push_back(record); }

    // The records whose SHIM field is `shim`.
    std::vector<util::LogRecord> about_shim(const std::string& shim) const {
        std::vector<util::LogRecord> found;
        for (const auto& record : records) {
            if (record.fields.shim == shim) {
                found.push_back(record);
            }
        }
        return found;
    }

    std::vector<util::LogRecord> records;
};

} // namespace shimkeeper::testing
