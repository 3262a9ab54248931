// The tile IR's structural comparison (same_tree, tir.h), on values built by
// hand: every attribute of every operation's attributes struct counts, the
// source location does not.
#include "irisc/tir.h"

#include <doctest/doctest.h>

using namespace irisc;

namespace {

// A pointer read and the constant 1: the operands of the signals below.
struct Operands {
  TirValue ptr{}, one{};
  Operands() {
    ptr.op = TirOp::Read;
    ptr.payload = ReadAttrs{};
    one.op = TirOp::Constant;
    one.payload = ConstantAttrs{.int_bits = 1};
  }
};

// signal(ptr, 1) at `loc`, release at system scope.
TirValue signal_of(TirValue* ptr, TirValue* one, const char* loc) {
  TirValue v{};
  v.op = TirOp::Signal;
  v.loc = llvm::SMLoc::getFromPointer(loc);
  v.operands = {ptr, one};
  v.payload = SignalAttrs{.order = {"release", "sys"}};
  return v;
}

}  // namespace

TEST_CASE("same_tree: the same operation over the same operands, wherever it was written") {
  Operands o;
  TirValue &ptr = o.ptr, &one = o.one;
  const char source[] = "ab";
  TirValue a = signal_of(&ptr, &one, source), b = signal_of(&ptr, &one, source + 1);
  CHECK(same_tree(&a, &b));

  TirValue one_again = one;  // another node with the same value
  b.operands[1] = &one_again;
  CHECK(same_tree(&a, &b));
}

TEST_CASE("same_tree: every attribute tells two values apart") {
  Operands o;
  TirValue &ptr = o.ptr, &one = o.one;
  const char source[] = "a";
  const TirValue a = signal_of(&ptr, &one, source);
  auto differs = [&](auto change) {
    TirValue b = a;
    change(b);
    return !same_tree(&a, &b);
  };
  CHECK(differs([](TirValue& b) { b.attrs<SignalAttrs>().order.sem = "relaxed"; }));
  CHECK(differs([](TirValue& b) { b.attrs<SignalAttrs>().order.scope = "gpu"; }));
  CHECK(differs([](TirValue& b) { b.attrs<SignalAttrs>().add = true; }));
  CHECK(differs([](TirValue& b) { b.checked = true; }));
  CHECK(differs([](TirValue& b) { b.operands.pop_back(); }));
  // The same fields in another operation's attributes are another value.
  CHECK(differs([](TirValue& b) { b.payload = OrderAttrs{{"release", "sys"}}; }));
}

TEST_CASE("same_tree: every field of each operation's attributes counts") {
  auto differ = [](TirOp op, TirAttrs x, TirAttrs y) {
    TirValue a{}, b{};
    a.op = b.op = op;
    a.payload = std::move(x);
    b.payload = std::move(y);
    return !same_tree(&a, &b);
  };
  using Literal = ConstantAttrs::Literal;
  CHECK(differ(TirOp::Constant, ConstantAttrs{.literal = Literal::Bool, .bool_value = true},
               ConstantAttrs{.literal = Literal::Bool}));
  CHECK(differ(TirOp::Constant, ConstantAttrs{.literal = Literal::Float, .float_value = 0.5},
               ConstantAttrs{.literal = Literal::Float, .float_value = 0.25}));
  CHECK(differ(TirOp::Constant, ConstantAttrs{.int_bits = 1}, ConstantAttrs{.int_bits = 2}));
  CHECK(differ(TirOp::Constant, ConstantAttrs{.literal = Literal::SignedInt}, ConstantAttrs{}));
  CHECK(differ(TirOp::NamedConstant, TextAttrs{"A"}, TextAttrs{"B"}));
  TirVar x{}, y{};
  CHECK(differ(TirOp::Read, ReadAttrs{&x}, ReadAttrs{&y}));
  TirFunction f, g;
  CHECK(differ(TirOp::CallDevice, CallAttrs{&f, {}}, CallAttrs{&g, {}}));
  CHECK(differ(TirOp::CallDevice, CallAttrs{&f, {{"1", {}}}}, CallAttrs{&f, {{"2", {}}}}));
  CHECK(differ(TirOp::Sum, AxisAttrs{0}, AxisAttrs{1}));
  CHECK(differ(TirOp::Store, AccessAttrs{.contiguous_rows = true}, AccessAttrs{}));
  CHECK(differ(TirOp::Store, AccessAttrs{.row_interval_mask = true}, AccessAttrs{}));
  CHECK(differ(TirOp::Dot, DotAttrs{true}, DotAttrs{false}));
  CHECK(differ(TirOp::AtomicRmw, RmwAttrs{"add", {"relaxed", "gpu"}}, RmwAttrs{"max", {"relaxed", "gpu"}}));
  CHECK(differ(TirOp::WaitUntil, WaitAttrs{"ge", {"acquire", "sys"}}, WaitAttrs{"eq", {"acquire", "sys"}}));
  CHECK(!differ(TirOp::WaitUntil, WaitAttrs{"ge", {"acquire", "sys"}}, WaitAttrs{"ge", {"acquire", "sys"}}));
}

