// Load pipelining: in a K loop that only loads tiles and accumulates their
// dot product, the loads of later iterations are issued before this
// iteration's dot, so that their latency hides behind its arithmetic
// (Triton's and CUTLASS's software pipelining). Two forms:
//
// The loads whose tiles only feed dots become asynchronous copies into rings
// of S tiles in shared memory (Shared statements, carved from the kernel's
// dynamic shared memory), L = S - 2 iterations ahead, and dot reads its
// operands where they landed. S is the loop's `stages` where the program
// chose (a constant or a compile-time parameter), else kLookahead + 2:
//   for k in lo .. hi step s {           if lo < hi {
//       let a = load(P(k));               shared a_stages (S tiles)
//       acc = dot(a, b, acc);      ->     for i in 0 .. L { if lo + i s < hi { copy_async(P(lo + i s), a_stages[i]) }
//   }                                                       commit_async() }
//                                         var stage = 0;
//                                         for k in lo .. hi step s {
//                                             wait_async(L - 1)   (stage `stage` has landed, and
//                                                    everyone is past the last iteration's wait_dots)
//                                             let a = a_stages[stage];
//                                             acc = dot(a, b, acc) [pipelined];
//                                             wait_dots(1, acc)      (the last iteration's dot is done)
//                                             if k + L s < hi {
//                                                 copy_async(P(k + L s), a_stages[(stage + L) % S])
//                                             }
//                                             commit_async()
//                                             stage = (stage + 1) % S;
//                                       }
//                                         wait_dots(0, acc)    (acc is complete)
//                                         wait_async(0)        (the rings may be filled again)
//                                       }
// Every iteration commits one group, empty or not, so that "at most
// L - 1 groups in flight" always means "this iteration's has landed".
// A pipelined dot may still be running when the next iteration's dot starts
// (Hopper's wgmma is asynchronous), so that the tensor cores never wait for
// the threads: its accumulator is complete only once a wait_dots that is
// given it returns, and only a dot whose accumulator no other statement of
// the body touches is pipelined. The stage that an iteration's copies refill
// was read by the dots two iterations back, which every thread has waited
// for before this iteration's wait_async: L = S - 2 (with pipelined dots;
// S - 1 without, whose dots are done when they return).
// A copy whose runs of 16 bytes the pass can show to be aligned and wholly
// masked on or off under a run-time condition (run_conditions.h) gets the flag of
// a Specialize statement around the whole pipeline, which the C++ compiles
// twice: where the condition holds before the loop, those copies take each
// run whole or not at all, with no element-by-element path (iris::copy_async).
// The condition is a conjunction of divisibilities of scalars the loop does
// not change (K % 8 == 0, a 16-byte aligned base), the loop's lower bound and
// step among them where the copies' trees read the loop variable.
// The function records each loop's rings (TirFunction::stage_rings); a
// kernel reserves the most that any loop it runs, its own or one of a device
// function it calls, holds at once (emit_cpp: shared_bytes). No two such loops are live together: a
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
#include "irisc/affine.h"
#include "irisc/run_conditions.h"
#include "irisc/tir_builder.h"
#include "irisc/tir_walk.h"

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace irisc {
namespace {

// How many iterations ahead a pipelined loop copies its tiles: two stages in
// flight while the tensor cores work on a third (and a fourth, pipelined).
constexpr int kLookahead = 2;

// The bytes of a run of a copy: one cp.async (iris::CopyLayout).
constexpr int kRunBytes = 16;

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

class Pipeliner {
 public:
  Pipeliner(TirModule& module, TirFunction& function) : m_(module), f_(function), b_(module) {
    for_each_stmt(function.body, [&](TirStmt* s) {
      if (s->kind == TirStmtKind::Let) function_lets_[s->var] = s->value;
    });
  }

  // Pipelines `loop` (statement `index` of `block`) if it qualifies.
  void loop(TirStmt& block, size_t index) {
    TirStmt* loop = block.stmts[index];
    if (!qualifies(*loop)) return;
    loop_ = loop;
    b_.set_location(loop->loc);
    lets_.clear();
    operands_.clear();
    for (TirStmt* s : loop->body->stmts) {
      if (s->kind == TirStmtKind::Let) {
        lets_[s->var] = s->value;
        continue;
      }
      for (size_t operand = 0; operand < 2; ++operand) {
        TirValue*& slot = s->value->operands[operand];
        TirVar* let = slot->op == TirOp::Read && lets_.count(slot->var()) ? slot->var() : nullptr;
        TirValue* load = let ? lets_.at(let) : slot;
        // A load through the transport (multinode `get`) has no asynchronous copy.
        if (load->op == TirOp::Load && load->operands[0]->type.space != AddressSpace::AnyRank)
          operands_.push_back({&slot, load, let});
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
        if (v->op == TirOp::Read) ++reads[v->var()];
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
    // The stages the program chose, or enough for kLookahead; the copies run
    // S - 2 iterations ahead (S - 1 where no dot is pipelined).
    behind_ = accumulators.empty() ? 1 : 2;
    stages_ = loop_->stages ? *loop_->stages : Shape{{}, kLookahead + behind_};
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
      declare->value = previous ? b_.read(previous) : nullptr;
      before.push_back(declare);
      rings[o.load] = ring;
      ring_order.emplace_back(o.load, ring);
      previous = ring;
    }
    std::vector<const TirVar*> loop_rings;
    for (const auto& [load, ring] : ring_order) loop_rings.push_back(ring);
    f_.stage_rings.push_back(std::move(loop_rings));

    // The copies whose runs are uniform where `condition` holds read the flag.
    TirValue* condition = nullptr;
    uniform_loads_.clear();
    RunConditions conditions(m_, b_, *loop_, lets_, function_lets_,
                             [&](const TirValue* v) { return clone(v, nullptr); });
    for (const auto& [load, ring] : ring_order)
      if (TirValue* c = conditions.uniform_runs(*load, element_bytes(load->type, f_), kRunBytes)) {
        uniform_loads_.insert(load);
        condition = condition ? conditions.all_of(condition, c) : c;
      }
    uniform_flag_ = condition ? m_.make_var("uniform_runs", condition->type) : nullptr;

    // The first iterations' copies, one committed group each, in a loop over
    // the lookahead (a constant of the C++, which unrolls it).
    TirVar* ahead = m_.make_var("prologue", i32_type());
    LoopValue iteration = [&] { return plus_steps(clone(loop_->low, nullptr), b_.read(ahead)); };
    std::vector<TirStmt*> prologue_copies;
    for (const auto& [load, ring] : ring_order)
      prologue_copies.push_back(b_.eval(copy_async(load, iteration, stage(ring, b_.read(ahead)))));
    TirStmt* prologue = m_.make_stmt(TirStmtKind::For, loop_->loc);
    prologue->var = ahead;
    prologue->low = b_.constant(0);
    prologue->high = stages_minus(behind_);
    prologue->body = m_.make_stmt(TirStmtKind::Block, loop_->loc);
    prologue->body->stmts = {b_.guarded(b_.binary_bool(TirOp::Lt, iteration(), clone(loop_->high, nullptr)), prologue_copies),
                             b_.eval(b_.make(TirOp::CommitAsync, {}))};
    before.push_back(prologue);
    TirVar* slot = m_.make_var("stage", i32_type());
    TirStmt* declare_slot = m_.make_stmt(TirStmtKind::Var, loop_->loc);
    declare_slot->var = slot;
    declare_slot->value = b_.constant(0);
    before.push_back(declare_slot);

    // In the loop: wait for this iteration's stage; after this iteration's
    // dots, for the last iteration's; then issue the copies kLookahead
    // iterations ahead and commit them.
    body->stmts.insert(body->stmts.begin(), b_.eval(wait_async(stages_minus(behind_ + 1))));
    if (!accumulators.empty()) body->stmts.push_back(b_.eval(wait_dots(1, accumulators)));
    LoopValue later = [&] { return plus_steps(loop_var(), stages_minus(behind_)); };
    std::vector<TirStmt*> copies;
    for (const auto& [load, ring] : ring_order)
      copies.push_back(b_.eval(copy_async(load, later, stage(ring, next_slot(slot, stages_minus(behind_))))));
    body->stmts.push_back(b_.guarded(b_.binary_bool(TirOp::Lt, later(), clone(loop_->high, nullptr)), copies));
    body->stmts.push_back(b_.eval(b_.make(TirOp::CommitAsync, {})));

    // The dots read the stage this iteration's copies landed in.
    for (const Operand& o : operands_) {
      TirValue* tile = stage(rings.at(o.load), b_.read(slot));
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
    advance->value = next_slot(slot, b_.constant(1));
    body->stmts.push_back(advance);

    // Only where the loop runs at all: a path that skips the loop would join
    // the drain with the accumulators' initial values, and ptxas serialises
    // every wgmma of a loop whose accumulators anything but wgmma defines
    // before the wait that ends it.
    std::vector<TirStmt*> pipeline = std::move(before);
    pipeline.push_back(block.stmts[index]);
    if (!accumulators.empty()) pipeline.push_back(b_.eval(wait_dots(0, accumulators)));
    pipeline.push_back(b_.eval(wait_async(b_.constant(0))));
    if (uniform_flag_) {
      TirStmt* specialize = m_.make_stmt(TirStmtKind::Specialize, loop_->loc);
      specialize->var = uniform_flag_;
      specialize->value = condition;
      specialize->body = m_.make_stmt(TirStmtKind::Block, loop_->loc);
      specialize->body->stmts = std::move(pipeline);
      pipeline = {specialize};
    }
    block.stmts[index] = b_.guarded(b_.binary_bool(TirOp::Lt, clone(loop_->low, nullptr), clone(loop_->high, nullptr)), pipeline);
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
        if (v->op == TirOp::Read) ++reads[v->var()];
        return v;
      });
    }
    std::vector<TirVar*> accumulators;
    for (TirStmt* s : body.stmts) {
      if (s->kind != TirStmtKind::Assign || dots_into[s->var] != 1 || reads[s->var] != 1) continue;
      const TirValue* acc = s->value->operands[2];
      if (acc->op != TirOp::Read || acc->var() != s->var) continue;
      s->value->attrs<DotAttrs>().pipelined = true;
      accumulators.push_back(s->var);
    }
    return accumulators;
  }

  TirValue* wait_async(TirValue* pending) { return b_.make(TirOp::WaitAsync, {}, {pending}); }

  TirValue* wait_dots(int pending, const std::vector<TirVar*>& accumulators) {
    TirValue* wait = b_.make(TirOp::WaitDots, {}, {b_.constant(pending)});
    for (const TirVar* acc : accumulators) wait->operands.push_back(b_.read(acc));
    return wait;
  }

  // copy_async of `load`'s tree, with the loop variable `at`, into `stage`.
  TirValue* copy_async(const TirValue* load, const LoopValue& at, TirValue* stage) {
    TirValue* copy = m_.make_value(TirOp::CopyAsync, TirType{}, load->loc);
    for (const TirValue* operand : load->operands) copy->operands.push_back(clone(operand, at));
    copy->operands.push_back(stage);
    copy->attrs<AccessAttrs>() = {
        .contiguous_rows = AffineForm::of(copy->operands[0], function_lets_).row_stride() == 1,
        .row_interval_mask = copy->operands[1] && row_intervals(copy->operands[1], function_lets_)};
    if (uniform_loads_.count(load)) copy->operands.push_back(b_.read(uniform_flag_));
    return copy;
  }

  TirValue* stage(const TirVar* ring, TirValue* slot) {
    TirType type = ring->type;
    type.layout = TirLayout::Shared;
    type.stages = Shape{{}, 0};
    return b_.make(TirOp::StageAt, type, {b_.read(ring), slot});
  }

  // (slot + by) % S.
  TirValue* next_slot(const TirVar* slot, TirValue* by) {
    return b_.binary(TirOp::Mod, b_.binary(TirOp::Add, b_.read(slot), by), stages_minus(0));
  }

  // S - n, a constant of the C++ (a template argument where S is a
  // compile-time parameter's).
  TirValue* stages_minus(int n) {
    if (stages_.symbol.empty()) return b_.constant(static_cast<int>(*stages_.value) - n);
    return b_.named_constant(n == 0 ? stages_.symbol : m_.save(fmt::format("({} - {})", stages_.symbol, n)));
  }

  // ------------------------------------------------- register prefetch
  void prefetch_into_registers(TirStmt& block, size_t index) {
    std::vector<TirStmt*> prologue_assigns, prefetch_assigns, declarations, copies;
    TirStmt* body = loop_->body;
    size_t first_dot = body->stmts.size();
    for (size_t i = 0; i < body->stmts.size(); ++i)
      if (body->stmts[i]->kind != TirStmtKind::Let) first_dot = std::min(first_dot, i);
    LoopValue low = [&] { return clone(loop_->low, nullptr); };
    LoopValue next = [&] { return plus_steps(loop_var(), b_.constant(1)); };
    std::unordered_map<const TirValue*, TirVar*> next_tiles;  // one per load (a let read by two dots is one)
    for (const Operand& o : operands_) {
      TirVar*& next_tile = next_tiles[o.load];
      if (next_tile && o.let) continue;  // its let reads it already
      if (!next_tile) {
        next_tile = m_.make_var(m_.save(std::string(name_of(o)) + "_next"), o.load->type);
        TirStmt* declare = m_.make_stmt(TirStmtKind::Var, loop_->loc);
        declare->var = next_tile;
        declare->value = b_.make(TirOp::Zeros, o.load->type);
        declarations.push_back(declare);
        prologue_assigns.push_back(b_.assign(next_tile, clone(o.load, low)));
        prefetch_assigns.push_back(b_.assign(next_tile, clone(o.load, next)));
      }
      // The dot now reads the tile loaded one iteration earlier, copied
      // (by its let, or a new one) before the next one is loaded.
      if (o.let) {
        for (TirStmt* s : body->stmts)
          if (s->kind == TirStmtKind::Let && s->var == o.let) s->value = b_.read(next_tile);
        continue;
      }
      TirStmt* copy = m_.make_stmt(TirStmtKind::Let, o.load->loc);
      copy->var = m_.make_var("tile", o.load->type);
      copy->value = b_.read(next_tile);
      copy->keeps_value_type = true;
      copies.push_back(copy);
      *o.slot = b_.read(copy->var);
    }
    copies.push_back(b_.guarded(b_.binary_bool(TirOp::Lt, next(), clone(loop_->high, nullptr)), prefetch_assigns));
    body->stmts.insert(body->stmts.begin() + first_dot, copies.begin(), copies.end());
    std::vector<TirStmt*> before = declarations;
    before.push_back(b_.guarded(b_.binary_bool(TirOp::Lt, low(), clone(loop_->high, nullptr)), prologue_assigns));
    block.stmts.insert(block.stmts.begin() + index, before.begin(), before.end());
  }

  TirValue* loop_var() { return b_.read(loop_->var); }

  // k + n * step (n without a step).
  TirValue* plus_steps(TirValue* k, TirValue* n) {
    TirValue* distance = loop_->step ? b_.binary(TirOp::Mul, n, clone(loop_->step, nullptr)) : n;
    return b_.binary(TirOp::Add, k, distance);
  }

  // A copy of v's tree, the body's lets inlined and the loop variable
  // replaced by loop_value() where that is given.
  TirValue* clone(const TirValue* v, const LoopValue& loop_value) {
    return clone_tree(m_, v, [&](const TirValue& node) -> TirValue* {
      if (node.op != TirOp::Read) return nullptr;
      if (node.var() == loop_->var && loop_value) return loop_value();
      return lets_.count(node.var()) ? clone(lets_.at(node.var()), loop_value) : nullptr;
    });
  }

  TirModule& m_;
  TirFunction& f_;
  TirBuilder b_;  // leaves at the loop being pipelined
  const TirStmt* loop_ = nullptr;
  std::unordered_map<const TirVar*, TirValue*> lets_;  // the loop body's lets, by variable
  std::vector<Operand> operands_;                     // the loop's loaded dot operands
  Shape stages_;                                       // the tiles of each of the loop's rings
  int behind_ = 0;  // S minus how far ahead the copies run: 2 with pipelined dots, else 1
  std::unordered_set<const TirValue*> uniform_loads_;  // the loads whose copies read uniform_flag_
  TirVar* uniform_flag_ = nullptr;
  std::unordered_map<const TirVar*, const TirValue*> function_lets_;  // every let of the function
};

}  // namespace

void pipeline_loads(TirModule& module) {
  for (TirFunction* function : module.functions) {
    Pipeliner pipeliner(module, *function);
    for_each_loop_last_first(function->body, [&](TirStmt& block, size_t index) { pipeliner.loop(block, index); });
  }
}

}  // namespace irisc
