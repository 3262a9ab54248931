// Parser unit tests: tree shapes and precedence, source ranges, statements and
// items, error recovery and the nesting limits. Expected trees are written
// by hand as s-expressions; the printer below is the tests' own.
#include "irisc/parser.h"
#include "test_support.h"

#include <doctest/doctest.h>

using namespace irisc;
using test::Run;

namespace {

// (op lhs rhs), (op operand), (as x type), (@ ptr rank), (call f a name=b),
// (axisA x) for an added axis A, (shape m n);
// literals, names and types as written.
std::string sexpr(const Expr* e) {
  switch (e->kind) {
    case ExprKind::IntLiteral:
    case ExprKind::FloatLiteral:
    case ExprKind::BoolLiteral:
    case ExprKind::Name: return std::string(Run::text(e->range));
    case ExprKind::TypeValue: return "type:" + std::string(Run::text(e->range));
    case ExprKind::Unary:
      return "(" + std::string(token_kind_text(e->op)) + " " + sexpr(e->operands[0]) + ")";
    case ExprKind::Binary:
      return "(" + std::string(token_kind_text(e->op)) + " " + sexpr(e->operands[0]) + " " +
             sexpr(e->operands[1]) + ")";
    case ExprKind::Cast:
      return "(as " + sexpr(e->operands[0]) + " " +
             std::string(Run::text(e->type_syntax->range)) + ")";
    case ExprKind::Translate:
      return "(@ " + sexpr(e->operands[0]) + " " + sexpr(e->operands[1]) + ")";
    case ExprKind::AddAxis: return "(axis" + std::to_string(e->int_value) + " " + sexpr(e->operands[0]) + ")";
    case ExprKind::Shape: return "(shape " + sexpr(e->operands[0]) + " " + sexpr(e->operands[1]) + ")";
    case ExprKind::Call: {
      std::string out = "(call " + std::string(e->name);
      if (!e->call->ct_args.empty()) {
        out += "<";
        for (const Expr* a : e->call->ct_args) out += (out.back() == '<' ? "" : " ") + sexpr(a);
        out += ">";
      }
      for (const CallArg& a : e->call->args)
        out += " " + (a.name.empty() ? "" : std::string(a.name) + "=") + sexpr(a.value);
      return out + ")";
    }
  }
  return "?";
}

// Parses `let e = <text>;` in a kernel and returns the tree of the value.
std::string parse_expr(const std::string& text) {
  auto r = test::run("kernel k() { let e = " + text + "; }", Stage::Ast);
  REQUIRE_MESSAGE(r->diagnostics.empty(), text);
  const Stmt* s = r->binding("e");
  REQUIRE(s);
  return sexpr(s->value);
}

// An expression and the tree it parses to.
struct Case {
  const char* text;
  const char* tree;
};
void check_trees(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK(parse_expr(c.text) == c.tree);
  }
}

std::string kernel_with(const std::string& body) { return "kernel k(n: i32) {\n" + body + "\n}\n"; }

}  // namespace

TEST_CASE("parser: '@' binds loosest of all operators") {
  auto r = test::run("kernel k() { let e = dst + rank() * n + offs @ r; }", Stage::Ast);
  REQUIRE(r->diagnostics.empty());
  const Expr* e = r->binding("e")->value;
  // Translate(Binary(+, Binary(+, dst, Binary(*, rank(), n)), offs), r)
  REQUIRE(e->kind == ExprKind::Translate);
  REQUIRE(e->operand_list().size() == 2);
  const Expr* pointer = e->operands[0];
  const Expr* rank = e->operands[1];
  CHECK(rank->kind == ExprKind::Name);
  CHECK(rank->name == "r");
  REQUIRE(pointer->kind == ExprKind::Binary);
  CHECK(pointer->op == TokenKind::Plus);
  const Expr* offs = pointer->operands[1];
  CHECK(offs->kind == ExprKind::Name);
  CHECK(offs->name == "offs");
  const Expr* inner = pointer->operands[0];
  REQUIRE(inner->kind == ExprKind::Binary);
  CHECK(inner->op == TokenKind::Plus);
  CHECK(inner->operands[0]->kind == ExprKind::Name);
  CHECK(inner->operands[0]->name == "dst");
  const Expr* product = inner->operands[1];
  REQUIRE(product->kind == ExprKind::Binary);
  CHECK(product->op == TokenKind::Star);
  CHECK(product->operands[0]->kind == ExprKind::Call);
  CHECK(product->operands[0]->name == "rank");
  CHECK(product->operands[0]->call->args.empty());
  CHECK(product->operands[1]->name == "n");
  // The translation covers the whole expression.
  CHECK(Run::text(e->range) == "dst + rank() * n + offs @ r");
}