TEST_CASE("operand_error: each value's operands against tir_ops.def's list") {
  TirValue ptr{}, x{};
  auto value = [](TirOp op, std::initializer_list<TirValue*> operands) {
    TirValue v{};
    v.op = op;
    v.operands.assign(operands.begin(), operands.end());
    return v;
  };
  // load(ptr, mask?, other?): the optional ones as null slots, or left off the end.
  CHECK(operand_error(value(TirOp::Load, {&ptr, nullptr, nullptr})).empty());
  CHECK(operand_error(value(TirOp::Load, {&ptr})).empty());
  CHECK(operand_error(value(TirOp::Load, {nullptr, &x, &x})) == "load has no operand ptr (tir_ops.def: ptr, mask?, other?)");
  CHECK(operand_error(value(TirOp::Load, {&ptr, &x, &x, &x})) ==
        "load has 4 operands, and tir_ops.def gives it (ptr, mask?, other?)");
  // store(ptr, value, mask?): a builder that forgets the value.
  CHECK(operand_error(value(TirOp::Store, {&ptr})) == "store has 1 operands, and tir_ops.def gives it (ptr, value, mask?)");
  CHECK(operand_error(value(TirOp::Add, {&x})) == "add has 1 operands, and tir_ops.def gives it (x, y)");
  CHECK(operand_error(value(TirOp::Rank, {&x})) == "rank has 1 operands, and tir_ops.def gives it ()");
  // wait_dots(pending, acc...): any number of accumulators, none of them null.
  CHECK(operand_error(value(TirOp::WaitDots, {&x})).empty());
  CHECK(operand_error(value(TirOp::WaitDots, {&x, &x, &x})).empty());
  CHECK(operand_error(value(TirOp::WaitDots, {&x, nullptr})) == "wait_dots has no operand acc... (tir_ops.def: pending, acc...)");
  CHECK(operand_error(value(TirOp::WaitDots, {})) == "wait_dots has 0 operands, and tir_ops.def gives it (pending, acc...)");
  // copy_async(ptr, mask?, other?, stage, uniform?): the stage is not optional.
  CHECK(operand_error(value(TirOp::CopyAsync, {&ptr, nullptr, nullptr, &x})).empty());
  CHECK(operand_error(value(TirOp::CopyAsync, {&ptr, nullptr, nullptr, &x, &x})).empty());
  CHECK(!operand_error(value(TirOp::CopyAsync, {&ptr, nullptr, nullptr})).empty());
}

TEST_CASE("make_value gives each operation the attributes struct tir_ops.def names") {
  TirModule m;
  CHECK(std::holds_alternative<ConstantAttrs>(m.make_value(TirOp::Constant, {}, {})->payload));
  CHECK(std::holds_alternative<ReadAttrs>(m.make_value(TirOp::Read, {}, {})->payload));
  CHECK(std::holds_alternative<AxisAttrs>(m.make_value(TirOp::Sum, {}, {})->payload));
  CHECK(m.make_value(TirOp::Sum, {}, {})->attrs<AxisAttrs>().axis == -1);
  CHECK(std::holds_alternative<AccessAttrs>(m.make_value(TirOp::Store, {}, {})->payload));
  CHECK(std::holds_alternative<SignalAttrs>(m.make_value(TirOp::Signal, {}, {})->payload));
  CHECK(std::holds_alternative<TextAttrs>(m.make_value(TirOp::CallImported, {}, {})->payload));
  CHECK(std::holds_alternative<NoAttrs>(m.make_value(TirOp::Add, {}, {})->payload));
  CHECK(std::holds_alternative<NoAttrs>(m.make_value(TirOp::Clamp, {}, {})->payload));
}
