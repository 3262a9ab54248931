// The parser: recursive descent, one function per rule of grammar/iris.ebnf,
// the rule written above each function.
//
// Error handling: a function that meets an unexpected token reports it and
// returns nullptr; statements and items then skip to a recovery point (`;`, `}`
// or the next item keyword), so one run reports many independent errors.
// Nesting beyond kMaxNesting (or an expression taller than kMaxExprHeight)
// stops the parse with one error instead of recursing towards a stack overflow.
#include "irisc/parser.h"

#include <algorithm>

namespace irisc {
namespace {

class Parser {
 public:
  Parser(const TokenList& tokens, Module& module, Diagnostics& diags)
      : tokens_(tokens), module_(module), diags_(diags) {}

  // file = { item } EOF ;
  void file() {
    while (!at(TokenKind::Eof) && !stopped_) {
      if (!item()) sync_item();
    }
  }

 private:
  // ------------------------------------------------------------ helpers
  const Token& tok() const { return tokens_[pos_]; }
  const Token& peek(size_t ahead = 1) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  bool at(TokenKind kind) const { return tok().kind == kind; }
  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool accept(TokenKind kind) {
    if (!at(kind)) return false;
    advance();
    return true;
  }
  llvm::SMLoc prev_end() const {
    return pos_ == 0 ? tok().loc() : tokens_[pos_ - 1].range().End;
  }
  llvm::SMRange from(llvm::SMLoc begin) const { return {begin, prev_end()}; }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::Eof: return "end of file";
      case TokenKind::Identifier: return fmt::format("identifier '{}'", t.text);
      case TokenKind::IntLiteral:
      case TokenKind::FloatLiteral:
      case TokenKind::StringLiteral: return fmt::format("{} {}", token_kind_text(t.kind), t.text);
      default: return fmt::format("'{}'", t.text);
    }
  }

  // Reports "expected X <context>, found Y" at the current token.
  void expected(std::string_view what, std::string_view context) {
    if (stopped_) return;
    diags_.error(DiagKind::ExpectedToken, tok().range(), what, context, describe(tok()));
  }
  bool expect(TokenKind kind, std::string_view context) {
    if (accept(kind)) return true;
    expected(fmt::format("'{}'", token_kind_text(kind)), context);
    return false;
  }
  // Expects the closer of a bracket pair, with a note at its opener.
  bool expect_closing(TokenKind kind, const Token& opener, std::string_view context) {
    if (accept(kind)) return true;
    if (stopped_) return false;
    expected(fmt::format("'{}'", token_kind_text(kind)), context);
    diags_.note(DiagKind::ToMatchThis, opener.range(), opener.text);
    return false;
  }

  // Counts nesting; false (with one error for the whole parse) when too deep.
  struct Nesting {
    Parser& p;
    explicit Nesting(Parser& parser) : p(parser) { ++p.depth_; }
    ~Nesting() { --p.depth_; }
    bool ok() {
      if (p.depth_ <= kMaxNesting) return true;
      p.too_deep(kMaxNesting);
      return false;
    }
  };
  void too_deep(int limit) {
    if (!stopped_) diags_.error(DiagKind::NestingTooDeep, tok().range(), limit);
    stopped_ = true;
  }

  // Skips to just after `;`, or to `}`, a statement keyword or the end.
  void sync_stmt() {
    while (!at(TokenKind::Eof)) {
      switch (tok().kind) {
        case TokenKind::Semi: advance(); return;
        case TokenKind::RBrace:
        case TokenKind::Let: case TokenKind::Var: case TokenKind::If: case TokenKind::For:
        case TokenKind::While: case TokenKind::Return: case TokenKind::Break:
        case TokenKind::Continue: case TokenKind::Kernel: case TokenKind::Device:
        case TokenKind::Multinode:
          return;
        case TokenKind::LBrace: skip_balanced(); break;
        default: advance();
      }
    }
  }
  // Skips to the next item keyword outside braces.
  void sync_item() {
    int depth = 0;
    while (!at(TokenKind::Eof)) {
      TokenKind k = tok().kind;
      if (depth == 0 && (k == TokenKind::Kernel || k == TokenKind::Device || k == TokenKind::Multinode ||
                         k == TokenKind::Const || k == TokenKind::Import))
        return;
      if (k == TokenKind::LBrace) ++depth;
      if (k == TokenKind::RBrace && depth > 0) --depth;
      advance();
    }
  }
  void skip_balanced() {
    int depth = 0;
    do {
      if (at(TokenKind::LBrace)) ++depth;
      if (at(TokenKind::RBrace)) --depth;
      advance();
    } while (depth > 0 && !at(TokenKind::Eof));
  }

