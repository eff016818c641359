// Classification with a frozen encoder (engine/eval/classify.h): the jsonl split reader (labels
// as text, ids given or counted, errors naming file and line), and an evaluation whose texts are
// one of two fixed texts per class, so a linear classifier separates the classes exactly and
// the scores are the hand-computed ones of the predictions; an unseen test label gets the index
// after the train labels.
#include "engine/eval/classify.h"

#include <gtest/gtest.h>

#include "core/util/error.h"
#include "tests/support/explorer_tests.h"

namespace lmk {
namespace {

using testing::TempDir;

// The tiny encoder of the attention tests, read with mean pooling.
class ClassifyTest : public testing::ExplorerTest {
 protected:
  EncodeOptions mean_options() const {
    EncodeOptions options;
    options.pooling = Pooling::Mean;
    return options;
  }
};

// The InputError reading `path` gives (a test failure when there is none).
std::string read_error(const std::string& path) {
  try {
    read_labelled(path);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << path;
  return "";
}

// Labels are kept as text (a number as JSON writes it); an id is the given one (a number as its
// text) or the text's position from 1.
TEST(ReadLabelledTest, ReadsTextsLabelsAndIds) {
  TempDir dir;
  const std::string path = dir.write("train.jsonl",
                                     "{\"text\": \"a b\", \"label\": \"sport\", \"id\": \"x1\"}\n"
                                     "{\"text\": \"c\", \"label\": 3}\n"
                                     "{\"text\": \"d\", \"label\": 1.5, \"id\": 7}\n");
  const LabelledTexts read = read_labelled(path);
  EXPECT_EQ(read.texts, (std::vector<std::string>{"a b", "c", "d"}));
  EXPECT_EQ(read.labels, (std::vector<std::string>{"sport", "3", "1.5"}));
  EXPECT_EQ(read.ids, (std::vector<std::string>{"x1", "2", "7"}));
}

// A missing field names the file, the line and the field; a repeated id (given, or the position
// another line's id repeats) the file and the line of the second; a file without texts the file.
TEST(ReadLabelledTest, ErrorsNameTheFileAndLine) {
  TempDir dir;
  const std::string no_label =
      dir.write("a.jsonl", "{\"text\": \"a\", \"label\": \"x\"}\n{\"text\": \"b\"}\n");
  EXPECT_EQ(read_error(no_label), no_label + ":2.label: missing");
  const std::string no_text = dir.write("b.jsonl", "{\"label\": \"x\"}\n");
  EXPECT_EQ(read_error(no_text), no_text + ":1.text: missing");
  const std::string twice = dir.write("c.jsonl",
                                      "{\"text\": \"a\", \"label\": \"x\", \"id\": \"q\"}\n"
                                      "{\"text\": \"b\", \"label\": \"y\"}\n"
                                      "{\"text\": \"c\", \"label\": \"x\", \"id\": \"q\"}\n");
  EXPECT_EQ(read_error(twice), twice + ":3: id q appears twice");
  const std::string position = dir.write("d.jsonl",
                                         "{\"text\": \"a\", \"label\": \"x\"}\n"
                                         "{\"text\": \"b\", \"label\": \"y\", \"id\": 1}\n");
  EXPECT_EQ(read_error(position), position + ":2: id 1 appears twice");
  const std::string empty = dir.write("e.jsonl", "\n");
  EXPECT_EQ(read_error(empty), empty + ": no texts");
}

// Train: three copies of each of two texts, labelled "b" and "a"; test: the same texts, the last
// one labelled "c", which no train text has. Classes: a = 0, b = 1 (sorted), c = 2. Identical
// texts have identical embeddings, so the classifier predicts each text's train label:
// truth 0 1 0 1 2, predicted 0 1 0 1 0. F1: a = 2 * 2 / (2 * 2 + 1 FP) = 0.8, b = 1, c = 0 (one
// FN); macro (0.8 + 1 + 0) / 3 = 0.6; accuracy 4 / 5.
TEST_F(ClassifyTest, SeparableTextsGiveTheHandComputedScores) {
  const std::string first = "w1 w2 w3", second = "w500 w600 w700";
  LabelledTexts train, test;
  for (int i = 0; i < 3; ++i) {
    train.texts.insert(train.texts.end(), {first, second});
    train.labels.insert(train.labels.end(), {"b", "a"});
  }
  test.texts = {second, first, second, first, second};
  test.labels = {"a", "b", "a", "b", "c"};
  const ClassificationEvaluation e =
      evaluate_classification(model_, *tokenizer_, train, test, mean_options());
  EXPECT_EQ(e.labels, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(e.truth, (std::vector<int>{0, 1, 0, 1, 2}));
  EXPECT_EQ(e.predicted, (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(e.train, 6u);
  EXPECT_EQ(e.test, 5u);
  EXPECT_NEAR(e.report.accuracy, 0.8, 1e-12);
  EXPECT_NEAR(e.report.macro_f1, 0.6, 1e-12);
  ASSERT_EQ(e.report.f1_per_class.size(), 3u);
  EXPECT_NEAR(e.report.f1_per_class.at(0), 0.8, 1e-12);
  EXPECT_NEAR(e.report.f1_per_class.at(1), 1.0, 1e-12);
  EXPECT_EQ(e.report.f1_per_class.at(2), 0.0);
  EXPECT_GE(e.encode_seconds, 0);
  EXPECT_GE(e.fit_seconds, 0);
}

// Without train or test texts there is nothing to fit or score.
TEST_F(ClassifyTest, EmptySplitsAreRefused) {
  LabelledTexts some;
  some.texts = {"w1"};
  some.labels = {"a"};
  some.ids = {"1"};
  for (const auto& [train, test] :
       {std::pair<LabelledTexts, LabelledTexts>{{}, some}, {some, {}}}) {
    try {
      evaluate_classification(model_, *tokenizer_, train, test, mean_options());
      ADD_FAILURE() << "evaluated without texts";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "classification: needs train and test texts");
    }
  }
}

}  // namespace
}  // namespace lmk
