#include "core/eval/linear_classifier.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <string>

#include "core/util/error.h"

namespace lmk {
namespace {

// The training rows after standardization, one contiguous block.
struct Problem {
  std::vector<float> x;  // [n, dims]
  std::vector<int> y;
  size_t n = 0;
  size_t dims = 0;
  int classes = 0;
  double l2 = 0;
};

// Eight partial sums: the compiler may vectorize them without reordering a single sum.
float dot(const float* a, const float* b, size_t n) {
  float partial[8] = {};
  size_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int lane = 0; lane < 8; ++lane) partial[lane] += a[j + lane] * b[j + lane];
  float sum = 0;
  for (; j < n; ++j) sum += a[j] * b[j];
  for (float value : partial) sum += value;
  return sum;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t j = 0; j < a.size(); ++j) sum += a[j] * b[j];
  return sum;
}

// a += scale * b
void add_scaled(std::vector<double>& a, double scale, const std::vector<double>& b) {
  for (size_t j = 0; j < a.size(); ++j) a[j] += scale * b[j];
}

// The class scores of one standardized row: weights · row + bias.
void class_scores(const float* row, size_t dims, int classes, const float* weights,
                  const double* bias, std::vector<double>& scores) {
  for (int c = 0; c < classes; ++c) scores[c] = dot(row, weights + c * dims, dims) + bias[c];
}

// Mean cross-entropy + (l2 / 2) ||W||^2 at theta = [W (classes x dims, row-major), bias
// (classes)], and its gradient.
double objective(const Problem& problem, const std::vector<double>& theta,
                 std::vector<double>& gradient) {
  const size_t dims = problem.dims;
  const size_t weight_count = problem.classes * dims;
  const std::vector<float> weights(theta.begin(), theta.begin() + weight_count);
  const double* bias = theta.data() + weight_count;
  gradient.assign(theta.size(), 0.0);
  // The weight gradient is summed in float over blocks of rows (vectorizes), then in double.
  constexpr size_t kBlockRows = 64;
  std::vector<float> block_gradient(weight_count, 0.0f);
  std::vector<double> scores(problem.classes);
  double loss = 0;
  for (size_t i = 0; i < problem.n; ++i) {
    const float* row = problem.x.data() + i * dims;
    class_scores(row, dims, problem.classes, weights.data(), bias, scores);
    const double max_score = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (double score : scores) sum += std::exp(score - max_score);
    const double log_normalizer = max_score + std::log(sum);
    loss += log_normalizer - scores[problem.y[i]];
    for (int c = 0; c < problem.classes; ++c) {
      const double residual = std::exp(scores[c] - log_normalizer) - (c == problem.y[i] ? 1 : 0);
      gradient[weight_count + c] += residual;
      float* target = block_gradient.data() + c * dims;
      const float scale = static_cast<float>(residual);
      for (size_t j = 0; j < dims; ++j) target[j] += scale * row[j];
    }
    if ((i + 1) % kBlockRows == 0 || i + 1 == problem.n) {
      for (size_t j = 0; j < weight_count; ++j) gradient[j] += block_gradient[j];
      std::fill(block_gradient.begin(), block_gradient.end(), 0.0f);
    }
  }
  const double inv_n = 1.0 / double(problem.n);
  loss *= inv_n;
  for (double& value : gradient) value *= inv_n;
  for (size_t j = 0; j < weight_count; ++j) {
    loss += 0.5 * problem.l2 * theta[j] * theta[j];
    gradient[j] += problem.l2 * theta[j];
  }
  return loss;
}

using Objective = std::function<double(const std::vector<double>&, std::vector<double>&)>;

