// Checker unit tests: the types of expressions (literal adaptation, widening,
// broadcasting, symbolic shapes), compile-time folding, and each rule of the
// language with a test that fails when the rule is not enforced. Expected
// types and values are written by hand.
#include "irisc/checker.h"
#include "test_support.h"

#include <doctest/doctest.h>

using namespace irisc;

namespace {

// Parameters every snippet below may use.
const char* const kParams =
    "b: bool, i8v: i8, i16v: i16, i32v: i32, i64v: i64, u8v: u8, u16v: u16, u32v: u32, "
    "u64v: u64, h: f16, bh: bf16, f: f32, d: f64, p: *f32, s: sym *f32, flag: sym *i32, "
    "pi: *i32";

// Checks `stmts` in a kernel with compile-time parameters SIZE (no default)
// and BLOCK (default 8) and the parameters above.
std::unique_ptr<test::Run> check_body(const std::string& stmts) {
  return test::run(std::string("kernel k<SIZE: i32, BLOCK: i32 = 8>(") + kParams + ") {\n" + stmts +
                   "\n}\n");
}

// The type of `expr` (as `let e = expr;` sees it, before the binding
// materializes literals), or the diagnostics' kinds when it does not check.
struct Typed {
  std::string type;
  bool literal = false;
  std::vector<DiagKind> errors;
};
Typed type_of(const std::string& expr) {
  auto r = check_body("let e = " + expr + ";");
  Typed out;
  out.errors = r->kinds();
  if (const Stmt* s = r->binding("e")) {
    out.type = s->value->type.str();
    out.literal = s->value->type.literal;
  }
  return out;
}
std::string type_str(const std::string& expr) {
  Typed t = type_of(expr);
  CHECK_MESSAGE(t.errors.empty(), expr);
  return t.type;
}
// The single error `stmts` must produce.
void expect_error(const std::string& stmts, DiagKind kind) {
  auto r = check_body(stmts);
  CAPTURE(stmts);
  std::vector<DiagKind> errors;
  for (const Diagnostic& d : r->diagnostics)
    if (d.severity == Severity::Error) errors.push_back(d.kind);
  CHECK_MESSAGE(errors == std::vector<DiagKind>{kind}, "expected " << diag_info(kind).name);
}
void expect_ok(const std::string& stmts) {
  auto r = check_body(stmts);
  CAPTURE(stmts);
  std::string names;
  for (const Diagnostic& d : r->diagnostics) names += std::string(diag_info(d.kind).name) + ": " + d.message + "\n";
  CHECK_MESSAGE(r->diagnostics.empty(), names);
}
// The compile-time value of constant `name` in `program`.
std::optional<int64_t> const_value(const std::string& program, std::string_view name) {
  auto r = test::run(program);
  REQUIRE_MESSAGE(r->diagnostics.empty(), program);
  const ConstDecl* c = r->constant(name);
  REQUIRE(c);
  REQUIRE(c->binding);
  REQUIRE(c->binding->constant);
  return c->binding->constant->value;
}

const char* const kIntTypes[] = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"};

}  // namespace

// ------------------------------------------------------------------ types

TEST_CASE("checker: literals adapt to the typed operand") {
  CHECK(type_str("u8v + 1") == "u8");
  CHECK(type_str("1 + u8v") == "u8");
  CHECK(type_str("h * 0.5") == "f16");
  CHECK(type_str("bh - 2") == "bf16");   // an integer literal converts to a float
  CHECK(type_str("d + 1") == "f64");
  CHECK(type_str("i64v * 3") == "i64");
  CHECK(type_str("u64v < 7") == "bool");
  // Two literals stay a literal: a float if either is one.
  Typed both = type_of("1 + 2.5");
  CHECK(both.type == "f32");
  CHECK(both.literal);
  Typed ints = type_of("2 * 3");
  CHECK(ints.type == "i32");
  CHECK(ints.literal);
  // A binding takes the default type, no longer a literal.
  auto r = check_body("let x = 7; let y = 1.5;");
  CHECK(r->diagnostics.empty());
  CHECK(r->binding("x")->binding->type.str() == "i32");
  CHECK_FALSE(r->binding("x")->binding->type.literal);
  CHECK(r->binding("y")->binding->type.str() == "f32");
  // A float literal never becomes an integer.
  CHECK(type_of("i32v + 1.0").errors == std::vector<DiagKind>{DiagKind::IncompatibleOperands});
  expect_error("let x: i64 = 2.0;", DiagKind::CannotConvert);
  expect_ok("let x: u8 = 255; let y: f16 = 1; let z: bf16 = 2.5; let w: f64 = 1;");
  // ... as long as the value fits the type it adapts to.
  expect_error("let x: u8 = 256;", DiagKind::ConstantOutOfRange);
  expect_error("let x: i8 = -129;", DiagKind::ConstantOutOfRange);
  expect_error("let x = u16v + 65536;", DiagKind::ConstantOutOfRange);
  expect_error("let x: f16 = 65505;", DiagKind::ConstantOutOfRange);
  expect_error("let x = 2147483648;", DiagKind::ConstantOutOfRange);  // bound as i32
  expect_ok("let x: i8 = -128; let y = u16v + 65535; let z: f16 = -65504; let w: i64 = 1 << 62;");
}

