#!/usr/bin/python3
"""The independent implementation core/eval/stats is checked against: SciPy (and statsmodels for
Holm-Bonferroni) from Debian's python3-scipy / python3-statsmodels.

Reads a JSON request (argv[1]) and prints a JSON answer with the same keys:
  paired:    [{"a": [...], "b": [...], "resamples": R, "confidence": c}] ->
             t, p_student (ttest_rel), p_fisher (permutation_test, samples),
             percentile / bca intervals of mean(a - b) (bootstrap, paired=True),
             p_bootstrap (a numpy paired bootstrap test: shifted to the null, two-sided)
  holm:      [[p, ...]] -> adjusted p-values (statsmodels multipletests, method="holm")
  quantiles: [p, ...] -> scipy.special.ndtri
  t_tails:   [[t, df], ...] -> 2 * scipy.stats.t.sf(|t|, df)
  betainc:   [[a, b, x], ...] -> scipy.special.betainc
"""
import json
import sys

import numpy as np
from scipy import special, stats
from statsmodels.stats.multitest import multipletests


def mean_difference(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def paired(case):
    a = np.asarray(case["a"], dtype=float)
    b = np.asarray(case["b"], dtype=float)
    resamples = int(case["resamples"])
    confidence = float(case["confidence"])
    rng = np.random.default_rng(12345)
    answer = {}
    t = stats.ttest_rel(a, b)
    answer["t"] = float(t.statistic)
    answer["p_student"] = float(t.pvalue)
    fisher = stats.permutation_test((a, b), mean_difference, permutation_type="samples",
                                    vectorized=True, n_resamples=resamples,
                                    alternative="two-sided", random_state=rng)
    answer["p_fisher"] = float(fisher.pvalue)
    answer["fisher_exact"] = bool(2 ** len(a) <= resamples)
    for method in ("percentile", "BCa"):
        interval = stats.bootstrap((a, b), mean_difference, paired=True, vectorized=True,
                                   n_resamples=resamples, confidence_level=confidence,
                                   method=method, random_state=rng).confidence_interval
        answer[method.lower()] = [float(interval.low), float(interval.high)]
    d = a - b
    observed = d.mean()
    means = rng.choice(d, size=(resamples, len(d)), replace=True).mean(axis=1)
    extreme = np.sum(np.abs(means - observed) >= np.abs(observed) - max(1e-14, abs(1e-14 * observed)))
    answer["p_bootstrap"] = float((extreme + 1) / (resamples + 1))
    answer["sd_mean"] = float(d.std(ddof=1) / np.sqrt(len(d)))
    return answer


def main():
    with open(sys.argv[1]) as f:
        request = json.load(f)
    answer = {
        "paired": [paired(case) for case in request.get("paired", [])],
        "holm": [list(map(float, multipletests(p, method="holm")[1])) for p in request.get("holm", [])],
        "quantiles": [float(special.ndtri(p)) for p in request.get("quantiles", [])],
        "t_tails": [float(2 * stats.t.sf(abs(t), df)) for t, df in request.get("t_tails", [])],
        "betainc": [float(special.betainc(a, b, x)) for a, b, x in request.get("betainc", [])],
    }
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
