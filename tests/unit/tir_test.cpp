// The tile IR's structural comparison (same_tree, tir.h), on values built by
// hand: every attribute counts, the source location does not.
#include "irisc/tir.h"

#include <doctest/doctest.h>

using namespace irisc;

namespace {

// A pointer read and the constant 1: the operands of the signals below.
struct Operands {
  TirValue ptr{}, one{};
  Operands() {
    ptr.op = TirOp::Read;
    one.op = TirOp::Constant;
    one.int_bits = 1;
  }
};

// signal(ptr, 1) at `loc`, release at system scope.
TirValue signal_of(TirValue* ptr, TirValue* one, const char* loc) {
  TirValue v{};
  v.op = TirOp::Signal;
  v.loc = llvm::SMLoc::getFromPointer(loc);
  v.operands = {ptr, one};
  v.sem = "release";
  v.scope = "sys";
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
  CHECK(differs([](TirValue& b) { b.sem = "relaxed"; }));
  CHECK(differs([](TirValue& b) { b.scope = "gpu"; }));
  CHECK(differs([](TirValue& b) { b.signal_add = true; }));
  CHECK(differs([](TirValue& b) { b.cmp = "ge"; }));
  CHECK(differs([](TirValue& b) { b.atomic_op = "add"; }));
  CHECK(differs([](TirValue& b) { b.pipelined = true; }));
  CHECK(differs([](TirValue& b) { b.contiguous_rows = true; }));
  CHECK(differs([](TirValue& b) { b.row_interval_mask = true; }));
  CHECK(differs([](TirValue& b) { b.checked = true; }));
  CHECK(differs([](TirValue& b) { b.axis = 1; }));
  CHECK(differs([](TirValue& b) { b.operands.pop_back(); }));

  TirValue yes{}, no{};
  yes.op = no.op = TirOp::Constant;
  yes.literal = no.literal = TirValue::Literal::Bool;
  yes.bool_value = true;
  CHECK(!same_tree(&yes, &no));
  TirValue half = one, quarter = one;
  half.literal = quarter.literal = TirValue::Literal::Float;
  half.float_value = 0.5;
  quarter.float_value = 0.25;
  CHECK(!same_tree(&half, &quarter));
}
