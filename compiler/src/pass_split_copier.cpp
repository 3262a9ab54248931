// Copier slices (warp specialisation, as cuBLAS's and CUTLASS's Hopper GEMMs
// have it): a kernel whose pipelined loops copy boxes gets, beside its
// program, a copier function that the runtime runs on a warpgroup of its own
// (kernel_entry, launch_gpu.hpp, on sm_90a): the same control flow with only
// the loops' copies, which it issues by TMA while the program's threads
// compute and store (ops/copy_box.hpp). The program keeps its copies, which
// the runtime then leaves to the copier where they go by TMA:
//   for t in ... {                        copier: for t in ... {
//       let row0 = f(t);                              let row0 = f(t);
//       <ring loop: bind_box, copies,   ->            <bind_box, copy_box of each copy,
//        waits, dots, end_boxes>                       end_copies>
//       store(...);                               }
//   }
// A device function that runs such a loop gets a copier of its own
// (iris_copies_<name>), which the callers' copiers call.
//
// The copier follows the program only where it computes the same thing: the
// conditions, bounds and values that decide its copies must come from
// computations without effects (arithmetic, program_id, translations, calls
// of such device functions) over the parameters. Where the copies read the
// symmetric heap, which other ranks write, a wait (wait_until, fence) that
// the program may pass before a later copy is the copier's too, so that no
// copy reads memory before the program could; a matrix behind a plain
// pointer is one that nothing writes while the kernel runs (TMA reads it
// through the async proxy, which the program's stores do not order: language
// section 11.2), so a kernel whose copies read only such matrices leaves its
// waits to the program. A kernel where that does not hold (a bound loaded from
// memory, an atomic's result, a wait on a flag that the copier cannot
// compute) gets no copier, and its thread 0 issues the copies; so does a
// kernel that runs its box loops once an instance (runs_ahead).
#include "irisc/passes.h"
#include "irisc/tir_builder.h"
#include "irisc/tir_walk.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace irisc {
namespace {

class CopierSlicer {
 public:
  explicit CopierSlicer(TirModule& module) : m_(module) {}

  void run() {
    std::vector<TirFunction*> functions = m_.functions;  // the copiers are added to m_.functions
    copies_boxes_ = with_values(functions, [](const TirValue& v) { return v.op == TirOp::BindBox; });
    impure_ = with_values(functions, [](const TirValue& v) {
      return v.op != TirOp::CallDevice && !tir_op_info(v.op).has(tir_trait::Recomputable);
    });
    acquiring_ = with_values(functions, [](const TirValue& v) { return acquires_itself(v); });
    for (TirFunction* f : functions)
      if (f->is_kernel && copies_boxes(*f) && runs_ahead(*f) && (f->copier = copier(*f)))
        f->boxes_hold = boxes_hold(*f);
  }

 private:
  // ---------------------------------------------------------- functions
  // The functions with a value that `own` holds of, and every caller of one.
  template <class Own>
  static std::unordered_set<const TirFunction*> with_values(const std::vector<TirFunction*>& functions, Own own) {
    return with_callers(functions, [&](const TirFunction& f) {
      bool found = false;
      for_each_value(const_cast<TirFunction&>(f), [&](const TirValue* v) { found |= own(*v); });
      return found;
    });
  }

  // Whether f, or a device function it calls, runs a loop that copies boxes.
  bool copies_boxes(const TirFunction& f) const { return copies_boxes_.contains(&f); }

  // Whether a kernel runs its box loops again within an instance: a loop of
  // its own (a persistent kernel's tile loop) around one, or around a call of
  // a function that runs one. Only there can a copier run ahead, into the
  // next iteration's first stages while the program finishes this one; with
  // one tile an instance, thread 0 issuing the copies is faster
  // (docs/performance.md).
  bool runs_ahead(TirFunction& kernel) const {
    bool found = false;
    for_each_stmt(kernel.body, [&](TirStmt* loop) {
      if (loop->kind != TirStmtKind::For && loop->kind != TirStmtKind::While) return;
      found |= any_value(loop->body, [&](const TirValue& v) {
        return v.op == TirOp::BindBox || (v.op == TirOp::CallDevice && copies_boxes(*v.attrs<CallAttrs>().callee));
      });
    });
    return found;
  }

