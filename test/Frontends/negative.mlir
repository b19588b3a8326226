// Exactness: each RUN line changes one thing in a frontend fixture (one sign,
// one slice bound, one frequency, one position stream) and checks that
// nothing is raised where the change breaks the rotation, with the remark
// that names the failed check. (The lines edited are those of the committed
// fixtures; regenerating them may move them, and these tests then fail.)

// One sign: rotate_half without its negation (cat(x2, x1) instead of
// cat(-x2, x1)), q only: k still raised.
// RUN: sed '48s/linalg.yield %19/linalg.yield %in/' %S/Inputs/llama_computed.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=SIGN-HALF
// SIGN-HALF: remark: rope-raise: not raised: the sign of sin is not the same rotation in every channel
// SIGN-HALF-COUNT-1: rope.apply
// SIGN-HALF-NOT: rope.apply

// One sign: the expanded form with x1*c + x2*s in the first half (gpt-oss q).
// RUN: sed '62s/arith.subf/arith.addf/' %S/Inputs/gpt_oss.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=SIGN-EXPANDED
// SIGN-EXPANDED: remark: rope-raise: not raised: the sign of sin is not the same rotation in every channel
// SIGN-EXPANDED-COUNT-1: rope.apply
// SIGN-EXPANDED-NOT: rope.apply

// The sin term subtracted instead of added (x*cos - rotate_half(x)*sin) is
// the inverse rotation, consistently in every channel: raised, `inverse`.
// RUN: sed '58s/arith.addf %in, %in_7/arith.subf %in, %in_7/' %S/Inputs/llama_computed.mlir \
// RUN:   | rope-opt --rope-raise 2>&1 | FileCheck %s --check-prefix=INVERSE
// INVERSE: rope.apply ins(%arg0 {{.*}} inverse
// INVERSE: rope.apply ins(%arg1
// INVERSE-NOT: inverse

// One slice bound: x2 = x[..., 15:31] instead of x[..., 16:32].
// RUN: sed '43s/\[0, 0, 0, 16\] \[2, 4, 8, 16\]/[0, 0, 0, 15] [2, 4, 8, 16]/' %S/Inputs/llama_computed.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=SLICE-HALF
// SLICE-HALF: remark: rope-raise: not raised: channel 0 is paired with channel 15, neither P/2 nor 1
// SLICE-HALF-COUNT-1: rope.apply
// SLICE-HALF-NOT: rope.apply

// One slice bound: GPT-J's odd lanes x[..., 1::2] read from 0 (k only).
// RUN: sed 's/%extracted_slice_8 = tensor.extract_slice %extracted_slice_1\[0, 0, 0, 1\]/%extracted_slice_8 = tensor.extract_slice %extracted_slice_1[0, 0, 0, 0]/' %S/Inputs/gptj.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=SLICE-STRIDED
// SLICE-STRIDED: remark: rope-raise: not raised: channel 0 does not multiply one cos and one sin
// SLICE-STRIDED-COUNT-1: rope.apply
// SLICE-STRIDED-NOT: rope.apply

// One frequency: sin of twice the angle (Llama, computed).
// RUN: sed '31s/%19 = math.sin %in : f32/%d = arith.addf %in, %in : f32\n      %19 = math.sin %d : f32/' %S/Inputs/llama_computed.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=FREQ-COMPUTED
// FREQ-COMPUTED-COUNT-2: remark: rope-raise: not raised: cos/sin are not proven: the angle is computed inside the cos/sin op
// FREQ-COMPUTED-NOT: rope.apply

// One frequency: one entry of the second half of the gathered cos cache
// (row 1, column 19) no longer equals its pair's (column 3).
// RUN: perl -pe 'if (/^\s*torch_tensor_64_32_torch.float32: "/) { my $i = index($_, "0x") + 10 + 51*8; substr($_, $i, 8) = "0000003F"; }' %S/Inputs/llama_cache.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=FREQ-CACHE
// FREQ-CACHE-COUNT-2: remark: rope-raise: not raised: the two channels of pair 3 read different table columns that are not proven equal
// FREQ-CACHE-NOT: rope.apply

