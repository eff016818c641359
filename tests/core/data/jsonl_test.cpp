// Streaming line input and JSONL files (core/data/jsonl.h): lines and values named
// "name:LINE", gzip told apart by its magic bytes, errors naming where they are, and an atomic
// writer whose output the readers read back.
#include "core/data/jsonl.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/input_error_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::gzip;
using testing::has;
using testing::throws_input_error;

// Reads every value of a JSONL file with its "where".
std::vector<std::pair<json, std::string>> read_all(const std::string& path) {
  std::vector<std::pair<json, std::string>> out;
  for_each_jsonl(path, [&](json& value, const std::string& where) {
    out.emplace_back(value, where);
    return true;
  });
  return out;
}

TEST(JsonlTest, ReadsLinesSkipsBlankOnesAndNamesEachLine) {
  testing::TempDir dir;
  const std::string path = dir.write("a.jsonl", "{\"a\":1}\n\n  \t\n{\"a\":2}\r\n{\"a\":3}");
  const auto values = read_all(path);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0].first["a"], 1);
  EXPECT_EQ(values[0].second, path + ":1");
  EXPECT_EQ(values[1].second, path + ":4");
  EXPECT_EQ(values[2].first["a"], 3);
  EXPECT_EQ(values[2].second, path + ":5") << "a last line without newline is read";
}

TEST(JsonlTest, StopsWhenTheVisitorSaysSoWithoutReadingFurther) {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += i == 10000 ? "not json\n" : "{\"i\":" + std::to_string(i) + "}\n";
  }
  std::istringstream in(text);
  int seen = 0;
  EXPECT_NO_THROW(for_each_jsonl(NamedInput{in, "mem"}, [&](json&, const std::string&) {
    return ++seen < 3;
  })) << "line 10001 is malformed but never reached";
  EXPECT_EQ(seen, 3);
  EXPECT_LT(in.tellg(), static_cast<std::streamoff>(text.size()))
      << "input is consumed in chunks, not loaded at once";
}

TEST(JsonlTest, ErrorsNameFileAndLine) {
  testing::TempDir dir;
  const std::string bad_json = dir.write("j.jsonl", "{\"a\":1}\n{\"a\":\n");
  EXPECT_TRUE(throws_input_error([&] { read_all(bad_json); }, bad_json + ":2: invalid JSON"));
  const std::string bad_utf8 = dir.write("u.jsonl", "{}\n\n{\"a\":\"\xC3\x28\"}\n");
  EXPECT_TRUE(
      throws_input_error([&] { read_all(bad_utf8); }, bad_utf8 + ":3: invalid UTF-8 at byte 6"));
  EXPECT_TRUE(
      throws_input_error([&] { read_all(dir.write("t.jsonl", "{} {}\n")); }, ":1: invalid JSON"))
      << "one value per line";
  const std::string deep =
      dir.write("d.jsonl", std::string(100, '[') + std::string(100, ']') + "\n{\"s\":\"[[[\"," +
                               std::string(100, '[') + std::string(100, ']') + "}\n");
  EXPECT_TRUE(
      throws_input_error([&] { read_all(deep); }, deep + ":2: JSON nested deeper than 100 levels"))
      << "100 levels pass; brackets inside strings do not count";
  EXPECT_TRUE(throws_input_error([&] { read_all((dir.path() / "missing.jsonl").string()); },
                                 "cannot open file"));
}

TEST(JsonlTest, ReadsGzipByItsMagicBytesWhateverTheName) {
  testing::TempDir dir;
  // Lines longer than the reader's 64 KiB chunks, and many of them, cross every boundary.
  std::string text;
  std::vector<std::string> texts;
  for (int i = 0; i < 40; ++i) {
    texts.push_back(
        std::string(static_cast<size_t>(1 + i * 7919), static_cast<char>('a' + i % 26)));
    text += json{{"text", texts.back()}}.dump() + "\n";
  }
  const std::string unnamed = (dir.path() / "data.jsonl").string();
  gzip(text, unnamed);
  const auto values = read_all(unnamed);
  ASSERT_EQ(values.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(values[i].first["text"], texts[i]);

  // Concatenated members (cat a.gz b.gz) read as one stream.
  const std::string a = gzip("{\"m\":1}\n", (dir.path() / "a.gz").string());
  const std::string b = gzip("{\"m\":2}\n", (dir.path() / "b.gz").string());
  const auto both = read_all(dir.write("ab.jsonl.gz", a + b));
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].first["m"], 2);
  EXPECT_EQ(both[1].second, (dir.path() / "ab.jsonl.gz").string() + ":2");
}

TEST(JsonlTest, TruncatedOrCorruptGzipIsAnInputError) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "{\"i\":" + std::to_string(i * 7777) + "}\n";
  const std::string whole = gzip(text, (dir.path() / "w.gz").string());
  const std::string cut = dir.write("cut.jsonl.gz", whole.substr(0, whole.size() / 2));
  EXPECT_TRUE(throws_input_error([&] { read_all(cut); }, cut + ": truncated gzip data"));
  std::string flipped = whole;
  for (size_t i = 20; i < 60; ++i) flipped[i] = static_cast<char>(~flipped[i]);
  const std::string corrupt = dir.write("bad.jsonl.gz", flipped);
  const std::string message = error_of([&] { read_all(corrupt); });
  EXPECT_TRUE(has(message, corrupt + ":")) << message;
}

TEST(JsonlWriterTest, RoundTripsPlainAndGzipAtomically) {
  testing::TempDir dir;
  const std::vector<json> values = {{{"id", "d1"}, {"text", "naïve café 日本語 🤷🏽"}},
                                    {{"n", 1.25}, {"list", {1, 2, 3}}},
                                    "just a string"};
  for (const char* name : {"out.jsonl", "out.jsonl.gz"}) {
    const std::string path = (dir.path() / name).string();
    {
      JsonlWriter writer(path);
      for (const json& v : values) writer.write(v);
      EXPECT_EQ(writer.lines(), 3u);
    }
    EXPECT_FALSE(std::filesystem::exists(path)) << "nothing appears without commit()";
    JsonlWriter writer(path);
    for (const json& v : values) writer.write(v);
    writer.commit();
    const auto back = read_all(path);
    ASSERT_EQ(back.size(), values.size()) << name;
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(back[i].first, values[i]) << name;
    const std::string bytes = read_file(path);
    const bool gz = std::string(name).find(".gz") != std::string::npos;
    EXPECT_EQ(bytes.rfind("\x1f\x8b", 0) == 0, gz) << name;
  }
  JsonlWriter writer((dir.path() / "bad.jsonl").string());
  writer.write(json::object());
  EXPECT_TRUE(throws_input_error(
      [&] {
        writer.write(json{{"text", "\xC3\x28"}});
      },
      "bad.jsonl:2: "));
}

TEST(LineReaderTest, KeepsLongLinesWholeAcrossChunks) {
  const std::vector<std::string> lines = {std::string(70000, 'x'), "", "y",
                                          std::string(200000, 'z')};
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  std::istringstream in(text);
  LineReader reader(NamedInput{in, "mem"});
  std::string line;
  for (const auto& expected : lines) {
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(line, expected);
  }
  EXPECT_FALSE(reader.next(line));
  EXPECT_EQ(reader.where(), "mem:4");
}

}  // namespace
}  // namespace lmk