  // --------------------------------------------------------------- items
  // item = import_decl | const_decl | kernel_def | device_def ;
  bool item() {
    type_params_.clear();
    switch (tok().kind) {
      case TokenKind::Import: return import_decl();
      case TokenKind::Const: return const_decl();
      case TokenKind::Kernel:
      case TokenKind::Device:
      case TokenKind::Multinode: return function_def();
      default:
        diags_.error(DiagKind::ExpectedItem, tok().range(), describe(tok()));
        advance();
        return false;
    }
  }

  // import_decl = "import" STRING ";" ;
  bool import_decl() {
    llvm::SMLoc begin = advance().loc();
    if (!at(TokenKind::StringLiteral)) {
      expected("a string literal", "after 'import'");
      return false;
    }
    const Token& path = advance();
    auto* decl = module_.make<ImportDecl>();
    decl->path = decode_string(path.text);
    decl->path_range = path.range();
    if (decl->path.empty()) diags_.error(DiagKind::EmptyImportPath, path.range());
    if (!expect(TokenKind::Semi, "after the import")) return false;
    decl->range = from(begin);
    module_.items.push_back({Item::Kind::Import, decl});
    return true;
  }

  static std::string decode_string(std::string_view quoted) {
    std::string out;
    for (size_t i = 1; i + 1 < quoted.size(); ++i) {
      char c = quoted[i];
      if (c == '\\') {
        char e = quoted[++i];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e == '0' ? '\0' : e;
      }
      out += c;
    }
    return out;
  }

  // const_decl = "const" IDENT [ ":" type ] "=" expr ";" ;
  bool const_decl() {
    advance();
    auto* decl = module_.make<ConstDecl>();
    if (!at(TokenKind::Identifier)) {
      expected("a name", "after 'const'");
      return false;
    }
    const Token& name = advance();
    decl->name = name.text;
    if (accept(TokenKind::Colon) && !(decl->type = type())) return false;
    if (!expect(TokenKind::Eq, "in a constant declaration")) return false;
    if (!(decl->value = expr())) return false;
    if (!expect(TokenKind::Semi, "after the constant")) return false;
    decl->range = name.range();
    module_.items.push_back({Item::Kind::Const, nullptr, decl});
    return true;
  }

  // kernel_def = [ "multinode" ] "kernel" IDENT [ ct_params ] "(" [ params ] ")" block ;
  // device_def = [ "multinode" ] "device" IDENT [ ct_params ] "(" [ params ] ")" [ "->" type ] block ;
  bool function_def() {
    llvm::SMLoc begin = tok().loc();
    auto* fn = module_.make<Function>();
    fn->multinode = accept(TokenKind::Multinode);
    if (fn->multinode && !at(TokenKind::Kernel) && !at(TokenKind::Device)) {
      expected("'kernel' or 'device'", "after 'multinode'");
      return false;
    }
    fn->is_kernel = advance().kind == TokenKind::Kernel;
    if (!at(TokenKind::Identifier)) {
      expected("a name", fn->is_kernel ? "after 'kernel'" : "after 'device'");
      return false;
    }
    const Token& name = advance();
    fn->name = name.text;
    fn->name_range = name.range();
    if (at(TokenKind::Less) && !ct_params(fn->ct_params)) return false;
    const Token& open = tok();
    if (!expect(TokenKind::LParen, "before the parameters")) return false;
    if (!at(TokenKind::RParen) && !params(fn->params)) return false;
    if (!expect_closing(TokenKind::RParen, open, "after the parameters")) return false;
    if (!fn->is_kernel && accept(TokenKind::Arrow) && !(fn->return_type = type())) return false;
    // Register before the body so that a body error still leaves the
    // function known to the checker (fewer follow-on errors).
    fn->range = from(begin);
    module_.items.push_back({Item::Kind::Function, nullptr, nullptr, fn});
    fn->body = block();
    return fn->body != nullptr;
  }

  // ct_params = "<" ct_param { "," ct_param } [ "," ] ">" ;
  bool ct_params(std::vector<Param>& out) {
    const Token& open = advance();
    do {
      if (at(TokenKind::Greater)) break;
      if (!ct_param(out)) return false;
    } while (accept(TokenKind::Comma));
    return expect_closing(TokenKind::Greater, open, "after the compile-time parameters");
  }

