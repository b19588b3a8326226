// RUN: rope-opt --rope-raise=remarks=true %s 2>&1 | FileCheck %s

// LongRoPE as Hugging Face's Phi-3 exports it (phi3 in the zoo): the
// inv_freq table is chosen at run time, torch.where(seq_len > L, long,
// short) with seq_len = max(position_ids) + 1 computed in the graph, and
// cos/sin are scaled by attention_scaling. With positions a function
// argument the choice is not a constant: it is #rope.longrope's switch,
// `length > L`, with the IR's own seq_len as rope.apply's length(%l). The
// factors reproduce the two f32 tables (relative to the attribute's
// default base: the tables do not say theirs), the magnitude is the
// attention factor. T = 8 tokens, D = 8; short = 10000^(-2i/8) /
// [1, 1.25, 1.5, 2], long = 10000^(-2i/8) / [1, 2, 4, 8] (f32), L = 8.

#tok = affine_map<(d0, d1) -> (d0)>
#ch = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>
#scalar = affine_map<() -> ()>

// CHECK-LABEL: func.func @longrope(
// CHECK-SAME: %[[X:.*]]: tensor<8x8xf32>, %[[P:.*]]: tensor<8xi64>
// CHECK: %[[LEN:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<i64>) outs(%{{.*}} : tensor<i64>)
// CHECK: %[[L:.*]] = tensor.extract %[[LEN]][] : tensor<i64>
// CHECK: %[[R:.*]] = rope.apply ins(%[[X]] : tensor<8x8xf32>) positions(%[[P]] : tensor<8xi64>) length(%[[L]] : i64) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK-SAME: {freqs = #rope.longrope<short_factor = [1.000000e+00, 1.250000e+00, 1.500000e+00, 2.000000e+00], long_factor = [1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00], original_max_position_embeddings = 8, attention_factor = 1.250000e+00>, magnitude = 1.250000e+00 : f64}
// CHECK-NOT: math.cos
// CHECK: return %[[R]]
func.func @longrope(%x: tensor<8x8xf32>, %p: tensor<8xi64>) -> tensor<8x8xf32> {
  %ktab = arith.constant dense<[1.0, 0.07999999821186066, 0.006666666828095913, 0.0005000000237487257]> : tensor<4xf32>
  %long = arith.constant dense<[1.0, 0.05000000074505806, 0.0024999999441206455, 0.0001250000059371814]> : tensor<4xf32>
  %min = arith.constant -9223372036854775808 : i64
  %one = arith.constant 1 : i64
  %c8 = arith.constant 8 : i64
  %mag = arith.constant 1.25 : f32
  %i0 = tensor.empty() : tensor<i64>
  %i1 = linalg.fill ins(%min : i64) outs(%i0 : tensor<i64>) -> tensor<i64>
  %max = linalg.generic {indexing_maps = [#all, #red], iterator_types = ["reduction"]} ins(%p : tensor<8xi64>) outs(%i1 : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %m = arith.maxsi %in, %out : i64
    linalg.yield %m : i64
  } -> tensor<i64>
  %len = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%max : tensor<i64>) outs(%i0 : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %a = arith.addi %in, %one : i64
    linalg.yield %a : i64
  } -> tensor<i64>
  %b0 = tensor.empty() : tensor<i1>
  %islong = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%len : tensor<i64>) outs(%b0 : tensor<i1>) {
  ^bb0(%in: i64, %out: i1):
    %c = arith.cmpi sgt, %in, %c8 : i64
    linalg.yield %c : i1
  } -> tensor<i1>
  %f0 = tensor.empty() : tensor<4xf32>
  %inv = linalg.generic {indexing_maps = [#red, #all, #all, #all], iterator_types = ["parallel"]} ins(%islong, %long, %ktab : tensor<i1>, tensor<4xf32>, tensor<4xf32>) outs(%f0 : tensor<4xf32>) {
  ^bb0(%c: i1, %l: f32, %q: f32, %out: f32):
    %v = arith.select %c, %l, %q : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %e4 = tensor.empty() : tensor<8x4xf32>
  %ang = linalg.generic {indexing_maps = [#tok, #ch, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %inv : tensor<8xi64>, tensor<4xf32>) outs(%e4 : tensor<8x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  %emb = tensor.concat dim(1) %ang, %ang : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %e8 = tensor.empty() : tensor<8x8xf32>
  %cos = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    %cs = arith.mulf %c, %mag : f32
    linalg.yield %cs : f32
  } -> tensor<8x8xf32>
  %sin = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %nsin = math.sin %a : f32
    %msin = arith.mulf %nsin, %mag : f32
    linalg.yield %msin : f32
  } -> tensor<8x8xf32>
  %x1 = tensor.extract_slice %x[0, 0] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %x2 = tensor.extract_slice %x[0, 4] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %n = linalg.negf ins(%x2 : tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %rot = tensor.concat dim(1) %n, %x1 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %xc = linalg.mul ins(%x, %cos : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %rs = linalg.mul ins(%rot, %sin : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.add ins(%xc, %rs : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// Variants: each RUN line changes one thing (in the IR, not in these
// comments); the raised op says what the IR computes.
//
// The wrong table chosen (the short one past L): the factors follow the IR.
// RUN: sed '/^\/\//!s/%v = arith.select %c, %l, %q : f32/%v = arith.select %c, %q, %l : f32/' %s \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=SWAPPED
// SWAPPED: rope.apply {{.*}}short_factor = [1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00], long_factor = [1.000000e+00, 1.250000e+00, 1.500000e+00, 2.000000e+00], original_max_position_embeddings = 8,
//
// The switch at seq_len >= 8 is seq_len > 7.
// RUN: sed '/^\/\//!s/%c = arith.cmpi sgt, %in, %c8 : i64/%c = arith.cmpi sge, %in, %c8 : i64/' %s \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=SGE
// SGE: rope.apply {{.*}}long_factor = [1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00], original_max_position_embeddings = 7,
//
// The switch written the other way round, 8 < seq_len: the same op.
// RUN: sed '/^\/\//!s/%c = arith.cmpi sgt, %in, %c8 : i64/%c = arith.cmpi slt, %c8, %in : i64/' %s \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=FLIPPED
// FLIPPED: rope.apply {{.*}}short_factor = [1.000000e+00, 1.250000e+00, 1.500000e+00, 2.000000e+00], long_factor = [1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00], original_max_position_embeddings = 8,
//
// linalg-fuse-elementwise-ops first: seq_len + 1, the comparison and the
// select are computed in the angle's own payload; the switch is read there
// (seq_len the max reduction plus 1: the op adds the 1 to its length).
// RUN: rope-opt %s --linalg-fuse-elementwise-ops --rope-raise | FileCheck %s --check-prefix=FUSED
// FUSED: %[[M:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// FUSED: %[[L:.*]] = arith.addi %[[M]], %{{.*}} : i64
// FUSED: rope.apply ins(%{{.*}} : tensor<8x8xf32>) positions(%{{.*}} : tensor<8xi64>) length(%[[L]] : i64) {{.*}}short_factor = [1.000000e+00, 1.250000e+00, 1.500000e+00, 2.000000e+00], long_factor = [1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00], original_max_position_embeddings = 8, attention_factor = 1.250000e+00>, magnitude = 1.250000e+00 : f64}
//
// Negatives: not raised.
//
// A switch on equality (seq_len == 8) is no length threshold.
// RUN: sed '/^\/\//!s/%c = arith.cmpi sgt, %in, %c8 : i64/%c = arith.cmpi eq, %in, %c8 : i64/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=EQ
// EQ: remark: rope-raise: not raised: the frequency tables are chosen by a boolean that is not a signed comparison of one integer with a constant
// EQ-NOT: rope.apply
//
// A switch per frequency (the condition read per channel) is no one choice.
// RUN: sed -e '/^\/\//!s/#red, #all, #all, #all\]/#all, #all, #all, #all]/' -e '/^\/\//!s/ins(%islong, %long, %ktab : tensor<i1>,/ins(%chan, %long, %ktab : tensor<4xi1>,/' \
// RUN:     -e '/^\/\//!s/%f0 = tensor.empty() : tensor<4xf32>/%f0 = tensor.empty() : tensor<4xf32>\n  %cz0 = tensor.empty() : tensor<4xi1>\n  %chan = linalg.generic {indexing_maps = [#red, #all], iterator_types = ["parallel"]} ins(%islong : tensor<i1>) outs(%cz0 : tensor<4xi1>) {\n  ^bb0(%in: i1, %out: i1):\n    %k = linalg.index 0 : index\n    %ki = arith.index_cast %k : index to i64\n    %kb = arith.trunci %ki : i64 to i1\n    %o = arith.xori %in, %kb : i1\n    linalg.yield %o : i1\n  } -> tensor<4xi1>/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=PERCHANNEL
// PERCHANNEL: remark: rope-raise: not raised: cos/sin are not proven: the frequency table is not a constant
// PERCHANNEL-NOT: rope.apply
//
// sin scaled by another factor than cos.
// RUN: sed '/^\/\//!s/%msin = arith.mulf %nsin, %mag : f32/%k25 = arith.constant 2.5 : f32\n    %msin = arith.mulf %nsin, %k25 : f32/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=MAGNITUDE
// MAGNITUDE: remark: rope-raise: not raised: cos and sin are scaled differently in channel 0
// MAGNITUDE-NOT: rope.apply
