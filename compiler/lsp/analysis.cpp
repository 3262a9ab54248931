// One analysis of a document; see analysis.h.
#include "analysis.h"

#include "completion.h"
#include "irisc/builtins.h"

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace irisc::lsp {
namespace {

// UTF-16 code units of UTF-8 `bytes`: one per character, two past U+FFFF.
unsigned utf16_length(std::string_view bytes) {
  unsigned units = 0;
  for (unsigned char c : bytes) {
    if ((c & 0xC0) != 0x80) ++units;
    if (c >= 0xF0) ++units;
  }
  return units;
}

std::string_view binding_word(Binding::Kind kind) {
  switch (kind) {
    case Binding::Kind::Let: return "let";
    case Binding::Kind::Var: return "var";
    case Binding::Kind::LoopVar: return "for";
    case Binding::Kind::Param: return "parameter";
    case Binding::Kind::CtParam: return "compile-time parameter";
    case Binding::Kind::TypeParam: return "type parameter";
    case Binding::Kind::Const: return "const";
    case Binding::Kind::Function: return "function";
  }
  return "";
}

// `kernel f<BLOCK: i32>(p: sym *f32, n: i32)`, `device g(x: f32) -> f32`.
std::string signature(const Function& fn) {
  std::string text = fn.imported_from ? "device" : fn.is_kernel ? "kernel" : "device";
  if (fn.multinode) text = "multinode " + text;
  text += " " + std::string(fn.name);
  if (!fn.ct_params.empty()) {
    std::string ct;
    for (const Param& p : fn.ct_params) ct += (ct.empty() ? "" : ", ") + std::string(p.name);
    text += "<" + ct + ">";
  }
  std::string params;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    params += (i ? ", " : "") + std::string(fn.params[i].name);
    if (i < fn.param_types.size()) params += ": " + fn.param_types[i].str();
  }
  text += "(" + params + ")";
  if (!fn.result.is_void() && !fn.result.is_error()) text += " -> " + fn.result.str();
  return text;
}

llvm::json::Object markdown(const std::string& code, const std::string& more = "") {
  return llvm::json::Object{{"kind", "markdown"}, {"value", "```iris\n" + code + "\n```" + more}};
}

}  // namespace

size_t offset_of(std::string_view text, Position position) {
  size_t offset = 0;
  for (unsigned line = 0; line < position.line; ++line) {
    size_t newline = text.find('\n', offset);
    if (newline == std::string_view::npos) return text.size();
    offset = newline + 1;
  }
  for (unsigned units = 0; offset < text.size() && text[offset] != '\n' && units < position.character;) {
    units += utf16_length(text.substr(offset, 1));
    ++offset;
    while (offset < text.size() && (static_cast<unsigned char>(text[offset]) & 0xC0) == 0x80) ++offset;
  }
  return offset;
}

std::string path_of_uri(std::string_view uri) {
  if (uri.starts_with("file://")) uri.remove_prefix(7);
  std::string path;
  for (size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size()) {
      path += static_cast<char>(std::stoi(std::string(uri.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      path += uri[i];
    }
  }
  return path;
}

std::string uri_of_path(std::string_view path) {
  std::string uri = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos)
      uri += static_cast<char>(c);
    else
      uri += fmt::format("%{:02X}", c);
  }
  return uri;
}

Analysis::Analysis(const std::string& path, const std::string& text, const ImportOptions& imports)
    : path_(path) {
  buffer_ = sources_.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, path), llvm::SMLoc());
  Diagnostics diags(sources_, llvm::nulls(), /*colors=*/false, /*error_limit=*/0);
  diags.set_consumer([this](const Diagnostic& d) { diagnostics_.push_back(d); });
  ImportOptions options = imports;
  options.describe = [this, &imports](const std::string& header) {
    const HeaderDescription* described = imports.describe(header);
    if (!described) imports_pending_ = true;
    return described;
  };
  result_ = run_frontend(sources_, buffer_, diags, Stage::Checked, &options);
  if (!result_.module) return;
  for (const Item& item : result_.module->items) {
    if (item.kind == Item::Kind::Function) index(*item.function);
    if (item.kind == Item::Kind::Const) {
      const ConstDecl& decl = *item.constant;
      if (decl.binding) occurrences_.push_back({decl.binding->range, decl.binding});
      index(decl.type);
      index(decl.value);
    }
  }
}

