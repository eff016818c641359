// What each lmk process loads, read from the dynamic loader's own account (LD_DEBUG=files):
// the commands that need no LibTorch map neither LibTorch nor a CUDA library; the model
// commands run in lmk-engine, started once, with LibTorch's CPU library and its one BLAS, and
// without the CUDA module or the CUDA libraries behind it (cuBLAS, cuDNN, NCCL) unless
// --device cuda asks.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/run_lmk.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::Result;
using testing::run_lmk;
using testing::TempDir;

// A command's run under LD_DEBUG=files: its output without the loader's lines, the programs
// started (one per exec, by argv[0]) and the file names of every library loaded, NEEDED or
// dlopen'ed (a library looked for and not found is not loaded).
struct Loaded {
  Result result;
  std::vector<std::string> programs;
  std::set<std::string> libraries;

  bool has(const std::string& prefix) const {
    for (const std::string& library : libraries)
      if (library.rfind(prefix, 0) == 0) return true;
    return false;
  }
  std::string list() const {
    std::string out;
    for (const std::string& library : libraries) out += library + " ";
    return out;
  }
};

Loaded run_loaded(const std::string& args, const std::string& input = "",
                  const std::string& env = "LMK_THREADS=1") {
  Loaded loaded;
  const Result raw = run_lmk(args, input, "LD_DEBUG=files " + env);
  const std::regex loader(R"(^\s*\d+:\t)");  // the loader's lines: "  PID:<tab>..."
  const std::regex program(R"(initialize program: (\S+))");
  const std::regex file(R"(\bfile=(\S+) \[\d+\];  generating link map)");  // loaded, not tried
  std::istringstream lines(raw.output);
  std::string line;
  loaded.result.code = raw.code;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, loader)) {
      loaded.result.output += line + "\n";
    } else if (std::regex_search(line, m, program)) {
      const std::string name = std::filesystem::path(m[1].str()).filename().string();
      if (name != "env") loaded.programs.push_back(name);  // env(1) sets the test's variables
    } else if (std::regex_search(line, m, file)) {
      loaded.libraries.insert(std::filesystem::path(m[1].str()).filename().string());
    }
  }
  return loaded;
}

const char* const kCudaLibraries[] = {"libtorch_cuda", "liblmk_cuda", "libc10_cuda",
                                      "libcublas",     "libcudnn",    "libnccl",
                                      "libcufft",      "libcusparse", "libcuda.so"};
const char* const kOtherBlas[] = {"libblas", "libopenblas", "liblapack", "libmkl_", "libblis"};

class ProcessCliTest : public ::testing::Test {
 protected:
  ProcessCliTest()
      : tokenizer_(dir_.write("tokenizer.json", testing::word_level_json(100).dump())) {}
  TempDir dir_;
  std::string tokenizer_;
};

TEST_F(ProcessCliTest, CommandsWithoutTheModelMapNeitherLibTorchNorCuda) {
  for (const std::string& args :
       {std::string("--version"), "tokenize --tokenizer " + tokenizer_,
        "data passkey --tokenizer " + tokenizer_ +
            " --lengths 64 --documents 8 --queries 2 --out " + (dir_.path() / "passkey").string(),
        "study " + std::string(LMK_SOURCE_DIR) +
            "/experiments/pooling-vs-length.toml --profile micro --dry-run --dir " +
            (dir_.path() / "study").string()}) {
    const Loaded loaded = run_loaded(args, "w0 w1\n");
    EXPECT_EQ(loaded.result.code, 0) << args << "\n" << loaded.result.output;
    EXPECT_EQ(loaded.programs, std::vector<std::string>{"lmk"}) << args;
    for (const char* heavy : {"libtorch", "libc10", "libcudart", "libcupti", "libgomp"})
      EXPECT_FALSE(loaded.has(heavy)) << args << " loads " << heavy << ": " << loaded.list();
    for (const char* cuda : kCudaLibraries)
      EXPECT_FALSE(loaded.has(cuda)) << args << " loads " << cuda;
  }
}

// lmk's own list of the commands without LibTorch (app/commands.cpp) and what it registers agree:
// each one's --help comes from lmk alone; the model commands' from lmk-engine.
TEST_F(ProcessCliTest, EachCommandRunsInTheProcessItsListSays) {
  for (const char* own : {"tokenize", "tokenizer-train", "data", "results", "compare", "export",
                          "study", "submit", "jobs", "cancel", "logs"}) {
    const Loaded loaded = run_loaded(std::string(own) + " --help");
    EXPECT_EQ(loaded.result.code, 0) << own << "\n" << loaded.result.output;
    EXPECT_EQ(loaded.programs, std::vector<std::string>{"lmk"}) << own;
  }
  for (const char* model :
       {"model", "inspect", "encode", "attention", "eval", "train", "pretrain"}) {
    const Loaded loaded = run_loaded(std::string(model) + " --help");
    EXPECT_EQ(loaded.result.code, 0) << model << "\n" << loaded.result.output;
    EXPECT_EQ(loaded.programs, (std::vector<std::string>{"lmk", "lmk"})) << model;
    EXPECT_TRUE(loaded.has("libtorch_cpu.so")) << model;
  }
  // With no command, the engine lists every one.
  const Loaded all = run_loaded("--help");
  for (const char* command : {"tokenize", "logs", "encode", "pretrain"})
    EXPECT_NE(all.result.output.find(std::string("  ") + command), std::string::npos) << command;
}