  // ct_param = IDENT ":" ( type [ "=" shift ] | type_param ) ;
  bool ct_param(std::vector<Param>& out) {
    if (at(TokenKind::Identifier) && peek().is(TokenKind::Colon) && peek(2).is(TokenKind::Identifier) &&
        peek(2).text == "type")
      return type_param(out);
    if (!param(out)) return false;
    if (accept(TokenKind::Eq) && !(out.back().default_value = shift())) return false;
    return true;
  }

  // type_param = "type" "in" "(" scalar_type { "," scalar_type } [ "," ] ")" ;
  // `type` is a keyword only here. The name is a type in the rest of the
  // function (its parameters, result and body).
  bool type_param(std::vector<Param>& out) {
    const Token& name = advance();
    advance();  // ':'
    advance();  // 'type'
    if (!expect(TokenKind::In, "after 'type' (a type parameter admits the types listed: T: type in (f32, bf16))"))
      return false;
    const Token& open = tok();
    if (!expect(TokenKind::LParen, "before the admitted types")) return false;
    Param p{name.text, name.range()};
    do {
      if (at(TokenKind::RParen) && !p.admitted.empty()) break;
      if (!scalar_keyword(tok().kind)) {  // not another type parameter
        expected("a scalar type", "in the admitted types");
        return false;
      }
      TypeSyntax* t = scalar_type();
      if (!t) return false;
      p.admitted.push_back(t);
    } while (accept(TokenKind::Comma));
    if (!expect_closing(TokenKind::RParen, open, "after the admitted types")) return false;
    type_params_.push_back(name.text);
    out.push_back(std::move(p));
    return true;
  }

  // params = param { "," param } [ "," ] ;
  bool params(std::vector<Param>& out) {
    do {
      if (at(TokenKind::RParen)) break;
      if (!param(out)) return false;
    } while (accept(TokenKind::Comma));
    return true;
  }

  // param = IDENT ":" type ;
  bool param(std::vector<Param>& out) {
    if (!at(TokenKind::Identifier)) {
      expected("a parameter name", "in the parameter list");
      return false;
    }
    const Token& name = advance();
    if (!expect(TokenKind::Colon, "after the parameter name")) return false;
    TypeSyntax* t = type();
    if (!t) return false;
    out.push_back(Param{name.text, name.range(), t});
    return true;
  }

  // --------------------------------------------------------------- types
  static std::optional<ScalarKind> scalar_keyword(TokenKind kind) {
    switch (kind) {
#define SCALAR(Name, Spelling, Bits, IsInteger, IsSigned, IsFloat, CppType) \
  case TokenKind::Name: return ScalarKind::Name;
#include "irisc/scalars.def"
      default: return std::nullopt;
    }
  }
  bool at_type_start() const {
    return scalar_keyword(tok().kind) || at(TokenKind::Sym) || at(TokenKind::Star) ||
           at(TokenKind::Tile);
  }

  // type = scalar_type | pointer_type | tile_type ;
  TypeSyntax* type() {
    if (at(TokenKind::Tile)) return tile_type();
    if (at(TokenKind::Sym) || at(TokenKind::Star)) return pointer_type();
    return scalar_type();
  }

  // scalar_type = "bool" | "i8" | ... | "f64" | IDENT ;
  // IDENT: a type parameter of the function being parsed; other names are
  // not types, so `x: foo` stays a syntax error.
  TypeSyntax* scalar_type() {
    if (at(TokenKind::Identifier) &&
        std::find(type_params_.begin(), type_params_.end(), tok().text) != type_params_.end()) {
      auto* t = module_.make<TypeSyntax>();
      t->kind = TypeSyntax::Kind::Scalar;
      t->type_param = tok().text;
      t->range = advance().range();
      return t;
    }
    auto scalar = scalar_keyword(tok().kind);
    if (!scalar) {
      if (!stopped_) diags_.error(DiagKind::ExpectedType, tok().range(), describe(tok()));
      return nullptr;
    }
    auto* t = module_.make<TypeSyntax>();
    t->kind = TypeSyntax::Kind::Scalar;
    t->scalar = *scalar;
    t->range = advance().range();
    return t;
  }

