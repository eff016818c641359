// The paper's table (core/eval/pivot.h): number-aware order, a run's variant and its experiment
// prefix; rows of variants (or of their pooling and granularity) × benchmark columns (a
// dataset, per-length groups, several max_lengths or splits), only the newest run of a name,
// several runs of one variant averaged; and the cells' comparison through per-query scores read
// per run, of the cell's group.
#include "core/eval/pivot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace lmk {
namespace {

// Whether one of the lines holds `part`.
bool contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines)
    if (line.find(part) != std::string::npos) return true;
  return false;
}

// A whole-split result of the test split.
PivotInput whole(int64_t run, const std::string& name, const std::string& pooling,
                 const std::string& dataset, double value, const std::string& granularity = "",
                 const std::string& max_length = "512", const std::string& experiment = "e") {
  return {run,     experiment, name,  pooling, granularity, max_length,
          dataset, "test",     "all", "",      value};
}

// A per-length result of the test split.
PivotInput at_length(int64_t run, const std::string& name, const std::string& pooling,
                     const std::string& dataset, const std::string& length, double value) {
  return {run, "e", name, pooling, "", "512", dataset, "test", "length", length, value};
}

// Non-numbers first by text, then numbers by value ("1e3" is 1000), a tie of values by text.
TEST(PivotTest, NumberAwareOrder) {
  EXPECT_TRUE(number_aware_less("", "all"));
  EXPECT_TRUE(number_aware_less("all", "128"));
  EXPECT_FALSE(number_aware_less("128", "all"));
  EXPECT_TRUE(number_aware_less("128", "1024"));
  EXPECT_FALSE(number_aware_less("1024", "128"));
  EXPECT_TRUE(number_aware_less("1e3", "1024"));
  EXPECT_TRUE(number_aware_less("-5", "0.5"));
  EXPECT_TRUE(number_aware_less("064", "64"));
  EXPECT_FALSE(number_aware_less("64", "64"));
  EXPECT_TRUE(number_aware_less("12a", "9")) << "12a is no number";
}

// The variant is the name without its last part; a name without one (or only a leading '/')
// gives the pooling. With several experiments a name is prefixed by its experiment.
TEST(PivotTest, VariantsAndExperimentNames) {
  EXPECT_EQ(run_variant("lmk-32/corpus@1024", "lmk"), "lmk-32");
  EXPECT_EQ(run_variant("granularity=16/lmk-32/passkey", "lmk"), "granularity=16/lmk-32");
  EXPECT_EQ(run_variant("cls", "cls"), "cls");
  EXPECT_EQ(run_variant("eval-run", "mean"), "mean");
  EXPECT_EQ(run_variant("/passkey", "mean"), "mean");
  EXPECT_EQ(with_experiment("study", "lmk-32/passkey", true), "study: lmk-32/passkey");
  EXPECT_EQ(with_experiment("study", "lmk-32/passkey", false), "lmk-32/passkey");
}

// Variant rows in the order of their first run; columns a dataset, or dataset@L per length
// group (the whole-split result of such a dataset left out), in the order of the datasets'
// first runs then of the lengths; of two runs of one name only the newer counts.
TEST(PivotTest, VariantRowsLengthColumnsAndTheNewestRunOfAName) {
  const Pivot pivot = build_pivot(
      {whole(5, "cls/corpus", "cls", "corpus", 0.35), whole(1, "cls/corpus", "cls", "corpus", 0.3),
       whole(2, "lmk-32/corpus", "lmk", "corpus", 0.5, "32"),
       whole(3, "cls/passkey", "cls", "passkey", 0.8),
       at_length(3, "cls/passkey", "cls", "passkey", "1024", 0.9),
       at_length(3, "cls/passkey", "cls", "passkey", "256", 0.7),
       at_length(4, "lmk-32/passkey", "lmk", "passkey", "256", 0.6),
       at_length(4, "lmk-32/passkey", "lmk", "passkey", "1024", 0.4)},
      PivotRows::Variant);
  EXPECT_EQ(pivot.row_header, "variant");
  ASSERT_EQ(pivot.rows, (std::vector<std::string>{"lmk-32", "cls"}));
  ASSERT_EQ(pivot.columns, (std::vector<std::string>{"corpus", "passkey@256", "passkey@1024"}));
  const PivotCell& cls_corpus = pivot.cells[1][0];
  EXPECT_EQ(cls_corpus.runs, std::vector<int64_t>{5}) << "run 1 is an older cls/corpus";
  EXPECT_EQ(cls_corpus.run_names, std::vector<std::string>{"cls/corpus"});
  EXPECT_EQ(cls_corpus.value, 0.35);
  EXPECT_EQ(cls_corpus.dataset, "corpus");
  EXPECT_EQ(cls_corpus.split, "test");
  EXPECT_EQ(cls_corpus.group_kind, "all");
  EXPECT_EQ(pivot.cells[0][0].value, 0.5);
  EXPECT_EQ(pivot.cells[1][1].value, 0.7);
  EXPECT_EQ(pivot.cells[1][1].group_kind, "length");
  EXPECT_EQ(pivot.cells[1][1].group_value, "256");
  EXPECT_EQ(pivot.cells[1][2].value, 0.9);
  EXPECT_EQ(pivot.cells[0][1].value, 0.6);
  EXPECT_EQ(pivot.cells[0][2].runs, std::vector<int64_t>{4});
  EXPECT_EQ(pivot.cells[0][2].value, 0.4);
}

