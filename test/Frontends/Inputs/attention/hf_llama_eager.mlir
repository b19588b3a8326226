#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#map5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map6 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @main(%arg0: tensor<2x4x8x16xf32>, %arg1: tensor<2x2x8x16xf32>, %arg2: tensor<2x2x8x16xf32>, %arg3: tensor<2x8xi64>, %arg4: tensor<2x1x8x8xf32>) -> tensor<2x8x4x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>
    %cst_2 = arith.constant 2.500000e-01 : f32
    %expanded = tensor.expand_shape %arg3 [[0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xi64> into tensor<2x8x1xi64>
    %0 = tensor.empty() : tensor<2x8x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x8x1xi64>) outs(%0 : tensor<2x8x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %43 = arith.sitofp %in : i64 to f32
      linalg.yield %43 : f32
    } -> tensor<2x8x1xf32>
    %2 = tensor.empty() : tensor<2x8x8xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst_1 : tensor<2x8x1xf32>, tensor<8xf32>) outs(%2 : tensor<2x8x8xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.mulf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x8x8xf32>
    %concat = tensor.concat dim(2) %3, %3 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
    %4 = tensor.empty() : tensor<2x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x16xf32>) outs(%4 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %43 = math.cos %in : f32
      linalg.yield %43 : f32
    } -> tensor<2x8x16xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x16xf32>) outs(%4 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %43 = math.sin %in : f32
      linalg.yield %43 : f32
    } -> tensor<2x8x16xf32>
    %expanded_3 = tensor.expand_shape %5 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %expanded_4 = tensor.expand_shape %6 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %7 = tensor.empty() : tensor<2x4x8x16xf32>
    %8 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_3 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.mulf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x16xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
    %extracted_slice_5 = tensor.extract_slice %arg0[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
    %9 = tensor.empty() : tensor<2x4x8x8xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_5 : tensor<2x4x8x8xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %43 = arith.negf %in : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x8xf32>
    %concat_6 = tensor.concat dim(3) %10, %extracted_slice : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
    %11 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_6, %expanded_4 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.mulf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x16xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %11 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.addf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x16xf32>
    %13 = tensor.empty() : tensor<2x2x8x16xf32>
    %14 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1, %expanded_3 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%13 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.mulf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x2x8x16xf32>
    %extracted_slice_7 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 2, 8, 8] [1, 1, 1, 1] : tensor<2x2x8x16xf32> to tensor<2x2x8x8xf32>
    %extracted_slice_8 = tensor.extract_slice %arg1[0, 0, 0, 8] [2, 2, 8, 8] [1, 1, 1, 1] : tensor<2x2x8x16xf32> to tensor<2x2x8x8xf32>
    %15 = tensor.empty() : tensor<2x2x8x8xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_8 : tensor<2x2x8x8xf32>) outs(%15 : tensor<2x2x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %43 = arith.negf %in : f32
      linalg.yield %43 : f32
    } -> tensor<2x2x8x8xf32>
    %concat_9 = tensor.concat dim(3) %16, %extracted_slice_7 : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x16xf32>
    %17 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_9, %expanded_4 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%13 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.mulf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x2x8x16xf32>
    %18 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) outs(%13 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.addf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x2x8x16xf32>
    %19 = tensor.empty() : tensor<2x2x2x8x16xf32>
    %20 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%18 : tensor<2x2x8x16xf32>) outs(%19 : tensor<2x2x2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x2x8x16xf32>
    %collapsed = tensor.collapse_shape %20 [[0], [1, 2], [3], [4]] : tensor<2x2x2x8x16xf32> into tensor<2x4x8x16xf32>
    %21 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<2x2x8x16xf32>) outs(%19 : tensor<2x2x2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x2x8x16xf32>
    %22 = tensor.empty() : tensor<2x4x16x8xf32>
    %transposed = linalg.transpose ins(%collapsed : tensor<2x4x8x16xf32>) outs(%22 : tensor<2x4x16x8xf32>) permutation = [0, 1, 3, 2] 
    %collapsed_10 = tensor.collapse_shape %12 [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
    %collapsed_11 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
    %23 = tensor.empty() : tensor<8x8x8xf32>
    %24 = linalg.fill ins(%cst : f32) outs(%23 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %25 = linalg.batch_matmul ins(%collapsed_10, %collapsed_11 : tensor<8x8x16xf32>, tensor<8x16x8xf32>) outs(%24 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %expanded_12 = tensor.expand_shape %25 [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
    %26 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_12 : tensor<2x4x8x8xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %43 = arith.mulf %in, %cst_2 : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x8xf32>
    %27 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26, %arg4 : tensor<2x4x8x8xf32>, tensor<2x1x8x8xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.addf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x8xf32>
    %28 = tensor.empty() : tensor<2x4x8xi64>
    %29 = linalg.fill ins(%c0_i64 : i64) outs(%28 : tensor<2x4x8xi64>) -> tensor<2x4x8xi64>
    %30 = tensor.empty() : tensor<2x4x8xf32>
    %31 = linalg.fill ins(%cst_0 : f32) outs(%30 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %32:2 = linalg.generic {indexing_maps = [#map3, #map7, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%27 : tensor<2x4x8x8xf32>) outs(%31, %29 : tensor<2x4x8xf32>, tensor<2x4x8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_18: i64):
      %43 = linalg.index 3 : index
      %44 = arith.index_cast %43 : index to i64
      %45 = arith.maximumf %in, %out : f32
      %46 = arith.cmpf ogt, %in, %out : f32
      %47 = arith.select %46, %44, %out_18 : i64
      linalg.yield %45, %47 : f32, i64
    } -> (tensor<2x4x8xf32>, tensor<2x4x8xi64>)
    %expanded_13 = tensor.expand_shape %32#0 [[0], [1], [2, 3]] output_shape [2, 4, 8, 1] : tensor<2x4x8xf32> into tensor<2x4x8x1xf32>
    %33 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %expanded_13 : tensor<2x4x8x8xf32>, tensor<2x4x8x1xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.subf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x8xf32>
    %34 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%33 : tensor<2x4x8x8xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %43 = math.exp %in : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x8xf32>
    %35 = tensor.empty() : tensor<2x4x8x1xf32>
    %36 = linalg.fill ins(%cst : f32) outs(%35 : tensor<2x4x8x1xf32>) -> tensor<2x4x8x1xf32>
    %37 = linalg.generic {indexing_maps = [#map3, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%34 : tensor<2x4x8x8xf32>) outs(%36 : tensor<2x4x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %43 = arith.addf %in, %out : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x1xf32>
    %38 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%34, %37 : tensor<2x4x8x8xf32>, tensor<2x4x8x1xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %43 = arith.divf %in, %in_18 : f32
      linalg.yield %43 : f32
    } -> tensor<2x4x8x8xf32>
    %collapsed_14 = tensor.collapse_shape %38 [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
    %collapsed_15 = tensor.collapse_shape %21 [[0, 1, 2], [3], [4]] : tensor<2x2x2x8x16xf32> into tensor<8x8x16xf32>
    %39 = tensor.empty() : tensor<8x8x16xf32>
    %40 = linalg.fill ins(%cst : f32) outs(%39 : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
    %41 = linalg.batch_matmul ins(%collapsed_14, %collapsed_15 : tensor<8x8x8xf32>, tensor<8x8x16xf32>) outs(%40 : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
    %expanded_16 = tensor.expand_shape %41 [[0, 1], [2], [3]] output_shape [2, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
    %42 = tensor.empty() : tensor<2x8x4x16xf32>
    %transposed_17 = linalg.transpose ins(%expanded_16 : tensor<2x4x8x16xf32>) outs(%42 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    return %transposed_17 : tensor<2x8x4x16xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_8_torch.float32: "0x040000000000803F9BE8A13ECDCCCC3DE386013D0AD7233C383E4F3B6F12833A60CBA539"
    }
  }
#-}
