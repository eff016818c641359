#include "core/data/manpages.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/util/error.h"
#include "core/util/file.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

// Runs a shell command and returns its standard output; the exit status goes to *status.
std::string command_output(const std::string& command, int* status) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw InputError("cannot run: " + command);
  std::string out;
  char buffer[65536];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  *status = pclose(pipe);
  return out;
}

}  // namespace

std::vector<std::string> builtin_manpage_sources(const ManPagesOptions& options) {
  if (options.sections.empty()) throw input_error("sections", "no man page section given");
  int status = 0;
  const std::string listing = command_output("dpkg -L manpages manpages-dev 2>/dev/null", &status);
  std::set<std::string> wanted;
  for (int section : options.sections) wanted.insert("man" + std::to_string(section));
  std::vector<std::string> pages;
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);) {
    const fs::path path(line);
    if (path.extension() != ".gz" || !wanted.count(path.parent_path().filename().string()) ||
        path.parent_path().parent_path().filename() != "man")
      continue;
    pages.push_back(line);
  }
  std::sort(pages.begin(), pages.end());
  if (pages.empty())
    throw InputError(
        "the built-in corpus needs the man pages of Debian's manpages and manpages-dev packages "
        "(apt-get install manpages manpages-dev; scripts/setup installs them; or give a folder "
        "of .txt files instead)");
  keep_spread(pages, options.limit);
  return pages;
}

size_t render_manpages(const std::string& out_dir, const ManPagesOptions& options) {
  const std::vector<std::string> pages = builtin_manpage_sources(options);
  fs::create_directories(out_dir);
  std::atomic<size_t> next{0};
  std::mutex error_mutex;
  std::string error;
  auto work = [&] {
    for (size_t i = next++; i < pages.size(); i = next++) {
      const fs::path source(pages[i]);
      const fs::path target = fs::path(out_dir) / (source.stem().string() + ".txt");
      std::error_code ec;
      if (fs::exists(target, ec)) continue;
      int status = 0;
      // man's own formatting at 80 columns, overstrikes removed; C.UTF-8 so that the text does
      // not depend on the caller's locale.
      const std::string text =
          command_output("LC_ALL=C.UTF-8 MANROFFOPT=-rHY=0 MANWIDTH=80 man -l -P cat " +
                             shell_quote(pages[i]) + " 2>/dev/null | col -bx",
                         &status);
      if (status != 0) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (error.empty()) error = pages[i] + ": man / col failed (is groff installed?)";
        continue;
      }
      if (text.size() < options.min_bytes) continue;
      try {
        AtomicFile out(target.string());
        out.write(text);
        out.commit();
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (error.empty()) error = e.what();
      }
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 0; t < std::max<size_t>(1, options.threads); ++t) workers.emplace_back(work);
  for (auto& w : workers) w.join();
  if (!error.empty()) throw InputError(error);
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out_dir))
    files += entry.path().extension() == ".txt";
  AtomicFile done((fs::path(out_dir) / ".complete").string());
  done.write(std::to_string(files) + " pages\n");
  done.commit();
  return files;
}

}  // namespace lmk
