#include "widgets/results_model.h"

#include <QBrush>
#include <QColor>
#include <QDir>
#include <QFont>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>
#include <QSqlError>
#include <QSqlQuery>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "widgets/plot_data.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {
namespace {

// The filter text's terms: whitespace separates them except inside double quotes, which are
// dropped (`model="a b"` is one term).
QStringList split_terms(const QString& text) {
  QStringList terms;
  QString current;
  bool quoted = false;
  bool pending = false;
  for (const QChar c : text) {
    if (c == QLatin1Char('"')) {
      quoted = !quoted;
      pending = true;
    } else if (c.isSpace() && !quoted) {
      if (pending) terms << current;
      current.clear();
      pending = false;
    } else {
      current += c;
      pending = true;
    }
  }
  if (pending) terms << current;
  return terms;
}

// A GLOB pattern in which only `*` is a wildcard (`?` and `[` stand for themselves).
QString glob_pattern(QString value) {
  value.replace(QLatin1String("["), QLatin1String("[[]"));
  value.replace(QLatin1String("?"), QLatin1String("[?]"));
  return value;
}

struct Term {
  QString key, op, value;
};

// Splits `key<op>value` at its first operator; op is empty for free text.
Term parse_term(const QString& term) {
  for (int i = 0; i < term.size(); ++i) {
    const QChar c = term[i];
    QString op;
    if (c == QLatin1Char('!') && i + 1 < term.size() && term[i + 1] == QLatin1Char('='))
      op = QStringLiteral("!=");
    else if ((c == QLatin1Char('<') || c == QLatin1Char('>')) && i + 1 < term.size() &&
             term[i + 1] == QLatin1Char('='))
      op = QString(c) + QLatin1Char('=');
    else if (c == QLatin1Char('=') || c == QLatin1Char('<') || c == QLatin1Char('>'))
      op = QString(c);
    if (!op.isEmpty()) return {term.left(i).trimmed(), op, term.mid(i + op.size())};
  }
  return {QString(), QString(), term};
}

// The condition `expression <op> value` and its binding (GLOB when the value holds a `*`).
QString value_condition(const QString& expression, const Term& term, QVariantList& bindings,
                        QString& error) {
  if (term.op == QLatin1String("=") || term.op == QLatin1String("!=")) {
    const bool glob = term.value.contains(QLatin1Char('*'));
    bindings << (glob ? glob_pattern(term.value) : term.value);
    return expression + (glob ? QStringLiteral(" GLOB ?") : QStringLiteral(" = ?"));
  }
  bool number = false;
  const double bound = term.value.toDouble(&number);
  if (!number) {
    error = QStringLiteral("'%1%2%3': %2 needs a number").arg(term.key, term.op, term.value);
    return QString();
  }
  bindings << bound;
  return QStringLiteral("CAST(%1 AS REAL) %2 ?").arg(expression, term.op);
}

// The SQL of one `key<op>value` term over `runs r JOIN experiments e`.
QString term_condition(const Term& term, QVariantList& bindings, QString& error) {
  static const QHash<QString, QString> run_fields = {
      {QStringLiteral("id"), QStringLiteral("r.id")},
      {QStringLiteral("name"), QStringLiteral("r.name")},
      {QStringLiteral("kind"), QStringLiteral("r.kind")},
      {QStringLiteral("status"), QStringLiteral("r.status")},
      {QStringLiteral("experiment"), QStringLiteral("e.name")}};
  const bool negated = term.op == QLatin1String("!=");
  const auto field = run_fields.find(term.key.toLower());
  if (field != run_fields.end()) {
    Term typed = term;
    if (field.key() == QLatin1String("status")) typed.value = typed.value.toUpper();
    if (field.key() == QLatin1String("id") && !term.value.contains(QLatin1Char('*')) &&
        (term.op == QLatin1String("=") || negated)) {
      bool number = false;
      const qlonglong id = term.value.toLongLong(&number);
      if (!number) {
        error = QStringLiteral("'%1%2%3': id needs a number").arg(term.key, term.op, term.value);
        return QString();
      }
      bindings << id;
      return negated ? QStringLiteral("r.id <> ?") : QStringLiteral("r.id = ?");
    }
    const QString condition = value_condition(field.value(), typed, bindings, error);
    if (condition.isEmpty()) return QString();
    return negated ? QStringLiteral("NOT (%1)").arg(condition) : condition;
  }
  // A run param; a `*` in the key matches several keys (`*pooling` is pooling or train.pooling).
  QVariantList own;
  const bool key_glob = term.key.contains(QLatin1Char('*'));
  own << (key_glob ? glob_pattern(term.key) : term.key);
  const QString condition = value_condition(QStringLiteral("p.value"), term, own, error);
  if (condition.isEmpty()) return QString();
  bindings << own;
  return QStringLiteral("%1 (SELECT 1 FROM params p WHERE p.run_id = r.id AND p.key %2 AND %3)")
      .arg(negated ? QStringLiteral("NOT EXISTS") : QStringLiteral("EXISTS"),
           key_glob ? QStringLiteral("GLOB ?") : QStringLiteral("= ?"), condition);
}

// Prepares and runs a query the model can seek in (QSqlQueryModel needs a scrollable one; run_query
// gives forward-only ones).
QSqlQuery scrollable_query(const QSqlDatabase& db, const QString& sql,
                           const QVariantList& bindings) {
  QSqlQuery query(db);
  bool ok = query.prepare(sql);
  if (ok) {
    for (const QVariant& value : bindings) query.addBindValue(value);
    ok = query.exec();
  }
  if (!ok)
    throw StoreError(QStringLiteral("%1: %2 (in: %3)")
                         .arg(db.databaseName(), query.lastError().text(), sql.simplified())
                         .toStdString());
  return query;
}

QString number_text(double value) {
  return std::isnan(value) ? QString() : QString::number(value, 'f', 4);
}

// `text`, never null: a null QString marks a key a run lacks.
QString present(QString text) {
  if (text.isNull()) text = QStringLiteral("");
  return text;
}

// runs.config flattened: nested objects as dotted keys, list items as key[i].
void flatten_json(const QJsonValue& value, const QString& key, QMap<QString, QString>& out) {
  if (value.isObject()) {
    const QJsonObject object = value.toObject();
    if (object.isEmpty() && !key.isEmpty()) out[key] = QStringLiteral("{}");
    for (auto it = object.begin(); it != object.end(); ++it)
      flatten_json(it.value(), key.isEmpty() ? it.key() : key + QLatin1Char('.') + it.key(), out);
  } else if (value.isArray()) {
    const QJsonArray array = value.toArray();
    if (array.isEmpty()) out[key] = QStringLiteral("[]");
    for (int i = 0; i < array.size(); ++i)
      flatten_json(array[i], QStringLiteral("%1[%2]").arg(key).arg(i), out);
  } else if (value.isString()) {
    out[key] = present(value.toString());
  } else if (value.isDouble()) {
    const double number = value.toDouble();
    out[key] = number == std::floor(number) && std::abs(number) < 1e15
                   ? QString::number(static_cast<qlonglong>(number))
                   : QString::number(number, 'g', 15);
  } else if (value.isBool()) {
    out[key] = value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
  } else {
    out[key] = QStringLiteral("null");
  }
}

// A file or folder name from a run or dataset name ("cls/corpus@128" -> "cls_corpus@128").
QString safe_file_name(QString name) {
  static const QRegularExpression unsafe(QStringLiteral("[^A-Za-z0-9._@=+-]"));
  name.replace(unsafe, QStringLiteral("_"));
  return name.isEmpty() ? QStringLiteral("_") : name;
}

void write_file(const QString& path, const QByteArray& bytes) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
    throw std::runtime_error(
        QStringLiteral("cannot write %1: %2").arg(path, file.errorString()).toStdString());
}

}  // namespace