TEST_CASE("checker: integers widen within their signedness, floats by rank") {
  CHECK(type_str("i8v + i16v") == "i16");
  CHECK(type_str("i16v + i64v") == "i64");
  CHECK(type_str("i32v * i64v") == "i64");
  CHECK(type_str("u8v + u32v") == "u32");
  CHECK(type_str("u16v | u64v") == "u64");
  CHECK(type_str("h + f") == "f32");
  CHECK(type_str("bh + f") == "f32");
  CHECK(type_str("h * d") == "f64");
  CHECK(type_str("bh / d") == "f64");
  CHECK(type_str("f - d") == "f64");
  for (const char* expr : {"i32v + u32v", "u8v + i16v", "i8v + u64v", "i32v + f", "u8v + h",
                           "h + bh", "bh * h", "b + i32v"}) {
    CAPTURE(expr);
    CHECK(type_of(expr).errors == std::vector<DiagKind>{DiagKind::IncompatibleOperands});
  }
  // The same rules for implicit conversions.
  expect_ok("let a: i64 = i8v; let c: u64 = u16v; let e: f64 = h; let g: f32 = bh;");
  expect_error("let a: i16 = u8v;", DiagKind::CannotConvert);
  expect_error("let a: i32 = i64v;", DiagKind::CannotConvert);
  expect_error("let a: f16 = bh;", DiagKind::CannotConvert);
  expect_error("let a: bf16 = h;", DiagKind::CannotConvert);
  expect_error("let a: f32 = d;", DiagKind::CannotConvert);
  expect_error("let a: f32 = i32v;", DiagKind::CannotConvert);
}

TEST_CASE("checker: f16 and bf16 are incompatible everywhere") {
  CHECK(type_of("h + bh").errors == std::vector<DiagKind>{DiagKind::IncompatibleOperands});
  CHECK(type_of("h < bh").errors == std::vector<DiagKind>{DiagKind::IncompatibleOperands});
  CHECK(type_of("where(b, h, bh)").errors == std::vector<DiagKind>{DiagKind::IncompatibleOperands});
  expect_error("var x = h; x = bh;", DiagKind::CannotConvert);
  expect_error("let t: tile<f16, 4> = zeros(4, bf16);", DiagKind::CannotConvert);
  expect_error("let t: *f16 = p as *bf16;", DiagKind::InvalidCast);
  CHECK(type_str("h as bf16") == "bf16");  // only an explicit cast
}

TEST_CASE("checker: operator result types") {
  CHECK(type_str("-i8v") == "i8");
  CHECK(type_str("~u16v") == "u16");
  CHECK(type_str("!b") == "bool");
  CHECK(type_str("i64v << i8v") == "i64");   // the left operand's type
  CHECK(type_str("u8v >> i64v") == "u8");
  CHECK(type_str("b && b || b") == "bool");
  CHECK(type_str("b & b ^ b | b") == "bool");
  CHECK(type_str("i32v % 3") == "i32");
  CHECK(type_str("b == b") == "bool");
  CHECK(type_str("f as i32") == "i32");
  CHECK(type_str("i32v as f64 as bool") == "bool");
  CHECK(type_str("p + i64v") == "*f32");
  CHECK(type_str("u8v + p") == "*f32");
  CHECK(type_str("s - 1") == "sym *f32");    // pointer arithmetic keeps 'sym'
  CHECK(type_str("s as *f32") == "*f32");
  for (const char* expr : {"!i32v", "-b", "~f", "f % 2.0", "i32v && b", "f << 1", "p * 2",
                           "b < b", "f & f", "p == p", "-p"}) {
    CAPTURE(expr);
    CHECK(type_of(expr).errors == std::vector<DiagKind>{DiagKind::InvalidOperand});
  }
}

