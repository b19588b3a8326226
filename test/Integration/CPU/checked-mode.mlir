// Checked mode: --generate-runtime-verification before rope-to-llvm-cpu
// asserts what rope.apply's verifier cannot see with dynamic sizes. A failed
// check prints its message and aborts (cf.assert's lowering: puts + abort;
// stdbuf -o0 so that the message is not lost in stdout's buffer at abort).
//
// RUN: rope-opt %s --generate-runtime-verification --rope-to-llvm-cpu > %t.checked.mlir
// RUN: rope-opt %s --rope-to-llvm-cpu > %t.unchecked.mlir
//
// Good inputs pass every check and compute as without them.
// RUN: mlir-runner %t.checked.mlir -e good -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=GOOD
// A position past the cache's rows: unchecked the row is NaN (the op's
// defined result); checked, the program stops with the message.
// RUN: mlir-runner %t.unchecked.mlir -e outside_cache -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=UNCHECKED
// RUN: not --crash stdbuf -o0 mlir-runner %t.checked.mlir -e outside_cache -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils 2>/dev/null | FileCheck %s --check-prefix=CACHE
// A negative position.
// RUN: not --crash stdbuf -o0 mlir-runner %t.checked.mlir -e negative -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils 2>/dev/null | FileCheck %s --check-prefix=NEGATIVE
// Positions for 3 tokens, x with 5: unchecked this reads past the positions.
// RUN: not --crash stdbuf -o0 mlir-runner %t.checked.mlir -e mismatch -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils 2>/dev/null | FileCheck %s --check-prefix=MISMATCH
// offset + tokens past INT64_MAX.
// RUN: not --crash stdbuf -o0 mlir-runner %t.checked.mlir -e overflow -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils 2>/dev/null | FileCheck %s --check-prefix=OVERFLOW
// The same offset with one token less fits: no abort.
// RUN: mlir-runner %t.checked.mlir -e no_overflow -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=FITS
//
// The same checks through rope-to-llvm-cpu{checked=true}, which runs
// generate-runtime-verification on its input.
// RUN: rope-opt %s --rope-to-llvm-cpu=checked=true > %t.pipeline.mlir
// RUN: mlir-runner %t.pipeline.mlir -e good -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=GOOD
// RUN: not --crash stdbuf -o0 mlir-runner %t.pipeline.mlir -e outside_cache -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils 2>/dev/null | FileCheck %s --check-prefix=CACHE
// RUN: not --crash stdbuf -o0 mlir-runner %t.pipeline.mlir -e mismatch -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils 2>/dev/null | FileCheck %s --check-prefix=MISMATCH

func.func private @printMemrefF32(tensor<*xf32>)

