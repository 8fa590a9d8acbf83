// The image's containerd version from a dpkg status file's text (bake), without running it.
#include "shimkeeper/containerd/package_version.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::containerd {
namespace {
namespace containerd_package_version {

constexpr const char* k_status = "Package: containerd-doc\n"
                                 "Status: install ok installed\n"
                                 "Version: 9.9.9\n"
                                 "\n"
                                 "Package: containerd\n"
                                 "Status: install ok installed\n"
                                 "Priority: optional\n"
                                 "Version: 1.6.20~ds1-1+deb12u1\n"
                                 "Description: daemon\n"
                                 " Version: 7.7.7 (a continuation line is not a field)\n"
                                 "\n";

TEST(DpkgContainerd, TheInstalledContainerdStanzaGivesTheVersion) {
    auto found = dpkg_containerd(k_status, "status").value();
    ASSERT_TRUE(found);
    EXPECT_EQ(found->package, "containerd");
    EXPECT_EQ(found->version, "1.6.20~ds1-1+deb12u1");
    EXPECT_EQ(found->parsed, (ContainerdVersion{1, 6, 20}));
}

TEST(DpkgContainerd, DockersContainerdIoWithAnEpoch) {
    auto found = dpkg_containerd("Package: containerd.io\nVersion: 1:1.7.22-1\nStatus: install ok "
                                 "installed\n",
                                 "status")
                     .value();
    ASSERT_TRUE(found);
    EXPECT_EQ(found->parsed, (ContainerdVersion{1, 7, 22}));
}

TEST(DpkgContainerd, RemovedOrAbsentIsNone) {
    EXPECT_FALSE(dpkg_containerd("Package: containerd\nStatus: deinstall ok config-files\n"
                                 "Version: 1.6.20~ds1-1\n",
                                 "status")
                     .value());
    EXPECT_FALSE(
        dpkg_containerd("Package: runc\nStatus: install ok installed\nVersion: 1.1.5\n", "status")
            .value());
    EXPECT_FALSE(dpkg_containerd("", "status").value());
}

TEST(DpkgContainerd, AVersionWithoutXYZIsAnErrorNamingFileAndPackage) {
    auto found = dpkg_containerd("Package: containerd\nStatus: install ok installed\n"
                                 "Version: git-snapshot\n",
                                 "/img/var/lib/dpkg/status");
    ASSERT_FALSE(found);
    EXPECT_EQ(found.error().code(), util::ErrorCode::invalid_input);
    EXPECT_NE(found.error().message().find("/img/var/lib/dpkg/status: package containerd has "
                                           "Version \"git-snapshot\""),
              std::string::npos)
        << found.error().message();
}

} // namespace containerd_package_version
} // namespace
} // namespace shimkeeper::containerd