TEST_CASE("checker: broadcasting and shapes") {
  CHECK(type_str("arange(8)") == "tile<i32, 8>");
  CHECK(type_str("arange(8) + 1") == "tile<i32, 8>");
  CHECK(type_str("f + zeros(8, f32)") == "tile<f32, 8>");
  CHECK(type_str("zeros(16, f16) * f") == "tile<f32, 16>");
  CHECK(type_str("arange(4) < i32v") == "tile<bool, 4>");
  CHECK(type_str("p + arange(4)") == "tile<*f32, 4>");
  CHECK(type_str("s + arange(4)") == "tile<sym *f32, 4>");
  CHECK(type_str("arange(4) as f64") == "tile<f64, 4>");
  CHECK(type_str("f as tile<f32, 2>") == "tile<f32, 2>");
  CHECK(type_str("where(arange(4) < 2, 1.0, h)") == "tile<f16, 4>");
  CHECK(type_str("full(4, u8v)") == "tile<u8, 4>");
  CHECK(type_str("full(4, 1)") == "tile<i32, 4>");
  CHECK(type_str("sum(arange(4) as u16)") == "u16");
  CHECK(type_str("load(p + arange(2), true)") == "tile<f32, 2>");
  CHECK(type_str("load(p)") == "f32");
  CHECK(type_of("arange(4) + arange(8)").errors == std::vector<DiagKind>{DiagKind::ShapeMismatch});
  CHECK(type_of("arange(4) == arange(2)").errors == std::vector<DiagKind>{DiagKind::ShapeMismatch});
  CHECK(type_of("where(arange(4) < 1, arange(8), 0)").errors ==
        std::vector<DiagKind>{DiagKind::ShapeMismatch});
  expect_error("let t: tile<i32, 4> = arange(8);", DiagKind::CannotConvert);
  expect_error("let t: i32 = arange(8);", DiagKind::CannotConvert);
  expect_ok("let t: tile<f32, 4> = 1.5;");  // a scalar converts to any tile
}

TEST_CASE("checker: symbolic shapes compare by their canonical text") {
  CHECK(type_str("arange(BLOCK)") == "tile<i32, BLOCK>");
  CHECK(type_str("arange(BLOCK * 2)") == "tile<i32, (BLOCK * 2)>");
  CHECK(type_str("zeros(SIZE, f32)") == "tile<f32, SIZE>");
  CHECK(type_str("arange(BLOCK) + arange(BLOCK)") == "tile<i32, BLOCK>");
  // A let bound to a compile-time value carries its symbol.
  auto r = check_body("let w = BLOCK * 2; let e = arange(w) + arange(BLOCK * 2);");
  CHECK(r->diagnostics.empty());
  CHECK(r->binding("e")->binding->type.str() == "tile<i32, (BLOCK * 2)>");
  // Different texts are different shapes, whatever the defaults.
  CHECK(type_of("arange(BLOCK) + arange(8)").errors == std::vector<DiagKind>{DiagKind::ShapeMismatch});
  CHECK(type_of("arange(BLOCK * 2) + arange(2 * BLOCK)").errors ==
        std::vector<DiagKind>{DiagKind::ShapeMismatch});
  CHECK(type_of("arange(SIZE) + arange(BLOCK)").errors ==
        std::vector<DiagKind>{DiagKind::ShapeMismatch});
  expect_ok("let t: tile<i32, BLOCK> = arange(BLOCK); let u: tile<f32, SIZE> = 0.0;");
  expect_error("let t: tile<i32, BLOCK> = arange(8);", DiagKind::CannotConvert);
  // The shape's value under the defaults is kept.
  auto v = check_body("let t = arange(BLOCK * 4);");
  REQUIRE(v->diagnostics.empty());
  const Type& t = v->binding("t")->binding->type;
  REQUIRE(t.shape);
  CHECK(t.shape->dims[0].value == 32);
  auto none = check_body("let t = arange(SIZE);");
  REQUIRE(none->diagnostics.empty());
  CHECK_FALSE(none->binding("t")->binding->type.shape->dims[0].value.has_value());
}