// A dataset evaluated at several max_lengths gets a column per length; runs of two experiments
// are rows of their own, named with the experiment (the newest-run rule is per experiment);
// with several splits a column names its split.
TEST(PivotTest, MaxLengthsSplitsAndExperimentsSeparateColumnsAndRows) {
  const Pivot lengths =
      build_pivot({whole(1, "cls/corpus@1024", "cls", "corpus", 0.4, "", "1024", "e1"),
                   whole(2, "cls/corpus@512", "cls", "corpus", 0.5, "", "512", "e1"),
                   whole(3, "cls/corpus@512", "cls", "corpus", 0.45, "", "512", "e2")},
                  PivotRows::Variant);
  ASSERT_EQ(lengths.rows, (std::vector<std::string>{"e1: cls", "e2: cls"}));
  ASSERT_EQ(lengths.columns, (std::vector<std::string>{"corpus@512", "corpus@1024"}));
  EXPECT_EQ(lengths.cells[0][0].value, 0.5);
  EXPECT_EQ(lengths.cells[0][1].value, 0.4);
  EXPECT_EQ(lengths.cells[1][0].value, 0.45);
  EXPECT_TRUE(lengths.cells[1][1].runs.empty()) << "e2 has no run at 1024";
  EXPECT_TRUE(std::isnan(lengths.cells[1][1].value));

  PivotInput dev = whole(1, "cls/scifact-dev", "cls", "scifact", 0.1);
  dev.split = "dev";
  const Pivot splits =
      build_pivot({dev, whole(2, "cls/scifact-test", "cls", "scifact", 0.2)}, PivotRows::Variant);
  ASSERT_EQ(splits.rows, std::vector<std::string>{"cls"});
  ASSERT_EQ(splits.columns, (std::vector<std::string>{"scifact (dev)", "scifact (test)"}));
  EXPECT_EQ(splits.cells[0][0].split, "dev");
  EXPECT_EQ(splits.cells[0][1].value, 0.2);
}

