// lmk study end to end: the micro profile of experiments/pooling-vs-length.toml on two built-in
// sources (rendered man pages and the Python documentation), through the real lmk binary, into a
// real store; then a second run that reuses every step.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/jobs/study.h"
#include "core/store/results_store.h"
#include "core/util/file.h"
#include "tests/support/run_lmk.h"
#include "tests/support/study_tests.h"

namespace lmk {
namespace {

using testing::Result;
using testing::run_lmk;
using testing::TempDir;

const std::string kConfig = std::string(LMK_SOURCE_DIR) + "/experiments/pooling-vs-length.toml";

// The tables' rows ("TITLE | pooling label" -> cells), from the lines between each table's header
// and its legend: a row key letter, the label and the cells, two or more spaces apart; a table's
// title is the line above its header.
std::map<std::string, std::vector<std::string>> table_rows(const std::string& output) {
  std::map<std::string, std::vector<std::string>> rows;
  std::istringstream in(output);
  bool in_table = false;
  std::string title, previous;
  for (std::string line; std::getline(in, line);) {
    if (line.find("  pooling  ") != std::string::npos) {
      in_table = true;
      title = previous.substr(0, previous.find(':'));
      std::getline(in, line);  // the rule
      continue;
    }
    previous = line;
    if (!in_table) continue;
    if (line.rfind("Cells:", 0) == 0) {
      in_table = false;
      continue;
    }
    std::vector<std::string> cells;
    for (size_t at = 0; at < line.size();) {
      const size_t end = line.find("  ", at);
      cells.push_back(line.substr(at, end - at));
      if (end == std::string::npos) break;
      at = line.find_first_not_of(' ', end);
    }
    if (cells.size() > 2) rows[title + " | " + cells[1]] = {cells.begin() + 2, cells.end()};
  }
  return rows;
}

TEST(StudyCli, MicroProfileRunsEndToEndAndASecondRunReusesEveryStep) {
  TempDir dir;
  const std::string study = (dir.path() / "study").string();
  const std::string db = (dir.path() / "results.db").string();
  const std::string args = "study " + kConfig + " --profile micro --dir " + study + " --db " + db;
  const Result r = run_lmk(args, "", "LMK_THREADS=2");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("46 steps run, 0 reused"), std::string::npos) << r.output;

  // The comparison tables, per source and task: every pooling, every length, a mean and the
  // half width of its interval in each; the test and the correction named under each.
  const auto rows = table_rows(r.output);
  const std::map<std::string, size_t> columns = {
      {"manpages", 3}, {"python-docs", 3}, {"code", 1}, {"passkey", 2}, {"needle", 2}};
  ASSERT_EQ(rows.size(), 4u * columns.size()) << r.output;
  for (const auto& [table, width] : columns) {
    for (const std::string label : {"cls (baseline)", "mean", "lmk-32", "lmk-var"}) {
      const std::string key = table + " | " + label;
      ASSERT_TRUE(rows.count(key)) << key << "\n" << r.output;
      ASSERT_EQ(rows.at(key).size(), width) << key << "\n" << r.output;
      for (const std::string& cell : rows.at(key)) {
        std::istringstream parts(cell);
        double mean = -1, half_width = -1;
        std::string plus_minus;
        parts >> mean >> plus_minus >> half_width;
        EXPECT_GE(mean, 0.0) << cell;
        EXPECT_LE(mean, 1.0) << cell;
        EXPECT_EQ(plus_minus, "±") << cell;
        EXPECT_GE(half_width, 0.0) << cell;
      }
    }
  }
  EXPECT_NE(r.output.find("Fisher's randomization test"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("each row against cls; Holm–Bonferroni over the 9 comparisons"),
            std::string::npos)
      << r.output;

  // Everything landed in the store.
  const ResultsStore store(db, ResultsStore::OpenMode::Existing);
  RunFilter filter;
  filter.experiment = "pooling-vs-length-micro";
  const auto runs = store.list_runs(filter);
  std::set<std::string> names;
  size_t evals = 0, profiles = 0;
  // Built from a checkout: every run records the source revision it ran.
  const bool checkout = std::filesystem::exists(std::string(LMK_SOURCE_DIR) + "/.git/HEAD");
  for (const RunRecord& run : runs) {
    EXPECT_EQ(run.status, RunStatus::Finished) << run.name;
    if (checkout) EXPECT_EQ(run.code_revision.size(), 40u) << run.name << ": " << run.code_revision;
    names.insert(run.name);
    if (run.kind == "eval") {
      ++evals;
      EXPECT_FALSE(store.eval_results(run.id).empty()) << run.name;
      EXPECT_TRUE(store.has_query_results(run.id)) << run.name;
      // A source's evaluations carry the name its length histogram is stored under.
      for (const std::string source : {"manpages", "python-docs"})
        if (run.name.find("/" + source + "-documents") != std::string::npos)
          for (const auto& result : store.eval_results(run.id))
            EXPECT_EQ(result.dataset, source + "-documents") << run.name;
      profiles += !store.attention_profiles(run.id).empty();
    }
  }
  // Per pooling: passages and documents of two sources, code, passkey, needle.
  EXPECT_EQ(evals, 4u * 7);
  EXPECT_GE(profiles, 4u * 4);  // every long-document evaluation stores its attention profile
  for (const std::string name :
       {"pretrain", "finetune/cls", "finetune/mean", "finetune/lmk-32", "finetune/lmk-var"})
    EXPECT_TRUE(names.count(name)) << name;
  // The loss curves of the training runs, and the length histograms of the sources.
  for (const RunRecord& run : runs) {
    if (run.kind == "eval") continue;
    EXPECT_GE(store.metric_series(run.id, "loss").size(), 2u) << run.name;
  }
  EXPECT_EQ(store.length_histograms("manpages-documents").size(), 1u);
  EXPECT_EQ(store.length_histograms("python-docs-documents").size(), 1u);

  // Again: every step is reused and the tables are the same.
  const Result again = run_lmk(args, "", "LMK_THREADS=2");
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("0 steps run, 46 reused"), std::string::npos) << again.output;
  EXPECT_EQ(table_rows(again.output), rows);
  EXPECT_EQ(store.list_runs(filter).size(), runs.size());

