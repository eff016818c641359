// core/eval/stats against an independent implementation: SciPy 1.10 and statsmodels (Debian's
// python3-scipy, python3-statsmodels; scripts/setup installs them), run on the same numbers by
// tests/core/eval/stats_oracle.py. Exact quantities (t-test, exact randomization test, Holm,
// distribution functions) must agree to rounding; resampled ones within Monte-Carlo error.
#include "core/eval/stats.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk::stats {
namespace {

using nlohmann::json;

// Runs the oracle on `request`; its answer.
json oracle(const json& request) {
  lmk::testing::TempDir dir;
  const std::string in = dir.write("request.json", request.dump());
  const std::string command = std::string("/usr/bin/python3 ") + LMK_SOURCE_DIR +
                              "/tests/core/eval/stats_oracle.py " + in + " 2>&1";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  EXPECT_EQ(status, 0) << "the SciPy oracle failed (python3-scipy and python3-statsmodels "
                          "are installed by scripts/setup):\n"
                       << output;
  return json::parse(output);
}

// Per-query values as retrieval metrics look: many ties, bounded in [0, 1].
std::vector<double> metric_values(size_t n, std::mt19937& random, double shift = 0) {
  static const double levels[] = {0, 0, 0, 1.0 / 3, 0.5, 0.6309297535714575, 1, 1};
  std::uniform_int_distribution<int> pick(0, 7);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<double> values;
  for (size_t i = 0; i < n; ++i) {
    double v = uniform(random) < 0.3 ? uniform(random) : levels[pick(random)];
    values.push_back(std::clamp(v + shift * uniform(random), 0.0, 1.0));
  }
  return values;
}

double relative_error(double mine, double theirs) {
  if (mine == theirs) return 0;
  return std::fabs(mine - theirs) / std::max(std::fabs(theirs), 1e-300);
}

TEST(StatsTest, AgreesWithScipyOnPairedTestsAndIntervals) {
  std::mt19937 random(7);
  struct Case {
    std::vector<double> a, b;
  };
  std::vector<Case> cases;
  for (size_t n : {10, 13, 14, 40, 74, 300}) {
    Case c{metric_values(n, random, 0.2), metric_values(n, random)};
    cases.push_back(c);
  }
  // Nearly identical runs (most differences 0) and a clear difference.
  cases.push_back({metric_values(60, random), {}});
  cases.back().b = cases.back().a;
  for (size_t i = 0; i < 60; i += 7) cases.back().b[i] = std::max(0.0, cases.back().b[i] - 0.25);
  cases.push_back({metric_values(120, random, 0.5), metric_values(120, random)});

  const int64_t oracle_resamples = 50000;
  json request = {{"paired", json::array()}};
  for (const Case& c : cases)
    request["paired"].push_back(
        {{"a", c.a}, {"b", c.b}, {"resamples", oracle_resamples}, {"confidence", 0.95}});
  const json answer = oracle(request);
  ASSERT_EQ(answer["paired"].size(), cases.size());

  ResamplingOptions options;  // 10 000 resamples, seed 0
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const json& scipy = answer["paired"][k];
    const std::string label =
        "case " + std::to_string(k) + " (n " + std::to_string(c.a.size()) + ")";
    std::vector<double> d;
    for (size_t i = 0; i < c.a.size(); ++i) d.push_back(c.a[i] - c.b[i]);

    // Student's t: the same numbers to rounding.
    double t = 0;
    const double p_student = student_t_p_value(d, &t);
    EXPECT_LT(relative_error(t, scipy["t"].get<double>()), 1e-10) << label;
    EXPECT_LT(relative_error(p_student, scipy["p_student"].get<double>()), 1e-9) << label;

    // Fisher's randomization test: exact where SciPy enumerates too (2^n <= resamples, and
    // then for our 10 000 as for its 50 000 only when n <= 13), else within Monte-Carlo error.
    const double p_fisher = randomization_p_value(d, options);
    const double scipy_fisher = scipy["p_fisher"].get<double>();
    if (c.a.size() <= 13) {
      EXPECT_NEAR(p_fisher, scipy_fisher, 1e-12) << label << ": exact enumeration";
    } else {
      const double spread = std::sqrt(std::max(scipy_fisher * (1 - scipy_fisher), 1e-4) *
                                      (1.0 / 10000 + 1.0 / oracle_resamples));
      EXPECT_NEAR(p_fisher, scipy_fisher, 4 * spread + 2e-4) << label;
    }
    const double p_bootstrap = bootstrap_p_value(d, options);
    const double numpy_bootstrap = scipy["p_bootstrap"].get<double>();
    EXPECT_NEAR(p_bootstrap, numpy_bootstrap,
                4 * std::sqrt(std::max(numpy_bootstrap * (1 - numpy_bootstrap), 1e-4) *
                              (1.0 / 10000 + 1.0 / oracle_resamples)) +
                    2e-4)
        << label;

    // Intervals of the mean difference: the bootstrap quantiles' Monte-Carlo error is a few
    // hundredths of the standard error of the mean at 10 000 resamples.
    const double se = scipy["sd_mean"].get<double>();
    const PairedComparison comparison = compare_paired(c.a, c.b, PairedTest::Fisher, options);
    EXPECT_NEAR(comparison.difference_interval.low, scipy["percentile"][0].get<double>(),
                0.12 * se + 1e-12)
        << label;
    EXPECT_NEAR(comparison.difference_interval.high, scipy["percentile"][1].get<double>(),
                0.12 * se + 1e-12)
        << label;
    EXPECT_NEAR(comparison.difference_bca.low, scipy["bca"][0].get<double>(), 0.15 * se + 1e-12)
        << label;
    EXPECT_NEAR(comparison.difference_bca.high, scipy["bca"][1].get<double>(), 0.15 * se + 1e-12)
        << label;
    EXPECT_EQ(comparison.p_value, p_fisher) << label;
    EXPECT_DOUBLE_EQ(comparison.difference, mean(d)) << label;
    EXPECT_DOUBLE_EQ(comparison.effect_size, mean(d) / sample_sd(d)) << label;
  }
}