TEST_CASE("checker: 2-D tiles, NumPy broadcasting and shape operations") {
  // Adding an axis, and the outer sum of a column and a row.
  CHECK(type_str("arange(8)[:, None]") == "tile<i32, 8, 1>");
  CHECK(type_str("arange(8)[None, :]") == "tile<i32, 1, 8>");
  CHECK(type_str("arange(8)[:, None] * 16 + arange(4)[None, :]") == "tile<i32, 8, 4>");
  // A 1-D tile of N is a row (1, N) against a 2-D one; symbolic sizes stay symbolic.
  CHECK(type_str("zeros((4, BLOCK), i32) + arange(BLOCK)") == "tile<i32, 4, BLOCK>");
  CHECK(type_str("where(arange(4)[:, None] < 2, zeros((4, 8), f32), 1.0)") == "tile<f32, 4, 8>");
  CHECK(type_of("zeros((4, 8), i32) + arange(4)").errors == std::vector<DiagKind>{DiagKind::ShapeMismatch});
  CHECK(type_of("zeros((4, 8), i32) + zeros((8, 4), i32)").errors == std::vector<DiagKind>{DiagKind::ShapeMismatch});
  // A symbolic size never broadcasts, even where its default is 1.
  CHECK(type_of("zeros((BLOCK, 8), i32) + zeros((4, 8), i32)").errors ==
        std::vector<DiagKind>{DiagKind::ShapeMismatch});
  CHECK(type_str("trans(zeros((4, 8), f32))") == "tile<f32, 8, 4>");
  CHECK(type_str("reshape(arange(32), (4, 8))") == "tile<i32, 4, 8>");
  CHECK(type_str("reshape(zeros((4, 8), f32), 32)") == "tile<f32, 32>");
  CHECK(type_str("full((2, 4), 1.5)") == "tile<f32, 2, 4>");
  CHECK(type_str("arange((2, 4))") == "tile<i32, 2, 4>");
  // Reductions: the whole tile, or along an axis.
  CHECK(type_str("sum(zeros((4, 8), f32))") == "f32");
  CHECK(type_str("sum(zeros((4, 8), f32), axis = 1)") == "tile<f32, 4>");
  CHECK(type_str("max(zeros((4, 8), i64), axis = 0)") == "tile<i64, 8>");
  CHECK(type_str("min(arange(8), 0)") == "i32");
  // dot: (M, K) x (K, N) in f32, i32 for i8.
  CHECK(type_str("dot(zeros((4, 8), bf16), zeros((8, 2), bf16))") == "tile<f32, 4, 2>");
  CHECK(type_str("dot(zeros((4, 8), i8), zeros((8, 2), i8), zeros((4, 2), i32))") == "tile<i32, 4, 2>");
  CHECK(type_of("dot(zeros((4, 8), f32), zeros((4, 8), f32))").errors ==
        std::vector<DiagKind>{DiagKind::DotShapeMismatch});
  CHECK(type_of("dot(zeros((4, 8), f16), zeros((8, 4), bf16))").errors ==
        std::vector<DiagKind>{DiagKind::DotElementType});
  CHECK(type_of("dot(zeros((4, 8), f16), zeros((8, 4), f16), zeros((4, 4), f16))").errors ==
        std::vector<DiagKind>{DiagKind::DotAccumulator});
  expect_ok("let t: tile<f32, 4, BLOCK> = 0.0; var acc = zeros((4, 4), f32); acc = dot(t, trans(t), acc);");
  expect_error("let t: tile<f32, 4, 8> = zeros((8, 4), f32);", DiagKind::CannotConvert);
}

TEST_CASE("checker: tile types in device functions") {
  auto r = test::run(
      "const N = 16;\n"
      "device scale(t: tile<f32, N>, k: f32) -> tile<f32, N> { return t * k; }\n"
      "device first(t: tile<*f32, 4>) -> *f32 { return t; }\n"
      "kernel k(x: *f32) { let y = scale(load(x + arange(N)), 2.0); store(x + arange(16), y); }\n");
  // A tile does not convert to a scalar result.
  CHECK(r->kinds() == std::vector<DiagKind>{DiagKind::CannotConvert});
  const Function* scale = r->function("scale");
  REQUIRE(scale);
  REQUIRE(scale->param_types.size() == 2);
  CHECK(scale->param_types[0].str() == "tile<f32, 16>");
  CHECK(scale->result.str() == "tile<f32, 16>");
  CHECK(r->binding("y")->binding->type.str() == "tile<f32, 16>");
}

