// Runs the real lmk binary: outputs of `lmk tokenize`, exit code 2 with a message naming the
// file / line / field on bad input, and the second-BLAS warning.
#include <gtest/gtest.h>

#include <cmath>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/data/jsonl.h"
#include "core/eval/document_attention.h"
#include "core/store/results_store.h"
#include "core/util/file.h"
#include "core/util/npy.h"
#include "tests/support/run_lmk.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

using testing::Result;
using testing::run_lmk;

class LmkCliTest : public ::testing::Test {
 protected:
  LmkCliTest() : tokenizer_(dir_.write("tokenizer.json", testing::word_level_json(100).dump())) {}
  TempDir dir_;
  std::string tokenizer_;
};

TEST_F(LmkCliTest, TokenizeFormats) {
  Result r = run_lmk("tokenize --tokenizer " + tokenizer_, "w0 w1 w2\nw3\n");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "2 5 6 7 3\n2 8 3\n");
  r = run_lmk("tokenize --tokenizer " + tokenizer_ + " --landmark fixed:2 --format pieces",
              "w0 w1 w2\n");
  EXPECT_EQ(r.output, "[CLS] w0 w1 [SEP] w2 [SEP]\n");
  r = run_lmk("tokenize --tokenizer " + tokenizer_ + " --landmark fixed:2 --format json",
              "w0 w1 w2\n");
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["landmark_positions"], nlohmann::json::parse("[3, 5]"));
  EXPECT_EQ(j["token_offsets"], nlohmann::json::parse("[-1, 0, 1, -1, 2, -1]"));
  EXPECT_EQ(j["granularity"], 2);
  // --jsonl reads texts with newlines inside; --max-length truncates after insertion.
  r = run_lmk("tokenize --jsonl --max-length 4 --landmark fixed:8 --tokenizer " + tokenizer_,
              "{\"text\": \"w0\\nw1 w2 w3\"}\n\"w4\"\n");
  EXPECT_EQ(r.output, "2 5 6 3\n2 9 3\n");
  // --document takes a whole file, newlines included, as one text.
  r = run_lmk("tokenize --landmark fixed:2 --tokenizer " + tokenizer_ + " --document " +
              dir_.write("doc.txt", "w0 w1\nw2\n\nw3\n"));
  EXPECT_EQ(r.output, "2 5 6 3 7 8 3\n");
  // A model folder works too.
  r = run_lmk("tokenize --tokenizer " + dir_.path().string(), "w1\n");
  EXPECT_EQ(r.output, "2 6 3\n");
  // Lines are read as every other reader reads them: "\r\n" ends a line like "\n", and a
  // gzip file (whatever its name) reads as its text.
  r = run_lmk("tokenize --tokenizer " + tokenizer_, "w0 w1 w2\r\nw3\r\n");
  EXPECT_EQ(r.output, "2 5 6 7 3\n2 8 3\n");
  const std::string gz = (dir_.path() / "texts.jsonl.gz").string();
  JsonlWriter writer(gz);
  writer.write("w0 w1 w2");
  writer.write({{"text", "w3"}});
  writer.commit();
  r = run_lmk("tokenize --jsonl --tokenizer " + tokenizer_ + " --input " + gz);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "2 5 6 7 3\n2 8 3\n");
}

