#include "widgets/query_data.h"

#include <QSqlQuery>
#include <QVariant>

#include <algorithm>
#include <map>

#include "core/data/dataset_dir.h"
#include "core/data/formats.h"
#include "core/eval/comparison.h"
#include "core/eval/store_comparison.h"
#include "widgets/plot_data.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

QVector<ComparableRun> read_comparable_runs(const QSqlDatabase& db) {
  QVector<ComparableRun> runs;
  if (!has_table(db, QStringLiteral("eval_queries"))) return runs;
  QSqlQuery query = run_query(
      db, QStringLiteral("SELECT r.id, r.name, e.name, "
                         "(SELECT value FROM params WHERE run_id = r.id AND key = 'dataset'), "
                         "(SELECT count(*) FROM experiments) "
                         "FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                         "WHERE r.id IN (SELECT DISTINCT run_id FROM eval_queries) ORDER BY r.id"));
  QHash<qint64, int> index;
  while (query.next()) {
    const qint64 id = query.value(0).toLongLong();
    const bool several = query.value(4).toLongLong() > 1;
    index.insert(id, runs.size());
    runs.append({id,
                 QStringLiteral("#%1 %2%3")
                     .arg(id)
                     .arg(several ? query.value(2).toString() + QStringLiteral(": ") : QString())
                     .arg(query.value(1).toString()),
                 query.value(3).toString(),
                 {}});
  }
  QSqlQuery datasets = run_query(db, QStringLiteral("SELECT DISTINCT run_id, dataset, split "
                                                    "FROM eval_queries ORDER BY 1, 2, 3"));
  while (datasets.next()) {
    const auto at = index.find(datasets.value(0).toLongLong());
    if (at != index.end())
      runs[*at].datasets.append({datasets.value(1).toString(), datasets.value(2).toString()});
  }
  return runs;
}

QStringList read_query_metrics(const QSqlDatabase& db, qint64 run, const QString& dataset,
                               const QString& split) {
  QStringList metrics;
  if (!has_table(db, QStringLiteral("eval_queries"))) return metrics;
  QSqlQuery query = run_query(
      db,
      QStringLiteral("SELECT DISTINCT m.metric FROM query_metrics m WHERE m.query = "
                     "(SELECT id FROM eval_queries WHERE run_id = ? AND dataset = ? AND split = ? "
                     "LIMIT 1) ORDER BY 1"),
      {run, dataset, split});
  while (query.next()) metrics << query.value(0).toString();
  return metrics;
}

RunPair read_run_pair(const QSqlDatabase& db, qint64 a, qint64 b, const QString& dataset,
                      const QString& split, const QString& metric, lmk::stats::PairedTest test) {
  RunPair pair;
  if (!has_table(db, QStringLiteral("eval_queries"))) return pair;
  std::map<qint64, std::vector<QueryScore>> scores =
      read_query_scores(db, dataset, split, metric, {a, b});
  std::map<qint64, std::string> names;
  QSqlQuery runs =
      run_query(db, QStringLiteral("SELECT id, name FROM runs WHERE id IN (?, ?)"), {a, b});
  while (runs.next())
    names[runs.value(0).toLongLong()] = "#" + std::to_string(runs.value(0).toLongLong()) + " " +
                                        runs.value(1).toString().toStdString();
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
