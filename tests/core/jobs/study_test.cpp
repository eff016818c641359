#include "core/jobs/study.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/store/results_store.h"
#include "core/train/training_config.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/study_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::expect_input_error;
using testing::find_step;
using testing::kBase;
using testing::TempDir;

TEST(StudyPlan, StepsFollowTheConfigAndKeysTrackTheirInputs) {
  TempDir dir;
  const std::string path = dir.write("s.toml", kBase);
  const StudyPlan plan = plan_study(read_study_config(path, "micro"));
  EXPECT_EQ(plan.experiment, "s-micro");
  // corpus, tokenizer, the source's data + pairs + stats, passkey (no needle), init, pretrain,
  // 3 fine-tunes, 3 x (documents of every length + passkey) evaluations.
  EXPECT_EQ(plan.steps.size(), 1u + 1 + 3 + 1 + 1 + 1 + 3 + 6);
  const StudyStep& eval = find_step(plan, "eval/lmk-var/manpages-documents");
  EXPECT_EQ(eval.store_run, "lmk-var/manpages-documents");
  const std::string args = [&] {
    std::string all;
    for (const auto& a : eval.args) all += a + " ";
    return all;
  }();
  EXPECT_NE(args.find("--pooling lmk"), std::string::npos);
  EXPECT_NE(args.find("--granularity 32"), std::string::npos);
  EXPECT_EQ(args.find("--max-length"), std::string::npos) << "windows are read whole";
  const StudyStep& data = find_step(plan, "data/manpages");
  std::string data_args;
  for (const auto& a : data.args) data_args += a + " ";
  EXPECT_NE(data_args.find("--lengths 128,256 --tokenizer "), std::string::npos) << data_args;
  EXPECT_NE(data_args.find("--splits dev,test --stratified"), std::string::npos) << data_args;
  std::string passkey_args;
  for (const auto& a : find_step(plan, "data/passkey").args) passkey_args += a + " ";
  EXPECT_NE(passkey_args.find("--depths 0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1"),
            std::string::npos)
      << passkey_args;
  const StudyStep& finetune = find_step(plan, "finetune/lmk-var");
  ASSERT_EQ(finetune.files.size(), 1u);
  EXPECT_NE(finetune.files[0].second.find("train_landmarks = \"variable:16,32\""),
            std::string::npos);
  EXPECT_NE(finetune.files[0].second.find("eval_landmarks = \"fixed:16\""), std::string::npos);
  EXPECT_NE(finetune.files[0].second.find("max_steps = 5"), std::string::npos);

  // More pretraining steps (same folder and store): pretraining and everything after it
  // change, the data do not.
  const StudyPlan full = plan_study(read_study_config(path, "full", "", plan.config.dir));
  EXPECT_EQ(find_step(full, "tokenizer").key, find_step(plan, "tokenizer").key);
  EXPECT_EQ(find_step(full, "pairs/manpages").key, find_step(plan, "pairs/manpages").key);
  EXPECT_NE(find_step(full, "pretrain").key, find_step(plan, "pretrain").key);
  EXPECT_NE(find_step(full, "finetune/cls").key, find_step(plan, "finetune/cls").key);
  EXPECT_NE(find_step(full, "eval/cls/passkey").key, find_step(plan, "eval/cls/passkey").key);
  // The same config plans the same keys.
  const StudyPlan again = plan_study(read_study_config(path, "micro"));
  for (size_t i = 0; i < plan.steps.size(); ++i)
    EXPECT_EQ(plan.steps[i].key, again.steps[i].key) << plan.steps[i].id;
}

std::string joined(const std::vector<std::string>& args) {
  std::string all;
  for (const auto& a : args) all += a + " ";
  return all;
}

