#include "core/data/jsonl.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/tokenize/tokenizer.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"

namespace lmk {
namespace {

constexpr size_t kChunk = size_t{1} << 16;
constexpr size_t kMaxLine = size_t{1} << 28;
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string zlib_message(const z_stream& zs, int rc) {
  return zs.msg ? zs.msg : "zlib error " + std::to_string(rc);
}

}  // namespace

bool is_blank_line(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

std::ifstream open_input(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw input_error(path, "is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, "cannot open file");
  return in;
}

// ---------------------------------------------------------------------------------------------
// LineReader

struct LineReader::Impl {
  std::istream& in;
  std::string name;
  std::vector<char> raw = std::vector<char>(kChunk);
  // Decoded bytes; [start, size) has not been returned yet, [start, scanned) holds no '\n'.
  std::string buffer;
  size_t start = 0, scanned = 0, line = 0;
  bool started = false, gzip = false, exhausted = false;
  z_stream zs{};
  bool inflating = false, member_done = false;

  Impl(std::istream& stream, std::string input_name) : in(stream), name(std::move(input_name)) {}
  ~Impl() {
    if (inflating) inflateEnd(&zs);
  }

  size_t read_raw() {
    in.read(raw.data(), static_cast<std::streamsize>(raw.size()));
    if (in.bad()) throw input_error(name, "read error");
    return static_cast<size_t>(in.gcount());
  }

  // Appends more decoded bytes to buffer; false when the input is used up.
  bool fill() {
    if (exhausted) return false;
    if (!started) {
      started = true;
      const size_t n = read_raw();
      gzip = n >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
             static_cast<unsigned char>(raw[1]) == 0x8b;
      if (gzip) {
        // 15 + 16: a gzip wrapper (not zlib or raw deflate) with the largest window.
        if (inflateInit2(&zs, 15 + 16) != Z_OK) throw input_error(name, "cannot start gzip");
        inflating = true;
        zs.next_in = reinterpret_cast<Bytef*>(raw.data());
        zs.avail_in = static_cast<uInt>(n);
        return inflate_more();
      }
      return append_plain(n);
    }
    return gzip ? inflate_more() : append_plain(read_raw());
  }

  bool append_plain(size_t n) {
    if (n == 0) {
      exhausted = true;
      return false;
    }
    buffer.append(raw.data(), n);
    return true;
  }

  bool inflate_more() {
    const size_t before = buffer.size();
    while (buffer.size() == before) {
      if (zs.avail_in == 0) {
        const size_t n = read_raw();
        if (n == 0) {
          if (!member_done) throw input_error(name, "truncated gzip data");
          exhausted = true;
          return false;
        }
        zs.next_in = reinterpret_cast<Bytef*>(raw.data());
        zs.avail_in = static_cast<uInt>(n);
      }
      if (member_done) {  // another gzip member follows (as `cat a.gz b.gz` makes)
        inflateReset(&zs);
        member_done = false;
      }
      const size_t old_size = buffer.size();
      buffer.resize(old_size + kChunk);
      zs.next_out = reinterpret_cast<Bytef*>(&buffer[old_size]);
      zs.avail_out = static_cast<uInt>(kChunk);
      const int rc = inflate(&zs, Z_NO_FLUSH);
      buffer.resize(old_size + kChunk - zs.avail_out);
      if (rc == Z_STREAM_END) {
        member_done = true;
      } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && zs.avail_in == 0)) {
        throw input_error(name, "corrupt gzip data: " + zlib_message(zs, rc));
      }
    }
    return true;
  }

  bool next(std::string& out) {
    for (;;) {
      const size_t newline = buffer.find('\n', scanned);
      if (newline != std::string::npos) {
        out.assign(buffer, start, newline - start);
        start = scanned = newline + 1;
        break;
      }
      scanned = buffer.size();
      if (scanned - start > kMaxLine) {
        throw input_error(name + ":" + std::to_string(line + 1), "line longer than 256 MiB");
      }
      buffer.erase(0, start);
      scanned -= start;
      start = 0;
      if (!fill()) {
        if (buffer.empty()) return false;
        out.swap(buffer);
        buffer.clear();
        scanned = 0;
        break;
      }
    }
    ++line;
    if (!out.empty() && out.back() == '\r') out.pop_back();
    return true;
  }
};

LineReader::LineReader(NamedInput input)
    : impl_(std::make_unique<Impl>(input.in, std::move(input.name))) {}
LineReader::~LineReader() = default;

bool LineReader::next(std::string& line) {
  return impl_->next(line);
}
size_t LineReader::line_number() const {
  return impl_->line;
}
std::string LineReader::where() const {
  return impl_->name + ":" + std::to_string(impl_->line);
}

// ---------------------------------------------------------------------------------------------
// JSONL

bool JsonlReader::next(nlohmann::json& value, std::string& where) {
  while (reader_.next(line_)) {
    if (is_blank_line(line_)) continue;
    where = reader_.where();
    require_valid_utf8(line_, where);
    value = json_util::parse(line_, where);
    return true;
  }
  return false;
}

void for_each_jsonl(NamedInput input, const JsonVisitor& fn) {
  JsonlReader reader(std::move(input));
  nlohmann::json value;
  std::string where;
  while (reader.next(value, where))
    if (!fn(value, where)) return;
}

void for_each_jsonl(const std::string& path, const JsonVisitor& fn) {
  std::ifstream in = open_input(path);
  for_each_jsonl(NamedInput{in, path}, fn);
}

struct JsonlWriter::Impl {
  std::string path;
  AtomicFile file;
  bool gzip;
  z_stream zs{};
  bool deflating = false;
  std::string pending, compressed;
  size_t lines = 0;

  explicit Impl(const std::string& p) : path(p), file(p), gzip(ends_with(p, ".gz")) {
    if (gzip) {
      if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
          Z_OK) {
        throw input_error(path, "cannot start gzip");
      }
      deflating = true;
      compressed.resize(kChunk);
    }
  }
  ~Impl() {
    if (deflating) deflateEnd(&zs);
  }

  // Writes the pending lines out; Z_FINISH also ends the gzip stream.
  void flush(int mode) {
    if (!gzip) {
      file.write(pending);
      pending.clear();
      return;
    }
    zs.next_in = reinterpret_cast<Bytef*>(pending.data());
    zs.avail_in = static_cast<uInt>(pending.size());
    int rc = Z_OK;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(compressed.data());
      zs.avail_out = static_cast<uInt>(compressed.size());
      rc = deflate(&zs, mode);
      if (rc == Z_STREAM_ERROR) throw input_error(path, "gzip: " + zlib_message(zs, rc));
      file.write(std::string_view(compressed.data(), compressed.size() - zs.avail_out));
    } while (zs.avail_out == 0 || (mode == Z_FINISH && rc != Z_STREAM_END));
    pending.clear();
  }
};

JsonlWriter::JsonlWriter(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
JsonlWriter::~JsonlWriter() = default;

void JsonlWriter::write(const nlohmann::json& value) {
  try {
    impl_->pending += value.dump();
  } catch (const nlohmann::json::exception& e) {
    throw input_error(impl_->path + ":" + std::to_string(impl_->lines + 1),
                      std::string("cannot write: ") + e.what());
  }
  impl_->pending += '\n';
  ++impl_->lines;
  if (impl_->pending.size() >= (size_t{1} << 20)) impl_->flush(Z_NO_FLUSH);
}

void JsonlWriter::commit() {
  impl_->flush(Z_FINISH);
  impl_->file.commit();
}

size_t JsonlWriter::lines() const {
  return impl_->lines;
}

}  // namespace lmk
