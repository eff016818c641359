// Runs the real lmk binary as two processes joined over loopback Gloo (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT as torchrun sets them): 2 processes x batch_size 4 end on the
// weights of 1 process x batch_size 8 (lmk train with variable landmarks, hard negatives and
// cross-device negatives; lmk pretrain with accumulation), record the global loss once, and
// only rank 0 writes or prints. Bad launcher variables exit 2 naming the variable; a missing
// peer ends in a clear rendezvous timeout; a stop signal to one process stops both after the
// same step. (The rules, hostlists and the collectives by
// themselves: tests/engine/dist/distributed_test.cpp.)
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "core/model/safetensors.h"
#include "core/store/results_store.h"
#include "core/util/file.h"
#include "tests/support/free_port.h"
#include "tests/support/run_lmk.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Result;
using testing::run_lmk;
using testing::TempDir;

// How close "the same weights" is. Float32 sums over one batch of 8 and over two of 4 (then
// averaged) round differently, ~1e-7 relative. Almost every weight then agrees to ~1e-7, but
// Adam divides each gradient by its own running magnitude (+ 1e-8): where a gradient is
// nearly zero (e.g. directions of the key projection that softmax ignores) rounding noise of
// 1e-9 becomes a visible part of that weight's step. Measured on this test (8 steps of lr
// 2e-3 from the warmed-up model; the weights move 4.2e-3 RMS, 1e-2 at most): RMS difference
// 1.4e-7, 0.02 % of the weights beyond 1e-6, the largest 4.4e-5 (8.8e-5 in a variant); lmk
// pretrain: 1.2e-7 at most. Hence the criteria below, which wrong implementations fail by far
// (measured on a variant of this test): a backward that keeps only the local slice of the
// gathered passages (no all-reduce) gives RMS 3.4e-3 with 96 % of the weights beyond 1e-6;
// passage row seeds not offset by rank (other variable-granularity draws) RMS 1.5e-3, 96 %.
constexpr double kRmsTolerance = 1e-6;      // root mean square of the differences
constexpr double kElementTolerance = 1e-6;  // per weight, for all but kOutlierShare of them
constexpr double kOutlierShare = 0.01;      // weights allowed beyond kElementTolerance
constexpr double kMaxTolerance = 5e-4;      // any weight: a quarter of one Adam step (lr 2e-3)
constexpr double kLossTolerance = 1e-4;     // per recorded step loss (values ~1)

// Runs `lmk ARGS` as `world` processes of one run (ranks 0..world-1 on a free loopback port).
std::vector<Result> run_lmk_processes(int world, const std::string& args, const std::string& env) {
  const std::string rendezvous =
      "WORLD_SIZE=" + std::to_string(world) +
      " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(testing::free_tcp_port()) +
      " LMK_DIST_TIMEOUT_S=60 LMK_DIST_COLLECTIVE_TIMEOUT_S=60 LMK_THREADS=1 " + env;
  std::vector<Result> results(static_cast<size_t>(world));
  std::vector<std::thread> processes;
  for (int rank = 0; rank < world; ++rank) {
    processes.emplace_back([&, rank] {
      results[static_cast<size_t>(rank)] = run_lmk(
          args, "",
          rendezvous + " RANK=" + std::to_string(rank) + " LOCAL_RANK=" + std::to_string(rank));
    });
  }
  for (std::thread& process : processes) process.join();
  return results;
}

// How the float32 tensors of two model.safetensors files differ, and how far `a` moved from
// `initial`.
struct WeightComparison {
  double rms_difference = 0, max_difference = 0, outlier_share = 0;  // beyond kElementTolerance
  double rms_moved = 0, max_moved = 0;
  size_t tensors = 0;
};

std::ostream& operator<<(std::ostream& out, const WeightComparison& c) {
  return out << c.tensors << " tensors: |2 x 4 - 1 x 8| RMS " << c.rms_difference << ", max "
             << c.max_difference << ", share > " << kElementTolerance << ": " << c.outlier_share
             << "; moved RMS " << c.rms_moved << ", max " << c.max_moved;
}

