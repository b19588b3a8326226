// Exactness of the whole-model layouts (rope-raise-layout.mlir): each RUN
// line changes one thing in its rotations, which then are not raised.

// One sign: rotate_half without its negation is x * cos + x' * sin in every
// channel, not a rotation (prefill and decode).
// RUN: sed 's/%n = arith.negf %a : f32/%n = arith.addf %a, %zero : f32/' %S/rope-raise-layout.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIGN-REMARK
// RUN: sed 's/%n = arith.negf %a : f32/%n = arith.addf %a, %zero : f32/' %S/rope-raise-layout.mlir \
// RUN:   | rope-opt --rope-raise --split-input-file | FileCheck %s --check-prefix=NONE
// SIGN-REMARK: remark: rope-raise: not raised: the sign of sin is not the same rotation in every channel
// SIGN-REMARK: remark: rope-raise: not raised: the sign of sin is not the same rotation in every channel
// NONE-NOT: rope.apply

// The rotate_half partner read through another layout of the same matmul:
// [S, H*D] split as [D, H] and transposed to [1, H, S, D] pairs channels of
// one head with another reshape's elements. Each layout is its own leaf; the
// two are not one rotated tensor.
// RUN: sed -e '/%x = linalg.transpose ins(%ex : tensor<1x4x2x8xf32>)/a\  %ex2 = tensor.expand_shape %mm [[0, 1], [2, 3]] output_shape [1, 4, 8, 2] : tensor<4x16xf32> into tensor<1x4x8x2xf32>\n  %xs = linalg.transpose ins(%ex2 : tensor<1x4x8x2xf32>) outs(%et : tensor<1x2x4x8xf32>) permutation = [0, 3, 1, 2]' \
// RUN:   -e 's/%x2 = tensor.extract_slice %x\[0, 0, 0, 4\] \[1, 2, 4, 4\]/%x2 = tensor.extract_slice %xs[0, 0, 0, 4] [1, 2, 4, 4]/' %S/rope-raise-layout.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true --split-input-file 2>&1 | FileCheck %s --check-prefix=LAYOUT
// LAYOUT: remark: rope-raise: not raised: cos/sin are not proven
// LAYOUT-LABEL: func.func @prefill(
// LAYOUT-NOT: rope.apply
// LAYOUT-LABEL: func.func @decode(
// LAYOUT: rope.apply

// The position stream squared: a frameless factor that is not a constant is
// the one token's position only once in the angle.
// RUN: sed 's/%a = arith.mulf %%pf, %f : f32/%%pf2 = arith.mulf %%pf, %%pf : f32\n    %a = arith.mulf %%pf2, %f : f32/' %S/rope-raise-layout.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=POS-REMARK
// RUN: sed 's/%a = arith.mulf %%pf, %f : f32/%%pf2 = arith.mulf %%pf, %%pf : f32\n    %a = arith.mulf %%pf2, %f : f32/' %S/rope-raise-layout.mlir \
// RUN:   | rope-opt --rope-raise --split-input-file | FileCheck %s --check-prefix=NONE
// POS-REMARK: remark: rope-raise: not raised: cos/sin are not proven: the angle multiplies two position-dependent values
// POS-REMARK: remark: rope-raise: not raised: cos/sin are not proven: the angle multiplies two position-dependent values

// A fused projection whose rotate_half partner is q's second half, not k's:
// the channels read span more than one head dim of the fused channel dim.
// RUN: sed 's/%x2 = tensor.extract_slice %qkv\[0, 0, 0, 12\]/%x2 = tensor.extract_slice %qkv[0, 0, 0, 4]/' %S/rope-raise-layout.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true --split-input-file 2>&1 | FileCheck %s --check-prefix=WINDOW
// WINDOW: remark: rope-raise: not raised: the rotated tensor is not read whole, element for element
// WINDOW-LABEL: func.func @fused_qkv(
// WINDOW-NOT: rope.apply
// WINDOW-LABEL: func.func @interleaved(

// Interleaved pairs stacked in the wrong order: (x[2i], -x[2i+1]) is not a
// rotation of the one x the two views read.
// RUN: sed 's/%%st = tensor.concat dim(4) %%s0, %%s1/%%st = tensor.concat dim(4) %%s1, %%s0/' %S/rope-raise-layout.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=STACK-REMARK
// RUN: sed 's/%%st = tensor.concat dim(4) %%s0, %%s1/%%st = tensor.concat dim(4) %%s1, %%s0/' %S/rope-raise-layout.mlir \
// RUN:   | rope-opt --rope-raise --split-input-file | FileCheck %s --check-prefix=STACK
// STACK-REMARK: remark: rope-raise: not raised: channel 0 is paired with channel 0, neither P/2 nor 1
// STACK-LABEL: func.func @interleaved(
// STACK-NOT: rope.apply
