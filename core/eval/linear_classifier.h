#pragma once

// Classification on frozen embeddings: a multinomial logistic regression (softmax) trained on
// standardized features, and the macro-F1 report that MTEB-style classification scores use.

#include <map>
#include <vector>

namespace lmk {

struct LinearClassifierOptions {
  // L-BFGS iterations at most (each is one pass over the data, more when the line search
  // backtracks); 100 is scikit-learn's LogisticRegression max_iter.
  int max_iterations = 100;
  // Weight of (l2 / 2) * ||W||^2 beside the MEAN cross-entropy (biases are not penalized);
  // scikit-learn's C corresponds to l2 = 1 / (C * N).
  double l2 = 1e-3;
  // Stops when the largest gradient entry is below this.
  double tolerance = 1e-5;
};

struct LinearClassifier {
  int classes = 0;
  std::vector<float> mean;     // [dims] training mean of each feature
  std::vector<float> inv_std;  // [dims] 1 / training standard deviation (1 for a constant one)
  std::vector<float> weights;  // [classes, dims] row-major, on standardized features
  std::vector<float> bias;     // [classes]
  int iterations = 0;          // L-BFGS iterations run
  double objective = 0;        // final training objective (mean cross-entropy + penalty)
};

// Trains on rows x (all the same length) with labels y in [0, classes). Deterministic: the
// weights start at zero and the objective is convex, so there is nothing random to seed; the
// same inputs give bit-identical weights. Throws InputError on malformed input.
LinearClassifier train_linear_classifier(const std::vector<std::vector<float>>& x,
                                         const std::vector<int>& y, int classes,
                                         const LinearClassifierOptions& options = {});

// The most probable class of each row (the lowest class index on a tie).
std::vector<int> predict(const LinearClassifier& classifier,
                         const std::vector<std::vector<float>>& x);

struct ClassificationReport {
  double accuracy = 0;
  // Mean F1 over the classes present in the truth or the predictions (scikit-learn's
  // f1_score(average="macro") with zero_division=0).
  double macro_f1 = 0;
  std::map<int, double> f1_per_class;  // those same classes
};

// Scores predictions against the truth (equal lengths, labels in [0, classes)).
ClassificationReport macro_f1(const std::vector<int>& truth, const std::vector<int>& predicted,
                              int classes);

}  // namespace lmk