// --threads N: the lines of a chunk tokenized on N threads, written in input order: the same
// bytes as one thread (variable landmarks drawn per row, JSON output, several chunks), and a
// bad line's error after the lines before it.
TEST_F(LmkCliTest, TokenizeOnThreadsWritesWhatOneThreadWrites) {
  std::string input;
  for (int i = 0; i < 5000; ++i) {
    for (int w = 0; w <= i % 37; ++w) input += "w" + std::to_string((i * 7 + w) % 90) + " ";
    input += "\n";
  }
  // On stdin: no progress lines on stderr to differ between runs.
  const std::string base =
      "tokenize --landmark variable:2,3,5 --seed 9 --format json --tokenizer " + tokenizer_;
  const Result one = run_lmk(base, input);
  ASSERT_EQ(one.code, 0) << one.output.substr(0, 500);
  EXPECT_EQ(std::count(one.output.begin(), one.output.end(), '\n'), 5000);
  for (const char* threads : {"2", "3", "0"}) {
    const Result many = run_lmk(base + " --threads " + threads, input);
    ASSERT_EQ(many.code, 0) << threads;
    EXPECT_TRUE(many.output == one.output) << "--threads " << threads;
  }
  // Line 3001 is empty: lines 1..3000 come out, then the error naming it.
  std::string bad = input;
  size_t at = 0;
  for (int i = 0; i < 3000; ++i) at = bad.find('\n', at) + 1;
  bad.replace(at, bad.find('\n', at) - at, "");
  for (const char* threads : {"1", "2"}) {
    const Result r = run_lmk("tokenize --tokenizer " + tokenizer_ + " --threads " + threads, bad);
    EXPECT_EQ(r.code, 2) << threads;
    EXPECT_NE(r.output.find("stdin:3001: empty text"), std::string::npos) << threads;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 3001) << threads;
  }
  const Result negative = run_lmk("tokenize --tokenizer " + tokenizer_ + " --threads -1", "w0\n");
  EXPECT_EQ(negative.code, 2);
  EXPECT_NE(negative.output.find("--threads"), std::string::npos) << negative.output;
}

TEST_F(LmkCliTest, BadInputExitsTwoWithAClearMessage) {
  struct Case {
    std::string args, input, message;
  } cases[] = {
      {"tokenize --tokenizer /nonexistent/tok.json", "w0\n", "/nonexistent/tok.json"},
      {"tokenize --tokenizer " + dir_.write("broken.json", "{\"model\": {"), "w0\n",
       "broken.json: invalid JSON"},
      {"tokenize --tokenizer " + tokenizer_ + " --landmark fixed:0", "w0\n",
       "granularity must be > 0"},
      {"tokenize --tokenizer " + tokenizer_ + " --landmark fixed:-3", "w0\n", "--landmark"},
      {"tokenize --tokenizer " + tokenizer_, "w0\n\nw1\n", "stdin:2: empty text"},
      {"tokenize --tokenizer " + tokenizer_, "w0\nw1 \xC3\x28\n",
       "stdin:2: invalid UTF-8 at byte 3"},
      {"tokenize --tokenizer " + tokenizer_ + " --jsonl", "{\"txt\": 1}\n", "stdin:1"},
      {"tokenize --tokenizer " + tokenizer_ + " --jsonl", "{\"text\": \"w0\", \"n\": 1e999}\n",
       "stdin:1: invalid JSON"},
      {"tokenize --tokenizer " + tokenizer_ + " --format yaml", "w0\n", "--format"},
      {"tokenize --tokenizer " + tokenizer_ + " --input /nonexistent.txt", "", "/nonexistent.txt"},
      {"tokenize", "", "--tokenizer"},
      {"frobnicate", "", "subcommand"},
      {"tokenizer-train --input /nonexistent --vocab-size 100 --out x.model", "", "/nonexistent"},
      {"tokenize --tokenizer " + tokenizer_ + " --document " + dir_.write("bad.txt", "w0\xFF"), "",
       "bad.txt: text: invalid UTF-8 at byte 2"},
      // Core names the field of its options (FieldError); the command names its option.
      {"data passkey --tokenizer " + tokenizer_ + " --out " + (dir_.path() / "pk").string() +
           " --lengths 64 --queries 20 --documents 10",
       "", "lmk: error: --queries: at most documents (10)"},
      {"data passkey --tokenizer " + tokenizer_ + " --out " + (dir_.path() / "pk").string() +
           " --lengths 16",
       "", "lmk: error: --lengths: each length must be >= 32 tokens"},
  };
  for (const auto& c : cases) {
    const Result r = run_lmk(c.args, c.input);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
  // Invalid UTF-8 can instead be decoded with U+FFFD, as a UTF-8 decoder does.
  const Result r = run_lmk(
      "tokenize --invalid-utf8 replace --format pieces --tokenizer " + tokenizer_, "w0 \xFF\n");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.output, "[CLS] w0 [UNK] [SEP]\n");
}