// Minimizes f from theta with L-BFGS (10 pairs of history, backtracking Armijo line search).
// Stops after max_iterations, when max |gradient| <= tolerance, or when a step no longer
// lowers f measurably. Returns the iterations run; value gets f(theta).
int minimize_lbfgs(const Objective& f, std::vector<double>& theta, int max_iterations,
                   double tolerance, double& value) {
  constexpr size_t kHistory = 10;
  constexpr double kArmijo = 1e-4;
  constexpr int kMaxBacktracks = 40;
  constexpr double kRelativeDecrease = 1e-12;
  std::deque<std::vector<double>> steps, gradient_changes;  // s_k, y_k
  std::deque<double> curvatures;                            // 1 / (y_k · s_k)
  std::vector<double> gradient, direction, next, next_gradient;
  value = f(theta, gradient);
  int iteration = 0;
  while (iteration < max_iterations) {
    double largest = 0;
    for (double g : gradient) largest = std::max(largest, std::fabs(g));
    if (largest <= tolerance) break;

    // Two-loop recursion: direction = -H * gradient.
    direction = gradient;
    std::vector<double> alpha(steps.size());
    for (size_t k = steps.size(); k-- > 0;) {
      alpha[k] = curvatures[k] * dot(steps[k], direction);
      add_scaled(direction, -alpha[k], gradient_changes[k]);
    }
    const double initial_scale =
        steps.empty()
            ? 1.0 / std::sqrt(dot(gradient, gradient))
            : 1.0 / (curvatures.back() * dot(gradient_changes.back(), gradient_changes.back()));
    for (double& d : direction) d *= initial_scale;
    for (size_t k = 0; k < steps.size(); ++k) {
      const double beta = curvatures[k] * dot(gradient_changes[k], direction);
      add_scaled(direction, alpha[k] - beta, steps[k]);
    }
    for (double& d : direction) d = -d;
    double slope = dot(gradient, direction);
    if (!(slope < 0)) {  // not a descent direction (numerical trouble): restart from -gradient
      steps.clear(), gradient_changes.clear(), curvatures.clear();
      direction = gradient;
      for (double& d : direction) d *= -initial_scale;
      slope = dot(gradient, direction);
    }

    double step = 1.0, next_value = 0;
    bool accepted = false;
    for (int tries = 0; tries < kMaxBacktracks && !accepted; ++tries, step *= 0.5) {
      next = theta;
      add_scaled(next, step, direction);
      next_value = f(next, next_gradient);
      accepted = next_value <= value + kArmijo * step * slope;
    }
    if (!accepted) break;
    ++iteration;

    std::vector<double> s(theta.size()), y(theta.size());
    for (size_t j = 0; j < theta.size(); ++j) {
      s[j] = next[j] - theta[j];
      y[j] = next_gradient[j] - gradient[j];
    }
    const double ys = dot(y, s);
    if (ys > 1e-12 * dot(y, y)) {
      steps.push_back(std::move(s));
      gradient_changes.push_back(std::move(y));
      curvatures.push_back(1.0 / ys);
      if (steps.size() > kHistory) {
        steps.pop_front(), gradient_changes.pop_front(), curvatures.pop_front();
      }
    }
    const double decrease = value - next_value;
    theta.swap(next);
    gradient.swap(next_gradient);
    value = next_value;
    if (decrease <= kRelativeDecrease * std::max(1.0, std::fabs(value))) break;
  }
  return iteration;
}

void check_label(int label, int classes, const std::string& where) {
  if (label < 0 || label >= classes)
    throw input_error(where, "label " + std::to_string(label) + " is outside [0, " +
                                 std::to_string(classes) + ")");
}

}  // namespace

