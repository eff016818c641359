// Dataset folders (core/data/dataset_dir.h): what write_dataset_info writes read_dataset_info
// reads back, parts found and ordered by number, and bad dataset.json fields named.
#include "core/data/dataset_dir.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string error_of(const std::string& dir) {
  try {
    read_dataset_info(dir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DatasetDirTest, WrittenInfoReadsBackWithItsPartsInNumericOrder) {
  TempDir dir;
  for (const std::string part : {"1024", "256", "32768", "notes"})
    fs::create_directories(dir.path() / part);
  for (const std::string part : {"1024", "256", "32768"}) dir.write(part + "/corpus.jsonl", "");
  dir.write("notes/readme.txt", "");  // a folder without a corpus is no part
  DatasetInfo info;
  info.task = "passkey";
  info.main_score = "ndcg_at_1";
  info.split = "dev";
  info.part_kind = "length";
  info.seed = 42;
  info.info = {{"protocol", "LongEmbed"}, {"task", "stale"}};
  info.parts = dataset_parts(dir.path().string());
  ASSERT_EQ(info.parts.size(), 3u);
  EXPECT_EQ(info.parts[0].name, "256");
  EXPECT_EQ(info.parts[2].name, "32768");
  write_dataset_info(dir.path().string(), info);

  const DatasetInfo read = read_dataset_info(dir.path().string());
  EXPECT_EQ(read.task, "passkey") << "the typed field wins over the provenance's";
  EXPECT_EQ(read.main_score, "ndcg_at_1");
  EXPECT_EQ(read.split, "dev");
  EXPECT_EQ(read.part_kind, "length");
  EXPECT_EQ(read.type, "retrieval");
  EXPECT_EQ(read.seed, std::optional<uint64_t>(42));
  EXPECT_EQ(read.dir, dir.path().string());
  EXPECT_EQ(read.info["protocol"], "LongEmbed");
  EXPECT_EQ(read.info["parts"], nlohmann::json({"256", "1024", "32768"}));
  EXPECT_EQ(dataset_revision(read), std::optional<std::string>("lmk-seed-42"));
}

TEST(DatasetDirTest, DefaultsForAFolderWithoutDatasetJson) {
  TempDir dir;
  const fs::path beir = dir.path() / "scifact";
  fs::create_directories(beir);
  dir.write("scifact/corpus.jsonl", "");
  const DatasetInfo read = read_dataset_info(beir.string());
  EXPECT_EQ(read.task, "scifact");
  EXPECT_EQ(read.main_score, "ndcg_at_10");
  EXPECT_EQ(read.split, "test");
  ASSERT_EQ(read.parts.size(), 1u);
  EXPECT_EQ(read.parts[0].name, "");
  EXPECT_EQ(dataset_revision(read), std::nullopt) << "no seed: no revision";
}

TEST(DatasetDirTest, BadFieldsAreNamed) {
  TempDir dir;
  dir.write("corpus.jsonl", "");
  dir.write("dataset.json", R"({"seed": "forty"})");
  EXPECT_NE(error_of(dir.path().string()).find("dataset.json.seed"), std::string::npos)
      << error_of(dir.path().string());
  dir.write("dataset.json", R"({"type": "regression"})");
  EXPECT_NE(error_of(dir.path().string()).find("dataset.json: type"), std::string::npos);
  dir.write("dataset.json", "[1]");
  EXPECT_NE(error_of(dir.path().string()).find("not a JSON object"), std::string::npos);
  TempDir empty;
  EXPECT_NE(error_of(empty.path().string()).find("not a dataset folder"), std::string::npos);
  // Classification: no BEIR folder needed, accuracy by default.
  empty.write("dataset.json", R"({"type": "classification"})");
  EXPECT_EQ(read_dataset_info(empty.path().string()).main_score, "accuracy");
}

}  // namespace
}  // namespace lmk