TEST_CASE("parser: every precedence level, loosest to tightest") {
  check_trees({
      // '@' over '||'; its right side is a whole logical_or.
      {"a || b @ c || d", "(@ (|| a b) (|| c d))"},
      {"p @ r + 1", "(@ p (+ r 1))"},
      {"(p @ r) + 1", "(+ (@ p r) 1)"},
      // Each binary level against the next tighter one, both ways round.
      {"a || b && c", "(|| a (&& b c))"},
      {"a && b || c", "(|| (&& a b) c)"},
      {"a && b | c", "(&& a (| b c))"},
      {"a | b && c", "(&& (| a b) c)"},
      {"a | b ^ c", "(| a (^ b c))"},
      {"a ^ b | c", "(| (^ a b) c)"},
      {"a ^ b & c", "(^ a (& b c))"},
      {"a & b ^ c", "(^ (& a b) c)"},
      {"a & b == c", "(& a (== b c))"},
      {"a != b & c", "(& (!= a b) c)"},
      {"a == b < c", "(== a (< b c))"},
      {"a >= b != c", "(!= (>= a b) c)"},
      {"a <= b << c", "(<= a (<< b c))"},
      {"a >> b > c", "(> (>> a b) c)"},
      {"a << b + c", "(<< a (+ b c))"},
      {"a - b >> c", "(>> (- a b) c)"},
      {"a + b * c", "(+ a (* b c))"},
      {"a / b - c", "(- (/ a b) c)"},
      {"a % b as i64", "(% a (as b i64))"},
      {"a as f32 * b", "(* (as a f32) b)"},
      {"-a as f32", "(as (- a) f32)"},
      {"!a as i32", "(as (! a) i32)"},
      {"~a * b", "(* (~ a) b)"},
      // Parentheses override.
      {"(a + b) * c", "(* (+ a b) c)"},
      {"a * (b + c)", "(* a (+ b c))"},
      {"((a))", "a"},
  });
}

TEST_CASE("parser: binary levels are left-associative, unary and casts chain") {
  CHECK(parse_expr("a - b - c") == "(- (- a b) c)");
  CHECK(parse_expr("a / b / c") == "(/ (/ a b) c)");
  CHECK(parse_expr("a < b < c") == "(< (< a b) c)");
  CHECK(parse_expr("a << b >> c") == "(>> (<< a b) c)");
  CHECK(parse_expr("a || b || c") == "(|| (|| a b) c)");
  CHECK(parse_expr("a == b != c") == "(!= (== a b) c)");
  CHECK(parse_expr("- - a") == "(- (- a))");
  CHECK(parse_expr("!~-a") == "(! (~ (- a)))");
  CHECK(parse_expr("x as i64 as f64") == "(as (as x i64) f64)");
}