LinearClassifier train_linear_classifier(const std::vector<std::vector<float>>& x,
                                         const std::vector<int>& y, int classes,
                                         const LinearClassifierOptions& options) {
  if (classes < 2)
    throw input_error("classes", "need at least two, got " + std::to_string(classes));
  if (x.empty()) throw input_error("x", "no training rows");
  if (y.size() != x.size())
    throw input_error(
        "y", std::to_string(y.size()) + " labels for " + std::to_string(x.size()) + " rows");
  if (!(options.l2 >= 0) || !std::isfinite(options.l2))
    throw input_error("l2", "must be finite and >= 0");
  if (options.max_iterations < 1) throw input_error("max_iterations", "must be >= 1");
  Problem problem;
  problem.n = x.size();
  problem.dims = x[0].size();
  problem.classes = classes;
  problem.l2 = options.l2;
  problem.y = y;
  if (problem.dims == 0) throw input_error("x[0]", "empty row");
  for (size_t i = 0; i < x.size(); ++i) {
    const std::string where = "x[" + std::to_string(i) + "]";
    if (x[i].size() != problem.dims)
      throw input_error(where, std::to_string(x[i].size()) + " features, the first row has " +
                                   std::to_string(problem.dims));
    for (float value : x[i])
      if (!std::isfinite(value)) throw input_error(where, "a feature is not finite");
    check_label(y[i], classes, "y[" + std::to_string(i) + "]");
  }

  // Standardize with the training mean and (population) standard deviation.
  LinearClassifier classifier;
  classifier.classes = classes;
  classifier.mean.resize(problem.dims);
  classifier.inv_std.resize(problem.dims);
  for (size_t j = 0; j < problem.dims; ++j) {
    double sum = 0;
    float lowest = x[0][j], highest = x[0][j];
    for (const auto& row : x) {
      sum += row[j];
      lowest = std::min(lowest, row[j]);
      highest = std::max(highest, row[j]);
    }
    const double mean = sum / double(problem.n);
    double squares = 0;
    for (const auto& row : x) squares += (row[j] - mean) * (row[j] - mean);
    classifier.mean[j] = static_cast<float>(mean);
    classifier.inv_std[j] =
        lowest == highest ? 1.0f : static_cast<float>(1.0 / std::sqrt(squares / double(problem.n)));
  }
  problem.x.resize(problem.n * problem.dims);
  for (size_t i = 0; i < problem.n; ++i)
    for (size_t j = 0; j < problem.dims; ++j)
      problem.x[i * problem.dims + j] = (x[i][j] - classifier.mean[j]) * classifier.inv_std[j];

  std::vector<double> theta((problem.dims + 1) * classes, 0.0);
  classifier.iterations = minimize_lbfgs(
      [&problem](const std::vector<double>& at, std::vector<double>& gradient) {
        return objective(problem, at, gradient);
      },
      theta, options.max_iterations, options.tolerance, classifier.objective);
  const size_t weight_count = problem.dims * classes;
  classifier.weights.assign(theta.begin(), theta.begin() + weight_count);
  classifier.bias.assign(theta.begin() + weight_count, theta.end());
  return classifier;
}

std::vector<int> predict(const LinearClassifier& classifier,
                         const std::vector<std::vector<float>>& x) {
  const size_t dims = classifier.mean.size();
  const std::vector<double> bias(classifier.bias.begin(), classifier.bias.end());
  std::vector<float> standardized(dims);
  std::vector<double> scores(classifier.classes);
  std::vector<int> predicted;
  predicted.reserve(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].size() != dims)
      throw input_error(
          "x[" + std::to_string(i) + "]",
          std::to_string(x[i].size()) + " features, the classifier has " + std::to_string(dims));
    for (size_t j = 0; j < dims; ++j)
      standardized[j] = (x[i][j] - classifier.mean[j]) * classifier.inv_std[j];
    class_scores(standardized.data(), dims, classifier.classes, classifier.weights.data(),
                 bias.data(), scores);
    predicted.push_back(
        static_cast<int>(std::max_element(scores.begin(), scores.end()) - scores.begin()));
  }
  return predicted;
}

ClassificationReport macro_f1(const std::vector<int>& truth, const std::vector<int>& predicted,
                              int classes) {
  if (classes < 1)
    throw input_error("classes", "need at least one, got " + std::to_string(classes));
  if (truth.empty()) throw input_error("truth", "no labels");
  if (predicted.size() != truth.size())
    throw input_error("predicted", std::to_string(predicted.size()) + " labels for " +
                                       std::to_string(truth.size()) + " true ones");
  std::vector<size_t> true_positives(classes), false_positives(classes), false_negatives(classes);
  size_t correct = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    check_label(truth[i], classes, "truth[" + std::to_string(i) + "]");
    check_label(predicted[i], classes, "predicted[" + std::to_string(i) + "]");
    if (truth[i] == predicted[i]) {
      ++correct;
      ++true_positives[truth[i]];
    } else {
      ++false_negatives[truth[i]];
      ++false_positives[predicted[i]];
    }
  }
  ClassificationReport report;
  report.accuracy = double(correct) / double(truth.size());
  double f1_sum = 0;
  for (int c = 0; c < classes; ++c) {
    const size_t denominator = 2 * true_positives[c] + false_positives[c] + false_negatives[c];
    if (denominator == 0) continue;  // absent from truth and predictions
    const double f1 = 2.0 * double(true_positives[c]) / double(denominator);
    report.f1_per_class[c] = f1;
    f1_sum += f1;
  }
  report.macro_f1 = f1_sum / double(report.f1_per_class.size());
  return report;
}

}  // namespace lmk
