// RUN: rope-opt --rope-raise=remarks=true %s 2>&1 | FileCheck %s
// RUN: rope-opt --rope-raise=remarks=true %s 2>&1 | FileCheck %s --check-prefix=MLP

// Remarks name rotations that were not raised, not every product in a
// model. A whole model's token embedding is a table gathered by an integer
// stream (row = token id, column = channel), as a cos/sin cache is, and
// every RMSNorm of the residual stream reads it: (emb + o) * r is a sum of
// two products of two factors, but no value in it is read at two elements
// (x[k] and its partner), and a gathered table alone is no evidence of a
// rotation. No remark, nothing raised.

#tok = affine_map<(d0, d1) -> (d0)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-NOT: remark
// CHECK-LABEL: func.func @embedding_norm(
// CHECK-NOT: rope.apply
func.func @embedding_norm(%ids: tensor<8xi64>, %o: tensor<8x16xf32>, %r: tensor<8x1xf32>) -> tensor<8x16xf32> {
  %table = arith.constant dense<0.5> : tensor<32x16xf32>
  %e0 = tensor.empty() : tensor<8x16xf32>
  %emb = linalg.generic {indexing_maps = [#tok, #id], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<8xi64>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<32x16xf32>
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %h = linalg.add ins(%emb, %o : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%h, %r : tensor<8x16xf32>, tensor<8x1xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// Nor every contraction fed by an exp: an MLP's down projection reads
// SiLU(gate) * up, and SiLU's sigmoid is 1 / (1 + exp(-x)), but no
// reduction (no max, no sum over the contracted dim) is behind it, so it is
// no softmax written out, and no attention remark is due.

#m = affine_map<(d0, d1) -> (d0, d1)>

// MLP-LABEL: func.func @swiglu_down_projection(
// MLP-NOT: remark
// MLP-NOT: rope.attention
// MLP: linalg.matmul
// MLP-NOT: remark
func.func @swiglu_down_projection(%gate: tensor<8x32xf32>, %up: tensor<8x32xf32>, %w: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %act = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]} ins(%gate, %up : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%g: f32, %u: f32, %out: f32):
    %neg = arith.negf %g : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %ex, %one : f32
    %sig = arith.divf %one, %den : f32
    %silu = arith.mulf %g, %sig : f32
    %h = arith.mulf %silu, %u : f32
    linalg.yield %h : f32
  } -> tensor<8x32xf32>
  %o0 = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%act, %w : tensor<8x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
