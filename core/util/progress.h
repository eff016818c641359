#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace lmk {

// Progress of long work on stderr: a bar with rate and ETA on a terminal, a plain line every
// `line_interval` otherwise. Silent for work that ends within `quiet_for`.
class Progress {
 public:
  Progress(std::string label, uint64_t total, std::string unit = "",
           std::chrono::seconds line_interval = std::chrono::seconds(10),
           std::chrono::milliseconds quiet_for = std::chrono::milliseconds(1000),
           std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Records that `done` units of `total` are complete (cheap to call often).
  void update(uint64_t done);
  // Text shown after the numbers from now on (e.g. "loss 2.31 lr 3e-04 5.1k tok/s").
  void set_detail(std::string detail) { detail_ = std::move(detail); }
  // Prints the final state (when anything was printed before).
  void finish();

  // The line shown for `done` after `elapsed` seconds (exposed for tests).
  std::string render(uint64_t done, double elapsed, bool bar) const;

 private:
  std::string label_, unit_, detail_;
  uint64_t total_, done_ = 0;
  std::chrono::seconds line_interval_;
  std::chrono::milliseconds quiet_for_;
  std::FILE* out_;
  bool terminal_;
  bool printed_ = false, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace lmk