// One position stream: M-RoPE's third section of one table from stream h
// instead of w.
// RUN: sed '49s/\[2, 0, 0, 0\]/[1, 0, 0, 0]/' %S/Inputs/qwen2_vl_mrope.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=POS-MROPE
// POS-MROPE-COUNT-2: remark: rope-raise: not raised: cos and sin of pair 10 take different positions
// POS-MROPE-NOT: rope.apply

// One position stream: the sin cache read at row p + 64 instead of the
// wrapped p.
// RUN: sed '28s/arith.index_cast %17/arith.index_cast %16/' %S/Inputs/llama_cache.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=POS-CACHE
// POS-CACHE-COUNT-2: remark: rope-raise: not raised: cos/sin are not proven: the gathered row is computed from the positions
// POS-CACHE-NOT: rope.apply

// cos/sin that arrive as function arguments are not raised (nothing proves
// they are a rotation's).
// RUN: rope-opt --rope-raise=remarks=true %s 2>&1 | FileCheck %s --check-prefix=ARGS
// ARGS: remark: rope-raise: not raised: cos/sin are not proven
// ARGS-NOT: rope.apply
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @cos_sin_arguments(%x: tensor<8x4xf32>, %c: tensor<8x4xf32>, %s: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %x1 = tensor.extract_slice %x[0, 0] [8, 2] [1, 1] : tensor<8x4xf32> to tensor<8x2xf32>
  %x2 = tensor.extract_slice %x[0, 2] [8, 2] [1, 1] : tensor<8x4xf32> to tensor<8x2xf32>
  %e = tensor.empty() : tensor<8x2xf32>
  %n = linalg.negf ins(%x2 : tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %r = tensor.concat dim(1) %n, %x1 : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x4xf32>
  %e4 = tensor.empty() : tensor<8x4xf32>
  %xc = linalg.mul ins(%x, %c : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %rs = linalg.mul ins(%r, %s : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.add ins(%xc, %rs : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// One sign in the interleaved form: GLM-4's odd lanes not negated (q).
// RUN: sed '67s/linalg.yield %22/linalg.yield %in/' %S/Inputs/glm4_partial_interleaved.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=SIGN-INTERLEAVED
// SIGN-INTERLEAVED: remark: rope-raise: not raised: the sign of sin is not the same rotation in every channel
// SIGN-INTERLEAVED-COUNT-1: rope.apply
// SIGN-INTERLEAVED-NOT: rope.apply

// One lane in the complex form: view_as_real's re/im lanes swapped (k).
// RUN: sed '49s/arith.cmpi eq, %12, %c0/arith.cmpi ne, %12, %c0/' %S/Inputs/meta_llama_complex.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=LANE-COMPLEX
// LANE-COMPLEX: remark: rope-raise: not raised: cos is scaled by a non-positive factor
// LANE-COMPLEX-COUNT-1: rope.apply
// LANE-COMPLEX-NOT: rope.apply

// One slice bound of a partial rotation: Phi-2's pass-through channels read
// from 15 instead of 16 (q).
// RUN: sed '35s/\[0, 0, 0, 16\] \[2, 4, 8, 24\]/[0, 0, 0, 15] [2, 4, 8, 24]/' %S/Inputs/phi2_partial.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=SLICE-PARTIAL
// SLICE-PARTIAL: remark: rope-raise: not raised: channel 16 past the rotary dim is not passed through
// SLICE-PARTIAL-COUNT-1: rope.apply
// SLICE-PARTIAL-NOT: rope.apply

// A magnitude on sin unlike cos's (Qwen2 YaRN: sin times 2, cos times
// attention_scaling).
// RUN: sed '43s/%21 = arith.truncf %cst : f64 to f32/%21 = arith.constant 2.0 : f32/' %S/Inputs/qwen2_yarn.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=MAGNITUDE
// MAGNITUDE-COUNT-2: remark: rope-raise: not raised: cos and sin are scaled differently in channel 0
// MAGNITUDE-NOT: rope.apply
