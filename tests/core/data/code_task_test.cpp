#include "core/data/code_task.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/data/generators.h"
#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

const char* kModule = R"PY(
"""Module docstring: not a function's."""
import os

def plain(a, b):
    """Add two numbers.

    Longer description that is not the summary.
    """
    # a comment with "quotes" and 'def fake():'
    return a + b

@decorator
@other.decorator(arg="x")
def decorated(
        first,   # a comment in the signature
        second=(1, 2),
        third="def not_a_function(): pass"):
    r'''Raw docstring with a \d backslash.'''
    text = """def also_not_a_function():
    pass"""
    return first

class Outer:
    'Class docstring.'

    def method(self):
        'One-quoted docstring spanning one line.'
        def inner(x):
            return x * 2
        return inner(1)

    async def fetch(self):
        value = await self.get()
        return value

def one_liner(): return 1

def undocumented(x):
    y = x + \
        1
    return y

def bytes_doc():
    b"""not a docstring: bytes"""
    return None
)PY";

TEST(CodeTaskTest, FindsEveryFunctionItsDocstringAndItsSourceWithoutIt) {
  const std::vector<PythonFunction> functions = python_functions(kModule, "pkg/mod.py");
  std::vector<std::string> names;
  for (const PythonFunction& f : functions) names.push_back(f.qualified_name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"plain", "decorated", "Outer.method", "Outer.method.inner",
                                      "Outer.fetch", "undocumented", "bytes_doc"}));
  const PythonFunction& plain = functions[0];
  EXPECT_EQ(plain.file, "pkg/mod.py");
  EXPECT_EQ(plain.line, 5u);
  EXPECT_EQ(docstring_summary(plain.docstring), "Add two numbers.");
  EXPECT_EQ(
      plain.source,
      "def plain(a, b):\n    # a comment with \"quotes\" and 'def fake():'\n    return a + b");
  const PythonFunction& decorated = functions[1];
  EXPECT_EQ(decorated.line, 13u) << "from the first decorator";
  EXPECT_EQ(decorated.docstring, "Raw docstring with a \\d backslash.");
  EXPECT_EQ(decorated.source.rfind("@decorator\n@other.decorator(arg=\"x\")\ndef decorated(", 0),
            0u)
      << decorated.source;
  EXPECT_NE(decorated.source.find("def also_not_a_function():\n    pass\"\"\""), std::string::npos);
  EXPECT_EQ(decorated.source.find("Raw docstring"), std::string::npos);
  const PythonFunction& method = functions[2];
  EXPECT_EQ(method.docstring, "One-quoted docstring spanning one line.");
  EXPECT_EQ(method.source,
            "def method(self):\n    def inner(x):\n        return x * 2\n    return inner(1)")
      << "dedented to the def";
  EXPECT_EQ(functions[3].source, "def inner(x):\n    return x * 2");
  EXPECT_EQ(functions[4].docstring, "");
  EXPECT_EQ(functions[4].source.rfind("async def fetch(self):", 0), 0u);
  EXPECT_EQ(functions[5].source, "def undocumented(x):\n    y = x + \\\n        1\n    return y");
  EXPECT_EQ(functions[6].docstring, "") << "a bytes literal is not a docstring";
}

TEST(CodeTaskTest, SummariesStopAtTheFirstBlankLine) {
  EXPECT_EQ(docstring_summary("\n    Return the\n    sum.\n\n    More.\n"), "Return the sum.");
  EXPECT_EQ(docstring_summary("One line."), "One line.");
  EXPECT_EQ(docstring_summary(""), "");
}

TEST(CodeTaskTest, TheTaskPairsEachSummaryWithItsFunctionAndKeepsFilesInOneSplit) {
  std::vector<PythonFunction> functions = python_functions(kModule, "pkg/mod.py");
  for (PythonFunction f : python_functions(kModule, "pkg/other.py")) functions.push_back(f);
  CodeTaskOptions options;
  options.min_summary_bytes = 10;
  options.min_source_lines = 2;
  const RetrievalSplit task = make_code_task(functions, options);
  std::set<std::string> ids;
  for (const Document& d : task.corpus) ids.insert(d.id);
  EXPECT_TRUE(ids.count("pkg/mod.py:plain"));
  EXPECT_TRUE(ids.count("pkg/other.py:Outer.method.inner"));
  ASSERT_FALSE(task.queries.empty());
  for (const Query& q : task.queries) {
    ASSERT_EQ(task.qrels.at(q.id).size(), 1u);
    EXPECT_EQ(task.qrels.at(q.id).begin()->first, q.id);
    EXPECT_EQ(q.extra["split"], split_of_document(q.extra["file"], options.seed));
    EXPECT_GE(q.text.size(), 10u);
  }
  const auto plain = std::find_if(task.queries.begin(), task.queries.end(),
                                  [](const Query& q) { return q.id == "pkg/mod.py:plain"; });
  ASSERT_NE(plain, task.queries.end());
  EXPECT_EQ(plain->text, "Add two numbers.");
  // splits: only the functions of files in those splits, targets and distractors alike.
  const std::string mod_split = split_of_document("pkg/mod.py", options.seed);
  options.splits = {mod_split};
  const RetrievalSplit one = make_code_task(functions, options);
  ASSERT_FALSE(one.corpus.empty());
  for (const Document& d : one.corpus)
    EXPECT_EQ(split_of_document(d.extra.at("file").get<std::string>(), options.seed), mod_split);
  EXPECT_EQ(
      one.corpus.size() * 2,
      task.corpus.size() * (split_of_document("pkg/other.py", options.seed) == mod_split ? 2 : 1));
}

TEST(CodeTaskTest, ReadsTheStandardLibrary) {
  const std::vector<PythonFunction> functions = read_python_functions("/usr/lib/python3.11", 40);
  EXPECT_GT(functions.size(), 100u);
  size_t documented = 0;
  for (const PythonFunction& f : functions) {
    documented += !f.docstring.empty();
    EXPECT_EQ(f.source.find("\"\"\"" + f.docstring + "\"\"\""), std::string::npos)
        << f.file << ":" << f.qualified_name;
    EXPECT_TRUE(f.source.rfind("def ", 0) == 0 || f.source.rfind("@", 0) == 0 ||
                f.source.rfind("async def ", 0) == 0)
        << f.file << ":" << f.qualified_name << "\n"
        << f.source.substr(0, 200);
  }
  EXPECT_GT(documented, functions.size() / 3);
  try {
    read_python_functions("/nonexistent/python");
    ADD_FAILURE() << "a missing folder is an error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/nonexistent/python"), std::string::npos) << what;
    EXPECT_NE(what.find("apt-get install libpython3.11-stdlib"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace lmk
