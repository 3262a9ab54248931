// The import protocol's records (import_protocol.h): lines written by the
// helper's functions read back, and malformed lines rejected. The expected
// fields are written out by hand.
#include "irisc/import_protocol.h"

#include <doctest/doctest.h>

using namespace irisc::import_protocol;

TEST_CASE("import protocol: a function line round-trips") {
  std::string line = function_line("mix", "/h/a b.hip", 12, 7, "f32", {{"a", "f32"}, {"#2", "i64"}});
  CHECK(line == "function\tmix\t/h/a b.hip\t12\t7\tf32\ta:f32\t#2:i64\n");
  line.pop_back();
  auto r = parse_record(line);
  REQUIRE(r);
  CHECK(r->kind == Record::Kind::Function);
  CHECK(r->name == "mix");
  CHECK(r->file == "/h/a b.hip");
  CHECK(r->line == 12);
  CHECK(r->col == 7);
  CHECK(r->result == "f32");
  REQUIRE(r->params.size() == 2);
  CHECK(r->params[1].name == "#2");
  CHECK(r->params[1].type == "i64");
}

TEST_CASE("import protocol: rejected and file lines") {
  auto r = parse_record("rejected\tf\tx.hip\t3\t1\tit is variadic");
  REQUIRE(r);
  CHECK(r->kind == Record::Kind::Rejected);
  CHECK(r->reason == "it is variadic");
  auto f = parse_record("file\t/usr/include/stdint.h");
  REQUIRE(f);
  CHECK(f->kind == Record::Kind::File);
  CHECK(f->name == "/usr/include/stdint.h");
  CHECK(file_line("a") == "file\ta\n");
  CHECK(rejected_line("g", "y.hip", 4, 2, "r") == "rejected\tg\ty.hip\t4\t2\tr\n");
}

TEST_CASE("import protocol: malformed lines") {
  CHECK_FALSE(parse_record(""));
  CHECK_FALSE(parse_record("function\tf\tx.hip\t3"));              // too few fields
  CHECK_FALSE(parse_record("function\tf\tx.hip\tthree\t1\tf32"));  // line not a number
  CHECK_FALSE(parse_record("function\tf\tx.hip\t3\t1\tf32\tnocolon"));
  CHECK_FALSE(parse_record("rejected\tf\tx.hip\t3\t1"));
  CHECK_FALSE(parse_record("symbol\tf"));
}