TEST_CASE("parser: primaries: calls, named arguments, types as values, literals") {
  CHECK(parse_expr("f()") == "(call f)");
  CHECK(parse_expr("f(a, b + 1,)") == "(call f a (+ b 1))");
  CHECK(parse_expr("load(p, other = 0.0, mask = m)") == "(call load p other=0.0 mask=m)");
  CHECK(parse_expr("zeros(4, f32)") == "(call zeros 4 type:f32)");
  CHECK(parse_expr("zeros(4, sym *bf16)") == "(call zeros 4 type:sym *bf16)");
  CHECK(parse_expr("x as tile<f32, B * 2>") == "(as x tile<f32, B * 2>)");
  CHECK(parse_expr("f(g(h(1)))") == "(call f (call g (call h 1)))");
  CHECK(parse_expr("true && false") == "(&& true false)");

  auto r = test::run("kernel k() { let a = 0x1F; let b = 0b101; let c = 1_000; let d = 2.5e1; "
                     "let e = true; let f = false; let g = 18446744073709551615; }",
                     Stage::Ast);
  REQUIRE(r->diagnostics.empty());
  CHECK(r->binding("a")->value->int_value == 31);
  CHECK(r->binding("b")->value->int_value == 5);
  CHECK(r->binding("c")->value->int_value == 1000);
  CHECK(r->binding("d")->value->kind == ExprKind::FloatLiteral);
  CHECK(r->binding("d")->value->float_value == doctest::Approx(25.0));
  CHECK(r->binding("e")->value->bool_value == true);
  CHECK(r->binding("f")->value->kind == ExprKind::BoolLiteral);
  CHECK(r->binding("f")->value->bool_value == false);
  CHECK(r->binding("g")->value->int_value == UINT64_MAX);
}

TEST_CASE("parser: compile-time arguments: '<' after a name, closed by '>' before '('") {
  check_trees({
      {"f<64, f32>(x)", "(call f<64 type:f32> x)"},
      {"f<B * 2, (A > C) as i32,>()", "(call f<(* B 2) (as (> A C) i32)>)"},
      {"f<B >> 1>(x) + 1", "(+ (call f<(>> B 1)> x) 1)"},
      // Comparisons where a token that a shift cannot hold comes first, or no '(' follows.
      {"a < b && c > (d)", "(&& (< a b) (> c d))"},
      {"a < b > c", "(> (< a b) c)"},
      {"a < (b) > 2", "(> (< a b) 2)"},
      // The one text that changes meaning, as in C#: an argument list.
      {"g(a < b, c > (d))", "(call g (call a<b c> d))"},
      {"g(a < b, (c > d))", "(call g (< a b) (> c d))"},
  });
}

TEST_CASE("parser: type parameters are types in their function only") {
  auto r = test::run("device f<N: i32, T: type in (f32, bf16,)>(x: tile<T, N>, p: *T) -> T { let y: sym *T = p; "
                     "return x as T; }\nkernel k(x: T) { }",
                     Stage::Ast);
  REQUIRE(r->diagnostics.size() == 1);
  CHECK(r->diagnostics[0].message == "expected a type, found identifier 'T'");
  const Function* f = r->module().items[0].function;
  REQUIRE(f->ct_params.size() == 2);
  CHECK(f->ct_params[1].is_type());
  CHECK(f->ct_params[1].admitted.size() == 2);
  CHECK(f->params[1].type->type_param == "T");
}

TEST_CASE("parser: adding an axis binds tighter than unary operators; shapes are parenthesised pairs") {
  CHECK(parse_expr("x[:, None]") == "(axis1 x)");
  CHECK(parse_expr("f(a)[None, :]") == "(axis0 (call f a))");
  CHECK(parse_expr("-x[:, None] * y[None, :]") == "(* (- (axis1 x)) (axis0 y))");
  CHECK(parse_expr("(a + b)[:, None]") == "(axis1 (+ a b))");
  CHECK(parse_expr("zeros((M, 2 * N), f32)") == "(call zeros (shape M (* 2 N)) type:f32)");
  CHECK(parse_expr("(x)") == "x");
  for (const char* bad : {"x[0]", "x[:, 0]", "x[None]", "x[:, None", "x[None, None]", "(a, b, c)"}) {
    auto r = test::run(std::string("kernel k() { let e = ") + bad + "; }", Stage::Ast);
    CHECK_MESSAGE(r->diagnostics.size() >= 1, bad);
  }
}