TEST_F(LmkCliTest, ModelInitHonoursEveryShapeOptionOrRefusesIt) {
  const std::string folder = (dir_.path() / "shaped").string();
  // --intermediate-size for BERT and GTE (it was silently 4 x hidden), and the log line names
  // the shape that was written, not only the preset.
  for (const char* architecture : {"modernbert", "bert", "gte"}) {
    const std::string out = folder + "-" + architecture;
    Result r = run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + out +
                           " --architecture " + architecture +
                           " --hidden-size 128 --heads 4 --layers 3 --intermediate-size 300",
                       "", testing::kQuickEnv);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("hidden 128, 4 heads, MLP 300"), std::string::npos) << r.output;
    const auto config = nlohmann::json::parse(read_file(out + "/config.json"));
    EXPECT_EQ(config["intermediate_size"], 300) << architecture;
    EXPECT_EQ(config["hidden_size"], 128) << architecture;
    EXPECT_EQ(config["num_hidden_layers"], 3) << architecture;
  }
  // ModernBERT's layer rule (layer 0 global), stated in both config.json forms; a last layer
  // that is local is pointed out.
  Result r = run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + folder +
                         "-six --layers 6 --global-every 3",
                     "", testing::kQuickEnv);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("GLLGLL"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("last layer (5) is local"), std::string::npos) << r.output;
  const auto six = nlohmann::json::parse(read_file(folder + "-six/config.json"));
  EXPECT_EQ(six["global_attn_every_n_layers"], 3);
  EXPECT_EQ(six["layer_types"][5], "sliding_attention");
  r = run_lmk("inspect " + folder + "-six", "", testing::kQuickEnv);
  EXPECT_NE(r.output.find("6 (GLLGLL;"), std::string::npos) << r.output;
  const std::string base =
      "model init --preset tiny --tokenizer " + tokenizer_ + " --out " + folder + "-bad ";
  // Every refusal is checked on shaped_config (config_test); here that they reach the user.
  const std::pair<std::string, std::string> refused[] = {
      {"--hidden-size -5", "--hidden-size: -5 is outside [1, 65536]"},
      {"--heads 3", "--heads: 3 heads do not divide the hidden size 64"},
      {"--architecture bert --local-window 64", "--local-window: does not apply"},
      {"--hidden-size many", "--hidden-size"},
  };
  for (const auto& [flags, message] : refused) {
    r = run_lmk(base + flags, "", testing::kQuickEnv);
    EXPECT_EQ(r.code, 2) << flags << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << flags << "\n" << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(folder + "-bad")) << "nothing written on a refusal";
}