FilterClause run_filter_clause(const RunFilter& filter) {
  FilterClause clause;
  QStringList conditions;
  for (const QString& text : split_terms(filter.text)) {
    const Term term = parse_term(text);
    if (term.op.isEmpty()) {
      conditions << QStringLiteral("(instr(lower(r.name), ?) > 0 OR instr(lower(e.name), ?) > 0)");
      clause.bindings << term.value.toLower() << term.value.toLower();
      continue;
    }
    if (term.key.isEmpty()) {
      clause.error = QStringLiteral("'%1': no key before %2").arg(text, term.op);
      continue;
    }
    QString error;
    const QString condition = term_condition(term, clause.bindings, error);
    if (condition.isEmpty())
      clause.error = error;
    else
      conditions << condition;
  }
  if (!filter.status.isEmpty()) {
    conditions << QStringLiteral("r.status = ?");
    clause.bindings << filter.status;
  }
  if (filter.experiment_id >= 0) {
    conditions << QStringLiteral("r.experiment_id = ?");
    clause.bindings << filter.experiment_id;
  }
  clause.sql =
      conditions.isEmpty() ? QStringLiteral("1") : conditions.join(QStringLiteral(" AND "));
  return clause;
}

qlonglong count_runs(const QSqlDatabase& db, const RunFilter& filter) {
  const FilterClause where = run_filter_clause(filter);
  QSqlQuery count = run_query(db,
                              QStringLiteral("SELECT count(*) FROM runs r JOIN experiments e ON "
                                             "e.id = r.experiment_id WHERE %1")
                                  .arg(where.sql),
                              where.bindings);
  return count.next() ? count.value(0).toLongLong() : 0;
}

