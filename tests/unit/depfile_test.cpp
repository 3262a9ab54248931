// Dependency-file unit tests: gcc's escaping and the rule's layout, written
// out by hand.
#include "irisc/depfile.h"

#include <doctest/doctest.h>

using namespace irisc;

TEST_CASE("depfile: make escaping of spaces, '#' and '$'") {
  CHECK(escape_make_path("plain/path.iris") == "plain/path.iris");
  CHECK(escape_make_path("my dir/a b.hip") == "my\\ dir/a\\ b.hip");
  CHECK(escape_make_path("x#1$y") == "x\\#1$$y");
}

TEST_CASE("depfile: one rule, each dependency once, in order") {
  std::string text;
  llvm::raw_string_ostream out(text);
  write_depfile(out, "out dir/k.hpp", {"k.iris", "h.hip", "k.iris", "/usr/include/x.h"});
  CHECK(text == "out\\ dir/k.hpp: \\\n  k.iris \\\n  h.hip \\\n  /usr/include/x.h\n");
}
