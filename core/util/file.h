#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lmk {

// Writes a file atomically: into PATH.tmp.PID, then fsync and rename over PATH on commit().
// Destroyed without commit(), it removes the temporary file and leaves PATH untouched.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends bytes; throws InputError on I/O failure (disk full, ...).
  void write(std::string_view bytes);
  // Flushes to disk and renames into place.
  void commit();

 private:
  std::string path_, temporary_;
  int fd_ = -1;
};

// Keeps `limit` of a sorted list of files spread evenly over it (item i * size / limit), so
// that a limited corpus samples every part of a tree; limit 0 or >= the size keeps them all.
template <typename Path>
void keep_spread(std::vector<Path>& files, size_t limit) {
  if (limit == 0 || limit >= files.size()) return;
  std::vector<Path> spread;
  for (size_t i = 0; i < limit; ++i) spread.push_back(files[i * files.size() / limit]);
  files = std::move(spread);
}

// Reads a whole file; throws InputError naming it when it cannot.
std::string read_file(const std::string& path);
// The last `bytes` bytes of a file (all of a shorter one); "" when it cannot be read (a log
// that is not there yet).
std::string read_file_tail(const std::string& path, size_t bytes);

// 'text' as one sh word, whatever it holds (single-quoted, quotes escaped).
std::string shell_quote(const std::string& text);

}  // namespace lmk