TEST(StatsTest, HolmAndDistributionFunctionsAgreeWithScipyAndStatsmodels) {
  const std::vector<std::vector<double>> families = {
      {0.01, 0.04, 0.03, 0.005},
      {0.2, 0.2, 0.01, 0.5, 0.049, 0.9, 1.0},
      {0.0001},
      {0.03, 0.03, 0.03},
  };
  const std::vector<double> quantiles = {1e-300, 1e-20, 1e-10,     1e-3,     0.02, 0.02425,
                                         0.0243, 0.1,   0.3,       0.5,      0.7,  0.975,
                                         0.9757, 0.999, 1 - 1e-10, 1 - 1e-15};
  std::vector<std::array<double, 2>> tails;
  for (double t : {0.05, 1.0, 2.5, 5.0, 20.0})
    for (double df : {1.0, 2.0, 5.0, 29.0, 73.0, 499.0, 10000.0}) tails.push_back({t, df});
  const std::vector<std::array<double, 3>> betas = {
      {0.5, 0.5, 0.3}, {2, 3, 0.7}, {10, 0.5, 0.99}, {100, 200, 0.34}, {0.1, 8, 0.001}};
  const json answer = oracle(
      {{"holm", families}, {"quantiles", quantiles}, {"t_tails", tails}, {"betainc", betas}});
  for (size_t f = 0; f < families.size(); ++f) {
    const std::vector<double> mine = holm_adjust(families[f]);
    for (size_t i = 0; i < mine.size(); ++i)
      EXPECT_NEAR(mine[i], answer["holm"][f][i].get<double>(), 1e-15) << f << "/" << i;
  }
  for (size_t i = 0; i < quantiles.size(); ++i) {
    const double theirs = answer["quantiles"][i].get<double>();
    EXPECT_LT(relative_error(normal_quantile(quantiles[i]), theirs), 1e-13) << quantiles[i];
    EXPECT_LT(relative_error(normal_cdf(theirs), quantiles[i]), 1e-13) << quantiles[i];
  }
  for (size_t i = 0; i < tails.size(); ++i) {
    EXPECT_LT(relative_error(student_t_two_sided(tails[i][0], tails[i][1]),
                             answer["t_tails"][i].get<double>()),
              1e-9)
        << "t " << tails[i][0] << ", df " << tails[i][1];
  }
  for (size_t i = 0; i < betas.size(); ++i) {
    EXPECT_LT(relative_error(incomplete_beta(betas[i][0], betas[i][1], betas[i][2]),
                             answer["betainc"][i].get<double>()),
              1e-11)
        << i;
  }
}

