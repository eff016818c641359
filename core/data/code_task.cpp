#include "core/data/code_task.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/data/generators.h"
#include "core/util/error.h"
#include "core/util/file.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

// One logical line of Python: a statement's text, which brackets, strings and backslashes may
// carry over several physical lines.
struct LogicalLine {
  size_t begin = 0, end = 0;  // byte range in the text (without the ending newline)
  size_t line = 0;            // 1-based physical line it starts on
  size_t indent = 0;          // columns of its first line (tabs to multiples of 8)
  bool blank = false;         // only whitespace and a comment
};

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Whether text[at] (a quote) opens a string whose prefix (r, b, u, f and their pairs) is
// raw; `prefix` receives the prefix's letters.
bool string_prefix(std::string_view text, size_t at, std::string* prefix) {
  size_t start = at;
  while (start > 0 && identifier_char(text[start - 1])) --start;
  std::string letters(text.substr(start, at - start));
  std::transform(letters.begin(), letters.end(), letters.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  static const std::set<std::string> kPrefixes = {"", "r", "u", "b", "f", "br", "rb", "fr", "rf"};
  if (!kPrefixes.count(letters)) letters.clear();  // a name before the quote, not a prefix
  if (prefix) *prefix = letters;
  return letters.find('r') != std::string::npos;
}

// The offset just past the string literal whose opening quote is at `at` (text.size() when it
// does not end); newlines inside it are counted into `lines`.
size_t string_end(std::string_view text, size_t at, size_t* lines) {
  const char quote = text[at];
  const bool triple = text.substr(at, 3) == std::string(3, quote);
  size_t k = at + (triple ? 3 : 1);
  while (k < text.size()) {
    const char c = text[k];
    if (c == '\\') {  // escapes the next character (a raw string keeps the backslash, too)
      if (k + 1 < text.size() && text[k + 1] == '\n' && lines) ++*lines;
      k += 2;
      continue;
    }
    if (triple) {
      if (text.substr(k, 3) == std::string(3, quote)) return k + 3;
    } else {
      if (c == quote) return k + 1;
      if (c == '\n') return k;  // an unterminated string ends with its line
    }
    if (c == '\n' && lines) ++*lines;
    ++k;
  }
  return text.size();
}

std::vector<LogicalLine> logical_lines(std::string_view text) {
  std::vector<LogicalLine> lines;
  size_t i = 0, line = 1;
  while (i < text.size()) {
    LogicalLine logical;
    logical.begin = i;
    logical.line = line;
    size_t k = i;
    while (k < text.size() &&
           (text[k] == ' ' || text[k] == '\t' || text[k] == '\f' || text[k] == '\r')) {
      logical.indent = text[k] == '\t' ? (logical.indent / 8 + 1) * 8 : logical.indent + 1;
      ++k;
    }
    if (k >= text.size() || text[k] == '\n' || text[k] == '#') {
      logical.blank = true;
      while (k < text.size() && text[k] != '\n') ++k;
      logical.end = k;
      lines.push_back(logical);
      i = k + 1;
      ++line;
      continue;
    }
    int depth = 0;
    bool ended = false;
    while (k < text.size() && !ended) {
      const char c = text[k];
      if (c == '#') {
        while (k < text.size() && text[k] != '\n') ++k;
        continue;
      }
      if (c == '"' || c == '\'') {
        k = string_end(text, k, &line);
        continue;
      }
      if (c == '\\' && k + 1 < text.size() && text[k + 1] == '\n') {
        k += 2;
        ++line;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      if (c == '\n') {
        ++line;
        if (depth == 0) {
          logical.end = k;
          ended = true;
        }
      }
      ++k;
    }
    if (!ended) logical.end = text.size();
    lines.push_back(logical);
    i = k;
  }
  return lines;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

// The name after "def " / "class " in a header ("" when there is none).
std::string header_name(std::string_view statement, std::string_view keyword) {
  statement.remove_prefix(keyword.size());
  statement = trimmed(statement);
  size_t n = 0;
  while (n < statement.size() && identifier_char(statement[n])) ++n;
  return std::string(statement.substr(0, n));
}

// The content of a docstring statement (a lone string literal, not bytes or an f-string), or
// nullopt when the statement is not one.
std::optional<std::string> docstring_of(std::string_view statement) {
  statement = trimmed(statement);
  size_t quote = 0;
  while (quote < statement.size() && statement[quote] != '"' && statement[quote] != '\'') {
    if (!identifier_char(statement[quote])) return std::nullopt;
    ++quote;
  }
  if (quote >= statement.size() || quote > 2) return std::nullopt;
  std::string prefix;
  string_prefix(statement, quote, &prefix);
  if (prefix.size() != quote || prefix.find('b') != std::string::npos ||
      prefix.find('f') != std::string::npos)
    return std::nullopt;
  const size_t end = string_end(statement, quote, nullptr);
  std::string_view rest = trimmed(statement.substr(std::min(end, statement.size())));
  if (!rest.empty() && rest.front() != '#') return std::nullopt;
  const bool triple = statement.substr(quote, 3) == std::string(3, statement[quote]);
  const size_t open = quote + (triple ? 3 : 1), close = end - (triple ? 3 : 1);
  if (end > statement.size() || close < open) return std::nullopt;
  return std::string(statement.substr(open, close - open));
}

// Lines [first, last) of the text (0-based physical lines), dedented by `indent` columns,
// leaving out lines [skip_first, skip_last).
std::string dedented_lines(const std::vector<std::string_view>& physical, size_t first, size_t last,
                           size_t indent, size_t skip_first, size_t skip_last) {
  std::string out;
  for (size_t l = first; l < last && l < physical.size(); ++l) {
    if (l >= skip_first && l < skip_last) continue;
    std::string_view line = physical[l];
    size_t column = 0, cut = 0;
    while (cut < line.size() && column < indent && (line[cut] == ' ' || line[cut] == '\t')) {
      column = line[cut] == '\t' ? (column / 8 + 1) * 8 : column + 1;
      ++cut;
    }
    out.append(line.substr(cut));
    out += '\n';
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace

std::vector<PythonFunction> python_functions(std::string_view text, const std::string& file) {
  std::vector<std::string_view> physical;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = text.find('\n', start);
    physical.push_back(
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  const std::vector<LogicalLine> lines = logical_lines(text);
  // The physical line after a logical line's last one (0-based).
  auto end_line = [&](const LogicalLine& l) {
    return l.line - 1 +
           static_cast<size_t>(std::count(text.begin() + static_cast<ptrdiff_t>(l.begin),
                                          text.begin() + static_cast<ptrdiff_t>(l.end), '\n')) +
           1;
  };
  std::vector<PythonFunction> functions;
  std::vector<std::pair<size_t, std::string>> scopes;  // (indent, name) of enclosing defs/classes
  size_t decorators = 0;  // first decorator line of the next header (+1; 0: none)
  for (size_t i = 0; i < lines.size(); ++i) {
    const LogicalLine& l = lines[i];
    if (l.blank) continue;
    while (!scopes.empty() && scopes.back().first >= l.indent) scopes.pop_back();
    const std::string_view statement = trimmed(text.substr(l.begin, l.end - l.begin));
    if (statement.rfind("@", 0) == 0) {
      if (decorators == 0) decorators = i + 1;
      continue;
    }
    const bool is_async = statement.rfind("async def ", 0) == 0;
    const bool is_def = is_async || statement.rfind("def ", 0) == 0;
    const bool is_class = statement.rfind("class ", 0) == 0;
    const size_t first = decorators > 0 ? lines[decorators - 1].line - 1 : l.line - 1;
    decorators = 0;
    if (!is_def && !is_class) continue;
    const std::string name =
        header_name(is_async ? statement.substr(6) : statement, is_class ? "class " : "def ");
    if (name.empty()) continue;
    std::string qualified;
    for (const auto& [indent, scope] : scopes) qualified += scope + ".";
    qualified += name;
    scopes.emplace_back(l.indent, name);
    if (!is_def) continue;
    // The block: the logical lines indented deeper than the header.
    size_t body_first = i + 1;
    while (body_first < lines.size() && lines[body_first].blank) ++body_first;
    if (body_first >= lines.size() || lines[body_first].indent <= l.indent) continue;  // one line
    size_t body_last = body_first;
    for (size_t j = body_first; j < lines.size(); ++j) {
      if (lines[j].blank) continue;
      if (lines[j].indent <= l.indent) break;
      body_last = j;
    }
    PythonFunction function;
    function.file = file;
    function.qualified_name = qualified;
    function.line = first + 1;
    size_t skip_first = 0, skip_last = 0;
    const LogicalLine& statement_one = lines[body_first];
    if (auto doc = docstring_of(
            text.substr(statement_one.begin, statement_one.end - statement_one.begin))) {
      function.docstring = *doc;
      skip_first = statement_one.line - 1;
      skip_last = end_line(statement_one);
    }
    function.source = dedented_lines(physical, first, end_line(lines[body_last]), l.indent,
                                     skip_first, skip_last);
    functions.push_back(std::move(function));
  }
  return functions;
}

std::string docstring_summary(const std::string& docstring) {
  std::string summary;
  bool space = false;
  size_t newlines = 0;
  for (const char c : docstring) {
    if (c == '\n') {
      if (++newlines >= 2 && !summary.empty()) break;  // a blank line ends the paragraph
      space = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      space = true;
      continue;
    }
    newlines = 0;
    if (space && !summary.empty()) summary += ' ';
    space = false;
    summary += c;
  }
  return summary;
}

std::vector<PythonFunction> read_python_functions(const std::string& dir, size_t limit_files) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw input_error(dir,
                      "no such folder of Python sources (Debian's Python 3.11 standard library, "
                      "/usr/lib/python3.11, is in libpython3.11-minimal and "
                      "libpython3.11-stdlib: apt-get install libpython3.11-stdlib)");
  static const std::set<std::string> kSkipped = {"test",          "tests",         "idle_test",
                                                 "site-packages", "dist-packages", "__pycache__"};
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_directory() && kSkipped.count(it->path().filename().string())) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".py") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  keep_spread(files, limit_files);
  if (files.empty()) throw input_error(dir, "no .py files");
  std::vector<PythonFunction> functions;
  for (const fs::path& path : files) {
    const std::string relative = fs::relative(path, dir).string();
    for (PythonFunction& f : python_functions(read_file(path.string()), relative))
      functions.push_back(std::move(f));
  }
  return functions;
}

RetrievalSplit make_code_task(const std::vector<PythonFunction>& functions,
                              const CodeTaskOptions& options) {
  RetrievalSplit task;
  std::map<std::string, int> uses;  // an id used again (a redefined function) gets #2, #3, ...
  for (const PythonFunction& f : functions) {
    const size_t lines =
        static_cast<size_t>(std::count(f.source.begin(), f.source.end(), '\n')) + 1;
    if (lines < options.min_source_lines) continue;
    const std::string split = split_of_document(f.file, options.seed);
    if (std::find(options.splits.begin(), options.splits.end(), split) == options.splits.end())
      continue;
    std::string id = f.file + ":" + f.qualified_name;
    if (const int n = ++uses[id]; n > 1) id += "#" + std::to_string(n);
    task.corpus.push_back({id, "", f.source, {{"file", f.file}, {"line", f.line}}});
    const std::string summary = docstring_summary(f.docstring);
    if (summary.size() < options.min_summary_bytes) continue;
    Query query{id, summary, {{"file", f.file}, {"split", split}}};
    task.qrels[id][id] = 1;
    task.queries.push_back(std::move(query));
  }
  if (task.corpus.empty()) throw InputError("code task: no function with a body of enough lines");
  return task;
}

}  // namespace lmk