// Several sources: each is rendered (built-in) or read (a folder), gets its datasets, pairs and
// histogram; pretraining reads them all, fine-tuning all their pairs; each is evaluated.
TEST(StudyPlan, EverySourceHasItsDataAndEvaluations) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "notes");
  dir.write("notes/a.txt", "some text\n");
  const std::string path =
      dir.write("s.toml", std::string(kBase) +
                              "[profile.quick.study]\ncorpus = [\"manpages\", \"notes\"]\n"
                              "[profile.quick.eval]\nbenchmarks = [\"passages\", "
                              "\"documents\", \"code\", \"needle\"]\n");
  const StudyConfig c = read_study_config(path, "quick");
  ASSERT_EQ(c.sources.size(), 2u);
  EXPECT_EQ(c.sources[0].builtin, "manpages");
  EXPECT_EQ(c.sources[1].name, "notes");
  EXPECT_EQ(c.sources[1].folder, (dir.path() / "notes").string());
  const StudyPlan plan = plan_study(c);
  EXPECT_NE(joined(find_step(plan, "tokenizer").args).find("--input " + c.sources[1].folder),
            std::string::npos);
  EXPECT_EQ(find_step(plan, "data/notes").deps, (std::vector<std::string>{"tokenizer"}));
  EXPECT_EQ(find_step(plan, "stats/notes").store_histogram, "notes-documents");
  EXPECT_NE(joined(find_step(plan, "data/code").args).find("--splits dev,test"), std::string::npos);
  const std::string pretrain = find_step(plan, "pretrain").files[0].second;
  EXPECT_NE(pretrain.find("train = [\"" + find_step(plan, "corpus/manpages").dir + "\", \"" +
                          c.sources[1].folder + "\"]"),
            std::string::npos)
      << pretrain;
  const std::string finetune = find_step(plan, "finetune/cls").files[0].second;
  EXPECT_NE(finetune.find(find_step(plan, "pairs/notes").dir + "/pairs.jsonl\"]"),
            std::string::npos)
      << finetune;
  for (const char* run : {"cls/manpages-passages", "cls/notes-passages", "cls/notes-documents",
                          "cls/code", "lmk-var/needle"})
    EXPECT_EQ(find_step(plan, std::string("eval/") + run).store_run, run);
  // The haystack of the needle is the first source.
  EXPECT_NE(joined(find_step(plan, "data/needle").args)
                .find("--haystack " + find_step(plan, "corpus/manpages").dir),
            std::string::npos);
  // Sources are named and their names unique; a folder cannot take a task's name.
  std::filesystem::create_directories(dir.path() / "code");
  std::filesystem::create_directories(dir.path() / "other" / "notes");
  EXPECT_NE(expect_input_error(dir.write("t.toml", "[study]\ncorpus = [\"code\"]\n"))
                .find("cannot be named 'code'"),
            std::string::npos);
  EXPECT_NE(
      expect_input_error(dir.write("u.toml", "[study]\ncorpus = [\"notes\", \"other/notes\"]\n"))
          .find("two sources are named 'notes'"),
      std::string::npos);
  EXPECT_NE(expect_input_error(dir.write("v.toml", "[eval]\nbenchmarks = [\"corpus\"]\n"))
                .find("'corpus' is now 'documents'"),
            std::string::npos);
}

// [model] init: fine-tuning starts from the folder (its tokenizer measures the data), with no
// tokenizer, init or pretraining steps; [model] rope = false initializes without RoPE.
TEST(StudyPlan, AModelFolderReplacesTokenizerInitAndPretraining) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "hf");
  dir.write("hf/config.json", "{}");
  const std::string path =
      dir.write("s.toml", std::string(kBase) +
                              "[profile.quick.model]\ninit = \"hf\"\n"
                              "[profile.quick.finetune]\npassage_max_length = 64\n"
                              "[profile.micro.model]\nrope = false\n");
  const StudyPlan plan = plan_study(read_study_config(path, "quick"));
  const std::string model = (dir.path() / "hf").string();
  for (const StudyStep& step : plan.steps) {
    EXPECT_NE(step.id, "tokenizer");
    EXPECT_NE(step.id, "init");
    EXPECT_NE(step.id, "pretrain");
  }
  EXPECT_NE(joined(find_step(plan, "data/manpages").args).find("--tokenizer " + model + " "),
            std::string::npos);
  EXPECT_NE(find_step(plan, "finetune/cls").files[0].second.find("init = \"" + model + "\""),
            std::string::npos);
  EXPECT_EQ(find_step(plan, "finetune/cls").deps, (std::vector<std::string>{"pairs/manpages"}));
  const StudyPlan ablated = plan_study(read_study_config(path, "micro"));
  EXPECT_NE(joined(find_step(ablated, "init").args).find("--no-rope"), std::string::npos);
  EXPECT_EQ(
      joined(find_step(plan_study(read_study_config(path, "full")), "init").args).find("--no-rope"),
      std::string::npos);
  EXPECT_NE(
      expect_input_error(dir.write("w.toml", "[model]\ninit = \"nowhere\"\n")).find("model.init"),
      std::string::npos);
}

