#map = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
#map4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map8 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map9 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d1, d2)>
#map10 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map11 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
#map12 = affine_map<(d0, d1) -> (d0, d1)>
#map13 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
#map14 = affine_map<(d0, d1, d2, d3) -> ()>
module @jit_attention {
  func.func public @main(%arg0: tensor<2x8x4x16xf32>, %arg1: tensor<2x8x2x16xf32>, %arg2: tensor<2x8x2x16xf32>) -> tensor<2x8x4x16xf32> {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant dense<-2.38197633E+38> : tensor<f32>
    %cst_1 = arith.constant dense<true> : tensor<8x8xi1>
    %cst_2 = arith.constant 2.500000e-01 : f32
    %cst_3 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x8x2x2x16xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<2x8x2x16xf32>) outs(%0 : tensor<2x8x2x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x8x2x2x16xf32>
    %collapsed = tensor.collapse_shape %1 [[0], [1], [2, 3], [4]] : tensor<2x8x2x2x16xf32> into tensor<2x8x4x16xf32>
    %2 = tensor.empty() : tensor<2x8x2x2x16xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<2x8x2x16xf32>) outs(%2 : tensor<2x8x2x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x8x2x2x16xf32>
    %collapsed_4 = tensor.collapse_shape %3 [[0], [1], [2, 3], [4]] : tensor<2x8x2x2x16xf32> into tensor<2x8x4x16xf32>
    %4 = tensor.empty() : tensor<2x4x8x8xf32>
    %5 = linalg.fill ins(%cst_3 : f32) outs(%4 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %6 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %collapsed : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) outs(%5 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %36 = arith.mulf %in, %in_5 : f32
      %37 = arith.addf %out, %36 : f32
      linalg.yield %37 : f32
    } -> tensor<2x4x8x8xf32>
    %7 = tensor.empty() : tensor<2x4x8x8xf32>
    %8 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6 : tensor<2x4x8x8xf32>) outs(%7 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.mulf %in, %cst_2 : f32
      linalg.yield %36 : f32
    } -> tensor<2x4x8x8xf32>
    %9 = call @tril(%cst_1) : (tensor<8x8xi1>) -> tensor<8x8xi1>
    %10 = tensor.empty() : tensor<1x1x8x8xi1>
    %11 = linalg.generic {indexing_maps = [#map6, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9 : tensor<8x8xi1>) outs(%10 : tensor<1x1x8x8xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<1x1x8x8xi1>
    %12 = call @_where(%11, %8, %cst_0) : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
    %13 = tensor.empty() : tensor<2x4x8xf32>
    %14 = linalg.fill ins(%cst : f32) outs(%13 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %15 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%12 : tensor<2x4x8x8xf32>) outs(%14 : tensor<2x4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.maximumf %out, %in : f32
      linalg.yield %36 : f32
    } -> tensor<2x4x8xf32>
    %16 = tensor.empty() : tensor<2x4x8xf32>
    %17 = linalg.generic {indexing_maps = [#map8, #map8], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15 : tensor<2x4x8xf32>) outs(%16 : tensor<2x4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x8xf32>
    %18 = tensor.empty() : tensor<2x4x8x8xf32>
    %19 = linalg.generic {indexing_maps = [#map7, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17 : tensor<2x4x8xf32>) outs(%18 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x8x8xf32>
    %20 = tensor.empty() : tensor<2x4x8x8xf32>
    %21 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %19 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) outs(%20 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %36 = arith.subf %in, %in_5 : f32
      linalg.yield %36 : f32
    } -> tensor<2x4x8x8xf32>
    %22 = tensor.empty() : tensor<2x4x8x8xf32>
    %23 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21 : tensor<2x4x8x8xf32>) outs(%22 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = math.exp %in : f32
      linalg.yield %36 : f32
    } -> tensor<2x4x8x8xf32>
    %24 = tensor.empty() : tensor<2x4x8xf32>
    %25 = linalg.fill ins(%cst_3 : f32) outs(%24 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %26 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%23 : tensor<2x4x8x8xf32>) outs(%25 : tensor<2x4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.addf %out, %in : f32
      linalg.yield %36 : f32
    } -> tensor<2x4x8xf32>
    %27 = tensor.empty() : tensor<2x4x8x8xf32>
    %28 = linalg.generic {indexing_maps = [#map7, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26 : tensor<2x4x8xf32>) outs(%27 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x8x8xf32>
    %29 = tensor.empty() : tensor<2x4x8x8xf32>
    %30 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %28 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) outs(%29 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %36 = arith.divf %in, %in_5 : f32
      linalg.yield %36 : f32
    } -> tensor<2x4x8x8xf32>
    %31 = tensor.empty() : tensor<2x4x16x8xf32>
    %32 = linalg.fill ins(%cst_3 : f32) outs(%31 : tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
    %33 = linalg.generic {indexing_maps = [#map9, #map10, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%collapsed_4, %30 : tensor<2x8x4x16xf32>, tensor<2x4x8x8xf32>) outs(%32 : tensor<2x4x16x8xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %36 = arith.mulf %in, %in_5 : f32
      %37 = arith.addf %out, %36 : f32
      linalg.yield %37 : f32
    } -> tensor<2x4x16x8xf32>
    %34 = tensor.empty() : tensor<2x8x4x16xf32>
    %35 = linalg.generic {indexing_maps = [#map11, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%33 : tensor<2x4x16x8xf32>) outs(%34 : tensor<2x8x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x8x4x16xf32>
    return %35 : tensor<2x8x4x16xf32>
  }
  func.func private @tril(%arg0: tensor<8x8xi1>) -> tensor<8x8xi1> {
    %false = arith.constant false
    %0 = tensor.empty() : tensor<8x8xi32>
    %1 = linalg.generic {indexing_maps = [#map12], iterator_types = ["parallel", "parallel"]} outs(%0 : tensor<8x8xi32>) {
    ^bb0(%out: i32):
      %10 = linalg.index 0 : index
      %11 = arith.index_cast %10 : index to i32
      linalg.yield %11 : i32
    } -> tensor<8x8xi32>
    %2 = tensor.empty() : tensor<8x8xi32>
    %3 = linalg.generic {indexing_maps = [#map12, #map12], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<8x8xi32>) outs(%2 : tensor<8x8xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<8x8xi32>
    %4 = tensor.empty() : tensor<8x8xi32>
    %5 = linalg.generic {indexing_maps = [#map12], iterator_types = ["parallel", "parallel"]} outs(%4 : tensor<8x8xi32>) {
    ^bb0(%out: i32):
      %10 = linalg.index 1 : index
      %11 = arith.index_cast %10 : index to i32
      linalg.yield %11 : i32
    } -> tensor<8x8xi32>
    %6 = tensor.empty() : tensor<8x8xi1>
    %7 = linalg.generic {indexing_maps = [#map12, #map12, #map12], iterator_types = ["parallel", "parallel"]} ins(%3, %5 : tensor<8x8xi32>, tensor<8x8xi32>) outs(%6 : tensor<8x8xi1>) {
    ^bb0(%in: i32, %in_0: i32, %out: i1):
      %10 = arith.cmpi sge, %in, %in_0 : i32
      linalg.yield %10 : i1
    } -> tensor<8x8xi1>
    %8 = tensor.empty() : tensor<8x8xi1>
    %9 = linalg.generic {indexing_maps = [#map12, #map12, #map12], iterator_types = ["parallel", "parallel"]} ins(%7, %arg0 : tensor<8x8xi1>, tensor<8x8xi1>) outs(%8 : tensor<8x8xi1>) {
    ^bb0(%in: i1, %in_0: i1, %out: i1):
      %10 = arith.select %in, %in_0, %false : i1
      linalg.yield %10 : i1
    } -> tensor<8x8xi1>
    return %9 : tensor<8x8xi1>
  }
  func.func private @_where(%arg0: tensor<1x1x8x8xi1>, %arg1: tensor<2x4x8x8xf32>, %arg2: tensor<f32>) -> tensor<2x4x8x8xf32> {
    %0 = tensor.empty() : tensor<2x4x8x8xi1>
    %1 = linalg.generic {indexing_maps = [#map13, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x1x8x8xi1>) outs(%0 : tensor<2x4x8x8xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<2x4x8x8xi1>
    %2 = tensor.empty() : tensor<2x4x8x8xf32>
    %3 = linalg.generic {indexing_maps = [#map14, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<f32>) outs(%2 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x8x8xf32>
    %4 = tensor.empty() : tensor<2x4x8x8xf32>
    %5 = linalg.generic {indexing_maps = [#map5, #map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %arg1, %3 : tensor<2x4x8x8xi1>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) outs(%4 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: i1, %in_0: f32, %in_1: f32, %out: f32):
      %6 = arith.select %in, %in_0, %in_1 : f32
      linalg.yield %6 : f32
    } -> tensor<2x4x8x8xf32>
    return %5 : tensor<2x4x8x8xf32>
  }
}