// The criteria of "the same weights" (see kRmsTolerance).
void expect_same_weights(const WeightComparison& c) {
  EXPECT_GT(c.tensors, 10u);
  EXPECT_LE(c.rms_difference, kRmsTolerance) << c;
  EXPECT_LE(c.outlier_share, kOutlierShare) << c;
  EXPECT_LE(c.max_difference, kMaxTolerance) << c;
  EXPECT_GT(c.rms_moved, 1000 * kRmsTolerance) << "the weights moved: " << c;
}

WeightComparison compare_weights(const std::string& a, const std::string& b,
                                 const std::string& initial) {
  const SafetensorsFile fa(a), fb(b), f0(initial);
  WeightComparison result;
  double squared_difference = 0, squared_moved = 0, outliers = 0, count = 0;
  auto floats = [](std::string_view bytes) {
    std::vector<float> values(bytes.size() / sizeof(float));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
    return values;
  };
  EXPECT_EQ(fa.header().tensors.size(), fb.header().tensors.size());
  for (const TensorEntry& entry : fa.header().tensors) {
    const TensorEntry* other = fb.find(entry.name);
    const TensorEntry* start = f0.find(entry.name);
    if (!other || !start) {
      ADD_FAILURE() << entry.name << " missing";
      continue;
    }
    EXPECT_EQ(entry.dtype, DType::F32) << entry.name;
    EXPECT_EQ(entry.shape, other->shape) << entry.name;
    const auto va = floats(fa.bytes(entry)), vb = floats(fb.bytes(*other)),
               v0 = floats(f0.bytes(*start));
    if (va.size() != vb.size() || va.size() != v0.size()) {
      ADD_FAILURE() << entry.name << " sizes differ";
      continue;
    }
    for (size_t i = 0; i < va.size(); ++i) {
      const double difference = std::fabs(double(va[i]) - vb[i]),
                   moved = std::fabs(double(va[i]) - v0[i]);
      result.max_difference = std::max(result.max_difference, difference);
      result.max_moved = std::max(result.max_moved, moved);
      squared_difference += difference * difference;
      squared_moved += moved * moved;
      outliers += difference > kElementTolerance;
      ++count;
    }
    ++result.tensors;
  }
  result.rms_difference = std::sqrt(squared_difference / std::max(1.0, count));
  result.rms_moved = std::sqrt(squared_moved / std::max(1.0, count));
  result.outlier_share = outliers / std::max(1.0, count);
  return result;
}

std::vector<double> losses(const fs::path& folder) {
  return json::parse(read_file((folder / "train_state.json").string()))["losses"]
      .get<std::vector<double>>();
}

void expect_losses_near(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], kLossTolerance) << "step " << i;
}

class DistributedCliTest : public ::testing::Test {
 protected:
  DistributedCliTest()
      : tokenizer_(dir_.write("tokenizer.json", testing::word_level_json(100).dump())) {}
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  // texts/doc*.txt: 12 documents with structure an MLM learns.
  void write_texts() {
    fs::create_directories(dir_.path() / "texts");
    uint64_t state = 1;
    for (int d = 0; d < 12; ++d) {
      std::string text;
      for (int s = 0; s < 40; ++s) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const int a = 10 + static_cast<int>((state >> 33) % 40);
        text += "w" + std::to_string(a) + " w" + std::to_string(a + 40) + " w5 ";
      }
      dir_.write("texts/doc" + std::to_string(d) + ".txt", text);
    }
  }
  TempDir dir_;
  std::string tokenizer_;
};