  // pointer_type = [ "sym" ] "*" scalar_type ;
  TypeSyntax* pointer_type() {
    llvm::SMLoc begin = tok().loc();
    bool sym = accept(TokenKind::Sym);
    if (!expect(TokenKind::Star, sym ? "after 'sym'" : "in a pointer type")) return nullptr;
    TypeSyntax* pointee = scalar_type();
    if (!pointee) return nullptr;
    auto* t = module_.make<TypeSyntax>();
    t->kind = TypeSyntax::Kind::Pointer;
    t->sym = sym;
    t->scalar = pointee->scalar;
    t->type_param = pointee->type_param;
    t->range = from(begin);
    return t;
  }

  // tile_type = "tile" "<" element_type "," shift [ "," shift ] ">" ;
  // element_type = scalar_type | pointer_type ;
  // Two sizes make a 2-D tile, its size a shape (M, N) like zeros'.
  TypeSyntax* tile_type() {
    Nesting nesting(*this);  // a tile size may hold another tile type
    if (!nesting.ok()) return nullptr;
    llvm::SMLoc begin = advance().loc();
    const Token& open = tok();
    if (!expect(TokenKind::Less, "after 'tile'")) return nullptr;
    TypeSyntax* element =
        at(TokenKind::Sym) || at(TokenKind::Star) ? pointer_type() : scalar_type();
    if (!element || !expect(TokenKind::Comma, "after the tile's element type")) return nullptr;
    Expr* size = shift();
    if (size && accept(TokenKind::Comma)) {
      Expr* cols = shift();
      size = cols ? shape(size, cols) : nullptr;
    }
    if (!size || !expect_closing(TokenKind::Greater, open, "after the tile size")) return nullptr;
    int h = size->height + 1;  // the checker recurses into the size
    if (h > kMaxExprHeight) {
      too_deep(kMaxExprHeight);
      return nullptr;
    }
    auto* t = module_.make<TypeSyntax>();
    t->height = h;
    t->kind = TypeSyntax::Kind::Tile;
    t->element = element;
    t->size = size;
    t->range = from(begin);
    return t;
  }

  // ---------------------------------------------------------- statements
  // block = "{" { stmt } "}" ;
  Stmt* block() {
    Nesting nesting(*this);
    if (!nesting.ok()) return nullptr;
    llvm::SMLoc begin = tok().loc();
    const Token& open = tok();
    if (!expect(TokenKind::LBrace, "to begin a block")) return nullptr;
    auto* b = module_.make<Stmt>();
    b->kind = StmtKind::Block;
    while (!at(TokenKind::RBrace) && !at(TokenKind::Eof) && !stopped_) {
      // An item keyword here means the block's '}' is missing.
      if (at(TokenKind::Kernel) || at(TokenKind::Device) || at(TokenKind::Multinode)) break;
      size_t before = pos_;
      if (Stmt* s = stmt())
        b->stmts.push_back(s);
      else
        sync_stmt();
      if (pos_ == before) advance();  // always make progress
    }
    if (stopped_ || !expect_closing(TokenKind::RBrace, open, "at the end of the block"))
      return nullptr;
    b->range = from(begin);
    return b;
  }

  // stmt = let_stmt | var_stmt | if_stmt | for_stmt | while_stmt
  //      | break_stmt | continue_stmt | return_stmt | block | simple_stmt ;
  Stmt* stmt() {
    switch (tok().kind) {
      case TokenKind::Let:
      case TokenKind::Var: return binding_stmt();
      case TokenKind::If: return if_stmt();
      case TokenKind::For: return for_stmt();
      case TokenKind::While: return while_stmt();
      case TokenKind::Break:
      case TokenKind::Continue: return jump_stmt();
      case TokenKind::Return: return return_stmt();
      case TokenKind::LBrace: return block();
      default: return simple_stmt();
    }
  }

  // let_stmt = "let" IDENT [ ":" type ] "=" expr ";" ;
  // var_stmt = "var" IDENT [ ":" type ] "=" expr ";" ;
  Stmt* binding_stmt() {
    llvm::SMLoc begin = tok().loc();
    auto* s = module_.make<Stmt>();
    s->kind = advance().kind == TokenKind::Let ? StmtKind::Let : StmtKind::Var;
    if (!at(TokenKind::Identifier)) {
      expected("a name", s->kind == StmtKind::Let ? "after 'let'" : "after 'var'");
      return nullptr;
    }
    const Token& name = advance();
    s->name = name.text;
    s->name_range = name.range();
    if (accept(TokenKind::Colon) && !(s->declared_type = type())) return nullptr;
    if (!expect(TokenKind::Eq, "in the binding")) return nullptr;
    if (!(s->value = expr()) || !expect(TokenKind::Semi, "after the binding")) return nullptr;
    s->range = from(begin);
    return s;
  }

