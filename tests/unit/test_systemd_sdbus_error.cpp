// What a user reads when systemd refuses: D-Bus error names kept, not-found mapped, hints given;
// and the job result strings of JobRemoved.
#include "shimkeeper/systemd/manager.hpp"
#include "shimkeeper/systemd/sdbus_error.hpp"

#include <cerrno>
#include <gtest/gtest.h>

namespace shimkeeper::systemd {
namespace {
namespace systemd_sdbus_error {

TEST(SdBusError, NoSuchUnitIsNotFoundAndNamesTheUnitAndTheSetting) {
    BusError error;
    sd_bus_error_set(error.get(), "org.freedesktop.systemd1.NoSuchUnit",
                     "Unit contianerd.service not found.");
    const auto e = bus_error("RestartUnit(contianerd.service, replace)", -ENOENT, error);
    EXPECT_EQ(e.code(), util::ErrorCode::not_found);
    EXPECT_NE(e.message().find("org.freedesktop.systemd1.NoSuchUnit"), std::string::npos);
    EXPECT_NE(e.message().find("Unit contianerd.service not found."), std::string::npos);
    EXPECT_NE(e.message().find("[containerd] unit"), std::string::npos) << e.message();
}

TEST(SdBusError, AccessDeniedSuggestsRootOrTheUserBus) {
    BusError error;
    sd_bus_error_set(error.get(), "org.freedesktop.DBus.Error.AccessDenied", "Access denied");
    const auto e = bus_error("ResetFailedUnit(containerd.service)", -EACCES, error);
    EXPECT_EQ(e.code(), util::ErrorCode::external);
    EXPECT_NE(e.message().find("bus = \"user\""), std::string::npos) << e.message();
}

TEST(SdBusError, WithoutADBusErrorTheErrnoIsExplained) {
    const BusError none;
    const auto e = bus_error("connecting to the system bus", -ECONNREFUSED, none);
    EXPECT_EQ(e.sys_errno(), ECONNREFUSED);
    EXPECT_NE(e.message().find("Connection refused"), std::string::npos) << e.message();
}

TEST(JobResultText, RoundTripsEveryResult) {
    for (const auto result : {JobResult::done, JobResult::canceled, JobResult::timeout,
                              JobResult::failed, JobResult::dependency, JobResult::skipped}) {
        EXPECT_EQ(parse_job_result(to_string(result)), result) << to_string(result);
    }
    EXPECT_EQ(parse_job_result("invalid"), JobResult::failed);
    EXPECT_EQ(parse_job_result("bogus"), std::nullopt);
}

} // namespace systemd_sdbus_error
} // namespace
} // namespace shimkeeper::systemd