void Analysis::index(const Function& fn) {
  occurrences_.push_back({fn.name_range, nullptr, &fn});
  for (const auto* params : {&fn.ct_params, &fn.params}) {
    for (const Param& p : *params) {
      if (p.binding) occurrences_.push_back({p.range, p.binding});
      index(p.type);
      index(p.default_value);
    }
  }
  index(fn.return_type);
  index(fn.body);
}

void Analysis::index(const Stmt* s) {
  if (!s) return;
  if (s->binding) occurrences_.push_back({s->name_range, s->binding});
  index(s->declared_type);
  for (const Expr* e : {s->value, s->target, s->low, s->high, s->step, s->stages}) index(e);
  index(s->body);
  index(s->else_body);
  for (const Stmt* inner : s->stmts) index(inner);
}

void Analysis::index(const Expr* e) {
  if (!e) return;
  if (e->kind == ExprKind::Name && e->binding) occurrences_.push_back({e->range, e->binding});
  if (e->kind == ExprKind::Call) {
    const Call& call = *e->call;
    occurrences_.push_back({call.name_range, nullptr, call.callee, call.builtin, &e->type});
    for (const Expr* arg : call.ct_args) index(arg);
    for (const CallArg& arg : call.args) index(arg.value);
  }
  for (const Expr* operand : e->operand_list()) index(operand);
  index(e->type_syntax);
}

void Analysis::index(const TypeSyntax* t) {
  if (!t) return;
  index(t->element);
  index(t->size);
}

// The innermost occurrence holding `position` (at its end too: the cursor
// just after a name).
const Analysis::Occurrence* Analysis::occurrence_at(Position position) const {
  llvm::StringRef text = sources_.getMemoryBuffer(buffer_)->getBuffer();
  const char* at = text.data() + offset_of(text, position);
  const Occurrence* best = nullptr;
  for (const Occurrence& o : occurrences_) {
    if (sources_.FindBufferContainingLoc(o.range.Start) != buffer_) continue;
    if (o.range.Start.getPointer() > at || at > o.range.End.getPointer()) continue;
    if (!best || o.range.End.getPointer() - o.range.Start.getPointer() <
                     best->range.End.getPointer() - best->range.Start.getPointer())
      best = &o;
  }
  return best;
}

Position Analysis::position_of(llvm::SMLoc loc, unsigned buffer) const {
  auto [line, column] = sources_.getLineAndColumn(loc, buffer);
  return {line - 1, utf16_length({loc.getPointer() - (column - 1), column - 1})};
}

llvm::json::Object Analysis::range_of(llvm::SMRange range, unsigned buffer) const {
  auto json = [](Position p) { return llvm::json::Object{{"line", p.line}, {"character", p.character}}; };
  llvm::SMLoc end = range.End.isValid() ? range.End : range.Start;
  return llvm::json::Object{{"start", json(position_of(range.Start, buffer))}, {"end", json(position_of(end, buffer))}};
}

// The document's path; a module's absolute path (its buffer is named as
// found: `iris/gemm.iris` for one of the package); a header's, named by its
// absolute path already.
std::string Analysis::path_of_buffer(unsigned buffer) const {
  if (buffer == buffer_) return path_;
  llvm::StringRef name = sources_.getMemoryBuffer(buffer)->getBufferIdentifier();
  for (const auto& module : result_.imported_modules)
    if (module->source_name == name) return module->path;
  llvm::SmallString<256> absolute(name);
  llvm::sys::fs::make_absolute(llvm::sys::path::parent_path(path_), absolute);
  return std::string(absolute);
}

llvm::json::Value Analysis::location_of(llvm::SMRange range) const {
  unsigned buffer = range.Start.isValid() ? sources_.FindBufferContainingLoc(range.Start) : 0;
  if (buffer == 0) return nullptr;
  return llvm::json::Object{{"uri", uri_of_path(path_of_buffer(buffer))}, {"range", range_of(range, buffer)}};
}