  // if_stmt = "if" expr block [ "else" ( if_stmt | block ) ] ;
  Stmt* if_stmt() {
    Nesting nesting(*this);
    if (!nesting.ok()) return nullptr;
    llvm::SMLoc begin = advance().loc();
    auto* s = module_.make<Stmt>();
    s->kind = StmtKind::If;
    if (!(s->value = expr()) || !(s->body = block())) return nullptr;
    if (accept(TokenKind::Else)) {
      s->else_body = at(TokenKind::If) ? if_stmt() : block();
      if (!s->else_body) return nullptr;
    }
    s->range = from(begin);
    return s;
  }

  // for_stmt = "for" IDENT "in" expr ".." expr [ "step" expr ] [ "stages" expr ] block ;
  // `step` and `stages` are keywords only here, so programs may still name
  // things step and stages.
  Stmt* for_stmt() {
    llvm::SMLoc begin = advance().loc();
    auto* s = module_.make<Stmt>();
    s->kind = StmtKind::For;
    if (!at(TokenKind::Identifier)) {
      expected("a loop variable", "after 'for'");
      return nullptr;
    }
    const Token& name = advance();
    s->name = name.text;
    s->name_range = name.range();
    if (!expect(TokenKind::In, "after the loop variable") || !(s->low = expr()) ||
        !expect(TokenKind::DotDot, "between the loop bounds") || !(s->high = expr()))
      return nullptr;
    if (at(TokenKind::Identifier) && tok().text == "step") {
      advance();
      if (!(s->step = expr())) return nullptr;
    }
    if (at(TokenKind::Identifier) && tok().text == "stages") {
      advance();
      if (!(s->stages = expr())) return nullptr;
    }
    if (!(s->body = block())) return nullptr;
    s->range = from(begin);
    return s;
  }

  // while_stmt = "while" expr block ;
  Stmt* while_stmt() {
    llvm::SMLoc begin = advance().loc();
    auto* s = module_.make<Stmt>();
    s->kind = StmtKind::While;
    if (!(s->value = expr()) || !(s->body = block())) return nullptr;
    s->range = from(begin);
    return s;
  }

  // break_stmt = "break" ";" ;
  // continue_stmt = "continue" ";" ;
  Stmt* jump_stmt() {
    const Token& keyword = advance();
    auto* s = module_.make<Stmt>();
    s->kind = keyword.kind == TokenKind::Break ? StmtKind::Break : StmtKind::Continue;
    s->range = keyword.range();
    if (!expect(TokenKind::Semi, fmt::format("after '{}'", keyword.text))) return nullptr;
    return s;
  }

  // return_stmt = "return" [ expr ] ";" ;
  Stmt* return_stmt() {
    llvm::SMLoc begin = advance().loc();
    auto* s = module_.make<Stmt>();
    s->kind = StmtKind::Return;
    if (!at(TokenKind::Semi) && !(s->value = expr())) return nullptr;
    if (!expect(TokenKind::Semi, "after the return statement")) return nullptr;
    s->range = from(begin);
    return s;
  }

  static bool is_assign_op(TokenKind k) {
    switch (k) {
      case TokenKind::Eq: case TokenKind::PlusEq: case TokenKind::MinusEq:
      case TokenKind::StarEq: case TokenKind::SlashEq: case TokenKind::PercentEq:
      case TokenKind::AmpEq: case TokenKind::PipeEq: case TokenKind::CaretEq:
      case TokenKind::ShlEq: case TokenKind::ShrEq: return true;
      default: return false;
    }
  }

  // simple_stmt = expr [ assign_op expr ] ";" ;
  // assign_op = "=" | "+=" | "-=" | ... | ">>=" ;
  Stmt* simple_stmt() {
    llvm::SMLoc begin = tok().loc();
    Expr* first = expr();
    if (!first) return nullptr;
    auto* s = module_.make<Stmt>();
    s->kind = StmtKind::ExprStmt;
    s->value = first;
    if (is_assign_op(tok().kind)) {
      s->kind = StmtKind::Assign;
      s->assign_op = advance().kind;
      s->target = first;
      if (!(s->value = expr())) return nullptr;
    }
    if (!expect(TokenKind::Semi, "after the statement")) return nullptr;
    s->range = from(begin);
    return s;
  }