// [model] architecture: a decoder is initialized (and pretrained) by the study itself; a
// ModernBERT study's init command names no architecture, so its steps keep their keys.
TEST(StudyPlan, TheArchitectureReachesModelInitOnlyWhenNotModernBert) {
  TempDir dir;
  const std::string path =
      dir.write("s.toml", std::string(kBase) +
                              "[profile.quick.model]\narchitecture = \"qwen3\"\nkv_heads = 2\n"
                              "bidirectional = true\nheads = 4\nhidden_size = 64\n"
                              "[profile.quick.finetune]\npoolings = [\"last\", \"mean\"]\n");
  const StudyPlan decoder = plan_study(read_study_config(path, "quick"));
  const std::string init = joined(find_step(decoder, "init").args);
  EXPECT_EQ(init.rfind("model init ", 0), 0u) << init;
  EXPECT_NE(init.find(" --architecture qwen3 "), std::string::npos) << init;
  EXPECT_NE(init.find(" --kv-heads 2 --bidirectional "), std::string::npos) << init;
  EXPECT_LT(init.find("--architecture"), init.find("--kv-heads")) << init;
  EXPECT_EQ(find_step(decoder, "pretrain").deps.front(), "init");
  EXPECT_NE(find_step(decoder, "finetune/last").files[0].second.find("pooling = \"last\""),
            std::string::npos);
  const StudyPlan encoder = plan_study(read_study_config(path, "full"));
  const std::string modernbert = joined(find_step(encoder, "init").args);
  EXPECT_EQ(modernbert.find("--architecture"), std::string::npos) << modernbert;
  EXPECT_EQ(modernbert.find("--kv-heads"), std::string::npos) << modernbert;
  EXPECT_EQ(modernbert.find("--bidirectional"), std::string::npos) << modernbert;
  // Naming the default changes nothing: the same command, the same key.
  const StudyPlan named = plan_study(read_study_config(
      dir.write("m.toml", std::string(kBase) + "[profile.quick.model]\narchitecture = "
                                               "\"modernbert\"\n"),
      "quick", "", encoder.config.dir));
  EXPECT_EQ(find_step(named, "init").key, find_step(encoder, "init").key);
}

// [study] device reaches every training config and evaluation; the CPU's plan is unchanged.
TEST(StudyPlan, TheDeviceReachesTrainingAndEvaluation) {
  TempDir dir;
  const std::string cpu_path = dir.write("cpu.toml", std::string(kBase));
  const std::string gpu_path =
      dir.write("gpu.toml", std::string(kBase) + "[profile.micro.study]\ndevice = \"cuda\"\n");
  const StudyPlan cpu = plan_study(read_study_config(cpu_path, "micro"));
  const StudyPlan gpu = plan_study(read_study_config(gpu_path, "micro"));
  ASSERT_EQ(cpu.steps.size(), gpu.steps.size());
  size_t training = 0, evaluations = 0;
  for (size_t i = 0; i < gpu.steps.size(); ++i) {
    const StudyStep& step = gpu.steps[i];
    const std::string args = joined(step.args);
    const bool trains = step.args.front() == "train" || step.args.front() == "pretrain";
    if (trains) {
      ++training;
      ASSERT_FALSE(step.files.empty()) << step.id;
      EXPECT_NE(step.files[0].second.find("device = \"cuda\"\n"), std::string::npos) << step.id;
      EXPECT_EQ(cpu.steps[i].files[0].second.find("device ="), std::string::npos) << step.id;
    }
    if (step.args.front() == "eval") {
      ++evaluations;
      EXPECT_NE(args.find("--device cuda"), std::string::npos) << args;
      EXPECT_EQ(joined(cpu.steps[i].args).find("--device"), std::string::npos);
    }
    if (!trains && step.args.front() != "eval") EXPECT_EQ(step.key, cpu.steps[i].key) << step.id;
  }
  EXPECT_GT(training, 1u);
  EXPECT_GT(evaluations, 1u);
  EXPECT_NE(expect_input_error(dir.write("bad.toml", "[study]\ndevice = \"gpu0\"\n"))
                .find("study.device"),
            std::string::npos);
  // The names lmk eval takes, no more: cuda:N with digits only (core/util/device_name).
  EXPECT_EQ(read_study_config(dir.write("n.toml", "[study]\ndevice = \"cuda:3\"\n"), "full").device,
            "cuda:3");
  for (const char* bad : {"cuda:+1", "cuda: 1"})
    EXPECT_NE(expect_input_error(
                  dir.write("bad.toml", std::string("[study]\ndevice = \"") + bad + "\"\n"))
                  .find("is not a device"),
              std::string::npos)
        << bad;
}

// Synthetic in-domain fine-tuning data: passkey and needle pairs at the fine-tuning length, of
// another seed than the evaluation's, in every fine-tuning's data.
TEST(StudyPlan, SyntheticPairsJoinTheFineTuningData) {
  TempDir dir;
  const std::string path =
      dir.write("s.toml", std::string(kBase) + "[profile.quick.finetune]\nsynthetic_pairs = 300\n");
  EXPECT_EQ(read_study_config(path, "full").synthetic_pairs, 0);
  const StudyPlan plain = plan_study(read_study_config(path, "full"));
  for (const StudyStep& step : plain.steps) EXPECT_EQ(step.id.find("synthetic"), std::string::npos);
  const StudyPlan plan = plan_study(read_study_config(path, "quick"));
  for (const std::string task : {"passkey", "needle"}) {
    const StudyStep& step = find_step(plan, "pairs/synthetic-" + task);
    const std::string args = joined(step.args);
    EXPECT_NE(args.find("data " + task + " "), std::string::npos) << args;
    EXPECT_NE(args.find("--lengths 128 --queries 300 --documents 300"), std::string::npos) << args;
    EXPECT_NE(args.find("--seed 43"), std::string::npos) << "not the evaluation's seed: " << args;
    EXPECT_NE(find_step(plan, "finetune/cls").files[0].second.find(step.dir + "/pairs.jsonl"),
              std::string::npos);
  }
  EXPECT_NE(joined(find_step(plan, "data/passkey").args).find("--seed 42"), std::string::npos);
}

