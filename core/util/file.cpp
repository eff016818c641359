#include "core/util/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/util/error.h"

namespace lmk {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  temporary_ = path_ + ".tmp." + std::to_string(::getpid());
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw input_error(path_, std::string("cannot create: ") + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temporary_.c_str());
  }
}

void AtomicFile::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw input_error(path_, std::string("write failed: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0)
    throw input_error(path_, std::string("fsync failed: ") + std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary_.c_str());
    throw input_error(path_, "rename failed: " + reason);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, "cannot open file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string read_file_tail(const std::string& path, size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  const long from = size > static_cast<long>(bytes) ? size - static_cast<long>(bytes) : 0;
  std::fseek(f, from, SEEK_SET);
  std::string text(static_cast<size_t>(size > from ? size - from : 0), '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  return text;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace lmk