  // Another store is another study: what writes to the store runs again, the data do not.
  const Result other_db = run_lmk("study " + kConfig + " --profile micro --dir " + study +
                                      " --dry-run --db " + (dir.path() / "other.db").string(),
                                  "", "");
  ASSERT_EQ(other_db.code, 0) << other_db.output;
  EXPECT_NE(other_db.output.find("reuse tokenizer"), std::string::npos) << other_db.output;
  EXPECT_NE(other_db.output.find("reuse data/manpages"), std::string::npos) << other_db.output;
  EXPECT_NE(other_db.output.find("run   pretrain"), std::string::npos) << other_db.output;
  EXPECT_NE(other_db.output.find("run   eval/cls/passkey"), std::string::npos) << other_db.output;
}

TEST(StudyCli, BadConfigFailsBeforeAnyWorkNamingTheKey) {
  TempDir dir;
  const std::string config =
      dir.write("bad.toml", "[finetune]\npoolings = [\"lmk:variable:32,0\"]\n");
  const Result r = run_lmk("study " + config + " --dir " + (dir.path() / "s").string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("finetune.poolings"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "s"));
  const Result profile = run_lmk("study " + kConfig + " --profile huge --dry-run");
  EXPECT_EQ(profile.code, 2) << profile.output;
  EXPECT_NE(profile.output.find("--profile"), std::string::npos) << profile.output;
}

// Every study shipped in experiments/ plans as it is, for every profile, through both commands
// that plan (lmk study and lmk submit, local and Slurm): nothing to prepare by hand. A study
// naming inputs the user supplies (the H100 recipe's model folder, training file and datasets)
// says so in one line and still prints its plan; the training configs there (lmk train / lmk
// pretrain) are not studies and are checked by their own tests.
TEST(StudyCli, EveryShippedStudyPlansAsItIs) {
  TempDir dir;
  int studies = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(LMK_SOURCE_DIR) + "/experiments")) {
    if (entry.path().extension() != ".toml") continue;
    const std::string text = read_file(entry.path().string());
    if (text.find("\n[study]") == std::string::npos && text.rfind("[study]", 0) != 0) continue;
    ++studies;
    const std::string name = entry.path().stem().string();
    const bool own_inputs = name == "lmk-modernbert-msmarco-h100";
    for (const char* profile : {"micro", "quick", "full"}) {
      const std::string where = " --dir " + (dir.path() / name).string() + " --db " +
                                (dir.path() / (name + ".db")).string();
      for (const std::string& command :
           {"study " + entry.path().string() + " --dry-run --profile " + profile + where,
            "submit " + entry.path().string() + " --dry-run --profile " + profile + where,
            "submit " + entry.path().string() + " --dry-run --executor slurm --profile " + profile +
                where}) {
        const Result r = run_lmk(command);
        EXPECT_EQ(r.code, 0) << command << "\n" << r.output;
        EXPECT_NE(r.output.find("run   "), std::string::npos) << command << "\n" << r.output;
        const size_t said = r.output.find("you supply");
        EXPECT_EQ(said != std::string::npos, own_inputs) << command << "\n" << r.output;
        if (own_inputs) {
          // One line, naming the model folder, the training file and the datasets by their keys.
          const size_t begin = r.output.rfind('\n', said) + 1;
          const std::string line = r.output.substr(begin, r.output.find('\n', said) - begin);
          for (const char* key : {"model.init", "finetune.train", "eval.datasets",
                                  "models/ModernBERT-base", "msmarco-train.jsonl.gz"})
            EXPECT_NE(line.find(key), std::string::npos) << key << " in " << line;
        }
      }
    }
  }
  EXPECT_GE(studies, 5);
  // A run (not a dry run) still refuses a missing input, naming its key.
  const std::string h100 =
      std::string(LMK_SOURCE_DIR) + "/experiments/lmk-modernbert-msmarco-h100.toml";
  const Result run = run_lmk("submit " + h100 + " --dir " + (dir.path() / "h").string() + " --db " +
                             (dir.path() / "h.db").string());
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("model.init"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "h.db"));
}

