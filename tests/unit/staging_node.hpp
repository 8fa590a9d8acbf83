// A node under a temporary root for the staging tests (stage_ahead, background_staging): an
// empty containerd config, agent settings pointing at it, its detection and its store. A test
// fixture derives from it; the folder is removed unless the test failed.
#pragma once

#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/sha256.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>

namespace shimkeeper::testing {

class StagingNode {
protected:
    explicit StagingNode(const std::string& prefix)
        : m_dir(util::make_temp_dir(std::filesystem::temp_directory_path(), prefix).value()),
          m_root(m_dir / "root") {
        std::filesystem::create_directories(m_dir / "root/etc/containerd");
        util::write_file_atomic(m_dir / "root/etc/containerd/config.toml", "version = 2\n").value();
        m_settings.store.dir = "/var/lib/shimkeeper";
        m_settings.containerd.config_path = "/etc/containerd/config.toml";
        m_settings.containerd.unit = "containerd.service";
        m_detection = containerd::detect(m_root, m_settings.containerd).value();
    }
    ~StagingNode() {
        if (!::testing::Test::HasFailure()) {
            std::filesystem::remove_all(m_dir);
        }
    }

    // A Shim `name` whose artifact, a tiny executable written to `artifact`, is fetched from
    // `url` and pinned by its sha256.
    static spec::ShimSpec pinned_shim(const std::string& name,
                                      const std::filesystem::path& artifact,
                                      const std::string& url) {
        EXPECT_TRUE(util::write_file_atomic(artifact, "#!/bin/sh\necho " + name + "\n", 0755));
        spec::ShimSpec s;
        s.name = name;
        s.handler = name;
        s.runtime_type = "io.containerd." + name + ".v2";
        s.binary = "containerd-shim-" + name + "-v2";
        s.fetch.url = url;
        s.fetch.sha256 = util::sha256_file_hex(artifact).value();
        return s;
    }

    std::filesystem::path m_dir;
    util::HostRoot m_root;
    spec::AgentSettings m_settings;
    containerd::Detection m_detection;
    store::Store m_store{m_root, "/var/lib/shimkeeper"};
};

} // namespace shimkeeper::testing