// The pooling modes put the pooling (and a granularity other than 0) before the variant, sort
// the rows, and still never merge two variants; a variant's two runs of one benchmark are
// averaged (a NaN value left out), and a run without pooling is "(no pooling)".
TEST(PivotTest, PoolingRowsNameTheParamsAndAverageOnlyOneVariant) {
  const std::vector<PivotInput> results = {
      whole(1, "lmk-32/corpus", "lmk", "corpus", 0.5, "32"),
      whole(2, "lmk-var/corpus", "lmk", "corpus", 0.4, "0"),
      whole(3, "cls/corpus", "cls", "corpus", 0.3),
      whole(4, "lmk-32/corpus-again", "lmk", "corpus", 0.7, "32"),
      whole(5, "mean", "", "corpus", 0.2),
      whole(6, "cls/corpus-nan", "cls", "corpus", std::nan("")),
  };
  const Pivot granularity = build_pivot(results, PivotRows::PoolingGranularity);
  EXPECT_EQ(granularity.row_header, "pooling, granularity");
  ASSERT_EQ(granularity.rows, (std::vector<std::string>{"(no pooling)", "cls", "lmk · lmk-var",
                                                        "lmk, granularity 32 · lmk-32"}));
  ASSERT_EQ(granularity.columns, std::vector<std::string>{"corpus"});
  const PivotCell& lmk32 = granularity.cells[3][0];
  EXPECT_EQ(lmk32.runs, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(lmk32.run_names, (std::vector<std::string>{"lmk-32/corpus", "lmk-32/corpus-again"}));
  EXPECT_NEAR(lmk32.value, 0.6, 1e-12);
  EXPECT_EQ(granularity.cells[1][0].runs, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(granularity.cells[1][0].value, 0.3) << "the NaN run is left out of the mean";
  EXPECT_EQ(granularity.cells[0][0].value, 0.2);

  const Pivot pooling = build_pivot(results, PivotRows::Pooling);
  EXPECT_EQ(pooling.row_header, "pooling");
  EXPECT_EQ(pooling.rows,
            (std::vector<std::string>{"(no pooling)", "cls", "lmk · lmk-32", "lmk · lmk-var"}));
}

// A cell of one run is summarized from its run's per-query scores of the cell's group (here the
// 256 part: the 1024 part's queries left out), and two such cells are tested; a cell averaging
// runs shows its mean and says why; a run without scores shows its stored mean; an empty cell
// is absent. The score source is asked only for single-run cells, with their dataset and split.
TEST(PivotTest, CompareReadsTheScoresOfSingleRunCells) {
  Pivot pivot;
  pivot.rows = {"cls", "lmk", "mean", "old"};
  pivot.columns = {"passkey@256", "corpus"};
  pivot.cells.assign(4, std::vector<PivotCell>(2));
  auto cell = [](std::vector<int64_t> runs, double value, const std::string& dataset,
                 const std::string& kind, const std::string& group) {
    PivotCell c;
    c.runs = std::move(runs);
    c.run_names.assign(c.runs.size(), "name");
    c.dataset = dataset;
    c.split = "test";
    c.group_kind = kind;
    c.group_value = group;
    c.value = value;
    return c;
  };
  pivot.cells[0][0] = cell({1}, 0.5, "passkey", "length", "256");
  pivot.cells[1][0] = cell({2}, 0.75, "passkey", "length", "256");
  pivot.cells[2][0] = cell({3, 4}, 0.6, "passkey", "length", "256");
  pivot.cells[3][0] = cell({5}, 0.1, "passkey", "length", "256");
  pivot.cells[0][1] = cell({6}, 0.3, "corpus", "all", "");
  auto scores = [](const std::string& part, const std::vector<double>& values) {
    std::vector<QueryScore> out;
    for (size_t i = 0; i < values.size(); ++i)
      out.push_back({part, "q" + std::to_string(i), values[i], {}, {}});
    return out;
  };
  std::set<int64_t> asked;
  const QueryScoreSource source =
      [&](int64_t run, const std::string& dataset,
          const std::string& split) -> std::optional<std::vector<QueryScore>> {
    asked.insert(run);
    EXPECT_EQ(split, "test");
    EXPECT_EQ(dataset, run == 6 ? "corpus" : "passkey") << run;
    std::vector<QueryScore> all;
    if (run == 1) all = scores("256", {0, 1, 0, 1});
    if (run == 2) all = scores("256", {1, 1, 0, 1});
    if (run == 1 || run == 2) {
      const std::vector<QueryScore> other = scores("1024", {1, 1, 1});
      all.insert(all.end(), other.begin(), other.end());
    }
    if (run == 6) all = scores("", {0.2, 0.4});
    if (all.empty()) return std::nullopt;
    return all;
  };
  ComparisonOptions options;
  options.resampling.resamples = 500;
  const ComparisonTable table = compare_pivot(pivot, source, options);
  EXPECT_EQ(asked, (std::set<int64_t>{1, 2, 5, 6}));
  EXPECT_EQ(table.rows, pivot.rows);
  EXPECT_EQ(table.columns, pivot.columns);
  EXPECT_TRUE(table.cells[0][0].per_query);
  EXPECT_EQ(table.cells[0][0].n, 4u);
  EXPECT_DOUBLE_EQ(table.cells[0][0].mean, 0.5);
  EXPECT_EQ(table.cells[1][0].n, 4u);
  EXPECT_DOUBLE_EQ(table.cells[1][0].mean, 0.75);
  EXPECT_FALSE(table.cells[2][0].per_query);
  EXPECT_EQ(table.cells[2][0].mean, 0.6);
  EXPECT_FALSE(table.cells[3][0].per_query);
  EXPECT_EQ(table.cells[3][0].mean, 0.1);
  EXPECT_EQ(table.cells[0][1].n, 2u);
  EXPECT_DOUBLE_EQ(table.cells[0][1].mean, 0.3);
  EXPECT_TRUE(table.present[0][1]);
  EXPECT_FALSE(table.present[1][1]);
  ASSERT_EQ(table.tests.size(), 1u) << "cls and lmk in passkey@256 only";
  EXPECT_EQ(table.tests[0].row, 0u);
  EXPECT_EQ(table.tests[0].other, 1u);
  EXPECT_EQ(table.tests[0].result.n, 4u);
  EXPECT_DOUBLE_EQ(table.tests[0].result.difference, -0.25);
  EXPECT_TRUE(contains(table.notes, "A cell that averages several runs shows their mean"));
  EXPECT_TRUE(contains(table.notes, "old: no per-query results"));
}

}  // namespace
}  // namespace lmk
