// Load pipelining: in a K loop that only loads tiles and accumulates their
// dot product, the loads of later iterations are issued before this
// iteration's dot, so that their latency hides behind its arithmetic
// (Triton's and CUTLASS's software pipelining). Two forms:
//
// The loads whose tiles only feed dots become asynchronous copies into rings
// of S tiles in shared memory (Shared statements, carved from the kernel's
// dynamic shared memory), kLookahead iterations ahead, and dot reads its
// operands where they landed:
//   for k in lo .. hi step s {           if lo < hi {
//       let a = load(P(k));               shared a_stages (S tiles)
//       acc = dot(a, b, acc);      ->     copy_async(P(lo + i s), a_stages[i])  (i < kLookahead, each but
//   }                                     commit_async()                         the first if lo + i s < hi)
//                                         var stage = 0;
//                                         for k in lo .. hi step s {
//                                             wait_async(kLookahead - 1)   (stage `stage` has landed, and
//                                                    everyone is past the last iteration's wait_dots)
//                                             let a = a_stages[stage];
//                                             acc = dot(a, b, acc) [pipelined];
//                                             wait_dots(1, acc)      (the last iteration's dot is done)
//                                             if k + kLookahead s < hi {
//                                                 copy_async(P(k + kLookahead s), a_stages[(stage + kLookahead) % S])
//                                             }
//                                             commit_async()
//                                             stage = (stage + 1) % S;
//                                       }
//                                         wait_dots(0, acc)    (acc is complete)
//                                         wait_async(0)        (the rings may be filled again)
//                                       }
// Every iteration commits one group, empty or not, so that "at most
// kLookahead - 1 groups in flight" always means "this iteration's has landed".
// A pipelined dot may still be running when the next iteration's dot starts
// (Hopper's wgmma is asynchronous), so that the tensor cores never wait for
// the threads: its accumulator is complete only once a wait_dots that is
// given it returns, and only a dot whose accumulator no other statement of
// the body touches is pipelined. The stage that an iteration's copies refill
// was read by the dots two iterations back, which every thread has waited
// for before this iteration's wait_async: S = kLookahead + 2 (with pipelined
// dots; kLookahead + 1 without, whose dots are done when they return).
// The function records each loop's rings (TirFunction::stage_rings); a
// kernel reserves the most that any loop it runs, its own or one of a device
// function it calls, holds at once. No two such loops are live together: a
// pipelined loop's body calls nothing.
//
// A loaded tile that something else than a dot also reads stays in
// registers instead, loaded one iteration ahead:
//   for k in lo .. hi step s {             var a_next = zeros(...);
//       let a = load(P(k));        ->      if lo < hi { a_next = load(P(lo)); }
//       acc = dot(a, b, acc);              for k in lo .. hi step s {
//   }                                          let a = a_next;
//                                              if k + s < hi { a_next = load(P(k + s)); }
//                                              acc = dot(a, b, acc);
//                                          }
//
// P(k') is the load's tree with the loop variable replaced and the body's
// `let`s it reads inlined. A loop qualifies only when its body is lets, then
// dot accumulations, and nothing in it but its loads touches memory (no
// stores, atomics, waits or calls: a wait may be what makes the next tile
// ready) and its bounds and step are recomputable, so that the loads may move
// and the bounds may be evaluated again.
#include "irisc/passes.h"
#include "irisc/tir_walk.h"