// [finetune] train and [eval] datasets: a study of your own data (the H100 recipe's form). No
// corpus, tokenizer, pairs or pretraining steps; the training config reads the files (streamed,
// with warmup, recomputation and LoRA); each dataset is evaluated per pooling at its own length
// cut.
TEST(StudyPlan, DataOfYourOwnTrainsAndIsEvaluatedWithoutACorpus) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "hf");
  std::filesystem::create_directories(dir.path() / "sets" / "mldr");
  std::filesystem::create_directories(dir.path() / "sets" / "qmsum");
  dir.write("hf/config.json", "{}");
  dir.write("train.jsonl", "{}\n");
  const std::string own =
      "[study]\nname = \"own\"\ncorpus = []\n[model]\ninit = \"hf\"\n"
      "[finetune]\ntrain = \"train.jsonl\"\nstream = true\nwarmup_ratio = 0.05\n"
      "recompute_layers = true\npassage_max_length = 512\npoolings = [\"cls\", \"lmk:fixed:32\"]\n"
      "lora_rank = 8\nlora_target_modules = [\"q_proj\", \"v_proj\"]\n"
      "[eval]\nbenchmarks = [\"passkey\"]\ndatasets = [\"sets/mldr\", \"sets/qmsum\"]\n";
  const StudyConfig c =
      read_study_config(dir.write("own.toml", own + "max_lengths = [8192, 0]\n"), "full");
  EXPECT_TRUE(c.sources.empty());
  const StudyPlan plan = plan_study(c);
  std::set<std::string> ids;
  for (const StudyStep& step : plan.steps) ids.insert(step.id);
  EXPECT_EQ(
      ids, (std::set<std::string>{"data/passkey", "finetune/cls", "finetune/lmk-32",
                                  "eval/cls/passkey", "eval/cls/mldr", "eval/cls/qmsum",
                                  "eval/lmk-32/passkey", "eval/lmk-32/mldr", "eval/lmk-32/qmsum"}));
  const std::string toml = find_step(plan, "finetune/lmk-32").files[0].second;
  for (const std::string& line :
       {"train = [\"" + (dir.path() / "train.jsonl").string() + "\"]\nstream = true\n",
        std::string("warmup_ratio = 0.05\n"), std::string("recompute_layers = true\n"),
        std::string("[lora]\nrank = 8\nalpha = 16\ndropout = 0\n"
                    "target_modules = [\"q_proj\", \"v_proj\"]\n[output]\n")})
    EXPECT_NE(toml.find(line), std::string::npos) << line << " in\n" << toml;
  EXPECT_TRUE(find_step(plan, "finetune/cls").deps.empty());
  const StudyStep& mldr = find_step(plan, "eval/lmk-32/mldr");
  EXPECT_EQ(mldr.deps, (std::vector<std::string>{"finetune/lmk-32"}));
  EXPECT_NE(joined(mldr.args).find("--dataset " + (dir.path() / "sets/mldr").string() + " "),
            std::string::npos);
  EXPECT_NE(joined(mldr.args).find("--max-length 8192"), std::string::npos) << joined(mldr.args);
  EXPECT_EQ(joined(find_step(plan, "eval/cls/qmsum").args).find("--max-length"), std::string::npos);
  EXPECT_EQ(mldr.store_run, "lmk-32/mldr");
  // A file of your own replaced under the same path runs what reads it again.
  dir.write("train.jsonl", "{}\n{}\n");
  const StudyPlan retrained = plan_study(c);
  EXPECT_NE(find_step(retrained, "finetune/lmk-32").key, find_step(plan, "finetune/lmk-32").key);
  EXPECT_NE(find_step(retrained, "eval/lmk-32/qmsum").key,
            find_step(plan, "eval/lmk-32/qmsum").key);  // through its dependency
  dir.write("sets/qmsum/corpus.jsonl", "{}\n");
  const StudyPlan redone = plan_study(c);
  EXPECT_EQ(find_step(redone, "finetune/lmk-32").key, find_step(retrained, "finetune/lmk-32").key);
  EXPECT_EQ(find_step(redone, "eval/lmk-32/mldr").key,
            find_step(retrained, "eval/lmk-32/mldr").key);
  EXPECT_NE(find_step(redone, "eval/lmk-32/qmsum").key,
            find_step(retrained, "eval/lmk-32/qmsum").key);
  EXPECT_EQ(plan_study(c).steps.size(), plan.steps.size());
  // One length for every dataset.
  const StudyPlan one =
      plan_study(read_study_config(dir.write("one.toml", own + "max_lengths = [4096]\n"), "full"));
  EXPECT_NE(joined(find_step(one, "eval/cls/qmsum").args).find("--max-length 4096"),
            std::string::npos);
  // A study of the built-in corpus writes none of the new keys (its steps keep their keys).
  const StudyPlan builtin = plan_study(read_study_config(dir.write("b.toml", kBase), "full"));
  for (const char* key : {"stream", "warmup_ratio", "recompute_layers", "[lora]"})
    EXPECT_EQ(find_step(builtin, "finetune/cls").files[0].second.find(key), std::string::npos);

  // What such a study cannot do, each error naming its key.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {own + "max_lengths = [4096]\n[profile.quick.model]\ninit = \"\"\n", "model.init"},
      {"[study]\ncorpus = []\n[model]\ninit = \"hf\"\n[eval]\nbenchmarks = [\"passkey\"]\n",
       "finetune.train"},
      {own + "[profile.quick.eval]\nbenchmarks = [\"documents\"]\n", "eval.benchmarks"},
      {own + "[profile.quick.finetune]\nsynthetic_pairs = 10\n", "finetune.synthetic_pairs"},
      {own + "[profile.quick.finetune]\nlora_rank = -1\n", "finetune.lora_rank"},
      {own + "[profile.quick.finetune]\nlora_dropout = 1\n", "finetune.lora_dropout"},
      {own + "[profile.quick.eval]\nmax_lengths = [1, 2, 3]\n", "eval.max_lengths"},
      {own + "[profile.quick.eval]\nmax_lengths = [-1]\n", "eval.max_lengths"},
      {own + "[profile.quick.finetune]\ntrain = \"missing.jsonl\"\n", "finetune.train"},
      {own + "[profile.quick.eval]\ndatasets = [\"sets/mldr\", \"sets/nowhere\"]\n",
       "eval.datasets"},
      {own + "[profile.quick.eval]\ndatasets = [\"sets/mldr\", \"sets/../sets/mldr\"]\n",
       "eval.datasets"},
      {own + "[profile.quick.eval]\nbenchmarks = []\ndatasets = []\n", "eval.benchmarks"},
      {std::string(kBase) + "[profile.quick.finetune]\nstream = true\n", "finetune.stream"},
      {std::string(kBase) + "[profile.quick.finetune]\nwarmup_ratio = 2\n",
       "finetune.warmup_ratio"},
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    const std::string path = dir.write("bad" + std::to_string(i) + ".toml", bad[i].first);
    EXPECT_NE(expect_input_error(path, "quick").find(bad[i].second), std::string::npos)
        << i << ": " << bad[i].first;
  }
  // A dataset named like a built-in task's run is refused only when that task runs.
  std::filesystem::create_directories(dir.path() / "sets" / "passkey");
  EXPECT_NE(expect_input_error(dir.write("clash.toml", own + "[profile.quick.eval]\ndatasets = "
                                                             "[\"sets/passkey\"]\n"),
                               "quick")
                .find("named 'passkey'"),
            std::string::npos);
  EXPECT_NO_THROW(read_study_config(
      dir.write("free.toml", own + "[profile.quick.eval]\nbenchmarks = []\ndatasets = "
                                   "[\"sets/passkey\"]\n"),
      "quick"));
}