TEST_F(DistributedCliTest, TrainOnTwoProcessesEndsOnTheWeightsOfOneWithTheCombinedBatch) {
  ASSERT_EQ(run_lmk("model init --preset tiny --pooling lmk --tokenizer " + tokenizer_ + " --out " +
                    path("init"))
                .code,
            0);
  // Queries name two words; the positive holds both among filler, the hard negative two others.
  // Every example but 2, 6 and 13 has teacher scores: of the 8 global batches below (seed 7),
  // 1, 3, 5 and 6 distill, and 0, 2, 4 and 7 are InfoNCE with cross-device negatives (in
  // batch 0 only rank 1's half lacks scores: the choice must be the global batch's).
  std::string lines;
  for (int i = 0; i < 48; ++i) {
    const int a = 10 + (i * 7) % 80, b = 10 + (i * 13 + 5) % 80, c = 10 + (i * 11 + 40) % 80;
    std::string filler;
    for (int f = 0; f < 20 + i % 17; ++f) filler += " w" + std::to_string(f % 10);
    json example = {{"query", "w" + std::to_string(a) + " w" + std::to_string(b)},
                    {"pos", {"w" + std::to_string(a) + filler + " w" + std::to_string(b)}},
                    {"neg", {"w" + std::to_string(c) + filler + " w" + std::to_string(c + 1)}}};
    if (i != 2 && i != 6 && i != 13) {
      example["pos_scores"] = {4.0 + i % 3};
      example["neg_scores"] = {1.0};
    }
    lines += example.dump() + "\n";
  }
  dir_.write("pairs.jsonl", lines);
  // 8 steps of a global batch of 8 over 48 examples (the second epoch's order starts at step 6)
  // from `init` (the model warmed up first: a random tiny model embeds every text nearly alike,
  // and the gradients of such near-ties are mostly rounding noise).
  auto config = [&](const std::string& name, const std::string& init, const std::string& out,
                    int batch_size, int steps, int seed) {
    return dir_.write(name, "[model]\ninit = \"" + init +
                                "\"\n[data]\ntrain = \"pairs.jsonl\"\n[train]\n"
                                "pooling = \"lmk\"\ntrain_landmarks = \"variable:4,8,16\"\n"
                                "batch_size = " +
                                std::to_string(batch_size) +
                                "\nnegatives = 1\nlearning_rate = 2e-3\nwarmup_ratio = 0.1\n"
                                "temperature = 0.05\nmax_steps = " +
                                std::to_string(steps) +
                                "\ncheckpoint_every = 4\nlog_every = 1\nseed = " +
                                std::to_string(seed) + "\n[output]\ndir = \"" + out +
                                "\"\ndb = \"results.db\"\nrun_name = \"" + out + "\"\n");
  };
  const Result warm = run_lmk("train --config " + config("warm.toml", "init", "warm", 8, 30, 1), "",
                              "LMK_THREADS=1");
  ASSERT_EQ(warm.code, 0) << warm.output;
  const Result single = run_lmk("train --config " + config("one.toml", "warm/last", "one", 8, 8, 7),
                                "", "LMK_THREADS=1");
  ASSERT_EQ(single.code, 0) << single.output;

  const auto start = std::chrono::steady_clock::now();
  const std::vector<Result> ranks = run_lmk_processes(
      2, "train --progress-json --config " + config("two.toml", "warm/last", "two", 4, 8, 7), "");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(ranks[0].code, 0) << ranks[0].output << "\n--- rank 1:\n" << ranks[1].output;
  ASSERT_EQ(ranks[1].code, 0) << ranks[1].output;

  const WeightComparison weights =
      compare_weights(path("two/last/model.safetensors"), path("one/last/model.safetensors"),
                      path("warm/last/model.safetensors"));
  std::cout << "[ weights ] " << weights << "; the 2 processes took " << seconds << " s\n";
  expect_same_weights(weights);
  // The recorded loss is the global batch's (both processes' halves averaged).
  expect_losses_near(losses(path("two/last")), losses(path("one/last")));

  // Rank 0 printed the events and the summary; rank 1 stayed quiet and wrote nothing.
  EXPECT_NE(ranks[0].output.find("\"event\":\"step\""), std::string::npos) << ranks[0].output;
  EXPECT_NE(ranks[0].output.find("lmk train: 8 steps"), std::string::npos) << ranks[0].output;
  EXPECT_EQ(ranks[1].output.find("\"event\""), std::string::npos) << ranks[1].output;
  EXPECT_EQ(ranks[1].output.find("lmk train"), std::string::npos) << ranks[1].output;
  EXPECT_TRUE(fs::exists(path("two/checkpoint/state.json")));
  EXPECT_EQ(json::parse(read_file(path("two/checkpoint/state.json")))["world_size"], 2);
  ResultsStore store(path("results.db"), ResultsStore::OpenMode::Existing);
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 3u) << "one run each, none from rank 1";
  for (const auto& run : runs) {
    EXPECT_EQ(run.status, RunStatus::Finished) << run.name;
    EXPECT_EQ(store.metric_series(run.id, "loss").size(), run.name == "warm" ? 30u : 8u)
        << run.name;
  }

  // A checkpoint of a 2-process run resumes only with 2 processes (the global batch differs).
  const Result refused =
      run_lmk("train --resume --config " + path("two.toml"), "", "LMK_THREADS=1");
  EXPECT_EQ(refused.code, 2) << refused.output;
  EXPECT_NE(refused.output.find("2 process(es)"), std::string::npos) << refused.output;
}

