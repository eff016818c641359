// libFuzzer target for the tokenizer.json loader (build with -DLMK_FUZZ=ON and clang).
// Any input must either load or be rejected with an InputError; a loaded tokenizer must encode
// and decode a few texts without crashing. Everything else (a crash, a sanitizer report, any
// other exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/tokenize/hf_tokenizer.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<lmk::Tokenizer> tokenizer;
  try {
    tokenizer = lmk::parse_hf_tokenizer(std::string_view(reinterpret_cast<const char*>(data), size),
                                        "fuzz.json");
  } catch (const lmk::InputError&) {
    return 0;
  }
  for (const char* text :
       {"Hello world! 123", "  naïve café\n\tx", "<s>a</s>[CLS]", "日本語の文 🤷🏽"}) {
    try {
      const lmk::Encoding e = tokenizer->add_special_tokens(tokenizer->encode(text));
      tokenizer->decode(e.ids, false);
      for (int32_t id : e.ids) tokenizer->id_to_token(id);
    } catch (const lmk::InputError&) {
    }
  }
  return 0;
}
