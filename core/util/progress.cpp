#include "core/util/progress.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "core/util/json_util.h"

namespace lmk {

namespace {

using nlohmann::json;

constexpr std::chrono::seconds kJsonInterval{2};

// A number field of an event (finite), or nullopt.
std::optional<double> number_field(const json& event, const char* key) {
  const auto found = event.find(key);
  if (found == event.end() || !found->is_number()) return std::nullopt;
  const double value = found->get<double>();
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

// An integer field (a JSON number within int64's range; fractions truncated), or nullopt.
std::optional<int64_t> integer_field(const json& event, const char* key) {
  const auto found = event.find(key);
  if (found == event.end() || !found->is_number()) return std::nullopt;
  if (found->is_number_unsigned()) {
    const auto value = found->get<uint64_t>();
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(value);
  }
  if (found->is_number_integer()) return found->get<int64_t>();
  const double value = found->get<double>();
  if (!std::isfinite(value) || std::fabs(value) >= 9.2e18) return std::nullopt;
  return static_cast<int64_t>(value);
}

std::string string_field(const json& event, const char* key) {
  const auto found = event.find(key);
  return found != event.end() && found->is_string() ? found->get<std::string>() : "";
}

// The event one log segment holds: the JSON object between its first '{' and last '}' (a
// terminal's escape codes may come before it), when it is a progress or step event.
std::optional<ProgressEvent> parse_event(std::string_view segment) {
  const size_t open = segment.find('{'), close = segment.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::nullopt;
  const json event = json_util::parse(segment.substr(open, close - open + 1), "progress event");
  if (!event.is_object()) return std::nullopt;
  ProgressEvent out;
  out.event = string_field(event, "event");
  std::optional<int64_t> done, total;
  if (out.event == "progress") {
    done = integer_field(event, "done");
    out.label = string_field(event, "label");
    out.unit = string_field(event, "unit");
    out.detail = string_field(event, "detail");
  } else if (out.event == "step") {
    done = integer_field(event, "step");
    out.label = "training";
    out.unit = "steps";
    for (const char* key : {"loss", "lr", "tokens_per_s"}) {
      if (const auto value = number_field(event, key)) out.values.emplace_back(key, *value);
    }
  } else {
    return std::nullopt;
  }
  total = integer_field(event, "total");
  if (!done || !total) return std::nullopt;  // not an event this program wrote
  out.done = *done;
  out.total = *total;
  out.elapsed_s = number_field(event, "elapsed_s").value_or(-1);
  out.eta_s = number_field(event, "eta_s").value_or(-1);
  return out;
}

}  // namespace

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

bool progress_json_requested() {
  const char* value = std::getenv("LMK_PROGRESS_JSON");
  return value && *value && std::string_view(value) != "0";
}

std::optional<ProgressEvent> latest_progress_event(const std::string& text) {
  try {
    // Segments end at '\n' or '\r'; the newest is last.
    size_t end = text.size();
    while (end > 0) {
      const size_t cut = text.find_last_of("\r\n", end - 1);
      const size_t begin = cut == std::string::npos ? 0 : cut + 1;
      if (begin < end) {
        try {
          if (auto event = parse_event(std::string_view(text).substr(begin, end - begin)))
            return event;
        } catch (const std::exception&) {
          // Not JSON, or JSON this program did not write: an older line may be an event.
        }
      }
      if (cut == std::string::npos) break;
      end = cut;
    }
  } catch (...) {
  }
  return std::nullopt;
}

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
      json_(progress_json_requested()),
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

std::string Progress::render_json(uint64_t done, double elapsed) const {
  auto milliseconds = [](double seconds) { return std::round(seconds * 1000.0) / 1000.0; };
  json event = {{"event", "progress"}, {"label", label_}, {"done", done},
                {"total", total_},     {"unit", unit_},   {"elapsed_s", milliseconds(elapsed)}};
  if (done > 0 && total_ > 0) {
    const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
    event["eta_s"] = milliseconds(elapsed * (1.0 - fraction) / fraction);
  }
  if (!detail_.empty()) event["detail"] = detail_;
  // Replaced, not refused: a label or detail with invalid UTF-8 must not stop the work.
  return event.dump(-1, ' ', false, json::error_handler_t::replace);
}

void Progress::write_json(double elapsed) {
  // On a terminal the bar is cleared first; the next update draws it again.
  std::fprintf(out_, "%s%s\n", terminal_ && printed_ ? "\r\x1b[K" : "",
               render_json(done_, elapsed).c_str());
  std::fflush(out_);
  last_json_ = std::chrono::steady_clock::now();
}

void Progress::update(uint64_t done) {
  done_ = done;
  const auto now = std::chrono::steady_clock::now();
  if (json_ && (!last_json_ || now - *last_json_ >= kJsonInterval))
    write_json(std::chrono::duration<double>(now - start_).count());
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
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (json_) write_json(elapsed);
  if (!printed_) return;
  if (terminal_)
    std::fprintf(out_, "\r%s\x1b[K\n", render(done_, elapsed, true).c_str());
  else
    std::fprintf(out_, "%s\n", render(done_, elapsed, false).c_str());
  std::fflush(out_);
}

}  // namespace lmk
