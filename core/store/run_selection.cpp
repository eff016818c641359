#include "core/store/run_selection.h"

#include <cctype>
#include <cstdlib>
#include <map>

namespace lmk {

namespace {

std::string ascii_lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string ascii_upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// The text's terms: whitespace separates them except inside double quotes, which are dropped
// (`model="a b"` is one term).
std::vector<std::string> split_terms(const std::string& text) {
  std::vector<std::string> terms;
  std::string current;
  bool quoted = false, pending = false;
  for (const char c : text) {
    if (c == '"') {
      quoted = !quoted;
      pending = true;
    } else if (std::isspace(static_cast<unsigned char>(c)) && !quoted) {
      if (pending) terms.push_back(current);
      current.clear();
      pending = false;
    } else {
      current += c;
      pending = true;
    }
  }
  if (pending) terms.push_back(current);
  return terms;
}

// A GLOB pattern in which only `*` is a wildcard (`?` and `[` stand for themselves).
std::string glob_pattern(const std::string& value) {
  std::string out;
  for (const char c : value) out += c == '[' ? "[[]" : c == '?' ? "[?]" : std::string(1, c);
  return out;
}

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

struct Term {
  std::string key, op, value;
};

// Splits `key<op>value` at its first operator; op is empty for free text.
Term parse_term(const std::string& term) {
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    std::string op;
    const bool equals_next = i + 1 < term.size() && term[i + 1] == '=';
    if (c == '!' && equals_next)
      op = "!=";
    else if ((c == '<' || c == '>') && equals_next)
      op = std::string(1, c) + '=';
    else if (c == '=' || c == '<' || c == '>')
      op = std::string(1, c);
    if (!op.empty()) return {trimmed(term.substr(0, i)), op, term.substr(i + op.size())};
  }
  return {"", "", term};
}

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// The condition `expression <op> value` and its binding (GLOB when the value holds a `*`); ""
// with `error` set when a comparison is not given a number.
std::string value_condition(const std::string& expression, const Term& term,
                            std::vector<SqlValue>& bindings, std::string& error) {
  if (term.op == "=" || term.op == "!=") {
    const bool glob = term.value.find('*') != std::string::npos;
    bindings.emplace_back(glob ? glob_pattern(term.value) : term.value);
    return expression + (glob ? " GLOB ?" : " = ?");
  }
  double bound = 0;
  if (!parse_number(term.value, bound)) {
    error = "'" + term.key + term.op + term.value + "': " + term.op + " needs a number";
    return "";
  }
  bindings.emplace_back(bound);
  return "CAST(" + expression + " AS REAL) " + term.op + " ?";
}

// The SQL of one `key<op>value` term.
std::string term_condition(const Term& term, std::vector<SqlValue>& bindings, std::string& error) {
  static const std::map<std::string, std::string> run_fields(run_field_sql().begin(),
                                                             run_field_sql().end());
  const bool negated = term.op == "!=";
  const std::string key = ascii_lower(term.key);
  // The long table's benchmark and split columns: the run has a result on that dataset / split.
  if (key == "benchmark" || key == "split") {
    const std::string condition =
        value_condition(key == "benchmark" ? "x.dataset" : "x.split", term, bindings, error);
    if (condition.empty()) return "";
    return std::string(negated ? "NOT EXISTS" : "EXISTS") +
           " (SELECT 1 FROM eval_results x WHERE x.run_id = r.id AND " + condition + ")";
  }
  const auto field = run_fields.find(key);
  if (field != run_fields.end()) {
    Term typed = term;
    if (key == "status") typed.value = ascii_upper(typed.value);
    if (key == "id" && term.value.find('*') == std::string::npos && (term.op == "=" || negated)) {
      char* end = nullptr;
      const long long id = std::strtoll(term.value.c_str(), &end, 10);
      if (term.value.empty() || end != term.value.c_str() + term.value.size()) {
        error = "'" + term.key + term.op + term.value + "': id needs a number";
        return "";
      }
      bindings.emplace_back(static_cast<int64_t>(id));
      return negated ? "r.id <> ?" : "r.id = ?";
    }
    const std::string condition = value_condition(field->second, typed, bindings, error);
    if (condition.empty()) return "";
    return negated ? "NOT (" + condition + ")" : condition;
  }
  // A run param; a `*` in the key matches several keys (`*pooling` is pooling or train.pooling).
  std::vector<SqlValue> own;
  const bool key_glob = term.key.find('*') != std::string::npos;
  own.emplace_back(key_glob ? glob_pattern(term.key) : term.key);
  const std::string condition = value_condition("p.value", term, own, error);
  if (condition.empty()) return "";
  bindings.insert(bindings.end(), own.begin(), own.end());
  return std::string(negated ? "NOT EXISTS" : "EXISTS") +
         " (SELECT 1 FROM params p WHERE p.run_id = r.id AND p.key " +
         (key_glob ? "GLOB ?" : "= ?") + " AND " + condition + ")";
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& run_field_sql() {
  static const std::vector<std::pair<std::string, std::string>> fields = {
      {"id", "r.id"},
      {"experiment", "e.name"},
      {"name", "r.name"},
      {"kind", "r.kind"},
      {"status", "r.status"},
      {"started", "r.started_at"},
      {"duration", "(julianday(r.ended_at) - julianday(r.started_at)) * 86400.0"},
      {"host", "r.host"},
      {"device", "r.device"},
      {"error", "r.error_text"}};
  return fields;
}

SqlCondition run_selection_condition(const RunSelection& selection) {
  SqlCondition out;
  std::vector<std::string> conditions;
  for (const std::string& text : split_terms(selection.text)) {
    const Term term = parse_term(text);
    if (term.op.empty()) {
      conditions.push_back("(instr(lower(r.name), ?) > 0 OR instr(lower(e.name), ?) > 0)");
      out.bindings.emplace_back(ascii_lower(term.value));
      out.bindings.emplace_back(ascii_lower(term.value));
      continue;
    }
    if (term.key.empty()) {
      out.error = "'" + text + "': no key before " + term.op;
      continue;
    }
    std::string error;
    const std::string condition = term_condition(term, out.bindings, error);
    if (condition.empty())
      out.error = error;
    else
      conditions.push_back(condition);
  }
  if (!selection.status.empty()) {
    conditions.push_back("r.status = ?");
    out.bindings.emplace_back(selection.status);
  }
  if (selection.experiment_id >= 0) {
    conditions.push_back("r.experiment_id = ?");
    out.bindings.emplace_back(selection.experiment_id);
  }
  for (size_t i = 0; i < conditions.size(); ++i) out.sql += (i ? " AND " : "") + conditions[i];
  if (out.sql.empty()) out.sql = "1";
  return out;
}

}  // namespace lmk