  // Whether a value of s or of a statement in it holds of `own`.
  template <class Own>
  static bool any_value(const TirStmt* s, Own own) {
    bool found = false;
    for_each_stmt(const_cast<TirStmt*>(s), [&](TirStmt* t) {
      for (TirValue* slot : {t->value, t->low, t->high, t->step})
        rewrite_value(slot, [&](TirValue* v) {
          found |= own(*v);
          return v;
        });
    });
    return found;
  }

  // f's copier, made once; null where the copier cannot follow f.
  TirFunction* copier(TirFunction& f) {
    if (auto it = copiers_.find(&f); it != copiers_.end()) return it->second;
    copiers_[&f] = nullptr;  // a call cycle through f gets none
    Slice slice(*this, f);
    TirStmt* body = slice.function_body();
    if (!body) return nullptr;
    TirFunction* c = m_.make_function();
    c->module = f.module;
    c->multinode = f.multinode;
    c->name = f.name;
    c->cpp_name = f.is_kernel ? "copies" : "iris_copies_" + f.cpp_name;
    c->loc = f.loc;
    c->ct_params = f.ct_params;
    c->ct_defaults = f.ct_defaults;
    c->ct_default_values = f.ct_default_values;
    c->ct_admitted = f.ct_admitted;
    c->params = f.params;
    c->body = body;
    // A kernel's is printed in its struct; a device function's right after it.
    if (!f.is_kernel) {
      auto at = std::find(m_.functions.begin(), m_.functions.end(), &f);
      m_.functions.insert(at + 1, c);
    }
    return copiers_[&f] = c;
  }

  // ---------------------------------------------------------- boxes_hold
  // The function whose box loops are written out: its lets' values, and the
  // arguments of its call by its parameters, each in its caller's scope
  // (null: the kernel's own, whose parameters stay as they are).
  using Lets = std::unordered_map<const TirVar*, const TirValue*>;
  struct Scope {
    const Lets& lets;
    std::unordered_map<const TirVar*, const TirValue*> arguments;
    const Scope* caller = nullptr;
  };

  // The values of f's lets (each a variable of its own, bound once), where the
  // value is of the let's type: a written type that converts it (`let x: i64 =
  // K`) would be lost, so such a let is read as a variable (no condition).
  // Found once per function, however many calls of it are written out.
  const Lets& lets_of(TirFunction& f) {
    auto [at, added] = lets_.try_emplace(&f);
    if (added)
      for_each_stmt(f.body, [&](TirStmt* s) {
        if (s->kind == TirStmtKind::Let && s->var && s->value && s->value->type == s->var->type)
          at->second.emplace(s->var, s->value);
      });
    return at->second;
  }

  // Whether the host may compute v where the device would not: an operation
  // undefined for some right operands (tir.h's DividesByRight, ShiftsByRight)
  // may be one that the device's control flow never reaches (`if d != 0 { let
  // pitch = K / d; ... }`), and the host's conjunction computes every term. So
  // its right operand must be a constant for which it is defined whatever the
  // left: a positive divisor, a shift count below 32.
  static bool safe_on_host(const TirValue& v) {
    const TirOpInfo& info = tir_op_info(v.op);
    const bool divides = info.has(tir_trait::DividesByRight), shifts = info.has(tir_trait::ShiftsByRight);
    if (!divides && !shifts) return true;
    const TirValue* right = v.operands.size() == 2 ? v.operands[1] : nullptr;
    if (!right || right->op != TirOp::Constant) return false;
    const ConstantAttrs& c = right->attrs<ConstantAttrs>();
    const bool integer = c.literal == ConstantAttrs::Literal::Int || c.literal == ConstantAttrs::Literal::SignedInt;
    const auto value = static_cast<int64_t>(c.int_bits);
    return integer && value > 0 && (!shifts || value < 32);
  }