TEST(StudyPlan, ChoosingTheGranularityOnDevNeedsASweepOverItAndADevSplit) {
  TempDir dir;
  EXPECT_NE(expect_input_error(
                dir.write("a.toml", std::string(kBase) + "[profile.full.eval]\nselect = \"dev\"\n"))
                .find("eval.select"),
            std::string::npos);
  const std::string sweep = "[sweep]\n\"eval.granularity\" = [16, 64]\n";
  EXPECT_NE(expect_input_error(
                dir.write("b.toml", std::string(kBase) +
                                        "[profile.full.eval]\nselect = \"dev\"\nbenchmarks = "
                                        "[\"passkey\"]\n" +
                                        sweep))
                .find("passkey and needle have none"),
            std::string::npos);
  EXPECT_NE(expect_input_error(dir.write("c.toml", std::string(kBase) +
                                                       "[profile.full.eval]\nselect = \"best\"\n"))
                .find("eval.select"),
            std::string::npos);
  const std::string path =
      dir.write("d.toml", std::string(kBase) + "[profile.quick.eval]\nselect = \"dev\"\n" + sweep);
  const std::vector<StudyConfig> cells = read_study_grid(path, "quick");
  EXPECT_EQ(cells[0].granularity_label, "granularity");
  const StudyPlan plan = plan_study(cells);
  // Dev evaluations for the poolings that read the granularity, on the tasks that have a dev
  // split; not for CLS, not for passkey.
  const StudyStep& dev = find_step(plan, "granularity=64/eval/lmk-16/manpages-documents:dev");
  EXPECT_EQ(dev.store_run, "granularity=64/lmk-16/manpages-documents:dev");
  EXPECT_NE(joined(dev.args).find("--split dev"), std::string::npos);
  for (const StudyStep& step : plan.steps) {
    EXPECT_EQ(step.id.find("cls/manpages-documents:dev"), std::string::npos) << step.id;
    EXPECT_EQ(step.id.find("passkey:dev"), std::string::npos) << step.id;
  }
}