  // --------------------------------------------------------- expressions
  Expr* make_expr(ExprKind kind, llvm::SMRange range) {
    Expr* e = module_.make<Expr>();
    e->kind = kind;
    e->range = range;
    return e;
  }

  // Builds a binary node, refusing trees taller than kMaxExprHeight.
  Expr* binary(TokenKind op, Expr* lhs, Expr* rhs) {
    int h = std::max(lhs->height, rhs->height) + 1;
    if (h > kMaxExprHeight) {
      too_deep(kMaxExprHeight);
      return nullptr;
    }
    Expr* e = make_expr(ExprKind::Binary, {lhs->range.Start, rhs->range.End});
    e->op = op;
    e->operands = {lhs, rhs};
    e->height = h;
    return e;
  }

  // expr = logical_or [ "@" logical_or ] ;
  Expr* expr() {
    Expr* pointer = logical_or();
    if (!pointer || !at(TokenKind::At)) return pointer;
    advance();
    Expr* rank = logical_or();
    if (!rank) return nullptr;
    if (at(TokenKind::At)) {
      diags_.error(DiagKind::ChainedTranslation, tok().range());
      return nullptr;
    }
    Expr* e = make_expr(ExprKind::Translate, {pointer->range.Start, rank->range.End});
    e->operands = {pointer, rank};
    e->height = std::max(pointer->height, rank->height) + 1;
    return e;
  }

  // One left-associative binary level: operand { op operand }.
  template <class Next>
  Expr* left_assoc(std::initializer_list<TokenKind> ops, Next next) {
    Expr* lhs = (this->*next)();
    while (lhs && std::find(ops.begin(), ops.end(), tok().kind) != ops.end()) {
      TokenKind op = advance().kind;
      Expr* rhs = (this->*next)();
      if (!rhs) return nullptr;
      lhs = binary(op, lhs, rhs);
    }
    return lhs;
  }

  // logical_or = logical_and { "||" logical_and } ;
  Expr* logical_or() { return left_assoc({TokenKind::PipePipe}, &Parser::logical_and); }
  // logical_and = bit_or { "&&" bit_or } ;
  Expr* logical_and() { return left_assoc({TokenKind::AmpAmp}, &Parser::bit_or); }
  // bit_or = bit_xor { "|" bit_xor } ;
  Expr* bit_or() { return left_assoc({TokenKind::Pipe}, &Parser::bit_xor); }
  // bit_xor = bit_and { "^" bit_and } ;
  Expr* bit_xor() { return left_assoc({TokenKind::Caret}, &Parser::bit_and); }
  // bit_and = equality { "&" equality } ;
  Expr* bit_and() { return left_assoc({TokenKind::Amp}, &Parser::equality); }
  // equality = relational { ( "==" | "!=" ) relational } ;
  Expr* equality() {
    return left_assoc({TokenKind::EqEq, TokenKind::BangEq}, &Parser::relational);
  }
  // relational = shift { ( "<" | "<=" | ">" | ">=" ) shift } ;
  Expr* relational() {
    return left_assoc(
        {TokenKind::Less, TokenKind::LessEq, TokenKind::Greater, TokenKind::GreaterEq},
        &Parser::shift);
  }
  // shift = additive { ( "<<" | ">>" ) additive } ;
  Expr* shift() { return left_assoc({TokenKind::Shl, TokenKind::Shr}, &Parser::additive); }
  // additive = multiplicative { ( "+" | "-" ) multiplicative } ;
  Expr* additive() {
    return left_assoc({TokenKind::Plus, TokenKind::Minus}, &Parser::multiplicative);
  }
  // multiplicative = cast { ( "*" | "/" | "%" ) cast } ;
  Expr* multiplicative() {
    return left_assoc({TokenKind::Star, TokenKind::Slash, TokenKind::Percent}, &Parser::cast);
  }

  // cast = unary { "as" type } ;
  Expr* cast() {
    Expr* operand = unary();
    while (operand && accept(TokenKind::As)) {
      TypeSyntax* target = type();
      if (!target) return nullptr;
      int h = std::max(operand->height, target->height) + 1;
      if (h > kMaxExprHeight) {
        too_deep(kMaxExprHeight);
        return nullptr;
      }
      Expr* e = make_expr(ExprKind::Cast, {operand->range.Start, target->range.End});
      e->operands = {operand};
      e->type_syntax = target;
      e->height = h;
      operand = e;
    }
    return operand;
  }