TEST_CASE("parser: source ranges are line:col spans of the text") {
  auto r = test::run(
      "kernel k(p: *f32) {\n"       // 1
      "    let e = a + b * c;\n"    // 2
      "    store(p @ 1, 2.0);\n"    // 3
      "    let t = x as f32;\n"     // 4
      "}\n",
      Stage::Ast);
  REQUIRE(r->diagnostics.empty());
  const Function* k = r->function("k");
  REQUIRE(k);
  CHECK(r->where(k->name_range) == "1:8-1:9");
  CHECK(r->where(k->params[0].range) == "1:10-1:11");
  CHECK(r->where(k->params[0].type->range) == "1:13-1:17");
  CHECK(r->where(k->body->range) == "1:19-5:2");
  const Stmt* e = r->binding("e");
  CHECK(r->where(e->range) == "2:5-2:23");
  CHECK(r->where(e->name_range) == "2:9-2:10");
  CHECK(r->where(e->value->range) == "2:13-2:22");
  CHECK(r->where(e->value->operands[1]->range) == "2:17-2:22");
  const Stmt* call = k->body->stmts[1];
  REQUIRE(call->kind == StmtKind::ExprStmt);
  CHECK(r->where(call->range) == "3:5-3:23");
  CHECK(r->where(call->value->range) == "3:5-3:22");
  CHECK(r->where(call->value->call->name_range) == "3:5-3:10");
  const Expr* translate = call->value->call->args[0].value;
  REQUIRE(translate->kind == ExprKind::Translate);
  CHECK(r->where(translate->range) == "3:11-3:16");
  const Expr* cast = r->binding("t")->value;
  REQUIRE(cast->kind == ExprKind::Cast);
  CHECK(r->where(cast->range) == "4:13-4:21");
}

TEST_CASE("parser: diagnostics are located at the offending token") {
  auto r = test::run("kernel k() {\n  let x 1;\n  let y = (2;\n}\n", Stage::Ast);
  REQUIRE(r->diagnostics.size() == 3);
  CHECK(r->diagnostics[0].kind == DiagKind::ExpectedToken);
  CHECK(r->where(r->diagnostics[0].range) == "2:9-2:10");  // the '1'
  CHECK(r->diagnostics[1].kind == DiagKind::ExpectedToken);
  CHECK(r->where(r->diagnostics[1].range.Start) == "3:13");  // the ';'
  CHECK(r->diagnostics[2].kind == DiagKind::ToMatchThis);
  CHECK(r->where(r->diagnostics[2].range.Start) == "3:11");  // the '('
  CHECK(r->diagnostics[2].severity == Severity::Note);
}

TEST_CASE("parser: statements") {
  auto r = test::run(
      "kernel k(n: i32) {\n"
      "    var a: i64 = 1;\n"
      "    if n < 0 { a = 1; } else if n == 0 { a += 2; } else { a <<= 3; }\n"
      "    for i in 0 .. n { continue; }\n"
      "    while a > 0 { break; }\n"
      "    { let b = 2; }\n"
      "    f(a);\n"
      "    return;\n"
      "}\n"
      "device d() -> i32 { return 1; }\n",
      Stage::Ast);
  REQUIRE(r->diagnostics.empty());
  const auto& body = r->function("k")->body->stmts;
  REQUIRE(body.size() == 7);

  CHECK(body[0]->kind == StmtKind::Var);
  CHECK(body[0]->name == "a");
  REQUIRE(body[0]->declared_type);
  CHECK(body[0]->declared_type->scalar == ScalarKind::I64);

  // An else-if chain nests an If in the else branch; the last else is a block.
  const Stmt* s = body[1];
  REQUIRE(s->kind == StmtKind::If);
  CHECK(sexpr(s->value) == "(< n 0)");
  CHECK(s->body->kind == StmtKind::Block);
  REQUIRE(s->else_body);
  REQUIRE(s->else_body->kind == StmtKind::If);
  CHECK(sexpr(s->else_body->value) == "(== n 0)");
  REQUIRE(s->else_body->else_body);
  CHECK(s->else_body->else_body->kind == StmtKind::Block);
  const Stmt* assign = s->body->stmts[0];
  CHECK(assign->kind == StmtKind::Assign);
  CHECK(assign->assign_op == TokenKind::Eq);
  CHECK(sexpr(assign->target) == "a");
  CHECK(s->else_body->body->stmts[0]->assign_op == TokenKind::PlusEq);
  CHECK(s->else_body->else_body->stmts[0]->assign_op == TokenKind::ShlEq);

  CHECK(body[2]->kind == StmtKind::For);
  CHECK(body[2]->name == "i");
  CHECK(sexpr(body[2]->low) == "0");
  CHECK(sexpr(body[2]->high) == "n");
  CHECK(body[2]->body->stmts[0]->kind == StmtKind::Continue);

  CHECK(body[3]->kind == StmtKind::While);
  CHECK(sexpr(body[3]->value) == "(> a 0)");
  CHECK(body[3]->body->stmts[0]->kind == StmtKind::Break);

  CHECK(body[4]->kind == StmtKind::Block);
  CHECK(body[4]->stmts[0]->kind == StmtKind::Let);
  CHECK(body[5]->kind == StmtKind::ExprStmt);
  CHECK(sexpr(body[5]->value) == "(call f a)");
  CHECK(body[6]->kind == StmtKind::Return);
  CHECK(body[6]->value == nullptr);
  const Stmt* ret = r->function("d")->body->stmts[0];
  CHECK(ret->kind == StmtKind::Return);
  CHECK(sexpr(ret->value) == "1");
}

