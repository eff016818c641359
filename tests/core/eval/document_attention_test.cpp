// The attention explorer's file (core/eval/document_attention.h): the layout its header
// documents (magic, header size, JSON header, float16 arrays), the round trip of what the
// explorer computes and of a document built here, the profile index, and a damaged or foreign
// file refused as an InputError naming it.
#include "core/eval/document_attention.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/float16.h"
#include "engine/eval/attention_explorer.h"
#include "tests/support/explorer_tests.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::ExplorerTest;
using testing::TempDir;

// Two layers of two heads over three tokens of "ab cd"; profile value i is i / 64 (exact in
// float16), one row layer, no query.
DocumentAttention small_document() {
  DocumentAttention d;
  d.model = "m";
  d.pooling = "lmk";
  d.granularity = 2;
  d.layers = 2;
  d.heads = 2;
  d.global_layers = {true, false};
  d.text = "ab cd";
  d.tokens = {"[CLS]", "ab", "cd"};
  d.spans = {{0, 0}, {0, 2}, {3, 5}};
  d.pooling_positions = {0, 2};
  d.content_tokens = 2;
  for (int i = 0; i < 2 * 3 * 3; ++i) d.profiles.push_back(static_cast<float>(i) / 64);
  d.rows[1] = {1.0f, 0.5f, 0.25f, 2.0f, 0.0f, -1.0f};  // [2 pooling tokens][3 positions]
  d.pooled_similarity = std::nanf("");
  return d;
}

// A file of this header and data, laid out as the header comment says.
std::string file_bytes(const json& header, const std::string& data) {
  const std::string text = header.dump();
  std::string bytes = "LMKATTN1";
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((text.size() >> (8 * i)) & 0xFF));
  return bytes + text + data;
}