TEST_F(LmkCliTest, EncodeBenchMeasuresAModelFolderOrACustomShape) {
  Result r = testing::run_built("tests/lmk_encode_bench", "--help", "", testing::kQuickEnv);
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* flag : {"--model", "--preset", "--hidden-size", "--global-every", "--lengths"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag << "\n" << r.output;
  const std::string model = (dir_.path() / "bench-model").string();
  ASSERT_EQ(run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + model +
                        " --layers 2",
                    "", testing::kQuickEnv)
                .code,
            0);
  r = testing::run_built("tests/lmk_encode_bench", "--model " + model + " --lengths 40 --repeats 1",
                         "", testing::kQuickEnv);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("modernbert, 2 layers (GL), hidden 64"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| 40 | CLS |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| 40 | LMK g=32 |"), std::string::npos) << r.output;
  r = testing::run_built("tests/lmk_encode_bench",
                         "--architecture bert --hidden-size 32 --heads 2 --layers 1 "
                         "--intermediate-size 48 --lengths 30 --repeats 1 --parts-only",
                         "", testing::kQuickEnv);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("bert, 1 layers, hidden 32, 2 heads, MLP 48"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("attention, global layer"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("attention, local layer"), std::string::npos) << "BERT has none";
  const std::pair<std::string, std::string> refused[] = {
      {"--lengths 512,-4", "--lengths"},
      {"--repeats 0", "--repeats"},
      {"--architecture bert --global-every 2", "--global-every: does not apply"},
      {"--model " + model + " --layers 3", "--model"},
      {"--model /nonexistent", "/nonexistent"},
      {"--attention-products fast", "--attention-products"},
      {"--corpus " + dir_.path().string(), "--corpus needs --tokenizer"},
      {"--tokenizer " + tokenizer_, "--tokenizer requires --corpus"},
      {"--corpus " + dir_.path().string() + " --tokenizer " + tokenizer_ + " --max-length 4",
       "--max-length"},
      {"--corpus " + dir_.path().string() + " --tokenizer " + tokenizer_ + " --documents 0",
       "--documents"},
  };
  for (const auto& [flags, message] : refused) {
    r = testing::run_built("tests/lmk_encode_bench", flags, "", testing::kQuickEnv);
    EXPECT_EQ(r.code, 2) << flags << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << flags << "\n" << r.output;
  }

  // Batches of real documents: 20 texts of 3-60 sentences, cut at 64 tokens, under the four
  // batch policies; one document per forward pads nothing, lmk's buckets at most 5 %, and less
  // than the uncapped buckets, which pad less than the file order.
  const std::filesystem::path corpus = dir_.path() / "corpus";
  std::filesystem::create_directories(corpus);
  for (int i = 0; i < 20; ++i) {
    std::string text;
    for (int s = 0; s < 3 + (i * 7) % 58; ++s)
      text += "The signal " + std::to_string(s) + " arrives. ";
    std::ofstream(corpus / ("doc" + std::to_string(i) + ".txt")) << text;
  }
  std::ofstream(corpus / "empty.txt") << "";
  r = testing::run_built("tests/lmk_encode_bench",
                         "--model " + model + " --corpus " + corpus.string() + " --tokenizer " +
                             tokenizer_ + " --max-length 64 --documents 20",
                         "", testing::kQuickEnv);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("20 documents of "), std::string::npos) << r.output;
  auto waste = [&](const std::string& policy) {
    const size_t at = r.output.find("| " + policy + " |");
    if (at == std::string::npos) return -1.0;
    std::istringstream row(r.output.substr(at + policy.size() + 4));
    std::string batches, padded, percent;
    std::getline(row, batches, '|');
    std::getline(row, padded, '|');
    std::getline(row, percent, '|');
    return std::stod(percent);
  };
  const double single = waste("one document per forward"),
               buckets = waste(
                   "lmk's length buckets (<= 16 rows, <= 32768 padded tokens, <= 5 % "
                   "waste)"),
               uncapped = waste("length buckets without the waste cap"),
               arrival = waste("16 rows in file order");
  EXPECT_EQ(single, 0.0) << r.output;
  EXPECT_GE(buckets, 0.0) << r.output;
  EXPECT_LE(buckets, 5.0) << r.output;
  EXPECT_LE(buckets, uncapped) << r.output;
  EXPECT_LT(uncapped, arrival) << r.output;

  // runs.sh: the same table over runs, each number as its median and range.
  const std::string runs = std::string(LMK_SOURCE_DIR) + "/tests/bench/runs.sh";
  {
    const std::string command = testing::kQuickEnv + " " + runs + " 3 " + LMK_BINARY_DIR +
                                "/tests/lmk_encode_bench --model " + model +
                                " --lengths 40 --repeats 1 2>/dev/null";
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    EXPECT_EQ(pclose(pipe), 0) << out;
    EXPECT_NE(out.find("run 3: "), std::string::npos) << out;
    EXPECT_NE(out.find("| 40 | CLS | "), std::string::npos) << out;
    EXPECT_NE(out.find("–"), std::string::npos) << "a range of the three runs\n" << out;
    EXPECT_EQ(std::system((runs + " 0 true 2>/dev/null").c_str()), 2 << 8);
  }
}

TEST_F(LmkCliTest, ModelInitInspectAndEncode) {
  const std::string model = (dir_.path() / "model").string();
  Result r = run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + model +
                     " --seed 3");
  ASSERT_EQ(r.code, 0) << r.output;
  r = run_lmk("inspect " + model);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("modernbert"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GLL"), std::string::npos) << "layer pattern";
  const std::string docs = dir_.write("docs.jsonl",
                                      "{\"_id\": \"a\", \"text\": \"w1 w2 w3 w4 w5 w6 w7 w8 w9\"}\n"
                                      "{\"_id\": \"b\", \"title\": \"w9\", \"text\": \"w3\"}\n"
                                      "{\"text\": \"w4 w4 w4\"}\n");
  for (const char* pooling : {"cls", "mean", "lmk", "multicls", "last", "mean_every_k"}) {
    const std::string out = (dir_.path() / (std::string(pooling) + ".npy")).string();
    r = run_lmk("encode --model " + model + " --pooling " + pooling + " --granularity 2 --input " +
                docs + " --out " + out);
    ASSERT_EQ(r.code, 0) << pooling << ": " << r.output;
    int64_t rows = 0, cols = 0;
    const auto data = read_npy_float32(out, rows, cols);
    EXPECT_EQ(rows, 3);
    EXPECT_EQ(cols, 64);
    double norm = 0;
    for (int64_t c = 0; c < cols; ++c)
      norm += data[static_cast<size_t>(c)] * data[static_cast<size_t>(c)];
    EXPECT_NEAR(norm, 1.0, 1e-4) << "L2-normalized";
  }
  EXPECT_EQ(read_file((dir_.path() / "lmk.ids.txt").string()), "a\nb\n2\n");
  // An empty text does not stop the file (sentence-transformers embeds ""): it is embedded as the
  // tokenizer's template alone, like lmk eval's documents without title and text, and counted.
  const std::string with_empty = dir_.write(
      "empty.jsonl", "{\"_id\": \"a\", \"text\": \"w1 w2\"}\n{\"_id\": \"e\", \"text\": \"\"}\n"
                     "{\"_id\": \"t\", \"title\": \"w7\", \"text\": \"\"}\n");
  const std::string empty_out = (dir_.path() / "empty.npy").string();
  r = run_lmk("encode --model " + model + " --pooling cls --input " + with_empty + " --out " +
              empty_out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("lmk encode: 1 of 3 texts are empty"), std::string::npos) << r.output;
  int64_t empty_rows = 0, empty_cols = 0;
  const auto empty_data = read_npy_float32(empty_out, empty_rows, empty_cols);
  EXPECT_EQ(empty_rows, 3);
  for (float v : empty_data) EXPECT_TRUE(std::isfinite(v));
  // Attention of the pooling tokens over positions: one row per document and bin, summing to 1.
  for (const char* pooling : {"cls", "lmk"}) {
    r = run_lmk("attention --model " + model + " --pooling " + pooling +
                " --granularity 2 --bins 4 --input " + docs);
    ASSERT_EQ(r.code, 0) << r.output;
    std::istringstream lines(r.output);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "doc_id,length,layer,head,bin,start,end,weight");
    std::map<std::string, double> sums;
    int rows = 0;
    while (std::getline(lines, line)) {
      sums[line.substr(0, line.find(','))] += std::stod(line.substr(line.rfind(',') + 1));
      ++rows;
    }
    EXPECT_EQ(rows, 12) << pooling;
    for (const auto& [doc, sum] : sums) EXPECT_NEAR(sum, 1.0, 1e-4) << pooling << " " << doc;
  }
  // Every layer, per head: layers 0..L-1, each with the mean and every head; a head's rows
  // of one document and layer sum to 1 as well.
  r = run_lmk("attention --model " + model +
              " --pooling lmk --granularity 2 --bins 4 --layers all "
              "--per-head --input " +
              docs);
  ASSERT_EQ(r.code, 0) << r.output;
  {
    std::istringstream lines(r.output);
    std::string line;
    std::getline(lines, line);
    std::map<std::string, double> sums;  // doc,layer,head -> sum
    std::set<std::string> layers, heads;
    while (std::getline(lines, line)) {
      std::vector<std::string> f;
      std::stringstream fields(line);
      for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
      ASSERT_EQ(f.size(), 8u) << line;
      layers.insert(f[2]);
      heads.insert(f[3]);
      sums[f[0] + "," + f[2] + "," + f[3]] += std::stod(f[7]);
    }
    EXPECT_EQ(layers.size(), 4u) << "the tiny preset has 4 layers";
    EXPECT_EQ(heads, (std::set<std::string>{"0", "1", "mean"})) << "tiny: 2 heads";
    EXPECT_EQ(sums.size(), 3u * 4 * 3);
    for (const auto& [key, sum] : sums) EXPECT_NEAR(sum, 1.0, 1e-4) << key;
  }
  // --db: the mean over the documents per layer and head, stored as an "attention" run.
  r = run_lmk("attention --model " + model +
              " --pooling lmk --granularity 2 --bins 4 --layers all "
              "--per-head --input " +
              docs + " --db " + (dir_.path() / "attention.db").string());
  ASSERT_EQ(r.code, 0) << r.output;
  {
    ResultsStore store((dir_.path() / "attention.db").string(), ResultsStore::OpenMode::Existing);
    const auto runs = store.list_runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].kind, "attention");
    EXPECT_EQ(runs[0].status, RunStatus::Finished);
    std::map<std::pair<int64_t, int64_t>, double> sums;
    for (const auto& row : store.attention_profiles(runs[0].id))
      sums[{row.layer, row.head}] += row.weight;
    EXPECT_EQ(sums.size(), 4u * 3) << "4 layers x (mean + 2 heads)";
    for (const auto& [key, sum] : sums)
      EXPECT_NEAR(sum, 1.0, 1e-6) << key.first << "/" << key.second;
  }
  // Bad input: exit 2 naming what is wrong.
  struct Case {
    std::string args, message;
  } cases[] = {
      {"encode --model /nonexistent --input " + docs + " --out x.npy", "/nonexistent"},
      {"encode --model " + model + " --pooling max --input " + docs + " --out x.npy", "--pooling"},
      {"encode --model " + model + " --input " + dir_.write("bad.jsonl", "{\"txt\": 1}\n") +
           " --out x.npy",
       "bad.jsonl:1"},
      {"encode --model " + model + " --pooling latent --input " + docs + " --out x.npy", "latent"},
      {"model init --preset huge --tokenizer " + tokenizer_ + " --out " + model + "2", "--preset"},
      {"inspect " + dir_.path().string(), "config.json"},
      {"attention --model " + model + " --layers 0,x --input " + docs, "--layers"},
      {"encode --model " + model + " --device tpu --input " + docs + " --out x.npy", "--device"},
      {"encode --model " + model + " --device cuda:x --input " + docs + " --out x.npy", "--device"},
      {"attention --model " + model + " --layers 9 --input " + docs, "out of range"},
  };
  for (const auto& c : cases) {
    r = run_lmk(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
}

// lmk attention --explore: one document's attention for the workbench's explorer, with a
// query's similarities; its pooled similarity is the dot product of lmk encode's embeddings.
TEST_F(LmkCliTest, AttentionExploreWritesOneDocumentAndRefusesBadInput) {
  const std::string model = (dir_.path() / "model").string();
  Result r = run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + model +
                     " --seed 5");
  ASSERT_EQ(r.code, 0) << r.output;
  std::string words;
  for (int i = 1; i <= 30; ++i) words += (i > 1 ? " w" : "w") + std::to_string(i);
  const std::string doc = dir_.write("doc.txt", words);
  const std::string out = (dir_.path() / "doc.lmkattn").string();
  const std::string common = "attention --model " + model + " --pooling lmk --granularity 4 ";
  r = run_lmk(common + "--explore " + out + " --document " + doc + " --query 'w3 w4'");
  ASSERT_EQ(r.code, 0) << r.output;
  const DocumentAttention d = read_document_attention(out);
  EXPECT_EQ(d.text, words);
  EXPECT_EQ(d.content_tokens, 30);
  EXPECT_EQ(d.length(), 1 + 30 + 8);  // [CLS], 30 words, a landmark after every 4 (and the end)
  EXPECT_EQ(d.pooling_positions.size(), 8u);
  EXPECT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.query, "w3 w4");
  // The same document from a jsonl file by its id.
  const std::string docs =
      dir_.write("docs.jsonl", "{\"_id\": \"x\", \"text\": \"w9\"}\n{\"_id\": \"d\", \"text\": \"" +
                                   words + "\"}\n");
  const std::string out2 = (dir_.path() / "doc2.lmkattn").string();
  r = run_lmk(common + "--explore " + out2 + " --input " + docs + " --doc-id d --layers all");
  ASSERT_EQ(r.code, 0) << r.output;
  const DocumentAttention by_id = read_document_attention(out2);
  EXPECT_EQ(by_id.tokens, d.tokens);
  EXPECT_EQ(by_id.profiles, d.profiles);
  EXPECT_EQ(by_id.rows.size(), static_cast<size_t>(d.layers));
  // The pooled similarity against lmk encode's embeddings of the document and the query.
  const std::string queries = dir_.write("q.jsonl", "{\"text\": \"w3 w4\"}\n");
  for (const auto& [input, npy] :
       {std::pair<std::string, std::string>{docs, "d.npy"}, {queries, "q.npy"}}) {
    r = run_lmk("encode --model " + model + " --pooling lmk --granularity 4 --input " + input +
                " --out " + (dir_.path() / npy).string());
    ASSERT_EQ(r.code, 0) << r.output;
  }
  int64_t rows = 0, cols = 0;
  const auto documents = read_npy_float32((dir_.path() / "d.npy").string(), rows, cols);
  const auto query = read_npy_float32((dir_.path() / "q.npy").string(), rows, cols);
  double dot = 0;
  for (int64_t c = 0; c < cols; ++c)
    dot += static_cast<double>(documents[static_cast<size_t>(cols + c)]) *
           query[static_cast<size_t>(c)];
  EXPECT_NEAR(d.pooled_similarity, dot, 1e-5);

  // Bad input: exit 2 naming what is wrong, and no file.
  const std::string none = (dir_.path() / "none.lmkattn").string();
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--explore " + none, "needs one document"},
           {"--explore " + none + " --document " + doc + " --text w1", "needs one document"},
           {"--explore " + none + " --input " + docs + " --doc-id nope", "no document with id"},
           {"--explore " + none + " --input " + docs, "--doc-id"},
           {"--explore " + none + " --text ''", "empty text"},
           {"--explore " + none + " --document " + doc + " --layers 9", "--layers"},
           {"--explore " + none + " --document " + doc + " --db x.db", "--db"},
           {"--explore " + none + " --document " + dir_.write("bad.txt", "w1 \xFF"), "bad.txt"}}) {
    r = run_lmk(common + args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << args << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(none));
  r = run_lmk("attention --model /nonexistent --explore " + none + " --text w1");
  EXPECT_EQ(r.code, 2) << r.output;
}

// A second BLAS in the process (here preloaded, as a user's LD_PRELOAD would) answers LibTorch's
// own sgemm_ calls (pytorch issue #182263): the model commands say so at start.
TEST_F(LmkCliTest, WarnsWhenASecondBlasIsLoaded) {
  const std::string reference = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3";
  if (!std::filesystem::exists(reference)) GTEST_SKIP() << "no reference BLAS installed";
  const std::string model = (dir_.path() / "model").string();
  ASSERT_EQ(run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + model, "",
                    testing::kQuickEnv)
                .code,
            0);
  const Result second =
      run_lmk("inspect " + model, "", testing::kQuickEnv + " LD_PRELOAD=" + reference);
  EXPECT_EQ(second.code, 0) << second.output;
  EXPECT_NE(second.output.find("lmk: warning: a second BLAS is loaded beside LibTorch's own"),
            std::string::npos)
      << second.output;
  EXPECT_NE(second.output.find(reference), std::string::npos) << second.output;
  const Result alone = run_lmk("inspect " + model, "", testing::kQuickEnv);
  EXPECT_EQ(alone.output.find("warning"), std::string::npos) << alone.output;
}

}  // namespace
}  // namespace lmk
