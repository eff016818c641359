#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lmk {

// True when $LMK_PROGRESS_JSON asks for machine-readable progress (set, not "" and not "0"):
// then every Progress also writes JSON events and the training loop its step events, which a
// job system reads back from the log (latest_progress_event).
bool progress_json_requested();

// "42s", "3m07s", "2h05m"; "?" for a negative or non-finite number of seconds.
std::string format_duration(double seconds);

// Progress of long work on stderr: a bar with rate and ETA on a terminal, a plain line every
// `line_interval` otherwise. Silent for work that ends within `quiet_for`. With
// progress_json_requested(), it also writes one JSON line at most every 2 seconds and one at
// finish(), whatever quiet_for says:
//   {"event":"progress","label":"training","done":12,"total":40,"unit":"steps",
//    "elapsed_s":3.2,"eta_s":7.5,"detail":"loss 2.31 lr 3e-04 5.1k tok/s"}
// (eta_s once something is done, detail when there is one).
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
  // The JSON event for `done` after `elapsed` seconds, one line without its newline.
  std::string render_json(uint64_t done, double elapsed) const;

 private:
  void write_json(double elapsed);

  std::string label_, unit_, detail_;
  uint64_t total_, done_ = 0;
  std::chrono::seconds line_interval_;
  std::chrono::milliseconds quiet_for_;
  std::FILE* out_;
  bool terminal_;
  bool printed_ = false, finished_ = false;
  bool json_ = false;
  std::chrono::steady_clock::time_point start_, last_print_;
  std::optional<std::chrono::steady_clock::time_point> last_json_;
};

// What a progress line of a log says: a Progress JSON event ("progress"), or a training step
// event ("step": step -> done, label "training", unit "steps", and its numeric loss, lr and
// tokens_per_s in values). Fields a line does not have keep their defaults (-1: unknown).
struct ProgressEvent {
  std::string event, label, unit, detail;
  int64_t done = 0, total = 0;
  double elapsed_s = -1, eta_s = -1;
  std::vector<std::pair<std::string, double>> values;
};

// The newest progress or step event in `text` (the tail of a log: its first line may be cut,
// lines may hold \r-separated progress-bar updates, anything else is skipped), nullopt when
// there is none. Never throws, whatever the text.
std::optional<ProgressEvent> latest_progress_event(const std::string& text);

}  // namespace lmk
