#include "widgets/plot_data.h"

#include <QRegularExpression>
#include <QSet>
#include <QVariant>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "core/eval/comparison.h"
#include "core/model/config.h"
#include "core/store/results_store.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {
namespace {

// Points of one curve by x; of two runs at one x, the later run's point.
struct CurveBuilder {
  QString pooling;
  std::map<double, EvalPoint> by_x;
  void add(double x, const EvalPoint& point) {
    auto [it, inserted] = by_x.try_emplace(x, point);
    if (!inserted && point.run_id > it->second.run_id) it->second = point;
  }
};

// Curves in the order their series first appear (run order: the study's order of poolings).
// A series is one variant of one experiment: runs of two experiments never share a line.
class CurveSet {
 public:
  explicit CurveSet(const QVector<EvalPoint>& points) {
    QStringList experiments;
    for (const EvalPoint& point : points)
      if (!experiments.contains(point.experiment)) experiments.append(point.experiment);
    several_experiments_ = experiments.size() > 1;
  }
  CurveBuilder& series(const EvalPoint& point) {
    const QString name = with_experiment(
        point.experiment, run_variant(point.run_name, point.pooling), several_experiments_);
    auto it = builders_.find(name);
    if (it == builders_.end()) {
      order_.push_back(name);
      it = builders_.emplace(name, CurveBuilder{point.pooling, {}}).first;
    }
    return it->second;
  }
  QVector<Curve> curves() const {
    QVector<Curve> out;
    for (const QString& name : order_) {
      const CurveBuilder& builder = builders_.at(name);
      Curve curve{name, builder.pooling, {}, {}, {}, {}, {}};
      for (const auto& [x, point] : builder.by_x) {
        curve.groups.append(point.group_value);
        curve.points.append({x, point.value});
        curve.low.append(point.low);
        curve.high.append(point.high);
        curve.n.append(point.n);
      }
      out.append(curve);
    }
    return out;
  }

 private:
  bool several_experiments_ = false;
  QStringList order_;
  std::map<QString, CurveBuilder> builders_;
};

// "10-20%" -> 15; NaN when the range is not two numbers.
double position_middle(const QString& range) {
  static const QRegularExpression pattern(
      QStringLiteral(R"(^\s*([0-9]+(?:\.[0-9]+)?)\s*-\s*([0-9]+(?:\.[0-9]+)?)\s*%?\s*$)"));
  const QRegularExpressionMatch match = pattern.match(range);
  if (!match.hasMatch()) return std::numeric_limits<double>::quiet_NaN();
  return (match.captured(1).toDouble() + match.captured(2).toDouble()) / 2.0;
}

// The evaluation length a position result belongs to, or -1 for a result of another kind.
qint64 position_length(const EvalPoint& point) {
  static const QString prefix = QStringLiteral("position@");
  if (point.group_kind == QLatin1String("position")) return point.max_length;
  if (point.group_kind.startsWith(prefix)) {
    bool ok = false;
    const qint64 length = point.group_kind.mid(prefix.size()).toLongLong(&ok);
    return ok ? length : -1;
  }
  return -1;
}

}  // namespace

bool number_aware_less(const QString& a, const QString& b) {
  bool a_number = false;
  bool b_number = false;
  const double x = a.toDouble(&a_number);
  const double y = b.toDouble(&b_number);
  if (a_number != b_number) return !a_number;
  if (a_number && x != y) return x < y;
  return a < b;
}

QString run_variant(const QString& run_name, const QString& pooling) {
  const int slash = run_name.lastIndexOf(QLatin1Char('/'));
  return slash > 0 ? run_name.left(slash) : pooling;
}

QString with_experiment(const QString& experiment, const QString& name, bool several_experiments) {
  return several_experiments ? experiment + QStringLiteral(": ") + name : name;
}

QString AttentionRow::label() const {
  const QString run =
      length_group == QLatin1String("all") ? run_name : run_name + QLatin1Char('@') + length_group;
  return with_experiment(experiment, run, several_experiments);
}