const char* kSweep = R"(
[sweep]
"eval.granularity" = [16, 64]
[[sweep.zip]]
"finetune.steps" = [5, 10]
"finetune.learning_rate" = [1e-4, 2e-4]
)";

// Every subset of the benchmarks (with one pooling and with all), and every subset of the
// poolings (with every benchmark), plans: each chosen benchmark is evaluated for every pooling,
// no other is, every step's dependencies are steps of the plan, and the study's tables read an
// empty store without failing. (A subset without a source's datasets crashed the planner.)
TEST(StudyPlan, EverySubsetOfTheBenchmarksAndThePoolingsPlans) {
  TempDir dir;
  ResultsStore store((dir.path() / "empty.db").string());
  const std::vector<std::string>& benchmarks = study_benchmarks();
  const std::vector<std::pair<std::string, std::string>> poolings = {
      {"\"cls\"", "cls"},
      {"\"mean\"", "mean"},
      {"\"lmk:fixed:16\"", "lmk-16"},
      {"\"lmk:variable:16,32\"", "lmk-var"}};
  auto plan_of = [&](uint32_t benchmark_mask, uint32_t pooling_mask) {
    std::string chosen, pooled;
    std::vector<std::string> names, labels;
    for (size_t i = 0; i < benchmarks.size(); ++i)
      if (benchmark_mask >> i & 1) {
        chosen += (chosen.empty() ? "\"" : ", \"") + benchmarks[i] + "\"";
        names.push_back(benchmarks[i]);
      }
    for (size_t i = 0; i < poolings.size(); ++i)
      if (pooling_mask >> i & 1) {
        pooled += (pooled.empty() ? "" : ", ") + poolings[i].first;
        labels.push_back(poolings[i].second);
      }
    const std::string config =
        "[study]\nname = \"s\"\ncorpus = \"builtin\"\n"
        "[finetune]\npoolings = [" +
        pooled +
        "]\n"
        "[eval]\nbenchmarks = [" +
        chosen + "]\n";
    const std::string label = "benchmarks [" + chosen + "], poolings [" + pooled + "]";
    StudyPlan plan;
    try {
      plan = plan_study(read_study_config(dir.write("s.toml", config), "full"));
    } catch (const std::exception& e) {
      ADD_FAILURE() << label << ": " << e.what();
      return;
    }
    std::set<std::string> ids, evaluated;
    for (const StudyStep& step : plan.steps) {
      for (const std::string& dep : step.deps)
        EXPECT_TRUE(ids.count(dep)) << label << ": " << step.id << " reads " << dep;
      ids.insert(step.id);
      if (step.kind == "eval") evaluated.insert(step.id);
    }
    std::set<std::string> expected;
    for (const std::string& pooling : labels)
      for (const std::string& b : names)
        expected.insert("eval/" + pooling + "/" +
                        (b == "passages" || b == "documents" ? "manpages-" + b : b));
    EXPECT_EQ(evaluated, expected) << label;
    EXPECT_NO_THROW(study_table(plan, store)) << label;
  };
  const uint32_t all_benchmarks = (1u << benchmarks.size()) - 1;
  const uint32_t all_poolings = (1u << poolings.size()) - 1;
  for (uint32_t b = 1; b <= all_benchmarks; ++b)
    for (uint32_t p : {1u, all_poolings}) plan_of(b, p);
  for (uint32_t p = 1; p <= all_poolings; ++p) plan_of(all_benchmarks, p);
}

