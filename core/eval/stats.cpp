#include "core/eval/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/util/error.h"
#include "core/util/random.h"

namespace lmk::stats {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Resampling draws distinguish their streams by a salt, so a test and an interval computed
// with one seed do not share their random numbers.
uint64_t stream_seed(uint64_t seed, uint64_t salt) {
  return splitmix64(seed ^ splitmix64(salt));
}

// SciPy's tolerance for "equal to the observed statistic" in resampling tests: values within
// it count as ties (the same number summed in another order differs in the last bits).
double tie_tolerance(double observed) {
  return std::max(1e-14, std::fabs(1e-14 * observed));
}

double sum(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

void require_pairs(size_t n, const char* what) {
  if (n < 2)
    throw InputError(std::string(what) + ": needs at least 2 paired queries, got " +
                     std::to_string(n));
}

}  // namespace

const char* paired_test_name(PairedTest test) {
  switch (test) {
    case PairedTest::Fisher:
      return "fisher";
    case PairedTest::Student:
      return "student";
    case PairedTest::Bootstrap:
      return "bootstrap";
  }
  return "fisher";
}

std::string describe_paired_test(PairedTest test, int64_t resamples) {
  switch (test) {
    case PairedTest::Fisher: {
      // Every sign pattern is enumerated while 2^n <= resamples.
      int exact_up_to = 0;
      while (exact_up_to < 62 && (int64_t{1} << (exact_up_to + 1)) <= resamples) ++exact_up_to;
      return "Fisher's randomization test (two-sided, paired by query; exact, over every sign "
             "pattern, up to " +
             std::to_string(exact_up_to) + " queries, else " + std::to_string(resamples) +
             " random sign patterns)";
    }
    case PairedTest::Student:
      return "paired Student's t-test (two-sided)";
    case PairedTest::Bootstrap:
      return "paired bootstrap test (two-sided, " + std::to_string(resamples) +
             " resamples of the queries)";
  }
  return "";
}

std::string paired_test_title(PairedTest test) {
  switch (test) {
    case PairedTest::Fisher:
      return "Fisher's randomization test";
    case PairedTest::Student:
      return "paired Student's t-test";
    case PairedTest::Bootstrap:
      return "paired bootstrap test";
  }
  return "";
}

PairedTest parse_paired_test(const std::string& text, const std::string& where) {
  if (text == "fisher" || text == "randomization" || text == "permutation")
    return PairedTest::Fisher;
  if (text == "student" || text == "t" || text == "ttest") return PairedTest::Student;
  if (text == "bootstrap") return PairedTest::Bootstrap;
  throw input_error(where, "unknown test '" + text + "' (fisher, student, bootstrap)");
}

double mean(const std::vector<double>& values) {
  return values.empty() ? kNaN : sum(values) / static_cast<double>(values.size());
}

double sample_sd(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return kNaN;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

std::vector<double> bootstrap_means(const std::vector<double>& values,
                                    const ResamplingOptions& options) {
  std::vector<double> means;
  if (values.empty() || options.resamples <= 0) return means;
  means.reserve(static_cast<size_t>(options.resamples));
  SplitMix64 random(stream_seed(options.seed, 1));
  const uint64_t n = values.size();
  for (int64_t r = 0; r < options.resamples; ++r) {
    double total = 0;
    for (uint64_t i = 0; i < n; ++i) total += values[random.below(n)];
    means.push_back(total / static_cast<double>(n));
  }
  std::sort(means.begin(), means.end());
  return means;
}

Interval percentile_interval(const std::vector<double>& values, const ResamplingOptions& options) {
  if (values.size() < 2) return {};
  const std::vector<double> means = bootstrap_means(values, options);
  const double alpha = (1 - options.confidence) / 2;
  return {quantile_sorted(means, alpha), quantile_sorted(means, 1 - alpha)};
}

Interval bca_interval(const std::vector<double>& values, const ResamplingOptions& options) {
  if (values.size() < 2) return {};
  const double m = mean(values);
  double squares = 0, cubes = 0;
  for (double v : values) {
    squares += (v - m) * (v - m);
    cubes += (v - m) * (v - m) * (v - m);
  }
  if (squares == 0) return {m, m};
  const std::vector<double> means = bootstrap_means(values, options);
  // Bias correction: where the observed mean falls among the bootstrap means (ties count half).
  const auto below = std::lower_bound(means.begin(), means.end(), m) - means.begin();
  const auto at_or_below = std::upper_bound(means.begin(), means.end(), m) - means.begin();
  const double z0 = normal_quantile(static_cast<double>(below + at_or_below) /
                                    (2.0 * static_cast<double>(means.size())));
  const double acceleration = cubes / (6 * std::pow(squares, 1.5));
  const double alpha = (1 - options.confidence) / 2;
  auto adjusted = [&](double z) {
    const double shifted = z0 + z;
    return normal_cdf(z0 + shifted / (1 - acceleration * shifted));
  };
  const double low = adjusted(normal_quantile(alpha)), high = adjusted(-normal_quantile(alpha));
  if (!std::isfinite(z0)) return {};
  return {quantile_sorted(means, low), quantile_sorted(means, high)};
}

double randomization_p_value(const std::vector<double>& differences,
                             const ResamplingOptions& options) {
  require_pairs(differences.size(), "randomization test");
  const size_t n = differences.size();
  const double observed = mean(differences), gamma = tie_tolerance(observed);
  int64_t less = 0, greater = 0;
  auto count = [&](double statistic) {
    less += statistic <= observed + gamma;
    greater += statistic >= observed - gamma;
  };
  const bool exact = n < 63 && (uint64_t{1} << n) <= static_cast<uint64_t>(options.resamples);
  double patterns = 0;
  if (exact) {
    const uint64_t all = uint64_t{1} << n;
    for (uint64_t pattern = 0; pattern < all; ++pattern) {
      double total = 0;
      for (size_t i = 0; i < n; ++i) total += (pattern >> i & 1) ? -differences[i] : differences[i];
      count(total / static_cast<double>(n));
    }
    patterns = static_cast<double>(all);
  } else {
    SplitMix64 random(stream_seed(options.seed, 2));
    for (int64_t r = 0; r < options.resamples; ++r) {
      double total = 0;
      uint64_t bits = 0;
      for (size_t i = 0; i < n; ++i) {
        if (i % 64 == 0) bits = random.next();
        total += (bits >> (i % 64) & 1) ? -differences[i] : differences[i];
      }
      count(total / static_cast<double>(n));
    }
    // The observed pattern counts once more (Phipson & Smyth 2010), as SciPy does.
    ++less, ++greater;
    patterns = static_cast<double>(options.resamples) + 1;
  }
  const double p = 2 * std::min(static_cast<double>(less), static_cast<double>(greater)) / patterns;
  return std::min(1.0, p);
}

double student_t_p_value(const std::vector<double>& differences, double* t) {
  require_pairs(differences.size(), "Student's t-test");
  const double m = mean(differences), sd = sample_sd(differences);
  double statistic = 0, p = 1;
  if (sd == 0) {
    statistic = m == 0 ? 0 : std::copysign(kInf, m);
    p = m == 0 ? 1 : 0;
  } else {
    statistic = m / (sd / std::sqrt(static_cast<double>(differences.size())));
    p = student_t_two_sided(statistic, static_cast<double>(differences.size() - 1));
  }
  if (t) *t = statistic;
  return p;
}

double bootstrap_p_value(const std::vector<double>& differences, const ResamplingOptions& options) {
  require_pairs(differences.size(), "bootstrap test");
  const double observed = mean(differences), gamma = tie_tolerance(observed);
  const uint64_t n = differences.size();
  SplitMix64 random(stream_seed(options.seed, 3));
  int64_t extreme = 0;
  for (int64_t r = 0; r < options.resamples; ++r) {
    double total = 0;
    for (uint64_t i = 0; i < n; ++i) total += differences[random.below(n)];
    extreme += std::fabs(total / static_cast<double>(n) - observed) >= std::fabs(observed) - gamma;
  }
  return static_cast<double>(extreme + 1) / static_cast<double>(options.resamples + 1);
}

PairedComparison compare_paired(const std::vector<double>& a, const std::vector<double>& b,
                                PairedTest test, const ResamplingOptions& options) {
  if (a.size() != b.size())
    throw InputError("paired comparison: " + std::to_string(a.size()) + " values against " +
                     std::to_string(b.size()));
  require_pairs(a.size(), "paired comparison");
  std::vector<double> differences(a.size());
  for (size_t i = 0; i < a.size(); ++i) differences[i] = a[i] - b[i];
  PairedComparison out;
  out.test = test;
  out.n = a.size();
  out.mean_a = mean(a);
  out.mean_b = mean(b);
  out.difference = mean(differences);
  out.difference_interval = percentile_interval(differences, options);
  out.difference_bca = bca_interval(differences, options);
  switch (test) {
    case PairedTest::Fisher:
      out.p_value = randomization_p_value(differences, options);
      break;
    case PairedTest::Student:
      out.p_value = student_t_p_value(differences);
      break;
    case PairedTest::Bootstrap:
      out.p_value = bootstrap_p_value(differences, options);
      break;
  }
  const double sd = sample_sd(differences);
  out.effect_size = sd > 0 ? out.difference / sd
                           : (out.difference == 0 ? 0 : std::copysign(kInf, out.difference));
  return out;
}

std::vector<double> holm_adjust(const std::vector<double>& p_values) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p_values.size(); ++i)
    if (!std::isnan(p_values[i])) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return p_values[x] < p_values[y]; });
  std::vector<double> adjusted(p_values.size(), kNaN);
  const double m = static_cast<double>(order.size());
  double running = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    running = std::max(running, std::min(1.0, (m - static_cast<double>(k)) * p_values[order[k]]));
    adjusted[order[k]] = running;
  }
  return adjusted;
}

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

