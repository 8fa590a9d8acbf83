// One test per refusal of a [[shim]] entry: each asserts the message names the place
// (file:line:column) and the problem, the way a user reads it.
#include "shimkeeper/spec/desired_state.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::spec {
namespace {
namespace spec_shim_errors {

const std::string k_digest(64, 'a');

// Line numbers below refer to this text: line 1 is [[shim]], line 5 is [shim.fetch].
std::string base_shim() {
    return "[[shim]]\n"
           "name = \"spin-v2\"\n"
           "handler = \"spin\"\n"
           "runtime_type = \"io.containerd.spin.v2\"\n"
           "[shim.fetch]\n"
           "url = \"https://example.org/spin.tar.gz\"\n"
           "sha256 = \"" +
           k_digest + "\"\n";
}

// base_shim() with `line` (1-based) replaced by `text` ("" deletes it).
std::string with_line(int line, const std::string& text) {
    std::string base = base_shim();
    std::string out;
    int current = 1;
    std::size_t start = 0;
    while (start < base.size()) {
        std::size_t end = base.find('\n', start);
        if (current == line) {
            out += text.empty() ? "" : text + "\n";
        } else {
            out += base.substr(start, end - start + 1);
        }
        start = end + 1;
        ++current;
    }
    return out;
}

std::string error_of(const std::string& text) {
    auto state = parse_desired_state_text(text, "f.toml", "amd64", false);
    if (state) {
        ADD_FAILURE() << "accepted:\n" << text;
        return {};
    }
    EXPECT_EQ(state.error().code(), util::ErrorCode::invalid_input);
    return state.error().message();
}

TEST(SpecShimErrors, BaseShimIsAccepted) {
    EXPECT_TRUE(parse_desired_state_text(base_shim(), "f.toml", "amd64", false));
}

TEST(SpecShimErrors, TomlSyntaxError) {
    EXPECT_TRUE(error_of("[[shim]\n").starts_with("f.toml:1:8: invalid TOML: "))
        << error_of("[[shim]\n");
}

TEST(SpecShimErrors, UnknownShimKeySuggestsClosest) {
    EXPECT_EQ(error_of(with_line(3, "hander = \"spin\"")),
              "f.toml:3:1: unknown key 'hander' in [[shim]]; did you mean 'handler'?");
}

TEST(SpecShimErrors, UnknownKeySpelledInCamelCaseSuggestsSnakeCase) {
    EXPECT_EQ(error_of(with_line(4, "runtimeType = \"io.containerd.spin.v2\"")),
              "f.toml:4:1: unknown key 'runtimeType' in [[shim]]; did you mean 'runtime_type'?");
}

TEST(SpecShimErrors, UnknownFetchKeySuggestsClosest) {
    EXPECT_EQ(error_of(with_line(7, "sha265 = \"" + k_digest + "\"")),
              "f.toml:7:1: unknown key 'sha265' in [shim.fetch]; did you mean 'sha256'?");
}

TEST(SpecShimErrors, UnknownKeyWithNothingCloseListsValidKeys) {
    EXPECT_EQ(error_of(base_shim() + "[shim.runtime_class]\nname = \"rc\"\ncolour = \"red\"\n"),
              "f.toml:10:1: unknown key 'colour' in [shim.runtime_class]; valid keys here: name");
}

TEST(SpecShimErrors, FirstUnknownKeyInTheFileIsReported) {
    EXPECT_EQ(error_of(with_line(2, "zzz = 1\nname = \"spin-v2\"\naaa = 2")),
              "f.toml:2:1: unknown key 'zzz' in [[shim]]; valid keys here: name handler "
              "runtime_type binary version options allow_unverified adopt fetch runtime_class");
}

TEST(SpecShimErrors, UnknownTopLevelKeySuggestsShim) {
    EXPECT_EQ(error_of("[[shims]]\nname = \"x\"\n"),
              "f.toml:1:3: unknown key 'shims' in the top level; did you mean 'shim'?");
}

TEST(SpecShimErrors, ShimAsPlainTableIsRefused) {
    EXPECT_EQ(error_of("[shim]\nname = \"x\"\n"),
              "f.toml:1:1: 'shim' must be an array of tables: write [[shim]] (two brackets) "
              "before each shim");
}

TEST(SpecShimErrors, MissingName) {
    EXPECT_EQ(error_of(with_line(2, "")),
              "f.toml:1:1: [[shim]] is missing required key 'name'; add e.g. name = \"spin-v2\"");
}

TEST(SpecShimErrors, MissingHandler) {
    EXPECT_EQ(
        error_of(with_line(3, "")),
        "f.toml:1:1: [[shim]] is missing required key 'handler'; add e.g. handler = \"spin\"");
}

TEST(SpecShimErrors, MissingRuntimeType) {
    EXPECT_EQ(error_of(with_line(4, "")),
              "f.toml:1:1: [[shim]] is missing required key 'runtime_type'; add e.g. "
              "runtime_type = \"io.containerd.spin.v2\"");
}

TEST(SpecShimErrors, MissingFetch) {
    EXPECT_EQ(error_of("[[shim]]\nname = \"a\"\nhandler = \"a\"\nruntime_type = "
                       "\"io.containerd.a.v2\"\n"),
              "f.toml:1:1: [[shim]] 'a' has no [shim.fetch]; add [shim.fetch] with url and "
              "sha256, or [[shim.fetch.platform]] entries");
}

TEST(SpecShimErrors, MissingUrl) {
    EXPECT_EQ(error_of(with_line(6, "")),
              "f.toml:5:1: [shim.fetch] needs url (with sha256) or oci (a pinned reference), or "
              "one [[shim.fetch.platform]] entry per architecture");
}

TEST(SpecShimErrors, MissingSha256WithoutAllowUnverified) {
    EXPECT_EQ(error_of(with_line(7, "")),
              "f.toml:5:1: [shim.fetch] has no sha256, so the download could not be verified; "
              "add sha256 = \"<64 hex digits from sha256sum>\", or set allow_unverified = true "
              "in the [[shim]] to accept an unverified download");
}

TEST(SpecShimErrors, NameOfWrongType) {
    EXPECT_EQ(error_of(with_line(2, "name = 5")),
              "f.toml:2:8: 'name' in [[shim]] must be a string, not an integer");
}

TEST(SpecShimErrors, AllowUnverifiedOfWrongType) {
    EXPECT_EQ(error_of(with_line(2, "name = \"spin-v2\"\nallow_unverified = \"yes\"")),
              "f.toml:3:20: 'allow_unverified' in [[shim]] must be a boolean (true or false), "
              "not a string");
}

TEST(SpecShimErrors, AdoptOfWrongType) {
    EXPECT_EQ(error_of(with_line(2, "name = \"spin-v2\"\nadopt = 1")),
              "f.toml:3:9: 'adopt' in [[shim]] must be a boolean (true or false), not an integer");
}

TEST(SpecShimErrors, OptionsThatAreNotATable) {
    EXPECT_EQ(error_of(with_line(2, "name = \"spin-v2\"\noptions = \"SystemdCgroup\"")),
              "f.toml:3:11: 'options' in [[shim]] must be a table (e.g. options = { "
              "SystemdCgroup = true }), not a string");
}

TEST(SpecShimErrors, OptionsKeysAreNotValidated) {
    auto state = parse_desired_state_text(
        with_line(2, "name = \"spin-v2\"\noptions = { anything_goes = [1, 2], X = { y = 1 } }"),
        "f.toml", "amd64", false);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_TRUE(state->shims[0].options.contains("anything_goes"));
}

TEST(SpecShimErrors, FetchAsArrayOfTables) {
    EXPECT_EQ(error_of(with_line(5, "[[shim.fetch]]")),
              "f.toml:5:1: 'fetch' in [[shim]] must be a table ([shim.fetch] with url and "
              "sha256), not an array");
}

TEST(SpecShimErrors, UppercaseNameExplainsWhy) {
    EXPECT_EQ(error_of(with_line(2, "name = \"Spin\"")),
              "f.toml:2:8: 'name' in [[shim]] is \"Spin\": it must match "
              "[a-z0-9]([-a-z0-9._]*[a-z0-9])? (lowercase letters, digits, '-', '.', '_'; "
              "starting and ending with a letter or digit) and be at most 63 characters, because "
              "it names the shim's files in the store and its node label "
              "shim.containerd.x-k8s.io/<name>");
}

TEST(SpecShimErrors, NameLongerThan63) {
    std::string message = error_of(with_line(2, "name = \"" + std::string(64, 'a') + "\""));
    EXPECT_TRUE(message.starts_with("f.toml:2:8: 'name' in [[shim]] is \"aaaa")) << message;
    EXPECT_NE(message.find("at most 63 characters"), std::string::npos) << message;
}

TEST(SpecShimErrors, HandlerEndingInDashExplainsWhy) {
    std::string message = error_of(with_line(3, "handler = \"spin-\""));
    EXPECT_TRUE(message.starts_with("f.toml:3:11: 'handler' in [[shim]] is \"spin-\": it must "
                                    "match [a-z0-9]([-a-z0-9._]*[a-z0-9])?"))
        << message;
    EXPECT_TRUE(message.ends_with("because it becomes a key in containerd's config and the "
                                  "handler of a RuntimeClass"))
        << message;
}

TEST(SpecShimErrors, RuntimeTypeOutsideTheGrammar) {
    for (std::string bad : {"io.containerd.Spin.v2", "io.containerd.spin", "io.containerd.spin.2",
                            "io.containerd..v2", "spin", "containerd-shim-spin-v2",
                            "io.containerd.spin.v2x", "org.example.spin.v2"}) {
        EXPECT_EQ(error_of(with_line(4, "runtime_type = \"" + bad + "\"")),
                  "f.toml:4:16: runtime_type must be io.containerd.<name>.<version> (lowercase "
                  "name such as 'spin' or 'kata-qemu', version such as 'v2') or the shim's "
                  "absolute path (got \"" +
                      bad + "\")");
    }
}

TEST(SpecShimErrors, RuntimeTypePathWithDotDot) {
    EXPECT_EQ(error_of(with_line(4, "runtime_type = \"/opt/../bin/containerd-shim-x-v2\"")),
              "f.toml:4:16: an absolute runtime_type must not contain '..' components (got "
              "\"/opt/../bin/containerd-shim-x-v2\")");
}

TEST(SpecShimErrors, RuntimeTypePathWithWhitespaceQuoteOrTrailingSlash) {
    EXPECT_NE(error_of(with_line(4, "runtime_type = \"/opt/my shim\"")).find("whitespace"),
              std::string::npos);
    EXPECT_NE(error_of(with_line(4, "runtime_type = \"/opt/it's\"")).find("quotes"),
              std::string::npos);
    EXPECT_NE(error_of(with_line(4, "runtime_type = \"/opt/bin/\"")).find("not a directory"),
              std::string::npos);
}

TEST(SpecShimErrors, BinaryWithSlash) {
    EXPECT_EQ(error_of(with_line(2, "name = \"spin-v2\"\nbinary = \"bin/shim\"")),
              "f.toml:3:10: binary must be a plain file name inside the archive, without '/' "
              "(got \"bin/shim\")");
}

TEST(SpecShimErrors, BinaryWithDotDotOrWhitespaceOrTooLong) {
    EXPECT_NE(error_of(with_line(2, "name = \"a\"\nbinary = \"..\"")).find("'..'"),
              std::string::npos);
    EXPECT_NE(error_of(with_line(2, "name = \"a\"\nbinary = \"my shim\"")).find("whitespace"),
              std::string::npos);
    EXPECT_NE(error_of(with_line(2, "name = \"a\"\nbinary = \"" + std::string(256, 'b') + "\""))
                  .find("longer than 255 bytes"),
              std::string::npos);
}

TEST(SpecShimErrors, VersionWithControlCharacter) {
    EXPECT_EQ(error_of(with_line(2, "name = \"spin-v2\"\nversion = \"1.0\\u0007\"")),
              "f.toml:3:11: version may only hold printable ASCII characters");
}

TEST(SpecShimErrors, UrlWithUnsupportedScheme) {
    EXPECT_EQ(error_of(with_line(6, "url = \"ftp://example.org/spin.tar.gz\"")),
              "f.toml:6:7: url scheme 'ftp' is not supported; use https://, http:// or file:// "
              "(in [shim.fetch])");
}

TEST(SpecShimErrors, UrlWithWhitespace) {
    EXPECT_EQ(error_of(with_line(6, "url = \"https://example.org/my shim.tar.gz\"")),
              "f.toml:6:7: url must not contain whitespace or control characters (percent-encode "
              "them) (in [shim.fetch])");
}

TEST(SpecShimErrors, UrlWithoutSchemeOrHost) {
    EXPECT_NE(error_of(with_line(6, "url = \"example.org/x\"")).find("url has no scheme"),
              std::string::npos);
    EXPECT_NE(error_of(with_line(6, "url = \"https:///x\"")).find("url has no host"),
              std::string::npos);
    EXPECT_NE(error_of(with_line(6, "url = \"file://x.tar\"")).find("file:///path"),
              std::string::npos);
}

TEST(SpecShimErrors, Sha256OfWrongLength) {
    EXPECT_EQ(error_of(with_line(7, "sha256 = \"abc\"")),
              "f.toml:7:10: 'sha256' in [shim.fetch] must be exactly 64 hexadecimal digits (the "
              "output of sha256sum on the archive), got \"abc\"");
}

TEST(SpecShimErrors, Sha256WithNonHexDigit) {
    std::string digest(63, 'a');
    digest.push_back('g');
    EXPECT_NE(error_of(with_line(7, "sha256 = \"" + digest + "\"")).find("64 hexadecimal"),
              std::string::npos);
}

TEST(SpecShimErrors, RuntimeClassWithoutName) {
    EXPECT_EQ(error_of(base_shim() + "[shim.runtime_class]\n"),
              "f.toml:8:1: [shim.runtime_class] is missing required key 'name'; add e.g. name = "
              "\"wasmtime-spin-v2\"");
}

TEST(SpecShimErrors, RuntimeClassNameOutsideTheGrammar) {
    std::string message = error_of(base_shim() + "[shim.runtime_class]\nname = \"Spin_RC\"\n");
    EXPECT_TRUE(message.starts_with("f.toml:9:8: 'name' in [shim.runtime_class] is \"Spin_RC\""))
        << message;
    EXPECT_TRUE(message.ends_with("Kubernetes RuntimeClass object")) << message;
}

TEST(SpecShimErrors, DuplicateNameInOneFile) {
    std::string second = base_shim();
    second.replace(second.find("handler = \"spin\""), 16, "handler = \"other\"");
    EXPECT_EQ(error_of(base_shim() + "\n" + second),
              "f.toml:9:1: shim name 'spin-v2' is already used by the shim at f.toml:1:1; "
              "every shim needs its own name");
}

TEST(SpecShimErrors, DuplicateHandlerInOneFile) {
    std::string second = base_shim();
    second.replace(second.find("name = \"spin-v2\""), 16, "name = \"spin-v3\"");
    EXPECT_EQ(error_of(base_shim() + second),
              "f.toml:8:1: handler 'spin' of shim 'spin-v3' is already used by shim 'spin-v2' at "
              "f.toml:1:1; containerd holds one runtime per handler");
}

} // namespace spec_shim_errors
} // namespace
} // namespace shimkeeper::spec