// ------------------------------------------------------------ constants

TEST_CASE("checker: compile-time folding computes exact values") {
  struct Case {
    const char* expr;
    int64_t value;
  };
  const Case cases[] = {
      {"1 + 2 * 3", 7},          {"(1 + 2) * 3", 9},       {"7 / 2", 3},
      {"-7 / 2", -3},            {"-7 % 3", -1},           {"7 % -3", 1},
      {"(1 << 62) as i64", int64_t{1} << 62},                        {"-8 >> 1", -4},
      {"0x10 + 0b11", 19},       {"1_000 - 1", 999},       {"~5", -6},
      {"-(3 - 5)", 2},           {"!true", 0},             {"!false", 1},
      {"3 < 4", 1},              {"4 <= 3", 0},            {"5 > 5", 0},
      {"5 >= 5", 1},             {"2 == 2", 1},            {"2 != 2", 0},
      {"true && false", 0},      {"true || false", 1},     {"5 & 3", 1},
      {"5 | 3", 7},              {"5 ^ 3", 6},             {"9223372036854775807 as i64", INT64_MAX},
      {"(-9223372036854775807 - 1) as i64", INT64_MIN},             {"300 as u8", 44},
      {"(2 > 1) as i32 + 1", 2}, {"A * 2", 20},            {"A / 3 % 2 << 4", 16},
      // `as` wraps compile-time values exactly as it converts at run time.
      {"-1 as u32", 4294967295}, {"5 as bool", 1},          {"128 as i8", -128},
      {"70000 as i16", 4464},    {"-1 as u64", -1},
  };
  for (const Case& c : cases) {
    CAPTURE(c.expr);
    CHECK(const_value(std::string("const A = 10;\nconst X = ") + c.expr + ";\n", "X") == c.value);
  }
}

TEST_CASE("checker: values depending on compile-time parameters stay symbolic") {
  auto r = test::run("kernel k<C: i32, B: i32 = 8>() { let x = B * 2 + 1; let y = C - B; let z = 3; }");
  REQUIRE(r->diagnostics.empty());
  const auto& x = r->binding("x")->binding->constant;
  REQUIRE(x);
  CHECK(x->symbolic);
  CHECK(x->symbol == "((B * 2) + 1)");
  CHECK(x->value == 17);  // under the default
  const auto& y = r->binding("y")->binding->constant;
  REQUIRE(y);
  CHECK(y->symbol == "(C - B)");
  CHECK_FALSE(y->value.has_value());  // C has no default
  const auto& z = r->binding("z")->binding->constant;
  REQUIRE(z);
  CHECK_FALSE(z->symbolic);
  CHECK(z->text() == "3");
  CHECK(z->value == 3);
}

TEST_CASE("checker: compile-time errors: overflow and division by zero, once each") {
  for (const char* expr : {"9223372036854775807 + 1", "1 << 63", "1 << 64", "-(-9223372036854775807 - 1)",
                           "4611686018427387904 * 2", "(-9223372036854775807 - 1) / -1",
                           "9223372036854775808"}) {
    CAPTURE(expr);
    auto r = test::run(std::string("const X = ") + expr + ";");
    CHECK(r->kinds() == std::vector<DiagKind>{DiagKind::ConstantOverflow});
  }
  for (const char* expr : {"1 / 0", "1 % 0", "4 / (2 - 2)"}) {
    CAPTURE(expr);
    auto r = test::run(std::string("const X = ") + expr + ";");
    CHECK(r->kinds() == std::vector<DiagKind>{DiagKind::ConstantDivisionByZero});
  }
}

// ---------------------------------------------------------------- rules

