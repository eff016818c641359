#include "core/util/progress.h"

#include <unistd.h>

#include <cmath>

namespace lmk {

namespace {
std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600)
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else if (s >= 60)
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%lds", s);
  return buffer;
}
}  // namespace

Progress::Progress(std::string label, uint64_t total, std::string unit,
                   std::chrono::seconds line_interval, std::chrono::milliseconds quiet_for,
                   std::FILE* out)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      line_interval_(line_interval),
      quiet_for_(quiet_for),
      out_(out),
      terminal_(isatty(fileno(out)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

Progress::~Progress() {
  finish();
}

std::string Progress::render(uint64_t done, double elapsed, bool bar) const {
  const double fraction =
      total_ ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total_)) : 0.0;
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double eta = fraction > 0 ? elapsed * (1.0 - fraction) / fraction : NAN;
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, "%5.1f%% %.3g%s/s elapsed %s ETA %s", fraction * 100.0,
                rate, unit_.empty() ? "" : (" " + unit_).c_str(), format_duration(elapsed).c_str(),
                format_duration(eta).c_str());
  std::string line = label_ + " ";
  if (bar) {
    const int width = 30;
    const int filled = static_cast<int>(fraction * width);
    line += "[" + std::string(static_cast<size_t>(filled), '#') +
            std::string(static_cast<size_t>(width - filled), ' ') + "] ";
  }
  return line + numbers + (detail_.empty() ? "" : "  " + detail_);
}

void Progress::update(uint64_t done) {
  done_ = done;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < quiet_for_) return;
  const auto interval =
      terminal_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(line_interval_);
  if (printed_ && now - last_print_ < interval) return;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (terminal_)
    std::fprintf(out_, "\r%s\x1b[K", render(done, elapsed, true).c_str());
  else
    std::fprintf(out_, "%s\n", render(done, elapsed, false).c_str());
  std::fflush(out_);
  printed_ = true;
  last_print_ = now;
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!printed_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (terminal_)
    std::fprintf(out_, "\r%s\x1b[K\n", render(done_, elapsed, true).c_str());
  else
    std::fprintf(out_, "%s\n", render(done_, elapsed, false).c_str());
  std::fflush(out_);
}

}  // namespace lmk