#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace irisc {
namespace {

// How many iterations ahead a pipelined loop copies its tiles: two stages in
// flight while the tensor cores work on a third (and a fourth, pipelined).
constexpr int kLookahead = 2;

// A loop body's value that only loads: recomputable, or a load of
// recomputable pointers, mask and `other`.
bool only_loads(const TirValue* v) {
  if (!v) return true;
  if (v->op == TirOp::Load) {
    for (const TirValue* o : v->operands)
      if (!recomputable(o)) return false;
    return true;
  }
  return recomputable(v);
}

// How far v's elements advance from one column to the next, in elements
// (pointers) or units: 0 where v is the same along each row, nullopt where
// it is not known. `lets` gives the value of each let, which is never
// assigned again. Pointer tiles built as base + rows[:, None] * ld +
// (k + arange(BK))[None, :] advance by 1.
std::optional<int64_t> row_stride(const TirValue* v, const std::unordered_map<const TirVar*, const TirValue*>& lets) {
  if (!v->type.is_tile()) return 0;
  auto of = [&](size_t i) { return row_stride(v->operands[i], lets); };
  switch (v->op) {
    case TirOp::Read: {
      auto let = lets.find(v->var);
      return let == lets.end() ? std::nullopt : row_stride(let->second, lets);
    }
    case TirOp::Arange: return 1;
    case TirOp::Broadcast:
    case TirOp::Zeros:
    case TirOp::Full: return 0;
    case TirOp::AddAxis: return v->axis == 1 ? std::optional<int64_t>(0) : of(0);
    case TirOp::BroadcastTo: return v->operands[0]->type.dims.back().is_one() ? std::optional<int64_t>(0) : of(0);
    case TirOp::Convert:
    case TirOp::ConvertLayout:
    case TirOp::Translate: return of(0);  // a translation moves every pointer by the same distance
    case TirOp::Add:
    case TirOp::Sub: {
      auto a = of(0), b = of(1);
      if (!a || !b) return std::nullopt;
      return v->op == TirOp::Add ? *a + *b : *a - *b;
    }
    case TirOp::Mul: {
      auto a = of(0), b = of(1);
      if (a == 0 && b == 0) return 0;
      // By a constant: stride times the constant.
      for (auto [stride, other] : {std::pair{a, v->operands[1]}, std::pair{b, v->operands[0]}}) {
        const TirValue* c = other->op == TirOp::Broadcast ? other->operands[0] : other;
        if (stride && c->op == TirOp::Constant && c->literal != TirValue::Literal::Float)
          return *stride * static_cast<int64_t>(c->int_bits);
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

// Whether the mask v holds, along each row, one run of consecutive columns
// (possibly none): a comparison whose sides advance by constants from one
// column to the next (row_stride) holds on a prefix or a suffix of the row,
// and a conjunction of runs is a run. copy_async then looks only at the first
// and the last element of each of its runs (iris::RowIntervals).
bool row_interval(const TirValue* v, const std::unordered_map<const TirVar*, const TirValue*>& lets) {
  if (!v->type.is_tile()) return true;
  auto of = [&](size_t i) { return row_interval(v->operands[i], lets); };
  switch (v->op) {
    case TirOp::Read: {
      auto let = lets.find(v->var);
      return let != lets.end() && row_interval(let->second, lets);
    }
    case TirOp::Broadcast: return true;
    case TirOp::AddAxis:
    case TirOp::ConvertLayout: return of(0);
    case TirOp::BroadcastTo: return v->operands[0]->type.dims.back().is_one() || of(0);
    case TirOp::LogicalAnd:
    case TirOp::BitAnd: return of(0) && of(1);
    case TirOp::Lt:
    case TirOp::Le:
    case TirOp::Gt:
    case TirOp::Ge: return row_stride(v->operands[0], lets) && row_stride(v->operands[1], lets);
    default: return false;
  }
}

TirType i32_type() {
  TirType t;
  t.kind = TirType::Kind::Scalar;
  t.scalar = ScalarKind::I32;
  return t;
}

class Pipeliner {
 public:
  Pipeliner(TirModule& module, TirFunction& function) : m_(module), f_(function) {
    for_each_stmt(function.body, [&](TirStmt* s) {
      if (s->kind == TirStmtKind::Let) function_lets_[s->var] = s->value;
    });
  }

  // Pipelines `loop` (statement `index` of `block`) if it qualifies.
  void loop(TirStmt& block, size_t index) {
    TirStmt* loop = block.stmts[index];
    if (!qualifies(*loop)) return;
    loop_ = loop;
    lets_.clear();
    operands_.clear();
    for (TirStmt* s : loop->body->stmts) {
      if (s->kind == TirStmtKind::Let) {
        lets_[s->var] = s->value;
        continue;
      }
      for (size_t operand = 0; operand < 2; ++operand) {
        TirValue*& slot = s->value->operands[operand];
        TirVar* let = slot->op == TirOp::Read && lets_.count(slot->var) ? slot->var : nullptr;
        TirValue* load = let ? lets_.at(let) : slot;
        if (load->op == TirOp::Load) operands_.push_back({&slot, load, let});
      }
    }
    if (operands_.empty()) return;
    if (only_dots_read_loaded_lets()) {
      stage_in_shared_memory(block, index);
    } else {
      prefetch_into_registers(block, index);
    }
  }

 private:
  // A dot operand that a load makes: the dot's operand slot, the load, and
  // the let that holds it (null where the dot loads it itself).
  struct Operand {
    TirValue** slot;
    TirValue* load;
    TirVar* let;
  };
  using LoopValue = std::function<TirValue*()>;  // a fresh tree for the loop variable; null: keep it

  bool qualifies(const TirStmt& loop) const {
    if (loop.kind != TirStmtKind::For || !recomputable(loop.low) || !recomputable(loop.high) ||
        !recomputable(loop.step))
      return false;
    bool dots = false;
    for (const TirStmt* s : loop.body->stmts) {
      // Lets first, then dots: the next tiles load between the two.
      if (s->kind == TirStmtKind::Let && only_loads(s->value) && !dots) continue;
      bool accumulates = s->kind == TirStmtKind::Assign && s->value->op == TirOp::Dot &&
                         only_loads(s->value->operands[0]) && only_loads(s->value->operands[1]) &&
                         recomputable(s->value->operands[2]);
      if (!accumulates) return false;
      dots = true;
    }
    return dots;
  }

  // Whether every read of a let of a loaded tile is a dot's operand, so that
  // the tile need only ever be in shared memory.
  bool only_dots_read_loaded_lets() const {
    std::unordered_map<const TirVar*, int> reads, dot_reads;
    for (const Operand& o : operands_)
      if (o.let) ++dot_reads[o.let];
    for (TirStmt* s : loop_->body->stmts)
      rewrite_value(s->value, [&](TirValue* v) {
        if (v->op == TirOp::Read) ++reads[v->var];
        return v;
      });
    for (const auto& [let, count] : dot_reads)
      if (reads[let] != count) return false;
    return true;
  }

  static std::string_view name_of(const Operand& o) { return o.let ? o.let->name : std::string_view("tile"); }

  // ------------------------------------------------- shared-memory stages
  void stage_in_shared_memory(TirStmt& block, size_t index) {
    TirStmt* body = loop_->body;
    const std::vector<TirVar*> accumulators = mark_pipelined_dots(*body);
    stages_ = kLookahead + (accumulators.empty() ? 1 : 2);
    std::vector<TirStmt*> before;
    // One ring per load (a let read by two dots is one load), each after the last.
    std::unordered_map<const TirValue*, TirVar*> rings;
    std::vector<std::pair<const TirValue*, TirVar*>> ring_order;
    const TirVar* previous = nullptr;
    for (const Operand& o : operands_) {
      if (rings.count(o.load)) continue;
      TirType type = o.load->type;
      type.layout = TirLayout::Stages;
      type.stages = stages_;
      TirVar* ring = m_.make_var(m_.save(std::string(name_of(o)) + "_stages"), type);
      TirStmt* declare = m_.make_stmt(TirStmtKind::Shared, loop_->loc);
      declare->var = ring;
      declare->value = previous ? read(previous) : nullptr;
      before.push_back(declare);
      rings[o.load] = ring;
      ring_order.emplace_back(o.load, ring);
      previous = ring;
    }
    std::vector<const TirVar*> loop_rings;
    for (const auto& [load, ring] : ring_order) loop_rings.push_back(ring);
    f_.stage_rings.push_back(std::move(loop_rings));

    // The first kLookahead iterations' copies, each group committed (the
    // first iteration runs: the whole is guarded by the loop's bounds).
    for (int i = 0; i < kLookahead; ++i) {
      LoopValue iteration = [&, i] { return plus_steps(clone(loop_->low, nullptr), i); };
      std::vector<TirStmt*> copies;
      for (const auto& [load, ring] : ring_order)
        copies.push_back(eval(copy_async(load, iteration, stage(ring, constant(i)))));
      if (i == 0)
        before.insert(before.end(), copies.begin(), copies.end());
      else
        before.push_back(guarded(compare(iteration(), clone(loop_->high, nullptr)), copies));
      before.push_back(eval(sync_op(TirOp::CommitAsync, nullptr)));
    }
    TirVar* slot = m_.make_var("stage", i32_type());
    TirStmt* declare_slot = m_.make_stmt(TirStmtKind::Var, loop_->loc);
    declare_slot->var = slot;
    declare_slot->value = constant(0);
    before.push_back(declare_slot);

    // In the loop: wait for this iteration's stage; after this iteration's
    // dots, for the last iteration's; then issue the copies kLookahead
    // iterations ahead and commit them.
    body->stmts.insert(body->stmts.begin(), eval(wait_async(kLookahead - 1)));
    if (!accumulators.empty()) body->stmts.push_back(eval(wait_dots(1, accumulators)));
    LoopValue ahead = [&] { return plus_steps(loop_var(), kLookahead); };
    std::vector<TirStmt*> copies;
    for (const auto& [load, ring] : ring_order)
      copies.push_back(eval(copy_async(load, ahead, stage(ring, next_slot(slot, kLookahead)))));
    body->stmts.push_back(guarded(compare(ahead(), clone(loop_->high, nullptr)), copies));
    body->stmts.push_back(eval(sync_op(TirOp::CommitAsync, nullptr)));

    // The dots read the stage this iteration's copies landed in.
    for (const Operand& o : operands_) {
      TirValue* tile = stage(rings.at(o.load), read(slot));
      if (!o.let) {
        *o.slot = tile;
        continue;
      }
      o.let->type = tile->type;
      for (TirStmt* s : body->stmts)
        if (s->kind == TirStmtKind::Let && s->var == o.let) {
          s->value = tile;
          s->keeps_value_type = true;
        }
      (*o.slot)->type = tile->type;
    }
    TirStmt* advance = m_.make_stmt(TirStmtKind::Assign, loop_->loc);
    advance->var = slot;
    advance->value = next_slot(slot, 1);
    body->stmts.push_back(advance);

    // Only where the loop runs at all: a path that skips the loop would join
    // the drain with the accumulators' initial values, and ptxas serialises
    // every wgmma of a loop whose accumulators anything but wgmma defines
    // before the wait that ends it.
    std::vector<TirStmt*> pipeline = std::move(before);
    pipeline.push_back(block.stmts[index]);
    if (!accumulators.empty()) pipeline.push_back(eval(wait_dots(0, accumulators)));
    pipeline.push_back(eval(wait_async(0)));
    block.stmts[index] = guarded(compare(clone(loop_->low, nullptr), clone(loop_->high, nullptr)), pipeline);
  }

  // Marks the body's dots that may finish at a later WaitDots (on Hopper,
  // wgmma then works while the threads issue the copies and the next
  // iteration's dots) and returns their
  // accumulators: those that exactly one dot of the body accumulates into and
  // nothing else in the body reads (the copies issued after the dot repeat
  // the loads' trees).
  std::vector<TirVar*> mark_pipelined_dots(TirStmt& body) {
    std::unordered_map<const TirVar*, int> dots_into, reads;
    for (TirStmt* s : body.stmts) {
      if (s->kind == TirStmtKind::Assign) ++dots_into[s->var];
      rewrite_value(s->value, [&](TirValue* v) {
        if (v->op == TirOp::Read) ++reads[v->var];
        return v;
      });
    }
    std::vector<TirVar*> accumulators;
    for (TirStmt* s : body.stmts) {
      if (s->kind != TirStmtKind::Assign || dots_into[s->var] != 1 || reads[s->var] != 1) continue;
      const TirValue* acc = s->value->operands[2];
      if (acc->op != TirOp::Read || acc->var != s->var) continue;
      s->value->pipelined = true;
      accumulators.push_back(s->var);
    }
    return accumulators;
  }

  TirValue* wait_async(int pending) { return sync_op(TirOp::WaitAsync, constant(pending)); }

  TirValue* wait_dots(int pending, const std::vector<TirVar*>& accumulators) {
    TirValue* wait = sync_op(TirOp::WaitDots, constant(pending));
    for (const TirVar* acc : accumulators) wait->operands.push_back(read(acc));
    return wait;
  }

  // copy_async of `load`'s tree, with the loop variable `at`, into `stage`.
  TirValue* copy_async(const TirValue* load, const LoopValue& at, TirValue* stage) {
    TirValue* copy = m_.make_value(TirOp::CopyAsync, TirType{}, load->loc);
    for (const TirValue* operand : load->operands) copy->operands.push_back(clone(operand, at));
    copy->operands.push_back(stage);
    copy->contiguous_rows = row_stride(copy->operands[0], function_lets_) == 1;
    copy->row_interval_mask = copy->operands[1] && row_interval(copy->operands[1], function_lets_);
    return copy;
  }

  TirValue* stage(const TirVar* ring, TirValue* slot) {
    TirType type = ring->type;
    type.layout = TirLayout::Shared;
    type.stages = 0;
    TirValue* v = m_.make_value(TirOp::StageAt, type, loop_->loc);
    v->operands = {read(ring), slot};
    return v;
  }

  // (slot + by) % S.
  TirValue* next_slot(const TirVar* slot, int by) {
    return binary(TirOp::Mod, binary(TirOp::Add, read(slot), constant(by)), constant(stages_));
  }

  TirValue* sync_op(TirOp op, TirValue* operand) {
    TirValue* v = m_.make_value(op, TirType{}, loop_->loc);
    if (operand) v->operands.push_back(operand);
    return v;
  }

  // ------------------------------------------------- register prefetch
  void prefetch_into_registers(TirStmt& block, size_t index) {
    std::vector<TirStmt*> prologue_assigns, prefetch_assigns, declarations, copies;
    TirStmt* body = loop_->body;
    size_t first_dot = body->stmts.size();
    for (size_t i = 0; i < body->stmts.size(); ++i)
      if (body->stmts[i]->kind != TirStmtKind::Let) first_dot = std::min(first_dot, i);
    LoopValue low = [&] { return clone(loop_->low, nullptr); };
    LoopValue next = [&] { return plus_steps(loop_var(), 1); };
    std::unordered_map<const TirValue*, TirVar*> next_tiles;  // one per load (a let read by two dots is one)
    for (const Operand& o : operands_) {
      TirVar*& next_tile = next_tiles[o.load];
      if (next_tile && o.let) continue;  // its let reads it already
      if (!next_tile) {
        next_tile = m_.make_var(m_.save(std::string(name_of(o)) + "_next"), o.load->type);
        TirStmt* declare = m_.make_stmt(TirStmtKind::Var, loop_->loc);
        declare->var = next_tile;
        declare->value = m_.make_value(TirOp::Zeros, o.load->type, loop_->loc);
        declarations.push_back(declare);
        prologue_assigns.push_back(assign(next_tile, clone(o.load, low)));
        prefetch_assigns.push_back(assign(next_tile, clone(o.load, next)));
      }
      // The dot now reads the tile loaded one iteration earlier, copied
      // (by its let, or a new one) before the next one is loaded.
      if (o.let) {
        for (TirStmt* s : body->stmts)
          if (s->kind == TirStmtKind::Let && s->var == o.let) s->value = read(next_tile);
        continue;
      }
      TirStmt* copy = m_.make_stmt(TirStmtKind::Let, o.load->loc);
      copy->var = m_.make_var("tile", o.load->type);
      copy->value = read(next_tile);
      copy->keeps_value_type = true;
      copies.push_back(copy);
      *o.slot = read(copy->var);
    }
    copies.push_back(guarded(compare(next(), clone(loop_->high, nullptr)), prefetch_assigns));
    body->stmts.insert(body->stmts.begin() + first_dot, copies.begin(), copies.end());
    std::vector<TirStmt*> before = declarations;
    before.push_back(guarded(compare(low(), clone(loop_->high, nullptr)), prologue_assigns));
    block.stmts.insert(block.stmts.begin() + index, before.begin(), before.end());
  }

  // ------------------------------------------------- building blocks
  TirValue* read(const TirVar* var) {
    TirValue* v = m_.make_value(TirOp::Read, var->type, loop_->loc);
    v->var = const_cast<TirVar*>(var);
    return v;
  }

  TirValue* constant(int value) {
    TirValue* c = m_.make_value(TirOp::Constant, i32_type(), loop_->loc);
    c->int_bits = static_cast<uint64_t>(value);
    return c;
  }

  TirValue* binary(TirOp op, TirValue* a, TirValue* b) {
    TirValue* v = m_.make_value(op, a->type, a->loc);
    v->operands = {a, b};
    return v;
  }

  TirStmt* eval(TirValue* value) {
    TirStmt* s = m_.make_stmt(TirStmtKind::Eval, value->loc);
    s->value = value;
    return s;
  }

  TirStmt* assign(TirVar* var, TirValue* value) {
    TirStmt* s = m_.make_stmt(TirStmtKind::Assign, value->loc);
    s->var = var;
    s->value = value;
    return s;
  }

  TirStmt* guarded(TirValue* condition, const std::vector<TirStmt*>& stmts) {
    TirStmt* then = m_.make_stmt(TirStmtKind::Block, condition->loc);
    then->stmts = stmts;
    TirStmt* s = m_.make_stmt(TirStmtKind::If, condition->loc);
    s->value = condition;
    s->body = then;
    return s;
  }

  TirValue* compare(TirValue* a, TirValue* b) {
    TirValue* lt = m_.make_value(TirOp::Lt, a->type.with_scalar(ScalarKind::Bool), a->loc);
    lt->operands = {a, b};
    return lt;
  }

  TirValue* loop_var() { return read(loop_->var); }

  // k + n * step (n without a step), in the loop variable's type.
  TirValue* plus_steps(TirValue* k, int n) {
    if (n == 0) return k;
    TirValue* count = m_.make_value(TirOp::Constant, loop_->var->type, loop_->loc);
    count->int_bits = static_cast<uint64_t>(n);
    TirValue* distance = loop_->step ? binary(TirOp::Mul, count, clone(loop_->step, nullptr)) : count;
    return binary(TirOp::Add, k, distance);
  }

  // A copy of v's tree, the body's lets inlined and the loop variable
  // replaced by loop_value() where that is given.
  TirValue* clone(const TirValue* v, const LoopValue& loop_value) {
    return clone_tree(m_, v, [&](const TirValue& node) -> TirValue* {
      if (node.op != TirOp::Read) return nullptr;
      if (node.var == loop_->var && loop_value) return loop_value();
      return lets_.count(node.var) ? clone(lets_.at(node.var), loop_value) : nullptr;
    });
  }

  TirModule& m_;
  TirFunction& f_;
  const TirStmt* loop_ = nullptr;
  std::unordered_map<const TirVar*, TirValue*> lets_;  // the loop body's lets, by variable
  std::vector<Operand> operands_;                     // the loop's loaded dot operands
  int stages_ = 0;                                    // the tiles of each of the loop's rings
  std::unordered_map<const TirVar*, const TirValue*> function_lets_;  // every let of the function
};

}  // namespace

void pipeline_loads(TirModule& module) {
  for (TirFunction* function : module.functions) {
    Pipeliner pipeliner(module, *function);
    std::vector<std::pair<TirStmt*, size_t>> loops;  // (block, index), found first: pipelining inserts statements
    for_each_stmt(function->body, [&](TirStmt* s) {
      if (s->kind != TirStmtKind::Block) return;
      for (size_t i = 0; i < s->stmts.size(); ++i)
        if (s->stmts[i]->kind == TirStmtKind::For) loops.emplace_back(s, i);
    });
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) pipeliner.loop(*it->first, it->second);
  }
  // A kernel reserves shared memory for the loops of the device functions it
  // calls too, directly or not.
  for (TirFunction* kernel : module.functions) {
    if (!kernel->is_kernel) continue;
    std::unordered_set<const TirFunction*> seen;
    std::vector<TirFunction*> pending = {kernel};
    while (!pending.empty()) {
      TirFunction* f = pending.back();
      pending.pop_back();
      for_each_value(*f, [&](TirValue* v) {
        if (v->op != TirOp::CallDevice || !seen.insert(v->callee).second) return;
        pending.push_back(v->callee);
        kernel->stage_rings.insert(kernel->stage_rings.end(), v->callee->stage_rings.begin(),
                                   v->callee->stage_rings.end());
      });
    }
  }
}

}  // namespace irisc