  // A kernel's boxes_hold: the boxes_condition of each of its box loops and
  // those of the functions it calls, over its parameters (through the lets
  // they read); null where one of them reads anything else (a tile's
  // coordinates, a loop's variable, a device function's compile-time
  // parameter).
  TirValue* boxes_hold(TirFunction& kernel) {
    TirBuilder b(m_);
    TirValue* all = nullptr;
    const Scope outermost{lets_of(kernel), {}, nullptr};
    std::unordered_set<const TirFunction*> open;  // the calls being written out
    std::function<bool(TirFunction&, const Scope&)> gather = [&](TirFunction& f, const Scope& scope) {
      if (!open.insert(&f).second) return false;
      bool written = true;
      for_each_stmt(f.body, [&](TirStmt* s) {
        if (s->kind == TirStmtKind::Specialize && s->body && any_value(s->body, is_bind_box)) {
          TirValue* c = s->boxes_condition ? written_out(s->boxes_condition, scope, kernel) : nullptr;
          written = written && c;
          if (c) all = all ? b.binary_bool(TirOp::LogicalAnd, all, c) : c;
        }
        for (TirValue* slot : {s->value, s->low, s->high, s->step})
          rewrite_value(slot, [&](TirValue* v) {
            if (v->op == TirOp::CallDevice && copies_boxes(*v->attrs<CallAttrs>().callee)) {
              TirFunction& callee = *v->attrs<CallAttrs>().callee;
              Scope inner{lets_of(callee), {}, &scope};
              for (size_t i = 0; i < callee.params.size() && i < v->operands.size(); ++i)
                inner.arguments.emplace(callee.params[i], v->operands[i]);
              written = written && gather(callee, inner);
            }
            return v;
          });
      });
      open.erase(&f);
      return written;
    };
    return gather(kernel, outermost) ? all : nullptr;  // all: a kernel with a copier has a box loop
  }

  static bool is_bind_box(const TirValue& v) { return v.op == TirOp::BindBox; }

  // v, read in `scope`, over the kernel's parameters; null where it reads
  // another variable, or computes what the host cannot (a program's id).
  TirValue* written_out(const TirValue* v, const Scope& scope, const TirFunction& kernel) {
    bool written = true;
    TirValue* out = clone_tree(m_, v, [&](const TirValue& node) -> TirValue* {
      if (!written) return nullptr;
      if (!tir_op_info(node.op).has(tir_trait::OnHost) || !safe_on_host(node)) written = false;
      if (node.op != TirOp::Read || !written) return nullptr;
      const TirVar* var = node.var();
      if (auto let = scope.lets.find(var); let != scope.lets.end()) {
        TirValue* value = written_out(let->second, scope, kernel);
        written = value != nullptr;
        return value ? value : const_cast<TirValue*>(&node);
      }
      if (!scope.caller) {
        const bool parameter = std::find(kernel.params.begin(), kernel.params.end(), var) != kernel.params.end() ||
                               std::find(kernel.ct_params.begin(), kernel.ct_params.end(), var) !=
                                   kernel.ct_params.end();
        written = parameter;
        return nullptr;
      }
      auto argument = scope.arguments.find(var);
      TirValue* in_caller = argument == scope.arguments.end() ? nullptr
                                                              : written_out(argument->second, *scope.caller, kernel);
      written = in_caller != nullptr;
      return in_caller ? in_caller : const_cast<TirValue*>(&node);
    });
    return written ? out : nullptr;
  }

  // Whether f computes without effects: no memory access, synchronisation,
  // dot or reduction, and calls only such functions.
  bool pure(const TirFunction& f) const { return !impure_.contains(&f); }

  // Whether v may make this thread's later reads see what other threads
  // wrote before it, itself or through a call (acquires_itself).
  bool acquires(const TirValue& v) const {
    return v.op == TirOp::CallDevice ? acquiring_.contains(v.attrs<CallAttrs>().callee) : acquires_itself(v);
  }

  // A wait, a fence, a barrier, an atomic or signal with acquire semantics:
  // a copy the copier issues after v's place must wait for it too. A release
  // (a store, a signal) orders only what comes before it, none of the
  // copier's business.
  static bool acquires_itself(const TirValue& v) {
    const auto acquiring = [](const MemorySemantics& o) { return o.sem == "acquire" || o.sem == "acq_rel"; };
    switch (v.op) {
      case TirOp::WaitUntil:
      case TirOp::Fence:
      case TirOp::Barrier: return true;
      case TirOp::AtomicRmw: return acquiring(v.attrs<RmwAttrs>().order);
      case TirOp::AtomicCas:
      case TirOp::AtomicLoad: return acquiring(v.attrs<OrderAttrs>().order);
      case TirOp::Signal:
      case TirOp::PutSignal: return acquiring(v.attrs<SignalAttrs>().order);
      default: return false;
    }
  }

