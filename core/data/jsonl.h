#pragma once

// Streaming line input (plain or gzip, told apart by the gzip magic bytes) and JSONL files.
// Nothing here loads a whole file: readers hold one line at a time.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <fstream>
#include <functional>
#include <istream>
#include <memory>
#include <string>
#include <string_view>

namespace lmk {

// An input stream and the name its errors carry (a path, or any label for in-memory input).
struct NamedInput {
  std::istream& in;
  std::string name;
};

// Opens a file for reading in binary mode; throws InputError naming it when it cannot.
std::ifstream open_input(const std::string& path);

// Reads lines one at a time from plain or gzip input (gzip when the first bytes are 1f 8b,
// whatever the name; concatenated gzip members are read as one stream). Lines lose their
// "\n" or "\r\n". Corrupt or truncated gzip data, a read error or a line over 256 MiB is an
// InputError naming the input.
class LineReader {
 public:
  explicit LineReader(NamedInput input);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Reads the next line into `line`; false at the end of the input.
  bool next(std::string& line);
  // 1-based number of the line last read (0 before the first).
  size_t line_number() const;
  // "name:LINE" of the line last read.
  std::string where() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when a line holds nothing but whitespace; the readers skip such lines.
bool is_blank_line(std::string_view line);

// Pulls the JSON values of a JSONL input one at a time (blank lines skipped), with the checks
// of for_each_jsonl.
class JsonlReader {
 public:
  explicit JsonlReader(NamedInput input) : reader_(std::move(input)) {}
  // The next value and its "name:LINE"; false at the end of the input.
  bool next(nlohmann::json& value, std::string& where);

 private:
  LineReader reader_;
  std::string line_;
};

// Called with each JSON value (which it may move from) and "name:LINE"; returns false to stop.
using JsonVisitor = std::function<bool(nlohmann::json& value, const std::string& where)>;

// Calls fn for each non-blank line of a JSONL file (plain or gzip). A line that is not valid
// UTF-8, not one JSON value, or nested deeper than 100 levels is an InputError "path:LINE: ...".
void for_each_jsonl(const std::string& path, const JsonVisitor& fn);
void for_each_jsonl(NamedInput input, const JsonVisitor& fn);

// Writes a JSONL file atomically: lines go to a temporary file renamed over PATH by commit();
// destroyed without commit(), it leaves PATH untouched. Gzip-compressed when PATH ends in ".gz".
class JsonlWriter {
 public:
  explicit JsonlWriter(const std::string& path);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  // Appends one value as one line; a string that is not valid UTF-8 is an InputError.
  void write(const nlohmann::json& value);
  // Flushes, syncs and renames into place.
  void commit();
  // Lines written so far.
  size_t lines() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lmk