TEST_CASE("parser: every compound assignment operator") {
  const std::pair<const char*, TokenKind> ops[] = {
      {"=", TokenKind::Eq},         {"+=", TokenKind::PlusEq},   {"-=", TokenKind::MinusEq},
      {"*=", TokenKind::StarEq},    {"/=", TokenKind::SlashEq},  {"%=", TokenKind::PercentEq},
      {"&=", TokenKind::AmpEq},     {"|=", TokenKind::PipeEq},   {"^=", TokenKind::CaretEq},
      {"<<=", TokenKind::ShlEq},    {">>=", TokenKind::ShrEq},
  };
  for (auto [text, kind] : ops) {
    CAPTURE(text);
    auto r = test::run(std::string("kernel k() { x ") + text + " y + 1; }", Stage::Ast);
    REQUIRE(r->diagnostics.empty());
    const Stmt* s = r->function("k")->body->stmts[0];
    CHECK(s->kind == StmtKind::Assign);
    CHECK(s->assign_op == kind);
    CHECK(sexpr(s->target) == "x");
    CHECK(sexpr(s->value) == "(+ y 1)");
  }
}

TEST_CASE("parser: items, parameters and types") {
  auto r = test::run(
      "import \"a\\\"b\\\\c\\n\\t.iris\";\n"
      "const A = 4;\n"
      "const B: i64 = A * 2;\n"
      "kernel k<N: i32 = 8, F: bool,>(p: sym *f32, t: *u8,) { }\n"
      "device d(x: tile<sym *f32, N * 2>) -> tile<bf16, 4> { return x; }\n",
      Stage::Ast);
  REQUIRE(r->diagnostics.empty());
  const auto& items = r->module().items;
  REQUIRE(items.size() == 5);
  REQUIRE(items[0].kind == Item::Kind::Import);
  CHECK(items[0].import->path == "a\"b\\c\n\t.iris");
  const ConstDecl* a = r->constant("A");
  REQUIRE(a);
  CHECK(a->type == nullptr);
  CHECK(sexpr(a->value) == "4");
  const ConstDecl* b = r->constant("B");
  REQUIRE(b);
  REQUIRE(b->type);
  CHECK(b->type->scalar == ScalarKind::I64);
  CHECK(sexpr(b->value) == "(* A 2)");

  const Function* k = r->function("k");
  REQUIRE(k);
  CHECK(k->is_kernel);
  REQUIRE(k->ct_params.size() == 2);
  CHECK(k->ct_params[0].name == "N");
  CHECK(sexpr(k->ct_params[0].default_value) == "8");
  CHECK(k->ct_params[1].name == "F");
  CHECK(k->ct_params[1].type->scalar == ScalarKind::Bool);
  CHECK(k->ct_params[1].default_value == nullptr);
  REQUIRE(k->params.size() == 2);
  CHECK(k->params[0].type->kind == TypeSyntax::Kind::Pointer);
  CHECK(k->params[0].type->sym);
  CHECK(k->params[0].type->scalar == ScalarKind::F32);
  CHECK_FALSE(k->params[1].type->sym);
  CHECK(k->params[1].type->scalar == ScalarKind::U8);

  const Function* d = r->function("d");
  REQUIRE(d);
  CHECK_FALSE(d->is_kernel);
  const TypeSyntax* x = d->params[0].type;
  REQUIRE(x->kind == TypeSyntax::Kind::Tile);
  REQUIRE(x->element->kind == TypeSyntax::Kind::Pointer);
  CHECK(x->element->sym);
  CHECK(sexpr(x->size) == "(* N 2)");
  REQUIRE(d->return_type);
  CHECK(d->return_type->kind == TypeSyntax::Kind::Tile);
  CHECK(d->return_type->element->scalar == ScalarKind::BF16);
}