TEST_F(ProcessCliTest, ModelCommandsOnTheCpuRunInTheEngineWithOneBlasAndNoCudaModule) {
  const std::string model = (dir_.path() / "model").string();
  Result r = run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + model, "",
                     testing::kQuickEnv);
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string docs = dir_.write("docs.jsonl", "{\"id\": \"a\", \"text\": \"w1 w2 w3\"}\n");
  const std::string out = (dir_.path() / "emb.npy").string();
  const Loaded loaded =
      run_loaded("encode --model " + model + " --pooling cls --input " + docs + " --out " + out, "",
                 "LMK_THREADS=1");
  ASSERT_EQ(loaded.result.code, 0) << loaded.result.output;
  EXPECT_TRUE(std::filesystem::exists(out));
  // Two programs: lmk, then lmk-engine (which keeps lmk's argv[0]); a third would be the engine
  // executing itself again.
  EXPECT_EQ(loaded.programs, (std::vector<std::string>{"lmk", "lmk"}));
  EXPECT_TRUE(loaded.has("libtorch_cpu.so")) << loaded.list();
  for (const char* cuda : kCudaLibraries)
    EXPECT_FALSE(loaded.has(cuda)) << "a CPU command loads " << cuda << ": " << loaded.list();
  for (const char* blas : kOtherBlas)
    EXPECT_FALSE(loaded.has(blas)) << "a second BLAS: " << loaded.list();
  // What Debian's LibTorch 1.13 brought into every process (288 libraries) stays out.
  EXPECT_FALSE(loaded.has("libgloo")) << "Gloo is inside libtorch_cpu.so; Debian's is headers only";
  for (const char* world : {"libopencv", "libavcodec", "libgdal", "libQt5", "libgst", "libpoppler"})
    EXPECT_FALSE(loaded.has(world)) << loaded.list();
  EXPECT_LT(loaded.libraries.size(), 40u) << loaded.list();
}

TEST_F(ProcessCliTest, CudaDeviceLoadsTheCudaModuleAndSaysWhatItFinds) {
  const std::string module = std::string(LMK_BINARY_DIR) + "/app/liblmk_cuda.so";
  const std::string model = (dir_.path() / "model").string();
  ASSERT_EQ(run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + model, "",
                    testing::kQuickEnv)
                .code,
            0);
  const std::string docs = dir_.write("docs.jsonl", "{\"id\": \"a\", \"text\": \"w1 w2 w3\"}\n");
  const std::string out = (dir_.path() / "emb.npy").string();
  const Loaded loaded = run_loaded("encode --device cuda --model " + model +
                                   " --pooling cls --input " + docs + " --out " + out);
  if (!std::filesystem::exists(module)) {  // a LibTorch without CUDA
    EXPECT_EQ(loaded.result.code, 2) << loaded.result.output;
    EXPECT_NE(loaded.result.output.find("--device: this lmk has no CUDA code"), std::string::npos)
        << loaded.result.output;
    return;
  }
  EXPECT_TRUE(loaded.has("liblmk_cuda.so")) << loaded.list();
  EXPECT_TRUE(loaded.has("libtorch_cuda.so")) << loaded.list();
  if (loaded.result.code == 0) {  // a machine with a GPU
    EXPECT_TRUE(std::filesystem::exists(out));
    return;
  }
  EXPECT_EQ(loaded.result.code, 2) << loaded.result.output;
  EXPECT_NE(loaded.result.output.find("--device: 'cuda': no CUDA device is visible here (CUDA: "),
            std::string::npos)
      << loaded.result.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(ProcessCliTest, AMissingEngineIsOneClearError) {
  const std::filesystem::path lone = dir_.path() / "bin" / "lmk";
  std::filesystem::create_directories(lone.parent_path());
  std::filesystem::copy_file(std::string(LMK_BINARY_DIR) + "/app/lmk", lone);
  const Result r = testing::run_shell(lone.string() + " inspect " + dir_.path().string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(
      r.output.find("lmk: error: cannot start " + (lone.parent_path() / "lmk-engine").string()),
      std::string::npos)
      << r.output;
  // The commands without the model still run.
  EXPECT_EQ(testing::run_shell(lone.string() + " --version").output, "lmk 0.1.0\n");
}

}  // namespace
}  // namespace lmk