StoreSummary read_store_summary(const QSqlDatabase& db) {
  StoreSummary summary;
  QSqlQuery count = run_query(db, QStringLiteral("SELECT count(*) FROM runs"));
  if (count.next()) summary.run_count = count.value(0).toLongLong();
  QSqlQuery experiments =
      run_query(db, QStringLiteral("SELECT id, name FROM experiments ORDER BY name"));
  while (experiments.next())
    summary.experiments.append(
        {experiments.value(0).toLongLong(), experiments.value(1).toString()});
  QSqlQuery keys = run_query(db, QStringLiteral("SELECT DISTINCT key FROM params ORDER BY key"));
  while (keys.next()) summary.param_keys << keys.value(0).toString();
  if (!has_table(db, QStringLiteral("eval_results"))) return summary;

  // DISTINCT over the (dataset, metric) index skips ahead instead of reading every result; the
  // splits and first run of a dataset are a range of that index.
  QSqlQuery pairs =
      run_query(db, QStringLiteral("SELECT DISTINCT dataset, metric FROM eval_results"));
  QMap<QString, QString> a_metric_of;  // dataset -> one of its metrics
  QSet<QString> metrics, splits;
  while (pairs.next()) {
    a_metric_of.insert(pairs.value(0).toString(), pairs.value(1).toString());
    metrics.insert(pairs.value(1).toString());
  }
  QMap<QPair<QString, QString>, qlonglong> first_run;  // (dataset, split) -> its first run
  for (auto it = a_metric_of.begin(); it != a_metric_of.end(); ++it) {
    QSqlQuery rows = run_query(db,
                               QStringLiteral("SELECT split, MIN(run_id) FROM eval_results "
                                              "WHERE dataset = ? AND metric = ? GROUP BY split"),
                               {it.key(), it.value()});
    while (rows.next()) {
      first_run.insert({it.key(), rows.value(0).toString()}, rows.value(1).toLongLong());
      splits.insert(rows.value(0).toString());
    }
  }
  QList<QPair<qlonglong, QPair<QString, QString>>> ordered;
  for (auto it = first_run.begin(); it != first_run.end(); ++it)
    ordered.append({it.value(), it.key()});
  std::sort(ordered.begin(), ordered.end());
  for (const auto& entry : ordered) {
    const QString& dataset = entry.second.first;
    const QString& split = entry.second.second;
    summary.benchmarks.append(
        {dataset, split,
         splits.size() > 1 ? QStringLiteral("%1 (%2)").arg(dataset, split) : dataset});
  }
  summary.metrics = QStringList(metrics.begin(), metrics.end());
  std::sort(summary.metrics.begin(), summary.metrics.end());
  return summary;
}

RunsTableModel::RunsTableModel(QObject* parent) : QSqlQueryModel(parent) {}

void RunsTableModel::set_columns(const QStringList& param_keys, const QList<Benchmark>& benchmarks,
                                 const QString& metric) {
  param_keys_ = param_keys;
  benchmarks_ = benchmarks;
  metric_ = metric;
}

QString RunsTableModel::set_filter(const RunFilter& filter) {
  filter_ = filter;
  return run_filter_clause(filter).error;
}