  // unary = ( "-" | "!" | "~" ) unary | postfix ;
  Expr* unary() {
    if (!at(TokenKind::Minus) && !at(TokenKind::Bang) && !at(TokenKind::Tilde)) return postfix();
    Nesting nesting(*this);
    if (!nesting.ok()) return nullptr;
    const Token& op = advance();
    Expr* operand = unary();
    if (!operand) return nullptr;
    Expr* e = make_expr(ExprKind::Unary, {op.loc(), operand->range.End});
    e->op = op.kind;
    e->operands = {operand};
    e->height = operand->height + 1;
    return e;
  }

  // postfix = primary { "[" new_axis "]" } ;
  // new_axis = ":" "," "None" | "None" "," ":" ;
  // NumPy's and Triton's spelling of adding an axis to a 1-D tile: x[:, None]
  // is a column (N, 1), x[None, :] a row (1, N). `None` is a keyword only here.
  Expr* postfix() {
    Expr* operand = primary();
    while (operand && at(TokenKind::LBracket)) {
      const Token& open = advance();
      int axis = accept(TokenKind::Colon) ? 1 : 0;
      bool ok = axis == 1 ? expect(TokenKind::Comma, "after ':' in an index") && expect_none()
                          : expect_none() && expect(TokenKind::Comma, "after 'None' in an index") &&
                                expect(TokenKind::Colon, "after 'None,' in an index");
      if (!ok || !expect_closing(TokenKind::RBracket, open, "after the index")) return nullptr;
      Expr* e = make_expr(ExprKind::AddAxis, from(operand->range.Start));
      e->operands = {operand};
      e->int_value = static_cast<uint64_t>(axis);
      e->height = operand->height + 1;
      if (e->height > kMaxExprHeight) {
        too_deep(kMaxExprHeight);
        return nullptr;
      }
      operand = e;
    }
    return operand;
  }
  bool expect_none() {
    if (at(TokenKind::Identifier) && tok().text == "None") {
      advance();
      return true;
    }
    expected("'None'", "in an index (x[:, None] or x[None, :] add an axis)");
    return false;
  }

  // A shape (M, N): the size of a 2-D tile.
  Expr* shape(Expr* rows, Expr* cols) {
    Expr* e = make_expr(ExprKind::Shape, {rows->range.Start, cols->range.End});
    e->operands = {rows, cols};
    e->height = std::max(rows->height, cols->height) + 1;
    return e;
  }

  // primary = INT | FLOAT | "true" | "false" | IDENT [ call_args ] | "(" expr ")" | type ;
  Expr* primary() {
    const Token& t = tok();
    switch (t.kind) {
      case TokenKind::IntLiteral: {
        Expr* e = make_expr(ExprKind::IntLiteral, advance().range());
        e->int_value = t.int_value;
        return e;
      }
      case TokenKind::FloatLiteral: {
        Expr* e = make_expr(ExprKind::FloatLiteral, advance().range());
        e->float_value = t.float_value;
        return e;
      }
      case TokenKind::True:
      case TokenKind::False: {
        Expr* e = make_expr(ExprKind::BoolLiteral, advance().range());
        e->bool_value = t.kind == TokenKind::True;
        return e;
      }
      case TokenKind::Identifier: return name_or_call();
      case TokenKind::LParen: return parenthesized();
      default: break;
    }
    if (at_type_start()) {
      TypeSyntax* ts = type();
      if (!ts) return nullptr;
      Expr* e = make_expr(ExprKind::TypeValue, ts->range);
      e->type_syntax = ts;
      e->height = ts->height;
      return e;
    }
    if (!stopped_) diags_.error(DiagKind::ExpectedExpression, t.range(), describe(t));
    return nullptr;
  }

  // "(" expr [ "," expr ] ")"
  // With two expressions, a shape (M, N); the checker accepts one only where a
  // tile size is expected.
  Expr* parenthesized() {
    Nesting nesting(*this);
    if (!nesting.ok()) return nullptr;
    const Token& open = advance();
    Expr* inner = expr();
    if (inner && accept(TokenKind::Comma)) {
      Expr* cols = expr();
      if (!cols) return nullptr;
      inner = shape(inner, cols);
    }
    if (!inner || !expect_closing(TokenKind::RParen, open, "after the expression")) return nullptr;
    if (inner->kind == ExprKind::Shape) inner->range = from(open.loc());
    return inner;
  }

