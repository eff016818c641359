#include "core/eval/linear_classifier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "core/util/error.h"

namespace lmk {
namespace {

// Class c is feature c raised by 4 over uniform noise in [-1, 1]: feature c exceeds every other
// feature by at least 2, so the classes are linearly separable, unless mislabel_every > 0 moves
// every mislabel_every-th label to the next class (then the optimum is interior).
void separable_rows(int classes, int dims, int per_class, unsigned seed,
                    std::vector<std::vector<float>>& x, std::vector<int>& y,
                    size_t mislabel_every = 0) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> noise(-1.0f, 1.0f);
  for (int i = 0; i < per_class; ++i)
    for (int c = 0; c < classes; ++c) {
      std::vector<float> row(dims);
      for (float& value : row) value = noise(random);
      row[c] += 4.0f;
      x.push_back(row);
      y.push_back(mislabel_every && y.size() % mislabel_every == 0 ? (c + 1) % classes : c);
    }
}

TEST(LinearClassifierTest, SeparableClassesAreLearnedExactly) {
  std::vector<std::vector<float>> train_x, test_x;
  std::vector<int> train_y, test_y;
  separable_rows(3, 20, 50, 1, train_x, train_y);
  separable_rows(3, 20, 50, 2, test_x, test_y);
  const LinearClassifier classifier = train_linear_classifier(train_x, train_y, 3);
  EXPECT_EQ(macro_f1(train_y, predict(classifier, train_x), 3).accuracy, 1.0);
  const ClassificationReport held_out = macro_f1(test_y, predict(classifier, test_x), 3);
  EXPECT_EQ(held_out.accuracy, 1.0);
  EXPECT_EQ(held_out.macro_f1, 1.0);
  EXPECT_GT(classifier.iterations, 0);
}

TEST(LinearClassifierTest, ReachesTheMinimumOfTheDocumentedObjective) {
  // x = -1 (class 0), +1 (class 1); already standardized (mean 0, std 1). By symmetry the
  // minimum has w1 = -w0 = a, equal biases; the objective is log(1 + e^(-2a)) + l2 * a^2, whose
  // derivative vanishes where sigmoid(-2a) = l2 * a: a = 1.0640172592 for l2 = 0.1. A summed
  // (not mean) loss or an l2 without the 1/2 would land elsewhere.
  LinearClassifierOptions options;
  options.l2 = 0.1;
  options.tolerance = 1e-10;
  const LinearClassifier classifier =
      train_linear_classifier({{-1.0f}, {1.0f}}, {0, 1}, 2, options);
  ASSERT_EQ(classifier.weights.size(), 2u);
  EXPECT_NEAR(classifier.weights[1], 1.0640172592331134, 1e-5);
  EXPECT_NEAR(classifier.weights[0], -1.0640172592331134, 1e-5);
  EXPECT_NEAR(classifier.bias[0], classifier.bias[1], 1e-6);
  EXPECT_EQ(predict(classifier, {{-0.5f}, {0.5f}}), (std::vector<int>{0, 1}));
}

TEST(LinearClassifierTest, SameInputsGiveIdenticalWeights) {
  std::vector<std::vector<float>> x;
  std::vector<int> y;
  separable_rows(4, 16, 30, 3, x, y, 7);
  const LinearClassifier first = train_linear_classifier(x, y, 4);
  const LinearClassifier second = train_linear_classifier(x, y, 4);
  EXPECT_EQ(first.weights, second.weights);
  EXPECT_EQ(first.bias, second.bias);
  EXPECT_EQ(first.iterations, second.iterations);
  EXPECT_EQ(predict(first, x), predict(second, x));
}

TEST(LinearClassifierTest, ConstantFeaturesAndBadInputs) {
  // The second feature is constant: standardized to 0 rather than divided by a zero std.
  const LinearClassifier classifier =
      train_linear_classifier({{-1.0f, 5.0f}, {1.0f, 5.0f}}, {0, 1}, 2);
  EXPECT_EQ(classifier.inv_std[1], 1.0f);
  EXPECT_EQ(predict(classifier, {{2.0f, 5.0f}}), std::vector<int>{1});

  EXPECT_THROW(train_linear_classifier({}, {}, 2), InputError);
  EXPECT_THROW(train_linear_classifier({{1.0f}, {2.0f, 3.0f}}, {0, 1}, 2), InputError);
  EXPECT_THROW(train_linear_classifier({{1.0f}, {2.0f}}, {0, 2}, 2), InputError);
  EXPECT_THROW(train_linear_classifier({{1.0f}, {2.0f}}, {0}, 2), InputError);
  EXPECT_THROW(train_linear_classifier({{1.0f}, {2.0f}}, {0, 0}, 1), InputError);
  EXPECT_THROW(predict(classifier, {{1.0f}}), InputError);
}

TEST(LinearClassifierTest, TwoThousandRowsOf768FeaturesTrainInUnderTwoSeconds) {
  // The documented size (N ~ 2000, dims 768); the bound is loose for a shared machine.
  std::vector<std::vector<float>> x;
  std::vector<int> y;
  separable_rows(10, 768, 200, 4, x, y, 5);
  const auto start = std::chrono::steady_clock::now();
  const LinearClassifier classifier = train_linear_classifier(x, y, 10);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("train_seconds", std::to_string(seconds));
  std::printf("trained N=2000 dims=768 classes=10 in %.3f s, %d iterations\n", seconds,
              classifier.iterations);
  EXPECT_LT(seconds, 2.0);
}

TEST(MacroF1Test, HandComputedConfusion) {
  // truth 0 0 1 1 2 2, predicted 0 1 1 1 2 0; class 3 appears nowhere and is left out.
  // class 0: TP 1, FP 1, FN 1 -> F1 = 2/4 = 0.5
  // class 1: TP 2, FP 1, FN 0 -> F1 = 4/5 = 0.8
  // class 2: TP 1, FP 0, FN 1 -> F1 = 2/3
  // macro = (0.5 + 0.8 + 0.6667) / 3 = 0.6556; accuracy 4/6.
  const ClassificationReport report = macro_f1({0, 0, 1, 1, 2, 2}, {0, 1, 1, 1, 2, 0}, 4);
  EXPECT_NEAR(report.accuracy, 4.0 / 6, 1e-12);
  EXPECT_NEAR(report.macro_f1, (0.5 + 0.8 + 2.0 / 3) / 3, 1e-12);
  ASSERT_EQ(report.f1_per_class.size(), 3u);
  EXPECT_NEAR(report.f1_per_class.at(0), 0.5, 1e-12);
  EXPECT_NEAR(report.f1_per_class.at(1), 0.8, 1e-12);
  EXPECT_NEAR(report.f1_per_class.at(2), 2.0 / 3, 1e-12);
}

TEST(MacroF1Test, AClassOnlyPredictedCountsWithF1Zero) {
  // truth 0 0 1, predicted 0 2 1: class 2 was predicted but never true -> F1 0 and it counts,
  // as in scikit-learn: (2/3 + 1 + 0) / 3 = 0.5556 (not (2/3 + 1) / 2 = 0.8333).
  const ClassificationReport report = macro_f1({0, 0, 1}, {0, 2, 1}, 3);
  EXPECT_NEAR(report.macro_f1, (2.0 / 3 + 1.0 + 0.0) / 3, 1e-12);
  EXPECT_EQ(report.f1_per_class.at(2), 0.0);
  EXPECT_THROW(macro_f1({0, 1}, {0}, 2), InputError);
  EXPECT_THROW(macro_f1({0, 3}, {0, 1}, 2), InputError);
  EXPECT_THROW(macro_f1({}, {}, 2), InputError);
}

}  // namespace
}  // namespace lmk