TEST_CASE("rule: '@' applies only to pointers derived from a 'sym' pointer") {
  CHECK(type_str("s @ 1") == "*f32");  // translated: no longer symmetric
  CHECK(type_str("s + arange(4) @ 1") == "tile<*f32, 4>");
  CHECK(type_str("(s + 1) - 1 @ 1") == "*f32");
  CHECK(type_str("where(b, s, s + 1) @ 0") == "*f32");
  expect_ok("let q = s + 4; var v: sym *f32 = q; v = v + 1; let t = v @ 1;");
  expect_error("let t = p @ 1;", DiagKind::TranslateNonSymmetric);
  expect_error("let t = p + arange(4) @ 1;", DiagKind::TranslateNonSymmetric);
  expect_error("let t = (s as *f32) @ 1;", DiagKind::TranslateNonSymmetric);
  expect_error("let t = (s @ 1) @ 2;", DiagKind::TranslateNonSymmetric);
  expect_error("let q = s @ 1; let t = q + 1 @ 2;", DiagKind::TranslateNonSymmetric);
  expect_error("let t = i32v @ 1;", DiagKind::TranslateNonPointer);
  expect_error("let t = arange(4) @ 1;", DiagKind::TranslateNonPointer);
  expect_error("let t = f @ 1;", DiagKind::TranslateNonPointer);
  // 'sym' cannot be gained back.
  expect_error("let t: sym *f32 = s @ 1;", DiagKind::CannotConvert);
  expect_error("let t = (s @ 1) as sym *f32;", DiagKind::InvalidCast);
  // Device functions keep the distinction too.
  auto r = test::run("device g(q: sym *f32) -> *f32 { return q @ 1; }\n"
                     "device h(q: *f32) -> *f32 { return q @ 1; }\n");
  CHECK(r->kinds() == std::vector<DiagKind>{DiagKind::TranslateNonSymmetric, DiagKind::PointerFrom});
}

TEST_CASE("rule: the note names where a non-symmetric pointer came from") {
  auto r = check_body("let q = s @ 1;\nlet t = q + 1 @ 2;");
  REQUIRE(r->kinds() == std::vector<DiagKind>{DiagKind::TranslateNonSymmetric, DiagKind::PointerFrom});
  CHECK(r->diagnostics[1].message == "the pointer comes from 'q', declared here with type '*f32'");
  CHECK(r->where(r->diagnostics[1].range.Start) == "2:5");  // the 'q' of `let q`
  auto t = check_body("let t = (s @ 1) + 4 @ 2;");
  REQUIRE(t->kinds() == std::vector<DiagKind>{DiagKind::TranslateNonSymmetric,
                                              DiagKind::PointerTranslatedHere});
  CHECK(test::Run::text(t->diagnostics[1].range) == "s @ 1");
}

TEST_CASE("rule: the rank after '@' is an integer scalar") {
  for (const char* type : kIntTypes) {
    CAPTURE(type);
    expect_ok(std::string("let r: ") + type + " = 1; let t = s @ r;");
  }
  expect_ok("let t = s @ rank() + 1; let u = s @ 0;");
  expect_error("let t = s @ f;", DiagKind::RankNotIntegerScalar);
  expect_error("let t = s @ 1.0;", DiagKind::RankNotIntegerScalar);
  expect_error("let t = s @ b;", DiagKind::RankNotIntegerScalar);
  expect_error("let t = s @ arange(4);", DiagKind::RankNotIntegerScalar);
  expect_error("let t = s @ p;", DiagKind::RankNotIntegerScalar);
}

TEST_CASE("rule: masks are bool and match the access's shape") {
  expect_ok("let o = arange(4); let x = load(p + o, o < 2); store(p + o, x, o > 0);");
  expect_ok("let o = arange(4); let x = load(p + o, b); store(p + o, 1.0, true);");  // scalar masks broadcast
  expect_ok("let x = atomic_add(pi + arange(4), 1, arange(4) < 2, sem = relaxed, scope = gpu);");
  expect_error("let x = load(p + arange(4), arange(8) < 2);", DiagKind::MaskShapeMismatch);
  expect_error("let x = load(p, arange(4) < 2);", DiagKind::MaskShapeMismatch);
  expect_error("store(p + arange(BLOCK), 1.0, arange(8) < 2);", DiagKind::MaskShapeMismatch);
  expect_error("let x = atomic_or(pi + arange(4), 1, arange(2) < 1, sem = relaxed, scope = gpu);",
               DiagKind::MaskShapeMismatch);
  expect_error("let x = load(p, 1);", DiagKind::MaskNotBool);
  expect_error("store(p + arange(4), 1.0, arange(4));", DiagKind::MaskNotBool);
  expect_error("let x = atomic_add(pi, 1, mask = f, sem = relaxed, scope = gpu);",
               DiagKind::MaskNotBool);
}