TEST_CASE("parser: 'multinode' in front of 'kernel' and 'device' marks the function") {
  auto r = test::run(
      "multinode kernel k() { }\n"
      "kernel l() { }\n"
      "multinode device d() -> i32 { return 1; }\n"
      "device e() { }\n",
      Stage::Ast);
  REQUIRE(r->diagnostics.empty());
  CHECK(r->function("k")->multinode);
  CHECK(r->function("k")->is_kernel);
  CHECK_FALSE(r->function("l")->multinode);
  CHECK(r->function("d")->multinode);
  CHECK_FALSE(r->function("d")->is_kernel);
  CHECK_FALSE(r->function("e")->multinode);
}

TEST_CASE("parser: a compile-time default is a shift expression, not a comparison") {
  // `<N: i32 = 4 > 2>`: the '>' ends the list.
  auto r = test::run("kernel k<N: i32 = 1 << 2>() { }", Stage::Ast);
  CHECK(r->diagnostics.empty());
  CHECK(sexpr(r->function("k")->ct_params[0].default_value) == "(<< 1 2)");
  auto bad = test::run("kernel k<N: i32 = 4 > 2>() { }", Stage::Ast);
  CHECK(bad->kinds() == std::vector<DiagKind>{DiagKind::ExpectedToken});
}

TEST_CASE("parser: recovers at statements and items and reports every error") {
  auto r = test::run(
      "kernel a() { let x = ; let y = 1; }\n"
      "kernel b(n i32) { }\n"
      "kernel c() { let z = (1; let w = 2; }\n"
      "let stray = 3;\n"
      "kernel d() { let v = 1 }\n"
      "kernel e() { }\n",
      Stage::Ast);
  CHECK(r->kinds() == std::vector<DiagKind>{DiagKind::ExpectedExpression, DiagKind::ExpectedToken,
                                            DiagKind::ExpectedToken, DiagKind::ToMatchThis,
                                            DiagKind::ExpectedItem, DiagKind::ExpectedToken});
  // Each error is on its own line.
  std::vector<std::string> lines;
  for (const Diagnostic& d : r->diagnostics) lines.push_back(r->where(d.range.Start).substr(0, 2));
  CHECK(lines == std::vector<std::string>{"1:", "2:", "3:", "3:", "4:", "5:"});
  // The statements after an error are still parsed, and so are later items.
  REQUIRE(r->function("a"));
  REQUIRE(r->function("a")->body);
  REQUIRE(r->function("a")->body->stmts.size() == 1);
  CHECK(r->function("a")->body->stmts[0]->name == "y");
  REQUIRE(r->function("c"));
  REQUIRE(r->function("c")->body);
  REQUIRE(r->function("c")->body->stmts.size() == 1);
  CHECK(r->function("c")->body->stmts[0]->name == "w");
  CHECK(r->function("e"));
}

TEST_CASE("parser: a named argument followed by positional ones is reported, and parsing goes on") {
  auto r = test::run("kernel k() { f(a = 1, 2, 3); let x = ; }", Stage::Ast);
  CHECK(r->kinds() == std::vector<DiagKind>{DiagKind::PositionalAfterNamed,
                                            DiagKind::PositionalAfterNamed,
                                            DiagKind::ExpectedExpression});
}