  // Whether `<` after a name opens compile-time arguments, `f<64, f32>(x)`:
  // a `>` follows, outside parentheses and before any token that a shift
  // expression cannot hold, and then `(`. Read as comparisons instead, such a
  // text would compare a bool with `>`, which no type allows; only an
  // argument list `(a < b, c > (d))` changes meaning, as in C#.
  bool at_ct_args() const {
    if (!at(TokenKind::Less)) return false;
    int depth = 0;
    for (size_t ahead = 1;; ++ahead) {
      const Token& t = peek(ahead);
      switch (t.kind) {
        case TokenKind::Eof:
        case TokenKind::Semi:
        case TokenKind::LBrace:
        case TokenKind::RBrace: return false;
        case TokenKind::LParen: ++depth; break;
        case TokenKind::RParen:
          if (--depth < 0) return false;
          break;
        case TokenKind::Greater:
          if (depth == 0) return peek(ahead + 1).is(TokenKind::LParen);
          break;
        case TokenKind::Eq:  // `f<N = 64>(x)`: named, which ct_args reports
          if (depth == 0 && !peek(ahead - 1).is(TokenKind::Identifier)) return false;
          break;
        case TokenKind::Identifier:
        case TokenKind::IntLiteral:
        case TokenKind::True:
        case TokenKind::False:
        case TokenKind::Comma:
        case TokenKind::Plus:
        case TokenKind::Minus:
        case TokenKind::Star:
        case TokenKind::Slash:
        case TokenKind::Percent:
        case TokenKind::Shl:
        case TokenKind::Shr:
        case TokenKind::Tilde:
        case TokenKind::Bang:
        case TokenKind::As: break;
        default:
          if (depth == 0 && !scalar_keyword(t.kind)) return false;
      }
    }
  }

  // ct_args = "<" shift { "," shift } [ "," ] ">" ;
  bool ct_args(Call& call) {
    const Token& open = advance();
    do {
      if (at(TokenKind::Greater)) break;
      if (at(TokenKind::Identifier) && peek().is(TokenKind::Eq)) {
        diags_.error(DiagKind::NamedCompileTimeArgument, tok().range(), tok().text, tok().text);
        return false;
      }
      Expr* arg = shift();
      if (!arg) return false;
      call.ct_args.push_back(arg);
    } while (accept(TokenKind::Comma));
    if (!expect_closing(TokenKind::Greater, open, "after the compile-time arguments")) return false;
    call.ct_range = from(open.loc());
    return true;
  }

  // IDENT [ [ ct_args ] call_args ]
  // call_args = "(" [ arg { "," arg } [ "," ] ] ")" ;
  // arg = [ IDENT "=" ] expr ;
  Expr* name_or_call() {
    const Token& name = advance();
    bool generic = at_ct_args();
    if (!at(TokenKind::LParen) && !generic) {
      Expr* e = make_expr(ExprKind::Name, name.range());
      e->name = name.text;
      return e;
    }
    Nesting nesting(*this);
    if (!nesting.ok()) return nullptr;
    Expr* call = make_expr(ExprKind::Call, {});
    call->name = name.text;
    call->call = module_.make<Call>();
    call->call->name_range = name.range();
    if (generic && !ct_args(*call->call)) return nullptr;
    const Token& open = tok();
    if (!expect(TokenKind::LParen, "after the compile-time arguments")) return nullptr;
    bool seen_named = false;
    int h = 0;
    for (const Expr* arg : call->call->ct_args) h = std::max(h, arg->height);
    while (!at(TokenKind::RParen)) {
      CallArg arg;
      if (at(TokenKind::Identifier) && peek().is(TokenKind::Eq)) {
        arg.name = tok().text;
        arg.name_range = advance().range();
        advance();
        seen_named = true;
      } else if (seen_named) {
        diags_.error(DiagKind::PositionalAfterNamed, tok().range());
      }
      if (!(arg.value = expr())) return nullptr;
      h = std::max(h, arg.value->height);
      call->call->args.push_back(arg);
      if (!accept(TokenKind::Comma)) break;
    }
    if (!expect_closing(TokenKind::RParen, open, "after the arguments")) return nullptr;
    call->range = from(name.loc());
    call->height = h + 1;
    return call;
  }

  const TokenList& tokens_;
  Module& module_;
  Diagnostics& diags_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool stopped_ = false;
  // The type parameters of the function being parsed: names that are types.
  std::vector<std::string_view> type_params_;
};

}  // namespace

void parse(const TokenList& tokens, Module& module, Diagnostics& diags) {
  Parser(tokens, module, diags).file();
}

}  // namespace irisc
