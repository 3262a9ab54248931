// Verification of expected diagnostics, as in clang's -verify: a test input
// states what irisc must report, in comments on the lines concerned:
//
//   let x = y;  // expected-error {{use of undeclared name 'y'}}
//   // expected-note@+1 {{...}}      (on the next line; @-1, @+2 or @7 likewise)
//
// Each expected text must be a substring of a diagnostic of that severity on
// that line, and every diagnostic must be expected.
#pragma once

#include "irisc/diagnostics.h"

#include <vector>

namespace irisc {

// Compares `seen` with the expectations in buffer `buffer_id`; prints every
// difference to `out` and returns true when there is none.
bool verify_diagnostics(const llvm::SourceMgr& sources, unsigned buffer_id,
                        const std::vector<Diagnostic>& seen, llvm::raw_ostream& out);

}  // namespace irisc
