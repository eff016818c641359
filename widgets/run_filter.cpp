// The filter bar's language (widgets/run_filter.h): its terms read and turned into SQL.
#include "widgets/run_filter.h"

#include <QHash>
#include <QSqlQuery>
#include <QStringList>

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

}  // namespace lmk::widgets