  // ------------------------------------------------------------- slice
  // The copier of one function: its statements, and what they need.
  class Slice {
   public:
    Slice(CopierSlicer& s, TirFunction& f) : s_(s), f_(f), b_(s.m_), waits_(!f.is_kernel || reads_heap(f)) {}

    // The copier's body, or null.
    TirStmt* function_body() {
      // A device function's caller may copy after it returns.
      TirStmt* body = block(f_.body, /*copies_follow=*/!f_.is_kernel);
      if (failed_ || !body) return nullptr;
      drop_dead_definitions(body);
      return available() ? body : nullptr;
    }

   private:
    // Whether a kernel's copies may read the symmetric heap: a box of a heap
    // pointer, or a heap pointer passed to a function that copies boxes
    // (whose parameters do not say: a device function shares its waits).
    bool reads_heap(TirFunction& f) {
      bool found = false;
      for_each_value(f, [&](const TirValue* v) {
        if (v->op == TirOp::BindBox) found |= v->operands[3]->type.space != AddressSpace::Local;
        if (v->op == TirOp::CallDevice && s_.copies_boxes(*v->attrs<CallAttrs>().callee))
          for (const TirValue* o : v->operands) found |= o->type.is_pointer() && o->type.space != AddressSpace::Local;
      });
      return found;
    }

    // Whether s may reach a copy: a ring loop's statement, or a call of a
    // function that has a copier.
    bool copies(const TirStmt* s) {
      return any_value(s, [&](const TirValue& v) {
        return v.op == TirOp::BindBox || v.op == TirOp::EndBoxes || is_box_copy(v) ||
               (v.op == TirOp::CallDevice && s_.copies_boxes(*v.attrs<CallAttrs>().callee));
      });
    }

    // The copier's block of `b`'s statements, or null where none is kept.
    // copies_follow: whether a copy may run after the block.
    TirStmt* block(const TirStmt* b, bool copies_follow) {
      std::vector<bool> reaches(b->stmts.size());
      for (size_t i = 0; i < b->stmts.size(); ++i) reaches[i] = copies(b->stmts[i]);
      std::vector<TirStmt*> kept;
      bool later = copies_follow;
      std::vector<bool> follows(b->stmts.size());
      for (size_t i = b->stmts.size(); i-- > 0;) {
        follows[i] = later;
        later |= reaches[i];
      }
      for (size_t i = 0; i < b->stmts.size(); ++i)
        if (TirStmt* s = stmt(b->stmts[i], reaches[i], follows[i])) kept.push_back(s);
      if (kept.empty()) return nullptr;
      TirStmt* out = s_.m_.make_stmt(TirStmtKind::Block, b->loc);
      out->stmts = std::move(kept);
      return out;
    }

    // A copy of s's fields, its nested bodies to be set.
    TirStmt* copy(const TirStmt* s) {
      TirStmt* c = s_.m_.make_stmt(s->kind, s->loc);
      *c = *s;
      for (TirValue** slot : {&c->value, &c->low, &c->high, &c->step}) *slot = clone_tree(s_.m_, *slot);
      c->body = c->else_body = nullptr;
      c->stmts.clear();
      return c;
    }

