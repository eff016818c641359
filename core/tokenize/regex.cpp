#include "core/tokenize/regex.h"

#include <oniguruma.h>

#include <mutex>

#include "core/util/error.h"
#include "core/util/unicode.h"

namespace lmk {

struct Regex::Impl {
  OnigRegex regex = nullptr;
};

namespace {
void initialize_oniguruma() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}
}  // namespace

Regex::Regex(std::string_view pattern, const std::string& where) : impl_(std::make_unique<Impl>()) {
  initialize_oniguruma();
  OnigErrorInfo error_info;
  const auto* begin = reinterpret_cast<const OnigUChar*>(pattern.data());
  const int rc = onig_new(&impl_->regex, begin, begin + pattern.size(), ONIG_OPTION_NONE,
                          ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &error_info);
  if (rc != ONIG_NORMAL) {
    OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, rc, &error_info);
    throw input_error(where, "invalid regex /" + std::string(pattern) +
                                 "/: " + reinterpret_cast<const char*>(message));
  }
}

Regex::~Regex() {
  if (impl_->regex) onig_free(impl_->regex);
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  const auto* str = reinterpret_cast<const OnigUChar*>(text.data());
  const auto* end = str + text.size();
  // A region per call: the compiled regex is shared by threads, the match state is not.
  std::unique_ptr<OnigRegion, void (*)(OnigRegion*)> region(
      onig_region_new(), [](OnigRegion* r) { onig_region_free(r, 1); });
  size_t start = 0;
  bool have_previous = false;
  size_t previous_end = 0;
  while (start <= text.size()) {
    const int pos =
        onig_search(impl_->regex, str, end, str + start, end, region.get(), ONIG_OPTION_NONE);
    if (pos < 0) break;
    const size_t match_begin = static_cast<size_t>(region->beg[0]);
    const size_t match_end = static_cast<size_t>(region->end[0]);
    if (match_begin == match_end) {
      // An empty match: keep it unless it sits where the previous match ended, then step
      // one character forward so the search makes progress.
      if (!(have_previous && previous_end == match_end))
        matches.emplace_back(match_begin, match_end);
      if (match_end >= text.size()) break;
      start = match_end + unicode::sequence_length(static_cast<unsigned char>(text[match_end]));
    } else {
      matches.emplace_back(match_begin, match_end);
      start = match_end;
    }
    have_previous = true;
    previous_end = match_end;
  }
  return matches;
}

}  // namespace lmk