void RunsTableModel::build_columns() {
  columns_ = {
      {ColumnKind::Id, QStringLiteral("id"), QStringLiteral("r.id"), {}, tr("Run id")},
      {ColumnKind::Text, QStringLiteral("experiment"), QStringLiteral("e.name"), {}, QString()},
      {ColumnKind::Text, QStringLiteral("name"), QStringLiteral("r.name"), {}, QString()},
      {ColumnKind::Text, QStringLiteral("kind"), QStringLiteral("r.kind"), {}, QString()},
      {ColumnKind::Text, QStringLiteral("status"), QStringLiteral("r.status"), {}, QString()}};
  for (const QString& key : param_keys_)
    columns_.append({ColumnKind::Param,
                     key,
                     QStringLiteral("(SELECT value FROM params WHERE run_id = r.id AND key = ?)"),
                     {key},
                     tr("Run param %1").arg(key)});
  if (metric_.isEmpty()) return;
  for (const Benchmark& benchmark : benchmarks_)
    columns_.append(
        {ColumnKind::Metric,
         benchmark.label,
         QStringLiteral("(SELECT value FROM eval_results WHERE run_id = r.id AND "
                        "dataset = ? AND split = ? AND metric = ? AND "
                        "group_kind = 'all' AND group_value = '')"),
         {benchmark.dataset, benchmark.split, metric_},
         tr("%1 on %2 (split %3, whole set)").arg(metric_, benchmark.dataset, benchmark.split)});
}

bool RunsTableModel::reload(const QString& db_path) {
  db_path_ = db_path;
  last_error_.clear();
  if (db_path.isEmpty()) {
    clear();
    columns_.clear();
    return true;
  }
  const QString sort_label =
      sort_column_ < columns_.size() ? columns_[sort_column_].label : QStringLiteral("id");
  build_columns();
  sort_column_ = std::max(0, column_of(sort_label));

  QStringList select;
  QVariantList bindings;
  for (int i = 0; i < columns_.size(); ++i) {
    select << QStringLiteral("%1 AS c%2").arg(columns_[i].sql).arg(i);
    bindings << columns_[i].bindings;
  }
  const FilterClause where = run_filter_clause(filter_);
  bindings << where.bindings;
  const QString column = QStringLiteral("c%1").arg(sort_column_);
  const QString direction =
      sort_order_ == Qt::AscendingOrder ? QStringLiteral("ASC") : QStringLiteral("DESC");
  QString order;
  switch (columns_[sort_column_].kind) {
    case ColumnKind::Id:
      order = QStringLiteral("c0 %1").arg(direction);
      break;
    case ColumnKind::Text:
      order = QStringLiteral("%1 COLLATE NOCASE %2, c0").arg(column, direction);
      break;
    case ColumnKind::Param:  // numbers by value, then text; runs without the param last
      order =
          QStringLiteral("%1 IS NULL, CAST(%1 AS NUMERIC) %2, %1 %2, c0").arg(column, direction);
      break;
    case ColumnKind::Metric:  // runs without a result last, either way
      order = QStringLiteral("%1 IS NULL, %1 %2, c0").arg(column, direction);
      break;
  }
  const QString sql = QStringLiteral(
                          "SELECT %1 FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                          "WHERE %2 ORDER BY %3")
                          .arg(select.join(QStringLiteral(", ")), where.sql, order);
  try {
    setQuery(scrollable_query(store_connection(db_path), sql, bindings));
    if (lastError().isValid())
      throw StoreError(QStringLiteral("%1: %2").arg(db_path, lastError().text()).toStdString());
  } catch (const StoreError& e) {
    last_error_ = QString::fromUtf8(e.what());
    clear();
    columns_.clear();
    emit query_failed(last_error_);
    return false;
  }
  return true;
}

void RunsTableModel::fetch_all() {
  while (canFetchMore()) fetchMore();
}

void RunsTableModel::sort(int column, Qt::SortOrder order) {
  if (column < 0 || column >= columns_.size()) return;
  // The header repeats the current order after each reload: nothing to do then.
  if (column == sort_column_ && order == sort_order_ && query().isActive()) return;
  sort_column_ = column;
  sort_order_ = order;
  if (!db_path_.isEmpty()) reload(db_path_);
}

QVariant RunsTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.column() >= columns_.size())
    return QSqlQueryModel::data(index, role);
  const Column& column = columns_[index.column()];
  const bool number = column.kind == ColumnKind::Metric || column.kind == ColumnKind::Id;
  switch (role) {
    case Qt::DisplayRole: {
      const QVariant value = QSqlQueryModel::data(index, Qt::DisplayRole);
      if (column.kind != ColumnKind::Metric) return value;
      return value.isNull() ? QString() : number_text(value.toDouble());
    }
    case Qt::EditRole:
      return QSqlQueryModel::data(index, Qt::DisplayRole);
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::AlignVCenter | (number ? Qt::AlignRight : Qt::AlignLeft));
    case Qt::ToolTipRole: {
      const QVariant value = QSqlQueryModel::data(index, Qt::DisplayRole);
      if (column.kind == ColumnKind::Metric)
        return value.isNull() ? QVariant() : QString::number(value.toDouble(), 'g', 12);
      if (index.column() == StatusColumn && value.toString() == QLatin1String("RUNNING"))
        return tr("Still running: its results may be incomplete");
      return value;
    }
    case Qt::ForegroundRole: {
      if (index.column() != StatusColumn) return QVariant();
      const QString status = QSqlQueryModel::data(index, Qt::DisplayRole).toString();
      if (status == QLatin1String("RUNNING")) return QBrush(QColor(0x1f, 0x6f, 0xc5));
      if (status == QLatin1String("FAILED")) return QBrush(QColor(0xc0, 0x39, 0x2b));
      if (status == QLatin1String("KILLED") || status == QLatin1String("SCHEDULED"))
        return QBrush(QColor(0x80, 0x80, 0x80));
      return QVariant();
    }
    default:
      return QSqlQueryModel::data(index, role);
  }
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Horizontal && section >= 0 && section < columns_.size()) {
    if (role == Qt::DisplayRole) return columns_[section].label;
    if (role == Qt::ToolTipRole && !columns_[section].tooltip.isEmpty())
      return columns_[section].tooltip;
  }
  return QSqlQueryModel::headerData(section, orientation, role);
}

