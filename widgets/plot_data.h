#pragma once

// What the plot views draw, read from the results store (core/store/schema.cpp): attention
// profiles (Figure 1), document-length histograms (Figure 2) and evaluation results by length and
// evidence position (the extrapolation curves). Every SQL statement of the plots is here; the
// functions run on a worker thread with its connection (load_in_background).

#include <QMap>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QVector>

#include <limits>
#include <map>
#include <vector>

#include "core/eval/needle_map.h"
#include "core/store/results_store.h"

namespace lmk {
class ResultsStore;
}

namespace lmk::widgets {

// ---- Shared by the plots and the results browser ------------------------------------------------

// A missing value (NULL in the store, no result for a cell).
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Texts in number-aware order: non-numbers ("all", "") first, by text; then numbers ascending
// ("128" before "1024").
bool number_aware_less(const QString& a, const QString& b);

// The configuration a run evaluates: the run's name without its last part, the evaluation
// ("lmk-32/corpus@1024" -> "lmk-32", "granularity=16/lmk-32/passkey" -> "granularity=16/lmk-32");
// a name without '/' gives `pooling`.
QString run_variant(const QString& run_name, const QString& pooling);

// The name of a line or row: `name`, after "EXPERIMENT: " when the data spans several
// experiments — runs of two experiments share names ("lmk-32/passkey") but not results.
QString with_experiment(const QString& experiment, const QString& name, bool several_experiments);

// ---- Attention-position profiles (attention_profiles) ------------------------------------------

// One stored bin: positions [start, end) (relative to the document, 0..1, as lmk eval stores
// them) and the share of the pooling token's attention they received (NaN when not stored).
struct AttentionBin {
  double start = 0;
  double end = 0;
  double weight = 0;
};

// One profile, one heatmap row: a run's attention on one length group of a dataset.
struct AttentionRow {
  qint64 run_id = 0;
  QString experiment;
  QString run_name;
  QString pooling;         // the run's `pooling` parameter, else `train.pooling`, else "unknown"
  QString length_group;    // "all" (the whole split) or the length part, e.g. "1024"
  qint64 eval_length = 0;  // the numeric length group, else the run's max_length, else 0
  QVector<AttentionBin> bins;        // by bin index
  bool several_experiments = false;  // the rows read with it span several experiments