TEST_CASE("rule: a load only acquires, a store only releases") {
  struct Case {
    const char* call;  // with {} for the order
    bool load_like;    // rejects release, acq_rel
    bool store_like;   // rejects acquire, acq_rel
    bool fence;        // rejects relaxed
  };
  const Case cases[] = {
      {"let x = atomic_load(flag, sem = {}, scope = sys);", true, false, false},
      {"wait_until(flag, eq, 1, sem = {}, scope = sys);", true, false, false},
      {"atomic_store(flag, 1, sem = {}, scope = sys);", false, true, false},
      {"signal(flag, 1, sem = {}, scope = sys);", false, true, false},
      {"signal(flag, 1, op = set, sem = {}, scope = sys);", false, true, false},
      {"signal(flag, 1, op = add, sem = {}, scope = sys);", false, false, false},
      {"let x = atomic_add(flag, 1, sem = {}, scope = sys);", false, false, false},
      {"let x = atomic_xchg(flag, 1, sem = {}, scope = sys);", false, false, false},
      {"let x = atomic_cas(flag, 0, 1, sem = {}, scope = sys);", false, false, false},
      {"fence(sem = {}, scope = sys);", false, false, true},
  };
  for (const Case& c : cases) {
    for (const char* order : {"relaxed", "acquire", "release", "acq_rel"}) {
      std::string call = c.call;
      call.replace(call.find("{}"), 2, order);
      std::string o = order;
      if (c.load_like && (o == "release" || o == "acq_rel"))
        expect_error(call, DiagKind::OrderNotForLoad);
      else if (c.store_like && (o == "acquire" || o == "acq_rel"))
        expect_error(call, DiagKind::OrderNotForStore);
      else if (c.fence && o == "relaxed")
        expect_error(call, DiagKind::RelaxedFence);
      else
        expect_ok(call);
    }
  }
}

TEST_CASE("rule: tile sizes, program axes, constants and defaults are compile-time") {
  expect_ok("let m = 4; let a = arange(m) + arange(4); let z = zeros(BLOCK, f32); "
            "let g = full(SIZE * 2, 1); let x = program_id(m - 4) + num_programs(2);");
  expect_error("let a = arange(i32v);", DiagKind::NotCompileTime);
  expect_error("var v = 4; let a = arange(v);", DiagKind::NotCompileTime);
  expect_error("let a = zeros(rank(), f32);", DiagKind::NotCompileTime);
  expect_error("let a = full(world_size(), 1);", DiagKind::NotCompileTime);
  expect_error("let a = program_id(i32v);", DiagKind::NotCompileTime);
  expect_error("for i in 0 .. 2 { let a = num_programs(i); }", DiagKind::NotCompileTime);
  expect_error("let t: tile<f32, i32v> = 0.0;", DiagKind::NotCompileTime);
  auto ct = test::run("kernel k<A: i32 = 2, B: i32 = rank(), C: i32 = A * 4>() { }");
  CHECK(ct->kinds() == std::vector<DiagKind>{DiagKind::NotCompileTime});
  auto c = test::run("const A = 4; const B = A * 2; const C = world_size();");
  CHECK(c->kinds() == std::vector<DiagKind>{DiagKind::NotCompileTime});
  auto call = test::run("device f() -> i32 { return 1; }\nconst A = f();");
  CHECK(call->kinds() == std::vector<DiagKind>{DiagKind::NotCompileTime});
  // A float is not a compile-time value of an integer parameter (one error).
  auto f = test::run("kernel k<A: i32 = 2.0>() { }");
  CHECK(f->kinds() == std::vector<DiagKind>{DiagKind::CannotConvert});
  expect_error("let a = program_id(3);", DiagKind::AxisOutOfRange);
  expect_error("let a = program_id(-1);", DiagKind::AxisOutOfRange);
}

TEST_CASE("rule: a tile's size is a positive power of two, at most 2^20") {
  for (int64_t n = -3; n <= 70; ++n) {
    CAPTURE(n);
    bool power_of_two = n > 0 && (n & (n - 1)) == 0;
    std::string stmts = "let a = arange(" + std::to_string(n) + ");";
    if (power_of_two)
      expect_ok(stmts);
    else
      expect_error(stmts, DiagKind::TileSizeNotPowerOfTwo);
  }
  expect_ok("let a = zeros(1048576, u8);");
  expect_error("let a = zeros(1048577, u8);", DiagKind::TileSizeNotPowerOfTwo);
  expect_error("let a = zeros(2097152, u8);", DiagKind::TileSizeTooLarge);
  expect_error("let a = arange(BLOCK * 3);", DiagKind::TileSizeNotPowerOfTwo);  // 24 by default
  expect_ok("let a = arange(SIZE * 3);");  // no default: checked when instantiated
  expect_error("let t: tile<f32, 12> = 0.0;", DiagKind::TileSizeNotPowerOfTwo);
  expect_error("let t = full(0, 1);", DiagKind::TileSizeNotPowerOfTwo);
}