llvm::json::Array Analysis::diagnostics() const {
  llvm::json::Array out;
  for (const Diagnostic& d : diagnostics_) {
    unsigned buffer = d.range.Start.isValid() ? sources_.FindBufferContainingLoc(d.range.Start) : 0;
    if (d.severity == Severity::Note) {
      llvm::json::Value location = location_of(d.range);
      if (out.empty() || location.kind() == llvm::json::Value::Null) continue;
      out.back().getAsObject()->getArray("relatedInformation")->push_back(
          llvm::json::Object{{"location", std::move(location)}, {"message", d.message}});
      continue;
    }
    // In a module: on the import that led there, through the chain of imports.
    llvm::SMRange range = d.range;
    std::string message = d.message;
    llvm::json::Array related;
    while (buffer != 0 && buffer != buffer_) {
      llvm::SMLoc import = sources_.getBufferInfo(buffer).IncludeLoc;
      if (!import.isValid()) break;
      if (related.empty()) related.push_back(llvm::json::Object{{"location", location_of(range)}, {"message", d.message}});
      message = "in " + std::string(sources_.getMemoryBuffer(buffer)->getBufferIdentifier()) + ": " + d.message;
      range = {import, import};
      buffer = sources_.FindBufferContainingLoc(import);
    }
    if (buffer != buffer_) range = {llvm::SMLoc::getFromPointer(sources_.getMemoryBuffer(buffer_)->getBufferStart()), {}};
    out.push_back(llvm::json::Object{{"range", range_of(range, buffer_)},
                                     {"severity", d.severity == Severity::Warning ? 2 : 1},  // LSP's Warning, Error
                                     {"source", "irisc"},
                                     {"code", llvm::StringRef(diag_info(d.kind).name)},
                                     {"message", message},
                                     {"relatedInformation", std::move(related)}});
  }
  return out;
}

llvm::json::Value Analysis::hover(Position position) const {
  const Occurrence* o = occurrence_at(position);
  if (!o) return nullptr;
  llvm::json::Object contents;
  if (o->binding) {
    const Binding& b = *o->binding;
    std::string code = fmt::format("{} {}: {}", binding_word(b.kind), b.name, b.type.str());
    if (b.constant) code += " = " + b.constant->text();
    std::string more;
    if (b.type.is_pointer())
      more = b.type.sym ? "\n\nA pointer into the symmetric heap (`sym`): `p @ r` reaches rank r's copy."
                        : "\n\nA plain pointer (not `sym`): it cannot be translated to another rank.";
    contents = markdown(code, more);
  } else if (o->function) {
    std::string more;
    if (o->function->imported_from) more = "\n\nimported from `" + o->function->imported_from->path + "`";
    contents = markdown(signature(*o->function), more);
  } else if (o->builtin) {
    std::string code = "built-in " + builtin_signature(*o->builtin);
    if (o->type && !o->type->is_void() && !o->type->is_error()) code += " -> " + o->type->str();
    contents = markdown(code);
  } else {
    return nullptr;
  }
  return llvm::json::Object{{"contents", std::move(contents)}, {"range", range_of(o->range, buffer_)}};
}

llvm::json::Value Analysis::definition(Position position) const {
  const Occurrence* o = occurrence_at(position);
  if (!o) return nullptr;
  if (o->binding) return location_of(o->binding->range);
  if (o->function) return location_of(o->function->name_range);
  return nullptr;
}

llvm::json::Array Analysis::symbols() const {
  llvm::json::Array out;
  if (!result_.module) return out;
  // SymbolKind: 2 Module, 12 Function, 14 Constant.
  auto symbol = [&](std::string_view name, std::string detail, int kind, llvm::SMRange range, llvm::SMRange selection) {
    out.push_back(llvm::json::Object{{"name", llvm::StringRef(name)},
                                     {"detail", std::move(detail)},
                                     {"kind", kind},
                                     {"range", range_of(range, buffer_)},
                                     {"selectionRange", range_of(selection, buffer_)}});
  };
  for (const Item& item : result_.module->items) {
    switch (item.kind) {
      case Item::Kind::Import: symbol(item.import->path, "import", 2, item.import->range, item.import->path_range); break;
      case Item::Kind::Const: {
        const ConstDecl& decl = *item.constant;
        std::string type = decl.binding ? decl.binding->type.str() : "";
        llvm::SMRange range = decl.binding ? decl.binding->range : decl.range;
        symbol(decl.name, "const " + type, 14, range, range);
        break;
      }
      case Item::Kind::Function: {
        const Function& fn = *item.function;
        symbol(fn.name, signature(fn), 12, fn.range, fn.name_range);
        break;
      }
    }
  }
  return out;
}

}  // namespace irisc::lsp
