// RUN: rope-opt %s --convert-rope-to-vector=tile-tokens=32 -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-vector=tile-tokens=32 --canonicalize -split-input-file | FileCheck %s --enable-var-scope --check-prefix=CANON

// Half layout, explicit positions [B, S] on [B, S, H, D]: one scf.forall over
// the token dims (B, S); per token the angle is formed in f64 on P/2 lanes,
// range-reduced (roundeven + two FMAs), truncated to f32, and cos/sin are
// computed once, before the head loop; each head row is rotated in chunks of
// one cache line (16 f32 lanes) in ascending address order: per chunk two
// reads, the lanes of cos/sin it needs, the rotation and two writes into the
// destination slice.

// CHECK-LABEL: func.func @half_positions(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x16x4x64xf32>, %[[P:[^:]*]]: tensor<2x16xi64>, %[[INIT:[^:]*]]: tensor<2x16x4x64xf32>)
//       CHECK:   %[[THETA:.*]] = arith.constant dense<[1.000000e+00, 0.74989420933245587, {{.*}}, 1.333521432163324E-4]> : vector<32xf64>
//       CHECK:   %[[R:.*]] = scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 16) shared_outs(%[[OUT:.*]] = %[[INIT]]) -> (tensor<2x16x4x64xf32>) {
//       CHECK:     %[[POS:.*]] = tensor.extract %[[P]][%[[B]], %[[S]]] : tensor<2x16xi64>
//       CHECK:     %[[PF:.*]] = arith.sitofp %[[POS]] : i64 to f64
//       CHECK:     %[[PV:.*]] = vector.broadcast %[[PF]] : f64 to vector<32xf64>
//       CHECK:     %[[ANGLE:.*]] = arith.mulf %[[PV]], %[[THETA]] : vector<32xf64>
//       CHECK:     %[[INV2PI:.*]] = arith.constant dense<0.15915494309189535> : vector<32xf64>
//       CHECK:     %[[Q:.*]] = arith.mulf %[[ANGLE]], %[[INV2PI]] : vector<32xf64>
//       CHECK:     %[[TURNS:.*]] = math.roundeven %[[Q]] : vector<32xf64>
//       CHECK:     %[[NEG:.*]] = arith.negf %[[TURNS]] : vector<32xf64>
//       CHECK:     %[[HI:.*]] = arith.constant dense<6.2831853071795862> : vector<32xf64>
//       CHECK:     %[[R1:.*]] = math.fma %[[NEG]], %[[HI]], %[[ANGLE]] : vector<32xf64>
//       CHECK:     %[[LO:.*]] = arith.constant dense<2.4492935982947064E-16> : vector<32xf64>
//       CHECK:     %[[R2:.*]] = math.fma %[[NEG]], %[[LO]], %[[R1]] : vector<32xf64>
//       CHECK:     %[[RF:.*]] = arith.truncf %[[R2]] : vector<32xf64> to vector<32xf32>
//       CHECK:     %[[C:.*]] = math.cos %[[RF]] : vector<32xf32>
//       CHECK:     %[[SN:.*]] = math.sin %[[RF]] : vector<32xf32>
//       CHECK:     %[[DST:.*]] = tensor.extract_slice %[[OUT]][%[[B]], %[[S]], 0, 0] [1, 1, 4, 64] [1, 1, 1, 1] : tensor<2x16x4x64xf32> to tensor<4x64xf32>
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]][%[[B]], %[[S]], 0, 0] [1, 1, 4, 64] [1, 1, 1, 1] : tensor<2x16x4x64xf32> to tensor<4x64xf32>
//       CHECK:     %[[ROWS:.*]] = scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[DST]]) -> (tensor<4x64xf32>) {
//   CHECK-NOT:       math.{{cos|sin}}
//       CHECK:       %[[X1:.*]] = vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<4x64xf32>, vector<16xf32>
//   CHECK-NOT:       math.{{cos|sin}}
//       CHECK:       %[[C32:.*]] = arith.constant 32 : index
//       CHECK:       %[[X2:.*]] = vector.transfer_read %[[SRC]][%[[H]], %[[C32]]], %{{.*}} {in_bounds = [true]} : tensor<4x64xf32>, vector<16xf32>
//   CHECK-NOT:       math.{{cos|sin}}
//       CHECK:       %[[CA:.*]] = vector.extract_strided_slice %[[C]] {offsets = [0], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
//       CHECK:       %[[SA:.*]] = vector.extract_strided_slice %[[SN]] {offsets = [0], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
//       CHECK:       %[[NS:.*]] = arith.negf %[[SA]] : vector<16xf32>
//       CHECK:       %[[X1C:.*]] = arith.mulf %[[X1]], %[[CA]] : vector<16xf32>
//       CHECK:       %[[Y1:.*]] = math.fma %[[X2]], %[[NS]], %[[X1C]] : vector<16xf32>
//       CHECK:       %[[X2C:.*]] = arith.mulf %[[X2]], %[[CA]] : vector<16xf32>
//       CHECK:       %[[Y2:.*]] = math.fma %[[X1]], %[[SA]], %[[X2C]] : vector<16xf32>
// Stores in ascending address order: the first half's chunks as they are
// rotated (channels 0, 16), then the second half's (32 = Y2, then 48).
//       CHECK:       %[[W1:.*]] = vector.transfer_write %[[Y1]], %[[ACC]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xf32>, tensor<4x64xf32>
//       CHECK:       %[[C16:.*]] = arith.constant 16 : index
//       CHECK:       %[[X3:.*]] = vector.transfer_read %[[SRC]][%[[H]], %[[C16]]], %{{.*}} {in_bounds = [true]} : tensor<4x64xf32>, vector<16xf32>
//       CHECK:       %[[C48:.*]] = arith.constant 48 : index
//       CHECK:       %[[X4:.*]] = vector.transfer_read %[[SRC]][%[[H]], %[[C48]]], %{{.*}} {in_bounds = [true]} : tensor<4x64xf32>, vector<16xf32>
//       CHECK:       vector.extract_strided_slice %[[C]] {offsets = [16], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
//       CHECK:       vector.extract_strided_slice %[[SN]] {offsets = [16], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
//       CHECK:       %[[S16:.*]] = arith.constant 16 : index
//       CHECK:       %[[W2:.*]] = vector.transfer_write %{{.*}}, %[[W1]][%[[H]], %[[S16]]] {in_bounds = [true]} : vector<16xf32>, tensor<4x64xf32>
//       CHECK:       %[[S32:.*]] = arith.constant 32 : index
//       CHECK:       %[[W3:.*]] = vector.transfer_write %[[Y2]], %[[W2]][%[[H]], %[[S32]]] {in_bounds = [true]} : vector<16xf32>, tensor<4x64xf32>
//       CHECK:       %[[S48:.*]] = arith.constant 48 : index
//       CHECK:       %[[W4:.*]] = vector.transfer_write %{{.*}}, %[[W3]][%[[H]], %[[S48]]] {in_bounds = [true]} : vector<16xf32>, tensor<4x64xf32>
//   CHECK-NOT:       vector.transfer_
//       CHECK:       scf.yield %[[W4]] : tensor<4x64xf32>
//       CHECK:     scf.forall.in_parallel {
//       CHECK:       tensor.parallel_insert_slice %[[ROWS]] into %[[OUT]][%[[B]], %[[S]], 0, 0] [1, 1, 4, 64] [1, 1, 1, 1] : tensor<4x64xf32> into tensor<2x16x4x64xf32>
//       CHECK:   return %[[R]]
func.func @half_positions(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

// -----

// Interleaved layout, implicit positions (pos = index along dim 0): cos/sin
// are spread over the P lanes once per token (c = [c0, c0, c1, c1, ...],
// s = [-s0, s0, -s1, s1, ...]) before the head loop; each row is one P-lane
// read, a pair-swap shuffle, y = x * c + swap(x) * s, and one P-lane write.

// CHECK-LABEL: func.func @interleaved(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x8xf32>, %[[INIT:[^:]*]]: tensor<8x4x8xf32>)
//       CHECK:   %[[THETA:.*]] = arith.constant dense<[1.000000e+00, 1.000000e-01, 1.000000e-02, 1.000000e-03]> : vector<4xf64>
//       CHECK:   scf.forall (%[[T:.*]]) in (8) shared_outs(%[[OUT:.*]] = %[[INIT]])
//       CHECK:     %[[TI:.*]] = arith.index_cast %[[T]] : index to i64
//       CHECK:     arith.sitofp %[[TI]] : i64 to f64
//       CHECK:     %[[C:.*]] = math.cos %{{.*}} : vector<4xf32>
//       CHECK:     %[[SN:.*]] = math.sin %{{.*}} : vector<4xf32>
//       CHECK:     %[[NS:.*]] = arith.negf %[[SN]] : vector<4xf32>
//       CHECK:     %[[CC:.*]] = vector.shuffle %[[C]], %[[C]] [0, 0, 1, 1, 2, 2, 3, 3] : vector<4xf32>, vector<4xf32>
//       CHECK:     %[[SS:.*]] = vector.shuffle %[[NS]], %[[SN]] [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xf32>, vector<4xf32>
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]][%[[T]], 0, 0] [1, 4, 8] [1, 1, 1] : tensor<8x4x8xf32> to tensor<4x8xf32>
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x8xf32>) {
//   CHECK-NOT:       math.{{cos|sin}}
//       CHECK:       %[[XV:.*]] = vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<4x8xf32>, vector<8xf32>
//       CHECK:       %[[SW:.*]] = vector.shuffle %[[XV]], %[[XV]] [1, 0, 3, 2, 5, 4, 7, 6] : vector<8xf32>, vector<8xf32>
//       CHECK:       %[[XC:.*]] = arith.mulf %[[XV]], %[[CC]] : vector<8xf32>
//       CHECK:       %[[Y:.*]] = math.fma %[[SW]], %[[SS]], %[[XC]] : vector<8xf32>
//       CHECK:       %[[W:.*]] = vector.transfer_write %[[Y]], %[[ACC]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<8xf32>, tensor<4x8xf32>
//   CHECK-NOT:       vector.transfer_
//       CHECK:       scf.yield %[[W]] : tensor<4x8xf32>
func.func @interleaved(%x: tensor<8x4x8xf32>, %init: tensor<8x4x8xf32>) -> tensor<8x4x8xf32> {
  %y = rope.apply ins(%x : tensor<8x4x8xf32>) outs(%init : tensor<8x4x8xf32>) {layout = #rope.layout<interleaved>} -> tensor<8x4x8xf32>
  return %y : tensor<8x4x8xf32>
}

// -----

// Partial rotary (16 of 64 channels), out of place: the rotated halves are
// 8-lane vectors at channels 0 and 8; the pass-through channels [16, 64) are
// copied from the input in three 16-lane (cache-line) reads and writes.

// CHECK-LABEL: func.func @partial(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x64xf32>, %[[INIT:[^:]*]]: tensor<8x4x64xf32>)
//       CHECK:   %[[THETA:.*]] = arith.constant dense<[1.000000e+00, 0.31622776601683794, {{.*}}, 3.1622776601683794E-4]> : vector<8xf64>
//       CHECK:   scf.forall (%[[T:.*]]) in (8)
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]][%[[T]], 0, 0] [1, 4, 64] [1, 1, 1] : tensor<8x4x64xf32> to tensor<4x64xf32>
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x64xf32>) {
//       CHECK:       vector.transfer_read %[[SRC]][%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<4x64xf32>, vector<8xf32>
//       CHECK:       %[[C8:.*]] = arith.constant 8 : index
//       CHECK:       vector.transfer_read %[[SRC]][%[[H]], %[[C8]]], %{{.*}} {in_bounds = [true]} : tensor<4x64xf32>, vector<8xf32>
//       CHECK:       %[[W1:.*]] = vector.transfer_write %{{.*}}, %[[ACC]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<8xf32>, tensor<4x64xf32>
//       CHECK:       %[[C8B:.*]] = arith.constant 8 : index
//       CHECK:       %[[W2:.*]] = vector.transfer_write %{{.*}}, %[[W1]][%[[H]], %[[C8B]]] {in_bounds = [true]} : vector<8xf32>, tensor<4x64xf32>
//       CHECK:       %[[C16:.*]] = arith.constant 16 : index
//       CHECK:       %[[PASS:.*]] = vector.transfer_read %[[SRC]][%[[H]], %[[C16]]], %{{.*}} {in_bounds = [true]} : tensor<4x64xf32>, vector<16xf32>
//       CHECK:       %[[C16B:.*]] = arith.constant 16 : index
//       CHECK:       %[[W3:.*]] = vector.transfer_write %[[PASS]], %[[W2]][%[[H]], %[[C16B]]] {in_bounds = [true]} : vector<16xf32>, tensor<4x64xf32>
//       CHECK:       %[[C32:.*]] = arith.constant 32 : index
//       CHECK:       %[[PASS2:.*]] = vector.transfer_read %[[SRC]][%[[H]], %[[C32]]], %{{.*}} {in_bounds = [true]} : tensor<4x64xf32>, vector<16xf32>
//       CHECK:       %[[W4:.*]] = vector.transfer_write %[[PASS2]], %[[W3]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xf32>, tensor<4x64xf32>
//       CHECK:       %[[C48:.*]] = arith.constant 48 : index
//       CHECK:       %[[PASS3:.*]] = vector.transfer_read %[[SRC]][%[[H]], %[[C48]]], %{{.*}} {in_bounds = [true]} : tensor<4x64xf32>, vector<16xf32>
//       CHECK:       %[[W5:.*]] = vector.transfer_write %[[PASS3]], %[[W4]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<16xf32>, tensor<4x64xf32>
//       CHECK:       scf.yield %[[W5]] : tensor<4x64xf32>
func.func @partial(%x: tensor<8x4x64xf32>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) outs(%init : tensor<8x4x64xf32>) {rotary_dim = 16 : i64} -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// -----

// In place (input == init): rows are read from the loop's destination slice
// (the scf.for iter_arg), never from the input tensor itself.

// CHECK-LABEL: func.func @in_place(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x8xf32>)
//       CHECK:   scf.forall (%[[T:.*]]) in (8) shared_outs(%[[OUT:.*]] = %[[X]])
//   CHECK-NOT:     %[[X]]
//       CHECK:     %[[DST:.*]] = tensor.extract_slice %[[OUT]][%[[T]], 0, 0] [1, 4, 8] [1, 1, 1] : tensor<8x4x8xf32> to tensor<4x8xf32>
//   CHECK-NOT:     %[[X]]
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[DST]]) -> (tensor<4x8xf32>) {
//       CHECK:       %[[X1:.*]] = vector.transfer_read %[[ACC]][%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<4x8xf32>, vector<4xf32>
//       CHECK:       %[[X2:.*]] = vector.transfer_read %[[ACC]][%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<4x8xf32>, vector<4xf32>
//       CHECK:       %[[W1:.*]] = vector.transfer_write %{{.*}}, %[[ACC]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<4x8xf32>
//       CHECK:       %[[W2:.*]] = vector.transfer_write %{{.*}}, %[[W1]][%[[H]], %{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<4x8xf32>
//   CHECK-NOT:       vector.transfer_
//       CHECK:       scf.yield %[[W2]]
//   CHECK-NOT:   %[[X]]
//       CHECK:   return
func.func @in_place(%x: tensor<8x4x8xf32>) -> tensor<8x4x8xf32> {
  %y = rope.apply ins(%x : tensor<8x4x8xf32>) outs(%x : tensor<8x4x8xf32>) -> tensor<8x4x8xf32>
  return %y : tensor<8x4x8xf32>
}

// -----

// [B, H, S, D] with token_dims = [0, 2]: heads are outer to the sequence dim,
// so the forall runs over (B, tiles of 32 tokens of S) (40 = 32 + a remainder
// tile of 8: the tile's size is min(32, S - s0)). Per tile, cos/sin of its
// tokens are computed once into a [2, 32, P/2] table (cos at [0, j], sin at
// [1, j]); then the head loop is outer and the tile's tokens inner, so each
// head's rows of the tile are one contiguous block. The head loop takes two
// heads at a time up to H - H % 2, then a remainder loop one at a time; each
// row reads its cos/sin from the table. The tile slices keep full rank. i32
// positions are sign-extended.

// CHECK-LABEL: func.func @bhsd(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x4x40x8xf32>, %[[P:[^:]*]]: tensor<2x40xi32>, %[[INIT:[^:]*]]: tensor<2x4x40x8xf32>)
//       CHECK:   scf.forall (%[[B:.*]], %[[S0:.*]]) = (0, 0) to (2, 40) step (1, 32) shared_outs(%[[OUT:.*]] = %[[INIT]])
//       CHECK:     %[[LEFT:.*]] = arith.subi %{{.*}}, %[[S0]] : index
//       CHECK:     %[[N:.*]] = arith.minsi %{{.*}}, %[[LEFT]] : index
//       CHECK:     %[[EMPTY:.*]] = tensor.empty() : tensor<2x32x4xf32>
//       CHECK:     %[[TABLE:.*]] = scf.for %[[J:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[T:.*]] = %[[EMPTY]]) -> (tensor<2x32x4xf32>) {
//       CHECK:       %[[S:.*]] = arith.addi %[[S0]], %[[J]] : index
//       CHECK:       %[[POS:.*]] = tensor.extract %[[P]][%[[B]], %[[S]]] : tensor<2x40xi32>
//       CHECK:       arith.extsi %[[POS]] : i32 to i64
//       CHECK:       %[[C:.*]] = math.cos %{{.*}} : vector<4xf32>
//       CHECK:       %[[SN:.*]] = math.sin %{{.*}} : vector<4xf32>
//       CHECK:       %[[T1:.*]] = vector.transfer_write %[[C]], %[[T]][%{{.*}}, %[[J]], %{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<2x32x4xf32>
//       CHECK:       %[[T2:.*]] = vector.transfer_write %[[SN]], %[[T1]][%{{.*}}, %[[J]], %{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<2x32x4xf32>
//       CHECK:       scf.yield %[[T2]] : tensor<2x32x4xf32>
//       CHECK:     %[[DST:.*]] = tensor.extract_slice %[[OUT]][%[[B]], 0, %[[S0]], 0] [1, 4, %[[N]], 8] [1, 1, 1, 1] : tensor<2x4x40x8xf32> to tensor<1x4x?x8xf32>
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]][%[[B]], 0, %[[S0]], 0] [1, 4, %[[N]], 8] [1, 1, 1, 1] : tensor<2x4x40x8xf32> to tensor<1x4x?x8xf32>
//       CHECK:     %[[H:.*]] = tensor.dim %[[DST]], %{{.*}} : tensor<1x4x?x8xf32>
//       CHECK:     %[[ODD:.*]] = arith.remui %[[H]], %{{.*}} : index
//       CHECK:     %[[EVEN:.*]] = arith.subi %[[H]], %[[ODD]] : index
//       CHECK:     %[[PAIRS:.*]] = scf.for %[[H0:.*]] = %{{.*}} to %[[EVEN]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[DST]]) -> (tensor<1x4x?x8xf32>) {
//       CHECK:       scf.for %[[K:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[A:.*]] = %[[ACC]]) -> (tensor<1x4x?x8xf32>) {
//       CHECK:         vector.transfer_read %[[SRC]][%{{.*}}, %[[H0]], %[[K]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<1x4x?x8xf32>, vector<4xf32>
//       CHECK:         vector.transfer_read %[[SRC]][%{{.*}}, %[[H0]], %[[K]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<1x4x?x8xf32>, vector<4xf32>
//       CHECK:         vector.transfer_read %[[TABLE]][%{{.*}}, %[[K]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<2x32x4xf32>, vector<4xf32>
//       CHECK:         vector.transfer_read %[[TABLE]][%{{.*}}, %[[K]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<2x32x4xf32>, vector<4xf32>
//       CHECK:         %[[W1:.*]] = vector.transfer_write %{{.*}}, %[[A]][%{{.*}}, %[[H0]], %[[K]], %{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<1x4x?x8xf32>
//       CHECK:         %[[W2:.*]] = vector.transfer_write %{{.*}}, %[[W1]][%{{.*}}, %[[H0]], %[[K]], %{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<1x4x?x8xf32>
//       CHECK:         %[[H1:.*]] = arith.addi %[[H0]], %{{.*}} : index
//       CHECK:         vector.transfer_read %[[SRC]][%{{.*}}, %[[H1]], %[[K]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<1x4x?x8xf32>, vector<4xf32>
//       CHECK:         vector.transfer_write %{{.*}}, %[[W2]][%{{.*}}, %[[H1]], %[[K]], %{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<1x4x?x8xf32>
//       CHECK:     %[[ROWS:.*]] = scf.for %[[HR:.*]] = %[[EVEN]] to %[[H]] step %{{.*}} iter_args(%{{.*}} = %[[PAIRS]]) -> (tensor<1x4x?x8xf32>) {
//       CHECK:       scf.for %{{.*}} = %{{.*}} to %[[N]] step
//       CHECK:         vector.transfer_read %[[SRC]][%{{.*}}, %[[HR]], %{{.*}}, %{{.*}}]
//       CHECK:     tensor.parallel_insert_slice %[[ROWS]] into %[[OUT]][%[[B]], 0, %[[S0]], 0] [1, 4, %[[N]], 8] [1, 1, 1, 1] : tensor<1x4x?x8xf32> into tensor<2x4x40x8xf32>
func.func @bhsd(%x: tensor<2x4x40x8xf32>, %p: tensor<2x40xi32>, %init: tensor<2x4x40x8xf32>) -> tensor<2x4x40x8xf32> {
  %y = rope.apply ins(%x : tensor<2x4x40x8xf32>) positions(%p : tensor<2x40xi32>) outs(%init : tensor<2x4x40x8xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x4x40x8xf32>
  return %y : tensor<2x4x40x8xf32>
}

// -----

// Rank 2 [T, D] with a dynamic T: the forall runs over T (dim of the input)
// and each token is a single row, so there is no head loop.

// CHECK-LABEL: func.func @rank2(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x8xf32>, %[[P:[^:]*]]: tensor<?xi64>, %[[INIT:[^:]*]]: tensor<?x8xf32>)
//       CHECK:   %[[T:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xf32>
//       CHECK:   scf.forall (%[[I:.*]]) in (%[[T]]) shared_outs(%[[OUT:.*]] = %[[INIT]])
//   CHECK-NOT:     scf.for %
//       CHECK:     tensor.extract %[[P]][%[[I]]] : tensor<?xi64>
//   CHECK-NOT:     scf.for %
//       CHECK:     %[[DST:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<8xf32>
//   CHECK-NOT:     scf.for %
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<8xf32>
//   CHECK-NOT:     scf.for %
//       CHECK:     vector.transfer_read %[[SRC]][%{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<8xf32>, vector<4xf32>
//       CHECK:     %[[C4:.*]] = arith.constant 4 : index
//       CHECK:     vector.transfer_read %[[SRC]][%[[C4]]], %{{.*}} {in_bounds = [true]} : tensor<8xf32>, vector<4xf32>
//       CHECK:     %[[W1:.*]] = vector.transfer_write %{{.*}}, %[[DST]][%{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<8xf32>
//       CHECK:     %[[W2:.*]] = vector.transfer_write %{{.*}}, %[[W1]][%{{.*}}] {in_bounds = [true]} : vector<4xf32>, tensor<8xf32>
//   CHECK-NOT:     scf.for %
//       CHECK:     tensor.parallel_insert_slice %[[W2]] into %[[OUT]][%[[I]], 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<?x8xf32>
func.func @rank2(%x: tensor<?x8xf32>, %p: tensor<?xi64>, %init: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = rope.apply ins(%x : tensor<?x8xf32>) positions(%p : tensor<?xi64>) outs(%init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Scalar offset: widened once before the loop; pos = offset + s, with s the
// index along the last token dim.

// CHECK-LABEL: func.func @scalar_offset(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x8xf32>, %[[O:[^:]*]]: i32,
//       CHECK:   %[[BASE:.*]] = arith.extsi %[[O]] : i32 to i64
//       CHECK:   scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 8)
//       CHECK:     %[[SI:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:     %[[POS:.*]] = arith.addi %[[BASE]], %[[SI]] : i64
//       CHECK:     arith.sitofp %[[POS]] : i64 to f64
func.func @scalar_offset(%x: tensor<2x8x4x8xf32>, %o: i32, %init: tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x8xf32>) offset(%o : i32) outs(%init : tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32>
  return %y : tensor<2x8x4x8xf32>
}

// -----

// Rank-0 offset tensor: extracted once, before the loop.

// CHECK-LABEL: func.func @rank0_offset(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x8xf32>, %[[O:[^:]*]]: tensor<i64>,
//       CHECK:   %[[BASE:.*]] = tensor.extract %[[O]][] : tensor<i64>
//       CHECK:   scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 8)
//   CHECK-NOT:     tensor.extract %[[O]]
//       CHECK:     %[[SI:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:     %[[POS:.*]] = arith.addi %[[BASE]], %[[SI]] : i64
//       CHECK:     arith.sitofp %[[POS]] : i64 to f64
func.func @rank0_offset(%x: tensor<2x8x4x8xf32>, %o: tensor<i64>, %init: tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x8xf32>) offset(%o : tensor<i64>) outs(%init : tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32>
  return %y : tensor<2x8x4x8xf32>
}

// -----

// Per-row offset [B]: read inside the loop at the first token index.

// CHECK-LABEL: func.func @per_row_offset(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x8xf32>, %[[O:[^:]*]]: tensor<2xi64>,
//   CHECK-NOT:   tensor.extract
//       CHECK:   scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 8)
//       CHECK:     %[[SI:.*]] = arith.index_cast %[[S]] : index to i64
//       CHECK:     %[[BASE:.*]] = tensor.extract %[[O]][%[[B]]] : tensor<2xi64>
//       CHECK:     %[[POS:.*]] = arith.addi %[[BASE]], %[[SI]] : i64
//       CHECK:     arith.sitofp %[[POS]] : i64 to f64
func.func @per_row_offset(%x: tensor<2x8x4x8xf32>, %o: tensor<2xi64>, %init: tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x8xf32>) offset(%o : tensor<2xi64>) outs(%init : tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32>
  return %y : tensor<2x8x4x8xf32>
}

// -----

// Gathered cache [M, P/2]: the number of rows is read once; per token the
// position is checked against [0, M), the row index clamped to 0 when out of
// range, one P/2-lane read of each cache at that row, and NaN for an
// out-of-range position, which reads nothing (the cache may be empty). No
// trig.

// CHECK-LABEL: func.func @gathered_cache(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x8xf32>, %[[P:[^:]*]]: tensor<8xi64>, %[[COS:[^:]*]]: tensor<128x4xf32>, %[[SIN:[^:]*]]: tensor<128x4xf32>, %[[INIT:[^:]*]]: tensor<8x4x8xf32>)
//   CHECK-NOT:   math.
//       CHECK:   %[[C0:.*]] = arith.constant 0 : index
//       CHECK:   %[[M:.*]] = tensor.dim %[[COS]], %[[C0]] : tensor<128x4xf32>
//       CHECK:   %[[M64:.*]] = arith.index_cast %[[M]] : index to i64
//       CHECK:   scf.forall (%[[T:.*]]) in (8)
//       CHECK:     %[[POS:.*]] = tensor.extract %[[P]][%[[T]]] : tensor<8xi64>
//       CHECK:     %[[ZERO:.*]] = arith.constant 0 : i64
//       CHECK:     %[[GE:.*]] = arith.cmpi sge, %[[POS]], %[[ZERO]] : i64
//       CHECK:     %[[LT:.*]] = arith.cmpi slt, %[[POS]], %[[M64]] : i64
//       CHECK:     %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
//       CHECK:     %[[CS:.*]]:2 = scf.if %[[OK]] -> (vector<4xf32>, vector<4xf32>) {
//       CHECK:       %[[ROW:.*]] = arith.index_cast %[[POS]] : i64 to index
//       CHECK:       %[[CR:.*]] = vector.transfer_read %[[COS]][%[[ROW]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<128x4xf32>, vector<4xf32>
//       CHECK:       %[[SR:.*]] = vector.transfer_read %[[SIN]][%[[ROW]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<128x4xf32>, vector<4xf32>
//       CHECK:       scf.yield %[[CR]], %[[SR]] : vector<4xf32>, vector<4xf32>
//       CHECK:     } else {
//   CHECK-NOT:       vector.transfer_read
//       CHECK:       %[[NAN:.*]] = arith.constant dense<0x7FC00000> : vector<4xf32>
//       CHECK:       scf.yield %[[NAN]], %[[NAN]] : vector<4xf32>, vector<4xf32>
//       CHECK:     }
//       CHECK:     scf.for
//       CHECK:       %[[NS:.*]] = arith.negf %[[CS]]#1 : vector<4xf32>
//       CHECK:       arith.mulf %{{.*}}, %[[CS]]#0 : vector<4xf32>
//       CHECK:       math.fma %{{.*}}, %[[NS]], %{{.*}} : vector<4xf32>
//   CHECK-NOT:   math.{{cos|sin}}
//       CHECK:   return
func.func @gathered_cache(%x: tensor<8x4x8xf32>, %p: tensor<8xi64>, %cos: tensor<128x4xf32>, %sin: tensor<128x4xf32>, %init: tensor<8x4x8xf32>) -> tensor<8x4x8xf32> {
  %y = rope.apply ins(%x : tensor<8x4x8xf32>) positions(%p : tensor<8xi64>) cache(%cos, %sin : tensor<128x4xf32>, tensor<128x4xf32>) outs(%init : tensor<8x4x8xf32>) -> tensor<8x4x8xf32>
  return %y : tensor<8x4x8xf32>
}

// -----

// Pre-gathered caches [B, S, P/2]: read at the token indices, no bounds
// check and no trig.

// CHECK-LABEL: func.func @pregathered_cache(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x8xf32>, %[[COS:[^:]*]]: tensor<2x8x4xf32>, %[[SIN:[^:]*]]: tensor<2x8x4xf32>, %[[INIT:[^:]*]]: tensor<2x8x4x8xf32>)
//       CHECK:   scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 8)
//   CHECK-NOT:     arith.cmpi
//       CHECK:     %[[C:.*]] = vector.transfer_read %[[COS]][%[[B]], %[[S]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<2x8x4xf32>, vector<4xf32>
//       CHECK:     %[[SN:.*]] = vector.transfer_read %[[SIN]][%[[B]], %[[S]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<2x8x4xf32>, vector<4xf32>
//   CHECK-NOT:     arith.select
//       CHECK:     scf.for
//       CHECK:       %[[NS:.*]] = arith.negf %[[SN]] : vector<4xf32>
//       CHECK:       arith.mulf %{{.*}}, %[[C]] : vector<4xf32>
//       CHECK:       math.fma %{{.*}}, %[[NS]], %{{.*}} : vector<4xf32>
//   CHECK-NOT:   math.{{cos|sin}}
//       CHECK:   return
func.func @pregathered_cache(%x: tensor<2x8x4x8xf32>, %cos: tensor<2x8x4xf32>, %sin: tensor<2x8x4xf32>, %init: tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x8xf32>) cache(%cos, %sin : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%init : tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32>
  return %y : tensor<2x8x4x8xf32>
}

// -----

// bf16 data and bf16 cache: the cache's bf16 vectors are widened exactly
// to f32 by bitcast to i16, zero-extension to i32, shift left by 16, bitcast
// to f32. x's rows are rotated in word lanes: each chunk of a half split
// into its even and odd pairs (vector.deinterleave, then arith.extf, which
// rope-expand-bf16 makes a shift and a mask of the 32-bit words), cos/sin
// put in that order once per token, the arithmetic in f32, and each result
// truncated to bf16 once and the halves joined (vector.interleave) just
// before its write.

// CHECK-LABEL: func.func @bf16_cache(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x8xbf16>, %[[P:[^:]*]]: tensor<8xi64>, %[[COS:[^:]*]]: tensor<128x4xbf16>, %[[SIN:[^:]*]]: tensor<128x4xbf16>, %[[INIT:[^:]*]]: tensor<8x4x8xbf16>)
//       CHECK:   scf.forall
//       CHECK:     %[[CSIF:.*]]:2 = scf.if
//       CHECK:     %[[CR:.*]] = vector.transfer_read %[[COS]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<128x4xbf16>, vector<4xbf16>
//       CHECK:     %[[CI:.*]] = arith.bitcast %[[CR]] : vector<4xbf16> to vector<4xi16>
//       CHECK:     %[[CE:.*]] = arith.extui %[[CI]] : vector<4xi16> to vector<4xi32>
//       CHECK:     %[[SH16:.*]] = arith.constant dense<16> : vector<4xi32>
//       CHECK:     %[[CS:.*]] = arith.shli %[[CE]], %[[SH16]] : vector<4xi32>
//       CHECK:     %[[CF:.*]] = arith.bitcast %[[CS]] : vector<4xi32> to vector<4xf32>
//       CHECK:     %[[SR:.*]] = vector.transfer_read %[[SIN]]{{.*}} : tensor<128x4xbf16>, vector<4xbf16>
//       CHECK:     arith.bitcast %[[SR]] : vector<4xbf16> to vector<4xi16>
//       CHECK:     %[[SF:.*]] = arith.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
//       CHECK:     scf.yield %[[CF]], %[[SF]] : vector<4xf32>, vector<4xf32>
//       CHECK:     %[[CO:.*]] = vector.shuffle %[[CSIF]]#0, %[[CSIF]]#0 [0, 2, 1, 3] : vector<4xf32>, vector<4xf32>
//       CHECK:     %[[SO:.*]] = vector.shuffle %[[CSIF]]#1, %[[CSIF]]#1 [0, 2, 1, 3] : vector<4xf32>, vector<4xf32>
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x8xbf16>) {
//       CHECK:       %[[X1R:.*]] = vector.transfer_read %{{.*}}[%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<4x8xbf16>, vector<4xbf16>
//       CHECK:       %[[X1E:.*]], %[[X1O:.*]] = vector.deinterleave %[[X1R]] : vector<4xbf16> -> vector<2xbf16>
//       CHECK:       %[[X1EF:.*]] = arith.extf %[[X1E]] : vector<2xbf16> to vector<2xf32>
//       CHECK:       %[[X1OF:.*]] = arith.extf %[[X1O]] : vector<2xbf16> to vector<2xf32>
//       CHECK:       %[[X2R:.*]] = vector.transfer_read %{{.*}}[%[[H]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<4x8xbf16>, vector<4xbf16>
//       CHECK:       %[[X2E:.*]], %[[X2O:.*]] = vector.deinterleave %[[X2R]] : vector<4xbf16> -> vector<2xbf16>
//       CHECK:       %[[X2EF:.*]] = arith.extf %[[X2E]]
//       CHECK:       %[[X2OF:.*]] = arith.extf %[[X2O]]
//       CHECK:       %[[CE:.*]] = vector.extract_strided_slice %[[CO]] {offsets = [0], sizes = [2], strides = [1]} : vector<4xf32> to vector<2xf32>
//       CHECK:       %[[SE:.*]] = vector.extract_strided_slice %[[SO]] {offsets = [0], sizes = [2], strides = [1]} : vector<4xf32> to vector<2xf32>
//       CHECK:       %[[NSE:.*]] = arith.negf %[[SE]] : vector<2xf32>
//       CHECK:       %[[X1C:.*]] = arith.mulf %[[X1EF]], %[[CE]] : vector<2xf32>
//       CHECK:       %[[Y1E:.*]] = math.fma %[[X2EF]], %[[NSE]], %[[X1C]] : vector<2xf32>
//       CHECK:       %[[X2C:.*]] = arith.mulf %[[X2EF]], %[[CE]] : vector<2xf32>
//       CHECK:       %[[Y2E:.*]] = math.fma %[[X1EF]], %[[SE]], %[[X2C]] : vector<2xf32>
//       CHECK:       vector.extract_strided_slice %[[CO]] {offsets = [2], sizes = [2], strides = [1]} : vector<4xf32> to vector<2xf32>
//       CHECK:       %[[Y1O:.*]] = math.fma %[[X2OF]], %{{.*}}, %{{.*}} : vector<2xf32>
//       CHECK:       %[[Y2O:.*]] = math.fma %[[X1OF]], %{{.*}}, %{{.*}} : vector<2xf32>
//       CHECK:       %[[T1E:.*]] = arith.truncf %[[Y1E]] : vector<2xf32> to vector<2xbf16>
//       CHECK:       %[[T1O:.*]] = arith.truncf %[[Y1O]] : vector<2xf32> to vector<2xbf16>
//       CHECK:       %[[Y1:.*]] = vector.interleave %[[T1E]], %[[T1O]] : vector<2xbf16> -> vector<4xbf16>
//       CHECK:       %[[T2E:.*]] = arith.truncf %[[Y2E]]
//       CHECK:       %[[T2O:.*]] = arith.truncf %[[Y2O]]
//       CHECK:       %[[Y2:.*]] = vector.interleave %[[T2E]], %[[T2O]] : vector<2xbf16> -> vector<4xbf16>
//       CHECK:       %[[W1:.*]] = vector.transfer_write %[[Y1]], %[[ACC]]{{.*}} : vector<4xbf16>, tensor<4x8xbf16>
//       CHECK:       vector.transfer_write %[[Y2]], %[[W1]]{{.*}} : vector<4xbf16>, tensor<4x8xbf16>
func.func @bf16_cache(%x: tensor<8x4x8xbf16>, %p: tensor<8xi64>, %cos: tensor<128x4xbf16>, %sin: tensor<128x4xbf16>, %init: tensor<8x4x8xbf16>) -> tensor<8x4x8xbf16> {
  %y = rope.apply ins(%x : tensor<8x4x8xbf16>) positions(%p : tensor<8xi64>) cache(%cos, %sin : tensor<128x4xbf16>, tensor<128x4xbf16>) outs(%init : tensor<8x4x8xbf16>) -> tensor<8x4x8xbf16>
  return %y : tensor<8x4x8xbf16>
}

// -----

// A static scaling scheme (linear, factor 2) folds to a constant
// vector<P/2 x f64> hoisted before the loop: theta / 2, nothing computed per
// call.

// CHECK-LABEL: func.func @static_scheme(
//       CHECK:   %[[THETA:.*]] = arith.constant dense<[5.000000e-01, 5.000000e-02, 5.000000e-03, 5.000000e-04]> : vector<4xf64>
//   CHECK-NOT:   linalg.generic
//   CHECK-NOT:   math.exp
//       CHECK:   scf.forall
//       CHECK:     %[[PV:.*]] = vector.broadcast %{{.*}} : f64 to vector<4xf64>
//       CHECK:     arith.mulf %[[PV]], %[[THETA]] : vector<4xf64>
func.func @static_scheme(%x: tensor<8x4x8xf32>, %init: tensor<8x4x8xf32>) -> tensor<8x4x8xf32> {
  %y = rope.apply ins(%x : tensor<8x4x8xf32>) outs(%init : tensor<8x4x8xf32>) {freqs = #rope.linear<factor = 2.0>} -> tensor<8x4x8xf32>
  return %y : tensor<8x4x8xf32>
}

// -----

// dynamic_ntk depends on the call's max position: the max over the positions
// and theta of the P/2 pairs (the scheme's per-element form on one vector)
// are computed once, before the forall; the loop body only uses it.

// CHECK-LABEL: func.func @dynamic_ntk(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x8x4x16xf32>, %[[P:[^:]*]]: tensor<2x8xi32>,
//       CHECK:   linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[P]] : tensor<2x8xi32>)
//       CHECK:     arith.maxsi
//       CHECK:   math.log %{{.*}} : f64
//       CHECK:   %[[THETA:.*]] = math.exp %{{.*}} : vector<8xf64>
//       CHECK:   scf.forall
//   CHECK-NOT:     linalg.generic
//   CHECK-NOT:     math.{{exp|log}}
//       CHECK:     %[[PV:.*]] = vector.broadcast %{{.*}} : f64 to vector<8xf64>
//       CHECK:     arith.mulf %[[PV]], %[[THETA]] : vector<8xf64>
//   CHECK-NOT:     linalg.generic
//   CHECK-NOT:     math.{{exp|log}}
//       CHECK:   return
func.func @dynamic_ntk(%x: tensor<2x8x4x16xf32>, %p: tensor<2x8xi32>, %init: tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x16xf32>) positions(%p : tensor<2x8xi32>) outs(%init : tensor<2x8x4x16xf32>) {freqs = #rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>} -> tensor<2x8x4x16xf32>
  return %y : tensor<2x8x4x16xf32>
}

// -----

// longrope: the short or long table is selected once per call from the max
// position, before the forall.

// CHECK-LABEL: func.func @longrope(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4xf32>, %[[P:[^:]*]]: tensor<8xi64>,
//       CHECK:   linalg.generic {{.*}} ins(%[[P]] : tensor<8xi64>)
//       CHECK:     arith.maxsi
//       CHECK:   %[[LEN:.*]] = arith.addi
//       CHECK:   %[[L:.*]] = arith.constant 4096 : i64
//       CHECK:   %[[ISLONG:.*]] = arith.cmpi sgt, %[[LEN]], %[[L]] : i64
//       CHECK:   %[[SHORT:.*]] = arith.constant dense<[1.000000e+00, 0.0066666666666666671]> : vector<2xf64>
//       CHECK:   %[[LONG:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-03]> : vector<2xf64>
//       CHECK:   %[[THETA:.*]] = arith.select %[[ISLONG]], %[[LONG]], %[[SHORT]] : vector<2xf64>
//       CHECK:   scf.forall
//   CHECK-NOT:     arith.select
//       CHECK:     arith.mulf %{{.*}}, %[[THETA]] : vector<2xf64>
func.func @longrope(%x: tensor<8x4xf32>, %p: tensor<8xi64>, %init: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = rope.apply ins(%x : tensor<8x4xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4xf32>) {freqs = #rope.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 4.0], original_max_position_embeddings = 4096>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// M-RoPE, section [2, 3, 3] over P/2 = 8 pairs: the axis of each pair by
// RotationCore::mropeAxis on the constant pair indices, which folds to
// constant masks (checked after canonicalization: CANON); per token the three
// axes' positions are broadcast and selected per lane (w over t, then h
// over that), then converted.

// CHECK-LABEL: func.func @mrope(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<8x4x16xf32>, %[[P:[^:]*]]: tensor<3x8xi64>,
//       CHECK:   scf.forall (%[[T:.*]]) in (8)
//       CHECK:     %[[PT:.*]] = tensor.extract %[[P]][%{{.*}}, %[[T]]] : tensor<3x8xi64>
//       CHECK:     %[[VT:.*]] = vector.broadcast %[[PT]] : i64 to vector<8xi64>
//       CHECK:     %[[PH:.*]] = tensor.extract %[[P]][%{{.*}}, %[[T]]] : tensor<3x8xi64>
//       CHECK:     %[[VH:.*]] = vector.broadcast %[[PH]] : i64 to vector<8xi64>
//       CHECK:     %[[PW:.*]] = tensor.extract %[[P]][%{{.*}}, %[[T]]] : tensor<3x8xi64>
//       CHECK:     %[[VW:.*]] = vector.broadcast %[[PW]] : i64 to vector<8xi64>
//       CHECK:     %[[PAIRS:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xindex>
//       CHECK:     %[[ISH:.*]] = arith.cmpi eq
//       CHECK:     %[[ISW:.*]] = arith.cmpi eq
//       CHECK:     %[[TW:.*]] = arith.select %[[ISW]], %[[VW]], %[[VT]] : vector<8xi1>, vector<8xi64>
//       CHECK:     %[[POS:.*]] = arith.select %[[ISH]], %[[VH]], %[[TW]] : vector<8xi1>, vector<8xi64>
//       CHECK:     %[[POSF:.*]] = arith.sitofp %[[POS]] : vector<8xi64> to vector<8xf64>
//       CHECK:     arith.mulf %[[POSF]], %{{.*}} : vector<8xf64>
// CANON-LABEL: func.func @mrope(
//   CANON-DAG:   %[[ISH:.*]] = arith.constant dense<[false, false, true, true, true, false, false, false]> : vector<8xi1>
//   CANON-DAG:   %[[ISW:.*]] = arith.constant dense<[false, false, false, false, false, true, true, true]> : vector<8xi1>
//       CANON:   scf.forall
//       CANON:     %[[TW:.*]] = arith.select %[[ISW]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xi64>
//       CANON:     arith.select %[[ISH]], %{{.*}}, %[[TW]] : vector<8xi1>, vector<8xi64>
func.func @mrope(%x: tensor<8x4x16xf32>, %p: tensor<3x8xi64>, %init: tensor<8x4x16xf32>) -> tensor<8x4x16xf32> {
  %y = rope.apply ins(%x : tensor<8x4x16xf32>) positions(%p : tensor<3x8xi64>) outs(%init : tensor<8x4x16xf32>) {mrope = #rope.mrope<section = [2, 3, 3]>} -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// -----

// Magnitude 2 and inverse: cos and sin are scaled once per token and sin is
// negated, all before the head loop.

// CHECK-LABEL: func.func @magnitude_inverse(
//       CHECK:   scf.forall
//       CHECK:     %[[C0:.*]] = math.cos %{{.*}} : vector<2xf32>
//       CHECK:     %[[S0:.*]] = math.sin %{{.*}} : vector<2xf32>
//       CHECK:     %[[A:.*]] = arith.constant dense<2.000000e+00> : vector<2xf32>
//       CHECK:     %[[C:.*]] = arith.mulf %[[C0]], %[[A]] : vector<2xf32>
//       CHECK:     %[[S1:.*]] = arith.mulf %[[S0]], %[[A]] : vector<2xf32>
//       CHECK:     %[[SN:.*]] = arith.negf %[[S1]] : vector<2xf32>
//       CHECK:     scf.for
//       CHECK:       %[[X1:.*]] = vector.transfer_read {{.*}} : tensor<4x4xf32>, vector<2xf32>
//       CHECK:       %[[X2:.*]] = vector.transfer_read {{.*}} : tensor<4x4xf32>, vector<2xf32>
//       CHECK:       %[[NS:.*]] = arith.negf %[[SN]] : vector<2xf32>
//       CHECK:       arith.mulf %[[X1]], %[[C]] : vector<2xf32>
//       CHECK:       math.fma %[[X2]], %[[NS]], %{{.*}} : vector<2xf32>
func.func @magnitude_inverse(%x: tensor<8x4x4xf32>, %init: tensor<8x4x4xf32>) -> tensor<8x4x4xf32> {
  %y = rope.apply ins(%x : tensor<8x4x4xf32>) outs(%init : tensor<8x4x4xf32>) {magnitude = 2.0, inverse} -> tensor<8x4x4xf32>
  return %y : tensor<8x4x4xf32>
}