TEST(StatsTest, KnownCases) {
  ResamplingOptions options;
  std::mt19937 random(3);
  // Identical runs: nothing to tell apart.
  const std::vector<double> same = metric_values(50, random);
  for (PairedTest test : {PairedTest::Fisher, PairedTest::Student, PairedTest::Bootstrap}) {
    const PairedComparison c = compare_paired(same, same, test, options);
    EXPECT_EQ(c.p_value, 1.0) << paired_test_name(test);
    EXPECT_EQ(c.difference, 0.0);
    EXPECT_EQ(c.difference_interval.low, 0.0);
    EXPECT_EQ(c.difference_interval.high, 0.0);
    EXPECT_EQ(c.difference_bca.low, 0.0);
    EXPECT_EQ(c.effect_size, 0.0);
  }
  // One run better on every query: the randomization test's floor, 2 / 2^n exactly when every
  // sign pattern is enumerated, 2 / (resamples + 1) when they are drawn.
  for (size_t n : {10, 20}) {
    std::vector<double> better, worse;
    for (size_t i = 0; i < n; ++i) {
      worse.push_back(0.1 * static_cast<double>(i % 4));
      better.push_back(worse.back() + 0.2 + 0.01 * static_cast<double>(i));
    }
    const PairedComparison c = compare_paired(better, worse, PairedTest::Fisher, options);
    EXPECT_EQ(c.p_value, n == 10 ? 2.0 / 1024 : 2.0 / 10001) << n;
    EXPECT_GT(c.difference_interval.low, 0) << n;
    EXPECT_EQ(compare_paired(worse, better, PairedTest::Fisher, options).p_value, c.p_value);
    EXPECT_LT(compare_paired(better, worse, PairedTest::Student, options).p_value, 1e-6);
    EXPECT_EQ(compare_paired(better, worse, PairedTest::Bootstrap, options).p_value, 1.0 / 10001);
  }
  // Constant non-zero differences: t is infinite, p 0 (SciPy says NaN).
  double t = 0;
  EXPECT_EQ(student_t_p_value({0.5, 0.5, 0.5}, &t), 0.0);
  EXPECT_TRUE(std::isinf(t));
  // Intervals of a mean hold it; more confidence, a wider interval.
  const std::vector<double> values = metric_values(200, random);
  const Interval ci = percentile_interval(values, options);
  EXPECT_LT(ci.low, mean(values));
  EXPECT_GT(ci.high, mean(values));
  ResamplingOptions wide = options;
  wide.confidence = 0.99;
  EXPECT_LT(percentile_interval(values, wide).low, ci.low);
  EXPECT_EQ(quantile_sorted({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_EQ(quantile_sorted({1, 2, 3, 4}, 1.0), 4);
}

TEST(StatsTest, SeededAndReproducible) {
  std::mt19937 random(11);
  const std::vector<double> a = metric_values(300, random, 0.1), b = metric_values(300, random);
  ResamplingOptions options;
  options.seed = 42;
  const PairedComparison first = compare_paired(a, b, PairedTest::Fisher, options);
  const PairedComparison again = compare_paired(a, b, PairedTest::Fisher, options);
  EXPECT_EQ(first.p_value, again.p_value);
  EXPECT_EQ(first.difference_interval.low, again.difference_interval.low);
  EXPECT_EQ(first.difference_bca.high, again.difference_bca.high);
  options.seed = 43;
  const PairedComparison other = compare_paired(a, b, PairedTest::Fisher, options);
  EXPECT_NE(first.difference_interval.low, other.difference_interval.low) << "the seed matters";
}

TEST(StatsTest, RefusesWhatCannotBeTested) {
  ResamplingOptions options;
  EXPECT_THROW(compare_paired({0.5}, {0.2}, PairedTest::Fisher, options), InputError);
  EXPECT_THROW(compare_paired({0.5, 0.1}, {0.2}, PairedTest::Student, options), InputError);
  EXPECT_THROW(randomization_p_value({}, options), InputError);
  EXPECT_THROW(parse_paired_test("wilcoxon", "--test"), InputError);
  EXPECT_EQ(parse_paired_test("student", "--test"), PairedTest::Student);
  EXPECT_TRUE(std::isnan(percentile_interval({0.3}, options).low));
  EXPECT_TRUE(std::isnan(normal_quantile(1.5)));
}

}  // namespace
}  // namespace lmk::stats