    // The copier's statement for s, or null. reaches: whether s may reach a
    // copy; follows: whether a copy may run after it.
    TirStmt* stmt(const TirStmt* s, bool reaches, bool follows) {
      switch (s->kind) {
        case TirStmtKind::Block: return block(s, follows);
        case TirStmtKind::Let:
        case TirStmtKind::Var:
        case TirStmtKind::Assign: return definition(s, follows);
        case TirStmtKind::Shared: return copy(s);
        case TirStmtKind::Eval: return eval(s, follows);
        case TirStmtKind::If: {
          if (!reaches && !(follows && waits_ && waits(s))) return nullptr;
          TirStmt* c = controls(copy(s));
          c->body = s->body ? block(s->body, follows) : nullptr;
          c->else_body = s->else_body ? block(s->else_body, follows) : nullptr;
          if (!c->body && !c->else_body) return nullptr;
          if (!c->body) c->body = s_.m_.make_stmt(TirStmtKind::Block, s->loc);
          return c;
        }
        case TirStmtKind::For:
        case TirStmtKind::While:
        case TirStmtKind::Specialize: {
          // A loop's body runs again after itself.
          if (!reaches && !(follows && waits_ && waits(s))) return nullptr;
          TirStmt* c = controls(copy(s));
          c->body = block(s->body, follows || (reaches && s->kind != TirStmtKind::Specialize));
          return c->body ? c : nullptr;
        }
        case TirStmtKind::Break:
        case TirStmtKind::Continue: return copy(s);
        case TirStmtKind::Return: {
          TirStmt* c = copy(s);
          c->value = nullptr;  // the copier returns nothing
          return c;
        }
      }
      return nullptr;
    }

    // A kept if, loop or specialisation: the copier decides as the program
    // does only where its condition and bounds compute without effects.
    TirStmt* controls(TirStmt* c) {
      for (const TirValue* v : {c->value, c->low, c->high, c->step})
        if (!computable(v)) failed_ = true;
      return c;
    }

    // A copy_async with its box (pipeline-loads).
    static bool is_box_copy(const TirValue& v) { return v.op == TirOp::CopyAsync && v.operands.size() > 5; }

    // Whether s holds a wait the copier must share.
    static bool waits(const TirStmt* s) { return any_value(s, is_wait); }
    static bool is_wait(const TirValue& v) { return v.op == TirOp::WaitUntil || v.op == TirOp::Fence; }

    // A let, var or assignment: kept where its value computes without
    // effects (drop_dead_definitions drops those nothing reads); otherwise
    // the variable is not the copier's to read.
    TirStmt* definition(const TirStmt* s, bool follows) {
      if (s->value && !computable(s->value)) {
        unavailable_.insert(s->var);
        return effects(s, s->value, follows);
      }
      return copy(s);
    }

    bool computable(const TirValue* v) {
      if (!v) return true;
      if (v->op == TirOp::CallDevice) {
        if (!s_.pure(*v->attrs<CallAttrs>().callee)) return false;
      } else if (!tir_op_info(v->op).has(tir_trait::Recomputable)) {
        return false;
      }
      for (const TirValue* o : v->operands)
        if (!computable(o)) return false;
      return true;
    }

    TirStmt* eval(const TirStmt* s, bool follows) {
      const TirValue* v = s->value;
      switch (v->op) {
        case TirOp::BindBox: {
          TirStmt* c = copy(s);
          c->value->op = TirOp::BindCopies;
          return checked(c);
        }
        case TirOp::EndBoxes: {
          TirStmt* c = copy(s);
          c->value->op = TirOp::EndCopies;
          return checked(c);
        }
        case TirOp::CopyAsync: {
          if (!is_box_copy(*v)) return nullptr;  // copied through its pointers by the program
          TirStmt* c = copy(s);
          const auto& o = c->value->operands;
          c->value = b_.make(TirOp::CopyBox, {}, {o[3], o[5], o[4]});
          return checked(c);
        }
        case TirOp::WaitUntil:
        case TirOp::Fence: return follows && waits_ ? checked(copy(s)) : nullptr;
        default: return effects(s, v, follows);
      }
    }

    // The copier's part of statement s's value v, which has effects or reads
    // memory (the program's): a call of each copier of the device functions
    // it calls that copy boxes, in the order C++ evaluates them; nothing for
    // the rest. Fails where the copier cannot follow a call, or where v may
    // acquire (acquires) before a copy (follows) that the copier would issue
    // without it.
    TirStmt* effects(const TirStmt* s, const TirValue* v, bool follows) {
      std::vector<TirStmt*> calls;
      const auto walk = [&](const auto& self, const TirValue* n) -> void {
        if (!n) return;
        for (const TirValue* o : n->operands) self(self, o);
        if (n->op == TirOp::CallDevice && s_.copies_boxes(*n->attrs<CallAttrs>().callee)) {
          calls.push_back(call(s, n));
        } else if (follows && waits_ && s_.acquires(*n)) {
          failed_ = true;
        }
      };
      walk(walk, v);
      if (calls.empty()) return nullptr;
      if (calls.size() == 1) return calls[0];
      TirStmt* b = s_.m_.make_stmt(TirStmtKind::Block, s->loc);
      b->stmts = std::move(calls);
      return b;
    }