TEST_F(DistributedCliTest, PretrainOnTwoProcessesEndsOnTheWeightsOfOneWithTheCombinedBatch) {
  ASSERT_EQ(
      run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("init")).code,
      0);
  write_texts();
  // Accumulation 2: each step is two global micro-batches; masks are drawn per sequence.
  auto config = [&](const std::string& name, const std::string& out, int batch_size) {
    return dir_.write(name,
                      "[model]\ninit = \"init\"\n[data]\ntrain = \"texts\"\n[train]\n"
                      "max_length = 48\nbatch_size = " +
                          std::to_string(batch_size) +
                          "\naccumulation = 2\nlearning_rate = 2e-3\nmax_steps = 5\n"
                          "checkpoint_every = 0\nseed = 3\n[output]\ndir = \"" +
                          out + "\"\n");
  };
  const Result single =
      run_lmk("pretrain --config " + config("one.toml", "one", 8), "", "LMK_THREADS=1");
  ASSERT_EQ(single.code, 0) << single.output;
  const std::vector<Result> ranks =
      run_lmk_processes(2, "pretrain --config " + config("two.toml", "two", 4), "");
  ASSERT_EQ(ranks[0].code, 0) << ranks[0].output << "\n--- rank 1:\n" << ranks[1].output;
  ASSERT_EQ(ranks[1].code, 0) << ranks[1].output;
  const WeightComparison weights =
      compare_weights(path("two/last/model.safetensors"), path("one/last/model.safetensors"),
                      path("init/model.safetensors"));
  std::cout << "[ weights ] " << weights << "\n";
  expect_same_weights(weights);
  expect_losses_near(losses(path("two/last")), losses(path("one/last")));
}

TEST_F(DistributedCliTest, ASignalToOneProcessStopsBothAfterTheSameStep) {
  ASSERT_EQ(
      run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("init")).code,
      0);
  write_texts();
  const std::string cfg =
      dir_.write("s.toml",
                 "[model]\ninit = \"init\"\n[data]\ntrain = \"texts\"\n[train]\nmax_length = 48\n"
                 "batch_size = 4\nmax_steps = 40\ncheckpoint_every = 0\nlog_every = 1\n"
                 "[output]\ndir = \"stopped\"\n");
  const std::string port = std::to_string(testing::free_tcp_port());
  std::vector<pid_t> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string r = std::to_string(rank);
    ranks.push_back(testing::start_lmk(
        {"pretrain", "--config", cfg, "--progress-json"},
        {"WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port, "RANK=" + r,
         "LOCAL_RANK=" + r, "LMK_DIST_TIMEOUT_S=60", "LMK_DIST_COLLECTIVE_TIMEOUT_S=60"},
        path("out" + r), path("err" + r)));
  }
  if (!testing::wait_for_text(path("out0"), "\"event\":\"step\"", ranks[0])) {
    for (pid_t pid : ranks) ::kill(pid, SIGKILL);
    for (pid_t pid : ranks) testing::wait_lmk(pid);
    FAIL() << "no step event\n"
           << read_file(path("err0")) << "\n--- rank 1:\n"
           << read_file(path("err1"));
  }
  ::kill(ranks[1], SIGTERM);  // rank 1 only: rank 0 learns it through the all-reduce
  const int code0 = testing::wait_lmk(ranks[0]), code1 = testing::wait_lmk(ranks[1]);
  const std::string err0 = read_file(path("err0")), err1 = read_file(path("err1"));
  ASSERT_EQ(code0, 75) << err0;
  ASSERT_EQ(code1, 75) << err1;
  const json state = json::parse(read_file(path("stopped/checkpoint/state.json")));
  const std::string at = " at step " + state["step"].dump() + " of 40";
  EXPECT_LT(state["step"].get<int>(), 40);
  EXPECT_EQ(state["world_size"], 2);
  EXPECT_NE(err0.find("lmk: stopped by a signal to another process" + at + "; checkpoint in "),
            std::string::npos)
      << err0;
  EXPECT_NE(err1.find("lmk: stopped by SIGTERM" + at), std::string::npos) << err1;
  // Both continue from the checkpoint to the end.
  const std::vector<Result> resumed =
      run_lmk_processes(2, "pretrain --auto-resume --config " + cfg, "");
  ASSERT_EQ(resumed[0].code, 0) << resumed[0].output;
  ASSERT_EQ(resumed[1].code, 0) << resumed[1].output;
  EXPECT_EQ(losses(path("stopped/last")).size(), 40u);
}

