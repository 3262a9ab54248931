// The affine analysis (affine.h) on the TIR of small kernels: the forms it
// reads, the strides along a row and the masks' comparisons that the
// pipelining and layout passes read off them.
#include "irisc/affine.h"
#include "irisc/lower.h"
#include "irisc/tir_walk.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

using namespace irisc;

namespace {

// A kernel's lets after a lowering pass, by name.
struct Lowered {
  std::unique_ptr<test::Run> run;
  TirModule tir;
  LetValues lets;

  const TirValue* let(std::string_view name) const {
    for (const auto& [var, value] : lets)
      if (var->name == name) return value;
    FAIL("no let ", name);
    return nullptr;
  }
  AffineForm form(std::string_view name) const { return AffineForm::of(let(name), lets); }
};

// `body` in a kernel of pointers `a`, scalars K, N, M, k and the tile r.
Lowered lowered(const std::string& body, std::string_view stop_after = "sink-broadcasts") {
  Lowered l;
  l.run = test::run("kernel k(a: *f32, K: i32, N: i32, M: i32, k: i32) {\n    let r = arange(16);\n" + body + "\n}\n");
  REQUIRE(l.run->diagnostics.empty());
  l.tir = lower(l.run->module(), {.source_name = "test.iris", .stop_after = stop_after});
  for_each_stmt(l.tir.functions.back()->body, [&](TirStmt* s) {
    if (s->kind == TirStmtKind::Let) l.lets[s->var] = s->value;
  });
  return l;
}

std::string text(const AffineForm& f);

// col: the column; row: a tile the same along each row; tile<s>: one that
// advances by s (tile: unknown); a symbol by its name or operation; (...): a sum.
std::string text(const AffineFactor& f) {
  switch (f.kind) {
    case AffineFactor::Kind::Column: return "col";
    case AffineFactor::Kind::Tile:
      return !f.stride ? "tile" : *f.stride == 0 ? "row" : fmt::format("tile<{}>", *f.stride);
    case AffineFactor::Kind::Symbol:
      return std::string(f.value->op == TirOp::Read ? f.value->var()->name : tir_op_info(f.value->op).spelling);
    case AffineFactor::Kind::Sum: return "(" + text(*f.sum) + ")";
  }
  return "?";
}

// "a + 2*K*row + k + col + 3": the base, the terms in order, the constant.
std::string text(const AffineForm& f) {
  std::vector<std::string> parts;
  if (f.base) parts.push_back(text(*f.base));
  for (const AffineTerm& t : f.terms) {
    std::vector<std::string> factors;
    for (const AffineFactor& factor : t.factors) factors.push_back(text(factor));
    std::string product = fmt::format("{}", fmt::join(factors, "*"));
    parts.push_back(t.coefficient == 1 ? product
                    : t.coefficient == -1 ? "-" + product
                                          : fmt::format("{}*{}", t.coefficient, product));
  }
  if (f.constant != 0 || parts.empty()) parts.push_back(std::to_string(f.constant));
  return fmt::format("{}", fmt::join(parts, " + "));
}

}  // namespace

TEST_CASE("affine form: a GEMM's pointer tile, before and after broadcasts sink") {
  for (std::string_view stage : {"build", "sink-broadcasts"}) {
    CAPTURE(stage);
    Lowered l = lowered("    let p = a + r[:, None] * K + (k + r)[None, :] + 3;", stage);
    const AffineForm p = l.form("p");
    CHECK(text(p) == "a + row*K + k + col + 3");
    CHECK(p.tile);
    CHECK(p.row_stride() == 1);
  }
}

TEST_CASE("affine form: strides along a row") {
  Lowered l = lowered(R"(
    let twice_minus_once = r[None, :] * 2 - r[None, :];
    let backwards = -(r[None, :] * 3);
    let by_symbol = r[None, :] * K;
    let down_the_rows = r[:, None] * K + r[:, None];
    let one_column = (r * 2)[:, None] + zeros((16, 16), i32);
    let squared = r[None, :] * r[None, :];
    let converted = (r * 4) as i64;
    let filled = r[None, :] + full((16, 16), K);
    let loaded = load(a + r);
    let offset = a + r * 4 + load(a + r) as i32;
    let quotient = r / 2;)");
  CHECK(l.form("twice_minus_once").row_stride() == 1);
  CHECK(text(l.form("twice_minus_once")) == "2*col + -col");
  CHECK(l.form("backwards").row_stride() == -3);
  CHECK(!l.form("by_symbol").row_stride());
  CHECK(l.form("down_the_rows").row_stride() == 0);
  CHECK(l.form("one_column").row_stride() == 0);
  CHECK(!l.form("squared").row_stride());
  CHECK(l.form("converted").row_stride() == 4);
  CHECK(text(l.form("converted")) == "tile<4>");
  CHECK(l.form("filled").row_stride() == 1);
  CHECK(!l.form("loaded").row_stride());
  CHECK(!l.form("offset").row_stride());
  CHECK(text(l.form("quotient")) == "tile");
  // A scalar is the same for every element.
  Lowered scalars = lowered("    let s = K * N + M / 2;");
  CHECK(!scalars.form("s").tile);
  CHECK(scalars.form("s").row_stride() == 0);
}