QVector<AttentionChoice> read_attention_choices(const ResultsStore& db) {
  QVector<AttentionChoice> choices;
  for (const auto& [dataset_text, layer, head, group] : db.attention_profile_keys()) {
    const QString dataset = QString::fromStdString(dataset_text);
    if (choices.isEmpty() || choices.back().dataset != dataset ||
        choices.back().layer != static_cast<int>(layer) ||
        choices.back().head != static_cast<int>(head))
      choices.append({dataset, static_cast<int>(layer), static_cast<int>(head), {}});
    choices.back().length_groups.append(QString::fromStdString(group));
  }
  for (AttentionChoice& choice : choices)
    std::sort(choice.length_groups.begin(), choice.length_groups.end(), number_aware_less);
  return choices;
}

QMap<int, QString> read_layer_kinds(const ResultsStore& db, const QString& dataset) {
  QMap<int, QString> kinds;
  QMap<int, QSet<QString>> seen;  // layer -> what the models say of it
  for (const std::string& model : db.attention_profile_models(dataset.toStdString())) {
    const std::string path = model + "/config.json";
    std::ifstream in(path);
    if (!in) continue;  // the folder is gone (or moved): nothing to say
    try {
      const EncoderConfig config = EncoderConfig::from_json(nlohmann::json::parse(in), path);
      for (int64_t layer = 0; layer < config.num_layers; ++layer)
        seen[static_cast<int>(layer)].insert(
            config.is_global_layer(layer)
                ? QStringLiteral("global")
                : QStringLiteral("local, window %1").arg(config.local_attention));
    } catch (const std::exception&) {
      continue;  // not a config lmk reads: no mark rather than a wrong one
    }
  }
  for (auto it = seen.begin(); it != seen.end(); ++it)
    kinds.insert(it.key(), it.value().size() == 1 ? *it.value().begin()
                                                  : QStringLiteral("global or local by model"));
  return kinds;
}

QVector<AttentionRow> read_attention_rows(const ResultsStore& db, const QString& dataset, int layer,
                                          int head) {
  QVector<AttentionRow> rows;
  for (const RunAttentionBin& bin : db.attention_profile_bins(dataset.toStdString(), layer, head)) {
    const QString length_group = QString::fromStdString(bin.length_group);
    if (rows.isEmpty() || rows.back().run_id != bin.run.run_id ||
        rows.back().length_group != length_group) {
      AttentionRow row;
      row.run_id = bin.run.run_id;
      row.experiment = QString::fromStdString(bin.run.experiment);
      row.run_name = QString::fromStdString(bin.run.run_name);
      row.pooling = QString::fromStdString(bin.run.pooling);
      row.length_group = length_group;
      bool numeric = false;
      const qint64 group_length = length_group.toLongLong(&numeric);
      row.eval_length = numeric ? group_length : bin.run.max_length;
      rows.append(row);
    }
    rows.back().bins.append({bin.bin_start, bin.bin_end, bin.weight});
  }
  const bool several_experiments = std::any_of(
      rows.begin(), rows.end(),
      [&](const AttentionRow& row) { return row.experiment != rows.front().experiment; });
  for (AttentionRow& row : rows) row.several_experiments = several_experiments;
  std::stable_sort(rows.begin(), rows.end(), [](const AttentionRow& a, const AttentionRow& b) {
    if (a.pooling != b.pooling) return a.pooling < b.pooling;
    if (a.eval_length != b.eval_length) return a.eval_length < b.eval_length;
    if (a.experiment != b.experiment) return a.experiment < b.experiment;
    if (a.run_name != b.run_name) return a.run_name < b.run_name;
    return number_aware_less(a.length_group, b.length_group);
  });
  return rows;
}

