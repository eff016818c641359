// Runs the real lmk binary: lmk train learns (the loss falls), is deterministic for a seed,
// records the run in the store, and a run killed with SIGKILL resumes to the same weights as
// an uninterrupted one; SIGTERM stops it with a checkpoint (exit 75) that --auto-resume
// continues; LMK_RUN_ID makes it record into a run created beforehand.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/store/results_store.h"
#include "core/util/file.h"
#include "core/util/progress.h"
#include "engine/embed/model_folder.h"
#include "tests/support/run_lmk.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Result;
using testing::run_lmk;
using testing::TempDir;

class TrainCliTest : public ::testing::Test {
 protected:
  TrainCliTest() : tokenizer_(dir_.write("tokenizer.json", testing::word_level_json(100).dump())) {
    // A learnable task: the query names two words; the positive holds both among filler, the
    // negative holds two other words.
    std::string lines;
    for (int i = 0; i < 48; ++i) {
      const int a = 10 + (i * 7) % 80, b = 10 + (i * 13 + 5) % 80, c = 10 + (i * 11 + 40) % 80;
      std::string filler;
      for (int f = 0; f < 60; ++f) filler += " w" + std::to_string(f % 10);
      lines += json{{"query", "w" + std::to_string(a) + " w" + std::to_string(b)},
                    {"pos", {"w" + std::to_string(a) + filler + " w" + std::to_string(b)}},
                    {"neg", {"w" + std::to_string(c) + filler + " w" + std::to_string(c + 1)}}}
                   .dump() +
               "\n";
    }
    dir_.write("pairs.jsonl", lines);
    EXPECT_EQ(run_lmk("model init --preset tiny --pooling lmk --tokenizer " + tokenizer_ +
                      " --out " + path("init"))
                  .code,
              0);
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  // A config training into `out` for `steps` steps.
  std::string config(const std::string& name, const std::string& out, int steps,
                     int checkpoint_every, const std::string& extra = "") {
    return dir_.write(
        name,
        "[model]\ninit = \"init\"\n[data]\ntrain = \"pairs.jsonl\"\n[train]\n"
        "pooling = \"lmk\"\ntrain_landmarks = \"variable:8,16\"\neval_landmarks = \"fixed:16\"\n"
        "batch_size = 4\nnegatives = 1\nlearning_rate = 3e-3\nwarmup_ratio = 0.1\n"
        "temperature = 0.05\nmax_steps = " +
            std::to_string(steps) + "\ncheckpoint_every = " + std::to_string(checkpoint_every) +
            "\nlog_every = 1\nseed = 7\n" + extra + "[output]\ndir = \"" + out + "\"\n");
  }
  std::vector<double> losses(const std::string& out) const {
    return json::parse(read_file(path(out + "/last/train_state.json")))["losses"]
        .get<std::vector<double>>();
  }
  TempDir dir_;
  std::string tokenizer_;
};

TEST_F(TrainCliTest, LearnsDeterministicallyAndRecordsTheRun) {
  // A random encoder maps every text to nearly the same vector (loss = log 8 at first); a few
  // steps at a high learning rate separate them.
  const std::string first = config("a.toml", "a", 30, 0, "");
  std::ofstream(first, std::ios::app) << "db = \"results.db\"\nrun_name = \"tiny-lmk\"\n";
  Result r = run_lmk("train --config " + first + " --progress-json", "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  // One JSON event per step on stdout.
  size_t events = 0;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("{\"event\"", 0) != 0 && line.rfind("{\"eta_s\"", 0) != 0) continue;
    const json event = json::parse(line);
    EXPECT_EQ(event["event"], "step");
    EXPECT_TRUE(event.contains("tokens_per_s"));
    ++events;
  }
  EXPECT_EQ(events, 30u) << r.output;
  const std::vector<double> curve = losses("a");
  ASSERT_EQ(curve.size(), 30u);
  const double early = (curve[0] + curve[1] + curve[2] + curve[3]) / 4,
               late = (curve[26] + curve[27] + curve[28] + curve[29]) / 4;
  EXPECT_NEAR(early, std::log(8.0), 0.05) << "chance level: 4 queries x 2 passages";
  EXPECT_LT(late, early * 0.6) << "the loss falls";
  EXPECT_TRUE(fs::exists(path("a/last/model.safetensors")));
  EXPECT_TRUE(fs::exists(path("a/last/lmk_pooling.json")));
  // Same config and seed (--device cpu is the default): the same loss curve, bit for bit.
  r = run_lmk("train --config " + config("b.toml", "b", 30, 0) + " --device cpu", "",
              "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(losses("b"), curve);
  EXPECT_EQ(read_file(path("b/last/model.safetensors")),
            read_file(path("a/last/model.safetensors")));
  // Layers recomputed in the backward: the same steps to rounding at first (the forward
  // without gradients runs the inference kernel: last-bit differences, which 30 steps at this
  // learning rate amplify), and it learns as well.
  r = run_lmk("train --config " + config("rc.toml", "rc", 30, 0, "recompute_layers = true\n"), "",
              "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::vector<double> recomputed = losses("rc");
  ASSERT_EQ(recomputed.size(), curve.size());
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(recomputed[i], curve[i], 1e-4) << i;
  EXPECT_LT((recomputed[26] + recomputed[27] + recomputed[28] + recomputed[29]) / 4, early * 0.6);
  // The store has the run, its loss series and the saved model.
  ResultsStore store(path("results.db"), ResultsStore::OpenMode::Existing);
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].kind, "train");
  EXPECT_EQ(runs[0].device, "cpu");
  EXPECT_EQ(runs[0].status, RunStatus::Finished);
  EXPECT_EQ(store.metric_series(runs[0].id, "loss").size(), 30u);
  EXPECT_EQ(store.run_params(runs[0].id).at("train.pooling"), "lmk");
  EXPECT_FALSE(store.artifacts(runs[0].id).empty());
  // The trained folder is a model lmk encodes with.
  dir_.write("docs.jsonl", "{\"text\": \"w11 w12 w13\"}\n");
  r = run_lmk("encode --model " + path("a/last") + " --input " + path("docs.jsonl") + " --out " +
              path("e.npy"));
  EXPECT_EQ(r.code, 0) << r.output;
}