TEST_CASE("affine form: constants fold, products flatten, and a sum that is multiplied stays whole") {
  Lowered l = lowered(R"(
    let folded = r[None, :] + 2 + 3 - 1;
    let product = 4 * K * 2 * N;
    let scaled_sum = (K + 1) * N;
    let negated = -(K * 2);
    let zero = K * 0;
    let tile_of_sum = r[None, :] + (K - 1);
    let tile_of_product = r[None, :] + 2 * K;
    let pointer = a + (K + 1);
    let tile_of_pointer = a + (K + 1) + r;)");
  CHECK(text(l.form("folded")) == "col + 4");
  CHECK(text(l.form("product")) == "8*K*N");
  CHECK(text(l.form("scaled_sum")) == "(K + 1)*N");
  CHECK(text(l.form("negated")) == "-2*K");
  CHECK(text(l.form("zero")) == "0");
  CHECK(l.form("zero").is_constant());
  // A scalar sum in a tile is one factor, which a run-time test names whole;
  // a scalar term is the same whole or not.
  CHECK(text(l.form("tile_of_sum")) == "col + (K + -1)");
  CHECK(l.form("tile_of_sum").terms[1].factors[0].value == l.let("tile_of_sum")->operands[1]->operands[0]);
  CHECK(text(l.form("tile_of_product")) == "col + 2*K");
  // A pointer's offsets are its terms; a scalar pointer with offsets is a
  // tile's base whole.
  const AffineForm pointer = l.form("pointer");
  CHECK(text(pointer) == "a + K + 1");
  CHECK(pointer.scalar == l.let("pointer"));
  CHECK(text(l.form("tile_of_pointer")) == "(a + K + 1) + col");
}

TEST_CASE("affine form: a form past 256 terms is a leaf") {
  std::string body = "    let x0 = r[None, :];\n";
  for (int i = 1; i <= 10; ++i) body += fmt::format("    let x{} = x{} + x{};\n", i, i - 1, i - 1);
  Lowered l = lowered(body);
  CHECK(l.form("x8").terms.size() == 256);
  CHECK(l.form("x8").row_stride() == 256);
  CHECK(text(l.form("x9")) == "tile");
  CHECK(!l.form("x10").row_stride());
}

TEST_CASE("row_intervals: a conjunction of comparisons whose sides advance by constants") {
  Lowered l = lowered(R"(
    let gemm = r[:, None] < M && (k + r)[None, :] < K;
    let greater = K > (k + r)[None, :];
    let whole_rows = (r < M)[:, None] && true;
    let not_equal = r[None, :] != K;
    let squared = r[None, :] * r[None, :] < K;)");
  auto gemm = row_intervals(l.let("gemm"), l.lets);
  REQUIRE(gemm);
  REQUIRE(gemm->size() == 2);
  CHECK(text((*gemm)[0].lower) == "row");
  CHECK(text((*gemm)[0].upper) == "M");
  CHECK(text((*gemm)[1].lower) == "k + col");
  CHECK((*gemm)[1].lower.row_stride() == 1);
  CHECK((*gemm)[1].strict);
  // x > y is y < x.
  auto greater = row_intervals(l.let("greater"), l.lets);
  REQUIRE(greater);
  REQUIRE(greater->size() == 1);
  CHECK(text((*greater)[0].lower) == "k + col");
  CHECK(text((*greater)[0].upper) == "K");
  // The boundary of k + col < K: where K - k - col changes sign.
  auto boundary = difference((*greater)[0].upper, (*greater)[0].lower);
  REQUIRE(boundary);
  CHECK(text(*boundary) == "K + -k + -col");
  // A tile of one column is the same along each row: no comparison to look at.
  auto whole_rows = row_intervals(l.let("whole_rows"), l.lets);
  REQUIRE(whole_rows);
  CHECK(whole_rows->empty());
  CHECK(!row_intervals(l.let("not_equal"), l.lets));
  CHECK(!row_intervals(l.let("squared"), l.lets));
}

TEST_CASE("difference: of integers only") {
  Lowered l = lowered("    let p = a + r;\n    let q = r + 1;");
  CHECK(!difference(l.form("p"), l.form("q")));
  CHECK(text(*difference(l.form("q"), l.form("q"))) == "col + -col");
}
