#include "widgets/query_data.h"

#include <algorithm>
#include <map>

#include "core/data/dataset_dir.h"
#include "core/data/formats.h"
#include "core/eval/comparison.h"
#include "core/eval/store_comparison.h"
#include "core/store/results_store.h"
#include "widgets/plot_data.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

QVector<ComparableRun> read_comparable_runs(const ResultsStore& store) {
  QVector<ComparableRun> runs;
  const bool several = store.experiments().size() > 1;
  for (const auto& [id, dataset, split] : store.query_result_sets()) {
    if (runs.isEmpty() || runs.back().id != id) {
      const RunRecord run = store.get_run(id);
      const std::map<std::string, std::string> params = store.run_params(id);
      const auto folder = params.find("dataset");
      runs.append({id,
                   QStringLiteral("#%1 %2%3")
                       .arg(id)
                       .arg(several ? QString::fromStdString(run.experiment) + QStringLiteral(": ")
                                    : QString())
                       .arg(QString::fromStdString(run.name)),
                   folder == params.end() ? QString() : QString::fromStdString(folder->second),
                   {}});
    }
    runs.back().datasets.append({QString::fromStdString(dataset), QString::fromStdString(split)});
  }
  return runs;
}

QStringList read_query_metrics(const ResultsStore& db, qint64 run, const QString& dataset,
                               const QString& split) {
  QStringList metrics;
  for (const std::string& metric :
       db.query_metric_names(run, dataset.toStdString(), split.toStdString()))
    metrics << QString::fromStdString(metric);
  return metrics;
}

RunPair read_run_pair(const ResultsStore& db, qint64 a, qint64 b, const QString& dataset,
                      const QString& split, const QString& metric, lmk::stats::PairedTest test) {
  RunPair pair;
  std::map<qint64, std::vector<QueryScore>> scores =
      read_query_scores(db, dataset, split, metric, {a, b});
  std::map<qint64, std::string> names;
  for (const qint64 id : {a, b}) names[id] = "#" + std::to_string(id) + " " + db.get_run(id).name;
  const std::vector<QueryScore>& of_a = scores[a];
  const std::vector<QueryScore>& of_b = scores[b];
  // The shared queries in (part, query id) order, as the comparison pairs them.
  const lmk::PairedScores paired = lmk::pair_scores(of_a, of_b);
  for (size_t i = 0; i < paired.a.size(); ++i)
    pair.pairs.append({QString::fromStdString(paired.units[i].first),
                       QString::fromStdString(paired.units[i].second), paired.a[i], paired.b[i]});
  pair.only_a = static_cast<int>(paired.only_a);
  pair.only_b = static_cast<int>(paired.only_b);
  // The test as lmk compare --intersection runs it for these two runs (the same labels, hence
  // the same seed).
  lmk::ComparisonOptions options;
  options.test = test;
  options.intersection = true;
  options.refuse_unpaired = false;
  const lmk::ResultColumn column{dataset.toStdString(), split.toStdString(), metric.toStdString(),
                                 "all", ""};
  const lmk::ComparisonTable table = lmk::compare_table(
      {names[a], names[b]}, {column.label()},
      {{{true, of_a, lmk::stats::kNaN, ""}}, {{true, of_b, lmk::stats::kNaN, ""}}}, options);
  if (!table.tests.empty()) {
    pair.compared = true;
    pair.comparison = table.tests.front().result;
  }
  QStringList notes;
  for (const std::string& note : table.notes) notes << QString::fromStdString(note);
  pair.note = notes.join(QLatin1Char(' '));
  return pair;
}

QueryDetails read_query_details(const QString& dataset_path, const QString& part,
                                const QString& split, const QString& query_id) {
  QueryDetails details;
  if (dataset_path.isEmpty()) {
    details.error = QObject::tr("the run does not record its dataset folder");
    return details;
  }
  try {
    const lmk::DatasetInfo info = lmk::read_dataset_info(dataset_path.toStdString());
    std::string folder;
    for (const lmk::DatasetPart& p : info.parts)
      if (p.name == part.toStdString()) folder = p.path;
    if (folder.empty()) {
      details.error = QObject::tr("%1 has no part '%2'").arg(dataset_path, part);
      return details;
    }
    const auto found = lmk::find_beir_query(folder, split.toStdString(), query_id.toStdString());
    if (!found) {
      details.error =
          QObject::tr("no query %1 in %2").arg(query_id, QString::fromStdString(folder));
      return details;
    }
    details.text = QString::fromStdString(found->query.text);
    for (const lmk::Judgement& j : found->judgements)
      details.targets << QObject::tr("%1 (relevance %2)")
                             .arg(QString::fromStdString(j.doc_id))
                             .arg(j.relevance);
  } catch (const std::exception& e) {
    details.error = QString::fromUtf8(e.what());
  }
  return details;
}

}  // namespace lmk::widgets