qlonglong RunsTableModel::run_id(int row) const {
  return QSqlQueryModel::data(index(row, IdColumn), Qt::DisplayRole).toLongLong();
}

int RunsTableModel::row_of(qlonglong id) const {
  for (int row = 0; row < rowCount(); ++row)
    if (run_id(row) == id) return row;
  return -1;
}

RunsTableModel::ColumnKind RunsTableModel::column_kind(int column) const {
  return column >= 0 && column < columns_.size() ? columns_[column].kind : ColumnKind::Text;
}

int RunsTableModel::column_of(const QString& label) const {
  for (int i = 0; i < columns_.size(); ++i)
    if (columns_[i].label == label) return i;
  return -1;
}

ConfigDiff compute_config_diff(const QSqlDatabase& db, const QList<qlonglong>& run_ids) {
  ConfigDiff diff;
  QVector<QMap<QString, QString>> configs;
  QSet<QString> keys;
  for (qlonglong id : run_ids) {
    QSqlQuery run =
        run_query(db, QStringLiteral("SELECT name, config FROM runs WHERE id = ?"), {id});
    if (!run.next()) continue;
    QMap<QString, QString> config;
    flatten_json(QJsonDocument::fromJson(run.value(1).toString().toUtf8()).object(), QString(),
                 config);
    // params hold the same keys as the config, as the core wrote them: they win.
    QSqlQuery params =
        run_query(db, QStringLiteral("SELECT key, value FROM params WHERE run_id = ?"), {id});
    while (params.next()) config[params.value(0).toString()] = present(params.value(1).toString());
    for (auto it = config.begin(); it != config.end(); ++it) keys.insert(it.key());
    diff.run_ids << id;
    diff.run_labels << QStringLiteral("#%1 %2").arg(id).arg(run.value(0).toString());
    configs << config;
  }
  diff.keys = QStringList(keys.begin(), keys.end());
  std::sort(diff.keys.begin(), diff.keys.end());
  for (const QString& key : diff.keys) {
    QStringList values;
    bool differs = false;
    for (const auto& config : configs) {
      values << config.value(key);  // a null QString when the run lacks the key
      const QString& first = values.first();
      const QString& last = values.last();
      differs |= first.isNull() != last.isNull() || first != last;
    }
    diff.values << values;
    diff.differs << differs;
  }
  return diff;
}

void ConfigDiffModel::set_diff(ConfigDiff diff) {
  beginResetModel();
  diff_ = std::move(diff);
  update_rows();
  endResetModel();
}

void ConfigDiffModel::set_show_all(bool show_all) {
  beginResetModel();
  show_all_ = show_all;
  update_rows();
  endResetModel();
}

void ConfigDiffModel::update_rows() {
  rows_.clear();
  for (int i = 0; i < diff_.keys.size(); ++i)
    if (show_all_ || diff_.differs[i]) rows_ << i;
}

QStringList ConfigDiffModel::shown_keys() const {
  QStringList keys;
  for (int i : rows_) keys << diff_.keys[i];
  return keys;
}

int ConfigDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : rows_.size();
}

int ConfigDiffModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() || diff_.run_ids.isEmpty() ? 0 : diff_.run_ids.size() + 1;
}

QVariant ConfigDiffModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return QVariant();
  const int key = rows_[index.row()];
  const bool differs = diff_.differs[key];
  if (index.column() == 0) {
    if (role == Qt::DisplayRole) return diff_.keys[key];
    if (role == Qt::FontRole && differs) {
      QFont font;
      font.setBold(true);
      return font;
    }
    return QVariant();
  }
  const QString& value = diff_.values[key][index.column() - 1];
  switch (role) {
    case Qt::DisplayRole:
      return value.isNull() ? QStringLiteral("—") : value;
    case Qt::ToolTipRole:
      return value.isNull() ? tr("Not set for this run") : value;
    case Qt::BackgroundRole:
      return differs ? QBrush(QColor(0xff, 0xe0, 0x8a)) : QVariant();
    case Qt::ForegroundRole:
      // Dark text on the highlight whatever the palette; grey for a missing key.
      if (value.isNull()) return QBrush(QColor(0x80, 0x80, 0x80));
      return differs ? QBrush(Qt::black) : QVariant();
    default:
      return QVariant();
  }
}

QVariant ConfigDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  if (section == 0) return QStringLiteral("key");
  return section - 1 < diff_.run_labels.size() ? diff_.run_labels[section - 1] : QVariant();
}

QStringList export_mteb_results(const QSqlDatabase& db, const QList<qlonglong>& run_ids,
                                const QString& dir, const QString& main_metric) {
  QStringList written;
  for (qlonglong id : run_ids) {
    QSqlQuery run = run_query(
        db,
        QStringLiteral("SELECT r.name, e.name, "
                       "(julianday(r.ended_at) - julianday(r.started_at)) * 86400.0 "
                       "FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE r.id = ?"),
        {id});
    if (!run.next()) continue;
    const QString name = run.value(0).toString();
    QJsonObject params;
    QSqlQuery param_rows = run_query(
        db, QStringLiteral("SELECT key, value FROM params WHERE run_id = ? ORDER BY key"), {id});
    while (param_rows.next())
      params[param_rows.value(0).toString()] = param_rows.value(1).toString();
    const QJsonObject lmk_run{{QStringLiteral("id"), id},
                              {QStringLiteral("name"), name},
                              {QStringLiteral("experiment"), run.value(1).toString()},
                              {QStringLiteral("params"), params}};

    // dataset -> split -> metric -> value
    QMap<QString, QMap<QString, QJsonObject>> scores;
    QSqlQuery results = run_query(db,
                                  QStringLiteral("SELECT dataset, split, metric, value FROM "
                                                 "eval_results WHERE run_id = ? AND "
                                                 "group_kind = 'all' ORDER BY metric"),
                                  {id});
    while (results.next()) {
      const QVariant value = results.value(3);
      scores[results.value(0).toString()][results.value(1).toString()]
            [results.value(2).toString()] =
                value.isNull() ? QJsonValue() : QJsonValue(value.toDouble());
    }
    if (scores.isEmpty()) continue;
    const QString folder =
        QDir(dir).filePath(QStringLiteral("%1_%2").arg(id).arg(safe_file_name(name)));
    if (!QDir().mkpath(folder))
      throw std::runtime_error(QStringLiteral("cannot create %1").arg(folder).toStdString());
    for (auto dataset = scores.begin(); dataset != scores.end(); ++dataset) {
      QJsonObject file{{QStringLiteral("mteb_dataset_name"), dataset.key()},
                       {QStringLiteral("dataset_revision"), QJsonValue()},
                       {QStringLiteral("lmk_run"), lmk_run}};
      for (auto split = dataset->begin(); split != dataset->end(); ++split) {
        QJsonObject metrics = split.value();
        if (metrics.contains(main_metric))
          metrics[QStringLiteral("main_score")] = metrics.value(main_metric);
        if (!run.value(2).isNull())
          metrics[QStringLiteral("evaluation_time")] = run.value(2).toDouble();
        file[split.key()] = metrics;
      }
      const QString path = QDir(folder).filePath(safe_file_name(dataset.key()) + ".json");
      write_file(path, QJsonDocument(file).toJson(QJsonDocument::Indented));
      written << path;
    }
  }
  return written;
}

}  // namespace lmk::widgets