// The generated tasks: each its own data step with the study's tokenizer and lengths, the
// needles' haystack the first source, named as the benchmark in the store.
TEST(StudyPlan, TheRulerTasksAreGeneratedAsStudySteps) {
  TempDir dir;
  const std::string path =
      dir.write("s.toml", std::string(kBase) +
                              "[profile.quick.eval]\nbenchmarks = [\"needle-multivalue\", "
                              "\"needle-multiquery\", \"cwe\", \"fwe\"]\nneedle_values = 3\n"
                              "needle_queries = 2\nneedle_lengths = [128, 512]\n");
  const StudyPlan plan = plan_study(read_study_config(path, "quick"));
  const std::string tokenizer = find_step(plan, "tokenizer").dir + "/tokenizer.model";
  const std::string haystack = find_step(plan, "corpus/manpages").dir;
  const std::string mv = joined(find_step(plan, "data/needle-multivalue").args);
  EXPECT_EQ(mv.rfind("data needle --tokenizer " + tokenizer, 0), 0u) << mv;
  EXPECT_NE(mv.find("--lengths 128,512 "), std::string::npos) << mv;
  EXPECT_NE(mv.find("--haystack " + haystack + " --keys 1 --values 3 --name needle-multivalue"),
            std::string::npos)
      << mv;
  const std::string mq = joined(find_step(plan, "data/needle-multiquery").args);
  EXPECT_NE(mq.find("--keys 2 --queries-per-document 2 --name needle-multiquery"),
            std::string::npos)
      << mq;
  const std::string cwe = joined(find_step(plan, "data/cwe").args);
  EXPECT_EQ(cwe.rfind("data cwe --tokenizer", 0), 0u) << cwe;
  EXPECT_NE(cwe.find("--depths 0,0.1"), std::string::npos) << cwe;
  EXPECT_EQ(cwe.find("--name"), std::string::npos) << cwe;
  const std::string fwe = joined(find_step(plan, "data/fwe").args);
  EXPECT_EQ(fwe.find("--depths"), std::string::npos) << fwe;  // fwe has no depth
  EXPECT_EQ(find_step(plan, "eval/lmk-var/cwe").store_run, "lmk-var/cwe");
  EXPECT_EQ(find_step(plan, "eval/cls/needle-multiquery").deps,
            (std::vector<std::string>{"finetune/cls", "data/needle-multiquery"}));
  // The passkey and needle steps are what they were (a study's finished steps are reused).
  const StudyPlan micro = plan_study(read_study_config(path, "micro"));
  EXPECT_EQ(joined(find_step(micro, "data/passkey").args).find("--name"), std::string::npos);
  // A multi-value needle states at most 8 values.
  EXPECT_NE(expect_input_error(dir.write("v.toml", std::string(kBase) +
                                                       "[profile.quick.eval]\nneedle_values = 9\n"),
                               "quick")
                .find("profile.quick.eval.needle_values"),
            std::string::npos);
}

TEST(StudySweep, CellsShareTheStepsTheirValuesDoNotChange) {
  TempDir dir;
  const std::string path = dir.write("s.toml", std::string(kBase) + kSweep);
  const std::vector<StudyConfig> cells = read_study_grid(path, "micro");
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0].cell_name, "granularity=16,steps=5,learning_rate=0.0001");
  EXPECT_EQ(cells[3].cell_name, "granularity=64,steps=10,learning_rate=0.0002");
  EXPECT_EQ(cells[1].granularity, 16);
  EXPECT_EQ(cells[1].finetune_steps, 10);
  EXPECT_DOUBLE_EQ(cells[1].finetune_lr, 2e-4);
  EXPECT_EQ(cells[2].granularity, 64);
  EXPECT_EQ(cells[2].finetune_steps, 5);
  EXPECT_EQ(cells[2].pretrain_steps, 3);  // the profile still applies
  const StudyPlan plan = plan_study(cells);
  // 8 steps every cell shares (corpus ... pretrain); the 3 fine-tunings and the 2 cls
  // evaluations per (steps, learning rate); the LMK evaluations per cell:
  // 8 + 2 x (3 + 2) + 4 x 2 x 2.
  EXPECT_EQ(plan.steps.size(), 8u + 2 * 5 + 4 * 2 * 2);
  std::set<std::string> keys, dirs;
  for (const StudyStep& step : plan.steps) {
    EXPECT_TRUE(keys.insert(step.key).second) << step.id;
    EXPECT_TRUE(step.dir.empty() || dirs.insert(step.dir).second) << step.id;
  }
  EXPECT_EQ(find_step(plan, "pretrain").cells.size(), 4u);
  EXPECT_EQ(find_step(plan, "pretrain").store_run, "pretrain");
  const StudyStep& cls = find_step(plan, "steps=5,learning_rate=0.0001/finetune/cls");
  EXPECT_EQ(cls.cells, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(cls.store_run, "steps=5,learning_rate=0.0001/finetune/cls");
  EXPECT_EQ(cls.deps, (std::vector<std::string>{"pretrain", "pairs/manpages"}));
  const StudyStep& lmk =
      find_step(plan, "granularity=64,steps=10,learning_rate=0.0002/eval/lmk-16/passkey");
  EXPECT_EQ(lmk.store_run, "granularity=64,steps=10,learning_rate=0.0002/lmk-16/passkey");
  std::string args;
  for (const std::string& a : lmk.args) args += a + " ";
  EXPECT_NE(args.find("--granularity 64"), std::string::npos) << args;
  EXPECT_NE(args.find("--run-name " + lmk.store_run + " "), std::string::npos) << args;
  EXPECT_NE(args.find(find_step(plan, "steps=10,learning_rate=0.0002/finetune/lmk-16").dir),
            std::string::npos)
      << args;
  // Each cell reads its own runs back.
  EXPECT_EQ(plan.cells[2].run_names.at("cls/passkey"), "steps=5,learning_rate=0.0001/cls/passkey");
  EXPECT_EQ(plan.cells[2].run_names.at("lmk-var/manpages-documents"),
            "granularity=64,steps=5,learning_rate=0.0001/lmk-var/manpages-documents");
  // The run name is no input: the same step in a study without the sweep has the same key.
  const StudyPlan single =
      plan_study(read_study_config(dir.write("one.toml", kBase), "micro", "", plan.config.dir));
  EXPECT_EQ(find_step(single, "pretrain").key, find_step(plan, "pretrain").key);
  EXPECT_EQ(find_step(single, "eval/cls/passkey").key,
            find_step(plan, "steps=5,learning_rate=0.0001/eval/cls/passkey").key);
}

