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
//                                             [boxes: if k != lo { release_boxes((stage + S - 1) % S) }]
//                                             if k + L s < hi {
//                                                 copy_async(P(k + L s), a_stages[(stage + L) % S])
//                                             }
//                                             commit_async()
//                                             stage = (stage + 1) % S;
//                                       }
//                                         wait_dots(0, acc)    (acc is complete)
//                                         [boxes: release_boxes((stage + S - 1) % S)]
//                                         end_boxes(rings)     (wait_async(0): the rings may be
//                                                              filled again; and tells a copier)
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
// The function records each loop's place and rings (TirFunction::stage_loops); a
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

#include "iris/ops/box_limits.hpp"  // the most rings a loop whose copies are boxes may have

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
  Pipeliner(TirModule& module, TirFunction& function, bool boxes) : m_(module), f_(function), b_(module), boxes_allowed_(boxes) {
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
    f_.stage_loops.push_back({loop_->loc, std::move(loop_rings)});

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
    // The uniform copies of 2-byte elements that are boxes of a matrix, which
    // the runtime may copy by TMA (ops/copy_box.hpp): only where every ring's
    // copies are, so that a wait on the stages' barriers replaces
    // wait_async's (no cp.async group to wait for). The specialisation then
    // asks what a tensor map needs: a row and a column at least, and rows no
    // longer than ld.
    boxes_.clear();
    if (boxes_allowed_)
      for (const auto& [load, ring] : ring_order)
        if (uniform_loads_.count(load) && element_bytes(load->type, f_) == 2)
          if (std::optional<Box> box = box_of(*load)) boxes_.emplace(load, *box);
    if (boxes_.size() != ring_order.size() || ring_order.size() > iris::detail::kBoxRings) boxes_.clear();
    // What TMA alone needs of the boxes (its zeros past the matrix make the
    // runs' other conditions moot): a 16-byte aligned base and rows of whole
    // 16 bytes besides those, a loop's whole boxes_condition.
    TirValue* boxes_condition = boxes_.empty() ? nullptr : b_.true_value();
    auto box_needs = [&](TirValue* all, const Box& b) {
      all = conditions.all_of(all, b_.binary_bool(TirOp::Lt, b_.constant(0), clone(b.rows_end, nullptr)));
      all = conditions.all_of(all, b_.binary_bool(TirOp::Lt, b_.constant(0), clone(b.cols_end, nullptr)));
      if (!same_read(b.cols_end, b.ld))
        all = conditions.all_of(all, b_.binary_bool(TirOp::Le, clone(b.cols_end, nullptr), clone(b.ld, nullptr)));
      return all;
    };
    for (const auto& [load, ring] : ring_order) {
      auto box = boxes_.find(load);
      if (box == boxes_.end()) continue;
      const Box& b = box->second;
      condition = box_needs(condition, b);
      TirValue* aligned = conditions.tested(b.base, kRunBytes);
      TirValue* pitch = conditions.tested(b.ld, kRunBytes / 2);  // a box's elements are 2 bytes
      boxes_condition = aligned && pitch && boxes_condition
                            ? box_needs(conditions.all_of(boxes_condition, conditions.all_of(aligned, pitch)), b)
                            : nullptr;
    }
    uniform_flag_ = condition ? m_.make_var("uniform_runs", condition->type) : nullptr;
    int box_index = 0;
    for (const auto& [load, ring] : ring_order)
      if (auto box = boxes_.find(load); box != boxes_.end())
        before.push_back(b_.eval(b_.make(TirOp::BindBox, {},
                                          {b_.constant(box_index++), b_.read(uniform_flag_), b_.read(ring),
                                           clone(box->second.base, nullptr), clone(box->second.rows_end, nullptr),
                                           clone(box->second.cols_end, nullptr), clone(box->second.ld, nullptr)})));

    // The first iterations' copies, one committed group each, in a loop over
    // the lookahead (a constant of the C++, which unrolls it).
    TirVar* ahead = m_.make_var("prologue", i32_type());
    LoopValue iteration = [&] { return plus_steps(clone(loop_->low, nullptr), b_.read(ahead)); };
    std::vector<TirStmt*> prologue_copies;
    for (const auto& [load, ring] : ring_order)
      prologue_copies.push_back(b_.eval(copy_async(load, iteration, ring, [&] { return b_.read(ahead); })));
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
    if (!boxes_.empty()) {
      TirValue* wait =
          over_rings(TirOp::WaitBoxes, {stages_minus(behind_ + 1), b_.read(uniform_flag_), b_.read(slot)}, ring_order);
      body->stmts.insert(body->stmts.begin(), b_.eval(wait));
    } else {
      body->stmts.insert(body->stmts.begin(), b_.eval(wait_async(stages_minus(behind_ + 1))));
    }
    if (!accumulators.empty()) body->stmts.push_back(b_.eval(wait_dots(1, accumulators)));
    // Boxes: each stage is released once the dots that read it are done, so
    // that the thread that issues the copies may fill it again (the stage of
    // the last iteration, whose pipelined dots the wait_dots(1) completed, or
    // this iteration's where the dots are done when they return).
    if (!boxes_.empty()) {
      if (accumulators.empty())
        body->stmts.push_back(b_.eval(release_boxes(b_.read(slot), ring_order)));
      else
        body->stmts.push_back(b_.guarded(b_.binary_bool(TirOp::Ne, loop_var(), clone(loop_->low, nullptr)),
                                         {b_.eval(release_boxes(next_slot(slot, stages_minus(1)), ring_order))}));
    }
    LoopValue later = [&] { return plus_steps(loop_var(), stages_minus(behind_)); };
    std::vector<TirStmt*> copies;
    for (const auto& [load, ring] : ring_order)
      copies.push_back(b_.eval(copy_async(load, later, ring, [&] { return next_slot(slot, stages_minus(behind_)); })));
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
    if (!accumulators.empty()) {
      pipeline.push_back(b_.eval(wait_dots(0, accumulators)));
      if (!boxes_.empty()) pipeline.push_back(b_.eval(release_boxes(next_slot(slot, stages_minus(1)), ring_order)));
    }
    pipeline.push_back(
        b_.eval(over_rings(TirOp::EndBoxes, {uniform_flag_ ? b_.read(uniform_flag_) : nullptr}, ring_order)));
    if (uniform_flag_) {
      TirStmt* specialize = m_.make_stmt(TirStmtKind::Specialize, loop_->loc);
      specialize->var = uniform_flag_;
      specialize->value = condition;
      specialize->boxes_condition = boxes_condition;
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

  // op(leading..., rings...): the operations on every ring of the loop
  // (wait_boxes, release_boxes, end_boxes).
  TirValue* over_rings(TirOp op, std::initializer_list<TirValue*> leading,
                       const std::vector<std::pair<const TirValue*, TirVar*>>& ring_order) {
    TirValue* value = b_.make(op, {}, leading);
    for (const auto& [load, ring] : ring_order) value->operands.push_back(b_.read(ring));
    return value;
  }

  // release_boxes(uniform, slot, rings...) of a loop whose copies are boxes.
  TirValue* release_boxes(TirValue* slot, const std::vector<std::pair<const TirValue*, TirVar*>>& ring_order) {
    return over_rings(TirOp::ReleaseBoxes, {b_.read(uniform_flag_), slot}, ring_order);
  }

  TirValue* wait_dots(int pending, const std::vector<TirVar*>& accumulators) {
    TirValue* wait = b_.make(TirOp::WaitDots, {}, {b_.constant(pending)});
    for (const TirVar* acc : accumulators) wait->operands.push_back(b_.read(acc));
    return wait;
  }

  // copy_async of `load`'s tree, with the loop variable `at`, into stage
  // slot() of `ring`; with its box where it is one.
  TirValue* copy_async(const TirValue* load, const LoopValue& at, const TirVar* ring,
                       const std::function<TirValue*()>& slot) {
    TirValue* copy = m_.make_value(TirOp::CopyAsync, TirType{}, load->loc);
    for (const TirValue* operand : load->operands) copy->operands.push_back(clone(operand, at));
    copy->operands.push_back(stage(ring, slot()));
    copy->attrs<AccessAttrs>() = {
        .contiguous_rows = AffineForm::of(copy->operands[0], function_lets_).row_stride() == 1,
        .row_interval_mask = copy->operands[1] && row_intervals(copy->operands[1], function_lets_)};
    if (uniform_loads_.count(load)) copy->operands.push_back(b_.read(uniform_flag_));
    if (auto box = boxes_.find(load); box != boxes_.end())
      copy->operands.push_back(b_.make(TirOp::BoxAt, {},
                                       {b_.read(ring), slot(), clone(box->second.row, at), clone(box->second.col, at)}));
    return copy;
  }

  // ------------------------------------------------- boxes
  // A load that copies a box of a row-major matrix:
  //   load(base + rows[:, None] * ld + cols[None, :],
  //        mask = rows[:, None] < rows_end && cols[None, :] < cols_end, other = 0)
  // (the operands are in either order), rows and cols each a scalar plus an
  // arange, base, rows_end, cols_end and ld the same in every iteration.
  struct Box {
    const TirValue* base;
    const TirValue* row;
    const TirValue* rows_end;
    const TirValue* col;
    const TirValue* cols_end;
    const TirValue* ld;
  };

  std::optional<Box> box_of(const TirValue& load) {
    const TirValue* ptr = load.operands[0];
    const TirValue* mask = load.operands.size() > 1 ? load.operands[1] : nullptr;
    const TirValue* other = load.operands.size() > 2 ? load.operands[2] : nullptr;
    if (!mask || (other && !is_zero(through(other)))) return std::nullopt;
    // ptr = (base + rows * ld) + cols
    const TirValue* rows = nullptr;
    const TirValue* cols = nullptr;
    const TirValue* base = nullptr;
    const TirValue* ld = nullptr;
    auto split_rows_times_ld = [&](const TirValue* v) {
      v = through(v);
      if (v->op != TirOp::Mul) return false;
      for (int i = 0; i < 2; ++i)
        if ((rows = along(v->operands[i], 1)) && (ld = scalar_of(v->operands[1 - i]))) return true;
      return false;
    };
    auto split_base_rows = [&](const TirValue* v) {
      v = through(v);
      if (v->op != TirOp::Add) return false;
      for (int i = 0; i < 2; ++i)
        if ((base = scalar_of(v->operands[i])) && base->type.is_pointer() && split_rows_times_ld(v->operands[1 - i]))
          return true;
      return false;
    };
    const TirValue* p = through(ptr);
    if (p->op != TirOp::Add) return std::nullopt;
    bool matched = false;
    for (int i = 0; i < 2 && !matched; ++i)
      matched = (cols = along(p->operands[i], 0)) && split_base_rows(p->operands[1 - i]);
    if (!matched) return std::nullopt;
    // mask = rows < rows_end && cols < cols_end
    const TirValue* m = through(mask);
    if (m->op != TirOp::LogicalAnd) return std::nullopt;
    const TirValue* rows_end = nullptr;
    const TirValue* cols_end = nullptr;
    for (const TirValue* c : m->operands) {
      c = through(c);
      const TirValue* bound = c->op == TirOp::Lt ? scalar_of(c->operands[1]) : nullptr;
      if (!bound) return std::nullopt;
      if (along(c->operands[0], 1) == rows && !rows_end) rows_end = bound;
      else if (along(c->operands[0], 0) == cols && !cols_end) cols_end = bound;
      else return std::nullopt;
    }
    const TirValue* row = start_of(rows);
    const TirValue* col = start_of(cols);
    if (!rows_end || !cols_end || !row || !col) return std::nullopt;
    for (const TirValue* fixed : {base, rows_end, cols_end, ld})
      if (reads_loop(fixed)) return std::nullopt;
    return Box{base, row, rows_end, col, cols_end, ld};
  }

  // v, through the lets that hold it.
  const TirValue* through(const TirValue* v) const {
    while (v->op == TirOp::Read) {
      if (auto it = lets_.find(v->var()); it != lets_.end()) v = it->second;
      else if (auto f = function_lets_.find(v->var()); f != function_lets_.end()) v = f->second;
      else break;
    }
    return v;
  }

  // The vector x of a 2-D tile x[:, None] (axis 1) or x[None, :] (axis 0),
  // broadcast or not; null where v is not one.
  const TirValue* along(const TirValue* v, int axis) const {
    v = through(v);
    if (v->op == TirOp::BroadcastTo) v = through(v->operands[0]);
    if (v->op != TirOp::AddAxis || v->attrs<AxisAttrs>().axis != axis) return nullptr;
    return through(v->operands[0]);
  }

  // The scalar s of a tile broadcast from it; null where v is not one.
  const TirValue* scalar_of(const TirValue* v) const {
    v = through(v);
    if (v->op != TirOp::Broadcast) return nullptr;
    const TirValue* s = v->operands[0];
    return s->type.is_tile() ? nullptr : s;
  }

  // s of the vector s + arange(n) (or arange(n) + s; 0 for arange(n)); null
  // where v is not one.
  const TirValue* start_of(const TirValue* v) {
    if (v->op == TirOp::Arange) return b_.constant(0);
    if (v->op != TirOp::Add) return nullptr;
    for (int i = 0; i < 2; ++i)
      if (through(v->operands[i])->op == TirOp::Arange)
        if (const TirValue* s = scalar_of(v->operands[1 - i])) return s;
    return nullptr;
  }

  // Whether a and b read the same variable (cols_end <= ld needs no test).
  static bool same_read(const TirValue* a, const TirValue* b) {
    return a->op == TirOp::Read && b->op == TirOp::Read && a->var() == b->var();
  }

  static bool is_zero(const TirValue* v) {
    if (v->op == TirOp::Broadcast) v = v->operands[0];
    if (v->op != TirOp::Constant) return false;
    const auto& c = v->attrs<ConstantAttrs>();
    return c.literal == ConstantAttrs::Literal::Float ? c.float_value == 0 : c.int_bits == 0;
  }

  // Whether v reads the loop variable or a let of the loop's body.
  bool reads_loop(const TirValue* v) const {
    if (!v) return false;
    if (v->op == TirOp::Read && (v->var() == loop_->var || lets_.count(v->var()))) return true;
    for (const TirValue* o : v->operands)
      if (reads_loop(o)) return true;
    return false;
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
  const bool boxes_allowed_;                          // unchecked builds: checked ones check every access
  std::unordered_map<const TirValue*, Box> boxes_;    // the uniform loads that are boxes
  TirVar* uniform_flag_ = nullptr;
  std::unordered_map<const TirVar*, const TirValue*> function_lets_;  // every let of the function
};

}  // namespace

void pipeline_loads(TirModule& module) {
  for (TirFunction* function : module.functions) {
    Pipeliner pipeliner(module, *function, !module.checked);
    for_each_loop_last_first(function->body, [&](TirStmt& block, size_t index) { pipeliner.loop(block, index); });
  }
}

}  // namespace irisc
