// The SQLite layer of the results store (core/store/sqlite_statement.h) on a real file: typed
// binds and reads, a statement run again, transactions that commit or roll back whole, the
// checks writers make, and which failures are input errors naming the file.
#include "core/store/sqlite_statement.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using namespace store_sql;
using testing::TempDir;

using Connection = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;

// A connection (without a busy timeout) to a new file in a temporary folder.
Connection open_connection(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  return Connection(db, sqlite3_close);
}

// A file with a runs table holding run 1, and an empty table t (i INTEGER, r REAL, s TEXT).
class SqliteStatementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    execute(db(), path_,
            "CREATE TABLE runs (id INTEGER PRIMARY KEY); INSERT INTO runs VALUES (1);"
            "CREATE TABLE t (i INTEGER, r REAL, s TEXT)");
  }
  sqlite3* db() const { return db_.get(); }
  int64_t rows() const { return single_integer(db(), path_, "SELECT count(*) FROM t"); }
  void insert(int64_t i, const std::string& s) {
    Statement(db(), path_, "INSERT INTO t (i, s) VALUES (?, ?)").bind(i, s).run();
  }

  TempDir dir_;
  const std::string path_ = (dir_.path() / "s.db").string();
  Connection db_ = open_connection(path_);
};

// Each bound type reads back as itself: integers (a bool as 1), doubles, texts with their exact
// bytes (an embedded NUL too); NaN and an empty optional bind as NULL, which real() reads as
// NaN and text() as "", while an empty text is not NULL.
TEST_F(SqliteStatementTest, BindsEachTypeAndReadsItBack) {
  Statement add(db(), path_, "INSERT INTO t VALUES (?, ?, ?)");
  const std::string with_nul("a\0b", 3);
  add.bind(int64_t{-7}, 2.5, with_nul).run();
  add.bind(true, std::nan(""), "plain").run();
  add.bind(std::optional<int64_t>(), 0.0, std::string()).run();
  add.bind(std::optional<int64_t>(42), -1e300, std::string_view("view")).run();

  Statement select(db(), path_, "SELECT i, r, s FROM t ORDER BY rowid");
  ASSERT_TRUE(select.next());
  EXPECT_EQ(select.integer(0), -7);
  EXPECT_EQ(select.real(1), 2.5);
  EXPECT_EQ(select.text(2), with_nul);
  ASSERT_TRUE(select.next());
  EXPECT_EQ(select.integer(0), 1);
  EXPECT_TRUE(select.is_null(1));
  EXPECT_TRUE(std::isnan(select.real(1)));
  EXPECT_EQ(select.text(2), "plain");
  ASSERT_TRUE(select.next());
  EXPECT_TRUE(select.is_null(0));
  EXPECT_EQ(select.text(0), "");
  EXPECT_FALSE(select.is_null(1));
  EXPECT_EQ(select.real(1), 0.0);
  EXPECT_FALSE(select.is_null(2)) << "an empty text is a text";
  ASSERT_TRUE(select.next());
  EXPECT_EQ(select.integer(0), 42);
  EXPECT_EQ(select.real(1), -1e300);
  EXPECT_EQ(select.text(2), "view");
  EXPECT_FALSE(select.next());
}

// bind resets the statement: one statement runs again with new values, and a query stepped part
// way starts over. bind_texts binds its texts to ?1, ?2, ... in order.
TEST_F(SqliteStatementTest, ABoundStatementStartsOver) {
  for (int64_t i = 0; i < 3; ++i) insert(i, "row" + std::to_string(i));
  EXPECT_EQ(rows(), 3);
  Statement select(db(), path_, "SELECT s FROM t WHERE i >= ? ORDER BY i");
  ASSERT_TRUE(select.bind(1).next());
  EXPECT_EQ(select.text(0), "row1");
  ASSERT_TRUE(select.bind(0).next());
  EXPECT_EQ(select.text(0), "row0") << "started over with the new value";

  Statement texts(db(), path_, "SELECT i FROM t WHERE s = ?1 OR s = ?2 ORDER BY i DESC");
  texts.bind_texts({"row2", "row0"});
  std::vector<int64_t> found;
  while (texts.next()) found.push_back(texts.integer(0));
  EXPECT_EQ(found, (std::vector<int64_t>{2, 0}));
  Statement first(db(), path_, "SELECT ?1 || '/' || ?2");
  ASSERT_TRUE(first.bind_texts({"a", "b"}).next());
  EXPECT_EQ(first.text(0), "a/b") << "in order";
}