  // The row's name: the run's, with the length group unless it is "all" ("cls/passkey@1024"),
  // after the experiment's when the rows span several ("sweep: cls/passkey@1024").
  QString label() const;
};

// A stored choice: a dataset with one layer / head aggregate (head -1: mean over heads).
struct AttentionChoice {
  QString dataset;
  int layer = 0;
  int head = -1;
  QStringList length_groups;  // of this dataset, layer and head, sorted by length
};

// Every stored (dataset, layer, head), by dataset, then layer, head. Empty when the store has no
// attention_profiles table (schema version 1).
QVector<AttentionChoice> read_attention_choices(const ResultsStore& db);

// The profiles of `dataset` at `layer` / `head`, every run and length group, ordered by pooling,
// eval length, experiment, run name and length group.
QVector<AttentionRow> read_attention_rows(const ResultsStore& db, const QString& dataset, int layer,
                                          int head);

// What each layer of the models whose profiles of `dataset` are stored attends to: "global",
// "local, window W" (ModernBERT's sliding-window layers), or "global or local by model" where
// the models differ. Read from each run's model folder (its config.json, through the core's
// EncoderConfig); a layer is absent when no run's folder can be read any more.
QMap<int, QString> read_layer_kinds(const ResultsStore& db, const QString& dataset);

// ---- Document-length distributions (length_histograms, length_percentiles) --------------------

// One stored bin: documents with lo <= tokens < hi (the last bin's hi is INT64_MAX).
struct LengthBin {
  qint64 lo = 0;
  qint64 hi = 0;
  qint64 count = 0;
};

struct LengthHistogram {
  QString dataset;
  QString tokenizer;                           // the tokenizer file it was counted with
  QVector<LengthBin> bins;                     // by bin index
  QVector<QPair<double, double>> percentiles;  // (percentile, tokens), ascending
};

// A length the models were trained at, and the runs trained at it.
struct TrainingLength {
  qint64 tokens = 0;
  QStringList runs;  // run names
};

struct LengthData {
  QVector<LengthHistogram> histograms;       // by dataset, then tokenizer
  QVector<TrainingLength> training_lengths;  // ascending
};

// The stored histograms and percentiles, and the training lengths: `train.passage_max_length` of
// the fine-tuning runs (kind train) and `train.max_length` of the pretraining runs.
LengthData read_length_data(const ResultsStore& store);

// ---- Evaluation results by length and by evidence position (eval_results) --------------------

// A dataset and split with evaluation results, and the metrics stored for it.
struct EvalSource {
  QString dataset;
  QString split;
  QStringList metrics;  // sorted
};

// Every evaluated (dataset, split); empty when the store has no eval_results table.
QVector<EvalSource> read_eval_sources(const ResultsStore& db);

// One stored result row of an evaluation run, with the uncertainty of its mean where the run
// has per-query results.
struct EvalPoint {
  qint64 run_id = 0;
  QString experiment;
  QString run_name;
  QString pooling;                 // the run's `pooling` parameter, else "unknown"
  qint64 max_length = 0;           // the run's `max_length` parameter (0: none or unlimited)
  QString group_kind;              // all | length | position | position@LEN
  QString group_value;             // the length, or the position range ("0-10%")
  double value = 0;                // NaN when stored as NULL
  int n = 0;                       // queries behind the value; 0: no per-query results
  double low = kNaN, high = kNaN;  // its 95 % percentile bootstrap interval over the queries
};

// Resamples of the curves' intervals: the tables' 10000 (so a point's interval is the one
// lmk compare gives its queries), fewer for very many points so that a store of thousands of
// runs is summarized in about a second (never fewer than 200; the legend then says how many).
inline constexpr int kCurveResamples = 10000;

// The results of `metric` on `dataset` / `split` that the curves use: whole split, per length
// and per evidence position (at every length or at one), each with its N and interval from
// the per-query results of its group (core/eval/comparison.h; seeded, so a redraw shows the
// same band). `resamples` receives the resample count used.
QVector<EvalPoint> read_eval_points(const ResultsStore& db, const QString& dataset,
                                    const QString& split, const QString& metric,
                                    int* resamples = nullptr);

// The per-query values of `metric` on `dataset` / `split` of every run, or of `runs` when given
// (run id -> scores); empty when the store has no per-query results (written before schema
// version 4, or none stored).
std::map<qint64, std::vector<QueryScore>> read_query_scores(const ResultsStore& db,
                                                            const QString& dataset,
                                                            const QString& split,
                                                            const QString& metric,
                                                            const QList<qint64>& runs = {});

// ---- Length x depth maps (eval_queries) --------------------------------------------------------

// A dataset and split whose per-query results sit in length parts with evidence positions
// (passkey, needle, windows of fixed lengths): what the needle map draws, with the metrics
// stored for its queries.
struct MapSource {
  QString dataset;
  QString split;
  QStringList metrics;  // sorted
};
QVector<MapSource> read_map_sources(const ResultsStore& db);

// One run's map of `metric`: its queries by length part and evidence depth (core/eval/needle_map).
struct MapRun {
  qint64 run_id = 0;
  QString experiment, run_name, pooling;
  NeedleMap map;
  bool several_experiments = false;  // the runs read with it span several experiments
  QString label() const { return with_experiment(experiment, run_name, several_experiments); }
};

// Every run's map of `metric` on `dataset` / `split` (depth step 0.1), CLS first, then LMK,
// then the others, each by experiment and name.
QVector<MapRun> read_map_runs(const ResultsStore& store, const QString& dataset,
                              const QString& split, const QString& metric);

// One line of a curves plot; low, high and n are aligned with points.
struct Curve {
  QString name;  // run_variant() of its runs, after the experiment when `points` span several
  QString pooling;
  QVector<QPointF> points;    // ascending x
  QVector<double> low, high;  // the interval of each point (NaN: none)
  QVector<int> n;             // the queries behind each point (0: unknown)
  QStringList groups;         // each point's stored group ("30-40" for a position bin)
};

// Metric vs evaluation length, one curve per experiment and run_variant: from the per-length groups
// (group_kind 'length', x = the length) when `points` has any, else from the whole-split results
// of runs evaluated at a max_length (x = max_length). Of two runs at one x, the later one counts.
QVector<Curve> length_curves(const QVector<EvalPoint>& points);

// The evaluation lengths the evidence-position results are stored for: LEN of 'position@LEN',
// the run's max_length for 'position' (0 when that is 0: all lengths together). Ascending.
QVector<qint64> position_lengths(const QVector<EvalPoint>& points);

// Metric vs evidence position (x = the middle of the position range in percent, "10-20%" -> 15)
// at evaluation length `length` (see position_lengths), one curve per experiment and
// run_variant.
QVector<Curve> position_curves(const QVector<EvalPoint>& points, qint64 length);

}  // namespace lmk::widgets