LengthData read_length_data(const ResultsStore& store) {
  LengthData data;
  for (const lmk::LengthHistogram& stored : store.length_histograms()) {
    LengthHistogram histogram{
        QString::fromStdString(stored.dataset), QString::fromStdString(stored.tokenizer), {}, {}};
    for (const auto& bin : stored.bins) histogram.bins.append({bin.lo, bin.hi, bin.count});
    for (const auto& [percentile, value] : stored.percentiles)
      histogram.percentiles.append(qMakePair(percentile, value));
    data.histograms.append(std::move(histogram));
  }
  for (const auto& [tokens, run_name] : store.training_lengths()) {
    if (data.training_lengths.isEmpty() || data.training_lengths.back().tokens != tokens)
      data.training_lengths.append(TrainingLength{tokens, {}});
    data.training_lengths.back().runs.append(QString::fromStdString(run_name));
  }
  return data;
}

QVector<EvalSource> read_eval_sources(const ResultsStore& db) {
  QVector<EvalSource> sources;
  for (const auto& [dataset_text, split_text, metric] : db.eval_result_metrics()) {
    const QString dataset = QString::fromStdString(dataset_text);
    const QString split = QString::fromStdString(split_text);
    if (sources.isEmpty() || sources.back().dataset != dataset || sources.back().split != split)
      sources.append({dataset, split, {}});
    sources.back().metrics.append(QString::fromStdString(metric));
  }
  return sources;
}

QVector<EvalPoint> read_eval_points(const ResultsStore& db, const QString& dataset,
                                    const QString& split, const QString& metric, int* resamples) {
  QVector<EvalPoint> points;
  if (resamples) *resamples = 0;
  for (const RunResultPoint& point :
       db.result_points(dataset.toStdString(), split.toStdString(), metric.toStdString())) {
    points.append({point.run.run_id, QString::fromStdString(point.run.experiment),
                   QString::fromStdString(point.run.run_name),
                   QString::fromStdString(point.run.pooling), point.run.max_length,
                   QString::fromStdString(point.group_kind),
                   QString::fromStdString(point.group_value), point.value});
  }
  // Each point's queries: its run's per-query values of the group it summarizes.
  const std::map<qint64, std::vector<QueryScore>> scores =
      read_query_scores(db, dataset, split, metric);
  if (scores.empty()) return points;
  std::vector<std::vector<QueryScore>> groups(static_cast<size_t>(points.size()));
  double total = 0;
  for (int i = 0; i < points.size(); ++i) {
    const auto run = scores.find(points[i].run_id);
    if (run == scores.end()) continue;
    groups[static_cast<size_t>(i)] = select_query_group(
        run->second, points[i].group_kind.toStdString(), points[i].group_value.toStdString());
    total += static_cast<double>(groups[static_cast<size_t>(i)].size());
  }
  stats::ResamplingOptions options;
  options.resamples =
      std::clamp<int64_t>(static_cast<int64_t>(2e8 / std::max(total, 1.0)), 200, kCurveResamples);
  if (resamples) *resamples = static_cast<int>(options.resamples);
  for (int i = 0; i < points.size(); ++i) {
    const std::vector<QueryScore>& group = groups[static_cast<size_t>(i)];
    if (group.empty()) continue;
    const CellSummary summary = summarize_scores(group, options);
    points[i].n = static_cast<int>(summary.n);
    points[i].low = summary.interval.low;
    points[i].high = summary.interval.high;
  }
  return points;
}

QVector<MapSource> read_map_sources(const ResultsStore& db) {
  QVector<MapSource> sources;
  for (const auto& [dataset_text, split_text, metric] : db.positioned_query_metrics()) {
    const QString dataset = QString::fromStdString(dataset_text);
    const QString split = QString::fromStdString(split_text);
    if (sources.isEmpty() || sources.back().dataset != dataset || sources.back().split != split)
      sources.append({dataset, split, {}});
    sources.back().metrics.append(QString::fromStdString(metric));
  }
  return sources;
}