// bind_values binds a condition's values by their type after `first` parameters bound with
// bind; with first 0 it resets the statement and starts at ?1.
TEST_F(SqliteStatementTest, BindValuesBindsByTypeAfterTheOtherParameters) {
  Statement select(db(), path_, "SELECT ?1, typeof(?2), ?2, typeof(?3), ?3, typeof(?4), ?4");
  select.bind(int64_t{9})
      .bind_values({SqlValue(int64_t{5}), SqlValue(0.5), SqlValue(std::string("x"))}, 1);
  ASSERT_TRUE(select.next());
  EXPECT_EQ(select.integer(0), 9) << "the parameter bound before stays";
  EXPECT_EQ(select.text(1), "integer");
  EXPECT_EQ(select.integer(2), 5);
  EXPECT_EQ(select.text(3), "real");
  EXPECT_EQ(select.real(4), 0.5);
  EXPECT_EQ(select.text(5), "text");
  EXPECT_EQ(select.text(6), "x");
  select.bind_values({SqlValue(std::string("y"))});
  ASSERT_TRUE(select.next());
  EXPECT_EQ(select.text(0), "y");
}

// A statement SQLite cannot prepare or run, or SQL execute cannot run, is an InputError starting
// with the file and saying SQLite's reason; a write that finds the database locked by another
// connection is a runtime_error saying so, not an InputError (raise masks extended codes).
TEST_F(SqliteStatementTest, FailuresNameTheFileAndALockIsNotAnInputError) {
  const auto expect_input_error = [&](const std::function<void()>& body, const std::string& part) {
    try {
      body();
      ADD_FAILURE() << "no error; expected " << part;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(path_ + ": ", 0), 0u) << message;
      EXPECT_NE(message.find(part), std::string::npos) << message;
    }
  };
  expect_input_error([&] { Statement(db(), path_, "SELECT * FROM missing"); },
                     "no such table: missing");
  expect_input_error([&] { execute(db(), path_, "CREATE TABLE t (x)"); }, "already exists");
  expect_input_error([&] { Statement(db(), path_, "INSERT INTO runs VALUES (1)").run(); },
                     "UNIQUE constraint failed: runs.id");
  expect_input_error([&] { store_sql::raise(nullptr, path_, SQLITE_CORRUPT); }, "malformed");

  const auto expect_locked = [&](const std::function<void()>& body) {
    try {
      body();
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      ADD_FAILURE() << "an InputError: " << e.what();
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(path_ + ": ", 0), 0u) << message;
      EXPECT_NE(message.find("locked"), std::string::npos) << message;
    }
  };
  const Connection other = open_connection(path_);
  ASSERT_EQ(sqlite3_exec(other.get(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  expect_locked([&] { insert(1, "x"); });
  ASSERT_EQ(sqlite3_exec(other.get(), "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  expect_locked([&] { store_sql::raise(nullptr, path_, SQLITE_BUSY_SNAPSHOT); });
  expect_locked([&] { store_sql::raise(nullptr, path_, SQLITE_LOCKED); });
  insert(1, "x");
  EXPECT_EQ(rows(), 1) << "the lock gone, the write goes through";
}

// execute tries again when SQLite answers SQLITE_BUSY after its busy handler gave up: here the
// handler releases the other connection's lock and gives up, and the write still goes through.
TEST_F(SqliteStatementTest, ExecuteTriesAgainWhileTheDatabaseIsBusy) {
  struct Holder {
    sqlite3* connection;
    int calls = 0;
  };
  const Connection other = open_connection(path_);
  ASSERT_EQ(sqlite3_exec(other.get(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  Holder holder{other.get()};
  sqlite3_busy_handler(
      db(),
      [](void* data, int) {
        auto* holder = static_cast<Holder*>(data);
        if (holder->calls++ == 0)
          sqlite3_exec(holder->connection, "ROLLBACK", nullptr, nullptr, nullptr);
        return 0;  // give up: the call answers SQLITE_BUSY
      },
      &holder);
  execute(db(), path_, "INSERT INTO t (i) VALUES (5)");
  EXPECT_GE(holder.calls, 1) << "the database was busy";
  EXPECT_EQ(single_integer(db(), path_, "SELECT i FROM t"), 5);
}

// write_transaction commits what fn wrote, or, when fn throws, rolls all of it back and passes
// the exception on, leaving no transaction open; it holds the write lock from the start.
TEST_F(SqliteStatementTest, AWriteTransactionCommitsOrRollsBackWhole) {
  write_transaction(db(), path_, [&] {
    insert(1, "a");
    insert(2, "b");
  });
  EXPECT_EQ(rows(), 2);
  try {
    write_transaction(db(), path_, [&] {
      insert(3, "c");
      throw std::runtime_error("stop");
    });
    ADD_FAILURE() << "the exception was swallowed";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "stop");
  }
  EXPECT_EQ(rows(), 2) << "rolled back";
  EXPECT_NE(sqlite3_get_autocommit(db()), 0) << "no transaction left open";

  const Connection other = open_connection(path_);
  write_transaction(db(), path_, [&] {
    EXPECT_EQ(sqlite3_get_autocommit(db()), 0) << "inside a transaction";
    EXPECT_EQ(sqlite3_exec(other.get(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_BUSY)
        << "the write lock is taken before anything is written";
  });
  EXPECT_EQ(sqlite3_exec(other.get(), "BEGIN IMMEDIATE; ROLLBACK", nullptr, nullptr, nullptr),
            SQLITE_OK)
      << "and released at the end";
}

// The writers' checks: a run that does not exist is an InputError naming the file and the id
// (and write_run_transaction then runs nothing); an empty required field is a programming error
// naming the field.
TEST_F(SqliteStatementTest, WritersCheckTheRunAndRequiredFields) {
  EXPECT_NO_THROW(require_run(db(), path_, 1));
  try {
    require_run(db(), path_, 57);
    ADD_FAILURE() << "run 57 found";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path_ + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("57"), std::string::npos) << message;
  }
  bool ran = false;
  EXPECT_THROW(write_run_transaction(db(), path_, 57, [&] { ran = true; }), InputError);
  EXPECT_FALSE(ran);
  write_run_transaction(db(), path_, 1, [&] {
    ran = true;
    insert(1, "a");
  });
  EXPECT_TRUE(ran);
  EXPECT_EQ(rows(), 1);

  EXPECT_NO_THROW(require_nonempty("local", "job executor"));
  try {
    require_nonempty("", "job executor");
    ADD_FAILURE() << "empty accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("job executor"), std::string::npos) << e.what();
  }
}

// single_integer reads the first column of the first row (0 when there is none); select_rows
// makes one value per row, in the query's order, with its arguments bound to ?1, ?2, ...
TEST_F(SqliteStatementTest, SingleIntegerAndSelectRows) {
  EXPECT_EQ(single_integer(db(), path_, "SELECT i FROM t"), 0);
  insert(3, "c");
  insert(1, "a");
  insert(2, "b");
  EXPECT_EQ(single_integer(db(), path_, "SELECT i FROM t ORDER BY i DESC"), 3);
  const auto read = [](const Statement& row) { return std::pair(row.integer(0), row.text(1)); };
  using Rows = std::vector<std::pair<int64_t, std::string>>;
  EXPECT_EQ(select_rows(db(), path_, "SELECT i, s FROM t WHERE i >= ? AND s != ? ORDER BY i", read,
                        2, "c"),
            (Rows{{2, "b"}}));
  EXPECT_EQ(select_rows(db(), path_, "SELECT i, s FROM t ORDER BY s DESC", read),
            (Rows{{3, "c"}, {2, "b"}, {1, "a"}}));
  EXPECT_TRUE(select_rows(db(), path_, "SELECT i, s FROM t WHERE i > ?", read, 9).empty());
}

}  // namespace
}  // namespace lmk