double normal_quantile(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  // Acklam's rational approximation (relative error < 1.2e-9), then two Halley steps on the
  // exact distribution function bring it to full double precision.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double low = 0.02425;
  double x;
  if (p < low || p > 1 - low) {
    const double q = std::sqrt(-2 * std::log(p < low ? p : 1 - p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    if (p > 1 - low) x = -x;
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  for (int step = 0; step < 2; ++step) {
    // Φ(x) - p; in the upper half through the complements (1 - p is exact there), which keeps
    // the precision that 1 - Φ(x) would lose.
    const double error =
        p > 0.5 ? (1 - p) - 0.5 * std::erfc(x / std::sqrt(2.0)) : normal_cdf(x) - p;
    const double u = error * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
    x -= u / (1 + x * u / 2);
  }
  return x;
}

namespace {

// The continued fraction of I_x(a, b) (Abramowitz & Stegun 26.5.8), evaluated by the modified
// Lentz method; it converges fast for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double result = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    // Even step.
    double term = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
    d = 1 + term * d;
    c = 1 + term / c;
    if (std::fabs(d) < tiny) d = tiny;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    result *= d * c;
    // Odd step.
    term = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
    d = 1 + term * d;
    c = 1 + term / c;
    if (std::fabs(d) < tiny) d = tiny;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double change = d * c;
    result *= change;
    if (std::fabs(change - 1) < 1e-16) break;
  }
  return result;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (std::isnan(x) || a <= 0 || b <= 0 || x < 0 || x > 1) return kNaN;
  if (x == 0 || x == 1) return x;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * beta_continued_fraction(b, a, 1 - x) / b;
}

double student_t_two_sided(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNaN;
  if (std::isinf(t)) return 0;
  return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

}  // namespace lmk::stats
