// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Indices read from the IR past the end of the tensor they index (issue 32):
// the raise must not read its element lists out of bounds, and must simply
// not raise what reads out of bounds. Each RUN line edits the committed Meta
// Llama fixture (view_as_complex through tensor.extract at a constant index
// of the size-2 re/im dim); these crashed rope-opt (SIGSEGV, "LLVM ERROR: out
// of memory", or an `Index < Length` assertion) before the raise bounded the
// indices by the shapes. test/fuzz/mutate_frontend.py finds such mutants.

// The q extract of the real part reads index 2, 64, 65, 2^31 - 1 of a dim of
// 2 (a new constant; k is untouched and still raised).
// RUN: sed -e '7a\    %cX = arith.constant 2 : index' -e '19s/%c0\]/%cX]/' %S/Inputs/meta_llama_complex.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: sed -e '7a\    %cX = arith.constant 64 : index' -e '19s/%c0\]/%cX]/' %S/Inputs/meta_llama_complex.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: sed -e '7a\    %cX = arith.constant 65 : index' -e '19s/%c0\]/%cX]/' %S/Inputs/meta_llama_complex.mlir \
// RUN:   | rope-opt --rope-optimize 2>&1 | FileCheck %s --check-prefix=ONE-OPT
// RUN: sed -e '7a\    %cX = arith.constant 2147483647 : index' -e '19s/%c0\]/%cX]/' %S/Inputs/meta_llama_complex.mlir \
// RUN:   | rope-opt --rope-optimize 2>&1 | FileCheck %s --check-prefix=ONE-OPT
// ONE: remark: rope-raise: not raised:
// ONE-COUNT-1: rope.apply
// ONE-NOT: rope.apply
// ONE-OPT-COUNT-1: rope.apply
// ONE-OPT-NOT: rope.apply

// %c0 itself becomes 64 or 65: every extract of the real part (q and k) and
// the re/im select read out of bounds; nothing is raised.
// RUN: sed '7s/constant 0 :/constant 64 :/' %S/Inputs/meta_llama_complex.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: sed '7s/constant 0 :/constant 64 :/' %S/Inputs/meta_llama_complex.mlir \
// RUN:   | rope-opt --rope-optimize 2>&1 | FileCheck %s --check-prefix=NONE-OPT
// RUN: sed '7s/constant 0 :/constant 65 :/' %S/Inputs/meta_llama_complex.mlir \
// RUN:   | rope-opt --rope-optimize 2>&1 | FileCheck %s --check-prefix=NONE-OPT
// NONE-COUNT-2: remark: rope-raise: not raised:
// NONE-NOT: rope.apply
// NONE-OPT: func.func @main
// NONE-OPT-NOT: rope.apply

// Sizes read from the IR bound the work: a splat complex table can claim
// 2^30 rows in a few bytes; splitting it into cos/sin tables element by
// element took minutes and gigabytes before the raise checked the size.
// RUN: sed -e 's/dense_resource<torch_tensor_64_16_torch.complex64> : tensor<64x16x/dense<(1.0,0.0)> : tensor<1073741824x16x/' \
// RUN:     -e 's/tensor<64x16xcomplex<f32>> to/tensor<1073741824x16xcomplex<f32>> to/' %S/Inputs/meta_llama_complex.mlir \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE-COUNT-2: remark: rope-raise: not raised: the complex table is too large to split
// HUGE-NOT: rope.apply
