// Finding a file in an image's layers, on real tar layers (plain, gzip, zstd) made by tar(1):
// found, absent, deleted by a whiteout or an opaque directory, hidden behind a parent that is no
// longer a directory, and a link refused.
#include "shimkeeper/fetch/oci/layer_search.hpp"

#include "support/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace shimkeeper::fetch::oci {
namespace {
namespace fetch_oci_layers {

namespace fs = std::filesystem;

class FetchOciLayers : public shimkeeper::testing::TempDirTest {
protected:
    // A layer from the files given ("path" -> content; content "->target" makes a symlink,
    // "/" a directory), compressed with `flag` ("", "-z", "--zstd").
    fs::path layer(const std::map<std::string, std::string>& files,
                   const std::string& flag = "-z") {
        fs::path tree = m_dir / ("tree" + std::to_string(m_count));
        fs::path out = m_dir / ("layer" + std::to_string(m_count++));
        fs::create_directories(tree);
        for (const auto& [path, content] : files) {
            fs::create_directories((tree / path).parent_path());
            if (content == "/") {
                fs::create_directories(tree / path);
            } else if (content.starts_with("->")) {
                fs::create_symlink(content.substr(2), tree / path);
            } else {
                std::ofstream(tree / path) << content;
            }
        }
        std::string command =
            "tar " + flag + " -C " + tree.string() + " -cf " + out.string() + " .";
        EXPECT_EQ(std::system(command.c_str()), 0) << command;
        return out;
    }

    util::Expected<LayerSearch> search(const fs::path& blob, std::string& content) {
        auto out = PartialFile::create(m_dir);
        EXPECT_TRUE(out);
        auto result = search_layer(blob, "usr/bin/shim", *out, 1 << 20);
        if (result && result->verdict == LayerVerdict::found) {
            std::ifstream in(out->path());
            std::stringstream text;
            text << in.rdbuf();
            content = text.str();
        }
        return result;
    }

    int m_count = 0;
};

TEST_F(FetchOciLayers, FoundInEveryCompression) {
    for (std::string flag : {"", "-z", "--zstd"}) {
        std::string content;
        auto result = search(layer({{"usr/bin/shim", "binary " + flag}}, flag), content);
        ASSERT_TRUE(result) << result.error().message();
        EXPECT_EQ(result->verdict, LayerVerdict::found) << flag;
        EXPECT_EQ(content, "binary " + flag);
    }
}

TEST_F(FetchOciLayers, SilentLayersAreAbsent) {
    std::string content;
    auto result = search(layer({{"usr/bin/other", "x"}, {"usr/bin/shim.d", "/"}}), content);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->verdict, LayerVerdict::absent);
}

TEST_F(FetchOciLayers, WhiteoutsHideThePathOrAParent) {
    std::string content;
    auto file = search(layer({{"usr/bin/.wh.shim", ""}}), content);
    ASSERT_TRUE(file);
    EXPECT_EQ(file->verdict, LayerVerdict::hidden);
    EXPECT_EQ(file->reason, "the whiteout usr/bin/.wh.shim");

    auto parent = search(layer({{"usr/.wh.bin", ""}}), content);
    ASSERT_TRUE(parent);
    EXPECT_EQ(parent->verdict, LayerVerdict::hidden);

    auto opaque = search(layer({{"usr/bin/.wh..wh..opq", ""}, {"usr/bin/other", "x"}}), content);
    ASSERT_TRUE(opaque);
    EXPECT_EQ(opaque->verdict, LayerVerdict::hidden);
    EXPECT_EQ(opaque->reason, "the opaque whiteout usr/bin/.wh..wh..opq");

    auto replaced = search(layer({{"usr/bin", "now a file"}}), content);
    ASSERT_TRUE(replaced);
    EXPECT_EQ(replaced->verdict, LayerVerdict::hidden);
}

TEST_F(FetchOciLayers, AWhiteoutHidesOnlyLowerLayersNotItsOwn) {
    std::string content;
    auto result = search(layer({{"usr/bin/.wh..wh..opq", ""}, {"usr/bin/shim", "new"}}), content);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->verdict, LayerVerdict::found);
    EXPECT_EQ(content, "new");
}

TEST_F(FetchOciLayers, ALinkIsRefusedWithTheFix) {
    std::string content;
    auto result = search(layer({{"usr/bin/shim", "->real"}, {"usr/bin/real", "x"}}), content);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message(),
              "usr/bin/shim is a link in the layer; set fetch path to the file itself");
}

TEST_F(FetchOciLayers, NotATarIsAnError) {
    fs::path junk = m_dir / "junk";
    std::ofstream(junk) << "this is not a tar archive at all, not even close to one";
    std::string content;
    EXPECT_FALSE(search(junk, content));
}

} // namespace fetch_oci_layers
} // namespace
} // namespace shimkeeper::fetch::oci