// [T, D] = [?, 2], positions gathered from a cache of ? rows.
func.func @rotate_cache(%x: tensor<?x2xf32>, %p: tensor<?xi32>, %c: tensor<?x1xf32>, %s: tensor<?x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x2xf32>
  %init = tensor.empty(%t) : tensor<?x2xf32>
  %y = rope.apply ins(%x : tensor<?x2xf32>) positions(%p : tensor<?xi32>) cache(%c, %s : tensor<?x1xf32>, tensor<?x1xf32>)
         outs(%init : tensor<?x2xf32>) -> tensor<?x2xf32>
  %u = tensor.cast %y : tensor<?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// [S, D] = [?, 2] at offset + s, computed cos/sin.
func.func @rotate_offset(%x: tensor<?x2xf32>, %o: i64) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x2xf32>
  %init = tensor.empty(%t) : tensor<?x2xf32>
  %y = rope.apply ins(%x : tensor<?x2xf32>) offset(%o : i64) outs(%init : tensor<?x2xf32>) -> tensor<?x2xf32>
  %u = tensor.cast %y : tensor<?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// x = (1, 2) at every token; cache rows (c, s) = (1, 0), (0.5, 0.75).
func.func @run_cache(%xs: tensor<?x2xf32>, %ps: tensor<?xi32>) {
  %cs = arith.constant dense<[[1.0], [0.5]]> : tensor<2x1xf32>
  %ss = arith.constant dense<[[0.0], [0.75]]> : tensor<2x1xf32>
  %c = tensor.cast %cs : tensor<2x1xf32> to tensor<?x1xf32>
  %s = tensor.cast %ss : tensor<2x1xf32> to tensor<?x1xf32>
  call @rotate_cache(%xs, %ps, %c, %s) : (tensor<?x2xf32>, tensor<?xi32>, tensor<?x1xf32>, tensor<?x1xf32>) -> ()
  return
}

func.func @good() {
  %xs = arith.constant dense<[[1.0, 2.0], [1.0, 2.0]]> : tensor<2x2xf32>
  %x = tensor.cast %xs : tensor<2x2xf32> to tensor<?x2xf32>
  %ps = arith.constant dense<[0, 1]> : tensor<2xi32>
  %p = tensor.cast %ps : tensor<2xi32> to tensor<?xi32>
  call @run_cache(%x, %p) : (tensor<?x2xf32>, tensor<?xi32>) -> ()
  // (c - 2s, 2c + s)
  // GOOD: sizes = [2, 2]
  // GOOD-NEXT: {{\[\[}}1, 2],
  // GOOD-NEXT: [-1, 1.75]]
  return
}

func.func @outside_cache() {
  %xs = arith.constant dense<[[1.0, 2.0], [1.0, 2.0]]> : tensor<2x2xf32>
  %x = tensor.cast %xs : tensor<2x2xf32> to tensor<?x2xf32>
  %ps = arith.constant dense<[1, 70000]> : tensor<2xi32>
  %p = tensor.cast %ps : tensor<2xi32> to tensor<?xi32>
  call @run_cache(%x, %p) : (tensor<?x2xf32>, tensor<?xi32>) -> ()
  // UNCHECKED: sizes = [2, 2]
  // UNCHECKED-NEXT: {{\[\[}}-1, 1.75],
  // UNCHECKED-NEXT: [nan, nan]]
  // CACHE-NOT: sizes
  // CACHE: ERROR: Runtime op verification failed
  // CACHE-NEXT: rope.apply
  // CACHE-NEXT: ^ a position is >= the rows of the cos/sin cache: outside the cos/sin cache
  // CACHE-NEXT: Location: loc({{.*}}checked-mode.mlir
  return
}

func.func @negative() {
  %xs = arith.constant dense<[[1.0, 2.0], [1.0, 2.0]]> : tensor<2x2xf32>
  %x = tensor.cast %xs : tensor<2x2xf32> to tensor<?x2xf32>
  %ps = arith.constant dense<[-1, 0]> : tensor<2xi32>
  %p = tensor.cast %ps : tensor<2xi32> to tensor<?xi32>
  call @run_cache(%x, %p) : (tensor<?x2xf32>, tensor<?xi32>) -> ()
  // NEGATIVE-NOT: sizes
  // NEGATIVE: ^ a position is negative: outside the cos/sin cache
  return
}

func.func @mismatch() {
  %xs = arith.constant dense<1.0> : tensor<5x2xf32>
  %x = tensor.cast %xs : tensor<5x2xf32> to tensor<?x2xf32>
  %ps = arith.constant dense<[0, 1, 1]> : tensor<3xi32>
  %p = tensor.cast %ps : tensor<3xi32> to tensor<?xi32>
  call @run_cache(%x, %p) : (tensor<?x2xf32>, tensor<?xi32>) -> ()
  // MISMATCH-NOT: sizes
  // MISMATCH: ^ positions dim 0 must equal x dim 0
  return
}

func.func @overflow() {
  %xs = arith.constant dense<1.0> : tensor<4x2xf32>
  %x = tensor.cast %xs : tensor<4x2xf32> to tensor<?x2xf32>
  // INT64_MAX - 3: the last position INT64_MAX, its length INT64_MAX + 1.
  %o = arith.constant 9223372036854775804 : i64
  call @rotate_offset(%x, %o) : (tensor<?x2xf32>, i64) -> ()
  // OVERFLOW-NOT: sizes
  // OVERFLOW: ^ offset + tokens overflows int64
  return
}

func.func @no_overflow() {
  %xs = arith.constant dense<1.0> : tensor<3x2xf32>
  %x = tensor.cast %xs : tensor<3x2xf32> to tensor<?x2xf32>
  %o = arith.constant 9223372036854775804 : i64
  call @rotate_offset(%x, %o) : (tensor<?x2xf32>, i64) -> ()
  // FITS: sizes = [3, 2]
  return
}