// A training step's config file is written from its typed config through the settings tables:
// lmk train's and lmk pretrain's own readers read it back to that config (every recorded key,
// and the output, schedule and device keys), for every option a study sets.
TEST(StudyPlan, TrainingStepsWriteConfigsTheirCommandsReadBack) {
  TempDir dir;
  MissingInputs missing;  // kEveryOption's folders and datasets of your own are not here
  const StudyPlan plan = plan_study(
      read_study_grid(dir.write("every.toml", testing::kEveryOption), "full", "", "", &missing));
  size_t checked = 0;
  for (const StudyStep& step : plan.steps) {
    if (!step.command) continue;
    auto check = [&](const auto& request, const auto& read, const auto& table) {
      ASSERT_EQ(step.files.size(), 1u) << step.id;
      const auto& [path, content] = step.files.front();
      const std::string file = dir.write(step.key + ".toml", content);
      const auto back = read(file);
      auto typed = request.config;  // with the placeholders filled, as in the file
      typed.out_dir = step.dir;
      typed.run_name = step.store_run;
      nlohmann::json want = nlohmann::json::object(), got = nlohmann::json::object();
      add_settings_json(want, training_settings(), static_cast<const TrainingSettings&>(typed));
      add_settings_json(want, table, typed);
      add_settings_json(got, training_settings(), static_cast<const TrainingSettings&>(back));
      add_settings_json(got, table, back);
      EXPECT_EQ(got, want) << step.id;
      EXPECT_EQ(back.out_dir, step.dir) << step.id;
      EXPECT_EQ(back.db, plan.config.db) << step.id;
      EXPECT_EQ(back.experiment, plan.experiment) << step.id;
      EXPECT_EQ(back.run_name, step.store_run) << step.id;
      EXPECT_EQ(back.device, "cuda:1") << step.id;
      EXPECT_EQ(back.checkpoint_every, 100) << step.id;
      EXPECT_EQ(path, step.dir + ".toml") << step.id;
      ++checked;
    };
    if (const auto* finetune = std::get_if<FinetuneRequest>(&*step.command)) {
      check(*finetune, read_contrastive_config, contrastive_settings());
      EXPECT_TRUE(finetune->config.recompute_layers) << step.id;
      EXPECT_EQ(finetune->config.lora_targets, (std::vector<std::string>{"q_proj", "v_proj"}));
    } else if (const auto* pretrain = std::get_if<PretrainRequest>(&*step.command)) {
      check(*pretrain, read_pretrain_config, pretrain_settings());
    }
  }
  // 2 seeds x (pretraining + 4 fine-tunes)
  EXPECT_EQ(checked, 10u);
}

TEST(StudySweep, AnInvalidCellRejectsTheWholeGridNamingIt) {
  TempDir dir;
  auto error = [&](const std::string& name, const std::string& sweep) {
    try {
      read_study_grid(dir.write(name, std::string(kBase) + sweep), "micro");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    ADD_FAILURE() << "no InputError for " << sweep;
    return std::string();
  };
  std::string m = error("a.toml", "[sweep]\n\"pretrain.learning_rate\" = [1e-3, -1.0]\n");
  EXPECT_NE(m.find("sweep.\"pretrain.learning_rate\" (sweep cell learning_rate=-1)"),
            std::string::npos)
      << m;
  m = error("b.toml", "[sweep]\n\"finetune.poolings\" = [[\"cls\"], [\"lmk:fixed:0\"]]\n");
  EXPECT_NE(m.find("sweep cell poolings=[lmk:fixed:0]"), std::string::npos) << m;
  m = error("c.toml", "[sweep]\n\"pretrain.max_lenght\" = [128, 256]\n");
  EXPECT_NE(m.find("'pretrain.max_lenght' is not a key"), std::string::npos) << m;
  m = error("d.toml", "[[sweep.zip]]\n\"pretrain.steps\" = [1, 2]\n\"finetune.steps\" = [1]\n");
  EXPECT_NE(m.find("equal lengths"), std::string::npos) << m;
  m = error("e.toml", "[sweep]\n\"study.dir\" = [\"a\", \"b\"]\n");
  EXPECT_NE(m.find("cannot differ between sweep cells"), std::string::npos) << m;
  m = error("f.toml", "[sweep]\n\"eval.granularity\" = []\n");
  EXPECT_NE(m.find("non-empty array"), std::string::npos) << m;
  m = error("g.toml", "[sweep]\n\"eval.granularity\" = [16]\n\"eval.granularity\" = [32]\n");
  EXPECT_NE(m.find("g.toml"), std::string::npos) << m;
}

}  // namespace
}  // namespace lmk