QVector<MapRun> read_map_runs(const ResultsStore& store, const QString& dataset,
                              const QString& split, const QString& metric) {
  QVector<MapRun> runs;
  const std::map<qint64, std::vector<QueryScore>> scores =
      read_query_scores(store, dataset, split, metric);
  QSet<QString> experiments;
  for (const auto& [run_id, run_scores] : scores) {
    const RunRecord record = store.get_run(run_id);
    const std::map<std::string, std::string> params = store.run_params(run_id);
    const auto pooling = params.find("pooling");
    MapRun run;
    run.run_id = run_id;
    run.experiment = QString::fromStdString(record.experiment);
    run.run_name = QString::fromStdString(record.name);
    run.pooling = pooling == params.end() ? QStringLiteral("unknown")
                                          : QString::fromStdString(pooling->second);
    // The tables' resampling: a cell's interval is the one lmk compare gives its queries.
    run.map = needle_map(run_scores, 0.1);
    if (run.map.lengths.empty()) continue;
    experiments.insert(run.experiment);
    runs.append(std::move(run));
  }
  for (MapRun& run : runs) run.several_experiments = experiments.size() > 1;
  auto rank = [](const QString& pooling) {
    return pooling == QLatin1String("cls") ? 0 : pooling == QLatin1String("lmk") ? 1 : 2;
  };
  std::stable_sort(runs.begin(), runs.end(), [&](const MapRun& a, const MapRun& b) {
    if (rank(a.pooling) != rank(b.pooling)) return rank(a.pooling) < rank(b.pooling);
    if (a.experiment != b.experiment) return a.experiment < b.experiment;
    return a.run_name < b.run_name;
  });
  return runs;
}

std::map<qint64, std::vector<QueryScore>> read_query_scores(const ResultsStore& db,
                                                            const QString& dataset,
                                                            const QString& split,
                                                            const QString& metric,
                                                            const QList<qint64>& runs) {
  std::map<int64_t, std::vector<QueryScore>> by_run =
      db.query_scores(dataset.toStdString(), split.toStdString(), metric.toStdString(),
                      std::vector<int64_t>(runs.begin(), runs.end()));
  // Moved, not copied: a pivot reads every run's scores of a column (qint64 is not int64_t's
  // type here, so the map itself cannot be handed over).
  std::map<qint64, std::vector<QueryScore>> scores;
  for (auto& [run, run_scores] : by_run)
    scores.emplace_hint(scores.end(), run, std::move(run_scores));
  return scores;
}

QVector<Curve> length_curves(const QVector<EvalPoint>& points) {
  const bool per_length_groups = std::any_of(points.begin(), points.end(), [](const EvalPoint& p) {
    return p.group_kind == QLatin1String("length");
  });
  CurveSet curves(points);
  for (const EvalPoint& point : points) {
    if (per_length_groups) {
      if (point.group_kind != QLatin1String("length")) continue;
      bool ok = false;
      const qint64 length = point.group_value.toLongLong(&ok);
      if (ok && length > 0) curves.series(point).add(static_cast<double>(length), point);
    } else if (point.group_kind == QLatin1String("all") && point.max_length > 0) {
      curves.series(point).add(static_cast<double>(point.max_length), point);
    }
  }
  return curves.curves();
}

QVector<qint64> position_lengths(const QVector<EvalPoint>& points) {
  QVector<qint64> lengths;
  for (const EvalPoint& point : points) {
    const qint64 length = position_length(point);
    if (length >= 0 && !lengths.contains(length)) lengths.append(length);
  }
  std::sort(lengths.begin(), lengths.end());
  return lengths;
}

QVector<Curve> position_curves(const QVector<EvalPoint>& points, qint64 length) {
  CurveSet curves(points);
  for (const EvalPoint& point : points) {
    if (position_length(point) != length) continue;
    const double middle = position_middle(point.group_value);
    if (!std::isnan(middle)) curves.series(point).add(middle, point);
  }
  return curves.curves();
}

}  // namespace lmk::widgets