// The InputError parsing `bytes` gives (a test failure when there is none).
std::string parse_error(const std::string& bytes) {
  try {
    parse_document_attention(bytes, "doc.lmkattn");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

// What the explorer computes reads back as written (arrays rounded to float16); a file cut short,
// a foreign one and one whose header claims more values than it holds are InputErrors.
TEST_F(ExplorerTest, TheFileReadsBackWhatWasWrittenAndRefusesDamage) {
  ExplorerOptions explorer;
  explorer.query = "w37";
  const DocumentAttention d =
      explore_attention(model_, *tokenizer_, text_, lmk_options(), explorer);
  const std::string path = (dir_.path() / "doc.lmkattn").string();
  write_document_attention(path, d);
  const DocumentAttention back = read_document_attention(path);
  EXPECT_EQ(back.tokens, d.tokens);
  EXPECT_EQ(back.spans, d.spans);
  EXPECT_EQ(back.text, d.text);
  EXPECT_EQ(back.pooling_positions, d.pooling_positions);
  EXPECT_EQ(back.global_layers, d.global_layers);
  EXPECT_EQ(back.layers, d.layers);
  EXPECT_EQ(back.heads, d.heads);
  EXPECT_EQ(back.query, "w37");
  EXPECT_EQ(back.query_similarity, d.query_similarity);
  EXPECT_FLOAT_EQ(back.pooled_similarity, d.pooled_similarity);
  ASSERT_EQ(back.profiles.size(), d.profiles.size());
  for (size_t i = 0; i < d.profiles.size(); ++i)
    EXPECT_EQ(back.profiles[i], half_to_float(float_to_half(d.profiles[i])));
  ASSERT_EQ(back.rows.size(), d.rows.size());
  for (const auto& [layer, rows] : d.rows)
    for (size_t i = 0; i < rows.size(); ++i)
      EXPECT_EQ(back.rows.at(layer)[i], half_to_float(float_to_half(rows[i])));
  // 2 bytes per value plus the header.
  EXPECT_LT(std::filesystem::file_size(path), 2 * (d.profiles.size() + d.rows.at(1).size()) + 8192);

  const std::string bytes = read_file(path);
  for (size_t cut = 0; cut < bytes.size(); cut += 97)
    EXPECT_THROW(parse_document_attention(bytes.substr(0, cut), "cut"), InputError) << cut;
  std::string foreign = bytes;
  foreign[0] = 'X';
  EXPECT_THROW(parse_document_attention(foreign, "foreign"), InputError);
  // A header whose array runs past the data.
  std::string swollen = bytes;
  const size_t count = swollen.find("\"count\":");
  ASSERT_NE(count, std::string::npos);
  swollen.insert(count + 8, "9");
  EXPECT_THROW(parse_document_attention(swollen, "swollen"), InputError);
}

// profile(layer, head) starts at ((layer * (1 + heads)) + head + 1) * length: the mean over
// heads first, then each head; the sink share is the profile's value at position 0.
TEST(DocumentAttentionTest, ProfilesAreIndexedByLayerThenMeanThenHead) {
  const DocumentAttention d = small_document();
  EXPECT_EQ(d.length(), 3);
  EXPECT_EQ(d.profile(0, -1), d.profiles.data());
  EXPECT_EQ(d.profile(0, 1)[0], 6.0f / 64);    // (0 * 3 + 2) * 3
  EXPECT_EQ(d.profile(1, -1)[2], 11.0f / 64);  // (1 * 3 + 0) * 3 + 2
  EXPECT_EQ(d.sink_share(1, 0), 12.0f / 64);   // (1 * 3 + 1) * 3
  EXPECT_EQ(d.sink_share(1, 1), 15.0f / 64);
}

// The bytes written are the documented layout: "LMKATTN1", the header size as a little-endian
// uint64, the JSON header, then the arrays as little-endian float16 at the header's offsets
// (counted in values from the end of the header). Half bits written out here: 1 = 0x3C00,
// 0.5 = 0x3800, 0.25 = 0x3400, 2 = 0x4000, -1 = 0xBC00.
TEST(DocumentAttentionTest, TheFileIsMagicSizeJsonHeaderAndFloat16Arrays) {
  TempDir dir;
  const std::string path = (dir.path() / "small.lmkattn").string();
  write_document_attention(path, small_document());
  const std::string bytes = read_file(path);
  ASSERT_GE(bytes.size(), 16u);
  EXPECT_EQ(bytes.substr(0, 8), "LMKATTN1");
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i)
    header_size |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  const json header = json::parse(bytes.substr(16, header_size));
  EXPECT_EQ(header.at("version"), 1);
  EXPECT_EQ(header.at("profiles"), (json{{"offset", 0}, {"count", 18}}));
  ASSERT_EQ(header.at("rows").size(), 1u);
  EXPECT_EQ(header.at("rows")[0], (json{{"offset", 18}, {"count", 6}, {"layer", 1}}));
  EXPECT_TRUE(header.at("pooled_similarity").is_null()) << "no query";
  const std::string data = bytes.substr(16 + header_size);
  ASSERT_EQ(data.size(), 2u * (18 + 6));
  auto half_at = [&](size_t value) {
    return static_cast<unsigned>(static_cast<unsigned char>(data[2 * value])) |
           static_cast<unsigned>(static_cast<unsigned char>(data[2 * value + 1])) << 8;
  };
  EXPECT_EQ(half_at(0), 0x0000u);   // profile value 0
  EXPECT_EQ(half_at(16), 0x3400u);  // 16 / 64
  EXPECT_EQ(half_at(18), 0x3C00u);  // the row's 1, 0.5, 0.25, 2, 0, -1
  EXPECT_EQ(half_at(19), 0x3800u);
  EXPECT_EQ(half_at(20), 0x3400u);
  EXPECT_EQ(half_at(21), 0x4000u);
  EXPECT_EQ(half_at(22), 0x0000u);
  EXPECT_EQ(half_at(23), 0xBC00u);
}

// A document without a query reads back with every field as written (values exact in float16),
// an empty query and a NaN pooled similarity.
TEST(DocumentAttentionTest, ADocumentWithoutAQueryReadsBackExactly) {
  TempDir dir;
  const std::string path = (dir.path() / "small.lmkattn").string();
  const DocumentAttention d = small_document();
  write_document_attention(path, d);
  const DocumentAttention back = read_document_attention(path);
  EXPECT_EQ(back.model, "m");
  EXPECT_EQ(back.pooling, "lmk");
  EXPECT_EQ(back.granularity, 2);
  EXPECT_EQ(back.layers, 2);
  EXPECT_EQ(back.heads, 2);
  EXPECT_EQ(back.global_layers, d.global_layers);
  EXPECT_EQ(back.text, "ab cd");
  EXPECT_EQ(back.tokens, d.tokens);
  EXPECT_EQ(back.spans, d.spans);
  EXPECT_EQ(back.pooling_positions, d.pooling_positions);
  EXPECT_EQ(back.content_tokens, 2);
  EXPECT_FALSE(back.truncated);
  EXPECT_EQ(back.profiles, d.profiles);
  EXPECT_EQ(back.rows, d.rows);
  EXPECT_EQ(back.query, "");
  EXPECT_TRUE(back.query_similarity.empty());
  EXPECT_TRUE(std::isnan(back.pooled_similarity));
  // A missing file: an InputError naming it.
  try {
    read_document_attention((dir.path() / "none.lmkattn").string());
    ADD_FAILURE() << "read a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("none.lmkattn"), std::string::npos) << e.what();
  }
}

// Each inconsistency of a header with itself or with the data is an InputError naming the file
// and what is wrong, never a read past the data.
TEST(DocumentAttentionTest, AnInconsistentHeaderIsAnInputErrorNamingIt) {
  TempDir dir;
  const std::string path = (dir.path() / "small.lmkattn").string();
  write_document_attention(path, small_document());
  const std::string bytes = read_file(path);
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i)
    header_size |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  const json header = json::parse(bytes.substr(16, header_size));
  const std::string data = bytes.substr(16 + header_size);
  ASSERT_NO_THROW(parse_document_attention(file_bytes(header, data), "same"));

  auto error_with = [&](const char* key, const json& value) {
    json changed = header;
    changed[key] = value;
    return parse_error(file_bytes(changed, data));
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {error_with("version", 2), "unknown version"},
      {error_with("layers", 0), "layers / heads out of range"},
      {error_with("global_layers", json::array({true})), "global_layers: one per layer expected"},
      {error_with("tokens", json::array()), "tokens: 1.."},
      {error_with("spans", json::array({{0, 0}, {0, 2}, {3, 6}})),
       "spans: a span outside the text"},
      {error_with("pooling_positions", json::array({0, 3})),
       "pooling_positions: a position outside the input"},
      {error_with("pooling_positions", json::array()), "pooling_positions: none"},
      {error_with("profiles", json{{"offset", 0}, {"count", 17}}),
       "profiles: 17 values, expected 18"},
      {error_with("profiles", json{{"offset", 7}, {"count", 18}}), "profiles: runs past the end"},
      {error_with("profiles", "here"), "profiles: not an array reference"},
      {error_with("rows", json::array({json{{"offset", 18}, {"count", 6}, {"layer", 2}}})),
       "rows: a layer outside the model, or twice"},
      {error_with("query_similarity", json::array({0.5})),
       "query_similarity: one per pooling token expected"},
      {error_with("text", 5), "damaged header"},
      {parse_error(bytes.substr(0, 16) + "x" + bytes.substr(17)), "damaged header"},
      {parse_error(bytes.substr(0, 20)), "truncated (the header runs past the end)"},
      {parse_error("LMKATTN2" + bytes.substr(8)), "not an attention file"},
  };
  for (const auto& [message, expected] : cases) {
    EXPECT_EQ(message.rfind("doc.lmkattn: ", 0), 0u) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace lmk