// Core writes the commands a study runs from typed requests (core/jobs/lmk_commands.h), away
// from app/ where lmk declares their options: every flag of every step of a study that sets
// every option is one lmk declares for that command (LMK_LIST_OPTIONS=1 lists them), a flag
// without a value where lmk's takes none, and one with a value where lmk's takes one.
TEST(StudyCli, EveryFlagAStudyWritesIsOneLmkDeclares) {
  TempDir dir;
  std::map<std::string, bool> declared;  // "command --option" -> takes no value
  const Result listed = run_lmk("", "", "LMK_LIST_OPTIONS=1");
  ASSERT_EQ(listed.code, 0) << listed.output;
  std::istringstream lines(listed.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    declared[j["command"].get<std::string>() + " " + j["option"].get<std::string>()] = j["flag"];
  }
  MissingInputs missing;
  const StudyPlan plan = plan_study(
      read_study_grid(dir.write("every.toml", testing::kEveryOption), "full", "", "", &missing));
  std::set<std::string> commands, seen;
  for (const StudyStep& step : plan.steps) {
    // The command path: the words before the first option or positional argument.
    std::string command = step.args.at(0);
    size_t at = 1;
    if (command == "data" || command == "model") command += " " + step.args.at(at++);
    commands.insert(command);
    for (; at < step.args.size(); ++at) {
      const std::string& arg = step.args[at];
      if (arg.rfind("--", 0) != 0) continue;  // a value, or data stats' folder
      const auto found = declared.find(command + " " + arg);
      ASSERT_NE(found, declared.end()) << "lmk " << command << " declares no " << arg;
      const bool has_value = at + 1 < step.args.size() && step.args[at + 1].rfind("--", 0) != 0;
      EXPECT_EQ(found->second, !has_value) << "lmk " << command << " " << arg;
      seen.insert(command + " " + arg);
    }
  }
  // Every command a study runs, and their options: a plan that wrote fewer would pass too easily.
  EXPECT_EQ(commands, (std::set<std::string>{"data docs", "data manpages", "tokenizer-train",
                                             "data corpus", "data pairs", "data stats", "data code",
                                             "data passkey", "data needle", "data cwe", "data fwe",
                                             "model init", "pretrain", "train", "eval"}));
  EXPECT_GE(seen.size(), 60u);
}

// The benchmarks are a free choice: a study of only the generated tasks (no source datasets)
// plans through the CLI (it crashed in the planner: "internal error: map::at").
TEST(StudyCli, ABenchmarkSubsetOfTheShippedStudyPlans) {
  TempDir dir;
  std::string text = read_file(kConfig);
  const std::string from =
      "benchmarks = [\"passages\", \"documents\", \"code\", \"passkey\", \"needle\"]";
  ASSERT_NE(text.find(from), std::string::npos);
  for (const std::string subset :
       {"[\"passkey\"]", "[\"code\"]", "[\"passkey\", \"needle\"]", "[\"cwe\", \"fwe\"]",
        "[\"needle-multivalue\", \"needle-multiquery\", \"documents\"]"}) {
    std::string copy = text;
    copy.replace(copy.find(from), from.size(), "benchmarks = " + subset);
    const std::string config = dir.write("subset.toml", copy);
    for (const std::string& command : {"submit " + config + " --dry-run --profile micro",
                                       "study " + config + " --dry-run --profile micro"}) {
      const Result r = run_lmk(command + " --dir " + (dir.path() / "s").string());
      EXPECT_EQ(r.code, 0) << subset << ": " << r.output;
      EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
    }
  }
}

}  // namespace
}  // namespace lmk
