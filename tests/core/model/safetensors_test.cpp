#include "core/model/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

std::string bytes_of(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// A file with a hand-written header and `data_size` bytes of data.
std::string raw_file(const std::string& header, size_t data_size,
                     uint64_t claimed_length = UINT64_MAX) {
  const uint64_t n = claimed_length == UINT64_MAX ? header.size() : claimed_length;
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i)
    file[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return file + header + std::string(data_size, '\x01');
}

TEST(SafetensorsTest, WritesAndReadsBack) {
  TempDir dir;
  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  const std::vector<float> b = {42.0f};
  const std::string path = (dir.path() / "model.safetensors").string();
  write_safetensors(
      path,
      {{"layer.weight", DType::F32, {2, 3}, bytes_of(a)}, {"bias", DType::F32, {1}, bytes_of(b)}},
      {{"format", "pt"}});
  const SafetensorsFile file(path);
  EXPECT_EQ(file.header().metadata.at("format"), "pt");
  EXPECT_EQ(file.header().data_offset % 8, 0u) << "data buffer aligned";
  const TensorEntry* w = file.find("layer.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file.bytes(*w), bytes_of(a));
  EXPECT_EQ(file.bytes(*file.find("bias")), bytes_of(b));
  EXPECT_EQ(file.find("missing"), nullptr);
}

TEST(SafetensorsTest, EveryRuleOfTheFormatIsChecked) {
  struct Case {
    std::string name, file, message;
  } cases[] = {
      {"too short", std::string("\x08\x00\x00", 3), "too short"},
      {"huge header length", raw_file("{}", 0, 200'000'000), "100 MB"},
      {"header past the end", raw_file("{}", 0, 1000), "past the end"},
      {"not JSON", raw_file("{nope}", 0), "not valid JSON"},
      {"not an object", raw_file("[1,2]", 0), "not a JSON object"},
      {"duplicate names",
       raw_file(
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           8),
       "appears twice"},
      {"unknown dtype", raw_file(R"({"a":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}})", 1),
       "unsupported dtype"},
      {"negative shape", raw_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
       "non-negative"},
      {"shape × dtype ≠ bytes",
       raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4), "span 4"},
      {"offset past the data",
       raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 4), "past the"},
      {"reversed offsets", raw_file(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}})", 4),
       "end before"},
      {"overlap",
       raw_file(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           8),
       "overlaps"},
      {"gap", raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8), "gap of 4"},
      {"trailing bytes", raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 12),
       "belong to no tensor"},
      {"shape overflow",
       raw_file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4),
       "overflows"},
      {"bad metadata", raw_file(R"({"__metadata__":{"x":1}})", 0), "__metadata__.x"},
      {"missing data_offsets", raw_file(R"({"a":{"dtype":"F32","shape":[1]}})", 4), "data_offsets"},
  };
  for (const auto& c : cases) {
    try {
      parse_safetensors_header(c.file, c.file.size(), "x.safetensors");
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
          << c.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("x.safetensors"), std::string::npos) << c.name;
    }
  }
  // Empty tensors and header padding are fine.
  const std::string ok =
      raw_file(R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]}}   )", 0);
  EXPECT_EQ(parse_safetensors_header(ok, ok.size(), "ok").tensors.size(), 1u);
}

TEST(SafetensorsTest, FilesThatLieAreRejectedOnOpen) {
  TempDir dir;
  const std::string path = dir.write(
      "bad.safetensors", raw_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8));
  EXPECT_THROW(SafetensorsFile file(path), InputError);
  EXPECT_THROW(SafetensorsFile file((dir.path() / "missing").string()), InputError);
  EXPECT_THROW(SafetensorsFile file(dir.path().string()), InputError);
}

TEST(SafetensorsTest, WriterRejectsInconsistentTensors) {
  TempDir dir;
  const std::string path = (dir.path() / "w.safetensors").string();
  EXPECT_THROW(write_safetensors(path, {{"a", DType::F32, {3}, std::string(8, '\0')}}), InputError);
  EXPECT_THROW(write_safetensors(path, {{"a", DType::U8, {1}, "x"}, {"a", DType::U8, {1}, "y"}}),
               InputError);
  EXPECT_FALSE(std::filesystem::exists(path)) << "nothing written on failure";
}

}  // namespace
}  // namespace lmk