// [data] stream: the examples in file order, a global batch at a time; it learns, epochs start
// the file again, and a run resumed from its checkpoint ends on the uninterrupted run's weights.
TEST_F(TrainCliTest, StreamedDataLearnsAndResumesExactly) {
  const auto text = [](bool stream, const std::string& out) {
    return "[model]\ninit = \"init\"\n[data]\ntrain = \"pairs.jsonl\"\nstream = " +
           std::string(stream ? "true" : "false") +
           "\n[train]\npooling = \"lmk\"\ntrain_landmarks = \"variable:8,16\"\n"
           "eval_landmarks = \"fixed:16\"\nbatch_size = 4\nnegatives = 1\n"
           "learning_rate = 3e-3\nwarmup_ratio = 0.1\ntemperature = 0.05\nmax_steps = 30\n"
           "checkpoint_every = 15\n"
           "seed = 7\n[output]\ndir = \"" +
           out + "\"\n";
  };
  const std::string cfg = dir_.write("stream.toml", text(true, "streamed"));
  Result r = run_lmk("train --config " + cfg, "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::vector<double> curve = losses("streamed");
  ASSERT_EQ(curve.size(), 30u);  // 48 examples, 12 batches an epoch: 2.5 epochs
  EXPECT_LT((curve[26] + curve[27] + curve[28] + curve[29]) / 4,
            (curve[0] + curve[1] + curve[2] + curve[3]) / 4 * 0.9)
      << "the loss falls (less steadily than shuffled: the same 12 batches every epoch)";
  // The checkpoint of step 15 (epoch 2, batch 4) is still there: resume from it.
  fs::rename(path("streamed/last"), path("streamed-full"));
  r = run_lmk("train --config " + cfg + " --resume", "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(losses("streamed"), curve);
  EXPECT_EQ(read_file(path("streamed/last/model.safetensors")),
            read_file(path("streamed-full/model.safetensors")));
  // The stream is not the shuffled order: another curve.
  r = run_lmk("train --config " + dir_.write("shuffled.toml", text(false, "shuffled")), "",
              "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(losses("shuffled"), curve);
}

TEST_F(TrainCliTest, ResumesAfterSigkillToTheSameWeights) {
  // Uninterrupted reference.
  ASSERT_EQ(
      run_lmk("train --config " + config("full.toml", "full", 30, 3), "", "LMK_THREADS=1").code, 0);
  // The same run, killed once a checkpoint exists, then resumed.
  const std::string cfg = config("killed.toml", "killed", 30, 3);
  const pid_t child = testing::start_lmk({"train", "--config", cfg}, {}, "/dev/null", "/dev/null");
  ASSERT_GE(child, 0);
  const fs::path state = path("killed/checkpoint/state.json");
  bool killed = false;
  for (int i = 0; i < 6000 && !killed; ++i) {
    std::error_code ec;
    if (fs::exists(state, ec)) {
      ::kill(child, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const int code = testing::wait_lmk(child);
  ASSERT_TRUE(killed) << "no checkpoint appeared";
  ASSERT_EQ(code, 128 + SIGKILL) << "the run ended before it could be killed";
  EXPECT_FALSE(fs::exists(path("killed/last"))) << "killed mid-run";
  const Result r = run_lmk("train --config " + cfg + " --resume", "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(losses("killed"), losses("full"));
  EXPECT_EQ(read_file(path("killed/last/model.safetensors")),
            read_file(path("full/last/model.safetensors")))
      << "resumed weights equal the uninterrupted run's";
}

// A training killed outright (SIGKILL: no handler, no destructor) cannot record how it ended;
// its run stayed RUNNING for ever. It recorded its process when it started, so the next reader
// on this host (lmk results, lmk jobs) ends it FAILED and says why.
TEST_F(TrainCliTest, ARunKilledOutrightIsShownFailedByTheNextReader) {
  const std::string db = path("killed.db");
  const std::string cfg = dir_.write(
      "killed-db.toml", read_file(config("killed-db-base.toml", "killed-db", 200, 1000)) +
                            "db = \"" + db + "\"\nexperiment = \"e\"\n");
  const pid_t child = testing::start_lmk({"train", "--config", cfg}, {}, "/dev/null", "/dev/null");
  ASSERT_GE(child, 0);
  bool killed = false;
  for (int i = 0; i < 6000 && !killed; ++i) {
    std::error_code ec;
    if (fs::exists(db, ec)) {
      try {
        const ResultsStore store(db, ResultsStore::OpenMode::Existing);
        const std::vector<RunRecord> runs = store.list_runs();
        if (!runs.empty() && runs[0].status == RunStatus::Running &&
            !store.metric_series(runs[0].id, "loss").empty()) {
          ::kill(child, SIGKILL);
          killed = true;
        }
      } catch (const std::exception&) {
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(killed) << "the run never logged a loss";
  ASSERT_EQ(testing::wait_lmk(child), 128 + SIGKILL);
  {
    const ResultsStore store(db, ResultsStore::OpenMode::Existing);
    ASSERT_EQ(store.list_runs()[0].status, RunStatus::Running) << "nothing wrote it since";
    EXPECT_EQ(store.list_runs()[0].pid, child);
  }
  const Result r = run_lmk("results --db " + db);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("FAILED"), std::string::npos) << r.output;
  const ResultsStore store(db, ResultsStore::OpenMode::Existing);
  const RunRecord run = store.list_runs()[0];
  EXPECT_EQ(run.status, RunStatus::Failed);
  EXPECT_NE(run.error_text.find("pid " + std::to_string(child)), std::string::npos)
      << run.error_text;
  EXPECT_NE(run.error_text.find("ended without recording how"), std::string::npos);
}

TEST_F(TrainCliTest, StopsOnSigtermWithACheckpointAndAutoResumes) {
  // 60 steps take a few seconds; no periodic checkpoints: the stop writes one.
  const std::string cfg = config("stop.toml", "stop", 60, 0);
  std::ofstream(cfg, std::ios::app) << "db = \"results.db\"\n";
  const std::string out = path("stop.stdout"), err = path("stop.stderr");
  // LMK_PROGRESS_JSON: step events on stdout (as --progress-json), progress events on stderr.
  const pid_t child =
      testing::start_lmk({"train", "--config", cfg}, {"LMK_PROGRESS_JSON=1"}, out, err);
  if (!testing::wait_for_text(out, "\"event\":\"step\"", child)) {
    ::kill(child, SIGKILL);
    testing::wait_lmk(child);
    FAIL() << "no step event\n" << read_file(err);
  }
  ::kill(child, SIGTERM);
  ASSERT_EQ(testing::wait_lmk(child), 75) << read_file(err);

  const json state = json::parse(read_file(path("stop/checkpoint/state.json")));
  const auto step = state["step"].get<int64_t>();
  EXPECT_GE(step, 1);
  EXPECT_LT(step, 60) << "stopped before the end";
  EXPECT_EQ(state["losses"].size(), static_cast<size_t>(step));
  EXPECT_FALSE(fs::exists(path("stop/last")));
  const std::string log = read_file(err);
  const std::string message = "stopped by SIGTERM at step " + std::to_string(step) +
                              " of 60; checkpoint in " +
                              (fs::path(path("stop")) / "checkpoint").string() +
                              " (continue with --resume or --auto-resume)";
  EXPECT_NE(log.find("lmk: " + message + "\n"), std::string::npos) << log;
  const auto progress = latest_progress_event(log);
  ASSERT_TRUE(progress) << log;
  EXPECT_EQ(progress->event, "progress");
  EXPECT_EQ(progress->label, "training");
  EXPECT_EQ(progress->done, step);
  EXPECT_EQ(progress->total, 60);
  const auto step_event = latest_progress_event(read_file(out));
  ASSERT_TRUE(step_event);
  EXPECT_EQ(step_event->event, "step");
  EXPECT_EQ(step_event->done, step);
  int64_t run_id = 0;
  {
    ResultsStore store(path("results.db"), ResultsStore::OpenMode::Existing);
    const auto runs = store.list_runs();
    ASSERT_EQ(runs.size(), 1u);
    run_id = runs[0].id;
    EXPECT_EQ(runs[0].status, RunStatus::Killed);
    EXPECT_EQ(runs[0].error_text, message);
  }

  // What a requeued job runs: it continues from the checkpoint, in the same run.
  Result r = run_lmk("train --config " + cfg + " --auto-resume", "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::vector<double> curve = losses("stop");
  ASSERT_EQ(curve.size(), 60u);
  EXPECT_EQ(std::vector<double>(curve.begin(), curve.begin() + step),
            state["losses"].get<std::vector<double>>());
  {
    ResultsStore store(path("results.db"), ResultsStore::OpenMode::Existing);
    const auto runs = store.list_runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].id, run_id);
    EXPECT_EQ(runs[0].status, RunStatus::Finished);
    EXPECT_EQ(runs[0].error_text, "");
    EXPECT_EQ(store.metric_series(run_id, "loss").size(), 60u);
  }
  r = run_lmk("train --config " + cfg + " --auto-resume --resume");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--auto-resume"), std::string::npos) << r.output;
  // Nothing to continue from: --auto-resume starts afresh, replacing what the folder holds.
  fs::create_directories(path("fresh/stale"));
  r = run_lmk("train --config " + config("fresh.toml", "fresh", 3, 0) + " --auto-resume", "",
              "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(path("fresh/stale")));
  EXPECT_EQ(losses("fresh").size(), 3u);
}

TEST_F(TrainCliTest, RecordsIntoTheRunNamedByLmkRunId) {
  const std::string db = path("jobs.db");
  int64_t job = 0, requeued = 0, eval_run = 0;
  {
    ResultsStore store(db);
    const int64_t experiment = store.get_or_create_experiment("jobs");
    job = store.create_run(experiment, {"job/x", "train", {{"placeholder", true}}});
    requeued = store.create_run(experiment, {"job/y", "train", {}});
    eval_run = store.create_run(experiment, {"job/e", "eval", {}});
  }
  const std::string cfg = config("job.toml", "job", 4, 2);
  std::ofstream(cfg, std::ios::app) << "db = \"jobs.db\"\nrun_name = \"ignored\"\n";
  Result r = run_lmk("train --config " + cfg, "",
                     testing::kQuickEnv + " LMK_RUN_ID=" + std::to_string(job));
  ASSERT_EQ(r.code, 0) << r.output;
  {
    ResultsStore store(db, ResultsStore::OpenMode::Existing);
    EXPECT_EQ(store.list_runs().size(), 3u) << "no run created";
    const RunRecord run = store.get_run(job);
    EXPECT_EQ(run.name, "job/x");
    EXPECT_EQ(run.status, RunStatus::Finished);
    EXPECT_FALSE(run.host.empty());
    EXPECT_EQ(run.config["train"]["pooling"], "lmk");
    const auto params = store.run_params(job);
    EXPECT_EQ(params.at("train.pooling"), "lmk");
    EXPECT_EQ(params.count("placeholder"), 0u) << "the config replaced the job's";
    EXPECT_EQ(store.metric_series(job, "loss").size(), 4u);
  }
  // Resuming, LMK_RUN_ID wins over the checkpoint's run (the checkpoint of step 2 is there).
  r = run_lmk("train --config " + cfg + " --resume", "",
              testing::kQuickEnv + " LMK_RUN_ID=" + std::to_string(requeued));
  ASSERT_EQ(r.code, 0) << r.output;
  {
    ResultsStore store(db, ResultsStore::OpenMode::Existing);
    EXPECT_EQ(store.get_run(requeued).status, RunStatus::Finished);
    EXPECT_EQ(store.metric_series(requeued, "loss").size(), 2u) << "steps 3 and 4";
    EXPECT_EQ(store.metric_series(job, "loss").size(), 4u);
  }
  // Bad values, unknown runs, another kind, no store: exit 2 naming LMK_RUN_ID.
  const std::string fresh = config("bad.toml", "bad", 2, 0);
  std::ofstream(fresh, std::ios::app) << "db = \"jobs.db\"\n";
  struct Case {
    std::string value, config;
    std::vector<std::string> message;
  } cases[] = {
      {"abc", fresh, {"LMK_RUN_ID", "'abc'", "positive integer"}},
      {"0", fresh, {"LMK_RUN_ID", "'0'"}},
      {"-3", fresh, {"LMK_RUN_ID", "'-3'"}},
      {"999", fresh, {"LMK_RUN_ID", "999", db}},
      {std::to_string(eval_run), fresh, {"LMK_RUN_ID", "'eval'", "'train'"}},
      {std::to_string(job),
       config("nodb.toml", "nodb", 2, 0),
       {"LMK_RUN_ID is set but the command has no results store"}},
  };
  for (const Case& c : cases) {
    r = run_lmk("train --config " + c.config, "", testing::kQuickEnv + " LMK_RUN_ID=" + c.value);
    EXPECT_EQ(r.code, 2) << c.value << "\n" << r.output;
    for (const std::string& part : c.message)
      EXPECT_NE(r.output.find(part), std::string::npos) << c.value << ": " << part << "\n"
                                                        << r.output;
  }
  ResultsStore store(db, ResultsStore::OpenMode::Existing);
  EXPECT_EQ(store.list_runs().size(), 3u);
  EXPECT_EQ(store.get_run(eval_run).status, RunStatus::Scheduled) << "left as it was";
}

TEST_F(TrainCliTest, LoraFineTunesADecoderResumesExactlyAndMergesAsItsAdapterFolderSays) {
  // A tiny causal Qwen3 decoder ([SEP] is its end-of-text token), adapters on three layer kinds.
  ASSERT_EQ(run_lmk("model init --preset tiny --architecture qwen3 --kv-heads 1 --pooling lmk "
                    "--tokenizer " +
                    tokenizer_ + " --out " + path("decoder"))
                .code,
            0);
  const std::string lora =
      "[lora]\nrank = 4\nalpha = 8\ndropout = 0.1\n"
      "target_modules = [\"q_proj\", \"v_proj\", \"down_proj\"]\n";
  auto decoder_config = [&](const std::string& name, const std::string& out) {
    std::string text = read_file(config(name, out, 24, 12, "learning_rate = 1e-2\n"));
    const std::string init = "init = \"init\"", rate = "learning_rate = 3e-3\n";
    text.replace(text.find(init), init.size(), "init = \"decoder\"");
    text.replace(text.find(rate), rate.size(), "");
    return dir_.write(name, text.replace(text.find("[output]"), 0, lora));
  };
  const std::string cfg = decoder_config("lora.toml", "lora");
  Result r = run_lmk("train --config " + cfg, "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::vector<double> curve = losses("lora");
  ASSERT_EQ(curve.size(), 24u);
  EXPECT_LT((curve[20] + curve[21] + curve[22] + curve[23]) / 4,
            (curve[0] + curve[1] + curve[2] + curve[3]) / 4 * 0.9)
      << "the adapters learn the task";
  // A checkpoint holds the adapters, not the base.
  EXPECT_TRUE(fs::exists(path("lora/checkpoint/adapter/adapter_model.safetensors")));
  EXPECT_FALSE(fs::exists(path("lora/checkpoint/model.safetensors")));
  // Only the adapted layers' weights changed.
  const LoadedModel base = load_model_folder(path("decoder"));
  const LoadedModel tuned = load_model_folder(path("lora/last"));
  int changed = 0;
  for (const auto& [name, weight] : base.encoder->named_weights()) {
    const bool adapted = name.find("q_proj.weight") != std::string::npos ||
                         name.find("v_proj.weight") != std::string::npos ||
                         name.find("down_proj.weight") != std::string::npos;
    const bool equal = at::equal(weight, tuned.encoder->weight(name));
    EXPECT_EQ(equal, !adapted) << name;
    changed += !equal;
  }
  EXPECT_EQ(changed, 12) << "3 layer kinds x 4 layers";
  // Resumed from the step-12 checkpoint: the same curve and weights (the dropout masks too).
  fs::rename(path("lora/last"), path("lora-full"));
  r = run_lmk("train --config " + cfg + " --resume", "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(losses("lora"), curve);
  EXPECT_EQ(read_file(path("lora/last/model.safetensors")),
            read_file(path("lora-full/model.safetensors")));
  // The adapter folder merged by lmk model merge-lora (base from the folder's config): the
  // weights the training saved.
  r = run_lmk("model merge-lora --adapter " + path("lora/last-adapter") + " --out " +
              path("merged"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(read_file(path("merged/model.safetensors")),
            read_file(path("lora-full/model.safetensors")));
  // Bad [lora] settings name their key, before any work.
  const std::string head = "[model]\ninit = \"decoder\"\n[data]\ntrain = \"pairs.jsonl\"\n";
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"[lora]\nrank = 2\ntarget_modules = \"gate\"\n",
            "[lora]: LoRA target modules (gate) match no linear layer"},
           {"[lora]\nrank = 100000\n", "[lora]: LoRA rank 100000 exceeds the layer"},
           {"[lora]\nrank = -1\n", "lora.rank"},
           {"[lora]\nrank = 2\ndropout = 1.5\n", "lora.dropout"},
           {"[lora]\nrank = 2\ndropout = 0.1\n[train]\nrecompute_layers = true\n",
            "[lora] dropout"}}) {
    r = run_lmk("train --config " +
                dir_.write("bad-lora.toml", head + text + "[output]\ndir = \"never\"\n"));
    EXPECT_EQ(r.code, 2) << text << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << text << r.output;
  }
  EXPECT_FALSE(fs::exists(path("never")));
  r = run_lmk("model merge-lora --adapter " + path("decoder") + " --out " + path("m2"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("no adapter_config.json"), std::string::npos) << r.output;
}

TEST_F(TrainCliTest, BadConfigsExitTwoNamingTheKey) {
  struct Case {
    std::string text, message;
  } cases[] = {
      {"[model]\ninit = \"init\"\n[data]\ntrain = \"pairs.jsonl\"\n[output]\ndir = "
       "\"o\"\n[train]\nbatch_size = 0\n",
       "train.batch_size"},
      {"[model]\ninit = \"init\"\n[data]\ntrain = \"pairs.jsonl\"\n[output]\ndir = "
       "\"o\"\n[train]\nlearning_rat = 1\n",
       "train.learning_rat"},
      {"[model]\ninit = \"init\"\n[output]\ndir = \"o\"\n", "data.train"},
      {"[model]\ninit = \"init\"\n[data]\ntrain = \"pairs.jsonl\"\n[output]\ndir = "
       "\"o\"\n[train]\npooling = \"max\"\n",
       "pooling"},
      {"[model\ninit = 1\n", "bad.toml:1"},
      {"[model]\ninit = \"init\"\n[data]\ntrain = \"missing.jsonl\"\n[output]\ndir = \"o\"\n",
       "missing.jsonl"},
      // Debian's LibTorch has no CUDA: a clear refusal naming the key, before any work.
      {"[model]\ninit = \"init\"\n[data]\ntrain = \"pairs.jsonl\"\n[output]\ndir = "
       "\"o\"\n[train]\ndevice = \"cuda\"\n",
       "[train] device"},
      {"[model]\ninit = \"init\"\n[data]\ntrain = \"pairs.jsonl\"\n[output]\ndir = "
       "\"o\"\n[train]\ndevice = \"tpu:0\"\n",
       "is not a device"},
  };
  for (const auto& c : cases) {
    const std::string file = dir_.write("bad.toml", c.text);
    const Result r = run_lmk("train --config " + file);
    EXPECT_EQ(r.code, 2) << c.text << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.text << "\n" << r.output;
  }
  // --device over [train] device, named in the message.
  Result r = run_lmk("train --config " + config("d.toml", "d", 4, 0) + " --device cuda:0");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--device"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("d"))) << "refused before any work";
  r = run_lmk("train --config " + config("r.toml", "never", 4, 0) + " --resume");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("no checkpoint"), std::string::npos) << r.output;
  // Resuming with a changed config is refused, naming what changed.
  ASSERT_EQ(run_lmk("train --config " + config("c1.toml", "c", 4, 2), "", "LMK_THREADS=1").code, 0);
  r = run_lmk("train --config " + config("c2.toml", "c", 4, 2, "weight_decay = 0.5\n") +
              " --resume");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("train.weight_decay"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace lmk