// lmk eval on three processes: each encodes its share of the corpus and the queries, the
// embeddings are gathered; the rankings and per-query metrics are the single process's (float
// rounding of other batch compositions aside), and rank 0 alone prints, records and writes.
TEST_F(DistributedCliTest, EvalOnThreeProcessesRanksAsOneProcessAndRankZeroRecords) {
  ASSERT_EQ(run_lmk("model init --preset tiny --pooling lmk --tokenizer " + tokenizer_ + " --out " +
                    path("model"))
                .code,
            0);
  // 14 documents of 3..130 words (3 does not divide 14: padded shares), 8 queries.
  fs::create_directories(dir_.path() / "beir" / "qrels");
  std::string corpus, queries, qrels = "query-id\tcorpus-id\tscore\n";
  uint64_t state = 7;
  auto word = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return "w" + std::to_string(10 + (state >> 33) % 80);
  };
  for (int d = 0; d < 14; ++d) {
    std::string text;
    for (int w = 0; w < 3 + d * d * 2 / 3; ++w) text += word() + " ";
    corpus += json{{"_id", "d" + std::to_string(d)}, {"text", text}}.dump() + "\n";
  }
  for (int q = 0; q < 8; ++q) {
    queries +=
        json{{"_id", "q" + std::to_string(q)}, {"text", word() + " " + word()}}.dump() + "\n";
    qrels += "q" + std::to_string(q) + "\td" + std::to_string((q * 5) % 14) + "\t1\n";
  }
  dir_.write("beir/corpus.jsonl", corpus);
  dir_.write("beir/queries.jsonl", queries);
  dir_.write("beir/qrels/test.tsv", qrels);
  const std::string common =
      "eval --model " + path("model") + " --dataset " + path("beir") + " --batch-size 4";
  const Result one = run_lmk(common + " --db " + path("one.db") + " --save-run " + path("one.trec"),
                             "", "LMK_THREADS=1");
  ASSERT_EQ(one.code, 0) << one.output;
  const std::vector<Result> three = run_lmk_processes(
      3, common + " --db " + path("three.db") + " --save-run " + path("three.trec"), "");
  for (const Result& r : three) ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(three[0].output.find("dataset "), std::string::npos) << three[0].output;
  EXPECT_NE(three[0].output.find("3 processes share the encoding"), std::string::npos)
      << three[0].output;
  for (size_t rank = 1; rank < 3; ++rank)
    EXPECT_EQ(three[rank].output.find("dataset "), std::string::npos) << three[rank].output;

  // The same rankings: document ids in order, scores to float rounding.
  auto run_lines = [](const std::string& file) {
    std::vector<std::vector<std::string>> lines;
    std::istringstream in(read_file(file));
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      lines.emplace_back();
      for (std::string field; fields >> field;) lines.back().push_back(field);
    }
    return lines;
  };
  const auto a = run_lines(path("one.trec")), b = run_lines(path("three.trec"));
  ASSERT_EQ(a.size(), 8u * 14u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), 6u);
    ASSERT_EQ(b[i].size(), 6u);
    EXPECT_EQ(a[i][0], b[i][0]) << "line " << i;
    EXPECT_NEAR(std::stod(a[i][4]), std::stod(b[i][4]), 1e-5) << "line " << i;
    // Equal-scored documents may swap; the rank's score is the same either way.
    if (std::fabs(std::stod(a[i][4]) - std::stod(a[std::min(i + 1, a.size() - 1)][4])) > 1e-5 &&
        (i == 0 || std::fabs(std::stod(a[i][4]) - std::stod(a[i - 1][4])) > 1e-5))
      EXPECT_EQ(a[i][2], b[i][2]) << "line " << i;
  }
  // One run, in rank 0's store, with the single process's per-query metrics.
  const ResultsStore store_one(path("one.db"), ResultsStore::OpenMode::Existing);
  const ResultsStore store_three(path("three.db"), ResultsStore::OpenMode::Existing);
  const auto runs = store_three.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::Finished);
  EXPECT_EQ(store_three.get_run(runs[0].id).config.value("processes", 0), 3);
  const auto per_query_one = store_one.query_results(store_one.list_runs()[0].id);
  const auto per_query_three = store_three.query_results(runs[0].id);
  ASSERT_EQ(per_query_one.size(), 8u);
  ASSERT_EQ(per_query_three.size(), per_query_one.size());
  for (size_t i = 0; i < per_query_one.size(); ++i) {
    EXPECT_EQ(per_query_one[i].query_id, per_query_three[i].query_id);
    EXPECT_EQ(per_query_one[i].target_length, per_query_three[i].target_length);
    for (const auto& [metric, value] : per_query_one[i].metrics)
      EXPECT_NEAR(per_query_three[i].metrics.at(metric), value, 1e-6) << metric;
  }
}