TEST_CASE("rule: names resolve, in scope") {
  expect_error("let a = missing;", DiagKind::UndeclaredName);
  expect_error("{ let inner = 1; } let a = inner;", DiagKind::UndeclaredName);
  expect_error("for i in 0 .. 4 { } let a = i;", DiagKind::UndeclaredName);
  expect_error("let a = undefined_function(1);", DiagKind::UndeclaredName);
  expect_ok("let a = 1; { let a = a + 1; { let b = a; } }");
  auto other = test::run("kernel a(n: i32) { }\nkernel b() { let x = n; }");
  CHECK(other->kinds() == std::vector<DiagKind>{DiagKind::UndeclaredName});
  auto binding = check_body("let a = i32v + 1; let c = a;");
  REQUIRE(binding->diagnostics.empty());
  const Expr* use = binding->binding("c")->value;
  REQUIRE(use->binding);
  CHECK(use->binding == binding->binding("a")->binding);
  CHECK(use->binding->kind == Binding::Kind::Let);
}

TEST_CASE("rule: nothing is used before it is bound") {
  auto r = check_body("let a = later;\nlet later = 1;");
  REQUIRE(r->kinds() == std::vector<DiagKind>{DiagKind::UsedBeforeBound, DiagKind::BoundHere});
  CHECK(r->where(r->diagnostics[0].range.Start) == "2:9");
  CHECK(r->where(r->diagnostics[1].range.Start) == "3:5");
  expect_error("let c = c + 1;", DiagKind::UsedBeforeBound);
  expect_error("for i in 0 .. i { }", DiagKind::UsedBeforeBound);
  auto consts = test::run("const A = B;\nconst B = 1;");
  CHECK(consts->kinds() == std::vector<DiagKind>{DiagKind::UsedBeforeBound, DiagKind::BoundHere});
  // Functions may be used before their definition.
  auto fns = test::run("kernel k() { let x = f(); }\ndevice f() -> i32 { return 1; }");
  CHECK(fns->diagnostics.empty());
}

TEST_CASE("checker: calls bind arguments by position and name") {
  auto r = check_body("let x = load(p, other = 1.0, mask = b); fence(release, gpu); "
                      "wait_until(flag, op = ge, value = 1, sem = acquire, scope = block);");
  REQUIRE(r->diagnostics.empty());
  const Expr* load = r->binding("x")->value;
  REQUIRE(load->call->resolved_args.size() == 3);
  CHECK(test::Run::text(load->call->resolved_args[0]->range) == "p");
  CHECK(test::Run::text(load->call->resolved_args[1]->range) == "b");
  CHECK(test::Run::text(load->call->resolved_args[2]->range) == "1.0");
  const auto& body = r->function("k")->body->stmts;
  const Expr* fence = body[1]->value;
  CHECK(fence->call->enum_args == std::vector<int>{2, 1});  // release, gpu
  const Expr* wait = body[2]->value;
  CHECK(wait->call->enum_args == std::vector<int>{-1, 5, -1, 1, 0});  // ge, acquire, block
  auto omitted = check_body("let x = load(p);");
  REQUIRE(omitted->diagnostics.empty());
  const Expr* l = omitted->binding("x")->value;
  CHECK(l->call->resolved_args[1] == nullptr);
  CHECK(l->call->resolved_args[2] == nullptr);
}

TEST_CASE("checker: a file that checks cleanly is marked ok") {
  auto r = test::run("kernel k(p: *f32) { store(p, 1.0); }");
  CHECK(r->diagnostics.empty());
  CHECK(r->result.ok);
  auto bad = test::run("kernel k(p: *f32) { store(p, true); }");
  CHECK(bad->kinds() == std::vector<DiagKind>{DiagKind::CannotConvert});
  CHECK_FALSE(bad->result.ok);
}