    // The call of v's callee's copier, with v's arguments.
    TirStmt* call(const TirStmt* s, const TirValue* v) {
      TirFunction* callee_copier = s_.copier(*v->attrs<CallAttrs>().callee);
      if (!callee_copier) failed_ = true;
      TirValue* c = s_.m_.make_value(TirOp::CallDevice, TirType{}, v->loc);
      c->attrs<CallAttrs>() = v->attrs<CallAttrs>();
      c->attrs<CallAttrs>().callee = callee_copier;
      for (const TirValue* o : v->operands) c->operands.push_back(clone_tree(s_.m_, o));
      TirStmt* e = s_.m_.make_stmt(TirStmtKind::Eval, s->loc);
      e->value = c;
      return checked(e);
    }

    // A statement the copier runs for its effect: its operands must compute
    // without effects too (a box's row, a wait's pointer).
    TirStmt* checked(TirStmt* s) {
      for (const TirValue* o : s->value->operands)
        if (o && !computable_or_ring(o)) failed_ = true;
      return s;
    }
    bool computable_or_ring(const TirValue* v) {
      if (v->op == TirOp::BoxAt || v->op == TirOp::StageAt) {
        for (const TirValue* o : v->operands)
          if (!computable(o)) return false;
        return true;
      }
      return computable(v);
    }

    // Whether every variable the kept statements read is one the copier
    // computes: a parameter, a loop's or ring's, or one whose every
    // definition it keeps.
    bool available() {
      bool ok = !failed_;
      for (const TirVar* v : unavailable_)
        if (read_by_kept_.contains(v)) ok = false;
      return ok;
    }

    // Drops the lets, vars, assignments and rings of variables that nothing
    // the copier does reads, directly or through another such variable (a
    // tile of pointers that only advances itself, the accumulator's).
    void drop_dead_definitions(TirStmt* body) {
      const auto defines = [](const TirStmt* t) {
        return t->kind == TirStmtKind::Let || t->kind == TirStmtKind::Var || t->kind == TirStmtKind::Assign ||
               t->kind == TirStmtKind::Shared;
      };
      const auto reads = [](TirStmt* t, std::unordered_set<const TirVar*>& into) {
        for (TirValue* slot : {t->value, t->low, t->high, t->step})
          rewrite_value(slot, [&](TirValue* v) {
            if (v->op == TirOp::Read) into.insert(v->var());
            return v;
          });
      };
      std::unordered_set<const TirVar*> needed;
      for_each_stmt(body, [&](TirStmt* t) {
        if (!defines(t)) reads(t, needed);
      });
      for (size_t before = 0; before != needed.size();) {
        before = needed.size();
        for_each_stmt(body, [&](TirStmt* t) {
          if (defines(t) && needed.contains(t->var)) reads(t, needed);
        });
      }
      for_each_stmt(body, [&](TirStmt* t) {
        if (t->kind == TirStmtKind::Block)
          std::erase_if(t->stmts, [&](TirStmt* d) { return defines(d) && !needed.contains(d->var); });
      });
      read_by_kept_ = std::move(needed);
    }

    CopierSlicer& s_;
    TirFunction& f_;
    TirBuilder b_;
    const bool waits_;  // whether the copier shares the program's waits
    bool failed_ = false;
    std::unordered_set<const TirVar*> unavailable_, read_by_kept_;
  };

  TirModule& m_;
  std::unordered_set<const TirFunction*> copies_boxes_, impure_, acquiring_;
  std::unordered_map<const TirFunction*, TirFunction*> copiers_;
  std::unordered_map<const TirFunction*, Lets> lets_;  // lets_of's
};

}  // namespace

void split_copier(TirModule& module) { CopierSlicer(module).run(); }

}  // namespace irisc
