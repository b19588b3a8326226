// RUN: rope-opt %s --rope-to-llvm-cpu=num-threads=2 | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%omp_lib | FileCheck %s
// RUN: rope-opt %s --rope-to-llvm-cpu="num-threads=2 vectorize=false" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%omp_lib | FileCheck %s
// REQUIRES: libomp

// rope.apply run on two OpenMP threads (scf.forall -> scf.parallel ->
// omp.parallel): the token loop is split across threads and every token must
// still be rotated once, by its own position. Expected values come from the
// float64 reference (python/rope_mlir/reference.py), to about 5 significant
// digits. The second RUN line checks that num-threads combines with
// vectorize=false; that path (convert-rope-to-linalg, linalg loops) has no
// scf.forall, so it runs sequentially.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %cos = arith.constant dense<[[1.0, 0.5], [0.25, -0.75], [0.125, 0.875]]> : tensor<3x2xf32>
  %sin = arith.constant dense<[[0.0, 0.5], [0.875, 0.625], [-0.375, 0.5]]> : tensor<3x2xf32>

  // Half layout, [B, S, H, D] = [2, 3, 2, 4], explicit positions up to 300000
  // (the f64 angle and its range reduction matter there).
  %x_half = arith.constant dense<[[[[-1.375, 0.375, 2.125, -0.375], [1.375, -1.125, 0.625, -1.875]], [[-0.125, 1.625, -0.875, 0.875], [-1.625, 0.125, 1.875, -0.625]], [[1.125, -1.375, 0.375, 2.125], [-0.375, 1.375, -1.125, 0.625]]], [[[-1.875, -0.125, 1.625, -0.875], [0.875, -1.625, 0.125, 1.875]], [[-0.625, 1.125, -1.375, 0.375], [2.125, -0.375, 1.375, -1.125]], [[0.625, -1.875, -0.125, 1.625], [-0.875, 0.875, -1.625, 0.125]]]]> : tensor<2x3x2x4xf32>
  %p_half = arith.constant dense<[[0, 1, 2], [1000, 20000, 300000]]> : tensor<2x3xi64>
  %init_half = tensor.empty() : tensor<2x3x2x4xf32>
  %y_half = rope.apply ins(%x_half : tensor<2x3x2x4xf32>) positions(%p_half : tensor<2x3xi64>) outs(%init_half : tensor<2x3x2x4xf32>) -> tensor<2x3x2x4xf32>
  %u_half = tensor.cast %y_half : tensor<2x3x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u_half) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 3, 2, 4]
  // CHECK-NEXT: {{\[\[\[\[}}-1.375, 0.375, 2.125, -0.375],
  // CHECK-NEXT: [1.375, -1.125, 0.625, -1.875]],
  // CHECK-NEXT: {{\[\[}}0.66874{{[0-9]*}}, 1.6161{{[0-9]*}}, -0.57794{{[0-9]*}}, 0.89120{{[0-9]*}}],
  // CHECK-NEXT: [-2.4557{{[0-9]*}}, 0.13124{{[0-9]*}}, -0.35432{{[0-9]*}}, -0.62371{{[0-9]*}}]],
  // CHECK-NEXT: {{\[\[}}-0.80915{{[0-9]*}}, -1.4172{{[0-9]*}}, 0.86690{{[0-9]*}}, 2.0970{{[0-9]*}}],
  // CHECK-NEXT: [1.1790{{[0-9]*}}, 1.3622{{[0-9]*}}, 0.12717{{[0-9]*}}, 0.65237{{[0-9]*}}]]],
  // CHECK-NEXT: {{\[\[\[}}-2.3981{{[0-9]*}}, -0.37113{{[0-9]*}}, -0.63653{{[0-9]*}}, 0.8021{{[0-9]*}}],
  // CHECK-NEXT: [0.38872{{[0-9]*}}, 2.3835{{[0-9]*}}, 0.79381{{[0-9]*}}, -0.68922{{[0-9]*}}]],
  // CHECK-NEXT: {{\[\[}}0.29197{{[0-9]*}}, 0.87557{{[0-9]*}}, -1.4818{{[0-9]*}}, -0.79976{{[0-9]*}}],
  // CHECK-NEXT: [0.9278{{[0-9]*}}, -1.1651{{[0-9]*}}, 2.3548{{[0-9]*}}, -0.220{{[0-9]*}}]],
  // CHECK-NEXT: {{\[\[}}-0.60802{{[0-9]*}}, 1.4732{{[0-9]*}}, 0.19119{{[0-9]*}}, -1.9964{{[0-9]*}}],
  // CHECK-NEXT: [1.0439{{[0-9]*}}, -0.88112{{[0-9]*}}, 1.5219{{[0-9]*}}, 0.06983{{[0-9]*}}]]]]

  // Interleaved layout, [T, H, D] = [4, 2, 6], implicit positions pos = t.
  %x_inter = arith.constant dense<[[[-1.875, -0.125, 1.625, -0.875, 0.875, -1.625], [0.125, 1.875, -0.625, 1.125, -1.375, 0.375]], [[2.125, -0.375, 1.375, -1.125, 0.625, -1.875], [-0.125, 1.625, -0.875, 0.875, -1.625, 0.125]], [[1.875, -0.625, 1.125, -1.375, 0.375, 2.125], [-0.375, 1.375, -1.125, 0.625, -1.875, -0.125]], [[1.625, -0.875, 0.875, -1.625, 0.125, 1.875], [-0.625, 1.125, -1.375, 0.375, 2.125, -0.375]]]> : tensor<4x2x6xf32>
  %init_inter = tensor.empty() : tensor<4x2x6xf32>
  %y_inter = rope.apply ins(%x_inter : tensor<4x2x6xf32>) outs(%init_inter : tensor<4x2x6xf32>) {layout = #rope.layout<interleaved>} -> tensor<4x2x6xf32>
  %u_inter = tensor.cast %y_inter : tensor<4x2x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u_inter) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [4, 2, 6]
  // CHECK-NEXT: {{\[\[\[}}-1.875, -0.125, 1.625, -0.875, 0.875, -1.625],
  // CHECK-NEXT: [0.125, 1.875, -0.625, 1.125, -1.375, 0.375]],
  // CHECK-NEXT: {{\[\[}}1.4636{{[0-9]*}}, 1.5855{{[0-9]*}}, 1.4257{{[0-9]*}}, -1.0599{{[0-9]*}}, 0.62903{{[0-9]*}}, -1.8736{{[0-9]*}}],
  // CHECK-NEXT: [-1.4349{{[0-9]*}}, 0.77280{{[0-9]*}}, -0.91465{{[0-9]*}}, 0.83345{{[0-9]*}}, -1.6252{{[0-9]*}}, 0.12149{{[0-9]*}}]],
  // CHECK-NEXT: {{\[\[}}-0.21196{{[0-9]*}}, 1.9650{{[0-9]*}}, 1.2476{{[0-9]*}}, -1.2647{{[0-9]*}}, 0.3658{{[0-9]*}}, 2.126{{[0-9]*}}],
  // CHECK-NEXT: [-1.0942{{[0-9]*}}, -0.91318{{[0-9]*}}, -1.1780{{[0-9]*}}, 0.51802{{[0-9]*}}, -1.8744{{[0-9]*}}, -0.13307{{[0-9]*}}]],
  // CHECK-NEXT: {{\[\[}}-1.4852{{[0-9]*}}, 1.0955{{[0-9]*}}, 1.0920{{[0-9]*}}, -1.4878{{[0-9]*}}, 0.11287{{[0-9]*}}, 1.8757{{[0-9]*}}],
  // CHECK-NEXT: [0.45998{{[0-9]*}}, -1.2019{{[0-9]*}}, -1.4137{{[0-9]*}}, 0.18052{{[0-9]*}}, 2.1273{{[0-9]*}}, -0.36125{{[0-9]*}}]]]

  // Partial rotary, half layout: P = 4 of D = 6, scalar offset 5 (pos = 5 + t);
  // channels 4 and 5 pass through.
  %x_partial = arith.constant dense<[[[-1.875, -0.125, 1.625, -0.875, 0.875, -1.625], [0.125, 1.875, -0.625, 1.125, -1.375, 0.375]], [[2.125, -0.375, 1.375, -1.125, 0.625, -1.875], [-0.125, 1.625, -0.875, 0.875, -1.625, 0.125]], [[1.875, -0.625, 1.125, -1.375, 0.375, 2.125], [-0.375, 1.375, -1.125, 0.625, -1.875, -0.125]]]> : tensor<3x2x6xf32>
  %o_partial = arith.constant 5 : i64
  %init_partial = tensor.empty() : tensor<3x2x6xf32>
  %y_partial = rope.apply ins(%x_partial : tensor<3x2x6xf32>) offset(%o_partial : i64) outs(%init_partial : tensor<3x2x6xf32>) {rotary_dim = 4 : i64} -> tensor<3x2x6xf32>
  %u_partial = tensor.cast %y_partial : tensor<3x2x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u_partial) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [3, 2, 6]
  // CHECK-NEXT: {{\[\[\[}}1.0263{{[0-9]*}}, -0.08111{{[0-9]*}}, 2.2589{{[0-9]*}}, -0.88015{{[0-9]*}}, 0.875, -1.625],
  // CHECK-NEXT: [-0.5638{{[0-9]*}}, 1.8164{{[0-9]*}}, -0.29715{{[0-9]*}}, 1.217{{[0-9]*}}, -1.375, 0.375]],
  // CHECK-NEXT: {{\[\[}}2.4245{{[0-9]*}}, -0.30686{{[0-9]*}}, 0.72647{{[0-9]*}}, -1.1454{{[0-9]*}}, 0.625, -1.875],
  // CHECK-NEXT: [-0.3645{{[0-9]*}}, 1.5696{{[0-9]*}}, -0.80522{{[0-9]*}}, 0.97086{{[0-9]*}}, -1.625, 0.125]],
  // CHECK-NEXT: {{\[\[}}0.67445{{[0-9]*}}, -0.52729{{[0-9]*}}, 2.0799{{[0-9]*}}, -1.4153{{[0-9]*}}, 0.375, 2.125],
  // CHECK-NEXT: [0.45639{{[0-9]*}}, 1.3279{{[0-9]*}}, -1.0945{{[0-9]*}}, 0.71964{{[0-9]*}}, -1.875, -0.125]]]

  // Interleaved partial on [B, H, S, D] = [1, 2, 3, 6], token_dims [0, 2], i32
  // positions, P = 4.
  %x_bhsd = arith.constant dense<[[[[-1.875, -0.125, 1.625, -0.875, 0.875, -1.625], [0.125, 1.875, -0.625, 1.125, -1.375, 0.375], [2.125, -0.375, 1.375, -1.125, 0.625, -1.875]], [[-0.125, 1.625, -0.875, 0.875, -1.625, 0.125], [1.875, -0.625, 1.125, -1.375, 0.375, 2.125], [-0.375, 1.375, -1.125, 0.625, -1.875, -0.125]]]]> : tensor<1x2x3x6xf32>
  %p_bhsd = arith.constant dense<[[7, 70, 700]]> : tensor<1x3xi32>
  %init_bhsd = tensor.empty() : tensor<1x2x3x6xf32>
  %y_bhsd = rope.apply ins(%x_bhsd : tensor<1x2x3x6xf32>) positions(%p_bhsd : tensor<1x3xi32>) outs(%init_bhsd : tensor<1x2x3x6xf32>) {layout = #rope.layout<interleaved>, rotary_dim = 4 : i64, token_dims = array<i64: 0, 2>} -> tensor<1x2x3x6xf32>
  %u_bhsd = tensor.cast %y_bhsd : tensor<1x2x3x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u_bhsd) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [1, 2, 3, 6]
  // CHECK-NEXT: {{\[\[\[\[}}-1.3314{{[0-9]*}}, -1.3260{{[0-9]*}}, 1.6822{{[0-9]*}}, -0.759{{[0-9]*}}, 0.875, -1.625],
  // CHECK-NEXT: [-1.3718{{[0-9]*}}, 1.2842{{[0-9]*}}, -1.2027{{[0-9]*}}, 0.45781{{[0-9]*}}, -1.375, 0.375],
  // CHECK-NEXT: [-1.5791{{[0-9]*}}, 1.470{{[0-9]*}}, 1.7757{{[0-9]*}}, 0.055216{{[0-9]*}}, 0.625, -1.875]],
  // CHECK-NEXT: {{\[\[}}-1.1618{{[0-9]*}}, 1.1429{{[0-9]*}}, -0.93405{{[0-9]*}}, 0.81165{{[0-9]*}}, -1.625, 0.125],
  // CHECK-NEXT: [1.6711{{[0-9]*}}, 1.0552{{[0-9]*}}, 1.7462{{[0-9]*}}, -0.32691{{[0-9]*}}, 0.375, 2.125],
  // CHECK-NEXT: [-0.43329{{[0-9]*}}, -1.3577{{[0-9]*}}, -1.2587{{[0-9]*}}, -0.26792{{[0-9]*}}, -1.875, -0.125]]]]

  // Caches [M = 3, P/2 = 2] gathered by position; position 3 is out of range,
  // so token 2 is NaN (and nothing is read out of bounds).
  %x_cache = arith.constant dense<[[[-1.875, -0.125, 1.625, -0.875], [0.875, -1.625, 0.125, 1.875]], [[-0.625, 1.125, -1.375, 0.375], [2.125, -0.375, 1.375, -1.125]], [[0.625, -1.875, -0.125, 1.625], [-0.875, 0.875, -1.625, 0.125]], [[1.875, -0.625, 1.125, -1.375], [0.375, 2.125, -0.375, 1.375]]]> : tensor<4x2x4xf32>
  %p_cache = arith.constant dense<[2, 0, 3, 1]> : tensor<4xi64>
  %init_cache = tensor.empty() : tensor<4x2x4xf32>
  %y_cache = rope.apply ins(%x_cache : tensor<4x2x4xf32>) positions(%p_cache : tensor<4xi64>) cache(%cos, %sin : tensor<3x2xf32>, tensor<3x2xf32>) outs(%init_cache : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %u_cache = tensor.cast %y_cache : tensor<4x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u_cache) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [4, 2, 4]
  // CHECK-NEXT: {{\[\[\[}}0.375, 0.328125, 0.90625, -0.828125],
  // CHECK-NEXT: [0.15625, -2.3593{{[0-9]*}}, -0.3125, 0.828125]],
  // CHECK-NEXT: {{\[\[}}-0.625, 0.375, -1.375, 0.75],
  // CHECK-NEXT: [2.125, 0.375, 1.375, -0.75]],
  // CHECK-NEXT: {{\[\[}}{{-?nan}}, {{-?nan}}, {{-?nan}}, {{-?nan}}],
  // CHECK-NEXT: [{{-?nan}}, {{-?nan}}, {{-?nan}}, {{-?nan}}]],
  // CHECK-NEXT: {{\[\[}}-0.515625, 1.3281{{[0-9]*}}, 1.9218{{[0-9]*}}, 0.640625],
  // CHECK-NEXT: [0.421875, -2.4531{{[0-9]*}}, 0.234375, 0.296875]]]
  return
}
