// RUN: rope-opt %s --rope-to-llvm-cpu=emit-c-interface=true | FileCheck %s
// RUN: rope-opt %s --rope-to-llvm-cpu=emit-c-interface=true | mlir-translate --mlir-to-llvmir -o /dev/null

// What frontends (torch-mlir, JAX through IREE) emit besides rope IR lowers
// all the way to LLVM IR: complex arithmetic in linalg.generic bodies
// (complex-to-standard, complex-to-llvm), ub.poison left by the vector
// lowering (ub-to-llvm), and libm calls from math-to-libm, which must not get
// a C-interface wrapper (there is no _mlir_ciface_erff to call).

// CHECK-NOT: complex.
// CHECK-NOT: ub.
// CHECK-NOT: _mlir_ciface_erff
// CHECK:     llvm.func @erff(f32) -> f32
// CHECK-NOT:   llvm.emit_c_interface
// CHECK-SAME:  {{$}}
// CHECK-LABEL: llvm.func @complex_mul(
// CHECK:         llvm.fmul
// CHECK-LABEL: llvm.func @poison_padding(
// CHECK:         llvm.mlir.poison : vector<8xf32>
// CHECK-LABEL: llvm.func @libm(
// CHECK:         llvm.call @erff(
// CHECK-NOT:   _mlir_ciface_erff
// torch-mlir's x^2, vectorized: no llvm.intr.powi (its exponent would be a
// vector, which does not verify), one multiplication instead.
// CHECK-LABEL: llvm.func @square_by_fpowi(
// CHECK-NOT:     llvm.intr.powi
// CHECK:         llvm.fmul {{.*}} : vector<8xf32>
// CHECK-NOT:     llvm.intr.powi
// CHECK:         llvm.return

#map = affine_map<(d0) -> (d0)>
func.func @complex_mul(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map, #map, #map], iterator_types = ["parallel"]}
    ins(%a, %b, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %w: f32, %o: f32):
    %p = complex.create %x, %y : complex<f32>
    %q = complex.create %z, %w : complex<f32>
    %m = complex.mul %p, %q : complex<f32>
    %re = complex.re %m : complex<f32>
    %im = complex.im %m : complex<f32>
    %s = arith.addf %re, %im : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// An out-of-bounds transfer pads with ub.poison.
func.func @poison_padding(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %p = ub.poison : f32
  %w = vector.transfer_read %a[%c0], %p : tensor<4xf32>, vector<8xf32>
  %s = vector.extract_strided_slice %w {offsets = [0], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = vector.transfer_write %s, %e[%c0] {in_bounds = [true]} : vector<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @libm(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
    ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.erf %x : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @square_by_fpowi(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c2 = arith.constant 2 : i64
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.fpowi %x, %c2 : f32, i64
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
