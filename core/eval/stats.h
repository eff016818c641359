#pragma once

// Statistics for comparing evaluations query by query (lmkcore, no LibTorch): the mean of a
// metric with a bootstrap confidence interval, paired tests of two runs over the queries they
// share (Fisher's randomization test, Student's t, the paired bootstrap), the difference of
// means with its interval, an effect size, and Holm–Bonferroni over a family of tests.
//
// Definitions follow SciPy 1.10 where it has them, and the tests check against it
// (tests/core/eval/stats_test.cpp runs Debian's python3-scipy on the same numbers):
// - randomization test = scipy.stats.permutation_test(permutation_type='samples') of the mean
//   difference: exact (every sign pattern) when 2^n <= resamples, else `resamples` random sign
//   patterns with the +1 correction; two-sided p = 2 · min(p_less, p_greater), at most 1;
// - percentile and BCa intervals = scipy.stats.bootstrap(paired=True, method=...), percentiles
//   interpolated linearly between order statistics (numpy's default);
// - Student's t = scipy.stats.ttest_rel.
// Resampling is seeded (SplitMix64): the same inputs and seed give the same numbers everywhere.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace lmk::stats {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Interval {
  double low = kNaN, high = kNaN;
  double half_width() const { return (high - low) / 2; }
};

struct ResamplingOptions {
  int64_t resamples = 10000;  // bootstrap resamples, or random sign patterns
  uint64_t seed = 0;
  double confidence = 0.95;  // of every interval
};

enum class PairedTest { Fisher, Student, Bootstrap };

// "fisher", "student", "bootstrap".
const char* paired_test_name(PairedTest test);
// A sentence naming the test as a table's note does: "Fisher's randomization test (two-sided,
// 10000 random sign patterns, paired by query)".
std::string describe_paired_test(PairedTest test, int64_t resamples);
// The test's short name: "Fisher's randomization test", "paired Student's t-test", "paired
// bootstrap test".
std::string paired_test_title(PairedTest test);
// Parses a test name; an InputError names `where` and the choices otherwise.
PairedTest parse_paired_test(const std::string& text, const std::string& where);

// Arithmetic mean (NaN for no values).
double mean(const std::vector<double>& values);
// Sample standard deviation (n - 1 in the denominator; 0 for fewer than two values).
double sample_sd(const std::vector<double>& values);
// The q-quantile (0 <= q <= 1) of ascending values, interpolated linearly between order
// statistics at (n - 1) · q (numpy's default).
double quantile_sorted(const std::vector<double>& sorted, double q);

// The means of `resamples` bootstrap samples (n values drawn with replacement), ascending.
std::vector<double> bootstrap_means(const std::vector<double>& values,
                                    const ResamplingOptions& options);
// Percentile bootstrap interval of the mean. Fewer than two values: NaN bounds.
Interval percentile_interval(const std::vector<double>& values, const ResamplingOptions& options);
// Bias-corrected and accelerated interval of the mean (Efron 1987): bias correction from the
// bootstrap distribution, acceleration from the jackknife, which for a mean has the closed form
// a = Σ(x - x̄)³ / (6 (Σ(x - x̄)²)^{3/2}). Constant values: [value, value].
Interval bca_interval(const std::vector<double>& values, const ResamplingOptions& options);

// Two-sided p-values of "the mean difference is 0" for paired differences d = a - b.
double randomization_p_value(const std::vector<double>& differences,
                             const ResamplingOptions& options);
// Student's t for paired samples; `t` receives the statistic. Zero variance: p = 1 when every
// difference is 0, else 0 (SciPy returns NaN there).
double student_t_p_value(const std::vector<double>& differences, double* t = nullptr);
// Paired bootstrap test (Efron & Tibshirani 1993, 16.4): resample the differences, shift their
// mean to 0, count |mean*| >= |observed|; p = (count + 1) / (resamples + 1).
double bootstrap_p_value(const std::vector<double>& differences, const ResamplingOptions& options);

// A paired comparison of runs a and b over the same queries (a[i] and b[i]: query i).
struct PairedComparison {
  PairedTest test = PairedTest::Fisher;
  size_t n = 0;
  double mean_a = kNaN, mean_b = kNaN;
  double difference = kNaN;      // mean(a - b)
  Interval difference_interval;  // paired percentile bootstrap
  Interval difference_bca;       // paired BCa
  double p_value = kNaN;         // two-sided, of the chosen test
  double effect_size = kNaN;     // Cohen's d_z = mean(a - b) / sd(a - b); 0 when all equal
};

// Compares a with b. Fewer than two pairs or a length mismatch is an InputError.
PairedComparison compare_paired(const std::vector<double>& a, const std::vector<double>& b,
                                PairedTest test, const ResamplingOptions& options);

// Holm–Bonferroni adjusted p-values, in the order given: the i-th smallest p becomes
// max over j <= i of min(1, (m - j + 1) · p_(j)). Reject where adjusted p < alpha.
std::vector<double> holm_adjust(const std::vector<double>& p_values);

// Standard normal distribution function and its inverse (full double precision).
double normal_cdf(double x);
double normal_quantile(double p);
// The regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1.
double incomplete_beta(double a, double b, double x);
// Two-sided tail probability of Student's t with df degrees of freedom: P(|T| >= |t|).
double student_t_two_sided(double t, double df);

}  // namespace lmk::stats