TEST_CASE("parser: nesting limits stop the parse with exactly one error") {
  using test::repeat;
  auto one_error = [](const std::string& text, int limit) {
    auto r = test::run(text);  // through the checker: no phase may crash
    CHECK(r->kinds() == std::vector<DiagKind>{DiagKind::NestingTooDeep});
    if (!r->diagnostics.empty())
      CHECK(r->diagnostics[0].message ==
            "nesting is deeper than " + std::to_string(limit) + " levels");
    CHECK_FALSE(r->result.ok);
  };

  SUBCASE("parentheses: the function body counts as one level") {
    int ok_depth = kMaxNesting - 1;
    auto ok = test::run(kernel_with("let a = " + repeat("(", ok_depth) + "n" +
                                    repeat(")", ok_depth) + ";"));
    CHECK(ok->diagnostics.empty());
    int bad_depth = kMaxNesting;
    one_error(kernel_with("let a = " + repeat("(", bad_depth) + "n" + repeat(")", bad_depth) + ";"),
              kMaxNesting);
  }
  SUBCASE("10k parentheses, then more errors that are not reported") {
    one_error(kernel_with("let a = " + repeat("(", 10000) + "n" + repeat(")", 10000) +
                          ";\nlet b = ;\nlet c = undeclared;"),
              kMaxNesting);
  }
  SUBCASE("10k nested blocks") {
    one_error(kernel_with(repeat("{ ", 10000) + repeat("}", 10000)), kMaxNesting);
  }
  SUBCASE("10k unclosed blocks") { one_error(kernel_with(repeat("{ ", 10000)), kMaxNesting); }
  SUBCASE("10k unary operators") {
    one_error(kernel_with("let a = " + repeat("-", 10000) + "n;"), kMaxNesting);
  }
  SUBCASE("10k nested calls") {
    one_error(kernel_with("let a = " + repeat("f(", 10000) + "n" + repeat(")", 10000) + ";"),
              kMaxNesting);
  }
  SUBCASE("10k nested tile types") {
    one_error(kernel_with("let a = " + repeat("tile<f32, ", 10000) + "4" + repeat(" >", 10000) + ";"),
              kMaxNesting);
  }
  SUBCASE("10k else-if") {
    one_error(kernel_with("if true { }" + repeat(" else if true { }", 10000)), kMaxNesting);
  }
  SUBCASE("a 100k-term sum") {
    one_error(kernel_with("let a = n" + repeat(" + n", 100000) + ";"), kMaxExprHeight);
  }
  SUBCASE("100k chained casts") {
    one_error(kernel_with("let a = n" + repeat(" as i32", 100000) + ";"), kMaxExprHeight);
  }
  SUBCASE("a tall expression hidden in the sizes of nested tile types") {
    // Each level is shallow for the nesting count, but the checker recurses
    // through every size: the height counts across tile types.
    std::string e = "4";
    for (int i = 0; i < 100; ++i) e = "tile<f32, " + e + repeat(" + 1", 100) + ">";
    one_error(kernel_with("let a = zeros(4, " + e + ");"), kMaxExprHeight);
  }
  SUBCASE("just below the height limit, every phase handles the tree") {
    auto ok = test::run(kernel_with("let a = n" + repeat(" + n", kMaxExprHeight - 1) + ";"));
    CHECK(ok->diagnostics.empty());
    CHECK(ok->result.ok);
  }
}

TEST_CASE("parser: the nesting error is located where the limit is crossed") {
  std::string deep = test::repeat("(", 300) + "1" + test::repeat(")", 300);
  auto r = test::run("kernel k() {\n    let a = " + deep + ";\n}\n", Stage::Ast);
  REQUIRE(r->kinds() == std::vector<DiagKind>{DiagKind::NestingTooDeep});
  // Depth 1 is the body; parenthesis number 256 is the 257th level.
  CHECK(r->where(r->diagnostics[0].range.Start) == "2:" + std::to_string(13 + kMaxNesting - 1));
}
