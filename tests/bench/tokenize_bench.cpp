// Tokenizer throughput of lmk's tokenizers, in the format of tests/parity/oracle.mjs --bench,
// so tests/bench/tokenize_bench.sh can compare both:
//   lmk_tokenize_bench --tokenizer FILE --input corpus.jsonl [--threads N]
// --threads N (default 1): the texts of each pass shared by N threads (every N-th text each,
// as lmk tokenize --threads), to compare with oracle.mjs --bench-batch (encodeBatch).
// Times encode + special tokens (Hugging Face's encode(text)) over every text, after one
// warm-up pass, and prints {"texts":N,"tokens":T,"bytes":B,"seconds":S,"tokens_per_s":R,
// "cold_tokens_per_s":C} (C: the warm-up pass, with an empty word cache).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include "core/tokenize/tokenizer.h"
#include "core/util/error.h"

int main(int argc, char** argv) {
  std::string tokenizer_path, input_path;
  size_t threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tokenizer")
      tokenizer_path = argv[i + 1];
    else if (flag == "--input")
      input_path = argv[i + 1];
    else if (flag == "--threads")
      threads = std::max(1, std::atoi(argv[i + 1]));
  }
  if (tokenizer_path.empty() || input_path.empty()) {
    std::cerr << "usage: lmk_tokenize_bench --tokenizer FILE --input corpus.jsonl\n";
    return 2;
  }
  try {
    const auto tokenizer = lmk::load_tokenizer(tokenizer_path);
    std::ifstream in(input_path);
    if (!in) throw lmk::input_error(input_path, "cannot open file");
    std::vector<std::string> texts;
    std::string line;
    size_t bytes = 0;
    while (std::getline(in, line)) {
      texts.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
      bytes += texts.back().size();
    }
    // One timed pass over every text: its token count and seconds.
    auto timed_pass = [&](double& seconds) {
      const auto start = std::chrono::steady_clock::now();
      std::vector<size_t> counts(threads, 0);
      std::vector<std::thread> workers;
      for (size_t w = 0; w < threads; ++w)
        workers.emplace_back([&, w] {
          for (size_t i = w; i < texts.size(); i += threads)
            counts[w] += tokenizer->add_special_tokens(tokenizer->encode(texts[i])).ids.size();
        });
      for (std::thread& worker : workers) worker.join();
      size_t count = 0;
      for (size_t c : counts) count += c;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return count;
    };
    // The first pass fills the BPE word cache (as the HF side's warm-up does); it is timed too.
    double cold_seconds = 0, seconds = 0;
    const size_t tokens = timed_pass(cold_seconds);
    const size_t timed_tokens = timed_pass(seconds);
    if (timed_tokens != tokens) throw std::runtime_error("token counts differ between passes");
    nlohmann::json result = {{"texts", texts.size()},
                             {"tokens", tokens},
                             {"bytes", bytes},
                             {"seconds", seconds},
                             {"tokens_per_s", static_cast<double>(tokens) / seconds},
                             {"cold_tokens_per_s", static_cast<double>(tokens) / cold_seconds},
                             {"threads", threads}};
    std::cout << result.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "lmk_tokenize_bench: " << e.what() << "\n";
    return 2;
  }
}