TEST_F(DistributedCliTest, BadLauncherVariablesExitTwoNamingTheVariable) {
  dir_.write("pairs.jsonl",
             "{\"query\": \"a\", \"pos\": [\"b\"]}\n{\"query\": \"c\", \"pos\": "
             "[\"d\"]}\n");
  const std::string cfg =
      dir_.write("c.toml",
                 "[model]\ninit = \"init\"\n[data]\ntrain = \"pairs.jsonl\"\n[output]\ndir = "
                 "\"never\"\n");
  const std::string port = std::to_string(testing::free_tcp_port());
  const std::string addr = " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port;
  struct Case {
    std::string env, variable;
  } cases[] = {
      {"RANK=2 WORLD_SIZE=2" + addr, "RANK"},
      {"RANK=0 WORLD_SIZE=two" + addr, "WORLD_SIZE"},
      {"RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=70000", "MASTER_PORT"},
      {"SLURM_PROCID=4 SLURM_NTASKS=4 SLURM_JOB_NODELIST=localhost SLURM_JOB_ID=7", "SLURM_PROCID"},
  };  // every rule: tests/engine/dist/distributed_test.cpp
  for (const Case& c : cases) {
    const Result r = run_lmk("train --config " + cfg, "", c.env);
    EXPECT_EQ(r.code, 2) << c.env << "\n" << r.output;
    EXPECT_NE(r.output.find("error: " + c.variable + ":"), std::string::npos) << c.env << "\n"
                                                                              << r.output;
  }
}

TEST_F(DistributedCliTest, AMissingPeerEndsInARendezvousTimeout) {
  ASSERT_EQ(
      run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("init")).code,
      0);
  dir_.write("pairs.jsonl",
             "{\"query\": \"w1\", \"pos\": [\"w2\"]}\n{\"query\": \"w3\", "
             "\"pos\": [\"w4\"]}\n");
  const std::string cfg =
      dir_.write("c.toml",
                 "[model]\ninit = \"init\"\n[data]\ntrain = \"pairs.jsonl\"\n[train]\n"
                 "batch_size = 1\n[output]\ndir = \"out\"\n");
  const std::string rendezvous =
      "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 LMK_DIST_TIMEOUT_S=1 "
      "MASTER_PORT=" +
      std::to_string(testing::free_tcp_port());
  // Rank 0 alone serves the store and waits for the second process.
  const auto start = std::chrono::steady_clock::now();
  Result r = run_lmk("train --config " + cfg, "", rendezvous + " RANK=0");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("1 of WORLD_SIZE 2 processes arrived"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("LMK_DIST_TIMEOUT_S"), std::string::npos) << r.output;
  // Rank 1 alone finds no store to connect to.
  r = run_lmk("train --config " + cfg, "", rendezvous + " RANK=1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("could not reach rank 0"), std::string::npos) << r.output;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20)
      << "the timeout ends the wait";
  EXPECT_FALSE(fs::exists(path("out/last")));
}

}  // namespace
}  // namespace lmk
